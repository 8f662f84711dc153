"""A cell of a sweep: one run, as a pure function of its inputs that returns one flat row.

A :class:`Cell` holds everything its run depends on (the scenario's document, the policy,
the seed, the simulation options) and nothing of where it runs, so the same cell gives the
same row in this process, in a worker process or on a Ray node (up to the timing columns,
:data:`TIMING_COLUMNS`). :func:`run_cell` runs it through the public API
(:func:`fairshare.api.simulate`) and flattens the run's ``summary.json`` (SPEC section 3)
into the row (:func:`flat_summary`).

Examples
--------
>>> from fairshare.experiments import parse_grid, run_cell
>>> grid = parse_grid(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}],
...      "policies": ["fair"], "seeds": [0]},
...     source="two-jobs",
... )
>>> row = run_cell(grid.cells()[0])
>>> row["policy"], row["seed"], row["mean_response_time"], row["utilization_slots"]
('fair', 0, 29.5, 1.0)
>>> list(row)[:4]
['scenario', 'policy', 'seed', 'machines']
"""

from __future__ import annotations

import functools
import json
import platform
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fairshare import __version__, kernel
from fairshare.api import Scenario, SimOptions, simulate
from fairshare.experiments.probes import Probe, run_probe
from fairshare.policies import PolicyError
from fairshare.workload import ScenarioError, parse_scenario

__all__ = [
    "TIMING_COLUMNS",
    "VERSION_COLUMNS",
    "Cell",
    "CellFailure",
    "ScenarioInput",
    "attempt",
    "flat_summary",
    "run_cell",
    "versions",
]

TIMING_COLUMNS = ("wall_seconds", "cell_seconds")
"""The columns that vary from run to run of the same cell: the simulation's wall seconds
(``summary.json``'s) and the cell's (scenario, simulation, metrics). Every other column is
the same whichever process, executor or machine runs the cell."""

VERSION_COLUMNS = ("fairshare_version", "python_version", "numpy_version", "kernel")
"""What ran the cell: the versions, and ``compiled`` or ``python`` for the kernel
(:mod:`fairshare.kernel`)."""

_CACHED_SCENARIOS = 8
"""Scenarios a process keeps built (by digest): a worker runs many cells of one scenario."""


@dataclass(frozen=True, eq=False)
class ScenarioInput:
    """A scenario as a cell carries it: its document (validated by the grid), the name its
    errors and runs use, and the digest that identifies it.

    Parameters
    ----------
    document : Mapping
        The scenario document (SPEC section 1), parameters applied.
    source : str
        The scenario's file, or the grid's when the grid holds it.
    digest : str
        SHA-256 of the document's canonical JSON.
    """

    document: Mapping[str, object]
    source: str
    digest: str


@dataclass(frozen=True, eq=False)
class Cell:
    """One run of a sweep.

    Parameters
    ----------
    id : str
        The run's identity (:func:`fairshare.experiments.grid_model.cell_id`): its file's name in
        the output directory.
    scenario : ScenarioInput
        The scenario.
    policy : str
        The online policy.
    seed : int
        The run's seed.
    options : SimOptions
        The simulation options.
    parameters : tuple of (str, object)
        The row's parameter columns and their values: ``scenario``, ``policy``, ``seed``,
        then each swept option and scenario field.
    probe : Probe, optional
        A measurement beyond the summary (:mod:`fairshare.experiments.probes`), whose
        columns follow the summary's in the row.
    """

    id: str
    scenario: ScenarioInput
    policy: str
    seed: int
    options: SimOptions
    parameters: tuple[tuple[str, object], ...]
    probe: Probe | None = None

    @property
    def label(self) -> str:
        """The cell's parameters in one line, for messages."""
        return ", ".join(f"{name}={value}" for name, value in self.parameters[1:])


@dataclass(frozen=True)
class CellFailure:
    """An input problem found only while a cell ran (a generated workload past the task
    limits as it is drawn): SPEC section 4's ``error: FILE: WHERE: WHAT``, as plain data so
    that it crosses process and Ray boundaries unchanged."""

    file: str
    where: str
    what: str

    def __str__(self) -> str:
        """The ``error:`` line."""
        return f"error: {self.file}: {self.where}: {self.what}"


