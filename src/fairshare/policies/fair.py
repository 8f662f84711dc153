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
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.base import Scheduler
from fairshare.policies.options import PolicyOptions
from fairshare.policies.state import JobState, UserState
from fairshare.workload.model import Queue, User

_NEEDY = -2.0
"""Added to a needy pool's ratio (in [0, 1)) so that every needy pool sorts first."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Fair(Scheduler):
    """FAIR: key = needy ratio - 2, else running tasks / weight."""

    name = "fair"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        super().__init__(cluster, users=users, queues=queues, options=options)
        self.reorder_jobs = self.options.pool_order == "fair"

    def user_rank(self, user: UserState, group: int) -> float:
        demand = user.running + user.pending
        if user.running < min(user.min_share, demand):
            return _NEEDY + user.running / user.min_share
        return user.running / user.weight

    def preemption_min_share(self, user: UserState) -> float:
        """FAIR places by minimum shares (in slots), so preemption restores them after Tmin."""
        return user.min_share

    def job_rank(self, job: JobState) -> float:
        if self.options.pool_order == "fair":
            return job.running / job.job.weight
        return float(job.id)
