"""Gang scheduling (SPEC section 1's ``gang`` / ``min_tasks``): the scenario fields, admission
all or nothing for every online policy, the rule that a gang that cannot fit blocks nobody,
and gangs larger than the cluster."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairshare.api import Run, unrunnable_jobs, workload_of
from fairshare.api import simulate as simulate_scenario
from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import ONLINE_POLICIES, PolicyOptions, make_policy
from fairshare.runlog import RunLog
from fairshare.sim.engine import JobEvent, MachineEvent, SimOptions, simulate
from fairshare.workload import parse_scenario
from fairshare.workload.eligibility import TaskFit
from fairshare.workload.errors import ScenarioError
from fairshare.workload.model import FixedDuration, Job, PerTaskDurations

from conftest import (
    WHOLE_JOB_POLICIES,
    assert_rejected,
    mixed_cluster,
    run_fairshare,
    scaled_examples,
)


def _slots(n: int) -> Cluster:
    """n machines of one slot (one unit of cpu and mem, for the policies that name one)."""
    return Cluster.build(["cpu", "mem"], [Machine(f"m{i}", np.array([1.0, 1.0])) for i in range(n)])


def _job(name: str, submit: float, user: str, tasks: int, seconds: float, **kw: object) -> Job:
    return Job(name, submit, user, np.array([1.0, 1.0]), tasks, FixedDuration(seconds), **kw)  # type: ignore[arg-type]


def _starts(log: RunLog, job: str) -> list[float]:
    """The start of each task's first attempt, in task order."""
    first: dict[int, float] = {}
    for a in log.attempts:
        if a.job == job and a.phase == "map" and a.attempt == 0:
            first[a.task] = a.start
    return [first[t] for t in sorted(first)]


# --------------------------------------------------------------------------------------------
# The scenario fields


def _scenario(**job: object) -> dict[str, object]:
    entry = {"name": "g", "submit": 0, "tasks": 4, "duration": 5, **job}
    return {"machines": [{"name": "m", "capacity": {"cpu": 8}}], "jobs": [entry]}


def test_gang_and_min_tasks_are_read() -> None:
    gang = parse_scenario(_scenario(gang=True), source="s").jobs[0]
    assert (gang.min_tasks, gang.gang) == (4, True)
    some = parse_scenario(_scenario(min_tasks=3), source="s").jobs[0]
    assert (some.min_tasks, some.gang) == (3, True)
    plain = parse_scenario(_scenario(gang=False), source="s").jobs[0]
    assert (plain.min_tasks, plain.gang) == (None, False)
    both = parse_scenario(_scenario(gang=True, min_tasks=4), source="s").jobs[0]
    assert both.min_tasks == 4


