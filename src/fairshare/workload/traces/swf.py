"""Standard Workload Format (SWF v2.2) logs of the Parallel Workloads Archive.

Header lines start with ``;``; each job line has 18 whitespace-separated fields
(``pwa-swf/SOURCE.md``): 1 job number, 2 submit time (s), 3 wait time, 4 run time (s),
5 allocated processors, 6 average CPU time, 7 used memory, 8 requested processors,
9 requested time, 10 requested memory, 11 status, 12 user id, 13 group id, 14 executable,
15 queue, 16 partition, 17 preceding job, 18 think time. Missing values are ``-1``.

Mapping: one job per line, named by its job number; one task per processor (allocated, or
requested when the allocation is missing, or 1 when both are), each running for the job's
run time; a parallel job (more than one processor) is a gang, all its tasks starting together
(``min_tasks`` = its processors: the log's machines ran it so); its requested time (field 9),
when given and > 0, is its ``estimate``, which EASY backfilling's reservations count on (the
scheduler of the KTH SP2 log did); the user is ``user<ID>`` so a user's jobs share one
fair-share entity (a job with no user id is its own user). A job whose run time is missing
(``-1``: it never ran) has no duration to replay and is skipped. The scenario supplies the
machines and the per-task demand: one unit of its first resource (a processor). ``.swf.gz``
files are read compressed.

Bounds (a record beyond them is rejected, naming its line and field): the fields read are
numbers >= 0 or ``-1``; submit and run times at most ``MAX_SECONDS`` (1e15 s), a run time
0 or at least ``MIN_SECONDS`` (1e-6 s), a requested time at most ``MAX_SECONDS`` (one
below ``MIN_SECONDS`` is no estimate), processors at most ``MAX_RECORD_TASKS`` (1,000,000), job
numbers and user ids at most ``MAX_ID`` (10^18); job numbers are unique. The other fields
are not read.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from fairshare.cluster import Cluster
from fairshare.workload.model import MIN_SECONDS, FixedDuration, Job
from fairshare.workload.traces._common import (
    MAX_RECORD_TASKS,
    MAX_SECONDS,
    JobNames,
    TraceError,
    amount,
    check_readable,
    first_resource_demand,
    numbered_lines,
)

__all__ = ["MAX_ID", "read_swf"]

MAX_ID = 1e18
"""The largest job number or user id (they name jobs and users; never computed with)."""

_FIELDS = 18
_COLUMNS = {
    0: ("job number (field 1)", MAX_ID, 0.0),
    1: ("submit time (field 2)", MAX_SECONDS, 0.0),
    3: ("run time (field 4)", MAX_SECONDS, MIN_SECONDS),
    4: ("allocated processors (field 5)", float(MAX_RECORD_TASKS), 0.0),
    7: ("requested processors (field 8)", float(MAX_RECORD_TASKS), 0.0),
    8: ("requested time (field 9)", MAX_SECONDS, 0.0),
    11: ("user id (field 12)", MAX_ID, 0.0),
}


def _number(fields: list[str], index: int, path: Path, line: int) -> float:
    """Field ``index`` of a record as a number within its column's bounds, or -1 (missing)."""
    name, maximum, smallest = _COLUMNS[index]
    return amount(fields[index], name, path, line, maximum=maximum, smallest=smallest, missing=-1.0)


def read_swf(path: Path, cluster: Cluster) -> Iterator[Job]:
    r"""Stream the jobs of an SWF log (``.swf`` or ``.swf.gz``) in submit order.

    Parameters
    ----------
    path : Path
        The log.
    cluster : Cluster
        The machines it is replayed on; each task demands one unit of the first resource.

    Returns
    -------
    Iterator of Job
        One job per line that ran (module docstring), read lazily.

    Raises
    ------
    TraceError
        Now, for an unreadable file; while iterating, for a line that does not have 18 fields,
        a field that is not a number within its bound (module docstring) or ``-1``, a missing
        or repeated job number, a missing submit time, or a submit time before the previous
        job's.

    Examples
    --------
    Job 1 ran 100 s on 4 processors for user 7 (a gang of 4 that asked for 300 s); job 2
    never ran (run time -1); job 3 has no allocation and no user, so it gets its 2 requested
    processors and is its own user.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.workload.traces.swf import read_swf
    >>> cluster = Cluster.build(["cpu"], [Machine("m", np.array([8.0]))])
    >>> log = (
    ...     "; a header line\n"
    ...     "1 0 5 100 4 -1 -1 4 300 -1 1 7 -1 -1 -1 -1 -1 -1\n"
    ...     "2 30 0 -1 2 -1 -1 2 -1 -1 0 7 -1 -1 -1 -1 -1 -1\n"
    ...     "3 60 0 20 -1 -1 -1 2 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "log.swf"
    ...     _ = path.write_text(log)
    ...     jobs = list(read_swf(path, cluster))
    >>> [(job.name, job.submit, job.user, job.tasks, job.duration.seconds) for job in jobs]
    [('1', 0.0, 'user7', 4, 100.0), ('3', 60.0, '3', 2, 20.0)]
    >>> [(job.min_tasks, job.estimate) for job in jobs]
    [(4, 300.0), (2, None)]
    """
    check_readable(path, "SWF log")
    return _stream(path, cluster)


def _stream(path: Path, cluster: Cluster) -> Iterator[Job]:
    """The jobs of the log, one line at a time (:func:`read_swf` checked the file)."""
    demand = first_resource_demand(cluster)
    last = -math.inf
    names = JobNames(path, "job number (field 1)")
    for line, text in numbered_lines(path):
        fields = text.split()
        if not fields or fields[0].startswith(";"):
            continue
        if len(fields) != _FIELDS:
            raise TraceError(path, line, f"expected {_FIELDS} fields, got {len(fields)}")
        number = _number(fields, 0, path, line)
        submit = _number(fields, 1, path, line)
        if number < 0 or submit < 0:
            missing = "job number (field 1)" if number < 0 else "submit time (field 2)"
            raise TraceError(path, line, f"{missing} is missing (-1); every job needs one")
        if submit < last:
            raise TraceError(
                path,
                line,
                f"submit time {submit:g} is before the previous job's ({last:g}); "
                "the log must be in submit order",
            )
        names.add(fields[0], line)
        last = submit
        run = _number(fields, 3, path, line)
        if run < 0:
            continue  # never ran: nothing to replay
        allocated = _number(fields, 4, path, line)
        requested = _number(fields, 7, path, line)
        tasks = allocated if allocated > 0 else requested if requested > 0 else 1.0
        requested_time = _number(fields, 8, path, line)
        user_id = _number(fields, 11, path, line)
        name = fields[0]
        count = max(1, math.ceil(tasks))
        yield Job(
            name=name,
            submit=submit,
            user=f"user{fields[11]}" if user_id >= 0 else name,
            demand=demand,
            tasks=count,
            duration=FixedDuration(run),
            min_tasks=count if count > 1 else None,
            estimate=requested_time if requested_time >= MIN_SECONDS else None,
        )
