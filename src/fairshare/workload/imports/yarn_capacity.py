"""``fairshare import yarn-capacity``: Hadoop's Capacity Scheduler configuration
(``capacity-scheduler.xml``, Hadoop's ``<configuration><property><name>/<value>`` format) as a
scenario (SPEC section 8.1), for the online policy ``capacity``
(:mod:`fairshare.policies.capacity`), after Hadoop's ``CapacityScheduler.md`` ("Setting up
queues", "Queue Properties").

The mapping:

- ``yarn.scheduler.capacity.<queue-path>.queues`` (comma-separated children) builds the tree
  from ``root``; ``root.a.b`` is the queue path ``a/b``. A child listed twice, a name with
  ``/``, or a missing ``root.queues`` is an error.
- ``.capacity``: a percentage of the parent (``12.5``), a weight (``2.0w``: the parent's
  capacity split in proportion to the siblings' weights) or absolute resources
  (``[memory=10240,vcores=12]``). Children of one parent use one mode (an error otherwise),
  and percentages of siblings add up to 100 (YARN refuses the configuration otherwise: an
  error naming the parent; not checked when ``legacy-queue-mode.enabled`` is false). The
  queue's ``weight`` is its percentage (or weight; for absolute resources its dominant
  percentage of its parent), which the ``capacity`` policy divides among siblings, and its
  ``quota`` the absolute capacity: the cluster's resources times the fractions down the path.
  A queue without ``capacity`` has 0 % (weight :data:`~fairshare.workload.model.MIN_WEIGHT`).
- ``.maximum-capacity`` (a percentage of the parent's maximum, ``-1`` = 100, or absolute
  resources) is the queue's cap: ``borrowing_limit`` = absolute maximum - quota. A maximum
  below the capacity is an error, as in YARN.
- Not modelled, one warning each: ``user-limit-factor`` and ``minimum-user-limit-percent``
  (per-user limits: the one user of a leaf stands for all its users), ``state`` STOPPED,
  ``ordering-policy`` other than ``fifo``, ``maximum-applications``,
  ``maximum-am-resource-percent``, ACLs, node labels, priorities, the preemption settings
  (``disable_preemption``, ``yarn.resourcemanager.monitor.capacity.preemption.*``: simulate
  with ``--preemption``), ``resource-calculator`` (the policy compares dominant shares),
  every other property.
- Users: one per leaf queue, named ``root.a.b``
  (:mod:`~fairshare.workload.imports.yarn_common`).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> def prop(name, value):
...     return f"<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>"
>>> xml = "<configuration>" + prop("root.queues", "a,b") + prop("root.a.capacity", "60") + (
...     prop("root.b.capacity", "40") + prop("root.b.maximum-capacity", "50")) + "</configuration>"
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp, "capacity-scheduler.xml")
...     _ = path.write_text(xml)
...     done = import_yarn_capacity(path)
>>> done.scenario["queues"][1]
{'path': 'b', 'weight': 40.0, 'quota': {'mem': 3276.8, 'cpu': 3.2}, 'borrowing_limit': {'mem': 819.2, 'cpu': 0.8}}
"""  # noqa: E501 (a doctest's output is one line)

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairshare.workload.errors import ScenarioError
from fairshare.workload.imports import ImportResult
from fairshare.workload.imports.xml_reading import read_xml, text_of
from fairshare.workload.imports.yarn_common import (
    YarnCluster,
    finish,
    leaf_user,
    resource_name,
    yarn_cluster,
)
from fairshare.workload.model import MAX_AMOUNT, MIN_WEIGHT

__all__ = ["PREFIX", "import_yarn_capacity"]

PREFIX = "yarn.scheduler.capacity."
"""The prefix of the Capacity Scheduler's properties."""

_PRECISION = 0.05
"""How far (in percent) sibling percentages may add up from 100: YARN's ``PRECISION`` 0.0005
of a fraction."""

