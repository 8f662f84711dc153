"""``fairshare import yarn-fair``: Hadoop's Fair Scheduler allocation file
(``fair-scheduler.xml``) as a scenario (SPEC section 8.1), following the "Allocation file
format" of Hadoop's ``FairScheduler.md`` and ``AllocationFileLoaderService``.

The mapping:

- ``<queue name=...>`` elements (``<pool>``, the legacy name) nest into the queue tree; YARN's
  ``root`` is the scenario's root (a top-level ``<queue name="root">`` holds the top queues).
  ``root.a.b`` is the queue path ``a/b``. A name with ``.`` or ``/`` or given twice among
  siblings is an error, as is a ``weight``, resource or timeout that is not a number.
- ``weight`` is the queue's ``weight`` (0, "after every non-zero weight", becomes
  :data:`~fairshare.workload.model.MIN_WEIGHT` with a warning).
- ``minResources`` is the queue's ``quota`` (its minimum share, in ``mem`` MiB and ``cpu``
  vcores; :func:`parse_resources` reads every syntax the documentation gives: ``"X mb, Y
  vcores"``, ``"X% memory, Y% cpu"``, ``"X%"``, ``"vcores=X, memory-mb=Y"``, with ``%``);
  percentages are of the cluster, values are floored as YARN does. A parent's quota is raised
  to cover its children's (scenario quotas nest); when the top-level quotas exceed the
  cluster, all quotas of that resource are scaled down to fit (YARN then cannot meet every
  minimum share either), with a warning. Under a parent whose policy is ``fair`` or ``fifo``
  (single resource: memory), only memory counts, as the documentation says.
- ``maxResources`` (or ``queueMaxResourcesDefault``) caps the queue: ``borrowing_limit`` =
  maximum - quota (a queue without ``minResources`` gets a quota of 0 in the capped
  resources). A resource ``maxResources`` leaves unnamed in the new syntax is not capped.
- ``schedulingPolicy`` / ``defaultQueueSchedulingPolicy``: the scenario has no per-queue
  policy. A warning names the online policy to simulate with (``fair``: the FAIR scheduler,
  ``drf``, ``fifo``), from the root's policy; a queue with another policy is a warning.
- ``minSharePreemptionTimeout``, ``fairSharePreemptionTimeout`` (and the ``default...``
  elements and the legacy top-level ``fairSharePreemptionTimeout``): the preemption of the
  ``fair`` policy is the simulator's option ``--preemption TMIN,TFAIR`` (FAIR section 3.2), not
  a scenario field: a warning gives the option with the root's timeouts; a queue with other
  timeouts is a warning. ``fairSharePreemptionThreshold`` other than 0.5 (FAIR's "half its
  fair share") is a warning.
- Not modelled, one warning each: ``maxRunningApps``, ``maxAMShare``, ``maxChildResources``,
  ``maxContainerAllocation``, ACLs, ``reservation``, ``allowPreemptionFrom``, ``<user>``
  elements, ``userMaxAppsDefault``, ``queueMaxAppsDefault``, ``queueMaxAMShareDefault``,
  ``queuePlacementPolicy``, the reservation settings, and any element not listed here.
- Users: one per leaf queue (:mod:`~fairshare.workload.imports.yarn_common`), named as YARN
  names the queue (``root.a.b``); YARN's ``root.default`` is always there.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> xml = '''<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
...   <queue name="ads"><weight>3</weight><minResources>4096 mb, 4 vcores</minResources>
...     <queue name="prod"/></queue>
...   <queue name="dev"/>
... </allocations>'''
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp, "fair-scheduler.xml")
...     _ = path.write_text(xml)
...     done = import_yarn_fair(path)
>>> done.scenario["queues"][:2]
[{'path': 'ads', 'weight': 3.0, 'quota': {'mem': 4096.0, 'cpu': 4.0}}, {'path': 'ads/prod'}]
>>> [u["name"] for u in done.scenario["users"]]
['root.ads.prod', 'root.dev', 'root.default']
>>> parse_resources("vcores=2, memory-mb=5120", "x").absolute
{'cpu': 2.0, 'mem': 5120.0}
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

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
from fairshare.workload.model import MAX_AMOUNT, MAX_WEIGHT, MIN_WEIGHT

__all__ = ["ResourceSpec", "import_yarn_fair", "parse_resources"]

POLICIES = ("fair", "drf", "fifo")
"""The scheduling policies YARN names (a class name is not read)."""

_NOT_MODELLED_QUEUE = {
    "maxRunningApps": "running applications are not limited",
    "maxAMShare": "application masters are not modelled",
    "maxChildResources": "ad hoc child queues are not modelled",
    "maxContainerAllocation": "containers are the jobs' tasks, not limited per queue",
    "aclSubmitApps": "ACLs are not modelled",
    "aclAdministerApps": "ACLs are not modelled",
    "aclAdministerReservations": "ACLs are not modelled",
    "aclListReservations": "ACLs are not modelled",
    "aclSubmitReservations": "ACLs are not modelled",
    "reservation": "the ReservationSystem is not modelled",
    "allowPreemptionFrom": "every queue may be preempted",
}
_NOT_MODELLED_TOP = {
    "user": "per-user application limits are not modelled",
    "userMaxAppsDefault": "per-user application limits are not modelled",
    "queueMaxAppsDefault": "running applications are not limited",
    "queueMaxAMShareDefault": "application masters are not modelled",
    "queuePlacementPolicy": "placement rules are not modelled: a job names its user (a leaf queue)",
    "reservation-agent": "the ReservationSystem is not modelled",
    "reservation-policy": "the ReservationSystem is not modelled",
    "reservation-planner": "the ReservationSystem is not modelled",
}
_NUMBER = r"(-?\d+(?:\.\d*)?|-?\.\d+)"
_OLD_PERCENT = re.compile(_NUMBER + r"\s*%\s*(memory|cpu)", re.IGNORECASE)
_OLD_MB = re.compile(_NUMBER + r"\s*mb", re.IGNORECASE)
_OLD_VCORES = re.compile(_NUMBER + r"\s*vcores", re.IGNORECASE)
_ONE_PERCENT = re.compile(r"^\s*" + _NUMBER + r"\s*%\s*$")


@dataclass(frozen=True)
class ResourceSpec:
    """A parsed ``minResources`` / ``maxResources`` value.

    Attributes
    ----------
    absolute : dict
        Resource -> amount (MiB, vcores, units).
    percent : dict
        Resource -> percentage of the cluster.
    every : float, optional
        A single ``"X%"``: this percentage of every resource.
    """

    absolute: dict[str, float] = field(default_factory=dict)
    percent: dict[str, float] = field(default_factory=dict)
    every: float | None = None

    def resolve(self, total: dict[str, float]) -> dict[str, float]:
        """The amounts, percentages taken of ``total`` and floored as YARN does."""
        out = dict(self.absolute)
        if self.every is not None:
            for r, t in total.items():
                out[r] = float(math.floor(t * self.every / 100 + 1e-9))
        for r, p in self.percent.items():
            out[r] = float(math.floor(total.get(r, 0.0) * p / 100 + 1e-9))
        return out


def parse_resources(text: str, where: str) -> ResourceSpec:
    """A resource value as ``FairSchedulerConfiguration.parseResourceConfigValue`` reads it:
    ``"1024 mb, 2 vcores"`` (any order, case, spacing; fractions floored), ``"50% memory, 50%
    cpu"``, ``"50%"``, or ``"vcores=2, memory-mb=5120"`` and ``"vcores=75%, memory-mb=40%"``
    (other resource types by name). Raises ``ValueError`` naming what is wrong; ``where``
    is unused but kept for symmetry with the callers' messages.

    Examples
    --------
    >>> parse_resources("  5120.3 mb, 2.35 vcores  ", "x").absolute
    {'mem': 5120.0, 'cpu': 2.0}
    >>> parse_resources("50% Memory, 100% cpu", "x").percent
    {'mem': 50.0, 'cpu': 100.0}
    >>> parse_resources("1024", "x")
    Traceback (most recent call last):
    ...
    ValueError: missing resource mb: expected "X mb, Y vcores", "X% memory, Y% cpu", "X%" or "vcores=X, memory-mb=Y", got '1024'
    """  # noqa: E501 (a doctest's output is one line)
    del where
    shown = repr(text.strip()) if len(text.strip()) <= 60 else repr(text.strip()[:60] + "...")
    expected = (
        'expected "X mb, Y vcores", "X% memory, Y% cpu", "X%" or "vcores=X, memory-mb=Y", '
        f"got {shown}"
    )
    one = _ONE_PERCENT.match(text)
    if one:
        value = float(one.group(1))
        if value < 0:
            raise ValueError(f"a percentage must not be negative, got {shown}")
        return ResourceSpec(every=value)
    if "=" in text:
        absolute: dict[str, float] = {}
        percent: dict[str, float] = {}
        for item in text.split(","):
            if not item.strip():
                continue
            name, eq, value_text = item.partition("=")
            value_text = value_text.strip()
            is_percent = value_text.endswith("%")
            number = value_text[:-1].strip() if is_percent else value_text
            if not eq or not name.strip() or not re.fullmatch(r"\d+(?:\.\d*)?|\.\d+", number):
                raise ValueError(
                    f"{item.strip()!r} is not NAME=VALUE with a non-negative number; {expected}"
                )
            resource = resource_name(name)
            if resource in absolute or resource in percent:
                raise ValueError(f"resource {name.strip()!r} is given twice in {shown}")
            if is_percent:
                percent[resource] = float(number)
            else:
                absolute[resource] = float(math.floor(float(number)))
        return ResourceSpec(absolute=absolute, percent=percent)
    percents = _OLD_PERCENT.findall(text)
    if percents:
        got = {resource_name(name): float(value) for value, name in percents}
        for resource in ("mem", "cpu"):
            if resource not in got:
                raise ValueError(
                    f"missing resource {'memory' if resource == 'mem' else 'cpu'}: {expected}"
                )
        if any(v < 0 for v in got.values()):
            raise ValueError(f"a percentage must not be negative, got {shown}")
        return ResourceSpec(percent=got)
    mb = _OLD_MB.search(text)
    vcores = _OLD_VCORES.search(text)
    if mb is None:
        raise ValueError(f"missing resource mb: {expected}")
    if vcores is None:
        raise ValueError(f"missing resource vcores: {expected}")
    amounts = {"mem": float(mb.group(1)), "cpu": float(vcores.group(1))}
    for resource, amount in amounts.items():
        if amount < 0:
            raise ValueError(f"invalid value of {'memory' if resource == 'mem' else 'vcores'}: "
                             f"must not be negative, got {shown}")  # fmt: skip
    return ResourceSpec(absolute={r: float(math.floor(v)) for r, v in amounts.items()})


@dataclass
class _Queue:
    """One queue of the allocation file."""

    name: str
    yarn: str  # root.a.b
    path: str  # a/b
    where: str  # allocations/queue[root.a.b]
    weight: float | None = None
    min: ResourceSpec | None = None
    max: ResourceSpec | None = None
    policy: str | None = None
    min_timeout: float | None = None
    fair_timeout: float | None = None
    threshold: float | None = None
    parent_type: bool = False
    children: list[_Queue] = field(default_factory=list)


@dataclass
class _Defaults:
    policy: str = "fair"
    min_timeout: float | None = None
    fair_timeout: float | None = None
    threshold: float | None = None
    max: ResourceSpec | None = None


def _number(element: Element, where: str, source: str, *, low: float = 0.0) -> float:
    text = text_of(element)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < low or value > MAX_AMOUNT:
        raise ScenarioError(source, where, f"must be a number >= {low:g}, got {text[:40]!r}")
    return value


def _resources(element: Element, where: str, source: str) -> ResourceSpec:
    try:
        return parse_resources(text_of(element), where)
    except ValueError as err:
        raise ScenarioError(source, where, str(err)) from None


def _policy(element: Element, where: str, source: str) -> str:
    value = text_of(element).lower()
    if value not in POLICIES:
        raise ScenarioError(
            source,
            where,
            f"must be one of {', '.join(POLICIES)} (a SchedulingPolicy class is not read), got "
            f"{text_of(element)[:60]!r}",
        )
    return value


def _read_queue(
    element: Element, parent: _Queue | None, source: str, warnings: list[str]
) -> _Queue:
    """A ``<queue>`` (or ``<pool>``) element and the queues inside it."""
    name = (element.get("name") or "").strip()
    above = parent.where if parent is not None else "allocations"
    if not name:
        raise ScenarioError(source, f"{above}/{element.tag}", "a queue needs a name attribute")
    if "." in name or "/" in name:
        raise ScenarioError(
            source,
            f"{above}/{element.tag}[{name}]",
            "a queue name must not contain '.' or '/' (YARN separates levels with '.')",
        )
    yarn = f"{parent.yarn}.{name}" if parent is not None else f"root.{name}"
    path = f"{parent.path}/{name}" if parent is not None and parent.path else name
    queue = _Queue(name, yarn, path, f"allocations/queue[{yarn}]")
    queue.parent_type = element.get("type") == "parent"
    names: set[str] = set()
    for child in element:
        if not isinstance(child.tag, str):
            continue  # a comment or processing instruction
        tag = child.tag
        at = f"{queue.where}/{tag}"
        if tag in ("queue", "pool"):
            sub = _read_queue(child, queue, source, warnings)
            if sub.name in names:
                raise ScenarioError(
                    source, sub.where, f"queue {sub.yarn!r} is defined twice; name it once"
                )
            names.add(sub.name)
            queue.children.append(sub)
        elif tag == "weight":
            queue.weight = _number(child, at, source)
            if queue.weight > MAX_WEIGHT:
                raise ScenarioError(source, at, f"must be at most {MAX_WEIGHT:g}")
        elif tag == "minResources":
            queue.min = _resources(child, at, source)
        elif tag == "maxResources":
            queue.max = _resources(child, at, source)
        elif tag == "schedulingPolicy":
            queue.policy = _policy(child, at, source)
        elif tag == "minSharePreemptionTimeout":
            queue.min_timeout = _number(child, at, source)
        elif tag == "fairSharePreemptionTimeout":
            queue.fair_timeout = _number(child, at, source)
        elif tag == "fairSharePreemptionThreshold":
            queue.threshold = _number(child, at, source)
            if queue.threshold > 1:
                raise ScenarioError(source, at, f"must be from 0 to 1, got {text_of(child)!r}")
        elif tag in _NOT_MODELLED_QUEUE:
            warnings.append(f"warning: {source}: {at}: not modelled ({_NOT_MODELLED_QUEUE[tag]})")
        else:
            warnings.append(f"warning: {source}: {at}: unknown element, not read")
    return queue


def _read(root: Element, source: str, warnings: list[str]) -> tuple[_Queue, _Defaults]:
    """The queue tree under YARN's root, and the file's defaults."""
    if root.tag != "allocations":
        raise ScenarioError(
            source, root.tag, "the allocation file's top element must be <allocations>"
        )
    top = _Queue("root", "root", "", "allocations/queue[root]")
    defaults = _Defaults()
    names: set[str] = set()
    for child in root:
        if not isinstance(child.tag, str):
            continue
        tag = child.tag
        at = f"allocations/{tag}"
        if tag in ("queue", "pool"):
            if (child.get("name") or "").strip() == "root":
                if top.children or names:
                    raise ScenarioError(
                        source, "allocations/queue[root]", "queue 'root' is defined twice"
                    )
                # <queue name="root"> holds the top queues and the root's own settings.
                holder = _read_queue(child, None, source, warnings)
                for sub in holder.children:
                    _rebase(sub, None)
                top = _Queue(
                    "root",
                    "root",
                    "",
                    "allocations/queue[root]",
                    weight=holder.weight,
                    min=holder.min,
                    max=holder.max,
                    policy=holder.policy,
                    min_timeout=holder.min_timeout,
                    fair_timeout=holder.fair_timeout,
                    threshold=holder.threshold,
                    children=holder.children,
                )
                names.update(sub.name for sub in top.children)
                continue
            sub = _read_queue(child, None, source, warnings)
            if sub.name in names:
                raise ScenarioError(
                    source, sub.where, f"queue {sub.yarn!r} is defined twice; name it once"
                )
            names.add(sub.name)
            top.children.append(sub)
        elif tag == "defaultQueueSchedulingPolicy":
            defaults.policy = _policy(child, at, source)
        elif tag == "defaultMinSharePreemptionTimeout":
            defaults.min_timeout = _number(child, at, source)
        elif tag in ("defaultFairSharePreemptionTimeout", "fairSharePreemptionTimeout"):
            # The top-level fairSharePreemptionTimeout is the legacy name of the default.
            defaults.fair_timeout = _number(child, at, source)
        elif tag == "defaultFairSharePreemptionThreshold":
            defaults.threshold = _number(child, at, source)
            if defaults.threshold > 1:
                raise ScenarioError(source, at, f"must be from 0 to 1, got {text_of(child)!r}")
        elif tag == "queueMaxResourcesDefault":
            defaults.max = _resources(child, at, source)
        elif tag in _NOT_MODELLED_TOP:
            label = f"{at}[{child.get('name')}]" if child.get("name") else at
            warnings.append(f"warning: {source}: {label}: not modelled ({_NOT_MODELLED_TOP[tag]})")
        else:
            warnings.append(f"warning: {source}: {at}: unknown element, not read")
    return top, defaults


def _rebase(queue: _Queue, parent: _Queue | None) -> None:
    """Names and paths of a queue read under ``<queue name="root">`` as a top queue."""
    queue.yarn = f"{parent.yarn}.{queue.name}" if parent is not None else f"root.{queue.name}"
    queue.path = f"{parent.path}/{queue.name}" if parent is not None else queue.name
    queue.where = f"allocations/queue[{queue.yarn}]"
    for child in queue.children:
        _rebase(child, queue)


def _walk(top: _Queue) -> list[tuple[_Queue, _Queue]]:
    """Every queue below the root with its parent, parents first (no recursion)."""
    out: list[tuple[_Queue, _Queue]] = []
    stack = [(child, top) for child in reversed(top.children)]
    while stack:
        queue, parent = stack.pop()
        out.append((queue, parent))
        stack.extend((child, queue) for child in reversed(queue.children))
    return out


def import_yarn_fair(path: str | Path, *, machines: str | Path | None = None) -> ImportResult:
    """Convert a Fair Scheduler allocation file into a scenario (see the module).

    Parameters
    ----------
    path : str or Path
        The ``fair-scheduler.xml``.
    machines : str or Path, optional
        A scenario whose ``machines`` (and ``resources``) to use.

    Returns
    -------
    ImportResult

    Raises
    ------
    ScenarioError
        The file cannot be read, is not safe well-formed XML, or a value is malformed
        (``error: FILE: allocations/queue[root.a]/weight: WHAT``).
    """
    source = str(path)
    warnings: list[str] = []
    top, defaults = _read(read_xml(path), source, warnings)
    pairs = _walk(top)
    if "default" not in {q.name for q in top.children}:
        default = _Queue("default", "root.default", "default", "allocations/queue[root.default]")
        top.children.append(default)
        pairs.append((default, top))
    # Effective policies (a queue's policy shares among its children; inherited as default).
    policy: dict[int, str] = {id(top): top.policy or defaults.policy}
    for queue, _parent in pairs:
        policy[id(queue)] = queue.policy or defaults.policy
    # Pass 1: the absolute amounts the top-level queues need, to size placeholder nodes.
    needed: dict[str, float] = {}
    order = list(reversed(pairs))  # children before parents
    need_of: dict[int, dict[str, float]] = {}
    for queue, _parent in order:
        own = dict(queue.min.absolute) if queue.min is not None else {}
        below: dict[str, float] = {}
        for child in queue.children:
            for r, v in need_of.get(id(child), {}).items():
                below[r] = below.get(r, 0.0) + v
        need_of[id(queue)] = {r: max(own.get(r, 0.0), below.get(r, 0.0)) for r in {*own, *below}}
    for child in top.children:
        for r, v in need_of.get(id(child), {}).items():
            needed[r] = needed.get(r, 0.0) + v
    cluster = yarn_cluster(machines, needed, source, warnings)
    queues = _quotas(source, cluster, top, pairs, policy, defaults, warnings)
    users = [
        leaf_user(q.yarn, q.path, cluster) for q, _ in pairs if not q.children and not q.parent_type
    ]
    _policy_warnings(source, top, pairs, policy, defaults, warnings)
    if top.weight is not None or top.min is not None or top.max is not None:
        warnings.append(
            f"warning: {source}: allocations/queue[root]: the root's weight, minResources and "
            "maxResources are not modelled (the root is the whole cluster)"
        )
    scenario = finish(source, cluster, queues, users)
    return ImportResult(scenario, warnings)


def _quotas(
    source: str,
    cluster: YarnCluster,
    top: _Queue,
    pairs: list[tuple[_Queue, _Queue]],
    policy: dict[int, str],
    defaults: _Defaults,
    warnings: list[str],
) -> list[dict[str, Any]]:
    """The scenario's queues: weights, quotas from minResources, caps from maxResources."""
    known = set(cluster.resources)
    dropped: set[str] = set()

    def amounts(spec: ResourceSpec | None, queue: _Queue, parent: _Queue) -> dict[str, float]:
        if spec is None:
            return {}
        got = spec.resolve(cluster.total)
        if policy[id(parent)] in ("fair", "fifo"):
            # Single-resource fairness: "only the memory is used, other resources are ignored".
            got = {r: v for r, v in got.items() if r == "mem"}
        for r in [r for r in got if r not in known]:
            if r not in dropped:
                dropped.add(r)
                warnings.append(
                    f"warning: {source}: {queue.where}: resource {r!r} is not in the cluster's "
                    f"resources ({', '.join(cluster.resources)}): its amounts are dropped"
                )
            del got[r]
        return got

    mins: dict[int, dict[str, float]] = {}
    maxs: dict[int, dict[str, float]] = {}
    for queue, parent in pairs:
        own = {r: v for r, v in amounts(queue.min, queue, parent).items() if v > 0}
        mins[id(queue)] = own
        maxs[id(queue)] = amounts(queue.max or defaults.max, queue, parent)
    # Quotas nest: a parent's covers its children's (children first).
    quota: dict[int, dict[str, float]] = {}
    for queue, _parent in reversed(pairs):
        own = dict(mins[id(queue)])
        below: dict[str, float] = {}
        for child in queue.children:
            for r, v in quota[id(child)].items():
                below[r] = below.get(r, 0.0) + v
        for r, v in below.items():
            if v > own.get(r, 0.0):
                if r in own:
                    warnings.append(
                        f"warning: {source}: {queue.where}/minResources: {r} {own[r]:g} is "
                        f"less than its children's {v:g}; raised to theirs (quotas nest)"
                    )
                own[r] = v
        quota[id(queue)] = own
    # The top-level quotas fit in the cluster, scaled down when they do not.
    for r in cluster.resources:
        total = sum(quota[id(q)].get(r, 0.0) for q in top.children)
        capacity = cluster.total.get(r, 0.0)
        if total > capacity * (1 + 1e-9):
            factor = capacity / total
            warnings.append(
                f"warning: {source}: allocations: the minResources of {r} add up to {total:g}, "
                f"more than the cluster's {capacity:g}: every quota of {r} is scaled by "
                f"{factor:.6g} (YARN cannot meet them all either)"
            )
            for queue, _ in pairs:
                if r in quota[id(queue)]:
                    quota[id(queue)][r] = quota[id(queue)][r] * factor
    out: list[dict[str, Any]] = []
    for queue, _parent in pairs:
        entry: dict[str, Any] = {"path": queue.path}
        if queue.weight is not None:
            weight = queue.weight
            if weight == 0:
                warnings.append(
                    f"warning: {source}: {queue.where}/weight: 0 (served after every non-zero "
                    f"weight) becomes the smallest weight a scenario accepts, {MIN_WEIGHT:g}"
                )
                weight = MIN_WEIGHT
            entry["weight"] = weight
        own_quota = quota[id(queue)]
        cap = maxs[id(queue)]
        if cap:
            own_quota = {**dict.fromkeys(cap, 0.0), **own_quota}
        if own_quota:
            entry["quota"] = {r: own_quota[r] for r in cluster.resources if r in own_quota}
        if cap:
            limit: dict[str, float] = {}
            for r, v in cap.items():
                if v < own_quota[r]:
                    warnings.append(
                        f"warning: {source}: {queue.where}/maxResources: {r} {v:g} is less "
                        f"than the queue's minimum {own_quota[r]:g}; the minimum wins"
                    )
                limit[r] = max(0.0, v - own_quota[r])
            entry["borrowing_limit"] = {r: limit[r] for r in cluster.resources if r in limit}
        out.append(entry)
    return out


