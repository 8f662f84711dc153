"""The scenario's structure, field by field (stage 1 of :mod:`fairshare.workload.loader`):
records that mirror SPEC section 1, each field with its strict scalar check (no strings for
numbers, no booleans for numbers, finite, in range: :mod:`fairshare.workload.field_checks`),
and the first problem found as a :class:`~fairshare.workload.errors.ScenarioError` whose
WHERE is the field path.

Each record is a mapping with exactly the declared fields, checked by one function
(:func:`~fairshare.workload.field_checks._record`): its fields in declaration order, then
the checks that span them (the record's ``check``). Plain functions, because importing
pydantic and building its models cost a ``simulate`` 0.15 CPU s at start-up, more than
checking a 10,000-machine scenario (``fairshare bench end-to-end``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fairshare.cluster import AttributeValue
from fairshare.workload.errors import FieldError, ScenarioError, invalid, shown_value
from fairshare.workload.field_checks import (
    _amount,
    _attribute,
    _choice,
    _duration_seconds,
    _Field,
    _flag,
    _fraction,
    _half_life,
    _list,
    _mapping,
    _name,
    _non_negative,
    _optional,
    _pareto_alpha,
    _priority,
    _queue_path,
    _Record,
    _record,
    _seconds,
    _task_bound,
    _text,
    _then,
    _weight,
    _whole,
)
from fairshare.workload.limits import (
    MAX_GENERATED_JOBS,
    MAX_JOB_TASKS,
    MAX_MACHINES,
    MAX_REPLICAS,
)
from fairshare.workload.model import (
    BORROW_POLICIES,
    RECLAIM_POLICIES,
    REPLICA_PLACEMENTS,
    WITHIN_QUEUE_POLICIES,
)

GENERATORS = ("facebook-2009", "facebook-2010", "zipf", "google-constraints")
"""The built-in workload generators (SPEC section 1, ``workload.generator``)."""

MAX_COUNT = MAX_MACHINES
"""The largest ``count`` a machine entry may expand to (the machines of all entries together
are limited to the same number, :data:`~fairshare.workload.limits.MAX_MACHINES`)."""


def _generator(value: object) -> str:
    if not isinstance(value, str) or value not in GENERATORS:
        raise invalid(f"unknown generator {shown_value(value)}; allowed: {', '.join(GENERATORS)}")
    return value


# --------------------------------------------------------------------------------------------
# Records: the scenario's structure, mirroring SPEC section 1


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
class _BorrowWithinCohortModel(_Record):
    policy: str
    max_priority_threshold: int | None

    fields = (
        _Field("policy", _choice(*BORROW_POLICIES), "never"),
        _Field("max_priority_threshold", _optional(_priority), None),
    )


@dataclass(slots=True)
class PreemptionModel(_Record):
    reclaim_within_cohort: str
    within_cluster_queue: str
    borrow_within_cohort: _BorrowWithinCohortModel | None

    fields = (
        _Field("reclaim_within_cohort", _choice(*RECLAIM_POLICIES), "never"),
        _Field("within_cluster_queue", _choice(*WITHIN_QUEUE_POLICIES), "never"),
        _Field("borrow_within_cohort", _optional(_record(_BorrowWithinCohortModel)), None),
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
    preemption: PreemptionModel | None

    fields = (
        _Field("path", _queue_path),
        _Field("weight", _weight, 1.0),
        _Field("min_share", _task_bound, 0.0),
        _Field("max_share", _optional(_task_bound), None),
        _Field("quota", _optional(_amounts), None),
        _Field("borrowing_limit", _optional(_amounts), None),
        _Field("lending_limit", _optional(_amounts), None),
        _Field("preemption", _optional(_record(PreemptionModel)), None),
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
        _Field("tasks", _whole(0, MAX_JOB_TASKS)),
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
        _Field("tasks", _whole(1, MAX_JOB_TASKS)),
        _Field("duration", _duration),
        _Field("input", _optional(_record(_InputModel)), None),
        _Field("reduce", _optional(_record(_ReduceModel)), None),
        _Field("priority", _priority, 0),
        _Field("after", _optional(_name), None),
        _Field("think", _optional(_seconds), None),
        _Field("gang", _flag, False),
        _Field("min_tasks", _optional(_whole(1, MAX_JOB_TASKS)), None),
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
    usage_half_life: float | None

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
        _Field("usage_half_life", _optional(_half_life), None),
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
