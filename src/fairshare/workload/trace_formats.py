"""The trace formats of ``--trace FORMAT:PATH`` (SPEC section 3), by name: one
:class:`TraceFormat` record each.

A record names its reader (the function streaming the trace's jobs), whether the format
brings machines (a function reading them, for a scenario that lists none), one line about what
``PATH`` is, and the documentation section that describes its columns. Everything that lists
or dispatches formats reads :data:`TRACE_FORMATS`: the command line's ``--trace`` help and
errors (:func:`listed`, :func:`trace_format`), :func:`fairshare.workload.traces.open_trace`
and :func:`fairshare.workload.traces.machines_from_trace`; ``tests/test_trace_formats.py``
checks that the documentation lists every format.

Readers are named as ``"module:function"`` and imported only when a trace of that format is
read, so that listing the formats (every ``simulate``'s help) loads no reader; a callable works
too (a format registered at run time).

Examples
--------
>>> from fairshare.workload.trace_formats import TRACE_FORMATS, listed
>>> listed()
'swim, google-2011, alibaba-gpu, alibaba-2017, alibaba-2018, swf, slurm-sacct or kueue-workloads'
>>> TRACE_FORMATS["alibaba-gpu"].brings_machines, TRACE_FORMATS["swf"].brings_machines
(True, False)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from fairshare.registry import by_name
from fairshare.workload.errors import ScenarioError

if TYPE_CHECKING:
    from fairshare.cluster import Cluster
    from fairshare.workload.model import Job

__all__ = [
    "TRACE_FORMATS",
    "MachinesReader",
    "Reader",
    "TenantReader",
    "TraceFormat",
    "listed",
    "trace_format",
]

Reader = Callable[[Path, "Cluster"], Iterator["Job"]]
"""A trace reader: ``(path, cluster) -> jobs``, streamed in submit order; it checks the file
and its header when called and each record as the iteration reaches it (``TraceError``)."""

TenantReader = Callable[[Path, "Cluster", Sequence[str]], Iterator["Job"]]
"""The reader of a format with ``tenants``: ``(path, cluster, users) -> jobs``, ``users``
the scenario's user names (each job's tenant is named as the scenario names it)."""

MachinesReader = Callable[[Path], "Cluster | str"]
"""Reads the machines a trace lists: ``path -> Cluster``, or why this trace lists none."""

_Loaded = TypeVar("_Loaded", Reader, TenantReader, MachinesReader)


@dataclass(frozen=True)
class TraceFormat:
    """A trace format of ``--trace FORMAT:PATH`` (an entry of :data:`TRACE_FORMATS`).

    Parameters
    ----------
    name : str
        ``FORMAT``.
    summary : str
        What ``PATH`` is, on one line.
    reader : Reader or str
        The reader, or ``"module:function"`` naming it (imported on first use).
    doc : str
        The documentation section describing the format's columns and how they become jobs
        (a page of ``docs/`` and its anchor); its table has a row for the format.
    machines : MachinesReader or str, optional
        Reads the machines the trace lists (SPEC section 3: they serve a scenario that lists
        none), or ``"module:function"`` naming it; None when the format never lists any.
    no_machines : str
        Why a trace of this format lists no machines, for messages; empty: ``a NAME trace
        lists no machines``.
    tenants : bool
        The trace names tenants as a configuration the scenario was imported from does
        (``fairshare import``): the reader takes the scenario's user names as a third
        argument, ``(path, cluster, users)``, so that each job lands in the user of that
        name (a history of ``sacct`` or Kueue Workloads).
    """

    name: str
    summary: str
    reader: Reader | TenantReader | str
    doc: str
    machines: MachinesReader | str | None = None
    no_machines: str = ""
    tenants: bool = False

    @property
    def brings_machines(self) -> bool:
        """Whether a trace of this format may list the machines it ran on."""
        return self.machines is not None

    def read(self, path: Path, cluster: Cluster, users: Sequence[str] = ()) -> Iterator[Job]:
        """The jobs of the trace at ``path``, on ``cluster``.

        Parameters
        ----------
        path : Path
            The trace.
        cluster : Cluster
            The machines the jobs are checked against.
        users : sequence of str
            The scenario's user names, passed to a reader of a format with ``tenants``.

        Returns
        -------
        Iterator of Job
            In submit order, read lazily.
        """
        if self.tenants:
            return _load(cast("TenantReader | str", self.reader))(path, cluster, users)
        return _load(cast("Reader | str", self.reader))(path, cluster)

    def machines_of(self, path: Path) -> Cluster | str:
        """The machines the trace at ``path`` lists, or why it lists none.

        Parameters
        ----------
        path : Path
            The trace.

        Returns
        -------
        Cluster or str
            The machines, or the reason for a message.
        """
        if self.machines is None:
            return self.no_machines or f"a {self.name} trace lists no machines"
        return _load(self.machines)(path)


def _load(reference: _Loaded | str) -> _Loaded:
    """The function ``reference`` names (``"module:function"``), or ``reference`` itself."""
    if not isinstance(reference, str):
        return reference
    module, _, name = reference.partition(":")
    return cast("_Loaded", getattr(importlib.import_module(module), name))


_DOC = "scenarios.md#traces"

TRACE_FORMATS: dict[str, TraceFormat] = by_name(
    (
        TraceFormat(
            "swim",
            "a SWIM Facebook MapReduce trace (.tsv)",
            "fairshare.workload.traces.swim:read_swim",
            _DOC,
        ),
        TraceFormat(
            "google-2011",
            "the Google cluster-usage trace 2011: its directory, or its job_events table",
            "fairshare.workload.traces.google2011:read_google_2011",
            _DOC,
            no_machines="the google-2011 job_events table lists no machines",
        ),
        TraceFormat(
            "alibaba-gpu",
            "an Alibaba GPU cluster trace 2023 pod list (.csv); machines from the node list "
            "beside it unless the scenario has them",
            "fairshare.workload.traces.alibaba:read_alibaba_pods",
            _DOC,
            machines="fairshare.workload.traces.alibaba:machines_beside",
        ),
        TraceFormat(
            "alibaba-2017",
            "Alibaba cluster-trace-v2017: its directory, or its batch_task.csv; machines from "
            "server_event.csv beside it unless the scenario has them",
            "fairshare.workload.traces.alibaba_batch:read_alibaba_2017",
            _DOC,
            machines="fairshare.workload.traces.alibaba_batch:machines_2017",
        ),
        TraceFormat(
            "alibaba-2018",
            "Alibaba cluster-trace-v2018 batch tasks with DAGs: its directory, or its task "
            "table (sample_tasks.csv); machines from machine_meta.csv beside it",
            "fairshare.workload.traces.alibaba_batch:read_alibaba_2018",
            _DOC,
            machines="fairshare.workload.traces.alibaba_batch:machines_2018",
        ),
        TraceFormat(
            "swf",
            "a Standard Workload Format log (.swf, .swf.gz)",
            "fairshare.workload.traces.swf:read_swf",
            _DOC,
        ),
        TraceFormat(
            "slurm-sacct",
            "Slurm's accounting history: the output of sacct -P (with its header line)",
            "fairshare.workload.traces.slurm_sacct:read_sacct",
            "scenarios.md#slurm-sacct",
            tenants=True,
        ),
        TraceFormat(
            "kueue-workloads",
            "Kueue's Workloads: kubectl get workloads -A -o yaml (or -o json)",
            "fairshare.workload.traces.kueue_workloads:read_kueue_workloads",
            "scenarios.md#kueue-workloads",
            tenants=True,
        ),
    )
)
"""The trace formats by name, in the order the command line lists them."""


def listed(conjunction: str = "or") -> str:
    """The registered formats' names as a sentence lists them (``--trace``'s help).

    Parameters
    ----------
    conjunction : str
        The word before the last name.

    Returns
    -------
    str
        ``"swim, google-2011, alibaba-gpu, alibaba-2017, alibaba-2018, swf, slurm-sacct or
        kueue-workloads"``.
    """
    names = list(TRACE_FORMATS)
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def trace_format(name: str, source: str, where: str) -> TraceFormat:
    """The registered format ``name``.

    Parameters
    ----------
    name : str
        ``FORMAT`` of ``--trace FORMAT:PATH``.
    source : str
        What the name came from, for the error (the argument, a file).
    where : str
        Where in it (an option, a field).

    Returns
    -------
    TraceFormat

    Raises
    ------
    ScenarioError
        At ``where``: no format of that name, listing the registered ones.
    """
    found = TRACE_FORMATS.get(name)
    if found is None:
        raise ScenarioError(
            source, where, f"unknown trace format {name!r}; allowed: {', '.join(TRACE_FORMATS)}"
        )
    return found
