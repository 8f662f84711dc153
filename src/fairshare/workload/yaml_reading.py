"""The YAML reader of scenario files: PyYAML's safe loader over libyaml's parser, with a
composer that enforces the nesting and alias limits while composing and a constructor that
rejects a key repeated in one mapping (:mod:`fairshare.workload.reading` has the JSON
reader and imports this module for the first YAML file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from fairshare.workload.errors import ScenarioError, shown_value
from fairshare.workload.limits import MAX_ALIAS_NODES, MAX_NESTING
from fairshare.workload.reading import (
    _TOO_DEEP,
    _DuplicateKeyError,
    _LimitExceeded,
    _one_line,
    _unreadable_number,
)

try:  # libyaml's parser is several times faster than the pure-Python one
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser as _Parser  # type: ignore[assignment]


_MERGE = "tag:yaml.org,2002:merge"
_NESTING_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_Constructor = Callable[[Any, yaml.Node], object]
_UNDEFINED: _Constructor = yaml.constructor.SafeConstructor.yaml_constructors[None]


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

    def __init__(self, plain: bool = False) -> None:
        super().__init__()
        self.plain = plain
        self.depth = 0
        self.deepest = 0
        self.through_aliases = 0
        self.composed = 0
        self.anchored: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, height)

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.plain:
            # No anchor or alias can occur (the text has no '&' or '*'): only the depth counts.
            event = self.peek_event()
            if type(event) in _NESTING_EVENTS:
                self.depth += 1
                if self.depth > MAX_NESTING:
                    raise _LimitExceeded(event.start_mark.line + 1, _TOO_DEEP)
                node = super().compose_node(parent, index)
                self.depth -= 1
                return node
            return super().compose_node(parent, index)
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
        _LimitedComposer.__init__(self, plain=_plain(stream))

    def plain_document(self) -> object:
        """The next document of a plain text (:func:`_plain`), built from the parser's
        events without composing nodes: the same objects, errors and limits as the general
        way (depth checked as collections open, a repeated key refused, scalars resolved and
        constructed by the same constructors)."""
        self.get_event()  # DocumentStartEvent
        value = self._plain_value()
        self.get_event()  # DocumentEndEvent
        return value

    def _plain_value(self) -> object:
        event: Any = self.get_event()
        kind = type(event)
        if kind is yaml.ScalarEvent:
            tag = self.resolve(yaml.ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark)
            construct: _Constructor = self.yaml_constructors.get(tag) or _UNDEFINED
            return construct(self, node)
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _LimitExceeded(event.start_mark.line + 1, _TOO_DEEP)
        if kind is yaml.SequenceStartEvent:
            items: list[object] = []
            while not self.check_event(yaml.SequenceEndEvent):
                items.append(self._plain_value())
            self.get_event()
            self.depth -= 1
            return items
        mapping: dict[Any, Any] = {}
        lines: dict[object, int] = {}
        while not self.check_event(yaml.MappingEndEvent):
            key_event: Any = self.peek_event()
            scalar = type(key_event) is yaml.ScalarEvent
            key = self._plain_value()
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    event.start_mark,
                    "found unhashable key",
                    key_event.start_mark,
                ) from None
            line = key_event.start_mark.line + 1
            if scalar and key in lines:
                raise _DuplicateKeyError(key, line, lines[key])
            lines.setdefault(key, line)
            mapping[key] = self._plain_value()
        self.get_event()
        self.depth -= 1
        return mapping

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        pairs = node.value
        if not any(key_node.tag == _MERGE for key_node, _ in pairs):
            # No merge key (the common case): each key constructed once, checked as it comes.
            mapping: dict[Any, Any] = {}
            lines: dict[object, int] = {}
            construct = self.construct_object
            for key_node, value_node in pairs:
                key = construct(key_node, deep=deep)
                try:
                    hash(key)
                except TypeError:
                    return super().construct_mapping(node, deep=deep)  # PyYAML's error
                line = key_node.start_mark.line + 1
                if key in lines and isinstance(key_node, yaml.ScalarNode):
                    raise _DuplicateKeyError(key, line, lines[key])
                lines.setdefault(key, line)
                mapping[key] = construct(value_node, deep=deep)
            return mapping
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


def _plain(text: str) -> bool:
    """Whether ``text`` can hold no anchor (``&``), alias (``*``), explicit tag (``!``) or
    merge key (``<<``): what scenario files and ``kubectl`` output look like. Such text is
    read by :meth:`_YamlLoader.plain_data`, straight from the parser's events to objects
    (about a third faster); a character that may start one, even inside a string, only
    sends the text the general way."""
    return "&" not in text and "*" not in text and "!" not in text and "<<" not in text


def read_yaml(text: str, source: str) -> object:
    return _read(text, source, single=True)


def read_yaml_documents(text: str, source: str) -> list[object]:
    """Every document of a multi-document YAML stream (``---`` between them), each within
    the limits a scenario is read with; the first problem as a :class:`ScenarioError`.

    Parameters
    ----------
    text : str
        The stream.
    source : str
        Its name, for messages.

    Returns
    -------
    list of object
    """
    documents = _read(text, source, single=False)
    assert isinstance(documents, list)
    return documents


def _read(text: str, source: str, *, single: bool) -> object:
    try:
        loader = _YamlLoader(text)
        try:
            if loader.plain:
                loader.get_event()  # StreamStartEvent
                found: list[object] = []
                while not loader.check_event(yaml.StreamEndEvent):
                    found.append(loader.plain_document())
                    if single and not loader.check_event(yaml.StreamEndEvent):
                        event = loader.peek_event()
                        raise yaml.composer.ComposerError(
                            "expected a single document in the stream",
                            None,
                            "but found another document",
                            event.start_mark,
                        )
                if single:
                    return found[0] if found else None
                return found
            if single:
                return loader.get_single_data()
            documents: list[object] = []
            while loader.check_data():  # type: ignore[no-untyped-call]
                documents.append(loader.get_data())
            return documents
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
