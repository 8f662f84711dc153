"""The run's tables (SPEC section 3) as polars frames, and the writer of a run's data files.

``jobs.csv``, ``timeline.csv``, ``tasks.parquet`` and, when jobs name queues,
``queues.csv`` (:mod:`fairshare.metrics.queues`). Floats in CSV files are written with
6 decimals and missing values (a job that never finished, a slowdown that is undefined) as
empty fields; ``summary.json`` has sorted keys, floats exact (never rounded: JSON prints
each float's shortest round-trip form), null for undefined values and a final newline. The
same log gives the same bytes, except ``wall_seconds``.

Examples
--------
>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
...     source="two-jobs",
... )
>>> log = fairshare.simulate(scenario, "fair").log
>>> from fairshare.metrics import jobs_frame
>>> jobs = jobs_frame(log)
>>> jobs["job"].to_list(), jobs["response_time"].to_list(), jobs["slowdown"].to_list()
(['a', 'b'], [30.0, 29.0], [1.5, 2.9])
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl

from fairshare.metrics.bins import FAIR_BIN_LABELS, fair_bin
from fairshare.metrics.frames import LOCALITY_LEVELS, PHASES, FloatArray, IntArray, cached
from fairshare.metrics.queues import queue_usage
from fairshare.metrics.stats import FLOAT_DECIMALS, clean
from fairshare.metrics.summary import _summary, makespan
from fairshare.metrics.timeline import (
    Timeline,
    TimelineRows,
    TimelineView,
    timeline,
    timeline_view,
)
from fairshare.metrics.totals import ATTEMPT_CHUNK, attempt_users, run_totals
from fairshare.runlog import AttemptRows, RunLog

JOB_COLUMNS: tuple[str, ...] = (
    "job",
    "user",
    "submit",
    "first_start",
    "finish",
    "response_time",
    "slowdown",
    "tasks",
    "queue",
    "weight",
    "maps",
    "size_bin",
    "queueing_delay",
    "isolated_response",
    "task_attempts",
    "killed_attempts",
    "node_local",
    "rack_local",
    "off_rack",
)
"""``jobs.csv`` columns: SPEC section 3's eight first, in its order, then extras.
``size_bin`` is the FAIR Table 2 bin label by number of maps; ``node_local``, ``rack_local``,
``off_rack`` count the job's completed attempts at each locality level."""

TIMELINE_COLUMNS: tuple[str, ...] = ("time", "user", "running_tasks", "share", "queue_share")
"""``timeline.csv`` columns (SPEC section 3; ``queue_share``: section 8.3, the share of the
user's queue as the policy computed it then, empty for a user in no queue)."""


def _floats(values: FloatArray) -> pl.Series:
    """Floats with NaN and infinities as null, so CSV shows an empty field and Parquet a null
    (a job that can never run has no isolated response: not ``inf``)."""
    return pl.Series(
        np.where(np.isfinite(values), values, np.nan), dtype=pl.Float64, nan_to_null=True
    )


def _names(names: Sequence[str | None] | pl.Series, index: IntArray) -> pl.Series:
    """``names[index]`` as a string column, gathered by polars from the few names: no Python
    string per row (a large run's attempts are 200,000 rows of four such columns). A pass
    that gathers batch after batch from the same names passes them as a column, made once
    (a trace's users are tens of thousands)."""
    column = names if isinstance(names, pl.Series) else pl.Series(list(names), dtype=pl.String)
    return column.gather(index)


