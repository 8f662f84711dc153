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
from collections.abc import Callable
from typing import Any, NoReturn

import yaml

from fairshare.workload.errors import ScenarioError, shown_value
from fairshare.workload.limits import (
    MAX_ALIAS_NODES,
    MAX_NESTING,
)

try:  # libyaml's parser is several times faster than the pure-Python one
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser as _Parser  # type: ignore[assignment]


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


class _LimitedComposer(yaml.composer.Composer):
    """YAML's composer (events to nodes) in Python, with the nesting and alias limits of
    :mod:`fairshare.workload.limits` checked as each node is composed, before anything is
    constructed. libyaml's own composer recurses in C and overflows the stack (SIGSEGV) on
    input nested tens of thousands deep, and an alias is composed as one shared node, so the
    size of what aliases expand to is counted here: each alias adds the nodes of what it names
    (aliases inside included), and its depth below the alias."""

    # provided by the parser the loader combines this with
    check_event: Callable[..., bool]
    peek_event: Callable[[], Any]

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.deepest = 0
        self.through_aliases = 0
        self.composed = 0
        self.anchored: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, height)

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        """Compose one node, counting its depth and what an alias expands to."""
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            node = super().compose_node(parent, index)
            size, height = self.anchored.get(id(node), (1, 0))
            self.through_aliases += size
            if self.through_aliases > MAX_ALIAS_NODES:
                raise _LimitExceeded(
                    mark.line + 1,
                    f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes (an alias bomb?); "
                    "write the values out or use fewer aliases",
                )
            self._reach(self.depth + height, mark)
            self.composed += size
            return node
        event = self.peek_event()
        anchor = getattr(event, "anchor", None)
        nests = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
        outer_deepest, before = self.deepest, self.composed
        if anchor is not None:
            self.deepest = self.depth
        if nests:
            self.depth += 1
            self._reach(self.depth, event.start_mark)
        node = super().compose_node(parent, index)
        self.composed += 1
        if nests:
            self.depth -= 1
        if anchor is not None:
            self.anchored[id(node)] = (self.composed - before, self.deepest - self.depth)
            self.deepest = max(outer_deepest, self.deepest)
        return node

    def _reach(self, depth: int, mark: yaml.Mark) -> None:
        """Record that nodes reach ``depth``; past ``MAX_NESTING`` an error at ``mark``."""
        if depth > MAX_NESTING:
            raise _LimitExceeded(mark.line + 1, _TOO_DEEP)
        self.deepest = max(self.deepest, depth)


class _YamlLoader(
    _LimitedComposer,
    _Parser,
    yaml.constructor.SafeConstructor,
    yaml.resolver.Resolver,
):
    """The safe loader (libyaml's parser when built with it), with the limited composer, and
    rejecting a key that repeats in one mapping."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        _LimitedComposer.__init__(self)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A mapping; a key that repeats in it raises :class:`_DuplicateKeyError`."""
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                key_node, yaml.ScalarNode
            ):
                continue
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _DuplicateKeyError(key, line, seen[key])
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_yaml(text: str, source: str) -> object:
    """Parse YAML text (the safe subset) within the input limits.

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        Names the input in error messages.

    Returns
    -------
    object
        The document: mappings, lists and scalars.

    Raises
    ------
    ScenarioError
        Invalid YAML, a duplicate key, nesting deeper than ``MAX_NESTING`` or aliases expanding
        to more than ``MAX_ALIAS_NODES`` nodes (at the line), or a number of thousands of digits.
    """
    try:
        loader = _YamlLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except _DuplicateKeyError as dup:
        raise ScenarioError(
            source,
            f"line {dup.line}",
            f"duplicate key {shown_value(dup.key)} (first at line {dup.first_line})",
        ) from None
    except _LimitExceeded as limit:
        raise ScenarioError(source, f"line {limit.line}", limit.what) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "not valid YAML"
        where = f"line {mark.line + 1}" if mark is not None else "file"
        if "maximum nesting depth" in problem:
            # PyYAML 6.0.4's scanner has a nesting limit of its own, and its scanning reads
            # ahead of the composer: the same input is refused by whichever comes first.
            raise ScenarioError(source, where, _TOO_DEEP) from None
        column = f" at column {mark.column + 1}" if mark is not None else ""
        context = f" ({err.context})" if err.context and err.problem else ""
        raise ScenarioError(source, where, f"invalid YAML: {problem}{column}{context}") from None
    except yaml.YAMLError as err:
        raise ScenarioError(source, "file", f"invalid YAML: {_one_line(str(err))}") from None
    except ValueError as err:
        raise ScenarioError(source, "file", _unreadable_number(err)) from None
    except RecursionError:
        raise ScenarioError(source, "file", _TOO_DEEP) from None


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
