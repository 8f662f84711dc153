"""Whole-task allocations placed on individual machines, for the constrained policies.

Three integral allocators share this module; the divisible solvers call them for ``--integral``
(SPEC section 2: whole tasks, and maximal: no user can be given one more task without exceeding
a capacity or its own limits). Every result is a :class:`Placement`: tasks per (user, machine),
only on machines the user may use, no machine over capacity, no user above ``caps``.

- :func:`progressive_whole_tasks`: progressive filling one whole task at a time, the online
  rule of TSF section V-D ("serve users in ascending order of task shares", keep going until no
  more task can be scheduled) applied offline to an empty cluster. TSF, CDRF and DRFH use it
  with their own share of one task.
- :func:`per_machine_whole_tasks`: per-machine DRF (TSF section IV-B1): DRF's progressive
  filling (DRF Algorithm 1) on each machine separately; with one resource this is Choosy's
  independent allocation (Choosy section 4.1).
- :func:`cmmf_whole_tasks`: integral weighted CMMF on one resource (Choosy sections 4.2 and 5,
  "Algorithm for Non-Divisible Resources"): progressive filling in whole tasks whose
  feasibility test is a bipartite flow between users and machine types.

Machine types (Choosy section 5.1, :class:`MachineTypes`) keep the cost proportional to types,
not machines: machines of one type with the same free capacity are interchangeable.

Numerical conventions follow ``solvers/progressive.py``: a task fits when it needs at most the
free capacity plus ``1e-9`` of the machine's capacity, but less than 1% of the smallest task
(:func:`~fairshare.solvers.progressive.fit_slack`: round-off in task sizes such as 0.1 never
strands a task), and shares are compared after rounding to 12 decimals so that equal
shares reached by different float paths tie, and ties go to the user first in scenario order.

Jumps: like :func:`~fairshare.solvers.progressive.progressive_fill`, the progressive loops
hand out every task below a level at once when that is thousands of tasks
(:func:`~fairshare.solvers.progressive.jump_to_level`), so the time does not grow with the
task count; small problems go one task at a time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from functools import partial

import numpy as np

from fairshare.allocation.types import IntArray, Placement
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.errors import InvalidRequest
from fairshare.solvers.progressive import (
    JUMP_MIN_TASKS,
    fit_slack,
    jump_to_level,
    rounded_level,
    tasks_that_may_fit,
)
from fairshare.workload.eligibility import MachineTypes

_FIT_TOL = 1e-9
_DIGITS = 12

TieBreak = Callable[[int], float]


# --------------------------------------------------------------------------------------------
# shared helpers


def _usable(types: MachineTypes, demands: FloatArray) -> BoolArray:
    """users x types: eligible, and one task fits on an empty machine of the type."""
    capacity = types.capacity
    fits = np.all(
        demands[:, None, :] <= (capacity + fit_slack(capacity, demands))[None, :, :], axis=2
    )
    return np.asarray(types.eligible & fits & (types.count > 0)[None, :], dtype=np.bool_)


def _check_finite_demands(demands: FloatArray, caps: FloatArray) -> None:
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
    per_machine = np.floor(ratio.min(axis=2) + _FIT_TOL)
    return np.asarray(np.where(np.isfinite(per_machine), per_machine, 0.0), dtype=np.float64)


def _type_preferences(
    types: MachineTypes, demands: FloatArray, usable: BoolArray, caps: FloatArray
) -> list[list[int]]:
    """For each user, its usable types in the order it tries them (see
    :func:`progressive_whole_tasks` for why this order)."""
    capacity = types.capacity
    scale = np.where(capacity > 0, capacity, 1.0)
    contention = (usable & (caps >= 1 - _FIT_TOL)[:, None]).sum(axis=0)
    per_machine = _tasks_per_empty_machine(capacity, demands)
    leftover = capacity[None, :, :] - per_machine[:, :, None] * demands[:, None, :]
    waste = np.where(capacity[None, :, :] > 0, leftover / scale[None, :, :], 0.0).sum(axis=2)
    waste = np.round(waste, _DIGITS)
    preferences = []
    for i in range(usable.shape[0]):
        candidates = np.flatnonzero(usable[i])
        order = np.lexsort((candidates, waste[i, candidates], contention[candidates]))
        preferences.append([int(t) for t in candidates[order]])
    return preferences


def _to_placement(
    users: IntArray, machines: IntArray, tasks: FloatArray, shape: tuple[int, int]
) -> Placement:
    """A canonical Placement: pairs sorted by (user, machine), zero entries dropped."""
    keep = tasks > 0
    users, machines, tasks = users[keep], machines[keep], tasks[keep]
    order = np.lexsort((machines, users))
    return Placement(
        users[order].astype(np.int64),
        machines[order].astype(np.int64),
        tasks[order].astype(np.float64),
        shape,
    )


def _records_to_placement(records: dict[tuple[int, int], int], shape: tuple[int, int]) -> Placement:
    size = len(records)
    users = np.fromiter((u for u, _ in records), dtype=np.int64, count=size)
    machines = np.fromiter((m for _, m in records), dtype=np.int64, count=size)
    tasks = np.fromiter(records.values(), dtype=np.float64, count=size)
    return _to_placement(users, machines, tasks, shape)


def _members_by_type(types: MachineTypes) -> list[IntArray]:
    order = np.argsort(types.machine_type, kind="stable")
    bounds = np.searchsorted(types.machine_type[order], np.arange(len(types.count) + 1))
    return [order[bounds[t] : bounds[t + 1]] for t in range(len(types.count))]


# --------------------------------------------------------------------------------------------
# free capacity, grouped per type by equal free vectors


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

    def __init__(self, capacity: FloatArray, machines: IntArray, digits: int = _DIGITS) -> None:
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
        return _DIGITS
    return min(18, int(np.ceil(-np.log10(smallest))) + 6)


class _MachinePool:
    """Free capacity of the whole cluster and the placement rule of one task (see
    :func:`progressive_whole_tasks`). Each user walks its preferred types in order; a type on
    which its task fits nowhere is skipped for good, because free capacity only shrinks."""

    def __init__(
        self, types: MachineTypes, demands: FloatArray, usable: BoolArray, caps: FloatArray
    ) -> None:
        members = _members_by_type(types)
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
        """Free capacity summed over every machine (resources)."""
        total = np.zeros(self.capacity.shape[1], dtype=np.float64)
        for t, group in enumerate(self.groups):
            rows = [r for r in range(group.size) if group.heaps[r]]
            if rows:
                machines = np.array([len(group.heaps[r]) for r in rows], dtype=np.float64)
                total += (machines @ group.free[rows]) * self.capacity[t]
        return total

    def place_many(self, user: int, tasks: int, records: dict[tuple[int, int], int]) -> int:
        """Place up to ``tasks`` tasks of ``user`` as that many :meth:`place` calls would, one
        machine at a time (the tightest fit stays the tightest as it fills), recording them in
        ``records``; returns how many were placed (fewer when the next fits nowhere)."""
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
        """Place one task of ``user`` and return its machine, or -1 if it fits nowhere."""
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


def _progressive(
    pool: _MachinePool,
    share_per_task: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    initial: FloatArray,
    users: IntArray,
    tie: TieBreak,
    records: dict[tuple[int, int], int],
) -> None:
    """Place ``initial`` (first-fit decreasing), then progressive filling over ``users``: the
    lowest weighted share first (then ``tie``, then the lowest index), one whole task at a
    time, setting aside for good a user whose next task fits nowhere."""
    demands = pool.demands
    tasks = [0] * len(caps)

    def put(user: int) -> bool:
        machine = pool.place(user)
        if machine < 0:
            return False
        tasks[user] += 1
        key = (user, machine)
        records[key] = records.get(key, 0) + 1
        return True

    whole = np.floor(initial + _FIT_TOL).astype(np.int64)
    size = np.asarray(demands.max(axis=1), dtype=np.float64)
    # First-fit decreasing: the classic packing order (largest items first) for the guaranteed
    # tasks, so that minimum shares that fit together are rarely refused.
    for user in sorted((int(u) for u in users), key=lambda u: (-float(size[u]), u)):
        placed = tasks[user] = pool.place_many(user, int(whole[user]), records)
        if placed < whole[user]:
            raise InvalidRequest(
                f"users[{user}].min_share",
                f"the minimum shares do not fit on the machines as whole tasks: only {placed} "
                f"of this user's {int(whole[user])} guaranteed tasks could be placed "
                "(placed largest tasks first); lower the minimum shares",
            )
    step = [float(share_per_task[u]) / float(weights[u]) for u in range(len(caps))]
    limit = [float(c) + _FIT_TOL for c in caps]
    active = np.zeros(len(caps), dtype=np.bool_)
    active[users] = True
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.asarray(share_per_task / weights, dtype=np.float64)

    def queue() -> list[tuple[float, float, int]]:
        heap = [
            (rounded_level(tasks[u] * step[u]), tie(u), u)
            for u in (int(v) for v in np.flatnonzero(active))
        ]
        heapq.heapify(heap)
        return heap

    may_jump = _jump(pool, tasks, steps, caps, active, records) is not None
    heap = queue()
    since = 0  # tasks handed out one at a time since the last try of a jump
    while heap:
        if may_jump and since >= JUMP_MIN_TASKS:
            since = 0  # the bound _jump checks only falls: once too small, it stays so
            jumped = _jump(pool, tasks, steps, caps, active, records)
            may_jump = jumped is not None
            if jumped:
                heap = queue()
        _, _, user = heapq.heappop(heap)
        if tasks[user] + 1 > limit[user] or not put(user):
            active[user] = False
            continue
        since += 1
        heapq.heappush(heap, (rounded_level(tasks[user] * step[user]), tie(user), user))


def _within(counts: FloatArray, base: FloatArray, demands: FloatArray, room: FloatArray) -> bool:
    """Whether the tasks from ``base`` to ``counts`` need at most ``room`` of each resource."""
    return bool(np.all((counts - base) @ demands <= room))


def _jump(
    pool: _MachinePool,
    tasks: list[int],
    steps: FloatArray,
    caps: FloatArray,
    active: BoolArray,
    records: dict[tuple[int, int], int],
) -> bool | None:
    """Jumps of the level (``progressive.jump_to_level``) for :func:`_progressive`, repeated
    while they hand out many tasks. Whether the tasks of a level fit on the machines is bin
    packing, so a jump takes a level whose tasks need at most half the free capacity of each
    resource, summed over the machines, and places each user's tasks in one go (users in
    index order, each as its own tasks one by one would go); a user whose tasks do not all
    fit is set aside, as one task at a time would set it aside at its first task that fits
    nowhere. Each jump halves the free capacity at most, so there are about log2(tasks) of
    them; what is left is handed out one task at a time. Returns whether it jumped, or None
    when too few tasks may still fit for any later jump.

    What is guaranteed: the result is feasible, within every cap, maximal (a user is set
    aside only when its next task fits on no machine it may use) and whole; a jump hands
    each user exactly the tasks it would get below the jump's level one task at a time
    (the fairness order is kept), but places them user after user rather than interleaved,
    so machines fill in another order and a later task may fit elsewhere or not at all:
    the final allocation can differ from one task at a time's (on the random problems of
    tests/test_limits.py 41 of 84 runs differ, one user by up to 16% of its tasks). A pooled
    policy's jumps (:mod:`fairshare.solvers.progressive`) are exact."""
    jumped_once = False
    while True:
        x = np.asarray(tasks, dtype=np.float64)
        if float((caps[active] - x[active]).sum()) < JUMP_MIN_TASKS:
            return None  # the caps leave too few tasks (cheaper than free_total)
        room = 0.5 * np.maximum(pool.free_total(), 0.0)
        if tasks_that_may_fit(x, caps, active, room, pool.demands) < JUMP_MIN_TASKS:
            return None if not jumped_once else True
        fits = partial(_within, base=x, demands=pool.demands, room=room)
        jumped = jump_to_level(x, steps, caps, active, fits)
        if jumped is None:
            return jumped_once
        jumped_once = True
        for user in np.flatnonzero(jumped > x):
            want = int(jumped[user] - x[user])
            got = pool.place_many(int(user), want, records)
            tasks[user] += got
            if got < want:
                active[user] = False


