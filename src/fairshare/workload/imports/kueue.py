"""``fairshare import kueue``: Kueue's objects as a scenario (SPEC section 8.1).

Input: YAML (one or many documents, ``---`` between them) or JSON, each document one object
or a ``kind: List`` of them (``kubectl get clusterqueues,cohorts,localqueues,resourceflavors
-o yaml``): ``ResourceFlavor``, ``ClusterQueue``, ``Cohort``, ``LocalQueue`` (API versions
``kueue.x-k8s.io/v1beta1`` and ``v1beta2``) and Kueue's ``Configuration`` (also inside the
``ConfigMap`` Kueue's manifests ship it in).

The mapping (read by the ``kueue`` policies, :mod:`fairshare.policies.kueue_tree`):

- Each Cohort (``spec.parentName``, v1beta1 ``spec.parent``) and ClusterQueue
  (``spec.cohortName``, v1beta1 ``spec.cohort``) is a queue; a ClusterQueue's path is
  ``COHORT/.../CQ``. A ClusterQueue naming a cohort that no Cohort object defines makes that
  cohort, as Kueue does, when the files define no Cohort at all; among explicit Cohorts such
  a name is a typo (an error). A cycle of parents is an error.
- A ClusterQueue's ``nominalQuota``, ``borrowingLimit`` and ``lendingLimit``, summed over the
  flavors of a resource (``keep_flavors``: each flavor's its own resource ``NAME@FLAVOR``),
  are the queue's ``quota``, ``borrowing_limit`` and ``lending_limit``; a limit that a
  flavor of the resource leaves unset is no limit. Quotas are in Kubernetes' base units
  (CPUs; bytes of memory).
- The scenario's quotas nest (a parent's quota covers its children's), while a Kueue Cohort's
  ``resourceGroups`` are quota it holds on top of its children's: a Cohort's queue quota is
  its own plus its children's, per resource.
- ``fairSharing.weight`` is the queue's (and a LocalQueue's user's) ``weight``; Kueue's weight
  0 (borrowing makes the share infinite) becomes the smallest weight a scenario accepts,
  :data:`~fairshare.workload.model.MIN_WEIGHT`, which the ``kueue`` policies read as 0, with
  a warning.
- ``spec.preemption`` is the queue's ``preemption``.
- Each LocalQueue is a user ``NAMESPACE/NAME`` (``NAME`` without a namespace) in its
  ClusterQueue's queue; its demand is one unit of its ClusterQueue's first resource (a
  LocalQueue has none of its own; jobs bring theirs).
- Kueue has no nodes: the scenario gets one machine per ResourceFlavor, named after it,
  holding the total nominal quota of that flavor (ClusterQueues' and Cohorts').
- ``admissionFairSharing.usageHalfLifeTime`` is the scenario's ``usage_half_life``
  (seconds), when the scenario format has that field.

Every setting the model does not cover is one warning naming it; nothing is dropped silently.

Examples
--------
>>> text = '''
... apiVersion: kueue.x-k8s.io/v1beta2
... kind: ClusterQueue
... metadata: {name: team-a}
... spec:
...   cohortName: org
...   resourceGroups:
...   - coveredResources: [cpu]
...     flavors:
...     - name: default
...       resources: [{name: cpu, nominalQuota: "4"}]
... ---
... apiVersion: kueue.x-k8s.io/v1beta2
... kind: LocalQueue
... metadata: {name: lq, namespace: ns}
... spec: {clusterQueue: team-a}
... '''
>>> done = convert([("kueue.yaml", text)])
>>> done.scenario["queues"]
[{'path': 'org', 'quota': {'cpu': 4.0}}, {'path': 'org/team-a', 'quota': {'cpu': 4.0}}]
>>> done.scenario["users"], done.scenario["machines"]
([{'name': 'ns/lq', 'queue': 'org/team-a', 'demand': {'cpu': 1.0}}], [{'name': 'default', 'capacity': {'cpu': 4.0}}])
"""  # noqa: E501 (a doctest's output is one line)

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fairshare.errors import FairshareError
from fairshare.workload.errors import ScenarioError, shown_value
from fairshare.workload.imports import ImportResult
from fairshare.workload.model import MAX_AMOUNT, MAX_WEIGHT, MIN_WEIGHT
from fairshare.workload.reading import read_text_file

