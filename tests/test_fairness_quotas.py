"""``quota-restored`` (:mod:`fairshare.fairness.quotas`): the reclaim bound of queue quotas as
a property of ``fairshare check``, on simulated runs of the online policies; a scheduler that
breaks the bound is caught and its counterexample shrunk."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from fairshare.cluster import Cluster
from fairshare.fairness import check
from fairshare.fairness.quotas import T_MIN, QuotaRestored
from fairshare.fairness.scenarios import ScenarioShape, quota_document
from fairshare.fairness.search import _simpler, search
from fairshare.policies import Decision, Scheduler
from fairshare.policies.drf import Drf
from fairshare.policies.hdrf import Hdrf
from fairshare.policies.preemption import Preemptor
from fairshare.workload import parse_scenario

from conftest import run_fairshare

ONLINE = ("drf", "hdrf", "collapsed-drf", "tsf", "drfh", "cdrf")
"""The solver policies with an online scheduler of the same name."""


class _ForgetfulPreemptor(Preemptor):
    """Broken on purpose: never asks to be woken, so a preemption timeout (the quota
    reclaim's TMIN) is acted on only at the next event that happens anyway."""

    def run(self, now: float, out: list[Decision]) -> None:
        asked = list(self.ledger.wakeups)
        super().run(now, out)
        self.ledger.wakeups[:] = asked


def _forgetful(policy: Scheduler) -> None:
    policy.preemptor = _ForgetfulPreemptor(policy.ledger, policy.ledger, policy.placer)


class _ForgetfulDrf(Drf):
    def __init__(self, cluster: Cluster, **kwargs: Any) -> None:
        super().__init__(cluster, **kwargs)
        _forgetful(self)


class _ForgetfulHdrf(Hdrf):
    def __init__(self, cluster: Cluster, **kwargs: Any) -> None:
        super().__init__(cluster, **kwargs)
        _forgetful(self)


@pytest.mark.parametrize("policy", ONLINE)
def test_the_online_policies_restore_quotas_within_tmin(policy: str) -> None:
    result = check(policy, "quota-restored", trials=60, seed=3)
    assert result.verdict() == "holds"
    assert result.trials == 60
    assert result.inconclusive == 0


@pytest.mark.parametrize("policy", ["max-min", "asset", "ceei", "cmmf", "per-machine-drf"])
def test_solver_only_policies_are_not_applicable(policy: str) -> None:
    result = check(policy, "quota-restored")
    assert result.verdict() == "n/a"
    assert result.trials == 0
    assert result.to_dict()["applicable"] is False


@pytest.mark.parametrize(("factory", "policy"), [(_ForgetfulDrf, "drf"), (_ForgetfulHdrf, "hdrf")])
def test_a_scheduler_that_forgets_its_reclaim_is_caught_and_shrunk(
    factory: type[Drf], policy: str
) -> None:
    result = search(QuotaRestored(factory), policy, seed=0)
    assert result.verdict() == "violated"
    found = result.counterexample
    assert found is not None
    scenario = found.scenario
    # Shrunk to one machine of one slot, one queue with a quota of one task and two jobs: a
    # borrower in no queue, and the queue's job that waits for its slot.
    assert scenario["resources"] == ["r0"]
    assert scenario["machines"] == [{"name": "m0", "capacity": {"r0": 1}}]
    assert [q["quota"] for q in scenario["queues"]] == [{"r0": 1}]
    assert len(scenario["jobs"]) == 2
    assert "queue" not in scenario["jobs"][0]
    assert scenario["jobs"][1]["queue"] == scenario["queues"][0]["path"]
    assert f"longer than TMIN = {T_MIN:g} s" in found.explanation
    # The counterexample is one: the broken scheduler breaks the bound on it, the real one
    # does not.
    assert QuotaRestored(factory).violation(scenario, policy) is not None
    assert QuotaRestored().violation(scenario, policy) is None
    # And it is minimal: no single simplification still breaks the bound.
    assert all(QuotaRestored(factory).violation(c, policy) is None for c in _simpler(scenario))


def test_the_wait_is_measured_from_the_run() -> None:
    # a borrows the machine's 4 slots at t=0 for 50 s; b (quota 2) arrives at t=1. With the
    # wake-up forgotten, the reclaim waits for the next event: a's tasks ending at t=50.
    document: dict[str, Any] = {
        "machines": [{"name": "m", "capacity": {"slots": 4}}],
        "queues": [{"path": "a", "quota": {"slots": 2}}, {"path": "b", "quota": {"slots": 2}}],
        "jobs": [
            {"name": "x", "submit": 0, "queue": "a", "user": "ua", "tasks": 4, "duration": 50},
            {"name": "y", "submit": 1, "queue": "b", "user": "ub", "tasks": 2, "duration": 50},
        ],
    }
    found = QuotaRestored(_ForgetfulDrf).violation(document, "drf")
    assert found is not None
    assert found.explanation.startswith(
        "queue b waits below its quota of 2 tasks (running 0, 2 pending) from t=1 to t=50, 49 s"
    )
    assert QuotaRestored().violation(document, "drf") is None


def test_scenarios_outside_the_bounds_proviso_are_not_counterexamples() -> None:
    # Tasks of two shapes, or a machine that does not hold whole tasks: a freed machine may
    # not fit the waiting task, so the bound does not promise anything.
    base: dict[str, Any] = {
        "machines": [{"name": "m", "capacity": {"slots": 4}}],
        "queues": [{"path": "a", "quota": {"slots": 2}}, {"path": "b", "quota": {"slots": 2}}],
        "jobs": [
            {"name": "x", "submit": 0, "queue": "a", "user": "ua", "tasks": 4, "duration": 50},
            {"name": "y", "submit": 1, "queue": "b", "user": "ub", "tasks": 2, "duration": 50},
        ],
    }
    shapes = copy.deepcopy(base)
    shapes["jobs"][1]["demand"] = {"slots": 2}
    assert QuotaRestored(_ForgetfulDrf).violation(shapes, "drf") is None
    uneven = copy.deepcopy(base)
    uneven["jobs"][1]["demand"] = {"slots": 3}
    uneven["jobs"][0]["demand"] = {"slots": 3}
    assert QuotaRestored(_ForgetfulDrf).violation(uneven, "drf") is None


def test_random_quota_scenarios_hold_whole_tasks_and_load() -> None:
    rng = np.random.default_rng(0)
    for _ in range(30):
        document = quota_document(rng, ScenarioShape(quotas=True))
        scenario = parse_scenario(document, source="quota-test")
        demand = document["jobs"][0]["demand"]
        assert all(job["demand"] == demand for job in document["jobs"])
        for machine in document["machines"]:
            assert len({machine["capacity"][r] // d for r, d in demand.items()}) == 1
            assert all(machine["capacity"][r] % d == 0 for r, d in demand.items())
        total = sum(
            min(m["capacity"][r] // d for r, d in demand.items()) for m in document["machines"]
        )
        quotas = [min(q["quota"][r] // d for r, d in demand.items()) for q in document["queues"]]
        assert sum(quotas) <= total
        assert [j.submit for j in scenario.jobs] == sorted(j.submit for j in scenario.jobs)


def test_check_through_the_executable() -> None:
    done = run_fairshare("check", "--policy", "drf", "--property", "quota-restored", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["property"] == "quota-restored"
    assert document["holds"] is True
    assert document["trials"] == QuotaRestored.trials
    done = run_fairshare("check", "--policy", "cmmf", "--property", "quota-restored", "--json")
    assert json.loads(done.stdout)["applicable"] is False