# --------------------------------------------------------------------------------------------
# 1. progressive filling with whole tasks (TSF V-D offline; CDRF, DRFH)


def progressive_whole_tasks(
    types: MachineTypes,
    demands: FloatArray,
    share_per_task: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    initial: FloatArray,
) -> Placement:
    """Whole-task progressive filling with per-machine placement (TSF section V-D's online
    algorithm applied offline to an empty cluster; TSF section V-B is its divisible ideal).

    User i's weighted share is ``tasks_i * share_per_task[i] / weights[i]``. The ``initial``
    whole tasks (minimum shares) are placed first, largest tasks first; if one does not fit,
    :class:`InvalidRequest` names the user. Then, repeatedly, the user with the lowest weighted
    share (ties: lowest index) that is below ``caps[i]`` gets one task, on a machine chosen by
    the rule below. A user whose next task fits on no machine it may use is set aside for good
    (resources are only consumed), and the others continue, so the result is maximal.

    Machine choice (deterministic). Each user ranks the machine types it may use and that can
    hold one of its tasks by

    1. contention: the number of users that may use the type, fewest first. This is Choosy's
       lesson (section 4.2, Figure 3) and TSF's Figure 4: a machine few others can use should
       go to the users that can use it, so flexible users leave constrained users' machines
       alone;
    2. shape fit: the fraction of an empty machine's capacity, summed over resources, that the
       user's tasks alone would leave unused; so CPU-heavy tasks go to CPU-rich machines and
       tasks avoid machines with resources they do not need (GPUs);
    3. type index.

    It uses the first type in that order on which its task fits, and within the type the
    machine that is the tightest fit (best fit, the classic bin-packing rule): the least free
    capacity left after placing in the user's bottleneck resource on that type (its largest
    demand relative to the machine's capacity), then the least free capacity summed over
    resources (normalised by capacity), then the lowest machine index. Best fit fills
    partially used machines before opening empty ones, which keeps whole machines free for
    large tasks.

    Cost: one heap operation per task over users, and per task a scan of the distinct free
    vectors of one type (machines of a type with equal free capacity form one group).
    """
    _check_finite_demands(demands, caps)
    usable = _usable(types, demands)
    pool = _MachinePool(types, demands, usable, caps)
    records: dict[tuple[int, int], int] = {}
    users = np.arange(demands.shape[0], dtype=np.int64)
    _progressive(pool, share_per_task, weights, caps, initial, users, lambda u: 0.0, records)
    return _records_to_placement(records, (demands.shape[0], len(types.machine_type)))


