"""The invariants every allocation must satisfy, for solvers and online policies alike.

Each check returns human-readable violations (empty when the allocation is sound), so tests
can assert on them and the fairness checker can explain them. :func:`check_allocation` runs
them all:

- feasible: no resource (pooled) or machine (placed) over capacity; placement sums to tasks;
- constraints: no task on a machine outside the user's constraint or whitelist;
- caps: no user above ``max_tasks``/``max_share``, no queue above its ``max_share``;
- integral: whole tasks when the allocation claims to be integral;
- maximal: when integral, no user can be given one more task (SPEC section 2);
- non-wasteful: when divisible, every user is at its cap or needs a saturated resource (the
  Pareto-efficiency condition for Leontief demands, DRF section 3).

Examples
--------
DRF section 4.1 on <9 CPUs, 18 GB>: 3 tasks of A and 2 of B are sound; 2 and 2 leave room
for one more task of A; 5 and 2 are over capacity.

>>> import numpy as np
>>> from fairshare.allocation import Allocation, check_allocation
>>> from fairshare.workload import parse_scenario
>>> scenario = parse_scenario(
...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
...     source="drf-section-4.1",
... )
>>> def drf(tasks, integral=True):
...     return Allocation("drf", integral, np.array(tasks), np.zeros(2))
>>> check_allocation(scenario, drf([3.0, 2.0]))
[]
>>> check_allocation(scenario, drf([2.0, 2.0]))
['user A: one more task still fits']
>>> check_allocation(scenario, drf([5.0, 2.0], integral=False))
['cpu: 11 allocated of 9', 'mem: 22 allocated of 18']
"""

from __future__ import annotations

import numpy as np

from fairshare.allocation.types import Allocation
from fairshare.cluster import FloatArray
from fairshare.workload.eligibility import machine_types
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.model import Scenario

TOLERANCE = 1e-7
"""Relative slack of the checks, for solvers' floating-point sums."""


def _over(amount: FloatArray, limit: FloatArray) -> FloatArray:
    """Where ``amount`` exceeds ``limit`` by more than the relative tolerance."""
    return np.asarray(amount > limit + TOLERANCE * np.maximum(1.0, np.abs(limit)))


FIT_NOISE = 1e-12
"""Relative slack of "one more task still fits" (:func:`maximality_violations`): the
round-off of the check's own sums, far below the solvers' fit slack (1e-9 of a capacity)."""
FIT_SHARE = 1e-3
"""... and at most this fraction of the task itself (10^12 tasks on a machine: round-off of
the capacity is more than the task)."""


def _fit_slack(capacity: FloatArray, demand: FloatArray) -> FloatArray:
    """The slack of "one more task still fits": :data:`FIT_NOISE` of the capacity, at most
    ``TOLERANCE`` and :data:`FIT_SHARE` of the task's ``demand``. A task short of the free
    capacity by more than round-off does not fit: a wider slack would call a solver that
    refused it (rightly) not maximal, and only a solver that overfilled the machine by up
    to the slack could pass."""
    slack = np.minimum(np.minimum(TOLERANCE, FIT_NOISE * np.abs(capacity)), FIT_SHARE * demand)
    # a resource the task does not need: it fits unless the machine is over (as before)
    return np.asarray(np.where(demand > 0, slack, TOLERANCE), dtype=np.float64)


def feasibility_violations(scenario: Scenario, allocation: Allocation) -> list[str]:
    """Violations of feasibility: over capacity, negative, or placed tasks not adding up.

    Resources over capacity (pooled, and per machine when placed), negative task counts, and
    users whose placement does not add up to their tasks.

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        Users and machines in scenario order.

    Returns
    -------
    list of str
        One sentence per violation; empty when there is none.
    """
    out = []
    names = scenario.cluster.resources
    if np.any(allocation.tasks < -TOLERANCE):
        out.append("negative task counts")
    used = allocation.tasks @ scenario.demands
    for r in np.flatnonzero(_over(used, scenario.cluster.total)):
        out.append(f"{names[r]}: {used[r]:g} allocated of {scenario.cluster.total[r]:g}")
    placement = allocation.placement
    if placement is not None:
        per_machine = placement.machine_usage(scenario.demands)
        over = _over(per_machine, scenario.cluster.capacities)
        for j, r in zip(*np.nonzero(over), strict=True):
            machine = scenario.cluster.machines[j]
            amount = f"{per_machine[j, r]:g} of {machine.capacity[r]:g}"
            out.append(f"machine {machine.name}: {names[r]} {amount}")
        placed = placement.per_user()
        for i in np.flatnonzero(
            np.abs(placed - allocation.tasks) > TOLERANCE * np.maximum(1, placed)
        ):
            name = scenario.users[i].name
            out.append(f"user {name}: {placed[i]:g} placed but {allocation.tasks[i]:g} tasks")
    return out


def constraint_violations(scenario: Scenario, allocation: Allocation) -> list[str]:
    """Tasks placed outside the user's constraint or whitelist (placed allocations only).

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        Users and machines in scenario order.

    Returns
    -------
    list of str
        One sentence per violation; empty when there is none.
    """
    if allocation.placement is None:
        return []
    placement = allocation.placement
    types = machine_types(scenario)
    allowed = types.eligible[placement.users, types.machine_type[placement.machines]]
    outside = np.flatnonzero(~allowed & (placement.tasks > TOLERANCE))
    return [
        f"user {scenario.users[placement.users[k]].name}: {placement.tasks[k]:g} tasks on "
        f"ineligible machine {scenario.cluster.machines[placement.machines[k]].name}"
        for k in outside
    ]


