"""Exact progressive filling ("water-filling") over a weighted tree, event by event.

This one engine computes the divisible allocations of weighted max-min fairness with minimum
shares (FAIR Appendix A, Algorithm 2), DRF (DRF section 4.2, weighted as in section 4.3),
asset fairness (DRF section 5), static H-DRF (H-DRF section 3.1, Algorithm 1) and the
collapsed hierarchy (H-DRF section 3.2). It is the continuous limit of the papers' epsilon loops:
starting at the root, flow goes to the demanding children with the lowest weighted share, and
each internal node's share is the dominant share of the sum of its children's allocations.

Between two events every allocation grows linearly, so the engine computes the velocities once
per interval and jumps to the next event:

- a resource saturates: every leaf that needs it is blocked (it can no longer be scheduled);
- a user reaches its cap (``max_tasks``/``max_share``) or a queue its ``max_share``;
- a waiting child's weighted share is reached by its lagging siblings (it joins them);
- an internal node's dominant resource changes (another resource's share overtakes it).

Flow is measured in units of leaf share, the quantity the epsilon loop hands out one sliver at
a time. At an internal node, the flow is split among the receiving children (the demanding
children at the lowest weighted share) so that their weighted shares rise together. A child
whose share cannot rise (its dominant resource is saturated while its other resources still
grow) takes all of its parent's flow until it catches up, exactly as the epsilon loop keeps
picking it; several such children share the flow equally (the documented tie rule).

Examples
--------
DRF section 4.1 (A's tasks <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>, on <9 CPUs, 18 GB>) on a flat
tree, equalising dominant shares:

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
>>> problem = WaterfillProblem(
...     build_hierarchy(scenario, flat=True), scenario.demands, capacity, dominant, np.zeros(2)
... )
>>> waterfill(problem).round(6).tolist()
[3.0, 2.0]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.errors import SolverFailure
from fairshare.workload.hierarchy import Hierarchy, IntArray, TreeSum

_REL_TOL = 1e-10
"""Relative tolerance of every comparison of levels, usage and caps."""


@dataclass(frozen=True)
class WaterfillProblem:
    """A water-filling instance (also the input of integral progressive filling,
    :func:`fairshare.solvers.progressive.progressive_fill`).

    Attributes
    ----------
    tree : Hierarchy
        The weighted tree (flat for DRF and the other single-level policies); its
        ``max_tasks`` are the caps of users and queues.
    demands : FloatArray
        Users x resources: one task's demand.
    capacity : FloatArray
        The pooled capacity per resource.
    share_per_task : FloatArray
        Converts user i's tasks into the share the policy equalises (for DRF its dominant
        share of one task).
    initial : FloatArray
        The tasks filling starts from (minimum shares).
    group_members : tuple of IntArray
        The users of each capped queue the tree does not hold (a flat policy's queues,
        :meth:`~fairshare.workload.hierarchy.Hierarchy.capped_queues`): they share by the
        tree, but each queue stays within its cap.
    group_caps : FloatArray
        Each such queue's ``max_share`` in tasks.
    """

    tree: Hierarchy
    demands: FloatArray
    capacity: FloatArray
    share_per_task: FloatArray
    initial: FloatArray
    group_members: tuple[IntArray, ...] = ()
    group_caps: FloatArray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class _Level:
    """The nodes at one depth, grouped by parent for segment reductions."""

    nodes: IntArray
    parents: IntArray
    starts: IntArray
    group: IntArray


def waterfill(problem: WaterfillProblem) -> FloatArray:
    """The divisible allocation of ``problem``: the continuous limit of the papers' epsilon
    loops, computed event by event (module docstring).

    Parameters
    ----------
    problem : WaterfillProblem
        The tree, demands, capacity, share per task and starting allocation.

    Returns
    -------
    FloatArray
        Tasks per user (fractional), in scenario order.

    Raises
    ------
    SolverFailure
        The event loop exhausted its budget, or found users to fill but no next event.
    """
    return _Engine(problem).run()


class _Engine:
    """One water-filling run's state: the allocation ``x``, the frozen users and saturated
    resources, and the tree's levels for the per-interval segment reductions."""

    def __init__(self, problem: WaterfillProblem) -> None:
        tree = problem.tree
        self.tree = tree
        self.demands = problem.demands
        self.capacity = problem.capacity
        self.delta = problem.share_per_task
        self.x = problem.initial.astype(np.float64).copy()
        self.leaf = tree.leaf_node
        self.ancestors = tree.ancestors
        self.cap_leaf = tree.max_tasks[self.leaf]
        internal = np.ones(tree.size, dtype=np.bool_)
        internal[self.leaf] = False
        self.internal = internal
        # The capped queues, the tree's and the problem's own, as a groups x users sum.
        capped = np.flatnonzero(internal & np.isfinite(tree.max_tasks))
        members = [tree.ancestors.users[tree.ancestors.nodes == q] for q in capped]
        members += [np.asarray(m, dtype=np.int64) for m in problem.group_members]
        self.queue_limit = np.concatenate(
            (tree.max_tasks[capped], np.asarray(problem.group_caps, dtype=np.float64))
        )
        self.queues = TreeSum(
            nodes=np.repeat(np.arange(len(members)), [len(m) for m in members]).astype(np.int64),
            users=np.concatenate([*members, np.zeros(0, np.int64)]).astype(np.int64),
            size=len(members),
        )
        self.below_root = np.flatnonzero(internal)[1:]
        used = self.capacity > 0
        self.inv_capacity = np.where(used, 1.0 / np.where(used, self.capacity, 1.0), 0.0)
        self.usage_per_share = self.demands / self.delta[:, None]
        self.levels = self._group_levels()
        self.frozen = np.zeros(len(self.x), dtype=np.bool_)
        self.saturated = np.zeros(len(self.capacity), dtype=np.bool_)

    def _group_levels(self) -> list[_Level]:
        """The tree's nodes by depth, deepest first and grouped by parent, so that each
        interval's flow splits are segment reductions (``reduceat``), not a walk per node."""
        tree = self.tree
        out = []
        for depth in range(int(tree.depth.max(initial=0)), 0, -1):
            nodes = np.flatnonzero(tree.depth == depth)
            parents = tree.parent[nodes]
            order = np.argsort(parents, kind="stable")
            nodes, parents = nodes[order], parents[order]
            boundary = np.flatnonzero(np.diff(parents)) + 1
            starts = np.concatenate(([0], boundary)).astype(np.int64)
            group = np.cumsum(np.isin(np.arange(len(nodes)), boundary)).astype(np.int64)
            out.append(_Level(nodes, parents, starts, group))
        return out

    def run(self) -> FloatArray:
        """Step from event to event until every user is frozen; the event budget bounds
        the loop (each event freezes a user, saturates a resource, or changes a node's
        receiving set or dominant resource)."""
        self._freeze()
        budget = 20 * (self.tree.size + 1) * (len(self.capacity) + 2)
        for _ in range(budget):
            if self.frozen.all():
                return self.x
            self._step()
        raise SolverFailure("water-filling did not converge (event budget exhausted)")

    def _step(self) -> None:
        """One interval: the velocities of every node (flow split bottom-up, handed out
        top-down), then a jump to the first event of the module docstring."""
        tree = self.tree
        usage = np.asarray(self.ancestors @ (self.x[:, None] * self.demands))
        ratio = usage * self.inv_capacity
        share = ratio.max(axis=1)
        share[self.leaf] = self.x * self.delta
        level = share / tree.weight
        active = np.asarray(self.ancestors @ (~self.frozen).astype(np.float64)) > 0

        size, m = tree.size, len(self.capacity)
        sigma = np.zeros(size)
        velocity = np.zeros((size, m))
        sigma[self.leaf] = 1.0
        velocity[self.leaf] = self.usage_per_share
        fraction = np.zeros(size)
        level_rate = np.zeros(size)
        floor = np.full(size, np.inf)
        receiving = np.zeros(size, dtype=np.bool_)
        tied_max = ratio >= share[:, None] - _REL_TOL * np.maximum(1.0, share[:, None])

        for lv in self.levels:
            kids = lv.nodes
            kid_active = active[kids]
            kid_level = np.where(kid_active, level[kids], np.inf)
            group_floor = np.minimum.reduceat(kid_level, lv.starts)
            kid_floor = group_floor[lv.group]
            recv = kid_active & (kid_level <= kid_floor + _REL_TOL * np.maximum(1.0, kid_floor))
            stuck = recv & (sigma[kids] <= 0.0)
            stuck_count = np.add.reduceat(stuck.astype(np.float64), lv.starts)
            any_stuck = stuck_count[lv.group] > 0
            kid_sigma = sigma[kids]
            safe_sigma = np.where(kid_sigma > 0, kid_sigma, 1.0)
            speed = np.where(recv & ~any_stuck & (kid_sigma > 0), tree.weight[kids] / safe_sigma, 0)
            speed_sum = np.add.reduceat(speed, lv.starts)
            split = np.where(
                any_stuck,
                stuck / np.maximum(stuck_count[lv.group], 1.0),
                speed / np.where(speed_sum[lv.group] > 0, speed_sum[lv.group], 1.0),
            )
            fraction[kids] = split
            receiving[kids] = recv
            parents = lv.parents[lv.starts]
            floor[parents] = group_floor
            velocity[parents] = np.add.reduceat(split[:, None] * velocity[kids], lv.starts)
            level_rate[parents] = np.where(
                (stuck_count == 0) & (speed_sum > 0), 1.0 / np.where(speed_sum > 0, speed_sum, 1), 0
            )
            growth = velocity[parents] * self.inv_capacity
            sigma[parents] = np.where(tied_max[parents], growth, 0.0).max(axis=1)

        flow = np.zeros(size)
        flow[0] = 1.0 if active[0] else 0.0
        for lv in reversed(self.levels):
            flow[lv.nodes] = flow[lv.parents] * fraction[lv.nodes]
        rate = flow[self.leaf] / self.delta

        step = np.inf
        resource_rate = rate @ self.demands
        total = usage[0]
        open_resources = (resource_rate > 0) & ~self.saturated
        if open_resources.any():
            gap = self.capacity[open_resources] - total[open_resources]
            step = min(step, float((np.maximum(gap, 0) / resource_rate[open_resources]).min()))
        growing = rate > 0
        if growing.any():
            room = self.cap_leaf[growing] - self.x[growing]
            step = min(step, float((np.maximum(room, 0) / rate[growing]).min()))
        if self.queues.size:
            queue_rate = self.queues @ rate
            queue_tasks = self.queues @ self.x
            filling = queue_rate > 0
            if filling.any():
                room = self.queue_limit[filling] - queue_tasks[filling]
                step = min(step, float((np.maximum(room, 0) / queue_rate[filling]).min()))
        waiting = active & ~receiving & np.isfinite(level)
        waiting[0] = False
        if waiting.any():
            parent_of_waiting = tree.parent[waiting]
            catch_up = flow[parent_of_waiting] * level_rate[parent_of_waiting]
            moving = catch_up > 0
            if moving.any():
                gap = level[waiting][moving] - floor[parent_of_waiting][moving]
                step = min(step, float((np.maximum(gap, 0) / catch_up[moving]).min()))
        inner = self.below_root[flow[self.below_root] > 0]
        if len(inner):
            growth = velocity[inner] * self.inv_capacity
            overtake = (~tied_max[inner]) & (growth > sigma[inner, None])
            if overtake.any():
                gap = share[inner, None] - ratio[inner]
                speed = flow[inner, None] * (growth - sigma[inner, None])
                times = np.where(overtake, gap / np.where(overtake, speed, 1.0), np.inf)
                step = min(step, float(times.min()))
        if not np.isfinite(step):
            raise SolverFailure("water-filling found demanding users but no next event")
        self.x += step * rate
        self._freeze()

    def _freeze(self) -> None:
        """Block users that can no longer grow, snapping values that reached a bound."""
        total = self.x @ self.demands
        self.saturated |= total >= self.capacity * (1 - _REL_TOL)
        needs_saturated = (self.demands[:, self.saturated] > 0).any(axis=1)
        finite_cap = np.isfinite(self.cap_leaf)
        cap_or_zero = np.where(finite_cap, self.cap_leaf, 0.0)
        at_cap = finite_cap & (self.x >= cap_or_zero - _REL_TOL * np.maximum(1.0, cap_or_zero))
        self.x = np.where(at_cap, np.minimum(self.x, self.cap_leaf), self.x)
        frozen: BoolArray = self.frozen | needs_saturated | at_cap
        if self.queues.size:
            queue_tasks = self.queues @ self.x
            limit = self.queue_limit
            full = np.flatnonzero(queue_tasks >= limit - _REL_TOL * np.maximum(1.0, limit))
            if len(full):
                frozen |= self.queues.users_below(full, len(self.x))
            for g in np.flatnonzero(queue_tasks > limit):
                # A queue a step took past its cap by round-off goes back within it, with a
                # margin of a few units in the last place per member, so that any order of
                # summation stays within (as the placed solvers' within_caps does).
                below = self.queues.users[self.queues.nodes == g]
                margin = 4 * np.finfo(np.float64).eps * (len(below) + 1)
                self.x[below] *= limit[g] / queue_tasks[g] * (1 - margin)
        self.frozen = frozen
