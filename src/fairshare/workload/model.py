"""The validated scenario: users, queues and jobs over a cluster (SPEC section 1).

These are plain, trusted domain objects. :mod:`fairshare.workload.loader` builds them from a
YAML or JSON file after validating every field; nothing above this layer re-checks input.
The numeric bounds below are the loader's: they keep every sum, ratio and product the
solvers and the simulator compute finite.

Examples
--------
>>> from fairshare.workload import parse_scenario
>>> scenario = parse_scenario(
...     {
...         "machines": [{"name": "m", "capacity": {"cpu": 9, "mem": 18}}],
...         "users": [
...             {"name": "A", "demand": {"cpu": 1, "mem": 4}},
...             {"name": "B", "demand": {"cpu": 3, "mem": 1}, "weight": 2},
...         ],
...     },
...     source="drf-section-4.1",
... )
>>> scenario.demands.tolist(), scenario.weights.tolist()
([[1.0, 4.0], [3.0, 1.0]], [1.0, 2.0])
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Literal

import numpy as np

from fairshare.cluster import BoolArray, Cluster, FloatArray, Machine
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
"""The smallest capacity or demand above 0, in the resource's own units."""
MAX_AMOUNT = 1e15
"""The largest capacity or demand: an amount is 0 or from ``MIN_AMOUNT`` to ``MAX_AMOUNT``, so
a ratio of two amounts (tasks that fit, a share) stays within 1e24 and its inverse, and no
division over- or underflows (values like 1e300 and 1e-300 did, and printed numpy
warnings).
"""

MAX_PRIORITY = 1_000_000_000
"""The largest priority magnitude: a job's ``priority`` is a whole number from
``-MAX_PRIORITY`` to ``MAX_PRIORITY`` (Kubernetes' PriorityClass values lie in this range)."""

MIN_WEIGHT = 1e-9
"""The smallest weight of a user, job or queue."""
MAX_WEIGHT = 1e9
"""The largest weight of a user, job or queue (the same reasoning as ``MAX_AMOUNT``)."""


RECLAIM_POLICIES = ("never", "lower_priority", "any")
"""Kueue's ``reclaimWithinCohort`` values, in the scenario's spelling."""
WITHIN_QUEUE_POLICIES = ("never", "lower_priority", "lower_or_newer_equal_priority")
"""Kueue's ``withinClusterQueue`` values, in the scenario's spelling."""
BORROW_POLICIES = ("never", "lower_priority")
"""Kueue's ``borrowWithinCohort.policy`` values, in the scenario's spelling."""


