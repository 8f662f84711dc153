"""The live service's state (SPEC section 6, issue items 3 to 5) over HTTP with the fake
executor: every input checked before it is stored, limits checked inside the write
transaction, one service per database (the lease), stale attempts stopped before a task runs
again, durable attempt numbers, storage faults answered 503 and retried, tenants left out of
a new scenario, paging."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from fairshare.backends import FakeExecutor, LiveDriver, LiveJob
from fairshare.cluster import Cluster, Machine
from fairshare.policies import make_policy
from fairshare.service.app import create_app
from fairshare.service.core import Limits, LiveService
from fairshare.service.journal import StoreJournal
from fairshare.service.stale import stop_stale_processes
from fairshare.service.store import LeaseHeld, Store, StoreError
from fairshare.workload.model import User

RESOURCES = ("cpu", "mem")
USERS = [User("alice", np.array([1.0, 1.0])), User("bob", np.array([1.0, 1.0]))]
JOB = {"name": "j", "tasks": 1, "demand": {"cpu": 1}, "command": ["echo", "hi"]}


class _Full:
    """A connection whose writes fail as on a full disk while its store says so."""

    def __init__(self, conn: sqlite3.Connection, store: FaultyStore) -> None:
        self.conn = conn
        self.store = store

    def _check(self, sql: str) -> None:
        if self.store.full and not sql.lstrip().upper().startswith(("SELECT", "PRAGMA")):
            raise sqlite3.OperationalError("database or disk is full")

    def execute(self, sql: str, *args: Any) -> Any:
        self._check(sql)
        return self.conn.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self._check(sql)
        return self.conn.executemany(sql, *args)

    def commit(self) -> None:
        if self.store.full and self.conn.in_transaction:
            raise sqlite3.OperationalError("database or disk is full")
        self.conn.commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


class FaultyStore(Store):
    """The store over a disk that fills up on demand (``full``)."""

    full = False

    def connection(self) -> Any:
        return _Full(super().connection(), self)


class _Api:
    def __init__(
        self,
        db: Path,
        *,
        limits: Limits | None = None,
        faulty: bool = False,
        duration: float = 5.0,
    ) -> None:
        self.store = FaultyStore(db) if faulty else Store(db)
        self.fake = FakeExecutor(
            RESOURCES, [Machine("n0", np.array([2.0, 4.0]))], duration=lambda s: duration
        )
        policy = make_policy("drf", Cluster.build(RESOURCES, self.fake.nodes()), users=USERS)
        self.driver = LiveDriver(
            policy, self.fake, users=USERS, journal=StoreJournal(self.store), poll_interval=0
        )
        self.service = LiveService(
            self.store, self.driver, policy="drf", users=USERS, limits=limits or Limits()
        )
        self.client = TestClient(create_app(self.service))
        self.alice = {"Authorization": f"Bearer {self.store.add_token('alice')}"}
        self.admin = {"Authorization": f"Bearer {self.store.add_token('root', admin=True)}"}

    def count(self) -> int:
        return len(self.store.jobs(None))


@pytest.fixture
def api(tmp_path: Path) -> Iterator[_Api]:
    made = _Api(tmp_path / "db")
    with made.client:
        yield made


def _one_error(answer: Any, status: int) -> str:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert isinstance(error, str) and "\n" not in error
    return str(error)


# ---------------------------------------------------------------------- item 4: inputs


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ('{"name": "j", "tasks": 1, "demand": {"cpu": 1}, "command": ["\\ud800"]}', "command[0]"),
        ('{"name": "\\udc00x", "tasks": 1, "demand": {"cpu": 1}, "command": ["a"]}', "name"),
        (
            '{"name": "j", "tasks": 1, "demand": {"cpu": 1}, "command": ["a"], '
            '"constraint": "rack == \'\\ud83d\'"}',
            "constraint",
        ),
        ('{"name": "j", "tasks": 1, "demand": {"\\ud800": 1}, "command": ["a"]}', "demand.\ufffd"),
    ],
)
def test_a_lone_surrogate_is_422_with_the_field_path(api: _Api, body: str, where: str) -> None:
    answer = api.client.post(
        "/v1/jobs", content=body.encode(), headers={**api.alice, "Content-Type": "application/json"}
    )
    error = _one_error(answer, 422)
    assert error.startswith(f"{where}: must be valid UTF-8 text: a lone surrogate at character ")
    assert api.count() == 0


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"name": "\xff\xfe", "tasks": 1}', "body: is not valid UTF-8 (byte 10)"),
        (b"[" * 100_000 + b"]" * 100_000, "body: nests deeper than 32 levels"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "body: nests deeper than 32 levels"),
        (
            b'{"name": "j", "tasks": ' + b"9" * 4300 + b', "demand": {"cpu": 1}, "command": ["a"]}',
            "body: holds a number of more than 30 digits",
        ),
        (b"{not json", "body: is not JSON (Expecting property name enclosed in double quotes"),
    ],
)
def test_a_body_that_is_not_bounded_json_text_is_422_with_one_error_line(
    tmp_path: Path, body: bytes, what: str
) -> None:
    api = _Api(tmp_path / "db", limits=Limits(max_body_bytes=1 << 20))
    with api.client:
        answer = api.client.post(
            "/v1/jobs", content=body, headers={**api.alice, "Content-Type": "application/json"}
        )
    assert _one_error(answer, 422).startswith(what)
    assert api.count() == 0


@pytest.mark.parametrize(
    ("change", "where", "what"),
    [
        ({"constraint": "a or " * 1000 + "a"}, "constraint", "must be at most 4096 characters"),
        ({"constraint": " or ".join(["a"] * 300)}, "constraint", "must have at most 256 terms"),
        ({"demand": {f"r{i}": 1 for i in range(65)}}, "demand", "names at most 64 resources"),
        ({"name": "n" * 201}, "name", "must be 1 to 200 characters"),
        ({"command": ["x"] * 1025}, "command", "must be an argv list of 1 to 1024"),
        ({"command": ["y" * 16_385]}, "command[0]", "must be at most 16384 characters"),
        ({"tasks": 100_001}, "tasks", "must be from 1 to 100000"),
    ],
)
def test_every_field_is_bounded(api: _Api, change: dict[str, Any], where: str, what: str) -> None:
    api.service.limits = Limits(max_body_bytes=1 << 20)
    answer = api.client.post("/v1/jobs", json={**JOB, **change}, headers=api.alice)
    assert _one_error(answer, 422).startswith(f"{where}: {what}")
    assert api.count() == 0


def test_a_constraint_of_a_megabyte_costs_no_parse(api: _Api) -> None:
    """The issue's 0.96 MB constraint: refused on its length, before the parser runs."""
    api.service.limits = Limits(max_body_bytes=2 << 20)
    body = {**JOB, "constraint": "rack == 'r1' and " * 60_000 + "gpu"}
    answer = api.client.post("/v1/jobs", json=body, headers=api.alice)
    assert _one_error(answer, 422) == (
        f"constraint: must be at most 4096 characters, got {len(body['constraint'])}"
    )


