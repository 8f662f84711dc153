"""A validated grid of ``fairshare sweep`` (SPEC section 7): its axes, its cells and their
identity.

:func:`~fairshare.experiments.grid.parse_grid` reads a grid file into a :class:`Grid`, checking
everything before anything runs; a grid holds the scenario's variants, the policies, the seeds
and each swept option (:class:`OptionAxis`) and scenario field (:class:`ParameterAxis`), and
lists its cells (:meth:`Grid.cells`), every combination of the axes, each named by the hash of
what its row depends on (:func:`cell_id`). A problem with a grid is a :class:`GridError`.

Examples
--------
>>> from fairshare.experiments.grid import parse_grid
>>> grid = parse_grid(
...     {
...         "machines": [{"name": "m", "count": 2, "capacity": {"slots": 2}}],
...         "workload": {"generator": "facebook-2009", "jobs": 3},
...         "policies": ["fifo"],
...         "seeds": 2,
...     },
...     source="grid.yaml",
... )
>>> grid.size, grid.columns()
(2, [('scenario', 'text'), ('policy', 'text'), ('seed', 'number')])
>>> [cell.seed for cell in grid.cells()]
[0, 1]
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from fairshare import __version__
from fairshare.api import SimOptions
from fairshare.experiments.cells import Cell, ScenarioInput
from fairshare.experiments.options import OPTIONS, OptionFields, OptionKind
from fairshare.experiments.probes import Probe
from fairshare.sim.option_table import BACKFILL, LOAD_SCALE, TIME_SCALE
from fairshare.workload import ScenarioError

GRID_FIELDS = ("scenario", "policies", "seeds", "options", "parameters")
"""The grid's own fields."""
SCENARIO_FIELDS = (
    "resources",
    "machines",
    "queues",
    "users",
    "jobs",
    "workload",
    "events",
    "usage_half_life",
)
"""The scenario's fields (SPEC section 1) a grid may hold instead of naming a file."""
MAX_CELLS = 100_000
"""The most cells a grid may have (a product of axes grows fast; a typo can ask for
millions)."""
MAX_SEED = 2**63 - 1
"""The largest seed: the ``seed`` column is a 64-bit integer."""

ParameterKind = OptionKind | Literal["json"]
"""A parameter column's type: a parameter whose values are not all numbers, all strings or
all booleans is written as JSON text."""


class GridError(ScenarioError):
    """A grid file that breaks SPEC section 7: printed as ``error: FILE: WHERE: WHAT`` (a
    :class:`~fairshare.workload.ScenarioError`, so every caller that reports input errors
    reports it)."""


@dataclass(frozen=True)
class OptionAxis:
    """One option swept by the grid.

    Parameters
    ----------
    name : str
        The option (a key of :data:`fairshare.experiments.options.OPTIONS`), and its column.
    values : tuple
        Its canonical values, in the grid's order.
    fields : tuple of dict
        Per value, the :class:`~fairshare.sim.engine.SimOptions` fields it sets.
    """

    name: str
    values: tuple[object, ...]
    fields: tuple[OptionFields, ...]

    @property
    def kind(self) -> OptionKind:
        """The column's type."""
        return OPTIONS[self.name].kind


@dataclass(frozen=True)
class ParameterAxis:
    """One scenario field swept by the grid.

    Parameters
    ----------
    path : str
        The field's path as written (``workload.jobs``), and its column.
    steps : tuple of str and int
        The path's keys and list indices.
    values : tuple
        The values, as the grid has them.
    kind : ParameterKind
        The column's type.
    """

    path: str
    steps: tuple[str | int, ...]
    values: tuple[object, ...]
    kind: ParameterKind

    def shown(self, value: object) -> object:
        """``value`` as the column holds it (JSON text for a ``json`` column)."""
        if self.kind == "json" and value is not None:
            return canonical(value)
        return value


