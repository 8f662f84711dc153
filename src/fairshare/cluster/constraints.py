"""Placement-constraint language (SPEC section 1, "Constraint expressions").

A constraint such as ``gpu and rack != 'r3'`` selects the machines a user or job may run on.
The text is never run as code: a tokenizer and a recursive-descent parser turn it into a tree
of the frozen node classes below (and only those), which is then compiled into plain Python
closures for fast evaluation.

Grammar (lowest precedence first; keywords are lower-case)::

    constraint := or_expr END
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | primary
    primary    := "(" or_expr ")"
                | operand [compare_op operand | ("in" | "not" "in") (list | STRING)]
    operand    := IDENT | "name" | "rack" | NUMBER | STRING | "true" | "false"
    list       := "[" [scalar ("," scalar)* [","]] "]"
    scalar     := NUMBER | STRING | "true" | "false"
    compare_op := "==" | "!=" | "<" | "<=" | ">" | ">="

``True``/``False`` are accepted for ``true``/``false``. An operand alone must be an attribute
name, ``name``, ``rack`` or a boolean; comparisons do not chain (``a < b < c`` is an error).

Semantics (SPEC section 1): a bare attribute is true iff the machine has it and its value is
truthy (``True``, a non-zero number, a non-empty string); bare ``name``/``rack`` are true iff
non-empty. A missing attribute (or a rack of ``None``) is unequal to everything: ``==``, the
ordering comparisons and ``in`` are false, ``!=`` and ``not in`` true. Equality is type-aware
(booleans equal only booleans, numbers compare numerically, strings equal strings). Ordering
applies to two numbers, or to two strings: compared as dotted version numbers ("4.19.2" <
"5.10") when both look like ones, else lexicographically; any other pair does not match.
``x in [..]`` is type-aware equality with some item; ``x in 'text'`` is true iff ``x`` is a
string contained in ``'text'``. ``!=`` and ``not in`` are always the negations of ``==`` and
``in``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeAlias

import numpy as np

from fairshare.cluster.model import BoolArray, Machine

__all__ = [
    "And",
    "Attribute",
    "CompareOp",
    "Comparison",
    "Constraint",
    "ConstraintSyntaxError",
    "Expr",
    "LiteralList",
    "LiteralValue",
    "MachineName",
    "MachineRack",
    "Not",
    "Operand",
    "Or",
    "Scalar",
    "Truth",
    "parse_constraint",
]

Scalar: TypeAlias = bool | int | float | str
CompareOp: TypeAlias = Literal["==", "!=", "<", "<=", ">", ">=", "in", "not in"]

#: Nesting limit for parentheses plus ``not`` (keeps parsing and evaluation off the
#: interpreter's recursion limit).
MAX_DEPTH = 100

_ALLOWED = (
    "allowed: attribute names, name, rack, literals (numbers, 'strings', true/false, [lists]), "
    "== != < <= > >= in, not in, and, or, not, parentheses"
)


class ConstraintSyntaxError(ValueError):
    """A constraint that is not in the language (SPEC section 1): ``column`` is 1-based.

    ``str(error)`` is the one-line ``message`` (what is wrong and what is allowed); callers
    add the column and field path when they report it.
    """

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


# --------------------------------------------------------------------------------------------
# The syntax tree: the only node types a constraint can contain.


@dataclass(frozen=True, slots=True)
class Attribute:
    """A machine attribute, read from ``Machine.attributes``."""

    name: str


@dataclass(frozen=True, slots=True)
class MachineName:
    """The reserved identifier ``name``: the machine's name."""


@dataclass(frozen=True, slots=True)
class MachineRack:
    """The reserved identifier ``rack``: the machine's rack (missing when ``None``)."""


@dataclass(frozen=True, slots=True)
class LiteralValue:
    """A number, string or boolean literal."""

    value: Scalar


