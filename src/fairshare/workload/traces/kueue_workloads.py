r"""Kueue's Workloads as a history: ``kubectl get workloads -A -o yaml`` (or ``-o json``)
(SPEC section 8.2).

Input: one YAML or JSON file (JSON when it starts with ``{`` or ``[``), one or many
documents, each a ``Workload`` (``kueue.x-k8s.io/v1beta1`` or ``v1beta2``) or a ``kind: List``
of them, read within the limits of a scenario file. Objects of other kinds are skipped and
counted in one warning.

Each Workload becomes one job (Kueue's unit of admission, its ``workload.md`` concept page):

- name ``NAMESPACE/NAME``; tenant ``NAMESPACE/QUEUE`` (``spec.queueName``, the LocalQueue),
  the user ``fairshare import kueue`` makes of that LocalQueue;
- submitted at ``metadata.creationTimestamp``, in seconds after the history's first;
- ``priority``: ``spec.priority`` (0 when absent);
- tasks: the sum of ``spec.podSets[].count``, all started together (a gang: Kueue admits a
  Workload whole). Each pod's request is Kubernetes' effective request: the sum of its
  ``containers``' requests (a container's ``limits`` where it sets no request), at least
  each ``initContainer``'s, plus ``overhead``. One job has one demand per task, so a
  Workload of several podSets gives each task the mean pod's request (the podSets' total
  over their pods): the total, which Kueue's quota admits against, is exact;
- resources keep Kubernetes' names and base units (``cpu`` in CPUs, ``memory`` in bytes,
  ``nvidia.com/gpu``), as ``fairshare import kueue`` names them; quantities (``500m``,
  ``2Gi``, ``1.5``, ``1e3``) are read by the importer's
  :func:`~fairshare.workload.imports.kueue.parse_quantity`. A scenario imported with
  ``--keep-flavors`` (resources ``NAME@FLAVOR``) takes the flavor of
  ``status.admission.podSetAssignments[].flavors``. A resource the scenario lacks is left
  out (one warning names it);
- duration: from the ``lastTransitionTime`` of the ``Admitted`` condition (else
  ``QuotaReserved``) with status ``True`` to that of ``Finished``: the recorded run time of
  its last admission (``Finished`` with reason ``Succeeded`` or ``Failed`` alike).

Skipped, and counted in one ``warning:`` line: a Workload without a ``Finished`` condition
(pending, running, evicted and requeued, or deactivated: its run time is not known), and a
finished one that holds no admission (it never ran, or finished after being evicted).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> cluster = Cluster.build(["cpu", "memory"], [Machine("default", np.array([64.0, 2.0**38]))])
>>> text = '''
... apiVersion: v1
... kind: List
... items:
... - apiVersion: kueue.x-k8s.io/v1beta2
...   kind: Workload
...   metadata: {name: job-a, namespace: team-a, creationTimestamp: "2024-05-01T10:00:00Z"}
...   spec:
...     queueName: user-queue
...     priority: 100
...     podSets:
...     - name: main
...       count: 3
...       template:
...         spec:
...           containers:
...           - name: c
...             resources: {requests: {cpu: 500m, memory: 1Gi}}
...   status:
...     conditions:
...     - {type: QuotaReserved, status: "True", lastTransitionTime: "2024-05-01T10:00:30Z"}
...     - {type: Admitted, status: "True", lastTransitionTime: "2024-05-01T10:00:30Z"}
...     - {type: Finished, status: "True", reason: Succeeded,
...        lastTransitionTime: "2024-05-01T10:10:30Z"}
... '''
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "workloads.yaml"
...     _ = path.write_text(text)
...     jobs = list(read_kueue_workloads(path, cluster))
>>> [(j.name, j.user, j.tasks, j.demand.tolist(), j.duration.seconds, j.min_tasks, j.priority)
...  for j in jobs]
[('team-a/job-a', 'team-a/user-queue', 3, [0.5, 1073741824.0], 600.0, 3, 100)]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from fairshare.cluster import Cluster, FloatArray
from fairshare.errors import FairshareError
from fairshare.workload.errors import ScenarioError, shown_value
from fairshare.workload.model import MAX_PRIORITY, MAX_SECONDS, MIN_AMOUNT, FixedDuration, Job
from fairshare.workload.traces._common import MAX_RECORD_TASKS, TraceJobs, some_names

__all__ = ["read_kueue_workloads"]

_ADMITTED = ("Admitted", "QuotaReserved")
"""The conditions whose time starts a Workload's run, in order of preference."""


