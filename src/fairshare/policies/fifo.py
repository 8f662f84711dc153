"""FIFO: jobs in submission order, each taking every machine it can use (FAIR section 2's
Hadoop default, the baseline of FAIR section 6 and TSF section VI-B).

Examples
--------
DRF section 4.1's two users on <9 CPUs, 18 GB>: FIFO gives the first job every task that fits
(four of <1 CPU, 4 GB>), the second only what is left (one of <3 CPUs, 1 GB>).

>>> import numpy as np
>>> from collections import Counter
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["cpu", "mem"], [Machine("m1", np.array([9.0, 18.0]))])
>>> fifo = make_policy("fifo", cluster)
>>> fifo.job_submitted(0.0, 0, Job("a", 0.0, "A", np.array([1.0, 4.0]), 10))
>>> fifo.job_submitted(0.0, 1, Job("b", 0.0, "B", np.array([3.0, 1.0]), 10))
>>> sorted(Counter(d.task.job for d in fifo.decide(0.0)).items())
[(0, 4), (1, 1)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.options import PolicyOptions
from fairshare.policies.ranking import Ranking
from fairshare.policies.records import JobState, UserState
from fairshare.policies.scheduler import Scheduler
from fairshare.policies.shares import priority_shares
from fairshare.workload.model import Queue, User

ROUND_STEP = 2.0**-24
"""The weight of a job's place in its instant within its round's key: below 1 for bursts of
up to 2**24 jobs, and resolvable beside ids up to about 2**28."""


@mypyc_attr(allow_interpreted_subclasses=True)
class FifoRanking(Ranking):
    """The key of a user in a group is the arrival key of its oldest job there, so the oldest
    job that can use a machine gets it; a younger job only fills what the older ones cannot
    use.

    Jobs submitted at different times go in submission order. Jobs submitted at one instant
    have no order of arrival between users: each user's k-th job of the instant goes in
    round k, and a round in the order given, so one tenant's burst does not run before
    another's first job (the fair tie rule's FIFO form), while a batch of jobs of different
    users runs in the order given (FAIR section 5.3's batch, where FIFO beats fair sharing).
    """

    def __init__(self) -> None:
        super().__init__()
        self.by_share = False
        # Arrival keys by job id (pruned as jobs end); the instant being submitted, the id
        # of its first job, and each user's jobs in it so far.
        self.keys: dict[int, float] = {}
        self.instant = -math.inf
        self.first = 0
        self.rounds: dict[int, int] = {}

    def on_submit(self, job: JobState) -> None:
        """Give the job its arrival key: ``first + round + (id - first) * 2**-24``, where
        ``first`` is the id of the instant's first job (ids follow submission), so keys of an
        instant stay below the next instant's and order its jobs by round, then id.

        Parameters
        ----------
        job : JobState
            The job's map side.
        """
        submit = job.job.submit
        if submit != self.instant:
            self.instant = submit
            self.first = job.id
            self.rounds.clear()
        burst = self.rounds.get(job.user, 0)
        self.rounds[job.user] = burst + 1
        keys = self.keys
        jobs = self.ledger.jobs
        if len(keys) > 2 * len(jobs) + 1024:
            self.keys = keys = {i: k for i, k in keys.items() if i in jobs}
        keys[job.id] = self.first + burst + (job.id - self.first) * ROUND_STEP

    def user_rank(self, user: UserState, group: int) -> float:
        """The arrival key of the user's oldest job with pending work in ``group``.

        Parameters
        ----------
        user : UserState
            The user.
        group : int
            A group it has pending work in.

        Returns
        -------
        float
        """
        job = self.ledger.head_job(user, group)
        key = self.keys.get(job.id)
        return float(job.id) if key is None else key

    def gang_rank(self, job: JobState) -> tuple[float, float, int, int, float, int]:
        """Waiting gangs in submission order, as FIFO serves jobs (under EASY backfilling
        the head gang then stays the head until it starts).

        Parameters
        ----------
        job : JobState
            A waiting gang's map side.

        Returns
        -------
        tuple of (float, float, int, int, float, int)
        """
        return (float(job.id), 0.0, 0, 0, float(job.id), job.id)

    def preemption_shares(self, demands: Sequence[float], capacity: float) -> list[float]:
        """FIFO owes no fair share, only priority: a user's share is what FIFO would give it
        from scratch, users served in the order of their oldest unfinished job (so preemption
        under FIFO lets an older job take back room from younger ones, never the reverse).

        Parameters
        ----------
        demands : sequence of float
            Per user, the share it holds plus that of its pending tasks (up to its cap).
        capacity : float
            The share all users hold now.

        Returns
        -------
        list of float
            Per user, its share by :func:`~fairshare.policies.shares.priority_shares`.
        """
        ledger = self.ledger
        oldest: dict[int, int] = {}
        for job in ledger.jobs.values():
            if job.pending > 0 or job.running > 0:
                first = oldest.get(job.user)
                if first is None or job.id < first:
                    oldest[job.user] = job.id
        count = len(ledger.jobs)
        order = sorted(range(len(ledger.users)), key=lambda i: (oldest.get(i, count), i))
        return priority_shares(demands, order, capacity)


@mypyc_attr(allow_interpreted_subclasses=True)
class Fifo(Scheduler):
    """FIFO (:class:`FifoRanking`).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (their weights and minimum shares play no part), in
        scenario order (the order of ties).
    queues : sequence of Queue
        The queue hierarchy (unused).
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting.
    """

    name = "fifo"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        super().__init__(
            cluster, users=users, queues=queues, options=options, ranking=FifoRanking()
        )
