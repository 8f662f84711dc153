"""Built-in workload generators (SPEC section 1, ``workload: {generator: NAME, ...}``).

Four generators, each after the paper that measured the workload:

``facebook-2009``
    FAIR section 6.1 and Table 2: map counts drawn from the nine Facebook job-size bins
    (58% of jobs have 1-25 maps, ..., 1.7% more than 3200), uniform within a bin (the open
    last bin is capped at 6400, the size FAIR's benchmark used for it); reducers 5% to 25%
    of the maps (at least one); Poisson arrivals 30 s apart on average; each map reads one
    block held on 3 machines (``replicas``), so delay scheduling has data to be local to.
``facebook-2010``
    H-DRF section 5.3.1 and Table 1: task counts from the 2010 Facebook bins 0-19 (73%),
    20-149 (10%), 150-499 (7%) and 500+ (9%; capped at 3000), the percentages renormalised
    (they sum to 99); single-phase jobs (H-DRF's jobs are tasks with a demand vector).
``zipf``
    FAIR section 5.3: maps Zipf-distributed between 1 and 400 (exponent ``s``, default 1),
    reducers uniform between 1 and maps / 5.
``google-constraints``
    Choosy section 7.1 / TSF section VI: job sizes from FAIR Table 2 (Choosy took the
    Facebook size distribution) and placement constraints after Sharma et al.'s model of
    Google's constraints: 21 boolean machine attributes ``a0`` ... ``a20``, 4 machine
    classes, a frequency for each class meeting each attribute (overall from 100% for ``a0``
    down to 7.5%), and jobs requiring each attribute with its own probability, 1.8
    attributes per job on average. The paper's resulting statistics, which the tests check:
    the average job can use about 38% of the machines, 40% of jobs under 20% and 30% under
    10%. A job's constraint is the conjunction of its attributes (``"a3 and a17"``).
    Machines that lack the attributes get them (and ``machine_class``) from the seed; a
    scenario that sets ``a0`` ... ``a20`` on every machine keeps its own. A job whose
    attributes no machine has is redrawn, so every job can run.

Parameters (all optional; every number >= 0 as the loader already enforces; times and
demands within the loader's bounds, ``MAX_SECONDS`` and ``MIN_AMOUNT`` to ``MAX_AMOUNT``):

- ``jobs``: how many jobs (defaults: the papers' experiments: 50 for ``facebook-2009``
  (FAIR's benchmark BM), 100 for ``facebook-2010`` (H-DRF section 5.3.1), 30 for ``zipf``
  (FAIR section 5.3), 300 for ``google-constraints`` (Choosy's one hour));
- ``arrival``: mean seconds between Poisson arrivals, > 0 (default 30, FAIR section 6.1;
  12 for ``google-constraints``: 300 jobs an hour);
- ``duration``: seconds per task, or ``{pareto: {alpha, min}}`` or
  ``{exponential: {mean}}`` (default ``{pareto: {alpha: 1.9, min: 10}}``: Choosy section 6
  measured Pareto task durations with alpha > 1.9 at Facebook and Bing); the simulator
  draws the per-task durations from its seed;
- ``demand``: per-task demand ``{cpu: 1, mem: 2}``, or a list of such mappings, one picked
  uniformly per job (H-DRF's mix: ``[{cpu: 1, mem: 1}, {cpu: 1, mem: 1.5}]``); default one
  unit of the cluster's first resource (a slot);
- ``users``: how many users share the jobs (``user0`` ...), each job's picked uniformly;
  default: every job is its own user;
- ``queues``: a list of declared queue paths, each job's picked uniformly;
- ``replicas``: machines holding each map's input block (MapReduce generators; default 3,
  at most the cluster's machines; 0 for no input data);
- ``reduce``: ``{copy: S, compute: S, demand: {...}, slowstart: F}`` (``facebook-2009``,
  ``zipf``): seconds per reduce task (default copy 10, compute 20), a reducer's own demand
  (Hadoop's reduce slots, FAIR section 5.3; default the map tasks'), and the fraction of a
  job's maps that must finish before its reducers launch (FAIR section 5.1's slow-start;
  default the run's ``--reduce-slowstart``); or ``false`` for map-only jobs;
- ``replica_placement``: ``rack-aware`` (HDFS's default, the default) or ``uniform``: where
  the simulator puts the replicas of the input blocks (:mod:`fairshare.sim.placement`);
- ``hot_files``: ``{fraction: F, files: K}`` (MapReduce generators): a fraction F of the jobs
  read one of K popular files (``hot0`` ...; default K 3), picked uniformly (from a child
  generator: the jobs are the same with and without hot files), whose blocks they
  share (map task ``i`` of every job reading it reads block ``i``), so their maps compete
  for the same machines' locality (FAIR section 5.1);
- ``closed_loop``: ``{think: S}`` (needs ``users``): each user submits its next job S seconds
  after its previous one ends (FAIR section 6.3's IO-rate biasing runs users that keep
  submitting); the drawn arrival times give only each user's first job;
- ``s``: the Zipf exponent (``zipf`` only, > 0, default 1).

Determinism: all randomness comes from the ``numpy.random.Generator`` passed in; the jobs are
drawn lazily as ``Workload.jobs`` is iterated, so the same seed gives the same jobs provided
nothing else draws from that generator in between (give the generator its own child
generator, e.g. ``rng.spawn(1)[0]``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NoReturn

import numpy as np

from fairshare.cluster import AttributeValue, BoolArray, Cluster, FloatArray, Machine
from fairshare.cluster.constraints import Constraint, parse_constraint
from fairshare.workload.limits import MAX_REPLICA_COPIES, MAX_TASKS
from fairshare.workload.loader import GENERATORS, ScenarioError
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
    Job,
    ParetoDuration,
    ReducePhase,
    ReplicaPlacement,
    ScenarioEvent,
    WorkloadSpec,
)

__all__ = [
    "ATTRIBUTES",
    "ATTRIBUTE_FREQUENCY",
    "CLASS_SHARES",
    "DEFAULT_JOBS",
    "FACEBOOK_2009_BINS",
    "FACEBOOK_2010_BINS",
    "REQUIRE_PROBABILITY",
    "Workload",
    "generate",
]


@dataclass(frozen=True)
class Workload:
    """Jobs to replay and the cluster to replay them on.

    Parameters
    ----------
    jobs : Iterator of Job
        Yields each job once, lazily, in submit order.
    cluster : Cluster
        The scenario's cluster, or the one the source needs instead (``google-constraints``
        adds machine attributes; an ``alibaba-gpu`` trace brings its node list).
    """

    jobs: Iterator[Job]
    cluster: Cluster


@dataclass(frozen=True)
class SizeBin:
    """A bin of job sizes: jobs with ``low`` to ``high`` tasks, a ``fraction`` of all jobs.

    Parameters
    ----------
    low : int
        The fewest tasks (inclusive).
    high : int
        The most tasks (inclusive).
    fraction : float
        The fraction of jobs in the bin.
    """

    low: int
    high: int
    fraction: float


FACEBOOK_2009_BINS = (
    SizeBin(1, 25, 0.58),
    SizeBin(26, 50, 0.096),
    SizeBin(51, 100, 0.086),
    SizeBin(101, 200, 0.084),
    SizeBin(201, 400, 0.056),
    SizeBin(401, 800, 0.043),
    SizeBin(801, 1600, 0.025),
    SizeBin(1601, 3200, 0.013),
    SizeBin(3201, 6400, 0.017),
)
"""FAIR Table 2: maps per job at Facebook (2009), the "% at Facebook" column."""

FACEBOOK_2010_BINS = (
    SizeBin(1, 19, 0.73),
    SizeBin(20, 149, 0.10),
    SizeBin(150, 499, 0.07),
    SizeBin(500, 3000, 0.09),
)
"""H-DRF Table 1: tasks per job in the 2010 Facebook trace (renormalised when drawn)."""

ATTRIBUTES = tuple(f"a{k}" for k in range(21))
"""The 21 machine attributes of the Sharma et al. constraint model (Choosy section 7.1)."""

CLASS_SHARES = (0.4, 0.3, 0.2, 0.1)
"""Fractions of machines in each of the 4 machine classes (TSF section VI: 4 classes)."""

_CLASS_RICHNESS = (0.8, 1.0, 1.2, 1.4)
"""How much more often than average each class meets an attribute: newer, better-equipped
classes meet the rarer constraints more often, so attributes are correlated as in a real
fleet."""

ATTRIBUTE_FREQUENCY = (
    1.0, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.55, 0.5, 0.45, 0.4,
    0.35, 0.3, 0.27, 0.24, 0.2, 0.16, 0.13, 0.11, 0.09, 0.075,
)  # fmt: skip
"""Overall fraction of machines meeting each attribute: "from 100% for one constraint to
7-8%" (Choosy section 7.1)."""

