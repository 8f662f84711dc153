"""Stage 2 of :mod:`fairshare.workload.loader`: the checked records of
:mod:`fairshare.workload.schema` become the trusted
:class:`~fairshare.workload.model.Scenario`, with the checks that span fields: unique names
(after ``count`` expansion), known resources, queues and machines, constraint syntax,
duration lists against task counts, nested quotas, the scenario's events against its
machines, jobs and users, and the totals of :mod:`fairshare.workload.limits` (before
anything is expanded). The first problem raises a
:class:`~fairshare.workload.errors.ScenarioError` at its field path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NoReturn

import numpy as np

from fairshare.cluster import Cluster, FloatArray, Machine
from fairshare.cluster.constraints import Constraint, ConstraintSyntaxError, parse_constraint
from fairshare.workload.errors import ScenarioError, listing, shown_value
from fairshare.workload.limits import (
    MAX_MACHINES,
    MAX_REPLICA_COPIES,
    MAX_REPLICAS,
    MAX_TASKS,
)
from fairshare.workload.model import (
    ROOT,
    Duration,
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    PerTaskDurations,
    Queue,
    QueuePreemption,
    ReducePhase,
    Scenario,
    ScenarioEvent,
    User,
    WorkloadSpec,
)
from fairshare.workload.schema import (
    DistributionModel,
    JobModel,
    PreemptionModel,
    QueueModel,
    ScenarioModel,
    UserModel,
    WorkloadModel,
)

__all__ = ["MISSING_MACHINES", "MachinesFrom", "build_scenario"]

MachinesFrom = Callable[[], Cluster]
"""Gives the machines of a scenario that lists none (a trace's node list), or raises
:class:`ScenarioError` saying why it cannot.
"""

MISSING_MACHINES = "missing required field 'machines'"
"""The message for a scenario without ``machines`` (shared with the trace readers)."""


class _Builder:
    """Stage 2: builds the :class:`Scenario` from the validated models, checking what spans
    fields; the first problem raises a :class:`ScenarioError` at its field path.
    """

    def __init__(
        self, model: ScenarioModel, source: str, machines_from: MachinesFrom | None = None
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
        """Raise the :class:`ScenarioError` at ``where``."""
        raise ScenarioError(self.source, where, what)

    def build(self) -> Scenario:
        """The scenario: totals first, then the cluster, queues, users, jobs and generator."""
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
            workload = WorkloadSpec(self.model.workload.generator, self.model.workload.parameters())
        events = self._events(users, jobs)
        return Scenario(
            self.source,
            cluster,
            queues,
            users,
            jobs,
            workload,
            events,
            usage_half_life=self.model.usage_half_life,
        )

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

    def _check_generated(self, workload: WorkloadModel) -> None:
        """A generator's ``replicas`` (its ``jobs`` are a bounded count). The tasks and
        block locations its jobs add up to depend on its draws: the generator counts them
        as it draws and stops at the limits (``generators.generate``); ``simulate`` reads
        every job before the run starts, so that error also comes before any work."""
        replicas = workload.extra.get("replicas")
        if (
            isinstance(replicas, int | float)
            and not isinstance(replicas, bool)
            and replicas > MAX_REPLICAS
        ):
            self.fail(
                "workload.replicas",
                f"must be a whole number from 0 to {MAX_REPLICAS} (the limit), "
                f"got {shown_value(replicas)}",
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
        """The declared resources, or those the machines name, in first-seen order."""
        if self.model.resources is not None:
            return tuple(self.model.resources)
        seen: dict[str, None] = {}
        for machine in self.model.machines or ():
            seen.update(dict.fromkeys(machine.capacity))
        if not seen:
            self.fail("machines", "no machine names a resource in its capacity")
        return tuple(seen)

    def _vector(self, amounts: Mapping[str, float], where: str) -> FloatArray:
        """``amounts`` as a vector in resource order; an unknown resource is an error."""
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
        """The machines, ``count`` expanded; a repeated name is an error."""
        machines: list[Machine] = []
        # Machines of one capacity share its read-only vector: large clusters list
        # thousands of machines of a few kinds.
        vectors: dict[tuple[tuple[str, float], ...], FloatArray] = {}
        for i, entry in enumerate(self.model.machines or ()):
            where = f"machines[{i}]"
            key = tuple(entry.capacity.items())
            capacity = vectors.get(key)
            if capacity is None:
                capacity = vectors[key] = self._vector(entry.capacity, f"{where}.capacity")
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
        """The declared queues; a repeated path or an undeclared parent is an error."""
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
        queues = tuple(
            Queue(
                entry.path,
                entry.weight,
                entry.min_share,
                math.inf if entry.max_share is None else entry.max_share,
                *self._quota(i, entry),
                _preemption(entry.preemption),
            )
            for i, entry in enumerate(entries)
        )
        self._check_quotas(queues)
        return queues

    def _quota(
        self, i: int, entry: QueueModel
    ) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None, tuple[float, ...] | None]:
        """A queue's quota, borrowing and lending limits as vectors in resource order, ``inf``
        where the file names no amount (a resource the quota does not govern; no limit)."""
        if entry.quota is None:
            return None, None, None
        where = f"queues[{i}]"
        out: list[tuple[float, ...]] = []
        for key, given in (
            ("quota", entry.quota),
            ("borrowing_limit", entry.borrowing_limit),
            ("lending_limit", entry.lending_limit),
        ):
            amounts = given or {}
            vector = self._vector(amounts, f"{where}.{key}")
            for resource in amounts:
                if key != "quota" and resource not in entry.quota:
                    self.fail(
                        f"{where}.{key}.{resource}",
                        f"the queue's quota does not govern {resource!r}; limit only the "
                        f"resources its quota names ({', '.join(entry.quota) or 'none'})",
                    )
            out.append(
                tuple(
                    float(v) if r in amounts else math.inf
                    for r, v in zip(self.resources, vector.tolist(), strict=True)
                )
            )
        return out[0], out[1], out[2]

    def _check_quotas(self, queues: tuple[Queue, ...]) -> None:
        """Quotas nest: the quotas of the queues whose nearest ancestor with a quota is ``a``
        add up to at most ``a``'s in every resource ``a`` governs, and those without such an
        ancestor to at most the cluster's capacity (so that every quota can be given back)."""
        quota = {q.path: q.quota for q in queues if q.quota is not None}
        if not quota:
            return
        index = {q.path: i for i, q in enumerate(queues)}
        sums: dict[str, list[float]] = {}
        for q in queues:
            if q.quota is None:
                continue
            above = q.parent
            while above and above not in quota:
                above = above.rpartition("/")[0]
            total = sums.setdefault(above, [0.0] * len(self.resources))
            limit = quota[above] if above else tuple(float(t) for t in self.total)
            for r, amount in enumerate(q.quota):
                if math.isinf(amount) or math.isinf(limit[r]):
                    continue
                total[r] += amount
                if total[r] > limit[r] * (1 + 1e-9) + 1e-9:
                    whose = (
                        f"the quota of queue {above!r} ({limit[r]:g})"
                        if above
                        else f"the cluster's capacity ({limit[r]:g})"
                    )
                    self.fail(
                        f"queues[{index[q.path]}].quota.{self.resources[r]}",
                        f"the quotas of {self.resources[r]!r} below "
                        f"{'queue ' + repr(above) if above else 'the root'} add up to "
                        f"{total[r]:g} here, more than {whose}; nested quotas must fit in "
                        "their parent's",
                    )

    # users and jobs

    def _queue(self, queue: str | None, where: str) -> str:
        """A user's or job's queue path (``ROOT`` for none); an undeclared one is an error."""
        if queue is None:
            return ROOT
        if queue not in self.queue_paths:
            known = (
                f"declared queues: {listing(self.queue_paths)}"
                if self.queue_paths
                else "no queues are declared"
            )
            self.fail(f"{where}.queue", f"unknown queue {queue!r}; {known}")
        return queue

    def _demand(self, demand: dict[str, float] | None, where: str) -> FloatArray:
        """A demand vector; omitted only on a one-resource cluster (one unit)."""
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
        """The parsed constraint, each distinct text parsed once."""
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
        """A ``machines`` whitelist; an unknown machine name is an error."""
        if names is None:
            return None
        for k, name in enumerate(names):
            if name not in self.machine_names:
                self.fail(
                    f"{where}.machines[{k}]",
                    f"unknown machine {name!r}; machines: {listing(self.machine_names)}",
                )
        return frozenset(names)

    def _user(self, i: int, entry: UserModel, seen: dict[str, int]) -> User:
        """User ``i`` of the scenario."""
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

    def _job(self, i: int, entry: JobModel, seen: dict[str, int]) -> Job:
        """Job ``i`` of the scenario."""
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
                entry.reduce.slowstart,
            )
        if entry.after is not None and (entry.after not in seen or entry.after == entry.name):
            self.fail(
                f"{where}.after",
                f"unknown job {entry.after!r}; 'after' names a job listed before this one "
                "(the job whose end submits it)",
            )
        return Job(
            name=entry.name,
            submit=0.0 if entry.submit is None else entry.submit,
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
            priority=entry.priority,
            input_file=entry.input.file if entry.input is not None else None,
            replica_placement=(
                "uniform"
                if entry.input is not None and entry.input.placement == "uniform"
                else "rack-aware"
            ),
            after=entry.after,
            think=entry.think or 0.0,
            min_tasks=entry.gang_size,
        )

    # events

    def _events(self, users: tuple[User, ...], jobs: tuple[Job, ...]) -> tuple[ScenarioEvent, ...]:
        """The scenario's ``events`` in file order. Names are checked against the scenario's
        jobs and users when it lists jobs (a generator's are checked when it generates, a
        trace's are not known before the run); machines against the machines and those
        joining: a machine fails only while it is in the cluster, and joins only while not."""
        entries = self.model.events or []
        job_names = {job.name for job in jobs}
        user_names = {user.name for user in users} | {job.user for job in jobs}
        joined: dict[str, float] = {}  # a joining machine's name -> when it joins
        events: list[ScenarioEvent] = []
        for i, entry in enumerate(entries):
            where = f"events[{i}]"
            kind = entry.kind
            if kind == "machine_joins":
                joining = entry.machine_joins
                assert joining is not None
                name = joining.name
                if name in self.machine_names or name in joined:
                    self.fail(
                        f"{where}.machine_joins.name",
                        f"machine {name!r} is already in the cluster or joins earlier; "
                        "a joining machine needs a new name",
                    )
                joined[name] = entry.at
                capacity = self._vector(joining.capacity, f"{where}.machine_joins.capacity")
                capacity.setflags(write=False)
                machine = Machine(name, capacity, joining.rack, dict(joining.attributes))
                events.append(ScenarioEvent(entry.at, "machine_joins", machine))
                continue
            target = getattr(entry, kind)
            assert isinstance(target, str)
            if kind == "machine_fails":
                known = target in self.machine_names or target in joined
                if not known:
                    self.fail(
                        f"{where}.machine_fails",
                        f"unknown machine {target!r}; machines: {listing(self.machine_names)}"
                        " and those joining by earlier events",
                    )
                if target in joined and joined[target] >= entry.at:
                    self.fail(
                        f"{where}.machine_fails",
                        f"machine {target!r} joins at {joined[target]:g} s, not before "
                        f"{entry.at:g} s",
                    )
            elif kind == "cancel_job" and jobs and target not in job_names:
                self.fail(
                    f"{where}.cancel_job", f"unknown job {target!r}; jobs: {listing(job_names)}"
                )
            elif kind == "cancel_user" and jobs and target not in user_names:
                self.fail(
                    f"{where}.cancel_user", f"unknown user {target!r}; users: {listing(user_names)}"
                )
            events.append(ScenarioEvent(entry.at, kind, target))  # type: ignore[arg-type]
        failed: dict[str, float] = {}
        for i, event in enumerate(events):
            if event.kind == "machine_fails":
                assert isinstance(event.target, str)
                if event.target in failed:
                    self.fail(
                        f"events[{i}].machine_fails",
                        f"machine {event.target!r} already fails at {failed[event.target]:g} s",
                    )
                failed[event.target] = event.time
        return tuple(events)

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


