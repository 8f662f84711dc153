"""Columnar views of a run log: the one place that walks the log's Python objects.

Every metric is a numpy or polars computation over these arrays, so a 200,000-attempt run
costs a handful of vectorised passes instead of Python loops per metric. The views are
computed once per ``RunLog`` object and cached while the log is alive.

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
>>> from fairshare.metrics import run_frames
>>> frames = run_frames(log)
>>> frames.job_names, frames.response.tolist(), frames.queueing_delay.tolist()
(('a', 'b'), [30.0, 29.0], [0.0, 9.0])
>>> run_frames(log) is frames  # cached while the log lives
True
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np
import numpy.typing as npt

from fairshare.runlog import LOCALITIES, RunLog
from fairshare.runlog import PHASES as RUN_PHASES

IntArray = npt.NDArray[np.int64]
"""An int64 numpy array: indices and counts."""
FloatArray = npt.NDArray[np.float64]
"""A float64 numpy array: times, amounts, shares."""
BoolArray = npt.NDArray[np.bool_]
"""A boolean numpy array: masks."""

LOCALITY_LEVELS: tuple[str, ...] = LOCALITIES
"""Locality codes in ``RunFrames.a_locality``: index into this tuple; -1 means no input."""

PHASES: tuple[str, ...] = RUN_PHASES
"""Phase codes in ``RunFrames.a_phase``; ``copy`` is a split reducer's copy part (FAIR 5.2)."""


@dataclass(frozen=True)
class RunFrames:
    """The run log as arrays.

    Attempt arrays (``a_*``) follow ``log.attempts`` order, job arrays follow ``log.jobs``
    order, user indices follow ``users``. Times are seconds from the start of the run.

    Parameters
    ----------
    users : tuple of str
        The log's users, then any user that appears only in job or attempt rows, in
        first-seen order.
    resources : tuple of str
        The cluster's resources.
    total : FloatArray
        The pooled cluster's capacity per resource.
    job_names : tuple of str
        The jobs' names.
    job_user : IntArray
        Each job's user.
    submit : FloatArray
        Each job's submit time.
    first_start : FloatArray
        Each job's first attempt start; NaN for a job that never started.
    finish : FloatArray
        Each job's finish; NaN for a job that never finished.
    tasks : IntArray
        Each job's tasks, map and reduce.
    maps : IntArray
        Each job's map tasks (FAIR Table 2 bins jobs by them).
    isolated : FloatArray
        Each job's response time alone on the cluster (SPEC section 3's slowdown
        denominator); ``inf`` for a job that can never run.
    demand : FloatArray
        Each job's map task demand (jobs x resources).
    a_job : IntArray
        Each attempt's job.
    a_user : IntArray
        Each attempt's user.
    a_phase : IntArray
        Each attempt's phase, an index into :data:`PHASES`.
    a_task : IntArray
        Each attempt's task index within its job and phase.
    a_attempt : IntArray
        Each attempt's number among its task's attempts.
    a_machine : IntArray
        Each attempt's machine; -1 for one the cluster does not list.
    a_start : FloatArray
        Each attempt's start.
    a_finish : FloatArray
        Each attempt's end: its kill for a killed attempt, the run's ``until`` for one still
        running then.
    a_killed : BoolArray
        Whether the attempt was killed (preemption, a machine's removal).
    a_locality : IntArray
        -1 for an attempt without input data, else an index into :data:`LOCALITY_LEVELS`.
    a_demand : FloatArray
        What each attempt held (attempts x resources): a reducer its reduce demand, a split
        reducer's copy part nothing (FAIR sections 5.2-5.3).
    """

    users: tuple[str, ...]
    resources: tuple[str, ...]
    total: FloatArray
    # jobs
    job_names: tuple[str, ...]
    job_user: IntArray
    submit: FloatArray
    first_start: FloatArray  # NaN: never started
    finish: FloatArray  # NaN: never finished
    tasks: IntArray
    maps: IntArray
    isolated: FloatArray
    demand: FloatArray  # jobs x resources
    # attempts
    a_job: IntArray
    a_user: IntArray
    a_phase: IntArray
    a_task: IntArray
    a_attempt: IntArray
    a_machine: IntArray
    a_start: FloatArray
    a_finish: FloatArray
    a_killed: BoolArray
    a_locality: IntArray  # -1: no input data, else index into LOCALITY_LEVELS
    # attempts x resources: what each attempt held (a reducer its reduce demand, a copy
    # part nothing: FAIR sections 5.2-5.3)
    a_demand: FloatArray

    @property
    def a_duration(self) -> FloatArray:
        """Each attempt's duration (finish - start, never negative)."""
        return np.maximum(self.a_finish - self.a_start, 0.0)

    @property
    def response(self) -> FloatArray:
        """Finish - submit per job; NaN for a job that never finished (SPEC section 3)."""
        return self.finish - self.submit

    @property
    def slowdown(self) -> FloatArray:
        """Response time over the isolated response time, per job.

        NaN when either is unknown or the isolated response is not positive (a zero-length job has
        no meaningful slowdown).
        """
        iso = np.where(self.isolated > 0, self.isolated, np.nan)
        return self.response / iso

    @property
    def queueing_delay(self) -> FloatArray:
        """First start - submit; NaN for a job that never started."""
        return self.first_start - self.submit