def test_a_stored_job_never_makes_a_listing_fail(api: _Api) -> None:
    """A job an older service stored with a lone surrogate in its command (the issue's
    poisoned job, 201 then 500 for everyone) and bytes that are not UTF-8 in its name and
    constraint: the tenant's and the administrator's listings still answer, each bad
    character shown as U+FFFD."""
    bad = "x\ud800"
    api.store.add_job(LiveJob("old", "alice", "n", 1, {"cpu": 1.0}, (bad, "ok"), "rack"))
    with api.store.transaction() as conn:
        conn.execute(
            "UPDATE jobs SET name = CAST(X'78FF' AS TEXT), "
            "constraint_text = CAST(X'7261636BC3' AS TEXT) WHERE id = 'old'"
        )
    for headers in (api.alice, api.admin):
        answer = api.client.get("/v1/jobs", headers=headers)
        assert answer.status_code == 200
        (job,) = answer.json()["jobs"]
        assert job["name"] == "x\ufffd" and job["command"] == ["x\ufffd", "ok"]
        assert job["constraint"] == "rack\ufffd"
    assert api.client.get("/v1/jobs/old", headers=api.alice).json()["name"] == "x\ufffd"


def test_the_pending_limit_holds_under_80_concurrent_posts(tmp_path: Path) -> None:
    """``--max-pending-jobs 5`` and 80 POSTs at once: exactly 5 accepted (the issue saw
    15 to 21), the rest 429."""
    api = _Api(tmp_path / "db", limits=Limits(max_pending_jobs=5))
    with api.client, ThreadPoolExecutor(max_workers=80) as pool:
        statuses = list(
            pool.map(
                lambda _: api.client.post("/v1/jobs", json=JOB, headers=api.alice).status_code,
                range(80),
            )
        )
    assert sorted(statuses) == [201] * 5 + [429] * 75
    assert api.count() == 5


