"""Online weighted DRF, Mesos style (DRF sections 4.2-4.3, Algorithm 1 run as resources free
up), its heterogeneous-cluster reading DRFH (TSF section IV-B2) and collapsed hierarchies
(H-DRF section 3.2).

Each task adds its dominant share ``max_r d_r / total_r`` (of the whole, pooled cluster) to its
user's share, and a machine with room goes to the user with the lowest weighted dominant share
that can use it and whose task fits there. Online, DRFH's global dominant share orders users
exactly as DRF does; the two differ offline (:mod:`fairshare.solvers`), not in who is served
next, so ``drfh`` is DRF's scheduler under its own name.

Examples
--------
DRF section 4.1: A's tasks need <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>, on <9 CPUs, 18 GB>. DRF
gives A three tasks and B two (dominant shares 2/3 each).

>>> import numpy as np
>>> from collections import Counter
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["cpu", "mem"], [Machine("m1", np.array([9.0, 18.0]))])
>>> drf = make_policy("drf", cluster)
>>> drf.job_submitted(0.0, 0, Job("a", 0.0, "A", np.array([1.0, 4.0]), 10))
>>> drf.job_submitted(0.0, 1, Job("b", 0.0, "B", np.array([3.0, 1.0]), 10))
>>> sorted(Counter(d.task.job for d in drf.decide(0.0)).items())
[(0, 3), (1, 2)]
>>> [round(user.share, 4) for user in drf.users]
[0.6667, 0.6667]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.cluster.model import Machine
from fairshare.policies.options import PolicyOptions
from fairshare.policies.ranking import Ranking
from fairshare.policies.records import JobState, UserState
from fairshare.policies.scheduler import Scheduler
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.model import ROOT, Queue, Scenario, User


def dominant_share(demand: Sequence[float], total: Sequence[float]) -> float:
    """A task's dominant share of the pooled cluster, ``max_r d_r / total_r`` (DRF section
    4; resources the cluster lacks count 0).

    Parameters
    ----------
    demand : sequence of float
        The task's demand.
    total : sequence of float
        The cluster's totals.

    Returns
    -------
    float

    Examples
    --------
    >>> dominant_share((1.0, 4.0), (9.0, 18.0))
    0.2222222222222222
    """
    if len(demand) != len(total):
        raise ValueError(f"a demand of {len(demand)} resources on a cluster of {len(total)}")
    # A loop, not max() over a generator with a default (a generator object, a zip and a
    # keyword call per job submitted, a fiftieth of an hour of alibaba-2018): the first
    # largest ratio, as max() returns it.
    best = 0.0
    seen = False
    for r in range(len(demand)):
        t = total[r]
        if t > 0:
            ratio = demand[r] / t
            if not seen or ratio > best:
                best = ratio
                seen = True
    return best


@mypyc_attr(allow_interpreted_subclasses=True)
class DrfRanking(Ranking):
    """Weighted DRF's order: a task adds its dominant share of the pooled cluster to its
    user's share, users go by share over weight; every share moves with the totals."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster_dependent = True

    def share_per_task(self, job: JobState) -> float:
        """A task's dominant share of the pooled cluster, ``max_r d_r / total_r``.

        Parameters
        ----------
        job : JobState
            The job part.

        Returns
        -------
        float
        """
        return dominant_share(job.demand, self.ledger.cluster.total)


@mypyc_attr(allow_interpreted_subclasses=True)
class CollapsedRanking(DrfRanking):
    """DRF with each user's weight the product of its weighted shares along its path in the
    hierarchy (H-DRF section 3.2), recomputed whenever a user appears."""

    def __init__(self) -> None:
        super().__init__()
        self.collapsed: list[float] = []

    def on_new_user(self, user: UserState) -> bool:
        """Every user's flattened weight is recomputed with the new user's path.

        Parameters
        ----------
        user : UserState
            The new user.

        Returns
        -------
        bool
            True: every divisor changed.
        """
        ledger = self.ledger
        self.collapsed = _collapsed_weights(ledger.queues, ledger.users, ledger.cluster.resources)
        return True

    def divisor(self, user: UserState) -> float:
        """The user's flattened weight: the base rank divides by it (so the hot paths need
        no call per rank).

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
        """
        return self.collapsed[user.idx]

    def preemption_weight(self, user: UserState) -> float:
        """The user's flattened weight, by which it is also placed.

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
        """
        return self.collapsed[user.idx]


