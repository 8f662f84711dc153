r"""Real traces for ``fairshare simulate --trace FORMAT:PATH`` (SPEC section 3).

A trace supplies jobs; the scenario supplies what the trace lacks (machines, per-task demand
when the trace records none). The formats are the entries of
:data:`~fairshare.workload.trace_formats.TRACE_FORMATS`; each has its own module here, whose
docstring documents the columns and how they become :class:`~fairshare.workload.model.Job`
fields (:mod:`.swim`, :mod:`.google2011`, :mod:`.alibaba`, :mod:`.swf`, :mod:`.slurm_sacct`,
:mod:`.kueue_workloads`). A new format is a
module with its reader and one :class:`~fairshare.workload.trace_formats.TraceFormat` entry.

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

from collections.abc import Sequence
from pathlib import Path

from fairshare.cluster import Cluster
from fairshare.workload.builder import MISSING_MACHINES, MachinesFrom
from fairshare.workload.generators import Workload
from fairshare.workload.loader import ScenarioError
from fairshare.workload.trace_formats import TRACE_FORMATS, TraceFormat, trace_format
from fairshare.workload.traces._common import TraceError, TraceJobs

__all__ = [
    "TRACE_FORMATS",
    "TraceError",
    "TraceFormat",
    "machines_from_trace",
    "open_trace",
    "parse_trace_argument",
    "trace_machines",
]


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
        The format, a name of :data:`TRACE_FORMATS`, and the path.

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
            text, where, f"expected FORMAT:PATH with FORMAT one of {', '.join(TRACE_FORMATS)}"
        )
    trace_format(fmt, text, where)
    return fmt, Path(path)


def trace_machines(fmt: str, path: str | Path) -> Cluster | None:
    """The machines the trace at ``path`` lists, if it lists any.

    Only formats whose :class:`TraceFormat` brings machines may (``alibaba-gpu``: the node
    list beside the pod list).

    Parameters
    ----------
    fmt : str
        The trace format.
    path : str or Path
        The trace.

    Returns
    -------
    Cluster or None
        The cluster the trace lists, or None.

    Raises
    ------
    ScenarioError
        An unknown format.
    TraceError
        A corrupt node list.
    """
    machines = trace_format(fmt, str(path), "trace").machines_of(Path(path))
    return machines if isinstance(machines, Cluster) else None


def machines_from_trace(fmt: str, path: str | Path, source: str) -> MachinesFrom:
    """What gives the machines of a scenario that lists none, from the trace it replays.

    SPEC section 3: a trace whose format brings machines (:attr:`TraceFormat.machines`; the
    node list beside an alibaba-gpu pod list) gives them.

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
        known = trace_format(fmt, str(path), "trace")
        if known.machines is not None and not Path(path).exists():
            # Said first: the node list beside it is missing because the trace is.
            raise TraceError(path, None, f"no such {fmt} trace")
        found = known.machines_of(Path(path))
        if isinstance(found, str):
            raise ScenarioError(
                source,
                "machines",
                f"{MISSING_MACHINES}: {found}; list the machines in the scenario",
            )
        return found

    return machines


def open_trace(
    fmt: str, path: str | Path, cluster: Cluster | None, users: Sequence[str] = ()
) -> Workload:
    """Open the trace at ``path`` in format ``fmt`` for replay on ``cluster``.

    Parameters
    ----------
    fmt : str
        A name of :data:`TRACE_FORMATS`.
    path : str or Path
        The trace file (a directory for ``google-2011``).
    cluster : Cluster or None
        The scenario's machines; None when it has none.
    users : sequence of str
        The scenario's user names: a history (``slurm-sacct``, ``kueue-workloads``) names
        each job's tenant as the scenario does.

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
    entry = trace_format(fmt, str(path), "trace")
    path = Path(path)
    if cluster is None:
        found = entry.machines_of(path)
        if isinstance(found, str):
            raise TraceError(path, None, f"{found}: the scenario must give them")
        cluster = found
    jobs = entry.read(path, cluster, users)
    warnings = jobs.warnings if isinstance(jobs, TraceJobs) else ()
    return Workload(jobs, cluster, warnings)
