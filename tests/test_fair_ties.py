"""The fair tie rule (SPEC section 8.3's issue: "fair ties first"): equal ranks go to the user
whose oldest pending task was submitted first, then to the user served least recently, for
every online policy.

Before the rule, equal shares were broken in scenario order: with short jobs a finished task
puts its tenant back at share 0 at once, so the tenants listed first won every tie. Ten equal
tenants with 200 jobs of 0.1 s each on 4 slots under ``drf`` waited 10.0 s (t0-t3), 29.9 s
(t4-t7) and 44.9 s (t8-t9) on average; now each waits 24.9-25.1 s.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairshare
from fairshare.cluster import Cluster, Machine
from fairshare.policies import ONLINE_POLICIES, make_policy
from fairshare.workload.model import Job

from conftest import scaled_examples

POLICIES = sorted(ONLINE_POLICIES)


def _tenants_scenario(
    tenants: int, jobs: int, slots: int, duration: float, gap: float
) -> dict[str, Any]:
    """``tenants`` equal tenants, each submitting its k-th one-task job at ``k * gap`` (all
    at once when ``gap`` is 0), on one machine of ``slots`` CPUs and as much memory."""
    demand = {"cpu": 1, "mem": 1}
    return {
        "machines": [{"name": "m", "capacity": {"cpu": slots, "mem": slots}}],
        "users": [{"name": f"t{i}", "demand": demand} for i in range(tenants)],
        "jobs": [
            {
                "name": f"t{i}-{k}",
                "submit": k * gap,
                "user": f"t{i}",
                "demand": demand,
                "tasks": 1,
                "duration": duration,
            }
            for i in range(tenants)
            for k in range(jobs)
        ],
    }


def _mean_waits(data: dict[str, Any], policy: str) -> dict[str, float]:
    """Each tenant's mean wait (first start - submit) under ``policy``."""
    scenario = fairshare.parse_scenario(data, source="tenants")
    run = fairshare.simulate(scenario, policy)
    submit = {job.name: job.submit for job in scenario.jobs}
    first: dict[str, float] = {}
    for attempt in run.log.attempts:
        first[attempt.job] = min(first.get(attempt.job, attempt.start), attempt.start)
    waits: dict[str, list[float]] = {}
    for job, start in first.items():
        waits.setdefault(job.rpartition("-")[0], []).append(start - submit[job])
    return {tenant: statistics.fmean(values) for tenant, values in waits.items()}


@pytest.mark.parametrize("policy", POLICIES)
def test_ten_equal_tenants_with_short_jobs_wait_alike(policy: str) -> None:
    """The issue's case: 10 equal tenants x 200 jobs of 0.1 s on 4 slots. Every tenant's
    mean wait is within 1.5x of the average (the issue's bound); in fact within 1%: 2000
    jobs of 0.1 s on 4 slots take 50 s, so the average wait is about 25 s."""
    means = _mean_waits(_tenants_scenario(10, 200, 4, 0.1, 0.0), policy)
    average = statistics.fmean(means.values())
    assert len(means) == 10
    assert 24.5 < average < 25.5
    for tenant, mean in means.items():
        assert average / 1.5 <= mean <= 1.5 * average, (tenant, mean, average)
        assert abs(mean - average) <= 0.01 * average, (tenant, mean, average)


@given(
    policy=st.sampled_from(POLICIES),
    tenants=st.integers(2, 8),
    jobs=st.integers(10, 40),
    slots=st.integers(1, 4),
    duration=st.sampled_from([0.1, 0.5, 1.0]),
    gap=st.sampled_from([0.0, 0.01, 0.05]),
)
@settings(max_examples=scaled_examples(25), deadline=None)
def test_equal_tenants_saturating_short_jobs_wait_within_one_and_a_half_of_the_average(
    policy: str, tenants: int, jobs: int, slots: int, duration: float, gap: float
) -> None:
    """Equal weights and saturating short jobs (more tenants than slots, jobs arriving
    faster than they run): every tenant's mean wait stays within 1.5x of the average."""
    if tenants <= slots:
        tenants = slots + 1
    means = _mean_waits(_tenants_scenario(tenants, jobs, slots, duration, gap), policy)
    average = statistics.fmean(means.values())
    assert average > 0
    for tenant, mean in means.items():
        assert average / 1.5 <= mean <= 1.5 * average, (tenant, mean, average)