def test_jobs_are_paged_with_next(api: _Api) -> None:
    ids = [
        api.client.post("/v1/jobs", json={**JOB, "name": f"j{i}"}, headers=api.alice).json()["id"]
        for i in range(7)
    ]
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        query = "/v1/jobs?limit=3" + (f"&after={after}" if after else "")
        page = api.client.get(query, headers=api.alice).json()
        seen += [j["id"] for j in page["jobs"]]
        pages += 1
        after = page["next"]
        if after is None:
            break
        assert after == seen[-1]
    assert seen == ids and pages == 3
    assert len(api.client.get("/v1/jobs", headers=api.alice).json()["jobs"]) == 7
    assert _one_error(api.client.get("/v1/jobs?limit=1001", headers=api.alice), 422).startswith(
        "query.limit: "
    )
    assert _one_error(api.client.get("/v1/jobs?limit=0", headers=api.alice), 422).startswith(
        "query.limit: "
    )
    unknown = api.client.get("/v1/jobs?after=nope", headers=api.alice).json()
    assert unknown == {"jobs": [], "next": None}


# ---------------------------------------------------------------------- item 5: faults


def test_a_failed_write_is_503_and_healthz_unhealthy_until_writes_succeed(
    tmp_path: Path,
) -> None:
    api = _Api(tmp_path / "db", faulty=True)
    store = api.store
    assert isinstance(store, FaultyStore)
    with api.client:
        store.full = True
        answer = api.client.post("/v1/jobs", json=JOB, headers=api.alice)
        assert _one_error(answer, 503) == (
            "the service cannot write its database now: cannot write the database "
            "(database or disk is full); try again later"
        )
        health = api.client.get("/healthz")
        assert health.status_code == 503
        assert health.json()["status"] == "unhealthy"
        assert "database or disk is full" in health.json()["error"]
        assert api.client.get("/v1/jobs", headers=api.alice).status_code == 200  # reads work
        with pytest.raises(StoreError, match="database or disk is full"):
            store.add_token("alice")  # what `tenant add` turns into one error line
        store.full = False
        assert api.client.post("/v1/jobs", json=JOB, headers=api.alice).status_code == 201
        assert api.client.get("/healthz").json() == {"status": "ok", "policy": "drf"}
    assert api.count() == 1


def test_the_scheduler_keeps_its_state_through_a_full_disk_and_catches_up(
    tmp_path: Path,
) -> None:
    """The driver's thread meets a full disk: it does not die, launches nothing it could
    not write, is unhealthy meanwhile, and once writes succeed the database agrees with
    what ran."""
    api = _Api(tmp_path / "db", faulty=True, duration=1e9)
    store = api.store
    assert isinstance(store, FaultyStore)
    stop = threading.Event()
    with api.client:
        job_id = api.client.post("/v1/jobs", json={**JOB, "tasks": 2}, headers=api.alice).json()[
            "id"
        ]
        store.full = True
        thread = threading.Thread(target=api.service.run, args=(stop, 0.01))
        thread.start()
        deadline = time.monotonic() + 30
        while api.service.health() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        assert thread.is_alive()
        assert "scheduler: cannot write the database (database or disk is full)" in str(
            api.service.health()
        )
        assert len(api.fake.running) == 0  # nothing launched that was not written
        assert api.client.get("/healthz").status_code == 503
        store.full = False
        while api.service.health() is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        while len(api.fake.running) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        stop.set()
        thread.join(30)
        assert not thread.is_alive()
        assert len(api.fake.running) == 2
        job = api.client.get(f"/v1/jobs/{job_id}", headers=api.alice).json()
        assert job["state"] == "running" and job["tasks"]["running"] == 2
        assert api.client.get("/healthz").status_code == 200


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only file")
def test_a_read_only_database_file_is_503(tmp_path: Path) -> None:
    api = _Api(tmp_path / "db")
    api.store.close()
    (tmp_path / "db").chmod(0o400)
    with api.client:
        answer = api.client.post("/v1/jobs", json=JOB, headers=api.alice)
        assert "readonly" in _one_error(answer, 503)