@dataclass(frozen=True)
class Grid:
    """A validated grid: the scenario, the axes and the scenarios its parameters make.

    Parameters
    ----------
    source : str
        The grid file (names it in errors).
    scenario : str
        The scenario as the ``scenario`` column shows it: the path the grid gives, or the
        grid's own name when it holds the scenario.
    policies : tuple of str
        Online policies (or Choosy's reference schedulers).
    seeds : tuple of int
        The seeds, in the grid's order.
    options : tuple of OptionAxis
        The swept options, in the grid's order.
    parameters : tuple of ParameterAxis
        The swept scenario fields, in the grid's order.
    variants : tuple of ScenarioInput
        One scenario per combination of parameter values (one when there are none), the
        first parameter varying slowest.
    probe : Probe, optional
        A measurement every cell adds to its row (:mod:`fairshare.experiments.probes`;
        set by ``fairshare reproduce``'s targets, not by a grid file).
    fixed : mapping of str to object, optional
        :class:`~fairshare.sim.engine.SimOptions` fields every cell takes, under the swept
        options' (set by ``fairshare reproduce``'s targets for options no grid file can
        sweep, such as FAIR section 6.2.4's per-job delays; not by a grid file).
    """

    source: str
    scenario: str
    policies: tuple[str, ...]
    seeds: tuple[int, ...]
    options: tuple[OptionAxis, ...]
    parameters: tuple[ParameterAxis, ...]
    variants: tuple[ScenarioInput, ...]
    probe: Probe | None = None
    fixed: Mapping[str, object] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """The number of cells."""
        combos = math.prod(len(axis.values) for axis in self.options)
        return len(self.variants) * combos * len(self.policies) * len(self.seeds)

    def columns(self) -> list[tuple[str, ParameterKind]]:
        """The parameter columns of ``results.parquet`` and their types, in order:
        ``scenario``, ``policy``, ``seed``, the options, the scenario parameters."""
        return [
            ("scenario", "text"),
            ("policy", "text"),
            ("seed", "number"),
            *((axis.name, axis.kind) for axis in self.options),
            *((axis.path, axis.kind) for axis in self.parameters),
        ]

    def cells(self) -> list[Cell]:
        """Every cell, in the grid's order: scenario parameters slowest, then options, then
        policies, then seeds (so a cell's seeds are neighbours)."""
        combos = list(itertools.product(*(range(len(axis.values)) for axis in self.options)))
        values = list(itertools.product(*(axis.values for axis in self.parameters)))
        cells: list[Cell] = []
        for variant, shown in zip(self.variants, values, strict=True):
            for combo in combos:
                fields: OptionFields = dict(self.fixed)
                for axis, k in zip(self.options, combo, strict=True):
                    fields.update(axis.fields[k])
                options = SimOptions(**fields)  # type: ignore[arg-type]
                swept = [
                    (axis.name, axis.values[k]) for axis, k in zip(self.options, combo, strict=True)
                ]
                swept += [
                    (axis.path, axis.shown(value))
                    for axis, value in zip(self.parameters, shown, strict=True)
                ]
                for policy in self.policies:
                    for seed in self.seeds:
                        cells.append(
                            Cell(
                                id=cell_id(variant.digest, policy, seed, options, self.probe),
                                scenario=variant,
                                policy=policy,
                                seed=seed,
                                options=options,
                                parameters=(
                                    ("scenario", self.scenario),
                                    ("policy", policy),
                                    ("seed", seed),
                                    *swept,
                                ),
                                probe=self.probe,
                            )
                        )
        return cells


def cell_id(
    digest: str, policy: str, seed: int, options: SimOptions, probe: Probe | None = None
) -> str:
    """The identity of a cell's run: a hash of everything its row depends on (the scenario's
    document, the policy, the seed, every simulation option, the probe if any, fairshare's
    version). Two grids that share a run share its key, so a sweep into the same directory
    reuses it.

    Examples
    --------
    >>> from fairshare.api import SimOptions
    >>> from fairshare.experiments.grid_model import cell_id
    >>> a = cell_id("d", "drf", 1, SimOptions())
    >>> a == cell_id("d", "drf", 1, SimOptions(pool_order="fair")), len(a)
    (True, 24)
    """
    identity = {
        "scenario": digest,
        "policy": policy,
        "seed": seed,
        "options": {
            "delay": options.delay,
            "job_delays": dict(options.job_delays),
            "preemption": options.preemption,
            "pool_order": options.pool_order,
            "headroom": options.headroom,
            "rack_slowdown": options.rack_slowdown,
            "off_rack_slowdown": options.off_rack_slowdown,
            "until": options.until,
            "copy_compute_splitting": options.copy_compute_splitting,
            "max_reducers": options.max_reducers,
            "max_computing": options.max_computing,
            "reduce_slowstart": options.reduce_slowstart,
            # Only when set: the cells of grids written before these options keep their ids.
            **(
                {"load_scale": options.load_scale}
                if options.load_scale != LOAD_SCALE.default
                else {}
            ),
            **(
                {"time_scale": options.time_scale}
                if options.time_scale != TIME_SCALE.default
                else {}
            ),
            **({"backfill": options.backfill} if options.backfill != BACKFILL.default else {}),
        },
        "fairshare": __version__,
    }
    # The comparators' settings join the identity only when set, so that the cells of
    # grids without them keep their keys (and a re-run reuses them).
    extra = {
        k: v for k, v in options.record().items() if k in ("slots", "thrash_factor", "max_capacity")
    }
    if extra:
        identity["comparators"] = extra
    if probe is not None:
        identity["probe"] = {"name": probe.name, "params": probe.params}
    return hashlib.sha256(canonical(identity).encode()).hexdigest()[:24]


def canonical(value: object) -> str:
    """``value`` as JSON with sorted keys: one text for one value (a cell's identity, a
    scenario's digest, a parameter value in its column).

    Examples
    --------
    >>> canonical({"b": [1, 2.5], "a": None})
    '{"a":null,"b":[1,2.5]}'
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
    )
