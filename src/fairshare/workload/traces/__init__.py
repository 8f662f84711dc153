r"""Real traces for ``fairshare simulate --trace FORMAT:PATH`` (SPEC section 3).

A trace supplies jobs; the scenario supplies what the trace lacks (machines, per-task demand
when the trace records none). Each format has its own module, whose docstring documents the
columns and how they become :class:`~fairshare.workload.model.Job` fields:

========================  ===================================================================
``swim``                  SWIM Facebook MapReduce traces (.tsv): :mod:`.swim`
``google-2011``           Google cluster-usage trace 2011, a directory of its tables:
                          :mod:`.google2011`
``alibaba-gpu``           Alibaba GPU cluster trace 2023 pod list (.csv), machines from the
                          node list beside it unless the scenario has them: :mod:`.alibaba`
``swf``                   Standard Workload Format (.swf, .swf.gz): :mod:`.swf`
========================  ===================================================================

:func:`open_trace` checks the file (or directory) and headers at once, so a missing or
unreadable trace fails before a simulation starts; the records are then read lazily, in
submit order, as the returned :class:`~fairshare.workload.generators.Workload`'s ``jobs`` is
iterated. A corrupt record raises :class:`TraceError` (``error: FILE: line N: WHAT``) when the
iteration reaches it, so callers that must write nothing on bad input (``--out``) have to
finish iterating before they write.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.workload.traces import open_trace, parse_trace_argument
>>> cluster = Cluster.build(["cpu"], [Machine("m", np.array([8.0]))])
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "log.swf"
...     _ = path.write_text("1 0 5 100 4 -1 -1 4 -1 -1 1 7 -1 -1 -1 -1 -1 -1\n")
...     fmt, where = parse_trace_argument(f"swf:{path}")
...     jobs = list(open_trace(fmt, where, cluster).jobs)
>>> [(job.name, job.user, job.tasks, job.duration.seconds) for job in jobs]
[('1', 'user7', 4, 100.0)]
"""

from __future__ import annotations

from pathlib import Path

from fairshare.cluster import Cluster
from fairshare.workload.builder import MISSING_MACHINES, MachinesFrom
from fairshare.workload.generators import Workload
from fairshare.workload.loader import ScenarioError
from fairshare.workload.traces._common import TraceError
from fairshare.workload.traces.alibaba import (
    NODE_LISTS,
    node_list_beside,
    read_alibaba_nodes,
    read_alibaba_pods,
)
from fairshare.workload.traces.google2011 import read_google_2011
from fairshare.workload.traces.swf import read_swf
from fairshare.workload.traces.swim import read_swim

__all__ = [
    "FORMATS",
    "TraceError",
    "machines_from_trace",
    "open_trace",
    "parse_trace_argument",
    "trace_machines",
]

FORMATS = ("swim", "google-2011", "alibaba-gpu", "swf")
"""The trace formats of ``--trace FORMAT:PATH`` (SPEC section 3)."""


def parse_trace_argument(text: str, where: str = "trace") -> tuple[str, Path]:
    """Split a ``--trace`` argument into its format and path.

    Parameters
    ----------
    text : str
        ``FORMAT:PATH``; the path may itself contain ``:``.
    where : str
        Where the argument came from, for the error (an option, a field).

    Returns
    -------
    tuple of (str, Path)
        The format, one of :data:`FORMATS`, and the path.

    Raises
    ------
    ScenarioError
        At ``where``, for a missing colon or path, or an unknown format.

    Examples
    --------
    >>> from fairshare.workload.traces import parse_trace_argument
    >>> parse_trace_argument("swf:logs/a:b.swf")
    ('swf', PosixPath('logs/a:b.swf'))
    """
    fmt, colon, path = text.partition(":")
    if not colon or not path:
        raise ScenarioError(
            text, where, f"expected FORMAT:PATH with FORMAT one of {', '.join(FORMATS)}"
        )
    _check_format(fmt, text, where)
    return fmt, Path(path)


