"""Online Task Share Fairness (TSF section V-D) and constrained CDRF (TSF section IV-B3).

A user's task share is ``sum over its jobs of tasks_j / h_j`` where ``h_j`` is how many tasks of
the job's demand the whole cluster could run, ignoring the job's constraints: ``sum_m min_r
C_mr / d_r`` (TSF V-B1, divisible, as in :mod:`fairshare.solvers.tsf`; TSF Table II's h = 75
and 100). Idle resources are offered to the user with the lowest weighted task share that can
use them, without preemption. CDRF is the same with ``h'_j`` counted only over the machines the
job may use. When machines join or leave, every ``h`` is recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.base import Scheduler
from fairshare.policies.options import PolicyOptions
from fairshare.policies.state import JobState
from fairshare.workload.model import Queue, User


@mypyc_attr(allow_interpreted_subclasses=True)
class Tsf(Scheduler):
    """Weighted TSF: key = task share / weight."""

    name = "tsf"
    constrained: ClassVar[bool] = False

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        # h per (class, demand): jobs of one group share it (class -1: unconstrained TSF).
        self._h_cache: dict[tuple[int, tuple[float, ...]], float] = {}
        super().__init__(cluster, users=users, queues=queues, options=options)

    def share_per_task(self, job: JobState) -> float:
        cache = self._h_cache
        cls = self.cluster.groups[job.group].cls if self.constrained else -1
        key = (cls, job.demand)
        h = cache.get(key)
        if h is None:
            h = cache[key] = self._tasks_alone(job, cls)
        return 1.0 / h if h > 0 else 0.0

    def _tasks_alone(self, job: JobState, cls: int) -> float:
        cs = self.cluster
        rows = [
            mi for mi in range(len(cs.names)) if cs.alive[mi] and (cls < 0 or cs.eligible(cls, mi))
        ]
        if not rows:
            return 0.0
        capacity = np.array([cs.machines[mi].capacity for mi in rows], dtype=np.float64)
        demand = np.array(job.demand, dtype=np.float64)
        used = demand > 0
        if not used.any():
            return 0.0
        per_machine = (capacity[:, used] / demand[used]).min(axis=1)
        return float(per_machine.sum())

    def on_cluster_change(self) -> None:
        self._h_cache.clear()
        self.refresh_all()


@mypyc_attr(allow_interpreted_subclasses=True)
class Cdrf(Tsf):
    """Constrained CDRF (TSF section IV-B3): h'_j over the machines the job may use."""

    name = "cdrf"
    constrained = True
