"""Choosy, the online CMMF scheduler (Choosy section 6), and CMMF on one resource of a
multi-resource cluster (TSF section VI-B's "CPU" and "Mem" policies).

"Whenever a resource frees up, assign it to the user with the lowest current allocation whose
constraints the resource satisfies." A user's allocation is the amount of one resource its
running tasks hold (machines, when every machine has one slot and every task takes one), as in
the exact :func:`fairshare.solvers.constrained.solve_cmmf`; weighted CMMF divides it by the
weight. ``choosy`` measures the cluster's first resource; ``cmmf-cpu`` and ``cmmf-mem`` the
resources named ``cpu`` and ``mem``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.base import Scheduler
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import PolicyError
from fairshare.policies.state import JobState
from fairshare.workload.model import Queue, User


@mypyc_attr(allow_interpreted_subclasses=True)
class Choosy(Scheduler):
    """Key = amount of the measured resource held / (its cluster total x weight)."""

    name: ClassVar[str] = "choosy"
    resource: ClassVar[str | None] = None

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        if self.resource is None:
            self._r = 0
        elif self.resource in cluster.resources:
            self._r = cluster.resources.index(self.resource)
        else:
            raise PolicyError(
                "--policy",
                f"{self.name} shares the resource '{self.resource}', which the cluster lacks "
                f"(resources: {', '.join(cluster.resources)})",
            )
        super().__init__(cluster, users=users, queues=queues, options=options)

    def share_per_task(self, job: JobState) -> float:
        total = self.cluster.total[self._r]
        return job.demand[self._r] / total if total > 0 else 0.0

    def on_cluster_change(self) -> None:
        self.refresh_all()


@mypyc_attr(allow_interpreted_subclasses=True)
class CmmfCpu(Choosy):
    name = "cmmf-cpu"
    resource = "cpu"


@mypyc_attr(allow_interpreted_subclasses=True)
class CmmfMem(Choosy):
    name = "cmmf-mem"
    resource = "mem"