# --------------------------------------------------------------------------------------------
# 2. per-machine DRF with whole tasks (TSF IV-B1; Choosy 4.1 with one resource)


def _fill_one_machine(
    capacity: FloatArray,
    users: IntArray,
    demands: FloatArray,
    step: FloatArray,
    limits: FloatArray,
) -> IntArray:
    """DRF Algorithm 1 on one machine, continued past users whose next task does not fit:
    tasks per user (aligned with ``users``), lowest weighted share first, ties by index."""
    free = capacity.astype(np.float64).copy()
    slack = fit_slack(capacity, demands)
    counts = np.zeros(len(users), dtype=np.int64)
    active = np.ones(len(users), dtype=np.bool_)
    mine = demands[users]
    may_jump = True  # the bound below only falls: once too small, it stays so

    def jump() -> bool:
        # The machine's tasks of a level fit together exactly when they fit one by one.
        nonlocal counts, free, may_jump
        x = counts.astype(np.float64)
        may_jump = may_jump and (
            tasks_that_may_fit(x, limits, active, free + slack, mine) >= JUMP_MIN_TASKS
        )
        if not may_jump:
            return False
        fits = partial(_within, base=x, demands=mine, room=free + slack)
        jumped = jump_to_level(x, step, limits, active, fits)
        if jumped is None:
            return False
        free = free - (jumped - x) @ mine
        counts = jumped.astype(np.int64)
        return True

    def queue() -> list[tuple[float, int, int]]:
        heap = [
            (rounded_level(float(counts[k] * step[k])), int(users[k]), k)
            for k in (int(v) for v in np.flatnonzero(active))
        ]
        heapq.heapify(heap)
        return heap

    jump()
    heap = queue()
    since = 0  # tasks handed out one at a time since the last try of a jump
    while heap:
        if since >= JUMP_MIN_TASKS:
            since = 0
            if jump():
                heap = queue()
        _, user, k = heapq.heappop(heap)
        demand = demands[user]
        if counts[k] + 1 > limits[k] + _FIT_TOL or np.any(demand > free + slack):
            active[k] = False
            continue
        free -= demand
        counts[k] += 1
        since += 1
        heapq.heappush(heap, (rounded_level(float(counts[k] * step[k])), user, k))
    return counts