@dataclass(frozen=True)
class _Kept:
    submit: float
    order: int
    name: str
    tenant: str
    tasks: int
    demand: FloatArray
    duration: float
    priority: int


class _Bad(FairshareError):
    """A field that cannot be read: its path and what is wrong (raised as ScenarioError)."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(where, what)
        self.where = where
        self.what = what


def _time(value: object, where: str) -> float:
    """An RFC 3339 time (``2024-05-01T10:00:00Z``) in seconds since 1970."""
    if isinstance(value, datetime):  # YAML reads an unquoted timestamp as one
        stamp = value
    else:
        try:
            if not isinstance(value, str):
                raise ValueError(value)
            stamp = datetime.fromisoformat(value)
        except ValueError:
            raise _Bad(
                where, f"must be a time such as 2024-05-01T10:00:00Z, got {shown_value(value)}"
            ) from None
    if stamp.tzinfo is None:
        raise _Bad(where, f"must name its zone (Z or +HH:MM), got {shown_value(value)}")
    return stamp.timestamp()


def _mapping(value: object, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Bad(where, f"must be a mapping, got {shown_value(value)}")
    return value


def _list(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Bad(where, f"must be a list, got {shown_value(value)}")
    return value


def _requests(container: object, where: str) -> dict[str, float]:
    """A container's requests (its limits where it sets no request), in base units."""
    from fairshare.workload.imports.kueue import parse_quantity  # noqa: PLC0415

    resources = _mapping(_mapping(container, where).get("resources"), f"{where}.resources")
    out: dict[str, float] = {}
    for key in ("limits", "requests"):  # requests override limits
        for name, value in _mapping(resources.get(key), f"{where}.resources.{key}").items():
            try:
                out[str(name)] = parse_quantity(value)
            except ValueError as err:
                raise _Bad(f"{where}.resources.{key}.{name}", str(err)) from None
    return out


def _pod(spec: dict[str, Any], where: str) -> dict[str, float]:
    """A pod's effective request: containers summed, at least each init container, plus
    overhead (Kubernetes' pod resource requests)."""
    from fairshare.workload.imports.kueue import parse_quantity  # noqa: PLC0415

    total: dict[str, float] = {}
    for c, container in enumerate(_list(spec.get("containers"), f"{where}.containers")):
        for name, value in _requests(container, f"{where}.containers[{c}]").items():
            total[name] = total.get(name, 0.0) + value
    inits = _list(spec.get("initContainers"), f"{where}.initContainers")
    for c, container in enumerate(inits):
        for name, value in _requests(container, f"{where}.initContainers[{c}]").items():
            total[name] = max(total.get(name, 0.0), value)
    for name, value in _mapping(spec.get("overhead"), f"{where}.overhead").items():
        try:
            total[str(name)] = total.get(str(name), 0.0) + parse_quantity(value)
        except ValueError as err:
            raise _Bad(f"{where}.overhead.{name}", str(err)) from None
    return total


