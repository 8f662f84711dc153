"""SWIM Facebook MapReduce traces (FB-2009, FB-2010): one job per tab-separated line.

Columns (``swim-facebook/SOURCE.md``, SWIM wiki): job id, submit time (s), gap to the previous
submit (s), map input bytes, shuffle bytes, reduce output bytes, and in the
``_withInputPaths_`` files an input path followed by empty fields. No header.

The trace records bytes, not tasks; the mapping follows how SWIM replays and the delay
scheduling paper (FAIR section 6) size Hadoop jobs:

- maps = ceil(input bytes / 128 MiB block), at least 1 (a job with no input still runs one
  map); each map reads one HDFS block held on 3 machines (``input_replicas``, HDFS's default
  replication, fewer if the cluster is smaller), which enables delay scheduling;
- reduces = ceil(shuffle bytes / 1 GiB) (about one reducer per GiB shuffled, Hadoop's rule
  of thumb); a job that shuffles nothing is map-only;
- durations from a bytes/second model: each task takes ``TASK_STARTUP_SECONDS`` plus its
  bytes at ``PROCESS_BYTES_PER_SECOND``; a map processes its share of the input (and, in a
  map-only job, writes its share of the output); a reducer copies its share of the shuffle
  at ``COPY_BYTES_PER_SECOND`` and then computes over its share of shuffle plus output.

The scenario supplies the machines and the per-task demand: one unit of its first resource
(a slot). Every job is its own user (the trace has no users or pools).

Bounds (a record beyond them is rejected, naming its line and field): times are whole
seconds from 0 to ``MAX_SECONDS`` (1e15); byte counts are whole numbers, the input at most
``MAX_RECORD_TASKS`` (1,000,000) blocks, the shuffle at most ``MAX_RECORD_TASKS`` GiB, the
output at most ``MAX_BYTES`` (10^18); job ids are unique.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from fairshare.cluster import Cluster, FloatArray
from fairshare.workload.model import FixedDuration, Job, ReducePhase
from fairshare.workload.traces._common import (
    MAX_RECORD_TASKS,
    MAX_SECONDS,
    JobNames,
    TraceError,
    check_readable,
    first_resource_demand,
    numbered_lines,
    whole_number,
)

__all__ = [
    "BLOCK_BYTES",
    "COPY_BYTES_PER_SECOND",
    "MAX_BYTES",
    "PROCESS_BYTES_PER_SECOND",
    "REDUCE_BYTES",
    "REPLICAS",
    "TASK_STARTUP_SECONDS",
    "read_swim",
]

MIB = 1 << 20
"""Bytes in a mebibyte."""
BLOCK_BYTES = 128 * MIB
"""HDFS block size: one map task per block of input."""
REDUCE_BYTES = 1024 * MIB
"""Shuffle bytes per reduce task."""
REPLICAS = 3
"""HDFS replication: machines holding each map's input block."""
TASK_STARTUP_SECONDS = 1.0
"""Seconds every task takes before it processes any byte (JVM start, scheduling)."""
PROCESS_BYTES_PER_SECOND = 8.0 * MIB
"""A task's read-process-write rate: a full 128 MiB map takes 1 + 16 s, within the 9-60 s of
the maps in FAIR section 6.1."""
COPY_BYTES_PER_SECOND = 16.0 * MIB
"""A reducer's shuffle (network copy) rate."""

MAX_BYTES = 10**18
"""The most reduce output bytes a record may hold (an exabyte)."""

_MIN_FIELDS = 6
_SECONDS = int(MAX_SECONDS)


