"""Online weighted DRF, Mesos style (DRF sections 4.2-4.3, Algorithm 1 run as resources free
up), its heterogeneous-cluster reading DRFH (TSF section IV-B2) and collapsed hierarchies
(H-DRF section 3.2).

Each task adds its dominant share ``max_r d_r / total_r`` (of the whole, pooled cluster) to its
user's share, and a machine with room goes to the user with the lowest weighted dominant share
that can use it and whose task fits there. Online, DRFH's global dominant share orders users
exactly as DRF does; the two differ offline (:mod:`fairshare.solvers`), not in who is served
next, so ``drfh`` is DRF's scheduler under its own name.
"""

from __future__ import annotations

import math

import numpy as np
from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.cluster.model import Machine
from fairshare.policies.base import Scheduler
from fairshare.policies.state import JobState, UserState
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.model import ROOT, Queue, Scenario, User


@mypyc_attr(allow_interpreted_subclasses=True)
class Drf(Scheduler):
    """Weighted DRF: key = dominant share / weight."""

    name = "drf"

    def share_per_task(self, job: JobState) -> float:
        total = self.cluster.total
        return max((d / t for d, t in zip(job.demand, total, strict=True) if t > 0), default=0.0)

    def on_cluster_change(self) -> None:
        self.refresh_all()


@mypyc_attr(allow_interpreted_subclasses=True)
class Drfh(Drf):
    """DRFH (TSF section IV-B2): the global dominant share, served with placement."""

    name = "drfh"


@mypyc_attr(allow_interpreted_subclasses=True)
class CollapsedDrf(Drf):
    """Weighted DRF with each user's weight the product of its weighted shares along its
    path in the hierarchy (H-DRF section 3.2), recomputed whenever a user appears."""

    name = "collapsed-drf"

    def on_new_user(self, user: UserState) -> None:
        self._collapsed: list[float] = _collapsed_weights(self)
        # The key divides by the collapsed weight (the base's share-ordered key, so the hot
        # paths need no call per key).
        for each, weight in zip(self.users, self._collapsed, strict=True):
            each.divisor = weight
        if len(self.users) > 1:
            self.refresh_all()

    def preemption_weight(self, user: UserState) -> float:
        return self._collapsed[user.idx]


def _collapsed_weights(scheduler: Scheduler) -> list[float]:
    """H-DRF section 3.2's flattened weights over the users seen so far."""
    queues = {q.path: q for q in scheduler.queues}
    for user in scheduler.users:
        path = user.queue
        while path != ROOT and path not in queues:
            queues[path] = Queue(path)
            path = path.rpartition("/")[0]
    ordered = sorted(queues.values(), key=lambda q: (q.path.count("/"), q.path))
    resources = scheduler.cluster.resources
    cluster = Cluster.build(resources, [Machine("m", np.ones(len(resources)))])
    users = tuple(
        User(name=u.name, demand=np.ones(len(resources)), weight=u.weight, queue=u.queue)
        for u in scheduler.users
    )
    tree = build_hierarchy(Scenario("", cluster, tuple(ordered), users))
    weights = [float(w) for w in tree.collapsed_weights()]
    return [w if w > 0 and math.isfinite(w) else 1.0 for w in weights]