_QUEUE_NOT_MODELLED = {
    "user-limit-factor": "per-user limits: the leaf's one user stands for all its users",
    "minimum-user-limit-percent": "per-user limits: the leaf's one user stands for all its users",
    "maximum-applications": "applications are not limited",
    "maximum-am-resource-percent": "application masters are not modelled",
    "acl_submit_applications": "ACLs are not modelled",
    "acl_administer_queue": "ACLs are not modelled",
    "disable_preemption": "preemption is the simulator's --preemption option, for every queue",
    "intra-queue-preemption.disable_preemption": "intra-queue preemption is not modelled",
    "priority": "queue priorities are not modelled (siblings are ordered by their share)",
    "maximum-allocation-mb": "containers are the jobs' tasks, not limited per queue",
    "maximum-allocation-vcores": "containers are the jobs' tasks, not limited per queue",
    "default-application-priority": "application priorities are the jobs' priority",
    "default-application-lifetime": "application lifetimes are not modelled",
    "maximum-application-lifetime": "application lifetimes are not modelled",
}
_GLOBAL_NOT_MODELLED = {
    "maximum-applications": "applications are not limited",
    "maximum-am-resource-percent": "application masters are not modelled",
    "user-limit-factor": "per-user limits: the leaf's one user stands for all its users",
    "minimum-user-limit-percent": "per-user limits: the leaf's one user stands for all its users",
    "node-locality-delay": "delay scheduling is the simulator's --delay-scheduling option",
    "rack-locality-additional-delay": "delay scheduling is the simulator's --delay-scheduling "
    "option",
    "queue-mappings": "placement rules are not modelled: a job names its user (a leaf queue)",
    "queue-mappings-override.enable": "placement rules are not modelled",
}


@dataclass
class _Queue:
    yarn: str
    path: str
    props: dict[str, str] = field(default_factory=dict)
    children: list[_Queue] = field(default_factory=list)


@dataclass
class _Capacity:
    """A parsed ``capacity`` or ``maximum-capacity``: one of percent, weight, absolute."""

    percent: float | None = None
    weight: float | None = None
    absolute: dict[str, float] | None = None

    @property
    def mode(self) -> str:
        if self.weight is not None:
            return "weight"
        return "absolute" if self.absolute is not None else "percent"


def _properties(path: str | Path, source: str, warnings: list[str]) -> dict[str, str]:
    """The name -> value of every ``<property>``; a name set twice keeps the last, as Hadoop's
    Configuration does, with a warning."""
    root = read_xml(path)
    if root.tag != "configuration":
        raise ScenarioError(
            source, root.tag, "a Hadoop configuration's top element must be <configuration>"
        )
    out: dict[str, str] = {}
    for n, element in enumerate(root, 1):
        if not isinstance(element.tag, str):
            continue
        if element.tag != "property":
            warnings.append(
                f"warning: {source}: configuration/{element.tag.split('}')[-1]}: not read "
                "(only <property> elements are)"
            )
            continue
        name_el = element.find("name")
        value_el = element.find("value")
        name = text_of(name_el) if name_el is not None else ""
        if not name:
            raise ScenarioError(
                source, f"configuration/property[{n}]/name", "every property needs a <name>"
            )
        value = text_of(value_el) if value_el is not None else ""
        if name in out:
            warnings.append(
                f"warning: {source}: configuration/property[{name}]: set again; Hadoop keeps "
                "the last value, and so does the import"
            )
        out[name] = value
    return out


