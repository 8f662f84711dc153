"""The LP policies on wide numeric ranges (issue 14, item 8).

Weights from 1e-6 to 1e6, demands spanning twelve orders of magnitude and tiny demands on
huge capacities used to make HiGHS drop coefficients (``HiGHS rejected the filling LP``), let
the LP policies give a user a few millionths of a task above its cap, or silently give capped
users nothing (machine-boundary snapping of 1e-9 of a machine holding 10^12 tasks). Now:

- on one machine type without constraints, tsf, cdrf and drfh equal drf, and cmmf equals
  max-min, over wide random ranges (Hypothesis);
- caps are caps: no user above ``max_tasks`` / ``max_share`` and no queue above its
  ``max_share``, with zero tolerance;
- a solve that cannot be done is a ``SolverFailure`` (exit 2, one line), never an internal
  exception and never a wrong allocation;
- the fairness checker counts a trial whose LP fails as inconclusive, never as "no gain";
- a cohort member holding 3e-11 of the machine beside a far larger one keeps its tasks to the
  last digits, and a member holding 1e-15 of it (below the rounding of the split) its cap.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import highspy
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.allocation import check_allocation
from fairshare.cli.check import _cell, _markdown_matrix
from fairshare.fairness import check, efficiency, outcomes
from fairshare.solvers import SolverFailure, freeze_test, solve
from fairshare.solvers.filling_lp import _northwest_corner
from fairshare.solvers.filling_model import FillingLP
from fairshare.solvers.placed import prepare_placed
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import Scenario

from conftest import assert_rejected, run_fairshare, scaled_examples

LP_POLICIES = ("cmmf", "independent", "tsf", "drfh", "cdrf", "per-machine-drf")
ONE_RESOURCE = {"cmmf", "independent"}

WIDE_WEIGHTS: dict[str, Any] = {
    "resources": ["cpu"],
    "machines": [{"name": "m", "count": 4, "capacity": {"cpu": 4}}],
    "users": [
        {"name": "a", "weight": 1e-6, "demand": {"cpu": 1}},
        {"name": "b", "weight": 1e6, "demand": {"cpu": 1}, "max_tasks": 9},
        {"name": "c", "weight": 1, "demand": {"cpu": 1}},
    ],
}
WIDE_DEMANDS: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "machines": [{"name": "m", "count": 3, "capacity": {"cpu": 1e6, "mem": 1e6}}],
    "users": [
        {"name": "a", "demand": {"cpu": 1e-6, "mem": 1e6}},
        {"name": "b", "demand": {"cpu": 1e6, "mem": 1e-6}},
        {"name": "c", "demand": {"cpu": 1, "mem": 1}},
    ],
}
TINY_ON_HUGE: dict[str, Any] = {
    "resources": ["cpu"],
    "machines": [{"name": f"m{k}", "capacity": {"cpu": 1e9}} for k in range(3)],
    "queues": [{"path": "q", "max_share": 20}],
    "users": [
        {"name": "a", "demand": {"cpu": 1e-3}, "max_tasks": 7},
        {"name": "b", "demand": {"cpu": 2e-3}, "max_share": 13, "machines": ["m0"]},
        {"name": "c", "demand": {"cpu": 1e-3}, "max_tasks": 3e11, "machines": ["m1", "m2"]},
        {"name": "d", "demand": {"cpu": 1e-6}},
        {"name": "e", "demand": {"cpu": 1e-6}, "queue": "q"},
    ],
}
UNSOLVABLE: dict[str, Any] = {
    # twelve orders of magnitude between machine types, demands and weights at once
    "resources": ["cpu", "mem"],
    "machines": [
        {"name": "m0", "capacity": {"cpu": 5581.900705942243, "mem": 1.277541797921643}},
        {"name": "m1", "capacity": {"cpu": 0.7945268333965315, "mem": 45438067.03339723}},
        {"name": "m2", "capacity": {"cpu": 0.5133731383850227, "mem": 0.03123607594176015}},
    ],
    "users": [
        {
            "name": "u0",
            "demand": {"cpu": 10.801318633905677, "mem": 4.457445337859253},
            "weight": 5206.301454463438,
            "machines": ["m0"],
        },
        {
            "name": "u1",
            "demand": {"cpu": 322798.6519402383, "mem": 0.027092740240943408},
            "weight": 4.278959010456795,
        },
        {
            "name": "u2",
            "demand": {"cpu": 5.567785020411501e-05, "mem": 0.07553079240624634},
            "weight": 83082.11427706825,
            "max_tasks": 11214220.262950636,
        },
        {
            "name": "u3",
            "demand": {"cpu": 9070.846617233345, "mem": 1.3166026645567873e-06},
            "weight": 0.024018943087368207,
            "max_tasks": 150924.70640955554,
            "machines": ["m2"],
        },
    ],
}


def scenario_of(document: dict[str, Any]) -> Scenario:
    return parse_scenario(copy.deepcopy(document), "<test>")


def assert_caps_exact(scenario: Scenario, tasks: np.ndarray) -> None:
    """Zero tolerance: no user above its cap, no queue above its max_share."""
    assert np.all(tasks <= scenario.caps), tasks - scenario.caps
    tree = build_hierarchy(scenario)
    per_node = tree.ancestors @ tasks
    assert np.all(per_node <= tree.max_tasks), per_node - tree.max_tasks


def assert_same_tasks(tasks: np.ndarray, reference: np.ndarray) -> None:
    assert np.allclose(tasks, reference, rtol=1e-6, atol=1e-9 * float(reference.max())), (
        tasks,
        reference,
    )


@pytest.mark.parametrize("policy", ["cmmf", "tsf", "drfh", "cdrf"])
def test_wide_weights_equal_the_pooled_solvers(policy: str) -> None:
    scenario = scenario_of(WIDE_WEIGHTS)
    allocation = solve(scenario, policy)
    reference = solve(scenario, "max-min" if policy == "cmmf" else "drf")
    assert check_allocation(scenario, allocation) == []
    assert_same_tasks(allocation.tasks, reference.tasks)
    # b is capped at 9; c gets 1e6 times a's share of the other 7 slots
    assert allocation.tasks[1] == 9.0
    assert allocation.tasks[2] == pytest.approx(7 / (1 + 1e-6), rel=1e-9)


@pytest.mark.parametrize("policy", ["tsf", "drfh", "cdrf"])
def test_demands_spanning_twelve_orders_equal_drf(policy: str) -> None:
    scenario = scenario_of(WIDE_DEMANDS)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    assert_same_tasks(allocation.tasks, solve(scenario, "drf").tasks)


@pytest.mark.parametrize("policy", LP_POLICIES)
def test_tiny_demands_on_huge_capacities_keep_caps_exactly(policy: str) -> None:
    scenario = scenario_of(TINY_ON_HUGE)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    assert_caps_exact(scenario, allocation.tasks)
    if policy == "cmmf":
        # a and b are capped (7 and 13 tasks, not 0), c at 3e11, e's queue at 20; d the rest
        expected = [7, 13, 3e11, (3e9 - 3e8 - 7e-3 - 26e-3 - 20e-6) / 1e-6, 20]
        assert allocation.tasks == pytest.approx(expected, rel=1e-9)


def test_freeze_test_failure_is_a_solver_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """An LP status HiGHS cannot vouch for in the freeze test is a SolverFailure with its
    reason, not an internal exception that reaches the user as a traceback."""
    scenario = scenario_of(WIDE_WEIGHTS)
    data = prepare_placed(scenario)
    model = FillingLP(data.problem(scenario, scenario.demands[:, 0]))
    model.raise_level()
    # one resource on one type is decided without an LP (full users): make it ask the LP
    monkeypatch.setattr(freeze_test, "full_users", lambda _: np.zeros(model.users, dtype=np.bool_))

    class Failing:
        def __init__(self, highs: highspy.Highs) -> None:
            self.highs = highs

        def getModelStatus(self) -> highspy.HighsModelStatus:  # noqa: N802
            return highspy.HighsModelStatus.kInfeasible

        def __getattr__(self, name: str) -> Any:
            return getattr(self.highs, name)

    model.highs = Failing(model.highs)
    with pytest.raises(SolverFailure, match="freeze test"):
        freeze_test.growable(model)


def test_unsolvable_wide_scenario_is_a_solver_failure_not_a_wrong_allocation() -> None:
    scenario = scenario_of(UNSOLVABLE)
    for policy in ("tsf", "drfh", "cdrf"):
        try:
            allocation = solve(scenario, policy)
        except SolverFailure as err:
            assert "LP" in str(err) or "numerical" in str(err)
        else:
            assert check_allocation(scenario, allocation) == []


@st.composite
def one_type_documents(draw: st.DrawFn, resources: int) -> dict[str, Any]:
    """One machine type (identical machines), no constraints, numbers over 10^-6..10^9."""
    names = ["cpu", "mem"][:resources]
    power = st.floats(-6, 6)
    users = []
    for i in range(draw(st.integers(1, 4))):
        user: dict[str, Any] = {
            "name": f"u{i}",
            "demand": {r: 10 ** draw(power) for r in names},
            "weight": 10 ** draw(power),
        }
        if draw(st.booleans()):
            user["max_tasks"] = 10 ** draw(st.floats(-2, 9))
        users.append(user)
    capacity = {r: 10 ** draw(st.floats(-3, 9)) for r in names}
    count = draw(st.integers(1, 3))
    return {
        "resources": names,
        "machines": [{"name": "m", "count": count, "capacity": capacity}],
        "users": users,
    }


TINY_NEED_OF_A_FULL_RESOURCE: dict[str, Any] = {
    # found by Hypothesis: u0 needs memory at 1e-9 of its cpu (relative to the machine), so
    # the LP could let it "grow" within its tolerance on the full memory: tsf stalled (exit 2)
    "resources": ["cpu", "mem"],
    "machines": [{"name": "m", "count": 1, "capacity": {"cpu": 10, "mem": 1}}],
    "users": [
        {"name": "u0", "demand": {"cpu": 1000, "mem": 1e-6}},
        {"name": "u1", "demand": {"cpu": 1, "mem": 1}},
        {"name": "u2", "demand": {"cpu": 1, "mem": 1}},
    ],
}
TINY_TYPE_BESIDE_A_HUGE_ONE: dict[str, Any] = {
    # u1 may use only m0, a 10^-10 part of the cluster that u0 also may use: once the
    # cluster is full u1 is frozen, but the LP could move u0 off m0 within its tolerance on
    # m2 and let u1 "grow" (cdrf stalled). Progressive filling freezes both at one level.
    "resources": ["cpu"],
    "machines": [
        {"name": "m0", "capacity": {"cpu": 0.010113090339089826}},
        {"name": "m1", "capacity": {"cpu": 7.527388258326191}},
        {"name": "m2", "capacity": {"cpu": 135115668.28081286}},
    ],
    "users": [
        {"name": "u0", "demand": {"cpu": 0.4692565528907417}, "weight": 55678.417830018756},
        {
            "name": "u1",
            "demand": {"cpu": 0.6630192048841473},
            "weight": 319.46783396395085,
            "max_tasks": 61449435.83564486,
            "machines": ["m0"],
        },
    ],
}


@pytest.mark.parametrize("policy", ["tsf", "cdrf", "drfh"])
def test_tiny_need_of_a_full_resource_freezes_instead_of_stalling(policy: str) -> None:
    scenario = scenario_of(TINY_NEED_OF_A_FULL_RESOURCE)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    # memory is full: u1 + u2 + 1e-6 u0 = 1, with u0 at 1/100 of u1's tasks (equal shares)
    u1 = 1 / (2 + 1e-8)
    assert allocation.tasks == pytest.approx([u1 / 100, u1, u1], rel=1e-9)
    assert_same_tasks(allocation.tasks, solve(scenario, "drf").tasks)


def test_tiny_need_of_a_full_resource_through_the_executable(tmp_path: Path) -> None:
    path = write(tmp_path, "tiny-need", TINY_NEED_OF_A_FULL_RESOURCE)
    done = run_fairshare("solve", str(path), "--policy", "tsf", "--json")
    assert done.returncode == 0, done.stderr
    tasks = {name: user["tasks"] for name, user in json.loads(done.stdout)["users"].items()}
    # exact: memory is full at u1 + u2 + 1e-6 u0 = 1, u0 at 1/100 of u1 (equal shares)
    u1 = 1 / (2 + 1e-8)
    assert tasks == pytest.approx({"u0": u1 / 100, "u1": u1, "u2": u1}, rel=1e-12)


def test_tiny_type_beside_a_huge_one_freezes_both_at_one_level() -> None:
    scenario = scenario_of(TINY_TYPE_BESIDE_A_HUGE_ONE)
    allocation = solve(scenario, "cdrf")
    assert check_allocation(scenario, allocation) == []
    # constrained CDRF: n_i = level * w_i * h'_i (h' its tasks alone on its machines), and
    # the level is the one at which the cluster's cpu is used up
    demand = scenario.demands[:, 0]
    h = np.array([float(scenario.cluster.total[0]) / demand[0], 0.010113090339089826 / demand[1]])
    level = float(scenario.cluster.total[0]) / float((scenario.weights * h * demand).sum())
    expected = level * scenario.weights * h
    assert allocation.tasks == pytest.approx(expected, rel=1e-9)


SILENTLY_WRONG_BEFORE: dict[str, Any] = {
    # one machine, weights 10^10 apart: u2 (memory only, in effect) used to "grow" within the
    # LP's tolerance on the full cpu it needs 3e-6 of per task, and got 0.168 tasks instead of
    # DRF's 8.85e-8, with exit 0
    "resources": ["cpu", "mem"],
    "machines": [{"name": "m0", "capacity": {"cpu": 46393.400467013875, "mem": 40306.80954190498}}],
    "users": [
        {
            "name": "u0",
            "demand": {"cpu": 51320.8636823706, "mem": 0.00026206117499037333},
            "weight": 12.578804332281669,
        },
        {
            "name": "u1",
            "demand": {"cpu": 686488.956157909, "mem": 182091.28491037618},
            "weight": 1.1165512202276718e-06,
        },
        {
            "name": "u2",
            "demand": {"cpu": 3.1473320334647047e-06, "mem": 240266.74721959603},
            "weight": 0.02155539097859341,
        },
        {
            "name": "u3",
            "demand": {"cpu": 897799.8016261586, "mem": 6.372759283492849},
            "weight": 40852.81456187245,
            "max_tasks": 42809442.05753204,
        },
    ],
}


@pytest.mark.parametrize("policy", ["tsf", "cdrf", "drfh"])
def test_growth_within_the_lp_tolerance_is_not_growth(policy: str) -> None:
    scenario = scenario_of(SILENTLY_WRONG_BEFORE)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    assert allocation.tasks[2] == pytest.approx(8.848812142114304e-08, rel=1e-9)
    assert_same_tasks(allocation.tasks, solve(scenario, "drf").tasks)


CAPPED_HEAVY_BESIDE_A_LIGHT_USER: dict[str, Any] = {
    # found by Hypothesis: weights 10^11 apart; once u0 is capped, u1's level coefficient was
    # negligible in the round's unit (dropped), so the level LP was unbounded (exit 2)
    "resources": ["cpu"],
    "machines": [{"name": "m", "count": 1, "capacity": {"cpu": 1.0}}],
    "users": [
        {"name": "u0", "demand": {"cpu": 1.0}, "weight": 1e5, "max_tasks": 0.1},
        {"name": "u1", "demand": {"cpu": 1.0}, "weight": 1e-6},
    ],
}


@pytest.mark.parametrize("policy", ["cmmf", "tsf", "cdrf", "drfh"])
def test_capped_heavy_user_leaves_the_level_bounded(policy: str) -> None:
    scenario = scenario_of(CAPPED_HEAVY_BESIDE_A_LIGHT_USER)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    assert allocation.tasks == pytest.approx([0.1, 0.9], rel=1e-9)


@settings(max_examples=scaled_examples(200), deadline=None)
@given(document=one_type_documents(2))
def test_property_wide_ranges_tsf_cdrf_drfh_equal_drf(document: dict[str, Any]) -> None:
    scenario = scenario_of(document)
    reference = solve(scenario, "drf").tasks
    for policy in ("tsf", "cdrf", "drfh"):
        allocation = solve(scenario, policy)
        assert check_allocation(scenario, allocation) == [], policy
        assert_caps_exact(scenario, allocation.tasks)
        assert_same_tasks(allocation.tasks, reference)


@settings(max_examples=scaled_examples(200), deadline=None)
@given(document=one_type_documents(1))
def test_property_wide_ranges_cmmf_equals_max_min(document: dict[str, Any]) -> None:
    scenario = scenario_of(document)
    allocation = solve(scenario, "cmmf")
    assert check_allocation(scenario, allocation) == []
    assert_caps_exact(scenario, allocation.tasks)
    assert_same_tasks(allocation.tasks, solve(scenario, "max-min").tasks)


TINY_COHORT_MEMBER = {
    "resources": ["cpu"],
    "machines": [{"name": "m", "count": 1, "capacity": {"cpu": 0.1}}],
    "users": [
        {"name": "u0", "demand": {"cpu": 1e6}, "weight": 316227.7660168379},
        {"name": "u1", "demand": {"cpu": 0.1}, "weight": 1e-05},
    ],
}


@pytest.mark.parametrize("policy", ["cmmf", "tsf", "drfh", "cdrf"])
def test_tiny_member_of_a_cohort_keeps_its_tasks_exactly(policy: str) -> None:
    """Found by the cmmf property test: u1 holds 3e-11 of the machine beside u0, one cohort.
    Splitting the cohort among its members took u1's amount as a difference of running sums,
    known only to the rounding of the cohort's total: u1 got 5e-6 less than max-min gives it."""
    scenario = scenario_of(TINY_COHORT_MEMBER)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    reference = solve(scenario, "max-min" if policy == "cmmf" else "drf").tasks
    assert allocation.tasks == pytest.approx(reference, rel=1e-12, abs=0)


