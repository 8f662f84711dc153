"""The online policies by their SPEC section 3 names, and the one constructor ``make_policy``.

Examples
--------
>>> from fairshare.policies import ONLINE_POLICIES
>>> list(ONLINE_POLICIES)[:4]
['fifo', 'fair', 'drf', 'hdrf']
>>> ONLINE_POLICIES["tsf"].source, ONLINE_POLICIES["tsf"].cls.__name__
('TSF section V-D', 'Tsf')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fairshare.cluster import Cluster
from fairshare.errors import UnknownPolicy
from fairshare.policies.capacity import Capacity
from fairshare.policies.choosy import Choosy, CmmfCpu, CmmfMem
from fairshare.policies.drf import CollapsedDrf, Drf, Drfh
from fairshare.policies.fair import Fair
from fairshare.policies.fifo import Fifo
from fairshare.policies.hdrf import Hdrf, NaiveHdrf
from fairshare.policies.kueue import Kueue, KueueClassical
from fairshare.policies.options import PolicyOptions
from fairshare.policies.scheduler import Scheduler
from fairshare.policies.slots import Slots
from fairshare.policies.slurm import SlurmFairTree
from fairshare.policies.tsf import Cdrf, Tsf
from fairshare.registry import PolicyInfo, by_name
from fairshare.workload.model import Queue, User


@dataclass(frozen=True)
class OnlinePolicy(PolicyInfo):
    """An online policy: its SPEC name, what it orders users by, its paper section, and its
    class.

    Parameters
    ----------
    name : str
        The SPEC section 3 name (``--policy NAME``).
    summary : str
        What the policy orders users by, on one line.
    source : str
        The paper section it implements.
    cls : type of Scheduler
        The scheduler class :func:`make_policy` builds.
    """

    cls: type[Scheduler]


ONLINE_POLICIES: dict[str, OnlinePolicy] = by_name(
    (
        OnlinePolicy("fifo", "jobs in submission order", "FAIR section 2", Fifo),
        OnlinePolicy(
            "fair",
            "slot pools with weights and minimum shares",
            "FAIR section 3, Appendix A",
            Fair,
        ),
        OnlinePolicy("drf", "weighted dominant share", "DRF sections 4.2-4.3", Drf),
        OnlinePolicy(
            "hdrf",
            "dynamic H-DRF: rescaling, ignoring blocked nodes",
            "H-DRF section 3.4, Algorithms 2-4",
            Hdrf,
        ),
        OnlinePolicy(
            "naive-hdrf", "hierarchical DRF without rescaling", "H-DRF section 3.3", NaiveHdrf
        ),
        OnlinePolicy(
            "collapsed-drf",
            "weighted DRF with flattened hierarchy weights",
            "H-DRF section 3.2",
            CollapsedDrf,
        ),
        OnlinePolicy(
            "choosy",
            "lowest share of the first resource that can use the machine",
            "Choosy section 6",
            Choosy,
        ),
        OnlinePolicy("tsf", "weighted task share", "TSF section V-D", Tsf),
        OnlinePolicy("cdrf", "task share over eligible machines", "TSF section IV-B3", Cdrf),
        OnlinePolicy("drfh", "global dominant share", "TSF section IV-B2", Drfh),
        OnlinePolicy("cmmf-cpu", "Choosy on CPU", "TSF section VI-B", CmmfCpu),
        OnlinePolicy("cmmf-mem", "Choosy on memory", "TSF section VI-B", CmmfMem),
        OnlinePolicy(
            "slots",
            "running tasks in fixed slots per machine, demands ignored (over-commits)",
            "DRF section 7, H-DRF section 5.3",
            Slots,
        ),
        OnlinePolicy(
            "capacity",
            "queue capacities, FIFO in a queue; stops when a resource is full",
            "H-DRF section 5.2",
            Capacity,
        ),
        OnlinePolicy(
            "slurm-fairtree",
            "Slurm's Fair Tree: fair-share factor from shares over decayed usage, EASY backfill",
            "Slurm fair_tree.html, fair_tree.c",
            SlurmFairTree,
        ),
        OnlinePolicy(
            "kueue",
            "Kueue: workloads admitted whole against ClusterQueue quotas, fair sharing",
            "Kueue fair sharing (pkg/scheduler)",
            Kueue,
        ),
        OnlinePolicy(
            "kueue-classical",
            "Kueue without fair sharing: classical order and preemption",
            "Kueue scheduler (pkg/scheduler)",
            KueueClassical,
        ),
    )
)
"""The online policies by SPEC name, in the order ``fairshare policies`` lists them."""


def make_policy(
    name: str,
    cluster: Cluster,
    *,
    users: Sequence[User] = (),
    queues: Sequence[Queue] = (),
    options: PolicyOptions | None = None,
) -> Scheduler:
    """A fresh online policy ``name`` over ``cluster``, ready to be driven by the protocol's
    events (:mod:`fairshare.policies.protocol`).

    Parameters
    ----------
    name : str
        A name of :data:`ONLINE_POLICIES` (``fifo``, ``fair``, ``drf``, ``hdrf``,
        ``choosy``, ``tsf``, ...).
    cluster : Cluster
        The machines at the start (``machine_added`` / ``machine_removed`` change them).
    users : sequence of User
        The configured users (weights, minimum shares, caps, queues), in scenario order:
        the order of ties. A job's user that is not listed joins with its job's weight and
        queue.
    queues : sequence of Queue
        The queue hierarchy (H-DRF section 2.1) for ``hdrf``, ``naive-hdrf`` and
        ``collapsed-drf``.
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting
        (default: none).

    Returns
    -------
    Scheduler
        The policy, with no job yet.

    Raises
    ------
    PolicyError
        ``name`` is not an online policy, or the policy cannot serve the cluster (``cmmf-mem``
        on a cluster without ``mem``).

    Examples
    --------
    DRF section 4.1's two users on <9 CPUs, 18 GB> (A's tasks <1 CPU, 4 GB>, B's <3 CPUs,
    1 GB>) under five policies: FIFO serves A's older job first, ``fair`` and ``drf``
    equalise tasks and dominant shares, ``tsf`` task shares, and ``choosy`` the CPUs held
    (A's third task and B's first tie at 3 CPUs: B, served less recently, gets the next).

    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.policies import make_policy
    >>> from fairshare.workload.model import Job
    >>> cluster = Cluster.build(["cpu", "mem"], [Machine("m1", np.array([9.0, 18.0]))])
    >>> for name in ("fifo", "fair", "drf", "tsf", "choosy"):
    ...     policy = make_policy(name, cluster)
    ...     policy.job_submitted(0.0, 0, Job("a", 0.0, "A", np.array([1.0, 4.0]), 10))
    ...     policy.job_submitted(0.0, 1, Job("b", 0.0, "B", np.array([3.0, 1.0]), 10))
    ...     launched = policy.decide(0.0)
    ...     print(name, [user.running for user in policy.users])
    fifo [4, 1]
    fair [3, 2]
    drf [3, 2]
    tsf [3, 2]
    choosy [3, 2]
    >>> make_policy("lottery", cluster)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairshare.errors.UnknownPolicy: policy: unknown online policy 'lottery'; ...
    """
    entry = ONLINE_POLICIES.get(name)
    if entry is None:
        raise UnknownPolicy(
            "policy",
            f"unknown online policy '{name}'; expected one of {', '.join(ONLINE_POLICIES)}",
        )
    return entry.cls(cluster, users=users, queues=queues, options=options)
