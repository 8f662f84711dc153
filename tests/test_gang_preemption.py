"""Gang-aware preemption (rule 9 of fairshare.policies.preemption, docs/policies/gangs.md):
victims of no gang first; a gang is preempted whole and starts again as a gang."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from fairshare.api import Run
from fairshare.api import simulate as simulate_scenario
from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import PolicyOptions, TaskRef, make_policy
from fairshare.policies.protocol import Kill, Launch
from fairshare.runlog import RunLog, TaskAttempt
from fairshare.sim.engine import MachineEvent, SimOptions, simulate
from fairshare.workload import parse_scenario
from fairshare.workload.model import FixedDuration, Job, PerTaskDurations, User

from conftest import EXAMPLES


def gang_restarts(log: RunLog, job: str, min_tasks: int) -> list[tuple[float, list[float]]]:
    """Per preemption of ``job`` (a kill time), checks that every attempt of it running then
    was killed then, and returns (kill time, start times of the killed tasks' next attempts,
    by task index)."""
    attempts = [a for a in log.attempts if a.job == job and a.phase == "map"]
    by_task: dict[tuple[int, int], TaskAttempt] = {(a.task, a.attempt): a for a in attempts}
    kills: dict[float, list[TaskAttempt]] = defaultdict(list)
    for a in attempts:
        if a.killed:
            kills[a.finish].append(a)
    out = []
    for t, killed in sorted(kills.items()):
        survivors = [a for a in attempts if not a.killed and a.start < t < a.finish]
        assert survivors == [], (job, t, survivors)
        nxt = [by_task[(a.task, a.attempt + 1)] for a in sorted(killed, key=lambda a: a.task)]
        out.append((t, [a.start for a in nxt][:min_tasks]))
    return out


def test_example_gang_waits_within_its_queues_borrowing_limit() -> None:
    """Issue 18's example, after gangs obey quotas as a whole (issue 29): research may run 24
    CPUs (quota 16, borrowing limit 8). At t=30 the sweep's last 16 CPUs still run, so the
    mpi gang (24 CPUs) no longer starts there over the limit (40 CPUs) only to be reclaimed
    at once; it starts whole at t=70, when carol's nightly ends, and is never killed. Prod's
    work still gets its quota within Tmin (nightly at t=30). Gangs preempted whole are
    covered by the reclaim tests below."""
    run = simulate_scenario(
        EXAMPLES / "sim-gangs-quotas.yaml",
        "drf",
        options=SimOptions(preemption=(10.0, 60.0), backfill="easy"),
    )
    jobs = {r.job: r for r in run.log.jobs}
    mpi = [a for a in run.log.attempts if a.job == "mpi"]
    assert len(mpi) == 12
    assert {a.start for a in mpi} == {70.0}
    assert not any(a.killed for a in mpi)
    assert jobs["nightly"].first_start == 30.0
    assert jobs["urgent"].first_start == 20.0
    assert jobs["mpi"].finish == 130.0
    assert run.summary["preempted_tasks"] == 0
    research = [a for a in run.log.attempts if a.user in ("alice", "bob")]
    cpus = {"alice": 1.0, "bob": 2.0}
    for moment in sorted({a.start for a in research}):
        held = sum(cpus[a.user] for a in research if a.start <= moment < a.finish)
        assert held <= 24.0, moment


def _two_queues(jobs: list[dict[str, object]]) -> Run:
    scenario = parse_scenario(
        {
            "machines": [{"name": "n", "count": 2, "capacity": {"cpu": 4}}],
            "queues": [
                {"path": "research", "quota": {"cpu": 4}},
                {"path": "prod", "quota": {"cpu": 4}},
            ],
            "jobs": jobs,
        },
        source="two-queues",
    )
    return simulate_scenario(scenario, "drf", options=SimOptions(preemption=(5.0, 1000.0)))


def test_reclaim_from_a_gang_within_tmin() -> None:
    """A gang of research borrows prod's half of the cluster; prod's work arrives at t=1 and
    gets its quota back at t=6 (Tmin = 5 s): the gang, the only borrower, stops whole, and
    starts again with all its 8 tasks together once room for them all is free."""
    run = _two_queues(
        [
            {"name": "g", "submit": 0, "user": "r", "queue": "research", "tasks": 8,
             "gang": True, "duration": 50, "demand": {"cpu": 1}},
            {"name": "p", "submit": 1, "user": "p", "queue": "prod", "tasks": 4,
             "duration": 10, "demand": {"cpu": 1}},
        ]
    )  # fmt: skip
    jobs = {r.job: r for r in run.log.jobs}
    assert jobs["p"].first_start == 6.0
    assert jobs["p"].finish == 16.0
    g = [a for a in run.log.attempts if a.job == "g"]
    assert (
        sorted((a.start, a.finish, a.killed) for a in g)
        == [(0.0, 6.0, True)] * 8 + [(16.0, 66.0, False)] * 8
    )
    assert gang_restarts(run.log, "g", 8) == [(6.0, [16.0] * 8)]


def test_victims_of_no_gang_come_first() -> None:
    """Research runs a gang of 4 (started first) and 4 single tasks, borrowing 4 CPUs of
    prod's quota: prod's reclaim takes the single tasks, newer or not, and the gang runs on
    untouched."""
    run = _two_queues(
        [
            {"name": "single", "submit": 0.5, "user": "s", "queue": "research", "tasks": 4,
             "duration": 50, "demand": {"cpu": 1}},
            {"name": "g", "submit": 0, "user": "r", "queue": "research", "tasks": 4,
             "gang": True, "duration": 50, "demand": {"cpu": 1}},
            {"name": "p", "submit": 1, "user": "p", "queue": "prod", "tasks": 4,
             "duration": 10, "demand": {"cpu": 1}},
        ]
    )  # fmt: skip
    g = [a for a in run.log.attempts if a.job == "g"]
    assert [(a.start, a.finish, a.killed) for a in g] == [(0.0, 50.0, False)] * 4
    single = [a for a in run.log.attempts if a.job == "single"]
    assert sum(a.killed for a in single) == 4
    assert {a.finish for a in single if a.killed} == {6.0}
    assert {r.job: r.first_start for r in run.log.jobs}["p"] == 6.0


def test_requeue_gang_returns_it_to_waiting() -> None:
    """At the policy (rule 7 on a gang): the kills of a preempted gang are all its running
    tasks, and it waits for admission again (in ``gangs``, its tasks not pending one by
    one), so nothing of it starts on the two machines the kill left free; when a third
    frees up, its three tasks start in one decision."""
    cluster = Cluster.build(["slots"], [Machine(f"m{i}", np.array([1.0])) for i in range(4)])
    users = [User("A", np.array([1.0])), User("B", np.array([1.0]))]
    fair = make_policy("drf", cluster, users=users, options=PolicyOptions(preemption=(10.0, 1e9)))
    gang = Job("g", 0.0, "B", np.array([1.0]), 3, FixedDuration(100.0), min_tasks=3)
    fair.job_submitted(0.0, 0, gang)
    assert sorted(d.task.task for d in fair.decide(0.0)) == [0, 1, 2]
    # A job of a higher priority (rule 7) than the gang's, of two tasks: one fits now.
    urgent = Job("a", 1.0, "A", np.array([1.0]), 2, FixedDuration(5.0), priority=10)
    fair.job_submitted(1.0, 1, urgent)
    first = fair.decide(1.0)
    assert [(type(d).__name__, d.task.job) for d in first] == [("Launch", 1)]
    fair.advance(11.0)
    out = fair.decide(11.0)
    kills = [d.task for d in out if type(d) is Kill]
    assert sorted(kills) == [TaskRef(0, "map", t) for t in range(3)]
    assert [d.task for d in out if type(d) is Launch] == [TaskRef(1, "map", 1)]
    state = fair.part_of(TaskRef(0, "map", 0))
    assert 0 in fair.gangs and state.gang == 3 and state.pending == 3
    assert fair.users[1].pending == 0 and fair.users[1].running == 0
    # Two machines are free after the kill, and the gang waits for a third.
    fair.task_finished(16.0, TaskRef(1, "map", 0))
    again = fair.decide(16.0)
    assert sorted(d.task for d in again if type(d) is Launch) == [
        TaskRef(0, "map", t) for t in range(3)
    ]
    assert 0 not in fair.gangs and state.running == 3


def test_no_kill_for_a_launch_the_reservation_refuses() -> None:
    """Found by the gang invariant (tests/test_gang.py): a priority kill on a machine of the
    head gang's EASY reservation, where the starved job's task may not start, handed the
    room to the victim's own task, killed again at the same time, for ever. Preemption now
    kills only for a launch the offer makes (delay scheduling and the reservation allow it),
    and the run ends: every job that fits finishes (j5, a gang of 24 CPUs on rack r0's 16,
    never runs) and the gangs restart whole."""
    r0, fast = Constraint("rack == 'r0'"), Constraint("fast")
    tasks = PerTaskDurations
    jobs = [
        Job("j0", 6.0, "u2", np.array([2.0, 1.0]), 5, tasks((5.0, 1.0, 5.0, 3.0, 1.0)),
            input_replicas=2),
        Job("j1", 6.5, "u2", np.array([1.0, 4.0]), 6, tasks((1.0, 1.0, 5.0, 1.0, 5.0, 1.0)),
            constraint=r0, input_replicas=2, priority=5),
        Job("j2", 6.5, "u1", np.array([2.0, 4.0]), 3, FixedDuration(2.5), constraint=fast),
        Job("j3", 6.5, "u1", np.array([3.0, 4.0]), 10,
            tasks((1.0, 3.0, 5.0, 5.0, 5.0, 3.0, 3.0, 3.0, 1.0, 5.0)), constraint=fast,
            priority=5),
        Job("j4", 7.0, "u1", np.array([1.0, 1.0]), 10,
            tasks((3.0, 3.0, 1.0, 5.0, 1.0, 5.0, 1.0, 5.0, 3.0, 5.0)), min_tasks=10),
        Job("j5", 13.0, "u1", np.array([3.0, 1.0]), 8,
            tasks((5.0, 1.0, 1.0, 3.0, 3.0, 1.0, 5.0, 5.0)), constraint=r0, input_replicas=2,
            min_tasks=8),
    ]  # fmt: skip
    machines = [
        Machine("m0", np.array([8.0, 8.0]), rack="r0", attributes={"fast": True}),
        Machine("m1", np.array([4.0, 8.0]), rack="r1", attributes={"fast": False}),
    ]
    events = [
        MachineEvent(1.0, "remove", "m1"),
        MachineEvent(3.0, "add", Machine("extra", np.array([8.0, 8.0]), rack="r0")),
    ]
    log = simulate(
        Cluster.build(["cpu", "mem"], machines),
        jobs,
        "drfh",
        seed=2,
        options=SimOptions(preemption=(2.0, 4.0), backfill="easy"),
        machine_events=events,
    )
    finish = {r.job: r.finish for r in log.jobs}
    assert finish == {"j0": 20.0, "j1": 17.0, "j2": 38.5, "j3": 36.0, "j4": 22.0, "j5": None}
    # The gang j4 is preempted three times, and starts again whole each time.
    assert gang_restarts(log, "j4", 10) == [
        (9.0, [10.0] * 10),
        (12.0, [15.0] * 7),
        (15.0, [17.0] * 7),
    ]
