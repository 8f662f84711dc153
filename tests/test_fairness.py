"""The fairness checker reproduces the papers' findings (DRF section 3, Choosy section 3, H-DRF
sections 2.1 and 4, TSF Table I and Appendix B), and its counterexamples are valid scenarios
that `fairshare solve` re-runs, that exhibit the violation, and that are minimal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairshare.cli import main
from fairshare.fairness import PROPERTIES, CheckResult, check
from fairshare.fairness.efficiency import EnvyFreeness
from fairshare.fairness.monotonicity import PopulationMonotonicity
from fairshare.fairness.scenarios import Document
from fairshare.fairness.search import _simpler, _violation
from fairshare.fairness.truthfulness import StrategyProofness


def _solve_json(
    document: Document, policy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, dict[str, float]]:
    path = tmp_path / "counterexample.json"
    path.write_text(json.dumps(document))
    with pytest.raises(SystemExit) as stop:
        main(["solve", str(path), "--policy", policy, "--json"])
    assert stop.value.code == 0
    users: dict[str, dict[str, float]] = json.loads(capsys.readouterr().out)["users"]
    return users


def assert_violation(
    result: CheckResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> str:
    """The verdict is a violation whose scenario `fairshare solve` re-runs and which re-checking
    that scenario reproduces, found within the default trials, on a minimal scenario."""
    assert result.applicable and not result.holds
    counterexample = result.counterexample
    assert counterexample is not None
    users = _solve_json(counterexample.scenario, result.policy, tmp_path, capsys)
    assert set(users) == {u["name"] for u in counterexample.scenario["users"]}
    prop = PROPERTIES[result.property]
    again = prop.violation(counterexample.scenario, result.policy)
    assert again is not None and again.explanation == counterexample.explanation
    focus = again.focus
    for simpler in _simpler(counterexample.searched):
        assert _violation(prop, simpler, result.policy, focus) is None
    assert len(counterexample.scenario["users"]) <= 4
    return counterexample.explanation


# ---------------------------------------------------------------- DRF paper, sections 3 and 5


@pytest.mark.parametrize(
    "prop", ["sharing-incentive", "strategy-proofness", "envy-freeness", "pareto-efficiency"]
)
def test_drf_has_the_four_properties(prop: str) -> None:
    """DRF section 3: sharing incentive, strategy-proofness, envy-freeness, Pareto efficiency."""
    assert check("drf", prop, trials=15, seed=1).holds


def test_drf_asset_fairness_lacks_sharing_incentive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    explanation = assert_violation(check("asset", "sharing-incentive"), tmp_path, capsys)
    assert explanation == "u1 runs 0.3333 tasks but could run 0.5 with its 0.5 of every resource"


def test_drf_ceei_is_not_strategy_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    explanation = assert_violation(check("ceei", "strategy-proofness"), tmp_path, capsys)
    assert "by claiming demand" in explanation


# ------------------------------------------------------------------ Choosy, sections 3 and 4


@pytest.mark.parametrize("prop", ["sharing-incentive", "strategy-proofness"])
def test_choosy_cmmf_has_constrained_sharing_incentive_and_strategy_proofness(prop: str) -> None:
    assert check("cmmf", prop, trials=15, seed=2).holds


def test_choosy_independent_allocation_lacks_sharing_incentive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = check("independent", "sharing-incentive")
    explanation = assert_violation(result, tmp_path, capsys)
    assert "dedicated partition" in explanation and "k_i/h_i" in explanation


# -------------------------------------------------------------------- H-DRF, sections 2.1, 4


def test_hdrf_keeps_the_hierarchical_share_guarantee() -> None:
    assert check("hdrf", "hierarchical-share-guarantee", trials=60, seed=2).holds


def test_hdrf_collapsed_hierarchy_breaks_the_hierarchical_share_guarantee(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = check("collapsed-drf", "hierarchical-share-guarantee")
    explanation = assert_violation(result, tmp_path, capsys)
    assert explanation.startswith("queue ") and "is guaranteed 0.5" in explanation


def test_hdrf_is_group_strategy_proof() -> None:
    assert check("hdrf", "group-strategy-proofness", trials=4, seed=3).holds


def test_hdrf_population_monotonicity_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = check("hdrf", "population-monotonicity")
    assert "leaves" in assert_violation(result, tmp_path, capsys)


def test_hdrf_population_monotonicity_fails_on_figure_6() -> None:
    """H-DRF section 4.3, Figures 6 and 7: when n2,2 leaves, n1,1 drops from 60% to 50% of
    the CPUs (from 20 tasks to 50/3)."""
    document = {
        "resources": ["cpu", "gpu"],
        "machines": [{"name": "cluster", "capacity": {"cpu": 100, "gpu": 100}}],
        "queues": [{"path": "n1"}, {"path": "n2"}],
        "users": [
            {"name": "n1-1", "queue": "n1", "demand": {"cpu": 3, "gpu": 2}},
            {"name": "n2-1", "queue": "n2", "demand": {"cpu": 1, "gpu": 1}},
            {"name": "n2-2", "queue": "n2", "demand": {"cpu": 1, "gpu": 3}},
        ],
    }
    found = PopulationMonotonicity().violation(document, "hdrf")
    assert found is not None
    assert found.explanation == "when n2-2 leaves, n1-1 drops from 20 to 16.67 tasks"


# ------------------------------------------------------------- TSF Table I and Appendix B

FIG_2A: Document = {
    "resources": ["cpu", "mem"],
    "machines": [
        {"name": "m1", "capacity": {"cpu": 18, "mem": 18}},
        {"name": "m2", "capacity": {"cpu": 18, "mem": 18}},
    ],
    "users": [
        {"name": "u1", "demand": {"cpu": 1, "mem": 2}},
        {"name": "u2", "demand": {"cpu": 1, "mem": 3}, "machines": ["m2"]},
    ],
}


def test_tsf_figure_2_cdrf_user_gains_by_claiming_a_machine() -> None:
    """TSF section IV-B3, Fig. 2: u2 runs 6 tasks instead of 4 by claiming it can run on m1."""
    found = StrategyProofness().violation(FIG_2A, "cdrf")
    assert found is not None
    assert found.explanation == "u2 runs 6 tasks instead of 4 by claiming it can run on m1"
    assert StrategyProofness().violation(FIG_2A, "tsf") is None


def test_tsf_figure_3_cdrf_user_envies_another() -> None:
    """TSF Fig. 3: u1 runs 1 task but would run 2 with u2's allocation."""
    machines = [{"name": f"m{k}", "capacity": {"cpu": 3}} for k in (1, 2, 3)]
    only = ["m1", "m1,m2,m3", "m2", "m2", "m3", "m3", "m3"]
    users = [
        {"name": f"u{i + 1}", "demand": {"cpu": 1}, "machines": names.split(",")}
        for i, names in enumerate(only)
    ]
    document = {"resources": ["cpu"], "machines": machines, "users": users}
    found = EnvyFreeness().violation(document, "cdrf")
    assert found is not None
    assert found.explanation == "u1 runs 1 task but would run 2 with u2's allocation"
    assert EnvyFreeness().violation(document, "tsf") is None


