"""What over-committing a machine costs its tasks: the simulator's model of contention, for
policies that place tasks without checking that they fit (the slot scheduler,
:mod:`fairshare.policies.slots`; DRF section 2 and H-DRF section 5.3).

While the tasks running on a machine demand more of a resource than it has, each of them
runs ``slowdown`` times slower than alone, where ``slowdown`` is the product of:

- time sharing: for every resource but memory (CPUs, GPUs, disk and network bandwidth, a
  ``slots`` resource), the machine's tasks share what it has, so they progress at
  ``capacity / demand`` of their speed: the factor is the largest ``demand / capacity``
  over those resources, at least 1;
- thrashing: when the memory its tasks demand exceeds the machine's (a resource named
  ``mem``, ``memory`` or ``ram``), pages go to disk and back, which "will dramatically
  reduce throughput and job response times" (H-DRF section 5.3; DRF section 2 calls it
  over-utilizing the slot's memory, "which may lead to thrashing"): every task on the
  machine runs ``thrash_factor`` times slower (``--thrash-factor``, 2 by default; the
  papers give no number, the factor is a parameter to sweep).

A resource the machine has none of is left out (a task demanding it is not slowed for it).
A reducer waiting for its job's maps holds its demand but does no work.

Exact and deterministic in the event engine: each machine keeps a *work clock*, the work
(in seconds of a task running alone) each of its tasks has done since the clock started;
it advances by ``elapsed / slowdown`` and only when the machine's tasks change (a launch, a
finish, a kill), at the time of that event. A task's target is the clock at its launch plus
its work; it finishes when the clock reaches the target, at ``now + (target - clock) *
slowdown``. Only when a machine's slowdown changes are its tasks' finish events replaced
(the engine's ``_retime``; the replaced event is stale and skipped without a decision round),
and a machine that is never over-committed keeps every finish time the launch gave, bit for
bit. All the arithmetic is on the event times themselves, in event order, so the same run
gives the same times.

Examples
--------
A machine of <4 CPUs, 6 GB> runs a 10 s task of <1 CPU, 2 GB>; at 4 s a task of <1 CPU,
5 GB> joins (7 GB demanded of 6: thrashing, factor 2). The first has 6 s of work left, done
at half speed from 4 s: it ends at 16 s instead of 10 s.

>>> import numpy as np
>>> from fairshare.cluster import Machine
>>> from fairshare.policies import TaskRef
>>> moved = {}
>>> over = Overcommit(("cpu", "mem"), 2.0, lambda ref, end: moved.__setitem__(ref, end))
>>> m = Machine("m", np.array([4.0, 6.0]))
>>> a, b = TaskRef(0, "map", 0), TaskRef(1, "map", 0)
>>> over.launch(0.0, a, m, np.array([1.0, 2.0]), 10.0)
>>> over.settle(0.0)
>>> moved
{}
>>> over.launch(4.0, b, m, np.array([1.0, 5.0]), 24.0)
>>> over.settle(4.0)
>>> moved[a], moved[b], over.slowdown("m")
(16.0, 44.0, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from fairshare.cluster import FloatArray, Machine
from fairshare.policies import TaskRef
from fairshare.tolerances import FIT as EPS

__all__ = ["MEMORY_RESOURCES", "Overcommit", "slowdown"]

MEMORY_RESOURCES = frozenset({"mem", "memory", "ram"})
"""The resource names over-commit makes thrash rather than time-share."""


def slowdown(
    demand: Sequence[float],
    capacity: Sequence[float],
    memory: Sequence[bool],
    thrash_factor: float,
) -> float:
    """How many times slower a machine's tasks run (module docstring).

    Parameters
    ----------
    demand : sequence of float
        What the machine's tasks demand together, per resource.
    capacity : sequence of float
        What the machine has, per resource.
    memory : sequence of bool
        Per resource, whether it is memory (thrashes) rather than time-shared.
    thrash_factor : float
        The factor of thrashing.

    Returns
    -------
    float
        At least 1.

    Examples
    --------
    >>> slowdown([5.0, 7.5], [4.0, 6.0], [False, True], 2.0)
    2.5
    >>> slowdown([4.0, 6.0], [4.0, 6.0], [False, True], 2.0)
    1.0
    """
    shared = 1.0
    thrashing = False
    for d, c, mem in zip(demand, capacity, memory, strict=True):
        if c <= 0 or d <= c + EPS:
            continue
        if mem:
            thrashing = True
        else:
            shared = max(shared, d / c)
    return shared * thrash_factor if thrashing else shared


class _Load:
    """One machine's running tasks, what they demand, its work clock and slowdown."""

    __slots__ = ("capacity", "clock", "demand", "since", "slow", "tasks")

    def __init__(self, capacity: FloatArray) -> None:
        self.capacity = [float(c) for c in capacity]
        self.demand = [0.0] * len(self.capacity)
        self.clock = 0.0  # work done by each task since the clock started, at ``since``
        self.since = 0.0
        self.slow = 1.0
        # Running task -> (its demand, its target on the clock; inf while it waits).
        self.tasks: dict[TaskRef, tuple[FloatArray, float]] = {}

    def advance(self, now: float) -> None:
        """The clock at ``now`` (the slowdown has held since ``since``)."""
        if now != self.since:
            if self.slow == 1.0:
                self.clock += now - self.since
            else:
                self.clock += (now - self.since) / self.slow
            self.since = now