class _Reader:
    def __init__(self, path: Path, cluster: Cluster) -> None:
        self.path = path
        self.cluster = cluster
        self.index = {name: k for k, name in enumerate(cluster.resources)}
        self.kept: list[_Kept] = []
        self.names: dict[str, str] = {}
        self.unfinished = 0
        self.never = 0
        self.other_kinds = 0
        self.dropped: dict[str, int] = {}
        self.demands: dict[tuple[float, ...], FloatArray] = {}

    def item(self, at: str, item: object) -> None:
        if not isinstance(item, dict):
            raise _Bad(at, f"must be a Kubernetes object (a mapping), got {shown_value(item)}")
        if item.get("kind") != "Workload":
            self.other_kinds += 1
            return
        meta = _mapping(item.get("metadata"), f"{at}.metadata")
        name, namespace = meta.get("name"), meta.get("namespace") or ""
        if not isinstance(name, str) or not name or not isinstance(namespace, str):
            raise _Bad(f"{at}.metadata.name", f"a Workload needs a name, got {shown_value(name)}")
        full = f"{namespace}/{name}" if namespace else name
        at = f"{at} (Workload {full!r})"
        if full in self.names:
            raise _Bad(f"{at}.metadata.name", f"repeats ({self.names[full]}); names are unique")
        self.names[full] = at
        spec = _mapping(item.get("spec"), f"{at}.spec")
        status = _mapping(item.get("status"), f"{at}.status")
        conditions: dict[str, dict[str, Any]] = {}
        for c, entry in enumerate(_list(status.get("conditions"), f"{at}.status.conditions")):
            cond = _mapping(entry, f"{at}.status.conditions[{c}]")
            if cond.get("status") == "True" and isinstance(cond.get("type"), str):
                conditions[cond["type"]] = {**cond, "_at": f"{at}.status.conditions[{c}]"}
        finished = conditions.get("Finished")
        if finished is None:
            self.unfinished += 1
            return
        started = next((conditions[t] for t in _ADMITTED if t in conditions), None)
        if started is None:
            self.never += 1
            return
        submit = _time(meta.get("creationTimestamp"), f"{at}.metadata.creationTimestamp")
        start = _time(started.get("lastTransitionTime"), f"{started['_at']}.lastTransitionTime")
        end = _time(finished.get("lastTransitionTime"), f"{finished['_at']}.lastTransitionTime")
        if not submit <= start <= end:
            raise _Bad(
                f"{at}.status.conditions",
                f"creation ({meta.get('creationTimestamp')}), {started['type']} "
                f"({started.get('lastTransitionTime')}) and Finished "
                f"({finished.get('lastTransitionTime')}) must be in that order",
            )
        queue = spec.get("queueName")
        if not isinstance(queue, str) or not queue:
            raise _Bad(f"{at}.spec.queueName", f"must name a LocalQueue, got {shown_value(queue)}")
        priority = spec.get("priority", 0)
        if priority is None:
            priority = 0
        if (
            isinstance(priority, bool)
            or not isinstance(priority, int)
            or abs(priority) > MAX_PRIORITY
        ):
            raise _Bad(
                f"{at}.spec.priority",
                f"must be a whole number from {-MAX_PRIORITY:,} to {MAX_PRIORITY:,}, "
                f"got {shown_value(priority)}",
            )
        tasks, demand = self.demand(spec, status, at)
        self.kept.append(
            _Kept(
                submit,
                len(self.kept),
                full,
                f"{namespace}/{queue}" if namespace else queue,
                tasks,
                demand,
                min(end - start, MAX_SECONDS),
                priority,
            )
        )

    def demand(
        self, spec: dict[str, Any], status: dict[str, Any], at: str
    ) -> tuple[int, FloatArray]:
        """The pods and each one's (mean) request, in the cluster's resource order."""
        flavors: dict[str, str] = {}
        admission = _mapping(status.get("admission"), f"{at}.status.admission")
        for assignment in _list(admission.get("podSetAssignments"), f"{at}.status.admission"):
            if isinstance(assignment, dict) and isinstance(assignment.get("flavors"), dict):
                flavors.update({str(k): str(v) for k, v in assignment["flavors"].items()})
        total: dict[str, float] = {}
        tasks = 0
        pod_sets = _list(spec.get("podSets"), f"{at}.spec.podSets")
        for p, entry in enumerate(pod_sets):
            where = f"{at}.spec.podSets[{p}]"
            pod_set = _mapping(entry, where)
            count = pod_set.get("count", 1)
            if (
                isinstance(count, bool)
                or not isinstance(count, int)
                or not 0 <= count <= MAX_RECORD_TASKS
            ):
                raise _Bad(
                    f"{where}.count",
                    f"must be a whole number from 0 to {MAX_RECORD_TASKS:,}, "
                    f"got {shown_value(count)}",
                )
            template = _mapping(pod_set.get("template"), f"{where}.template")
            pod = _pod(
                _mapping(template.get("spec"), f"{where}.template.spec"), f"{where}.template.spec"
            )
            for name, value in pod.items():
                total[name] = total.get(name, 0.0) + value * count
            tasks += count
        if tasks == 0:
            raise _Bad(f"{at}.spec.podSets", "must hold at least one pod (a count > 0)")
        vector = [0.0] * len(self.index)
        for name, value in total.items():
            if value <= 0:
                continue
            at_resource = self.index.get(name)
            if at_resource is None and name in flavors:
                at_resource = self.index.get(f"{name}@{flavors[name]}")
            if at_resource is None:
                self.dropped[name] = self.dropped.get(name, 0) + 1
                continue
            share = value / tasks
            vector[at_resource] = share if share >= MIN_AMOUNT else MIN_AMOUNT
        if not any(vector):
            raise _Bad(
                f"{at}.spec.podSets",
                f"requests none of the scenario's resources ({', '.join(self.index)})",
            )
        key = tuple(vector)
        found = self.demands.get(key)
        if found is None:
            found = np.array(vector, dtype=np.float64)
            found.setflags(write=False)
            self.demands[key] = found
        return tasks, found