_scenarios: OrderedDict[str, Scenario] = OrderedDict()


def _scenario(given: ScenarioInput) -> Scenario:
    """The built scenario, from this process's cache when a cell of it ran here before."""
    built = _scenarios.get(given.digest)
    if built is None:
        built = parse_scenario(dict(given.document), given.source)
        _scenarios[given.digest] = built
        while len(_scenarios) > _CACHED_SCENARIOS:
            _scenarios.popitem(last=False)
    else:
        _scenarios.move_to_end(given.digest)
    return built


@functools.cache
def versions() -> dict[str, str]:
    """The :data:`VERSION_COLUMNS` of this process."""
    return {
        "fairshare_version": __version__,
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
        "kernel": "compiled" if kernel.compiled() else "python",
    }


def _cell_value(value: object) -> object:
    """A scalar as is; a list or mapping as compact JSON text (one column holds it)."""
    if isinstance(value, list | tuple | Mapping):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value


def flat_summary(summary: Mapping[str, object]) -> dict[str, object]:
    """A ``summary.json`` document as one flat row, every field kept.

    A mapping of scalars (``locality``, ``utilization``, ``options``) becomes one column per
    key, named ``FIELD_KEY`` (``locality_node``, ``utilization_cpu``), as in
    ``compare.csv``; a list or a deeper mapping (``size_bins``, ``users``,
    ``unrunnable_job_ids``) is one column of JSON text (polars reads it back with
    ``pl.col("size_bins").str.json_decode()``).

    Parameters
    ----------
    summary : Mapping
        A :attr:`fairshare.api.Run.summary` document.

    Returns
    -------
    dict of str to object

    Examples
    --------
    >>> from fairshare.experiments.cells import flat_summary
    >>> row = flat_summary({"makespan": 3.0, "locality": {"node": 0.5, "rack": None},
    ...                     "users": {"a": {"jobs": 1}}, "options": {"delay": [5.0, 10.0]}})
    >>> for column, value in row.items():
    ...     print(column, repr(value))
    makespan 3.0
    locality_node 0.5
    locality_rack None
    users '{"a":{"jobs":1}}'
    options_delay '[5.0,10.0]'
    """
    row: dict[str, object] = {}
    for name, value in summary.items():
        if isinstance(value, Mapping) and not any(isinstance(v, Mapping) for v in value.values()):
            for key, item in value.items():
                row[f"{name}_{key}"] = _cell_value(item)
        else:
            row[name] = _cell_value(value)
    return row


def run_cell(cell: Cell) -> dict[str, object]:
    """Run one cell: its row.

    Parameters
    ----------
    cell : Cell
        The cell.

    Returns
    -------
    dict of str to object
        The parameter columns, then every field of the run's ``summary.json``
        (:func:`flat_summary`; ``policy`` and ``seed`` are parameters already), the
        probe's columns if it has one, then :data:`VERSION_COLUMNS` and ``cell_seconds``.

    Raises
    ------
    ScenarioError, PolicyError
        An input problem found while the run's jobs are drawn.
    """
    started = time.perf_counter()
    scenario = _scenario(cell.scenario)
    run = simulate(scenario, cell.policy, seed=cell.seed, options=cell.options)
    row = dict(cell.parameters)
    for name, value in flat_summary(run.summary).items():
        if name not in VERSION_COLUMNS:  # summary.json's fairshare_version: with the others
            row.setdefault(name, value)
    if cell.probe is not None:
        for name, value in run_probe(cell.probe, run, scenario, cell.options).items():
            row.setdefault(name, value)
    row.update(versions())
    row["cell_seconds"] = round(time.perf_counter() - started, 6)
    return row


def attempt(cell: Cell) -> dict[str, object] | CellFailure:
    """:func:`run_cell`, an input problem returned as a :class:`CellFailure` (what an
    executor runs: exceptions of the library do not all survive pickling, and a bug still
    raises)."""
    try:
        return run_cell(cell)
    except ScenarioError as err:
        return CellFailure(err.file, err.where, err.what)
    except PolicyError as err:
        return CellFailure(cell.scenario.source, err.where, f"{err.what} ({cell.label})")