_CACHE: dict[tuple[int, str], tuple[weakref.ref[RunLog], object]] = {}

T = TypeVar("T")


def cached(log: RunLog, name: str, build: Callable[[RunLog], T]) -> T:
    """``build(log)``, computed once per log object and kind ``name`` while the log lives.

    Logs are immutable, so derived views can be shared by every metric and writer.

    Parameters
    ----------
    log : RunLog
        The run log the view is of.
    name : str
        The kind of view (``frames``, ``timeline``).
    build : callable
        Computes the view from the log.

    Returns
    -------
    T
        The view, from the cache when it was built before for this log.
    """
    key = (id(log), name)
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is log:
        return cast(T, hit[1])
    value = build(log)

    def forget(_ref: weakref.ref[RunLog]) -> None:
        _CACHE.pop(key, None)

    _CACHE[key] = (weakref.ref(log, forget), value)
    return value


def run_frames(log: RunLog) -> RunFrames:
    """The columnar view of ``log``, cached per log object.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).

    Returns
    -------
    RunFrames
    """
    return cached(log, "frames", _build)


def _index(names: list[str]) -> dict[str, int]:
    """Position of each name."""
    return {n: i for i, n in enumerate(names)}


K = TypeVar("K")


def _codes(lookup: Callable[[K], int], column: Sequence[K]) -> IntArray:
    """``lookup`` of every item of ``column``. map() of a dict's lookup runs in C: a third
    of a list comprehension's time over the 200,000 attempts of a large run."""
    return np.fromiter(map(lookup, column), dtype=np.int64, count=len(column))


class _Codes(dict[str, int]):
    """Machine indices by name; -1 for a machine the cluster does not list."""

    def __missing__(self, key: str) -> int:
        return -1