REQUIRE_PROBABILITY = (0.1,) + (1.34 / 14,) * 14 + (0.06,) * 6
"""Probability that a job requires each attribute: 1.8 on average (Choosy section 7.1).
Calibrated so that the average job can use about 38% of the machines, 40% of jobs under 20%
and 30% under 10%, the statistics Choosy reports."""

_CLASS_ATTRIBUTE = np.array(ATTRIBUTE_FREQUENCY)[np.newaxis, :] ** (
    1.0 / np.array(_CLASS_RICHNESS)[:, np.newaxis]
)
"""Per class and attribute, the probability that a machine of the class meets it: the
overall frequency raised to 1 / richness, so an attribute every machine has stays universal
and richer classes meet the rare ones more often."""

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
    "facebook-2009": (*_COMMON, *_INPUT, "reduce"),
    "facebook-2010": (*_COMMON, *_INPUT),
    "zipf": (*_COMMON, *_INPUT, "reduce", "s"),
    "google-constraints": _COMMON,
}
_DEFAULT_HOT_FILES = 3
_DEFAULT_DURATION = ParetoDuration(alpha=1.9, minimum=10.0)
_DEFAULT_REPLICAS = 3
_DEFAULT_REDUCE = (10.0, 20.0)
_ZIPF_MAX_MAPS = 400
_MAX_REDUCE_FRACTION = 0.25  # facebook-2009: reducers are 5% to 25% of the maps
_REDRAWS = 1000


