"""The options a grid may sweep (SPEC section 7's ``options``): the rows of
:data:`fairshare.sim.option_table.OPTIONS` marked ``sweepable``, each named as on the
command line without its dashes.

Each entry says what a grid value may look like, how it reads (one canonical value for the
row and the report) and which field of :class:`~fairshare.sim.options.SimOptions` it sets,
all made from its row: its kind gives the reading (two seconds, a flag, one of its choices, a
number, ``null`` where its default is None). The ranges are
:class:`~fairshare.sim.options.SimOptions`'s own, checked where the command line's are: a
value out of range is its :class:`~fairshare.sim.options.OptionError`'s rule.
``docs/experiments.md``'s table of them is generated from the same rows
(``docs/_ext/option_tables.py``).

Examples
--------
>>> from fairshare.experiments.options import OPTIONS, read_option
>>> read_option("delay-scheduling", [5, 10])
('5,10', {'delay': (5.0, 10.0)})
>>> read_option("delay-scheduling", None)
(None, {'delay': None})
>>> OPTIONS["pool-order"].kind
'text'
>>> read_option("pool-order", "lottery")
Traceback (most recent call last):
...
ValueError: expected fair or fifo, got 'lottery'
>>> read_option("rack-slowdown", 0)
Traceback (most recent call last):
...
ValueError: must be a number > 0, at most 1e+06, got 0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fairshare.sim.option_table import OPTIONS as TABLE
from fairshare.sim.option_table import SimOption
from fairshare.sim.options import OptionError, SimOptions, seconds_pair
from fairshare.workload.errors import got

__all__ = ["OPTIONS", "OptionFields", "OptionKind", "SweptOption", "read_option"]

OptionKind = Literal["text", "bool", "number"]
"""The type of an option's column in ``results.parquet`` (null where the value is null)."""

OptionFields = dict[str, object]
"""Keyword arguments of :class:`~fairshare.sim.options.SimOptions`."""


@dataclass(frozen=True)
class SweptOption:
    """One option a grid may sweep.

    Parameters
    ----------
    name : str
        Its name in the grid and its column in ``results.parquet`` (the command line's
        option without ``--``).
    kind : OptionKind
        The column's type.
    read : callable
        A grid value to (its canonical value, the SimOptions fields it sets); ValueError
        saying what the value should look like. Ranges are left to SimOptions.
    """

    name: str
    kind: OptionKind
    read: Callable[[object], tuple[object, OptionFields]]


def _number(value: object) -> float:
    """A YAML or JSON number (not a boolean, not a string) as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, {got(value)}")
    return float(value)


def _seconds_text(seconds: float) -> str:
    """Seconds as written: whole numbers without a decimal point, others exactly."""
    return str(int(seconds)) if seconds.is_integer() else repr(seconds)


def _pair(field: str, example: str) -> Callable[[object], tuple[object, OptionFields]]:
    """``null``, ``"T1,T2"`` or ``[T1, T2]``: two numbers of seconds."""

    def read(value: object) -> tuple[object, OptionFields]:
        if value is None:
            return None, {field: None}
        items: list[float] = []
        if isinstance(value, str):
            pair = seconds_pair(value)
            items = list(pair) if pair is not None else []
        elif isinstance(value, list) and all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in value
        ):
            items = [float(x) for x in value]
        if len(items) != 2:
            raise ValueError(
                f"expected null, two seconds as {example!r} or [{example}], {got(value)}"
            )
        return ",".join(_seconds_text(x) for x in items), {field: (items[0], items[1])}

    return read


def _flag(field: str) -> Callable[[object], tuple[object, OptionFields]]:
    """``true`` or ``false``."""

    def read(value: object) -> tuple[object, OptionFields]:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, {got(value)}")
        return value, {field: value}

    return read


def _as_given(field: str) -> Callable[[object], tuple[object, OptionFields]]:
    """One of a choice's values (SimOptions names them), as given."""

    def read(value: object) -> tuple[object, OptionFields]:
        return value, {field: value}

    return read


def _number_field(option: SimOption[Any]) -> Callable[[object], tuple[object, OptionFields]]:
    """A number (``null`` too where the option's default is None; a whole number where the
    command line takes one)."""
    field = _field(option)

    def read(value: object) -> tuple[object, OptionFields]:
        if value is None and option.nullable:
            return None, {field: None}
        number = _number(value)
        if option.kind == "whole":
            if not number.is_integer():
                raise ValueError(f"expected a whole number of {option.name}, {got(value)}")
            return int(number), {field: int(number)}
        return number, {field: number}

    return read


def _field(option: SimOption[Any]) -> str:
    """The SimOptions field a sweepable option sets (every one sets one)."""
    if option.field is None:
        raise ValueError(f"{option.flag} sets no SimOptions field and cannot be swept")
    return option.field


_KINDS: Mapping[str, OptionKind] = {
    "pair": "text",
    "choice": "text",
    "text": "text",
    "flag": "bool",
    "number": "number",
    "whole": "number",
}
"""The column type of each kind of option."""


def _swept(option: SimOption[Any]) -> SweptOption:
    """The grid's reading of one sweepable row of :data:`fairshare.sim.option_table.OPTIONS`.

    Parameters
    ----------
    option : SimOption
        The row.

    Returns
    -------
    SweptOption
    """
    field = _field(option)
    read: Callable[[object], tuple[object, OptionFields]]
    if option.kind == "pair":
        read = _pair(field, option.example)
    elif option.kind == "flag":
        read = _flag(field)
    elif option.kind in ("number", "whole"):
        read = _number_field(option)
    else:
        read = _as_given(field)
    return SweptOption(option.name, _KINDS[option.kind], read)


OPTIONS: Mapping[str, SweptOption] = {
    option.name: _swept(option) for option in TABLE if option.sweepable
}
"""Every option a grid may sweep, by name, in the table's order."""


def read_option(name: str, value: object) -> tuple[object, OptionFields]:
    """One grid value of option ``name``: its canonical value and the SimOptions fields it
    sets, checked by :class:`~fairshare.sim.options.SimOptions` as the command line's are.

    Parameters
    ----------
    name : str
        A key of :data:`OPTIONS`.
    value : object
        The value as the grid file has it.

    Returns
    -------
    tuple of (object, dict)

    Raises
    ------
    KeyError
        An unknown option.
    ValueError
        A value the option does not take (the message says what it takes).
    """
    canonical, fields = OPTIONS[name].read(value)
    try:
        SimOptions(**fields)  # type: ignore[arg-type]
    except OptionError as err:
        raise ValueError(f"{err.rule}, {got(value)}") from None
    return canonical, fields
