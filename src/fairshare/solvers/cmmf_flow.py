"""Integral weighted constrained max-min fairness on one resource by network flow (Choosy
sections 4.2 and 5, "Algorithm for Non-Divisible Resources").

Progressive filling in whole tasks whose feasibility test is a bipartite flow between users
and machine types (:func:`cmmf_whole_tasks`): one more task for a user is an augmenting path,
one step of Ford-Fulkerson on the same network. Users of different task sizes that share a
machine type are bin packing instead, and are filled with direct placement by
:func:`fairshare.solvers.whole_tasks.fill_whole_tasks`. The reference schedulers of Choosy
section 7 (:mod:`fairshare.sim.reference`) solve their exact allocations with it.
"""

from __future__ import annotations

import heapq

import numpy as np

from fairshare.allocation.types import IntArray, Placement
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.errors import InvalidRequest
from fairshare.solvers.levels import JUMP_MIN_TASKS, jump_to_level, rounded_level
from fairshare.solvers.machine_pool import (
    DIGITS,
    FIT_TOL,
    MachinePool,
    QueueCaps,
    check_finite_demands,
    members_by_type,
    records_to_placement,
    usable_types,
)
from fairshare.solvers.whole_tasks import fill_whole_tasks
from fairshare.workload.eligibility import MachineTypes


