"""The machines' free capacity for whole tasks, and where one whole task goes: what the
whole-task allocators share (:mod:`fairshare.solvers.whole_tasks`,
:mod:`fairshare.solvers.per_machine`, :mod:`fairshare.solvers.cmmf_flow`).

Machine types (Choosy section 5.1, :class:`MachineTypes`) keep the cost proportional to types,
not machines: machines of one type with the same free capacity are interchangeable, so
:class:`MachinePool` keeps them in one group and a placement only chooses a group. Each user
tries its usable types in a fixed order (fewest competing users first, then the best shape
fit: see :func:`~fairshare.solvers.whole_tasks.progressive_whole_tasks`) and, within a type,
the tightest fit (best fit, the classic bin-packing rule).

Numerical conventions follow ``solvers/levels.py``: a task fits when it needs at most the
free capacity plus ``1e-9`` of the machine's capacity, but less than 1% of the smallest task
(:func:`~fairshare.solvers.levels.fit_slack`: round-off in task sizes such as 0.1 never
strands a task), and shares are compared after rounding to :data:`DIGITS` decimals so that
equal shares reached by different float paths tie. Each machine's free capacity is kept
unrounded, as a compensated sum; only its grouping rounds it.
"""

from __future__ import annotations

import heapq

import numpy as np

from fairshare.allocation.types import IntArray, Placement
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.levels import JUMP_MIN_TASKS, fit_slack
from fairshare.workload.eligibility import MachineTypes

FIT_TOL = 1e-9
"""Slack, in tasks, of whole-task counts against caps, minimums and tasks per machine."""
DIGITS = 12
"""Decimals shares and free capacities are rounded to before they are compared."""


def usable_types(types: MachineTypes, demands: FloatArray) -> BoolArray:
    """Where a user's whole tasks can go at all.

    Parameters
    ----------
    types : MachineTypes
        The machine types and who may use them.
    demands : FloatArray
        users x resources, per task.

    Returns
    -------
    BoolArray
        users x types: eligible, and one task fits on an empty machine of the type.
    """
    capacity = types.capacity
    fits = np.all(
        demands[:, None, :] <= (capacity + fit_slack(capacity, demands))[None, :, :], axis=2
    )
    return np.asarray(types.eligible & fits & (types.count > 0)[None, :], dtype=np.bool_)


def check_finite_demands(demands: FloatArray, caps: FloatArray) -> None:
    """Refuse a user whose whole-task allocation would be infinite.

    Parameters
    ----------
    demands : FloatArray
        users x resources, per task.
    caps : FloatArray
        Per user, the most tasks it may hold.

    Raises
    ------
    ValueError
        A user demands nothing per task and has no cap.
    """
    # The loader rejects demand vectors without a positive amount; a caller passing one with no
    # cap would ask for infinitely many tasks, so fail loudly instead of looping forever.
    empty = ~(demands > 0).any(axis=1) & ~np.isfinite(caps)
    if empty.any():
        raise ValueError(
            f"user #{int(np.flatnonzero(empty)[0])} demands nothing per task and has no cap; "
            "its whole-task allocation would be infinite"
        )


