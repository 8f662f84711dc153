"""Single-resource policies with placement constraints (Choosy, EuroSys 2013), and the
per-machine filling that independent allocation and per-machine DRF share.

- ``cmmf``: weighted Constrained Max-Min Fairness (Choosy sections 4.2 and 4.2.1): no subset of
  users can reshuffle its machines to raise its lowest weighted amount ``x_i / w_i``. Computed
  by progressive filling with the freeze test (Choosy section 5.1, Algorithm 1) in the LP engine
  of :mod:`fairshare.solvers.filling_lp`, on machine types (Choosy 5.1's coalescing). The share
  is the amount of the resource a user holds (tasks x demand): machines, when every machine has
  capacity 1 and every task takes one. With ``--integral``, whole tasks by network flow
  (:func:`fairshare.solvers.cmmf_flow.cmmf_whole_tasks`, Choosy 5.1's non-divisible case).
- ``independent``: independent allocation (Choosy section 4.1): each machine is split on its
  own among the users that can use it, 1/k each (weighted: in proportion to weight).

How independent allocation treats a user whose demand is met. Choosy defines it for users with
infinite demands (section 4.1 and Theorem 1's proof) and says it is additive: each machine is
allocated in isolation. We read "the k users that can use that machine" as the users that may
run on it *and still want more*: every machine is filled by progressive filling among its
eligible users, all machines at once, and a user that reaches its cap (``max_tasks`` /
``max_share``, its demand) or a queue's ``max_share`` stops taking on every machine, so its
slice of each machine goes to the others there. With infinite demands this is exactly 1/k of
each machine (the paper's Figure 2); caps couple the machines only through the moment a user's
total reaches its cap. A machine whose users are all capped stays partly idle, as per-machine
DRF may (TSF Table I: it is not Pareto optimal). With one resource, per-machine DRF (TSF section
IV-B1) is this same policy, which :func:`per_machine_filling` implements for both.

Minimum shares are placed first (by the LP engine, on usable machine types; infeasible ones
are an ``InvalidRequest``), and a user's slice of a machine rises from its minimum there as the
others catch up, as in FAIR Appendix A.
"""

from __future__ import annotations

import numpy as np

from fairshare.allocation import Allocation
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.cmmf_flow import cmmf_whole_tasks
from fairshare.solvers.errors import InvalidRequest, SolverFailure
from fairshare.solvers.filling_lp import progressive_filling
from fairshare.solvers.filling_problem import FillingProblem
from fairshare.solvers.machine_pool import QueueCaps
from fairshare.solvers.per_machine import per_machine_whole_tasks
from fairshare.solvers.placed import (
    PlacedInput,
    placed_allocation,
    prepare_placed,
    spread_over_machines,
    whole_minimums,
)
from fairshare.workload.model import Scenario

_REL_TOL = 1e-10
"""Relative tolerance of the per-machine filling's saturation and cap tests."""


def single_resource(scenario: Scenario, policy: str, instead: str) -> int:
    """The one resource the users demand, for a single-resource policy.

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.
    policy : str
        The policy's SPEC name (for the message).
    instead : str
        The policies to suggest for several resources (for the message).

    Returns
    -------
    int
        The resource's index in the cluster's resource order.

    Raises
    ------
    InvalidRequest
        The users demand several resources (or none).
    """
    demanded = np.flatnonzero((scenario.demands > 0).any(axis=0))
    if len(demanded) != 1:
        names = ", ".join(scenario.cluster.resources[r] for r in demanded)
        raise InvalidRequest(
            "policy",
            f"{policy} shares a single resource, but the users demand {names}; "
            f"use {instead} for several resources",
        )
    return int(demanded[0])


