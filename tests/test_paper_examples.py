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


# Choosy (EuroSys 2013) and TSF: placement constraints.


def placement_of(name: str, policy: str, *, integral: bool = False) -> dict[str, dict[str, float]]:
    """Tasks per user per machine (machines with none omitted)."""
    scenario = example(name)
    allocation = solve(scenario, policy, integral=integral)
    assert check_allocation(scenario, allocation) == []
    assert allocation.placement is not None
    dense = allocation.placement.toarray()
    names = scenario.cluster.machine_names
    return {
        u.name: {names[j]: round(float(t), 9) for j, t in enumerate(dense[i]) if t > 1e-9}
        for i, u in enumerate(scenario.users)
    }


def test_choosy_figure_2_independent_allocation() -> None:
    expected = {
        "u1": 1 + 1 / 3,
        "u2": 1 / 2 + 1 / 3,
        "u3": 1 + 1 / 2 + 1 / 3 + 1 / 2 + 1 / 2,
        "u4": 1 + 1 / 2 + 1 / 2 + 3,
    }
    assert tasks_of("choosy-figure-1", "independent") == approx(expected)
    placement = placement_of("choosy-figure-1", "independent")
    assert placement["u1"] == approx({"m1": 1, "m4": 1 / 3})
    assert placement["u2"] == approx({"m3": 1 / 2, "m4": 1 / 3})
    assert placement["u4"] == approx({"m5": 1, "m6": 0.5, "m7": 0.5, "m8": 1, "m9": 1, "m10": 1})


def test_choosy_figure_4_cmmf_with_whole_machines() -> None:
    # Figure 4: a1 = {m1, m4}, a2 = {m3}, a3 = {m2, m6, m7}, a4 = {m5, m8, m9, m10}.
    assert placement_of("choosy-figure-1", "cmmf", integral=True) == {
        "u1": {"m1": 1, "m4": 1},
        "u2": {"m3": 1},
        "u3": {"m2": 1, "m6": 1, "m7": 1},
        "u4": {"m5": 1, "m8": 1, "m9": 1, "m10": 1},
    }


def test_choosy_figure_1_cmmf_divisible_splits_m3_and_m4_between_u1_and_u2() -> None:
    # Divisibly u1 and u2 share m1, m3 and m4 equally: 1.5 machines each.
    expected = {"u1": 1.5, "u2": 1.5, "u3": 3, "u4": 4}
    assert tasks_of("choosy-figure-1", "cmmf") == approx(expected)
    assert shares_of("choosy-figure-1", "cmmf") == approx(expected)


def test_choosy_figure_3_m3_goes_to_the_user_with_fewer_options() -> None:
    expected = {"u1": {"m-0": 1, "m-1": 1, "m-2": 1}, "u2": {f"m-{j}": 1 for j in range(3, 10)}}
    assert placement_of("choosy-figure-3", "cmmf") == expected
    assert placement_of("choosy-figure-3", "cmmf", integral=True) == expected


def test_choosy_section_5_two_rounds_of_progressive_filling() -> None:
    assert tasks_of("choosy-section-5", "cmmf") == approx({"u1": 2, "u2": 3})
    assert tasks_of("choosy-section-5", "cmmf", integral=True) == {"u1": 2, "u2": 3}


def test_choosy_figure_5_three_rounds_give_2_3_4_machines() -> None:
    assert tasks_of("choosy-figure-5", "cmmf") == approx({"u1": 2, "u2": 3, "u3": 4})
    assert placement_of("choosy-figure-5", "cmmf", integral=True) == {
        "u1": {"m1": 1, "m2": 1},
        "u2": {"m3": 1, "m4": 1, "m5": 1},
        "u3": {"m6": 1, "m7": 1, "m8": 1, "m9": 1},
    }


def test_choosy_theorem_1_independent_allocation_lacks_sharing_incentive() -> None:
    assert tasks_of("choosy-theorem-1", "independent") == approx({"u1": 1.5, "u2": 0.5})
    assert tasks_of("choosy-theorem-1", "cmmf") == approx({"u1": 1, "u2": 1})


def test_choosy_section_7_3_four_jobs_get_a_quarter_each() -> None:
    quarter = {"hadoop": 40, "spark": 40, "cuda": 40, "mpi": 40}
    assert tasks_of("choosy-section-7.3", "cmmf") == approx(quarter)
    assert tasks_of("choosy-section-7.3", "cmmf", integral=True) == quarter


def test_choosy_section_7_3_after_cuda_leaves_hadoop_and_mpi_get_three_eighths() -> None:
    expected = {"hadoop": 60, "spark": 40, "mpi": 60}  # 3/8, 1/4, 3/8 of 160 cores
    assert tasks_of("choosy-section-7.3-without-cuda", "cmmf") == approx(expected)
    assert tasks_of("choosy-section-7.3-without-cuda", "cmmf", integral=True) == expected


def test_tsf_figure_2a_constrained_cdrf_gives_12_and_4() -> None:
    expected = {"u1": {"m1": 9, "m2": 3}, "u2": {"m2": 4}}
    assert placement_of("tsf-figure-2a", "cdrf") == expected
    assert placement_of("tsf-figure-2a", "cdrf", integral=True) == expected
    assert shares_of("tsf-figure-2a", "cdrf") == approx({"u1": 2 / 3, "u2": 2 / 3})


def test_tsf_figure_2b_u2_gains_two_tasks_by_lying_under_cdrf() -> None:
    assert tasks_of("tsf-figure-2b", "cdrf") == approx({"u1": 9, "u2": 6})
    assert shares_of("tsf-figure-2b", "cdrf") == approx({"u1": 1 / 2, "u2": 1 / 2})


def test_tsf_figure_2a_tsf_is_not_fooled() -> None:
    # TSF's h_i ignores constraints (u1: 18 tasks, u2: 12), so lying about them changes nothing.
    assert tasks_of("tsf-figure-2a", "tsf") == approx({"u1": 9, "u2": 6})
    assert tasks_of("tsf-figure-2b", "tsf") == approx({"u1": 9, "u2": 6})


def test_tsf_figure_3_constrained_cdrf_is_not_envy_free() -> None:
    expected = {
        "u1": {"m1": 1},
        "u2": {"m1": 2, "m2": 1},
        "u3": {"m2": 1},
        "u4": {"m2": 1},
        "u5": {"m3": 1},
        "u6": {"m3": 1},
        "u7": {"m3": 1},
    }
    assert placement_of("tsf-figure-3", "cdrf") == expected
    assert placement_of("tsf-figure-3", "cdrf", integral=True) == expected
    assert shares_of("tsf-figure-3", "cdrf") == approx({f"u{i}": 1 / 3 for i in range(1, 8)})


def test_tsf_figure_4_running_example() -> None:
    expected = {"u1": {"m1": 6}, "u2": {"m2": 1}, "u3": {"m3": 3}}
    assert placement_of("tsf-figure-4", "tsf") == expected
    assert placement_of("tsf-figure-4", "tsf", integral=True) == expected
    assert shares_of("tsf-figure-4", "tsf") == approx({"u1": 3 / 7, "u2": 1 / 7, "u3": 3 / 7})
