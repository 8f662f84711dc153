"""A sweep's results over seeds: per policy and setting, the mean of each statistic and its
95% confidence interval (:mod:`fairshare.metrics.intervals`), and the ``sweep.html`` page
drawn from them (:mod:`fairshare.report.sweep`).

Examples
--------
>>> import polars as pl
>>> from fairshare.experiments.aggregate import settings
>>> frame = pl.DataFrame({"policy": ["fifo", "fifo", "fair", "fair"], "seed": [0, 1, 0, 1],
...                       "mean_slowdown": [2.0, 4.0, 1.0, None]})
>>> [(s.label, s.stats["mean_slowdown"].mean, s.stats["mean_slowdown"].n)
...  for s in settings(frame, ["policy"], ["mean_slowdown"])]
[('fifo', 3.0, 2), ('fair', 1.0, 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fairshare.metrics.intervals import mean_interval
from fairshare.report.sweep import SweepSetting, render_sweep

if TYPE_CHECKING:
    import polars as pl

    from fairshare.experiments.grid_model import Grid

__all__ = ["HEADLINE", "headline", "settings", "sweep_report"]

HEADLINE = (
    ("mean_response_time", "mean response time (s)"),
    ("p95_response_time", "p95 response time (s)"),
    ("mean_slowdown", "mean slowdown"),
    ("p95_slowdown", "p95 slowdown"),
    ("makespan", "makespan (s)"),
    ("mean_queueing_delay", "mean queueing delay (s)"),
    ("locality_node", "node-local fraction of tasks with input"),
    ("preempted_tasks", "preempted task attempts"),
    ("finished_jobs", "finished jobs"),
)
"""The statistics ``sweep.html`` shows (with each ``utilization_RESOURCE``), as column and
label: SPEC section 3's headline figures."""


def headline(frame: pl.DataFrame) -> list[tuple[str, str]]:
    """The :data:`HEADLINE` statistics and utilisations that ``frame`` has and that are not
    all null or all zero (a run without input data has no locality, one without preemption
    preempts nothing)."""
    chosen = list(HEADLINE)
    chosen[-1:-1] = [
        (column, f"utilization of {column.removeprefix('utilization_')}")
        for column in frame.columns
        if column.startswith("utilization_")
    ]
    shown = []
    for column, label in chosen:
        if column not in frame.columns:
            continue
        values = [v for v in frame[column].to_list() if isinstance(v, int | float)]
        if any(v != 0 for v in values):
            shown.append((column, label))
    return shown


def _value(value: object) -> str:
    """A setting's value in a label: ``none`` for null, booleans in lower case."""
    return (
        "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )


def settings(frame: pl.DataFrame, by: Sequence[str], metrics: Sequence[str]) -> list[SweepSetting]:
    """The rows of ``frame`` grouped by the columns ``by`` (the first one the policy), in
    order of first appearance, with the mean and interval of each metric over each setting's
    rows (its seeds).

    Parameters
    ----------
    frame : polars.DataFrame
        ``results.parquet``'s rows.
    by : Sequence of str
        ``policy``, then the swept options and parameters.
    metrics : Sequence of str
        The statistics' columns.

    Returns
    -------
    list of SweepSetting
    """
    keys: dict[tuple[object, ...], list[int]] = {}
    columns = {name: frame[name].to_list() for name in (*by, *metrics)}
    for row in range(frame.height):
        keys.setdefault(tuple(columns[name][row] for name in by), []).append(row)
    found = []
    for key, rows in keys.items():
        settings = [f"{name}={_value(value)}" for name, value in zip(by[1:], key[1:], strict=True)]
        found.append(
            SweepSetting(
                ", ".join([str(key[0]), *settings]),
                str(key[0]),
                {m: mean_interval(columns[m][row] for row in rows) for m in metrics},
            )
        )
    return found


def sweep_report(grid: Grid, frame: pl.DataFrame) -> str:
    """The ``sweep.html`` text of a grid's merged results."""
    metrics = headline(frame)
    by = [name for name, _ in grid.columns() if name not in ("scenario", "seed")]
    facts = [
        ("scenario", grid.scenario),
        ("policies", ", ".join(grid.policies)),
        ("seeds", ", ".join(str(s) for s in grid.seeds)),
        *(
            (f"option {axis.name}", ", ".join(_value(v) for v in axis.values))
            for axis in grid.options
        ),
        *(
            (f"parameter {axis.path}", ", ".join(_value(axis.shown(v)) for v in axis.values))
            for axis in grid.parameters
        ),
        ("cells", f"{grid.size:,}"),
    ]
    return render_sweep(grid.source, facts, settings(frame, by, [m for m, _ in metrics]), metrics)
