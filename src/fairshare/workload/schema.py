"""The scenario's structure, field by field (stage 1 of :mod:`fairshare.workload.loader`).

Strict scalar types (no strings for numbers, no booleans for numbers, finite, in range),
pydantic models that mirror SPEC section 1, and the translation of the first pydantic error
into a :class:`~fairshare.workload.errors.ScenarioError` whose WHERE is the field path.
What spans fields (unique names, known resources and queues) is stage 2's, in the loader.

Examples
--------
>>> from pydantic import ValidationError
>>> from fairshare.workload.schema import ScenarioModel, from_validation_error
>>> try:
...     ScenarioModel.model_validate({"machines": [{"name": "m", "capacity": {"cpu": "4"}}]})
... except ValidationError as error:
...     located = from_validation_error(error, "quoted.yaml")
>>> located.where
'machines[0].capacity.cpu'
>>> located.what
"cpu must be a number >= 0, got '4' (a string; write numbers without quotes)"
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Annotated, Any, ClassVar

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

from fairshare.cluster import AttributeValue
from fairshare.workload.errors import ScenarioError, got, invalid, shown_value
from fairshare.workload.limits import (
    MAX_GENERATED_JOBS,
    MAX_MACHINES,
    MAX_REPLICAS,
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
)

GENERATORS = ("facebook-2009", "facebook-2010", "zipf", "google-constraints")
"""The built-in workload generators (SPEC section 1, ``workload.generator``)."""

MAX_COUNT = MAX_MACHINES
"""The largest ``count`` a machine entry may expand to (the machines of all entries together
are limited to the same number, :data:`~fairshare.workload.limits.MAX_MACHINES`)."""
# --------------------------------------------------------------------------------------------
# Scalar field types: strict (no strings for numbers, no bools for numbers), finite, in range


def _number(value: object, requirement: str) -> float:
    """``value`` as a finite float; a string, a boolean or an overflowing integer is refused."""
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
    """Validator of numbers >= 0."""
    number = _number(value, "a number >= 0")
    if number < 0:
        raise invalid(f"must be a number >= 0, {got(value)}")
    return number


def _positive(value: object) -> float:
    """Validator of numbers > 0."""
    number = _number(value, "a number > 0")
    if number <= 0:
        raise invalid(f"must be > 0, {got(value)}")
    return number


def _whole(minimum: int, maximum: int | None = None) -> Callable[[object], int]:
    """A validator of whole numbers from ``minimum`` (to ``maximum``, a limit, if given)."""
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
    """Validator of names: non-empty strings (a number is refused with a hint to quote it)."""
    if not isinstance(value, str):
        hint = "" if isinstance(value, list | dict) or value is None else " (quote it)"
        raise invalid(f"must be a non-empty string, {got(value)}{hint}")
    if not value.strip():
        raise invalid(f"must be a non-empty string, {got(value)}")
    return value


def _text(value: object) -> str:
    """Validator of free text (a constraint's source)."""
    if not isinstance(value, str):
        raise invalid(f"must be a string, {got(value)}")
    return value


def _queue_path(value: object) -> str:
    """Validator of queue paths: ``/``-separated non-empty names."""
    path = _name(value)
    if any(not segment.strip() for segment in path.split("/")):
        raise invalid(f"must be '/'-separated non-empty names like 'ads/prod', {got(value)}")
    return path


def _attribute(value: object) -> AttributeValue:
    """Validator of machine attribute values: strings, booleans and numbers >= 0."""
    if isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        number = _number(value, "a string, number or boolean")
        if number < 0:
            raise invalid(f"must be a string, boolean or number >= 0, {got(value)}")
        return value
    raise invalid(f"must be a string, number or boolean, {got(value)}")


def _generator(value: object) -> str:
    """Validator of ``workload.generator``: one of :data:`GENERATORS`."""
    if not isinstance(value, str) or value not in GENERATORS:
        raise invalid(f"unknown generator {shown_value(value)}; allowed: {', '.join(GENERATORS)}")
    return value


def _seconds(value: object) -> float:
    """Validator of times from 0 to ``MAX_SECONDS``."""
    number = _non_negative(value)
    if number > MAX_SECONDS:
        raise invalid(f"must be a number of seconds from 0 to {MAX_SECONDS:g}, {got(value)}")
    return number


def _duration_seconds(value: object) -> float:
    """Validator of durations from ``MIN_SECONDS`` to ``MAX_SECONDS``."""
    number = _positive(value)
    if not MIN_SECONDS <= number <= MAX_SECONDS:
        raise invalid(
            f"must be a number of seconds from {MIN_SECONDS:g} to {MAX_SECONDS:g}, {got(value)}"
        )
    return number


def _task_bound(value: object) -> float:
    """Validator of task counts bounding a share, from 0 to ``MAX_TASK_BOUND``."""
    number = _non_negative(value)
    if number > MAX_TASK_BOUND:
        raise invalid(f"must be a number of tasks from 0 to {MAX_TASK_BOUND:g}, {got(value)}")
    return number


def _amount(value: object) -> float:
    """Validator of capacities and demands: 0 or from ``MIN_AMOUNT`` to ``MAX_AMOUNT``."""
    number = _non_negative(value)
    if number != 0 and not MIN_AMOUNT <= number <= MAX_AMOUNT:
        raise invalid(f"must be 0 or from {MIN_AMOUNT:g} to {MAX_AMOUNT:g}, {got(value)}")
    return number


def _weight(value: object) -> float:
    """Validator of weights, from ``MIN_WEIGHT`` to ``MAX_WEIGHT``."""
    number = _positive(value)
    if not MIN_WEIGHT <= number <= MAX_WEIGHT:
        raise invalid(f"must be from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}, {got(value)}")
    return number


NonNegative = Annotated[float, PlainValidator(_non_negative)]
"""A finite number >= 0."""
Positive = Annotated[float, PlainValidator(_positive)]
"""A finite number > 0."""
Seconds = Annotated[float, PlainValidator(_seconds)]
"""A time (submit) or a time span that may be 0 (reduce copy and compute), bounded by
:data:`~fairshare.workload.model.MAX_SECONDS` so that sums of times stay finite."""
DurationSeconds = Annotated[float, PlainValidator(_duration_seconds)]
"""A task's duration: from ``MIN_SECONDS`` to ``MAX_SECONDS``."""
Amount = Annotated[float, PlainValidator(_amount)]
"""A capacity or demand: 0 or from ``MIN_AMOUNT`` to ``MAX_AMOUNT``."""
TaskBound = Annotated[float, PlainValidator(_task_bound)]
"""``min_share``, ``max_share`` or ``max_tasks``: from 0 to ``MAX_TASK_BOUND`` tasks."""
Weight = Annotated[float, PlainValidator(_weight)]
"""A weight: from ``MIN_WEIGHT`` to ``MAX_WEIGHT``."""

PARETO_ALPHA_MIN = 0.1
"""Smallest Pareto shape accepted: a draw is ``min * U**(-1/alpha)`` and a uniform ``U`` as
small as 2**-53 must keep it far inside the float range (below about 1e160 times ``min``)."""


def _pareto_alpha(value: object) -> float:
    """Validator of a Pareto shape: at least :data:`PARETO_ALPHA_MIN`."""
    alpha = _positive(value)
    if alpha < PARETO_ALPHA_MIN:
        raise invalid(
            f"must be >= {PARETO_ALPHA_MIN} (smaller shapes draw durations beyond the float "
            f"range), {got(value)}"
        )
    return alpha


Count = Annotated[int, PlainValidator(_whole(1))]
"""A whole number >= 1 (a machine entry's ``count``)."""
CountOrZero = Annotated[int, PlainValidator(_whole(0))]
"""A whole number >= 0."""
TaskCount = Annotated[int, PlainValidator(_whole(1, MAX_TASKS))]
"""A job's tasks: a whole number from 1 to ``MAX_TASKS``."""
TaskCountOrZero = Annotated[int, PlainValidator(_whole(0, MAX_TASKS))]
"""A reduce phase's tasks: a whole number from 0 to ``MAX_TASKS``."""
Replicas = Annotated[int, PlainValidator(_whole(1, MAX_REPLICAS))]
"""``input.replicas``: a whole number from 1 to ``MAX_REPLICAS``."""
GeneratedJobs = Annotated[int, PlainValidator(_whole(1, MAX_GENERATED_JOBS))]
"""A generator's ``jobs``: a whole number from 1 to ``MAX_GENERATED_JOBS``."""
Name = Annotated[str, PlainValidator(_name)]
"""A name: a non-empty string."""
Text = Annotated[str, PlainValidator(_text)]
"""Any string."""
QueuePath = Annotated[str, PlainValidator(_queue_path)]
"""A queue path: ``/``-separated non-empty names (``ads/prod``)."""
Attribute = Annotated[AttributeValue, PlainValidator(_attribute)]
"""A machine attribute's value: a string, a boolean or a number >= 0."""
Generator = Annotated[str, PlainValidator(_generator)]
"""A built-in generator's name, one of :data:`GENERATORS`."""


# --------------------------------------------------------------------------------------------
# The scenario's structure, mirroring SPEC section 1


_FIELD_NAMES: dict[type[BaseModel], list[str]] = {}
"""Each model's field names as written in a scenario (aliases), read once per model."""


class _Model(BaseModel):
    """Base of the structure models: a mapping with exactly the declared fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    open_fields: ClassVar[bool] = False
    """True for models that keep unknown fields (``workload`` generator parameters)."""

    @model_validator(mode="before")
    @classmethod
    def check_field_names(cls, data: Any) -> Any:
        """Refuse a value that is not a mapping, and (unless :attr:`open_fields`) an unknown field,
        listing the allowed ones.

        Parameters
        ----------
        data : Any
            The raw value of the model's field.

        Returns
        -------
        Any
            ``data``, unchanged.

        Raises
        ------
        PydanticCustomError
            ``data`` is not a mapping, or names a field the model does not have.
        """
        allowed = _FIELD_NAMES.get(cls)
        if allowed is None:
            # model_fields goes through a slow deprecation shim on every access: read it once.
            allowed = _FIELD_NAMES[cls] = [
                field.alias or name for name, field in cls.model_fields.items()
            ]
        if not isinstance(data, dict):
            raise invalid(f"must be a mapping with fields {', '.join(allowed)}, {got(data)}")
        if not cls.open_fields:
            for key in data:
                if key not in allowed:
                    raise invalid(
                        f"unknown field {shown_value(key)}; allowed: {', '.join(allowed)}", at=key
                    )
        return data


def _check_share_bounds(min_share: float, max_share: float | None) -> None:
    """Refuse ``min_share`` above ``max_share`` (blamed on ``min_share``)."""
    if max_share is not None and min_share > max_share:
        raise invalid(
            f"min_share ({shown_value(min_share)}) must be <= max_share ({shown_value(max_share)})",
            at="min_share",
        )


def _check_demand(demand: dict[str, float] | None) -> dict[str, float] | None:
    """Refuse a demand whose amounts are all 0."""
    if demand is not None and not any(amount > 0 for amount in demand.values()):
        raise invalid("must have at least one resource with an amount > 0, got all zeros")
    return demand


class MachineModel(_Model):
    """One entry of ``machines`` (SPEC section 1).

    Parameters
    ----------
    name : str
        The machine's name; with ``count``, the prefix of ``NAME-0`` ... ``NAME-(count-1)``.
    capacity : dict of str to float
        Capacity per resource name.
    rack : str, optional
        The machine's rack.
    attributes : dict of str to AttributeValue
        Attributes for placement constraints (``name`` and ``rack`` are reserved).
    count : int, optional
        How many identical machines the entry stands for (at most :data:`MAX_COUNT`).
    """

    name: Name
    capacity: dict[Name, Amount]
    rack: Name | None = None
    attributes: dict[Name, Attribute] = Field(default_factory=dict)
    count: Count | None = None

    @field_validator("attributes")
    @classmethod
    def check_reserved(cls, attributes: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
        """Refuse the attributes ``name`` and ``rack``, which constraints read from the machine.

        Parameters
        ----------
        attributes : dict of str to AttributeValue
            The entry's attributes.

        Returns
        -------
        dict of str to AttributeValue
            ``attributes``, unchanged.

        Raises
        ------
        PydanticCustomError
            A reserved name is used.
        """
        for key in ("name", "rack"):
            if key in attributes:
                raise invalid(
                    f"attribute {key!r} is reserved (constraints read the machine's own "
                    f"{key}); use another attribute name",
                    at=key,
                )
        return attributes

    @field_validator("count")
    @classmethod
    def check_count(cls, count: int | None) -> int | None:
        """Refuse a ``count`` above :data:`MAX_COUNT`.

        Parameters
        ----------
        count : int or None
            The entry's count.

        Returns
        -------
        int or None
            ``count``, unchanged.

        Raises
        ------
        PydanticCustomError
            ``count`` is above the limit.
        """
        if count is not None and count > MAX_COUNT:
            raise invalid(f"must be a whole number from 1 to {MAX_COUNT}, got {count}")
        return count


class QueueModel(_Model):
    """One entry of ``queues`` (SPEC section 1; H-DRF section 2.1's internal nodes).

    Parameters
    ----------
    path : str
        ``/``-separated path (``ads/prod``).
    weight : float
        Weight among the queue's siblings.
    min_share : float
        Tasks guaranteed to the queue.
    max_share : float, optional
        The most tasks the queue may hold.
    """

    path: QueuePath
    weight: Weight = 1.0
    min_share: TaskBound = 0.0
    max_share: TaskBound | None = None

    @model_validator(mode="after")
    def check_shares(self) -> QueueModel:
        """Refuse ``min_share`` above ``max_share``.

        Returns
        -------
        QueueModel
            The model, unchanged.

        Raises
        ------
        PydanticCustomError
            ``min_share`` is above ``max_share``.
        """
        _check_share_bounds(self.min_share, self.max_share)
        return self


class UserModel(_Model):
    """One entry of ``users`` (SPEC section 1).

    Parameters
    ----------
    name : str
        The user's name.
    demand : dict of str to float, optional
        Per-task demand per resource; may be omitted on a one-resource cluster.
    weight : float
        The user's weight.
    queue : str, optional
        The path of the user's queue.
    max_tasks : float, optional
        The most tasks the user has work for.
    min_share : float
        Tasks guaranteed to the user.
    max_share : float, optional
        The most tasks the user may hold.
    constraint : str, optional
        A placement constraint (SPEC section 1's language).
    machines : list of str, optional
        A whitelist of machine names.
    """

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
        """Refuse a demand whose amounts are all 0.

        Parameters
        ----------
        demand : dict of str to float or None
            The user's demand.

        Returns
        -------
        dict of str to float or None
            ``demand``, unchanged.

        Raises
        ------
        PydanticCustomError
            Every amount is 0.
        """
        return _check_demand(demand)

    @model_validator(mode="after")
    def check_shares(self) -> UserModel:
        """Refuse ``min_share`` above ``max_share``.

        Returns
        -------
        UserModel
            The model, unchanged.

        Raises
        ------
        PydanticCustomError
            ``min_share`` is above ``max_share``.
        """
        _check_share_bounds(self.min_share, self.max_share)
        return self


class _ParetoModel(_Model):
    """``{pareto: {alpha, min}}``: a Pareto duration's shape and scale."""

    alpha: Annotated[float, PlainValidator(_pareto_alpha)]
    minimum: DurationSeconds = Field(alias="min")


class _ExponentialModel(_Model):
    """``{exponential: {mean}}``: an exponential duration's mean."""

    mean: DurationSeconds


class DistributionModel(_Model):
    """A task duration drawn from a distribution: exactly one of ``pareto`` and ``exponential``.

    Parameters
    ----------
    pareto : _ParetoModel, optional
        ``{alpha, min}``: Pareto shape and scale (seconds).
    exponential : _ExponentialModel, optional
        ``{mean}``: the mean (seconds).
    """

    pareto: _ParetoModel | None = None
    exponential: _ExponentialModel | None = None

    @model_validator(mode="after")
    def check_one(self) -> DistributionModel:
        """Refuse none or both of the distributions.

        Returns
        -------
        DistributionModel
            The model, unchanged.

        Raises
        ------
        PydanticCustomError
            Neither or both distributions are given.
        """
        if (self.pareto is None) == (self.exponential is None):
            raise invalid(
                "must name exactly one distribution: {pareto: {alpha, min}} or "
                "{exponential: {mean}}"
            )
        return self


def _duration_kind(value: Any) -> str:
    """The tag of a ``duration`` value: ``number``, ``list`` or ``distribution``."""
    if isinstance(value, dict):
        return "distribution"
    return "list" if isinstance(value, list) else "number"


_DURATION_TAGS = frozenset({"number", "list", "distribution"})

DurationField = Annotated[
    Annotated[float, PlainValidator(_duration_seconds), Tag("number")]
    | Annotated[list[DurationSeconds], Tag("list")]
    | Annotated[DistributionModel, Tag("distribution")],
    Discriminator(_duration_kind),
]
"""A job's ``duration``: seconds, a list of seconds per task, or a distribution."""


class _InputModel(_Model):
    """A job's ``input``: machines holding each map's block."""

    replicas: Replicas


class _ReduceModel(_Model):
    """A job's ``reduce`` phase: tasks, copy and compute seconds, an optional demand."""

    tasks: TaskCountOrZero
    copy_seconds: Seconds = Field(default=0.0, alias="copy")
    compute: Seconds = 0.0
    demand: dict[Name, Amount] | None = None

    @field_validator("demand")
    @classmethod
    def check_demand(cls, demand: dict[str, float] | None) -> dict[str, float] | None:
        """Refuse a reduce demand whose amounts are all 0."""
        return _check_demand(demand)


class JobModel(_Model):
    """One entry of ``jobs`` (SPEC section 1).

    Parameters
    ----------
    name : str
        The job's name.
    submit : float
        Submit time, seconds.
    user : str, optional
        The user it runs for (default: the job's name).
    queue : str, optional
        The path of its queue.
    weight : float
        Its weight.
    demand : dict of str to float, optional
        A task's demand per resource.
    constraint : str, optional
        A placement constraint.
    machines : list of str, optional
        A whitelist of machine names.
    tasks : int
        Map tasks.
    duration : float, list of float or DistributionModel
        Seconds per task, one per task, or a distribution.
    input : _InputModel, optional
        ``{replicas}``: machines holding each map's input block.
    reduce : _ReduceModel, optional
        ``{tasks, copy, compute, demand}``: the reduce phase.
    """

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
        """Refuse a demand whose amounts are all 0.

        Parameters
        ----------
        demand : dict of str to float or None
            The job's demand.

        Returns
        -------
        dict of str to float or None
            ``demand``, unchanged.

        Raises
        ------
        PydanticCustomError
            Every amount is 0.
        """
        return _check_demand(demand)

    @model_validator(mode="after")
    def check_duration_list(self) -> JobModel:
        """Refuse a list of durations whose length is not the job's tasks.

        Returns
        -------
        JobModel
            The model, unchanged.

        Raises
        ------
        PydanticCustomError
            The list and ``tasks`` disagree.
        """
        if isinstance(self.duration, list) and len(self.duration) != self.tasks:
            raise invalid(
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
            raise invalid(err.message(), at=at) from None
    elif isinstance(value, dict):
        for item in value.values():
            _check_parameter(item, at)
    elif isinstance(value, list):
        for item in value:
            _check_parameter(item, at)


class WorkloadModel(_Model):
    """``workload``: a built-in generator and its parameters (SPEC section 1).

    Parameters other than ``generator`` and ``jobs`` are kept as written and checked by
    :func:`fairshare.workload.generators.generate`; numbers among them must be finite and >= 0.

    Parameters
    ----------
    generator : str
        One of :data:`GENERATORS`.
    jobs : int, optional
        How many jobs to draw (at most ``MAX_GENERATED_JOBS``).
    """

    model_config = ConfigDict(extra="allow")
    open_fields: ClassVar[bool] = True

    generator: Generator
    jobs: GeneratedJobs | None = None

    @model_validator(mode="after")
    def check_parameters(self) -> WorkloadModel:
        """Refuse a negative or non-finite number among the generator's parameters.

        Returns
        -------
        WorkloadModel
            The model, unchanged.

        Raises
        ------
        PydanticCustomError
            A parameter holds such a number.
        """
        for key, value in (self.model_extra or {}).items():
            _check_parameter(value, key)
        return self


class ScenarioModel(_Model):
    """A whole scenario (SPEC section 1).

    Every field is optional here; stage 2 requires ``machines`` unless the caller gives them.

    Parameters
    ----------
    resources : list of str, optional
        Resource names, in order (default: as the machines name them).
    machines : list of MachineModel, optional
        The machines.
    queues : list of QueueModel, optional
        The queues.
    users : list of UserModel, optional
        The users to allocate.
    jobs : list of JobModel, optional
        The jobs to replay.
    workload : WorkloadModel, optional
        A generator of jobs.
    """

    resources: list[Name] | None = None
    # Required unless the caller gives machines (a trace's node list: SPEC section 3)
    machines: list[MachineModel] | None = None
    queues: list[QueueModel] | None = None
    users: list[UserModel] | None = None
    jobs: list[JobModel] | None = None
    workload: WorkloadModel | None = None

    @field_validator("resources")
    @classmethod
    def check_resources(cls, resources: list[str] | None) -> list[str] | None:
        """Refuse an empty or repeating ``resources`` list.

        Parameters
        ----------
        resources : list of str or None
            The declared resources.

        Returns
        -------
        list of str or None
            ``resources``, unchanged.

        Raises
        ------
        PydanticCustomError
            The list is empty or names a resource twice.
        """
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

    @field_validator("machines")
    @classmethod
    def check_machines(cls, machines: list[MachineModel] | None) -> list[MachineModel] | None:
        """Refuse an empty ``machines`` list.

        Parameters
        ----------
        machines : list of MachineModel or None
            The machine entries.

        Returns
        -------
        list of MachineModel or None
            ``machines``, unchanged.

        Raises
        ------
        PydanticCustomError
            The list is empty.
        """
        if machines is not None and not machines:
            raise invalid("must list at least one machine")
        return machines


# --------------------------------------------------------------------------------------------
# Pydantic errors -> ScenarioError


def _path(loc: Sequence[str | int]) -> str:
    """A pydantic location as a field path: ``machines[3].capacity.cpu``."""
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


def from_validation_error(error: ValidationError, source: str) -> ScenarioError:
    """The first pydantic error as one :class:`~fairshare.workload.errors.ScenarioError`.

    Parameters
    ----------
    error : ValidationError
        What validating a model raised.
    source : str
        Names the input.

    Returns
    -------
    ScenarioError
        WHERE is the error's field path (tagged-union tags left out), WHAT names the field
        and says what is allowed.
    """
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
        what = f"missing required field {shown_value(loc[-1])}"
    elif kind == "extra_forbidden":
        what = f"unknown field {shown_value(loc[-1])}"
    elif kind in _TYPE_WORDS:
        what = f"{_TYPE_WORDS[kind]}, {got(first['input'])}"
    else:  # not expected: our validators cover every scalar; keep pydantic's one-line summary
        what = first["msg"].splitlines()[0] if first["msg"] else kind
    if "[key]" in loc:
        loc = [part for part in loc if part != "[key]"]
        what = f"key {what}"
    elif what.startswith("must "):
        label = _path(loc).rpartition(".")[2]
        what = f"{label} {what}"
    return ScenarioError(source, _path(loc), what)
