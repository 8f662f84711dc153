"""What a simulated or live run leaves behind: the contract between the drivers (the event
engine ``fairshare.sim``, the live driver ``fairshare.backends``) and the layers that read runs
(``fairshare.metrics``, ``fairshare.report``, the ``simulate``, ``compare`` and ``serve``
commands). It sits below both drivers, so that a live run writes the same files as a
simulation.

A run is recorded as plain rows, one per task attempt and one per job, so that metrics are
pure functions of the log and every output file (SPEC section 3) can be derived from it.
Times are seconds from the start of the run. Rows are in a deterministic order: task
attempts by (start, job order, phase, task, attempt), jobs in submission order.

Examples
--------
A log as the simulator writes it (:func:`fairshare.sim.simulate`):

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.sim import simulate
>>> from fairshare.workload.model import FixedDuration, Job
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([2.0]))])
>>> job = Job("a", 0.0, "alice", np.array([1.0]), 3, FixedDuration(10.0))
>>> log = simulate(cluster, [job], "fifo", seed=0)
>>> [(a.task, a.machine, a.start, a.finish) for a in log.attempts]
[(0, 'm', 0.0, 10.0), (1, 'm', 0.0, 10.0), (2, 'm', 10.0, 20.0)]
>>> record = log.jobs[0]
>>> record.finish - record.submit, record.isolated_response
(20.0, 20.0)
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import gt
from typing import Any, Literal, NamedTuple

from fairshare.cluster import Cluster, FloatArray

Locality = Literal["node", "rack", "off_rack"]
"""Where a map task read its input block from: its own machine, its rack, or another rack
(FAIR section 4)."""
Phase = Literal["map", "reduce", "copy"]
"""A task's phase: a map task, a reducer, or a reducer's copy part (copy-compute splitting,
FAIR section 5.2)."""


@dataclass(frozen=True, slots=True)
class TaskAttempt:
    """One run of one task on one machine, from launch to finish or kill.

    A row of ``tasks.parquet`` (SPEC section 3).

    Attributes
    ----------
    job, user : str
        The task's job and the job's user (or pool).
    phase : {"map", "reduce", "copy"}
        ``map``, ``reduce`` or, with copy-compute splitting (FAIR section 5.2), ``copy``: a
        reducer is then recorded as its copy part (``copy``, which holds no resource) and
        its compute part (``reduce``, the reduce demand), so busy time counts only the
        compute part's resources. Without splitting, a ``reduce`` attempt is the whole
        reducer, copy and compute, and holds its demand from launch (launched before the
        job's maps finished, it holds it while it waits for them: FAIR section 5.1's slot
        hoarding).
    task : int
        The task's index within its phase.
    attempt : int
        0 for the first run of the task, one more for each run after a kill or a pause.
    machine : str
        The machine it ran on.
    start, finish : float
        Seconds from the start of the run.
    killed : bool
        Killed by preemption or a machine's removal: ``finish`` is the kill time, and the
        task runs again later as attempt + 1.
    locality : {"node", "rack", "off_rack"} or None
        Where the task read its input block from; None for tasks that read none.
    truncated : bool
        Still running when the run stopped at its ``until`` time: ``finish`` is that time,
        so that busy time up to the end of the run is counted.
    """

    job: str
    user: str
    phase: Phase
    task: int
    attempt: int
    machine: str
    start: float
    finish: float
    killed: bool = False
    locality: Locality | None = None
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job of the run: a row of ``jobs.csv`` (SPEC section 3).

    Attributes
    ----------
    job, user, queue : str
        The job's name, its user (or pool) and its queue.
    submit : float
        When it was submitted.
    tasks : int
        All its tasks, map and reduce (a split reducer once).
    demand : FloatArray
        The per-task demand vector in the cluster's resource order.
    weight : float
        The job's weight.
    first_start, finish : float or None
        When its first task started and its last finished; None for a job that never
        started or never finished before the run ended.
    isolated_response : float
        The job's response time alone on the empty cluster (the denominator of slowdown,
        SPEC section 3); ``inf`` for a job that can never run, since no machine it may use
        holds one of its tasks (:class:`fairshare.workload.eligibility.TaskFit`).
    reduce_demand : FloatArray or None
        A reducer's demand when it differs from ``demand`` (None: ``demand``).
    """

    job: str
    user: str
    queue: str
    submit: float
    tasks: int
    demand: FloatArray
    weight: float
    first_start: float | None
    finish: float | None
    isolated_response: float
    reduce_demand: FloatArray | None = None


ROW_FIELDS = 8
"""A driver records attempts flat, ``ROW_FIELDS`` list items per attempt: (start, job
order, phase, task, attempt, machine, finish, locality), where the job order indexes
``RunLog.jobs`` (the job's name and user are its record's). Eight items appended to one list
cost a simulation much less than a tuple per attempt: no object per attempt to build, keep
and have the cyclic collector walk, which at 200,000 tasks is a measurable share of a run.
The item offsets follow."""
ROW_START, ROW_ORDER, ROW_PHASE, ROW_TASK, ROW_ATTEMPT, ROW_MACHINE, ROW_FINISH, ROW_LOCALITY = (
    range(ROW_FIELDS)
)


