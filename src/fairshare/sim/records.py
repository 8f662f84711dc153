"""What a simulated (or live) run leaves behind: the contract between the event engine
(``fairshare.sim``, ``fairshare.backends``) and the layers that read runs (``fairshare.metrics``,
``fairshare.report``, the ``simulate`` and ``compare`` commands).

A run is recorded as plain rows, one per task attempt and one per job, so that metrics are
pure functions of the log and every output file (SPEC section 3) can be derived from it.
Times are seconds from the start of the run. Rows are in a deterministic order: task
attempts by (start, job order, phase, task, attempt), jobs in submission order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from fairshare.cluster import Cluster, FloatArray

Locality = Literal["node", "rack", "off_rack"]
Phase = Literal["map", "reduce", "copy"]


@dataclass(frozen=True, slots=True)
class TaskAttempt:
    """One run of one task on one machine, from launch to finish or kill.

    ``phase`` is ``map``, ``reduce`` or, with copy-compute splitting (FAIR section 5.2),
    ``copy``: a reducer is then recorded as its copy part (``copy``, which holds no resource)
    and its compute part (``reduce``, the reduce demand), so busy time counts only the
    compute part's resources. Without splitting, a ``reduce`` attempt is the whole reducer,
    copy and compute, and holds its demand from launch (launched before the job's maps
    finished, it holds it while it waits for them: FAIR section 5.1's slot hoarding).

    ``locality`` is None for tasks that read no input block. A task killed by preemption has
    ``killed=True`` and ``finish`` the kill time; it is re-run later as attempt + 1. A task
    still running when the run stopped at its ``until`` time has ``truncated=True`` and
    ``finish`` that time, so that busy time up to the end of the run is counted.
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
    """One job of the run. ``first_start`` and ``finish`` are None for a job that never
    started or never finished before the run ended. ``isolated_response`` is the job's
    response time alone on the empty cluster (the denominator of slowdown, SPEC section 3).
    ``demand`` is the per-task demand vector in the cluster's resource order, and
    ``reduce_demand`` a reducer's when it differs (None: ``demand``); ``tasks`` counts all
    tasks, map and reduce (a split reducer once)."""

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


AttemptRow = tuple[float, int, Phase, int, int, str, float, bool, Locality | None, bool]
"""An attempt as a driver records it: (start, job order, phase, task, attempt, machine,
finish, killed, locality, truncated); the job's name and user are its record's, at its
order in ``RunLog.jobs`` (a row is built per task: two fields fewer to fill and to keep).
Sorted as plain tuples, rows come in the log's attempt order, since the first five fields
are unique per attempt."""


class AttemptColumns(NamedTuple):
    """A log's attempts as columns, in ``RunLog.attempts`` order (one entry per attempt)."""

    job: Sequence[str]
    user: Sequence[str]
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
    """Everything a run produced. ``users`` lists the users (or pools) in scenario order, the
    order ties and outputs follow; ``events`` counts the events the engine processed.

    A log made by :meth:`from_rows` (the simulator's) builds ``attempts`` on first read: at
    the papers' scales (Choosy section 7.1's 84,000 attempts, TSF section VI's 180,000) a
    frozen :class:`TaskAttempt` per attempt costs a sixth of the run, and the metrics and
    output files read :meth:`attempt_columns` instead, which never builds them."""

    policy: str
    seed: int
    cluster: Cluster
    users: tuple[str, ...]
    jobs: tuple[JobRecord, ...]
    attempts: tuple[TaskAttempt, ...]
    events: int
    wall_seconds: float
    options: dict[str, object] = field(default_factory=dict)

    @classmethod
    def from_rows(
        cls,
        *,
        policy: str,
        seed: int,
        cluster: Cluster,
        users: tuple[str, ...],
        jobs: tuple[JobRecord, ...],
        rows: Sequence[AttemptRow],
        events: int,
        wall_seconds: float,
        options: dict[str, object],
    ) -> RunLog:
        """A log whose attempts are ``rows`` (sorted: see :data:`AttemptRow`; ``jobs`` in job
        order, which the rows refer to); ``attempts`` is built from them when first read."""
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
        put(log, "_rows", rows)
        return log

    def __getattr__(self, name: str) -> object:
        # Reached only for an attribute the instance lacks: a from_rows log's attempts.
        rows = self.__dict__.get("_rows") if name == "attempts" else None
        if rows is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        jobs = self.jobs
        attempts = tuple(
            [
                TaskAttempt(
                    jobs[r[1]].job,
                    jobs[r[1]].user,
                    r[2],
                    r[3],
                    r[4],
                    r[5],
                    r[0],
                    r[6],
                    r[7],
                    r[8],
                    r[9],
                )
                for r in rows
            ]
        )
        object.__setattr__(self, "attempts", attempts)
        return attempts

    @property
    def attempt_count(self) -> int:
        """``len(attempts)``, without building them."""
        rows: Sequence[AttemptRow] | None = self.__dict__.get("_rows")
        return (
            len(rows)
            if rows is not None and "attempts" not in self.__dict__
            else len(self.attempts)
        )

    def attempt_columns(self) -> AttemptColumns:
        """The attempts as columns, read from the rows when the log has them (no
        :class:`TaskAttempt` is built)."""
        rows: Sequence[AttemptRow] | None = self.__dict__.get("_rows")
        if rows is not None and "attempts" not in self.__dict__:
            if not rows:
                return AttemptColumns((), (), (), (), (), (), (), (), (), (), ())
            c = list(zip(*rows, strict=True))
            names = [record.job for record in self.jobs]
            users = [record.user for record in self.jobs]
            return AttemptColumns(
                [names[o] for o in c[1]],
                [users[o] for o in c[1]],
                c[2],
                c[3],
                c[4],
                c[5],
                c[0],
                c[6],
                c[7],
                c[8],
                c[9],
            )
        atts = self.attempts
        return AttemptColumns(
            [a.job for a in atts],
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
        return sum(self.attempt_columns().killed)