class Overcommit:
    """The over-commit model of one run (module docstring).

    Parameters
    ----------
    resources : sequence of str
        The cluster's resource names, in the order of demands and capacities.
    thrash_factor : float
        How many times slower tasks run while their machine's memory is over-committed.
    retime : callable
        ``(task, end)``: the engine moves a running task's finish to ``end``.
    """

    def __init__(
        self,
        resources: Sequence[str],
        thrash_factor: float,
        retime: Callable[[TaskRef, float], None],
    ) -> None:
        self.memory = [name.lower() in MEMORY_RESOURCES for name in resources]
        self.thrash_factor = thrash_factor
        self.retime = retime
        self.loads: dict[str, _Load] = {}
        self.where: dict[TaskRef, str] = {}
        self.touched: dict[str, None] = {}
        # Machines whose slowdown is not 1, and a task launched there since the last settle.
        self.fresh: dict[TaskRef, None] = {}

    def slowdown(self, machine: str) -> float:
        """The machine's slowdown now (1 for a machine without tasks).

        Parameters
        ----------
        machine : str
            Its name.

        Returns
        -------
        float
        """
        load = self.loads.get(machine)
        return load.slow if load is not None else 1.0

    def launch(
        self, now: float, task: TaskRef, machine: Machine, demand: FloatArray, end: float
    ) -> None:
        """``task`` starts on ``machine`` at ``now`` and would end at ``end`` alone (inf: a
        reducer waiting for its maps). Takes effect at :meth:`settle`.

        Parameters
        ----------
        now : float
            The launch time.
        task : TaskRef
            The task.
        machine : Machine
            Its machine (real capacities).
        demand : FloatArray
            What it demands.
        end : float
            When it would finish alone.
        """
        load = self.loads.get(machine.name)
        if load is None:
            load = self.loads[machine.name] = _Load(machine.capacity)
            load.since = now
        load.advance(now)
        target = load.clock + (end - now) if math.isfinite(end) else math.inf
        load.tasks[task] = (demand, target)
        total = load.demand
        for r, d in enumerate(demand.tolist()):
            total[r] += d
        self.where[task] = machine.name
        self.touched[machine.name] = None
        if math.isfinite(end):
            self.fresh[task] = None

    def stop(self, now: float, task: TaskRef) -> None:
        """``task`` stopped (finished or killed) at ``now``; its machine's other tasks are
        retimed if their slowdown changes.

        Parameters
        ----------
        now : float
            The time.
        task : TaskRef
            The task (one this model does not know is ignored).
        """
        name = self.where.pop(task, None)
        if name is None:
            return
        load = self.loads[name]
        load.advance(now)
        demand, _ = load.tasks.pop(task)
        total = load.demand
        for r, d in enumerate(demand.tolist()):
            total[r] -= d
        if not load.tasks:
            load.demand = [0.0] * len(total)  # no rounding left behind
        self.fresh.pop(task, None)
        self.touched[name] = None
        self.settle(now)

    def resume(self, now: float, task: TaskRef, seconds: float) -> float:
        """A reducer that waited for its maps starts its ``seconds`` of work at ``now``.

        Parameters
        ----------
        now : float
            The time the job's last map finished.
        task : TaskRef
            The reducer.
        seconds : float
            Its work, alone.

        Returns
        -------
        float
            When it finishes at the machine's slowdown now.
        """
        name = self.where.get(task)
        if name is None:
            return now + seconds
        load = self.loads[name]
        load.advance(now)
        demand, _ = load.tasks[task]
        load.tasks[task] = (demand, load.clock + seconds)
        return now + seconds if load.slow == 1.0 else now + seconds * load.slow

    def settle(self, now: float) -> None:
        """Recompute the slowdown of the machines whose tasks changed at ``now``, and retime
        the tasks whose finish moves: all of a machine's when its slowdown changed, else those
        launched at ``now`` on a machine that is slowed."""
        for name in self.touched:
            load = self.loads[name]
            slow = slowdown(load.demand, load.capacity, self.memory, self.thrash_factor)
            changed = slow != load.slow
            load.slow = slow
            if not changed and slow == 1.0:
                continue
            for task, (_, target) in load.tasks.items():
                if math.isfinite(target) and (changed or task in self.fresh):
                    self.retime(task, now + max(0.0, target - load.clock) * slow)
        self.touched.clear()
        self.fresh.clear()
