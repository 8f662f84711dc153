"""The building blocks of :mod:`fairshare.workload.schema`: strict scalar checks (no strings
for numbers, no booleans for numbers, finite, in range), containers that put their step (an
index or a key) in front of an error's path, and the check of a record (:func:`_record`): a
mapping with exactly the declared fields, every field checked in declaration order by its own
function, then the checks that span the record's fields.

Each check raises a :class:`~fairshare.workload.errors.FieldError`;
:func:`fairshare.workload.schema.check_scenario` turns the first into a
:class:`~fairshare.workload.errors.ScenarioError`. The first problem is reported in the order
pydantic, which checked the structure before, reported them: fields in declaration order,
list items and mapping entries in the file's order, a mapping's key before its value. The
names keep their underscore: they are the schema's vocabulary, not the package's API.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from fairshare.cluster import AttributeValue
from fairshare.workload.errors import FieldError, got, invalid, shown_value
from fairshare.workload.model import (
    MAX_AMOUNT,
    MAX_PRIORITY,
    MAX_SECONDS,
    MAX_TASK_BOUND,
    MAX_WEIGHT,
    MIN_AMOUNT,
    MIN_SECONDS,
    MIN_WEIGHT,
)

# --------------------------------------------------------------------------------------------
# Scalar field types: strict (no strings for numbers, no bools for numbers), finite, in range


def _number(value: object, requirement: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(f"must be {requirement}, {got(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range
        raise invalid(
            f"must be a finite number, got an integer of {len(str(value))} digits"
        ) from None
    if not math.isfinite(number):
        raise invalid(f"must be a finite number, {got(value)}")
    return number


def _non_negative(value: object) -> float:
    number = _number(value, "a number >= 0")
    if number < 0:
        raise invalid(f"must be a number >= 0, {got(value)}")
    return number


def _positive(value: object) -> float:
    number = _number(value, "a number > 0")
    if number <= 0:
        raise invalid(f"must be > 0, {got(value)}")
    return number


def _whole(minimum: int, maximum: int | None = None) -> Callable[[object], int]:
    requirement = f"a whole number >= {minimum}"

    def check(value: object) -> int:
        number = _number(value, requirement)
        if not number.is_integer() or number < minimum:
            raise invalid(f"must be {requirement}, {got(value)}")
        if maximum is not None and number > maximum:
            raise invalid(f"must be at most {maximum:,} (the limit), {got(value)}")
        return value if isinstance(value, int) else int(number)

    return check


def _name(value: object) -> str:
    if not isinstance(value, str):
        hint = "" if isinstance(value, list | dict) or value is None else " (quote it)"
        raise invalid(f"must be a non-empty string, {got(value)}{hint}")
    if not value.strip():
        raise invalid(f"must be a non-empty string, {got(value)}")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise invalid(f"must be true or false, {got(value)}")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise invalid(f"must be a string, {got(value)}")
    return value


def _queue_path(value: object) -> str:
    path = _name(value)
    if any(not segment.strip() for segment in path.split("/")):
        raise invalid(f"must be '/'-separated non-empty names like 'ads/prod', {got(value)}")
    return path


def _attribute(value: object) -> AttributeValue:
    if isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        number = _number(value, "a string, number or boolean")
        if number < 0:
            raise invalid(f"must be a string, boolean or number >= 0, {got(value)}")
        return value
    raise invalid(f"must be a string, number or boolean, {got(value)}")


def _seconds(value: object) -> float:
    number = _non_negative(value)
    if number > MAX_SECONDS:
        raise invalid(f"must be a number of seconds from 0 to {MAX_SECONDS:g}, {got(value)}")
    return number


def _half_life(value: object) -> float:
    """A usage half-life: seconds > 0 (0 would silently turn the decay off, as a Kueue
    ``usageHalfLifeTime`` of 0 does: kubernetes-sigs/kueue#11134), at most MAX_SECONDS."""
    number = _number(value, f"a number of seconds > 0, at most {MAX_SECONDS:g}")
    if not 0 < number <= MAX_SECONDS:
        raise invalid(f"must be a number of seconds > 0, at most {MAX_SECONDS:g}, {got(value)}")
    return number


def _duration_seconds(value: object) -> float:
    number = _positive(value)
    if not MIN_SECONDS <= number <= MAX_SECONDS:
        raise invalid(
            f"must be a number of seconds from {MIN_SECONDS:g} to {MAX_SECONDS:g}, {got(value)}"
        )
    return number


def _fraction(value: object) -> float:
    number = _number(value, "a fraction from 0 to 1")
    if not 0 <= number <= 1:
        raise invalid(f"must be a fraction from 0 to 1, {got(value)}")
    return number


def _choice(*allowed: str) -> Callable[[object], str]:
    def check(value: object) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise invalid(f"must be one of {', '.join(allowed)}, {got(value)}")
        return value

    return check


def _task_bound(value: object) -> float:
    number = _non_negative(value)
    if number > MAX_TASK_BOUND:
        raise invalid(f"must be a number of tasks from 0 to {MAX_TASK_BOUND:g}, {got(value)}")
    return number


def _amount(value: object) -> float:
    number = _non_negative(value)
    if number != 0 and not MIN_AMOUNT <= number <= MAX_AMOUNT:
        raise invalid(f"must be 0 or from {MIN_AMOUNT:g} to {MAX_AMOUNT:g}, {got(value)}")
    return number


def _weight(value: object) -> float:
    number = _positive(value)
    if not MIN_WEIGHT <= number <= MAX_WEIGHT:
        raise invalid(f"must be from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}, {got(value)}")
    return number


PARETO_ALPHA_MIN = 0.1
"""Smallest Pareto shape accepted: a draw is ``min * U**(-1/alpha)`` and a uniform ``U`` as
small as 2**-53 must keep it far inside the float range (below about 1e160 times ``min``)."""


def _priority(value: object) -> int:
    number = _number(value, "a whole number")
    if not number.is_integer() or abs(number) > MAX_PRIORITY:
        raise invalid(
            f"must be a whole number from {-MAX_PRIORITY:,} to {MAX_PRIORITY:,}, {got(value)}"
        )
    return int(number)


def _pareto_alpha(value: object) -> float:
    alpha = _positive(value)
    if alpha < PARETO_ALPHA_MIN:
        raise invalid(
            f"must be >= {PARETO_ALPHA_MIN} (smaller shapes draw durations beyond the float "
            f"range), {got(value)}"
        )
    return alpha


# --------------------------------------------------------------------------------------------
# Containers: each puts its step (index, key or field name) in front of an error's path


T = TypeVar("T")
Check = Callable[[object], T]
"""A value's check: returns the value as the records keep it, or raises :class:`FieldError`."""


def _list(item: Check[T]) -> Check[list[T]]:
    def check(value: object) -> list[T]:
        if not isinstance(value, list | tuple):
            raise invalid(f"must be a list, {got(value)}")
        out: list[T] = []
        for i, entry in enumerate(value):
            try:
                out.append(item(entry))
            except FieldError as err:
                raise err.within(i) from None
        return out

    return check


def _mapping(key: Check[str], item: Check[T]) -> Check[dict[str, T]]:
    def check(value: object) -> dict[str, T]:
        if not isinstance(value, dict | Mapping):  # a dict without the ABC's slower test
            raise invalid(f"must be a mapping, {got(value)}")
        out: dict[str, T] = {}
        for k, v in value.items():
            try:
                name = key(k)
            except FieldError as err:
                err.of_key = True
                raise err.within(k) from None
            try:
                out[name] = item(v)
            except FieldError as err:
                raise err.within(k) from None
        return out

    return check


def _optional(check: Check[T]) -> Check[T | None]:
    """``null`` or what ``check`` accepts."""

    def optional(value: object) -> T | None:
        return None if value is None else check(value)

    return optional


def _then(check: Check[T], after: Callable[[T], T]) -> Check[T]:
    """``check``, then ``after`` on its result (a check of the whole value)."""

    def both(value: object) -> T:
        return after(check(value))

    return both


# --------------------------------------------------------------------------------------------
# Records: a mapping with exactly the declared fields, each checked by its own function


_REQUIRED: Any = object()
"""The default of a field that must be given."""


@dataclass(frozen=True)
class _Field:
    key: str
    """The field's name in the file."""
    check: Check[Any]
    default: Any = _REQUIRED
    """The value when the field is absent (a function making it, for ``factory``)."""
    factory: bool = False


class _Record:
    """Base of the structure records: a mapping with exactly the declared ``fields``, which
    a subclass lists in the order of its constructor's parameters (the order they are
    checked in)."""

    __slots__ = ()
    fields: ClassVar[tuple[_Field, ...]]
    open_fields: ClassVar[bool] = False
    """True for records that keep unknown fields (``workload`` generator parameters)."""

    def check(self) -> None:
        """The checks that span fields, once every field passed its own."""


R = TypeVar("R", bound=_Record)


def _record(cls: type[R]) -> Check[R]:
    """The check of a mapping as a ``cls`` record (see the module docstring)."""
    fields = [(f.key, f.check, f.default, f.factory) for f in cls.fields]
    allowed = ", ".join(f.key for f in cls.fields)
    names = frozenset(f.key for f in cls.fields)
    make: Callable[..., R] = cls
    open_fields = cls.open_fields
    spans = cls.check is not _Record.check

    def check(data: object) -> R:
        if not isinstance(data, dict):
            raise invalid(f"must be a mapping with fields {allowed}, {got(data)}")
        if not open_fields and not names.issuperset(data):
            unknown = next(key for key in data if key not in names)
            raise invalid(f"unknown field {shown_value(unknown)}; allowed: {allowed}", at=unknown)
        values = []
        for key, field_check, default, factory in fields:
            value = data.get(key, _REQUIRED)
            if value is _REQUIRED:
                if default is _REQUIRED:
                    raise invalid(f"missing required field {shown_value(key)}", at=key)
                values.append(default() if factory else default)
                continue
            try:
                values.append(field_check(value))
            except FieldError as err:
                raise err.within(key) from None
        if open_fields:
            extra = {k: v for k, v in data.items() if k not in names}
            for key in extra:
                if not isinstance(key, str):
                    raise FieldError("Keys should be strings").within(key)
            values.append(extra)
        record = make(*values)
        if spans:
            record.check()
        return record

    return check
