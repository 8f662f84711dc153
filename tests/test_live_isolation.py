"""Tenants isolated from the service and from each other (issue 31, item 1; docs/live.md,
"Trust model"), on the local Ray instance that ``fairshare serve`` starts itself, marked
``ray``. Needs root (the service makes one OS user per tenant, as an operator's service with
CAP_SETUID would run them).

Each attack the issue reports is a tenant's job here, and fails: reading or writing the
service's database, reading another tenant's directory, reading the service's environment
(a secret set in ``serve``'s own environment), signalling the service, reading the local
Ray instance's files, and ``ray.init(address='auto')``.

And what a task leaves or takes (issue 31's leftovers): a cancelled task's whole process tree
is gone, children that left its session included; a task past its ``mem`` demand is stopped
with the reason.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")
pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from fairshare.service.store import Store  # noqa: E402

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("useradd") is None,
        reason="needs root and useradd (the service makes the tenants' OS users)",
    ),
]

PREFIX = "fstest-"
"""The tenants' task users here (``fstest-alice``, ``fstest-bob``), removed afterwards."""

SECRET = "s3cret-of-the-service-7f2c"
"""A variable in ``serve``'s own environment that no task may see."""

SITE = next(p for p in sys.path if p.endswith("site-packages"))
"""Where Ray is installed (a task imports it from there, as a tenant could)."""


class _Service:
    """``fairshare serve`` (its own local Ray instance) in a subprocess."""

    def __init__(self, base: Path) -> None:
        self.log = base / "serve.log"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "SERVICE_SECRET": SECRET}
        env.pop("RAY_ADDRESS", None)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fairshare",
                "serve",
                str(base / "scenario.yaml"),
                "--policy",
                "drf",
                "--db",
                str(base / "state" / "db"),
                "--num-cpus",
                "2",
                "--port",
                "0",
                "--task-user-prefix",
                PREFIX,
                "--task-dir",
                str(base / "tasks"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stderr is not None
        self.url = ""
        with self.log.open("a") as log:
            for line in self.process.stderr:
                log.write(line)
                found = re.search(r"(http://[\d.]+:\d+)", line)
                if line.startswith("fairshare serve:") and found:
                    self.url = found.group(1)
                    break
        assert self.url, self.log.read_text()

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.stderr is not None
        with self.log.open("a") as log:
            log.write(self.process.stderr.read())
        return self.process.wait(timeout=60)


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[_Service, Path, dict[str, dict[str, str]]]]:
    # Every directory on the way to the database is open to every user (0755): its own
    # mode (0600, set by serve) is what keeps the tasks out.
    base = Path(tempfile.mkdtemp(prefix="fairshare-isolation-"))
    base.chmod(0o755)
    (base / "state").mkdir(mode=0o755)
    (base / "state").chmod(0o755)
    (base / "scenario.yaml").write_text("users:\n  - {name: alice}\n  - {name: bob}\n")
    store = Store(base / "state" / "db")
    tokens = {name: store.add_token(name) for name in ("alice", "bob")}
    store.close()
    auth = {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}
    running = _Service(base)
    try:
        yield running, base, auth
    finally:
        code = running.stop()
        for tenant in ("alice", "bob"):
            subprocess.run(["userdel", PREFIX + tenant], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)
        assert code == 0