def _tasks_per_empty_machine(capacity: FloatArray, demands: FloatArray) -> FloatArray:
    """users x types: how many of the user's tasks one empty machine of the type holds."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(
            demands[:, None, :] > 0, capacity[None, :, :] / demands[:, None, :], np.inf
        )
    per_machine = np.floor(ratio.min(axis=2) + FIT_TOL)
    return np.asarray(np.where(np.isfinite(per_machine), per_machine, 0.0), dtype=np.float64)


def _type_preferences(
    types: MachineTypes, demands: FloatArray, usable: BoolArray, caps: FloatArray
) -> list[list[int]]:
    """For each user, its usable types in the order it tries them (see
    :func:`~fairshare.solvers.whole_tasks.progressive_whole_tasks` for why this order)."""
    capacity = types.capacity
    scale = np.where(capacity > 0, capacity, 1.0)
    contention = (usable & (caps >= 1 - FIT_TOL)[:, None]).sum(axis=0)
    per_machine = _tasks_per_empty_machine(capacity, demands)
    leftover = capacity[None, :, :] - per_machine[:, :, None] * demands[:, None, :]
    waste = np.where(capacity[None, :, :] > 0, leftover / scale[None, :, :], 0.0).sum(axis=2)
    waste = np.round(waste, DIGITS)
    preferences = []
    for i in range(usable.shape[0]):
        candidates = np.flatnonzero(usable[i])
        order = np.lexsort((candidates, waste[i, candidates], contention[candidates]))
        preferences.append([int(t) for t in candidates[order]])
    return preferences


def to_placement(
    users: IntArray, machines: IntArray, tasks: FloatArray, shape: tuple[int, int]
) -> Placement:
    """A canonical Placement: pairs sorted by (user, machine), zero entries dropped.

    Parameters
    ----------
    users, machines, tasks : IntArray, IntArray, FloatArray
        Tasks per (user, machine), as sparse triples (a pair at most once).
    shape : tuple of (int, int)
        Users and machines.

    Returns
    -------
    Placement
    """
    keep = tasks > 0
    users, machines, tasks = users[keep], machines[keep], tasks[keep]
    order = np.lexsort((machines, users))
    return Placement(
        users[order].astype(np.int64),
        machines[order].astype(np.int64),
        tasks[order].astype(np.float64),
        shape,
    )


def records_to_placement(records: dict[tuple[int, int], int], shape: tuple[int, int]) -> Placement:
    """The canonical Placement (:func:`to_placement`) of whole tasks recorded per pair.

    Parameters
    ----------
    records : dict of (int, int) to int
        Tasks per (user, machine).
    shape : tuple of (int, int)
        Users and machines.

    Returns
    -------
    Placement
    """
    size = len(records)
    users = np.fromiter((u for u, _ in records), dtype=np.int64, count=size)
    machines = np.fromiter((m for _, m in records), dtype=np.int64, count=size)
    tasks = np.fromiter(records.values(), dtype=np.float64, count=size)
    return to_placement(users, machines, tasks, shape)


def members_by_type(types: MachineTypes) -> list[IntArray]:
    """The machines of each type, in index order.

    Parameters
    ----------
    types : MachineTypes

    Returns
    -------
    list of IntArray
        Per type, its machines' indices, ascending.
    """
    order = np.argsort(types.machine_type, kind="stable")
    bounds = np.searchsorted(types.machine_type[order], np.arange(len(types.count) + 1))
    return [order[bounds[t] : bounds[t + 1]] for t in range(len(types.count))]


class _TypeGroups:
    """The machines of one type, grouped by their free capacity.

    Machines of one type with equal free capacity are interchangeable, so a placement only has
    to choose a group; within it the lowest machine index is used (a heap per group). Free
    capacity is kept normalised by the type's capacity and rounded to 12 decimals, so that
    machines reaching the same free capacity by different float paths share one group (the
    rounding moves a machine's recorded free capacity by at most 5e-13 of its capacity). The
    rounding is never carried from task to task: each machine's free capacity is kept apart,
    unrounded, as a compensated sum (:func:`_subtract`), and its group is the rounding of
    that, so a machine that has taken thousands of tasks still takes the last one that fits.
    A group whose machines have all moved on keeps its row, marked -inf so that nothing fits,
    in case another machine reaches that vector.
    """

    def __init__(self, capacity: FloatArray, machines: IntArray, digits: int = DIGITS) -> None:
        self.digits = digits
        self.free = np.full((8, len(capacity)), -np.inf)
        self.keys: list[bytes] = []
        self.heaps: list[list[int]] = []
        self.index: dict[bytes, int] = {}
        self.size = 0
        self.live = 0
        self.empty = np.where(capacity > 0, 1.0, 0.0)
        # machine -> its free capacity (normalised) and the round-off the sum has dropped
        self.exact: dict[int, tuple[FloatArray, FloatArray]] = {}
        self.unused = (self.empty, np.zeros_like(self.empty))
        if len(machines):
            heap = [int(m) for m in machines]
            heapq.heapify(heap)
            self._new_row(self.empty.copy(), heap)

    def _new_row(self, normalised: FloatArray, heap: list[int]) -> None:
        """A row for a free vector not in the table yet, holding the machines of ``heap``."""
        if self.size == len(self.free):
            self._make_room()
        key = normalised.tobytes()
        self.free[self.size] = normalised
        self.keys.append(key)
        self.heaps.append(heap)
        self.index[key] = self.size
        self.size += 1
        self.live += 1

    def _make_room(self) -> None:
        """Room for one more row: emptied rows dropped, or the table doubled."""
        # Emptied rows are dropped once they are half the table, so that searches stay
        # proportional to the distinct free vectors in use (at most the type's machines).
        if self.live <= self.size // 2:
            keep = [row for row in range(self.size) if self.heaps[row]]
            self.free[: len(keep)] = self.free[keep]
            self.free[len(keep) :] = -np.inf
            self.keys = [self.keys[row] for row in keep]
            self.heaps = [self.heaps[row] for row in keep]
            self.index = {key: row for row, key in enumerate(self.keys)}
            self.size = len(keep)
        else:
            grown = np.full((2 * len(self.free), self.free.shape[1]), -np.inf)
            grown[: self.size] = self.free[: self.size]
            self.free = grown

    def find(self, need: FloatArray, demand: FloatArray, bottleneck: int) -> int:
        """The group to place one task on (normalised ``demand``; ``need`` is it less the fit
        tolerance), or -1 if no machine has room: the tightest fit in ``bottleneck``, then
        summed over resources, then the lowest machine index."""
        free = self.free[: self.size]
        candidates = np.flatnonzero((free >= need).all(axis=1))
        if len(candidates) <= 1:
            return int(candidates[0]) if len(candidates) else -1
        left = free[candidates, bottleneck]
        candidates = candidates[left == left.min()]
        if len(candidates) > 1:
            total = (free[candidates] - demand).sum(axis=1)
            candidates = candidates[total == total.min()]
            if len(candidates) > 1:
                return min((int(row) for row in candidates), key=lambda r: self.heaps[r][0])
        return int(candidates[0])

    def upper(self) -> FloatArray:
        """The largest free amount of each resource over the type's machines."""
        return np.asarray(self.free[: self.size].max(axis=0), dtype=np.float64)

    def take(self, row: int, demand: FloatArray, tasks: int = 1) -> int:
        """Place ``tasks`` tasks (normalised ``demand``) on the lowest-index machine of
        ``row``."""
        heap = self.heaps[row]
        machine = heapq.heappop(heap)
        free, lost = self.exact.get(machine, self.unused)
        free, lost = _subtract(free, lost, demand if tasks == 1 else tasks * demand)
        self.exact[machine] = (free, lost)
        normalised = np.round(free + lost, self.digits) + 0.0
        if not heap:
            self.free[row] = -np.inf
            self.live -= 1
        key = normalised.tobytes()
        target = self.index.get(key)
        if target is None:
            self._new_row(normalised, [machine])
        else:
            if not self.heaps[target]:
                self.free[target] = normalised
                self.live += 1
            heapq.heappush(self.heaps[target], machine)
        return machine


def _subtract(
    total: FloatArray, lost: FloatArray, amount: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``total - amount`` as a compensated sum (Dekker's Fast2Sum): the new total and the
    round-off dropped so far, whose sum stays exact to a few units in the last place however
    many amounts are taken away. Fast2Sum needs ``total >= amount``, which a task that fits
    meets (a task within the fit slack over it loses at most one rounding)."""
    step = total - amount
    return step, lost + ((total - step) - amount)


def _grid_digits(normalised: FloatArray) -> int:
    """Decimals a type's normalised free capacity is rounded to: 12, or more when a task is
    below a millionth of the machine (10^12 tiny tasks), so that the rounding stays far below
    one task and never lets a machine take more than its capacity."""
    smallest = normalised[normalised > 0].min(initial=1.0)
    if smallest >= 1e-6:
        return DIGITS
    return min(18, int(np.ceil(-np.log10(smallest))) + 6)


class MachinePool:
    """Free capacity of the whole cluster and the placement rule of one task (see
    :func:`~fairshare.solvers.whole_tasks.progressive_whole_tasks`).

    Each user walks its preferred types in order; a type on which its task fits nowhere is
    skipped for good, because free capacity only shrinks.

    Parameters
    ----------
    types : MachineTypes
        The machine types (every machine starts empty).
    demands : FloatArray
        users x resources, per task.
    usable : BoolArray
        users x types: where each user's tasks may go (:func:`usable_types`).
    caps : FloatArray
        Per user, the most tasks it may hold: a user that may not take a whole task does
        not count as competing for a type.

    Examples
    --------
    Two machines of 4 CPUs and tasks of 3: one task on each, then none fits.

    >>> types = MachineTypes(
    ...     machine_type=np.array([0, 0]), capacity=np.array([[4.0]]), count=np.array([2]),
    ...     eligible=np.ones((1, 1), dtype=np.bool_),
    ... )
    >>> demands = np.array([[3.0]])
    >>> pool = MachinePool(types, demands, usable_types(types, demands), np.array([np.inf]))
    >>> [pool.place(0) for _ in range(3)]
    [0, 1, -1]
    """

    def __init__(
        self, types: MachineTypes, demands: FloatArray, usable: BoolArray, caps: FloatArray
    ) -> None:
        members = members_by_type(types)
        capacity = types.capacity
        self.capacity = capacity
        self.demands = demands
        scale = np.where(capacity > 0, capacity, 1.0)
        # users x types x resources, in units of one machine's capacity of the type
        self.demand = np.asarray(demands[:, None, :] / scale[None, :, :], dtype=np.float64)
        self.groups = [
            _TypeGroups(capacity[t], members[t], _grid_digits(self.demand[:, t]))
            for t in range(len(members))
        ]
        self.need = self.demand - (fit_slack(capacity, demands) / scale)[None, :, :]
        self.bottleneck = np.argmax(np.where(capacity[None] > 0, self.demand, 0.0), axis=2)
        # An upper bound on each type's free capacity, exact after a failed search there: it
        # lets a user skip, in one step, the types that cannot hold its task any more.
        self.upper = np.where(capacity > 0, 1.0, 0.0)
        self.preferences = [
            np.asarray(p, dtype=np.int64) for p in _type_preferences(types, demands, usable, caps)
        ]
        self.cursor = [0] * demands.shape[0]

    def free_total(self) -> FloatArray:
        """Free capacity summed over every machine.

        Returns
        -------
        FloatArray
            Per resource.
        """
        total = np.zeros(self.capacity.shape[1], dtype=np.float64)
        for t, group in enumerate(self.groups):
            rows = [r for r in range(group.size) if group.heaps[r]]
            if rows:
                machines = np.array([len(group.heaps[r]) for r in rows], dtype=np.float64)
                total += (machines @ group.free[rows]) * self.capacity[t]
        return total

    def place_many(self, user: int, tasks: int, records: dict[tuple[int, int], int]) -> int:
        """Place up to ``tasks`` tasks of ``user`` as that many :meth:`place` calls would, one
        machine at a time (the tightest fit stays the tightest as it fills).

        Parameters
        ----------
        user : int
            The user's index.
        tasks : int
            How many tasks to place.
        records : dict of (int, int) to int
            Tasks per (user, machine), updated in place.

        Returns
        -------
        int
            How many were placed (fewer when the next fits nowhere).
        """
        placed = 0
        preference = self.preferences[user]
        while placed < tasks:
            position = self.cursor[user]
            t = int(preference[position]) if position < len(preference) else -1
            row = -1
            if t >= 0 and tasks >= JUMP_MIN_TASKS:
                group = self.groups[t]
                demand = self.demand[user, t]
                row = group.find(self.need[user, t], demand, self.bottleneck[user, t])
            if row < 0:
                # one task: a few (rounded exactly as one by one), or past full types
                machine = self.place(user)
                if machine < 0:
                    return placed
                key = (user, machine)
                records[key] = records.get(key, 0) + 1
                placed += 1
                continue
            room = group.free[row] - self.need[user, t]
            positive = demand > 0
            fit = (
                int(np.floor((room[positive] / demand[positive]).min())) + 1
                if positive.any()
                else tasks
            )
            count = min(tasks - placed, max(fit, 1))
            machine = group.take(row, demand, count)
            key = (user, machine)
            records[key] = records.get(key, 0) + count
            placed += count
        return placed

    def place(self, user: int) -> int:
        """Place one task of ``user``.

        Parameters
        ----------
        user : int
            The user's index.

        Returns
        -------
        int
            The machine it went to, or -1 if it fits nowhere.
        """
        preference = self.preferences[user]
        position = self.cursor[user]
        while position < len(preference):
            t = int(preference[position])
            group = self.groups[t]
            row = group.find(self.need[user, t], self.demand[user, t], self.bottleneck[user, t])
            if row >= 0:
                self.cursor[user] = position
                return group.take(row, self.demand[user, t])
            self.upper[t] = group.upper()
            rest = preference[position + 1 :]
            room = np.flatnonzero((self.upper[rest] >= self.need[user, rest]).all(axis=1))
            position = position + 1 + int(room[0]) if len(room) else len(preference)
        self.cursor[user] = position
        return -1


def within(counts: FloatArray, base: FloatArray, demands: FloatArray, room: FloatArray) -> bool:
    """Whether the tasks from ``base`` to ``counts`` need at most ``room`` of each resource
    (the fit test of a jump, :func:`~fairshare.solvers.levels.jump_to_level`).

    Parameters
    ----------
    counts, base : FloatArray
        Tasks per user, after and before.
    demands : FloatArray
        users x resources, per task.
    room : FloatArray
        Per resource.

    Returns
    -------
    bool
    """
    return bool(np.all((counts - base) @ demands <= room))


class QueueCaps:
    """The capped queues of a whole-task walk: each queue's ``max_share`` in tasks, summed
    over the users below it (``PlacedInput.group_members`` and ``group_caps``).

    A walk asks :meth:`allows` before it gives a user one more task and sets the user aside
    for good when a queue above it is full (queues only fill), exactly as it does at the
    user's own cap; so the result is within every cap and still maximal (no user can take
    one more task without breaking a cap or a capacity, as
    :func:`~fairshare.allocation.invariants.maximality_violations` checks). A jump keeps the
    counts it hands out within the queues (:meth:`within`).

    Parameters
    ----------
    members : tuple of IntArray
        The users below each capped queue (a user may be under several: nested queues).
    limits : FloatArray
        Each queue's most tasks.
    users : int
        The number of users.

    Examples
    --------
    Users 0 and 1 in a queue of at most 2.5 tasks: two tasks fill it.

    >>> caps = QueueCaps((np.array([0, 1]),), np.array([2.5]), 3)
    >>> caps.add(0, 1); caps.add(1, 1); caps.add(2, 7)
    >>> caps.allows(0), caps.allows(1), caps.allows(2)
    (False, False, True)
    """

    def __init__(self, members: tuple[IntArray, ...], limits: FloatArray, users: int) -> None:
        self.members = members
        self.limits = [float(v) for v in limits]
        self.held = [0] * len(members)
        self.above: list[list[int]] = [[] for _ in range(users)]
        for g, below in enumerate(members):
            for user in below:
                self.above[int(user)].append(g)

    def allows(self, user: int) -> bool:
        """Whether ``user`` may take one more task within every queue above it.

        Parameters
        ----------
        user : int
            The user's index.

        Returns
        -------
        bool
        """
        return all(self.held[g] + 1 <= self.limits[g] + FIT_TOL for g in self.above[user])

    def add(self, user: int, tasks: int) -> None:
        """Book ``tasks`` more tasks of ``user`` in every queue above it.

        Parameters
        ----------
        user : int
            The user's index.
        tasks : int
            How many.
        """
        for g in self.above[user]:
            self.held[g] += tasks

    def headroom(self, x: FloatArray) -> FloatArray:
        """Per user, the tasks its fullest queue still takes (inf outside capped queues): an
        upper bound on its count, given ``x`` (tasks per user now), for a jump.

        Parameters
        ----------
        x : FloatArray
            Tasks per user now.

        Returns
        -------
        FloatArray
            ``x`` plus the room of the fullest queue above each user.
        """
        out = np.full(len(self.above), np.inf)
        for g, below in enumerate(self.members):
            room = np.floor(self.limits[g] - self.held[g] + FIT_TOL)
            out[below] = np.minimum(out[below], x[below] + max(room, 0.0))
        return out

    def within(self, counts: FloatArray, base: FloatArray) -> bool:
        """Whether the tasks from ``base`` to ``counts`` (per user) keep every queue within
        its cap.

        Parameters
        ----------
        counts, base : FloatArray
            Tasks per user, after and before.

        Returns
        -------
        bool
        """
        extra = counts - base
        return all(
            self.held[g] + float(extra[below].sum()) <= self.limits[g] + FIT_TOL
            for g, below in enumerate(self.members)
        )