@dataclass(frozen=True, slots=True)
class LiteralList:
    """A list of scalar literals: the right side of ``in`` / ``not in``."""

    items: tuple[Scalar, ...]


Operand: TypeAlias = Attribute | MachineName | MachineRack | LiteralValue


@dataclass(frozen=True, slots=True)
class Truth:
    """An operand used as a condition: ``gpu``, ``name``, ``true``."""

    operand: Operand


@dataclass(frozen=True, slots=True)
class Comparison:
    """``left OP right``; ``right`` is a list only for ``in`` / ``not in``."""

    op: CompareOp
    left: Operand
    right: Operand | LiteralList


@dataclass(frozen=True, slots=True)
class Not:
    operand: Expr


@dataclass(frozen=True, slots=True)
class And:
    operands: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or:
    operands: tuple[Expr, ...]


Expr: TypeAlias = Truth | Comparison | Not | And | Or


# --------------------------------------------------------------------------------------------
# Tokenizer.


class _Token(NamedTuple):
    kind: str  # ident name rack num str bool op and or not in ( ) [ ] , end error
    text: str
    value: Scalar
    column: int


_TOKEN_RE = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
    | (?P<ident>[A-Za-z_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)
    | (?P<op>==|!=|<=|>=|<|>)
    | (?P<punct>[()\[\],])
    | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)
_WORDS: dict[str, tuple[str, Scalar]] = {
    "and": ("and", ""),
    "or": ("or", ""),
    "not": ("not", ""),
    "in": ("in", ""),
    "true": ("bool", True),
    "True": ("bool", True),
    "false": ("bool", False),
    "False": ("bool", False),
    "name": ("name", ""),
    "rack": ("rack", ""),
}
_CHAR_HINTS: dict[str, str] = {
    "=": "use '==' to compare ('=' alone is not allowed)",
    "!": "use 'not' for negation ('!' is only allowed in '!=')",
    "&": "use 'and' instead of '&'",
    "|": "use 'or' instead of '|'",
    ".": "attribute access ('.') is not allowed ('.' may only appear inside an attribute name)",
    "+": "arithmetic is not allowed ('+' and '-' are only allowed as the sign of a number)",
    "-": "arithmetic is not allowed ('+' and '-' are only allowed as the sign of a number)",
    "*": "arithmetic is not allowed",
    "/": "arithmetic is not allowed",
    "%": "arithmetic is not allowed",
}


def _tokenize(text: str) -> list[_Token]:
    """Split ``text`` into tokens. A bad character ends the list with an ``error`` token, so
    that the parser reports the leftmost problem first."""
    tokens: list[_Token] = []
    append = tokens.append
    match = _TOKEN_RE.match
    pos = 0
    n = len(text)
    while pos < n:
        m = match(text, pos)
        if m is None:
            append(_bad_char(text, pos))
            return tokens
        kind = m.lastgroup
        tok = m.group()
        col = pos + 1
        end = m.end()
        if kind == "ident":
            word = _WORDS.get(tok)
            if word is None:
                append(_Token("ident", tok, tok, col))
            else:
                append(_Token(word[0], tok, word[1], col))
        elif kind == "op":
            append(_Token("op", tok, tok, col))
        elif kind == "punct":
            append(_Token(tok, tok, tok, col))
        elif kind == "num":
            if end < n and (text[end].isalnum() or text[end] in "_."):
                bad = re.match(r"[\w.+-]*", text[end:])
                whole = tok + (bad.group() if bad else "")
                message = f"malformed number {whole!r}; quote text and version numbers, e.g. "
                message += "kernel >= '5.4.2'"
                append(_Token("error", message, "", col))
                return tokens
            append(_number(tok, col))
        elif kind == "str":
            append(_string(tok, col))
        pos = end
    append(_Token("end", "", "", n + 1))
    return tokens


