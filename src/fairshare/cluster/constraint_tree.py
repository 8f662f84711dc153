"""The placement-constraint language's syntax tree (SPEC section 1, "Constraint expressions"):
the frozen node classes, the only ones a constraint can contain.

:func:`~fairshare.cluster.constraint_syntax.parse_tree` builds a tree of these from a
constraint's text, and :mod:`fairshare.cluster.constraints` compiles it for evaluation; the
text is never run as code. A condition (:data:`Expr`) is a :class:`Truth`, a
:class:`Comparison`, or :class:`Not`, :class:`And` and :class:`Or` over conditions; what a
comparison compares (:data:`Operand`) is an :class:`Attribute`, ``name``
(:class:`MachineName`), ``rack`` (:class:`MachineRack`) or a :class:`LiteralValue`.

Examples
--------
The tree of ``gpu and rack != 'r3'``:

>>> tree = And((Truth(Attribute("gpu")), Comparison("!=", MachineRack(), LiteralValue("r3"))))
>>> tree.operands[1]
Comparison(op='!=', left=MachineRack(), right=LiteralValue(value='r3'))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "And",
    "Attribute",
    "CompareOp",
    "Comparison",
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
]

Scalar: TypeAlias = bool | int | float | str
"""A literal's value: a boolean, a whole number, a float or a string."""
CompareOp: TypeAlias = Literal["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
"""The comparison operators of the language."""


@dataclass(frozen=True, slots=True)
class Attribute:
    """A machine attribute, read from ``Machine.attributes``.

    Parameters
    ----------
    name : str
        The attribute's name.
    """

    name: str


@dataclass(frozen=True, slots=True)
class MachineName:
    """The reserved identifier ``name``: the machine's name."""


@dataclass(frozen=True, slots=True)
class MachineRack:
    """The reserved identifier ``rack``: the machine's rack (missing when ``None``)."""


@dataclass(frozen=True, slots=True)
class LiteralValue:
    """A number, string or boolean literal.

    Parameters
    ----------
    value : Scalar
        The literal's value (escapes of a string resolved).
    """

    value: Scalar


@dataclass(frozen=True, slots=True)
class LiteralList:
    """A list of scalar literals: the right side of ``in`` / ``not in``.

    Parameters
    ----------
    items : tuple of Scalar
        The list's items, in order.
    """

    items: tuple[Scalar, ...]


Operand: TypeAlias = Attribute | MachineName | MachineRack | LiteralValue
"""What a comparison compares: an attribute, ``name``, ``rack`` or a literal."""


@dataclass(frozen=True, slots=True)
class Truth:
    """An operand used as a condition: ``gpu``, ``name``, ``true``.

    Parameters
    ----------
    operand : Operand
        The attribute, reserved identifier or boolean literal tested for truth.
    """

    operand: Operand


@dataclass(frozen=True, slots=True)
class Comparison:
    """``left OP right``; ``right`` is a list only for ``in`` / ``not in``.

    Parameters
    ----------
    op : CompareOp
        The operator.
    left : Operand
        The left side.
    right : Operand or LiteralList
        The right side: a list or a string for ``in`` / ``not in``.
    """

    op: CompareOp
    left: Operand
    right: Operand | LiteralList


@dataclass(frozen=True, slots=True)
class Not:
    """``not operand``.

    Parameters
    ----------
    operand : Expr
        The negated condition.
    """

    operand: Expr


@dataclass(frozen=True, slots=True)
class And:
    """``a and b and ...``: true when every operand is.

    Parameters
    ----------
    operands : tuple of Expr
        Two or more conditions, in the order written.
    """

    operands: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """``a or b or ...``: true when some operand is.

    Parameters
    ----------
    operands : tuple of Expr
        Two or more conditions, in the order written.
    """

    operands: tuple[Expr, ...]


Expr: TypeAlias = Truth | Comparison | Not | And | Or
"""A node of the syntax tree: a condition."""
