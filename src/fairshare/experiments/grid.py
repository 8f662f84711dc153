"""The grid file of ``fairshare sweep`` (SPEC section 7), validated at the edge.

A grid names a scenario and lists the values of each axis; its cells are every combination.

```yaml
scenario: scenarios/fb.yaml        # read from the grid file's directory when relative
policies: [fifo, fair, drf]
seeds: [0, 1, 2, 3, 4]             # or a count: `seeds: 5` is [0, 1, 2, 3, 4]
options:                           # optional; each key's list is one axis
  delay-scheduling: [null, "5,10"]
parameters:                        # optional; each key a field of the scenario, its list an axis
  workload.jobs: [100, 400]
  machines[0].count: [50, 100]
```

Instead of ``scenario``, the grid may hold the scenario's own fields (``machines`` and
``workload`` or ``jobs``, and ``resources``, ``queues``, ``users``): its error paths are then
the grid's. A parameter replaces one value of the scenario (a mapping's key may be new; a
list's item must exist), and the scenario must be valid by itself as well as with each
value.

Everything is checked before anything runs, and the first problem is one
:class:`GridError`, ``error: FILE: WHERE: WHAT`` (SPEC section 4): the policies, the seeds,
every option value with every policy, the scenario (its own file and fields, as ``simulate``
checks them, its generator's parameters included), every scenario a parameter makes
(``parameters.PATH[i]``), and the number of cells (at most :data:`MAX_CELLS`). What it builds,
the validated :class:`Grid` with its axes and cells, is :mod:`fairshare.experiments.grid_model`.

Examples
--------
>>> from fairshare.experiments import parse_grid
>>> grid = parse_grid(
...     {
...         "machines": [{"name": "m", "count": 4, "capacity": {"slots": 2}}],
...         "workload": {"generator": "facebook-2009", "jobs": 5},
...         "policies": ["fifo", "fair"],
...         "seeds": 3,
...         "options": {"delay-scheduling": [None, "5,10"]},
...     },
...     source="grid.yaml",
... )
>>> grid.size, [axis.values for axis in grid.options]
(12, [(None, '5,10')])
>>> cell = grid.cells()[1]
>>> cell.parameters
(('scenario', 'grid.yaml'), ('policy', 'fifo'), ('seed', 1), ('delay-scheduling', None))
>>> try:
...     parse_grid({"scenario": "s.yaml", "policies": ["drf"], "seeds": [-1]}, source="g.yaml")
... except GridError as error:
...     print(error)
error: g.yaml: seeds[0]: must be a whole number from 0 to 9223372036854775807, got -1
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from fairshare.api import SimOptions, validate_policy, workload_of
from fairshare.experiments.cells import ScenarioInput
from fairshare.experiments.grid_model import (
    GRID_FIELDS,
    MAX_CELLS,
    MAX_SEED,
    SCENARIO_FIELDS,
    Grid,
    GridError,
    OptionAxis,
    ParameterAxis,
    ParameterKind,
    canonical,
)
from fairshare.experiments.options import OPTIONS, OptionFields, read_option
from fairshare.policies import PolicyError
from fairshare.workload import ScenarioError, parse_scenario
from fairshare.workload.errors import got, listing, shown_value
from fairshare.workload.limits import MAX_SCENARIO_BYTES
from fairshare.workload.loader import read_scenario_file
from fairshare.workload.reading import read_json, read_yaml

__all__ = [
    "GRID_FIELDS",
    "MAX_CELLS",
    "MAX_SEED",
    "SCENARIO_FIELDS",
    "Grid",
    "GridError",
    "OptionAxis",
    "ParameterAxis",
    "load_grid",
    "parse_grid",
]


def load_grid(path: str | Path) -> Grid:
    """Read a YAML or JSON grid file and validate it (:func:`parse_grid`).

    Parameters
    ----------
    path : str or Path
        The grid file; a relative ``scenario`` path is read from its directory.

    Returns
    -------
    Grid

    Raises
    ------
    GridError, ScenarioError
        The first problem: the grid's file and field, or the scenario's.
    """
    source = str(path)
    try:
        with Path(path).open("rb") as stream:
            raw = stream.read(MAX_SCENARIO_BYTES + 1)
    except OSError as err:
        raise GridError(source, "file", f"cannot read ({err.strerror or err})") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise GridError(
            source, "file", f"is larger than {MAX_SCENARIO_BYTES // 2**20} MiB (the limit)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise GridError(
            source, "file", f"cannot read (not UTF-8 text: bad byte at offset {err.start})"
        ) from None
    if not text.strip():
        raise GridError(source, "file", f"is empty; {_NEEDS}")
    suffix = Path(path).suffix.lower()
    is_json = suffix == ".json" or (
        suffix not in (".yaml", ".yml") and text.lstrip().startswith("{")
    )
    data = read_json(text, source) if is_json else read_yaml(text, source)
    return parse_grid(data, source, Path(path).parent)


_NEEDS = (
    "a grid needs 'scenario' (or the scenario's 'machines' and 'workload'), 'policies' and 'seeds'"
)


def parse_grid(data: object, source: str, directory: str | Path = ".") -> Grid:
    """Validate a grid document (a mapping as from ``json.load``) and build the :class:`Grid`.

    Parameters
    ----------
    data : object
        The grid document (module docstring).
    source : str
        Names the grid in errors and in the ``scenario`` column when it holds the scenario.
    directory : str or Path
        Where a relative ``scenario`` path is read from (the grid file's directory).

    Returns
    -------
    Grid

    Raises
    ------
    GridError, ScenarioError
        The first problem found.
    """
    if data is None:
        raise GridError(source, "file", f"is empty; {_NEEDS}")
    if not isinstance(data, Mapping):
        raise GridError(source, "top level", f"must be a mapping; {_NEEDS}; {got(data)}")
    for key in data:
        if key not in GRID_FIELDS + SCENARIO_FIELDS:
            raise GridError(
                source,
                str(key),
                f"unknown field {shown_value(key)}; allowed: {', '.join(GRID_FIELDS)}, or "
                f"instead of 'scenario' the scenario's {', '.join(SCENARIO_FIELDS)}",
            )
    policies = _policies(data, source)
    seeds = _seeds(data, source)
    options = _options(data, source, policies)
    shown, document, scenario_source = _scenario_document(data, source, Path(directory))
    base = _checked(document, scenario_source, source, None)
    parameters = _parameters(data, source, document)
    variants = math.prod(len(axis.values) for axis in parameters)
    combos = math.prod(len(axis.values) for axis in options)
    cells = variants * combos * len(policies) * len(seeds)
    if cells > MAX_CELLS:
        raise GridError(
            source,
            "top level",
            f"the grid has {cells:,} cells ({variants:,} scenarios x {combos:,} option "
            f"combinations x {len(policies)} policies x {len(seeds):,} seeds); at most "
            f"{MAX_CELLS:,}",
        )
    return Grid(
        source=source,
        scenario=shown,
        policies=policies,
        seeds=seeds,
        options=options,
        parameters=parameters,
        variants=_variants(document, scenario_source, source, parameters, base),
    )


def _scenario_document(
    data: Mapping[object, object], source: str, directory: Path
) -> tuple[str, dict[str, object], str]:
    """The scenario as the column shows it, its document, and the source naming it."""
    inline = [key for key in SCENARIO_FIELDS if key in data]
    if "scenario" not in data:
        if "machines" not in inline:
            raise GridError(source, "scenario", f"missing; {_NEEDS}")
        return source, {key: data[key] for key in inline}, source
    if inline:
        raise GridError(
            source,
            inline[0],
            "a grid names a scenario file or holds the scenario's fields, not both; drop "
            f"'scenario' or move {', '.join(repr(k) for k in inline)} into its file",
        )
    value = data["scenario"]
    if not isinstance(value, str) or not value.strip():
        raise GridError(source, "scenario", f"must be the path of a scenario file, {got(value)}")
    path = Path(value) if Path(value).is_absolute() else directory / value
    if not path.is_file():
        raise GridError(
            source,
            "scenario",
            f"no scenario file {str(path)!r} (a relative path is read from the grid file's "
            "directory)",
        )
    document = read_scenario_file(path)
    if not isinstance(document, dict):
        # parse_scenario names the problem (an empty file, a list) in the scenario's file
        parse_scenario(document, str(path))
        raise AssertionError("unreachable: parse_scenario accepts only mappings")
    return value, document, str(path)


def _checked(
    document: Mapping[str, object], scenario_source: str, source: str, where: str | None
) -> str:
    """Validate one scenario document as ``simulate`` would (the scenario, then its workload's
    parameters); return its digest. ``where`` None reports a problem as the scenario's own;
    otherwise as the grid's field ``where`` (a parameter value that made the scenario bad)."""
    try:
        scenario = parse_scenario(copy.deepcopy(dict(document)), scenario_source)
        if not scenario.jobs and scenario.workload is None:
            raise ScenarioError(
                scenario_source,
                "jobs",
                "nothing to simulate: the scenario has neither 'jobs' nor 'workload'; add one",
            )
        workload_of(scenario, seed=0)
    except ScenarioError as err:
        if where is None:
            raise
        raise GridError(
            source, where, f"makes the scenario invalid: {err.where}: {err.what}"
        ) from None
    return hashlib.sha256(canonical(document).encode()).hexdigest()


def _policies(data: Mapping[object, object], source: str) -> tuple[str, ...]:
    """``policies``: known online policies (or reference schedulers), none twice."""
    value = data.get("policies")
    if value is None:
        raise GridError(
            source, "policies", "missing; list the online policies to sweep, e.g. [fifo, fair, drf]"
        )
    if not isinstance(value, list) or not value:
        raise GridError(
            source, "policies", f"must be a non-empty list of policy names, {got(value)}"
        )
    names: list[str] = []
    for i, name in enumerate(value):
        where = f"policies[{i}]"
        if not isinstance(name, str):
            raise GridError(source, where, f"must be a policy name, {got(name)}")
        try:
            validate_policy(name, None, where)
        except PolicyError as err:
            raise GridError(source, where, err.what) from None
        if name in names:
            raise GridError(source, where, f"repeats policies[{names.index(name)}] ({name!r})")
        names.append(name)
    return tuple(names)


def _seeds(data: Mapping[object, object], source: str) -> tuple[int, ...]:
    """``seeds``: a list of seeds from 0 to :data:`MAX_SEED`, none twice, or a count."""
    value = data.get("seeds")
    if value is None:
        raise GridError(source, "seeds", "missing; list the seeds, e.g. [0, 1, 2], or give a count")
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MAX_CELLS:
            raise GridError(
                source, "seeds", f"a count of seeds must be from 1 to {MAX_CELLS:,}, {got(value)}"
            )
        return tuple(range(value))
    if not isinstance(value, list) or not value:
        raise GridError(
            source, "seeds", f"must be a non-empty list of seeds or a count of seeds, {got(value)}"
        )
    seeds: list[int] = []
    for i, seed in enumerate(value):
        where = f"seeds[{i}]"
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise GridError(
                source, where, f"must be a whole number from 0 to {MAX_SEED}, {got(seed)}"
            )
        if seed in seeds:
            raise GridError(source, where, f"repeats seeds[{seeds.index(seed)}] ({seed})")
        seeds.append(seed)
    return tuple(seeds)


def _axis_values(value: object, source: str, where: str, example: str) -> list[object]:
    """An axis: a non-empty list of values."""
    if not isinstance(value, list) or not value:
        raise GridError(
            source,
            where,
            f"must be a non-empty list of values (one axis of the grid), e.g. {example}, "
            f"{got(value)}",
        )
    return list(value)


def _options(
    data: Mapping[object, object], source: str, policies: Sequence[str]
) -> tuple[OptionAxis, ...]:
    """``options``: each a known option with distinct values, each value taken by every
    policy."""
    value = data.get("options")
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise GridError(
            source,
            "options",
            f"must be a mapping from option names to lists of values, {got(value)}",
        )
    axes: list[OptionAxis] = []
    for name, given in value.items():
        where = f"options.{name}"
        if name not in OPTIONS:
            raise GridError(
                source,
                where,
                f"unknown option {shown_value(name)}; allowed: {listing(OPTIONS, 20)}",
            )
        values: list[object] = []
        per_value: list[OptionFields] = []
        for j, item in enumerate(_axis_values(given, source, where, '[null, "5,10"]')):
            try:
                canonical, fields = read_option(name, item)
            except ValueError as err:
                raise GridError(source, f"{where}[{j}]", str(err)) from None
            if canonical in values:
                first = values.index(canonical)
                raise GridError(
                    source, f"{where}[{j}]", f"repeats {where}[{first}] ({shown_value(canonical)})"
                )
            for i, policy in enumerate(policies):
                try:
                    validate_policy(policy, SimOptions(**fields), f"{where}[{j}]")  # type: ignore[arg-type]
                except PolicyError as err:
                    raise GridError(
                        source,
                        f"{where}[{j}]",
                        f"{err.what} (policies[{i}]); sweep the reference schedulers in a grid "
                        "of their own",
                    ) from None
            values.append(canonical)
            per_value.append(fields)
        axes.append(OptionAxis(str(name), tuple(values), tuple(per_value)))
    return tuple(axes)


_SUMMARY_NAMES = frozenset({"machines", "jobs", "users"})
"""The scenario fields whose names are also fields of ``summary.json`` (and so columns of the
results): a parameter may not be one of them whole."""

_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[[0-9]+\])*)")