def _bad_char(text: str, pos: int) -> _Token:
    char = text[pos]
    col = pos + 1
    if char in "'\"":
        message = (
            f"unterminated string: the quote {char} at column {col} is never closed; "
            f"end the string with {char} (write \\{char} for a quote inside it)"
        )
    else:
        hint = _CHAR_HINTS.get(char, f"unexpected character {char!r}")
        message = f"{hint}; {_ALLOWED}"
    return _Token("error", message, "", col)


def _number(text: str, col: int) -> _Token:
    if any(c in text for c in ".eE"):
        value: float | int = float(text)
        if value in (float("inf"), float("-inf")):
            return _Token("error", f"number {text} is out of range", "", col)
    else:
        try:
            value = int(text)
        except ValueError:  # more digits than Python converts
            return _Token("error", f"number {text[:20]}... has too many digits", "", col)
    return _Token("num", text, value, col)


def _string(text: str, col: int) -> _Token:
    body = text[1:-1]
    if "\\" not in body:
        return _Token("str", text, body, col)
    for esc in _ESCAPE_RE.finditer(body):
        if esc.group(1) not in "\\'\"":
            message = (
                f"unknown escape {esc.group()!r} in a string; only \\' \\\" and \\\\ are allowed"
            )
            return _Token("error", message, "", col + 1 + esc.start())
    return _Token("str", text, _ESCAPE_RE.sub(r"\1", body), col)


# --------------------------------------------------------------------------------------------
# Parser.

_OPERAND_KINDS = frozenset({"ident", "name", "rack", "num", "str", "bool"})
_SCALAR_KINDS = frozenset({"num", "str", "bool"})


