"""fairshare.cli.app.command_tree: a command runs in a one-branch tree exactly as in the whole.

The command line builds only the invoked command's branch (typer evaluates every command's
signature to build it: 20 ms for all of them). Help, usage errors and results must not tell
the two trees apart, for every command and every command of every group.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
import typer

from fairshare.cli import coercion
from fairshare.cli.app import app, command_tree

from conftest import EXAMPLES

WHOLE = command_tree([], whole=True)
GROUPS = {name: cmd for name, cmd in WHOLE.commands.items() if hasattr(cmd, "commands")}  # type: ignore[attr-defined]


def outcome(argv: list[str], *, whole: bool) -> tuple[str, str, str]:
    """What ``fairshare ARGV`` prints and how it ends, in the chosen tree."""
    tree = command_tree(argv, whole=whole)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result = tree.main(args=list(argv), prog_name="fairshare", standalone_mode=False)
            ending = f"returned {result!r}"
        except typer.Exit as done:
            ending = f"exit {done.exit_code}"
        except SystemExit as done:
            ending = f"system exit {done.code}"
        except Exception as error:  # the error itself is what the trees must agree on
            message = getattr(error, "format_message", error.__str__)()
            context = getattr(error, "ctx", None)
            where = context.command_path if context is not None else ""
            ending = f"{type(error).__name__} at {where!r}: {message}"
    return out.getvalue(), err.getvalue(), ending


def argv_cases() -> list[list[str]]:
    cases: list[list[str]] = []
    for name in sorted(WHOLE.commands):  # type: ignore[attr-defined]
        cases += [[name, "--help"], [name], [name, "--no-such-option"]]
        if name in GROUPS:
            for sub in sorted(GROUPS[name].commands):
                cases += [[name, sub, "--help"], [name, sub, "--no-such-option"]]
    return cases


@pytest.mark.parametrize("argv", argv_cases(), ids=" ".join)
def test_a_branch_behaves_as_the_whole_tree(argv: list[str]) -> None:
    assert outcome(argv, whole=False) == outcome(argv, whole=True)


def test_a_branch_holds_only_the_invoked_command() -> None:
    tree = command_tree(["simulate", "--help"])
    assert list(tree.commands) == ["simulate"]  # type: ignore[attr-defined]
    assert list(command_tree(["bench", "online"]).commands) == ["bench"]  # type: ignore[attr-defined]
    for argv in ([], ["--help"], ["simulat"]):
        assert set(command_tree(argv).commands) == set(WHOLE.commands)  # type: ignore[attr-defined]


def test_every_command_and_group_is_registered_by_name() -> None:
    """A branch is found by the registered name; an unnamed one would always build the
    whole tree (and this test says which)."""
    names = [info.name for info in app.registered_commands]
    names += [info.name for info in app.registered_groups]
    assert all(isinstance(name, str) for name in names), names
    assert sorted(names) == sorted(WHOLE.commands)  # type: ignore[attr-defined]


def test_a_branch_gives_the_same_results() -> None:
    argv = ["solve", str(EXAMPLES / "drf-section-4.1.yaml"), "--policy", "drf", "--json"]
    branch, whole = outcome(argv, whole=False), outcome(argv, whole=True)
    assert branch == whole
    assert json.loads(branch[0])["users"]["A"]["tasks"] == 3.0


def test_the_branch_has_plain_converters() -> None:
    tree = command_tree(["simulate"])
    simulate = tree.commands["simulate"]  # type: ignore[attr-defined]
    assert all(coercion.installed(param) for param in simulate.params)
