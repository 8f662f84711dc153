"""Experiments: sweeps of policies, seeds, options and scenario parameters (SPEC section 7).

A grid (:mod:`.grid` reads it, :mod:`.grid_model` holds it) names a scenario and lists the
values of each axis; each of its cells (:mod:`.cells`) is one run of
:func:`fairshare.api.simulate`, a pure function that returns one flat row. :func:`run_sweep`
(:mod:`.sweep`) runs the cells not yet done in an output directory on an executor
(:mod:`.executors`: this process, this machine's cores, or a Ray cluster), writes each cell's
results to a file as it finishes (:mod:`.store`) and merges them into ``results.parquet`` and
``sweep.html`` (:mod:`.aggregate`). ``fairshare sweep`` is the command line over it.

Examples
--------
>>> from fairshare.experiments import parse_grid
>>> grid = parse_grid(
...     {"machines": [{"name": "m", "count": 10, "capacity": {"slots": 4}}],
...      "workload": {"generator": "facebook-2009", "jobs": 20},
...      "policies": ["fifo", "fair"], "seeds": 5,
...      "parameters": {"workload.jobs": [20, 40]}},
...     source="fb.yaml",
... )
>>> grid.size, grid.columns()[-1]
(20, ('workload.jobs', 'number'))
"""

from fairshare.experiments.cells import TIMING_COLUMNS, Cell, flat_summary, run_cell
from fairshare.experiments.executors import ExecutorError
from fairshare.experiments.grid import load_grid, parse_grid
from fairshare.experiments.grid_model import Grid, GridError
from fairshare.experiments.store import SweepDirError
from fairshare.experiments.sweep import SweepResult, run_sweep

__all__ = [
    "TIMING_COLUMNS",
    "Cell",
    "ExecutorError",
    "Grid",
    "GridError",
    "SweepDirError",
    "SweepResult",
    "flat_summary",
    "load_grid",
    "parse_grid",
    "run_cell",
    "run_sweep",
]