def _parse_capacity(value: str, where: str, source: str, *, maximum: bool) -> _Capacity:
    """``12.5``, ``2.0w`` or ``[memory=10240,vcores=12]`` (maximum: also ``-1``)."""
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        amounts: dict[str, float] = {}
        for item in text[1:-1].split(","):
            if not item.strip():
                continue
            key, eq, number = item.partition("=")
            try:
                amount = float(number)
            except ValueError:
                amount = math.nan
            if (
                not eq
                or not key.strip()
                or not math.isfinite(amount)
                or not (0 <= amount <= MAX_AMOUNT)
            ):
                raise ScenarioError(
                    source,
                    where,
                    f"expected absolute resources such as [memory=10240,vcores=12], got "
                    f"{text[:60]!r}",
                )
            amounts[resource_name(key)] = amount
        return _Capacity(absolute=amounts)
    if text.lower().endswith("w") and not maximum:
        try:
            weight = float(text[:-1])
        except ValueError:
            weight = math.nan
        if not math.isfinite(weight) or weight < 0:
            raise ScenarioError(
                source, where, f"expected a weight such as 2.0w (>= 0), got {text[:60]!r}"
            )
        return _Capacity(weight=weight)
    try:
        percent = float(text)
    except ValueError:
        percent = math.nan
    if maximum and percent == -1:
        percent = 100.0
    if not math.isfinite(percent) or not 0 <= percent <= 100:
        allowed = (
            "a percentage from 0 to 100 (or -1), or [memory=..,vcores=..]"
            if maximum
            else "a percentage from 0 to 100, a weight such as 2.0w, or [memory=..,vcores=..]"
        )
        raise ScenarioError(source, where, f"expected {allowed}, got {text[:60]!r}")
    return _Capacity(percent=percent)


def _tree(props: dict[str, str], source: str) -> tuple[_Queue, dict[str, _Queue]]:
    """The queues from ``root`` by ``.queues`` (no recursion), each with its own properties."""
    root = _Queue("root", "")
    by_name = {"root": root}
    if f"{PREFIX}root.queues" not in props:
        raise ScenarioError(
            source,
            f"configuration/property[{PREFIX}root.queues]",
            "missing: the root's queues must be listed (e.g. default)",
        )
    stack = [root]
    while stack:
        queue = stack.pop()
        listed = props.get(f"{PREFIX}{queue.yarn}.queues", "")
        names: set[str] = set()
        for raw in listed.split(","):
            name = raw.strip()
            if not name:
                continue
            where = f"configuration/property[{PREFIX}{queue.yarn}.queues]"
            if name in names:
                raise ScenarioError(
                    source, where, f"queue {queue.yarn}.{name} is listed twice; list it once"
                )
            if "/" in name or "." in name or any(c.isspace() for c in name):
                raise ScenarioError(
                    source, where, f"a queue name must not contain '.', '/' or spaces, got {name!r}"
                )
            names.add(name)
            child = _Queue(f"{queue.yarn}.{name}", f"{queue.path}/{name}" if queue.path else name)
            if child.yarn.count(".") > 100:
                raise ScenarioError(source, where, "queues nest more than 100 levels deep")
            queue.children.append(child)
            by_name[child.yarn] = child
        stack.extend(reversed(queue.children))
    return root, by_name


def _assign(
    props: dict[str, str], by_name: dict[str, _Queue], source: str, warnings: list[str]
) -> None:
    """Each property to its queue (the longest queue path it starts with), or a warning."""
    for name, value in props.items():
        if not name.startswith(PREFIX):
            if name.startswith("yarn.resourcemanager.monitor.capacity.preemption"):
                why = "preemption is the simulator's --preemption TMIN,TFAIR option"
            else:
                why = "not a Capacity Scheduler property"
            warnings.append(f"warning: {source}: configuration/property[{name}]: not read ({why})")
            continue
        parts = name[len(PREFIX) :].split(".")
        owner = None
        for k in range(len(parts) - 1, 0, -1):
            owner = by_name.get(".".join(parts[:k]))
            if owner is not None:
                owner.props[".".join(parts[k:])] = value
                break
        if owner is not None:
            continue
        key = ".".join(parts)
        at = f"configuration/property[{name}]"
        if key == "legacy-queue-mode.enabled":
            continue
        if key == "resource-calculator":
            if not value.endswith("DominantResourceCalculator"):
                warnings.append(
                    f"warning: {source}: {at}: {value.rsplit('.', 1)[-1]} is not modelled "
                    "(the capacity policy compares dominant shares, as DominantResourceCalculator)"
                )
            continue
        if key in _GLOBAL_NOT_MODELLED:
            warnings.append(f"warning: {source}: {at}: not modelled ({_GLOBAL_NOT_MODELLED[key]})")
        elif (parts and parts[0] == "root") or ".root." in name:
            warnings.append(
                f"warning: {source}: {at}: names no queue listed by a .queues property; not read"
            )
        else:
            warnings.append(f"warning: {source}: {at}: not modelled")


