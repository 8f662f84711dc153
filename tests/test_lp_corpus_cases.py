"""The failures the seeded wide-range corpus (``fairshare.bench.lp_corpus``, issue 30 item 3)
found, one class per test, on the corpus's own scenarios (pinned by digest in
``tests/test_bench.py``) and on small cases with exact values.

- Integral walks and capped queues: the whole-task walks (TSF section V-D's online rule
  applied offline; Choosy section 5's network flow for integral CMMF) ignored a queue's
  ``max_share`` (corpus scenario 14: 1.19e7 tasks in a queue of 0.035).
- A walk that hung: a user of weight 4e-6 owed 6.3e10 tasks (scenario 287); the jump's
  level search stalled where floats skip integers (a capped user's count past 2^53).
- Maximal, as checked: a task short of a machine's free capacity by more than round-off
  was said to "still fit" (an absolute slack of 1e-7 on machines of 2e-6: scenario 124;
  10^12 tasks on one machine: scenario 561).
- Divisible LPs that gave up: frozen amounts a hair above what fits left HiGHS with an
  infeasible freeze test or status Unknown (scenarios 183, 291, 523, 748, 783, 854, 895,
  930, 950); the chain's relaxed steps solve them, and a level LP no step solves is
  bisected over feasibility LPs (532).
- Hypothesis: on one machine (where a jump's tasks fit exactly when they fit together),
  jumps give the task counts of one task at a time, capped queues included.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.allocation import check_allocation, printed_allocation
from fairshare.allocation.invariants import cap_violations, maximality_violations
from fairshare.allocation.types import Placement
from fairshare.bench.lp_corpus import corpus_scenario
from fairshare.solvers import InvalidRequest, solve
from fairshare.solvers.levels import level_counts
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario

from conftest import run_fairshare, scaled_examples

PLACED = ("cmmf", "tsf", "drfh", "cdrf")
"""The LP policies: placed on machines, divisible by LP and integral by whole-task walks."""


def _solve(document: dict[str, Any], policy: str, integral: bool) -> tuple[Any, Any] | None:
    """The scenario and its allocation, or None when the policy cannot serve it (cmmf on
    several resources)."""
    scenario = parse_scenario(copy.deepcopy(document), "<corpus>")
    try:
        return scenario, solve(scenario, policy, integral=integral)
    except InvalidRequest as err:
        assert "single resource" in str(err)
        return None


QUEUE_CASE = {
    "machines": [{"name": "m", "capacity": {"cpu": 10}}],
    "queues": [{"path": "q", "max_share": 3}],
    "users": [
        {"name": "a", "queue": "q", "demand": {"cpu": 1}},
        {"name": "b", "queue": "q", "demand": {"cpu": 1}},
        {"name": "c", "demand": {"cpu": 1}},
    ],
}
"""Three equal users on 10 CPUs, a and b in a queue of at most 3 tasks: one task at a time
in share order (ties to the first) gives a, b, c, a; the queue is then full, so b and a are
set aside and c takes the other 6: 2, 1 and 7."""


@pytest.mark.parametrize("policy", PLACED)
def test_integral_walks_stop_a_capped_queue_at_its_max_share(policy: str) -> None:
    solved = _solve(QUEUE_CASE, policy, True)
    assert solved is not None
    scenario, allocation = solved
    assert allocation.tasks.tolist() == [2.0, 1.0, 7.0]
    assert check_allocation(scenario, allocation) == []


def test_integral_queue_cap_through_the_executable(tmp_path: Path) -> None:
    path = tmp_path / "queue.json"
    path.write_text(json.dumps(QUEUE_CASE))
    done = run_fairshare("solve", str(path), "--policy", "tsf", "--integral", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    users = json.loads(done.stdout)["users"]
    assert {name: users[name]["tasks"] for name in users} == {"a": 2, "b": 1, "c": 7}
    assert users["c"]["placement"] == {"m": 7}


@pytest.mark.parametrize("index", [1, 14, 15, 23, 26, 42])
def test_corpus_queues_hold_at_most_their_max_share_with_whole_tasks(index: int) -> None:
    """Scenarios whose integral allocations went past the queue's ``max_share`` (14: 1.19e7
    tasks in a queue of 0.035; 15: 34,779 in one of 2.6): now within, and maximal."""
    document = corpus_scenario(index)
    (queue,) = document["queues"]
    for policy in PLACED:
        solved = _solve(document, policy, True)
        if solved is None:
            continue
        scenario, allocation = solved
        tree = build_hierarchy(scenario)
        node = tree.names.index(queue["path"])
        held = float((tree.ancestors @ allocation.tasks)[node])
        assert held <= queue["max_share"], policy
        assert check_allocation(scenario, printed_allocation(scenario, allocation)) == [], policy


def test_level_counts_stop_at_a_limit_far_below_the_level() -> None:
    """Corpus scenario 287's jump: the capped user (3.07 tasks) would reach the level only
    past 10^16 tasks, where floats skip integers and the bisection never closed."""
    step = np.array([5.193318176009965e-12, 4.062616645087327e-06])
    counts = level_counts(np.zeros(2), step, np.array([3.0708053035502525, np.inf]), 69795.2)
    assert counts[0] == 3.0
    # the other: the fewest tasks whose share reaches the level (1.7e10 of them)
    assert round(counts[1] * step[1], 12) >= 69795.2 > round((counts[1] - 1) * step[1], 12)


def test_a_user_owed_sixty_billion_tasks_is_solved_in_jumps() -> None:
    """Corpus scenario 287 (hung for every integral policy): u3 of weight 3.9e-6, demand
    0.000989 CPU, alone on 6.3e7 CPUs besides u0's 3 capped tasks (u1 and u2 are capped
    below one task)."""
    document = corpus_scenario(287)
    for policy in PLACED:
        solved = _solve(document, policy, True)
        assert solved is not None
        scenario, allocation = solved
        assert allocation.tasks.tolist() == [3.0, 0.0, 0.0, 63357725505.0], policy
        assert check_allocation(scenario, allocation) == [], policy


def test_a_task_short_of_the_free_capacity_does_not_still_fit() -> None:
    """Scenario 124: u1's task of 1.78e-7 CPU on machines of 2.08e-6: 11 tasks leave
    1.22e-7, short of a twelfth; the old absolute slack of 1e-7 called it a fit."""
    scenario = parse_scenario(corpus_scenario(124), "<corpus>")
    allocation = solve(scenario, "tsf", integral=True)
    assert allocation.warnings == ()
    assert maximality_violations(scenario, allocation) == []
    # one task fewer on a machine of u1 is a real fit, and the check still says so
    placement = allocation.placement
    assert placement is not None
    entry = int(np.flatnonzero(placement.users == 1)[0])
    tasks = placement.tasks.copy()
    tasks[entry] -= 1
    fewer = allocation.tasks.copy()
    fewer[1] -= 1
    trimmed = dataclasses.replace(
        allocation,
        tasks=fewer,
        placement=Placement(placement.users, placement.machines, tasks, placement.shape),
    )
    assert maximality_violations(scenario, trimmed) != []


@pytest.mark.parametrize(
    ("index", "policy"),
    [
        (183, "cdrf"),
        (291, "cdrf"),
        (523, "tsf"),
        (523, "cdrf"),
        (532, "drfh"),
        (748, "drfh"),
        (783, "tsf"),
        (854, "tsf"),
        (895, "tsf"),
        (930, "tsf"),
        (950, "cdrf"),
    ],
)
def test_divisible_lps_that_gave_up_solve_and_are_sound_as_printed(index: int, policy: str) -> None:
    """Each ended in "HiGHS could not solve the freeze test LP" (Infeasible, Unknown, or an
    exact check 1.6e-9 off a bound), "the level LP: Unknown" (532: every step, the level
    is bisected) or a false "minimum shares do not fit" (the corpus draws no minimum
    shares)."""
    solved = _solve(corpus_scenario(index), policy, False)
    assert solved is not None
    scenario, allocation = solved
    assert check_allocation(scenario, printed_allocation(scenario, allocation)) == []
    assert float(allocation.tasks.sum()) > 0


@st.composite
def one_machine(draw: st.DrawFn) -> dict[str, Any]:
    """One machine, 2 to 5 users with demands in quarters (exact in binary), weights, some
    user caps and a capped queue over some users: thousands of whole tasks."""
    names = ["cpu", "mem"][: draw(st.integers(1, 2))]
    capacity = {r: float(draw(st.integers(200, 3000))) for r in names}
    users = []
    for k in range(draw(st.integers(2, 5))):
        user: dict[str, Any] = {
            "name": f"u{k}",
            "demand": {r: draw(st.integers(1, 8)) / 4 for r in names},
            "weight": float(draw(st.integers(1, 4))),
        }
        if draw(st.booleans()):
            user["max_tasks"] = float(draw(st.integers(1, 3000)))
        if draw(st.booleans()):
            user["queue"] = "q"
        users.append(user)
    queues = [{"path": "q", "max_share": float(draw(st.integers(1, 4000))) + 0.5}]
    return {"machines": [{"name": "m", "capacity": capacity}], "queues": queues, "users": users}


@settings(deadline=None, max_examples=scaled_examples(15))
@given(document=one_machine(), policy=st.sampled_from(PLACED))
def test_property_jumps_give_the_counts_of_one_task_at_a_time(
    document: dict[str, Any], policy: str
) -> None:
    from test_limits import set_jump_min_tasks  # noqa: PLC0415

    runs = []
    for minimum in (10**18, 1):  # never jump, then jump whenever a level gives a task
        with pytest.MonkeyPatch.context() as patch:
            set_jump_min_tasks(patch, minimum)
            solved = _solve(document, policy, True)
        if solved is None:
            return
        scenario, allocation = solved
        assert check_allocation(scenario, allocation) == [], minimum
        assert cap_violations(scenario, allocation) == []
        runs.append(allocation.tasks.tolist())
    assert runs[1] == runs[0]
