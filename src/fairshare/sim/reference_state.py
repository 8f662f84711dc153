"""What a reference scheduler of Choosy sections 7.1-7.2 keeps, and the protocol events that
change it: the units that receive a share, their jobs' pending and running tasks, the
machines with their free capacity, eligibility and signatures.

:class:`ReferenceState` is the base of :class:`fairshare.sim.reference.ReferenceScheduler`,
which adds the decisions (the exact CMMF allocations and how each scheduler moves to them).
Choosy's model (section 3): one resource, the same for every job (the first job decides which);
a unit is a user's tasks with one constraint and one task size, a row of the CMMF; a user's
share is the amount it holds divided by its weight and its demand is its running plus pending
tasks. Every state change goes through one method: a task starts (``launch``), stops
(``_forget`` then ``_release``), is pending again (``_requeue``; ``pause`` stops it and makes it
pending again at no cost), or a unit gains pending tasks (``_activate``). Which machines a
constraint class may use comes from :mod:`fairshare.workload.eligibility`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import Decision, Launch, Policy, TaskRef
from fairshare.sim.engine import Pause, SimulationError
from fairshare.workload import eligibility
from fairshare.workload.eligibility import ClassKey
from fairshare.workload.model import Job, User

EPS = 1e-9
"""Free capacity below this is none; a task fits when its size is at most free + EPS."""
DIGITS = 9
"""Decimals weighted shares (and machine capacities, for coalescing) are rounded to."""


class Unit:
    """Tasks of one user with one constraint class and one task size: a row of the CMMF.

    Parameters
    ----------
    idx : int
        Its index among the scheduler's units.
    name : str
        The user's name.
    cls : int
        Its constraint class (an index of ``ReferenceState.classes``).
    size : float
        The amount of the resource each of its tasks takes.
    weight : float
        The user's weight.
    """

    __slots__ = (
        "cls",
        "held",
        "idx",
        "jobs",
        "name",
        "on",
        "pending",
        "running",
        "size",
        "weight",
    )

    def __init__(self, idx: int, name: str, cls: int, size: float, weight: float) -> None:
        self.idx = idx
        self.name = name
        self.cls = cls
        self.size = size
        self.weight = weight
        self.jobs: deque[int] = deque()  # job ids with pending tasks, FIFO
        self.pending = 0
        # Running task -> machine, in launch order (the newest is paused first).
        self.running: dict[TaskRef, int] = {}
        # Running tasks per machine, and the machines holding one as a bit set.
        self.on: dict[int, int] = {}
        self.held = 0


class _JobTasks:
    """A job's tasks: its map and reduce counts, maps done, pending tasks in order, and the
    machines holding each map's input block (by index), if any."""

    __slots__ = ("blocks", "maps", "maps_done", "pending", "reduces", "unit")

    def __init__(self, job: Job, unit: int, blocks: list[tuple[int, ...]] | None) -> None:
        self.unit = unit
        self.maps = job.tasks
        self.maps_done = 0
        self.reduces = job.reduce.tasks if job.reduce is not None else 0
        self.blocks = blocks
        self.pending: deque[TaskRef] = deque()