def cmmf_whole_tasks(
    types: MachineTypes,
    demands: FloatArray,
    weights: FloatArray,
    caps: FloatArray,
    initial: FloatArray,
    queues: QueueCaps | None = None,
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
    others' tasks (the placement rule of
    :func:`~fairshare.solvers.whole_tasks.progressive_whole_tasks`): feasible and maximal, but
    not guaranteed leximin-optimal.

    Capped queues (``queues``): a user whose next task would take a queue above it past its
    ``max_share`` is set aside for good, as at its own cap (queues only fill). The users of
    the flow's components are filled before the mixed ones, so a queue holding both is
    filled by the first in that order: within every cap and maximal, not leximin across
    the two.

    Parameters
    ----------
    types : MachineTypes
        The machine types, who may use them, and each machine's type.
    demands : FloatArray
        users x resources, per task; at most one resource may be demanded.
    weights : FloatArray
        Per user; the amount is divided by it.
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
        The users demand several resources, or the guaranteed tasks do not fit.
    ValueError
        A user demands nothing per task and has no cap.

    Examples
    --------
    Choosy Figure 1 with whole machines (Figure 4): u1 gets 2 machines, u2 1, u3 3, u4 4.

    >>> usable = np.array(
    ...     [[1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1]],
    ...     dtype=np.bool_,
    ... )
    >>> count = np.array([1, 1, 1, 1, 4, 2])
    >>> types = MachineTypes(
    ...     machine_type=np.repeat(np.arange(6), count), capacity=np.ones((6, 1)),
    ...     count=count, eligible=usable,
    ... )
    >>> placement = cmmf_whole_tasks(
    ...     types, np.ones((4, 1)), np.ones(4), np.full(4, np.inf), np.zeros(4)
    ... )
    >>> placement.per_user().tolist()
    [2.0, 1.0, 3.0, 4.0]
    """
    used = np.flatnonzero((demands > 0).any(axis=0))
    if len(used) > 1:
        raise InvalidRequest(
            "policy",
            f"cmmf shares a single resource, but the users demand {len(used)} resources; "
            "use tsf, drfh or cdrf for several resources",
        )
    check_finite_demands(demands, caps)
    n_users = demands.shape[0]
    if queues is None:
        queues = QueueCaps((), np.zeros(0), n_users)
    shape = (n_users, len(types.machine_type))
    resource = int(used[0]) if len(used) else 0
    size = np.asarray(demands[:, resource], dtype=np.float64)
    usable = usable_types(types, demands) & (size > 0)[:, None]
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
            queues,
        )
    mixed_users = np.flatnonzero(~exact)
    if len(mixed_users):
        mixed_usable = usable & ~exact[:, None]
        pool = MachinePool(types, demands, mixed_usable, caps)
        jump = size / weights
        fill_whole_tasks(
            pool,
            size,
            weights,
            caps,
            initial,
            mixed_users,
            lambda u: -round(float(jump[u]), DIGITS),
            records,
            queues,
        )
    return records_to_placement(records, shape)


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
        """One more task for ``user`` along an augmenting path (breadth first: users
        moving a task to another type make room); False, with the types it reached kept in
        ``reached``, when there is none."""
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
    queues: QueueCaps,
) -> None:
    """Exact integral weighted CMMF for ``users``, each of whose usable types (``type_ids``)
    is used by one task size only (``type_size``); ``capacity`` is one machine's amount of the
    resource, per type; ``queues`` are booked as the tasks are given."""
    local = usable[np.ix_(users, type_ids)]
    per_machine = np.floor(capacity[type_ids] / type_size + FIT_TOL).astype(np.int64)
    slots = per_machine * types.count[type_ids]
    contention = local.sum(axis=0)
    preferences = []
    for row in range(len(users)):
        candidates = np.flatnonzero(local[row])
        order = np.lexsort((candidates, contention[candidates]))
        preferences.append([int(t) for t in candidates[order]])
    flow = _SlotFlow(local, slots, preferences)
    whole = np.floor(initial[users] + FIT_TOL).astype(np.int64)
    for row in range(len(users)):
        placed = 0
        while placed < whole[row]:
            more = flow.add_many(row, int(whole[row]) - placed)
            queues.add(int(users[row]), more)
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
    limit = [float(caps[u]) + FIT_TOL for u in users]
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

    may_jump = (
        _jump_slots(flow, tasks, steps, caps[users], ~(frozen | dropped), queues, users) is not None
    )
    heap = queue()
    since = 0  # tasks handed out one at a time since the last try of a jump
    while heap:
        if may_jump and since >= JUMP_MIN_TASKS:
            since = 0  # the bound _jump_slots checks only falls: once too small, it stays so
            jumped = _jump_slots(
                flow, tasks, steps, caps[users], ~(frozen | dropped), queues, users
            )
            may_jump = jumped is not None
            if jumped:
                heap = queue()
        _, _, row = heapq.heappop(heap)
        if frozen[row] or tasks[row] + 1 > limit[row] or not queues.allows(int(users[row])):
            dropped[row] = True
        elif flow.add(row):
            tasks[row] += 1
            queues.add(int(users[row]), 1)
            since += 1
            heapq.heappush(heap, (rounded_level(tasks[row] * step[row]), -step[row], row))
        else:
            frozen |= flow.stuck_with_last_failure()
            dropped[row] = True
    # Lay the tasks of each type onto its machines: users in index order, machines in index
    # order, each machine filled to its slots before the next (every slot holds one task).
    members = members_by_type(types)
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
    flow: _SlotFlow,
    tasks: list[int],
    steps: FloatArray,
    caps: FloatArray,
    active: BoolArray,
    queues: QueueCaps,
    users: IntArray,
) -> bool | None:
    """Jumps of the level (``levels.jump_to_level``) for :func:`_cmmf_by_flow`, while
    they hand out many tasks: a level whose extra tasks take at most half the free slots
    in all and at most half of those of each user's types, given in one go per user (in
    index order) from free slots; a user that gets fewer is left to one task at a time.
    The extra tasks keep every capped queue within its ``max_share``; a user under a full
    queue is left to the walk, which sets it aside (``active`` is the caller's, not
    changed here)."""
    jumped_once = False
    while True:
        x = np.asarray(tasks, dtype=np.float64)
        open_ = active & np.array([queues.allows(int(u)) for u in users], dtype=np.bool_)
        spare = flow.spare.astype(np.float64)
        own = np.asarray(flow.usable @ spare, dtype=np.float64)
        total = float(spare.sum())
        if float(np.minimum(own, caps - x)[open_].sum()) < JUMP_MIN_TASKS:
            return True if jumped_once else None
        everyone = np.zeros(len(queues.above))
        everyone[users] = x
        headroom = queues.headroom(everyone)[users]

        def fits(
            counts: FloatArray,
            x: FloatArray = x,
            own: FloatArray = own,
            total: float = total,
            everyone: FloatArray = everyone,
        ) -> bool:
            extra = counts - x
            if not (extra.sum() <= total / 2 and np.all(extra <= own / 2)):
                return False
            after = everyone.copy()
            after[users] += extra
            return queues.within(after, everyone)

        jumped = jump_to_level(x, steps, np.minimum(caps, headroom), open_, fits)
        if jumped is None:
            return jumped_once
        jumped_once = True
        for row in (int(v) for v in np.flatnonzero(jumped > x)):
            want = int(jumped[row] - x[row])
            got = flow.add_many(row, want)
            tasks[row] += got
            queues.add(int(users[row]), got)
            if got < want:
                return True
