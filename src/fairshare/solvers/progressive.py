"""Integral progressive filling: whole tasks, one at a time (DRF Algorithm 1, H-DRF Algorithm 1).

Starting at the root, the walk picks the child with the lowest weighted share that still has a
task in its subtree that fits in the free resources, down to a user, who gets one more task.
Unlike DRF's Algorithm 1, which stops at the first task that does not fit, a user whose next
task does not fit is set aside and the others continue, so the result is maximal: no user can
be given one more task. Ties go to the node that comes first in scenario order.

Internal nodes take the dominant share of their subtree's summed allocation (static H-DRF);
a flat tree makes this plain weighted DRF (or asset fairness / max-min, by the leaves' share
per task).

Jumps. One task at a time costs time in proportion to the tasks, and a capacity of 10^12
tiny tasks would never finish: the walk jumps to the highest level whose tasks all fit, the
state one task at a time would reach (:mod:`fairshare.solvers.levels`: on a flat tree
:func:`~fairshare.solvers.levels.jump_to_level`, tried again after every
:data:`~fairshare.solvers.levels.JUMP_MIN_TASKS` tasks it hands out). Jumps of fewer tasks are
not taken, so small problems follow the papers' loop literally.

On a queue tree (static H-DRF, H-DRF section 3.1) every node hands its tasks to its children
in the order of the level each task starts at, so the same search applies at the root once a
queue child can be filled to a level: :class:`_TreeLevels` finds the first state of the
queue's own walk that reaches it, recursively, and the jump is again the state one task at a
time would reach.

Examples
--------
DRF section 4.1 with a billion times the capacity: jumps hand out the 5 * 10^9 tasks
without going one at a time.

>>> import numpy as np
>>> from fairshare.workload import parse_scenario
>>> from fairshare.workload.hierarchy import build_hierarchy
>>> scenario = parse_scenario(
...     {"machines": [{"name": "m1", "capacity": {"cpu": 9e9, "mem": 18e9}}],
...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
...     source="drf-section-4.1-scaled",
... )
>>> capacity = scenario.cluster.total
>>> dominant = (scenario.demands / capacity).max(axis=1)
>>> tree = build_hierarchy(scenario, flat=True)
>>> problem = WaterfillProblem(tree, scenario.demands, capacity, dominant, np.zeros(2))
>>> progressive_fill(problem).tolist()
[3000000000.0, 2000000000.0]
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.levels import (
    BISECTIONS,
    FIT_TOL,
    JUMP_MIN_TASKS,
    fit_slack,
    jump_to_level,
    level_counts,
    rounded_level,
    search_level,
    tasks_that_may_fit,
)
from fairshare.solvers.machine_pool import QueueCaps
from fairshare.solvers.waterfill import WaterfillProblem


def progressive_fill(problem: WaterfillProblem, start: FloatArray | None = None) -> FloatArray:
    """The integral allocation of ``problem`` by progressive filling (DRF Algorithm 1,
    H-DRF Algorithm 1), with jumps (module docstring).

    Parameters
    ----------
    problem : WaterfillProblem
        The tree, demands, capacity, share per task and minimum shares.
    start : FloatArray, optional
        The whole tasks filling starts from (default: the floor of the problem's initial
        allocation).

    Returns
    -------
    FloatArray
        Whole tasks per user, maximal: no user can be given one more task.

    Examples
    --------
    DRF section 4.1 with whole tasks (the module shows the same at 10^9 times the size):

    >>> import numpy as np
    >>> from fairshare.workload import parse_scenario
    >>> from fairshare.workload.hierarchy import build_hierarchy
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
    ...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
    ...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
    ...     source="drf-section-4.1",
    ... )
    >>> capacity = scenario.cluster.total
    >>> dominant = (scenario.demands / capacity).max(axis=1)
    >>> tree = build_hierarchy(scenario, flat=True)
    >>> problem = WaterfillProblem(tree, scenario.demands, capacity, dominant, np.zeros(2))
    >>> progressive_fill(problem).tolist()
    [3.0, 2.0]
    >>> progressive_fill(problem, start=np.array([0.0, 3.0])).tolist()
    [0.0, 3.0]
    """
    tree = problem.tree
    demands = problem.demands
    capacity = problem.capacity
    x = np.floor(problem.initial + FIT_TOL) if start is None else start.copy()
    if bool(np.all(tree.parent[1:] == 0)):
        return _flat_fill(problem, x)
    levels = _TreeLevels(problem)
    slack = fit_slack(capacity, demands)
    parent = tree.parent
    user_of = tree.user_of
    dead = np.zeros(tree.size, dtype=np.bool_)
    for node in range(tree.size - 1, -1, -1):
        if user_of[node] < 0 and not tree.children[node]:
            dead[node] = True
    may_jump = True  # the bound the jump checks only falls: once too small, it stays so

    def jump() -> bool:
        nonlocal x, may_jump
        free = capacity - x @ demands
        may_jump = may_jump and levels.may_jump(x, dead, free + slack)
        if not may_jump:
            return False
        jumped = levels.jump(x, dead, free, slack)
        if jumped is None:
            return False
        x = jumped
        return True

    # The first jump is tried only after JUMP_MIN_TASKS tasks one at a time: a search on a
    # tree costs as much as thousands of tasks, and most trees never need one.
    while True:
        node_tasks = np.asarray(tree.ancestors @ x, dtype=np.float64)
        free = capacity - x @ demands
        version = np.zeros(tree.size, dtype=np.int64)
        heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(tree.size)]
        for node in range(1, tree.size):
            if not dead[node]:
                heaps[int(parent[node])].append((levels.level(node, x), node, 0))
        for heap in heaps:
            heapq.heapify(heap)
        if _fill_tree_one_by_one(levels, x, dead, node_tasks, free, slack, version, heaps):
            return x
        jump()


def _fill_tree_one_by_one(
    levels: _TreeLevels,
    x: FloatArray,
    dead: BoolArray,
    node_tasks: FloatArray,
    free: FloatArray,
    slack: FloatArray,
    version: npt.NDArray[np.int64],
    heaps: list[list[tuple[float, int, int]]],
) -> bool:
    """H-DRF Algorithm 1 with whole tasks, one task at a time from the root down (module
    docstring), updating the arguments in place. Returns True when no task can be handed
    out, False after :data:`JUMP_MIN_TASKS` tasks when a jump may be tried."""
    tree = levels.tree
    demands = levels.demands
    parent = tree.parent
    user_of = tree.user_of
    since = 0  # tasks handed out one at a time since the last try of a jump
    node = 0
    while True:
        if user_of[node] < 0:
            heap = heaps[node]
            while heap and (dead[heap[0][1]] or heap[0][2] != version[heap[0][1]]):
                heapq.heappop(heap)
            if not heap or node_tasks[node] + 1 > tree.max_tasks[node] + FIT_TOL:
                dead[node] = True
                if node == 0:
                    return True
                node = int(parent[node])
                continue
            node = heap[0][1]
            continue
        user = int(user_of[node])
        demand = demands[user]
        if x[user] + 1 > tree.max_tasks[node] + FIT_TOL or np.any(demand > free + slack):
            dead[node] = True
            node = int(parent[node])
            continue
        x[user] += 1
        free -= demand
        path = tree.path_to_root(node)
        for member in path:
            node_tasks[member] += 1
        for member in path[:-1]:
            version[member] += 1
            heapq.heappush(
                heaps[int(parent[member])], (levels.level(member, x), member, int(version[member]))
            )
        since += 1
        if since >= JUMP_MIN_TASKS and levels.may_try:
            return False
        node = 0


class _NoJump(Exception):
    """A level search that cannot end (a share that does not rise, a level past the floats)."""


class _Searched:
    """The states one queue's search reached in one jump, by the inner level searched: a
    queue's level and tasks never fall as the level rises, so any stopping rule of the form
    "tasks or level at least" splits them in two at one place."""

    def __init__(self) -> None:
        self.levels: list[float] = []
        self.found: list[tuple[float, float, FloatArray]] = []

    def add(self, level: float, reached: float, total: float, state: FloatArray) -> None:
        """Keep the state the search reached at inner ``level`` (the queue's level
        ``reached`` and its ``total`` tasks), in level order; a level already kept is not
        replaced."""
        at = bisect.bisect_left(self.levels, level)
        if at < len(self.levels) and self.levels[at] == level:
            return
        self.levels.insert(at, level)
        self.found.insert(at, (reached, total, state))

    def bracket(
        self, stop: Callable[[float, float], bool]
    ) -> tuple[tuple[float, FloatArray] | None, tuple[float, FloatArray] | None]:
        """The highest searched level where ``stop`` fails and the lowest where it holds,
        each with its state (None when there is none)."""
        low, high = 0, len(self.levels)
        while low < high:
            middle = (low + high) // 2
            if stop(self.found[middle][0], self.found[middle][1]):
                high = middle
            else:
                low = middle + 1
        below = (self.levels[low - 1], self.found[low - 1][2]) if low > 0 else None
        above = (self.levels[low], self.found[low][2]) if low < len(self.levels) else None
        return below, above


class _TreeLevels:
    """Levels and jumps on a queue tree (static H-DRF, H-DRF section 3.1, Algorithm 1).

    The walk hands each task to the child with the lowest (level, node) at every node on the
    way down, and a child's level never falls as it receives tasks, so at each node the tasks
    go out in the order of the level each starts at: the state after every task a node's
    children start below a level ``M`` is a state of the walk (:meth:`fill`). A queue child is
    filled to ``M`` by the first state of its own walk whose level reaches ``M``
    (:meth:`first`): a search over its children's levels, recursively, that ends in a few
    tasks one at a time (:meth:`next_user`, the walk's own choice). The root's level is then
    searched as on a flat tree (:func:`search_level`), so a jump is the state one task at a
    time would reach; tasks that fit together fit one by one, because free capacity only
    shrinks. Queue levels are the dominant share of the users' counts times their demands,
    computed here and in the walk by the same expression (no sums carried across tasks).
    """

    def __init__(self, problem: WaterfillProblem) -> None:
        tree = problem.tree
        self.tree = tree
        self.demands = problem.demands
        capacity = problem.capacity
        self.inv_capacity = np.where(capacity > 0, 1.0 / np.where(capacity > 0, capacity, 1.0), 0.0)
        leaf = tree.leaf_node
        with np.errstate(divide="ignore", invalid="ignore"):
            self.step = np.asarray(problem.share_per_task / tree.weight[leaf], dtype=np.float64)
        self.below = [
            np.sort(tree.ancestors.users[tree.ancestors.nodes == node]) for node in range(tree.size)
        ]
        self.cap = np.floor(tree.max_tasks + FIT_TOL)
        # per node: its users' demands as shares of the capacity, and its weight
        self.scaled = [self.demands[below] * self.inv_capacity for below in self.below]
        self.weight = [float(w) for w in tree.weight]
        self.user_children = [
            np.asarray([tree.user_of[c] for c in tree.children[n] if tree.user_of[c] >= 0],
                       dtype=np.int64)
            for n in range(tree.size)
        ]  # fmt: skip
        self.queue_children = [
            [c for c in tree.children[n] if tree.user_of[c] < 0] for n in range(tree.size)
        ]
        self.may_try = True
        self.limit = self.cap[leaf]
        self.dead = np.zeros(tree.size, dtype=np.bool_)
        self._searched: dict[int, _Searched] = {}

    def level(self, node: int, x: FloatArray) -> float:
        """The rounded weighted share the walk orders ``node`` by."""
        user = int(self.tree.user_of[node])
        if user >= 0:
            return rounded_level(float(x[user] * self.step[user]))
        share = float((x[self.below[node]] @ self.scaled[node]).max())
        return rounded_level(share / self.weight[node])

    def frozen(self, dead: BoolArray) -> BoolArray:
        """Users that get no more tasks: set aside, or below a queue set aside."""
        out = np.zeros(len(self.tree.leaf_node), dtype=np.bool_)
        pairs = self.tree.ancestors
        out[pairs.users[dead[pairs.nodes]]] = True
        return out

    def may_jump(self, x: FloatArray, dead: BoolArray, room: FloatArray) -> bool:
        """Whether enough tasks may still fit for a jump (:func:`tasks_that_may_fit`)."""
        active = ~self.frozen(dead)
        self.may_try = tasks_that_may_fit(x, self.limit, active, room, self.demands) >= (
            JUMP_MIN_TASKS
        )
        return self.may_try

    def jump(
        self, x: FloatArray, dead: BoolArray, free: FloatArray, slack: FloatArray
    ) -> FloatArray | None:
        """The state of the walk at the highest root level whose tasks all fit in ``free``
        (plus ``slack``), or None (fewer than :data:`JUMP_MIN_TASKS` tasks; no level bound)."""
        active = ~self.frozen(dead)
        if not active.any() or not np.all(np.isfinite(self.step[active])):
            return None
        if np.any(self.step[active] <= 0):
            return None
        self.dead = dead
        self._searched = {}
        self.limit = np.where(active, self.cap[self.tree.leaf_node], x)
        live = [c for c in self.tree.children[0] if not self._exhausted(c, x)]
        if not live:
            return None
        demands = self.demands

        def fits(counts: FloatArray) -> bool:
            return bool(np.all((counts - x) @ demands <= free + slack))

        try:
            return search_level(
                x,
                lambda level: self.fill(0, x, level),
                min(self.level(c, x) for c in live),
                float(self.step[active].max()),
                fits,
                lambda counts: self._exhausted(0, counts),
                int(active.sum()),
            )
        except _NoJump:
            return None
        finally:
            self.limit = self.cap[self.tree.leaf_node]

    def _exhausted(self, node: int, x: FloatArray) -> bool:
        """Whether the walk can hand no more task to ``node``'s subtree (fit aside)."""
        if self.dead[node]:
            return True
        user = int(self.tree.user_of[node])
        if user >= 0:
            return bool(x[user] >= self.limit[user])
        if float(x[self.below[node]].sum()) >= self.cap[node]:
            return True
        return all(self._exhausted(c, x) for c in self.tree.children[node])

    def fill(self, node: int, x: FloatArray, level: float) -> FloatArray:
        """``x`` after the walk hands out every task that ``node``'s children start below
        ``level`` (queue caps aside: :meth:`first` keeps them)."""
        out = x.copy()
        users = self.user_children[node]
        if len(users):
            out[users] = level_counts(x[users], self.step[users], self.limit[users], level)
        for child in self.queue_children[node]:
            if not self._exhausted(child, x):
                out = self.first(child, out, level)
        return out

    def first(self, node: int, x: FloatArray, level: float) -> FloatArray:
        """The first state of the walk inside queue ``node`` from ``x`` where its level
        reaches ``level``, or where the walk there ends (its cap, or every user below at its
        limit). Within one jump ``x`` below ``node`` is always the jump's start, so each
        state the search computes is kept (:class:`_Searched`) and brackets later searches:
        the root's bisection asks for ever closer levels, and each asks little more."""
        cap = self.cap[node]
        below = self.below[node]
        searched = self._searched.setdefault(node, _Searched())

        def stop(reached: float, total: float) -> bool:
            return total >= cap or reached >= level

        def whole(sub: FloatArray) -> FloatArray:
            out = x.copy()
            out[below] = sub
            return out

        def at(inner: float) -> tuple[bool, FloatArray]:
            state = self.fill(node, x, inner)
            reached, total = self.level(node, state), float(state[below].sum())
            searched.add(inner, reached, total, state[below])
            return stop(reached, total), state

        if stop(self.level(node, x), float(x[below].sum())) or self._exhausted(node, x):
            return x
        live = [c for c in self.tree.children[node] if not self._exhausted(c, x)]
        low = min(self.level(c, x) for c in live)
        low_state = x
        known = searched.bracket(stop)
        if known[0] is not None and known[0][0] > low:
            low, low_state = known[0][0], whole(known[0][1])
        if known[1] is not None:
            high, high_state = known[1][0], whole(known[1][1])
        else:
            span = max(abs(low), float(self.step[below].max()), 2.0**-40)
            high = low + span
            for _ in range(2100):
                stopped, high_state = at(high)
                if stopped:
                    break
                if self._exhausted(node, high_state):
                    return high_state
                low, low_state, span = high, high_state, span * 2
                high = low + span
                if not np.isfinite(high):
                    raise _NoJump
            else:
                raise _NoJump
        close = 2 * len(below) + 8
        for _ in range(BISECTIONS):
            middle = (low + high) / 2
            gap = float((high_state[below] - low_state[below]).sum())
            if not low < middle < high or gap <= close:
                break
            stopped, state = at(middle)
            if stopped:
                high, high_state = middle, state
            else:
                low, low_state = middle, state
        state = low_state.copy()
        while not stop(self.level(node, state), float(state[below].sum())):
            user = self.next_user(node, state)
            if user < 0:
                break
            state[user] += 1
        return state

    def next_user(self, node: int, x: FloatArray) -> int:
        """The user the walk gives the next task below ``node`` (fit aside), or -1."""
        while True:
            user = int(self.tree.user_of[node])
            if user >= 0:
                return user
            live = [c for c in self.tree.children[node] if not self._exhausted(c, x)]
            if not live:
                return -1
            node = min(live, key=lambda c: (self.level(c, x), c))


def _flat_fill(problem: WaterfillProblem, x: FloatArray) -> FloatArray:
    """:func:`progressive_fill` on a flat tree (every user a child of the root), where the
    walk is one heap of users by (level, node): the same tasks, with jumps (module
    docstring). The problem's capped queues (``group_members``, a flat policy's queues) are
    kept as the placed walks keep them (:class:`~fairshare.solvers.machine_pool.QueueCaps`):
    a user whose next task would take a queue above it past its cap is set aside, as at its
    own cap, and a jump stays within every queue, so the result is within every cap and
    still maximal."""
    tree = problem.tree
    demands = problem.demands
    capacity = problem.capacity
    slack = fit_slack(capacity, demands)
    nodes = np.asarray(tree.leaf_node, dtype=np.int64)
    limit = np.asarray(tree.max_tasks[nodes], dtype=np.float64)
    total_limit = float(tree.max_tasks[0]) + FIT_TOL
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.asarray(problem.share_per_task / tree.weight[nodes], dtype=np.float64)
    free = capacity - x @ demands
    active = np.ones(len(x), dtype=np.bool_)
    queues = QueueCaps(problem.group_members, problem.group_caps, len(x))
    for holder in np.flatnonzero(x > 0):
        queues.add(int(holder), int(x[holder]))

    def key(user: int) -> tuple[float, int, int]:
        return rounded_level(float(x[user] * step[user])), int(nodes[user]), user

    def fits(counts: FloatArray) -> bool:
        return bool(
            np.all((counts - x) @ demands <= free + slack)
            and counts.sum() <= total_limit
            and queues.within(counts, x)
        )

    may_jump = True  # the bound below only falls: once too small, it stays so

    def jump() -> bool:
        nonlocal x, free, may_jump
        may_jump = may_jump and (
            tasks_that_may_fit(x, limit, active, free + slack, demands) >= JUMP_MIN_TASKS
        )
        if not may_jump:
            return False
        for candidate in np.flatnonzero(active):
            # set aside under a full queue first, as the walk would at its turn (a jump
            # with it active could not rise past its level)
            if not queues.allows(int(candidate)):
                active[candidate] = False
        jumped = jump_to_level(x, step, np.minimum(limit, queues.headroom(x)), active, fits)
        if jumped is None:
            return False
        free = free - (jumped - x) @ demands
        for taker in np.flatnonzero(jumped > x):
            queues.add(int(taker), int(jumped[taker] - x[taker]))
        x = jumped
        return True

    jump()
    total = float(x.sum())
    heap = [key(int(u)) for u in np.flatnonzero(active)]
    heapq.heapify(heap)
    since = 0  # tasks handed out one at a time since the last try of a jump
    while heap:
        if since >= JUMP_MIN_TASKS:
            since = 0
            if jump():
                total = float(x.sum())
                heap = [key(int(u)) for u in np.flatnonzero(active)]
                heapq.heapify(heap)
        if total + 1 > total_limit:
            return x
        user = heapq.heappop(heap)[2]
        demand = demands[user]
        if (
            x[user] + 1 > limit[user] + FIT_TOL
            or not queues.allows(user)
            or np.any(demand > free + slack)
        ):
            active[user] = False
            continue
        x[user] += 1
        queues.add(user, 1)
        total += 1
        since += 1
        free = free - demand
        heapq.heappush(heap, key(user))
    return x