def _check_format(fmt: str, source: str, where: str) -> None:
    """Raise a :class:`ScenarioError` at ``where`` unless ``fmt`` is a known format."""
    if fmt not in FORMATS:
        raise ScenarioError(
            source, where, f"unknown trace format {fmt!r}; allowed: {', '.join(FORMATS)}"
        )


def trace_machines(fmt: str, path: str | Path) -> Cluster | None:
    """The machines the trace at ``path`` lists, if it lists any.

    Only ``alibaba-gpu`` does, in the node list beside the pod list (:data:`NODE_LISTS`);
    ``swim``, ``swf`` and the ``job_events`` table read for ``google-2011`` list no machines.

    Parameters
    ----------
    fmt : str
        The trace format.
    path : str or Path
        The trace.

    Returns
    -------
    Cluster or None
        The cluster of the node list, or None.

    Raises
    ------
    TraceError
        A corrupt node list.
    """
    if fmt == "alibaba-gpu":
        nodes = node_list_beside(Path(path))
        return None if nodes is None else read_alibaba_nodes(nodes)
    return None


def _why_no_machines(fmt: str, path: Path) -> str:
    """Why the trace of format ``fmt`` at ``path`` gives no machines, for a message."""
    if fmt == "alibaba-gpu":
        return (
            f"no node list is beside the pod list (looked for {' and '.join(NODE_LISTS)} in "
            f"{path.parent})"
        )
    if fmt == "google-2011":
        return "the google-2011 job_events table lists no machines"
    return f"a {fmt} trace lists no machines"


def machines_from_trace(fmt: str, path: str | Path, source: str) -> MachinesFrom:
    """What gives the machines of a scenario that lists none, from the trace it replays.

    SPEC section 3: the node list beside an alibaba-gpu pod list gives them.

    Parameters
    ----------
    fmt : str
        The trace format.
    path : str or Path
        The trace.
    source : str
        The scenario file, named in the error.

    Returns
    -------
    MachinesFrom
        For :func:`fairshare.workload.loader.load_scenario`; when called, it raises a
        :class:`ScenarioError` at the scenario's ``machines`` if the trace lists none either.
    """

    def machines() -> Cluster:
        cluster = trace_machines(fmt, path)
        if cluster is None:
            raise ScenarioError(
                source,
                "machines",
                f"{MISSING_MACHINES}: {_why_no_machines(fmt, Path(path))}; list the machines "
                "in the scenario",
            )
        return cluster

    return machines


def open_trace(fmt: str, path: str | Path, cluster: Cluster | None) -> Workload:
    """Open the trace at ``path`` in format ``fmt`` for replay on ``cluster``.

    Parameters
    ----------
    fmt : str
        One of :data:`FORMATS`.
    path : str or Path
        The trace file (a directory for ``google-2011``).
    cluster : Cluster or None
        The scenario's machines; None when it has none.

    Returns
    -------
    Workload
        ``jobs`` streams the trace in submit order; ``cluster`` is ``cluster``, or for
        ``alibaba-gpu`` without one, the node list's.

    Raises
    ------
    ScenarioError
        An unknown format, or a trace that needs machines the scenario does not give.
    TraceError
        An unreadable file or a corrupt header now; a corrupt record when iteration reaches
        it (a ``ScenarioError`` too).
    """
    _check_format(fmt, str(path), "trace")
    path = Path(path)
    if cluster is None:
        cluster = trace_machines(fmt, path)
    if cluster is None:
        raise TraceError(path, None, f"{_why_no_machines(fmt, path)}: the scenario must give them")
    if fmt == "swim":
        jobs = read_swim(path, cluster)
    elif fmt == "swf":
        jobs = read_swf(path, cluster)
    elif fmt == "google-2011":
        jobs = read_google_2011(path, cluster)
    else:
        jobs = read_alibaba_pods(path, cluster)
    return Workload(jobs, cluster)