TINY_MEMBER_BESIDE_THREE_EQUAL_ONES: dict[str, Any] = {
    "resources": ["cpu"],
    "machines": [{"name": "m", "count": 1, "capacity": {"cpu": 31622776.60168379}}],
    "users": [
        {"name": "u0", "demand": {"cpu": 1.0}, "weight": 1.0},
        {"name": "u1", "demand": {"cpu": 1.0}, "weight": 1.0},
        {"name": "u2", "demand": {"cpu": 1e-06}, "weight": 1.0, "max_tasks": 0.03162277660168379},
        {"name": "u3", "demand": {"cpu": 1.0}, "weight": 1.0},
    ],
}
BELOW_THE_RUNNING_SUMS_ROUNDING = copy.deepcopy(TINY_MEMBER_BESIDE_THREE_EQUAL_ONES)
BELOW_THE_RUNNING_SUMS_ROUNDING["users"][2]["max_tasks"] = 1e-3  # 1e-9 cpu: under an ulp


@pytest.mark.parametrize("policy", ["cmmf", "tsf", "drfh", "cdrf"])
@pytest.mark.parametrize(
    "document",
    [TINY_MEMBER_BESIDE_THREE_EQUAL_ONES, BELOW_THE_RUNNING_SUMS_ROUNDING],
    ids=["sliver", "no-cut"],
)
def test_tiny_capped_member_of_a_class_is_not_dropped(
    policy: str, document: dict[str, Any]
) -> None:
    """Found by the cmmf property test: u2 holds 1e-15 of the machine (its cap, 3.16e-8 cpu),
    one class with u0, u1 and u3. Splitting the class among its members (the northwest
    corner) dropped every piece shorter than 1e-15 of the class's total as a rounding sliver,
    and u2's only piece was one: u2 got 0 tasks instead of its cap, the others its share.
    The "no-cut" variant (u2 at 1e-9 cpu, below an ulp of the running sum before it) had no
    piece at all. Now a member left without a piece is placed whole where its run starts."""
    scenario = scenario_of(document)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    assert_caps_exact(scenario, allocation.tasks)
    cap = float(scenario.caps[2])
    assert allocation.tasks[2] == pytest.approx(cap, rel=1e-12)
    rest = (float(scenario.cluster.total[0]) - cap * 1e-6) / 3
    assert allocation.tasks[[0, 1, 3]] == pytest.approx([rest] * 3, rel=1e-12)
    reference = solve(scenario, "max-min" if policy == "cmmf" else "drf").tasks
    assert allocation.tasks == pytest.approx(reference, rel=1e-12, abs=0)