def _documents(path: Path) -> list[object]:
    """The documents of the file: JSON when it starts with ``{`` or ``[``, else YAML."""
    from fairshare.workload.reading import read_json, read_text_file  # noqa: PLC0415

    text = read_text_file(path)
    if text.lstrip().startswith(("{", "[")):
        return [read_json(text, str(path))]
    from fairshare.workload.yaml_reading import read_yaml_documents  # noqa: PLC0415

    return [d for d in read_yaml_documents(text, str(path)) if d is not None]


def read_kueue_workloads(path: Path, cluster: Cluster, users: Sequence[str] = ()) -> TraceJobs:
    r"""The finished Workloads of ``kubectl get workloads -A -o yaml|json`` as jobs, in
    creation order, on ``cluster``.

    Parameters
    ----------
    path : Path
        The file.
    cluster : Cluster
        The machines (resources named as Kubernetes names them: ``cpu``, ``memory``,
        ``nvidia.com/gpu``).
    users : sequence of str
        The scenario's user names (``NAMESPACE/LOCALQUEUE``); jobs of other LocalQueues are
        counted in a warning.

    Returns
    -------
    TraceJobs
        One gang per finished Workload (module docstring); ``warnings`` count the skipped.

    Raises
    ------
    ScenarioError
        The file cannot be read or parsed, or a Workload has a field that cannot be read
        (its path named), conditions out of order, or requests none of the resources.
    """
    documents = _documents(path)
    reader = _Reader(path, cluster)
    try:
        for d, document in enumerate(documents, 1):
            where = f"document {d}"
            if isinstance(document, dict) and document.get("kind") == "List":
                items = _list(document.get("items"), f"{where}.items")
                for i, item in enumerate(items):
                    reader.item(f"{where}.items[{i}]", item)
            else:
                reader.item(where, document)
    except _Bad as bad:
        raise ScenarioError(str(path), bad.where, bad.what) from None
    warnings: list[str] = []
    return TraceJobs(_replay(reader, set(users), warnings), warnings)


def _replay(reader: _Reader, users: set[str], warnings: list[str]) -> Iterator[Job]:
    kept = sorted(reader.kept, key=lambda k: (k.submit, k.order))
    origin = kept[0].submit if kept else 0.0
    unknown: dict[str, int] = {}
    for k in kept:
        if users and k.tenant not in users:
            unknown[k.tenant] = unknown.get(k.tenant, 0) + 1
        yield Job(
            name=k.name,
            submit=k.submit - origin,
            user=k.tenant,
            demand=k.demand,
            tasks=k.tasks,
            duration=FixedDuration(k.duration),
            priority=k.priority,
            min_tasks=k.tasks,
        )
    path = reader.path
    skipped = reader.unfinished + reader.never
    if skipped:
        warnings.append(
            f"warning: {path}: {skipped} Workload(s) skipped: {reader.unfinished} not finished "
            f"(pending, running, evicted or deactivated: run time unknown), {reader.never} "
            "finished without an admission (never ran); only finished, admitted Workloads are "
            "replayed"
        )
    if reader.other_kinds:
        warnings.append(
            f"warning: {path}: {reader.other_kinds} object(s) of other kinds than Workload "
            "are not read"
        )
    for name, count in reader.dropped.items():
        warnings.append(
            f"warning: {path}: {count} Workload(s) request {name}, which the scenario has no "
            f"resource for (resources: {', '.join(reader.cluster.resources)}); it is left out"
        )
    if unknown:
        jobs = sum(unknown.values())
        names = some_names(list(unknown))
        warnings.append(
            f"warning: {path}: {jobs} Workload(s) of {len(unknown)} LocalQueue(s) the scenario "
            f"lacks ({names}): each is a user of its own at the root"
        )
