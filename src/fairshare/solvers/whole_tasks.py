"""Progressive filling with whole tasks placed on individual machines (TSF section V-D's online
rule applied offline; TSF, CDRF and DRFH with ``--integral``).

The divisible solvers call the whole-task allocators for ``--integral`` (SPEC section 2: whole
tasks, and maximal: no user can be given one more task without exceeding a capacity or its own
limits). Every result is a :class:`Placement`: tasks per (user, machine), only on machines the
user may use, no machine over capacity, no user above ``caps``. There are three:

- :func:`progressive_whole_tasks` (here): progressive filling one whole task at a time, the
  online rule of TSF section V-D ("serve users in ascending order of task shares", keep going
  until no more task can be scheduled) applied offline to an empty cluster. TSF, CDRF and DRFH
  use it with their own share of one task; :func:`fill_whole_tasks` is its loop, which integral
  CMMF reuses where flows cannot decide.
- :func:`~fairshare.solvers.per_machine.per_machine_whole_tasks`: per-machine DRF (TSF section
  IV-B1); with one resource, Choosy's independent allocation (Choosy section 4.1).
- :func:`~fairshare.solvers.cmmf_flow.cmmf_whole_tasks`: integral weighted CMMF on one
  resource by network flow (Choosy sections 4.2 and 5).

Where a task goes, and the machines' free capacity, are :mod:`fairshare.solvers.machine_pool`.
Shares are compared after rounding (``rounded_level``) so that equal shares reached by
different float paths tie, and ties go to the user first in scenario order.

Jumps: like :func:`~fairshare.solvers.progressive.progressive_fill`, the progressive loops
hand out every task below a level at once when that is thousands of tasks
(:func:`~fairshare.solvers.levels.jump_to_level`), so the time does not grow with the
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
from fairshare.solvers.levels import (
    JUMP_MIN_TASKS,
    FitTest,
    jump_to_level,
    rounded_level,
    tasks_that_may_fit,
)
from fairshare.solvers.machine_pool import (
    FIT_TOL,
    MachinePool,
    QueueCaps,
    check_finite_demands,
    records_to_placement,
    usable_types,
    within,
)
from fairshare.workload.eligibility import MachineTypes

TieBreak = Callable[[int], float]
"""A user's rank among users at the same level (lower first), before its index."""


def progressive_whole_tasks(
    types: MachineTypes,
    demands: FloatArray,
    share_per_task: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    initial: FloatArray,
    queues: QueueCaps | None = None,
) -> Placement:
    """Whole-task progressive filling with per-machine placement (TSF section V-D's online
    algorithm applied offline to an empty cluster; TSF section V-B is its divisible ideal).

    User i's weighted share is ``tasks_i * share_per_task[i] / weights[i]``. The ``initial``
    whole tasks (minimum shares) are placed first, largest tasks first; if one does not fit,
    :class:`InvalidRequest` names the user. Then, repeatedly, the user with the lowest weighted
    share (ties: lowest index) that is below ``caps[i]`` gets one task, on a machine chosen by
    the rule below. A user whose next task fits on no machine it may use, or would take a
    capped queue above it past its ``max_share`` (``queues``), is set aside for good
    (resources are only consumed, queues only fill), and the others continue, so the result
    is maximal.

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

    Parameters
    ----------
    types : MachineTypes
        The machine types, who may use them, and each machine's type.
    demands : FloatArray
        users x resources, per task.
    share_per_task : FloatArray
        Per user, what one task adds to its share (TSF: ``1 / h_i``).
    weights : FloatArray
        Per user; the share is divided by it.
    caps : FloatArray
        Per user, the most tasks it may hold (may be infinite).
    initial : FloatArray
        Per user, its guaranteed whole tasks (minimum shares).
    queues : QueueCaps, optional
        The capped queues (none when omitted).

    Returns
    -------
    Placement
        Whole tasks per (user, machine): feasible, within ``caps`` and the queues' caps, and
        maximal.

    Raises
    ------
    InvalidRequest
        The guaranteed tasks do not fit on the machines.
    ValueError
        A user demands nothing per task and has no cap.

    Examples
    --------
    DRF section 4.1 on one machine <9 CPUs, 18 GB>: A's tasks need <1 CPU, 4 GB>, B's <3 CPUs,
    1 GB>; with dominant shares per task, A gets 3 tasks and B 2.

    >>> types = MachineTypes(
    ...     machine_type=np.array([0]), capacity=np.array([[9.0, 18.0]]), count=np.array([1]),
    ...     eligible=np.ones((2, 1), dtype=np.bool_),
    ... )
    >>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
    >>> share = (demands / np.array([9.0, 18.0])).max(axis=1)
    >>> placement = progressive_whole_tasks(
    ...     types, demands, share, np.ones(2), np.full(2, np.inf), np.zeros(2)
    ... )
    >>> placement.per_user().tolist()
    [3.0, 2.0]
    """
    check_finite_demands(demands, caps)
    usable = usable_types(types, demands)
    pool = MachinePool(types, demands, usable, caps)
    records: dict[tuple[int, int], int] = {}
    users = np.arange(demands.shape[0], dtype=np.int64)
    if queues is None:
        queues = QueueCaps((), np.zeros(0), demands.shape[0])
    fill_whole_tasks(
        pool, share_per_task, weights, caps, initial, users, lambda u: 0.0, records, queues
    )
    return records_to_placement(records, (demands.shape[0], len(types.machine_type)))


