"""Alibaba GPU cluster trace 2023 (``cluster-trace-gpu-v2023``, "openb"): pods and nodes.

Pod list columns (``alibaba-gpu-v2023/SOURCE.md``, CSV with a header): ``name``,
``cpu_milli``, ``memory_mib``, ``num_gpu`` (0-8), ``gpu_milli`` (the GPU fraction of a
GPU-sharing pod, which has ``num_gpu`` 1), ``gpu_spec`` (allowed GPU models separated by
``|``; empty = any), ``qos``, ``pod_phase``, ``creation_time``, ``deletion_time``,
``scheduled_time`` (seconds; empty for pods that were never scheduled). Node list columns:
``sn`` (node name), ``cpu_milli``, ``memory_mib``, ``gpu``, ``model`` (GPU model; empty for
CPU-only nodes).

Mapping, one job per pod (the trace has no users: each pod is its own user):

- demand per task: ``cpu`` = cpu_milli / 1000 cores, ``mem`` = memory_mib / 1024 GiB,
  ``gpu`` = num_gpu, or gpu_milli / 1000 for a GPU-sharing pod (num_gpu 1, gpu_milli below
  1000), so a pod asking for 46% of a GPU demands 0.46 of one;
- one task, submitted at ``creation_time``, running from ``scheduled_time`` to
  ``deletion_time`` (a pod that was never scheduled keeps its whole lifetime from creation
  to deletion, the time it wanted the resources);
- ``gpu_spec`` becomes the constraint ``gpu_model in ['V100M16', 'V100M32']``.

Machines: the scenario's, when it gives them (its resources named ``cpu``, ``mem`` or
``memory`` and ``gpu``, in cores, GiB and GPUs; a pod demanding a resource the scenario lacks
is an error); otherwise the node list beside the pod list
(``openb_node_list_all_node.csv``, else ``openb_node_list_gpu_node.csv``): resources
``cpu, mem, gpu`` in those units, each GPU node with the attribute ``gpu_model``.

Bounds (a record beyond them is rejected, naming its line and field): times are numbers of
seconds, 0 or from ``MIN_SECONDS`` to ``MAX_SECONDS`` (1e-6 to 1e15); each amount, in the
units above, is 0 or from ``MIN_AMOUNT`` to ``MAX_AMOUNT`` (1e-9 to 1e15), as in a scenario;
pod and node names are unique.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from fairshare.cluster import Cluster, FloatArray, Machine
from fairshare.cluster.constraints import Constraint, parse_constraint
from fairshare.workload.model import MAX_AMOUNT, MIN_AMOUNT, MIN_SECONDS, FixedDuration, Job
from fairshare.workload.traces._common import (
    MAX_SECONDS,
    JobNames,
    TraceError,
    amount,
    check_readable,
    numbered_lines,
    resource_positions,
    shown,
)

__all__ = [
    "NODE_LISTS",
    "RESOURCES",
    "machines_beside",
    "node_list_beside",
    "read_alibaba_nodes",
    "read_alibaba_pods",
]

RESOURCES = ("cpu", "mem", "gpu")
"""The resources of a cluster built from the node list: cores, GiB, GPUs."""
NODE_LISTS = ("openb_node_list_all_node.csv", "openb_node_list_gpu_node.csv")
"""Node lists looked for beside the pod list, in order of preference."""
_ALIASES = {"cpu": ("cpu",), "mem": ("mem", "memory"), "gpu": ("gpu",)}
_POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
_MILLI = 1000.0
_MIB_PER_GIB = 1024.0


def _header(path: Path, required: tuple[str, ...]) -> dict[str, int]:
    """The positions of the ``required`` columns in the header; an error for a missing one."""
    for _, text in numbered_lines(path):
        columns = next(csv.reader([text]))
        missing = [c for c in required if c not in columns]
        if missing:
            raise TraceError(
                path, 1, f"the header lacks column(s) {', '.join(missing)}; got {shown(text)}"
            )
        return {c: columns.index(c) for c in required}
    raise TraceError(path, None, "is empty; expected a CSV header and records")


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` of each record, checked for the header's width, read lazily.

    The traces quote nothing, so each physical line is one record (line numbers are exact);
    ``csv`` still parses quoted fields should a line have them.
    """
    lines = numbered_lines(path)
    width = 0
    for line, text in lines:
        if line == 1:
            width = len(next(csv.reader([text])))
            continue
        if not text.strip():
            continue
        fields = text.split(",") if '"' not in text else next(csv.reader([text]))
        if len(fields) != width:
            raise TraceError(
                path, line, f"expected {width} comma-separated fields, got {len(fields)}"
            )
        yield line, fields