def _policy_warnings(
    source: str,
    top: _Queue,
    pairs: list[tuple[_Queue, _Queue]],
    policy: dict[int, str],
    defaults: _Defaults,
    warnings: list[str],
) -> None:
    """The policy and preemption settings the scenario cannot carry, as options to run with."""
    chosen = policy[id(top)]
    warnings.append(
        f"warning: {source}: allocations/queue[root]/schedulingPolicy: {chosen}: a scenario has "
        f"no policy; simulate with --policy {chosen}"
        + (" (the FAIR scheduler, YARN Fair Scheduler's ancestor)" if chosen == "fair" else "")
    )
    for queue, _ in pairs:
        if queue.children and policy[id(queue)] != chosen:
            warnings.append(
                f"warning: {source}: {queue.where}/schedulingPolicy: {policy[id(queue)]} is not "
                f"modelled (one policy for the whole cluster: {chosen})"
            )
    tmin = top.min_timeout if top.min_timeout is not None else defaults.min_timeout
    tfair = top.fair_timeout if top.fair_timeout is not None else defaults.fair_timeout
    if tmin is not None or tfair is not None:
        never = "1e9"  # YARN's default Long.MAX_VALUE: never
        warnings.append(
            f"warning: {source}: allocations: preemption timeouts (min share "
            f"{tmin if tmin is not None else 'never'}, fair share "
            f"{tfair if tfair is not None else 'never'}): a scenario has no preemption; "
            "simulate with --preemption "
            f"{_seconds(tmin) if tmin is not None else never},"
            f"{_seconds(tfair) if tfair is not None else never} (when yarn.scheduler.fair."
            "preemption is true)"
        )
    for queue, _ in pairs:
        for label, value, base in (
            ("minSharePreemptionTimeout", queue.min_timeout, tmin),
            ("fairSharePreemptionTimeout", queue.fair_timeout, tfair),
        ):
            if value is not None and value != base:
                warnings.append(
                    f"warning: {source}: {queue.where}/{label}: {value:g} s is not modelled "
                    "(--preemption sets one pair of timeouts for every queue)"
                )
    threshold = top.threshold if top.threshold is not None else defaults.threshold
    for where, value in [
        ("allocations/defaultFairSharePreemptionThreshold", threshold),
        *((f"{q.where}/fairSharePreemptionThreshold", q.threshold) for q, _ in pairs),
    ]:
        if value is not None and value != 0.5:
            warnings.append(
                f"warning: {source}: {where}: {value:g} is not modelled (the fair policy "
                "preempts below half the fair share, 0.5)"
            )


def _seconds(value: float) -> str:
    """Seconds as the ``--preemption`` option takes them."""
    return f"{value:g}"
