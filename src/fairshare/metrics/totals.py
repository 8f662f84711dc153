"""A run's per-job and per-user figures from one pass over its attempts, a chunk at a time.

``summary.json``, ``jobs.csv`` and the report need of the attempts only sums: per job its
attempts, kills and completed attempts at each locality level and its reducers, per user its
task-seconds, per resource its busy time, the last finish. They are accumulated here over
:data:`ATTEMPT_CHUNK` attempts at a time (:func:`chunks_of`), from the spill file for a long
simulated run (:class:`fairshare.runlog.SpilledRows`), so that their memory is the jobs',
users' and one chunk's, never the attempts' (issue 32). Every sum is the one the whole
columns gave, to the bit: counts are integers, busy time is correctly rounded
(:class:`ExactSum`), each user's task-seconds are added attempt after attempt in the log's
order as ``np.bincount`` adds them, and the wasted seconds are summed over the same array.

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
>>> totals = run_totals(log)
>>> totals.task_attempts.tolist(), totals.busy, totals.task_seconds.tolist()
([8, 4], [120.0], [80.0, 40.0])
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from fairshare.metrics.frames import LOCALITY_LEVELS, BoolArray, FloatArray, IntArray, cached
from fairshare.runlog import AttemptRows, RunLog, attempt_chunks

ATTEMPT_CHUNK = 1 << 16
"""Attempts per chunk of a pass over a run's attempts (some 5 MB of columns). Read at each
pass, so a test may lower it."""


@dataclass(frozen=True)
class AttemptUsers:
    """The run's users as the metrics index them, and each attempt's.

    Parameters
    ----------
    names : tuple of str
        The log's users, then any user named only by a job (or, in a log of
        :class:`~fairshare.runlog.TaskAttempt` objects, an attempt), in first-seen order:
        :class:`~fairshare.metrics.frames.RunFrames`' ``users``.
    job_user : IntArray
        Each job's user.
    attempt_user : IntArray or None
        Each attempt's user in a log of attempt objects; None for a driver's log (an
        attempt's user is its job's).
    """

    names: tuple[str, ...]
    job_user: IntArray
    attempt_user: IntArray | None

    def chunks(self, log: RunLog, size: int) -> Iterator[tuple[int, AttemptRows, IntArray]]:
        """``log``'s attempts ``size`` at a time: (first row, columns, users)."""
        table = log.attempt_table()
        source = table if table is not None else log.attempt_columns().rows
        for lo, piece in attempt_chunks(source, size):
            if self.attempt_user is None:
                yield lo, piece, self.job_user[piece.order]
            else:
                yield lo, piece, self.attempt_user[lo : lo + len(piece.start)]


def attempt_users(log: RunLog) -> AttemptUsers:
    """The log's :class:`AttemptUsers`, cached per log."""
    return cached(log, "users", _users)


def _users(log: RunLog) -> AttemptUsers:
    users = list(log.users)
    index = {name: i for i, name in enumerate(users)}

    def uid(name: str) -> int:
        i = index.get(name)
        if i is None:
            i = index[name] = len(users)
            users.append(name)
        return i

    job_user = np.array([uid(j.user) for j in log.jobs], dtype=np.int64)
    attempt_user = None
    if log.attempt_table() is None:
        names = log.attempt_columns().user
        assert names is not None
        attempt_user = np.fromiter(map(uid, names), dtype=np.int64, count=len(names))
    return AttemptUsers(tuple(users), job_user, attempt_user)


def attempt_demands(log: RunLog) -> FloatArray:
    """What an attempt holds, by its demand row (:func:`demand_rows`): jobs' map demands,
    then their reducers' (a job's own reduce demand, else its demand), then nothing (a
    split reducer's copy part: FAIR sections 5.2-5.3)."""
    jobs = log.jobs
    r = len(log.cluster.resources)
    table = np.zeros((2 * len(jobs) + 1, r), dtype=np.float64)
    for j, job in enumerate(jobs):
        table[j] = job.demand
        table[len(jobs) + j] = job.demand if job.reduce_demand is None else job.reduce_demand
    return table


def demand_rows(log: RunLog, rows: AttemptRows) -> IntArray:
    """Each attempt's row of :func:`attempt_demands`: its job's for a map, its job's
    reducers' for a reducer, the last (nothing) for a copy part."""
    jobs = len(log.jobs)
    out = rows.order + np.where(rows.phase == 1, jobs, 0)
    out[rows.phase == 2] = 2 * jobs
    return out