def jobs_frame(log: RunLog) -> pl.DataFrame:
    """``jobs.csv`` as a polars DataFrame: one row per job, in the log's (submission) order.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).

    Returns
    -------
    polars.DataFrame
        Columns :data:`JOB_COLUMNS`; nulls where a value is undefined.
    """
    f = run_totals(log)
    per_level = f.completed_at
    bins = fair_bin(f.maps)
    return pl.DataFrame(
        {
            "job": pl.Series(f.job_names, dtype=pl.Utf8),
            "user": _names(f.users, f.job_user),
            "submit": _floats(f.submit),
            "first_start": _floats(f.first_start),
            "finish": _floats(f.finish),
            "response_time": _floats(f.response),
            "slowdown": _floats(f.slowdown),
            "tasks": pl.Series(f.tasks, dtype=pl.Int64),
            "queue": pl.Series([j.queue for j in log.jobs], dtype=pl.Utf8),
            "weight": _floats(np.array([j.weight for j in log.jobs], dtype=np.float64)),
            "maps": pl.Series(f.maps, dtype=pl.Int64),
            "size_bin": _names(FAIR_BIN_LABELS, bins),
            "queueing_delay": _floats(f.queueing_delay),
            "isolated_response": _floats(f.isolated),
            "task_attempts": pl.Series(f.task_attempts, dtype=pl.Int64),
            "killed_attempts": pl.Series(f.killed_attempts, dtype=pl.Int64),
            "node_local": pl.Series(per_level[0], dtype=pl.Int64),
            "rack_local": pl.Series(per_level[1], dtype=pl.Int64),
            "off_rack": pl.Series(per_level[2], dtype=pl.Int64),
        }
    )


def timeline_frame(log: RunLog) -> pl.DataFrame:
    """``timeline.csv`` as a polars DataFrame (see :mod:`fairshare.metrics.timeline`).

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).

    Returns
    -------
    polars.DataFrame
        Columns :data:`TIMELINE_COLUMNS`: ``time``, ``user``, ``running_tasks``, ``share``,
        ``queue_share``.

    Examples
    --------
    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> log = fairshare.simulate(scenario, "fair").log
    >>> from fairshare.metrics import timeline_frame
    >>> for row in timeline_frame(log).iter_rows():
    ...     print(row)
    (0.0, 'a', 4, 1.0, None)
    (10.0, 'a', 2, 0.5, None)
    (10.0, 'b', 2, 0.5, None)
    (30.0, 'a', 0, 0.0, None)
    (30.0, 'b', 0, 0.0, None)
    """
    tl = timeline(log)
    return _timeline_frame(tl, tl.users, log)


def _timeline_frame(
    tl: Timeline | TimelineRows,
    users: Sequence[str],
    log: RunLog,
    user_column: pl.Series | None = None,
) -> pl.DataFrame:
    """:func:`timeline_frame` of a timeline already built, or of a batch of its rows (the
    users' names made a column once, ``user_column``, for a pass over many batches)."""
    return pl.DataFrame(
        {
            "time": _floats(tl.time),
            "user": _names(users if user_column is None else user_column, tl.user),
            "running_tasks": pl.Series(tl.running, dtype=pl.Int64),
            "share": _floats(tl.share),
            "queue_share": pl.Series(_queue_shares(tl, users, log), dtype=pl.Float64),
        }
    )


def _queue_shares(
    tl: Timeline | TimelineRows, users: Sequence[str], log: RunLog
) -> list[float | None]:
    """Per timeline row, the share of the row's user's queue at the row's time (the last
    sample at or before it, :attr:`RunLog.queue_shares`); None for a user in no queue or
    before its queue's first sample."""
    if not log.queue_shares:
        return [None] * len(tl.time)
    queue_of = log.user_queues
    samples: dict[str, tuple[list[float], list[float]]] = {}
    for at, queue, share in log.queue_shares:
        times, shares = samples.setdefault(queue, ([], []))
        times.append(at)
        shares.append(share)
    out: list[float | None] = []
    for time, user in zip(tl.time.tolist(), tl.user.tolist(), strict=True):
        path = queue_of.get(users[user])
        series = samples.get(path) if path is not None else None
        if series is None:
            out.append(None)
            continue
        k = int(np.searchsorted(series[0], time, side="right")) - 1
        out.append(round(series[1][k], 6) if k >= 0 else None)
    return out


