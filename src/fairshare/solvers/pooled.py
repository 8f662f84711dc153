"""Policies that pool the cluster into one big machine: weighted max-min (FAIR Appendix A), DRF
(DRF sections 4.2-4.3), asset fairness and CEEI (DRF section 5), static H-DRF (H-DRF section 3.1)
and the collapsed hierarchy (H-DRF section 3.2).

They allocate the cluster's total capacity, as the papers do, so their allocations carry no
placement. Placement constraints are outside their model: a constrained user is allocated as if
unconstrained (with a warning), except that a user whose constraint matches no machine gets
nothing (SPEC section 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from fairshare.allocation import Allocation
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.ceei import ceei
from fairshare.solvers.errors import InvalidRequest
from fairshare.solvers.progressive import progressive_fill
from fairshare.solvers.waterfill import WaterfillProblem, waterfill
from fairshare.workload.eligibility import MATCHES_NO_MACHINE, machine_types
from fairshare.workload.hierarchy import Hierarchy, IntArray, build_hierarchy
from fairshare.workload.model import Scenario

ShareRule = Callable[[FloatArray, FloatArray], FloatArray]
"""``(demands, capacity) -> share per task``: the quantity a pooled policy equalises, per
task of each user."""


def dominant_share_per_task(demands: FloatArray, capacity: FloatArray) -> FloatArray:
    """Each user's dominant share of one task (DRF section 4).

    Parameters
    ----------
    demands : FloatArray
        Users x resources: one task's demand.
    capacity : FloatArray
        The pooled capacity per resource (every entry > 0).

    Returns
    -------
    FloatArray
        Per user, the largest of its task's shares of each resource.

    Examples
    --------
    DRF section 4.1: <1 CPU, 4 GB> and <3 CPUs, 1 GB> of <9 CPUs, 18 GB>.

    >>> import numpy as np
    >>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
    >>> dominant_share_per_task(demands, np.array([9.0, 18.0])).round(4).tolist()
    [0.2222, 0.3333]
    """
    return np.asarray((demands / capacity).max(axis=1), dtype=np.float64)


def asset_share_per_task(demands: FloatArray, capacity: FloatArray) -> FloatArray:
    """Each user's aggregate share of one task, summed over resources (asset fairness,
    DRF section 5.1).

    Parameters
    ----------
    demands : FloatArray
        Users x resources: one task's demand.
    capacity : FloatArray
        The pooled capacity per resource (every entry > 0).

    Returns
    -------
    FloatArray
        Per user, the sum of its task's shares of each resource.

    Examples
    --------
    >>> import numpy as np
    >>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
    >>> asset_share_per_task(demands, np.array([9.0, 18.0])).round(4).tolist()
    [0.3333, 0.3889]
    """
    return np.asarray((demands / capacity).sum(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class PooledInput:
    """What every pooled policy needs, with the scenario-level checks already done.

    Resources the cluster has none of are left out of ``demands`` and ``capacity``.

    Attributes
    ----------
    demands : FloatArray
        Users x used resources: one task's demand.
    capacity : FloatArray
        The pooled capacity (the cluster's total) of each used resource.
    caps : FloatArray
        Each user's effective cap in tasks (0 for a user whose constraint matches no
        machine).
    initial : FloatArray
        The tasks filling starts from: minimum shares, within the caps.
    warnings : tuple of str
        What ``fairshare solve`` prints: users no machine serves, constraints ignored.
    group_members : tuple of IntArray
        The users below each queue with a ``max_share``
        (:meth:`~fairshare.workload.hierarchy.Hierarchy.capped_queues`): every pooled
        policy keeps them within their caps, the flat ones (DRF, ...) too.
    group_caps : FloatArray
        Each such queue's ``max_share`` in tasks.
    """

    demands: FloatArray
    capacity: FloatArray
    caps: FloatArray
    initial: FloatArray
    warnings: tuple[str, ...]
    group_members: tuple[IntArray, ...] = ()
    group_caps: FloatArray = field(default_factory=lambda: np.zeros(0))


def prepare(scenario: Scenario, policy: str) -> PooledInput:
    """Pool the cluster and check the scenario for a pooled policy.

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.
    policy : str
        The policy's SPEC name (for the warnings).

    Returns
    -------
    PooledInput
        Pooled capacity, effective caps and minimum shares, and the warnings ``solve``
        prints.

    Raises
    ------
    InvalidRequest
        The minimum shares need more of a resource than the cluster has.

    Examples
    --------
    B's constraint is ignored (with a warning); A starts at its minimum share of 2 tasks:

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}},
    ...                   {"name": "m2", "capacity": {"cpu": 9, "mem": 18},
    ...                    "attributes": {"gpu": True}}],
    ...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}, "min_share": 2},
    ...                {"name": "B", "demand": {"cpu": 3, "mem": 1}, "constraint": "gpu"}]},
    ...     source="pooled",
    ... )
    >>> data = prepare(scenario, "drf")
    >>> data.capacity.tolist(), data.initial.tolist()
    ([18.0, 36.0], [2.0, 0.0])
    >>> print(data.warnings[0])  # doctest: +ELLIPSIS
    drf pools the cluster into one machine and ignores the placement constraints of 'B'; ...
    """
    cluster = scenario.cluster
    used = cluster.total > 0
    demands = scenario.demands[:, used]
    capacity = cluster.total[used]
    caps = scenario.caps
    warnings = []
    eligible = machine_types(scenario).eligible
    nowhere: BoolArray = ~np.asarray(eligible.any(axis=1), dtype=np.bool_)
    for i in np.flatnonzero(nowhere):
        warnings.append(
            f"user {scenario.users[i].name!r}: {MATCHES_NO_MACHINE}; it receives nothing"
        )
    caps = np.where(nowhere, 0.0, caps)
    constrained = [
        u.name for i, u in enumerate(scenario.users) if u.is_constrained and not nowhere[i]
    ]
    if constrained:
        listed = ", ".join(repr(n) for n in constrained[:5]) + (
            ", ..." if len(constrained) > 5 else ""
        )
        warnings.append(
            f"{policy} pools the cluster into one machine and ignores the placement "
            f"constraints of {listed}; use tsf, cdrf or cmmf to honour them"
        )
    initial = np.minimum(scenario.min_shares, caps)
    needed = initial @ demands
    over = needed > capacity * (1 + 1e-12)
    if over.any():
        r = int(np.flatnonzero(over)[0])
        name = [n for n, u in zip(cluster.resources, used, strict=True) if u][r]
        raise InvalidRequest(
            "users[*].min_share",
            f"the minimum shares need {needed[r]:g} {name} but the cluster has {capacity[r]:g}; "
            "lower them so that they fit together",
        )
    members, limits = build_hierarchy(scenario).capped_queues()
    return PooledInput(demands, capacity, caps, initial, tuple(warnings), members, limits)


def solve_pooled(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """The allocation of ``scenario`` under one of the pooled policies.

    Divisible allocations come from the water-filling engine
    (:func:`fairshare.solvers.waterfill.waterfill`), integral ones from progressive filling
    (:func:`fairshare.solvers.progressive.progressive_fill`); CEEI from its own market
    solver (:func:`fairshare.solvers.ceei.ceei`). ``hdrf`` fills the queue tree (H-DRF
    section 3.1), ``collapsed-drf`` a flat tree with the hierarchy's collapsed weights
    (H-DRF section 3.2), the others a flat tree.

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.
    policy : str
        ``max-min``, ``drf``, ``asset``, ``ceei``, ``hdrf`` or ``collapsed-drf``.
    integral : bool
        Whole tasks instead of the divisible allocation.

    Returns
    -------
    Allocation
        Tasks and shares per user; no placement.

    Raises
    ------
    InvalidRequest
        ``max-min`` with users demanding several resources, or minimum shares that do not
        fit.
    SolverFailure
        The water-filling engine or the CEEI solver gave up.

    Examples
    --------
    Two users in queue ``q1``, one in ``q2``: DRF equalises the three users' dominant
    shares, static H-DRF the two queues' first.

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
    ...      "queues": [{"path": "q1"}, {"path": "q2"}],
    ...      "users": [{"name": "A", "queue": "q1", "demand": {"cpu": 1, "mem": 4}},
    ...                {"name": "B", "queue": "q1", "demand": {"cpu": 3, "mem": 1}},
    ...                {"name": "C", "queue": "q2", "demand": {"cpu": 1, "mem": 1}}]},
    ...     source="two-queues",
    ... )
    >>> solve_pooled(scenario, "drf", integral=False).tasks.round(3).tolist()
    [1.8, 1.2, 3.6]
    >>> solve_pooled(scenario, "hdrf", integral=False).tasks.round(3).tolist()
    [1.5, 1.0, 4.5]
    >>> solve_pooled(scenario, "hdrf", integral=True).tasks.tolist()
    [2.0, 1.0, 4.0]
    """
    data = prepare(scenario, policy)
    if policy == "max-min":
        resources_used = np.flatnonzero((data.demands > 0).any(axis=0))
        if len(resources_used) > 1:
            names = [
                scenario.cluster.resources[i] for i in np.flatnonzero(scenario.cluster.total > 0)
            ]
            raise InvalidRequest(
                "policy",
                "max-min shares a single resource, but the users demand "
                + ", ".join(names[i] for i in resources_used)
                + "; use drf (or hdrf) for several resources",
            )
    if data.capacity.size == 0:
        # Every capacity is zero: nobody can run a task, and there is no share to equalise.
        nothing = np.zeros(len(scenario.users), dtype=np.float64)
        return Allocation(
            policy=policy, integral=integral, tasks=nothing, shares=nothing.copy(),
            warnings=(*data.warnings, "every machine has zero capacity; nobody receives anything"),
        )  # fmt: skip
    share_rule: ShareRule = asset_share_per_task if policy == "asset" else dominant_share_per_task
    with np.errstate(divide="ignore", invalid="ignore"):
        share_per_task = share_rule(data.demands, data.capacity)
    if policy == "ceei":
        tasks = _ceei(scenario, data, integral)
    else:
        tree = build_hierarchy(scenario, flat=policy not in {"hdrf"})
        if policy == "collapsed-drf":
            collapsed = build_hierarchy(scenario).collapsed_weights()
            weight = tree.weight.copy()
            weight[tree.leaf_node] = collapsed
            tree = _with_weights(tree, weight)
        tree = _with_leaf_caps(tree, data.caps)
        problem = _problem(tree, data, share_per_task)
        tasks = progressive_fill(problem) if integral else waterfill(problem)
    return Allocation(
        policy=policy,
        integral=integral,
        tasks=tasks,
        shares=tasks * share_per_task,
        warnings=data.warnings + _queue_warnings(scenario, policy),
    )


def _ceei(scenario: Scenario, data: PooledInput, integral: bool) -> FloatArray:
    """CEEI's tasks per user. With ``integral``: the floor of the divisible equilibrium,
    then progressive filling of each user's tasks relative to its equilibrium tasks, then of
    whatever still fits, so that whole tasks stay close to the equilibrium and are
    maximal."""
    # A capped queue is one more good of the market: each of its users' tasks takes one unit
    # of it, and it has its max_share in supply (Eisenberg-Gale with the queue's linear
    # constraint; its price is the constraint's multiplier).
    goods = np.zeros((len(scenario.users), len(data.group_members)))
    for g, members in enumerate(data.group_members):
        goods[members, g] = 1.0
    divisible = ceei(
        np.hstack((data.demands, goods)),
        np.concatenate((data.capacity, data.group_caps)),
        scenario.weights,
        data.initial,
        data.caps,
    )
    if not integral:
        return divisible
    ratio_share = np.where(divisible > 0, 1.0 / np.where(divisible > 0, divisible, 1.0), 0.0)
    tree = _with_leaf_caps(build_hierarchy(scenario, flat=True), data.caps)
    tree = _with_weights(tree, np.ones(tree.size))
    start = np.maximum(np.floor(divisible + 1e-9), np.floor(data.initial + 1e-9))
    completed = progressive_fill(_problem(tree, data, ratio_share), start=start)
    leftover = _problem(tree, data, np.ones(len(divisible)))
    return progressive_fill(leftover, start=completed)


def _problem(tree: Hierarchy, data: PooledInput, share_per_task: FloatArray) -> WaterfillProblem:
    """The filling problem of ``tree``; a flat tree carries the capped queues it lacks."""
    flat = tree.is_flat
    return WaterfillProblem(
        tree,
        data.demands,
        data.capacity,
        share_per_task,
        data.initial,
        data.group_members if flat else (),
        data.group_caps if flat else np.zeros(0),
    )


def _queue_warnings(scenario: Scenario, policy: str) -> tuple[str, ...]:
    """The warning that static H-DRF ignores queue minimum shares (it has none)."""
    if policy == "hdrf" and any(q.min_share > 0 for q in scenario.queues):
        return (
            "static H-DRF has no minimum guarantees for queues; queue min_share is used by "
            "the online fair scheduler (fairshare simulate --policy fair)",
        )
    return ()


def _with_weights(tree: Hierarchy, weight: FloatArray) -> Hierarchy:
    """``tree`` with other node weights (the collapsed hierarchy's, or CEEI's equal ones)."""
    return replace(tree, weight=weight)


def _with_leaf_caps(tree: Hierarchy, caps: FloatArray) -> Hierarchy:
    """``tree`` with the users' effective caps (``PooledInput.caps``) at its leaves."""
    max_tasks = tree.max_tasks.copy()
    max_tasks[tree.leaf_node] = caps
    return replace(tree, max_tasks=max_tasks)
