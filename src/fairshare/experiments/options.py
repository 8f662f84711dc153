"""The options a grid may sweep (SPEC section 7's ``options``): ``fairshare simulate``'s
options (SPEC section 3), each named as on the command line without its dashes.

Each entry says what a grid value may be, how it reads (one canonical value for the row and
the report) and which field of :class:`~fairshare.sim.engine.SimOptions` it sets. The bounds
are the command line's: seconds from 0 to ``MAX_SECONDS``, slowdown factors above 0 and at
most :data:`MAX_SLOWDOWN` (``fairshare.cli.runs.MAX_SLOWDOWN``; a test keeps them equal).

| option | values | sets |
| --- | --- | --- |
| ``delay-scheduling`` | ``null``, ``"T1,T2"`` or ``[T1, T2]`` (seconds) | ``delay`` |
| ``preemption`` | ``null``, ``"TMIN,TFAIR"`` or ``[TMIN, TFAIR]`` | ``preemption`` |
| ``copy-compute-splitting`` | ``true``, ``false`` | ``copy_compute_splitting`` |
| ``headroom`` | ``true``, ``false`` | ``headroom`` |
| ``pool-order`` | ``fair``, ``fifo`` | ``pool_order`` |
| ``rack-slowdown``, ``off-rack-slowdown`` | a number > 0 | ``rack_slowdown``, ... |
| ``until`` | ``null`` or seconds | ``until`` |

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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from fairshare.workload.errors import got
from fairshare.workload.model import MAX_SECONDS

__all__ = ["MAX_SLOWDOWN", "OPTIONS", "OptionKind", "SweptOption", "read_option"]

MAX_SLOWDOWN = 1e6
"""The largest ``rack-slowdown`` / ``off-rack-slowdown`` factor, as on the command line."""

OptionKind = Literal["text", "bool", "number"]
"""The type of an option's column in ``results.parquet`` (null where the value is null)."""

OptionFields = dict[str, object]
"""Keyword arguments of :class:`~fairshare.sim.engine.SimOptions`."""


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
    allowed : str
        What a value may be, for an error message.
    read : callable
        A grid value to (its canonical value, the SimOptions fields it sets); ValueError
        saying what is wrong.
    """

    name: str
    kind: OptionKind
    allowed: str
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
    """``null``, ``"T1,T2"`` or ``[T1, T2]``: two seconds from 0 to ``MAX_SECONDS``."""

    def read(value: object) -> tuple[object, OptionFields]:
        if value is None:
            return None, {field: None}
        items: list[float] = []
        if isinstance(value, str):
            try:
                items = [float(part) for part in value.split(",")]
            except ValueError:
                items = []
        elif isinstance(value, list) and all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in value
        ):
            items = [float(x) for x in value]
        if len(items) != 2:
            raise ValueError(
                f"expected null, two seconds as {example!r} or [{example}], {got(value)}"
            )
        for seconds in items:
            if not 0 <= seconds <= MAX_SECONDS:  # also nan and inf
                raise ValueError(f"times must be seconds from 0 to {MAX_SECONDS:g}, {got(value)}")
        text = ",".join(_seconds_text(x) for x in items)
        return text, {field: (items[0], items[1])}

    return read


def _flag(field: str) -> Callable[[object], tuple[object, OptionFields]]:
    def read(value: object) -> tuple[object, OptionFields]:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, {got(value)}")
        return value, {field: value}

    return read


def _pool_order(value: object) -> tuple[object, OptionFields]:
    if value not in ("fair", "fifo"):
        raise ValueError(f"expected fair or fifo, {got(value)}")
    return value, {"pool_order": value}


def _slowdown(field: str) -> Callable[[object], tuple[object, OptionFields]]:
    def read(value: object) -> tuple[object, OptionFields]:
        factor = _number(value)
        if not 0 < factor <= MAX_SLOWDOWN:
            raise ValueError(f"must be a number > 0, at most {MAX_SLOWDOWN:g}, {got(value)}")
        return factor, {field: factor}

    return read


def _until(value: object) -> tuple[object, OptionFields]:
    if value is None:
        return None, {"until": None}
    seconds = _number(value)
    if not 0 <= seconds <= MAX_SECONDS or math.isnan(seconds):
        raise ValueError(f"must be seconds from 0 to {MAX_SECONDS:g}, {got(value)}")
    return seconds, {"until": seconds}


OPTIONS: Mapping[str, SweptOption] = {
    option.name: option
    for option in (
        SweptOption(
            "delay-scheduling",
            "text",
            'null, "T1,T2" or [T1, T2] (FAIR Algorithm 1\'s waits, seconds)',
            _pair("delay", "5,10"),
        ),
        SweptOption(
            "preemption",
            "text",
            'null, "TMIN,TFAIR" or [TMIN, TFAIR] (FAIR section 3.2\'s timeouts, seconds)',
            _pair("preemption", "30,60"),
        ),
        SweptOption(
            "copy-compute-splitting", "bool", "true or false", _flag("copy_compute_splitting")
        ),
        SweptOption("headroom", "bool", "true or false", _flag("headroom")),
        SweptOption("pool-order", "text", "fair or fifo", _pool_order),
        SweptOption(
            "rack-slowdown",
            "number",
            f"a number > 0, at most {MAX_SLOWDOWN:g}",
            _slowdown("rack_slowdown"),
        ),
        SweptOption(
            "off-rack-slowdown",
            "number",
            f"a number > 0, at most {MAX_SLOWDOWN:g}",
            _slowdown("off_rack_slowdown"),
        ),
        SweptOption("until", "number", "null or seconds", _until),
    )
}
"""Every option a grid may sweep, by name."""


def read_option(name: str, value: object) -> tuple[object, OptionFields]:
    """One grid value of option ``name``: its canonical value and the SimOptions fields it
    sets.

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
    return OPTIONS[name].read(value)