# --------------------------------------------------------------------------------------------
# Parameters


class _Params:
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


# --------------------------------------------------------------------------------------------
# Job sizes


def _cumulative(weights: FloatArray) -> FloatArray:
    """The distribution function of ``weights`` (normalised), for inverse-transform draws:
    ``searchsorted(cdf, u, 'right')`` with ``u`` uniform on [0, 1) picks index ``i`` with
    probability ``weights[i] / sum`` (an order of magnitude faster than ``rng.choice``)."""
    cdf = np.cumsum(weights) / weights.sum()
    cdf[-1] = 1.0  # no rounding gap above the last bin
    return np.asarray(cdf, dtype=np.float64)


def _pick(cdf: FloatArray, rng: np.random.Generator) -> int:
    """An index drawn with the probabilities of ``cdf`` (see :func:`_cumulative`)."""
    return int(np.searchsorted(cdf, rng.random(), side="right"))


def _draw_bin(bins: Sequence[SizeBin], cdf: FloatArray, rng: np.random.Generator) -> int:
    """A job size: a bin by its fraction, then uniform within the bin."""
    chosen = bins[_pick(cdf, rng)]
    return int(rng.integers(chosen.low, chosen.high, endpoint=True))


# --------------------------------------------------------------------------------------------
# The constraint model


def _has_attributes(machine: Machine) -> bool:
    """Whether ``machine`` carries all 21 attributes of the constraint model."""
    return all(name in machine.attributes for name in ATTRIBUTES)


def constraint_cluster(cluster: Cluster, rng: np.random.Generator) -> Cluster:
    """``cluster`` with every machine carrying the 21 attributes of the constraint model.

    The model is Sharma et al.'s, as Choosy section 7.1 uses it. The cluster is kept as it
    is when every machine has them already; otherwise each machine gets a class
    (``machine_class``: ``c0`` ... ``c3``, by :data:`CLASS_SHARES`) and each attribute with
    its class's frequency. Attributes a machine already has are kept.

    Parameters
    ----------
    cluster : Cluster
        The scenario's cluster.
    rng : numpy.random.Generator
        The source of the draws.

    Returns
    -------
    Cluster
        The same machines, names, capacities and racks, with the attributes.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.workload.generators import ATTRIBUTES, constraint_cluster
    >>> plain = Cluster.build(["slots"], [Machine("m", np.array([4.0]))])
    >>> attributes = constraint_cluster(plain, np.random.default_rng(0)).machines[0].attributes
    >>> all(name in attributes for name in ATTRIBUTES), attributes["a0"]
    (True, True)
    """
    if all(_has_attributes(m) for m in cluster.machines):
        return cluster
    count = len(cluster.machines)
    classes = rng.choice(len(CLASS_SHARES), size=count, p=np.array(CLASS_SHARES))
    has = rng.random((count, len(ATTRIBUTES))) < _CLASS_ATTRIBUTE[classes]
    machines = []
    for i, machine in enumerate(cluster.machines):
        attributes: dict[str, AttributeValue] = {"machine_class": f"c{classes[i]}"}
        attributes.update({name: bool(has[i, k]) for k, name in enumerate(ATTRIBUTES)})
        attributes.update(machine.attributes)
        machines.append(Machine(machine.name, machine.capacity, machine.rack, attributes))
    return Cluster.build(cluster.resources, machines)


