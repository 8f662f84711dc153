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
Phase = Literal["map", "reduce"]


@dataclass(frozen=True, slots=True)
class TaskAttempt:
    """One run of one task on one machine, from launch to finish or kill.

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
    ``demand`` is the per-task demand vector in the cluster's resource order; ``tasks``
    counts all tasks, map and reduce."""

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