def _first_binding_machine(
    before: Callable[[int], IntArray],
    lo: IntArray,
    p: int,
    n_machines: int,
    pattern: IntArray,
    room: FloatArray,
) -> int:
    """The first machine j >= p on which giving every machine from p its type's pattern
    would take a user past ``room``, or -1. Cumulative use only grows with j, so binary
    search applies."""

    def over(q: int) -> bool:
        return bool(np.any((before(q) - lo) @ pattern > room + _FIT_TOL))

    if not pattern.shape[1] or not over(n_machines):
        return -1
    low, high = p + 1, n_machines  # the first q with over(q) lies in (p, n_machines]
    while low < high:
        mid = (low + high) // 2
        if over(mid):
            high = mid
        else:
            low = mid + 1
    return low - 1


def per_machine_whole_tasks(
    types: MachineTypes,
    demands: FloatArray,
    share_per_task_per_type: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
) -> Placement:
    """Per-machine DRF with whole tasks (TSF section IV-B1; with one resource, Choosy's
    independent allocation, section 4.1).

    Each machine is divided on its own by DRF's progressive filling (DRF Algorithm 1),
    continued past users whose next task does not fit there, among the users that may use it
    and can fit a task on it. On a machine of type t, user i's share is
    ``tasks_on_that_machine * share_per_task_per_type[i, t] / weights[i]``; ties go to the
    lowest user index.

    Caps are global, and per-machine DRF has no notion of them, so machines are processed in
    index order and a user stops receiving tasks once its running total reaches ``caps[i]``
    (on the machine where that happens it takes part up to its remaining room). A capped user
    thus takes its tasks from the first machines in scenario order, and its room on later
    machines goes to the others there, which keeps the result maximal.

    Speed: while no cap binds, every machine of a type receives the same allocation, computed
    once per type. The first machine where a cap would bind is found by binary search over
    machine index (cumulative tasks per user are counts of machines per type times the
    per-type allocations); the machines before it get the per-type allocations in bulk, that
    machine is filled with the caps, and at least one user reaches its cap there, so there are
    at most ``users + 1`` such rounds. Only the allocations of types on which a newly capped
    user had tasks are recomputed (a user that gets nothing on a machine does not change what
    the others get there).
    """
    _check_finite_demands(demands, caps)
    n_users = demands.shape[0]
    n_machines = len(types.machine_type)
    n_types = len(types.count)
    usable = _usable(types, demands)
    step = np.asarray(
        np.where(usable, share_per_task_per_type / weights[:, None], 0.0), dtype=np.float64
    )
    members = _members_by_type(types)
    # machines of each type with index below q: one searchsorted over (type, index) keys
    keys = np.concatenate(
        [t * n_machines + members[t] for t in range(n_types)] or [np.zeros(0, np.int64)]
    ).astype(np.int64)
    starts = np.cumsum([0] + [len(m) for m in members[:-1]]).astype(np.int64)
    type_offsets = np.arange(n_types, dtype=np.int64) * n_machines

    def before(q: int) -> IntArray:
        return np.asarray(np.searchsorted(keys, type_offsets + q) - starts, dtype=np.int64)

    remaining = caps.astype(np.float64).copy()
    active = remaining >= 1 - _FIT_TOL
    finite = np.isfinite(remaining)
    pattern = np.zeros((n_types, n_users), dtype=np.int64)
    stale = np.ones(n_types, dtype=np.bool_)
    no_limit = np.full(n_users, np.inf)
    parts_users: list[IntArray] = []
    parts_machines: list[IntArray] = []
    parts_tasks: list[IntArray] = []

    def bulk(lo: IntArray, hi: IntArray) -> None:
        """Every machine between the counts ``lo`` and ``hi`` gets its type's pattern."""
        for t in np.flatnonzero(hi > lo):
            holders = np.flatnonzero(pattern[t])
            if not len(holders):
                continue
            machines = members[t][lo[t] : hi[t]]
            parts_users.append(np.tile(holders, len(machines)))
            parts_machines.append(np.repeat(machines, len(holders)))
            parts_tasks.append(np.tile(pattern[t, holders], len(machines)))
        remaining[:] -= (hi - lo) @ pattern

    p = 0
    while p < n_machines:
        lo = before(p)
        left = before(n_machines) - lo
        for t in np.flatnonzero(stale):
            stale[t] = False
            pattern[t] = 0
            who = np.flatnonzero(usable[:, t] & active)
            if left[t] and len(who):
                pattern[t, who] = _fill_one_machine(
                    types.capacity[t], who, demands, step[who, t], no_limit[who]
                )
        watched = np.flatnonzero(finite & active)
        j = _first_binding_machine(
            before, lo, p, n_machines, pattern[:, watched], remaining[watched]
        )
        if j < 0:
            bulk(lo, before(n_machines))
            break
        bulk(lo, before(j))
        kind = int(types.machine_type[j])
        who = np.flatnonzero(usable[:, kind] & active)
        counts = _fill_one_machine(
            types.capacity[kind], who, demands, step[who, kind], remaining[who]
        )
        placed = counts > 0
        parts_users.append(who[placed])
        parts_machines.append(np.full(int(placed.sum()), j, dtype=np.int64))
        parts_tasks.append(counts[placed])
        remaining[who] -= counts
        capped = active & (remaining < 1 - _FIT_TOL)
        stale |= (pattern[:, capped] > 0).any(axis=1)
        active &= ~capped
        p = j + 1
    if not parts_users:
        empty = np.zeros(0, dtype=np.int64)
        return _to_placement(empty, empty, empty.astype(np.float64), (n_users, n_machines))
    return _to_placement(
        np.concatenate(parts_users),
        np.concatenate(parts_machines),
        np.concatenate(parts_tasks).astype(np.float64),
        (n_users, n_machines),
    )


