"""The options a grid may sweep (SPEC section 7's ``options``): ``fairshare simulate``'s
options (SPEC section 3), each named as on the command line without its dashes.

Each entry says what a grid value may look like, how it reads (one canonical value for the
row and the report) and which field of :class:`~fairshare.sim.options.SimOptions` it sets.
The ranges are :class:`~fairshare.sim.options.SimOptions`'s own, checked where the command
line's are: a value out of range is its :class:`~fairshare.sim.options.OptionError`'s rule.

| option | values | sets |
| --- | --- | --- |
| ``delay-scheduling`` | ``null``, ``"T1,T2"`` or ``[T1, T2]`` (seconds) | ``delay`` |
| ``preemption`` | ``null``, ``"TMIN,TFAIR"`` or ``[TMIN, TFAIR]`` | ``preemption`` |
| ``copy-compute-splitting`` | ``true``, ``false`` | ``copy_compute_splitting`` |
| ``headroom`` | ``true``, ``false`` | ``headroom`` |
| ``pool-order`` | ``fair``, ``fifo`` | ``pool_order`` |
| ``rack-slowdown``, ``off-rack-slowdown`` | a number > 0 | ``rack_slowdown``, ... |
| ``until`` | ``null`` or seconds | ``until`` |
| ``reduce-slowstart`` | ``null`` or a fraction from 0 to 1 | ``reduce_slowstart`` |
| ``load-scale``, ``time-scale`` | a number from 1e-6 to 1e6 | ``load_scale``, ``time_scale`` |
| ``slots`` | ``null`` or slots per machine | ``slots`` (the ``slots`` policy) |
| ``thrash-factor`` | a number >= 1 | ``thrash_factor`` (over-committed memory) |
| ``max-capacity`` | a fraction in (0, 1] | ``max_capacity`` (the ``capacity`` policy) |
| ``backfill`` | ``null`` (off), ``easy`` | ``backfill`` |

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
from typing import Literal

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


def _pool_order(value: object) -> tuple[object, OptionFields]:
    """``fair`` or ``fifo`` (SimOptions names the two)."""
    return value, {"pool_order": value}


def _backfill(value: object) -> tuple[object, OptionFields]:
    """``null`` or ``easy`` (SimOptions names the one)."""
    return value, {"backfill": value}


def _number_field(field: str) -> Callable[[object], tuple[object, OptionFields]]:
    """A number (``null`` too where the field may be None)."""

    def read(value: object) -> tuple[object, OptionFields]:
        if value is None and field in ("until", "reduce_slowstart", "slots"):
            return None, {field: None}
        number = _number(value)
        if field == "slots":
            if not number.is_integer():
                raise ValueError(f"expected a whole number of slots, {got(value)}")
            return int(number), {field: int(number)}
        return number, {field: number}

    return read


OPTIONS: Mapping[str, SweptOption] = {
    option.name: option
    for option in (
        SweptOption("delay-scheduling", "text", _pair("delay", "5,10")),
        SweptOption("preemption", "text", _pair("preemption", "30,60")),
        SweptOption("copy-compute-splitting", "bool", _flag("copy_compute_splitting")),
        SweptOption("headroom", "bool", _flag("headroom")),
        SweptOption("pool-order", "text", _pool_order),
        SweptOption("rack-slowdown", "number", _number_field("rack_slowdown")),
        SweptOption("off-rack-slowdown", "number", _number_field("off_rack_slowdown")),
        SweptOption("until", "number", _number_field("until")),
        SweptOption("reduce-slowstart", "number", _number_field("reduce_slowstart")),
        SweptOption("load-scale", "number", _number_field("load_scale")),
        SweptOption("time-scale", "number", _number_field("time_scale")),
        SweptOption("slots", "number", _number_field("slots")),
        SweptOption("thrash-factor", "number", _number_field("thrash_factor")),
        SweptOption("max-capacity", "number", _number_field("max_capacity")),
        SweptOption("backfill", "text", _backfill),
    )
}
"""Every option a grid may sweep, by name."""


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
