"""Every worked example of the DRF, H-DRF and FAIR papers, with the papers' exact values.

Each test loads the scenario shipped in examples/ (the same files `fairshare solve` runs), solves
it divisibly and integrally, asserts the paper's numbers, and runs the shared invariant checks.
"""

from __future__ import annotations

import pytest

from fairshare.allocation import check_allocation
from fairshare.solvers import solve

from conftest import example


def tasks_of(name: str, policy: str, *, integral: bool = False) -> dict[str, float]:
    scenario = example(name)
    allocation = solve(scenario, policy, integral=integral)
    assert check_allocation(scenario, allocation) == []
    return {u.name: float(t) for u, t in zip(scenario.users, allocation.tasks, strict=True)}


def shares_of(name: str, policy: str) -> dict[str, float]:
    scenario = example(name)
    allocation = solve(scenario, policy)
    return {u.name: float(s) for u, s in zip(scenario.users, allocation.shares, strict=True)}


def approx(values: dict[str, float]) -> object:
    return pytest.approx(values, rel=1e-9, abs=1e-9)


def test_drf_section_4_1_gives_a_three_tasks_and_b_two() -> None:
    assert tasks_of("drf-section-4.1", "drf") == approx({"A": 3, "B": 2})
    assert shares_of("drf-section-4.1", "drf") == approx({"A": 2 / 3, "B": 2 / 3})
    assert tasks_of("drf-section-4.1", "drf", integral=True) == {"A": 3, "B": 2}


def test_drf_section_4_1_asset_fairness_equalises_aggregate_shares() -> None:
    # A's aggregate share per task is 1/9 + 4/18 = 6/18, B's 3/9 + 1/18 = 7/18: 6x = 7y.
    assert tasks_of("drf-section-4.1", "asset") == approx({"A": 2.52, "B": 2.16})


def test_drf_section_4_1_ceei_maximises_nash_welfare() -> None:
    # max x*y subject to x + 3y <= 9 and 4x + y <= 18: both bind at x = 45/11, y = 18/11.
    assert tasks_of("drf-section-4.1", "ceei") == approx({"A": 45 / 11, "B": 18 / 11})


def test_fair_figure_3_max_min_with_minimum_shares() -> None:
    expected = {"pool1": 46, "pool2": 14, "pool3": 25, "pool4": 15}
    assert tasks_of("fair-figure-3", "max-min") == approx(expected)
    assert tasks_of("fair-figure-3", "max-min", integral=True) == expected


def test_hdrf_section_2_1_hierarchical_share_guarantee_480_slots() -> None:
    expected = {"n1-1": 240, "n2-1": 48, "n2-2": 96, "n2-3": 96}
    assert tasks_of("hdrf-figure-2", "hdrf") == approx(expected)
    assert tasks_of("hdrf-figure-2", "hdrf", integral=True) == expected


def test_hdrf_section_2_1_sibling_sharing_when_n2_3_leaves() -> None:
    expected = {"n1-1": 240, "n2-1": 48 + 32, "n2-2": 96 + 64}
    assert tasks_of("hdrf-figure-2-sibling-sharing", "hdrf") == approx(expected)


def test_hdrf_section_2_1_one_resource_collapsed_equals_hierarchical() -> None:
    # H-DRF section 3.2: collapsing the hierarchy is correct when only one resource is involved.
    assert tasks_of("hdrf-figure-2", "collapsed-drf") == approx(tasks_of("hdrf-figure-2", "hdrf"))


def test_hdrf_section_2_2_dovetailing_jobs_get_dominant_share_0_6() -> None:
    assert tasks_of("hdrf-section-2.2", "drf") == approx({"job1": 20, "job2": 20})
    assert shares_of("hdrf-section-2.2", "drf") == approx({"job1": 0.6, "job2": 0.6})


def test_hdrf_figure_4_static_allocation() -> None:
    expected = {"n1-1": 5, "n2-1": 5, "n2-2": 10}
    assert tasks_of("hdrf-figure-4", "hdrf") == approx(expected)
    assert tasks_of("hdrf-figure-4", "hdrf", integral=True) == expected


def test_hdrf_section_3_2_hdrf_keeps_share_guarantee_of_n2() -> None:
    assert tasks_of("hdrf-section-3.2", "hdrf") == approx({"n1-1": 5, "n2-1": 5, "n2-2": 5})


def test_hdrf_section_3_2_collapsed_hierarchy_gives_n2_only_a_third() -> None:
    expected = {"n1-1": 20 / 3, "n2-1": 10 / 3, "n2-2": 10 / 3}
    assert tasks_of("hdrf-section-3.2", "collapsed-drf") == approx(expected)


def test_hdrf_figure_5_static_allocation() -> None:
    expected = {"n1-1": 2, "n2-1": 2, "n3-1": 2, "n3-2": 3, "n4-1": 3}
    assert tasks_of("hdrf-figure-5", "hdrf") == approx(expected)
    assert tasks_of("hdrf-figure-5", "hdrf", integral=True) == expected


def test_hdrf_figure_7_left_all_three_leaves_demanding() -> None:
    assert tasks_of("hdrf-figure-6", "hdrf") == approx({"n1-1": 20, "n2-1": 30, "n2-2": 10})
    assert shares_of("hdrf-figure-6", "hdrf")["n1-1"] == pytest.approx(0.6)


def test_hdrf_figure_7_right_population_monotonicity_fails() -> None:
    assert tasks_of("hdrf-figure-7-right", "hdrf") == approx({"n1-1": 50 / 3, "n2-1": 50})
    assert shares_of("hdrf-figure-7-right", "hdrf")["n1-1"] == pytest.approx(0.5)


def test_hdrf_figure_8_weights_4_to_1_on_49_servers() -> None:
    expected = {"n1-1": 156.8, "n1-2": 196, "n2-1": 19.6, "n2-2": 19.6}
    assert tasks_of("hdrf-figure-8", "hdrf") == approx(expected)
    shares = shares_of("hdrf-figure-8", "hdrf")
    assert shares == approx({"n1-1": 0.8, "n1-2": 1.0, "n2-1": 0.1, "n2-2": 0.1})
    integral = tasks_of("hdrf-figure-8", "hdrf", integral=True)
    assert integral["n1-2"] == 196
    assert integral["n1-1"] + integral["n2-1"] + integral["n2-2"] == 196
    assert integral["n1-1"] in (156, 157)
    assert integral["n2-1"] in (19, 20) and integral["n2-2"] in (19, 20)