_UNIT_EXP = -1074 - 53
""":class:`ExactSum` counts in units of ``2**_UNIT_EXP``: every finite float is an integer
number of them (``np.frexp``'s mantissa times 2**53, shifted by its exponent)."""
_SLICE = 1 << 20
"""Values split and binned at a time by :class:`ExactSum`: a bin's float64 sum of up to this
many integers below 2**27 stays below 2**53, so it is exact."""


class ExactSum:
    """A sum of floats given in parts, correctly rounded: ``math.fsum`` of all of them at
    once, whatever the parts.

    The exact sum is kept as an integer count of ``2**-1127`` (the least float is ``2**-1074``,
    and a mantissa has 53 bits). Each value is split without rounding into ``m * 2**e``
    (``np.frexp``, ``m`` an integer below 2**53) and ``m`` into a high and a low half of 27
    and 26 bits; each exponent's halves are summed by ``np.bincount`` in float64, exactly
    (integers below 2**53), and added to the count as Python integers. A part is a few
    vectorised passes, not ``math.fsum``'s two passes of a Python float each (busy time over
    the attempts of a large replay cost its output about a second). The value is the count
    over its power of two, which Python's integer division rounds correctly.

    Examples
    --------
    >>> total = ExactSum()
    >>> total.add([0.1, 1e100]); total.add([0.2, -1e100]); total.add([0.3])
    >>> total.value() == math.fsum([0.1, 1e100, 0.2, -1e100, 0.3])
    True
    """

    def __init__(self) -> None:
        self.count = 0
        """The exact sum so far, in units of ``2**_UNIT_EXP``."""

    def add(self, values: Sequence[float] | FloatArray) -> None:
        """Add ``values`` (finite)."""
        array = np.asarray(values, dtype=np.float64).ravel()
        for lo in range(0, array.shape[0], _SLICE):
            self._add(array[lo : lo + _SLICE])

    def _add(self, values: FloatArray) -> None:
        """Add at most :data:`_SLICE` values."""
        if not values.shape[0]:
            return
        mantissa, exponent = np.frexp(values)
        whole = mantissa * 2.0**53  # an integer below 2**53: exact
        high = np.floor(whole / 2.0**26)  # exact: a power of two, then an integer
        low = whole - high * 2.0**26  # from 0 to 2**26: exact
        least = int(exponent.min())
        bins = (exponent - least).astype(np.intp)
        highs = np.bincount(bins, weights=high)
        lows = np.bincount(bins, weights=low)
        count = self.count
        shift = least - 53 - _UNIT_EXP
        for k in np.flatnonzero((highs != 0.0) | (lows != 0.0)).tolist():
            count += ((int(highs[k]) << 26) + int(lows[k])) << (shift + k)
        self.count = count

    def value(self) -> float:
        """The correctly rounded sum so far."""
        return self.count / (1 << -_UNIT_EXP)


@dataclass(frozen=True)
class RunTotals:
    """A run's jobs as arrays and its attempts' sums (module docstring).

    Job arrays follow ``log.jobs``, user arrays :attr:`users`; the job fields are those of
    :class:`~fairshare.metrics.frames.RunFrames`.

    Attributes
    ----------
    task_attempts, killed_attempts : IntArray
        Per job, its attempts and its killed ones.
    completed_at : IntArray
        Per locality level and job (levels x jobs), its completed attempts that read input
        there.
    attempts, completed, killed : int
        The run's attempts, completed and killed.
    last_finish : float
        The last attempt's end; -inf without attempts.
    busy : list of float
        Per resource, the sum over attempts of demand x duration (killed ones too).
    wasted : float
        The killed attempts' durations summed.
    task_seconds : FloatArray
        Per user, its completed attempts' durations summed.
    """

    users: tuple[str, ...]
    resources: tuple[str, ...]
    total: FloatArray
    job_names: tuple[str, ...]
    job_user: IntArray
    submit: FloatArray
    first_start: FloatArray
    finish: FloatArray
    tasks: IntArray
    maps: IntArray
    isolated: FloatArray
    task_attempts: IntArray
    killed_attempts: IntArray
    completed_at: IntArray
    attempts: int
    completed: int
    killed: int
    last_finish: float
    busy: list[float]
    wasted: float
    task_seconds: FloatArray

    @property
    def response(self) -> FloatArray:
        """Finish - submit per job; NaN for a job that never finished (SPEC section 3)."""
        return self.finish - self.submit

    @property
    def slowdown(self) -> FloatArray:
        """Response over isolated response per job; NaN when either is unknown or the
        isolated response is not positive."""
        iso = np.where(self.isolated > 0, self.isolated, np.nan)
        return self.response / iso

    @property
    def queueing_delay(self) -> FloatArray:
        """First start - submit; NaN for a job that never started."""
        return self.first_start - self.submit