def tasks_frame(log: RunLog) -> pl.DataFrame:
    """``tasks.parquet`` as a polars DataFrame: one row per task attempt, in the log's order.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).

    Returns
    -------
    polars.DataFrame
        Columns ``job``, ``user``, ``phase``, ``task``, ``attempt``, ``machine``, ``rack``,
        ``start``, ``finish``, ``duration``, ``killed``, ``locality`` (null: no input data).
    """
    names = _TaskNames.of(log)
    frames = [
        _tasks_rows(names, rows, user)
        for _, rows, user in attempt_users(log).chunks(log, ATTEMPT_CHUNK)
    ]
    if not frames:
        return _tasks_rows(names, AttemptRows.from_flat([], (), ()), np.zeros(0, np.int64))
    return pl.concat(frames, rechunk=True) if len(frames) > 1 else frames[0]


TASK_ROW_GROUP = 32_768
"""Attempts per row group of ``tasks.parquet``: the file is written one group at a time, so
that writing it holds one group's columns of names, not the whole run's (issue 32)."""


class _TaskNames(NamedTuple):
    """The name columns :func:`_tasks_rows` gathers from (jobs, users, machines and their
    racks with "" after them), made once per file rather than once per row group: a trace of
    67,000 jobs would otherwise convert every job's name for each group of 32,768 rows."""

    jobs: pl.Series
    users: pl.Series
    machines: pl.Series
    racks: pl.Series
    cluster_index: dict[str, int]
    known: dict[tuple[str, ...], IntArray]
    """Per machine list of a chunk, each machine's place in the cluster's list (chunks of a
    spilled run share one list, thousands of machines long)."""

    def to_cluster(self, machine_names: tuple[str, ...]) -> IntArray:
        """Each of ``machine_names``' place in the cluster's list; an attempt on a machine
        the cluster does not list gets the empty names after them."""
        found = self.known.get(machine_names)
        if found is None:
            absent = len(self.cluster_index)
            found = self.known[machine_names] = np.fromiter(
                (self.cluster_index.get(name, absent) for name in machine_names),
                dtype=np.int64,
                count=len(machine_names),
            )
        return found

    @classmethod
    def of(cls, log: RunLog) -> _TaskNames:
        machines = log.cluster.machines
        return cls(
            pl.Series([record.job for record in log.jobs], dtype=pl.String),
            pl.Series(list(attempt_users(log).names), dtype=pl.String),
            pl.Series([*(m.name for m in machines), ""], dtype=pl.String),
            pl.Series([*(m.rack or "" for m in machines), ""], dtype=pl.String),
            {name: i for i, name in enumerate(log.cluster.machine_names)},
            {},
        )


def _tasks_rows(names: _TaskNames, rows: AttemptRows, user: IntArray) -> pl.DataFrame:
    """The rows of :func:`tasks_frame` of a chunk of attempts (``rows``, their users
    ``user``): the one place its columns are made."""
    m_idx = names.to_cluster(rows.machine_names)[rows.machine]
    # No input data (-1) is the null after the named levels.
    locality = np.where(rows.locality >= 0, rows.locality, len(LOCALITY_LEVELS))
    return pl.DataFrame(
        {
            "job": names.jobs.gather(rows.order),
            "user": names.users.gather(user),
            "phase": _names(PHASES, rows.phase),
            "task": pl.Series(rows.task, dtype=pl.Int64),
            "attempt": pl.Series(rows.attempt, dtype=pl.Int64),
            "machine": names.machines.gather(m_idx),
            "rack": names.racks.gather(m_idx),
            "start": pl.Series(rows.start, dtype=pl.Float64),
            "finish": pl.Series(rows.finish, dtype=pl.Float64),
            # RunFrames.a_duration's formula.
            "duration": pl.Series(np.maximum(rows.finish - rows.start, 0.0), dtype=pl.Float64),
            "killed": pl.Series(rows.killed, dtype=pl.Boolean),
            "locality": _names((*LOCALITY_LEVELS, None), locality),
        }
    )


