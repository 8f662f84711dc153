"""The validated scenario: users, queues and jobs over a cluster (SPEC section 1).

These are plain, trusted domain objects. ``fairshare.workload.loader`` builds them from a
YAML or JSON file after validating every field; nothing above this layer re-checks input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from fairshare.cluster import BoolArray, Cluster, FloatArray
from fairshare.cluster.constraints import Constraint

ROOT = ""
"""The path of the root queue. Users without ``queue`` hang directly below it."""

MAX_SECONDS = 1e15
"""The latest submit time and the longest given duration (seconds, about 31.7 million
years) a scenario or a trace may hold. Far beyond any real workload, and far inside the
float range: submit + duration, sums and means of times stay finite (never ``inf`` in a
report), and 1e15 s still resolves well under a second (float spacing 0.125 s)."""

MIN_SECONDS = 1e-6
"""The shortest duration > 0 (a microsecond): a slowdown, a response time over the job's
time alone, stays finite (1e-300 s made it overflow)."""

MAX_TASK_BOUND = 1e15
"""The largest ``min_share``, ``max_share`` or ``max_tasks`` (tasks): times an amount, still
far inside the float range."""

MIN_AMOUNT = 1e-9
MAX_AMOUNT = 1e15
"""A capacity or demand is 0 or from ``MIN_AMOUNT`` to ``MAX_AMOUNT`` units: a ratio of two
amounts (tasks that fit, a share) stays within 1e24 and its inverse, so no division over-
or underflows (values like 1e300 and 1e-300 did, and printed numpy warnings)."""

MIN_WEIGHT = 1e-9
MAX_WEIGHT = 1e9
"""Weights of users, jobs and queues lie in this range, for the same reason."""


@dataclass(frozen=True)
class Queue:
    """An internal node of the scheduling hierarchy (H-DRF section 2.1, FAIR pools).

    ``path`` uses '/' between levels (``ads/prod``); ``min_share`` and ``max_share`` are in tasks.
    """

    path: str
    weight: float = 1.0
    min_share: float = 0.0
    max_share: float = math.inf

    @property
    def parent(self) -> str:
        return self.path.rpartition("/")[0]


@dataclass(frozen=True)
class User:
    """An entity that receives an allocation: a user, framework, pool or job.

    ``demand`` is the per-task demand vector in the cluster's resource order. ``cap`` is the most
    tasks the user may hold: ``min(max_tasks, max_share)`` (FAIR's demand d_i and cap).
    """

    name: str
    demand: FloatArray
    weight: float = 1.0
    queue: str = ROOT
    max_tasks: float = math.inf
    min_share: float = 0.0
    max_share: float = math.inf
    constraint: Constraint | None = None
    machines: frozenset[str] | None = None

    @property
    def cap(self) -> float:
        return min(self.max_tasks, self.max_share)

    @property
    def is_constrained(self) -> bool:
        return self.constraint is not None or self.machines is not None


@dataclass(frozen=True)
class FixedDuration:
    seconds: float


@dataclass(frozen=True)
class PerTaskDurations:
    seconds: tuple[float, ...]


@dataclass(frozen=True)
class ParetoDuration:
    """Pareto task durations with shape ``alpha`` and scale (minimum) ``minimum`` seconds."""

    alpha: float
    minimum: float


@dataclass(frozen=True)
class ExponentialDuration:
    mean: float


Duration = FixedDuration | PerTaskDurations | ParetoDuration | ExponentialDuration


@dataclass(frozen=True)
class ReducePhase:
    """The reduce phase of a MapReduce job: ``tasks`` reducers with ``copy`` and ``compute``
    seconds each (FAIR section 5, copy-compute splitting).

    ``demand`` is a reducer's demand vector when it differs from the map tasks' (an extension
    of SPEC section 1): Hadoop's separate map and reduce slots are two resources, maps asking
    for one and reduces for the other, which is what makes FAIR section 5.3's pipelining of
    IO-bound maps with CPU-bound reduces possible. None means the job's ``demand``.
    """

    tasks: int
    copy: float
    compute: float
    demand: FloatArray | None = None


@dataclass(frozen=True)
class Job:
    """A job to replay in simulation (SPEC section 1, ``jobs``), or a live job
    (``fairshare.backends``), whose tasks run as long as they run: ``duration`` is None
    there, and a simulation rejects it."""

    name: str
    submit: float
    user: str
    demand: FloatArray
    tasks: int
    duration: Duration | None = None
    queue: str = ROOT
    weight: float = 1.0
    constraint: Constraint | None = None
    machines: frozenset[str] | None = None
    input_replicas: int | None = None
    reduce: ReducePhase | None = None


@dataclass(frozen=True)
class WorkloadSpec:
    """A built-in workload generator and its parameters (SPEC section 1, ``workload``)."""

    generator: str
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    """A cluster with the users to allocate and/or the jobs to replay."""

    source: str
    cluster: Cluster
    queues: tuple[Queue, ...] = ()
    users: tuple[User, ...] = ()
    jobs: tuple[Job, ...] = ()
    workload: WorkloadSpec | None = None

    @property
    def demands(self) -> FloatArray:
        """The users x resources matrix of per-task demands."""
        m = len(self.cluster.resources)
        return np.array([u.demand for u in self.users], dtype=np.float64).reshape(-1, m)

    @property
    def weights(self) -> FloatArray:
        return np.array([u.weight for u in self.users], dtype=np.float64)

    @property
    def caps(self) -> FloatArray:
        return np.array([u.cap for u in self.users], dtype=np.float64)

    @property
    def min_shares(self) -> FloatArray:
        return np.array([u.min_share for u in self.users], dtype=np.float64)

    def eligibility(self) -> BoolArray:
        """The users x machines matrix: True where the user's constraint and whitelist allow
        the machine (Choosy section 3's constraint graph). For large clusters prefer
        ``fairshare.workload.eligibility.machine_types``, which evaluates per machine type."""
        from fairshare.workload.eligibility import machine_types  # noqa: PLC0415

        types = machine_types(self)
        return np.asarray(types.eligible[:, types.machine_type], dtype=np.bool_)
