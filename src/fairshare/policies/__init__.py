"""Online schedulers: events in, decisions out (see :mod:`fairshare.policies.protocol`).

:func:`make_policy` builds a policy of :data:`ONLINE_POLICIES` by its SPEC section 3 name
(FIFO, FAIR, DRF and DRFH, H-DRF naive and dynamic, collapsed DRF, Choosy and CMMF, TSF and
CDRF) over a cluster; a driver (the simulator, :mod:`fairshare.sim`, or the live driver,
:mod:`fairshare.backends`) feeds it the cluster's events and applies the :class:`Launch`
and :class:`Kill` decisions it returns. Every policy is a :class:`Scheduler` composed of a
:class:`Ranking` (what it equalises), a selection, and one ordered list of :class:`Filter`
objects that placement and preemption both obey (:mod:`fairshare.policies.scheduler`), with
the mechanisms of :class:`PolicyOptions` (delay scheduling, preemption, headroom,
copy-compute splitting, quotas, gangs and backfilling).

Examples
--------
>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["cpu", "mem"], [Machine("m1", np.array([9.0, 18.0]))])
>>> drf = make_policy("drf", cluster)
>>> drf.job_submitted(0.0, 0, Job("a", 0.0, "A", np.array([1.0, 4.0]), 10))
>>> drf.job_submitted(0.0, 1, Job("b", 0.0, "B", np.array([3.0, 1.0]), 10))
>>> [(d.task.job, d.machine) for d in drf.decide(0.0)]
[(0, 'm1'), (1, 'm1'), (0, 'm1'), (1, 'm1'), (0, 'm1')]
"""

from fairshare.policies.filters import Filter
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import (
    Decision,
    Kill,
    Launch,
    Policy,
    PolicyError,
    TaskRef,
)
from fairshare.policies.ranking import Ranking
from fairshare.policies.registry import ONLINE_POLICIES, make_policy
from fairshare.policies.scheduler import Scheduler

__all__ = [
    "ONLINE_POLICIES",
    "Decision",
    "Filter",
    "Kill",
    "Launch",
    "Policy",
    "PolicyError",
    "PolicyOptions",
    "Ranking",
    "Scheduler",
    "TaskRef",
    "make_policy",
]
