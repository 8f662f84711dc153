"""Choosy, the online CMMF scheduler (Choosy section 6), and CMMF on one resource of a
multi-resource cluster (TSF section VI-B's "CPU" and "Mem" policies).

"Whenever a resource frees up, assign it to the user with the lowest current allocation whose
constraints the resource satisfies." A user's allocation is the amount of one resource its
running tasks hold (machines, when every machine has one slot and every task takes one), as in
the exact :func:`fairshare.solvers.constrained.solve_cmmf`; weighted CMMF divides it by the
weight. ``choosy`` measures the cluster's first resource; ``cmmf-cpu`` and ``cmmf-mem`` the
resources named ``cpu`` and ``mem``.

Examples
--------
Choosy Figure 3: u1 may use m-0 to m-2, u2 m-2 to m-9 (one slot each). u2 arrives first and
takes m-2; as soon as m-2 frees, Choosy gives it to u1 (the lower allocation), reaching the
CMMF allocation: u1 on three machines, u2 on seven.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["slots"], [Machine(f"m-{i}", np.array([1.0])) for i in range(10)])
>>> u1 = frozenset({"m-0", "m-1", "m-2"})
>>> u2 = frozenset(f"m-{i}" for i in range(2, 10))
>>> choosy = make_policy("choosy", cluster)
>>> choosy.job_submitted(0.0, 0, Job("j2", 0.0, "u2", np.array([1.0]), 20, machines=u2))
>>> first = choosy.decide(0.0)
>>> len(first)
8
>>> choosy.job_submitted(1.0, 1, Job("j1", 1.0, "u1", np.array([1.0]), 20, machines=u1))
>>> sorted(d.machine for d in choosy.decide(1.0))
['m-0', 'm-1']
>>> on_m2 = next(d.task for d in first if d.machine == "m-2")
>>> [(d.task.job, d.machine) for d in choosy.finish_and_decide(2.0, on_m2)]
[(1, 'm-2')]
>>> {u.name: u.running for u in choosy.users}
{'u2': 7, 'u1': 3}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.base import Scheduler
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import PolicyError
from fairshare.policies.records import JobState
from fairshare.workload.model import Queue, User


@mypyc_attr(allow_interpreted_subclasses=True)
class Choosy(Scheduler):
    """Key = amount of the measured resource held / (its cluster total x weight).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (weights, caps, constraints), in scenario order (the order of ties).
    queues : sequence of Queue
        The queue hierarchy (unused).
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting.

    Attributes
    ----------
    resource : str or None
        The measured resource's name; None: the cluster's first.

    Raises
    ------
    PolicyError
        The cluster lacks the measured resource.
    """

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
                "policy",
                f"{self.name} shares the resource '{self.resource}', which the cluster lacks "
                f"(resources: {', '.join(cluster.resources)})",
            )
        super().__init__(cluster, users=users, queues=queues, options=options)

    def share_per_task(self, job: JobState) -> float:
        """A task's amount of the measured resource over the cluster's total of it.

        Parameters
        ----------
        job : JobState
            The job part.

        Returns
        -------
        float
        """
        total = self.cluster.total[self._r]
        return job.demand[self._r] / total if total > 0 else 0.0

    def on_cluster_change(self) -> None:
        """The total moved: every share is recomputed."""
        self.refresh_all()


@mypyc_attr(allow_interpreted_subclasses=True)
class CmmfCpu(Choosy):
    """CMMF on the resource ``cpu`` (TSF section VI-B's "CPU" policy); constructed as
    :class:`Choosy`."""

    name = "cmmf-cpu"
    resource = "cpu"


@mypyc_attr(allow_interpreted_subclasses=True)
class CmmfMem(Choosy):
    """CMMF on the resource ``mem`` (TSF section VI-B's "Mem" policy); constructed as
    :class:`Choosy`."""

    name = "cmmf-mem"
    resource = "mem"