# amounts over 17 orders; whole powers of ten make the extremes side by side likely
AMOUNTS = (
    st.sampled_from([0.0])
    | st.integers(-9, 8).map(lambda p: 10.0**p)
    | st.floats(-9, 8).map(lambda p: 10**p)
)


@settings(max_examples=scaled_examples(200), deadline=None)
@given(
    supply=st.lists(AMOUNTS, min_size=2, max_size=7),
    shape=st.lists(AMOUNTS, min_size=1, max_size=4),
)
def test_property_class_split_keeps_every_member(supply: list[float], shape: list[float]) -> None:
    """The split of a class among its members over several types (which the one-type
    property tests never reach): every member gets its amount to the last digits, however
    small beside the others, and only on types the class holds something on."""
    members = np.array(supply)
    if not members.sum() > 0 or not sum(shape) > 0:
        return
    demand = np.array(shape) * (members.sum() / sum(shape))
    member, kind, amount = _northwest_corner(members, demand)
    assert np.all(amount > 0) and np.all(demand[kind] > 0)
    rescaled = members * (demand.sum() / members.sum())
    got = np.bincount(member, weights=amount, minlength=len(members))
    assert got == pytest.approx(rescaled, rel=1e-12, abs=0)
    on_types = np.bincount(kind, weights=amount, minlength=len(demand))
    assert on_types == pytest.approx(demand, rel=1e-9, abs=1e-12 * demand.sum())