def _amount(text: str, column: str, path: Path, line: int, scale: float = 1.0) -> float:
    """A resource amount in the trace's unit (``scale`` of them make one cluster unit):
    0 or, once scaled, from ``MIN_AMOUNT`` to ``MAX_AMOUNT``."""
    return (
        amount(text, column, path, line, maximum=MAX_AMOUNT * scale, smallest=MIN_AMOUNT * scale)
        / scale
    )


def _time(text: str, column: str, path: Path, line: int) -> float:
    """A time field: 0, or from ``MIN_SECONDS`` to ``MAX_SECONDS``."""
    return amount(
        text, column, path, line, maximum=MAX_SECONDS, smallest=MIN_SECONDS, note=" seconds"
    )


def read_alibaba_nodes(path: Path) -> Cluster:
    r"""The cluster of a node list.

    Reads the list once, row by row (it is the cluster, so it is held in memory anyway).

    Parameters
    ----------
    path : Path
        The node list (``openb_node_list_*.csv``).

    Returns
    -------
    Cluster
        One machine per node, resources :data:`RESOURCES` (cores, GiB, GPUs), GPU nodes with
        the attribute ``gpu_model``.

    Raises
    ------
    TraceError
        An unreadable file, a header without the node columns, a record with the wrong number
        of fields, an empty or repeated node name, an amount out of bounds, or no nodes.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from fairshare.workload.traces.alibaba import read_alibaba_nodes
    >>> nodes = (
    ...     "sn,cpu_milli,memory_mib,gpu,model\n"
    ...     "n1,32000,131072,2,V100M16\n"
    ...     "n2,64000,262144,0,\n"
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "openb_node_list_all_node.csv"
    ...     _ = path.write_text(nodes)
    ...     cluster = read_alibaba_nodes(path)
    >>> cluster.resources, cluster.capacities.tolist()
    (('cpu', 'mem', 'gpu'), [[32.0, 128.0, 2.0], [64.0, 256.0, 0.0]])
    >>> dict(cluster.machines[0].attributes)
    {'gpu_model': 'V100M16'}
    """
    check_readable(path, "Alibaba node list (.csv)")
    col = _header(path, _NODE_COLUMNS)
    machines: list[Machine] = []
    names: dict[str, int] = {}
    for line, fields in _rows(path):
        name = fields[col["sn"]]
        if not name:
            raise TraceError(path, line, "node name (sn) is empty")
        if name in names:
            raise TraceError(
                path, line, f"node {shown(name)} repeats (first at line {names[name]})"
            )
        names[name] = line
        capacity = np.array(
            [
                _amount(fields[col["cpu_milli"]], "cpu_milli", path, line, _MILLI),
                _amount(fields[col["memory_mib"]], "memory_mib", path, line, _MIB_PER_GIB),
                _amount(fields[col["gpu"]], "gpu", path, line),
            ],
            dtype=np.float64,
        )
        capacity.setflags(write=False)
        model = fields[col["model"]].strip()
        machines.append(Machine(name, capacity, None, {"gpu_model": model} if model else {}))
    if not machines:
        raise TraceError(path, None, "lists no nodes")
    return Cluster.build(RESOURCES, machines)


def node_list_beside(pods: Path) -> Path | None:
    """The node list in the pod list's directory, if there is one.

    Parameters
    ----------
    pods : Path
        The pod list.

    Returns
    -------
    Path or None
        The first of :data:`NODE_LISTS` found beside it.
    """
    for name in NODE_LISTS:
        candidate = pods.parent / name
        if candidate.is_file():
            return candidate
    return None


def machines_beside(pods: Path) -> Cluster | str:
    """The machines of the node list beside a pod list (SPEC section 3: they serve a scenario
    that lists none), or why there are none (the ``alibaba-gpu`` format's machines reader).

    Parameters
    ----------
    pods : Path
        The pod list.

    Returns
    -------
    Cluster or str
        The node list's cluster, or the reason no node list is there.

    Raises
    ------
    TraceError
        A corrupt node list.
    """
    nodes = node_list_beside(pods)
    if nodes is None:
        return (
            f"no node list is beside the pod list (looked for {' and '.join(NODE_LISTS)} in "
            f"{pods.parent})"
        )
    return read_alibaba_nodes(nodes)


def _constraint(spec: str, path: Path, line: int) -> Constraint:
    """The constraint of a ``gpu_spec``: ``gpu_model in ['A', 'B']``."""
    models = [m.strip() for m in spec.split("|")]
    if any(not m or "'" in m or "\\" in m for m in models):
        raise TraceError(
            path, line, f"gpu_spec must be GPU models separated by '|', got {shown(spec)}"
        )
    return parse_constraint("gpu_model in [" + ", ".join(f"'{m}'" for m in models) + "]")


