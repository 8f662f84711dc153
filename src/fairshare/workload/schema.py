"""The scenario's structure, field by field (stage 1 of :mod:`fairshare.workload.loader`):
strict scalar types (no strings for numbers, no booleans for numbers, finite, in range),
records that mirror SPEC section 1, and the first problem found as a
:class:`~fairshare.workload.errors.ScenarioError` whose WHERE is the field path.

Each record is checked by one function (:func:`_record`): a mapping with exactly the declared
fields, every field checked in declaration order by its own function, then the checks that
span the record's fields. The first problem is reported, in the order pydantic, which checked
the structure before, reported them: fields in declaration order, list items and mapping
entries in the file's order, a mapping's key before its value. Plain functions, because
importing pydantic and building its models cost a ``simulate`` 0.15 CPU s at start-up, more
than checking a 10,000-machine scenario (``fairshare bench end-to-end``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from fairshare.cluster import AttributeValue
from fairshare.workload.errors import FieldError, ScenarioError, got, invalid, shown_value
from fairshare.workload.limits import (
    MAX_GENERATED_JOBS,
    MAX_MACHINES,
    MAX_REPLICAS,
    MAX_TASKS,
)
from fairshare.workload.model import (
    MAX_AMOUNT,
    MAX_PRIORITY,
    MAX_SECONDS,
    MAX_TASK_BOUND,
    MAX_WEIGHT,
    MIN_AMOUNT,
    MIN_SECONDS,
    MIN_WEIGHT,
    REPLICA_PLACEMENTS,
)

GENERATORS = ("facebook-2009", "facebook-2010", "zipf", "google-constraints")
"""The built-in workload generators (SPEC section 1, ``workload.generator``)."""

MAX_COUNT = MAX_MACHINES
"""The largest ``count`` a machine entry may expand to (the machines of all entries together
are limited to the same number, :data:`~fairshare.workload.limits.MAX_MACHINES`)."""


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


def _generator(value: object) -> str:
    if not isinstance(value, str) or value not in GENERATORS:
        raise invalid(f"unknown generator {shown_value(value)}; allowed: {', '.join(GENERATORS)}")
    return value


def _seconds(value: object) -> float:
    number = _non_negative(value)
    if number > MAX_SECONDS:
        raise invalid(f"must be a number of seconds from 0 to {MAX_SECONDS:g}, {got(value)}")
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
# Records: the scenario's structure, mirroring SPEC section 1


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


def _check_share_bounds(min_share: float, max_share: float | None) -> None:
    if max_share is not None and min_share > max_share:
        raise invalid(
            f"min_share ({shown_value(min_share)}) must be <= max_share ({shown_value(max_share)})",
            at="min_share",
        )


def _check_demand(demand: dict[str, float] | None) -> dict[str, float] | None:
    if demand is not None and not any(amount > 0 for amount in demand.values()):
        raise invalid("must have at least one resource with an amount > 0, got all zeros")
    return demand


def _check_reserved(attributes: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
    for key in ("name", "rack"):
        if key in attributes:
            raise invalid(
                f"attribute {key!r} is reserved (constraints read the machine's own "
                f"{key}); use another attribute name",
                at=key,
            )
    return attributes


def _check_count(count: int | None) -> int | None:
    if count is not None and count > MAX_COUNT:
        raise invalid(f"must be a whole number from 1 to {MAX_COUNT}, got {count}")
    return count


_names = _list(_name)
_amounts = _mapping(_name, _amount)
_demand = _optional(_then(_amounts, _check_demand))


@dataclass(slots=True)
class MachineModel(_Record):
    name: str
    capacity: dict[str, float]
    rack: str | None
    attributes: dict[str, AttributeValue]
    count: int | None

    fields = (
        _Field("name", _name),
        _Field("capacity", _amounts),
        _Field("rack", _optional(_name), None),
        _Field("attributes", _then(_mapping(_name, _attribute), _check_reserved), dict, True),
        _Field("count", _then(_optional(_whole(1)), _check_count), None),
    )


@dataclass(slots=True)
class QueueModel(_Record):
    path: str
    weight: float
    min_share: float
    max_share: float | None
    quota: dict[str, float] | None
    borrowing_limit: dict[str, float] | None
    lending_limit: dict[str, float] | None

    fields = (
        _Field("path", _queue_path),
        _Field("weight", _weight, 1.0),
        _Field("min_share", _task_bound, 0.0),
        _Field("max_share", _optional(_task_bound), None),
        _Field("quota", _optional(_amounts), None),
        _Field("borrowing_limit", _optional(_amounts), None),
        _Field("lending_limit", _optional(_amounts), None),
    )

    def check(self) -> None:
        _check_share_bounds(self.min_share, self.max_share)
        for key, limit in (
            ("borrowing_limit", self.borrowing_limit),
            ("lending_limit", self.lending_limit),
        ):
            if limit is not None and self.quota is None:
                raise invalid(
                    f"{key} needs a quota on the same queue (it limits what the quota "
                    "borrows or lends); add quota or remove it",
                    at=key,
                )
        if self.lending_limit is not None and self.quota is not None:
            for resource, amount in self.lending_limit.items():
                nominal = self.quota.get(resource)
                if nominal is None or amount > nominal:
                    shown = "none" if nominal is None else shown_value(nominal)
                    raise (
                        FieldError(
                            f"lends {shown_value(amount)} of {resource!r} but its quota of it is "
                            f"{shown}; a queue lends at most its quota"
                        )
                        .within(resource)
                        .within("lending_limit")
                    )


@dataclass(slots=True)
class UserModel(_Record):
    name: str
    demand: dict[str, float] | None
    weight: float
    queue: str | None
    max_tasks: float | None
    min_share: float
    max_share: float | None
    constraint: str | None
    machines: list[str] | None

    fields = (
        _Field("name", _name),
        _Field("demand", _demand, None),
        _Field("weight", _weight, 1.0),
        _Field("queue", _optional(_name), None),
        _Field("max_tasks", _optional(_task_bound), None),
        _Field("min_share", _task_bound, 0.0),
        _Field("max_share", _optional(_task_bound), None),
        _Field("constraint", _optional(_text), None),
        _Field("machines", _optional(_names), None),
    )

    def check(self) -> None:
        _check_share_bounds(self.min_share, self.max_share)


@dataclass(slots=True)
class _ParetoModel(_Record):
    alpha: float
    minimum: float

    fields = (_Field("alpha", _pareto_alpha), _Field("min", _duration_seconds))


@dataclass(slots=True)
class _ExponentialModel(_Record):
    mean: float

    fields = (_Field("mean", _duration_seconds),)


@dataclass(slots=True)
class DistributionModel(_Record):
    pareto: _ParetoModel | None
    exponential: _ExponentialModel | None

    fields = (
        _Field("pareto", _optional(_record(_ParetoModel)), None),
        _Field("exponential", _optional(_record(_ExponentialModel)), None),
    )

    def check(self) -> None:
        if (self.pareto is None) == (self.exponential is None):
            raise invalid(
                "must name exactly one distribution: {pareto: {alpha, min}} or "
                "{exponential: {mean}}"
            )


_distribution = _record(DistributionModel)
_duration_list = _list(_duration_seconds)


def _duration(value: object) -> float | list[float] | DistributionModel:
    """A job's ``duration``: a mapping is a distribution, a list one duration per task,
    anything else a number of seconds."""
    if isinstance(value, dict):
        return _distribution(value)
    if isinstance(value, list):
        return _duration_list(value)
    return _duration_seconds(value)


@dataclass(slots=True)
class _InputModel(_Record):
    replicas: int
    file: str | None
    placement: str

    fields = (
        _Field("replicas", _whole(1, MAX_REPLICAS)),
        _Field("file", _optional(_name), None),
        _Field("placement", _choice(*REPLICA_PLACEMENTS), REPLICA_PLACEMENTS[0]),
    )


@dataclass(slots=True)
class _ReduceModel(_Record):
    tasks: int
    copy_seconds: float
    compute: float
    demand: dict[str, float] | None
    slowstart: float | None

    fields = (
        _Field("tasks", _whole(0, MAX_TASKS)),
        _Field("copy", _seconds, 0.0),
        _Field("compute", _seconds, 0.0),
        _Field("demand", _demand, None),
        _Field("slowstart", _optional(_fraction), None),
    )


@dataclass(slots=True)
class JobModel(_Record):
    name: str
    submit: float | None
    user: str | None
    queue: str | None
    weight: float
    demand: dict[str, float] | None
    constraint: str | None
    machines: list[str] | None
    tasks: int
    duration: float | list[float] | DistributionModel
    input: _InputModel | None
    reduce: _ReduceModel | None
    priority: int
    after: str | None
    think: float | None
    gang: bool
    min_tasks: int | None

    fields = (
        _Field("name", _name),
        _Field("submit", _optional(_seconds), None),
        _Field("user", _optional(_name), None),
        _Field("queue", _optional(_name), None),
        _Field("weight", _weight, 1.0),
        _Field("demand", _demand, None),
        _Field("constraint", _optional(_text), None),
        _Field("machines", _optional(_names), None),
        _Field("tasks", _whole(1, MAX_TASKS)),
        _Field("duration", _duration),
        _Field("input", _optional(_record(_InputModel)), None),
        _Field("reduce", _optional(_record(_ReduceModel)), None),
        _Field("priority", _priority, 0),
        _Field("after", _optional(_name), None),
        _Field("think", _optional(_seconds), None),
        _Field("gang", _flag, False),
        _Field("min_tasks", _optional(_whole(1, MAX_TASKS)), None),
    )

    def check(self) -> None:
        if self.after is None and self.submit is None:
            raise invalid("missing required field 'submit'", at="submit")
        if self.after is not None and self.submit is not None:
            raise invalid(
                "a closed-loop job (with 'after') is submitted when the job it follows ends; "
                "give 'think' (seconds after that end), not 'submit'",
                at="submit",
            )
        if self.after is None and self.think is not None:
            raise invalid("'think' needs 'after' (the job whose end it counts from)", at="think")
        if isinstance(self.duration, list) and len(self.duration) != self.tasks:
            raise invalid(
                f"lists {len(self.duration)} task durations but the job has {self.tasks} "
                "tasks; give one duration per task, or a single number",
                at="duration",
            )
        if self.min_tasks is not None and self.min_tasks > self.tasks:
            raise invalid(
                f"must be at most the job's tasks ({self.tasks}), got {self.min_tasks}: "
                "at least min_tasks of its tasks start together",
                at="min_tasks",
            )
        if self.gang and self.min_tasks is not None and self.min_tasks != self.tasks:
            raise invalid(
                f"gang: true starts all {self.tasks} tasks together, but min_tasks is "
                f"{self.min_tasks}; give gang: true or min_tasks, not both",
                at="min_tasks",
            )

    @property
    def gang_size(self) -> int | None:
        """How many tasks start together (None: no gang)."""
        return self.tasks if self.gang else self.min_tasks


def _check_parameter(value: object, at: str | int) -> None:
    """Generator parameters are free-form, but numbers in them obey the global rules."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int | float):
        try:
            _non_negative(value)
        except FieldError as err:
            raise invalid(err.message, at=at) from None
    elif isinstance(value, dict):
        for item in value.values():
            _check_parameter(item, at)
    elif isinstance(value, list):
        for item in value:
            _check_parameter(item, at)