def test_the_oldest_pending_task_wins_a_tie() -> None:
    """Two users at equal shares: the one whose pending job was submitted first gets the
    freed slot, although it is listed second (its job waited longer)."""
    data = {
        "machines": [{"name": "m", "capacity": {"cpu": 1}}],
        "users": [{"name": "late"}, {"name": "early"}],
        "jobs": [
            {"name": "blocker", "submit": 0, "user": "late", "tasks": 1, "duration": 10},
            {"name": "early-job", "submit": 1, "user": "early", "tasks": 1, "duration": 1},
            {"name": "late-job", "submit": 2, "user": "late", "tasks": 1, "duration": 1},
        ],
    }
    scenario = fairshare.parse_scenario(data, source="two users")
    run = fairshare.simulate(scenario, "drf")
    starts = {a.job: a.start for a in run.log.attempts}
    # At 10 both hold nothing: early's job (submitted at 1) goes before late's (at 2).
    assert starts == {"blocker": 0.0, "early-job": 10.0, "late-job": 11.0}


def test_the_user_served_least_recently_wins_a_tie_between_equally_old_work() -> None:
    """Three users with jobs submitted together on one slot take turns, whatever their
    order in the scenario: a user just served goes behind the others at equal shares."""
    data = {
        "machines": [{"name": "m", "capacity": {"cpu": 1}}],
        "jobs": [
            {"name": f"{user}-{k}", "submit": 0, "user": user, "tasks": 1, "duration": 1}
            for user in ("a", "b", "c")
            for k in range(3)
        ],
    }
    scenario = fairshare.parse_scenario(data, source="three users")
    run = fairshare.simulate(scenario, "drf")
    order = [a.job for a in sorted(run.log.attempts, key=lambda a: a.start)]
    assert order == ["a-0", "b-0", "c-0", "a-1", "b-1", "c-1", "a-2", "b-2", "c-2"]


def test_fifo_takes_a_burst_round_by_round_and_a_batch_in_order() -> None:
    """FIFO at one instant: each tenant's k-th job goes in round k (3 tenants x 4 jobs of 1 s
    on 2 slots wait alike), while jobs of different users submitted together run in the
    order given (FAIR section 5.3's batch)."""
    means = _mean_waits(_tenants_scenario(3, 4, 2, 1.0, 0.0), "fifo")
    # Rounds of three jobs on two slots: t0 waits 0, 1, 3, 4 s; t1 0, 2, 3, 5; t2 1, 2, 4, 5.
    assert means == {"t0": 2.0, "t1": 2.5, "t2": 3.0}
    batch = {
        "machines": [{"name": "m", "capacity": {"cpu": 2}}],
        "jobs": [{"name": name, "submit": 0, "tasks": 2, "duration": 10} for name in ("j1", "j2")],
    }
    run = fairshare.simulate(fairshare.parse_scenario(batch, source="batch"), "fifo")
    assert sorted((a.job, a.start) for a in run.log.attempts) == [
        ("j1", 0.0),
        ("j1", 0.0),
        ("j2", 10.0),
        ("j2", 10.0),
    ]


def test_a_user_with_nothing_left_to_launch_keeps_no_pending_since_entries() -> None:
    """A user's pending-since heap holds its job parts (for the submit time of its oldest
    pending task). Once the user has nothing pending, the heap is emptied at once (nobody asks
    it again, and the parts' task lists would stay to the run's end); a part pending again
    (a killed task) is pushed afresh."""
    cluster = Cluster.build(["cpu", "mem"], [Machine("m", np.array([4.0, 4.0]))])
    drf: Any = make_policy("drf", cluster)
    drf.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0, 1.0]), 2))
    drf.job_submitted(0.0, 1, Job("y", 1.0, "a", np.array([1.0, 1.0]), 1))
    user = drf.ledger.users[drf.ledger.jobs[0].user]
    assert [(submit, part) for submit, part, _ in user.waiting] == [(0.0, 0), (1.0, 1)]
    assert len(drf.decide(1.0)) == 3
    assert user.pending == 0 and user.waiting == []
    drf.machine_removed(2.0, "m")  # its three tasks are pending again
    assert (user.pending, user.running) == (3, 0)
    assert [(submit, part) for submit, part, _ in user.waiting] == [(0.0, 0), (1.0, 1)]
