"""What the two YARN importers share (:mod:`fairshare.workload.imports.yarn_fair`,
:mod:`~.yarn_capacity`): resource names, the cluster a configuration is read against, the users
standing for leaf queues, the final validation.

- Resources: YARN's ``memory-mb`` is the scenario's ``mem`` (MiB) and ``vcores`` its ``cpu``;
  another resource type keeps its name without the ``yarn.io/`` prefix (``yarn.io/gpu`` is
  ``gpu``).
- The cluster: neither file lists nodes. The machines come from a scenario given with
  ``--machines FILE``; else the import makes :data:`NODE`-sized placeholder NodeManagers
  (YARN's defaults ``yarn.nodemanager.resource.memory-mb`` 8192 and ``...cpu-vcores`` 8), as
  many as the absolute amounts of the top-level queues need, with a warning to replace them.
  Percentages of the cluster are taken of that cluster.
- Users: YARN submits applications to leaf queues. Each leaf queue gets one user named after
  the queue as YARN names it (``root.a.b``), so that jobs of a history land in it; its demand is
  one default container (``yarn.scheduler.minimum-allocation-mb`` 1024 MiB, 1 vcore).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairshare.workload.errors import ScenarioError
from fairshare.workload.loader import parse_scenario, read_scenario_file
from fairshare.workload.schema import SCENARIO_FIELDS

__all__ = [
    "CONTAINER",
    "NODE",
    "YarnCluster",
    "finish",
    "resource_name",
    "yarn_cluster",
]

NODE = {"mem": 8192.0, "cpu": 8.0}
"""A placeholder NodeManager: YARN's default ``yarn.nodemanager.resource.memory-mb`` (MiB) and
``yarn.nodemanager.resource.cpu-vcores``."""

CONTAINER = {"mem": 1024.0, "cpu": 1.0}
"""A leaf queue's user's demand: YARN's default minimum allocation (1024 MiB, 1 vcore)."""


def resource_name(yarn: str) -> str:
    """The scenario's name of a YARN resource type.

    Examples
    --------
    >>> [resource_name(n) for n in ("memory-mb", "memory", "vcores", "yarn.io/gpu")]
    ['mem', 'mem', 'cpu', 'gpu']
    """
    low = yarn.strip().lower()
    if low in ("memory-mb", "memory", "mb", "mem"):
        return "mem"
    if low in ("vcores", "cpu", "vcore"):
        return "cpu"
    return low.removeprefix("yarn.io/")


@dataclass
class YarnCluster:
    """The cluster a configuration's percentages are taken of.

    Attributes
    ----------
    resources : list of str
    total : dict
        Capacity per resource.
    machines : list of dict
        The scenario's ``machines``.
    given : bool
        Whether the machines came from ``--machines`` (else they are placeholders).
    """

    resources: list[str]
    total: dict[str, float]
    machines: list[dict[str, Any]]
    given: bool


def yarn_cluster(
    machines: str | Path | None, needed: Mapping[str, float], source: str, warnings: list[str]
) -> YarnCluster:
    """The machines of the scenario file ``machines``, else placeholder NodeManagers enough
    for ``needed`` (per resource, the absolute amounts the top-level queues hold), with a
    warning.

    Parameters
    ----------
    machines : str or Path, optional
        A scenario whose ``machines`` (and ``resources``) to use.
    needed : mapping
        Per resource, the amount the cluster must hold at least.
    source : str
        The configuration, named in the warning.
    warnings : list of str
        Appended to.

    Returns
    -------
    YarnCluster

    Raises
    ------
    ScenarioError
        The machines file cannot be read or is not a valid scenario with machines.
    """
    if machines is not None:
        path = Path(machines)
        data = read_scenario_file(path)
        if not isinstance(data, Mapping) or "machines" not in data:
            raise ScenarioError(str(path), "machines", "a scenario with machines is expected here")
        kept: dict[str, Any] = {"machines": data["machines"]}
        if "resources" in data:
            kept["resources"] = data["resources"]
        cluster = parse_scenario(kept, str(path)).cluster
        total = {
            r: float(t) for r, t in zip(cluster.resources, cluster.total.tolist(), strict=True)
        }
        listed: list[dict[str, Any]] = list(kept["machines"])
        return YarnCluster(list(cluster.resources), total, listed, True)
    count = 1
    for resource, amount in needed.items():
        per_node = NODE.get(resource)
        if per_node:
            count = max(count, math.ceil(amount / per_node - 1e-9))
    capacity: dict[str, float] = dict(NODE)
    for resource, amount in needed.items():
        if resource not in capacity:
            capacity[resource] = float(max(1, math.ceil(amount / count - 1e-9)))
    total = {r: v * count for r, v in capacity.items()}
    warnings.append(
        f"warning: {source}: machines: the configuration lists no nodes: {count} placeholder "
        f"NodeManager(s) of {int(NODE['mem'])} MiB and {int(NODE['cpu'])} vcores (YARN's "
        "defaults); replace them with yours (or give --machines FILE)"
    )
    node: dict[str, Any] = {"name": "nodemanager", "capacity": capacity}
    if count > 1:
        node["count"] = count
    return YarnCluster(list(capacity), total, [node], False)


def leaf_user(yarn_name: str, path: str, cluster: YarnCluster) -> dict[str, Any]:
    """The user standing for a leaf queue: named as YARN names the queue, one default
    container of demand (of the resources the cluster has)."""
    demand = {r: v for r, v in CONTAINER.items() if cluster.total.get(r, 0.0) > 0}
    if not demand:
        first = next((r for r in cluster.resources if cluster.total.get(r, 0.0) > 0), None)
        demand = {first: 1.0} if first is not None else {}
    user: dict[str, Any] = {"name": yarn_name}
    if path:
        user["queue"] = path
    if demand:
        user["demand"] = demand
    return user


def finish(
    source: str, cluster: YarnCluster, queues: Sequence[dict[str, Any]], users: list[dict[str, Any]]
) -> dict[str, Any]:
    """The scenario, validated as every command will read it.

    Raises
    ------
    ScenarioError
        The result is not a valid scenario (a bug of the import, or a machines file that
        cannot hold the quotas).
    """
    scenario: dict[str, Any] = {"resources": list(cluster.resources)}
    scenario["machines"] = cluster.machines
    if queues:
        scenario["queues"] = list(queues)
    if users:
        scenario["users"] = users
    parse_scenario({k: v for k, v in scenario.items() if k in SCENARIO_FIELDS}, source)
    return scenario