def parse_path(text: str) -> tuple[str | int, ...] | None:
    """A field path (``machines[0].count``) as its keys and list indices; None if it is not
    one.

    Examples
    --------
    >>> from fairshare.experiments.grid import parse_path
    >>> parse_path("machines[0].capacity.cpu"), parse_path("workload..jobs")
    (('machines', 0, 'capacity', 'cpu'), None)
    """
    steps: list[str | int] = []
    for part in text.split("."):
        match = _STEP.fullmatch(part)
        if match is None:
            return None
        steps.append(match.group(1))
        steps.extend(int(index) for index in re.findall(r"\[([0-9]+)\]", match.group(2)))
    return tuple(steps)


def _show_path(steps: Sequence[str | int]) -> str:
    """Steps as a field path (``machines[0].count``)."""
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def _replaced(
    document: Mapping[str, object], steps: Sequence[str | int], value: object
) -> dict[str, object] | str:
    """A copy of ``document`` with the field at ``steps`` set to ``value``; or why it cannot
    be set."""
    replaced = copy.deepcopy(dict(document))
    node: object = replaced
    for depth, step in enumerate(steps):
        last = depth == len(steps) - 1
        where = _show_path(steps[:depth]) or "the scenario"
        if isinstance(step, int):
            if not isinstance(node, list):
                return f"{where} is not a list"
            if step >= len(node):
                items = f"{len(node)} item{'s' if len(node) != 1 else ''}"
                return f"{where} has {items}; index {step} is not one of them"
            if last:
                node[step] = copy.deepcopy(value)
            else:
                node = node[step]
        else:
            if not isinstance(node, dict):
                return f"{where} is not a mapping"
            if last:
                node[step] = copy.deepcopy(value)
            elif step not in node:
                return f"the scenario has no {_show_path(steps[: depth + 1])}"
            else:
                node = node[step]
    return replaced


