"""fairshare.cli.coercion: option values converted without pydantic, exactly as typer would.

Every value a plain converter takes must come out as typer's own conversion gives it (value
and type), and every value it leaves must reach typer's conversion, so that its error messages
are typer's. The commands a user runs most must not import pydantic at all.
"""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Annotated, Any

import pytest
import typer
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param

from fairshare.cli import coercion, main
from fairshare.cli.app import app

from conftest import EXAMPLES, scaled_examples

probe = typer.Typer()


@probe.command()
def _probe(
    name: Annotated[str, typer.Option("--name")] = "x",
    count: Annotated[int, typer.Option("--count")] = 1,
    seed: Annotated[int, typer.Option("--seed", min=0)] = 0,
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8765,
    scale: Annotated[float, typer.Option("--scale")] = 1.0,
    tolerance: Annotated[float, typer.Option("--tolerance", min=0.001)] = 0.01,
    until: Annotated[float | None, typer.Option("--until")] = None,
    flag: Annotated[bool, typer.Option("--flag")] = False,
) -> None:
    """A command with one option of each plain kind fairshare uses."""


PROBE = typer.main.get_command(probe)
PARAMS = {param.name: param for param in PROBE.params}
assert coercion.install(PROBE) == len(PARAMS) + 1  # and the help option


def typer_result(name: str, value: object) -> tuple[str, Any]:
    """What typer's own conversion of ``--name value`` gives: the value, or its error."""
    param = PARAMS[name]
    own = build_runtime_param(param.type_descriptor)
    context = PROBE.context_class(PROBE)
    try:
        return ("value", own.coerce(value, param=param, ctx=context))
    except BadParameter as err:
        return ("error", err.format_message())


def plain_result(name: str, value: object) -> tuple[str, Any]:
    param = PARAMS[name]
    assert coercion.installed(param)
    context = PROBE.context_class(PROBE)
    try:
        return ("value", param.get_runtime_param().coerce(value, param=param, ctx=context))
    except BadParameter as err:
        return ("error", err.format_message())


def same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Equal outcomes: the same error message, or equal values of one type (NaN equals NaN)."""
    if a[0] != b[0] or type(a[1]) is not type(b[1]):
        return False
    if isinstance(a[1], float) and math.isnan(a[1]):
        return math.isnan(b[1])
    return bool(a[1] == b[1])


NUMBER_TEXT = st.one_of(
    st.from_regex(r"[-+ ]?[0-9_]{1,25}(\.[0-9]{0,6})?([eE][-+]?[0-9]{1,4})?[ ]?", fullmatch=True),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8),
)
VALUES = st.one_of(
    NUMBER_TEXT,
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)


@settings(max_examples=scaled_examples(400), deadline=None)
@given(name=st.sampled_from(sorted(PARAMS)), value=VALUES)
@example(name="count", value="007")
@example(name="count", value="+5")
@example(name="count", value="-0")
@example(name="count", value=" 7")
@example(name="count", value="1_000")
@example(name="seed", value="-1")
@example(name="port", value="65536")
@example(name="scale", value="1e999")
@example(name="scale", value=".5")
@example(name="scale", value="-0.0")
@example(name="scale", value=3)
@example(name="scale", value=2**60)
@example(name="tolerance", value="0.0009")
@example(name="until", value="nan")
@example(name="flag", value="yes")
@example(name="name", value=b"bytes")
def test_plain_conversion_is_typers(name: str, value: object) -> None:
    assert same(plain_result(name, value), typer_result(name, value))


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("count", "12", 12),
        ("count", "-3", -3),
        ("seed", "0", 0),
        ("port", "65535", 65535),
        ("scale", "2.5", 2.5),
        ("scale", "1e3", 1000.0),
        ("scale", "-0", 0.0),
        ("until", "7", 7.0),
        ("name", "drf", "drf"),
    ],
)
def test_the_usual_spellings_are_converted_without_typer(
    name: str, text: str, expected: object
) -> None:
    """The values users type never reach typer's conversion (which would import pydantic)."""
    command = typer.main.get_command(probe)
    coercion.install(command)
    param = next(param for param in command.params if param.name == name)
    runtime = param.get_runtime_param()
    value = runtime.coerce(text, param=param, ctx=command.context_class(command))
    assert value == expected and type(value) is type(expected)
    assert runtime.fallback == []  # typer's own conversion was never built


def test_values_out_of_bounds_get_typers_message() -> None:
    assert plain_result("seed", "-1") == (
        "error",
        "Invalid value for '--seed': Input should be greater than or equal to 0",
    )
    assert plain_result("port", "70000")[0] == "error"
    assert plain_result("tolerance", "0")[0] == "error"


def test_every_plain_option_of_every_command_has_a_plain_converter() -> None:
    command = typer.main.get_command(app)
    assert coercion.install(command) > 100
    left = []
    for param in coercion._parameters(command):
        descriptor = param.type_descriptor
        plain = descriptor.annotation in (str, int, float, bool)
        if plain and not coercion.installed(param):
            left.append(param.name)
    assert left == []
    # Lists (a task's command line) stay typer's.
    submit = command.commands["submit"]  # type: ignore[attr-defined]
    assert any(not coercion.installed(param) for param in submit.params)


def test_without_typers_internals_nothing_is_installed_and_commands_still_work(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(coercion, "_plain_class", lambda: None)
    assert coercion.install(typer.main.get_command(app)) == 0
    scenario = EXAMPLES / "drf-section-4.1.yaml"
    with pytest.raises(SystemExit) as done:
        main(["solve", str(scenario), "--policy", "drf", "--json"])
    assert done.value.code == 0
    assert '"policy": "drf"' in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main(["solve", str(scenario), "--policy", "drf", "--integral", "--json", "--seed", "1"])
    assert done.value.code == 2


CHECK_IMPORTS = """
import atexit, sys
atexit.register(lambda: print("pydantic loaded:", "pydantic" in sys.modules, file=sys.stderr))
from fairshare.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", str(EXAMPLES / "drf-section-4.1.yaml"), "--policy", "drf", "--json"],
        ["policies"],
        ["--help"],
        ["simulate", "--help"],
        [
            "simulate",
            str(EXAMPLES / "sim-fair-section-5.3.yaml"),
            "--policy",
            "fair",
            "--seed",
            "3",
            "--until",
            "1e4",
            "--out",
            "{out}",
        ],
        ["solve", str(EXAMPLES / "drf-section-4.1.yaml"), "--policy", "nope"],
    ],
    ids=["solve", "policies", "help", "simulate-help", "simulate", "bad-policy"],
)
def test_commands_do_not_import_pydantic(argv: list[str], tmp_path: Any) -> None:
    """typer's conversion imports pydantic (about 50 ms); these commands never need it."""
    argv = [arg.replace("{out}", str(tmp_path / "out")) for arg in argv]
    done = subprocess.run(
        [sys.executable, "-c", CHECK_IMPORTS, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 2), done.stderr
    assert done.stderr.splitlines()[-1] == "pydantic loaded: False", done.stderr
