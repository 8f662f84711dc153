"""The online policies by their SPEC section 3 names, and the one constructor ``make_policy``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fairshare.cluster import Cluster
from fairshare.policies.base import Scheduler
from fairshare.policies.choosy import Choosy, CmmfCpu, CmmfMem
from fairshare.policies.drf import CollapsedDrf, Drf, Drfh
from fairshare.policies.fair import Fair
from fairshare.policies.fifo import Fifo
from fairshare.policies.hdrf import Hdrf, NaiveHdrf
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import PolicyError
from fairshare.policies.tsf import Cdrf, Tsf
from fairshare.registry import PolicyInfo, by_name
from fairshare.workload.model import Queue, User


@dataclass(frozen=True)
class OnlinePolicy(PolicyInfo):
    """An online policy: its SPEC name, what it orders users by, its paper section, and its
    class."""

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
    )
)


def make_policy(
    name: str,
    cluster: Cluster,
    *,
    users: Sequence[User] = (),
    queues: Sequence[Queue] = (),
    options: PolicyOptions | None = None,
) -> Scheduler:
    """A fresh online policy ``name`` over ``cluster``; ``PolicyError`` for an unknown name."""
    entry = ONLINE_POLICIES.get(name)
    if entry is None:
        raise PolicyError(
            "--policy",
            f"unknown online policy '{name}'; expected one of {', '.join(ONLINE_POLICIES)}",
        )
    return entry.cls(cluster, users=users, queues=queues, options=options)
