"""Scheduler bookkeeping shared by every online policy: machines with their free capacity,
jobs with their pending and running tasks, users (or pools) with their allocation, and the
constraint classes that decide which machine a task may use.

Indexes that keep a placement decision cheap (the issue's "O(log n), never a scan of all users
or all machines"):

- A *group* is the pair (constraint class, per-task demand). Tasks of one group fit on the same
  machines and are eligible for the same machines, so one fit test and one eligibility lookup
  decide for every user of the group. Machines map to their eligible groups through their
  *signature* (capacity, rack and attributes): classes that do not read ``name`` are evaluated
  once per signature, name-dependent classes (``name`` or a whitelist) once per machine.
- Machines with free room are kept per signature in insertion-ordered dicts, so an arriving
  job looks only at free machines of the signatures it may use.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from fairshare.cluster import Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies.protocol import TaskRef
from fairshare.workload.model import ROOT, Job

EPS = 1e-9
"""Slack in fit tests, so that capacities summed from fractional demands still fit."""

ClassKey = tuple[str | None, frozenset[str] | None]
Demand = tuple[float, ...]


class JobState:
    """A job's tasks as the scheduler sees them (FAIR section 5: maps, then reduces)."""

    __slots__ = (
        "blocks",
        "by_machine",
        "by_rack",
        "demand",
        "finished",
        "group",
        "id",
        "job",
        "launched",
        "level",
        "maps",
        "maps_done",
        "next_map",
        "next_reduce",
        "pending",
        "reduces",
        "requeue",
        "running",
        "share_per_task",
        "skip_since",
        "user",
        "version",
        "waits",
    )

    def __init__(self, job_id: int, job: Job, user: int, group: int, demand: Demand) -> None:
        self.id = job_id
        self.job = job
        self.user = user
        self.group = group
        self.demand = demand
        self.maps = job.tasks
        self.reduces = job.reduce.tasks if job.reduce is not None else 0
        self.next_map = 0
        self.next_reduce = 0
        self.maps_done = 0
        self.finished = 0
        self.pending = job.tasks
        self.running = 0
        self.requeue: deque[TaskRef] = deque()
        self.share_per_task = 0.0
        self.version = 0
        # Data locality (only for jobs that read input blocks).
        self.blocks: list[tuple[int, ...]] | None = None
        self.launched: bytearray | None = None
        self.by_machine: dict[int, list[int]] = {}
        self.by_rack: dict[str | None, list[int]] = {}
        # Delay scheduling (FAIR Algorithm 1): locality level, time first skipped, waits.
        self.level = 0
        self.skip_since: float | None = None
        self.waits: tuple[float, float] | None = None


class UserState:
    """A user (or FAIR pool): its running tasks in launch order, allocation and share."""

    __slots__ = (
        "alloc",
        "cap",
        "idx",
        "job_heaps",
        "min_share",
        "name",
        "pending",
        "queue",
        "running",
        "share",
        "tasks",
        "version",
        "weight",
    )

    def __init__(self, idx: int, name: str, resources: int) -> None:
        self.idx = idx
        self.name = name
        self.weight = 1.0
        self.cap = float("inf")
        self.min_share = 0.0
        self.queue = ROOT
        self.running = 0
        self.pending = 0
        self.share = 0.0
        self.version = 0
        self.alloc = [0.0] * resources
        # group -> heap of (job key, job id, job version) of jobs with pending tasks there.
        self.job_heaps: dict[int, list[tuple[float, int, int]]] = {}
        # running task -> machine index, in launch order (preemption kills the newest).
        self.tasks: dict[TaskRef, tuple[int, int]] = {}


class Group:
    """Tasks with one constraint class and one demand vector (see the module docstring).

    ``heap`` holds (key, user order, user index, user version) entries with lazy invalidation:
    an entry is stale when the user's version moved on."""

    __slots__ = ("cls", "demand", "heap", "users")

    def __init__(self, cls: int, demand: Demand) -> None:
        self.cls = cls
        self.demand = demand
        self.heap: list[tuple[float, int, int, int]] = []
        self.users: dict[int, None] = {}


