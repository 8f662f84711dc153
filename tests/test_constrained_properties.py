"""Property tests of the constraint-aware solvers on random heterogeneous clusters.

- Every policy, divisible and integral, passes the shared invariant checks.
- CMMF, TSF, CDRF and DRFH divisible allocations are leximin (weighted max-min) optimal, checked
  by an LP written here from scratch over per-machine variables (scipy, not the solvers' engine):
  no user can gain unless someone at or below its level loses.
- The shares each policy reports are its paper's quantity (task share, dominant share, ...).
- TSF is DRF on one machine and CMMF with one resource (TSF Definitions 5 and 6); per-machine DRF
  is DRF on one machine and independent allocation with one resource (TSF section IV-B1).
- With one-slot machines, integral CMMF's lowest allocation is the divisible one rounded down
  (max-flow integrality, Choosy section 5.1).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from fairshare.allocation import Allocation, check_allocation
from fairshare.cluster import Cluster, Machine
from fairshare.solvers import solve
from fairshare.workload.model import Scenario, User

from conftest import scaled_examples

PLACED = ["cmmf", "independent", "tsf", "drfh", "cdrf", "per-machine-drf"]
LEXIMIN = ["cmmf", "tsf", "drfh", "cdrf"]
SINGLE_RESOURCE = {"cmmf", "independent"}


@st.composite
def placed_scenarios(
    draw: st.DrawFn, *, resources: int | None = None, machines: int | None = None
) -> Scenario:
    """1-4 machines with integer capacities, 1-4 users with whitelists, weights and caps."""
    m = resources if resources is not None else draw(st.integers(1, 2))
    names = ("cpu", "mem")[:m]
    count = machines if machines is not None else draw(st.integers(1, 4))
    machine_list = [
        Machine(f"m{j}", np.array([draw(st.integers(1, 12)) for _ in names], dtype=float))
        for j in range(count)
    ]
    users = []
    for i in range(draw(st.integers(1, 4))):
        demand = np.array([draw(st.integers(0, 4)) for _ in names], dtype=float)
        if not demand.any():
            demand[0] = 1.0
        allowed = draw(st.lists(st.integers(0, count - 1), min_size=1, unique=True))
        whitelist = frozenset(f"m{j}" for j in allowed) if draw(st.booleans()) else None
        cap = float(draw(st.integers(0, 12))) if draw(st.integers(0, 3)) == 0 else np.inf
        users.append(
            User(
                f"u{i}",
                demand,
                weight=float(draw(st.integers(1, 3))),
                max_tasks=cap,
                machines=whitelist,
            )
        )
    return Scenario("<hypothesis>", Cluster.build(names, machine_list), (), tuple(users))


def share_per_task(scenario: Scenario, policy: str) -> np.ndarray:
    """What one task adds to a user's share under ``policy``, from the papers' definitions."""
    demands = scenario.demands
    capacities = scenario.cluster.capacities
    with np.errstate(divide="ignore"):
        per_machine = np.where(
            demands[:, None, :] > 0, capacities[None] / demands[:, None, :], np.inf
        )
    alone = per_machine.min(axis=2)  # users x machines: tasks one machine holds
    if policy == "tsf":  # TSF V-A: tasks alone on the whole cluster, constraints removed
        return 1 / alone.sum(axis=1)
    if policy == "cdrf":  # TSF IV-B3: tasks alone on the machines the user may use
        return 1 / (alone * scenario.eligibility()).sum(axis=1)
    if policy == "drfh":  # TSF IV-B2: global dominant share
        return (demands / scenario.cluster.total).max(axis=1)
    return demands.max(axis=1)  # CMMF: the amount of the one resource held


def leximin_violations(
    scenario: Scenario, allocation: Allocation, per_task: np.ndarray
) -> list[str]:
    """Users whose level could rise while every user at or below it keeps its tasks."""
    n, k = len(scenario.users), len(scenario.cluster.machines)
    eligible = scenario.eligibility()
    demands, capacities = scenario.demands, scenario.cluster.capacities
    level = allocation.tasks * per_task / scenario.weights
    # Variables x[i, j] (row-major); machine rows: sum_i x_ij d_ir <= c_jr.
    a_ub, b_ub = [], []
    for j in range(k):
        for r in range(demands.shape[1]):
            row = np.zeros(n * k)
            row[np.arange(n) * k + j] = demands[:, r]
            a_ub.append(row)
            b_ub.append(capacities[j, r])
    bounds = [(0.0, None if eligible[i, j] else 0.0) for i in range(n) for j in range(k)]
    out = []
    for i in range(n):
        if allocation.tasks[i] >= scenario.users[i].cap - 1e-7:
            continue
        rows, rhs = list(a_ub), list(b_ub)
        for other in range(n):
            total = np.zeros(n * k)
            total[other * k : (other + 1) * k] = 1.0
            rows.append(total)  # caps
            rhs.append(min(scenario.users[other].cap, 1e9))
            if other != i and level[other] <= level[i] + 1e-9:
                rows.append(-total)  # keep everyone at or below i's level
                rhs.append(-allocation.tasks[other] + 1e-9)
        goal = np.zeros(n * k)
        goal[i * k : (i + 1) * k] = -1.0
        result = linprog(goal, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds)
        assert result.status == 0, result.message
        if -result.fun > allocation.tasks[i] + 1e-6 * max(1.0, allocation.tasks[i]):
            out.append(
                f"{scenario.users[i].name} could rise from {allocation.tasks[i]} to {-result.fun}"
            )
    return out


def solvable(scenario: Scenario, policy: str) -> bool:
    return policy not in SINGLE_RESOURCE or len(scenario.cluster.resources) == 1


@pytest.mark.parametrize("policy", PLACED)
@pytest.mark.parametrize("integral", [False, True])
@settings(max_examples=scaled_examples(40), deadline=None)
@given(scenario=placed_scenarios())
def test_placed_allocations_satisfy_every_invariant(
    policy: str, integral: bool, scenario: Scenario
) -> None:
    if not solvable(scenario, policy):
        scenario = Scenario(
            scenario.source,
            Cluster.build(
                ("cpu",), [Machine(m.name, m.capacity[:1]) for m in scenario.cluster.machines]
            ),
            (),
            tuple(
                User(
                    u.name,
                    np.array([max(u.demand[0], 1.0)]),
                    u.weight,
                    u.queue,
                    u.max_tasks,
                    machines=u.machines,
                )
                for u in scenario.users
            ),
        )
    allocation = solve(scenario, policy, integral=integral)
    assert check_allocation(scenario, allocation) == []
    assert allocation.placement is not None
    assert np.allclose(allocation.placement.per_user(), allocation.tasks)


@pytest.mark.parametrize("policy", LEXIMIN)
@settings(max_examples=scaled_examples(50), deadline=None)
@given(data=st.data())
def test_divisible_allocations_are_leximin_optimal(policy: str, data: st.DataObject) -> None:
    resources = 1 if policy == "cmmf" else None
    scenario = data.draw(placed_scenarios(resources=resources))
    allocation = solve(scenario, policy)
    per_task = share_per_task(scenario, policy)
    assert leximin_violations(scenario, allocation, per_task) == []
    assert allocation.shares == pytest.approx(allocation.tasks * per_task, rel=1e-6, abs=1e-9)


@settings(max_examples=scaled_examples(60), deadline=None)
@given(scenario=placed_scenarios(machines=1))
def test_tsf_and_per_machine_drf_are_drf_on_one_machine(scenario: Scenario) -> None:
    drf = solve(scenario, "drf").tasks
    assert solve(scenario, "tsf").tasks == pytest.approx(drf, rel=1e-6, abs=1e-9)
    assert solve(scenario, "per-machine-drf").tasks == pytest.approx(drf, rel=1e-6, abs=1e-9)


@settings(max_examples=scaled_examples(60), deadline=None)
@given(scenario=placed_scenarios(resources=1))
def test_one_resource_tsf_is_cmmf_and_per_machine_drf_is_independent(scenario: Scenario) -> None:
    # TSF's h_i is C / d_i with one resource, so task shares rank users as CMMF's amounts do
    # only when the weights absorb the demand; compare on unit demands, where both coincide.
    unit = Scenario(
        scenario.source,
        scenario.cluster,
        (),
        tuple(
            User(u.name, np.ones(1), u.weight, u.queue, u.max_tasks, machines=u.machines)
            for u in scenario.users
        ),
    )
    cmmf = solve(unit, "cmmf").tasks
    assert solve(unit, "tsf").tasks == pytest.approx(cmmf, rel=1e-6, abs=1e-9)
    independent = solve(scenario, "independent").tasks
    assert solve(scenario, "per-machine-drf").tasks == pytest.approx(
        independent, rel=1e-6, abs=1e-9
    )


@settings(max_examples=scaled_examples(60), deadline=None)
@given(data=st.data())
def test_integral_cmmf_lowest_allocation_is_divisible_rounded_down(data: st.DataObject) -> None:
    count = data.draw(st.integers(1, 8))
    users = []
    for i in range(data.draw(st.integers(1, 5))):
        allowed = data.draw(st.lists(st.integers(0, count - 1), min_size=1, unique=True))
        users.append(User(f"u{i}", np.ones(1), machines=frozenset(f"m{j}" for j in allowed)))
    cluster = Cluster.build(("slots",), [Machine(f"m{j}", np.ones(1)) for j in range(count)])
    scenario = Scenario("<hypothesis>", cluster, (), tuple(users))
    divisible = solve(scenario, "cmmf").tasks
    integral = solve(scenario, "cmmf", integral=True).tasks
    assert integral.min() == np.floor(divisible.min() + 1e-9)
    assert integral.sum() == pytest.approx(divisible.sum())
