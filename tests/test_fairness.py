"""The fairness checker reproduces the papers' findings on the pooled policies, and its
counterexamples are minimal and re-run with `fairshare solve`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairshare.cli import main
from fairshare.fairness import PROPERTIES, check
from fairshare.fairness.properties import PopulationMonotonicity
from fairshare.fairness.search import _simpler, _violation
from fairshare.workload.loader import load_scenario


@pytest.mark.parametrize(
    "prop", ["sharing-incentive", "strategy-proofness", "envy-freeness", "pareto-efficiency"]
)
def test_drf_has_the_four_properties(prop: str) -> None:
    """DRF paper, section 3: DRF is sharing-incentive, strategy-proof, envy-free and Pareto
    efficient (weighted, with finite demands)."""
    result = check("drf", prop, trials=120, seed=1)
    assert result.holds, result.counterexample


def test_asset_fairness_lacks_sharing_incentive() -> None:
    result = check("asset", "sharing-incentive")
    assert not result.holds and result.counterexample is not None
    assert "could run" in result.counterexample.explanation


def test_ceei_is_not_strategy_proof() -> None:
    result = check("ceei", "strategy-proofness")
    assert not result.holds and result.counterexample is not None
    assert "by claiming demand" in result.counterexample.explanation


def test_hdrf_keeps_the_hierarchical_share_guarantee() -> None:
    assert check("hdrf", "hierarchical-share-guarantee", trials=300, seed=2).holds


def test_collapsed_hierarchy_breaks_the_hierarchical_share_guarantee() -> None:
    result = check("collapsed-drf", "hierarchical-share-guarantee")
    assert not result.holds and result.counterexample is not None
    assert result.counterexample.explanation.startswith("queue ")


def test_hdrf_is_group_strategy_proof() -> None:
    assert check("hdrf", "group-strategy-proofness", trials=25, seed=3).holds


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
    explanation = PopulationMonotonicity().violation(document, "hdrf")
    assert explanation == "when n2-2 leaves, n1-1 drops from 20 to 16.67 tasks"


def test_counterexamples_are_minimal() -> None:
    for policy, prop in [
        ("asset", "sharing-incentive"),
        ("collapsed-drf", "hierarchical-share-guarantee"),
    ]:
        result = check(policy, prop)
        assert result.counterexample is not None
        document = result.counterexample.scenario
        for simpler in _simpler(document):
            assert _violation(PROPERTIES[prop], simpler, policy) is None


def test_check_json_counterexample_reruns_with_solve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", "--policy", "asset", "--property", "sharing-incentive", "--json"])
    assert stop.value.code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["holds"] is False and result["policy"] == "asset"
    path = tmp_path / "counterexample.json"
    path.write_text(json.dumps(result["counterexample"]["scenario"]))
    scenario = load_scenario(path)
    assert len(scenario.users) == 2
    with pytest.raises(SystemExit) as stop:
        main(["solve", str(path), "--policy", "asset", "--json"])
    assert stop.value.code == 0
    document = json.loads(capsys.readouterr().out)
    assert document["users"]["u1"]["tasks"] == pytest.approx(1 / 3, abs=1e-6)


def test_check_rejects_unknown_property(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", "--policy", "drf", "--property", "kindness"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("error: command line: --property: unknown property")
