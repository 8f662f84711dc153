"""fairshare.sim.option_table: one table of the simulation options, and everything made from it.

Each SimOptions field a user sets has exactly one row; ``simulate`` and ``compare`` expose
exactly the table's options with its defaults and help (read from the commands typer builds);
``run_settings`` sets each row's field; the sweep takes exactly the sweepable rows; the docs'
tables are the generated ones; the ranges the docs state are the ones SimOptions checks.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fairshare.cli import coercion
from fairshare.cli.app import command_tree
from fairshare.cli.runs import run_settings
from fairshare.experiments.options import OPTIONS as SWEPT
from fairshare.experiments.options import read_option
from fairshare.policies.copy_compute import DEFAULT_MAX_COMPUTING, DEFAULT_MAX_REDUCERS
from fairshare.sim.option_table import (
    BACKFILL,
    BY_FIELD,
    BY_NAME,
    COPY_COMPUTE_SPLITTING,
    NOT_OPTIONS,
    OPTIONS,
    SimOption,
)
from fairshare.sim.options import OptionError, SimOptions

from conftest import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]

OWN_FLAGS = {
    "simulate": {
        "scenario_path",
        "--policy",
        "-p",
        "--out",
        "-o",
        "--force",
        "--quiet",
        "--progress",
    },
    "compare": {
        "scenario_path",
        "--policies",
        "--out",
        "-o",
        "--reference",
        "--force",
        "--quiet",
        "--progress",
    },
}
"""The options ``simulate`` and ``compare`` declare themselves; every other is the table's."""

SAMPLES: dict[str, tuple[object, object]] = {
    "seed": (3, 3),
    "delay-scheduling": ("5,10", (5.0, 10.0)),
    "preemption": ("30,60", (30.0, 60.0)),
    "until": (100.0, 100.0),
    "rack-slowdown": (2.0, 2.0),
    "off-rack-slowdown": (3.0, 3.0),
    "pool-order": ("fifo", "fifo"),
    "copy-compute-splitting": (True, True),
    "headroom": (True, True),
    "reduce-slowstart": (0.5, 0.5),
    "load-scale": (2.0, 2.0),
    "time-scale": (0.5, 0.5),
    "slots": (4, 4),
    "thrash-factor": (3.0, 3.0),
    "max-capacity": (0.5, 0.5),
    "backfill": ("easy", "easy"),
    "usage-half-life": (3600.0, 3600.0),
}
"""A value other than the default for each option, as the command line gives it, and what its
field then holds (``--trace`` is left to the trace tests: it needs a trace file)."""


def command(name: str) -> Any:
    """The click command typer builds for ``fairshare NAME``."""
    return command_tree([name]).commands[name]  # type: ignore[attr-defined]


def table_params(name: str) -> dict[str, Any]:
    """The command's options that are not its own, by flag."""
    params = {opt: param for param in command(name).params for opt in param.opts}
    return {flag: param for flag, param in params.items() if flag not in OWN_FLAGS[name]}


