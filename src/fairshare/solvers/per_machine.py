"""Per-machine DRF with whole tasks (TSF section IV-B1); with one resource, Choosy's
independent allocation (Choosy section 4.1).

Each machine is divided on its own by DRF's progressive filling (DRF Algorithm 1), continued
past users whose next task does not fit there; caps are global, so machines are taken in index
order and a user stops once its running total reaches its cap. The divisible version is
:func:`fairshare.solvers.constrained.per_machine_filling`; the shared machinery of the
whole-task allocators is :mod:`fairshare.solvers.machine_pool`.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from functools import partial

import numpy as np

from fairshare.allocation.types import IntArray, Placement
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.levels import (
    JUMP_MIN_TASKS,
    fit_slack,
    jump_to_level,
    rounded_level,
    tasks_that_may_fit,
)
from fairshare.solvers.machine_pool import (
    FIT_TOL,
    QueueCaps,
    check_finite_demands,
    members_by_type,
    to_placement,
    usable_types,
    within,
)
from fairshare.workload.eligibility import MachineTypes


def per_machine_whole_tasks(
    types: MachineTypes,
    demands: FloatArray,
    share_per_task_per_type: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    queues: QueueCaps | None = None,
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
    machines goes to the others there, which keeps the result maximal. Capped queues
    (``queues``) are global caps too, kept the same way: on the machine where a queue would
    pass its cap, a user whose next task would is set aside there (as at its own cap), and
    every user below the full queue stops.

    Speed: while no cap binds, every machine of a type receives the same allocation, computed
    once per type. The first machine where a cap would bind is found by binary search over
    machine index (cumulative tasks per user are counts of machines per type times the
    per-type allocations); the machines before it get the per-type allocations in bulk, that
    machine is filled with the caps, and at least one user reaches its cap there, so there are
    at most ``users + 1`` such rounds. Only the allocations of types on which a newly capped
    user had tasks are recomputed (a user that gets nothing on a machine does not change what
    the others get there).

    Parameters
    ----------
    types : MachineTypes
        The machine types, who may use them, and each machine's type.
    demands : FloatArray
        users x resources, per task.
    share_per_task_per_type : FloatArray
        users x types: what one task on a machine of the type adds to the user's share there
        (DRF: its dominant share of the machine).
    weights : FloatArray
        Per user; the share is divided by it.
    caps : FloatArray
        Per user, the most tasks it may hold over all machines (may be infinite).
    queues : QueueCaps, optional
        The capped queues (booked in place); none by default.

    Returns
    -------
    Placement
        Whole tasks per (user, machine): feasible, within ``caps`` and every queue's cap,
        and maximal.

    Raises
    ------
    ValueError
        A user demands nothing per task and has no cap.

    Examples
    --------
    Two machines <9 CPUs, 18 GB>; A (<1 CPU, 4 GB>) may use both, B (<3 CPUs, 1 GB>) only the
    first. The first is shared as DRF section 4.1 shares it (3 and 2 tasks), the second is A's.

    >>> types = MachineTypes(
    ...     machine_type=np.array([0, 1]), capacity=np.array([[9.0, 18.0], [9.0, 18.0]]),
    ...     count=np.array([1, 1]), eligible=np.array([[True, True], [True, False]]),
    ... )
    >>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
    >>> share = np.tile((demands / np.array([9.0, 18.0])).max(axis=1)[:, None], (1, 2))
    >>> placement = per_machine_whole_tasks(
    ...     types, demands, share, np.ones(2), np.full(2, np.inf)
    ... )
    >>> placement.toarray().tolist()
    [[3.0, 4.0], [2.0, 0.0]]
    """
    check_finite_demands(demands, caps)
    n_users = demands.shape[0]
    n_machines = len(types.machine_type)
    n_types = len(types.count)
    usable = usable_types(types, demands)
    step = np.asarray(
        np.where(usable, share_per_task_per_type / weights[:, None], 0.0), dtype=np.float64
    )
    members = members_by_type(types)
    # machines of each type with index below q: one searchsorted over (type, index) keys
    keys = np.concatenate(
        [t * n_machines + members[t] for t in range(n_types)] or [np.zeros(0, np.int64)]
    ).astype(np.int64)
    starts = np.cumsum([0] + [len(m) for m in members[:-1]]).astype(np.int64)
    type_offsets = np.arange(n_types, dtype=np.int64) * n_machines

    def before(q: int) -> IntArray:
        return np.asarray(np.searchsorted(keys, type_offsets + q) - starts, dtype=np.int64)

    if queues is None:
        queues = QueueCaps((), np.zeros(0), n_users)
    in_queues = queues

    def allowed() -> BoolArray:
        return np.fromiter((in_queues.allows(u) for u in range(n_users)), np.bool_, n_users)

    remaining = caps.astype(np.float64).copy()
    active = (remaining >= 1 - FIT_TOL) & allowed()
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
        given = (hi - lo) @ pattern
        remaining[:] -= given
        for user in np.flatnonzero(given):
            in_queues.add(int(user), int(given[user]))

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
        # the capped queues' use grows with their users' (a column each, summed)
        queue_pattern = np.array(
            [pattern[:, below].sum(axis=1) for below in queues.members], dtype=np.int64
        ).reshape(len(queues.members), n_types)
        queue_room = np.array(queues.limits, dtype=np.float64) - np.array(queues.held)
        j = _first_binding_machine(
            before,
            lo,
            p,
            n_machines,
            np.hstack((pattern[:, watched], queue_pattern.T)),
            np.concatenate((remaining[watched], queue_room)),
        )
        if j < 0:
            bulk(lo, before(n_machines))
            break
        bulk(lo, before(j))
        kind = int(types.machine_type[j])
        who = np.flatnonzero(usable[:, kind] & active)
        counts = _fill_one_machine(
            types.capacity[kind], who, demands, step[who, kind], remaining[who], queues
        )
        placed = counts > 0
        parts_users.append(who[placed])
        parts_machines.append(np.full(int(placed.sum()), j, dtype=np.int64))
        parts_tasks.append(counts[placed])
        remaining[who] -= counts
        capped = active & ((remaining < 1 - FIT_TOL) | ~allowed())
        stale |= (pattern[:, capped] > 0).any(axis=1)
        active &= ~capped
        p = j + 1
    if not parts_users:
        empty = np.zeros(0, dtype=np.int64)
        return to_placement(empty, empty, empty.astype(np.float64), (n_users, n_machines))
    return to_placement(
        np.concatenate(parts_users),
        np.concatenate(parts_machines),
        np.concatenate(parts_tasks).astype(np.float64),
        (n_users, n_machines),
    )