@pytest.mark.parametrize(
    ("fields", "where", "what"),
    [
        ({"gang": "yes"}, "jobs[0].gang", "must be true or false"),
        ({"gang": 1}, "jobs[0].gang", "must be true or false"),
        ({"min_tasks": 5}, "jobs[0].min_tasks", "must be at most the job's tasks (4), got 5"),
        ({"min_tasks": 0}, "jobs[0].min_tasks", "must be a whole number >= 1"),
        ({"min_tasks": 2.5}, "jobs[0].min_tasks", "must be a whole number >= 1"),
        ({"gang": True, "min_tasks": 2}, "jobs[0].min_tasks", "not both"),
    ],
)
def test_bad_gang_fields_name_the_field(fields: dict[str, object], where: str, what: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(_scenario(**fields), source="s.yaml")
    assert info.value.where == where
    assert what in info.value.what


def test_bad_min_tasks_through_the_executable(tmp_path: Path) -> None:
    path = tmp_path / "gang.json"
    path.write_text(json.dumps(_scenario(min_tasks=9)))
    line = assert_rejected(
        run_fairshare("simulate", str(path), "--policy", "drf", "--out", str(tmp_path / "out"))
    )
    assert line.startswith(f"error: {path}: jobs[0].min_tasks: ")
    assert "at most the job's tasks (4), got 9" in line
    assert not (tmp_path / "out").exists()


def test_bad_backfill_value_through_the_executable(tmp_path: Path) -> None:
    path = tmp_path / "gang.json"
    path.write_text(json.dumps(_scenario(gang=True)))
    line = assert_rejected(
        run_fairshare(
            "simulate", str(path), "--policy", "fifo", "--backfill", "lazy", "--out", str(tmp_path)
        )
    )
    assert line == f"error: {path}: --backfill: expected easy, got 'lazy'"


# --------------------------------------------------------------------------------------------
# Admission


@pytest.mark.parametrize("policy", sorted(ONLINE_POLICIES))
def test_a_gang_waits_whole_and_the_next_job_runs(policy: str) -> None:
    """Three slots, two busy until 10: the gang of two holds nothing while it waits, the
    single task behind it starts at once, and the gang starts whole at 10."""
    jobs = [
        _job("a", 0.0, "u", 2, 10.0),
        _job("g", 1.0, "v", 2, 5.0, min_tasks=2),
        _job("s", 1.0, "w", 1, 20.0),
    ]
    log = simulate(_slots(3), jobs, policy, seed=0)
    assert _starts(log, "s") == [1.0]
    assert _starts(log, "g") == [10.0, 10.0]


QUOTA_GANGS = """
machines:
  - {name: node, count: 2, capacity: {cpu: 4}}
queues:
  - {path: small, quota: {cpu: 4}, borrowing_limit: {cpu: 0}}
  - {path: big, quota: {cpu: 4}}
jobs:
  - {name: g1, submit: 0, user: alice, queue: small, tasks: 3, gang: true, duration: 10,
     demand: {cpu: 1}}
  - {name: g2, submit: 0, user: alice, queue: small, tasks: 3, gang: true, duration: 10,
     demand: {cpu: 1}}
"""


@pytest.mark.parametrize("policy", sorted(set(ONLINE_POLICIES) - {"slots", "cmmf-mem"}))
def test_a_gang_keeps_its_queue_within_its_borrowing_limit(policy: str) -> None:
    """Queue ``small`` holds 4 CPUs and may borrow none; two gangs of 3 CPUs each: the
    second waits for the first (6 > 4) although the cluster has 8 CPUs free. A gang's
    admission asks the quota for all its tasks at once (``Filter.admits_whole``), as Kueue
    admits a workload only if its whole request fits the ClusterQueue's quota (Kueue's
    docs, "Cluster Queue": borrowingLimit). ``slots`` ignores quotas (its docs say so);
    ``cmmf-mem`` needs memory."""
    scenario = parse_scenario(yaml.safe_load(QUOTA_GANGS), "quota-gangs")
    run = simulate_scenario(scenario, policy)
    assert run.jobs_frame()["first_start"].to_list() == [0.0, 10.0]


def test_a_gang_keeps_its_queue_within_its_maximum_capacity() -> None:
    """The Capacity Scheduler with ``maximum-capacity`` one half at every level: queue
    ``small`` may use half the cluster and its user ``alice`` half of that (2 of 8 CPUs), so
    the second gang of 2 waits for the first; before gangs asked the filter, both ran."""
    data = yaml.safe_load(QUOTA_GANGS)
    for queue in data["queues"]:
        queue.pop("borrowing_limit", None)
        queue.pop("quota", None)
    for job in data["jobs"]:
        job["tasks"] = 2
    scenario = parse_scenario(data, "capacity-gangs")
    loaded = workload_of(scenario)
    policy = make_policy(
        "capacity",
        loaded.cluster,
        users=scenario.users,
        queues=scenario.queues,
        options=PolicyOptions(max_capacity=0.5),
    )
    log = simulate(loaded.cluster, loaded.jobs, policy, seed=0)
    assert _starts(log, "g1") == [0.0, 0.0]
    assert _starts(log, "g2") == [10.0, 10.0]


@pytest.mark.parametrize("policy", ["fifo", "drf", "hdrf", "tsf"])
def test_min_tasks_start_together_and_the_rest_as_room_allows(policy: str) -> None:
    """Four slots, one busy until 3: at least three of the six tasks start together (at 0,
    on the three free slots), the others as slots free up."""
    jobs = [_job("a", 0.0, "u", 1, 3.0), _job("g", 0.0, "v", 6, 4.0, min_tasks=3)]
    log = simulate(_slots(4), jobs, policy, seed=0)
    assert _starts(log, "g") == [0.0, 0.0, 0.0, 3.0, 4.0, 4.0]


def test_a_gang_larger_than_the_cluster_is_unrunnable_and_blocks_nobody() -> None:
    scenario = parse_scenario(
        {
            "machines": [{"name": "m", "count": 3, "capacity": {"slots": 1}}],
            "jobs": [
                {"name": "big", "submit": 0, "tasks": 4, "duration": 5, "gang": True},
                {"name": "small", "submit": 1, "tasks": 2, "duration": 5},
            ],
        },
        source="big.yaml",
    )
    reason = "its gang of 4 tasks never fits at once: the machines it may use hold 3 of its tasks"
    assert unrunnable_jobs(workload_of(scenario)) == [("big", reason)]
    for backfill in (None, "easy"):
        log = simulate(
            scenario.cluster,
            scenario.jobs,
            "drf",
            seed=0,
            options=SimOptions(backfill=backfill),  # type: ignore[arg-type]
        )
        records = {r.job: r for r in log.jobs}
        assert records["small"].first_start == 1.0
        assert records["big"].first_start is None
        assert not any(a.job == "big" for a in log.attempts)
        summary = Run(log).summary
        assert summary["unrunnable_jobs"] == 1
        assert summary["unrunnable_job_ids"] == ["big"]


def test_a_cancelled_waiting_gang_leaves_nothing_behind() -> None:
    jobs = [
        _job("a", 0.0, "u", 2, 10.0),
        _job("g", 1.0, "v", 3, 5.0, min_tasks=3),
        _job("s", 3.0, "w", 1, 4.0),
    ]
    log = simulate(
        _slots(2),
        jobs,
        "fifo",
        seed=0,
        options=SimOptions(backfill="easy"),
        job_events=[JobEvent(2.0, "cancel", "g")],
    )
    records = {r.job: r for r in log.jobs}
    assert records["g"].finish is None and records["g"].first_start is None
    # With the gang (and its reservation) gone, the later job takes the room at 10.
    assert records["s"].first_start == 10.0


def test_the_policy_order_decides_which_gang_goes_first() -> None:
    """Two gangs of three wait for the same three slots: under DRF the one of the user
    holding less goes first; under FIFO the older one."""
    cluster = _slots(4)
    jobs = [
        _job("a1", 0.0, "a", 1, 10.0),
        _job("a2", 0.0, "a", 3, 10.0, min_tasks=3),
        _job("b", 0.5, "b", 3, 10.0, min_tasks=3),
    ]
    drf = simulate(cluster, jobs, "drf", seed=0)
    assert _starts(drf, "a2") == [0.0] * 3  # it fits at once
    late = [
        _job("x", 0.0, "x", 4, 10.0),
        _job("a1", 1.0, "a", 1, 30.0, min_tasks=1),
        _job("a2", 2.0, "a", 3, 10.0, min_tasks=3),
        _job("b", 3.0, "b", 3, 10.0, min_tasks=3),
    ]
    # At 10 the four slots free: a1 (a's gang of one, first by both orders) takes one; then
    # three slots are left for one gang of three.
    fifo = simulate(cluster, late, "fifo", seed=0)
    assert _starts(fifo, "a2") == [10.0] * 3 and _starts(fifo, "b") == [20.0] * 3
    fair = simulate(cluster, late, "drf", seed=0)
    assert _starts(fair, "b") == [10.0] * 3 and _starts(fair, "a2") == [20.0] * 3


def test_gangs_without_gangs_decide_as_before() -> None:
    """min_tasks=None is the job of old: the same decisions as with no field at all (the
    decision fingerprints check the matrix of mechanisms)."""
    jobs = [_job(f"j{k}", k * 0.5, f"u{k % 3}", 3 + k, 2.0 + k) for k in range(8)]
    a = simulate(_slots(5), jobs, "drf", seed=3)
    b = simulate(_slots(5), jobs, "drf", seed=3, options=SimOptions(backfill="easy"))
    assert a.attempts == b.attempts


def test_a_policy_never_offers_a_waiting_gang_a_machine() -> None:
    policy = make_policy("drf", _slots(2))
    policy.job_submitted(0.0, 0, _job("g", 0.0, "u", 3, 5.0, min_tasks=3))
    assert policy.decide(0.0) == []
    assert policy.users[0].running == 0 and policy.users[0].pending == 0
    policy.machine_added(1.0, Machine("m2", np.array([1.0, 1.0])))
    assert sorted(d.machine for d in policy.decide(1.0)) == ["m0", "m1", "m2"]


# --------------------------------------------------------------------------------------------
# The invariant over random runs


@st.composite
def _gang_runs(
    draw: st.DrawFn,
) -> tuple[int, list[Job], list[MachineEvent], str, SimOptions]:
    n = draw(st.integers(2, 5))
    jobs = []
    t = 0.0
    for k in range(draw(st.integers(1, 9))):
        t += draw(st.sampled_from([0.0, 0.5, 2.0, 6.0]))
        tasks = draw(st.integers(1, 12))
        gang = draw(st.sampled_from(["none", "all", "some"]))
        min_tasks = (
            None if gang == "none" else tasks if gang == "all" else draw(st.integers(1, tasks))
        )
        if draw(st.booleans()):
            duration: FixedDuration | PerTaskDurations = FixedDuration(
                draw(st.sampled_from([1.0, 2.5, 7.0]))
            )
        else:
            duration = PerTaskDurations(
                tuple(draw(st.sampled_from([1.0, 3.0, 5.0])) for _ in range(tasks))
            )
        jobs.append(
            Job(
                f"j{k}",
                t,
                f"u{draw(st.integers(0, 2))}",
                np.array(
                    [draw(st.sampled_from([1.0, 2.0, 3.0])), draw(st.sampled_from([1.0, 4.0]))]
                ),
                tasks,
                duration,
                constraint=draw(
                    st.sampled_from([None, Constraint("fast"), Constraint("rack == 'r0'")])
                ),
                input_replicas=draw(st.sampled_from([None, 2])),
                min_tasks=min_tasks,
                # Higher priorities preempt (rule 7), gangs among their victims.
                priority=draw(st.sampled_from([0, 0, 5])),
            )
        )
    events = []
    if draw(st.booleans()):
        events.append(MachineEvent(draw(st.sampled_from([1.0, 4.0])), "remove", "m1"))
    if draw(st.booleans()):
        events.append(MachineEvent(3.0, "add", Machine("extra", np.array([8.0, 8.0]), rack="r0")))
    policy = draw(st.sampled_from(sorted(ONLINE_POLICIES)))
    options = SimOptions(
        delay=draw(st.sampled_from([None, (1.0, 2.0)])),
        preemption=draw(st.sampled_from([None, (2.0, 4.0)])),
        backfill=draw(st.sampled_from([None, "easy"])),
    )
    return n, jobs, events, policy, options


@settings(
    max_examples=scaled_examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(_gang_runs())
def test_gangs_never_start_partially(
    case: tuple[int, list[Job], list[MachineEvent], str, SimOptions],
) -> None:
    """Every gang's first ``min_tasks`` attempts start at the same time (its first start);
    a gang preempted stops whole (no attempt of it runs on across the kill) and its killed
    tasks' next attempts, up to ``min_tasks``, start at one time; no machine is ever over
    capacity, and every job that can run finishes."""
    n, jobs, events, policy, options = case
    cluster = mixed_cluster(n)
    log = simulate(cluster, jobs, policy, seed=2, options=options, machine_events=events)
    by_job = {j.name: j for j in jobs}
    # A task lost with its machine runs again on its own: only preemptions are checked.
    removals = {e.time for e in events if e.kind == "remove"}
    for record in log.jobs:
        job = by_job[record.job]
        if job.min_tasks is None or record.first_start is None:
            continue
        attempts = [a for a in log.attempts if a.job == record.job and a.phase == "map"]
        starts = sorted(a.start for a in attempts)
        assert starts[: job.min_tasks] == [record.first_start] * job.min_tasks
        kills = sorted({a.finish for a in attempts if a.killed})
        for t in sorted(set(kills) - removals):
            assert not [a for a in attempts if not a.killed and a.start < t < a.finish]
            # The gang waits whole and restarts as one: its first starts after the kill (up
            # to min_tasks, before its next kill) are at one time (or there are none, a gang
            # stranded by a removal). Which tasks those are is the ledger's order: stopped
            # tasks first, the earliest stopped first (Ledger.requeue_gang), so a gang
            # stopped twice restarts with the tasks stopped the first time.
            until = min((k for k in kills if k > t), default=math.inf)
            restarts = sorted(
                a.start
                for a in attempts
                if t <= a.start < until and not (a.killed and a.finish == t)
            )
            again = set(restarts[: job.min_tasks])
            assert len(again) <= 1, (record.job, t, again)
    machines = {m.name: m for m in cluster.machines}
    machines["extra"] = Machine("extra", np.array([8.0, 8.0]), rack="r0")
    # The slot scheduler over-commits machines by design (its tasks take a slot whatever
    # their demand; the simulator slows them down instead: sim/overcommit.py).
    for name, machine in machines.items() if policy != "slots" else ():
        points = sorted(
            [(a.finish, 0, by_job[a.job].demand) for a in log.attempts if a.machine == name]
            + [(a.start, 1, by_job[a.job].demand) for a in log.attempts if a.machine == name],
            key=lambda p: (p[0], p[1]),
        )
        used = np.zeros(2)
        for _, kind, demand in points:
            used += demand if kind else -demand
            assert np.all(used <= machine.capacity + 1e-9)
    if not events:
        # Nothing leaves: a job stranded would be a gang blocked for ever (or unrunnable);
        # the kueue policies admit every job whole, as a gang of all its tasks.
        fit = TaskFit(cluster.machines, cluster.resources)
        whole = policy in WHOLE_JOB_POLICIES
        for record in log.jobs:
            job = by_job[record.job]
            if whole and job.min_tasks is None:
                job = replace(job, min_tasks=job.tasks)
            if fit.never_runs(job) is None:
                assert record.finish is not None, record.job