@dataclass(frozen=True)
class QueuePreemption:
    """A queue's preemption settings (SPEC section 8.3; Kueue's ClusterQueue
    ``spec.preemption``), read by the ``kueue`` policies only.

    Parameters
    ----------
    reclaim_within_cohort : {"never", "lower_priority", "any"}
        Whether a workload of the queue may preempt workloads of other queues of its cohort
        that borrow (Kueue's ``reclaimWithinCohort``).
    within_cluster_queue : {"never", "lower_priority", "lower_or_newer_equal_priority"}
        Whether it may preempt workloads of its own queue (``withinClusterQueue``).
    borrow_within_cohort : {"never", "lower_priority"}
        Whether it may preempt while borrowing (``borrowWithinCohort.policy``; classical
        preemption only).
    max_priority_threshold : int, optional
        The highest priority such a preemption may take (``maxPriorityThreshold``).

    Examples
    --------
    >>> QueuePreemption().reclaim_within_cohort
    'never'
    """

    reclaim_within_cohort: str = "never"
    within_cluster_queue: str = "never"
    borrow_within_cohort: str = "never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class Queue:
    """An internal node of the scheduling hierarchy (H-DRF section 2.1; a FAIR pool).

    Parameters
    ----------
    path : str
        The queue's path, ``/`` between levels (``ads/prod``); every level is declared.
    weight : float
        Its weight among its siblings (H-DRF section 2.1).
    min_share : float
        Tasks guaranteed to the queue (FAIR's minimum share).
    max_share : float
        The most tasks the queue's users may hold together; ``inf`` for no cap.
    quota : tuple of float, optional
        The nominal quota in resource units, in the cluster's resource order (Kueue's
        ``nominalQuota``, YuniKorn's ``guaranteed``); ``inf`` for a resource the quota does
        not govern; None for a queue without quota (see :mod:`fairshare.policies.quota`).
    borrowing_limit : tuple of float, optional
        Per resource, how much beyond its quota the queue may use by borrowing idle quota of
        its siblings (``inf``: any); None with no quota.
    lending_limit : tuple of float, optional
        Per resource, how much of its idle quota the queue lends to its siblings (``inf``:
        all of it); None with no quota.
    preemption : QueuePreemption
        Kueue's preemption settings (read by the ``kueue`` policies only; the default
        preempts nothing).

    Examples
    --------
    >>> from fairshare.workload import Queue
    >>> Queue("ads/prod", weight=2.0).parent
    'ads'
    """

    path: str
    weight: float = 1.0
    min_share: float = 0.0
    max_share: float = math.inf
    quota: tuple[float, ...] | None = None
    borrowing_limit: tuple[float, ...] | None = None
    lending_limit: tuple[float, ...] | None = None
    preemption: QueuePreemption = QueuePreemption()

    @property
    def parent(self) -> str:
        """The parent queue's path (``ROOT``, the empty string, for a top-level queue)."""
        return self.path.rpartition("/")[0]