def _run(service: Any, tenant: str, *argv: str) -> dict[str, Any]:
    """Submit one task of ``argv`` as ``tenant`` and wait for its job to end."""
    running, _, auth = service
    with httpx.Client(base_url=running.url, timeout=30) as http:
        body = {
            "name": "probe",
            "tasks": 1,
            "demand": {"cpu": 1},
            "command": list(argv),
            "max_retries": 0,
        }
        created = http.post("/v1/jobs", json=body, headers=auth[tenant])
        assert created.status_code == 201, created.text
        job_id = created.json()["id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            job = http.get(f"/v1/jobs/{job_id}", headers=auth[tenant]).json()
            if job["state"] in ("finished", "failed", "cancelled"):
                return dict(job)
            time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not end")


def _child_variable(pid: int, name: str) -> str:
    """A variable in the environment of one of process ``pid``'s children."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            for entry in (stat.parent / "environ").read_bytes().split(b"\0"):
                if entry.startswith(name.encode() + b"="):
                    return entry.decode().split("=", 1)[1]
        except (OSError, IndexError, ValueError):
            continue
    raise AssertionError(f"no child of {pid} has {name}")


def test_a_task_runs_as_its_tenants_own_user_in_its_own_directory(service: Any) -> None:
    _, base, _ = service
    job = _run(service, "alice", "sh", "-c", 'id -un; pwd; echo "$HOME"; echo kept > mine.txt')
    assert job["state"] == "finished", job
    home = base / "tasks" / "alice"
    info = home.stat()
    assert pwd.getpwuid(info.st_uid).pw_name == PREFIX + "alice"
    assert info.st_mode & 0o777 == 0o700
    logs = list((home / "logs").iterdir())
    out = next(p for p in logs if p.name == f"{job['id']}.0.0.out")
    assert out.read_text().splitlines() == [PREFIX + "alice", str(home), str(home)]
    assert out.stat().st_mode & 0o777 == 0o600
    assert (home / "mine.txt").read_text() == "kept\n"


def test_a_task_cannot_read_or_write_the_database(service: Any) -> None:
    running, base, auth = service
    db = base / "state" / "db"
    # The database and SQLite's files beside it (the WAL, made with the database's mode).
    modes = {p.name: p.stat().st_mode & 0o777 for p in db.parent.iterdir()}
    assert "db-wal" in modes and set(modes.values()) == {0o600}, modes
    before = db.read_bytes()
    read = _run(service, "alice", "sh", "-c", f"cat {db} > stolen")
    assert read["state"] == "failed" and "Permission denied" in read["error"], read
    wrote = _run(service, "alice", "sh", "-c", f"echo forged >> {db}")
    assert wrote["state"] == "failed" and "Permission denied" in wrote["error"], wrote
    assert db.read_bytes()[:100] == before[:100]
    assert not (base / "tasks" / "alice" / "stolen").read_bytes()
    with httpx.Client(base_url=running.url, timeout=30) as http:
        assert http.get("/v1/jobs", headers=auth["alice"]).status_code == 200


def test_a_task_cannot_read_another_tenants_directory(service: Any) -> None:
    _, base, _ = service
    assert _run(service, "bob", "sh", "-c", "echo bobs-data > data.txt")["state"] == "finished"
    bob = base / "tasks" / "bob"
    assert (bob / "data.txt").read_text() == "bobs-data\n"
    listed = _run(service, "alice", "ls", str(bob))
    assert listed["state"] == "failed" and "Permission denied" in listed["error"], listed
    read = _run(service, "alice", "cat", str(bob / "data.txt"))
    assert read["state"] == "failed" and "Permission denied" in read["error"], read


def test_a_task_sees_none_of_the_services_environment_and_cannot_signal_it(
    service: Any,
) -> None:
    running, base, _ = service
    job = _run(service, "alice", "sh", "-c", 'env | sort; echo "[$SERVICE_SECRET]" >&2; exit 1')
    assert job["state"] == "failed" and SECRET not in job["error"], job
    assert job["error"].endswith("exit code 1: []"), job
    out = (base / "tasks" / "alice" / "logs" / f"{job['id']}.0.0.out").read_text()
    names = [line.split("=", 1)[0] for line in out.splitlines()]
    assert names == [
        "FAIRSHARE_ATTEMPT",
        "FAIRSHARE_JOB_ID",
        "FAIRSHARE_SERVICE",
        "FAIRSHARE_TASK_INDEX",
        "HOME",
        "LANG",
        "PATH",
        "PWD",
    ]
    assert SECRET not in out and "RAY_" not in out
    pid = running.process.pid
    environ = _run(service, "alice", "cat", f"/proc/{pid}/environ")
    assert environ["state"] == "failed" and SECRET not in environ["error"], environ
    assert "Permission denied" in environ["error"]
    killed = _run(service, "alice", "kill", "-TERM", str(pid))
    assert killed["state"] == "failed" and "not permitted" in killed["error"], killed
    assert running.process.poll() is None


def test_a_task_cannot_reach_the_ray_instance(service: Any) -> None:
    running, _, _ = service
    # The service's Ray token: in its private directory, beside Ray's own files (the Ray
    # processes it started inherit its path).
    token = Path(_child_variable(running.process.pid, "RAY_AUTH_TOKEN_PATH"))
    assert (token.parent / "ray").is_dir() and token.parent.stat().st_mode & 0o777 == 0o700
    for path in (token, token.parent / "ray"):
        found = _run(service, "alice", "ls", "-l", str(path))
        assert found["state"] == "failed" and "Permission denied" in found["error"], found
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 for the task")
    code = (
        f"import sys; sys.path.insert(0, {SITE!r}); import ray; "
        "ray.init(address='auto'); print('JOINED')"
    )
    job = _run(service, "alice", python, "-c", code)
    assert job["state"] == "failed", job
    if re.search(r"ImportError|ModuleNotFoundError", job["error"]):
        pytest.skip(f"the task's {python} cannot import Ray: {job['error'][-200:]}")
    assert re.search(r"AuthenticationError|ConnectionError", job["error"]), job


def _job_processes(job: str) -> list[int]:
    """The processes of this host whose environment names ``job`` (``FAIRSHARE_JOB_ID``)."""
    wanted = f"FAIRSHARE_JOB_ID={job}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if wanted in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except (OSError, ValueError):
            continue
    return sorted(found)


def test_a_cancelled_tasks_whole_process_tree_is_gone(service: Any) -> None:
    """A forced cancel kills the Ray worker and the command (``PR_SET_PDEATHSIG``), but
    the command's own children outlived it: ``sh -c 'sleep 1000 & sleep 1000'`` left its
    first ``sleep`` running, and a child that left the session (``setsid``) too. Now the
    executor's stop task on the node kills every process carrying the attempt's
    variables."""
    running, _, auth = service
    body = {
        "name": "tree",
        "tasks": 1,
        "demand": {"cpu": 1},
        "command": ["sh", "-c", "sleep 1000 & setsid sleep 1001 & sleep 1002"],
        "max_retries": 0,
    }
    job = ""
    try:
        with httpx.Client(base_url=running.url, timeout=30) as http:
            created = http.post("/v1/jobs", json=body, headers=auth["alice"])
            assert created.status_code == 201, created.text
            job = created.json()["id"]
            deadline = time.monotonic() + 120
            while len(_job_processes(job)) < 4 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(_job_processes(job)) == 4  # sh and its three sleeps
            answer = http.post(f"/v1/jobs/{job}/cancel", headers=auth["alice"])
            assert answer.status_code == 200 and answer.json()["stopped"] == 1, answer.text
            deadline = time.monotonic() + 60
            while _job_processes(job) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _job_processes(job) == []
            state = http.get(f"/v1/jobs/{job}", headers=auth["alice"]).json()["state"]
            assert state == "cancelled"
    finally:
        for pid in _job_processes(job) if job else []:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_task_past_its_memory_demand_is_stopped_with_the_reason(service: Any) -> None:
    """Demand ``mem`` caps a task's address space (``RLIMIT_AS``, the default
    ``--task-memory-limit address-space``): a task demanding 0.25 GiB whose ``tail`` holds a
    line of 1 GB fails, and its job's error says it ran out of the memory it declared; the
    same task with a line of 100 MB finishes."""
    running, _, auth = service
    grab = "head -c {} /dev/zero | tail -n 1 > /dev/null"
    results = {}
    with httpx.Client(base_url=running.url, timeout=30) as http:
        for size in (10**9, 10**8):
            body = {
                "name": "mem",
                "tasks": 1,
                "demand": {"cpu": 1, "mem": 0.25},
                "command": ["sh", "-c", grab.format(size)],
                "max_retries": 0,
            }
            created = http.post("/v1/jobs", json=body, headers=auth["bob"])
            assert created.status_code == 201, created.text
            job = created.json()["id"]
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                answer = http.get(f"/v1/jobs/{job}", headers=auth["bob"]).json()
                if answer["state"] in ("finished", "failed", "cancelled"):
                    break
                time.sleep(0.2)
            results[size] = answer
    failed = results[10**9]
    assert failed["state"] == "failed", failed
    assert failed["error"].endswith(
        "exit code 1: out of memory: the task may map at most 256 MiB (its demand mem, "
        "RLIMIT_AS): tail: memory exhausted"
    ), failed
    assert results[10**8]["state"] == "finished", results[10**8]
