"""``--help`` for a first contact (issue 30): flags without ``<bool>``, option names never cut
at 80 columns, valid values listed, and docs pages cited rather than SPEC sections; the names
the help lists are the registries' own."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator

import pytest

from fairshare.cli import main
from fairshare.cli.app import command_tree
from fairshare.cli.names import (
    ONLINE_POLICY_NAMES,
    PROPERTY_NAMES,
    REFERENCE_POLICY_NAMES,
    SOLVER_POLICY_NAMES,
)


def test_the_names_are_the_registries() -> None:
    from fairshare.fairness import PROPERTIES  # noqa: PLC0415
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415
    from fairshare.solvers import SOLVER_POLICIES  # noqa: PLC0415

    assert tuple(SOLVER_POLICIES) == SOLVER_POLICY_NAMES
    assert tuple(ONLINE_POLICIES) == ONLINE_POLICY_NAMES
    assert tuple(REFERENCE_POLICIES) == REFERENCE_POLICY_NAMES
    assert tuple(PROPERTIES) == PROPERTY_NAMES


def command_paths() -> Iterator[list[str]]:
    def walk(command: object, prefix: list[str]) -> Iterator[list[str]]:
        yield prefix
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(sub, [*prefix, name])

    yield from walk(command_tree([], whole=True), [])


def help_text(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return out.getvalue()


@pytest.mark.parametrize("argv", list(command_paths()), ids=lambda argv: " ".join(argv) or "root")
def test_help_at_80_columns(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = help_text(argv, monkeypatch)
    assert "<bool>" not in text
    assert "…" not in text, text  # rich cuts a cell it cannot wrap with an ellipsis
    assert "SPEC" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


def lists(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a word of its own (``drf``, not ``collapsed-drf``)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def flat(text: str) -> str:
    """The help's words in order, the table's borders and line breaks gone."""
    return " ".join(text.replace("│", " ").split())


def test_help_lists_the_valid_values(monkeypatch: pytest.MonkeyPatch) -> None:
    check = flat(help_text(["check"], monkeypatch))
    for name in (*PROPERTY_NAMES, *SOLVER_POLICY_NAMES):
        assert lists(check, name), name
    assert "--fail-on-violation" in check
    for command in (["simulate"], ["serve"], ["compare"]):
        text = flat(help_text(command, monkeypatch))
        for name in (*ONLINE_POLICY_NAMES, *REFERENCE_POLICY_NAMES):
            assert lists(text, name), (command, name)
    solve = flat(help_text(["solve"], monkeypatch))
    assert all(lists(solve, name) for name in SOLVER_POLICY_NAMES)
    assert "docs/commands.md#solve" in solve