def _preemption(model: PreemptionModel | None) -> QueuePreemption:
    """A queue's preemption settings (SPEC section 8.3), Kueue's defaults where unset."""
    if model is None:
        return QueuePreemption()
    borrow = model.borrow_within_cohort
    return QueuePreemption(
        model.reclaim_within_cohort,
        model.within_cluster_queue,
        borrow.policy if borrow is not None else "never",
        borrow.max_priority_threshold if borrow is not None else None,
    )


def _too_many_tasks(tasks: int) -> str:
    """The message for tasks over :data:`~fairshare.workload.limits.MAX_TASKS`."""
    return (
        f"the jobs' tasks (map and reduce) add up to {tasks:,} here; a scenario may have at "
        f"most {MAX_TASKS:,} tasks"
    )


def _too_many_copies(copies: int) -> str:
    """The message for block locations over ``MAX_REPLICA_COPIES``."""
    return (
        f"tasks times replicas add up to {copies:,} input block locations here; at most "
        f"{MAX_REPLICA_COPIES:,}"
    )


def _duration(value: float | list[float] | DistributionModel) -> Duration:
    """A job's validated ``duration`` as a :data:`~fairshare.workload.model.Duration`."""
    if isinstance(value, list):
        return PerTaskDurations(tuple(value))
    if isinstance(value, DistributionModel):
        if value.pareto is not None:
            return ParetoDuration(value.pareto.alpha, value.pareto.minimum)
        assert value.exponential is not None  # guaranteed by DistributionModel.check_one
        return ExponentialDuration(value.exponential.mean)
    return FixedDuration(value)


def build_scenario(
    model: ScenarioModel, source: str, machines_from: MachinesFrom | None = None
) -> Scenario:
    """The :class:`~fairshare.workload.model.Scenario` of checked records (``source`` names
    the input in errors; ``machines_from`` as for
    :func:`~fairshare.workload.loader.parse_scenario`)."""
    return _Builder(model, source, machines_from).build()