# --------------------------------------------------------------------------------------------
# 3. integral weighted CMMF on one resource (Choosy sections 4.2 and 5)


def _components(usable: BoolArray) -> tuple[IntArray, IntArray]:
    """Connected components of the user-type graph: labels for users and for types."""
    n_users, n_types = usable.shape
    user_label = np.full(n_users, -1, dtype=np.int64)
    type_label = np.full(n_types, -1, dtype=np.int64)
    label = 0
    for seed in range(n_users):
        if user_label[seed] >= 0:
            continue
        user_label[seed] = label
        frontier_users = np.array([seed])
        while len(frontier_users):
            reached = usable[frontier_users].any(axis=0) & (type_label < 0)
            type_label[reached] = label
            new_users = usable[:, reached].any(axis=1) & (user_label < 0)
            user_label[new_users] = label
            frontier_users = np.flatnonzero(new_users)
        label += 1
    type_label[type_label < 0] = np.arange(label, label + int((type_label < 0).sum()))
    return user_label, type_label


class _SlotFlow:
    """Users x types task counts for users that all share one task size per type: a type
    then holds ``count * floor(capacity / size)`` task slots, and whether a user can get one
    more task is an augmenting path in the bipartite flow graph (source -> user -> type ->
    sink) of Choosy section 5, found by breadth-first search. Moving one task of another user
    to a different type it may use is what a path does."""

    def __init__(self, usable: BoolArray, slots: IntArray, preferences: list[list[int]]) -> None:
        self.usable = usable
        self.flow = np.zeros(usable.shape, dtype=np.int64)
        self.spare = slots.copy()
        self.preferences = preferences
        self.cursor = [0] * usable.shape[0]
        self.reached = np.zeros(usable.shape[1], dtype=np.bool_)

    def add(self, user: int) -> bool:
        """Give ``user`` one more task, on a type with a free slot if it may use one (in its
        preference order), else by moving others' tasks along a shortest augmenting path."""
        preference = self.preferences[user]
        position = self.cursor[user]
        # A full type never frees up (paths only move tasks between full types), so skip it
        # for good.
        while position < len(preference) and self.spare[preference[position]] == 0:
            position += 1
        self.cursor[user] = position
        if position < len(preference):
            t = preference[position]
            self.flow[user, t] += 1
            self.spare[t] -= 1
            return True
        return self._augment(user)

    def add_many(self, user: int, tasks: int) -> int:
        """Give ``user`` up to ``tasks`` more tasks as that many :meth:`add` calls would when
        the free slots of its types suffice (each such call takes the first type in its
        preference order with a free slot); returns how many it got. A few are added one by
        one; what free slots cannot hold is left to :meth:`add`'s augmenting paths."""
        if tasks < JUMP_MIN_TASKS:
            got = 0
            while got < tasks and self.add(user):
                got += 1
            return got
        got = 0
        preference = self.preferences[user]
        position = self.cursor[user]
        while got < tasks and position < len(preference):
            t = preference[position]
            take = min(int(self.spare[t]), tasks - got)
            self.flow[user, t] += take
            self.spare[t] -= take
            got += take
            if self.spare[t] == 0:
                position += 1
        self.cursor[user] = position
        while got < tasks and self.add(user):
            got += 1
            if got >= JUMP_MIN_TASKS:  # the rest by a later jump or one by one
                break
        return got

    def _augment(self, user: int) -> bool:
        usable, flow, spare = self.usable, self.flow, self.spare
        n_users, n_types = usable.shape
        seen_users = np.zeros(n_users, dtype=np.bool_)
        seen_users[user] = True
        seen_types = np.zeros(n_types, dtype=np.bool_)
        via_user = np.full(n_types, -1, dtype=np.int64)  # who moves a task onto the type
        via_type = np.full(n_users, -1, dtype=np.int64)  # where a user moves a task from
        frontier = np.array([user], dtype=np.int64)
        while len(frontier):
            reach = usable[frontier] & ~seen_types
            new_types = np.flatnonzero(reach.any(axis=0))
            if not len(new_types):
                break
            via_user[new_types] = frontier[reach[:, new_types].argmax(axis=0)]
            seen_types[new_types] = True
            open_types = new_types[spare[new_types] > 0]
            if len(open_types):
                t = int(open_types[0])
                mover = int(via_user[t])
                flow[mover, t] += 1
                spare[t] -= 1
                while mover != user:
                    t = int(via_type[mover])
                    flow[mover, t] -= 1
                    mover = int(via_user[t])
                    flow[mover, t] += 1
                return True
            holders = (flow[:, new_types] > 0) & ~seen_users[:, None]
            frontier = np.flatnonzero(holders.any(axis=1))
            via_type[frontier] = new_types[holders[frontier].argmax(axis=1)]
            seen_users[frontier] = True
        self.reached = seen_types
        return False

    def stuck_with_last_failure(self) -> BoolArray:
        """Users whose types all lie in the closed, full set the last failed search reached:
        no augmenting path can start from them either, now or later."""
        return np.asarray(~(self.usable & ~self.reached).any(axis=1), dtype=np.bool_)