__all__ = ["convert", "parse_duration", "parse_quantity", "read_kueue"]

KINDS = ("ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "Configuration")
"""The kinds of objects read."""

_PREEMPTION = {
    "Never": "never",
    "LowerPriority": "lower_priority",
    "Any": "any",
    "LowerOrNewerEqualPriority": "lower_or_newer_equal_priority",
}
_RECLAIM = ("Never", "LowerPriority", "Any")
_WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
_BORROW = ("Never", "LowerPriority")

_SUFFIXES = {
    "": 1.0,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}
_QUANTITY = re.compile(
    r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$"
)
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class _Bad(FairshareError):
    """A malformed field: its path within the object and what is wrong."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(where, what)
        self.where = where
        self.what = what


def parse_quantity(value: object) -> float:
    """A Kubernetes resource quantity (``"500m"``, ``"4"``, ``"36Gi"``, ``1.5``) in base units.

    Parameters
    ----------
    value : str or number

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Not a non-negative quantity.

    Examples
    --------
    >>> parse_quantity("500m"), parse_quantity("2Ki"), parse_quantity(3)
    (0.5, 2048.0, 3.0)
    """
    if isinstance(value, bool):
        raise ValueError(f"must be a quantity such as 4, 500m or 36Gi, got {shown_value(value)}")
    if isinstance(value, int | float):
        number = float(value)
    else:
        match = _QUANTITY.match(str(value).strip()) if isinstance(value, str) else None
        if match is None:
            raise ValueError(
                f"must be a quantity such as 4, 500m or 36Gi, got {shown_value(value)}"
            )
        number = float(match.group(1)) * _SUFFIXES[match.group(2) or ""]
    if not math.isfinite(number) or number < 0 or number > MAX_AMOUNT:
        raise ValueError(f"must be a quantity from 0 to {MAX_AMOUNT:g}, got {shown_value(value)}")
    return number


def parse_duration(value: object) -> float:
    """A Go duration (``"168h"``, ``"1h30m"``, ``"90s"``) in seconds.

    Parameters
    ----------
    value : str

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Not a positive duration.

    Examples
    --------
    >>> parse_duration("168h"), parse_duration("1h30m"), parse_duration("250ms")
    (604800.0, 5400.0, 0.25)
    """
    text = value.strip() if isinstance(value, str) else ""
    parts = _DURATION.findall(text)
    if not text or "".join(a + b for a, b in parts) != text:
        raise ValueError(f"must be a duration such as 168h or 30m, got {shown_value(value)}")
    seconds = sum(float(a) * _UNIT_SECONDS[b] for a, b in parts)
    if seconds <= 0:
        raise ValueError(f"must be a duration > 0, got {shown_value(value)}")
    return seconds


@dataclass
class _Object:
    kind: str
    name: str
    namespace: str | None
    spec: dict[str, Any]
    data: dict[str, Any]
    file: str
    where: str


@dataclass
class _Quota:
    nominal: dict[str, float] = field(default_factory=dict)
    borrowing: dict[str, float | None] = field(default_factory=dict)
    lending: dict[str, float | None] = field(default_factory=dict)
    flavors: dict[str, dict[str, float]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)


def read_kueue(paths: Sequence[str], keep_flavors: bool = False) -> ImportResult:
    """Read Kueue's objects from ``paths`` and convert them (:func:`convert`).

    Parameters
    ----------
    paths : sequence of str
        YAML or JSON files (each at most the size of a scenario file).
    keep_flavors : bool
        Keep each flavor of a resource apart, as resource ``NAME@FLAVOR``.

    Returns
    -------
    ImportResult

    Raises
    ------
    ScenarioError
        A file cannot be read or is malformed, a cohort is missing or in a cycle, a
        LocalQueue names a missing ClusterQueue.
    """
    texts: list[tuple[str, str]] = []
    for path in paths:
        texts.append((path, read_text_file(path)))
    return convert(texts, keep_flavors)


def _documents(source: str, text: str) -> list[object]:
    """The documents of one file: JSON when it starts with ``{`` or ``[``, else YAML."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except (json.JSONDecodeError, RecursionError) as err:
            line = getattr(err, "lineno", None)
            where = f"line {line}" if line else "file"
            raise ScenarioError(source, where, f"invalid JSON: {err}") from None
    from fairshare.workload.yaml_reading import read_yaml_documents  # noqa: PLC0415

    return [d for d in read_yaml_documents(text, source) if d is not None]


def _objects(source: str, text: str, warnings: list[str]) -> list[_Object]:
    """The Kueue objects of one file (lists flattened), each checked for its shape."""
    out: list[_Object] = []
    for d, document in enumerate(_documents(source, text), 1):
        where = f"document {d}"
        items: list[tuple[str, object]] = [(where, document)]
        if isinstance(document, dict) and document.get("kind") == "List":
            listed = document.get("items")
            if not isinstance(listed, list):
                raise ScenarioError(source, f"{where}.items", "a List must have a list of items")
            items = [(f"{where}.items[{i}]", item) for i, item in enumerate(listed)]
        for at, item in items:
            obj = _object(source, at, item, warnings)
            if obj is not None:
                out.append(obj)
    return out


def _object(source: str, at: str, item: object, warnings: list[str]) -> _Object | None:
    if not isinstance(item, dict):
        raise ScenarioError(
            source, at, f"must be a Kubernetes object (a mapping), got {shown_value(item)}"
        )
    kind = item.get("kind")
    if not isinstance(kind, str):
        raise ScenarioError(source, f"{at}.kind", "missing; every object names its kind")
    if kind == "ConfigMap":
        return _config_map(source, at, item, warnings)
    if kind not in KINDS:
        warnings.append(f"{source}: {at}: kind {kind!r} is not read (only {', '.join(KINDS)})")
        return None
    if kind == "Configuration":
        return _Object(kind, "", None, {}, item, source, at)
    meta = item.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name or "/" in name:
        raise ScenarioError(
            source,
            f"{at}.metadata.name",
            f"a {kind} needs a name (without '/'), got {shown_value(name)}",
        )
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    if namespace is not None and not isinstance(namespace, str):
        raise ScenarioError(source, f"{at}.metadata.namespace", "must be a string")
    spec = item.get("spec", {})
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise ScenarioError(source, f"{at}.spec", f"must be a mapping, got {shown_value(spec)}")
    return _Object(kind, name, namespace, spec, item, source, f"{at} ({kind} {name!r})")


def _config_map(source: str, at: str, item: dict[str, Any], warnings: list[str]) -> _Object | None:
    """Kueue's Configuration inside a ConfigMap's data (as Kueue's manifests ship it)."""
    data = item.get("data")
    if isinstance(data, dict):
        from fairshare.workload.yaml_reading import read_yaml_documents  # noqa: PLC0415

        for key, value in data.items():
            if isinstance(value, str) and "Configuration" in value:
                for document in read_yaml_documents(value, f"{source}: {at}.data.{key}"):
                    if isinstance(document, dict) and document.get("kind") == "Configuration":
                        return _Object(
                            "Configuration", "", None, {}, document, source, f"{at}.data.{key}"
                        )
    warnings.append(f"{source}: {at}: a ConfigMap without Kueue's Configuration is not read")
    return None


def _get(mapping: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in mapping:
            return mapping[key]
    return None


def _weight(
    obj: _Object, warnings: list[str], path: str = "spec.fairSharing.weight"
) -> float | None:
    fair = obj.spec.get("fairSharing")
    if fair is None:
        return None
    if not isinstance(fair, dict):
        raise _Bad("spec.fairSharing", "must be a mapping with weight")
    if "weight" not in fair or fair["weight"] is None:
        return None
    try:
        weight = parse_quantity(fair["weight"])
    except ValueError as err:
        raise _Bad(path, str(err)) from None
    if weight == 0:
        warnings.append(
            f"{obj.file}: {obj.where}: {path}: Kueue's weight 0 becomes the smallest weight a "
            f"scenario accepts, {MIN_WEIGHT:g}, which the kueue policies read as 0"
        )
        return MIN_WEIGHT
    if weight < MIN_WEIGHT or weight > MAX_WEIGHT:
        raise _Bad(path, f"must be 0 or from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}, got {weight:g}")
    return weight


def _quota(obj: _Object, keep_flavors: bool) -> _Quota:
    """A ClusterQueue's or Cohort's resourceGroups, per resource (or NAME@FLAVOR)."""
    out = _Quota()
    groups = obj.spec.get("resourceGroups") or []
    if not isinstance(groups, list):
        raise _Bad("spec.resourceGroups", "must be a list")
    for g, group in enumerate(groups):
        at = f"spec.resourceGroups[{g}]"
        if not isinstance(group, dict):
            raise _Bad(at, "must be a mapping with coveredResources and flavors")
        flavors = group.get("flavors") or []
        if not isinstance(flavors, list):
            raise _Bad(f"{at}.flavors", "must be a list")
        for f, flavor in enumerate(flavors):
            fat = f"{at}.flavors[{f}]"
            if not isinstance(flavor, dict) or not isinstance(flavor.get("name"), str):
                raise _Bad(fat, "must be a mapping with a name and resources")
            fname = flavor["name"]
            resources = flavor.get("resources") or []
            if not isinstance(resources, list):
                raise _Bad(f"{fat}.resources", "must be a list")
            for r, res in enumerate(resources):
                rat = f"{fat}.resources[{r}]"
                if not isinstance(res, dict) or not isinstance(res.get("name"), str):
                    raise _Bad(rat, "must be a mapping with a name and nominalQuota")
                base = res["name"]
                name = f"{base}@{fname}" if keep_flavors else base
                amounts: dict[str, float | None] = {}
                for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                    value = res.get(key)
                    if value is None:
                        amounts[key] = 0.0 if key == "nominalQuota" else None
                        continue
                    try:
                        amounts[key] = parse_quantity(value)
                    except ValueError as err:
                        raise _Bad(f"{rat}.{key}", str(err)) from None
                nominal = amounts["nominalQuota"] or 0.0
                if name not in out.nominal:
                    out.order.append(name)
                    out.nominal[name] = 0.0
                    out.borrowing[name] = 0.0
                    out.lending[name] = 0.0
                out.nominal[name] += nominal
                for key, table in (
                    ("borrowingLimit", out.borrowing),
                    ("lendingLimit", out.lending),
                ):
                    got = amounts[key]
                    held = table[name]
                    table[name] = None if got is None or held is None else held + got
                out.flavors.setdefault(fname, {})
                out.flavors[fname][name] = out.flavors[fname].get(name, 0.0) + nominal
    return out


def _preemption(obj: _Object) -> dict[str, Any] | None:
    spec = obj.spec.get("preemption")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise _Bad("spec.preemption", "must be a mapping")
    out: dict[str, Any] = {}
    for key, ours, allowed in (
        ("reclaimWithinCohort", "reclaim_within_cohort", _RECLAIM),
        ("withinClusterQueue", "within_cluster_queue", _WITHIN),
    ):
        value = spec.get(key)
        if value is None:
            continue
        if value not in allowed:
            raise _Bad(
                f"spec.preemption.{key}",
                f"must be one of {', '.join(allowed)}, got {shown_value(value)}",
            )
        out[ours] = _PREEMPTION[value]
    borrow = spec.get("borrowWithinCohort")
    if borrow is not None:
        if not isinstance(borrow, dict):
            raise _Bad("spec.preemption.borrowWithinCohort", "must be a mapping with policy")
        policy = borrow.get("policy", "Never")
        if policy not in _BORROW:
            raise _Bad(
                "spec.preemption.borrowWithinCohort.policy",
                f"must be one of {', '.join(_BORROW)}, got {shown_value(policy)}",
            )
        entry: dict[str, Any] = {"policy": _PREEMPTION[policy]}
        threshold = borrow.get("maxPriorityThreshold")
        if threshold is not None:
            if isinstance(threshold, bool) or not isinstance(threshold, int):
                raise _Bad(
                    "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
                    f"must be an integer, got {shown_value(threshold)}",
                )
            entry["max_priority_threshold"] = threshold
        out["borrow_within_cohort"] = entry
    return out or None


_IGNORED_CQ = {
    "queueingStrategy": "the queueing strategy is BestEffortFIFO",
    "namespaceSelector": "every LocalQueue's namespace is admitted",
    "flavorFungibility": "flavors are summed per resource or kept apart, never tried in turn",
    "admissionChecks": "admission checks are not modelled",
    "admissionChecksStrategy": "admission checks are not modelled",
    "stopPolicy": "a stopped ClusterQueue is not modelled",
    "concurrentAdmissionPolicy": "concurrent admission is not modelled",
}


def convert(texts: Sequence[tuple[str, str]], keep_flavors: bool = False) -> ImportResult:
    """Convert Kueue's objects (the texts of files, by name) into a scenario (see the
    module).

    Parameters
    ----------
    texts : sequence of (str, str)
        Per file, its name and text.
    keep_flavors : bool
        Keep each flavor of a resource apart, as resource ``NAME@FLAVOR``.

    Returns
    -------
    ImportResult

    Raises
    ------
    ScenarioError
        As :func:`read_kueue`.
    """
    warnings: list[str] = []
    objects: list[_Object] = []
    for source, text in texts:
        objects.extend(_objects(source, text, warnings))
    try:
        return _convert(objects, keep_flavors, warnings)
    except _Located as err:
        raise ScenarioError(err.file, err.where, err.what) from None


class _Located(FairshareError):
    def __init__(self, obj: _Object, where: str, what: str) -> None:
        super().__init__(obj.file, where, what)
        self.file = obj.file
        self.where = f"{obj.where} {where}" if where else obj.where
        self.what = what


def _convert(objects: list[_Object], keep_flavors: bool, warnings: list[str]) -> ImportResult:
    flavors: dict[str, _Object] = {}
    cqs: dict[str, _Object] = {}
    cohorts: dict[str, _Object] = {}
    lqs: list[_Object] = []
    config: _Object | None = None
    for obj in objects:
        table = {"ResourceFlavor": flavors, "ClusterQueue": cqs, "Cohort": cohorts}.get(obj.kind)
        if table is not None:
            if obj.name in table:
                raise _Located(obj, "metadata.name", f"{obj.kind} {obj.name!r} is defined twice")
            table[obj.name] = obj
        elif obj.kind == "LocalQueue":
            lqs.append(obj)
        else:
            config = obj
    for obj in flavors.values():
        for key in ("nodeLabels", "nodeTaints", "tolerations", "topologyName"):
            if obj.spec.get(key):
                warnings.append(
                    f"{obj.file}: {obj.where}: spec.{key}: nodes are not modelled (one machine "
                    "per flavor holds its quota)"
                )
    # Cohorts: parents, implicit ones, cycles.
    parent: dict[str, str | None] = {}
    for name, obj in cohorts.items():
        up = _get(obj.spec, "parentName", "parent")
        if up is not None and (not isinstance(up, str) or not up):
            raise _Located(
                obj, "spec.parentName", f"must be a cohort's name, got {shown_value(up)}"
            )
        parent[name] = up or None
    explicit = bool(cohorts)
    for name in list(parent):
        up = parent[name]
        if up is not None and up not in parent:
            # A parent that no Cohort defines exists implicitly, as in Kueue.
            parent[up] = None
    cq_cohort: dict[str, str | None] = {}
    for name, obj in cqs.items():
        co = _get(obj.spec, "cohortName", "cohort")
        if co is not None and (not isinstance(co, str) or not co):
            raise _Located(
                obj, "spec.cohortName", f"must be a cohort's name, got {shown_value(co)}"
            )
        cq_cohort[name] = co or None
        if co and co not in parent:
            if explicit:
                raise _Located(
                    obj,
                    "spec.cohortName",
                    f"names cohort {co!r}, which no Cohort defines (defined: "
                    f"{', '.join(sorted(parent))}); a typo?",
                )
            parent[co] = None
    for name, first in parent.items():
        seen = [name]
        up = first
        while up is not None:
            if up in seen:
                cycle = " -> ".join([*seen[seen.index(up) :], up])
                raise _Located(cohorts[name], "spec.parentName", f"cohorts form a cycle: {cycle}")
            seen.append(up)
            up = parent[up]

    # Quotas, by node: ("C", cohort) or ("Q", ClusterQueue) (Kueue lets the two share names).
    quotas: dict[tuple[str, str], _Quota] = {}
    weights: dict[tuple[str, str], float | None] = {}
    preemption: dict[str, dict[str, Any] | None] = {}
    for obj in [*cohorts.values(), *cqs.values()]:
        node = ("C" if obj.kind == "Cohort" else "Q", obj.name)
        try:
            quotas[node] = _quota(obj, keep_flavors)
            weights[node] = _weight(obj, warnings)
            if obj.kind == "ClusterQueue":
                preemption[obj.name] = _preemption(obj)
                for key, why in _IGNORED_CQ.items():
                    value = obj.spec.get(key)
                    if value and not (key == "queueingStrategy" and value == "BestEffortFIFO"):
                        warnings.append(
                            f"{obj.file}: {obj.where}: spec.{key}: not modelled ({why})"
                        )
        except _Bad as bad:
            raise _Located(obj, bad.where, bad.what) from None
    for name in parent:
        quotas.setdefault(("C", name), _Quota())
        weights.setdefault(("C", name), None)
    resources: list[str] = []
    for q in quotas.values():
        for r in q.order:
            if r not in resources:
                resources.append(r)
    # Queues, parents first: a cohort's scenario quota is its own plus its children's.
    children: dict[tuple[str, str], list[tuple[str, str]]] = {("C", name): [] for name in parent}
    for name, up in parent.items():
        if up is not None:
            children[("C", up)].append(("C", name))
    for name, co in cq_cohort.items():
        if co is not None:
            children[("C", co)].append(("Q", name))
    totals: dict[tuple[str, str], dict[str, float]] = {}

    def total(node: tuple[str, str]) -> dict[str, float]:
        known = totals.get(node)
        if known is not None:
            return known
        own = dict(quotas[node].nominal)
        for child in children.get(node, []):
            for r, v in total(child).items():
                own[r] = own.get(r, 0.0) + v
        totals[node] = own
        return own

    queues: list[dict[str, Any]] = []
    paths: dict[tuple[str, str], str] = {}

    def add_queue(node: tuple[str, str], path: str) -> None:
        paths[node] = path
        entry: dict[str, Any] = {"path": path}
        if weights[node] is not None:
            entry["weight"] = weights[node]
        amounts = total(node)
        if amounts:
            entry["quota"] = {r: amounts[r] for r in resources if r in amounts}
            q = quotas[node]
            for key, table in (("borrowing_limit", q.borrowing), ("lending_limit", q.lending)):
                limits = {r: v for r, v in table.items() if v is not None}
                if limits:
                    entry[key] = limits
        if node[0] == "Q" and preemption.get(node[1]):
            entry["preemption"] = preemption[node[1]]
        queues.append(entry)

    def walk(node: tuple[str, str], path: str) -> None:
        add_queue(node, path)
        for child in children.get(node, []):
            walk(child, f"{path}/{child[1]}")

    for name, up in parent.items():
        if up is None:
            walk(("C", name), name)
    for name, co in cq_cohort.items():
        if co is None:
            add_queue(("Q", name), name)
    # Users: the LocalQueues.
    users: list[dict[str, Any]] = []
    seen_users: dict[str, _Object] = {}
    for obj in lqs:
        cq = obj.spec.get("clusterQueue")
        if not isinstance(cq, str) or cq not in cqs:
            raise _Located(
                obj,
                "spec.clusterQueue",
                f"names ClusterQueue {shown_value(cq)}, which the files do not define"
                + (f" (defined: {', '.join(sorted(cqs))})" if cqs else ""),
            )
        name = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
        if name in seen_users:
            raise _Located(obj, "metadata.name", f"LocalQueue {name!r} is defined twice")
        seen_users[name] = obj
        try:
            weight = _weight(obj, warnings)
        except _Bad as bad:
            raise _Located(obj, bad.where, bad.what) from None
        entry: dict[str, Any] = {"name": name, "queue": paths[("Q", cq)]}
        order = quotas[("Q", cq)].order
        first = order[0] if order else (resources[0] if resources else None)
        if first is not None:
            entry["demand"] = {first: 1.0}
        if weight is not None:
            entry["weight"] = weight
        users.append(entry)
    # Machines: one per flavor, holding its total quota.
    per_flavor: dict[str, dict[str, float]] = {}
    for q in quotas.values():
        for fname, amounts in q.flavors.items():
            row = per_flavor.setdefault(fname, {})
            for r, v in amounts.items():
                row[r] = row.get(r, 0.0) + v
    machines: list[dict[str, Any]] = []
    for fname in [*flavors, *(f for f in per_flavor if f not in flavors)]:
        row = {r: v for r, v in per_flavor.get(fname, {}).items() if v > 0}
        if not row:
            if fname in flavors:
                obj = flavors[fname]
                warnings.append(f"{obj.file}: {obj.where}: no quota of this flavor: no machine")
            continue
        machines.append({"name": fname, "capacity": {r: row[r] for r in resources if r in row}})
    scenario: dict[str, Any] = {}
    if resources:
        scenario["resources"] = resources
    scenario["machines"] = machines
    if queues:
        scenario["queues"] = queues
    if users:
        scenario["users"] = users
    if config is not None:
        _configuration(config, scenario, warnings)
    return ImportResult(scenario, warnings)


def _configuration(obj: _Object, scenario: dict[str, Any], warnings: list[str]) -> None:
    """Kueue's Configuration: admission fair sharing's half-life, fair sharing's switch."""
    from fairshare.workload.schema import SCENARIO_FIELDS  # noqa: PLC0415

    data = obj.data
    fair = data.get("fairSharing")
    if isinstance(fair, dict):
        if fair.get("enable") is False:
            warnings.append(
                f"{obj.file}: {obj.where}: fairSharing.enable is false: simulate with --policy "
                "kueue-classical (kueue has fair sharing on)"
            )
        if fair.get("preemptionStrategies"):
            warnings.append(
                f"{obj.file}: {obj.where}: fairSharing.preemptionStrategies: the kueue policy "
                "uses Kueue's default strategies (LessThanOrEqualToFinalShare, "
                "LessThanInitialShare)"
            )
    elif fair is None:
        warnings.append(
            f"{obj.file}: {obj.where}: fairSharing is not enabled: simulate with --policy "
            "kueue-classical (kueue has fair sharing on)"
        )
    afs = data.get("admissionFairSharing")
    if isinstance(afs, dict):
        half = afs.get("usageHalfLifeTime")
        if half is not None:
            try:
                seconds = parse_duration(half)
            except ValueError as err:
                raise _Located(obj, "admissionFairSharing.usageHalfLifeTime", str(err)) from None
            if "usage_half_life" in SCENARIO_FIELDS:
                scenario["usage_half_life"] = seconds
            else:
                warnings.append(
                    f"{obj.file}: {obj.where}: admissionFairSharing.usageHalfLifeTime: "
                    f"run with --usage-half-life {seconds:g} (this scenario format has no "
                    "usage_half_life)"
                )
        for key in ("resourceWeights", "usageSamplingInterval"):
            if afs.get(key):
                warnings.append(
                    f"{obj.file}: {obj.where}: admissionFairSharing.{key}: not modelled "
                    "(resource weights 1; usage decays exactly, no sampling)"
                )
