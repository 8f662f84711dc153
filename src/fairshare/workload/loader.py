"""Read and validate a scenario file (SPEC section 1) into trusted domain objects.

Two stages, each rejecting bad input with one :class:`ScenarioError`
(``error: FILE: WHERE: WHAT``, SPEC section 4):

1. Structure: pydantic models that mirror SPEC section 1 field by field check names, types
   and ranges of single fields (unknown fields, missing fields, strings where numbers belong,
   negative / NaN / infinite numbers, non-integral counts). The first pydantic error becomes
   the :class:`ScenarioError`, with WHERE built from the error location.
2. Meaning: :class:`_Builder` turns the models into :class:`~fairshare.workload.model.Scenario`
   and checks what spans fields: unique names (after ``count`` expansion), known resources,
   queues and machines, constraint syntax, duration lists against task counts.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, NoReturn

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from fairshare.cluster import AttributeValue, Cluster, FloatArray, Machine
from fairshare.cluster.constraints import Constraint, ConstraintSyntaxError, parse_constraint
from fairshare.workload.limits import (
    MAX_ALIAS_NODES,
    MAX_GENERATED_JOBS,
    MAX_MACHINES,
    MAX_NESTING,
    MAX_REPLICA_COPIES,
    MAX_REPLICAS,
    MAX_SCENARIO_BYTES,
    MAX_TASKS,
)
from fairshare.workload.model import (
    MAX_AMOUNT,
    MAX_SECONDS,
    MAX_TASK_BOUND,
    MAX_WEIGHT,
    MIN_AMOUNT,
    MIN_SECONDS,
    MIN_WEIGHT,
    ROOT,
    Duration,
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    PerTaskDurations,
    Queue,
    ReducePhase,
    Scenario,
    User,
    WorkloadSpec,
)

try:  # libyaml's parser is several times faster than the pure-Python one
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser as _Parser  # type: ignore[assignment]

__all__ = [
    "GENERATORS",
    "MAX_COUNT",
    "MachinesFrom",
    "ScenarioError",
    "load_scenario",
    "parse_scenario",
]

GENERATORS = ("facebook-2009", "facebook-2010", "zipf", "google-constraints")
"""The built-in workload generators (SPEC section 1, ``workload.generator``)."""

MAX_COUNT = MAX_MACHINES
"""The largest ``count`` a machine entry may expand to (the machines of all entries together
are limited to the same number, :data:`~fairshare.workload.limits.MAX_MACHINES`)."""

_LIST_LIMIT = 10
"""How many known names an "unknown name" message lists."""


class ScenarioError(Exception):
    """A scenario that breaks SPEC section 1: printed as ``error: FILE: WHERE: WHAT``.

    ``where`` is a field path (``machines[3].capacity.cpu``), ``line N`` for syntax errors,
    ``file`` when the file cannot be read or is empty, ``top level`` when it is not a mapping.
    ``what`` says what is wrong and what is allowed, on one line.
    """

    def __init__(self, file: str, where: str, what: str) -> None:
        super().__init__(file, where, what)
        self.file = file
        self.where = where
        self.what = what

    def __str__(self) -> str:
        return f"error: {self.file}: {self.where}: {self.what}"


# --------------------------------------------------------------------------------------------
# Describing values in messages


def _show(value: object) -> str:
    """A short, one-line rendering of an input value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:56] + "...'"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def _got(value: object) -> str:
    """``got VALUE`` with a hint when a number was written as a string."""
    text = f"got {_show(value)}"
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return text
        if "e" in value.lower() and "." not in value:
            return text + " (a string: YAML reads exponents only with a dot, as in 1.0e+3)"
        return text + " (a string; write numbers without quotes)"
    return text


def _listing(names: Iterable[str], limit: int = _LIST_LIMIT) -> str:
    """``a, b, c`` with at most ``limit`` names and a count of the rest."""
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def _invalid(message: str, at: str | int | None = None) -> PydanticCustomError:
    """A validation error carrying our own message; ``at`` extends the location by one step
    (for errors raised by a model about one of its fields or entries)."""
    return PydanticCustomError("scenario", "{message}", {"message": message, "at": at})


# --------------------------------------------------------------------------------------------
# Scalar field types: strict (no strings for numbers, no bools for numbers), finite, in range