def import_yarn_capacity(path: str | Path, *, machines: str | Path | None = None) -> ImportResult:
    """Convert a Capacity Scheduler configuration into a scenario (see the module).

    Parameters
    ----------
    path : str or Path
        The ``capacity-scheduler.xml``.
    machines : str or Path, optional
        A scenario whose ``machines`` (and ``resources``) to use.

    Returns
    -------
    ImportResult

    Raises
    ------
    ScenarioError
        The file cannot be read, is not safe well-formed XML, a queue is listed twice, a
        capacity is malformed, or sibling percentages do not add up to 100
        (``error: FILE: configuration/property[NAME]: WHAT``).
    """
    source = str(path)
    warnings: list[str] = []
    props = _properties(path, source, warnings)
    root, by_name = _tree(props, source)
    _assign(props, by_name, source, warnings)
    legacy = props.get(f"{PREFIX}legacy-queue-mode.enabled", "true").strip().lower() != "false"

    def at(queue: _Queue, key: str) -> str:
        return f"configuration/property[{PREFIX}{queue.yarn}.{key}]"

    # Capacities, checked per parent (parents first).
    order: list[tuple[_Queue, _Queue]] = []
    stack = [(child, root) for child in reversed(root.children)]
    while stack:
        queue, parent = stack.pop()
        order.append((queue, parent))
        stack.extend((child, queue) for child in reversed(queue.children))
    capacity: dict[str, _Capacity] = {}
    maximum: dict[str, _Capacity | None] = {}
    for queue, _ in order:
        value = queue.props.get("capacity")
        capacity[queue.yarn] = (
            _parse_capacity(value, at(queue, "capacity"), source, maximum=False)
            if value is not None
            else _Capacity(percent=0.0)
        )
        raw_max = queue.props.get("maximum-capacity")
        maximum[queue.yarn] = (
            _parse_capacity(raw_max, at(queue, "maximum-capacity"), source, maximum=True)
            if raw_max is not None
            else None
        )
    for parent in [root, *(q for q, _ in order)]:
        if not parent.children:
            continue
        modes = {capacity[c.yarn].mode for c in parent.children}
        if len(modes) > 1:
            raise ScenarioError(
                source,
                at(parent.children[0], "capacity"),
                f"the children of {parent.yarn} mix {' and '.join(sorted(modes))} capacities; "
                "children of one parent use one mode",
            )
        if modes == {"percent"} and legacy:
            total = sum(capacity[c.yarn].percent or 0.0 for c in parent.children)
            parent_zero = parent is not root and capacity[parent.yarn].percent == 0.0
            if abs(total - 100.0) > _PRECISION and not (total == 0 and parent_zero):
                raise ScenarioError(
                    source,
                    f"configuration/property[{PREFIX}{parent.yarn}.queues]",
                    f"the capacities of the children of {parent.yarn} add up to {total:g}, "
                    "not 100 (YARN refuses this configuration)",
                )
    # The cluster: absolute capacities of the top queues size placeholder nodes.
    needed: dict[str, float] = {}
    for child in root.children:
        cap = capacity[child.yarn]
        if cap.absolute is not None:
            for r, v in cap.absolute.items():
                needed[r] = needed.get(r, 0.0) + v
    cluster = yarn_cluster(machines, needed, source, warnings)
    queues = _queues(source, cluster, root, order, capacity, maximum, warnings)
    users = [leaf_user(q.yarn, q.path, cluster) for q, _ in order if not q.children]
    for queue, _ in order:
        _queue_warnings(source, queue, at, warnings)
    warnings.append(
        f"warning: {source}: configuration: a scenario has no policy; simulate with --policy "
        "capacity (the Capacity Scheduler)"
    )
    scenario = finish(source, cluster, queues, users)
    return ImportResult(scenario, warnings)