class ClusterState:
    """Machines, their signatures, free capacity and eligibility by constraint class."""

    def __init__(self, resources: Sequence[str], machines: Sequence[Machine]) -> None:
        self.resources = tuple(resources)
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.machines: list[Machine] = []
        self.free: list[list[float]] = []
        self.rack: list[str | None] = []
        self.alive: list[bool] = []
        self.sig: list[int] = []
        self._sig_of: dict[tuple[object, ...], int] = {}
        self.sig_machines: list[Machine] = []
        self.free_by_sig: list[dict[int, None]] = []
        self.total = [0.0] * len(self.resources)
        self.classes: list[ClassKey] = []
        self._class_of: dict[ClassKey, int] = {}
        self._constraints: list[Constraint | None] = []
        self.by_name: list[bool] = []
        self.groups: list[Group] = []
        self._group_of: dict[tuple[int, Demand], int] = {}
        self.groups_of_sig: list[list[int]] = []
        self.groups_of_machine: dict[int, list[int]] = {}
        self.sigs_of_class: list[list[int]] = []
        for machine in machines:
            self.add_machine(machine)

    # ---------------------------------------------------------------------------- machines

    def add_machine(self, machine: Machine) -> int:
        if machine.name in self.index and self.alive[self.index[machine.name]]:
            raise ValueError(f"machine {machine.name!r} is already in the cluster")
        key = (
            machine.capacity.tobytes(),
            machine.rack,
            tuple(sorted(machine.attributes.items(), key=lambda item: item[0])),
        )
        sig = self._sig_of.get(key)
        if sig is None:
            sig = self._sig_of[key] = len(self.sig_machines)
            self.sig_machines.append(machine)
            self.free_by_sig.append({})
            self.groups_of_sig.append(
                [g for g, grp in enumerate(self.groups) if self._eligible_sig(grp.cls, sig)]
            )
            for c in range(len(self.classes)):
                if not self.by_name[c] and self._eligible_sig(c, sig):
                    self.sigs_of_class[c].append(sig)
        mi = len(self.names)
        self.names.append(machine.name)
        self.index[machine.name] = mi
        self.machines.append(machine)
        capacity = [float(x) for x in machine.capacity]
        self.free.append(capacity)
        self.rack.append(machine.rack)
        self.alive.append(True)
        self.sig.append(sig)
        for r, value in enumerate(capacity):
            self.total[r] += value
        named = [
            g
            for g, grp in enumerate(self.groups)
            if self.by_name[grp.cls] and self._eligible_machine(grp.cls, mi)
        ]
        if named:
            self.groups_of_machine[mi] = named
        if any(v > EPS for v in capacity):
            self.free_by_sig[sig][mi] = None
        return mi

    def remove_machine(self, mi: int) -> None:
        self.alive[mi] = False
        self.free_by_sig[self.sig[mi]].pop(mi, None)
        for r, value in enumerate(self.machines[mi].capacity):
            self.total[r] -= float(value)
        self.groups_of_machine.pop(mi, None)
        self.free[mi] = [0.0] * len(self.resources)

    def groups_for(self, mi: int) -> list[int]:
        named = self.groups_of_machine.get(mi)
        base = self.groups_of_sig[self.sig[mi]]
        return base if named is None else base + named

    def free_machines(self, cls: int) -> list[int]:
        """Alive machines of class ``cls`` with free room, in machine order."""
        if self.by_name[cls]:
            return [
                mi
                for sig_free in self.free_by_sig
                for mi in sig_free
                if self._eligible_machine(cls, mi)
            ]
        out: list[int] = []
        for sig in self.sigs_of_class[cls]:
            out.extend(self.free_by_sig[sig])
        return out

    def has_room(self, mi: int) -> None:
        """Keep the free-machine index in step with ``free[mi]``."""
        if self.alive[mi]:
            for v in self.free[mi]:
                if v > EPS:
                    self.free_by_sig[self.sig[mi]][mi] = None
                    return
            self.free_by_sig[self.sig[mi]].pop(mi, None)

    # --------------------------------------------------------------------- classes, groups

    def class_of(self, job: Job) -> int:
        key: ClassKey = (
            job.constraint.source if job.constraint is not None else None,
            job.machines,
        )
        c = self._class_of.get(key)
        if c is None:
            c = self._class_of[key] = len(self.classes)
            self.classes.append(key)
            self._constraints.append(job.constraint)
            self.by_name.append(
                job.machines is not None
                or (job.constraint is not None and "name" in job.constraint.attributes())
            )
            self.sigs_of_class.append(
                []
                if self.by_name[c]
                else [s for s in range(len(self.sig_machines)) if self._eligible_sig(c, s)]
            )
        return c

    def group_of(self, cls: int, demand: Demand) -> int:
        g = self._group_of.get((cls, demand))
        if g is None:
            g = self._group_of[(cls, demand)] = len(self.groups)
            self.groups.append(Group(cls, demand))
            if self.by_name[cls]:
                for mi in range(len(self.names)):
                    if self.alive[mi] and self._eligible_machine(cls, mi):
                        self.groups_of_machine.setdefault(mi, []).append(g)
            else:
                for sig in self.sigs_of_class[cls]:
                    self.groups_of_sig[sig].append(g)
        return g

    def eligible(self, cls: int, mi: int) -> bool:
        if self.by_name[cls]:
            return self._eligible_machine(cls, mi)
        return self._eligible_sig(cls, self.sig[mi])

    def _eligible_sig(self, cls: int, sig: int) -> bool:
        constraint = self._constraints[cls]
        return constraint is None or constraint.matches(self.sig_machines[sig])

    def _eligible_machine(self, cls: int, mi: int) -> bool:
        constraint = self._constraints[cls]
        whitelist = self.classes[cls][1]
        machine = self.machines[mi]
        if whitelist is not None and machine.name not in whitelist:
            return False
        return constraint is None or constraint.matches(machine)


def fits(free: list[float], demand: Demand) -> bool:
    # A plain loop: this is the hottest test of the scheduler and all() over a generator
    # costs twice as much for two or three resources.
    i = 0
    for d in demand:
        if free[i] + EPS < d:
            return False
        i += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
    return True
