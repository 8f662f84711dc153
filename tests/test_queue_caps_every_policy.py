"""Every solver policy keeps a capped queue within its ``max_share`` (issue 30, item 3).

The flat pooled policies (max-min, drf, asset, ceei, collapsed-drf) share by a flat tree,
which had no queues, and per-machine-drf / independent divide each machine on its own, so
their allocations ignored a queue's ``max_share``: seeded corpus scenario 14
(``fairshare.bench.lp_corpus``) gave "queue q: 1.35e7 tasks above max_share 0.035" and
``solve`` refused its own result (SolverFailure on valid input). Here:

- scenario 14 with integral drf and per-machine-drf: exact tasks and placement, in process and
  once through ``fairshare solve --integral --json``;
- its divisible drf and ceei: the queue ends exactly at its cap (a binding constraint), the
  rest of the cluster goes to the others;
- Hypothesis: for drawn scenarios with capped queues (nested ones too), every solver policy's
  integral and divisible allocation passes ``check_allocation`` (feasible, within every cap,
  maximal) as printed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.allocation import check_allocation, printed_allocation
from fairshare.bench.lp_corpus import corpus_scenario
from fairshare.solvers import SOLVER_POLICIES, InvalidRequest, solve
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario

from conftest import run_fairshare, scaled_examples

SCENARIO_14 = corpus_scenario(14)
"""Users u2 and u3 in queue ``q`` of ``max_share`` 0.035 (less than one task)."""
QUEUE_CAP = SCENARIO_14["queues"][0]["max_share"]


def _scenario_14() -> Any:
    return parse_scenario(copy.deepcopy(SCENARIO_14), "corpus[14]")


def test_scenario_14_queue_cap_is_below_one_task() -> None:
    """The case: queue q holds u2 and u3 and may hold 0.035 tasks in all."""
    assert [u["name"] for u in SCENARIO_14["users"] if u.get("queue") == "q"] == ["u2", "u3"]
    assert QUEUE_CAP == 0.03503843336802554


def test_scenario_14_integral_drf_exact() -> None:
    """Integral DRF: the queue takes no whole task (0.035 < 1); the others share the
    cluster by dominant share, as the H-DRF tree walk gives (its queue tree also caps q)."""
    scenario = _scenario_14()
    allocation = solve(scenario, "drf", integral=True)
    assert allocation.tasks.tolist() == [1984464.0, 2266.0, 0.0, 0.0, 1175438.0]
    assert allocation.tasks.tolist() == solve(scenario, "hdrf", integral=True).tasks.tolist()
    assert check_allocation(scenario, printed_allocation(scenario, allocation)) == []


def test_scenario_14_integral_per_machine_drf_exact() -> None:
    """Integral per-machine DRF: machine by machine; u2 and u3 get nothing (the queue's
    first task would pass 0.035), the others' tasks per machine are exact."""
    scenario = _scenario_14()
    allocation = solve(scenario, "per-machine-drf", integral=True)
    assert allocation.tasks.tolist() == [2122151.0, 29.0, 0.0, 0.0, 71.0]
    assert allocation.placement is not None
    assert allocation.placement.toarray().tolist() == [
        [1856397.0, 265645.0, 1.0, 106.0, 2.0],
        [0.0, 26.0, 0.0, 2.0, 1.0],
        [0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 69.0, 2.0],
    ]
    assert check_allocation(scenario, printed_allocation(scenario, allocation)) == []


@pytest.mark.parametrize("policy", ["drf", "ceei", "asset", "collapsed-drf"])
def test_scenario_14_divisible_queue_ends_at_its_cap(policy: str) -> None:
    """Divisible: the queue's cap binds, so u2 + u3 hold exactly 0.035 tasks (to round-off),
    never more, and the allocation passes every check."""
    scenario = _scenario_14()
    allocation = solve(scenario, policy)
    held = float(allocation.tasks[2] + allocation.tasks[3])
    assert held <= QUEUE_CAP
    assert held == pytest.approx(QUEUE_CAP, rel=1e-6)
    assert check_allocation(scenario, printed_allocation(scenario, allocation)) == []


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("drf", {"u0": 1984464, "u1": 2266, "u2": 0, "u3": 0, "u4": 1175438}),
        ("per-machine-drf", {"u0": 2122151, "u1": 29, "u2": 0, "u3": 0, "u4": 71}),
    ],
)
def test_executable_solve_integral_json_scenario_14(
    tmp_path: Path, policy: str, expected: dict[str, int]
) -> None:
    """``fairshare solve --integral --json`` on scenario 14 exits 0 (it ended in "the
    allocation fails its checks as printed: queue q: ... above max_share") and prints the
    exact counts."""
    path = tmp_path / "corpus-14.json"
    path.write_text(json.dumps(SCENARIO_14))
    done = run_fairshare("solve", str(path), "--policy", policy, "--integral", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert {name: user["tasks"] for name, user in document["users"].items()} == expected


def _with_capped_queues(document: dict[str, Any], caps: list[float], nested: bool) -> Any:
    """``document`` with its users split over a capped queue ``q`` (and, when ``nested``, a
    capped child ``q/r``), whatever queues it had."""
    users = document["users"]
    queues = [{"path": "q", "max_share": caps[0]}]
    if nested:
        queues.append({"path": "q/r", "max_share": caps[1]})
    for k, user in enumerate(users):
        user.pop("queue", None)
        if k % 3 == 0:
            user["queue"] = "q"
        elif k % 3 == 1 and nested:
            user["queue"] = "q/r"
    document["queues"] = queues
    return document


@settings(deadline=None, max_examples=scaled_examples(10))
@given(
    index=st.integers(0, 10**6),
    caps=st.lists(st.floats(0.01, 1e5), min_size=2, max_size=2),
    nested=st.booleans(),
    integral=st.booleans(),
)
def test_property_every_policy_within_queue_caps(
    index: int, caps: list[float], nested: bool, integral: bool
) -> None:
    """Drawn wide-range scenarios (the corpus's generator, seed 41) with capped queues: every
    solver policy's allocation, integral or divisible, is feasible, within every user's and
    queue's cap, and (integral) maximal, as printed."""
    document = _with_capped_queues(corpus_scenario(index, seed=41), caps, nested)
    scenario = parse_scenario(document, "<drawn>")
    members, limits = build_hierarchy(scenario).capped_queues()
    assert len(members) == 1 + nested
    for policy in SOLVER_POLICIES:
        try:
            allocation = solve(scenario, policy, integral=integral)
        except InvalidRequest as err:
            assert "single resource" in str(err)
            continue
        printed = printed_allocation(scenario, allocation)
        assert check_allocation(scenario, printed) == [], policy
        for below, limit in zip(members, limits, strict=True):
            assert float(np.sum(printed.tasks[below])) <= limit * (1 + 1e-9), policy
