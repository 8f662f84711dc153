"""Run a grid: every cell not yet done, written down as it finishes, then merged (SPEC
section 7).

:func:`run_sweep` validates the grid and ``--out`` before anything is written, reads the
cells' files an earlier sweep into the same directory left
(:mod:`fairshare.experiments.store`), runs the other cells on an executor
(:mod:`fairshare.experiments.executors`), writes each cell's file as it finishes, and merges
every cell's row in the grid's order into ``results.parquet`` with ``sweep.html``
(:mod:`fairshare.experiments.aggregate`). The rows do not depend on the executor, on
``jobs`` or on which cells an earlier sweep ran, except the timing columns
(:data:`~fairshare.experiments.cells.TIMING_COLUMNS`).

Examples
--------
>>> import tempfile
>>> from fairshare.experiments import parse_grid, run_sweep
>>> grid = parse_grid(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8,
...                "duration": {"exponential": {"mean": 10}}}],
...      "policies": ["fifo", "fair"], "seeds": [0, 1]},
...     source="tiny",
... )
>>> with tempfile.TemporaryDirectory() as tmp:
...     first = run_sweep(grid, tmp, jobs=1)
...     again = run_sweep(grid, tmp, jobs=1)
>>> first.ran, again.ran, again.reused, first.results.height
(4, 0, 4, 4)
>>> first.results.select("policy", "seed").rows()
[('fifo', 0), ('fifo', 1), ('fair', 0), ('fair', 1)]
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import polars as pl

from fairshare.experiments.aggregate import sweep_report
from fairshare.experiments.cells import Cell, CellFailure
from fairshare.experiments.executors import make_executor
from fairshare.experiments.grid import load_grid
from fairshare.experiments.grid_model import Grid
from fairshare.experiments.store import SweepDir
from fairshare.workload import ScenarioError

__all__ = ["EXECUTORS", "SweepProgress", "SweepResult", "available_cores", "merge", "run_sweep"]

EXECUTORS = ("local", "ray")
"""What ``--executor`` takes."""


def available_cores() -> int:
    """The cores this process may run on (``--jobs``'s default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class SweepProgress(Protocol):
    """What a sweep reports as it goes (the command line draws a progress bar)."""

    def start(self, cells: int, todo: int) -> None:
        """The grid has ``cells`` cells, ``todo`` of them not yet done."""

    def finished(self, cell: Cell) -> None:
        """One more cell is done and written."""


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep.

    Attributes
    ----------
    grid : Grid
        The grid.
    results : polars.DataFrame
        ``results.parquet``: one row per cell, in the grid's order.
    ran : int
        Cells run by this sweep.
    reused : int
        Cells whose files an earlier sweep left.
    seconds : float
        Wall seconds spent running cells.
    out : Path
        The output directory.
    """

    grid: Grid
    results: pl.DataFrame
    ran: int
    reused: int
    seconds: float
    out: Path

    def warnings(self) -> list[str]:
        """``warning:`` lines for cells whose runs left jobs unfinished (jobs that can never
        run on the machines, or runs stopped by ``until``)."""
        lines = []
        for column, what in (
            ("unrunnable_jobs", "jobs that can never run on the machines"),
            ("unfinished_jobs", "jobs unfinished at the end of the run"),
        ):
            if column not in self.results.columns:
                continue
            cells = int((self.results[column].fill_null(0) > 0).sum())
            if cells:
                lines.append(
                    f"warning: {self.grid.source}: {cells} of {self.results.height} cells have "
                    f"{what} (column {column} of results.parquet)"
                )
                break
        return lines


_DTYPES: dict[str, type[pl.DataType]] = {
    "text": pl.String,
    "bool": pl.Boolean,
    "number": pl.Float64,
    "json": pl.String,
}


def merge(grid: Grid, cells: Sequence[Cell], found: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """``results.parquet``: per cell in order, its parameter columns (from the grid) beside
    the results in its file.

    Parameters
    ----------
    grid : Grid
        The grid (its parameter columns and their types).
    cells : Sequence of Cell
        Its cells, in order.
    found : dict of str to polars.DataFrame
        Every cell's results (its file's one row), by cell id.

    Returns
    -------
    polars.DataFrame
    """
    data: dict[str, list[object]] = {name: [] for name, _ in grid.columns()}
    for cell in cells:
        for name, value in cell.parameters:
            data[name].append(value)
    schema: dict[str, type[pl.DataType]] = {}
    for name, kind in grid.columns():
        whole = all(
            isinstance(v, int) and not isinstance(v, bool) for v in data[name] if v is not None
        )
        schema[name] = pl.Int64 if kind == "number" and whole else _DTYPES[kind]
    parameters = pl.DataFrame(data, schema=schema)
    results = pl.concat([found[cell.id] for cell in cells], how="diagonal_relaxed")
    return pl.concat([parameters, results], how="horizontal")


def run_sweep(
    grid: Grid | str | Path,
    out: str | Path,
    *,
    jobs: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    progress: SweepProgress | None = None,
) -> SweepResult:
    """Run every cell of ``grid`` not yet done in ``out``, then merge all of them.

    Parameters
    ----------
    grid : Grid, str or Path
        A grid, or its file.
    out : str or Path
        The output directory (:mod:`fairshare.experiments.store`).
    jobs : int, optional
        Cells at a time: worker processes (``local``; 1 runs them in this process) or Ray
        tasks in flight (``ray``). Default: the cores of this machine (``local``), the CPUs
        of the cluster (``ray``).
    executor : str
        ``local`` or ``ray``.
    ray_address : str, optional
        The Ray cluster (``ray``); without it a local Ray instance is started.
    progress : SweepProgress, optional
        Told the plan and each finished cell.

    Returns
    -------
    SweepResult

    Raises
    ------
    GridError, ScenarioError
        The grid or its scenario is wrong (nothing is written), or a cell's run found an
        input problem (the files of the cells done stay).
    SweepDirError
        ``out`` cannot be used or written.
    ExecutorError
        The executor cannot start (no Ray, no cluster at the address).
    ValueError
        An unknown executor or ``jobs`` below 1.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; allowed: {', '.join(EXECUTORS)}")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    chosen = grid if isinstance(grid, Grid) else load_grid(grid)
    target = SweepDir(str(out))
    cells = chosen.cells()
    unique = {cell.id: cell for cell in reversed(cells)}
    done = target.read_cells(cell.id for cell in cells)
    todo = [cell for cell in cells if cell.id not in done and unique[cell.id] is cell]
    if progress is not None:
        progress.start(len(cells), len(todo))
    started = time.perf_counter()
    if todo:
        with make_executor(
            executor, jobs or available_cores(), ray_address, jobs is not None
        ) as runner:
            target.open()
            names = {name for name, _ in chosen.columns()}
            for cell, outcome in runner.run(todo):
                if isinstance(outcome, CellFailure):
                    raise ScenarioError(outcome.file, outcome.where, outcome.what)
                target.write_cell(cell.id, {k: v for k, v in outcome.items() if k not in names})
                if progress is not None:
                    progress.finished(cell)
    else:
        target.open()
    seconds = time.perf_counter() - started
    # The cells run now are read back from their files, as a later sweep will read them.
    found = {**done, **target.read_cells(cell.id for cell in todo)}
    missing = [cell for cell in cells if cell.id not in found]
    if missing:
        raise AssertionError(f"{len(missing)} cells have no readable file after running")
    results = merge(chosen, cells, found)
    target.publish(results, sweep_report(chosen, results))
    return SweepResult(chosen, results, len(todo), len(cells) - len(todo), seconds, target.out)