def option_tables() -> ModuleType:
    """``docs/_ext/option_tables.py``, the generator of the docs' tables (not a package)."""
    path = ROOT / "docs" / "_ext" / "option_tables.py"
    spec = importlib.util.spec_from_file_location("option_tables", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_field_a_user_sets_has_exactly_one_row() -> None:
    fields = [option.field for option in OPTIONS if option.field is not None]
    assert len(fields) == len(set(fields))
    every = {f.name for f in dataclasses.fields(SimOptions)}
    assert set(fields) | set(NOT_OPTIONS) == every
    assert not set(fields) & set(NOT_OPTIONS)
    assert [option.name for option in OPTIONS if option.field is None] == ["seed", "trace"]
    assert len({option.flag for option in OPTIONS}) == len(OPTIONS) == 18
    assert BY_FIELD["rack_slowdown"].flag == "--rack-slowdown"
    assert BY_NAME["backfill"] is BACKFILL


def test_simoptions_defaults_are_the_tables() -> None:
    made = SimOptions()
    for field, option in BY_FIELD.items():
        assert getattr(made, field) == option.default, field
    assert (made.rack_slowdown, made.off_rack_slowdown, made.pool_order) == (1.2, 1.5, "fair")
    assert (made.thrash_factor, made.max_capacity, made.until) == (2.0, 1.0, None)


@pytest.mark.parametrize("name", ["simulate", "compare"])
def test_a_run_command_exposes_exactly_the_tables_options(name: str) -> None:
    params = table_params(name)
    assert list(params) == [option.flag for option in OPTIONS]
    for option in OPTIONS:
        param = params[option.flag]
        assert param.name == option.parameter
        assert param.default == option.default, option.flag
        assert param.help == option.help
        # An option the table gives no metavar shows a short one in --help (cli.coercion).
        assert param.metavar == option.metavar or option.metavar is None, option.flag
        assert param.type_descriptor.parameter_info.min == option.minimum
        # A plain type: cli.coercion converts it without pydantic.
        assert coercion.installed(param), option.flag
    assert params["--seed"].type_descriptor.parameter_info.min == 0
    assert params["--rack-slowdown"].default == 1.2


def test_serve_takes_the_tables_backfill() -> None:
    (param,) = [param for param in command("serve").params if "--backfill" in param.opts]
    assert (param.default, param.help, param.metavar) == (None, BACKFILL.help, "easy")


def test_run_settings_sets_each_rows_field() -> None:
    assert set(SAMPLES) == {option.name for option in OPTIONS} - {"trace"}
    given = {option.parameter: option.default for option in OPTIONS}
    # EASY backfilling does not combine with copy-compute splitting: one run each.
    for left_out in ("backfill", "copy-compute-splitting"):
        values = dict(given)
        for name, (text, _) in SAMPLES.items():
            if name != left_out:
                values[BY_NAME[name].parameter] = text
        settings = run_settings(EXAMPLES / "sim-two-jobs.yaml", values)
        assert settings.seed == 3 and settings.trace is None
        for name, (_, held) in SAMPLES.items():
            field = BY_NAME[name].field
            if field is not None:
                expected = BY_NAME[name].default if name == left_out else held
                assert getattr(settings.options, field) == expected, name


def test_the_sweep_takes_exactly_the_sweepable_rows() -> None:
    sweepable = [option for option in OPTIONS if option.sweepable]
    assert list(SWEPT) == [option.name for option in sweepable]
    assert {option.name for option in OPTIONS if not option.sweepable} == {"seed", "trace"}
    kinds = {"pair": "text", "choice": "text", "flag": "bool", "number": "number"}
    kinds["whole"] = "number"
    for option in sweepable:
        assert SWEPT[option.name].kind == kinds[option.kind]
        text, held = SAMPLES[option.name]
        grid_value = list(held) if option.kind == "pair" else text
        _, fields = read_option(option.name, grid_value)
        assert fields == {option.field: held}
        if option.nullable:
            assert read_option(option.name, None) == (None, {option.field: None})


def test_the_docs_tables_are_the_generated_ones() -> None:
    tables = option_tables()
    assert set(tables.TABLES) == {"simulation-options", "sweep-options"}
    for name, (page, generate) in tables.TABLES.items():
        assert tables.committed(name) == generate(), (
            f"{page}: run python docs/_ext/option_tables.py to rewrite the {name} table"
        )
    rows = tables.simulate_table().splitlines()[2:]
    assert len(rows) == len(OPTIONS)
    assert rows[5].startswith("| `--rack-slowdown` | 1.2 | How many times longer")
    assert "| `slots` | `null` (one per CPU), a whole number from 1 to 1000000 |" in (
        tables.sweep_table()
    )


def test_the_copy_compute_help_states_the_policies_limits() -> None:
    admits = f"admits {DEFAULT_MAX_REDUCERS} reducers, {DEFAULT_MAX_COMPUTING} computing"
    assert COPY_COMPUTE_SPLITTING.help.endswith(admits)


def _limits(bounds: str) -> tuple[float, bool, float]:
    """``from A to B``, ``> A, at most B``, ``>= A, at most B`` or ``in (A, B]`` as the lowest
    value, whether it is allowed, and the highest (allowed)."""
    if found := re.fullmatch(r"from (\S+) to (\S+)", bounds):
        return float(found[1]), True, float(found[2])
    if found := re.fullmatch(r"(>=?) (\S+), at most (\S+)", bounds):
        return float(found[2]), found[1] == ">=", float(found[3])
    found = re.fullmatch(r"in \((\S+), (\S+)\]", bounds)
    assert found is not None, bounds
    return float(found[1]), False, float(found[2])


def _accepts(option: SimOption[Any], value: float) -> bool:
    number: Any = int(value) if option.kind == "whole" else value
    try:
        SimOptions(**{option.field: (number, number) if option.kind == "pair" else number})  # type: ignore[arg-type]
    except OptionError:
        return False
    return True


@pytest.mark.parametrize(
    "option",
    [option for option in OPTIONS if option.field and option.kind in ("number", "whole", "pair")],
    ids=lambda option: option.name,
)
def test_the_bounds_the_docs_state_are_the_ones_simoptions_checks(option: SimOption[Any]) -> None:
    low, low_allowed, high = _limits(option.bounds)
    step = 1.0 if option.kind == "whole" else 0.0
    below = low - (step or (abs(low) / 2 if low else 1.0)) if low_allowed else low
    above = high + (step or high)
    assert _accepts(option, high)
    assert not _accepts(option, above)
    assert not _accepts(option, below)
    if low_allowed:
        assert _accepts(option, low)
