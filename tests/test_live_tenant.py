"""What tenants need from the live service (issue 31 item 7, SPEC section 6): their tasks'
output (``GET /v1/jobs/{id}/logs``, ``fairshare logs``), a job that fits on no node refused at
submit, ``cancel`` saying what it did, a ``cancelled`` column in ``fairshare jobs``, a memory
cap per task, and the decayed usage (``--usage-half-life``) surviving a restart. Over the fake
executor (outputs kept in memory), through HTTP and the installed executable."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402

from fairshare.backends import FakeExecutor, LiveDriver, TaskSpec  # noqa: E402
from fairshare.backends.ray_task import read_output, run_command  # noqa: E402
from fairshare.cluster import Cluster, Machine  # noqa: E402
from fairshare.policies import PolicyOptions, make_policy  # noqa: E402
from fairshare.service.app import create_app  # noqa: E402
from fairshare.service.core import JobRequest, LiveService  # noqa: E402
from fairshare.service.journal import StoreJournal  # noqa: E402
from fairshare.service.server import Stopped, listen  # noqa: E402
from fairshare.service.store import Store  # noqa: E402
from fairshare.workload.model import User  # noqa: E402

from conftest import assert_rejected, run_fairshare  # noqa: E402

RESOURCES = ("cpu", "mem")
USERS = [User("alice", np.array([1.0, 1.0])), User("bob", np.array([1.0, 1.0]))]


def _output(spec: TaskSpec) -> tuple[bytes, bytes]:
    return (
        f"task {spec.index} attempt {spec.attempt}\n".encode(),
        f"warning from {spec.index}\n".encode(),
    )


def _service(
    db: Path,
    machines: list[Machine],
    *,
    duration: float = 5.0,
    half_life: float | None = None,
) -> LiveService:
    store = Store(db)
    fake = FakeExecutor(RESOURCES, machines, duration=lambda s: duration, output=_output)
    policy = make_policy(
        "drf",
        Cluster.build(RESOURCES, fake.nodes()),
        users=USERS,
        options=PolicyOptions(usage_half_life=half_life),
    )
    driver = LiveDriver(policy, fake, users=USERS, journal=StoreJournal(store), poll_interval=0)
    return LiveService(store, driver, policy="drf", users=USERS)


class _Api:
    def __init__(self, db: Path, machines: list[Machine] | None = None) -> None:
        self.service = _service(db, machines or [Machine("n0", np.array([2.0, 4.0]))])
        store = self.service.store
        self.client = TestClient(create_app(self.service))
        self.alice = {"Authorization": f"Bearer {store.add_token('alice')}"}
        self.bob = {"Authorization": f"Bearer {store.add_token('bob')}"}

    def submit(self, tasks: int = 3, demand: dict[str, float] | None = None) -> str:
        body = {"name": "j", "tasks": tasks, "demand": demand or {"cpu": 1}, "command": ["x"]}
        answer = self.client.post("/v1/jobs", json=body, headers=self.alice)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["id"])


@pytest.fixture
def api(tmp_path: Path) -> Iterator[_Api]:
    made = _Api(tmp_path / "db")
    with made.client:
        yield made


# ---------------------------------------------------------------------- logs over HTTP


def test_a_tasks_output_is_read_from_the_node_that_ran_it(api: _Api) -> None:
    job = api.submit()
    api.service.driver.step(0.0)  # tasks 0 and 1 run on n0 (2 CPUs); task 2 waits
    answer = api.client.get(f"/v1/jobs/{job}/logs?task=1", headers=api.alice)
    assert answer.status_code == 200
    assert answer.content == b"task 1 attempt 0\n"
    assert answer.headers["fairshare-attempt"] == "0"
    assert answer.headers["fairshare-node"] == "n0"
    assert answer.headers["fairshare-next-offset"] == str(len(b"task 1 attempt 0\n"))
    assert answer.headers["fairshare-ended"] == "false"
    err = api.client.get(f"/v1/jobs/{job}/logs?task=0&stream=stderr", headers=api.alice)
    assert err.content == b"warning from 0\n"
    part = api.client.get(f"/v1/jobs/{job}/logs?task=1&offset=5&limit=1", headers=api.alice)
    assert part.content == b"1" and part.headers["fairshare-next-offset"] == "6"
    # Task 2 has not run: nothing to read yet.
    waiting = api.client.get(f"/v1/jobs/{job}/logs?task=2", headers=api.alice)
    assert waiting.status_code == 404
    assert waiting.json()["error"] == f"task 2 of job '{job}' has not run any attempt yet"
    out_of_job = api.client.get(f"/v1/jobs/{job}/logs?task=3", headers=api.alice)
    assert out_of_job.status_code == 422
    assert out_of_job.json()["error"] == "task: must be a task index from 0 to 2, got 3"
    while api.service.driver.active():
        api.service.driver.step(10.0)
    done = api.client.get(f"/v1/jobs/{job}/logs?task=2", headers=api.alice)
    assert done.content == b"task 2 attempt 0\n" and done.headers["fairshare-ended"] == "true"


def test_another_tenants_logs_are_not_found(api: _Api) -> None:
    job = api.submit()
    api.service.driver.step(0.0)
    answer = api.client.get(f"/v1/jobs/{job}/logs?task=0", headers=api.bob)
    assert answer.status_code == 404
    assert answer.json()["error"] == f"no job '{job}'"
    assert b"task 0" not in answer.content


def test_each_attempts_node_is_kept_and_an_attempt_can_be_chosen(tmp_path: Path) -> None:
    made = _Api(tmp_path / "db")
    fake = made.service.driver.executor
    assert isinstance(fake, FakeExecutor)
    fake.failure = lambda spec: "exit code 1" if spec.attempt == 0 else None
    job = made.submit(tasks=1)
    made.service.driver.step(0.0)
    made.service.driver.step(10.0)  # attempt 0 fails; attempt 1 launches
    assert made.service.store.attempt(job, 0, None) == (1, "n0", "running")
    first = made.client.get(f"/v1/jobs/{job}/logs?task=0&attempt=0", headers=made.alice)
    assert first.content == b"task 0 attempt 0\n"
    assert first.headers["fairshare-ended"] == "true"
    latest = made.client.get(f"/v1/jobs/{job}/logs?task=0", headers=made.alice)
    assert latest.content == b"task 0 attempt 1\n"
    assert latest.headers["fairshare-ended"] == "false"


def test_a_sandboxed_tasks_files_are_read_without_following_links(tmp_path: Path) -> None:
    """The reader (a Ray task on the node, as root on a real cluster) opens what the task's
    user owns: a link it leaves in place of its output must not reveal another file."""
    root = tmp_path / "tasks"
    sandbox = {"mode": "same", "root": str(root), "tenant": "alice", "key": "j:0:0"}
    code, _ = run_command([sys.executable, "-c", "print('hello')"], {}, sandbox)
    assert code == 0
    assert read_output({"root": str(root)}, "alice", "j:0:0", "out", 0, 100) == b"hello\n"
    secret = tmp_path / "secret"
    secret.write_text("the service's token")
    out = root / "alice" / "logs" / "j.0.0.out"
    out.unlink()
    out.symlink_to(secret)
    assert read_output({"root": str(root)}, "alice", "j:0:0", "out", 0, 100) is None
    (root / "bob").mkdir()
    (root / "bob" / "logs").symlink_to(root / "alice" / "logs")
    assert read_output({"root": str(root)}, "bob", "j:0:0", "err", 0, 100) is None


def test_an_attempts_empty_output_files_are_removed(tmp_path: Path) -> None:
    """Two files per attempt, most of them empty, filled a node's inodes (20,000 files per
    10,000 jobs of the load test); now an attempt's empty stream leaves no file, read as
    empty, and one with output keeps its file."""
    root = tmp_path / "tasks"
    sandbox = {"mode": "same", "root": str(root), "tenant": "alice"}
    assert run_command(["true"], {}, {**sandbox, "key": "j:0:0"}) == (0, "")
    assert run_command(["echo", "hi"], {}, {**sandbox, "key": "j:1:0"}) == (0, "")
    assert sorted(p.name for p in (root / "alice" / "logs").iterdir()) == ["j.1.0.out"]
    assert read_output({"root": str(root)}, "alice", "j:0:0", "err", 0, 100) == b""
    assert read_output({"root": str(root)}, "alice", "j:1:0", "out", 0, 100) == b"hi\n"
    assert read_output({"root": str(root)}, "bob", "j:1:0", "out", 0, 100) is None


# ---------------------------------------------------------------------- unfit demands


def test_a_job_that_fits_on_no_node_is_refused_naming_the_resource(api: _Api) -> None:
    body = {"name": "big", "tasks": 1, "demand": {"cpu": 3, "mem": 1}, "command": ["x"]}
    answer = api.client.post("/v1/jobs", json=body, headers=api.alice)
    assert answer.status_code == 422
    assert answer.json()["error"] == (
        "demand.cpu: 3 is more than any node has: the largest has 2 (a task runs on one "
        "node; 1 node now)"
    )
    assert api.service.store.jobs(None) == []


def test_a_demand_no_single_node_holds_is_refused(tmp_path: Path) -> None:
    made = _Api(
        tmp_path / "db",
        [Machine("cpus", np.array([8.0, 1.0])), Machine("mems", np.array([1.0, 8.0]))],
    )
    body = {"name": "big", "tasks": 1, "demand": {"cpu": 4, "mem": 4}, "command": ["x"]}
    answer = made.client.post("/v1/jobs", json=body, headers=made.alice)
    assert answer.status_code == 422
    assert answer.json()["error"] == (
        "demand: no node has cpu 4, mem 4 together (a task runs on one node)"
    )
    assert made.submit(demand={"cpu": 8, "mem": 1})  # the largest node, exactly


# ---------------------------------------------------------------------- cancel


def test_cancel_says_how_many_tasks_it_stopped_and_dropped(api: _Api) -> None:
    job = api.submit(tasks=5)
    api.service.driver.step(0.0)  # 2 run, 3 wait
    answer = api.client.post(f"/v1/jobs/{job}/cancel", headers=api.alice)
    assert answer.status_code == 200
    assert answer.json() == {
        "id": job,
        "state": "cancelled",
        "cancelled": True,
        "stopped": 2,
        "dropped": 3,
        "message": f"cancelled {job}: 2 running tasks stopped, 3 pending tasks dropped",
    }
    again = api.client.post(f"/v1/jobs/{job}/cancel", headers=api.alice).json()
    assert again["message"] == f"{job} had already ended (cancelled): nothing to cancel"
    assert api.client.post(f"/v1/jobs/{job}/cancel", headers=api.bob).status_code == 404


# ---------------------------------------------------------------------- usage over time


def test_the_decayed_usage_survives_a_restart(tmp_path: Path) -> None:
    """alice runs 2 CPUs of 2 for 100 s (share 1) under a 100 s half-life; the service
    stops and starts again on the same database: her usage goes on from what it was
    (decayed by the time it was down), and bob, with none, is served first."""
    db = tmp_path / "db"
    machines = [Machine("n0", np.array([2.0, 4.0]))]
    first = _service(db, machines, duration=100.0, half_life=100.0)
    alice = first.store.caller(first.store.add_token("alice"))
    bob = first.store.caller(first.store.add_token("bob"))
    assert alice is not None and bob is not None

    first.submit(alice, JobRequest("a", 2, {"cpu": 1.0}, ["x"]))
    while first.driver.active():
        first.driver.step(1000.0)
    usage = first.driver.policy.ledger.usage
    assert usage is not None
    before = usage.usage(0, first.driver.now())[0]
    # Share 1 for one half-life (the job ends at 100 s): h/ln2 * (1 - 2**-1).
    assert first.driver.now() == 100.0
    assert before == pytest.approx(100 / np.log(2) * 0.5, rel=1e-9)
    first.save_usage()
    first.store.close()

    second = _service(db, machines, duration=100.0, half_life=100.0)
    second.recover()
    again = second.driver.policy.ledger.usage
    assert again is not None
    # Restored at once (the wall clock moved by far less than the half-life).
    assert again.usage(0, second.driver.now())[0] == pytest.approx(before, rel=1e-3)
    assert again.usage(1, second.driver.now())[0] == 0.0
    # The usage decides: one CPU task of each, alice submitted first, one slot of 1 CPU.
    second.submit(alice, JobRequest("a2", 1, {"cpu": 2.0}, ["x"]))
    second.submit(bob, JobRequest("b2", 1, {"cpu": 2.0}, ["x"]))
    second.driver.step(0.0)
    running = {row.name: row.tasks["running"] for row in second.store.jobs(None)}
    assert running["b2"] == 1 and running["a2"] == 0


def test_without_a_half_life_nothing_is_saved(tmp_path: Path) -> None:
    service = _service(tmp_path / "db", [Machine("n0", np.array([2.0, 4.0]))])
    service.save_usage()
    assert service.store.meta("usage") is None


# ---------------------------------------------------------------------- memory cap


def test_a_tasks_memory_demand_caps_its_address_space(tmp_path: Path) -> None:
    """Demand ``mem`` is enforced in the sandbox (RLIMIT_AS): a task demanding 0.25 GiB
    cannot allocate 1 GiB; without a cap it can."""
    grab = [sys.executable, "-c", "b = bytearray(1 << 30); print(len(b))"]
    sandbox = {"mode": "same", "root": str(tmp_path / "t"), "tenant": "alice"}
    capped = run_command(grab, {}, {**sandbox, "key": "j:0:0", "memory": 1 << 28})
    assert capped[0] == 1 and capped[1].endswith("MemoryError")
    assert capped[1].startswith(
        "out of memory: the task may map at most 256 MiB (its demand mem, RLIMIT_AS): "
    )
    free = run_command(grab, {}, {**sandbox, "key": "j:0:1"})
    assert free == (0, "")


# ---------------------------------------------------------------------- shutdown line


def test_the_shutdown_line_says_what_was_left_and_written() -> None:
    assert Stopped(4, 2).line(["o/summary.json", "o/jobs.csv"]) == (
        "fairshare serve: stopped: 4 jobs left pending or running (resumed on restart), "
        "2 running tasks stopped, wrote o/summary.json, o/jobs.csv"
    )
    assert (
        Stopped(1, 1)
        .line([])
        .endswith(
            "1 job left pending or running (resumed on "
            "restart), 1 running task stopped, no files written"
        )
    )


# ---------------------------------------------------------------------- the executable


class _Running:
    """The service over the fake executor, served by uvicorn, for the ``fairshare``
    executable to talk to."""

    def __init__(self, db: Path, duration: float) -> None:
        self.service = _service(db, [Machine("n0", np.array([2.0, 4.0]))], duration=duration)
        self.root = db.parent
        self.alice = self.service.store.add_token("alice")
        self.bob = self.service.store.add_token("bob")
        sock = listen("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(create_app(self.service), log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True),
            threading.Thread(target=self._loop, daemon=True),
        ]
        self.go = threading.Event()
        for thread in self.threads:
            thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)

    def _loop(self) -> None:
        # The fake's clock moves only when the driver steps: it steps once `go` is set.
        self.go.wait()
        self.service.run(self.stop, 0.01)

    def close(self) -> None:
        self.server.should_exit = True
        self.go.set()
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def run(self, *args: str, token: str | None = None) -> object:
        # A token file, as a user should pass it (--token prints a warning: visible in ps).
        chosen = token or self.alice
        path = self.root / f"token-{'bob' if chosen == self.bob else 'alice'}"
        path.write_text(chosen + "\n")
        return run_fairshare(args[0], "--server", self.url, "--token-file", str(path), *args[1:])


@pytest.fixture
def live(tmp_path: Path) -> Iterator[_Running]:
    running = _Running(tmp_path / "db", duration=30.0)
    yield running
    running.close()


def test_fairshare_logs_prints_a_tasks_output_and_follows_it(live: _Running) -> None:
    done = live.run("submit", "--name", "j", "--tasks", "3", "--demand", "cpu=1", "--", "x")
    job = done.stdout.strip()  # type: ignore[attr-defined]
    live.service.driver.step(0.0)
    out = live.run("logs", job, "--task", "1")
    assert (out.returncode, out.stdout) == (0, "task 1 attempt 0\n")  # type: ignore[attr-defined]
    err = live.run("logs", job, "--stderr")
    assert err.stdout == "warning from 0\n"  # type: ignore[attr-defined]
    line = assert_rejected(live.run("logs", job, token=live.bob))  # type: ignore[arg-type]
    assert line == f"error: {live.url}: HTTP 404: no job '{job}'"
    # --follow returns once the attempt ends (the driver's loop runs from now on).
    live.go.set()
    followed = live.run("logs", job, "--task", "0", "--follow")
    assert followed.returncode == 0  # type: ignore[attr-defined]
    assert followed.stdout == "task 0 attempt 0\n"  # type: ignore[attr-defined]
    row = live.service.store.job(job)
    assert row is not None and row.tasks["finished"] >= 1


def test_fairshare_cancel_prints_what_it_did_and_jobs_shows_cancelled(
    live: _Running,
) -> None:
    done = live.run("submit", "--name", "j", "--tasks", "5", "--demand", "cpu=1", "--", "x")
    job = done.stdout.strip()  # type: ignore[attr-defined]
    live.service.driver.step(0.0)
    cancelled = live.run("cancel", job)
    assert cancelled.returncode == 0, cancelled.stderr  # type: ignore[attr-defined]
    assert cancelled.stdout == (  # type: ignore[attr-defined]
        f"cancelled {job}: 2 running tasks stopped, 3 pending tasks dropped\n"
    )
    table = live.run("jobs").stdout  # type: ignore[attr-defined]
    # The header's last column (cut to the terminal's width by rich when narrow).
    header = next(line for line in table.splitlines() if line.startswith("┃ id"))
    assert header.split("┃")[-2].strip().rstrip("…") in ("cancelled", "cance", "canc")
    row = next(line for line in table.splitlines() if job in line)
    assert [cell.strip() for cell in row.split("│")[-6:-1]] == ["0", "0", "0", "0", "5"]
    doc = json.loads(live.run("jobs", "--json").stdout)  # type: ignore[attr-defined]
    assert doc["jobs"][0]["tasks"]["cancelled"] == 5


def test_fairshare_submit_of_an_unfit_job_is_one_error_line(live: _Running) -> None:
    done = live.run("submit", "--name", "j", "--tasks", "1", "--demand", "mem=16", "--", "x")
    line = assert_rejected(done)  # type: ignore[arg-type]
    assert line == (
        f"error: {live.url}: HTTP 422: demand.mem: 16 is more than any node has: the largest "
        "has 4 (a task runs on one node; 1 node now)"
    )
