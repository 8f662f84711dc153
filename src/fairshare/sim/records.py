"""What a simulated (or live) run leaves behind: the contract between the event engine
(``fairshare.sim``, ``fairshare.backends``) and the layers that read runs (``fairshare.metrics``,
``fairshare.report``, the ``simulate`` and ``compare`` commands).

A run is recorded as plain rows, one per task attempt and one per job, so that metrics are
pure functions of the log and every output file (SPEC section 3) can be derived from it.
Times are seconds from the start of the run. Rows are in a deterministic order: task
attempts by (start, job order, phase, task, attempt), jobs in submission order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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


@dataclass(frozen=True)
class RunLog:
    """Everything a run produced. ``users`` lists the users (or pools) in scenario order, the
    order ties and outputs follow; ``events`` counts the events the engine processed."""

    policy: str
    seed: int
    cluster: Cluster
    users: tuple[str, ...]
    jobs: tuple[JobRecord, ...]
    attempts: tuple[TaskAttempt, ...]
    events: int
    wall_seconds: float
    options: dict[str, object] = field(default_factory=dict)

    @property
    def preempted_tasks(self) -> int:
        return sum(1 for a in self.attempts if a.killed)
