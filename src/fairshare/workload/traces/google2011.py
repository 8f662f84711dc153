"""Google cluster-usage trace 2011 (clusterdata-2011, format + schema v2.1): ``job_events``.

PATH is the trace directory holding the tables as sub-directories (``job_events/``), or the
``job_events`` directory itself; its shards ``part-NNNNN-of-NNNNN.csv[.gz]`` are read in name
order, which is time order. Columns (``google-clusterdata-2011/SOURCE.md``, no header):
1 timestamp (µs; 0 = before the trace window, which opens at 600 s), 2 missing info, 3 job ID,
4 event type (0 SUBMIT, 1 SCHEDULE, 2 EVICT, 3 FAIL, 4 FINISH, 5 KILL, 6 LOST,
7 UPDATE_PENDING, 8 UPDATE_RUNNING), 5 user (hashed), 6 scheduling class, 7 job name,
8 logical job name.

``job_events`` is the only table the shipped sample has; it records per job the submit time,
the user, when the job was scheduled and when it ended, but neither task counts nor resource
requests (``task_events``) nor constraints (``task_constraints``). So, documented
assumptions:

- a job is one task (one unit of the scenario's first resource), submitted at its first
  SUBMIT, running from its first SCHEDULE (or its submit if it has none) to its first FAIL,
  FINISH, KILL or LOST; EVICT returns a job to pending and does not end it; events after the
  end (a re-submission of a failed job) are ignored;
- the user is the trace's (hashed) user, so the jobs of one user share a fair share;
- times are the trace's, in seconds (µs / 10^6), not shifted.

Bounds (a record beyond them is rejected, naming its shard, line and field): timestamps are
whole microseconds from 0 to ``MAX_SECONDS`` (1e15 s), job IDs whole numbers below 2^63,
event types 0 to 8. A job ID names one job: its later SUBMITs are ignored, as above, so a
replay never holds two jobs of one ID.

Streaming in submit order needs each job's end, which comes later in the trace: jobs wait in
a queue in submit order, and the head leaves as soon as it has ended. A job still running
``HORIZON_SECONDS`` of trace time after its submit (a long-lived service) leaves then, its
duration cut at the horizon; jobs still running when the trace ends are cut there. So memory
holds at most the jobs submitted within one horizon (plus the ids of ended jobs, to ignore
their later events), never the whole trace.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fairshare.cluster import Cluster, FloatArray
from fairshare.workload.model import FixedDuration, Job
from fairshare.workload.traces._common import (
    MAX_SECONDS,
    TraceError,
    check_readable,
    first_resource_demand,
    numbered_lines,
    whole_number,
)

__all__ = ["HORIZON_SECONDS", "job_event_shards", "read_google_2011"]

HORIZON_SECONDS = 86_400.0
"""How long (trace time) a job may run before it is replayed with its duration cut there."""

_SUBMIT, _SCHEDULE = 0, 1
_ENDS = frozenset({3, 4, 5, 6})  # FAIL, FINISH, KILL, LOST
_MAX_EVENT = 8
_FIELDS = 8
_SHARD = re.compile(r"part-\d+-of-\d+\.csv(\.gz)?$")
_MICROSECONDS = 1e6
_MAX_TIME = int(MAX_SECONDS * _MICROSECONDS)
_MAX_ID = 2**63 - 1  # the schema's job IDs are 64-bit integers


@dataclass
class _Pending:
    """A job submitted and not yet replayed: its id, user and times in µs."""

    name: str
    user: str
    submit: int  # µs
    start: int | None = None
    end: int | None = None


def job_event_shards(path: Path) -> list[Path]:
    """The ``job_events`` shards under ``path``, in name order (which is time order).

    Parameters
    ----------
    path : Path
        The trace directory, with ``job_events/`` in it, or ``job_events/`` itself.

    Returns
    -------
    list of Path
        The ``part-NNNNN-of-NNNNN.csv[.gz]`` files.

    Raises
    ------
    TraceError
        ``path`` is not a directory or holds no shards.
    """
    if not path.is_dir():
        raise TraceError(
            path,
            None,
            "google-2011 expects a directory: the trace's, with job_events/ in it, or "
            "job_events/ itself",
        )
    table = path / "job_events" if (path / "job_events").is_dir() else path
    shards = sorted(p for p in table.iterdir() if _SHARD.match(p.name) and p.is_file())
    if not shards:
        raise TraceError(
            table, None, "holds no job_events shards (part-NNNNN-of-NNNNN.csv or .csv.gz)"
        )
    return shards


def read_google_2011(path: Path, cluster: Cluster) -> Iterator[Job]:
    r"""Stream the jobs of the trace directory ``path`` in submit order.

    Parameters
    ----------
    path : Path
        The trace directory, or its ``job_events/`` directory.
    cluster : Cluster
        The machines it is replayed on; each job is one task of one unit of the first resource.

    Returns
    -------
    Iterator of Job
        One job per job ID (module docstring), read lazily.

    Raises
    ------
    TraceError
        Now, for a missing directory or shard; while iterating, for a record without 8 fields,
        a timestamp, job ID or event type that is not a whole number in range, a SUBMIT
        without a user, or a timestamp before the previous event's.

    Examples
    --------
    Job 101 is submitted at 600 s, scheduled at 601 s and finishes at 700 s; job 102 never
    ends, so the trace's end cuts it.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.workload.traces.google2011 import read_google_2011
    >>> cluster = Cluster.build(["cpu"], [Machine("m", np.array([8.0]))])
    >>> events = (
    ...     "600000000,,101,0,alice,1,j,l\n"
    ...     "601000000,,101,1,alice,1,j,l\n"
    ...     "605000000,,102,0,bob,1,k,m\n"
    ...     "700000000,,101,4,alice,1,j,l\n"
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table = Path(tmp) / "job_events"
    ...     table.mkdir()
    ...     _ = (table / "part-00000-of-00001.csv").write_text(events)
    ...     jobs = list(read_google_2011(Path(tmp), cluster))
    >>> [(job.name, job.submit, job.user, job.duration.seconds) for job in jobs]
    [('101', 600.0, 'alice', 99.0), ('102', 605.0, 'bob', 95.0)]
    """
    shards = job_event_shards(path)
    for shard in shards:
        check_readable(shard, "job_events shard")
    return _stream(shards, first_resource_demand(cluster))


def _parse(text: str, shard: Path, line: int) -> tuple[int, int, int, str]:
    """A record's timestamp (µs), job ID, event type and user, each checked."""
    fields = text.split(",")
    if len(fields) != _FIELDS:
        raise TraceError(
            shard, line, f"expected {_FIELDS} comma-separated fields, got {len(fields)}"
        )
    time = whole_number(fields[0], "timestamp (field 1)", shard, line, maximum=_MAX_TIME)
    job = whole_number(fields[2], "job ID (field 3)", shard, line, maximum=_MAX_ID)
    event = whole_number(fields[3], "event type (field 4)", shard, line, maximum=_MAX_EVENT)
    return time, job, event, fields[4]


def _job(pending: _Pending, now: int, demand: FloatArray) -> Job:
    """The job of ``pending`` at trace time ``now``: a job still running is cut at its
    horizon or at ``now``.
    """
    start = pending.submit if pending.start is None else pending.start
    end = pending.end
    if end is None:  # still running: cut at the horizon or at the trace's end
        end = min(now, pending.submit + int(HORIZON_SECONDS * _MICROSECONDS))
    return Job(
        name=pending.name,
        submit=pending.submit / _MICROSECONDS,
        user=pending.user,
        demand=demand,
        tasks=1,
        duration=FixedDuration(max(0, end - start) / _MICROSECONDS),
    )


def _stream(shards: list[Path], demand: FloatArray) -> Iterator[Job]:
    """The jobs in submit order: each leaves the queue once it has ended or passed the
    horizon (module docstring).
    """
    horizon = int(HORIZON_SECONDS * _MICROSECONDS)
    order: deque[_Pending] = deque()
    running: dict[int, _Pending] = {}
    ended: set[int] = set()
    now = 0
    for shard in shards:
        for line, text in numbered_lines(shard):
            if not text:
                continue
            time, job, event, user = _parse(text, shard, line)
            if time < now:
                raise TraceError(
                    shard,
                    line,
                    f"timestamp {time} is before the previous event's ({now}); events must "
                    "be in time order",
                )
            now = time
            pending = running.get(job)
            if pending is None:
                if event == _SUBMIT and job not in ended:
                    if not user:
                        raise TraceError(shard, line, "a SUBMIT event must name the user")
                    pending = running[job] = _Pending(str(job), user, time)
                    order.append(pending)
            elif event == _SCHEDULE:
                if pending.start is None:
                    pending.start = time
            elif event in _ENDS:
                pending.end = time
                del running[job]
                ended.add(job)
            while order and (order[0].end is not None or now - order[0].submit >= horizon):
                head = order.popleft()
                if head.end is None:
                    del running[int(head.name)]
                    ended.add(int(head.name))
                yield _job(head, now, demand)
    while order:
        yield _job(order.popleft(), now, demand)
