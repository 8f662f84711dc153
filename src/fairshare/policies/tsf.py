"""Online Task Share Fairness (TSF section V-D) and constrained CDRF (TSF section IV-B3).

A user's task share is ``sum over its jobs of tasks_j / h_j`` where ``h_j`` is how many tasks of
the job's demand the whole cluster could run, ignoring the job's constraints: ``sum_m min_r
C_mr / d_r`` (TSF V-B1, divisible, as in :mod:`fairshare.solvers.tsf`; TSF Table II's h = 75
and 100). Idle resources are offered to the user with the lowest weighted task share that can
use them, without preemption. CDRF is the same with ``h'_j`` counted only over the machines the
job may use. When machines join or leave, every ``h`` is recomputed.

Examples
--------
TSF Table II on one node of each kind: n1 has <1 CPU, 1 GB>, n2 <2 CPUs, 1 GB>. Job 1's tasks
<1 CPU, 0.5 GB> may run anywhere (h = 1 + 2 = 3); job 2's <0.5 CPU, 0.5 GB> only on n1 (h =
2 + 2 = 4). Job 1 first takes both nodes; when its task on n1 finishes, job 2 (task share
0) gets n1: task shares 2/3 and 2/4, as the paper's 50/75 and 50/100.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job
>>> nodes = [Machine("n1", np.array([1.0, 1.0])), Machine("n2", np.array([2.0, 1.0]))]
>>> tsf = make_policy("tsf", Cluster.build(["cpu", "mem"], nodes))
>>> tsf.job_submitted(0.0, 0, Job("job1", 0.0, "job1", np.array([1.0, 0.5]), 10))
>>> first = tsf.decide(0.0)
>>> [d.machine for d in first]
['n1', 'n2', 'n2']
>>> job2 = Job("job2", 10.0, "job2", np.array([0.5, 0.5]), 10, machines=frozenset({"n1"}))
>>> tsf.job_submitted(10.0, 1, job2)
>>> tsf.decide(10.0)
[]
>>> on_n1 = next(d.task for d in first if d.machine == "n1")
>>> [(d.task.job, d.machine) for d in tsf.finish_and_decide(20.0, on_n1)]
[(1, 'n1'), (1, 'n1')]
>>> [round(user.share, 4) for user in tsf.users]
[0.6667, 0.5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.options import PolicyOptions
from fairshare.policies.ranking import Ranking
from fairshare.policies.records import JobState
from fairshare.policies.scheduler import Scheduler
from fairshare.workload.model import Queue, User


@mypyc_attr(allow_interpreted_subclasses=True)
class TsfRanking(Ranking):
    """Weighted TSF's order: key = task share / weight (see the module).

    Parameters
    ----------
    constrained : bool
        Whether ``h`` counts only the machines the job may use (CDRF).
    """

    def __init__(self, constrained: bool) -> None:
        super().__init__()
        self.constrained = constrained
        self.cluster_dependent = True
        # h per (class, demand): jobs of one group share it (class -1: unconstrained TSF).
        self._h_cache: dict[tuple[int, tuple[float, ...]], float] = {}

    def share_per_task(self, job: JobState) -> float:
        """``1 / h``: a task's part of the tasks the job could run alone on the cluster
        (TSF section V-B1), 0 when it could run none.

        Parameters
        ----------
        job : JobState
            The job part.

        Returns
        -------
        float
        """
        cache = self._h_cache
        cls = self.ledger.cluster.groups[job.group].cls if self.constrained else -1
        key = (cls, job.demand)
        h = cache.get(key)
        if h is None:
            h = cache[key] = self._tasks_alone(job, cls)
        return 1.0 / h if h > 0 else 0.0

    def _tasks_alone(self, job: JobState, cls: int) -> float:
        """``h``: the divisible tasks of ``job``'s demand the alive machines (of class
        ``cls``; -1: all) could run, as the solver counts them."""
        cs = self.ledger.cluster
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
        """Machines joined or left: every ``h`` is dropped (the ledger then recomputes every
        share)."""
        self._h_cache.clear()


@mypyc_attr(allow_interpreted_subclasses=True)
class Tsf(Scheduler):
    """Weighted TSF (:class:`TsfRanking`, unconstrained ``h``).

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
    constrained : bool
        Whether ``h`` counts only the machines the job may use (CDRF).
    """

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
        super().__init__(
            cluster,
            users=users,
            queues=queues,
            options=options,
            ranking=TsfRanking(self.constrained),
        )


@mypyc_attr(allow_interpreted_subclasses=True)
class Cdrf(Tsf):
    """Constrained CDRF (TSF section IV-B3): h'_j over the machines the job may use;
    constructed as :class:`Tsf`."""

    name = "cdrf"
    constrained = True