def _number(value: object, requirement: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _invalid(f"must be {requirement}, {_got(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range
        raise _invalid(
            f"must be a finite number, got an integer of {len(str(value))} digits"
        ) from None
    if not math.isfinite(number):
        raise _invalid(f"must be a finite number, {_got(value)}")
    return number


def _non_negative(value: object) -> float:
    number = _number(value, "a number >= 0")
    if number < 0:
        raise _invalid(f"must be a number >= 0, {_got(value)}")
    return number


def _positive(value: object) -> float:
    number = _number(value, "a number > 0")
    if number <= 0:
        raise _invalid(f"must be > 0, {_got(value)}")
    return number


def _whole(minimum: int, maximum: int | None = None) -> Callable[[object], int]:
    requirement = f"a whole number >= {minimum}"

    def check(value: object) -> int:
        number = _number(value, requirement)
        if not number.is_integer() or number < minimum:
            raise _invalid(f"must be {requirement}, {_got(value)}")
        if maximum is not None and number > maximum:
            raise _invalid(f"must be at most {maximum:,} (the limit), {_got(value)}")
        return value if isinstance(value, int) else int(number)

    return check


def _name(value: object) -> str:
    if not isinstance(value, str):
        hint = "" if isinstance(value, list | dict) or value is None else " (quote it)"
        raise _invalid(f"must be a non-empty string, {_got(value)}{hint}")
    if not value.strip():
        raise _invalid(f"must be a non-empty string, {_got(value)}")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise _invalid(f"must be a string, {_got(value)}")
    return value


def _queue_path(value: object) -> str:
    path = _name(value)
    if any(not segment.strip() for segment in path.split("/")):
        raise _invalid(f"must be '/'-separated non-empty names like 'ads/prod', {_got(value)}")
    return path


def _attribute(value: object) -> AttributeValue:
    if isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        number = _number(value, "a string, number or boolean")
        if number < 0:
            raise _invalid(f"must be a string, boolean or number >= 0, {_got(value)}")
        return value
    raise _invalid(f"must be a string, number or boolean, {_got(value)}")


def _generator(value: object) -> str:
    if not isinstance(value, str) or value not in GENERATORS:
        raise _invalid(f"unknown generator {_show(value)}; allowed: {', '.join(GENERATORS)}")
    return value


def _seconds(value: object) -> float:
    number = _non_negative(value)
    if number > MAX_SECONDS:
        raise _invalid(f"must be a number of seconds from 0 to {MAX_SECONDS:g}, {_got(value)}")
    return number


def _duration_seconds(value: object) -> float:
    number = _positive(value)
    if not MIN_SECONDS <= number <= MAX_SECONDS:
        raise _invalid(
            f"must be a number of seconds from {MIN_SECONDS:g} to {MAX_SECONDS:g}, {_got(value)}"
        )
    return number


def _task_bound(value: object) -> float:
    number = _non_negative(value)
    if number > MAX_TASK_BOUND:
        raise _invalid(f"must be a number of tasks from 0 to {MAX_TASK_BOUND:g}, {_got(value)}")
    return number


def _amount(value: object) -> float:
    number = _non_negative(value)
    if number != 0 and not MIN_AMOUNT <= number <= MAX_AMOUNT:
        raise _invalid(f"must be 0 or from {MIN_AMOUNT:g} to {MAX_AMOUNT:g}, {_got(value)}")
    return number


def _weight(value: object) -> float:
    number = _positive(value)
    if not MIN_WEIGHT <= number <= MAX_WEIGHT:
        raise _invalid(f"must be from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}, {_got(value)}")
    return number


NonNegative = Annotated[float, PlainValidator(_non_negative)]
Positive = Annotated[float, PlainValidator(_positive)]
Seconds = Annotated[float, PlainValidator(_seconds)]
"""A time (submit) or a time span that may be 0 (reduce copy and compute), bounded by
:data:`~fairshare.workload.model.MAX_SECONDS` so that sums of times stay finite."""
DurationSeconds = Annotated[float, PlainValidator(_duration_seconds)]
Amount = Annotated[float, PlainValidator(_amount)]
TaskBound = Annotated[float, PlainValidator(_task_bound)]
Weight = Annotated[float, PlainValidator(_weight)]

PARETO_ALPHA_MIN = 0.1
"""Smallest Pareto shape accepted: a draw is ``min * U**(-1/alpha)`` and a uniform ``U`` as
small as 2**-53 must keep it far inside the float range (below about 1e160 times ``min``)."""


def _pareto_alpha(value: object) -> float:
    alpha = _positive(value)
    if alpha < PARETO_ALPHA_MIN:
        raise _invalid(
            f"must be >= {PARETO_ALPHA_MIN} (smaller shapes draw durations beyond the float "
            f"range), {_got(value)}"
        )
    return alpha


Count = Annotated[int, PlainValidator(_whole(1))]
CountOrZero = Annotated[int, PlainValidator(_whole(0))]
TaskCount = Annotated[int, PlainValidator(_whole(1, MAX_TASKS))]
TaskCountOrZero = Annotated[int, PlainValidator(_whole(0, MAX_TASKS))]
Replicas = Annotated[int, PlainValidator(_whole(1, MAX_REPLICAS))]
GeneratedJobs = Annotated[int, PlainValidator(_whole(1, MAX_GENERATED_JOBS))]
Name = Annotated[str, PlainValidator(_name)]
Text = Annotated[str, PlainValidator(_text)]
QueuePath = Annotated[str, PlainValidator(_queue_path)]
Attribute = Annotated[AttributeValue, PlainValidator(_attribute)]
Generator = Annotated[str, PlainValidator(_generator)]


# --------------------------------------------------------------------------------------------
# The scenario's structure, mirroring SPEC section 1


_FIELD_NAMES: dict[type[BaseModel], list[str]] = {}


class _Model(BaseModel):
    """Base of the structure models: a mapping with exactly the declared fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    open_fields: ClassVar[bool] = False
    """True for models that keep unknown fields (``workload`` generator parameters)."""

    @model_validator(mode="before")
    @classmethod
    def check_field_names(cls, data: Any) -> Any:
        allowed = _FIELD_NAMES.get(cls)
        if allowed is None:
            # model_fields goes through a slow deprecation shim on every access: read it once.
            allowed = _FIELD_NAMES[cls] = [
                field.alias or name for name, field in cls.model_fields.items()
            ]
        if not isinstance(data, dict):
            raise _invalid(f"must be a mapping with fields {', '.join(allowed)}, {_got(data)}")
        if not cls.open_fields:
            for key in data:
                if key not in allowed:
                    raise _invalid(
                        f"unknown field {_show(key)}; allowed: {', '.join(allowed)}", at=key
                    )
        return data


def _check_share_bounds(min_share: float, max_share: float | None) -> None:
    if max_share is not None and min_share > max_share:
        raise _invalid(
            f"min_share ({_show(min_share)}) must be <= max_share ({_show(max_share)})",
            at="min_share",
        )


def _check_demand(demand: dict[str, float] | None) -> dict[str, float] | None:
    if demand is not None and not any(amount > 0 for amount in demand.values()):
        raise _invalid("must have at least one resource with an amount > 0, got all zeros")
    return demand


class _MachineModel(_Model):
    name: Name
    capacity: dict[Name, Amount]
    rack: Name | None = None
    attributes: dict[Name, Attribute] = Field(default_factory=dict)
    count: Count | None = None

    @field_validator("attributes")
    @classmethod
    def check_reserved(cls, attributes: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
        for key in ("name", "rack"):
            if key in attributes:
                raise _invalid(
                    f"attribute {key!r} is reserved (constraints read the machine's own "
                    f"{key}); use another attribute name",
                    at=key,
                )
        return attributes

    @field_validator("count")
    @classmethod
    def check_count(cls, count: int | None) -> int | None:
        if count is not None and count > MAX_COUNT:
            raise _invalid(f"must be a whole number from 1 to {MAX_COUNT}, got {count}")
        return count


class _QueueModel(_Model):
    path: QueuePath
    weight: Weight = 1.0
    min_share: TaskBound = 0.0
    max_share: TaskBound | None = None

    @model_validator(mode="after")
    def check_shares(self) -> _QueueModel:
        _check_share_bounds(self.min_share, self.max_share)
        return self


class _UserModel(_Model):
    name: Name
    demand: dict[Name, Amount] | None = None
    weight: Weight = 1.0
    queue: Name | None = None
    max_tasks: TaskBound | None = None
    min_share: TaskBound = 0.0
    max_share: TaskBound | None = None
    constraint: Text | None = None
    machines: list[Name] | None = None

    @field_validator("demand")
    @classmethod
    def check_demand(cls, demand: dict[str, float] | None) -> dict[str, float] | None:
        return _check_demand(demand)

    @model_validator(mode="after")
    def check_shares(self) -> _UserModel:
        _check_share_bounds(self.min_share, self.max_share)
        return self


class _ParetoModel(_Model):
    alpha: Annotated[float, PlainValidator(_pareto_alpha)]
    minimum: DurationSeconds = Field(alias="min")


class _ExponentialModel(_Model):
    mean: DurationSeconds


class _DistributionModel(_Model):
    pareto: _ParetoModel | None = None
    exponential: _ExponentialModel | None = None

    @model_validator(mode="after")
    def check_one(self) -> _DistributionModel:
        if (self.pareto is None) == (self.exponential is None):
            raise _invalid(
                "must name exactly one distribution: {pareto: {alpha, min}} or "
                "{exponential: {mean}}"
            )
        return self


def _duration_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "distribution"
    return "list" if isinstance(value, list) else "number"


_DURATION_TAGS = frozenset({"number", "list", "distribution"})

DurationField = Annotated[
    Annotated[float, PlainValidator(_duration_seconds), Tag("number")]
    | Annotated[list[DurationSeconds], Tag("list")]
    | Annotated[_DistributionModel, Tag("distribution")],
    Discriminator(_duration_kind),
]


class _InputModel(_Model):
    replicas: Replicas


class _ReduceModel(_Model):
    tasks: TaskCountOrZero
    copy_seconds: Seconds = Field(default=0.0, alias="copy")
    compute: Seconds = 0.0
    demand: dict[Name, Amount] | None = None

    @field_validator("demand")
    @classmethod
    def check_demand(cls, demand: dict[str, float] | None) -> dict[str, float] | None:
        return _check_demand(demand)


class _JobModel(_Model):
    name: Name
    submit: Seconds
    user: Name | None = None
    queue: Name | None = None
    weight: Weight = 1.0
    demand: dict[Name, Amount] | None = None
    constraint: Text | None = None
    machines: list[Name] | None = None
    tasks: TaskCount
    duration: DurationField
    input: _InputModel | None = None
    reduce: _ReduceModel | None = None

    @field_validator("demand")
    @classmethod
    def check_demand(cls, demand: dict[str, float] | None) -> dict[str, float] | None:
        return _check_demand(demand)

    @model_validator(mode="after")
    def check_duration_list(self) -> _JobModel:
        if isinstance(self.duration, list) and len(self.duration) != self.tasks:
            raise _invalid(
                f"lists {len(self.duration)} task durations but the job has {self.tasks} "
                "tasks; give one duration per task, or a single number",
                at="duration",
            )
        return self


def _check_parameter(value: object, at: str | int) -> None:
    """Generator parameters are free-form, but numbers in them obey the global rules."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int | float):
        try:
            _non_negative(value)
        except PydanticCustomError as err:
            raise _invalid(err.message(), at=at) from None
    elif isinstance(value, dict):
        for item in value.values():
            _check_parameter(item, at)
    elif isinstance(value, list):
        for item in value:
            _check_parameter(item, at)


class _WorkloadModel(_Model):
    model_config = ConfigDict(extra="allow")
    open_fields: ClassVar[bool] = True

    generator: Generator
    jobs: GeneratedJobs | None = None

    @model_validator(mode="after")
    def check_parameters(self) -> _WorkloadModel:
        for key, value in (self.model_extra or {}).items():
            _check_parameter(value, key)
        return self


class _ScenarioModel(_Model):
    resources: list[Name] | None = None
    # Required unless the caller gives machines (a trace's node list: SPEC section 3)
    machines: list[_MachineModel] | None = None
    queues: list[_QueueModel] | None = None
    users: list[_UserModel] | None = None
    jobs: list[_JobModel] | None = None
    workload: _WorkloadModel | None = None

    @field_validator("resources")
    @classmethod
    def check_resources(cls, resources: list[str] | None) -> list[str] | None:
        if resources is None:
            return None
        if not resources:
            raise _invalid("must list at least one resource name (or be omitted)")
        first: dict[str, int] = {}
        for i, resource in enumerate(resources):
            if resource in first:
                raise _invalid(
                    f"duplicate resource {resource!r} (also resources[{first[resource]}])", at=i
                )
            first[resource] = i
        return resources

    @field_validator("machines")
    @classmethod
    def check_machines(cls, machines: list[_MachineModel] | None) -> list[_MachineModel] | None:
        if machines is not None and not machines:
            raise _invalid("must list at least one machine")
        return machines


# --------------------------------------------------------------------------------------------
# Pydantic errors -> ScenarioError


def _path(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "top level"


_TYPE_WORDS = {
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "float_type": "must be a number",
}


def _from_validation_error(error: ValidationError, source: str) -> ScenarioError:
    """The first pydantic error as one ScenarioError (WHERE from its location)."""
    first = error.errors(include_url=False)[0]
    loc: list[str | int] = list(first["loc"])
    ctx = first.get("ctx") or {}
    # Tagged-union tags ("duration" -> "list") are not part of the user's path.
    loc = [
        part
        for i, part in enumerate(loc)
        if not (i > 0 and loc[i - 1] == "duration" and part in _DURATION_TAGS)
    ]
    kind = first["type"]
    if kind == "scenario":
        what = str(ctx.get("message", first["msg"]))
        at = ctx.get("at")
        if isinstance(at, str | int):
            loc.append(at)
    elif kind == "missing":
        what = f"missing required field {_show(loc[-1])}"
    elif kind == "extra_forbidden":
        what = f"unknown field {_show(loc[-1])}"
    elif kind in _TYPE_WORDS:
        what = f"{_TYPE_WORDS[kind]}, {_got(first['input'])}"
    else:  # not expected: our validators cover every scalar; keep pydantic's one-line summary
        what = first["msg"].splitlines()[0] if first["msg"] else kind
    if "[key]" in loc:
        loc = [part for part in loc if part != "[key]"]
        what = f"key {what}"
    elif what.startswith("must "):
        label = _path(loc).rpartition(".")[2]
        what = f"{label} {what}"
    return ScenarioError(source, _path(loc), what)


# --------------------------------------------------------------------------------------------
# Building the domain objects, with the checks that span fields


MachinesFrom = Callable[[], Cluster]
"""Gives the machines of a scenario that lists none (a trace's node list), or raises
:class:`ScenarioError` saying why it cannot."""

MISSING_MACHINES = "missing required field 'machines'"


class _Builder:
    def __init__(
        self, model: _ScenarioModel, source: str, machines_from: MachinesFrom | None = None
    ) -> None:
        self.model = model
        self.source = source
        self.machines_from = machines_from
        # Thousands of users often share a few hundred constraint texts: parse each once.
        self.parsed: dict[str, Constraint] = {}
        self.resources: tuple[str, ...] = ()
        self.index: dict[str, int] = {}
        self.total: FloatArray = np.zeros(0)
        self.machine_names: dict[str, str] = {}  # name -> where it was declared
        self.queue_paths: dict[str, int] = {}

    def fail(self, where: str, what: str) -> NoReturn:
        raise ScenarioError(self.source, where, what)

    def build(self) -> Scenario:
        self._check_totals()
        cluster = self._given_cluster()
        if cluster is None:
            self.resources = self._resources()
            self.index = {resource: i for i, resource in enumerate(self.resources)}
            cluster = Cluster.build(self.resources, self._machines())
        self.total = cluster.total
        queues = self._queues()
        seen: dict[str, int] = {}
        users = tuple(self._user(i, user, seen) for i, user in enumerate(self.model.users or ()))
        seen = {}
        jobs = tuple(self._job(i, job, seen) for i, job in enumerate(self.model.jobs or ()))
        workload = None
        if self.model.workload is not None:
            params = self.model.workload.model_dump(exclude={"generator"}, exclude_none=True)
            workload = WorkloadSpec(self.model.workload.generator, params)
        return Scenario(self.source, cluster, queues, users, jobs, workload)

    # limits on totals, before anything is expanded or generated

    def _check_totals(self) -> None:
        """The sums :mod:`fairshare.workload.limits` bounds, each blamed on the entry where
        the running total first passes its limit."""
        machines = 0
        for i, entry in enumerate(self.model.machines or ()):
            machines += 1 if entry.count is None else entry.count
            if machines > MAX_MACHINES:
                self.fail(
                    f"machines[{i}]" + ("" if entry.count is None else ".count"),
                    f"the machines add up to {machines:,} here; a scenario may have at most "
                    f"{MAX_MACHINES:,} machines",
                )
        tasks = copies = 0
        for i, job in enumerate(self.model.jobs or ()):
            tasks += job.tasks
            if tasks > MAX_TASKS:
                self.fail(f"jobs[{i}].tasks", _too_many_tasks(tasks))
            if job.reduce is not None:
                tasks += job.reduce.tasks
                if tasks > MAX_TASKS:
                    self.fail(f"jobs[{i}].reduce.tasks", _too_many_tasks(tasks))
            if job.input is not None:
                copies += job.tasks * job.input.replicas
                if copies > MAX_REPLICA_COPIES:
                    self.fail(f"jobs[{i}].input.replicas", _too_many_copies(copies))
        if self.model.workload is not None:
            self._check_generated(self.model.workload)

    def _check_generated(self, workload: _WorkloadModel) -> None:
        """A generator's ``replicas`` (its ``jobs`` are a bounded count). The tasks and
        block locations its jobs add up to depend on its draws: the generator counts them
        as it draws and stops at the limits (``generators.generate``); ``simulate`` reads
        every job before the run starts, so that error also comes before any work."""
        extra = workload.model_extra or {}
        replicas = extra.get("replicas")
        if (
            isinstance(replicas, int | float)
            and not isinstance(replicas, bool)
            and replicas > MAX_REPLICAS
        ):
            self.fail(
                "workload.replicas",
                f"must be a whole number from 0 to {MAX_REPLICAS} (the limit), "
                f"got {_show(replicas)}",
            )

    # resources and machines

    def _given_cluster(self) -> Cluster | None:
        """The machines from elsewhere when the scenario lists none, with their resources
        (a scenario's ``resources``, if it names them, must be exactly those)."""
        if self.model.machines is not None:
            return None
        if self.machines_from is None:
            self.fail("machines", f"{MISSING_MACHINES} (at least one machine)")
        cluster = self.machines_from()
        self.resources = cluster.resources
        self.index = {resource: i for i, resource in enumerate(self.resources)}
        named = self.model.resources
        if named is not None and tuple(named) != cluster.resources:
            self.fail(
                "resources",
                f"the machines come from the trace, whose resources are "
                f"{', '.join(cluster.resources)}; omit 'resources' or list exactly those",
            )
        for machine in cluster.machines:
            self.machine_names[machine.name] = "the trace's machines"
        return cluster

    def _resources(self) -> tuple[str, ...]:
        if self.model.resources is not None:
            return tuple(self.model.resources)
        seen: dict[str, None] = {}
        for machine in self.model.machines or ():
            seen.update(dict.fromkeys(machine.capacity))
        if not seen:
            self.fail("machines", "no machine names a resource in its capacity")
        return tuple(seen)

    def _vector(self, amounts: Mapping[str, float], where: str) -> FloatArray:
        vector = np.zeros(len(self.resources), dtype=np.float64)
        for resource, amount in amounts.items():
            if resource not in self.index:
                self.fail(
                    f"{where}.{resource}",
                    f"unknown resource {resource!r}; resources: {', '.join(self.resources)}",
                )
            vector[self.index[resource]] = amount
        return vector

    def _machines(self) -> list[Machine]:
        machines: list[Machine] = []
        for i, entry in enumerate(self.model.machines or ()):
            where = f"machines[{i}]"
            capacity = self._vector(entry.capacity, f"{where}.capacity")
            capacity.setflags(write=False)
            if entry.count is None:
                names = [entry.name]
                origin = where
            else:
                names = [f"{entry.name}-{k}" for k in range(entry.count)]
                origin = f"{where} (count: {entry.count})"
            for name in names:
                if name in self.machine_names:
                    self.fail(
                        f"{where}.name",
                        f"duplicate machine name {name!r}: defined by {origin} and by "
                        f"{self.machine_names[name]}; machine names must be unique",
                    )
                self.machine_names[name] = origin
                machines.append(Machine(name, capacity, entry.rack, dict(entry.attributes)))
        return machines

    # queues

    def _queues(self) -> tuple[Queue, ...]:
        entries = self.model.queues or []
        for i, entry in enumerate(entries):
            if entry.path in self.queue_paths:
                self.fail(
                    f"queues[{i}].path",
                    f"duplicate queue path {entry.path!r} (also queues"
                    f"[{self.queue_paths[entry.path]}]); queue paths must be unique",
                )
            self.queue_paths[entry.path] = i
        for i, entry in enumerate(entries):
            parts = entry.path.split("/")
            for depth in range(1, len(parts)):
                parent = "/".join(parts[:depth])
                if parent not in self.queue_paths:
                    self.fail(
                        f"queues[{i}].path",
                        f"parent queue {parent!r} is not declared; declare every level of "
                        f"{entry.path!r} in queues",
                    )
        return tuple(
            Queue(
                entry.path,
                entry.weight,
                entry.min_share,
                math.inf if entry.max_share is None else entry.max_share,
            )
            for entry in entries
        )

    # users and jobs

    def _queue(self, queue: str | None, where: str) -> str:
        if queue is None:
            return ROOT
        if queue not in self.queue_paths:
            known = (
                f"declared queues: {_listing(self.queue_paths)}"
                if self.queue_paths
                else "no queues are declared"
            )
            self.fail(f"{where}.queue", f"unknown queue {queue!r}; {known}")
        return queue

    def _demand(self, demand: dict[str, float] | None, where: str) -> FloatArray:
        if demand is None:
            if len(self.resources) == 1:
                return np.ones(1, dtype=np.float64)
            self.fail(
                f"{where}.demand",
                "missing required field 'demand' (it may be omitted only when the cluster has "
                f"one resource; resources: {', '.join(self.resources)})",
            )
        vector = self._vector(demand, f"{where}.demand")
        for resource, amount in demand.items():
            if amount > 0 and self.total[self.index[resource]] <= 0:
                self.fail(
                    f"{where}.demand.{resource}",
                    f"no machine has resource {resource!r} (its total capacity is 0)",
                )
        return vector

    def _constraint(self, text: str | None, where: str) -> Constraint | None:
        if text is None:
            return None
        known = self.parsed.get(text)
        if known is not None:
            return known
        try:
            parsed = self.parsed[text] = parse_constraint(text)
            return parsed
        except ConstraintSyntaxError as err:
            self.fail(f"{where}.constraint", f"column {err.column}: {err.message}")
        except RecursionError:
            self.fail(f"{where}.constraint", "the expression is nested too deeply")

    def _whitelist(self, names: list[str] | None, where: str) -> frozenset[str] | None:
        if names is None:
            return None
        for k, name in enumerate(names):
            if name not in self.machine_names:
                self.fail(
                    f"{where}.machines[{k}]",
                    f"unknown machine {name!r}; machines: {_listing(self.machine_names)}",
                )
        return frozenset(names)

    def _user(self, i: int, entry: _UserModel, seen: dict[str, int]) -> User:
        where = f"users[{i}]"
        self._check_unique("user", entry.name, i, seen)
        return User(
            name=entry.name,
            demand=self._demand(entry.demand, where),
            weight=entry.weight,
            queue=self._queue(entry.queue, where),
            max_tasks=math.inf if entry.max_tasks is None else entry.max_tasks,
            min_share=entry.min_share,
            max_share=math.inf if entry.max_share is None else entry.max_share,
            constraint=self._constraint(entry.constraint, where),
            machines=self._whitelist(entry.machines, where),
        )

    def _job(self, i: int, entry: _JobModel, seen: dict[str, int]) -> Job:
        where = f"jobs[{i}]"
        self._check_unique("job", entry.name, i, seen)
        replicas = None
        if entry.input is not None:
            replicas = entry.input.replicas
            if replicas > len(self.machine_names):
                self.fail(
                    f"{where}.input.replicas",
                    f"replicas must be at most the number of machines "
                    f"({len(self.machine_names)}), got {replicas}",
                )
        reduce = None
        if entry.reduce is not None:
            reduce = ReducePhase(
                entry.reduce.tasks,
                entry.reduce.copy_seconds,
                entry.reduce.compute,
                None
                if entry.reduce.demand is None
                else self._demand(entry.reduce.demand, f"{where}.reduce"),
            )
        return Job(
            name=entry.name,
            submit=entry.submit,
            user=entry.name if entry.user is None else entry.user,
            demand=self._demand(entry.demand, where),
            tasks=entry.tasks,
            duration=_duration(entry.duration),
            queue=self._queue(entry.queue, where),
            weight=entry.weight,
            constraint=self._constraint(entry.constraint, where),
            machines=self._whitelist(entry.machines, where),
            input_replicas=replicas,
            reduce=reduce,
        )

    def _check_unique(self, kind: str, name: str, i: int, seen: dict[str, int]) -> None:
        """Names are unique within users and within jobs (``seen``: name -> index)."""
        if name in seen:
            section = f"{kind}s"
            self.fail(
                f"{section}[{i}].name",
                f"duplicate {kind} name {name!r} (also {section}[{seen[name]}]); "
                f"{kind} names must be unique",
            )
        seen[name] = i


def _too_many_tasks(tasks: int) -> str:
    return (
        f"the jobs' tasks (map and reduce) add up to {tasks:,} here; a scenario may have at "
        f"most {MAX_TASKS:,} tasks"
    )


def _too_many_copies(copies: int) -> str:
    return (
        f"tasks times replicas add up to {copies:,} input block locations here; at most "
        f"{MAX_REPLICA_COPIES:,}"
    )


def _duration(value: float | list[float] | _DistributionModel) -> Duration:
    if isinstance(value, list):
        return PerTaskDurations(tuple(value))
    if isinstance(value, _DistributionModel):
        if value.pareto is not None:
            return ParetoDuration(value.pareto.alpha, value.pareto.minimum)
        assert value.exponential is not None  # guaranteed by _DistributionModel.check_one
        return ExponentialDuration(value.exponential.mean)
    return FixedDuration(value)


# --------------------------------------------------------------------------------------------
# Entry points


def parse_scenario(
    data: object, source: str, machines_from: MachinesFrom | None = None
) -> Scenario:
    """Validate an already-parsed scenario (a dict as from ``json.load``) and build it.

    ``source`` names the input in error messages and becomes ``Scenario.source``.
    ``machines_from`` gives the machines when the scenario has no ``machines`` field (a
    trace's node list, SPEC section 3); without it, ``machines`` is required.
    Raises :class:`ScenarioError` on the first problem found.
    """
    if data is None:
        raise ScenarioError(source, "file", "is empty; a scenario needs at least 'machines'")
    if not isinstance(data, dict):
        fields = ", ".join(_ScenarioModel.model_fields)
        raise ScenarioError(
            source, "top level", f"must be a mapping with fields {fields}, {_got(data)}"
        )
    try:
        model = _ScenarioModel.model_validate(data)
    except ValidationError as err:
        raise _from_validation_error(err, source) from None
    return _Builder(model, source, machines_from).build()


def load_scenario(path: str | Path, machines_from: MachinesFrom | None = None) -> Scenario:
    """Read a YAML or JSON scenario file (by suffix: ``.json``, ``.yaml``/``.yml``; otherwise
    JSON if the text starts with ``{``), validate it and build the :class:`Scenario`
    (``machines_from`` as for :func:`parse_scenario`)."""
    source = str(path)
    try:
        with Path(path).open("rb") as stream:
            raw = stream.read(MAX_SCENARIO_BYTES + 1)  # not the whole of a huge file or pipe
    except OSError as err:
        raise ScenarioError(source, "file", f"cannot read ({err.strerror or err})") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            source,
            "file",
            f"is larger than {MAX_SCENARIO_BYTES // 2**20} MiB (the limit for a scenario file)",
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ScenarioError(
            source, "file", f"cannot read (not UTF-8 text: bad byte at offset {err.start})"
        ) from None
    if not text.strip():
        raise ScenarioError(source, "file", "is empty; a scenario needs at least 'machines'")
    suffix = Path(path).suffix.lower()
    is_json = suffix == ".json" or (
        suffix not in (".yaml", ".yml") and text.lstrip().startswith("{")
    )
    data = _read_json(text, source) if is_json else _read_yaml(text, source)
    return parse_scenario(data, source, machines_from)


# --------------------------------------------------------------------------------------------
# YAML and JSON readers that reject duplicate keys


class _DuplicateKeyError(Exception):
    def __init__(self, key: object, line: int, first_line: int) -> None:
        super().__init__(key, line, first_line)
        self.key = key
        self.line = line
        self.first_line = first_line


class _LimitExceeded(Exception):
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
        _LimitedComposer.__init__(self)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
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


def _read_yaml(text: str, source: str) -> object:
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
            f"duplicate key {_show(dup.key)} (first at line {dup.first_line})",
        ) from None
    except _LimitExceeded as limit:
        raise ScenarioError(source, f"line {limit.line}", limit.what) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "not valid YAML"
        where = f"line {mark.line + 1}" if mark is not None else "file"
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
    """Python refuses integers of more than 4,300 digits (``sys.int_info``)."""
    if "digits" in str(err):
        return "a number has thousands of digits; numbers must be finite floats (below 1e308)"
    return f"cannot read: {_one_line(str(err))[:200]}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


class _JsonConstantError(Exception):
    pass


def _reject_constant(name: str) -> NoReturn:
    raise _JsonConstantError(name)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(key, 0, 0)
        out[key] = value
    return out


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def _line_of_constant(text: str) -> int | None:
    for match in _JSON_TOKEN.finditer(text):
        if match.group(1):
            return text.count("\n", 0, match.start()) + 1
    return None


def _nesting_over_limit(data: object) -> bool:
    """True if mappings and lists nest more than ``MAX_NESTING`` deep (without recursion)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            depth += 1
            if depth > MAX_NESTING:
                return True
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth) for item in items if isinstance(item, dict | list))
    return False


def _read_json(text: str, source: str) -> object:
    data = _parse_json(text, source)
    if _nesting_over_limit(data):
        raise ScenarioError(source, "file", _TOO_DEEP)
    return data


def _parse_json(text: str, source: str) -> object:
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
            _read_yaml(text, source)
        except ScenarioError as located:
            if located.what.startswith("duplicate key"):
                raise located from None
        raise ScenarioError(source, "file", f"duplicate key {_show(dup.key)}") from None
