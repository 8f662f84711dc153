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
from dataclasses import dataclass, replace

import numpy as np

from fairshare.allocation import Allocation
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.ceei import ceei
from fairshare.solvers.errors import InvalidRequest
from fairshare.solvers.progressive import progressive_fill
from fairshare.solvers.waterfill import WaterfillProblem, waterfill
from fairshare.workload.eligibility import MATCHES_NO_MACHINE, machine_types
from fairshare.workload.hierarchy import Hierarchy, build_hierarchy
from fairshare.workload.model import Scenario

ShareRule = Callable[[FloatArray, FloatArray], FloatArray]


def dominant_share_per_task(demands: FloatArray, capacity: FloatArray) -> FloatArray:
    """Each user's dominant share of one task (DRF section 4)."""
    return np.asarray((demands / capacity).max(axis=1), dtype=np.float64)


def asset_share_per_task(demands: FloatArray, capacity: FloatArray) -> FloatArray:
    """Each user's aggregate share of one task, summed over resources (asset fairness)."""
    return np.asarray((demands / capacity).sum(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class PooledInput:
    """What every pooled policy needs, with the scenario-level checks already done."""

    demands: FloatArray
    capacity: FloatArray
    caps: FloatArray
    initial: FloatArray
    warnings: tuple[str, ...]


def prepare(scenario: Scenario, policy: str) -> PooledInput:
    """Pooled capacity, effective caps and minimum shares, and the warnings ``solve`` prints."""
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
    return PooledInput(demands, capacity, caps, initial, tuple(warnings))


def solve_pooled(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """The allocation of ``scenario`` under one of the pooled policies."""
    data = prepare(scenario, policy)
    if policy == "max-min":
        resources_used = np.flatnonzero((data.demands > 0).any(axis=0))
        if len(resources_used) > 1:
            names = [
                scenario.cluster.resources[i] for i in np.flatnonzero(scenario.cluster.total > 0)
            ]
            raise InvalidRequest(
                "--policy",
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
        problem = WaterfillProblem(tree, data.demands, data.capacity, share_per_task, data.initial)
        tasks = progressive_fill(problem) if integral else waterfill(problem)
    return Allocation(
        policy=policy,
        integral=integral,
        tasks=tasks,
        shares=tasks * share_per_task,
        warnings=data.warnings + _queue_warnings(scenario, policy),
    )


def _ceei(scenario: Scenario, data: PooledInput, integral: bool) -> FloatArray:
    divisible = ceei(data.demands, data.capacity, scenario.weights, data.initial, data.caps)
    if not integral:
        return divisible
    ratio_share = np.where(divisible > 0, 1.0 / np.where(divisible > 0, divisible, 1.0), 0.0)
    tree = _with_leaf_caps(build_hierarchy(scenario, flat=True), data.caps)
    tree = _with_weights(tree, np.ones(tree.size))
    start = np.maximum(np.floor(divisible + 1e-9), np.floor(data.initial + 1e-9))
    problem = WaterfillProblem(tree, data.demands, data.capacity, ratio_share, data.initial)
    completed = progressive_fill(problem, start=start)
    leftover = WaterfillProblem(
        tree, data.demands, data.capacity, np.ones(len(divisible)), data.initial
    )
    return progressive_fill(leftover, start=completed)


def _queue_warnings(scenario: Scenario, policy: str) -> tuple[str, ...]:
    if policy == "hdrf" and any(q.min_share > 0 for q in scenario.queues):
        return (
            "static H-DRF has no minimum guarantees for queues; queue min_share is used by "
            "the online fair scheduler (fairshare simulate --policy fair)",
        )
    return ()


def _with_weights(tree: Hierarchy, weight: FloatArray) -> Hierarchy:
    return replace(tree, weight=weight)


def _with_leaf_caps(tree: Hierarchy, caps: FloatArray) -> Hierarchy:
    max_tasks = tree.max_tasks.copy()
    max_tasks[tree.leaf_node] = caps
    return replace(tree, max_tasks=max_tasks)
