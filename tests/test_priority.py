"""Priorities (issue 18): higher first among one user's jobs and between users and queues, and
preemption of lower priorities that keeps minimum shares and stops (rule 7 of
:mod:`fairshare.policies.preemption`)."""

from __future__ import annotations

from typing import Any

import pytest

import fairshare
from fairshare.policies import ONLINE_POLICIES
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions
from fairshare.workload import parse_scenario

from conftest import WHOLE_JOB_POLICIES

T_MIN = 5.0
SLOT_POLICIES = [
    p
    for p in ONLINE_POLICIES
    if not p.startswith("cmmf-") and p != "slots" and p not in WHOLE_JOB_POLICIES
]
"""The policies that run on a cluster of one resource named ``slots``."""


def _run(jobs: list[dict[str, Any]], policy: str, **scenario: Any) -> RunLog:
    parsed = parse_scenario(
        {
            "machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}],
            "jobs": jobs,
            **scenario,
        },
        source="priority-test",
    )
    return fairshare.simulate(parsed, policy).log


def _preempting(jobs: list[dict[str, Any]], policy: str, **scenario: Any) -> RunLog:
    parsed = parse_scenario(
        {
            "machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}],
            "jobs": jobs,
            **scenario,
        },
        source="priority-test",
    )
    return fairshare.simulate(parsed, policy, options=SimOptions(preemption=(T_MIN, 1e6))).log


def _first_start(log: RunLog, job: str) -> float | None:
    return next(j.first_start for j in log.jobs if j.job == job)


@pytest.mark.parametrize("policy", SLOT_POLICIES)
def test_a_users_higher_priority_job_goes_first(policy: str) -> None:
    jobs = [
        {"name": "fill", "submit": 0, "user": "u", "tasks": 4, "duration": 10},
        {"name": "low", "submit": 1, "user": "u", "tasks": 4, "duration": 10},
        {"name": "high", "submit": 2, "user": "u", "tasks": 4, "duration": 10, "priority": 5},
    ]
    log = _run(jobs, policy)
    assert _first_start(log, "high") == 10.0
    assert _first_start(log, "low") == 20.0


@pytest.mark.parametrize("policy", [p for p in SLOT_POLICIES if p != "capacity"])
def test_a_user_with_higher_priority_work_is_served_before_a_lower_share(policy: str) -> None:
    # b holds all four slots; when they free, a (share 0) would go first without
    # priorities; b's priority-3 job goes first.
    jobs = [
        {"name": "b0", "submit": 0, "user": "b", "tasks": 4, "duration": 10},
        {"name": "a1", "submit": 1, "user": "a", "tasks": 4, "duration": 10},
        {"name": "b1", "submit": 2, "user": "b", "tasks": 4, "duration": 10, "priority": 3},
    ]
    log = _run(jobs, policy)
    assert _first_start(log, "b1") == 10.0
    assert _first_start(log, "a1") == 20.0


# "low" (8 tasks on 4 slots) never starts whole.
@pytest.mark.parametrize("policy", [p for p in SLOT_POLICIES if p not in WHOLE_JOB_POLICIES])
def test_lower_priorities_are_preempted_once_after_tmin(policy: str) -> None:
    jobs = [
        {"name": "low", "submit": 0, "user": "a", "tasks": 8, "duration": 100},
        {"name": "high", "submit": 10, "user": "b", "tasks": 2, "duration": 100, "priority": 1},
    ]
    log = _preempting(jobs, policy)
    assert _first_start(log, "high") == 10 + T_MIN
    kills = [a for a in log.attempts if a.killed]
    assert [(a.job, a.finish) for a in kills] == [("low", 10 + T_MIN)] * 2


@pytest.mark.parametrize("policy", ["fair", "drf", "hdrf"])
def test_priority_preemption_keeps_minimum_shares(policy: str) -> None:
    # a's minimum share is 3 slots: only one of its four tasks may go to b's priority.
    jobs = [
        {"name": "low", "submit": 0, "user": "a", "tasks": 8, "duration": 100},
        {"name": "high", "submit": 10, "user": "b", "tasks": 4, "duration": 100, "priority": 1},
    ]
    users = [
        {"name": "a", "min_share": 3, "demand": {"slots": 1}},
        {"name": "b", "demand": {"slots": 1}},
    ]
    log = _preempting(jobs, policy, users=users)
    kills = [a for a in log.attempts if a.killed]
    if policy == "fair":
        # FAIR places by minimum shares: they are kept.
        assert len(kills) == 1
    else:
        # Other policies measure shares in their own unit: a's minimum share of 3 tasks is
        # not one of theirs (preemption_min_share is 0), so the priority takes what it needs.
        assert len(kills) == 4


@pytest.mark.parametrize("policy", SLOT_POLICIES)
def test_equal_priorities_never_preempt_each_other_for_priority(policy: str) -> None:
    jobs = [
        {"name": "x", "submit": 0, "user": "a", "tasks": 8, "duration": 100, "priority": 2},
        {"name": "y", "submit": 10, "user": "b", "tasks": 8, "duration": 100, "priority": 2},
    ]
    parsed = parse_scenario(
        {"machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}], "jobs": jobs},
        source="priority-test",
    )
    # Tfair far away: no fair-share kill either; priority kills would need a lower priority.
    log = fairshare.simulate(parsed, policy, options=SimOptions(preemption=(T_MIN, 1e6))).log
    assert not any(a.killed for a in log.attempts)


def test_fair_share_preemption_never_kills_a_higher_priority() -> None:
    jobs = [
        {"name": "x", "submit": 0, "user": "a", "tasks": 8, "duration": 100, "priority": 5},
        {"name": "y", "submit": 1, "user": "b", "tasks": 8, "duration": 100},
    ]
    parsed = parse_scenario(
        {"machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}], "jobs": jobs},
        source="priority-test",
    )
    for policy in SLOT_POLICIES:
        log = fairshare.simulate(parsed, policy, options=SimOptions(preemption=(1.0, 2.0))).log
        # b is fair-starved, but a's tasks are of a higher priority: never its victims (the
        # Capacity Scheduler, FIFO within a queue, may start y's tasks and then lose them to
        # x's priority: rule 7).
        assert not any(a.killed and a.job == "x" for a in log.attempts), policy
        if policy != "capacity":
            assert not any(a.killed for a in log.attempts), policy


def test_bad_priorities_are_rejected() -> None:
    for bad in (1.5, "1", True, 10**10):
        with pytest.raises(fairshare.ScenarioError) as err:
            parse_scenario(
                {
                    "machines": [{"name": "m", "capacity": {"slots": 1}}],
                    "jobs": [
                        {"name": "j", "submit": 0, "tasks": 1, "duration": 1, "priority": bad}
                    ],
                },
                source="bad.yaml",
            )
        assert err.value.where == "jobs[0].priority"