def _fill_one_machine(
    capacity: FloatArray,
    users: IntArray,
    demands: FloatArray,
    step: FloatArray,
    limits: FloatArray,
    queues: QueueCaps | None = None,
) -> IntArray:
    """DRF Algorithm 1 on one machine, continued past users whose next task does not fit:
    tasks per user (aligned with ``users``), lowest weighted share first, ties by index.
    With ``queues`` (booked in place), a user whose next task would take a queue above it
    past its cap is set aside too."""
    if queues is None:
        queues = QueueCaps((), np.zeros(0), int(users.max(initial=-1)) + 1)
    in_queues = queues
    everyone = len(in_queues.above)
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
        inside = partial(within, base=x, demands=mine, room=free + slack)

        def fits(local: FloatArray) -> bool:
            extra = np.zeros(everyone)
            extra[users] = local - x
            return inside(local) and in_queues.within(extra, np.zeros(everyone))

        room = in_queues.headroom(np.zeros(everyone))[users]
        jumped = jump_to_level(x, step, np.minimum(limits, x + room), active, fits)
        if jumped is None:
            return False
        free = free - (jumped - x) @ mine
        for k in np.flatnonzero(jumped > x):
            in_queues.add(int(users[k]), int(jumped[k] - x[k]))
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
        if (
            counts[k] + 1 > limits[k] + FIT_TOL
            or not in_queues.allows(user)
            or np.any(demand > free + slack)
        ):
            active[k] = False
            continue
        free -= demand
        counts[k] += 1
        in_queues.add(user, 1)
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
        return bool(np.any((before(q) - lo) @ pattern > room + FIT_TOL))

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