def read_alibaba_pods(path: Path, cluster: Cluster) -> Iterator[Job]:
    r"""Stream the pods of a pod list as jobs, in creation order, on ``cluster``.

    Parameters
    ----------
    path : Path
        The pod list (``openb_pod_list_*.csv``).
    cluster : Cluster
        The machines the pods are replayed on (the scenario's, or the node list's).

    Returns
    -------
    Iterator of Job
        One single-task job per pod (module docstring), read lazily.

    Raises
    ------
    TraceError
        Now, for an unreadable file or a header without the pod columns; while iterating, for a
        record with the wrong number of fields, a repeated pod name, an amount or time that is
        not a number within its bound (module docstring), a deletion before the scheduling or
        creation, creation times going backwards, or a demand for a resource ``cluster`` does
        not have.

    Examples
    --------
    ``p1`` shares 46% of a V100 and ran from its scheduling at 10 s to 100 s; ``p2`` was never
    scheduled, so it keeps its whole lifetime.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.workload.traces.alibaba import read_alibaba_pods
    >>> node = Machine("n1", np.array([32.0, 128.0, 2.0]), attributes={"gpu_model": "V100M16"})
    >>> cluster = Cluster.build(["cpu", "mem", "gpu"], [node])
    >>> pods = (
    ...     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    ...     "creation_time,deletion_time,scheduled_time\n"
    ...     "p1,4000,8192,1,460,V100M16|V100M32,LS,Running,0,100,10\n"
    ...     "p2,8000,16384,0,0,,BE,Failed,5,50,\n"
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "openb_pod_list_default.csv"
    ...     _ = path.write_text(pods)
    ...     jobs = list(read_alibaba_pods(path, cluster))
    >>> [(job.name, job.demand.tolist(), job.duration.seconds) for job in jobs]
    [('p1', [4.0, 8.0, 0.46], 90.0), ('p2', [8.0, 16.0, 0.0], 45.0)]
    >>> jobs[0].constraint
    Constraint(source="gpu_model in ['V100M16', 'V100M32']")
    """
    check_readable(path, "Alibaba pod list (.csv)")
    col = _header(path, _POD_COLUMNS)
    return _stream(path, cluster, col)


def _stream(path: Path, cluster: Cluster, col: dict[str, int]) -> Iterator[Job]:
    """The pods as jobs, one record at a time (:func:`read_alibaba_pods` checked the header)."""
    positions = resource_positions(cluster, _ALIASES)
    width = len(cluster.resources)
    constraints: dict[str, Constraint] = {}  # few distinct gpu_spec values: parse each once
    last = -math.inf
    names = JobNames(path, "pod name")
    for line, fields in _rows(path):
        name = fields[col["name"]]
        if not name:
            raise TraceError(path, line, "pod name is empty")
        gpus = _amount(fields[col["num_gpu"]], "num_gpu", path, line)
        milli_text = fields[col["gpu_milli"]]
        gpu_milli = _amount(milli_text, "gpu_milli", path, line, _MILLI) if milli_text else 0.0
        if gpus == 1 and 0 < gpu_milli < 1:
            gpus = gpu_milli
        amounts = {
            "cpu": _amount(fields[col["cpu_milli"]], "cpu_milli", path, line, _MILLI),
            "mem": _amount(fields[col["memory_mib"]], "memory_mib", path, line, _MIB_PER_GIB),
            "gpu": gpus,
        }
        demand: FloatArray = np.zeros(width, dtype=np.float64)
        for quantity, value in amounts.items():
            if value <= 0:
                continue
            if quantity not in positions:
                raise TraceError(
                    path,
                    line,
                    f"pod {shown(name)} demands {quantity} but the cluster has no resource named "
                    f"{' or '.join(map(repr, _ALIASES[quantity]))} "
                    f"(resources: {', '.join(cluster.resources)})",
                )
            demand[positions[quantity]] = value
        if not demand.any():
            raise TraceError(path, line, f"pod {shown(name)} demands no cpu, memory or gpu")
        created = _time(fields[col["creation_time"]], "creation_time", path, line)
        deleted = _time(fields[col["deletion_time"]], "deletion_time", path, line)
        scheduled_text = fields[col["scheduled_time"]]
        started = _time(scheduled_text, "scheduled_time", path, line) if scheduled_text else created
        if created < last:
            raise TraceError(
                path,
                line,
                f"creation_time {created:g} is before the previous pod's ({last:g}); "
                "the pod list must be in creation order",
            )
        if deleted < started:
            raise TraceError(
                path,
                line,
                f"deletion_time {deleted:g} is before the pod started ({started:g})",
            )
        names.add(name, line)
        last = created
        spec = fields[col["gpu_spec"]].strip()
        constraint = None
        if spec:
            constraint = constraints.get(spec)
            if constraint is None:
                constraint = constraints[spec] = _constraint(spec, path, line)
        demand.setflags(write=False)
        yield Job(
            name=name,
            submit=created,
            user=name,
            demand=demand,
            tasks=1,
            duration=FixedDuration(deleted - started),
            constraint=constraint,
        )