def _cmmf_by_flow(
    types: MachineTypes,
    capacity: FloatArray,
    size: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    initial: FloatArray,
    usable: BoolArray,
    users: IntArray,
    type_ids: IntArray,
    type_size: FloatArray,
    records: dict[tuple[int, int], int],
) -> None:
    """Exact integral weighted CMMF for ``users``, each of whose usable types (``type_ids``)
    is used by one task size only (``type_size``); ``capacity`` is one machine's amount of the
    resource, per type."""
    local = usable[np.ix_(users, type_ids)]
    per_machine = np.floor(capacity[type_ids] / type_size + _FIT_TOL).astype(np.int64)
    slots = per_machine * types.count[type_ids]
    contention = local.sum(axis=0)
    preferences = []
    for row in range(len(users)):
        candidates = np.flatnonzero(local[row])
        order = np.lexsort((candidates, contention[candidates]))
        preferences.append([int(t) for t in candidates[order]])
    flow = _SlotFlow(local, slots, preferences)
    whole = np.floor(initial[users] + _FIT_TOL).astype(np.int64)
    for row in range(len(users)):
        placed = 0
        while placed < whole[row]:
            more = flow.add_many(row, int(whole[row]) - placed)
            placed += more
            if not more:
                raise InvalidRequest(
                    f"users[{int(users[row])}].min_share",
                    f"the minimum shares do not fit on the machines this user may use: only "
                    f"{placed} of its {int(whole[row])} guaranteed tasks fit together with "
                    "the other users' guarantees; lower the minimum shares",
                )
    tasks = [int(v) for v in whole]
    step = [float(size[u] / weights[u]) for u in users]
    limit = [float(caps[u]) + _FIT_TOL for u in users]
    frozen = np.zeros(len(users), dtype=np.bool_)
    dropped = np.zeros(len(users), dtype=np.bool_)
    steps = np.asarray(size[users] / weights[users], dtype=np.float64)

    def queue() -> list[tuple[float, float, int]]:
        heap = [
            (rounded_level(tasks[r] * step[r]), -step[r], r)
            for r in (int(v) for v in np.flatnonzero(~(frozen | dropped)))
        ]
        heapq.heapify(heap)
        return heap

    may_jump = _jump_slots(flow, tasks, steps, caps[users], ~(frozen | dropped)) is not None
    heap = queue()
    since = 0  # tasks handed out one at a time since the last try of a jump
    while heap:
        if may_jump and since >= JUMP_MIN_TASKS:
            since = 0  # the bound _jump_slots checks only falls: once too small, it stays so
            jumped = _jump_slots(flow, tasks, steps, caps[users], ~(frozen | dropped))
            may_jump = jumped is not None
            if jumped:
                heap = queue()
        _, _, row = heapq.heappop(heap)
        if frozen[row] or tasks[row] + 1 > limit[row]:
            dropped[row] = True
        elif flow.add(row):
            tasks[row] += 1
            since += 1
            heapq.heappush(heap, (rounded_level(tasks[row] * step[row]), -step[row], row))
        else:
            frozen |= flow.stuck_with_last_failure()
            dropped[row] = True
    # Lay the tasks of each type onto its machines: users in index order, machines in index
    # order, each machine filled to its slots before the next (every slot holds one task).
    members = _members_by_type(types)
    for column, kind in enumerate(type_ids):
        machines = members[int(kind)]
        slots_each = int(per_machine[column])
        machine_at, used = 0, 0
        for holder in np.flatnonzero(flow.flow[:, column]):
            count = int(flow.flow[holder, column])
            while count:
                take = min(count, slots_each - used)
                key = (int(users[holder]), int(machines[machine_at]))
                records[key] = records.get(key, 0) + take
                count -= take
                used += take
                if used == slots_each:
                    machine_at, used = machine_at + 1, 0


