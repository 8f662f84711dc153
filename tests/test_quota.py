"""Quotas with lending and borrowing (issue 18, :mod:`fairshare.policies.quota`): a queue below
its quota gets it back within ``Tmin`` by reclaiming borrowed tasks, never borrows past its
borrowing limit, never lends past its lending limit, and the kills stop."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairshare
from fairshare.metrics.queues import queue_usage
from fairshare.policies import ONLINE_POLICIES
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions
from fairshare.workload import ScenarioError, parse_scenario

from conftest import WHOLE_JOB_POLICIES, scaled_examples

T_MIN = 5.0
QUOTA_POLICIES = [p for p in ONLINE_POLICIES if p != "slots" and p not in WHOLE_JOB_POLICIES]
"""The policies that honour quotas: the slot scheduler (a comparator of H-DRF section 5.3)
ignores them (docs/policies/comparators.md)."""
PER_TASK_QUOTA_POLICIES = [p for p in QUOTA_POLICIES if p not in WHOLE_JOB_POLICIES]
"""Those that admit and reclaim task by task (one that starts jobs whole waits for room for
the whole job, here a job larger than its queue's quota)."""


def _scenario(queues: list[dict[str, Any]], jobs: list[dict[str, Any]]) -> Any:
    return parse_scenario(
        {
            "machines": [{"name": "m", "count": 2, "capacity": {"cpu": 4, "mem": 16}}],
            "queues": queues,
            "jobs": jobs,
        },
        source="quota-test",
    )


def _job(name: str, submit: float, queue: str, tasks: int, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "submit": submit,
        "queue": queue,
        "user": f"u-{queue}",
        "demand": {"cpu": 1, "mem": 1},
        "tasks": tasks,
        "duration": 100,
        **extra,
    }


def _usage(log: RunLog) -> dict[str, list[tuple[float, float]]]:
    """Per queue, (time, cpu in use from then on)."""
    out: dict[str, list[tuple[float, float]]] = {}
    for t, queue, _, cpu, _ in queue_usage(log).rows():
        out.setdefault(queue, []).append((t, cpu))
    return out


def _cpu_at(steps: list[tuple[float, float]], t: float) -> float:
    held = 0.0
    for start, cpu in steps:
        if start <= t:
            held = cpu
    return held


def _run(scenario: Any, policy: str, preemption: bool = True) -> RunLog:
    options = SimOptions(preemption=(T_MIN, 1e6)) if preemption else SimOptions()
    return fairshare.simulate(scenario, policy, options=options).log


@pytest.mark.parametrize("policy", PER_TASK_QUOTA_POLICIES)
def test_a_queue_below_its_quota_reclaims_it_within_tmin(policy: str) -> None:
    # a borrows all 8 CPUs at t=0; b (quota 4) arrives at 10 and reclaims 4 at 10 + Tmin.
    scenario = _scenario(
        [{"path": "a", "quota": {"cpu": 4}}, {"path": "b", "quota": {"cpu": 4}}],
        [_job("a1", 0, "a", 8), _job("b1", 10, "b", 6)],
    )
    log = _run(scenario, policy)
    b1 = next(j for j in log.jobs if j.job == "b1")
    assert b1.first_start == 10 + T_MIN
    usage = _usage(log)
    assert _cpu_at(usage["b"], 10 + T_MIN) == 4.0
    assert _cpu_at(usage["a"], 10 + T_MIN) == 4.0
    # Exactly the four borrowed tasks were killed, all at the reclaim.
    kills = [a for a in log.attempts if a.killed]
    assert len(kills) == 4
    assert {a.finish for a in kills} == {10 + T_MIN}
    assert {a.job for a in kills} == {"a1"}


@pytest.mark.parametrize("policy", ["drf", "hdrf", "fair", "fifo"])
def test_without_preemption_the_quota_comes_back_as_borrowed_tasks_finish(policy: str) -> None:
    scenario = _scenario(
        [{"path": "a", "quota": {"cpu": 4}}, {"path": "b", "quota": {"cpu": 4}}],
        [_job("a1", 0, "a", 16), _job("b1", 10, "b", 6)],
    )
    log = _run(scenario, policy, preemption=False)
    assert not any(a.killed for a in log.attempts)
    b1 = next(j for j in log.jobs if j.job == "b1")
    assert b1.first_start == 100.0
    assert _cpu_at(_usage(log)["b"], 100.0) >= 4.0


@pytest.mark.parametrize("policy", ["drf", "hdrf", "fair", "tsf"])
def test_a_queue_never_borrows_past_its_borrowing_limit(policy: str) -> None:
    scenario = _scenario(
        [
            {"path": "a", "quota": {"cpu": 2}, "borrowing_limit": {"cpu": 3}},
            {"path": "b", "quota": {"cpu": 4}},
        ],
        [_job("a1", 0, "a", 20)],
    )
    log = _run(scenario, policy)
    assert max(cpu for _, cpu in _usage(log)["a"]) == 5.0


@pytest.mark.parametrize("policy", ["drf", "hdrf", "fifo"])
def test_a_queue_never_lends_past_its_lending_limit(policy: str) -> None:
    # b lends 1 of its 4 idle CPUs: a (quota 4) may use 5 of the 8, not more.
    scenario = _scenario(
        [
            {"path": "a", "quota": {"cpu": 4}},
            {"path": "b", "quota": {"cpu": 4}, "lending_limit": {"cpu": 1}},
        ],
        [_job("a1", 0, "a", 20), _job("b1", 250, "b", 3)],
    )
    log = _run(scenario, policy, preemption=False)
    usage = _usage(log)
    assert max(cpu for _, cpu in usage["a"]) == 5.0
    # The CPUs b kept idle are its own at once when its work comes.
    b1 = next(j for j in log.jobs if j.job == "b1")
    assert b1.first_start == 250.0


def test_two_queues_with_priorities_reclaiming_from_each_other_converge() -> None:
    # Kueue #3779's loop: a's high-priority work borrows, b reclaims its quota, a's priority
    # wants it back. The kills happen at the reclaim and then stop.
    scenario = _scenario(
        [{"path": "a", "quota": {"cpu": 4}}, {"path": "b", "quota": {"cpu": 4}}],
        [
            _job("b-low", 0, "b", 30, priority=0, duration=1000),
            _job("a-high", 1, "a", 30, priority=10, duration=1000),
            _job("b-high", 2, "b", 30, priority=20, duration=1000),
        ],
    )
    for policy in PER_TASK_QUOTA_POLICIES:
        log = _run(scenario, policy)
        kills = [a for a in log.attempts if a.killed]
        # a reclaims its 4 CPUs from b-low, and b-high replaces b's own low-priority tasks;
        # nothing moves again for the rest of the run (thousands of seconds).
        assert len(kills) <= 8, policy
        assert max(a.finish for a in kills) <= 2 + T_MIN, policy
        usage = _usage(log)
        assert _cpu_at(usage["a"], 500.0) == 4.0, policy
        assert _cpu_at(usage["b"], 500.0) == 4.0, policy


def test_bad_quota_fields_are_one_error_each() -> None:
    base: dict[str, Any] = {
        "machines": [{"name": "m", "capacity": {"cpu": 8, "mem": 8}}],
        "queues": [{"path": "a", "quota": {"cpu": 4}}],
    }
    cases = [
        ({"path": "a", "quota": {"gpu": 1}}, "queues[0].quota.gpu", "unknown resource"),
        ({"path": "a", "quota": {"cpu": 9}}, "queues[0].quota.cpu", "capacity"),
        ({"path": "a", "quota": {"cpu": -1}}, "queues[0].quota.cpu", ""),
        ({"path": "a", "lending_limit": {"cpu": 1}}, "queues[0].lending_limit", "needs a quota"),
        (
            {"path": "a", "quota": {"cpu": 2}, "lending_limit": {"cpu": 3}},
            "queues[0].lending_limit.cpu",
            "at most its quota",
        ),
        (
            {"path": "a", "quota": {"cpu": 2}, "borrowing_limit": {"mem": 3}},
            "queues[0].borrowing_limit.mem",
            "does not govern",
        ),
    ]
    for queue, where, what in cases:
        with pytest.raises(ScenarioError) as err:
            parse_scenario({**base, "queues": [queue]}, source="bad.yaml")
        assert err.value.where == where
        assert what in err.value.what
    with pytest.raises(ScenarioError) as err:
        parse_scenario(
            {
                **base,
                "queues": [
                    {"path": "a", "quota": {"cpu": 4}},
                    {"path": "a/x", "quota": {"cpu": 5}},
                ],
            },
            source="bad.yaml",
        )
    assert err.value.where == "queues[1].quota.cpu"
    assert "nested quotas" in err.value.what


@settings(
    max_examples=scaled_examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    # Whole jobs: a job above its queue's ceiling never finishes (and a gang's admission does
    # not read quotas: drf with gang: true borrows past a limit too).
    policy=st.sampled_from(sorted(PER_TASK_QUOTA_POLICIES)),
    quotas=st.lists(st.integers(0, 4), min_size=2, max_size=3).filter(lambda q: sum(q) <= 8),
    limits=st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=3, max_size=3),
    jobs=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 40), st.integers(1, 10), st.integers(-1, 2)),
        min_size=1,
        max_size=6,
    ),
    preemption=st.booleans(),
)
def test_random_runs_respect_borrowing_limits_and_finish(
    policy: str,
    quotas: list[int],
    limits: list[int | None],
    jobs: list[tuple[int, int, int, int]],
    preemption: bool,
) -> None:
    queues: list[dict[str, Any]] = []
    for i, q in enumerate(quotas):
        entry: dict[str, Any] = {"path": f"q{i}", "quota": {"cpu": q}}
        if limits[i] is not None:
            entry["borrowing_limit"] = {"cpu": limits[i]}
        queues.append(entry)
    specs = [
        _job(f"j{k}", submit, f"q{min(q, len(quotas) - 1)}", tasks, priority=prio, duration=30)
        for k, (q, submit, tasks, prio) in enumerate(jobs)
    ]
    log = _run(_scenario(queues, specs), policy, preemption)
    # Every job of a queue that may run a task finishes (no quota starves a queue for ever),
    # and nothing borrows past its limit.
    ceilings = [math.inf if limits[i] is None else q + limits[i] for i, q in enumerate(quotas)]
    assert all(j.finish is not None for j in log.jobs if ceilings[int(j.queue[1:])] >= 1)
    usage = _usage(log)
    for i, ceiling in enumerate(ceilings):
        assert max((cpu for _, cpu in usage.get(f"q{i}", [])), default=0.0) <= ceiling + 1e-9
    kills = sum(a.killed for a in log.attempts)
    assert kills <= sum(tasks for _, _, tasks, _ in jobs)