def _attribute_matrix(cluster: Cluster) -> BoolArray:
    """Machines x attributes: True where the machine meets the attribute (is truthy, the
    meaning of a bare attribute in a constraint)."""
    return np.array(
        [[bool(m.attributes.get(name)) for name in ATTRIBUTES] for m in cluster.machines],
        dtype=np.bool_,
    ).reshape(len(cluster.machines), len(ATTRIBUTES))


def _draw_constraint(
    has: BoolArray, rng: np.random.Generator, cache: dict[tuple[int, ...], Constraint]
) -> Constraint | None:
    """A job's constraint: attributes drawn with :data:`REQUIRE_PROBABILITY`, redrawn until
    some machine meets them all; None for a job that requires none.
    """
    probabilities = np.array(REQUIRE_PROBABILITY)
    for _ in range(_REDRAWS):
        required = np.flatnonzero(rng.random(len(ATTRIBUTES)) < probabilities)
        if required.size == 0:
            return None
        if has[:, required].all(axis=1).any():
            key = tuple(int(k) for k in required)
            if key not in cache:
                cache[key] = parse_constraint(" and ".join(ATTRIBUTES[k] for k in key))
            return cache[key]
    return None  # no machine meets any drawn set: the cluster is tiny; leave the job free


# --------------------------------------------------------------------------------------------
# Entry point