@mypyc_attr(allow_interpreted_subclasses=True)
class Drf(Scheduler):
    """Weighted DRF: key = dominant share / weight.

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (weights, caps), in scenario order (the order of ties).
    queues : sequence of Queue
        The queue hierarchy (unused).
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting.
    """

    name = "drf"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        super().__init__(cluster, users=users, queues=queues, options=options, ranking=DrfRanking())


@mypyc_attr(allow_interpreted_subclasses=True)
class Drfh(Drf):
    """DRFH (TSF section IV-B2): the global dominant share, served with placement.

    Online it orders users as :class:`Drf` does (see the module); constructed the same way.
    """

    name = "drfh"


@mypyc_attr(allow_interpreted_subclasses=True)
class CollapsedDrf(Scheduler):
    """Weighted DRF with each user's weight the product of its weighted shares along its
    path in the hierarchy (H-DRF section 3.2), recomputed whenever a user appears.

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (weights and queues), in scenario order (the order of ties).
    queues : sequence of Queue
        The queue hierarchy whose weights are flattened (a path a user names but the
        hierarchy lacks is a queue of weight 1).
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting.

    Examples
    --------
    H-DRF Figure 4a: queues n1 and n2; n1,1 alone under n1 and n2,1 beside n2,2 under n2
    have flattened weights 1/2, 1/4 and 1/4, so n1,1 gets about twice n2,1's CPUs (7 and 3
    whole tasks of 10).

    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.policies import make_policy
    >>> from fairshare.workload.model import Job, Queue
    >>> cluster = Cluster.build(["cpu", "gpu"], [Machine("m", np.array([10.0, 10.0]))])
    >>> policy = make_policy("collapsed-drf", cluster, queues=[Queue("n1"), Queue("n2")])
    >>> for job_id, (leaf, demand) in enumerate(
    ...     [("n1,1", [1.0, 0.0]), ("n2,1", [1.0, 0.0]), ("n2,2", [0.0, 1.0])]
    ... ):
    ...     job = Job(leaf, 0.0, leaf, np.array(demand), 100, queue=leaf[:2])
    ...     policy.job_submitted(0.0, job_id, job)
    >>> launched = policy.decide(0.0)
    >>> {u.name: u.running for u in policy.users}
    {'n1,1': 7, 'n2,1': 3, 'n2,2': 10}
    """

    name = "collapsed-drf"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        super().__init__(
            cluster, users=users, queues=queues, options=options, ranking=CollapsedRanking()
        )


def _collapsed_weights(
    queues: Sequence[Queue], users: Sequence[UserState], resources: Sequence[str]
) -> list[float]:
    """H-DRF section 3.2's flattened weights over the users seen so far."""
    tree_queues = {q.path: q for q in queues}
    for user in users:
        path = user.queue
        while path != ROOT and path not in tree_queues:
            tree_queues[path] = Queue(path)
            path = path.rpartition("/")[0]
    ordered = sorted(tree_queues.values(), key=lambda q: (q.path.count("/"), q.path))
    cluster = Cluster.build(resources, [Machine("m", np.ones(len(resources)))])
    leaves = tuple(
        User(name=u.name, demand=np.ones(len(resources)), weight=u.weight, queue=u.queue)
        for u in users
    )
    tree = build_hierarchy(Scenario("", cluster, tuple(ordered), leaves))
    weights = [float(w) for w in tree.collapsed_weights()]
    return [w if w > 0 and math.isfinite(w) else 1.0 for w in weights]