def run_totals(log: RunLog) -> RunTotals:
    """The :class:`RunTotals` of ``log``: one pass over its attempts, cached per log.

    Parameters
    ----------
    log : RunLog
        A run.

    Returns
    -------
    RunTotals
    """
    return cached(log, "totals", _totals)


def _totals(log: RunLog) -> RunTotals:
    users = attempt_users(log)
    jobs = log.jobs
    n_jobs = len(jobs)
    nan = float("nan")
    demand = attempt_demands(log)
    levels = len(LOCALITY_LEVELS)
    task_attempts = np.zeros(n_jobs, dtype=np.int64)
    killed_attempts = np.zeros(n_jobs, dtype=np.int64)
    completed_at = np.zeros((levels, n_jobs), dtype=np.int64)
    reducers = np.zeros(0, dtype=np.int64)
    busy = [ExactSum() for _ in log.cluster.resources]
    task_seconds = np.zeros(len(users.names), dtype=np.float64)
    wasted: list[FloatArray] = []
    attempts = completed = killed = 0
    last = -math.inf
    for _, rows, user in users.chunks(log, ATTEMPT_CHUNK):
        m = len(rows.start)
        attempts += m
        job = rows.order
        task_attempts += np.bincount(job, minlength=n_jobs)
        killed_attempts += np.bincount(job[rows.killed], minlength=n_jobs)
        done: BoolArray = ~rows.killed
        completed += int(done.sum())
        killed += m - int(done.sum())
        for level in range(levels):
            completed_at[level] += np.bincount(
                job[done & (rows.locality == level)], minlength=n_jobs
            )
        reduce = rows.phase == 1
        if reduce.any():
            # A job's reducers are its distinct reduce tasks (a task may run several times).
            keys = np.unique(job[reduce].astype(np.int64) << 32 | rows.task[reduce])
            reducers = np.union1d(reducers, keys)
        duration = np.maximum(rows.finish - rows.start, 0.0)
        held = demand[demand_rows(log, rows)]
        for r, total in enumerate(busy):
            total.add(held[:, r] * duration)
        np.add.at(task_seconds, user[done], duration[done])
        if not done.all():
            wasted.append(duration[~done])
        if m:
            last = max(last, float(rows.finish.max()))
    reduces = np.bincount(reducers >> 32, minlength=n_jobs).astype(np.int64)
    tasks = np.array([j.tasks for j in jobs], dtype=np.int64)
    # FAIR Table 2 bins jobs by their number of maps; the record counts map and reduce tasks
    # together, so the reduce tasks seen in the attempts are subtracted (exact for a
    # finished job, where slowdown is defined).
    maps = np.maximum(tasks - reduces, 0)
    waste = np.concatenate(wasted) if wasted else np.zeros(0, dtype=np.float64)
    return RunTotals(
        users=users.names,
        resources=tuple(log.cluster.resources),
        total=np.asarray(log.cluster.total, dtype=np.float64),
        job_names=tuple(j.job for j in jobs),
        job_user=users.job_user,
        submit=np.array([j.submit for j in jobs], dtype=np.float64),
        first_start=np.array(
            [nan if j.first_start is None else j.first_start for j in jobs], dtype=np.float64
        ),
        finish=np.array([nan if j.finish is None else j.finish for j in jobs], dtype=np.float64),
        tasks=tasks,
        maps=maps,
        isolated=np.array([j.isolated_response for j in jobs], dtype=np.float64),
        task_attempts=task_attempts,
        killed_attempts=killed_attempts,
        completed_at=completed_at,
        attempts=attempts,
        completed=completed,
        killed=killed,
        last_finish=last,
        busy=[total.value() for total in busy],
        wasted=float(waste.sum()),
        task_seconds=task_seconds,
    )
