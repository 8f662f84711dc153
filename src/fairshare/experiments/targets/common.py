"""Helpers the targets share: building a target's grids from scenario documents, reading
per-seed values from the merged results, and the figure's bars."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence

import polars as pl

from fairshare.experiments.grid import parse_grid
from fairshare.experiments.probes import Probe
from fairshare.experiments.targets.base import Measured, Part
from fairshare.metrics.intervals import mean_interval
from fairshare.report.reproduce import Bar

__all__ = [
    "bar",
    "column_values",
    "divided",
    "json_cell",
    "locality",
    "measured_bar",
    "number",
    "part",
    "ratio_per_seed",
    "scaled_count",
    "with_fixed",
]


def scaled_count(full: int, scale: float, least: int = 1) -> int:
    """``full`` times ``scale``, rounded, at least ``least``."""
    return max(least, round(full * scale))


def part(
    label: str,
    target: str,
    scenario: Mapping[str, object],
    policies: Sequence[str],
    seeds: Sequence[int],
    *,
    options: Mapping[str, Sequence[object]] | None = None,
    probe: Probe | None = None,
    fixed: Mapping[str, object] | None = None,
) -> Part:
    """A :class:`Part` whose grid holds ``scenario``'s fields (validated as a grid file's);
    ``fixed`` holds :class:`~fairshare.api.SimOptions` fields every cell takes
    (:attr:`~fairshare.experiments.grid_model.Grid.fixed`)."""
    document: dict[str, object] = {
        **scenario,
        "policies": list(policies),
        "seeds": list(seeds),
    }
    if options:
        document["options"] = {k: list(v) for k, v in options.items()}
    grid = parse_grid(document, source=f"{target} ({label})")
    if probe is not None:
        grid = dataclasses.replace(grid, probe=probe)
    if fixed:
        grid = dataclasses.replace(grid, fixed=dict(fixed))
    return Part(label, grid)


def with_fixed(
    build: Callable[[float, tuple[int, ...]], list[Part]], **fields: object
) -> Callable[[float, tuple[int, ...]], list[Part]]:
    """``build`` with ``fields`` (:class:`~fairshare.api.SimOptions` fields, such as
    ``rack_slowdown`` or ``reduce_slowstart``) set in every cell of every part: a
    sensitivity sweep's variant (:class:`~.base.Variant`) of an option the target does not
    sweep itself."""

    def built(scale: float, seeds: tuple[int, ...]) -> list[Part]:
        return [
            Part(p.label, dataclasses.replace(p.grid, fixed={**p.grid.fixed, **fields}))
            for p in build(scale, seeds)
        ]

    return built


def column_values(
    frame: pl.DataFrame,
    seeds: Sequence[int],
    column: str,
    **where: object,
) -> tuple[float | None, ...]:
    """Per seed, ``column`` of the one row matching ``where`` (column equals value; a None
    value matches null)."""
    return ratio_per_seed(frame, seeds, lambda row: number(row.get(column)), **where)


def number(value: object) -> float | None:
    """A finite number, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def locality(row: dict[str, object], *levels: str) -> float | None:
    """The fraction of a run's tasks with input data at the given levels (``node``,
    ``rack``)."""
    total = 0.0
    for level in levels:
        value = row.get(f"locality_{level}")
        if not isinstance(value, int | float):
            return None
        total += float(value)
    return total


def divided(a: Sequence[float | None], b: Sequence[float | None]) -> tuple[float | None, ...]:
    """Per seed, ``a / b`` (None where either is missing or ``b`` is not positive)."""
    return tuple(
        x / y if x is not None and y is not None and y > 0 else None
        for x, y in zip(a, b, strict=True)
    )


def json_cell(value: object) -> object:
    """A JSON text column's value, decoded (None stays None)."""
    return json.loads(value) if isinstance(value, str) else None


def ratio_per_seed(
    frame: pl.DataFrame,
    seeds: Sequence[int],
    value: Callable[[dict[str, object]], float | None],
    **where: object,
) -> tuple[float | None, ...]:
    """Per seed, ``value`` of the one row matching ``where`` (None when no row matches)."""
    selected = frame
    for name, wanted in where.items():
        column = name.replace("__", "-")
        if wanted is None:
            selected = selected.filter(pl.col(column).is_null())
        else:
            selected = selected.filter(pl.col(column) == wanted)
    out: list[float | None] = []
    for seed in seeds:
        rows = selected.filter(pl.col("seed") == seed).to_dicts()
        found = value(rows[0]) if rows else None
        out.append(found if found is not None and math.isfinite(found) else None)
    return tuple(out)


def bar(values: Sequence[float | None], paper: float | None = None) -> Bar:
    """A figure's bar: the mean of ``values`` and its 95% interval, the paper's number."""
    interval = mean_interval(values)
    return Bar(interval.mean, interval.low, interval.high, paper)


def measured_bar(measured: Measured) -> Bar:
    """The bar of a measured metric, with the paper's number when it states one."""
    return bar(measured.values, measured.claim.paper)
