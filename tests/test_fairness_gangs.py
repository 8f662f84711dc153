"""``gang-progress`` (:mod:`fairshare.fairness.gangs`): no waiting gang starves under EASY
backfilling, as a property of ``fairshare check`` on simulated runs of the online policies;
schedulers that break it are caught and their counterexamples shrunk."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from fairshare.cluster import Cluster
from fairshare.fairness import check
from fairshare.fairness.gangs import GangProgress
from fairshare.fairness.scenarios import ScenarioShape, gang_document
from fairshare.fairness.search import _simpler, search
from fairshare.policies import Scheduler
from fairshare.policies.drf import Drf
from fairshare.policies.placer import Placer
from fairshare.policies.protocol import Decision
from fairshare.policies.tsf import Tsf
from fairshare.workload import parse_scenario

from conftest import run_fairshare

ONLINE = ("drf", "hdrf", "collapsed-drf", "tsf", "drfh", "cdrf")
"""The solver policies with an online scheduler of the same name."""


class _GreedyPlacer(Placer):
    """Broken on purpose: computes the head's reservation, then lets every offer ignore it
    (backfilling without EASY's rule), so later work may delay the head."""

    def _admit_gangs(self, now: float, out: list[Decision]) -> None:
        super()._admit_gangs(now, out)
        self.ledger.reserved = None


class _GanglessPlacer(Placer):
    """Broken on purpose: never tries the waiting gangs, which then wait for ever."""

    def _admit_gangs(self, now: float, out: list[Decision]) -> None:
        self.ledger.gang_news = False


def _with_placer(policy: Scheduler, placer: type[Placer]) -> None:
    """Give ``policy`` a placer of class ``placer`` over the same ledger and filters."""
    policy.placer = placer(policy.ledger, policy.selection, policy.placer.filters)
    policy.preemptor.placer = policy.placer


class _GreedyDrf(Drf):
    def __init__(self, cluster: Cluster, **kwargs: Any) -> None:
        super().__init__(cluster, **kwargs)
        _with_placer(self, _GreedyPlacer)


class _GreedyTsf(Tsf):
    def __init__(self, cluster: Cluster, **kwargs: Any) -> None:
        super().__init__(cluster, **kwargs)
        _with_placer(self, _GreedyPlacer)


class _GanglessDrf(Drf):
    def __init__(self, cluster: Cluster, **kwargs: Any) -> None:
        super().__init__(cluster, **kwargs)
        _with_placer(self, _GanglessPlacer)


@pytest.mark.parametrize("policy", ONLINE)
def test_the_online_policies_let_no_gang_starve(policy: str) -> None:
    result = check(policy, "gang-progress", trials=150, seed=5)
    assert result.verdict() == "holds"
    assert result.trials == 150
    assert result.inconclusive == 0


@pytest.mark.parametrize("policy", ["max-min", "asset", "ceei", "cmmf", "per-machine-drf"])
def test_solver_only_policies_are_not_applicable(policy: str) -> None:
    result = check(policy, "gang-progress")
    assert result.verdict() == "n/a"
    assert result.trials == 0


@pytest.mark.parametrize(("factory", "policy"), [(_GreedyDrf, "drf"), (_GreedyTsf, "tsf")])
def test_backfilling_that_ignores_the_reservation_is_caught_and_shrunk(
    factory: type[Drf] | type[Tsf], policy: str
) -> None:
    result = search(GangProgress(factory), policy, seed=0)
    assert result.verdict() == "violated"
    found = result.counterexample
    assert found is not None
    scenario = found.scenario
    # One machine, one resource; the gang, what holds the machine when it arrives, and the
    # job that starts around it and delays it.
    assert len(scenario["resources"]) == 1
    assert len(scenario["machines"]) == 1
    assert len(scenario["jobs"]) == 3
    assert sum(1 for j in scenario["jobs"] if "gang" in j or "min_tasks" in j) == 1
    assert min(j["submit"] for j in scenario["jobs"]) == 0
    assert "while it is the head and no gang starts, moves to" in found.explanation
    assert found.explanation.endswith(f"(fairshare simulate --policy {policy} --backfill easy)")
    # A counterexample for the broken scheduler only, and minimal.
    assert GangProgress(factory).violation(scenario, policy) is not None
    assert GangProgress().violation(scenario, policy) is None
    assert all(GangProgress(factory).violation(c, policy) is None for c in _simpler(scenario))


def test_a_scheduler_that_never_admits_gangs_is_caught_on_one_gang() -> None:
    result = search(GangProgress(_GanglessDrf), "drf", seed=0)
    assert result.verdict() == "violated"
    found = result.counterexample
    assert found is not None
    scenario = found.scenario
    assert scenario["machines"] == [
        {"name": scenario["machines"][0]["name"], "capacity": {scenario["resources"][0]: 1}}
    ]
    (job,) = scenario["jobs"]
    assert (job["tasks"], job["duration"], job["submit"]) == (1, 1, 0)
    assert found.explanation.startswith(f"gang {job['name']} fits its machines but never starts")


def test_the_head_is_read_from_the_run() -> None:
    # One slot of four busy until 100; the gang of four arrives at 1 (reserved for 100) and a
    # 500-second job at 3. Ignoring the reservation, that job takes a slot at 100 when the
    # gang should: the reservation moves to 600.
    document: dict[str, Any] = {
        "machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}],
        "jobs": [
            {"name": "long", "submit": 0, "user": "a", "tasks": 1, "duration": 100},
            {"name": "gang", "submit": 1, "user": "b", "tasks": 4, "duration": 10, "gang": True},
            {"name": "short", "submit": 2, "user": "c", "tasks": 3, "duration": 50},
            {"name": "late", "submit": 3, "user": "d", "tasks": 1, "duration": 500},
        ],
    }
    assert GangProgress().violation(document, "drf") is None
    found = GangProgress(_GreedyDrf).violation(document, "drf")
    assert found is not None
    assert found.explanation.startswith(
        "gang gang's reservation, for t=100 while it is the head and no gang starts, moves to t=552"
    )
    # Estimates are exact only with fixed durations: another scenario promises nothing.
    document["jobs"][2]["duration"] = [50, 50, 60]
    assert GangProgress(_GreedyDrf).violation(document, "drf") is None


def test_random_gang_scenarios_parse_and_hold_gangs() -> None:
    rng = np.random.default_rng(0)
    gangs = 0
    for _ in range(40):
        document = gang_document(rng, ScenarioShape(gangs=True))
        scenario = parse_scenario(document, source="gang-test")
        gangs += sum(1 for job in scenario.jobs if job.min_tasks is not None)
        assert all(isinstance(j["duration"], int) for j in document["jobs"])
        assert [j.submit for j in scenario.jobs] == sorted(j.submit for j in scenario.jobs)
    assert gangs > 40


def test_check_through_the_executable() -> None:
    done = run_fairshare("check", "--policy", "tsf", "--property", "gang-progress", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["property"] == "gang-progress"
    assert document["holds"] is True
    assert document["trials"] == GangProgress.trials
    done = run_fairshare("check", "--policy", "cmmf", "--property", "gang-progress", "--json")
    assert json.loads(done.stdout)["applicable"] is False