@dataclass(slots=True)
class WorkloadModel(_Record):
    generator: str
    jobs: int | None
    extra: dict[str, Any] = field(default_factory=dict)
    """The generator's parameters: every field but ``generator`` and ``jobs``."""

    open_fields = True
    fields = (
        _Field("generator", _generator),
        _Field("jobs", _optional(_whole(1, MAX_GENERATED_JOBS)), None),
    )

    def check(self) -> None:
        for key, value in self.extra.items():
            _check_parameter(value, key)

    def parameters(self) -> dict[str, Any]:
        """The parameters given to the generator: ``jobs`` and the other fields but
        ``generator``, those that are null left out."""
        given = {"jobs": self.jobs, **self.extra}
        return {key: value for key, value in given.items() if value is not None}


@dataclass(slots=True)
class JoiningMachineModel(_Record):
    name: str
    capacity: dict[str, float]
    rack: str | None
    attributes: dict[str, AttributeValue]

    fields = (
        _Field("name", _name),
        _Field("capacity", _amounts),
        _Field("rack", _optional(_name), None),
        _Field("attributes", _then(_mapping(_name, _attribute), _check_reserved), dict, True),
    )


EVENT_KINDS = ("cancel_job", "cancel_user", "machine_fails", "machine_joins")
"""What a scenario event may do: exactly one of these fields (SPEC section 1 extension)."""