def generate(
    spec: WorkloadSpec,
    cluster: Cluster,
    rng: np.random.Generator,
    *,
    queues: Collection[str] = (),
    source: str = "workload",
    events: Sequence[ScenarioEvent] = (),
) -> Workload:
    """The jobs of the built-in generator ``spec`` on ``cluster``, drawn from ``rng``.

    Parameters are checked now; the jobs are drawn as the returned workload's ``jobs`` is
    iterated, in submit order, and the tasks and block locations they add up to are counted
    against :mod:`fairshare.workload.limits` as they are drawn.

    Parameters
    ----------
    spec : WorkloadSpec
        The generator and its parameters (module docstring).
    cluster : Cluster
        The machines the jobs run on.
    rng : numpy.random.Generator
        The only source of randomness: the same seed gives the same jobs.
    queues : Collection of str
        The scenario's declared queue paths (for the ``queues`` parameter).
    source : str
        Names the scenario file in errors.
    events : sequence of ScenarioEvent
        The scenario's events: the jobs and users they cancel must be generated ones.

    Returns
    -------
    Workload
        The lazily drawn jobs, and the cluster (``google-constraints`` adds the attributes).

    Raises
    ------
    ScenarioError
        An unknown generator or a bad parameter, at ``workload.<name>``; while iterating, jobs
        whose tasks or block locations pass the limits, at ``workload.jobs``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.workload import parse_scenario
    >>> from fairshare.workload.generators import generate
    >>> scenario = parse_scenario(
    ...     {
    ...         "machines": [{"name": "m", "count": 10, "capacity": {"slots": 4}}],
    ...         "workload": {"generator": "facebook-2009", "jobs": 3},
    ...     },
    ...     source="fb",
    ... )
    >>> jobs = list(generate(scenario.workload, scenario.cluster, np.random.default_rng(1)).jobs)
    >>> [job.name for job in jobs], [job.input_replicas for job in jobs]
    (['job0', 'job1', 'job2'], [3, 3, 3])
    >>> again = generate(scenario.workload, scenario.cluster, np.random.default_rng(1)).jobs
    >>> [job.tasks for job in jobs] == [job.tasks for job in again]
    True
    """
    if spec.generator not in GENERATORS:
        raise ScenarioError(
            source,
            "workload.generator",
            f"unknown generator {spec.generator!r}; allowed: {', '.join(GENERATORS)}",
        )
    params = _Params(spec, cluster, source)
    count = params.count("jobs")
    assert count is not None  # every generator has a default
    arrival = params.seconds("arrival", params.values.get("arrival", 30.0))
    duration = params.duration()
    demands = params.demands()
    users = params.users()
    paths = params.queues(queues)
    kind = spec.generator
    replicas = params.replicas() if kind != "google-constraints" else None
    placement = params.placement()
    hot = params.hot_files() if replicas is not None else None
    # Files are picked from a generator of their own: with and without hot files the jobs
    # are the same, only what they read differs.
    files_rng = rng.spawn(1)[0] if hot is not None else rng
    think = params.closed_loop(users)
    reduce = params.reduce() if kind in ("facebook-2009", "zipf") else None
    _check_events(events, count, users, source)
    exponent = params.number("s", 1.0) if kind == "zipf" else 1.0
    if kind == "google-constraints":
        cluster = constraint_cluster(cluster, rng)
    has = _attribute_matrix(cluster) if kind == "google-constraints" else None

    def jobs() -> Iterator[Job]:
        zipf = None
        if kind == "zipf":  # P(k maps) proportional to k^-s, k = 1 .. 400
            zipf = _cumulative(np.arange(1, _ZIPF_MAX_MAPS + 1, dtype=np.float64) ** -exponent)
        bins = FACEBOOK_2010_BINS if kind == "facebook-2010" else FACEBOOK_2009_BINS
        bin_cdf = _cumulative(np.array([b.fraction for b in bins], dtype=np.float64))
        cache: dict[tuple[int, ...], Constraint] = {}
        width = len(str(count - 1))
        submit = 0.0
        total_tasks = 0
        block_copies = 0
        for i in range(count):
            submit += float(rng.exponential(arrival))
            tasks = _pick(zipf, rng) + 1 if zipf is not None else _draw_bin(bins, bin_cdf, rng)
            phase = None
            if reduce is not None:
                if zipf is not None:
                    reducers = int(rng.integers(1, max(1, tasks // 5), endpoint=True))
                else:
                    reducers = max(1, round(tasks * float(rng.uniform(0.05, _MAX_REDUCE_FRACTION))))
                phase = replace(reduce, tasks=reducers)
            total_tasks += tasks + (phase.tasks if phase is not None else 0)
            block_copies += tasks * (replicas or 0)
            if total_tasks > MAX_TASKS or block_copies > MAX_REPLICA_COPIES:
                what = "tasks" if total_tasks > MAX_TASKS else "input block locations"
                most = MAX_TASKS if total_tasks > MAX_TASKS else MAX_REPLICA_COPIES
                raise ScenarioError(
                    source,
                    "workload.jobs",
                    f"the first {i + 1:,} of the {count:,} jobs drawn already have more than "
                    f"{most:,} {what} (the limit); ask for fewer jobs",
                )
            constraint = _draw_constraint(has, rng, cache) if has is not None else None
            name = f"job{i:0{width}d}"
            yield Job(
                name=name,
                submit=submit,
                user=name if users is None else f"user{int(rng.integers(users))}",
                demand=demands[int(rng.integers(len(demands)))] if len(demands) > 1 else demands[0],
                tasks=tasks,
                duration=duration,
                queue=paths[int(rng.integers(len(paths)))] if len(paths) > 1 else paths[0],
                constraint=constraint,
                input_replicas=replicas,
                reduce=phase,
                input_file=(
                    f"hot{int(files_rng.integers(hot[1]))}"
                    if hot is not None and files_rng.random() < hot[0]
                    else None
                ),
                replica_placement=placement,
            )

    if think is not None:
        return Workload(_closed_loop(jobs(), think), cluster)
    return Workload(jobs(), cluster)


def _closed_loop(jobs: Iterator[Job], think: float) -> Iterator[Job]:
    """The jobs as closed-loop submitters run them: each user's first job at its drawn time,
    each later one ``think`` seconds after the user's previous job ends. A user's chain
    follows its first job in the stream (the simulator keeps each until its turn)."""
    drawn = list(jobs)
    chains: dict[str, list[Job]] = {}
    for job in drawn:
        chain = chains.setdefault(job.user, [])
        if chain:
            # A follower's submit is decided by the run; its head's keeps the stream sorted.
            job = replace(job, after=chain[-1].name, think=think, submit=chain[0].submit)  # noqa: PLW2901
        chain.append(job)
    for job in drawn:
        chain = chains.get(job.user, [])
        if chain and chain[0].name == job.name:
            yield from chain


def _check_events(
    events: Sequence[ScenarioEvent], count: int, users: int | None, source: str
) -> None:
    """The jobs and users the scenario's events cancel are among the generated ones."""
    width = len(str(count - 1))
    for i, event in enumerate(events):
        if event.kind not in ("cancel_job", "cancel_user"):
            continue
        name = event.target
        assert isinstance(name, str)
        jobs = name.startswith("job") and name[3:].isdigit() and len(name) == 3 + width
        if event.kind == "cancel_job" or users is None:
            known = jobs and int(name[3:]) < count
            what = f"job{0:0{width}d} to job{count - 1:0{width}d}"
        else:
            known = name.startswith("user") and name[4:].isdigit() and int(name[4:]) < users
            known = known and name == f"user{int(name[4:])}"
            what = f"user0 to user{users - 1}"
        if not known:
            raise ScenarioError(
                source,
                f"events[{i}].{event.kind}",
                f"unknown {event.kind[7:]} {name!r}; the generator's are {what}",
            )