def dumps_json(document: object, *, cleaned: bool = False) -> str:
    """Deterministic JSON text of a document.

    Parameters
    ----------
    document : object
        Cleaned first (:func:`~fairshare.metrics.clean`: rounded floats, null for NaN).
    cleaned : bool
        The document is :func:`~fairshare.metrics.clean`'s already (a run's summary, tens
        of thousands of users' entries): not walked again.

    Returns
    -------
    str
        Sorted keys, two-space indent, final newline.

    Examples
    --------
    >>> from fairshare.metrics import dumps_json
    >>> print(dumps_json({"b": 1 / 3, "a": float("nan")}), end="")
    {
      "a": null,
      "b": 0.3333333333333333
    }
    """
    ready = document if cleaned else clean(document)
    return json.dumps(ready, sort_keys=True, indent=2, allow_nan=False) + "\n"


def write_csv(frame: pl.DataFrame, path: Path) -> None:
    r"""Write ``frame`` as CSV to ``path``: 6 decimals, empty fields for nulls, ``\n`` line ends.

    Python writes the file, so a full disk or a file-size limit is an ``OSError`` with its
    errno (polars reports its own writes' failures as other exceptions, or without errno).

    Parameters
    ----------
    frame : polars.DataFrame
        The table.
    path : Path
        The file to write (replaced).

    Raises
    ------
    OSError
        The file cannot be written.
    """
    # Python writes the file, so a full disk or a file-size limit is an OSError with its
    # errno (polars reports its own writes' failures as other exceptions, or without errno).
    buffer = io.BytesIO()
    frame.write_csv(buffer, float_precision=FLOAT_DECIMALS, null_value="", line_terminator="\n")
    path.write_bytes(buffer.getvalue())