def test_a_tenant_left_out_of_the_scenario_has_its_jobs_cancelled_with_a_warning(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db"
    store = Store(db)
    store.add_job(LiveJob("c1", "carol", "c", 1, {"cpu": 1.0}, ("true",)))
    store.add_job(LiveJob("c2", "carol", "c", 1, {"cpu": 1.0}, ("true",)))
    store.add_job(LiveJob("a1", "alice", "a", 1, {"cpu": 1.0}, ("true",)))
    api = _Api(db)
    warnings: list[str] = []
    assert api.service.recover(warn=warnings.append) == 1
    assert warnings == [
        f"warning: {db}: tenant 'carol' is not a user of the scenario: its 2 unfinished jobs "
        "are cancelled"
    ]
    rows = {row.id: row for row in api.store.jobs(None)}
    assert rows["c1"].state == rows["c2"].state == "cancelled"
    assert rows["c1"].error == "its tenant is not in the service's scenario"
    api.driver.step(0.0)
    assert rows["a1"].state == "pending" and api.store.job("a1").state == "running"  # type: ignore[union-attr]


def test_database_files_are_private_and_the_log_checkpointed(tmp_path: Path) -> None:
    db = tmp_path / "db"
    store = Store(db)
    for i in range(50):
        store.add_job(LiveJob(f"j{i}", "alice", "j", 10, {"cpu": 1.0}, ("true",)))
    wal = Path(f"{db}-wal")
    assert wal.stat().st_size > 0
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {
        "db": 0o600,
        "db-wal": 0o600,
        "db-shm": 0o600,
    }
    store.acquire()
    assert Path(f"{db}.lock").stat().st_mode & 0o777 == 0o600
    store.checkpoint()
    assert wal.stat().st_size == 0
    assert len(Store(db).jobs(None)) == 50


def test_a_damaged_database_is_refused_by_its_check(tmp_path: Path) -> None:
    db = tmp_path / "db"
    store = Store(db)
    for i in range(300):
        store.add_job(LiveJob(f"j{i}", "alice", "j" * 100, 5, {"cpu": 1.0}, ("true",)))
    store.checkpoint()
    store.close()
    data = bytearray(db.read_bytes())
    assert len(data) > 5 * 4096
    data[-3 * 4096 :] = b"\x5a" * (3 * 4096)
    db.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="is damaged"):
        Store(db).check()


# ---------------------------------------------------------------------- item 3: the lease


def test_one_service_per_database(tmp_path: Path) -> None:
    db = tmp_path / "db"
    first = Store(db)
    assert first.acquire() is None
    with pytest.raises(LeaseHeld, match=rf"pid {os.getpid()} on \S+, heartbeat 0 s ago"):
        Store(db).acquire()
    first.heartbeat()
    first.release()
    second = Store(db)
    assert second.acquire() is None  # released cleanly: no previous holder to clean after
    second.release()


