"""The parameters of the built-in workload generators (SPEC section 1, ``workload``): which
each generator takes, their defaults, and :class:`GeneratorParams`, which reads and checks
them. What each parameter means is in :mod:`fairshare.workload.generators`.

Examples
--------
>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.workload.model import WorkloadSpec
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([4.0]))])
>>> params = GeneratorParams(WorkloadSpec("zipf", {"jobs": 7}), cluster, "scenario.yaml")
>>> params.count("jobs"), params.values["arrival"]
(7, 30.0)
>>> GeneratorParams(WorkloadSpec("zipf", {"nope": 1}), cluster, "scenario.yaml")
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fairshare.workload.errors.ScenarioError: error: scenario.yaml: workload.nope: unknown parameter ...
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import NoReturn

import numpy as np

from fairshare.cluster import Cluster, FloatArray
from fairshare.workload.limits import MAX_JOB_TASKS, MAX_TASKS
from fairshare.workload.loader import ScenarioError
from fairshare.workload.model import (
    MAX_AMOUNT,
    MAX_SECONDS,
    MIN_AMOUNT,
    MIN_SECONDS,
    REPLICA_PLACEMENTS,
    ROOT,
    Duration,
    ExponentialDuration,
    FixedDuration,
    ParetoDuration,
    ReducePhase,
    ReplicaPlacement,
    WorkloadSpec,
)

__all__ = ["DEFAULT_JOBS", "GeneratorParams"]

DEFAULT_JOBS = {"facebook-2009": 50, "facebook-2010": 100, "zipf": 30, "google-constraints": 300}
"""Each generator's default ``jobs``: its paper's experiment (see the module docstring)."""

_DEFAULTS: dict[str, dict[str, object]] = {
    "facebook-2009": {"jobs": DEFAULT_JOBS["facebook-2009"], "arrival": 30.0},
    "facebook-2010": {"jobs": DEFAULT_JOBS["facebook-2010"], "arrival": 30.0},
    "zipf": {"jobs": DEFAULT_JOBS["zipf"], "arrival": 30.0},
    "google-constraints": {"jobs": DEFAULT_JOBS["google-constraints"], "arrival": 12.0},
}
_COMMON = ("jobs", "arrival", "duration", "demand", "users", "queues", "closed_loop")
_INPUT = ("replicas", "replica_placement", "hot_files")
_PARAMETERS: dict[str, tuple[str, ...]] = {
    "facebook-2009": (*_COMMON, *_INPUT, "reduce", "sizes"),
    "facebook-2010": (*_COMMON, *_INPUT, "sizes"),
    "zipf": (*_COMMON, *_INPUT, "reduce", "s"),
    "google-constraints": (*_COMMON, "sizes"),
}
_DEFAULT_HOT_FILES = 3
_DEFAULT_DURATION = ParetoDuration(alpha=1.9, minimum=10.0)
_DEFAULT_REPLICAS = 3
_DEFAULT_REDUCE = (10.0, 20.0)


class GeneratorParams:
    """Reads and checks the generator's parameters; errors at ``workload.<name>``."""

    def __init__(self, spec: WorkloadSpec, cluster: Cluster, source: str) -> None:
        self.spec = spec
        self.cluster = cluster
        self.source = source
        self.values = dict(_DEFAULTS[spec.generator])
        allowed = _PARAMETERS[spec.generator]
        for key, value in spec.params.items():
            if key not in allowed:
                self.fail(
                    key,
                    f"unknown parameter for generator {spec.generator!r}; allowed: "
                    f"{', '.join(allowed)}",
                )
            self.values[key] = value

    def fail(self, name: str, what: str) -> NoReturn:
        """Raise the :class:`ScenarioError` at ``workload.<name>``."""
        raise ScenarioError(self.source, f"workload.{name}", what)

    def count(self, name: str, minimum: int = 1) -> int | None:
        """Parameter ``name`` as a whole number >= ``minimum``; None when not given."""
        value = self.values.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(name, f"must be a whole number >= {minimum}, got {value!r}")
        if not float(value).is_integer() or value < minimum:
            self.fail(name, f"must be a whole number >= {minimum}, got {value!r}")
        return int(value)

    def positive(self, name: str, value: object, where: str | None = None) -> float:
        """``value`` as a finite number > 0; errors at ``where`` (default ``name``)."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            self.fail(where or name, f"must be a number > 0, got {value!r}")
        if not math.isfinite(value):
            self.fail(where or name, f"must be a finite number, got {value!r}")
        return float(value)

    def seconds(self, name: str, value: object, where: str | None = None) -> float:
        """A time span from ``MIN_SECONDS`` to ``MAX_SECONDS``."""
        number = self.positive(name, value, where)
        if not MIN_SECONDS <= number <= MAX_SECONDS:
            self.fail(
                where or name,
                f"must be from {MIN_SECONDS:g} to {MAX_SECONDS:g} seconds, got {value!r}",
            )
        return number

    def number(self, name: str, default: float) -> float:
        """Parameter ``name`` as a number > 0, ``default`` when not given."""
        value = self.values.get(name)
        return default if value is None else self.positive(name, value)

    def duration(self) -> Duration:
        """``duration``: fixed seconds or a distribution (default Pareto 1.9, 10 s)."""
        value = self.values.get("duration")
        if value is None:
            return _DEFAULT_DURATION
        if isinstance(value, Mapping) and len(value) == 1:
            ((kind, fields),) = value.items()
            if kind == "pareto" and isinstance(fields, Mapping) and set(fields) == {"alpha", "min"}:
                return ParetoDuration(
                    self.positive("duration", fields["alpha"], "duration.pareto.alpha"),
                    self.seconds("duration", fields["min"], "duration.pareto.min"),
                )
            if kind == "exponential" and isinstance(fields, Mapping) and set(fields) == {"mean"}:
                return ExponentialDuration(
                    self.seconds("duration", fields["mean"], "duration.exponential.mean")
                )
        elif not isinstance(value, Mapping):
            return FixedDuration(self.seconds("duration", value))
        self.fail(
            "duration",
            "must be seconds per task (a number > 0), {pareto: {alpha, min}} or "
            "{exponential: {mean}}",
        )

    def demands(self) -> list[FloatArray]:
        """``demand``: the per-task demand vectors to pick from (default one unit of the
        first resource).
        """
        value = self.values.get("demand")
        if value is None:
            vector = np.zeros(len(self.cluster.resources), dtype=np.float64)
            vector[0] = 1.0
            return [self._frozen(vector)]
        if isinstance(value, Mapping):
            return [self._demand(value, "demand")]
        if isinstance(value, list) and value:
            return [self._demand(item, f"demand[{i}]") for i, item in enumerate(value)]
        self.fail("demand", "must be a mapping like {cpu: 1, mem: 2} or a non-empty list of them")

    def _demand(self, value: object, where: str) -> FloatArray:
        """One demand mapping as a read-only vector; errors at ``where``."""
        if not isinstance(value, Mapping):
            self.fail(where, "must be a mapping like {cpu: 1, mem: 2}")
        resources = self.cluster.resources
        vector = np.zeros(len(resources), dtype=np.float64)
        for resource, amount in value.items():
            if resource not in resources:
                self.fail(
                    f"{where}.{resource}",
                    f"unknown resource {resource!r}; resources: {', '.join(resources)}",
                )
            if (
                isinstance(amount, bool)
                or not isinstance(amount, int | float)
                or not (amount == 0 or MIN_AMOUNT <= amount <= MAX_AMOUNT)
            ):
                self.fail(
                    f"{where}.{resource}",
                    f"must be 0 or a number from {MIN_AMOUNT:g} to {MAX_AMOUNT:g}, got {amount!r}",
                )
            index = resources.index(resource)
            if amount > 0 and self.cluster.total[index] <= 0:
                self.fail(
                    f"{where}.{resource}",
                    f"no machine has resource {resource!r} (its total capacity is 0)",
                )
            vector[index] = amount
        if not vector.any():
            self.fail(where, "must have at least one resource with an amount > 0")
        return self._frozen(vector)

    @staticmethod
    def _frozen(vector: FloatArray) -> FloatArray:
        """``vector``, made read-only so that every job can share it."""
        vector.setflags(write=False)
        return vector

    def sizes(self) -> list[tuple[int, int, float]] | None:
        """``sizes``: the job-size bins to draw from instead of the generator's own, a
        non-empty list of ``{low: N, high: N, fraction: F}`` (a bin by its fraction, then
        uniform from ``low`` to ``high`` tasks; fractions are renormalised); None when not
        given."""
        value = self.values.get("sizes")
        if value is None:
            return None
        shape = "must be a non-empty list of {low: N, high: N, fraction: F}"
        if not isinstance(value, list) or not value:
            self.fail("sizes", shape)
        bins: list[tuple[int, int, float]] = []
        for i, item in enumerate(value):
            where = f"sizes[{i}]"
            if not isinstance(item, Mapping) or set(item) != {"low", "high", "fraction"}:
                self.fail(where, shape.replace("a non-empty list of ", ""))
            ends = []
            for end in ("low", "high"):
                tasks = item[end]
                if (
                    isinstance(tasks, bool)
                    or not isinstance(tasks, int | float)
                    or not float(tasks).is_integer()
                    or not 1 <= tasks <= MAX_JOB_TASKS
                ):
                    self.fail(
                        f"{where}.{end}",
                        f"must be a whole number of tasks from 1 to {MAX_JOB_TASKS:,}, "
                        f"got {tasks!r}",
                    )
                ends.append(int(tasks))
            if ends[1] < ends[0]:
                self.fail(f"{where}.high", f"must be at least low ({ends[0]}), got {ends[1]}")
            fraction = self.positive("sizes", item["fraction"], f"{where}.fraction")
            bins.append((ends[0], ends[1], fraction))
        return bins

    def users(self) -> int | None:
        """``users``: how many users share the jobs; None for a user per job."""
        return self.count("users")

    def queues(self, declared: Collection[str]) -> list[str]:
        """``queues``: declared queue paths to pick from (default the root)."""
        value = self.values.get("queues")
        if value is None:
            return [ROOT]
        if not isinstance(value, list) or not value:
            self.fail("queues", "must be a non-empty list of declared queue paths")
        for i, path in enumerate(value):
            if not isinstance(path, str) or path not in declared:
                known = ", ".join(declared) if declared else "no queues are declared"
                self.fail(f"queues[{i}]", f"unknown queue {path!r}; declared queues: {known}")
        return list(value)

    def replicas(self) -> int | None:
        """``replicas``: machines holding each map's block (default 3, at most the
        machines); None for no input data.
        """
        replicas = self.count("replicas", minimum=0)
        if replicas is None:
            return min(_DEFAULT_REPLICAS, len(self.cluster.machines))
        if replicas > len(self.cluster.machines):
            self.fail(
                "replicas",
                f"must be at most the number of machines ({len(self.cluster.machines)}), "
                f"got {replicas}",
            )
        return replicas or None

    def reduce(self) -> ReducePhase | None:
        """``reduce``: the reduce phase of every job (its ``tasks`` 0, drawn per job); None
        for map-only jobs."""
        value = self.values.get("reduce")
        if value is None or value is True:
            return ReducePhase(0, *_DEFAULT_REDUCE)
        if value is False:
            return None
        if not isinstance(value, Mapping) or not set(value) <= {
            "copy",
            "compute",
            "demand",
            "slowstart",
        }:
            self.fail(
                "reduce",
                "must be {copy: S, compute: S} (seconds per reduce task; also demand: {...}, "
                "a reducer's demand, and slowstart: F, the fraction of maps before reducers) "
                "or false",
            )
        demand = self._demand(value["demand"], "reduce.demand") if "demand" in value else None
        slowstart = value.get("slowstart")
        if slowstart is not None and (
            isinstance(slowstart, bool)
            or not isinstance(slowstart, int | float)
            or not 0 <= slowstart <= 1
        ):
            self.fail("reduce.slowstart", f"must be a fraction from 0 to 1, got {slowstart!r}")
        seconds: list[float] = []
        for key, default in zip(("copy", "compute"), _DEFAULT_REDUCE, strict=True):
            amount = value.get(key, default)
            if (
                isinstance(amount, bool)
                or not isinstance(amount, int | float)
                or not 0 <= amount <= MAX_SECONDS
            ):
                self.fail(
                    f"reduce.{key}",
                    f"must be a number >= 0, at most {MAX_SECONDS:g}, got {amount!r}",
                )
            seconds.append(float(amount))
        return ReducePhase(
            0, seconds[0], seconds[1], demand, None if slowstart is None else float(slowstart)
        )

    def placement(self) -> ReplicaPlacement:
        """``replica_placement``: ``rack-aware`` (default) or ``uniform``."""
        value = self.values.get("replica_placement", REPLICA_PLACEMENTS[0])
        if value == "uniform":
            return "uniform"
        if value != "rack-aware":
            self.fail(
                "replica_placement",
                f"must be one of {', '.join(REPLICA_PLACEMENTS)}, got {value!r}",
            )
        return "rack-aware"

    def hot_files(self) -> tuple[float, int] | None:
        """``hot_files``: the fraction of jobs reading a popular file, and how many files."""
        value = self.values.get("hot_files")
        if value is None:
            return None
        if not isinstance(value, Mapping) or not set(value) <= {"fraction", "files"}:
            self.fail("hot_files", "must be {fraction: F, files: K}")
        fraction = value.get("fraction")
        if (
            isinstance(fraction, bool)
            or not isinstance(fraction, int | float)
            or not 0 <= fraction <= 1
        ):
            self.fail("hot_files.fraction", f"must be a fraction from 0 to 1, got {fraction!r}")
        files = value.get("files", _DEFAULT_HOT_FILES)
        if (
            isinstance(files, bool)
            or not isinstance(files, int | float)
            or not float(files).is_integer()
            or not 1 <= files <= MAX_TASKS
        ):
            self.fail("hot_files.files", f"must be a whole number >= 1, got {files!r}")
        return float(fraction), int(files)

    def closed_loop(self, users: int | None) -> float | None:
        """``closed_loop``: the think time between a user's jobs; None for open arrivals."""
        value = self.values.get("closed_loop")
        if value is None:
            return None
        if not isinstance(value, Mapping) or set(value) != {"think"}:
            self.fail("closed_loop", "must be {think: S} (seconds between a user's jobs)")
        think = value["think"]
        if (
            isinstance(think, bool)
            or not isinstance(think, int | float)
            or not 0 <= think <= MAX_SECONDS
        ):
            self.fail(
                "closed_loop.think",
                f"must be a number of seconds from 0 to {MAX_SECONDS:g}, got {think!r}",
            )
        if users is None:
            self.fail("closed_loop", "needs 'users' (how many submitters share the jobs)")
        return float(think)
