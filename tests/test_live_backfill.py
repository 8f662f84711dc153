"""EASY backfilling live (issue 18): a job's ``estimate`` reaches the policy, so that a live
run with ``backfill="easy"`` makes exactly the simulator's decisions for the same jobs (their
durations equal to their estimates); ``estimate`` through the HTTP API (422 with the field
path on bad values), the store (schema 3, a version-2 database upgraded in place, recovered
after a restart), the Python client and ``fairshare submit --estimate``."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fairshare.backends import FakeExecutor, LiveDriver, LiveJob
from fairshare.cluster import Cluster, Machine
from fairshare.policies import PolicyOptions, make_policy
from fairshare.runlog import RunLog
from fairshare.service import store as store_module
from fairshare.service.store import Store
from fairshare.sim import simulate
from fairshare.sim.options import SimOptions
from fairshare.workload.model import MAX_SECONDS, FixedDuration, Job, User

RESOURCES = ("cpu", "mem")
USERS = [User(name, np.array([1.0, 1.0])) for name in ("alice", "bob", "carol")]
# (id, tenant, submit, tasks, cpu, seconds, min_tasks): a long job holds half the cluster
# from time 0; at time 1 a gang of the whole cluster arrives (it cannot start before the long
# job ends, at 10), then short jobs. With EASY the gang is the head, reserved for time 10:
# "short" ends before then and runs at once, "late" would not and waits for the gang.
# Without backfilling "late" takes the room and the gang waits until 21.
WORKLOAD = [
    ("long", "alice", 0.0, 4, 1.0, 10.0, None),
    ("gang", "bob", 1.0, 8, 1.0, 2.0, 8),
    ("short", "carol", 1.0, 2, 1.0, 3.0, None),
    ("late", "carol", 1.0, 2, 1.0, 20.0, None),
    ("pair", "alice", 1.0, 2, 2.0, 1.0, 2),
]


def _machines() -> list[Machine]:
    return [Machine(f"n{i}", np.array([4.0, 8.0])) for i in range(2)]


def _live(policy: str, backfill: bool, *, estimates: bool = True) -> RunLog:
    seconds = {job: s for job, _, _, _, _, s, _ in WORKLOAD}
    fake = FakeExecutor(RESOURCES, _machines(), duration=lambda spec: seconds[spec.job])
    options = PolicyOptions(backfill="easy") if backfill else None
    sched = make_policy(
        policy, Cluster.build(RESOURCES, fake.nodes()), users=USERS, options=options
    )
    driver = LiveDriver(sched, fake, users=USERS, poll_interval=0.0)
    now = 0.0
    for job, tenant, submit, tasks, cpu, s, min_tasks in WORKLOAD:
        if submit > now:
            # The fake's clock moves by the wait when nothing ends before.
            driver.step(submit - now)
            now = submit
        driver.submit(
            LiveJob(
                job,
                tenant,
                job,
                tasks,
                {"cpu": cpu, "mem": 1.0},
                ("true",),
                min_tasks=min_tasks,
                estimate=s if estimates else None,
            )
        )
    for _ in range(1000):
        driver.step(math.inf)
        if fake.idle() and driver.running() == 0 and not driver.active():
            break
    return driver.log(policy, 0.0)


def _simulated(policy: str, backfill: bool) -> RunLog:
    jobs = [
        Job(
            job,
            submit,
            tenant,
            np.array([cpu, 1.0]),
            tasks,
            FixedDuration(s),
            min_tasks=min_tasks,
            estimate=s,
        )
        for job, tenant, submit, tasks, cpu, s, min_tasks in WORKLOAD
    ]
    options = SimOptions(backfill="easy") if backfill else None
    return simulate(
        Cluster.build(RESOURCES, _machines()), jobs, policy, seed=0, users=USERS, options=options
    )


def _key(log: RunLog) -> list[tuple[object, ...]]:
    return sorted((a.start, a.job, a.task, a.machine, a.finish, a.killed) for a in log.attempts)


def _starts(log: RunLog) -> dict[str, float | None]:
    return {j.job: j.first_start for j in log.jobs}


@pytest.mark.parametrize("policy", ["fifo", "drf"])
def test_live_easy_backfilling_decides_as_the_simulator(policy: str) -> None:
    live = _live(policy, True)
    sim = _simulated(policy, True)
    assert _key(live) == _key(sim)
    assert [(j.job, j.first_start, j.finish) for j in live.jobs] == [
        (j.job, j.first_start, j.finish) for j in sim.jobs
    ]
    assert all(j.finish is not None for j in live.jobs)
    starts = _starts(live)
    # The gang starts at its reservation (the long job's end); the short work that ends by
    # then ran before it, the work that would not waited for it.
    assert (starts["gang"], starts["pair"], starts["short"], starts["late"]) == (10, 1, 2, 12)
    # Without backfilling "late" takes the room at once and the gang waits for it.
    plain = _starts(_simulated(policy, False))
    assert (plain["gang"], plain["late"]) == (22, 2)


@pytest.mark.parametrize("policy", ["fifo", "drf"])
def test_without_estimates_the_reservation_counts_on_nothing_ending(policy: str) -> None:
    # The same jobs without estimates: the head gang's reservation never comes, so no work
    # may take the room it would use, and the run differs from the simulator's.
    blind = _live(policy, True, estimates=False)
    assert _key(blind) != _key(_simulated(policy, True))
    starts = _starts(blind)
    assert starts["gang"] is not None and starts["gang"] >= 10
    assert all(starts[job] is not None and starts[job] >= 10 for job in ("short", "late"))  # type: ignore[operator]


# ---------------------------------------------------------------------- service, API, store

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402

from fairshare.service.app import create_app  # noqa: E402
from fairshare.service.core import LiveService  # noqa: E402
from fairshare.service.journal import StoreJournal  # noqa: E402

from conftest import assert_rejected, run_fairshare  # noqa: E402

JOB = {"name": "j", "tasks": 2, "demand": {"cpu": 1}, "command": ["true"]}


class _Api:
    def __init__(self, db: Path) -> None:
        self.store = Store(db)
        self.fake = FakeExecutor(RESOURCES, _machines(), duration=lambda s: 5.0)
        options = PolicyOptions(backfill="easy")
        policy = make_policy(
            "drf", Cluster.build(RESOURCES, self.fake.nodes()), users=USERS, options=options
        )
        self.driver = LiveDriver(
            policy, self.fake, users=USERS, journal=StoreJournal(self.store), poll_interval=0
        )
        self.service = LiveService(self.store, self.driver, policy="drf", users=USERS)
        self.client = TestClient(create_app(self.service))
        self.alice = {"Authorization": f"Bearer {self.store.add_token('alice')}"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[_Api]:
    made = _Api(tmp_path / "db")
    with made.client:
        yield made


@pytest.mark.parametrize(
    ("estimate", "why"),
    [
        (0, "must be a number of seconds > 0"),
        (-1.5, "must be a number of seconds > 0"),
        (MAX_SECONDS * 2, "must be a number of seconds > 0"),
        ("10", "Input should be a valid number"),
        (True, "Input should be a valid number"),
        ([10], "Input should be a valid number"),
    ],
)
def test_a_bad_estimate_is_422_with_the_field_path(api: _Api, estimate: object, why: str) -> None:
    answer = api.client.post("/v1/jobs", json={**JOB, "estimate": estimate}, headers=api.alice)
    assert answer.status_code == 422, answer.json()
    assert answer.json()["error"].startswith(f"estimate: {why}"), answer.json()
    assert api.store.jobs(None) == []


def test_an_estimate_is_stored_shown_recovered_and_reaches_the_policy(api: _Api) -> None:
    answer = api.client.post(
        "/v1/jobs", json={**JOB, "estimate": 90, "gang": True}, headers=api.alice
    )
    assert answer.status_code == 201, answer.json()
    job_id = answer.json()["id"]
    plain = api.client.post("/v1/jobs", json=JOB, headers=api.alice).json()["id"]
    shown = api.client.get(f"/v1/jobs/{job_id}", headers=api.alice).json()
    assert (shown["estimate"], shown["min_tasks"]) == (90.0, 2)
    assert api.client.get(f"/v1/jobs/{plain}", headers=api.alice).json()["estimate"] is None
    recovered = {job.id: job.estimate for job in Store(api.store.path).recover()}
    assert recovered == {job_id: 90.0, plain: None}


def test_a_schema_2_database_is_upgraded_in_place(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old = store_module._SCHEMA.replace("    estimate REAL,\n", "")
    assert old != store_module._SCHEMA
    with sqlite3.connect(db) as conn:
        conn.executescript(old)
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema', '2')")
        conn.execute(
            "INSERT INTO jobs (id, tenant, name, tasks, demand, command, max_retries, min_tasks, "
            "priority, state, submitted) VALUES ('x', 'alice', 'x', 2, '{\"cpu\": 1}', "
            "'[\"true\"]', 3, 2, 4, 'pending', 0)"
        )
        conn.execute("INSERT INTO tasks (job, idx, state) VALUES ('x', 0, 'pending')")
    store = Store(db)
    row = store.job("x")
    assert row is not None and (row.min_tasks, row.priority, row.estimate) == (2, 4, None)
    assert store.connection().execute("SELECT value FROM meta").fetchone() == ("4",)
    assert store.add_job(LiveJob("y", "alice", "y", 1, {"cpu": 1.0}, ("true",), estimate=7.5))
    assert [(j.id, j.estimate) for j in store.recover()] == [("x", None), ("y", 7.5)]
    assert Store(db).job("y").estimate == 7.5  # type: ignore[union-attr]


def test_submit_estimate_and_serve_backfill_through_the_executable(tmp_path: Path) -> None:
    from test_live_cli import _Running  # noqa: PLC0415

    running = _Running(tmp_path / "db")
    try:
        done = running.run(
            "submit",
            "--name",
            "e",
            "--tasks",
            "1",
            "--demand",
            "cpu=1",
            "--estimate",
            "42.5",
            "--",
            "true",
            token=running.alice,
        )
        assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
        job_id = done.stdout.strip()  # type: ignore[attr-defined]
        row = running.service.store.job(job_id)
        assert row is not None and row.estimate == 42.5
        bad = running.run(
            "submit",
            "--name",
            "e",
            "--tasks",
            "1",
            "--demand",
            "cpu=1",
            "--estimate",
            "0",
            "--",
            "true",
            token=running.alice,
        )
        line = assert_rejected(bad)  # type: ignore[arg-type]
        assert line.startswith("error: command line: --estimate: must be a number of seconds > 0")
    finally:
        running.close()
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("users:\n  - {name: alice}\n")
    line = assert_rejected(
        run_fairshare(
            "serve",
            str(scenario),
            "--policy",
            "drf",
            "--db",
            str(tmp_path / "db2"),
            "--backfill",
            "lifo",
        )
    )
    assert line.startswith(f"error: {scenario}: --backfill: expected easy")