class AttemptRows(NamedTuple):
    """A run's attempts as a driver recorded them, one list per field.

    The lists are in the log's attempt order (by start, job order, phase, task, attempt;
    the five are unique per attempt), one entry per attempt; ``order`` indexes
    ``RunLog.jobs``. The other fields are those of :class:`TaskAttempt`.

    Attributes
    ----------
    order : list of int
        Per attempt, its job's index in ``RunLog.jobs`` (the job's name and user are its
        record's).
    start, phase, task, attempt, machine, finish, killed, locality, truncated : list
        Per attempt, the :class:`TaskAttempt` field of the same name.
    """

    start: list[float]
    order: list[int]
    phase: list[Phase]
    task: list[int]
    attempt: list[int]
    machine: list[str]
    finish: list[float]
    killed: list[bool]
    locality: list[Locality | None]
    truncated: list[bool]

    @classmethod
    def from_flat(
        cls, flat: list[Any], killed: Iterable[int], truncated: Iterable[int]
    ) -> AttemptRows:
        """The rows of a driver's flat attempt list, sorted.

        A driver appends attempts as they start, so they are sorted but for attempts that
        started at one time: a pass finds out, and only an unsorted log pays for the sort.

        Parameters
        ----------
        flat : list
            :data:`ROW_FIELDS` items per attempt (see there).
        killed, truncated : iterable of int
            The offsets in ``flat`` of the attempts that were killed, or truncated.

        Returns
        -------
        AttemptRows

        Examples
        --------
        Two attempts started at one time, recorded out of order (job 1 before job 0); the
        attempt at offset 8 was killed:

        >>> flat = [5.0, 1, "map", 0, 0, "m1", 9.0, None, 5.0, 0, "map", 0, 0, "m2", 8.0, "node"]
        >>> rows = AttemptRows.from_flat(flat, killed=[8], truncated=[])
        >>> rows.order, rows.machine, rows.killed
        ([0, 1], ['m2', 'm1'], [True, False])
        """
        columns: list[list[Any]] = [flat[k::ROW_FIELDS] for k in range(ROW_FIELDS)]
        n = len(columns[ROW_START])
        killed_column = [False] * n
        for offset in killed:
            killed_column[offset // ROW_FIELDS] = True
        truncated_column = [False] * n
        for offset in truncated:
            truncated_column[offset // ROW_FIELDS] = True
        columns += [killed_column, truncated_column]
        keys = list(zip(*columns[: ROW_ATTEMPT + 1], strict=True))
        if any(map(gt, keys, islice(keys, 1, None))):
            order = sorted(range(n), key=keys.__getitem__)
            columns = [list(map(column.__getitem__, order)) for column in columns]
        (start, job, phase, task, attempt, machine, finish, locality, was_killed, cut) = columns
        return cls(start, job, phase, task, attempt, machine, finish, was_killed, locality, cut)


class AttemptColumns(NamedTuple):
    """A log's attempts as columns, in ``RunLog.attempts`` order (one entry per attempt).

    ``order`` indexes ``RunLog.jobs``; ``user`` is None when every attempt's user is its
    job's (a simulator's log: no column of names to build and read back). The other fields
    are those of :class:`TaskAttempt`.

    Attributes
    ----------
    order : sequence of int
        Per attempt, its job's index in ``RunLog.jobs``.
    user : sequence of str or None
        Per attempt, its user; None when every attempt's user is its job's.
    phase, task, attempt, machine, start, finish, killed, locality, truncated : sequence
        Per attempt, the :class:`TaskAttempt` field of the same name.
    """

    order: Sequence[int]
    user: Sequence[str] | None
    phase: Sequence[Phase]
    task: Sequence[int]
    attempt: Sequence[int]
    machine: Sequence[str]
    start: Sequence[float]
    finish: Sequence[float]
    killed: Sequence[bool]
    locality: Sequence[Locality | None]
    truncated: Sequence[bool]


@dataclass(frozen=True)
class RunLog:
    """Everything a run produced: the input of every metric and output file (SPEC section 3).

    A log made by :meth:`from_rows` (the simulator's) builds ``attempts`` on first read: at
    the papers' scales (Choosy section 7.1's 84,000 attempts, TSF section VI's 180,000) a
    frozen :class:`TaskAttempt` per attempt costs a sixth of the run, and the metrics and
    output files read :meth:`attempt_columns` instead, which never builds them.

    Attributes
    ----------
    policy : str
        The policy's name.
    seed : int
        The run's seed.
    cluster : Cluster
        The cluster at the start of the run.
    users : tuple of str
        The users (or pools) in scenario order, the order ties and outputs follow (users
        named only by jobs come after the scenario's).
    jobs : tuple of JobRecord
        One record per job, in submission order.
    attempts : tuple of TaskAttempt
        Every task attempt, by (start, job order, phase, task, attempt).
    events : int
        The events the engine processed.
    wall_seconds : float
        The run's wall time (the one figure that differs between identical runs).
    options : dict
        The run's options as ``summary.json`` records them (``SimOptions.record``).
    stranded : tuple of str
        The jobs that had not finished when no event was left (a run not stopped by
        ``until``): tasks that no machine they may use will ever take.
    """

    policy: str
    seed: int
    cluster: Cluster
    users: tuple[str, ...]
    jobs: tuple[JobRecord, ...]
    attempts: tuple[TaskAttempt, ...]
    events: int
    wall_seconds: float
    options: dict[str, object] = field(default_factory=dict)
    stranded: tuple[str, ...] = ()

    @classmethod
    def from_rows(
        cls,
        *,
        policy: str,
        seed: int,
        cluster: Cluster,
        users: tuple[str, ...],
        jobs: tuple[JobRecord, ...],
        rows: AttemptRows,
        events: int,
        wall_seconds: float,
        options: dict[str, object],
        stranded: tuple[str, ...] = (),
    ) -> RunLog:
        """A log whose attempts are ``rows``, built from them when first read.

        Parameters
        ----------
        rows : AttemptRows
            The attempts, whose ``order`` indexes ``jobs``.
        policy, seed, cluster, users, jobs, events, wall_seconds, options, stranded
            As the attributes of the same names (``jobs`` in job order).

        Returns
        -------
        RunLog
        """
        log = cls.__new__(cls)
        put = object.__setattr__
        put(log, "policy", policy)
        put(log, "seed", seed)
        put(log, "cluster", cluster)
        put(log, "users", users)
        put(log, "jobs", jobs)
        put(log, "events", events)
        put(log, "wall_seconds", wall_seconds)
        put(log, "options", options)
        put(log, "stranded", stranded)
        put(log, "_rows", rows)
        return log

    def __getattr__(self, name: str) -> object:
        # Reached only for an attribute the instance lacks: a from_rows log's attempts.
        rows: AttemptRows | None = self.__dict__.get("_rows") if name == "attempts" else None
        if rows is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        jobs = self.jobs
        attempts = tuple(
            [
                TaskAttempt(
                    jobs[o].job,
                    jobs[o].user,
                    phase,
                    task,
                    attempt,
                    machine,
                    start,
                    finish,
                    killed,
                    locality,
                    truncated,
                )
                for (
                    start,
                    o,
                    phase,
                    task,
                    attempt,
                    machine,
                    finish,
                    killed,
                    locality,
                    truncated,
                ) in zip(*rows, strict=True)
            ]
        )
        object.__setattr__(self, "attempts", attempts)
        return attempts

    @property
    def attempt_count(self) -> int:
        """The number of task attempts, ``len(attempts)``, without building them."""
        rows: AttemptRows | None = self.__dict__.get("_rows")
        return (
            len(rows.start)
            if rows is not None and "attempts" not in self.__dict__
            else len(self.attempts)
        )

    def attempt_columns(self) -> AttemptColumns:
        """The attempts as columns, read from the rows when the log has them (no
        :class:`TaskAttempt` is built).

        Returns
        -------
        AttemptColumns

        Raises
        ------
        KeyError
            An attempt of a job the log does not list.
        """
        rows: AttemptRows | None = self.__dict__.get("_rows")
        if rows is not None and "attempts" not in self.__dict__:
            return AttemptColumns(
                rows.order,
                None,
                rows.phase,
                rows.task,
                rows.attempt,
                rows.machine,
                rows.start,
                rows.finish,
                rows.killed,
                rows.locality,
                rows.truncated,
            )
        atts = self.attempts
        index = {record.job: k for k, record in enumerate(self.jobs)}
        return AttemptColumns(
            [index[a.job] for a in atts],
            [a.user for a in atts],
            [a.phase for a in atts],
            [a.task for a in atts],
            [a.attempt for a in atts],
            [a.machine for a in atts],
            [a.start for a in atts],
            [a.finish for a in atts],
            [a.killed for a in atts],
            [a.locality for a in atts],
            [a.truncated for a in atts],
        )

    @property
    def preempted_tasks(self) -> int:
        """The task attempts that were killed (preemption, a machine's removal)."""
        return sum(self.attempt_columns().killed)


def greedy_end(seconds: Sequence[float], slots: int, start: float) -> float:
    """When tasks of ``seconds`` (in order, each on the earliest free of ``slots``) all
    finish, from ``start``: a job's response time alone on the empty cluster (the slowdown's
    denominator, SPEC section 3), for simulated durations and for measured ones alike.

    Parameters
    ----------
    seconds : sequence of float
        The tasks' durations, in the order they start.
    slots : int
        How many of them run at a time (positive).
    start : float
        When the first starts.

    Returns
    -------
    float
        When the last finishes.

    Examples
    --------
    >>> greedy_end([10.0, 10.0, 10.0], 2, 5.0)
    25.0
    >>> greedy_end([4.0, 1.0], 4, 0.0)
    4.0
    """
    if len(seconds) <= slots:
        return start + max(seconds, default=0.0)
    heap = [start] * slots
    end = start
    for s in seconds:
        t = heapq.heappop(heap) + s
        end = max(end, t)
        heapq.heappush(heap, t)
    return end