@dataclass(slots=True)
class EventModel(_Record):
    at: float
    cancel_job: str | None
    cancel_user: str | None
    machine_fails: str | None
    machine_joins: JoiningMachineModel | None

    fields = (
        _Field("at", _seconds),
        _Field("cancel_job", _optional(_name), None),
        _Field("cancel_user", _optional(_name), None),
        _Field("machine_fails", _optional(_name), None),
        _Field("machine_joins", _optional(_record(JoiningMachineModel)), None),
    )

    def check(self) -> None:
        given = [k for k in EVENT_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise invalid(
                f"an event does exactly one of {', '.join(EVENT_KINDS)}; "
                + (f"got {', '.join(given)}" if given else "got none")
            )

    @property
    def kind(self) -> str:
        """The one field of :data:`EVENT_KINDS` given."""
        return next(k for k in EVENT_KINDS if getattr(self, k) is not None)


def _check_resources(resources: list[str] | None) -> list[str] | None:
    if resources is None:
        return None
    if not resources:
        raise invalid("must list at least one resource name (or be omitted)")
    first: dict[str, int] = {}
    for i, resource in enumerate(resources):
        if resource in first:
            raise invalid(
                f"duplicate resource {resource!r} (also resources[{first[resource]}])", at=i
            )
        first[resource] = i
    return resources


def _check_machines(machines: list[MachineModel] | None) -> list[MachineModel] | None:
    if machines is not None and not machines:
        raise invalid("must list at least one machine")
    return machines


@dataclass(slots=True)
class ScenarioModel(_Record):
    resources: list[str] | None
    # Required unless the caller gives machines (a trace's node list: SPEC section 3)
    machines: list[MachineModel] | None
    queues: list[QueueModel] | None
    users: list[UserModel] | None
    jobs: list[JobModel] | None
    workload: WorkloadModel | None
    events: list[EventModel] | None

    fields = (
        _Field("resources", _then(_optional(_names), _check_resources), None),
        _Field(
            "machines",
            _then(_optional(_list(_record(MachineModel))), _check_machines),
            None,
        ),
        _Field("queues", _optional(_list(_record(QueueModel))), None),
        _Field("users", _optional(_list(_record(UserModel))), None),
        _Field("jobs", _optional(_list(_record(JobModel))), None),
        _Field("workload", _optional(_record(WorkloadModel)), None),
        _Field("events", _optional(_list(_record(EventModel))), None),
    )


SCENARIO_FIELDS = tuple(f.key for f in ScenarioModel.fields)
"""The fields of a scenario file, in SPEC section 1's order."""

_scenario = _record(ScenarioModel)


# --------------------------------------------------------------------------------------------
# Checking a scenario: the first problem as a ScenarioError


def _path(loc: list[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "top level"


def check_scenario(data: dict[str, Any], source: str) -> ScenarioModel:
    """The structure of a parsed scenario (a mapping), or the first problem as a
    :class:`ScenarioError` whose WHERE is the field path (a mapping's key: ``key`` before
    WHAT; a message about the value itself names the field first)."""
    try:
        return _scenario(data)
    except FieldError as err:
        where = _path(err.loc)
        what = err.message
        if err.of_key:
            what = f"key {what}"
        elif what.startswith("must "):
            what = f"{where.rpartition('.')[2]} {what}"
        raise ScenarioError(source, where, what) from None