def _build(log: RunLog) -> RunFrames:
    """Walk the log once into :class:`RunFrames` (reducers counted from the attempts)."""
    users = list(log.users)
    user_index = _index(users)

    def uid(name: str) -> int:
        i = user_index.get(name)
        if i is None:
            i = user_index[name] = len(users)
            users.append(name)
        return i

    jobs = log.jobs
    # Columns straight from the simulator's rows: no TaskAttempt is built for the metrics.
    cols = log.attempt_columns()
    job_names = [j.job for j in jobs]
    n_res = len(log.cluster.resources)
    nan = float("nan")

    job_user = np.array([uid(j.user) for j in jobs], dtype=np.int64)
    submit = np.array([j.submit for j in jobs], dtype=np.float64)
    first_start = np.array(
        [nan if j.first_start is None else j.first_start for j in jobs], dtype=np.float64
    )
    finish = np.array([nan if j.finish is None else j.finish for j in jobs], dtype=np.float64)
    tasks = np.array([j.tasks for j in jobs], dtype=np.int64)
    isolated = np.array([j.isolated_response for j in jobs], dtype=np.float64)
    demand = (
        np.array([j.demand for j in jobs], dtype=np.float64).reshape(len(jobs), n_res)
        if jobs
        else np.zeros((0, n_res), dtype=np.float64)
    )

    rows = cols.rows
    n = len(rows.start)
    cluster_index = _Codes(_index(list(log.cluster.machine_names)))
    # The rows index their own list of machine names; the frames index the cluster's.
    to_cluster = np.fromiter(
        map(cluster_index.__getitem__, rows.machine_names),
        dtype=np.int64,
        count=len(rows.machine_names),
    )
    a_job = rows.order
    a_user = job_user[a_job] if cols.user is None else _codes(uid, cols.user)
    a_phase = rows.phase
    a_task = rows.task
    a_attempt = rows.attempt
    a_machine = to_cluster[rows.machine]
    a_start = rows.start
    a_finish = rows.finish
    a_killed = rows.killed
    a_locality = rows.locality

    # FAIR Table 2 bins jobs by their number of maps; the record counts map and reduce tasks
    # together, so the reduce tasks seen in the attempts are subtracted. For a finished job
    # every reduce task has an attempt, so this is exact where slowdown is defined.
    reduce_rows = a_phase == 1
    if reduce_rows.any():
        pairs = np.unique(np.stack([a_job[reduce_rows], a_task[reduce_rows]], axis=1), axis=0)
        reduces = np.bincount(pairs[:, 0], minlength=len(jobs)).astype(np.int64)
    else:
        reduces = np.zeros(len(jobs), dtype=np.int64)
    maps = np.maximum(tasks - reduces, 0)

    # Reduce attempts of jobs whose reducers have their own demand hold that one instead.
    reduce_demand = demand.copy()
    for j, job in enumerate(jobs):
        if job.reduce_demand is not None:
            reduce_demand[j] = job.reduce_demand
    a_demand = demand[a_job]
    if reduce_rows.any():
        a_demand[reduce_rows] = reduce_demand[a_job[reduce_rows]]
    a_demand[a_phase == 2] = 0.0

    return RunFrames(
        users=tuple(users),
        resources=tuple(log.cluster.resources),
        total=np.asarray(log.cluster.total, dtype=np.float64),
        job_names=tuple(job_names),
        job_user=job_user,
        submit=submit,
        first_start=first_start,
        finish=finish,
        tasks=tasks,
        maps=maps,
        isolated=isolated,
        demand=demand,
        a_job=a_job,
        a_user=a_user,
        a_phase=a_phase,
        a_task=a_task,
        a_attempt=a_attempt,
        a_machine=a_machine,
        a_start=a_start,
        a_finish=a_finish,
        a_killed=a_killed,
        a_locality=a_locality,
        a_demand=a_demand.reshape(n, n_res),
    )


def order_by_user_time(user: IntArray, time: FloatArray) -> IntArray:
    """The stable permutation sorting rows by (user, time).

    A stable sort by time (fast on the nearly sorted times of a run), then a stable
    radix-friendly sort by the small user index: four times faster than ``np.lexsort`` on
    400,000 rows.

    Parameters
    ----------
    user : IntArray
        Each row's user index.
    time : FloatArray
        Each row's time.

    Returns
    -------
    IntArray

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.metrics.frames import order_by_user_time
    >>> order_by_user_time(np.array([1, 0, 1, 0]), np.array([5.0, 3.0, 1.0, 4.0])).tolist()
    [1, 3, 2, 0]
    """
    by_time = np.argsort(time, kind="stable")
    small = user[by_time]
    if user.size and int(user.max()) < np.iinfo(np.int16).max:
        small = small.astype(np.int16, copy=False)
    return by_time[np.argsort(small, kind="stable")].astype(np.int64, copy=False)
