r"""Reading a scenario file's text (stage 0 of :mod:`fairshare.workload.loader`).

YAML and JSON readers that reject duplicate keys and enforce the input limits of
:mod:`fairshare.workload.limits` (nesting depth, alias expansion) while parsing, before
anything is built from the data. YAML is composed by a Python composer over libyaml's
parser: libyaml's own composer recurses in C and dies with SIGSEGV on deep input, and an
alias is one shared node until something walks it, so depth and alias expansion are counted
while composing.

Examples
--------
>>> from fairshare.workload import ScenarioError
>>> from fairshare.workload.reading import read_yaml
>>> read_yaml("machines: [{name: m, capacity: {slots: 4}}]", "tiny.yaml")
{'machines': [{'name': 'm', 'capacity': {'slots': 4}}]}
>>> try:
...     read_yaml("users: []\nusers: []\n", "twice.yaml")
... except ScenarioError as error:
...     print(error)
error: twice.yaml: line 2: duplicate key 'users' (first at line 1)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NoReturn

from fairshare.workload.errors import ScenarioError, shown_value
from fairshare.workload.limits import MAX_NESTING, MAX_SCENARIO_BYTES

# --------------------------------------------------------------------------------------------
# YAML and JSON readers that reject duplicate keys


class _DuplicateKeyError(Exception):
    """A key repeated in one mapping, with the lines of both (0 when JSON cannot tell)."""

    def __init__(self, key: object, line: int, first_line: int) -> None:
        super().__init__(key, line, first_line)
        self.key = key
        self.line = line
        self.first_line = first_line


class _LimitExceeded(Exception):
    """A nesting or alias limit passed at ``line``, with the message."""

    def __init__(self, line: int, what: str) -> None:
        super().__init__(line, what)
        self.line = line
        self.what = what


def read_text_file(path: str | Path) -> str:
    """An input file's text (a scenario, or a configuration to import), read safely: at most
    :data:`~fairshare.workload.limits.MAX_SCENARIO_BYTES` (not the whole of a huge file or
    pipe), UTF-8 with or without a byte-order mark.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    str

    Raises
    ------
    ScenarioError
        The file cannot be read, is too large or is not UTF-8 (WHERE ``file``).
    """
    source = str(path)
    try:
        with Path(path).open("rb") as stream:
            raw = stream.read(MAX_SCENARIO_BYTES + 1)
    except OSError as err:
        raise ScenarioError(source, "file", f"cannot read ({err.strerror or err})") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            source,
            "file",
            f"is larger than {MAX_SCENARIO_BYTES // 2**20} MiB (the limit for a scenario file)",
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ScenarioError(
            source, "file", f"cannot read (not UTF-8 text: bad byte at offset {err.start})"
        ) from None


def read_yaml(text: str, source: str) -> object:
    """The data of a YAML scenario (:mod:`fairshare.workload.yaml_reading`), or its first
    problem as a :class:`ScenarioError`. PyYAML is imported by the first YAML file read, not
    by a JSON one (0.013 s of a ``simulate`` of a JSON scenario)."""
    from fairshare.workload.yaml_reading import read_yaml as read  # noqa: PLC0415

    return read(text, source)


_TOO_DEEP = f"nested more than {MAX_NESTING} levels deep (the limit); scenarios nest a few levels"


def _unreadable_number(err: ValueError) -> str:
    """The message for a ValueError of the readers: Python refuses integers of more than
    4,300 digits (``sys.int_info``).
    """
    if "digits" in str(err):
        return "a number has thousands of digits; numbers must be finite floats (below 1e308)"
    return f"cannot read: {_one_line(str(err))[:200]}"


def _one_line(text: str) -> str:
    """``text`` with its whitespace runs (newlines included) as single spaces."""
    return " ".join(text.split())


class _JsonConstantError(Exception):
    """``NaN``, ``Infinity`` or ``-Infinity`` in JSON text (Python's json accepts them)."""

    pass


def _reject_constant(name: str) -> NoReturn:
    """``parse_constant`` hook of the JSON reader: refuse the non-finite constants."""
    raise _JsonConstantError(name)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of the JSON reader: a mapping, or :class:`_DuplicateKeyError`."""
    # dict() builds in C; only a mapping that lost keys is walked for its first repeat.
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKeyError(key, 0, 0)
            seen.add(key)
    return out


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def _line_of_constant(text: str) -> int | None:
    """The line of the first non-finite constant outside a string, if any."""
    for match in _JSON_TOKEN.finditer(text):
        if match.group(1):
            return text.count("\n", 0, match.start()) + 1
    return None


def _nesting_over_limit(data: object) -> bool:
    """True if mappings and lists nest more than ``MAX_NESTING`` deep (without recursion):
    one level at a time, each level's containers gathered by one comprehension."""
    containers = (dict, list)
    level = [data] if isinstance(data, containers) else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_NESTING:
            return True
        level = [
            item
            for value in level
            for item in (value.values() if isinstance(value, dict) else value)
            if isinstance(item, containers)
        ]
    return False


def read_json(text: str, source: str) -> object:
    """Parse JSON text within the input limits.

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        Names the input in error messages.

    Returns
    -------
    object
        The document: dicts, lists and scalars.

    Raises
    ------
    ScenarioError
        Invalid JSON (at the line), ``NaN`` or an infinity, a duplicate key, nesting deeper than
        ``MAX_NESTING``, or a number of thousands of digits.

    Examples
    --------
    >>> from fairshare.workload import ScenarioError
    >>> from fairshare.workload.reading import read_json
    >>> read_json('{"users": [{"name": "a"}]}', "tiny.json")
    {'users': [{'name': 'a'}]}
    >>> try:
    ...     read_json('{"weight": NaN}', "nan.json")
    ... except ScenarioError as error:
    ...     print(error)
    error: nan.json: line 1: NaN is not allowed; numbers must be finite
    """
    data = _parse_json(text, source)
    if _nesting_over_limit(data):
        raise ScenarioError(source, "file", _TOO_DEEP)
    return data


def _parse_json(text: str, source: str) -> object:
    """``json.loads`` with duplicate keys and non-finite constants refused, errors located."""
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        raise ScenarioError(
            source, f"line {err.lineno}", f"invalid JSON: {err.msg} at column {err.colno}"
        ) from None
    except _JsonConstantError as constant:
        line = _line_of_constant(text)
        raise ScenarioError(
            source,
            f"line {line}" if line is not None else "file",
            f"{constant.args[0]} is not allowed; numbers must be finite",
        ) from None
    except ValueError as err:
        raise ScenarioError(source, "file", _unreadable_number(err)) from None
    except RecursionError:
        raise ScenarioError(source, "file", _TOO_DEEP) from None
    except _DuplicateKeyError as dup:
        # json does not report where the key was; YAML reads JSON and knows the line.
        try:
            read_yaml(text, source)
        except ScenarioError as located:
            if located.what.startswith("duplicate key"):
                raise located from None
        raise ScenarioError(source, "file", f"duplicate key {shown_value(dup.key)}") from None