class ReferenceState(Policy):
    """The state of a reference scheduler and the protocol's events (see the module docstring);
    :meth:`decide` is the subclass's.

    Parameters
    ----------
    cluster : Cluster
        The machines at the start (more may join through ``machine_added``).
    mode : str
        The scheduler's name, a key of
        :data:`~fairshare.sim.reference.REFERENCE_POLICIES`.
    users : sequence of User
        The scenario's users: their weights (a job of an unlisted user brings its own).

    Raises
    ------
    SimulationError
        Two machines of the cluster have the same name.
    """

    def __init__(self, cluster: Cluster, mode: str, *, users: Sequence[User] = ()) -> None:
        self.name = mode
        self.resources = cluster.resources
        self.weights = {u.name: u.weight for u in users}
        self.resource: int | None = None
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.machines: list[Machine] = []
        self.rack: list[str | None] = []
        self.capacity: list[float] = []
        self.free: list[float] = []
        # Alive machines with free capacity (so a decision looks at those only).
        self.room: dict[int, None] = {}
        self.alive: list[bool] = []
        self.sig: list[int] = []
        self._sig_of: dict[tuple[object, ...], int] = {}
        self._sig_count = 0
        self.classes: list[tuple[Constraint | None, frozenset[str] | None]] = []
        self._class_of: dict[ClassKey, int] = {}
        # Per constraint class, one byte per machine: 1 where the class may run, and the same
        # as a bit set. Evaluated once per class and machine by the one eligibility model
        # (fairshare.workload.eligibility), so no decision ever evaluates a constraint.
        self.eligible: list[bytearray] = []
        self.eligible_bits: list[int] = []
        self.by_name = False
        self.units: list[Unit] = []
        self._unit_of: dict[tuple[str, int, float], int] = {}
        # Units with pending tasks, by index.
        self.waiting: dict[int, None] = {}
        self.jobs: dict[int, _JobTasks] = {}
        self.dirty = False
        # What changed since the last decision. Every decision leaves no free capacity that a
        # waiting unit could use (each exact allocation is maximal), so only machines that
        # freed up or joined (``fresh``) and the free machines of units with new pending tasks
        # (``widened``) can take a task now.
        self.fresh: set[int] = set()
        self.widened: set[int] = set()
        # Whether work arrived or the machines changed since the last decision (``hard``),
        # and whether a finished task left its unit with nothing pending (``capped``): see
        # the modes' shortcuts (fairshare.sim.reference) for what each rules out.
        self.hard = True
        self.capped = False
        self.finished: dict[int, int] = {}
        self.sizes: set[float] = set()
        # Tests set this to examine every free machine and solve the whole cluster at every
        # decision, the definition the incremental decisions must reproduce exactly.
        self.exhaustive = False
        # For periodic-offline's plan (its Mode keeps the plan): whether the set of active
        # units or the machines changed since it was made, and the tasks each unit holds per
        # machine signature.
        self.held: dict[tuple[int, int], int] = {}
        self.replan = False
        for machine in cluster.machines:
            self._add_machine(machine)

    # ------------------------------------------------------------------ protocol: events

    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        """A job arrives: its maps (or, without maps, its reduces) become pending tasks of
        its unit (one per user, constraint and task size).

        Parameters
        ----------
        now : float
            The time of the arrival.
        job_id : int
            The driver's id for the job.
        job : Job
            The job.
        blocks : sequence of sequence of str, optional
            Per map task, the machines holding its input block (its launches report their
            locality; the reference schedulers place by the offline allocation, not by
            locality).

        Raises
        ------
        SimulationError
            The job does not fit Choosy's model: several resources, another resource than
            earlier jobs', or a reduce phase with a demand of its own.
        """
        size = self._size(job)
        cls = self._class(job)
        key = (job.user, cls, size)
        u = self._unit_of.get(key)
        if u is None:
            u = self._unit_of[key] = len(self.units)
            weight = self.weights.get(job.user, job.weight)
            self.units.append(Unit(u, job.user, cls, size, weight))
            self.sizes.add(size)
        unit = self.units[u]
        located = (
            [tuple(self.index[name] for name in holders) for holders in blocks]
            if blocks is not None
            else None
        )
        state = _JobTasks(job, u, located)
        self.jobs[job_id] = state
        if state.maps:
            state.pending.extend(TaskRef(job_id, "map", t) for t in range(state.maps))
        else:
            state.pending.extend(TaskRef(job_id, "reduce", t) for t in range(state.reduces))
        if state.pending:
            self._activate(unit, job_id, len(state.pending))

    def task_finished(self, now: float, task: TaskRef) -> None:
        """``task`` completed: its machine's room is free, and a job's last map releases its
        reduces.

        Parameters
        ----------
        now : float
            The time of the finish.
        task : TaskRef
            The finished task.
        """
        state = self.jobs[task.job]
        unit = self.units[state.unit]
        mi = self._forget(unit, task)
        self._release(mi, unit.size)
        if task.phase == "map":
            state.maps_done += 1
            if state.maps_done == state.maps and state.reduces:
                state.pending.extend(TaskRef(task.job, "reduce", t) for t in range(state.reduces))
                self._activate(unit, task.job, state.reduces)
        # The unit may get back every task it finished since the last decision only while
        # it has as many pending: otherwise its demand fell below what it held, and its cap
        # may bind in the target.
        gone = self.finished[unit.idx] = self.finished.get(unit.idx, 0) + 1
        if unit.pending < gone:
            self.capped = True
        if not unit.pending and not unit.running:
            self.replan = True  # the unit leaves
        self.dirty = True

    def machine_added(self, now: float, machine: Machine) -> None:
        """``machine`` joins (a periodic plan is made again).

        Parameters
        ----------
        now : float
            The time it joins.
        machine : Machine
            The machine.

        Raises
        ------
        SimulationError
            A machine of that name is already in the cluster.
        """
        self._add_machine(machine)
        self.replan = self.dirty = self.hard = True

    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
        """Machine ``name`` leaves; the tasks that ran on it are pending again.

        Parameters
        ----------
        now : float
            The time it leaves.
        name : str
            The machine's name.

        Returns
        -------
        list of TaskRef
            The tasks that were running on it, sorted.
        """
        mi = self.index[name]
        lost: list[TaskRef] = []
        for unit in self.units:
            gone = [ref for ref, where in unit.running.items() if where == mi]
            for ref in gone:
                self._forget(unit, ref)
                self._requeue(unit, ref)
                self.widened.add(unit.idx)
            lost.extend(gone)
        self.alive[mi] = False
        self.free[mi] = 0.0
        self.room.pop(mi, None)
        self.fresh.discard(mi)
        self.replan = self.dirty = self.hard = True
        return sorted(lost)

    def task_failed(self, now: float, task: TaskRef) -> None:
        """A running task failed: its room is free again and the task pending.

        Parameters
        ----------
        now : float
            The time of the failure.
        task : TaskRef
            The task, running until now.
        """
        unit = self.units[self.jobs[task.job].unit]
        self._release(self._forget(unit, task), unit.size)
        self._requeue(unit, task)
        self.widened.add(unit.idx)
        self.replan = self.hard = True

    def job_cancelled(self, now: float, job_id: int) -> list[TaskRef]:
        """The job's tenant cancelled it: its pending tasks are dropped and its running ones
        stopped.

        Parameters
        ----------
        now : float
            The time of the cancellation.
        job_id : int
            The driver's id of the job.

        Returns
        -------
        list of TaskRef
            The tasks that were running, sorted (empty for a job already gone).
        """
        state = self.jobs.pop(job_id, None)
        if state is None:
            return []
        unit = self.units[state.unit]
        stopped = sorted(ref for ref in unit.running if ref.job == job_id)
        for ref in stopped:
            self._release(self._forget(unit, ref), unit.size)
        if state.pending:
            unit.pending -= len(state.pending)
            state.pending.clear()
            if job_id in unit.jobs:
                unit.jobs.remove(job_id)
            if not unit.pending:
                self.waiting.pop(unit.idx, None)
        if not unit.pending and not unit.running:
            self.replan = True  # the unit leaves
        self.dirty = self.hard = True
        return stopped

    def advance(self, now: float) -> None:
        """Nothing waits on time: decisions follow events only.

        Parameters
        ----------
        now : float
            The new time.
        """

    def next_wakeup(self) -> float | None:
        """None: nothing waits on time.

        Returns
        -------
        None
        """
        return None

    # ------------------------------------------------------------------ bookkeeping

    def _activate(self, unit: Unit, job_id: int, tasks: int) -> None:
        """``tasks`` of job ``job_id`` became pending in ``unit`` (which joins if it was
        idle): the next decision looks again."""
        if not unit.pending and not unit.running:
            self.replan = True  # the unit joins
        if job_id not in unit.jobs:
            unit.jobs.append(job_id)
        unit.pending += tasks
        self.waiting[unit.idx] = None
        self.widened.add(unit.idx)
        self.dirty = self.hard = True

    def _release(self, mi: int, amount: float) -> None:
        """``amount`` of machine ``mi``'s resource is free again (offered if it is alive)."""
        self.free[mi] += amount
        if self.alive[mi] and self.free[mi] > EPS:
            self.room[mi] = None
            self.fresh.add(mi)

    def _forget(self, unit: Unit, ref: TaskRef) -> int:
        """Drop ``ref`` from ``unit``'s running tasks; the machine it ran on."""
        mi = unit.running.pop(ref)
        key = (unit.idx, self.sig[mi])
        self.held[key] -= 1
        left = unit.on[mi] - 1
        if left:
            unit.on[mi] = left
        else:
            del unit.on[mi]
            unit.held ^= 1 << mi
        return mi

    def _requeue(self, unit: Unit, ref: TaskRef) -> None:
        """``ref`` is pending again, first of its job and its job first of the unit's."""
        state = self.jobs[ref.job]
        state.pending.appendleft(ref)
        if ref.job in unit.jobs:
            unit.jobs.remove(ref.job)
        unit.jobs.appendleft(ref.job)
        unit.pending += 1
        self.waiting[unit.idx] = None
        self.dirty = True

    def launch(self, unit: Unit, mi: int, out: list[Decision]) -> None:
        """Launch ``unit``'s next pending task on machine ``mi`` and append the decision."""
        job_id = unit.jobs[0]
        state = self.jobs[job_id]
        ref = state.pending.popleft()
        if not state.pending:
            unit.jobs.popleft()
        unit.pending -= 1
        if not unit.pending:
            del self.waiting[unit.idx]
        unit.running[ref] = mi
        if mi in unit.on:
            unit.on[mi] += 1
        else:
            unit.on[mi] = 1
            unit.held |= 1 << mi
        key = (unit.idx, self.sig[mi])
        self.held[key] = self.held.get(key, 0) + 1
        self.free[mi] -= unit.size
        if self.free[mi] <= EPS:
            self.room.pop(mi, None)
        locality = None
        if ref.phase == "map" and state.blocks is not None:
            holders = state.blocks[ref.task]
            here = self.rack[mi]
            if mi in holders:
                locality = "node"
            elif here is not None and any(self.rack[h] == here for h in holders):
                locality = "rack"
            else:
                locality = "off_rack"
        out.append(Launch(ref, self.names[mi], locality))  # type: ignore[arg-type]

    def pause(self, unit: Unit, ref: TaskRef, out: list[Decision]) -> None:
        """Stop ``unit``'s running task ``ref`` at no cost (Choosy section 7.1's free pausing
        and migration: it resumes where it left off) and append the decision; the task is
        pending again, first of its unit."""
        mi = self._forget(unit, ref)
        self._release(mi, unit.size)
        out.append(Pause(ref, self.names[mi]))
        self._requeue(unit, ref)

    def _size(self, job: Job) -> float:
        """A task's amount of the one shared resource (set by the first job), or
        :class:`SimulationError` for a job outside Choosy's model."""
        reduce_demand = job.reduce.demand if job.reduce is not None else None
        if reduce_demand is not None and not np.array_equal(reduce_demand, job.demand):
            raise SimulationError(
                f"jobs '{job.name}'.reduce.demand",
                f"the reference scheduler {self.name} gives every task of a job one size "
                "(Choosy section 3); drop the reduce phase's own demand",
            )
        used = np.flatnonzero(job.demand > 0)
        if len(used) != 1:
            raise SimulationError(
                f"jobs '{job.name}'.demand",
                f"the reference scheduler {self.name} shares one resource (Choosy section 3); "
                f"this job demands {len(used)} resources",
            )
        resource = int(used[0])
        if self.resource is None:
            self.resource = resource
            self.capacity = [float(m.capacity[resource]) for m in self.machines]
            self.free = [
                c if alive else 0.0 for c, alive in zip(self.capacity, self.alive, strict=True)
            ]
            self.room = {mi: None for mi, f in enumerate(self.free) if f > EPS}
            self.fresh.update(self.room)
        elif resource != self.resource:
            raise SimulationError(
                f"jobs '{job.name}'.demand",
                f"the reference scheduler {self.name} shares one resource (Choosy section "
                f"3): earlier jobs demand {self.resources[self.resource]}, this one "
                f"{self.resources[resource]}",
            )
        return float(job.demand[resource])

    def _class(self, job: Job) -> int:
        """The constraint class of ``job``, created with its eligible machines when new."""
        key = eligibility.class_key(job.constraint, job.machines)
        c = self._class_of.get(key)
        if c is None:
            c = self._class_of[key] = len(self.classes)
            self.classes.append((job.constraint, job.machines))
            allowed = eligibility.allowed(job.constraint, job.machines, self.machines)
            self.eligible.append(bytearray(allowed.astype(np.uint8).tobytes()))
            packed = np.packbits(allowed, bitorder="little")
            self.eligible_bits.append(int.from_bytes(packed.tobytes(), "little"))
            if eligibility.reads_names(job.constraint, job.machines):
                self._by_name()
        return c

    def _by_name(self) -> None:
        """A class reads machine names: from now on every machine is its own signature (the
        type periodic-offline plans by)."""
        if self.by_name:
            return
        self.by_name = True
        self._sig_of.clear()
        self._sig_count = 0
        held: dict[tuple[int, int], int] = {}
        for mi, machine in enumerate(self.machines):
            self.sig[mi] = self._signature(machine)
        for unit in self.units:
            for mi in unit.running.values():
                key = (unit.idx, self.sig[mi])
                held[key] = held.get(key, 0) + 1
        self.held = held
        # Only periodic-offline plans by signature; the flag means nothing to the others.
        self.replan = True

    def _signature(self, machine: Machine) -> int:
        """The machine's signature (capacity, rack, attributes; its name once a class reads
        names): machines of one signature are one type to the periodic plan."""
        key = (eligibility.signature_key(machine), machine.name if self.by_name else None)
        sig = self._sig_of.get(key)
        if sig is None:
            sig = self._sig_of[key] = self._sig_count
            self._sig_count += 1
        return sig

    def _add_machine(self, machine: Machine) -> None:
        """Add ``machine``, all its room free, eligible for the classes it satisfies."""
        if machine.name in self.index and self.alive[self.index[machine.name]]:
            raise SimulationError(
                "machine_events", f"machine '{machine.name}' is already in the cluster"
            )
        mi = len(self.names)
        self.names.append(machine.name)
        self.index[machine.name] = mi
        self.machines.append(machine)
        self.rack.append(machine.rack)
        self.alive.append(True)
        self.sig.append(self._signature(machine))
        for cls, allowed in enumerate(self.eligible):
            constraint, whitelist = self.classes[cls]
            ok = eligibility.allows(constraint, whitelist, machine)
            allowed.append(ok)
            if ok:
                self.eligible_bits[cls] |= 1 << mi
        amount = float(machine.capacity[self.resource]) if self.resource is not None else 0.0
        self.capacity.append(amount)
        self.free.append(amount)
        if amount > EPS:
            self.room[mi] = None
            self.fresh.add(mi)
