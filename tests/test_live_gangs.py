"""Gangs and priorities live (issue 18): on the in-process fake, a gang's tasks launch in one
batch, nothing of a gang runs while it waits, and the live run makes exactly the simulator's
decisions; ``min_tasks``, ``gang`` and ``priority`` through the service, the HTTP API (422
with the field path on bad values), ``fairshare submit`` and a database of schema 1."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fairshare.backends import FakeExecutor, LiveDriver, LiveJob
from fairshare.backends.executor import ExecEvent
from fairshare.cluster import Cluster, Machine
from fairshare.policies import PolicyOptions, make_policy
from fairshare.runlog import RunLog
from fairshare.service import store as store_module
from fairshare.service.journal import StoreJournal
from fairshare.service.store import Store
from fairshare.sim import simulate
from fairshare.sim.options import SimOptions
from fairshare.workload.model import MAX_PRIORITY, FixedDuration, Job, User

RESOURCES = ("cpu", "mem")
USERS = [User(name, np.array([1.0, 1.0])) for name in ("alice", "bob", "carol")]
# (id, tenant, tasks, cpu, seconds, min_tasks, priority)
WORKLOAD = [
    ("a", "alice", 6, 1.0, 4.0, None, 0),
    ("g", "bob", 6, 1.0, 3.0, 6, 0),
    ("h", "carol", 3, 2.0, 2.0, 3, 0),
    ("b", "alice", 2, 1.0, 1.0, None, 5),
    ("m", "bob", 5, 1.0, 2.0, 3, 0),
]


class _Batches(FakeExecutor):
    """The fake, numbering its launches by batch: the calls between two waits."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.batch = 0
        self.batches: list[tuple[int, str, int]] = []

    def launch(self, spec: object, machine: str) -> None:
        super().launch(spec, machine)  # type: ignore[arg-type]
        self.batches.append((self.batch, spec.job, spec.index))  # type: ignore[attr-defined]

    def wait(self, timeout: float) -> list[ExecEvent]:
        self.batch += 1
        return super().wait(timeout)


def _machines() -> list[Machine]:
    return [Machine(f"n{i}", np.array([4.0, 8.0])) for i in range(2)]


def _live(policy: str, backfill: str | None) -> tuple[RunLog, _Batches]:
    seconds = {job: s for job, _, _, _, s, _, _ in WORKLOAD}
    fake = _Batches(RESOURCES, _machines(), duration=lambda spec: seconds[spec.job])
    options = PolicyOptions(backfill=backfill) if backfill else None  # type: ignore[arg-type]
    sched = make_policy(
        policy, Cluster.build(RESOURCES, fake.nodes()), users=USERS, options=options
    )
    driver = LiveDriver(sched, fake, users=USERS, poll_interval=0.0)
    for job, tenant, tasks, cpu, _, min_tasks, priority in WORKLOAD:
        driver.submit(
            LiveJob(
                job,
                tenant,
                job,
                tasks,
                {"cpu": cpu, "mem": 1.0},
                ("true",),
                min_tasks=min_tasks,
                priority=priority,
            )
        )
    for _ in range(1000):
        driver.step(math.inf)
        if fake.idle() and driver.running() == 0:
            break
    return driver.log(policy, 0.0), fake


def _simulated(policy: str, backfill: str | None) -> RunLog:
    jobs = [
        Job(
            job,
            0.0,
            tenant,
            np.array([cpu, 1.0]),
            tasks,
            FixedDuration(s),
            min_tasks=min_tasks,
            priority=priority,
        )
        for job, tenant, tasks, cpu, s, min_tasks, priority in WORKLOAD
    ]
    options = SimOptions(backfill=backfill) if backfill else None  # type: ignore[arg-type]
    return simulate(
        Cluster.build(RESOURCES, _machines()), jobs, policy, seed=0, users=USERS, options=options
    )


def _key(log: RunLog) -> list[tuple[object, ...]]:
    return sorted((a.start, a.job, a.task, a.machine, a.finish, a.killed) for a in log.attempts)


# Without EASY backfilling: these live jobs carry no estimate, so reservations, which count
# on estimates, are the simulator's only with them (tests/test_live_backfill.py).
@pytest.mark.parametrize("backfill", [None])
@pytest.mark.parametrize("policy", ["fifo", "drf", "tsf", "hdrf", "fair", "choosy"])
def test_a_live_gang_workload_decides_as_the_simulator(policy: str, backfill: str | None) -> None:
    live, fake = _live(policy, backfill)
    sim = _simulated(policy, backfill)
    assert _key(live) == _key(sim)
    assert [(j.job, j.first_start, j.finish) for j in live.jobs] == [
        (j.job, j.first_start, j.finish) for j in sim.jobs
    ]
    assert all(j.finish is not None for j in live.jobs)
    # Each gang's first min_tasks launches are one batch, at one time: it never held part
    # of its room while it waited.
    for job, _, _, _, _, min_tasks, _ in WORKLOAD:
        if min_tasks is None:
            continue
        first = [b for b, j, _ in fake.batches if j == job][:min_tasks]
        assert len(first) == min_tasks and len(set(first)) == 1, (job, first)
        starts = sorted(a.start for a in live.attempts if a.job == job)[:min_tasks]
        assert len(set(starts)) == 1


