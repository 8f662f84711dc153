"""The live service's commands through the installed executable (SPEC section 6): ``tenant
add``, and ``submit``, ``jobs``, ``cancel`` and ``shares`` against a service on this machine
(the HTTP API over the fake executor, served by uvicorn in a thread); refusals are one
``error:`` line with exit 2."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")

from fairshare.backends import FakeExecutor, LiveDriver  # noqa: E402
from fairshare.cluster import Cluster, Machine  # noqa: E402
from fairshare.policies import make_policy  # noqa: E402
from fairshare.service.app import create_app  # noqa: E402
from fairshare.service.core import LiveService  # noqa: E402
from fairshare.service.journal import StoreJournal  # noqa: E402
from fairshare.service.server import listen  # noqa: E402
from fairshare.service.store import Store, hash_token  # noqa: E402
from fairshare.workload.model import User  # noqa: E402

from conftest import assert_rejected, run_fairshare  # noqa: E402

USERS = [User("alice", np.array([1.0, 1.0])), User("bob", np.array([1.0, 1.0]))]


class _Running:
    def __init__(self, db: Path) -> None:
        self.folder = db.parent
        store = Store(db)
        fake = FakeExecutor(
            ("cpu", "mem"), [Machine("n0", np.array([2.0, 4.0]))], duration=lambda s: 1e6
        )
        policy = make_policy("drf", Cluster.build(("cpu", "mem"), fake.nodes()), users=USERS)
        driver = LiveDriver(policy, fake, users=USERS, journal=StoreJournal(store), poll_interval=0)
        self.service = LiveService(store, driver, policy="drf", users=USERS)
        self.alice = store.add_token("alice")
        self.bob = store.add_token("bob")
        sock = listen("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(create_app(self.service), log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True),
            threading.Thread(target=self.service.run, args=(self.stop, 0.01), daemon=True),
        ]
        for thread in self.threads:
            thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)

    def close(self) -> None:
        self.server.should_exit = True
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def run(self, *args: str, token: str | None = None) -> object:
        auth: list[str] = []
        if token is not None:
            # A file, as SPEC section 6 asks (--token warns that ps shows it).
            path = self.folder / f"token-{hash_token(token)[:12]}"
            path.write_text(token + "\n")
            auth = ["--token-file", str(path)]
        # The options go before the task's command (everything after ``--``).
        return run_fairshare(args[0], "--server", self.url, *auth, *args[1:])


@pytest.fixture
def live(tmp_path: Path) -> Iterator[_Running]:
    running = _Running(tmp_path / "db")
    yield running
    running.close()


def test_submit_jobs_shares_and_cancel(live: _Running) -> None:
    done = live.run(
        "submit", "--name", "sleepy", "--tasks", "3", "--demand", "cpu=1,mem=0.5",
        "--", "sleep", "--flag-for-the-task", "9",
        token=live.alice,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    job_id = done.stdout.strip()  # type: ignore[attr-defined]
    assert len(job_id) == 16
    row = live.service.store.job(job_id)
    assert row is not None
    assert row.command == ("sleep", "--flag-for-the-task", "9")
    assert dict(row.demand) == {"cpu": 1.0, "mem": 0.5}
    listed = live.run("jobs", "--json", token=live.alice)
    doc = json.loads(listed.stdout)  # type: ignore[attr-defined]
    assert [j["id"] for j in doc["jobs"]] == [job_id]
    table = live.run("jobs", token=live.alice)
    assert job_id in table.stdout  # type: ignore[attr-defined]
    assert json.loads(live.run("jobs", "--json", token=live.bob).stdout) == {"jobs": []}  # type: ignore[attr-defined]
    shares = json.loads(live.run("shares", "--json", token=live.bob).stdout)  # type: ignore[attr-defined]
    assert shares["policy"] == "drf" and set(shares["users"]) == {"alice", "bob"}
    line = assert_rejected(live.run("cancel", job_id, token=live.bob))  # type: ignore[arg-type]
    assert line == f"error: {live.url}: HTTP 404: no job '{job_id}'"
    assert live.run("cancel", job_id, token=live.alice).returncode == 0  # type: ignore[attr-defined]
    row = live.service.store.job(job_id)
    assert row is not None and row.state == "cancelled"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--demand", "gpu=1"], "HTTP 422: demand.gpu: unknown resource 'gpu'"),
        (["--demand", "cpu"], "error: command line: --demand: expected RESOURCE=AMOUNT"),
        (["--demand", "cpu=1,cpu=2"], "error: command line: --demand: 'cpu' is given twice"),
        (["--demand", "cpu=1", "--constraint", "rack =="], "HTTP 422: constraint: "),
    ],
)
def test_a_refused_submission_is_one_error_line(
    live: _Running, args: list[str], expected: str
) -> None:
    line = assert_rejected(
        live.run("submit", "--name", "j", "--tasks", "1", *args, "--", "true", token=live.alice)  # type: ignore[arg-type]
    )
    assert expected in line
    assert live.service.store.jobs(None) == []


def test_a_missing_or_wrong_token(live: _Running) -> None:
    line = assert_rejected(live.run("jobs"))  # type: ignore[arg-type]
    assert line == (
        "error: command line: --token-file: missing: pass --token-file FILE or set "
        "FAIRSHARE_TOKEN (or FAIRSHARE_TOKEN_FILE)"
    )
    line = assert_rejected(live.run("jobs", token="fs_wrong"))  # type: ignore[arg-type]
    assert line == f"error: {live.url}: HTTP 401: missing or invalid bearer token"


def test_an_unreachable_service_is_one_error_line(live: _Running) -> None:
    done = live.run("shares", "--server", "http://127.0.0.1:9", token="t")
    assert "error: http://127.0.0.1:9: connection: cannot reach" in assert_rejected(done)


def test_tenant_add_prints_a_token_and_stores_its_hash(tmp_path: Path) -> None:
    db = tmp_path / "db"
    done = run_fairshare("tenant", "add", "alice", "--db", str(db))
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert done.stdout == token + "\n" and token.startswith("fs_")
    store = Store(db)
    caller = store.caller(token)
    assert caller is not None and (caller.tenant, caller.admin) == ("alice", False)
    admin = run_fairshare("tenant", "add", "admin", "--admin", "--db", str(db)).stdout.strip()
    caller = store.caller(admin)
    assert caller is not None and caller.admin
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert token.encode() not in raw and hash_token(token).encode() in raw


def test_tenant_add_checks_the_scenario_and_the_database(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("users:\n  - {name: alice}\n  - {name: bob}\n")
    line = assert_rejected(
        run_fairshare(
            "tenant", "add", "carol", "--db", str(tmp_path / "db"), "--scenario", str(scenario)
        )
    )
    assert line == f"error: {scenario}: users: 'carol' is not a user; users: alice, bob"
    not_db = tmp_path / "not-a-db"
    not_db.write_text("hello " * 1000)
    line = assert_rejected(run_fairshare("tenant", "add", "alice", "--db", str(not_db)))
    assert line.startswith(f"error: {not_db}: --db: ")


def test_serve_refuses_an_unknown_policy(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("users:\n  - {name: alice}\n")
    line = assert_rejected(
        run_fairshare("serve", str(scenario), "--policy", "lottery", "--db", str(tmp_path / "db"))
    )
    assert line.startswith(f"error: {scenario}: --policy: unknown online policy 'lottery'")