@pytest.mark.parametrize(
    ("policy", "prop", "phrase"),
    [
        ("per-machine-drf", "sharing-incentive", "dedicated partition"),
        ("per-machine-drf", "pareto-efficiency", "with no other user running fewer"),
        ("per-machine-drf", "single-resource-fairness", "where CMMF on this resource gives"),
        ("drfh", "sharing-incentive", "dedicated partition"),
        ("cdrf", "strategy-proofness", "by claiming it can"),
        ("cdrf", "envy-freeness", "allocation"),
        ("cdrf", "single-resource-fairness", "where CMMF on this resource gives"),
    ],
    ids=lambda value: str(value).replace(" ", "-"),
)
def test_tsf_table_i_violations(
    policy: str, prop: str, phrase: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TSF section IV and Appendix B: per-machine DRF lacks SI, PO and SRF; DRFH lacks SI;
    constrained CDRF is neither strategy-proof nor envy-free, nor reduces to CMMF."""
    assert phrase in assert_violation(check(policy, prop), tmp_path, capsys)


def test_tsf_table_i_cdrf_is_not_strategy_proof(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = check("cdrf", "strategy-proofness")
    explanation = assert_violation(result, tmp_path, capsys)
    assert result.counterexample is not None
    scenario = result.counterexample.scenario
    assert explanation == "u1 runs 1 task instead of 0.6667 by claiming it can run on m0"
    users = _solve_json(scenario, "cdrf", tmp_path, capsys)
    assert users["u1"]["tasks"] == pytest.approx(2 / 3)
    liar = json.loads(json.dumps(scenario))
    del liar["users"][1]["machines"]
    assert _solve_json(liar, "cdrf", tmp_path, capsys)["u1"]["tasks"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("policy", "prop"),
    [
        ("per-machine-drf", "strategy-proofness"),
        ("per-machine-drf", "envy-freeness"),
        ("per-machine-drf", "single-machine-fairness"),
        ("drfh", "strategy-proofness"),
        ("drfh", "envy-freeness"),
        ("drfh", "pareto-efficiency"),
        ("drfh", "single-machine-fairness"),
        ("cdrf", "sharing-incentive"),
        ("cdrf", "pareto-efficiency"),
        ("cdrf", "single-machine-fairness"),
        ("tsf", "sharing-incentive"),
        ("tsf", "strategy-proofness"),
        ("tsf", "envy-freeness"),
        ("tsf", "pareto-efficiency"),
        ("tsf", "single-machine-fairness"),
        ("tsf", "single-resource-fairness"),
    ],
)
def test_tsf_table_i_properties_that_hold(policy: str, prop: str) -> None:
    """TSF Theorems 1-17: no violation where the paper proves the property (default seed)."""
    trials = 8 if prop == "strategy-proofness" else 25
    assert check(policy, prop, trials=trials).holds


# --------------------------------------------------------------------- applicability, CLI


@pytest.mark.parametrize(
    ("policy", "prop"),
    [
        ("drf", "hierarchical-share-guarantee"),
        ("tsf", "hierarchical-share-guarantee"),
        ("hdrf", "single-machine-fairness"),
        ("collapsed-drf", "single-resource-fairness"),
    ],
)
def test_properties_a_policy_does_not_define_are_not_applicable(policy: str, prop: str) -> None:
    result = check(policy, prop)
    assert not result.applicable and result.verdict() == "n/a" and result.trials == 0
    assert result.to_dict()["applicable"] is False


def test_same_seed_same_result() -> None:
    first = check("cdrf", "envy-freeness", seed=7)
    second = check("cdrf", "envy-freeness", seed=7)
    assert first.counterexample is not None and second.counterexample is not None
    assert first.counterexample.scenario == second.counterexample.scenario
    assert first.trials == second.trials


def test_check_json_counterexample_reruns_with_solve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", "--policy", "cdrf", "--property", "strategy-proofness", "--json"])
    assert stop.value.code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["holds"] is False and result["policy"] == "cdrf" and result["trials"] == 1
    assert result["property"] == "strategy-proofness"
    users = _solve_json(result["counterexample"]["scenario"], "cdrf", tmp_path, capsys)
    assert users["u0"]["tasks"] == pytest.approx(4 / 3)


def test_check_all_markdown_marks_not_applicable_cells(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", "--all", "--markdown", "--policy", "drf", "--trials", "2"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| drf |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0] == "drf" and cells[7] == "n/a"
    assert "11 checks in" in out


def test_check_rejects_unknown_property(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", "--policy", "drf", "--property", "kindness"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("error: command line: --property: unknown property")


def test_check_rejects_unknown_policy(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", "--policy", "fifo", "--property", "envy-freeness"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: command line: --policy: unknown policy 'fifo'")
    assert err.count("\n") == 1