def _kind(values: Sequence[object]) -> ParameterKind:
    """The column type of a parameter's values (nulls left aside)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "number"
    if present and all(isinstance(v, str) for v in present):
        return "text"
    return "json"


def _parameters(
    data: Mapping[object, object], source: str, document: Mapping[str, object]
) -> tuple[ParameterAxis, ...]:
    """``parameters``: scenario fields that can be set, each with distinct values (each
    scenario they make is checked by :func:`_variants`)."""
    value = data.get("parameters")
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise GridError(
            source,
            "parameters",
            f"must be a mapping from scenario fields to lists of values, {got(value)}",
        )
    axes: list[ParameterAxis] = []
    for path, given in value.items():
        where = f"parameters.{path}"
        steps = parse_path(path) if isinstance(path, str) else None
        if steps is None or steps[0] not in SCENARIO_FIELDS:
            raise GridError(
                source,
                where,
                "must be a field of the scenario such as workload.jobs or machines[0].count, "
                f"starting with one of {', '.join(SCENARIO_FIELDS)}",
            )
        if len(steps) == 1 and steps[0] in _SUMMARY_NAMES:
            raise GridError(
                source,
                where,
                f"a whole {steps[0]!r} would share its column with summary.json's "
                f"{steps[0]!r}; sweep its items instead ({steps[0]}[0], {steps[0]}[0].count, ...)",
            )
        values = _axis_values(given, source, where, "[100, 400]")
        seen: list[str] = []
        for j, item in enumerate(values):
            text = canonical(item)
            if text in seen:
                first = seen.index(text)
                raise GridError(
                    source, f"{where}[{j}]", f"repeats {where}[{first}] ({shown_value(item)})"
                )
            seen.append(text)
            replaced = _replaced(document, steps, item)
            if isinstance(replaced, str):
                raise GridError(source, where, f"cannot be set: {replaced}")
        axes.append(ParameterAxis(str(path), steps, tuple(values), _kind(values)))
    return tuple(axes)


def _variants(
    document: Mapping[str, object],
    scenario_source: str,
    source: str,
    parameters: Sequence[ParameterAxis],
    base: str,
) -> tuple[ScenarioInput, ...]:
    """The scenario of each combination of parameter values, each checked: every value alone
    first (a problem is that value's, ``parameters.PATH[i]``), then the combinations."""
    if not parameters:
        return (ScenarioInput(dict(document), scenario_source, base),)
    for axis in parameters if len(parameters) > 1 else ():
        for j, value in enumerate(axis.values):
            alone = _replaced(document, axis.steps, value)
            assert isinstance(alone, dict)  # checked by _parameters
            _checked(alone, scenario_source, source, f"parameters.{axis.path}[{j}]")
    variants: list[ScenarioInput] = []
    for combo in itertools.product(*(range(len(axis.values)) for axis in parameters)):
        replaced: dict[str, object] | str = dict(document)
        for axis, j in zip(parameters, combo, strict=True):
            assert isinstance(replaced, dict)
            replaced = _replaced(replaced, axis.steps, axis.values[j])
        assert isinstance(replaced, dict)
        where = ", ".join(
            f"parameters.{a.path}[{j}]" for a, j in zip(parameters, combo, strict=True)
        )
        digest = _checked(replaced, scenario_source, source, where)
        variants.append(ScenarioInput(replaced, scenario_source, digest))
    return tuple(variants)