def test_failed_fairness_lp_is_inconclusive_not_no_gain(monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-placement LP that fails used to return 0.0 ("no gain"), so the property "held"."""

    class Failed:
        status = 4
        message = "numerical difficulties"
        fun = 0.0

    monkeypatch.setattr(efficiency, "linprog", lambda *a, **k: Failed())
    outcomes._cache.clear()
    result = check("tsf", "pareto-efficiency", trials=3, seed=0)
    assert result.holds and result.inconclusive == 3
    assert result.verdict() == "inconclusive"
    assert result.to_dict()["inconclusive"] == 3
    assert _cell(result) == "inconclusive (3 of 3)"
    assert "inconclusive (3 of 3)" in _markdown_matrix([result], ["tsf"], ["pareto-efficiency"])


# through the installed executable


def write(tmp_path: Path, name: str, document: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("integral", [False, True], ids=["divisible", "integral"])
@pytest.mark.parametrize("policy", LP_POLICIES)
def test_executable_solve_json_on_wide_weights(tmp_path: Path, policy: str, integral: bool) -> None:
    path = write(tmp_path, "weights", WIDE_WEIGHTS)
    argv = ["solve", str(path), "--policy", policy, "--json"] + (["--integral"] if integral else [])
    done = run_fairshare(*argv)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    tasks = {name: user["tasks"] for name, user in doc["users"].items()}
    per_machine = policy in ("independent", "per-machine-drf")
    assert tasks["b"] <= 9
    if not (integral and per_machine):  # whole tasks machine by machine: b gets 2 on each
        assert tasks["b"] == 9  # capped, exactly
    assert sum(tasks.values()) == pytest.approx(16, rel=1e-9)  # every slot in use
    if integral:
        assert all(float(t).is_integer() for t in tasks.values())
    elif not per_machine:
        assert tasks["c"] == pytest.approx(7 / (1 + 1e-6), rel=1e-9)


@pytest.mark.parametrize("policy", ["cmmf", "tsf", "drfh", "cdrf", "per-machine-drf"])
def test_executable_solve_json_tiny_demands_on_huge_capacities(tmp_path: Path, policy: str) -> None:
    path = write(tmp_path, "tiny", TINY_ON_HUGE)
    done = run_fairshare("solve", str(path), "--policy", policy, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    tasks = {name: user["tasks"] for name, user in doc["users"].items()}
    assert tasks["a"] <= 7 and tasks["b"] <= 13 and tasks["c"] <= 3e11 and tasks["e"] <= 20
    if policy != "per-machine-drf":
        assert tasks["a"] == pytest.approx(7) and tasks["b"] == pytest.approx(13)


@pytest.mark.parametrize("policy", ["tsf", "drfh", "cdrf"])
def test_executable_unsolvable_wide_scenario_is_one_error_line(tmp_path: Path, policy: str) -> None:
    """Exit 0 with a valid allocation, or exit 2 with one line naming the policy and why."""
    path = write(tmp_path, "unsolvable", UNSOLVABLE)
    done = run_fairshare("solve", str(path), "--policy", policy, "--json")
    if done.returncode == 0:
        doc = json.loads(done.stdout)
        assert all(u["tasks"] >= 0 for u in doc["users"].values())
        return
    line = assert_rejected(done)
    assert line.startswith(f"error: {path}: policy {policy}: the solver failed: "), line


def test_executable_check_json_reports_inconclusive() -> None:
    done = run_fairshare(
        "check", "--policy", "tsf", "--property", "pareto-efficiency", "--trials", "2", "--json"
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["inconclusive"] == 0 and doc["holds"] is True


WIDE_WEIGHTS_CONSTRAINED: dict[str, Any] = {
    "resources": ["cpu"],
    "machines": [{"name": f"m{k}", "capacity": {"cpu": 4}} for k in range(4)],
    "users": [
        {"name": "a", "weight": 1e-6, "demand": {"cpu": 1}},
        {"name": "b", "weight": 1e6, "demand": {"cpu": 1}, "machines": ["m0", "m1"]},
        {"name": "c", "weight": 1, "demand": {"cpu": 1}, "machines": ["m1", "m2"]},
    ],
}


@pytest.mark.parametrize("policy", ["cmmf", "tsf", "drfh", "cdrf"])
def test_wide_weights_with_constraints_are_solved(policy: str) -> None:
    """Used to be "HiGHS rejected the filling LP": a level coefficient of 1e-12 was dropped."""
    scenario = scenario_of(WIDE_WEIGHTS_CONSTRAINED)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    # b takes m0 and m1 (8), c all of m2, a what the weights leave it: m3 alone
    assert allocation.tasks == pytest.approx([4, 8, 4], rel=1e-6)


WARM_START_COLUMNS_OFF_THEIR_ROWS: dict[str, Any] = {
    # found by Hypothesis: once u0 is frozen at its cap, the level LP warm-started after the
    # coefficient change came back "optimal" with u1's column 1e-7 above its row (its row
    # values exact): u1 got 0.00099990010 tasks, the cpu over-filled by 1e-4
    "resources": ["cpu", "mem"],
    "machines": [{"name": "m", "count": 1, "capacity": {"cpu": 1000.0, "mem": 10.0}}],
    "users": [
        {"name": "u0", "demand": {"cpu": 1.0, "mem": 10.0}, "weight": 10.0, "max_tasks": 0.1},
        {"name": "u1", "demand": {"cpu": 1e6, "mem": 1e-6}, "weight": 1.0},
    ],
}
WARM_START_STALL: dict[str, Any] = {
    # found by Hypothesis: the same inconsistent warm start made the freeze test see u1 grow
    # on a full cpu ("progressive filling stalled at level 0.9995", exit 2)
    "resources": ["cpu", "mem"],
    "machines": [{"name": "m", "count": 2, "capacity": {"cpu": 1000.0, "mem": 1.0}}],
    "users": [
        {"name": "u0", "demand": {"cpu": 1.0, "mem": 1.0}, "weight": 10.0, "max_tasks": 1.0},
        {"name": "u1", "demand": {"cpu": 1e6, "mem": 1e-6}, "weight": 1.0},
    ],
}


@pytest.mark.parametrize("policy", ["tsf", "cdrf", "drfh"])
@pytest.mark.parametrize(
    ("document", "expected"),
    [(WARM_START_COLUMNS_OFF_THEIR_ROWS, [0.1, 0.0009999]), (WARM_START_STALL, [1.0, 0.001999])],
    ids=["over-filled", "stalled"],
)
def test_warm_start_with_columns_off_their_rows_is_solved_again(
    policy: str, document: dict[str, Any], expected: list[float]
) -> None:
    scenario = scenario_of(document)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    # u1 takes the cpu u0 leaves: (capacity - u0's cpu) / 1e6
    assert allocation.tasks == pytest.approx(expected, rel=1e-12)
    assert_same_tasks(allocation.tasks, solve(scenario, "drf").tasks)


CAP_WITHIN_1E_12_OF_THE_LEVEL: dict[str, Any] = {
    # found by Hypothesis: memory fills with u0 1e-12 below its cap of 10 tasks; the cap test's
    # slack of 1e-12 froze u0 at 10, leaving u1 (which needs 1e-4 memory per task) nothing
    # instead of DRF's 1e-7 tasks
    "resources": ["cpu", "mem"],
    "machines": [{"name": "m", "count": 1, "capacity": {"cpu": 100.0, "mem": 10.0}}],
    "users": [
        {"name": "u0", "demand": {"cpu": 1.0, "mem": 1.0}, "weight": 10.0, "max_tasks": 10.0},
        {"name": "u1", "demand": {"cpu": 1e6, "mem": 1e-4}, "weight": 0.01},
    ],
}


@pytest.mark.parametrize("policy", ["tsf", "cdrf", "drfh"])
def test_cap_just_above_the_level_is_not_reached(policy: str) -> None:
    scenario = scenario_of(CAP_WITHIN_1E_12_OF_THE_LEVEL)
    allocation = solve(scenario, policy)
    assert check_allocation(scenario, allocation) == []
    # equal weighted dominant shares: n0 * 0.1 / 10 = n1 * 1e4 / 0.01, so n0 = 1e8 n1, and
    # memory is full: n0 + 1e-4 n1 = 10
    n1 = 10 / (1e8 + 1e-4)
    assert allocation.tasks == pytest.approx([1e8 * n1, n1], rel=1e-9)
    assert_same_tasks(allocation.tasks, solve(scenario, "drf").tasks)