def write_run_files(
    log: RunLog,
    out_dir: Path,
    alongside: Callable[[dict[str, object]], None] | None = None,
    grid_points: int = 0,
) -> dict[str, object]:
    """Write the data files of one run into ``out_dir`` (created if missing).

    ``summary.json``, ``jobs.csv``, ``timeline.csv`` and ``tasks.parquet`` (SPEC section 3);
    :func:`fairshare.report.write_outputs` adds ``report.html`` through ``alongside``.

    Every file is made from passes over the attempts a chunk at a time (the spill file's
    rows for a long simulated run): the run's totals (:func:`~fairshare.metrics.totals.
    run_totals`), then ``tasks.parquet`` a row group at a time, and ``timeline.csv`` a batch
    of rows at a time while the summary's share integrals (and, with ``grid_points``, the
    report's resampled shares: :func:`~fairshare.metrics.timeline.timeline_view`, cached
    for the report) follow the same rows. So the memory taken is the jobs', the users' and
    a few chunks', whatever the attempts (issue 32).

    polars encodes and compresses ``tasks.parquet`` and ``jobs.csv`` without holding the
    interpreter, so they are written by worker threads while this one takes the totals and
    writes the timeline and the summary (and runs ``alongside``). The bytes are the same
    either way.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).
    out_dir : Path
        The directory; files of the same names are replaced.
    alongside : callable, optional
        Called with the summary document while the worker threads write, before this
        returns (the report's page).
    grid_points : int
        The bins of the report's allocation figure, resampled in the timeline's pass.

    Returns
    -------
    dict of str to object
        The summary document.

    Raises
    ------
    OSError
        A file cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    # The attempts' users, which every pass reads (cached), are found before a worker needs
    # them, so no two threads build them.
    attempt_users(log)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="fairshare-write") as pool:
        # tasks.parquet, the longest write, starts first: the totals are this thread's
        # while it runs (jobs.csv reads them, so its worker starts after).
        writes = [pool.submit(_write_tasks, log, out_dir / "tasks.parquet")]
        totals = run_totals(log)
        span = makespan(totals)
        writes.append(pool.submit(_write_jobs, log, out_dir / "jobs.csv"))
        view = _write_timeline(log, out_dir / "timeline.csv", span, grid_points)
        doc = clean(_summary(log, totals, view.integrals))
        assert isinstance(doc, dict)
        (out_dir / "summary.json").write_text(dumps_json(doc, cleaned=True), encoding="utf-8")
        if log.user_queues or any(record.queue for record in log.jobs):
            # Per-queue use over time, the quantity quotas bound (fairshare.metrics.queues).
            write_csv(queue_usage(log), out_dir / "queues.csv")
        if alongside is not None:
            alongside(doc)
        for write in writes:
            write.result()  # a worker's OSError is raised here
    return doc


def _write_timeline(log: RunLog, path: Path, horizon: float, grid_points: int) -> TimelineView:
    """Write ``timeline.csv`` a batch of rows at a time (:func:`write_csv`'s format, the
    header once) and return the :class:`TimelineView` the same pass follows (cached for the
    report)."""
    users = attempt_users(log).names
    user_column = pl.Series(list(users), dtype=pl.String)
    with path.open("wb") as sink:
        header = [True]

        def write(batch: TimelineRows) -> None:
            buffer = io.BytesIO()
            _timeline_frame(batch, users, log, user_column).write_csv(
                buffer,
                include_header=header[0],
                float_precision=FLOAT_DECIMALS,
                null_value="",
                line_terminator="\n",
            )
            header[0] = False
            sink.write(buffer.getbuffer())

        view = timeline_view(log, horizon, grid_points, each=write)
        if header[0]:  # no rows: the header alone
            buffer = io.BytesIO()
            _timeline_frame(TimelineRows(*_EMPTY_ROWS), users, log).write_csv(
                buffer, float_precision=FLOAT_DECIMALS, null_value="", line_terminator="\n"
            )
            sink.write(buffer.getbuffer())
    # The report draws from the same view (fairshare.report.html.render_run).
    cached(log, f"timeline_view/{grid_points}", lambda _log: view)
    return view


_EMPTY_ROWS = (
    np.zeros(0, dtype=np.float64),
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.int64),
    np.zeros(0, dtype=np.float64),
)


def _write_tasks(log: RunLog, path: Path) -> None:
    """Write ``tasks.parquet`` one row group of :data:`TASK_ROW_GROUP` attempts at a time
    (a worker's job: polars gathers the name columns without holding the interpreter),
    each read as a chunk of the log's attempts.

    pyarrow's writer appends each group to the open file, so the memory it takes is one
    group's, whatever the run's size. Compression is zstd; statistics and the writer's
    version string are fixed for a given polars and pyarrow, so the bytes depend only on the
    rows. A run of one group (no attempts included) is written by polars.

    Raises
    ------
    OSError
        The file cannot be written.
    """
    n = log.attempt_count
    if n <= TASK_ROW_GROUP:
        # One group: polars writes it whole, the bytes every earlier release wrote, and the
        # run does not load pyarrow (about 30 MB).
        frame = tasks_frame(log)
        buffer = io.BytesIO()
        frame.write_parquet(buffer, compression="zstd")
        path.write_bytes(buffer.getbuffer())
        return
    import pyarrow.parquet as pq  # noqa: PLC0415  (only a run of several groups needs it)

    names = _TaskNames.of(log)
    groups = attempt_users(log).chunks(log, TASK_ROW_GROUP)
    _, rows, user = next(groups)
    first = _tasks_rows(names, rows, user).to_arrow()
    with path.open("wb") as sink, pq.ParquetWriter(sink, first.schema, compression="zstd") as w:
        w.write_table(first)
        del first
        for _, rows, user in groups:
            w.write_table(_tasks_rows(names, rows, user).to_arrow())


def _write_jobs(log: RunLog, path: Path) -> None:
    """Build and write ``jobs.csv`` (a worker's job)."""
    write_csv(jobs_frame(log), path)
