"""The FAIR slot scheduler (FAIR sections 3 and 3.1, Appendix A): pools with weights and
minimum shares, fair or FIFO order of jobs inside a pool.

A pool is a SPEC ``user`` (a job's ``user``; a job without one is its own pool), with the weight
and ``min_share`` (in tasks) the scenario gives it. When a slot frees, FAIR sorts pools "by
distance below min and fair share" (Algorithm 1's ordering, Hadoop's comparator): a pool
running fewer than ``min(min_share, demand)`` tasks is *needy* and goes before every pool that
is not, needy pools by ``running / min_share``, the others by ``running / weight``. Following
that order as slots free up converges to Appendix A's allocation. Inside a pool the next job is
the one with the fewest running tasks per weight (``pool_order="fair"``, FAIR's default) or the
oldest (``"fifo"``). Ties: scenario order of pools, then submission order.

Examples
--------
Six slots, three pools with work for more: pool A, with a minimum share of 4, is needy and
served first up to it; B and C then share the rest.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job, User
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([6.0]))])
>>> pools = [User("A", np.array([1.0]), min_share=4), User("B", np.array([1.0])),
...          User("C", np.array([1.0]))]
>>> fair = make_policy("fair", cluster, users=pools)
>>> for job_id, pool in enumerate("BCA"):
...     fair.job_submitted(0.0, job_id, Job(pool.lower(), 0.0, pool, np.array([1.0]), 10))
>>> launched = fair.decide(0.0)
>>> {u.name: u.running for u in fair.users}
{'A': 4, 'B': 1, 'C': 1}
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.options import PolicyOptions
from fairshare.policies.ranking import Ranking
from fairshare.policies.records import JobState, UserState
from fairshare.policies.scheduler import Scheduler
from fairshare.workload.model import Queue, User

_NEEDY = -2.0
"""Added to a needy pool's ratio (in [0, 1)) so that every needy pool sorts first."""


@mypyc_attr(allow_interpreted_subclasses=True)
class FairRanking(Ranking):
    """FAIR's order: key = needy ratio - 2, else running tasks / weight; inside a pool, fair
    or FIFO order of jobs.

    Parameters
    ----------
    pool_order : {"fair", "fifo"}
        The order of jobs inside a pool.
    """

    def __init__(self, pool_order: str) -> None:
        super().__init__()
        self.by_share = False
        self.fair_order = pool_order == "fair"
        self.reorder_jobs = self.fair_order

    def user_rank(self, user: UserState, group: int) -> float:
        """A needy pool's ``running / min_share - 2`` (below every other), else ``running /
        weight``.

        Parameters
        ----------
        user : UserState
            The pool.
        group : int
            The group its next task comes from (unused: slots are one resource).

        Returns
        -------
        float
        """
        demand = user.running + user.pending
        if user.running < min(user.min_share, demand):
            return _NEEDY + user.running / user.min_share
        if self.ledger.usage is None:
            return user.running / user.weight
        # Usage over time: slots held plus the decayed mean of slots held (a minimum share
        # is a guarantee of the present, so a needy pool is first whatever its past).
        return self.standing(user) / user.weight

    def preemption_min_share(self, user: UserState) -> float:
        """FAIR places by minimum shares (in slots), so preemption restores them after Tmin.

        Parameters
        ----------
        user : UserState
            The pool.

        Returns
        -------
        float
            Its ``min_share``.
        """
        return user.min_share

    def job_rank(self, job: JobState) -> float:
        """``pool_order="fair"``: the job's running tasks over its weight; ``"fifo"``: its
        submission order.

        Parameters
        ----------
        job : JobState
            The job part.

        Returns
        -------
        float
        """
        if self.fair_order:
            return job.running / job.job.weight
        return float(job.id)


@mypyc_attr(allow_interpreted_subclasses=True)
class Fair(Scheduler):
    """FAIR (:class:`FairRanking`).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (pools): weights and minimum shares (``min_share``, in
        slots), in scenario order (the order of ties).
    queues : sequence of Queue
        The queue hierarchy (unused).
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting.
        ``pool_order`` orders the jobs inside a pool.
    """

    name = "fair"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        pool_order = options.pool_order if options is not None else "fair"
        super().__init__(
            cluster, users=users, queues=queues, options=options, ranking=FairRanking(pool_order)
        )
