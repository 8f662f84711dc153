"""Property tests of the pooled solvers on random scenarios (Hypothesis).

Invariants (feasible, caps, maximal, non-wasteful) hold for every policy; the max-min
certificate of progressive filling holds for DRF and asset fairness; integral exceeds divisible
by more than a task only when another user's next task did not fit; H-DRF on a flat tree is DRF;
CEEI maximises Nash welfare.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings

from fairshare.allocation import Allocation, check_allocation
from fairshare.cluster import Cluster, Machine
from fairshare.solvers import solve
from fairshare.workload.model import Scenario, User

from conftest import scaled_examples
from strategies import pooled_scenarios

POOLED = ["drf", "asset", "ceei", "hdrf", "collapsed-drf"]


def max_min_certificate(scenario: Scenario, allocation: Allocation) -> list[str]:
    """Progressive filling's optimality condition: every user below its cap is blocked by a
    saturated resource on which no user has a higher weighted share."""
    demands = scenario.demands
    total = scenario.cluster.total
    used = allocation.tasks @ demands
    saturated = used >= total * (1 - 1e-9)
    level = allocation.shares / scenario.weights
    out = []
    for i, user in enumerate(scenario.users):
        if allocation.tasks[i] >= user.cap - 1e-9:
            continue
        ok = any(
            saturated[r]
            and demands[i, r] > 0
            and np.all(level[demands[:, r] > 0] <= level[i] * (1 + 1e-9) + 1e-12)
            for r in range(len(total))
        )
        if not ok:
            out.append(f"{user.name} is neither capped nor a bottleneck maximum")
    return out


@pytest.mark.parametrize("policy", POOLED)
@pytest.mark.parametrize("integral", [False, True])
@settings(max_examples=scaled_examples(60), deadline=None)
@given(scenario=pooled_scenarios(queues=True, min_shares=True))
def test_pooled_allocations_satisfy_every_invariant(
    policy: str, integral: bool, scenario: Scenario
) -> None:
    allocation = solve(scenario, policy, integral=integral)
    assert check_allocation(scenario, allocation) == []
    assert np.all(allocation.tasks >= np.minimum(scenario.min_shares, scenario.caps) - 1e-9)


@pytest.mark.parametrize("policy", ["drf", "asset"])
@settings(max_examples=scaled_examples(150), deadline=None)
@given(scenario=pooled_scenarios())
def test_progressive_filling_is_weighted_max_min_fair(policy: str, scenario: Scenario) -> None:
    assert max_min_certificate(scenario, solve(scenario, policy)) == []


@settings(max_examples=scaled_examples(100), deadline=None)
@given(scenario=pooled_scenarios())
def test_weights_scale_dominant_shares_among_users_blocked_together(scenario: Scenario) -> None:
    allocation = solve(scenario, "drf")
    level = allocation.shares / scenario.weights
    demands = scenario.demands
    uncapped = allocation.tasks < scenario.caps - 1e-9
    for i in np.flatnonzero(uncapped):
        for j in np.flatnonzero(uncapped):
            if np.array_equal(demands[i] > 0, demands[j] > 0):
                assert level[i] == pytest.approx(level[j], rel=1e-9, abs=1e-12)


def test_integral_can_exceed_divisible_when_a_task_does_not_fit() -> None:
    """Why the bound below needs its condition: on 4 CPUs with demands 1 and 4, divisible DRF
    gives 2 and 0.5 tasks, but with whole tasks the large user's first task no longer fits once
    the small one has started, so the small one takes all 4 CPUs."""
    cluster = Cluster.build(["cpu"], [Machine("m", np.array([4.0]))])
    users = (User("small", np.array([1.0])), User("large", np.array([4.0])))
    scenario = Scenario("<inline>", cluster, (), users)
    np.testing.assert_allclose(solve(scenario, "drf").tasks, [2.0, 0.5])
    np.testing.assert_array_equal(solve(scenario, "drf", integral=True).tasks, [4.0, 0.0])


@pytest.mark.parametrize("policy", ["drf", "hdrf", "asset"])
@settings(max_examples=scaled_examples(150), deadline=None)
@given(scenario=pooled_scenarios(queues=True))
def test_integral_above_divisible_by_a_task_only_with_room_others_could_not_use(
    policy: str, scenario: Scenario
) -> None:
    """A user ends more than one task above its divisible share only if some other user ends
    below its own divisible share (its next whole task did not fit)."""
    divisible = solve(scenario, policy).tasks
    integral = solve(scenario, policy, integral=True).tasks
    if np.any(integral > divisible + 1 + 1e-9):
        assert np.any(integral < divisible - 1e-9)


@settings(max_examples=scaled_examples(100), deadline=None)
@given(scenario=pooled_scenarios())
def test_hdrf_without_queues_is_drf(scenario: Scenario) -> None:
    np.testing.assert_allclose(
        solve(scenario, "hdrf").tasks, solve(scenario, "drf").tasks, rtol=1e-9, atol=1e-9
    )
    np.testing.assert_array_equal(
        solve(scenario, "hdrf", integral=True).tasks, solve(scenario, "drf", integral=True).tasks
    )


@settings(max_examples=scaled_examples(100), deadline=None)
@given(scenario=pooled_scenarios(max_users=4))
def test_ceei_is_the_nash_welfare_optimum(scenario: Scenario) -> None:
    """No feasible direction improves sum w_i log x_i: compare with small perturbations."""
    allocation = solve(scenario, "ceei")
    x = allocation.tasks
    w = scenario.weights
    positive = x > 0
    assume(positive.any())
    base = float(np.sum(w[positive] * np.log(x[positive])))
    rng = np.random.default_rng(0)
    demands, total, caps = scenario.demands, scenario.cluster.total, scenario.caps
    for _ in range(200):
        trial = np.clip(x * (1 + 0.05 * rng.standard_normal(len(x))), 0, caps)
        load = (trial @ demands) / total
        trial = trial / max(1.0, float(load.max()))
        if np.any(trial[positive] <= 0):
            continue
        assert float(np.sum(w[positive] * np.log(trial[positive]))) <= base + 1e-7


def test_ceei_prices_a_resource_the_minimum_shares_use_up_out_of_the_market() -> None:
    """Found by Hypothesis: minimum shares (2 x 5 + 1 x 4 CPUs) take all 14 CPUs, so the CPU
    price has no finite equilibrium value; the GPU user must still buy all 4 GPUs."""
    cluster = Cluster.build(["cpu", "gpu"], [Machine("m", np.array([14.0, 4.0]))])
    users = (
        User("u0", np.array([5.0, 0.0]), min_share=2.0),
        User("u1", np.array([1.0, 0.0])),
        User("u2", np.array([0.0, 1.0])),
        User("u3", np.array([1.0, 0.0])),
        User("u4", np.array([4.0, 0.0]), min_share=1.0),
    )
    scenario = Scenario("<inline>", cluster, (), users)
    allocation = solve(scenario, "ceei")
    np.testing.assert_allclose(allocation.tasks, [2.0, 0.0, 4.0, 0.0, 1.0], atol=1e-9)
    assert check_allocation(scenario, allocation) == []