def _jump_slots(
    flow: _SlotFlow, tasks: list[int], steps: FloatArray, caps: FloatArray, active: BoolArray
) -> bool | None:
    """Jumps of the level (``progressive.jump_to_level``) for :func:`_cmmf_by_flow`, while
    they hand out many tasks: a level whose extra tasks take at most half the free slots
    in all and at most half of those of each user's types, given in one go per user (in
    index order) from free slots; a user that gets fewer is left to one task at a time."""
    jumped_once = False
    while True:
        x = np.asarray(tasks, dtype=np.float64)
        spare = flow.spare.astype(np.float64)
        own = np.asarray(flow.usable @ spare, dtype=np.float64)
        total = float(spare.sum())
        if float(np.minimum(own, caps - x)[active].sum()) < JUMP_MIN_TASKS:
            return True if jumped_once else None

        def fits(
            counts: FloatArray, x: FloatArray = x, own: FloatArray = own, total: float = total
        ) -> bool:
            extra = counts - x
            return bool(extra.sum() <= total / 2 and np.all(extra <= own / 2))

        jumped = jump_to_level(x, steps, caps, active, fits)
        if jumped is None:
            return jumped_once
        jumped_once = True
        for row in (int(v) for v in np.flatnonzero(jumped > x)):
            want = int(jumped[row] - x[row])
            got = flow.add_many(row, want)
            tasks[row] += got
            if got < want:
                return True