def _queues(
    source: str,
    cluster: YarnCluster,
    root: _Queue,
    order: list[tuple[_Queue, _Queue]],
    capacity: dict[str, _Capacity],
    maximum: dict[str, _Capacity | None],
    warnings: list[str],
) -> list[dict[str, Any]]:
    """Weights, quotas (absolute capacities) and caps (absolute maximum capacities)."""
    resources = cluster.resources
    total = {r: cluster.total.get(r, 0.0) for r in resources}
    quota: dict[str, dict[str, float]] = {"root": dict(total)}
    cap: dict[str, dict[str, float]] = {"root": dict(total)}
    weight_sums: dict[str, float] = {}
    for parent in [root, *(q for q, _ in order)]:
        weight_sums[parent.yarn] = sum(capacity[c.yarn].weight or 0.0 for c in parent.children)
    out: list[dict[str, Any]] = []
    for queue, parent in order:
        given = capacity[queue.yarn]
        above = quota[parent.yarn]
        if given.absolute is not None:
            own = {r: min(given.absolute.get(r, 0.0), above[r]) for r in resources}
            for r in given.absolute:
                if r not in total:
                    warnings.append(
                        f"warning: {source}: configuration/property[{PREFIX}{queue.yarn}."
                        f"capacity]: resource {r!r} is not in the cluster's resources; dropped"
                    )
            shares = [own[r] / above[r] for r in resources if above[r] > 0]
            weight = 100.0 * max(shares, default=0.0)
        else:
            if given.weight is not None:
                whole = weight_sums[parent.yarn]
                fraction = given.weight / whole if whole > 0 else 0.0
                weight = given.weight
            else:
                fraction = (given.percent or 0.0) / 100.0
                weight = given.percent or 0.0
            own = {r: above[r] * fraction for r in resources}
        quota[queue.yarn] = own
        top_cap = cap[parent.yarn]
        limit = maximum[queue.yarn]
        if limit is None:
            own_cap = dict(top_cap)
        elif limit.absolute is not None:
            own_cap = {r: min(limit.absolute.get(r, top_cap[r]), top_cap[r]) for r in resources}
        else:
            own_cap = {r: top_cap[r] * (limit.percent or 0.0) / 100.0 for r in resources}
        for r in resources:
            if own_cap[r] < own[r] * (1 - 1e-9) - 1e-9:
                raise ScenarioError(
                    source,
                    f"configuration/property[{PREFIX}{queue.yarn}.maximum-capacity]",
                    f"the maximum capacity ({own_cap[r]:g} {r}) is less than the capacity "
                    f"({own[r]:g} {r}); YARN refuses this",
                )
        cap[queue.yarn] = own_cap
        entry: dict[str, Any] = {"path": queue.path, "weight": weight if weight > 0 else MIN_WEIGHT}
        entry["quota"] = {r: _clean(v) for r, v in own.items()}
        if any(own_cap[r] < total[r] * (1 - 1e-12) for r in resources):
            entry["borrowing_limit"] = {r: _clean(max(0.0, own_cap[r] - own[r])) for r in resources}
        out.append(entry)
    return out


def _clean(value: float) -> float:
    """``value`` to 12 significant digits: 2457.6, not 2457.6000000000004 (products of
    percentages); the loader's quota check tolerates the rounding."""
    return float(f"{value:.12g}")


_ORDERING = re.compile(r"^ordering-policy(\..*)?$")


def _queue_warnings(source: str, queue: _Queue, at: Any, warnings: list[str]) -> None:
    """One warning per queue property the scenario does not carry."""
    for key, value in queue.props.items():
        if key in ("queues", "capacity", "maximum-capacity"):
            continue
        where = at(queue, key)
        if key == "state":
            if value.strip().upper() == "STOPPED":
                warnings.append(
                    f"warning: {source}: {where}: STOPPED is not modelled (the queue accepts "
                    "jobs; remove them from the history to model it)"
                )
            continue
        if _ORDERING.match(key):
            if key == "ordering-policy" and value.strip().lower() == "fifo":
                continue
            warnings.append(
                f"warning: {source}: {where}: {value} is not modelled (a leaf runs its jobs "
                "first in, first out)"
            )
            continue
        why = _QUEUE_NOT_MODELLED.get(key)
        if why is None:
            warnings.append(f"warning: {source}: {where}: not modelled")
        else:
            warnings.append(f"warning: {source}: {where}: not modelled ({why})")