def _job(fields: list[str], path: Path, line: int, replicas: int, demand: FloatArray) -> Job:
    """The job of one record (module docstring's mapping), every field checked."""
    name = fields[0].strip()
    if not name:
        raise TraceError(path, line, "job id (column 1) is empty")
    submit = whole_number(fields[1], "submit time (column 2)", path, line, maximum=_SECONDS)
    whole_number(fields[2], "gap (column 3)", path, line, maximum=_SECONDS)
    input_bytes = whole_number(
        fields[3],
        "map input bytes (column 4)",
        path,
        line,
        maximum=MAX_RECORD_TASKS * BLOCK_BYTES,
        note=f" (at most {MAX_RECORD_TASKS:,} maps of 128 MiB)",
    )
    shuffle = whole_number(
        fields[4],
        "shuffle bytes (column 5)",
        path,
        line,
        maximum=MAX_RECORD_TASKS * REDUCE_BYTES,
        note=f" (at most {MAX_RECORD_TASKS:,} reduces of 1 GiB)",
    )
    output = whole_number(
        fields[5], "reduce output bytes (column 6)", path, line, maximum=MAX_BYTES
    )
    maps = max(1, -(-input_bytes // BLOCK_BYTES))
    reduce = None
    if shuffle > 0:
        reduces = -(-shuffle // REDUCE_BYTES)
        map_bytes = input_bytes / maps
        reduce = ReducePhase(
            tasks=reduces,
            copy=shuffle / reduces / COPY_BYTES_PER_SECOND,
            compute=TASK_STARTUP_SECONDS + (shuffle + output) / reduces / PROCESS_BYTES_PER_SECOND,
        )
    else:
        map_bytes = (input_bytes + output) / maps
    return Job(
        name=name,
        submit=float(submit),
        user=name,
        demand=demand,
        tasks=maps,
        duration=FixedDuration(TASK_STARTUP_SECONDS + map_bytes / PROCESS_BYTES_PER_SECOND),
        input_replicas=replicas,
        reduce=reduce,
    )


def read_swim(path: Path, cluster: Cluster) -> Iterator[Job]:
    r"""Stream the jobs of a SWIM ``.tsv`` (optionally ``.gz``) in submit order.

    Blank lines are skipped. Job ids are used as they are (SWIM numbers them ``job0``,
    ``job1``, ...).

    Parameters
    ----------
    path : Path
        The trace.
    cluster : Cluster
        The machines it is replayed on; each task demands one unit of the first resource.

    Returns
    -------
    Iterator of Job
        One job per record, read lazily.

    Raises
    ------
    TraceError
        Now, for an unreadable file; while iterating, for a record with fewer than 6 columns,
        an empty or repeated job id, a number that is not a whole number within its bound
        (module docstring) or a submit time before the previous one.

    Examples
    --------
    ``job0`` reads 256 MiB (two maps) and shuffles nothing; ``job1`` reads nothing (one map)
    and shuffles 2 GiB (two reducers).

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.workload.traces.swim import read_swim
    >>> cluster = Cluster.build(["slots"], [Machine("m", np.array([8.0]))])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "fb.tsv"
    ...     _ = path.write_text("job0\t0\t0\t268435456\t0\t0\njob1\t10\t10\t0\t2147483648\t0\n")
    ...     jobs = list(read_swim(path, cluster))
    >>> [(job.name, job.tasks, job.duration.seconds) for job in jobs]
    [('job0', 2, 17.0), ('job1', 1, 1.0)]
    >>> jobs[1].reduce
    ReducePhase(tasks=2, copy=64.0, compute=129.0, demand=None, slowstart=None)
    """
    check_readable(path, "SWIM trace (.tsv)")
    return _stream(path, cluster)


def _stream(path: Path, cluster: Cluster) -> Iterator[Job]:
    """The jobs of the trace, one line at a time (:func:`read_swim` checked the file)."""
    demand = first_resource_demand(cluster)
    replicas = min(REPLICAS, len(cluster.machines))
    last = -math.inf
    names = JobNames(path, "job id (column 1)")
    for line, text in numbered_lines(path):
        if not text.strip():
            continue
        fields = text.split("\t")
        if len(fields) < _MIN_FIELDS:
            raise TraceError(
                path,
                line,
                f"expected at least {_MIN_FIELDS} tab-separated columns (job id, submit time, "
                f"gap, map input bytes, shuffle bytes, reduce output bytes), got {len(fields)}",
            )
        job = _job(fields, path, line, replicas, demand)
        if job.submit < last:
            raise TraceError(
                path,
                line,
                f"submit time {job.submit:g} is before the previous job's ({last:g}); "
                "the trace must be in submit order",
            )
        names.add(job.name, line)
        last = job.submit
        yield job
