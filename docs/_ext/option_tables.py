"""The docs' tables of the simulation options, generated from the one table of them.

``docs/commands.md`` lists ``simulate``'s (and ``compare``'s) options and
``docs/experiments.md`` the options a sweep's grid may vary; both tables are made here from
:data:`fairshare.sim.option_table.OPTIONS` and sit between ``<!-- NAME:begin ... -->`` and
``<!-- NAME:end -->`` markers. ``tests/test_option_table.py`` checks that the committed
tables are the generated ones. After changing the option table, rewrite them::

    python docs/_ext/option_tables.py          # rewrite the tables in place
    python docs/_ext/option_tables.py --check  # exit 1 if a table is not the generated one
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fairshare.sim.option_table import OPTIONS, SimOption

DOCS = Path(__file__).resolve().parents[1]


def _sentence(*parts: str) -> str:
    """Parts joined by ``; `` (empty ones left out)."""
    return "; ".join(part for part in parts if part)


def default_text(option: SimOption[Any]) -> str:
    """The default as the docs show it: what None or off means, a choice as code, a number
    as written."""
    if option.default is None or option.default is False:
        return option.unset or "off"
    if isinstance(option.default, str):
        return f"`{option.default}`"
    return f"{option.default:g}"


def range_text(option: SimOption[Any]) -> str:
    """The values a number or a pair takes (empty for the other kinds)."""
    if option.kind == "pair":
        return f"seconds {option.bounds}"
    if option.kind == "whole":
        return f"a whole number {option.bounds}"
    if option.kind == "number":
        return f"a number {option.bounds}"
    return ""


def value_text(option: SimOption[Any]) -> str:
    """What a value of the option looks like in a grid (YAML or JSON)."""
    if option.kind == "flag":
        return "`true`, `false`"
    off = f"`null` ({option.unset or 'off'}), " if option.nullable else ""
    if option.kind == "pair":
        listed = option.metavar.replace(",", ", ") if option.metavar else ""
        return f'{off}`"{option.metavar}"` or `[{listed}]`: {range_text(option)}'
    if option.kind == "choice":
        return off + ", ".join(f"`{choice}`" for choice in option.choices)
    return off + range_text(option)


def simulate_table() -> str:
    """``simulate``'s options: flag (with what its value looks like), default, meaning."""
    lines = ["| option | default | meaning |", "| --- | --- | --- |"]
    for option in OPTIONS:
        flag = option.flag if option.metavar is None else f"{option.flag} {option.metavar}"
        meaning = _sentence(option.help, range_text(option), option.details)
        lines.append(f"| `{flag}` | {default_text(option)} | {meaning} |")
    return "\n".join(lines)


def sweep_table() -> str:
    """The options a grid may vary: name, values, the command line's option."""
    lines = ["| option | values | as `simulate`'s |", "| --- | --- | --- |"]
    lines += [
        f"| `{option.name}` | {value_text(option)} | `{option.flag}` |"
        for option in OPTIONS
        if option.sweepable
    ]
    return "\n".join(lines)


TABLES: dict[str, tuple[Path, Callable[[], str]]] = {
    "simulation-options": (DOCS / "commands.md", simulate_table),
    "sweep-options": (DOCS / "experiments.md", sweep_table),
}
"""Each generated table: its marker name, its page and its generator."""


def markers(name: str) -> tuple[str, str]:
    """The lines that open and close table ``name`` on its page."""
    return (
        f"<!-- {name}:begin (generated from fairshare.sim.option_table by "
        "docs/_ext/option_tables.py) -->",
        f"<!-- {name}:end -->",
    )


def committed(name: str) -> str:
    """Table ``name`` as its page has it, between its markers (without them)."""
    page, _ = TABLES[name]
    begin, end = markers(name)
    text = page.read_text(encoding="utf-8")
    start = text.index(begin) + len(begin)
    return text[start : text.index(end, start)].strip("\n")


def rewrite(name: str) -> bool:
    """Put the generated table ``name`` on its page; True if the page changed."""
    page, generate = TABLES[name]
    begin, end = markers(name)
    text = page.read_text(encoding="utf-8")
    start = text.index(begin) + len(begin)
    stop = text.index(end, start)
    new = f"{text[:start]}\n{generate()}\n{text[stop:]}"
    if new == text:
        return False
    page.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    """Rewrite every table (``--check``: only say which differ, exit 1 if any)."""
    stale = [name for name, (_, generate) in TABLES.items() if committed(name) != generate()]
    if "--check" in argv:
        for name in stale:
            print(f"{TABLES[name][0]}: the {name} table is not the generated one")
        return 1 if stale else 0
    for name in stale:
        rewrite(name)
        print(f"rewrote the {name} table in {TABLES[name][0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