@dataclass(frozen=True)
class User:
    """An entity that receives an allocation: a user, framework, pool or job.

    Parameters
    ----------
    name : str
        The user's unique name.
    demand : FloatArray
        The per-task demand vector, in the cluster's resource order.
    weight : float
        The user's weight (weighted DRF, DRF section 4.3).
    queue : str
        The path of the queue the user belongs to; ``ROOT`` for none.
    max_tasks : float
        The most tasks the user has work for (FAIR's demand d_i); ``inf`` for unbounded.
    min_share : float
        Tasks guaranteed to the user (FAIR's minimum share).
    max_share : float
        The most tasks the user may hold; ``inf`` for no cap.
    constraint : Constraint, optional
        The machines the user may run on (Choosy section 3, SPEC's constraint language).
    machines : frozenset of str, optional
        A whitelist of machine names the user may run on.
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
        """The most tasks the user may hold: ``min(max_tasks, max_share)`` (FAIR's cap)."""
        return min(self.max_tasks, self.max_share)

    @property
    def is_constrained(self) -> bool:
        """Whether a constraint or a whitelist limits the user's machines."""
        return self.constraint is not None or self.machines is not None


@dataclass(frozen=True)
class FixedDuration:
    """Every task of the job runs for the same time.

    Parameters
    ----------
    seconds : float
        Seconds per task.
    """

    seconds: float


@dataclass(frozen=True)
class PerTaskDurations:
    """Each task of the job has its own duration, in task order.

    Parameters
    ----------
    seconds : tuple of float
        Seconds of each task; one per task.
    """

    seconds: tuple[float, ...]


@dataclass(frozen=True)
class ParetoDuration:
    """Pareto task durations, drawn by the simulator from its seed.

    Choosy section 6 measured Pareto task durations at Facebook and Bing.

    Parameters
    ----------
    alpha : float
        The shape.
    minimum : float
        The scale: the shortest duration, in seconds (``min`` in a scenario).
    """

    alpha: float
    minimum: float


@dataclass(frozen=True)
class ExponentialDuration:
    """Exponentially distributed task durations, drawn by the simulator from its seed.

    Parameters
    ----------
    mean : float
        The mean duration, in seconds.
    """

    mean: float


Duration = FixedDuration | PerTaskDurations | ParetoDuration | ExponentialDuration
"""How long a job's tasks run: one of the four duration classes above."""


@dataclass(frozen=True)
class ReducePhase:
    """The reduce phase of a MapReduce job (FAIR section 5, copy-compute splitting).

    ``demand`` is an extension of SPEC section 1: Hadoop's separate map and reduce slots are two
    resources, maps asking for one and reduces for the other, which is what makes FAIR section
    5.3's pipelining of IO-bound maps with CPU-bound reduces possible.

    Parameters
    ----------
    tasks : int
        Reduce tasks; 0 for none.
    copy : float
        Seconds each reducer spends copying map output (the network-bound part).
    compute : float
        Seconds each reducer computes after its copy.
    demand : FloatArray, optional
        A reducer's demand vector when it differs from the map tasks'; None means the job's
        ``demand``.
    slowstart : float, optional
        The fraction of the job's maps that must finish before its reducers launch (FAIR
        section 5.1's slow-start, Hadoop's ``mapred.reduce.slowstart.completed.maps``);
        None means the run's ``reduce_slowstart``.
    """

    tasks: int
    copy: float
    compute: float
    demand: FloatArray | None = None
    slowstart: float | None = None


ReplicaPlacement = Literal["rack-aware", "uniform"]
"""Where the simulator puts the replicas of a job's input blocks (:attr:`Job.replica_placement`)."""

REPLICA_PLACEMENTS: tuple[ReplicaPlacement, ...] = ("rack-aware", "uniform")
"""The values of :data:`ReplicaPlacement`, the default first."""


@dataclass(frozen=True)
class Job:
    """A job to replay in simulation (SPEC section 1, ``jobs``), or a live job.

    Parameters
    ----------
    name : str
        The job's unique name.
    submit : float
        Submit time, in seconds from the start of the run.
    user : str
        The user it runs for (the job's own name when the scenario gives none).
    demand : FloatArray
        A map task's demand vector, in the cluster's resource order.
    tasks : int
        Map tasks (the only tasks of a single-phase job).
    duration : Duration or None
        How long each map task runs; None for a live job (:mod:`fairshare.backends`),
        whose tasks run as long as they run (a simulation rejects it).
    queue : str
        The queue path; ``ROOT`` for none.
    weight : float
        The job's weight.
    constraint : Constraint, optional
        The machines its tasks may run on.
    machines : frozenset of str, optional
        A whitelist of machine names its tasks may run on.
    input_replicas : int, optional
        Machines holding each map task's input block (delay scheduling's locality, FAIR section
        4); None for no input data.
    reduce : ReducePhase, optional
        The reduce phase; None for a map-only job.
    priority : int
        Higher first among one user's jobs and between users and queues; lower priorities
        may be preempted for it (:mod:`fairshare.policies.preemption`). Default 0.
    input_file : str, optional
        The input file its maps read: jobs naming the same file read the same blocks (hot
        files), map task ``i`` block ``i`` of the file; None for a file of its own.
    replica_placement : {"rack-aware", "uniform"}
        How the simulator places the replicas of its input blocks: HDFS's default (one
        replica on a random machine, the next two on two machines of one other rack; FAIR
        section 5.1), or each replica on a machine drawn uniformly.
    after : str, optional
        Closed loop: the job is submitted ``think`` seconds after job ``after`` (of the same
        submitter) ends, finished or cancelled; its ``submit`` is decided by the run. None
        for an open-loop job submitted at ``submit``.
    think : float
        Seconds between the end of ``after`` and this job's submission.
    after_all : tuple of str
        A task DAG (Alibaba cluster-trace-v2018's ``R5_3_4``: task 5 after tasks 3 and 4):
        the job is submitted ``think`` seconds after every job named here has ended (each
        listed before it in the stream); its ``submit`` is decided by the run, as with
        ``after``. Empty for none.
    min_tasks : int, optional
        Gang scheduling (SPEC section 1, ``gang`` / ``min_tasks``): at least this many of
        the job's (map) tasks start together, all in one decision, or none does; the rest
        start as room allows. ``gang: true`` in a scenario is ``min_tasks = tasks``. None:
        no gang, every task starts on its own.
    estimate : float, optional
        Seconds a task is expected to run at most (the user's requested time; SWF field 9).
        EASY backfilling's reservations count on it; None: the duration as given (a fixed
        duration, the longest of a list, a distribution's mean).
    """

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
    priority: int = 0
    input_file: str | None = None
    replica_placement: ReplicaPlacement = "rack-aware"
    after: str | None = None
    think: float = 0.0
    min_tasks: int | None = None
    estimate: float | None = None
    after_all: tuple[str, ...] = ()

    @property
    def follows(self) -> bool:
        """Whether the run decides the job's submission: it waits for ``after`` or for
        every job of ``after_all`` to end."""
        return self.after is not None or bool(self.after_all)

    @property
    def gang(self) -> bool:
        """Whether the job is a gang: its first ``min_tasks`` tasks start together."""
        return self.min_tasks is not None

    @classmethod
    def of_task(
        cls,
        name: str,
        submit: float,
        user: str,
        demand: FloatArray,
        tasks: int,
        duration: Duration,
        after_all: tuple[str, ...] = (),
    ) -> Job:
        """``Job(name, submit, user, demand, tasks, duration, after_all=after_all)``, every
        other field its default, without the frozen ``__init__``'s call per field: a trace
        reader makes one per trace task (about 0.7 microseconds, not 2.9). The fields are
        the same objects, in the same order.

        Examples
        --------
        >>> job = Job.of_task("j/t", 2.0, "j", np.array([1.0]), 3, FixedDuration(5.0))
        >>> made = Job("j/t", 2.0, "j", job.demand, 3, job.duration)
        >>> job == made, list(vars(job)) == list(vars(made)), job.weight, job.after_all
        (True, True, 1.0, ())
        """
        job = object.__new__(cls)
        fields = job.__dict__
        fields.update(_JOB_TEMPLATE)
        fields["name"] = name
        fields["submit"] = submit
        fields["user"] = user
        fields["demand"] = demand
        fields["tasks"] = tasks
        fields["duration"] = duration
        fields["after_all"] = after_all
        return job

    def submitted_at(self, submit: float) -> Job:
        """The job with its ``submit`` time set: ``dataclasses.replace(self, submit=submit)``
        without the frozen ``__init__``'s call per field (a replay of a trace's DAG submits
        tens of thousands of jobs this way, as their parents end). Nothing else changes, and
        the fields are shared, as ``replace`` shares them.

        Parameters
        ----------
        submit : float
            The job's submit time.

        Returns
        -------
        Job

        Examples
        --------
        >>> job = Job("j", 0.0, "u", np.array([1.0]), 2, after="i")
        >>> later = job.submitted_at(5.0)
        >>> later.submit, later.demand is job.demand, later.after, job.submit
        (5.0, True, 'i', 0.0)
        """
        job = object.__new__(Job)
        fields = job.__dict__
        fields.update(self.__dict__)
        fields["submit"] = submit
        return job


_JOB_TEMPLATE: dict[str, object] = {
    f.name: None if f.default is MISSING else f.default for f in fields(Job)
}
"""Every field of a :class:`Job` in order, at its default (None where it has none): what
:meth:`Job.of_task` starts from."""


EventKind = Literal["cancel_job", "cancel_user", "machine_fails", "machine_joins"]
"""What a scenario event does (SPEC section 1 extension, ``events``)."""


@dataclass(frozen=True)
class ScenarioEvent:
    """Something that happens to a run at a time (the scenario's ``events``): a job or all
    of a user's jobs cancelled (Choosy section 7's sudden leave of a user), a machine failing
    or joining.

    Parameters
    ----------
    time : float
        When, in seconds from the start of the run.
    kind : EventKind
        ``cancel_job``, ``cancel_user``, ``machine_fails`` or ``machine_joins``.
    target : str or Machine
        The job, user or machine name; the joining :class:`Machine` for ``machine_joins``.
    """

    time: float
    kind: EventKind
    target: str | Machine


@dataclass(frozen=True)
class WorkloadSpec:
    """A built-in workload generator and its parameters (SPEC section 1, ``workload``).

    Parameters
    ----------
    generator : str
        One of :data:`fairshare.workload.schema.GENERATORS`.
    params : Mapping of str to object
        The generator's parameters as written (checked by
        :func:`fairshare.workload.generators.generate`).
    """

    generator: str
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    """A cluster with the users to allocate and/or the jobs to replay (SPEC section 1).

    Build one with :func:`fairshare.workload.load_scenario` or
    :func:`fairshare.workload.parse_scenario`, which validate the input.

    Parameters
    ----------
    source : str
        The input's name (a file path), used in error messages.
    cluster : Cluster
        The machines and resources.
    queues : tuple of Queue
        The declared queues, in declaration order.
    users : tuple of User
        The users, in scenario order (the tie-break order of every solver and policy).
    jobs : tuple of Job
        The jobs to replay, in scenario order.
    workload : WorkloadSpec, optional
        A built-in generator of jobs, when the scenario has one.
    events : tuple of ScenarioEvent
        Cancellations, machine failures and joins during a run, in time order.
    usage_half_life : float, optional
        Seconds after which past usage counts half, for every online policy (SPEC section
        8.3); None: the papers' instantaneous fairness.
    """

    source: str
    cluster: Cluster
    queues: tuple[Queue, ...] = ()
    users: tuple[User, ...] = ()
    jobs: tuple[Job, ...] = ()
    workload: WorkloadSpec | None = None
    events: tuple[ScenarioEvent, ...] = ()
    usage_half_life: float | None = None

    @property
    def demands(self) -> FloatArray:
        """The users x resources matrix of per-task demands."""
        m = len(self.cluster.resources)
        return np.array([u.demand for u in self.users], dtype=np.float64).reshape(-1, m)

    @property
    def weights(self) -> FloatArray:
        """The users' weights, in scenario order."""
        return np.array([u.weight for u in self.users], dtype=np.float64)

    @property
    def caps(self) -> FloatArray:
        """The users' caps (:attr:`User.cap`), in scenario order."""
        return np.array([u.cap for u in self.users], dtype=np.float64)

    @property
    def min_shares(self) -> FloatArray:
        """The users' minimum shares, in scenario order."""
        return np.array([u.min_share for u in self.users], dtype=np.float64)

    def eligibility(self) -> BoolArray:
        """The users x machines matrix of where each user may run.

        It is Choosy section 3's constraint graph.
        For large clusters prefer :func:`fairshare.workload.eligibility.machine_types`, which
        evaluates per machine type.

        Returns
        -------
        BoolArray
            True where the user's constraint and whitelist allow the machine.

        Examples
        --------
        >>> from fairshare.workload import parse_scenario
        >>> scenario = parse_scenario(
        ...     {
        ...         "machines": [
        ...             {"name": "m1", "capacity": {"slots": 1}, "attributes": {"gpu": True}},
        ...             {"name": "m2", "capacity": {"slots": 1}},
        ...         ],
        ...         "users": [
        ...             {"name": "a", "constraint": "gpu"},
        ...             {"name": "b", "machines": ["m2"]},
        ...         ],
        ...     },
        ...     source="two-machines",
        ... )
        >>> scenario.eligibility().tolist()
        [[True, False], [False, True]]
        """
        from fairshare.workload.eligibility import machine_types  # noqa: PLC0415

        types = machine_types(self)
        return np.asarray(types.eligible[:, types.machine_type], dtype=np.bool_)