def _describe(tok: _Token) -> str:
    if tok.kind == "end":
        return "the end of the constraint"
    text = tok.text if len(tok.text) <= 30 else tok.text[:27] + "..."
    text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if tok.kind == "str":
        return f"the string {text}"
    return f"'{text}'"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0
        self.depth = 0

    # -- token access ---------------------------------------------------------------------
    def peek(self) -> _Token:
        tok = self.tokens[self.pos]
        if tok.kind == "error":
            raise ConstraintSyntaxError(tok.text, tok.column)
        return tok

    def advance(self) -> _Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def at_comparison(self) -> bool:
        """Whether the next tokens are ``==``-like, ``in`` or ``not in``."""
        kind = self.peek().kind
        if kind in ("op", "in"):
            return True
        return kind == "not" and self.tokens[self.pos + 1].kind == "in"

    def previous(self) -> str:
        if self.pos == 0:
            return "at the start"
        return f"after {_describe(self.tokens[self.pos - 1])}"

    # -- grammar --------------------------------------------------------------------------
    def parse(self) -> Expr:
        if self.peek().kind == "end":
            raise ConstraintSyntaxError(
                "empty constraint: write a condition such as gpu and rack != 'r3'; " + _ALLOWED,
                1,
            )
        expr = self.parse_or()
        tok = self.peek()
        if tok.kind != "end":
            raise self.trailing(tok)
        return expr

    def parse_or(self) -> Expr:
        first = self.parse_and()
        if self.peek().kind != "or":
            return first
        items = [first]
        while self.peek().kind == "or":
            self.advance()
            items.append(self.parse_and())
        return Or(tuple(items))

    def parse_and(self) -> Expr:
        first = self.parse_not()
        if self.peek().kind != "and":
            return first
        items = [first]
        while self.peek().kind == "and":
            self.advance()
            items.append(self.parse_not())
        return And(tuple(items))

    def parse_not(self) -> Expr:
        count = 0
        while self.peek().kind == "not":
            tok = self.advance()
            count += 1
            self.enter(tok)
        expr = self.parse_primary()
        self.depth -= count
        for _ in range(count):
            expr = Not(expr)
        return expr

    def enter(self, tok: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConstraintSyntaxError(
                f"the constraint nests too deeply (more than {MAX_DEPTH} levels of parentheses "
                "and not)",
                tok.column,
            )

    def parse_primary(self) -> Expr:
        tok = self.peek()
        kind = tok.kind
        if kind in _OPERAND_KINDS:
            return self.parse_comparison(self.parse_operand())
        if kind == "(":
            self.advance()
            self.enter(tok)
            expr = self.parse_or()
            close = self.peek()
            if close.kind == "end":
                raise ConstraintSyntaxError(
                    f"unbalanced parentheses: '(' at column {tok.column} is never closed; add ')'",
                    tok.column,
                )
            if close.kind != ")":
                raise ConstraintSyntaxError(
                    f"expected ')', 'and' or 'or', found {_describe(close)}", close.column
                )
            self.advance()
            self.depth -= 1
            if self.at_comparison():
                nxt = self.peek()
                raise ConstraintSyntaxError(
                    f"a parenthesised condition cannot be compared ({_describe(nxt)} after ')'); "
                    "compare attribute names, name, rack or literals, e.g. cores >= 4",
                    nxt.column,
                )
            return expr
        if kind == "[":
            raise ConstraintSyntaxError(
                "a list is only allowed on the right of in / not in, e.g. zone in ['a', 'b']",
                tok.column,
            )
        if kind == ")" and self.depth == 0:
            raise ConstraintSyntaxError(
                f"unbalanced parentheses: ')' at column {tok.column} has no matching '('",
                tok.column,
            )
        if kind == "end":
            raise ConstraintSyntaxError(
                f"the constraint ends too early: expected a condition {self.previous()}",
                tok.column,
            )
        raise ConstraintSyntaxError(
            f"expected a condition (an attribute name, name, rack, true/false, a comparison or "
            f"'(') {self.previous()}, found {_describe(tok)}",
            tok.column,
        )

    def parse_operand(self) -> Operand:
        tok = self.advance()
        node: Operand
        if tok.kind == "ident":
            node = Attribute(tok.text)
        elif tok.kind == "name":
            node = MachineName()
        elif tok.kind == "rack":
            node = MachineRack()
        else:
            node = LiteralValue(tok.value)
        nxt = self.peek()
        if nxt.kind == "(":
            raise ConstraintSyntaxError(
                f"function calls are not allowed ('(' after {_describe(tok)}); a constraint is "
                f"never run as code; {_ALLOWED}",
                nxt.column,
            )
        if nxt.kind == "[":
            raise ConstraintSyntaxError(
                f"indexing is not allowed ('[' after {_describe(tok)}); to test membership "
                f"write x in [...]; {_ALLOWED}",
                nxt.column,
            )
        return node

    def parse_comparison(self, left: Operand) -> Expr:
        first = self.tokens[self.pos - 1]
        tok = self.peek()
        right: Operand | LiteralList
        op: CompareOp
        if tok.kind == "op":
            self.advance()
            op = _COMPARE_OPS[tok.text]
            right = self.parse_right_operand(tok)
        elif tok.kind == "in":
            self.advance()
            op = "in"
            right = self.parse_membership(tok)
        elif tok.kind == "not" and self.tokens[self.pos + 1].kind == "in":
            self.advance()
            self.advance()
            op = "not in"
            right = self.parse_membership(tok)
        else:
            if isinstance(left, LiteralValue) and not isinstance(left.value, bool):
                raise ConstraintSyntaxError(
                    f"{_describe(first)} alone is not a condition; compare it, e.g. cores >= 4",
                    first.column,
                )
            return Truth(left)
        if self.at_comparison():
            nxt = self.peek()
            raise ConstraintSyntaxError(
                f"comparisons cannot be chained ({_describe(nxt)} after a comparison); "
                "write a < b and b < c instead of a < b < c",
                nxt.column,
            )
        return Comparison(op, left, right)

    def parse_right_operand(self, op_tok: _Token) -> Operand:
        tok = self.peek()
        if tok.kind in _OPERAND_KINDS:
            return self.parse_operand()
        after = f"after '{op_tok.text}'"
        if tok.kind == "[":
            message = (
                f"a list is only allowed after in / not in, not {after}; "
                "write x in [...] to compare with several values"
            )
        elif tok.kind == "end":
            message = (
                f"the constraint ends too early: expected an attribute name or a literal {after}"
            )
        elif tok.kind == "(":
            message = (
                f"expected an attribute name or a literal {after}, found '('; "
                "parentheses group conditions, not values"
            )
        else:
            message = f"expected an attribute name or a literal {after}, found {_describe(tok)}"
        raise ConstraintSyntaxError(message, tok.column)

    def parse_membership(self, in_tok: _Token) -> LiteralValue | LiteralList:
        tok = self.peek()
        if tok.kind == "[":
            return self.parse_list()
        if tok.kind == "str":
            node = self.parse_operand()
            assert isinstance(node, LiteralValue)
            return node
        op = "not in" if in_tok.kind == "not" else "in"
        raise ConstraintSyntaxError(
            f"the right side of '{op}' must be a list such as ['a', 'b'] or a 'string' "
            f"(substring test), found {_describe(tok)}",
            tok.column,
        )

    def parse_list(self) -> LiteralList:
        open_tok = self.advance()
        items: list[Scalar] = []
        while True:
            tok = self.peek()
            if tok.kind == "]":
                self.advance()
                return LiteralList(tuple(items))
            if tok.kind in _SCALAR_KINDS:
                self.advance()
                items.append(tok.value)
                sep = self.peek()
                if sep.kind == ",":
                    self.advance()
                elif sep.kind not in ("]", "end"):
                    raise ConstraintSyntaxError(
                        f"expected ',' or ']' in the list, found {_describe(sep)}", sep.column
                    )
                continue
            if tok.kind == "end":
                message = f"unbalanced brackets: '[' at column {open_tok.column} is never closed"
            elif tok.kind == "[":
                message = "lists cannot be nested; a list holds numbers, 'strings' and true/false"
            elif tok.kind == ",":
                message = "expected a list item before ','; a list is [item, item, ...]"
            else:
                message = (
                    "a list may only hold literals (numbers, 'strings', true/false), "
                    f"found {_describe(tok)}"
                )
            raise ConstraintSyntaxError(message, tok.column)

    def trailing(self, tok: _Token) -> ConstraintSyntaxError:
        if tok.kind == ")":
            return ConstraintSyntaxError(
                f"unbalanced parentheses: ')' at column {tok.column} has no matching '('",
                tok.column,
            )
        if tok.kind == "not":
            message = (
                "unexpected 'not' after a complete condition; did you mean 'not in' or 'and not'?"
            )
        elif tok.kind == "ident" and tok.text.lower() in ("and", "or", "not", "in"):
            message = f"unexpected {_describe(tok)}; keywords are lower-case: {tok.text.lower()}"
        else:
            message = (
                f"unexpected {_describe(tok)} after a complete condition; "
                "join conditions with and / or"
            )
        return ConstraintSyntaxError(message, tok.column)


_COMPARE_OPS: dict[str, CompareOp] = {
    "==": "==",
    "!=": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}


# --------------------------------------------------------------------------------------------
# Evaluation: the tree is compiled once into closures over Machine.

Predicate: TypeAlias = Callable[[Machine], bool]
_Getter: TypeAlias = Callable[[Machine], object]
_Test: TypeAlias = Callable[[object], bool]

_MISSING: Any = object()
_ABSENT, _BOOL, _NUM, _STR = 0, 1, 2, 3
_VERSION_RE = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_FLIP: dict[CompareOp, CompareOp] = {
    "<": ">",
    "<=": ">=",
    ">": "<",
    ">=": "<=",
    "==": "==",
    "!=": "!=",
}


def _kind(value: object) -> int:
    """The value's type class: bool, number, string, or absent (missing or unsupported)."""
    t = type(value)
    if t is str:
        return _STR
    if t is bool:
        return _BOOL
    if t is int or t is float:
        return _NUM
    if isinstance(value, bool | np.bool_):
        return _BOOL
    if isinstance(value, int | float | np.integer | np.floating):
        return _NUM
    if isinstance(value, str):
        return _STR
    return _ABSENT


def _version(text: str) -> tuple[tuple[int, str], ...] | None:
    """A sort key for a dotted version number ("4.19.2"), or None if ``text`` is not one.

    Each component is keyed by (digit count, digits) without leading zeros, which orders
    non-negative integers numerically without converting them."""
    if _VERSION_RE.fullmatch(text) is None:
        return None
    parts = [p.lstrip("0") for p in text.split(".")]
    return tuple((len(p), p) for p in parts)


def _equal(a: object, b: object) -> bool:
    kind = _kind(a)
    return kind != _ABSENT and kind == _kind(b) and bool(a == b)


def _ordered(cmp: Callable[[Any, Any], bool], a: object, b: object) -> bool:
    ka = _kind(a)
    if ka != _kind(b):
        return False
    if ka == _NUM:
        return cmp(a, b)
    if ka == _STR:
        assert isinstance(a, str) and isinstance(b, str)
        va, vb = _version(a), _version(b)
        if va is not None and vb is not None:
            return cmp(va, vb)
        return cmp(a, b)
    return False


def _getter(node: Operand) -> _Getter:
    if isinstance(node, Attribute):
        key = node.name

        def get_attribute(m: Machine) -> object:
            return m.attributes.get(key, _MISSING)

        return get_attribute
    if isinstance(node, MachineName):
        return _get_name
    if isinstance(node, MachineRack):
        return _get_rack
    value = node.value
    return lambda m: value


def _get_name(m: Machine) -> object:
    return m.name


def _get_rack(m: Machine) -> object:
    return _MISSING if m.rack is None else m.rack


def _literal_test(op: CompareOp, right: LiteralValue | LiteralList) -> _Test:
    """The test ``value OP right`` for a literal right side, with the literal's type class
    and version key worked out once."""
    if isinstance(right, LiteralList):
        by_kind: dict[int, frozenset[object]] = {
            kind: frozenset(item for item in right.items if _kind(item) == kind)
            for kind in (_BOOL, _NUM, _STR)
        }

        def member(v: object) -> bool:
            items = by_kind.get(_kind(v))
            return items is not None and v in items

        if op == "in":
            return member
        return lambda v: not member(v)
    lit = right.value
    lk = _kind(lit)
    if op in ("in", "not in"):
        assert isinstance(lit, str)
        if op == "in":
            return lambda v: isinstance(v, str) and v in lit
        return lambda v: not (isinstance(v, str) and v in lit)
    if op == "==":
        return lambda v: _kind(v) == lk and bool(v == lit)
    if op == "!=":
        return lambda v: not (_kind(v) == lk and bool(v == lit))
    cmp = _ORDER[op]
    if lk == _NUM:
        return lambda v: _kind(v) == _NUM and cmp(v, lit)
    if lk == _STR:
        assert isinstance(lit, str)
        lit_version = _version(lit)
        if lit_version is None:
            return lambda v: isinstance(v, str) and cmp(v, lit)

        def versioned(v: object) -> bool:
            if not isinstance(v, str):
                return False
            key = _version(v)
            return cmp(v, lit) if key is None else cmp(key, lit_version)

        return versioned
    return lambda v: False


def _compile(node: Expr) -> Predicate:
    if isinstance(node, Truth):
        if isinstance(node.operand, LiteralValue):
            constant = bool(node.operand.value)
            return lambda m: constant
        get = _getter(node.operand)
        return lambda m: _kind(v := get(m)) != _ABSENT and bool(v)
    if isinstance(node, Comparison):
        return _compile_comparison(node)
    if isinstance(node, Not):
        inner = _compile(node.operand)
        return lambda m: not inner(m)
    parts = tuple(_compile(item) for item in node.operands)
    if isinstance(node, And):
        if len(parts) == 2:
            p, q = parts
            return lambda m: p(m) and q(m)
        return lambda m: all(p(m) for p in parts)
    if len(parts) == 2:
        p, q = parts
        return lambda m: p(m) or q(m)
    return lambda m: any(p(m) for p in parts)


def _compile_comparison(node: Comparison) -> Predicate:
    op, left, right = node.op, node.left, node.right
    if isinstance(right, LiteralValue | LiteralList):
        test = _literal_test(op, right)
    elif isinstance(left, LiteralValue):  # 5 < cores  ==  cores > 5
        test = _literal_test(_FLIP[op], left)
        left = right
    else:
        get_a, get_b = _getter(left), _getter(right)
        if op == "==":
            return lambda m: _equal(get_a(m), get_b(m))
        if op == "!=":
            return lambda m: not _equal(get_a(m), get_b(m))
        cmp = _ORDER[op]
        return lambda m: _ordered(cmp, get_a(m), get_b(m))
    get = _getter(left)
    return lambda m: test(get(m))


def _collect_attributes(node: Expr | Operand | LiteralList, out: set[str]) -> None:
    if isinstance(node, Attribute):
        out.add(node.name)
    elif isinstance(node, MachineName):
        out.add("name")
    elif isinstance(node, MachineRack):
        out.add("rack")
    elif isinstance(node, Truth):
        _collect_attributes(node.operand, out)
    elif isinstance(node, Comparison):
        _collect_attributes(node.left, out)
        _collect_attributes(node.right, out)
    elif isinstance(node, Not):
        _collect_attributes(node.operand, out)
    elif isinstance(node, And | Or):
        for item in node.operands:
            _collect_attributes(item, out)


# --------------------------------------------------------------------------------------------
# Public API.


@dataclass(frozen=True)
class Constraint:
    """A parsed placement constraint (SPEC section 1, "Constraint expressions").

    ``Constraint(text)`` parses ``text`` (raising ``ConstraintSyntaxError``); two constraints
    are equal when their source texts are. ``expression`` is the syntax tree.
    """

    source: str
    expression: Expr = field(init=False, repr=False, compare=False)
    _predicate: Predicate = field(init=False, repr=False, compare=False)
    _attributes: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise TypeError(f"a constraint is a string, not {type(self.source).__name__}")
        expression = _Parser(self.source).parse()
        names: set[str] = set()
        _collect_attributes(expression, names)
        object.__setattr__(self, "expression", expression)
        object.__setattr__(self, "_predicate", _compile(expression))
        object.__setattr__(self, "_attributes", frozenset(names))

    def __reduce__(self) -> tuple[type[Constraint], tuple[str]]:
        # Closures do not pickle or deep-copy: rebuild from the source instead.
        return (Constraint, (self.source,))

    def matches(self, machine: Machine) -> bool:
        """Whether ``machine`` satisfies the constraint (SPEC section 1 semantics)."""
        return self._predicate(machine)

    def mask(self, machines: Sequence[Machine]) -> BoolArray:
        """A boolean array: ``mask[i]`` is ``matches(machines[i])``."""
        return np.fromiter(map(self._predicate, machines), dtype=np.bool_, count=len(machines))

    def attributes(self) -> frozenset[str]:
        """The attribute names the expression reads; the reserved identifiers appear as
        ``"name"`` and ``"rack"`` (machines that agree on all of these, and on the name and
        rack when listed, are matched alike)."""
        return self._attributes

    def __str__(self) -> str:
        return self.source


def parse_constraint(text: str) -> Constraint:
    """Parse a constraint expression (SPEC section 1); raise ``ConstraintSyntaxError`` with
    a one-line message and 1-based column if ``text`` is not in the language."""
    return Constraint(text)
