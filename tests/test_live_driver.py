"""The live driver on the in-process fake executor: every path of the protocol (launch,
finish, failure and retries, job failure, cancellation, node loss and arrival, preemption's
kills, a replayed job), checked exactly; and a live run on the fake decides as the simulator
does on the same workload."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fairshare.backends import FakeExecutor, Journal, LiveDriver, LiveJob, TaskSpec
from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import ONLINE_POLICIES, PolicyOptions, make_policy
from fairshare.sim import simulate
from fairshare.workload.model import FixedDuration, Job, User

RESOURCES = ("cpu", "mem")


def _machines() -> list[Machine]:
    return [
        Machine("n0", np.array([4.0, 8.0]), rack="r0", attributes={"gpu": True}),
        Machine("n1", np.array([4.0, 8.0]), rack="r1"),
    ]


def _users(**extra: User) -> list[User]:
    users = {
        "alice": User("alice", np.array([1.0, 1.0])),
        "bob": User("bob", np.array([1.0, 1.0])),
    }
    users.update(extra)
    return list(users.values())


class _Recorder(Journal):
    def __init__(self) -> None:
        self.lines: list[tuple[object, ...]] = []

    def task_launched(self, job: str, index: int, attempt: int, machine: str) -> None:
        self.lines.append(("launched", job, index, attempt, machine))

    def task_finished(self, job: str, index: int) -> None:
        self.lines.append(("finished", job, index))

    def task_pending(
        self, job: str, index: int, *, failures: int, error: str | None = None
    ) -> None:
        self.lines.append(("pending", job, index, failures, error))

    def job_ended(self, job: str, state: str, error: str | None = None) -> None:  # type: ignore[override]
        self.lines.append(("ended", job, state, error))

    def of(self, kind: str) -> list[tuple[object, ...]]:
        return [line for line in self.lines if line[0] == kind]


def _driver(
    policy: str = "drf",
    *,
    users: list[User] | None = None,
    machines: list[Machine] | None = None,
    duration: Callable[[TaskSpec], float] | None = None,
    failure: Callable[[TaskSpec], str | None] | None = None,
    options: PolicyOptions | None = None,
) -> tuple[LiveDriver, FakeExecutor, _Recorder]:
    nodes = machines if machines is not None else _machines()
    users = users if users is not None else _users()
    fake = FakeExecutor(RESOURCES, nodes, duration=duration, failure=failure)
    sched = make_policy(
        policy, Cluster.build(RESOURCES, fake.nodes()), users=users, options=options
    )
    journal = _Recorder()
    driver = LiveDriver(sched, fake, users=users, journal=journal, poll_interval=0.0)
    return driver, fake, journal


def _drain(driver: LiveDriver, fake: FakeExecutor, limit: int = 10_000) -> None:
    """Step until nothing runs and nothing waits (or what waits can never run)."""
    for _ in range(limit):
        driver.step(math.inf)
        if fake.idle() and driver.running() == 0:
            driver.step(0.0)
            if fake.idle() and driver.running() == 0:
                return
    raise AssertionError("the driver did not settle")


def _job(job_id: str, tenant: str, tasks: int, cpu: float = 1.0, **extra: object) -> LiveJob:
    return LiveJob(
        job_id,
        tenant,
        job_id,
        tasks,
        {"cpu": cpu, "mem": 1.0},
        ("true",),
        **extra,  # type: ignore[arg-type]
    )


def test_two_tenants_split_the_cluster_and_every_task_finishes_once() -> None:
    driver, fake, journal = _driver()
    driver.submit(_job("a", "alice", 12))
    driver.submit(_job("b", "bob", 12))
    driver.step(0.0)
    assert driver.shares() == {"alice": (4, pytest.approx(0.5)), "bob": (4, pytest.approx(0.5))}
    _drain(driver, fake)
    finished = journal.of("finished")
    assert sorted(finished) == sorted([("finished", j, i) for j in "ab" for i in range(12)])
    assert journal.of("ended") == [
        ("ended", "a", "finished", None),
        ("ended", "b", "finished", None),
    ]
    assert driver.now() == 3.0  # 24 one-second tasks on 8 slots
    log = driver.log("drf", 0.0)
    assert [(j.job, j.first_start, j.finish) for j in log.jobs] == [
        ("a", 0.0, 3.0),
        ("b", 0.0, 3.0),
    ]
    assert not any(a.killed or a.truncated for a in log.attempts)
    assert not driver.active()


@pytest.mark.parametrize(
    "policy",
    [p for p, entry in ONLINE_POLICIES.items() if not getattr(entry.cls, "overcommits", False)],
)
def test_a_live_run_on_the_fake_decides_as_the_simulator(policy: str) -> None:
    """Same policy, same jobs, same durations: the live driver and the simulator launch the
    same tasks on the same machines at the same times (they share only the protocol)."""
    seconds = {"a": 2.0, "b": 3.0, "c": 5.0}
    demand = {"a": 1.0, "b": 2.0, "c": 1.0}
    users = [*_users(), User("carol", np.array([1.0, 1.0]), constraint=Constraint("gpu"))]
    driver, fake, _ = _driver(policy, users=users, duration=lambda spec: seconds[spec.job])
    for job_id, tenant in (("a", "alice"), ("b", "bob"), ("c", "carol")):
        driver.submit(_job(job_id, tenant, 7, cpu=demand[job_id]))
    _drain(driver, fake)
    live = driver.log(policy, 0.0)
    cluster = Cluster.build(RESOURCES, _machines())
    jobs = [
        Job(
            job_id,
            0.0,
            tenant,
            np.array([demand[job_id], 1.0]),
            7,
            FixedDuration(seconds[job_id]),
            constraint=Constraint("gpu") if tenant == "carol" else None,
        )
        for job_id, tenant in (("a", "alice"), ("b", "bob"), ("c", "carol"))
    ]
    sim = simulate(cluster, jobs, policy, seed=0, users=users)

    def key(log: object) -> list[tuple[object, ...]]:
        return sorted(
            (a.start, a.job, a.task, a.machine, a.finish, a.killed)
            for a in log.attempts  # type: ignore[attr-defined]
        )

    assert key(live) == key(sim)
    assert [(j.job, j.finish) for j in live.jobs] == [(j.job, j.finish) for j in sim.jobs]


def test_a_failing_task_is_retried_then_its_job_finishes() -> None:
    def failure(spec: TaskSpec) -> str | None:
        return "exit code 1: boom" if spec.index == 0 and spec.attempt < 2 else None

    driver, fake, journal = _driver(failure=failure)
    driver.submit(_job("a", "alice", 3))
    _drain(driver, fake)
    assert journal.of("pending") == [
        ("pending", "a", 0, 1, "exit code 1: boom"),
        ("pending", "a", 0, 2, "exit code 1: boom"),
    ]
    assert journal.of("ended") == [("ended", "a", "finished", None)]
    attempts = [(a.task, a.attempt, a.killed) for a in driver.log("drf", 0.0).attempts]
    assert sorted(attempts) == [
        (0, 0, True),
        (0, 1, True),
        (0, 2, False),
        (1, 0, False),
        (2, 0, False),
    ]


def test_a_task_failing_past_its_limit_fails_the_job_and_stops_its_tasks() -> None:
    def duration(spec: TaskSpec) -> float:
        return 1.0 if spec.index == 0 else 100.0

    driver, fake, journal = _driver(
        duration=duration,
        failure=lambda s: "exit code 3" if s.job == "a" and s.index == 0 else None,
    )
    driver.submit(_job("a", "alice", 4, max_retries=1))
    driver.submit(_job("b", "bob", 2))
    _drain(driver, fake)
    assert ("ended", "a", "failed", "task 0 failed 2 times: exit code 3") in journal.lines
    # Tasks 1-3 of the failed job were running: cancelled at once, never finished.
    assert sorted(fake.cancelled) == ["a:1:0", "a:2:0", "a:3:0"]
    assert not [line for line in journal.of("finished") if line[1] == "a"]
    assert ("ended", "b", "finished", None) in journal.lines
    log = driver.log("drf", 0.0)
    assert [(j.job, j.finish) for j in log.jobs] == [("a", None), ("b", 100.0)]


def test_a_cancelled_job_stops_its_tasks_and_gives_its_room_to_others() -> None:
    driver, fake, journal = _driver(duration=lambda s: 10.0)
    driver.submit(_job("a", "alice", 20))
    driver.step(1.0)
    assert driver.shares()["alice"][0] == 8
    driver.submit(_job("b", "bob", 8))
    driver.cancel("a")
    driver.step(0.0)
    assert sorted(fake.cancelled) == sorted(f"a:{i}:0" for i in range(8))
    assert driver.shares() == {"alice": (0, 0.0), "bob": (8, pytest.approx(1.0))}
    _drain(driver, fake)
    assert journal.of("ended") == [
        ("ended", "a", "cancelled", None),
        ("ended", "b", "finished", None),
    ]
    driver.cancel("a")  # already ended: nothing happens
    driver.cancel("nope")
    driver.step(0.0)
    assert len(journal.of("ended")) == 2


def test_a_lost_node_loses_no_task_and_counts_no_retry() -> None:
    driver, fake, journal = _driver(duration=lambda s: 10.0)
    driver.submit(_job("a", "alice", 8, max_retries=0))
    driver.step(0.0)
    driver.step(5.0)
    fake.remove_node("n1")
    _drain(driver, fake)
    assert journal.of("ended") == [("ended", "a", "finished", None)]
    assert sorted(line[2] for line in journal.of("finished")) == list(range(8))
    lost = journal.of("pending")
    assert len(lost) == 4 and all(line[3] == 0 for line in lost)
    assert all(m == "n0" for _, m, s in fake.launched if s.attempt == 1)
    assert "n1" not in driver.machines


def test_a_node_that_joins_is_used() -> None:
    driver, fake, _ = _driver(duration=lambda s: 10.0)
    driver.submit(_job("a", "alice", 12))
    driver.step(0.0)
    assert driver.shares()["alice"][0] == 8
    fake.add_node(Machine("n2", np.array([4.0, 8.0])))
    driver.step(0.0)
    assert driver.shares()["alice"][0] == 12
    assert {m for _, m, _ in fake.launched} == {"n0", "n1", "n2"}


def test_a_constrained_tenant_lands_only_on_matching_nodes() -> None:
    users = _users(alice=User("alice", np.array([1.0, 1.0]), constraint=Constraint("gpu")))
    driver, fake, _ = _driver(users=users)
    driver.submit(_job("a", "alice", 6))
    driver.submit(_job("b", "bob", 6, constraint="rack == 'r1'"))
    _drain(driver, fake)
    assert {(s.job, m) for _, m, s in fake.launched} == {("a", "n0"), ("b", "n1")}


def test_a_replayed_job_runs_only_its_unfinished_tasks() -> None:
    driver, fake, journal = _driver()
    driver.submit(_job("a", "alice", 5, done=frozenset({0, 3}), failures={1: 2}))
    _drain(driver, fake)
    assert sorted(s.index for _, _, s in fake.launched) == [1, 2, 4]
    assert journal.of("ended") == [("ended", "a", "finished", None)]
    done = _job("b", "bob", 2, done=frozenset({0, 1}))
    driver.submit(done)
    driver.step(0.0)
    assert journal.of("ended")[-1] == ("ended", "b", "finished", None)  # nothing left to run
    assert driver.now() == 1.0
    assert [(j.job, j.finish) for j in driver.log("drf", 0.0).jobs][-1] == ("b", 1.0)


def test_preemption_kills_are_cancelled_and_run_again() -> None:
    users = [
        User("alice", np.array([1.0, 1.0])),
        User("bob", np.array([1.0, 1.0]), min_share=4),
    ]
    driver, fake, journal = _driver(
        "fair",
        users=users,
        duration=lambda s: 50.0,
        options=PolicyOptions(preemption=(2.0, 100.0)),
    )
    driver.submit(_job("a", "alice", 8))
    driver.step(1.0)
    driver.submit(_job("b", "bob", 4))
    _drain(driver, fake)
    killed = [line for line in journal.of("pending") if line[4] == "preempted"]
    assert len(killed) == 4
    assert len(fake.cancelled) == 4
    first_b = min(t for t, _, s in fake.launched if s.job == "b")
    assert first_b == 3.0  # bob waited TMIN = 2 s below its minimum share
    assert sorted(line[2] for line in journal.of("finished") if line[1] == "a") == list(range(8))


def test_a_live_run_writes_the_same_files_as_its_simulation(tmp_path: Path) -> None:
    """``serve --out`` writes simulate's files from the live run's records: on the fake, with
    the simulation's durations, the jobs and the timeline are the simulation's, byte for
    byte (the summary differs only in what says how the run was made)."""
    from fairshare.report.html import write_outputs  # noqa: PLC0415

    users = _users()
    seconds = {"a": 2.0, "b": 3.0}
    driver, fake, _ = _driver(users=users, duration=lambda spec: seconds[spec.job])
    driver.submit(_job("a", "alice", 9))
    driver.submit(_job("b", "bob", 5, cpu=2.0))
    _drain(driver, fake)
    live = driver.log("drf", 0.0)
    jobs = [
        Job("a", 0.0, "alice", np.array([1.0, 1.0]), 9, FixedDuration(2.0)),
        Job("b", 0.0, "bob", np.array([2.0, 1.0]), 5, FixedDuration(3.0)),
    ]
    sim = simulate(Cluster.build(RESOURCES, _machines()), jobs, "drf", seed=0, users=users)
    docs = {}
    for name, log in (("live", live), ("sim", sim)):
        (tmp_path / name).mkdir()
        docs[name] = write_outputs(log, tmp_path / name)
    for file in ("jobs.csv", "timeline.csv"):
        assert (tmp_path / "live" / file).read_bytes() == (tmp_path / "sim" / file).read_bytes()
    assert (tmp_path / "live" / "report.html").stat().st_size > 0
    differ = {k for k in docs["sim"] if docs["live"].get(k) != docs["sim"].get(k)}
    assert differ <= {"wall_seconds", "options", "events"}, differ