def test_a_gang_waits_whole_while_others_run() -> None:
    live, _ = _live("fifo", None)
    starts = {j.job: j.first_start for j in live.jobs}
    # Alice's job of priority 5 goes before her older one; bob's gang of six starts all its
    # tasks at one time.
    g = sorted(a.start for a in live.attempts if a.job == "g")
    assert g == [g[0]] * 6
    assert starts["b"] == 0.0 and starts["a"] is not None and starts["a"] >= starts["b"]


def test_a_replayed_gang_that_had_started_is_an_ordinary_job() -> None:
    fake = FakeExecutor(RESOURCES, [Machine("n0", np.array([1.0, 8.0]))])
    sched = make_policy("drf", Cluster.build(RESOURCES, fake.nodes()), users=USERS)
    driver = LiveDriver(sched, fake, users=USERS, poll_interval=0.0)
    # Four tasks on one CPU: a gang of four never fits, but one with a task finished had
    # started before the restart, and its other three run one by one.
    driver.submit(
        LiveJob("r", "alice", "r", 4, {"cpu": 1.0}, ("true",), done=frozenset({0}), min_tasks=4)
    )
    driver.submit(LiveJob("w", "bob", "w", 2, {"cpu": 1.0}, ("true",), min_tasks=2))
    for _ in range(20):
        driver.step(math.inf)
    ran = [(spec.job, spec.index) for _, _, spec in fake.launched]
    assert ran == [("r", 1), ("r", 2), ("r", 3)]


# ---------------------------------------------------------------------- service, API, CLI

fastapi = pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from fairshare.service.app import create_app  # noqa: E402
from fairshare.service.core import LiveService  # noqa: E402

JOB = {"name": "j", "tasks": 3, "demand": {"cpu": 1}, "command": ["true"]}


class _Api:
    def __init__(self, db: Path) -> None:
        self.store = Store(db)
        self.fake = FakeExecutor(RESOURCES, _machines(), duration=lambda s: 5.0)
        policy = make_policy("drf", Cluster.build(RESOURCES, self.fake.nodes()), users=USERS)
        driver = LiveDriver(
            policy, self.fake, users=USERS, journal=StoreJournal(self.store), poll_interval=0
        )
        self.service = LiveService(self.store, driver, policy="drf", users=USERS)
        self.client = TestClient(create_app(self.service))
        self.alice = {"Authorization": f"Bearer {self.store.add_token('alice')}"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[_Api]:
    made = _Api(tmp_path / "db")
    with made.client:
        yield made


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({**JOB, "min_tasks": 0}, "min_tasks"),
        ({**JOB, "min_tasks": 4}, "min_tasks"),
        ({**JOB, "min_tasks": "2"}, "min_tasks"),
        ({**JOB, "gang": True, "min_tasks": 2}, "min_tasks"),
        ({**JOB, "gang": "yes"}, "gang"),
        ({**JOB, "priority": MAX_PRIORITY + 1}, "priority"),
        ({**JOB, "priority": -MAX_PRIORITY - 1}, "priority"),
        ({**JOB, "priority": 1.5}, "priority"),
    ],
)
def test_bad_gang_and_priority_fields_are_422_with_the_field_path(
    api: _Api, body: object, where: str
) -> None:
    answer = api.client.post("/v1/jobs", json=body, headers=api.alice)
    assert answer.status_code == 422
    assert answer.json()["error"].startswith(f"{where}: "), answer.json()
    assert api.store.jobs(None) == []


def test_a_gang_with_a_priority_is_stored_shown_and_launched_whole(api: _Api) -> None:
    answer = api.client.post(
        "/v1/jobs", json={**JOB, "tasks": 8, "gang": True, "priority": 7}, headers=api.alice
    )
    assert answer.status_code == 201, answer.json()
    job_id = answer.json()["id"]
    shown = api.client.get(f"/v1/jobs/{job_id}", headers=api.alice).json()
    assert (shown["min_tasks"], shown["priority"]) == (8, 7)
    other = api.client.post("/v1/jobs", json={**JOB, "min_tasks": 2}, headers=api.alice)
    assert (
        api.client.get(f"/v1/jobs/{other.json()['id']}", headers=api.alice).json()["min_tasks"] == 2
    )
    api.service.driver.step(0.0)
    # The gang of eight takes the two 4-CPU nodes at once; the other job waits.
    launched = [spec.job for _, _, spec in api.fake.launched]
    assert launched == [job_id] * 8
    (recovered, _) = api.store.recover()
    assert (recovered.min_tasks, recovered.priority) == (8, 7)


def test_a_schema_1_database_is_upgraded_in_place(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old = store_module._SCHEMA.replace(
        "    min_tasks INTEGER,\n    priority INTEGER NOT NULL DEFAULT 0,\n    estimate REAL,\n", ""
    )
    assert old != store_module._SCHEMA
    with sqlite3.connect(db) as conn:
        conn.executescript(old)
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema', '1')")
        conn.execute(
            "INSERT INTO jobs (id, tenant, name, tasks, demand, command, max_retries, state, "
            "submitted) VALUES ('x', 'alice', 'x', 2, '{\"cpu\": 1}', '[\"true\"]', 3, "
            "'pending', 0)"
        )
        conn.execute("INSERT INTO tasks (job, idx, state) VALUES ('x', 0, 'pending')")
    store = Store(db)
    row = store.job("x")
    assert row is not None and (row.min_tasks, row.priority, row.estimate) == (None, 0, None)
    # Upgraded through version 2 to the current one (tests/test_live_backfill.py: from 2).
    assert store.connection().execute("SELECT value FROM meta").fetchone() == ("4",)
    Store(db)  # opened again: already current