def test_a_lease_held_by_a_killed_service_is_taken_over(tmp_path: Path) -> None:
    """SIGKILL frees the OS lock: the next service takes the lease and learns whose it was."""
    db = tmp_path / "db"
    Store(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from fairshare.service.store import Store; "
            f"s = Store({str(db)!r}); s.acquire(); print(s.owner, flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        owner = holder.stdout.readline().strip()
        with pytest.raises(LeaseHeld, match=f"pid {holder.pid} on "):
            Store(db).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    store = Store(db)
    previous = store.acquire()
    assert previous is not None and (previous.owner, previous.pid) == (owner, holder.pid)
    assert store.owner != owner


def test_attempt_numbers_are_durable_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "db"
    api = _Api(db)
    job_id = api.client.post("/v1/jobs", json=JOB, headers=api.alice).json()["id"]
    api.driver.step(0.0)
    assert len(api.fake.running) == 1
    attempts = api.store.connection().execute("SELECT attempts FROM tasks").fetchall()
    assert attempts == [(1,)]
    # The service dies; the next one replays the job: attempt 1, never 0 again.
    again = _Api(db)
    launched: list[str] = []
    real = again.fake.launch
    again.fake.launch = lambda spec, machine: (launched.append(spec.key), real(spec, machine))[1]  # type: ignore[method-assign]
    assert again.service.recover() == 1
    again.driver.step(0.0)
    assert launched == [f"{job_id}:0:1"]
    assert again.store.connection().execute("SELECT attempts FROM tasks").fetchall() == [(2,)]


def test_a_previous_services_task_still_running_is_stopped_before_it_runs_again(
    tmp_path: Path,
) -> None:
    """Local mode after a SIGKILL: the old attempt's process (found by the run and attempt
    its environment names, as the database recorded them) is killed before the task is
    pending again; a process of another run is left alone."""
    db = tmp_path / "db"
    old = Store(db)
    old.acquire()
    old.add_job(LiveJob("j1", "alice", "j", 1, {"cpu": 1.0}, ("sleep", "600")))
    journal = StoreJournal(old)
    journal.task_launched("j1", 0, 0, "n0")
    journal.commit()
    env = {
        **os.environ,
        "FAIRSHARE_JOB_ID": "j1",
        "FAIRSHARE_TASK_INDEX": "0",
        "FAIRSHARE_ATTEMPT": "0",
    }
    stale = subprocess.Popen(
        ["sleep", "600"], env={**env, "FAIRSHARE_SERVICE": str(old.owner)}, start_new_session=True
    )
    other = subprocess.Popen(["sleep", "600"], env={**env, "FAIRSHARE_SERVICE": "another-run"})
    try:
        old.release()
        store = Store(db)
        store.acquire()
        (attempt,) = store.stale()
        assert (attempt.job, attempt.index, attempt.attempt, attempt.owner) == (
            "j1",
            0,
            0,
            old.owner,
        )
        api = _Api(db)
        killed: list[int] = []
        assert api.service.recover(stop_stale=lambda a: killed.extend(stop_stale_processes(a))) == 1
        assert killed == [stale.pid]
        assert stale.wait(10) == -signal.SIGKILL
        assert other.poll() is None
        assert api.store.stale() == []
    finally:
        for process in (stale, other):
            if process.poll() is None:
                process.kill()
            process.wait()


def test_sigterm_returns_the_run_while_the_database_cannot_be_written(tmp_path: Path) -> None:
    """The whole service (``server.serve``, uvicorn on this thread) with its database
    failing every write: requests are 503, ``/healthz`` unhealthy, and SIGTERM still ends
    it in order with the run's records (what ``--out`` writes), the lease released."""
    import httpx  # noqa: PLC0415

    from fairshare.policies import PolicyOptions  # noqa: PLC0415
    from fairshare.service import server  # noqa: PLC0415
    from fairshare.workload.loader import parse_scenario  # noqa: PLC0415

    db = tmp_path / "db"
    store = FaultyStore(db)
    token = store.add_token("alice")
    store.acquire()
    fake = FakeExecutor(RESOURCES, [Machine("n0", np.array([2.0, 4.0]))], duration=lambda s: 1e9)
    scenario = parse_scenario(
        {"users": [{"name": "alice", "demand": {"cpu": 1}}]},
        "s.yaml",
        lambda: Cluster.build(RESOURCES, fake.nodes()),
    )
    settings = server.ServeSettings(
        scenario=tmp_path / "s.yaml",
        policy="drf",
        db=db,
        ray="fake",
        host="127.0.0.1",
        port=0,
        options=PolicyOptions(),
        limits=Limits(),
    )
    sock = server.listen("127.0.0.1", 0)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    seen: dict[str, Any] = {}

    def client() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{url}/healthz", timeout=5)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        store.full = True
        auth = {"Authorization": f"Bearer {token}"}
        seen["post"] = httpx.post(f"{url}/v1/jobs", json=JOB, headers=auth, timeout=30)
        seen["health"] = httpx.get(f"{url}/healthz", timeout=30)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=client)
    thread.start()
    try:
        log = server.serve(settings, fake, scenario, sock, store=store)
    finally:
        thread.join(60)
        sock.close()
    assert seen["post"].status_code == 503
    assert seen["health"].status_code == 503
    assert seen["health"].json()["status"] == "unhealthy"
    assert log.policy == "drf" and log.users == ("alice",)
    store.full = False
    assert Store(db).acquire() is not None  # the lock was released: the next one starts