def solve_cmmf(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """Weighted CMMF (Choosy 4.2.1) by progressive filling over machine types (Choosy 5.1).

    Divisible: the filling LP with the freeze test (Choosy Algorithm 1); integral: whole
    tasks by network flow (Choosy 5.1's non-divisible case).

    Parameters
    ----------
    scenario : Scenario
        The validated scenario; its users demand one resource.
    policy : str
        ``cmmf``.
    integral : bool
        Whole tasks instead of the divisible allocation.

    Returns
    -------
    Allocation
        Tasks, the placement, and as shares the amount of the resource each user holds.

    Raises
    ------
    InvalidRequest
        The users demand several resources, or minimum shares that do not fit.
    SolverFailure
        HiGHS could not solve a filling LP.

    Examples
    --------
    Choosy Figure 1: four users with constraints on ten one-slot machines. CMMF (Figure 4)
    gives u1 and u2 1.5 machines each divisibly, and 2 and 1 with whole machines:

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": f"m{k}", "capacity": {"slots": 1}} for k in range(1, 11)],
    ...      "users": [{"name": "u1", "machines": ["m1", "m4"]},
    ...                {"name": "u2", "machines": ["m3", "m4"]},
    ...                {"name": "u3", "machines": ["m2", "m3", "m4", "m6", "m7"]},
    ...                {"name": "u4", "machines": [f"m{k}" for k in range(5, 11)]}]},
    ...     source="choosy-figure-1",
    ... )
    >>> solve_cmmf(scenario, "cmmf", integral=False).tasks.round(6).tolist()
    [1.5, 1.5, 3.0, 4.0]
    >>> solve_cmmf(scenario, "cmmf", integral=True).tasks.tolist()
    [2.0, 1.0, 3.0, 4.0]
    """
    resource = single_resource(scenario, policy, "tsf or cdrf")
    data = prepare_placed(scenario)
    demand = scenario.demands[:, resource]
    lp_solves = None
    if integral:
        placement = cmmf_whole_tasks(
            data.types,
            scenario.demands,
            scenario.weights,
            data.caps,
            whole_minimums(data.initial),
            QueueCaps(data.group_members, data.group_caps, len(scenario.users)),
        )
    else:
        placement, lp_solves = data.fill(scenario, demand)
    return placed_allocation(
        policy, integral, placement, placement.per_user() * demand, data.warnings, lp_solves
    )


def solve_independent(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """Independent allocation (Choosy 4.1): every machine split among the users that can use
    it, in proportion to their weights (module docstring: users whose demand is met drop
    out of every machine's split).

    Parameters
    ----------
    scenario : Scenario
        The validated scenario; its users demand one resource.
    policy : str
        ``independent``.
    integral : bool
        Whole tasks, machine by machine.

    Returns
    -------
    Allocation
        Tasks, the placement, and as shares the amount of the resource each user holds.

    Raises
    ------
    InvalidRequest
        The users demand several resources, or minimum shares that do not fit.
    SolverFailure
        The per-machine filling found no next event or exhausted its budget.

    Examples
    --------
    Choosy Figure 2 (Figure 1's users): u1 gets 1 + 1/3 machines, u2 1/2 + 1/3,
    u3 1 + 1/2 + 1/3 + 1/2 + 1/2 and u4 1 + 1/2 + 1/2 + 3, in sixths:

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": f"m{k}", "capacity": {"slots": 1}} for k in range(1, 11)],
    ...      "users": [{"name": "u1", "machines": ["m1", "m4"]},
    ...                {"name": "u2", "machines": ["m3", "m4"]},
    ...                {"name": "u3", "machines": ["m2", "m3", "m4", "m6", "m7"]},
    ...                {"name": "u4", "machines": [f"m{k}" for k in range(5, 11)]}]},
    ...     source="choosy-figure-1",
    ... )
    >>> allocation = solve_independent(scenario, "independent", integral=False)
    >>> (allocation.tasks * 6).round(6).tolist()
    [8.0, 5.0, 17.0, 30.0]
    """
    resource = single_resource(scenario, policy, "per-machine-drf")
    data = prepare_placed(scenario)
    capacity = data.types.capacity[:, resource]
    demand = scenario.demands[:, resource]
    with np.errstate(divide="ignore"):
        fraction = demand[:, None] / capacity[None, :]  # of one machine, per task
    fraction = np.where(data.usable, fraction, np.inf)
    return per_machine_allocation(scenario, policy, integral, data, fraction)


def per_machine_allocation(
    scenario: Scenario,
    policy: str,
    integral: bool,
    data: PlacedInput,
    share_per_task_per_type: FloatArray,
) -> Allocation:
    """Independent allocation / per-machine DRF from each user's share of one machine.

    Divisible: minimum shares placed first, then :func:`per_machine_filling`; integral:
    whole tasks machine by machine (minimum shares ignored, with a warning).

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.
    policy : str
        ``independent`` or ``per-machine-drf``.
    integral : bool
        Whole tasks instead of the divisible allocation.
    data : PlacedInput
        The scenario's machine types, caps and minimum shares.
    share_per_task_per_type : FloatArray
        Users x types: user i's share of one machine of type t per task (its dominant
        share there); inf where the user may not run.

    Returns
    -------
    Allocation
        Tasks, the placement, and as shares the sum over machines of the user's share of
        each (machines' worth; for ``independent``, the amount of the resource held).

    Raises
    ------
    InvalidRequest
        Minimum shares that do not fit.
    SolverFailure
        The per-machine filling found no next event or exhausted its budget.
    """
    if integral:
        placement = per_machine_whole_tasks(
            data.types,
            scenario.demands,
            share_per_task_per_type,
            scenario.weights,
            data.caps,
            QueueCaps(data.group_members, data.group_caps, len(scenario.users)),
        )
        per_type = np.zeros_like(share_per_task_per_type)
        np.add.at(
            per_type,
            (placement.users, data.types.machine_type[placement.machines]),
            placement.tasks,
        )
        warnings = data.warnings
        if np.any(data.initial > 0):
            warnings += (
                f"{policy} --integral ignores minimum shares (each machine is divided on its "
                "own); the divisible allocation honours them",
            )
    else:
        problem = data.problem(scenario, np.ones(len(scenario.users)))
        start = _place_minimums(problem)
        per_type = per_machine_filling(problem, share_per_task_per_type, start)
        user, kind = np.nonzero(per_type > 0)
        placement = data.within_caps(
            spread_over_machines(data.types, user, kind, per_type[user, kind], len(scenario.users))
        )
        per_type = np.zeros_like(share_per_task_per_type)
        np.add.at(
            per_type,
            (placement.users, data.types.machine_type[placement.machines]),
            placement.tasks,
        )
        warnings = data.warnings
    finite = np.where(np.isfinite(share_per_task_per_type), share_per_task_per_type, 0.0)
    shares = (per_type * finite).sum(axis=1)
    if policy == "independent":
        resource = single_resource(scenario, policy, "per-machine-drf")
        shares = placement.per_user() * scenario.demands[:, resource]
    return placed_allocation(policy, integral, placement, shares, warnings)


def _place_minimums(problem: FillingProblem) -> FloatArray:
    """users x types: a placement of the minimum shares on usable types (an LP vertex), or
    ``InvalidRequest`` when they do not fit."""
    users, types = problem.usable.shape
    if not np.any(problem.initial > 0):
        return np.zeros((users, types))
    fixed = FillingProblem(
        capacity=problem.capacity,
        count=problem.count,
        usable=problem.usable,
        demands=problem.demands,
        share_per_task=problem.share_per_task,
        weights=problem.weights,
        caps=problem.initial,
        initial=problem.initial,
        group_members=problem.group_members,
        group_caps=problem.group_caps,
    )
    return progressive_filling(fixed).per_type(types)


def per_machine_filling(
    problem: FillingProblem, share_per_task_per_type: FloatArray, start: FloatArray
) -> FloatArray:
    """Per-machine progressive filling (Choosy 4.1; TSF IV-B1), all machines at once.

    On every machine of type t, user i's share ``s_it`` (its share of that one machine: tasks
    there times ``share_per_task_per_type[i, t]``) rises as ``w_i * tau`` with a common
    parameter ``tau``, from the share its minimum placement ``start`` gives it. A pair stops
    when a resource it needs saturates on that type (DRF's progressive filling on one machine),
    and all of a user's pairs stop when its total reaches its cap or a queue's cap does.
    Between two events every share grows linearly, so the loop jumps from event to event: at
    most (users + types x resources + pairs + queues) of them. Without caps this is, type by
    type, DRF on one machine in closed form.

    Parameters
    ----------
    problem : FillingProblem
        Machine types, usable pairs, demands, weights, user caps and queue caps.
    share_per_task_per_type : FloatArray
        Users x types: user i's share of one machine of type t per task; inf where it may
        not run.
    start : FloatArray
        Users x types: the tasks of the minimum shares' placement, where filling starts.

    Returns
    -------
    FloatArray
        Users x types: tasks on all machines of the type together.

    Raises
    ------
    SolverFailure
        Users still rising but no next event, or the event budget exhausted.
    """
    capacity = problem.capacity
    count = problem.count
    demands = problem.demands
    weights = problem.weights
    usable: BoolArray = problem.usable & np.isfinite(share_per_task_per_type)
    per_task = np.where(usable, share_per_task_per_type, 1.0)
    # tasks on a whole type per unit of share on one of its machines
    tasks_per_share = np.where(usable, count[None, :] / per_task, 0.0)
    start_share = np.where(usable, start / np.where(tasks_per_share > 0, tasks_per_share, 1), 0)
    share = start_share.copy()
    caps = problem.caps
    groups = [np.asarray(g, dtype=np.int64) for g in problem.group_members]
    group_caps = problem.group_caps
    total = capacity * count[:, None]
    needs = demands > 0
    user_open = np.asarray(usable.any(axis=1), dtype=np.bool_)
    blocked = ~usable
    saturated = np.zeros_like(total, dtype=np.bool_)
    tau = 0.0
    budget = 4 * (usable.sum() + total.size + len(caps) + len(groups)) + 10

    def tasks_now() -> FloatArray:
        """Users x types: the tasks the current shares give."""
        return np.asarray(share * tasks_per_share, dtype=np.float64)

    def update_blocks() -> None:
        """Stop the pairs on saturated types and the users at their or a queue's cap."""
        nonlocal saturated, blocked, user_open
        x = tasks_now()
        used = np.einsum("it,ir->tr", x, demands)
        saturated |= used >= total * (1 - _REL_TOL)
        blocked |= (needs.astype(np.float64) @ saturated.T.astype(np.float64)) > 0
        n = x.sum(axis=1)
        room = np.where(np.isfinite(caps), caps - n, np.inf)
        user_open &= room > _REL_TOL * np.maximum(1.0, np.where(np.isfinite(caps), caps, 1.0))
        for g, members in enumerate(groups):
            limit = float(group_caps[g])
            if n[members].sum() >= limit - _REL_TOL * max(1.0, limit):
                user_open[members] = False

    update_blocks()
    for _ in range(budget):
        live = usable & ~blocked & user_open[:, None]
        target = weights[:, None] * tau
        rising = live & (target >= start_share - _REL_TOL * np.maximum(start_share, 1e-300))
        waiting = live & ~rising
        if not rising.any() and not waiting.any():
            return tasks_now()
        share = np.where(rising, np.maximum(share, target), share)
        steps = [np.inf]
        if waiting.any():
            steps.append(
                float((start_share[waiting] / weights[np.nonzero(waiting)[0]]).min()) - tau
            )
        rate = np.where(rising, weights[:, None] * tasks_per_share, 0.0)  # tasks per unit tau
        if rising.any():
            x = tasks_now()
            used = np.einsum("it,ir->tr", x, demands)
            speed = np.einsum("it,ir->tr", rate, demands)
            moving = (speed > 0) & ~saturated
            if moving.any():
                steps.append(float((np.maximum(total - used, 0)[moving] / speed[moving]).min()))
            n = x.sum(axis=1)
            user_rate = rate.sum(axis=1)
            capped = (user_rate > 0) & np.isfinite(caps)
            if capped.any():
                steps.append(float((np.maximum(caps - n, 0)[capped] / user_rate[capped]).min()))
            for g, members in enumerate(groups):
                group_rate = float(user_rate[members].sum())
                if group_rate > 0:
                    room = float(group_caps[g]) - float(n[members].sum())
                    steps.append(max(room, 0.0) / group_rate)
        step = min(steps)
        if not np.isfinite(step):
            raise SolverFailure("per-machine filling found rising users but no next event")
        step = max(step, 0.0)
        tau += step
        share = np.where(rising, share + step * weights[:, None], share)
        update_blocks()
    raise SolverFailure("per-machine filling did not converge (event budget exhausted)")