def fill_whole_tasks(
    pool: MachinePool,
    share_per_task: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    initial: FloatArray,
    users: IntArray,
    tie: TieBreak,
    records: dict[tuple[int, int], int],
    queues: QueueCaps,
) -> None:
    """Place ``initial`` (first-fit decreasing), then progressive filling over ``users``: the
    lowest weighted share first (then ``tie``, then the lowest index), one whole task at a
    time, setting aside for good a user whose next task fits nowhere or breaks a cap (its
    own or a queue's).

    Parameters
    ----------
    pool : MachinePool
        The machines' free capacity, consumed in place.
    share_per_task, weights, caps, initial : FloatArray
        Per user, as for :func:`progressive_whole_tasks`.
    users : IntArray
        The users to fill (the others are left alone).
    tie : TieBreak
        The rank among users at the same level, before the index.
    records : dict of (int, int) to int
        Tasks per (user, machine), updated in place.
    queues : QueueCaps
        The capped queues, booked in place (they may hold users outside ``users``).

    Raises
    ------
    InvalidRequest
        The guaranteed tasks do not fit on the machines.
    """
    demands = pool.demands
    tasks = [0] * len(caps)

    def put(user: int) -> bool:
        machine = pool.place(user)
        if machine < 0:
            return False
        tasks[user] += 1
        queues.add(user, 1)
        key = (user, machine)
        records[key] = records.get(key, 0) + 1
        return True

    whole = np.floor(initial + FIT_TOL).astype(np.int64)
    size = np.asarray(demands.max(axis=1), dtype=np.float64)
    # First-fit decreasing: the classic packing order (largest items first) for the guaranteed
    # tasks, so that minimum shares that fit together are rarely refused.
    for user in sorted((int(u) for u in users), key=lambda u: (-float(size[u]), u)):
        placed = tasks[user] = pool.place_many(user, int(whole[user]), records)
        queues.add(user, placed)
        if placed < whole[user]:
            raise InvalidRequest(
                f"users[{user}].min_share",
                f"the minimum shares do not fit on the machines as whole tasks: only {placed} "
                f"of this user's {int(whole[user])} guaranteed tasks could be placed "
                "(placed largest tasks first); lower the minimum shares",
            )
    step = [float(share_per_task[u]) / float(weights[u]) for u in range(len(caps))]
    limit = [float(c) + FIT_TOL for c in caps]
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

    may_jump = _jump(pool, tasks, steps, caps, active, records, queues) is not None
    heap = queue()
    since = 0  # tasks handed out one at a time since the last try of a jump
    while heap:
        if may_jump and since >= JUMP_MIN_TASKS:
            since = 0  # the bound _jump checks only falls: once too small, it stays so
            jumped = _jump(pool, tasks, steps, caps, active, records, queues)
            may_jump = jumped is not None
            if jumped:
                heap = queue()
        _, _, user = heapq.heappop(heap)
        if tasks[user] + 1 > limit[user] or not queues.allows(user) or not put(user):
            active[user] = False
            continue
        since += 1
        heapq.heappush(heap, (rounded_level(tasks[user] * step[user]), tie(user), user))


def _jump(
    pool: MachinePool,
    tasks: list[int],
    steps: FloatArray,
    caps: FloatArray,
    active: BoolArray,
    records: dict[tuple[int, int], int],
    queues: QueueCaps,
) -> bool | None:
    """Jumps of the level (``levels.jump_to_level``) for :func:`fill_whole_tasks`, repeated
    while they hand out many tasks. Whether the tasks of a level fit on the machines is bin
    packing, so a jump takes a level whose tasks need at most half the free capacity of each
    resource, summed over the machines, and places each user's tasks in one go (users in
    index order, each as its own tasks one by one would go); a user whose tasks do not all
    fit is set aside, as one task at a time would set it aside at its first task that fits
    nowhere. Each jump halves the free capacity at most, so there are about log2(tasks) of
    them; what is left is handed out one task at a time. Returns whether it jumped, or None
    when too few tasks may still fit for any later jump. A jump keeps every capped queue
    within its ``max_share``, and a user under a full queue is set aside first, as the walk
    would set it aside at its turn (else no level above it would fit).

    What is guaranteed: the result is feasible, within every cap, maximal (a user is set
    aside only when its next task fits on no machine it may use) and whole; a jump hands
    each user exactly the tasks it would get below the jump's level one task at a time
    (the fairness order is kept), but places them user after user rather than interleaved,
    so machines fill in another order and a later task may fit elsewhere or not at all:
    the final allocation can differ from one task at a time's (on the random problems of
    tests/test_limits.py 41 of 84 runs differ, one user by up to 16% of its tasks). A pooled
    policy's jumps (:mod:`fairshare.solvers.levels`) are exact."""
    jumped_once = False
    while True:
        x = np.asarray(tasks, dtype=np.float64)
        if float((caps[active] - x[active]).sum()) < JUMP_MIN_TASKS:
            return None  # the caps leave too few tasks (cheaper than free_total)
        room = 0.5 * np.maximum(pool.free_total(), 0.0)
        if tasks_that_may_fit(x, caps, active, room, pool.demands) < JUMP_MIN_TASKS:
            return None if not jumped_once else True
        for user in np.flatnonzero(active):
            if not queues.allows(int(user)):
                active[user] = False
        inside = partial(within, base=x, demands=pool.demands, room=room)

        def fits(counts: FloatArray, x: FloatArray = x, inside: FitTest = inside) -> bool:
            return inside(counts) and queues.within(counts, x)

        limit = np.minimum(caps, queues.headroom(x))
        jumped = jump_to_level(x, steps, limit, active, fits)
        if jumped is None:
            return jumped_once
        jumped_once = True
        for user in np.flatnonzero(jumped > x):
            want = int(jumped[user] - x[user])
            got = pool.place_many(int(user), want, records)
            tasks[user] += got
            queues.add(int(user), got)
            if got < want:
                active[user] = False
