"""The protocol's live-world events in the simulator: a job cancelled by its tenant and a task
that failed (``simulate(..., job_events=...)``), for every online policy and the reference
schedulers."""

from __future__ import annotations

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import ONLINE_POLICIES, PolicyOptions, TaskRef, make_policy
from fairshare.sim import JobEvent, SimOptions, SimulationError, simulate
from fairshare.sim.reference import REFERENCE_POLICIES, ReferenceScheduler
from fairshare.workload.model import FixedDuration, Job, ReducePhase

from conftest import WHOLE_JOB_POLICIES
from strategies import mixed_cluster


def _jobs() -> list[Job]:
    return [
        Job("big", 0.0, "a", np.array([2.0, 2.0]), 12, FixedDuration(10.0)),
        Job("other", 0.0, "b", np.array([1.0, 2.0]), 6, FixedDuration(10.0)),
        Job("late", 5.0, "c", np.array([1.0, 1.0]), 4, FixedDuration(3.0)),
    ]


@pytest.mark.parametrize("name", [p for p in ONLINE_POLICIES if p not in WHOLE_JOB_POLICIES])
def test_a_cancelled_job_stops_at_once_and_the_others_finish(name: str) -> None:
    cluster = mixed_cluster(3)
    log = simulate(cluster, _jobs(), name, seed=0, job_events=[JobEvent(4.0, "cancel", "big")])
    by_name = {j.job: j for j in log.jobs}
    assert by_name["big"].finish is None
    assert by_name["other"].finish is not None
    assert by_name["late"].finish is not None
    big = [a for a in log.attempts if a.job == "big"]
    assert big, "the job ran before it was cancelled"
    # Every attempt of the cancelled job ended by the cancellation, killed; none started later.
    assert all(a.start <= 4.0 and a.finish <= 4.0 for a in big)
    assert all(a.killed for a in big if a.finish == 4.0)
    assert not log.stranded


# slots stretches durations on over-committed machines (tests/test_comparators.py).
@pytest.mark.parametrize(
    "name", [p for p in ONLINE_POLICIES if p != "slots" and p not in WHOLE_JOB_POLICIES]
)
def test_a_failed_attempt_runs_again_and_its_job_finishes(name: str) -> None:
    cluster = mixed_cluster(3)
    log = simulate(cluster, _jobs(), name, seed=0, job_events=[JobEvent(2.0, "fail", "big", 0)])
    task0 = [a for a in log.attempts if a.job == "big" and a.task == 0]
    assert [(a.attempt, a.killed) for a in task0] == [(0, True), (1, False)]
    assert task0[0].finish == 2.0
    assert task0[1].finish - task0[1].start == 10.0
    assert all(j.finish is not None for j in log.jobs)


def test_events_for_jobs_not_running_change_nothing() -> None:
    cluster = mixed_cluster(3)
    plain = simulate(cluster, _jobs(), "drf", seed=0)
    ignored = simulate(
        cluster,
        _jobs(),
        "drf",
        seed=0,
        job_events=[
            JobEvent(1.0, "cancel", "late"),  # not yet submitted
            JobEvent(100.0, "cancel", "other"),  # finished by then
            JobEvent(3.0, "fail", "big", 11),  # not running then
            JobEvent(3.0, "cancel", "nobody"),
        ],
    )
    assert ignored.attempts == plain.attempts


def test_cancelling_a_map_reduce_job_with_copy_compute_splitting() -> None:
    cluster = mixed_cluster(2)
    jobs = [
        Job(
            "mr",
            0.0,
            "a",
            np.array([1.0, 1.0]),
            4,
            FixedDuration(2.0),
            reduce=ReducePhase(3, copy=5.0, compute=5.0),
        ),
        Job("after", 1.0, "b", np.array([1.0, 1.0]), 4, FixedDuration(2.0)),
    ]
    options = SimOptions(copy_compute_splitting=True)
    # At 4 s the maps are done and the copy parts run: cancelling frees their reducer slots.
    log = simulate(
        cluster, jobs, "fair", seed=0, options=options, job_events=[JobEvent(4.0, "cancel", "mr")]
    )
    assert {j.job: j.finish is None for j in log.jobs} == {"mr": True, "after": False}
    assert any(a.phase == "copy" and a.killed for a in log.attempts)
    policy = make_policy("fair", cluster, options=options.policy_options())
    simulate(
        cluster, jobs, policy, seed=0, options=options, job_events=[JobEvent(4.0, "cancel", "mr")]
    )
    cpac = policy.ledger.copy_compute
    assert cpac is not None
    assert not cpac.reducers and not cpac.copying and not cpac.waiting
    assert policy.jobs == {}


def test_cancelling_under_preemption_forgets_the_job() -> None:
    cluster = mixed_cluster(2)
    options = SimOptions(preemption=(1.0, 2.0))
    policy = make_policy("fair", cluster, options=PolicyOptions(preemption=(1.0, 2.0)))
    log = simulate(
        cluster,
        _jobs(),
        policy,
        seed=0,
        options=options,
        job_events=[JobEvent(6.0, "cancel", "big")],
    )
    assert [j.job for j in log.jobs if j.finish is None] == ["big"]
    assert all(u.running == 0 and u.pending == 0 for u in policy.users)


@pytest.mark.parametrize("mode", list(REFERENCE_POLICIES))
def test_reference_schedulers_take_cancellations_and_failures(mode: str) -> None:
    cluster = Cluster.build(
        ["cpu"], [Machine(f"m{i}", np.array([4.0]), attributes={"fast": i == 0}) for i in range(3)]
    )
    jobs = [
        Job("big", 0.0, "a", np.array([1.0]), 12, FixedDuration(10.0)),
        Job("other", 0.0, "b", np.array([1.0]), 6, FixedDuration(10.0)),
        Job(
            "late", 5.0, "c", np.array([1.0]), 4, FixedDuration(3.0), constraint=Constraint("fast")
        ),
    ]
    policy = ReferenceScheduler(cluster, mode)
    log = simulate(
        cluster,
        jobs,
        policy,
        seed=0,
        job_events=[JobEvent(2.0, "fail", "other", 1), JobEvent(4.0, "cancel", "big")],
    )
    assert {j.job: j.finish is None for j in log.jobs} == {
        "big": True,
        "other": False,
        "late": False,
    }
    assert policy.job_cancelled(50.0, 0) == []


def test_the_policy_returns_the_running_tasks_it_stopped() -> None:
    cluster = mixed_cluster(2)
    policy = make_policy("drf", cluster)
    policy.job_submitted(0.0, 0, _jobs()[0])
    launched = [d.task for d in policy.decide(0.0)]
    assert launched == [TaskRef(0, "map", t) for t in range(len(launched))]
    assert sorted(policy.job_cancelled(1.0, 0)) == sorted(launched)
    assert policy.job_cancelled(1.0, 0) == []
    # The room is back: another job takes as many tasks.
    policy.job_submitted(1.0, 1, Job("again", 1.0, "a", np.array([2.0, 2.0]), 12))
    assert len(policy.decide(1.0)) == len(launched)


def test_a_live_job_without_duration_cannot_be_simulated() -> None:
    jobs = [Job("live", 0.0, "a", np.array([1.0, 1.0]), 2)]
    with pytest.raises(SimulationError) as err:
        simulate(mixed_cluster(2), jobs, "drf", seed=0)
    assert err.value.where == "jobs[0].duration"