def cmmf_whole_tasks(
    types: MachineTypes,
    demands: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    initial: FloatArray,
) -> Placement:
    """Integral weighted constrained max-min fairness on one resource (Choosy section 4.2,
    4.2.1; section 5's progressive filling with the network-flow step for non-divisible
    resources).

    The quantity equalised is user i's amount of the resource, ``tasks_i * demand_i`` (Choosy's
    "number of machines" when a task takes one machine), weighted: ``tasks_i * demand_i / w_i``.
    ``initial`` whole tasks (minimum shares) are guaranteed first.

    Level rounding (weighted). The common level L rises continuously; user i's k-th extra task
    is granted when L reaches its weighted share before that task, ``k * demand_i / w_i``, so
    at level L it holds ``floor(w_i * L / demand_i) + 1`` tasks (within its cap and what the
    machines allow), i.e. the task goes to whoever is currently worst off. Among users at the
    same level the one whose task raises it most (largest ``demand_i / w_i``) goes first,
    then the lowest index. A user whose next task is infeasible is frozen for good (Choosy's
    saturation test; infeasibility persists because the others only grow).

    Exact when every machine type is used by one task size (in particular Choosy's model:
    every task takes one slot or one machine). The feasible task-count vectors are then the
    integer points of a polymatroid (a bipartite transportation problem with caps), where the
    greedy that raises the lowest weighted share first with the tie rule above maximises
    every separable concave utility of the shares (Federgruen and Groenevelt, 1986), hence
    the leximin vector of weighted shares: the CMMF allocation. Feasibility of one more task
    is an augmenting path in the flow graph source -> user (its target in tasks) -> type
    (eligibility) -> sink (the type's task slots): each step is one augmentation of
    Ford-Fulkerson on the same network, not a new max-flow, and a failed search freezes every
    user whose types all lie in the full set it explored. Tasks are then laid onto the type's
    machines slot by slot, which always fits.

    When users of different task sizes share a machine type (a connected component of the
    user-type graph with several sizes), deciding whether whole tasks fit is bin packing, so
    those users are allocated by the same level order with direct placement and no moving of
    others' tasks (the placement rule of :func:`progressive_whole_tasks`): feasible and
    maximal, but not guaranteed leximin-optimal.
    """
    used = np.flatnonzero((demands > 0).any(axis=0))
    if len(used) > 1:
        raise InvalidRequest(
            "--policy",
            f"cmmf shares a single resource, but the users demand {len(used)} resources; "
            "use tsf, drfh or cdrf for several resources",
        )
    _check_finite_demands(demands, caps)
    n_users = demands.shape[0]
    shape = (n_users, len(types.machine_type))
    resource = int(used[0]) if len(used) else 0
    size = np.asarray(demands[:, resource], dtype=np.float64)
    usable = _usable(types, demands) & (size > 0)[:, None]
    user_label, type_label = _components(usable)
    records: dict[tuple[int, int], int] = {}
    exact = np.zeros(n_users, dtype=np.bool_)
    for label in np.unique(user_label):
        members = user_label == label
        exact[members] = len(np.unique(size[members & usable.any(axis=1)])) <= 1
    exact_users = np.flatnonzero(exact)
    if len(exact_users):
        exact_types = np.flatnonzero(np.isin(type_label, user_label[exact_users]))
        type_size = np.ones(len(exact_types))
        for column, t in enumerate(exact_types):
            holders = np.flatnonzero(usable[exact_users, t])
            if len(holders):
                type_size[column] = size[exact_users[holders[0]]]
        _cmmf_by_flow(
            types,
            types.capacity[:, resource],
            size,
            weights,
            caps,
            initial,
            usable,
            exact_users,
            exact_types,
            type_size,
            records,
        )
    mixed_users = np.flatnonzero(~exact)
    if len(mixed_users):
        mixed_usable = usable & ~exact[:, None]
        pool = _MachinePool(types, demands, mixed_usable, caps)
        jump = size / weights
        _progressive(
            pool,
            size,
            weights,
            caps,
            initial,
            mixed_users,
            lambda u: -round(float(jump[u]), _DIGITS),
            records,
        )
    return _records_to_placement(records, shape)