def cap_violations(scenario: Scenario, allocation: Allocation) -> list[str]:
    """Users above their cap and queues above their ``max_share``.

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        Users and machines in scenario order.

    Returns
    -------
    list of str
        One sentence per violation; empty when there is none.
    """
    out = [
        f"user {scenario.users[i].name}: {allocation.tasks[i]:g} tasks above its cap "
        f"{scenario.users[i].cap:g}"
        for i in np.flatnonzero(_over(allocation.tasks, scenario.caps))
    ]
    tree = build_hierarchy(scenario)
    per_node = tree.ancestors @ allocation.tasks
    for node in np.flatnonzero(_over(per_node, tree.max_tasks)):
        out.append(
            f"queue {tree.names[node]}: {per_node[node]:g} tasks above max_share "
            f"{tree.max_tasks[node]:g}"
        )
    return out


def integrality_violations(allocation: Allocation) -> list[str]:
    """Fractional task counts or placements in an allocation that claims to be integral.

    Parameters
    ----------
    allocation : Allocation
        The allocation to check.

    Returns
    -------
    list of str
        One sentence per violation; empty when there is none.
    """
    if not allocation.integral:
        return []
    frac = np.abs(allocation.tasks - np.round(allocation.tasks))
    out = [
        f"user #{i}: {allocation.tasks[i]:g} tasks is not whole"
        for i in np.flatnonzero(frac > 1e-9)
    ]
    if allocation.placement is not None:
        data = allocation.placement.tasks
        if np.any(np.abs(data - np.round(data)) > 1e-9):
            out.append("placement holds fractional tasks")
    return out


def _headroom(scenario: Scenario, allocation: Allocation) -> FloatArray:
    """Tasks each user could still add before hitting its own or a queue's cap."""
    tree = build_hierarchy(scenario)
    per_node = np.asarray(tree.ancestors @ allocation.tasks)
    room = scenario.caps - allocation.tasks
    for i, leaf in enumerate(tree.leaf_node):
        for node in tree.path_to_root(int(leaf))[1:]:
            room[i] = min(room[i], tree.max_tasks[node] - per_node[node])
    return room


def maximality_violations(scenario: Scenario, allocation: Allocation) -> list[str]:
    """Users with room under their caps whose next task still fits (integral allocations).

    Placed allocations are checked machine by machine.

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        Users and machines in scenario order.

    Returns
    -------
    list of str
        One sentence per violation; empty when there is none.
    """
    if not allocation.integral:
        return []
    demands = scenario.demands
    room = _headroom(scenario, allocation)
    types = machine_types(scenario)
    out = []
    if allocation.placement is None:
        total = scenario.cluster.total
        free = total - allocation.tasks @ demands
        for i in np.flatnonzero(room >= 1 - 1e-9):
            if types.eligible[i].any() and np.all(
                demands[i] <= free + _fit_slack(total, demands[i])
            ):
                out.append(f"user {scenario.users[i].name}: one more task still fits")
        return out
    capacities = scenario.cluster.capacities
    free_per_machine = capacities - allocation.placement.machine_usage(demands)
    for i in np.flatnonzero(room >= 1 - 1e-9):
        slack = _fit_slack(capacities, demands[i])
        fits = np.all(demands[i] <= free_per_machine + slack, axis=1)
        where = np.flatnonzero(fits & types.eligible[i, types.machine_type])
        if len(where):
            machine = scenario.cluster.machines[int(where[0])].name
            out.append(f"user {scenario.users[i].name}: one more task still fits on {machine}")
    return out


def waste_violations(scenario: Scenario, allocation: Allocation) -> list[str]:
    """Users below their caps none of whose resources is saturated (divisible, pooled).

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        Users and machines in scenario order.

    Returns
    -------
    list of str
        One sentence per violation; empty when there is none.
    """
    if allocation.integral or allocation.placement is not None:
        return []
    demands = scenario.demands
    free = scenario.cluster.total - allocation.tasks @ demands
    saturated = free <= TOLERANCE * np.maximum(1.0, scenario.cluster.total)
    room = _headroom(scenario, allocation)
    eligible = machine_types(scenario).eligible.any(axis=1)
    blocked = (demands[:, saturated] > 0).any(axis=1)
    return [
        f"user {scenario.users[i].name}: below its cap and needs no saturated resource"
        for i in np.flatnonzero((room > TOLERANCE) & ~blocked & eligible)
    ]


def solver_violations(scenario: Scenario, allocation: Allocation) -> list[str]:
    """The checks a solver's allocation passes before it is returned
    (:func:`fairshare.solvers.solve`): feasible, caps, integral, maximal and non-wasteful.

    The constraints are left to :func:`check_allocation`: the solvers place tasks through
    the one eligibility model (``workload/eligibility.py``) the check would rebuild, at the
    cost of the solve itself on 100,000 machines.

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        The allocation, as printed (:func:`~fairshare.allocation.printed_allocation`).

    Returns
    -------
    list of str
        One sentence per violation; empty when the allocation passes.
    """
    return (
        feasibility_violations(scenario, allocation)
        + cap_violations(scenario, allocation)
        + integrality_violations(allocation)
        + maximality_violations(scenario, allocation)
        + waste_violations(scenario, allocation)
    )


def check_allocation(scenario: Scenario, allocation: Allocation) -> list[str]:
    """Every invariant violation of ``allocation`` for ``scenario`` (module docstring).

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        The allocation to check, from a solver or an online policy.

    Returns
    -------
    list of str
        One sentence per violation; empty when the allocation is sound.
    """
    return (
        feasibility_violations(scenario, allocation)
        + constraint_violations(scenario, allocation)
        + cap_violations(scenario, allocation)
        + integrality_violations(allocation)
        + maximality_violations(scenario, allocation)
        + waste_violations(scenario, allocation)
    )
