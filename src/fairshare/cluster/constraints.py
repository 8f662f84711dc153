"""Placement-constraint language (SPEC section 1, "Constraint expressions").

A constraint such as ``gpu and rack != 'r3'`` selects the machines a user or job may run on
(the constraint graph of Choosy section 3). The text is never run as code: a tokenizer and a
recursive-descent parser (:mod:`fairshare.cluster.constraint_syntax`) turn it into a tree of
frozen node classes (:mod:`fairshare.cluster.constraint_tree`, and only those), which is then
compiled into plain Python closures for fast evaluation.

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

Examples
--------
>>> import numpy as np
>>> from fairshare.cluster import Machine
>>> from fairshare.cluster.constraints import parse_constraint
>>> machines = [
...     Machine("m1", np.ones(1), rack="r1", attributes={"gpu": True, "kernel": "5.10"}),
...     Machine("m2", np.ones(1), rack="r3", attributes={"gpu": True, "kernel": "4.9"}),
...     Machine("m3", np.ones(1), rack="r1", attributes={"gpu": 1}),
... ]
>>> parse_constraint("gpu and rack != 'r3'").mask(machines).tolist()
[True, False, True]
>>> parse_constraint("gpu == true").mask(machines).tolist()  # 1 is not true
[True, True, False]
>>> parse_constraint("kernel >= '4.19'").mask(machines).tolist()  # version order
[True, False, False]
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

from fairshare.cluster.constraint_syntax import ConstraintSyntaxError, parse_tree
from fairshare.cluster.constraint_tree import (
    And,
    Attribute,
    CompareOp,
    Comparison,
    Expr,
    LiteralList,
    LiteralValue,
    MachineName,
    MachineRack,
    Not,
    Operand,
    Or,
    Scalar,
    Truth,
)
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

# --------------------------------------------------------------------------------------------
# Evaluation: the tree is compiled once into closures over Machine.

Predicate: TypeAlias = Callable[[Machine], bool]
"""A compiled constraint: whether a machine satisfies it."""
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
    """Type-aware ``a == b``; a missing value equals nothing."""
    kind = _kind(a)
    return kind != _ABSENT and kind == _kind(b) and bool(a == b)


def _ordered(cmp: Callable[[Any, Any], bool], a: object, b: object) -> bool:
    """``cmp(a, b)`` for two numbers or two strings (versions when both are), else False."""
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
    """A function reading ``node``'s value from a machine (``_MISSING`` when absent)."""
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
    """The machine's name (the reserved ``name``)."""
    return m.name


def _get_rack(m: Machine) -> object:
    """The machine's rack, missing when it has none (the reserved ``rack``)."""
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
    """``node`` as a closure over a machine, compiled once so that evaluation walks no tree."""
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
    """A comparison as a closure; a literal side is moved to the right and prepared once."""
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
    """Add the attribute names (``name``, ``rack`` included) ``node`` reads to ``out``."""
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

    Two constraints are equal when their source texts are. A constraint pickles and copies as
    its text (the compiled closures do not).

    Parameters
    ----------
    source : str
        The constraint's text, parsed when the object is made.

    Attributes
    ----------
    expression : Expr
        The syntax tree (:mod:`fairshare.cluster.constraint_tree`).

    Raises
    ------
    ConstraintSyntaxError
        ``source`` is not in the language.
    TypeError
        ``source`` is not a string.

    Examples
    --------
    >>> from fairshare.cluster.constraints import Constraint
    >>> Constraint("zone in ['a', 'b']") == Constraint("zone in ['a', 'b']")
    True
    """

    source: str
    expression: Expr = field(init=False, repr=False, compare=False)
    _predicate: Predicate = field(init=False, repr=False, compare=False)
    _attributes: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise TypeError(f"a constraint is a string, not {type(self.source).__name__}")
        expression = parse_tree(self.source)
        names: set[str] = set()
        _collect_attributes(expression, names)
        object.__setattr__(self, "expression", expression)
        object.__setattr__(self, "_predicate", _compile(expression))
        object.__setattr__(self, "_attributes", frozenset(names))

    def __reduce__(self) -> tuple[type[Constraint], tuple[str]]:
        # Closures do not pickle or deep-copy: rebuild from the source instead.
        return (Constraint, (self.source,))

    def matches(self, machine: Machine) -> bool:
        """Whether ``machine`` satisfies the constraint (SPEC section 1 semantics).

        Parameters
        ----------
        machine : Machine
            The machine to test.

        Returns
        -------
        bool

        Examples
        --------
        >>> import numpy as np
        >>> from fairshare.cluster import Machine
        >>> from fairshare.cluster.constraints import Constraint
        >>> Constraint("cores >= 8").matches(Machine("m", np.ones(1), attributes={"cores": 16}))
        True
        """
        return self._predicate(machine)

    def mask(self, machines: Sequence[Machine]) -> BoolArray:
        """Which of ``machines`` satisfy the constraint.

        Parameters
        ----------
        machines : Sequence of Machine
            The machines to test.

        Returns
        -------
        BoolArray
            ``mask[i]`` is ``matches(machines[i])``.
        """
        return np.fromiter(map(self._predicate, machines), dtype=np.bool_, count=len(machines))

    def attributes(self) -> frozenset[str]:
        """The attribute names the expression reads.

        Machines that agree on all of these are matched alike, which lets machine types
        (:mod:`fairshare.workload.eligibility`) evaluate a constraint once per combination.

        Returns
        -------
        frozenset of str
            The names; the reserved identifiers appear as ``"name"`` and ``"rack"``.

        Examples
        --------
        >>> from fairshare.cluster.constraints import Constraint
        >>> sorted(Constraint("gpu and rack != 'r3'").attributes())
        ['gpu', 'rack']
        """
        return self._attributes

    def __str__(self) -> str:
        return self.source


def parse_constraint(text: str) -> Constraint:
    """Parse a constraint expression (SPEC section 1).

    Parameters
    ----------
    text : str
        The constraint's text.

    Returns
    -------
    Constraint

    Raises
    ------
    ConstraintSyntaxError
        ``text`` is not in the language: a one-line message and a 1-based column.

    Examples
    --------
    >>> from fairshare.cluster.constraints import ConstraintSyntaxError, parse_constraint
    >>> parse_constraint("gpu and not preemptible")
    Constraint(source='gpu and not preemptible')
    >>> try:
    ...     parse_constraint("gpu && cores > 4")
    ... except ConstraintSyntaxError as error:
    ...     print(error.column, error.message.split(";")[0])
    5 use 'and' instead of '&'
    """
    return Constraint(text)
