"""What tenants need, on a real Ray instance (the one ``fairshare serve`` starts, marked
``ray``): ``fairshare logs`` reads a task's output on the node that ran it (a Ray task pinned
there),
another tenant's job is not found, a job no node can hold is refused at submit, ``cancel``
and the shutdown say what they did, and ``--usage-half-life``'s decayed usage is in the
database and survives a restart (issue 31 item 7)."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")
httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from fairshare.service.store import Store  # noqa: E402

from conftest import run_fairshare  # noqa: E402

pytestmark = pytest.mark.ray

SCENARIO = """
users:
  - {name: alice, weight: 1}
  - {name: bob, weight: 1}
"""


class _Service:
    """``fairshare serve`` in a subprocess, with a local Ray instance of its own."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fairshare",
                "serve",
                str(root / "scenario.yaml"),
                "--policy",
                "drf",
                "--db",
                str(root / "db"),
                "--num-cpus",
                "4",
                "--port",
                "0",
                "--usage-half-life",
                "3600",
                "--task-dir",
                str(root / "tasks"),
                *(() if os.geteuid() == 0 else ("--insecure-same-user",)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stderr is not None
        self.lines: list[str] = []
        self.url = ""
        for line in self.process.stderr:
            self.lines.append(line)
            found = re.search(r"(http://[\d.]+:\d+)", line)
            if line.startswith("fairshare serve:") and found:
                self.url = found.group(1)
                break
        assert self.url, "".join(self.lines)

    def stop(self) -> str:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.stderr is not None
        self.lines.append(self.process.stderr.read())
        assert self.process.wait(timeout=120) == 0, "".join(self.lines)
        return "".join(self.lines)


def _wait(check: Any, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not check():
        time.sleep(0.2)


def _usage(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'usage'").fetchone()
    assert row is not None
    doc: dict[str, Any] = json.loads(row[0])
    return doc


def _task_rows(db: Path, job: str) -> list[tuple[Any, ...]]:
    """A job's task rows as the service wrote them (state, attempts, failures, error): what
    an assertion on its output shows when the output is not the expected one."""
    with sqlite3.connect(db) as conn:
        query = "SELECT idx, state, attempts, failures, error FROM tasks WHERE job = ? ORDER BY idx"
        return list(conn.execute(query, (job,)).fetchall())


def test_logs_cancel_unfit_shutdown_and_usage_on_ray(tmp_path: Path) -> None:
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    (tmp_path / "tasks").mkdir(mode=0o711)
    store = Store(tmp_path / "db")
    tokens = {name: store.add_token(name) for name in ("alice", "bob")}
    store.close()
    service = _Service(tmp_path)

    def cli(*args: str, token: str = tokens["alice"]) -> subprocess.CompletedProcess[str]:
        # A token file, as a user should pass it (--token prints a warning: visible in ps).
        path = tmp_path / f"token-{'bob' if token == tokens['bob'] else 'alice'}"
        path.write_text(token + "\n")
        return run_fairshare(args[0], "--server", service.url, "--token-file", str(path), *args[1:])

    script = "import os, time; i = os.environ['FAIRSHARE_TASK_INDEX']; " + (
        "print('line 1 of', i, flush=True); time.sleep(2); print('line 2 of', i)"
    )
    done = cli("submit", "--name", "p", "--tasks", "2", "--demand", "cpu=1",
               "--", "python3", "-c", script)  # fmt: skip
    assert done.returncode == 0, done.stderr
    job = done.stdout.strip()
    # --follow prints as the task writes, until it ends.
    followed = cli("logs", job, "--task", "1", "--follow")
    assert (followed.returncode, followed.stdout) == (0, "line 1 of 1\nline 2 of 1\n"), (
        _task_rows(tmp_path / "db", job),
        followed.stderr,
    )
    assert cli("logs", job, "--task", "1", token=tokens["bob"]).returncode == 2
    # The one node has 4 CPUs.
    unfit = cli("submit", "--name", "u", "--tasks", "1", "--demand", "cpu=5", "--", "true")
    assert unfit.returncode == 2
    assert "demand.cpu: 5 is more than any node has: the largest has 4" in unfit.stderr
    # Cancel says what it did: 4 CPUs, 6 tasks of 1 (alice's first job has ended).
    sleepy = cli("submit", "--name", "s", "--tasks", "6", "--demand", "cpu=1", "--", "sleep", "60")
    sleepy_id = sleepy.stdout.strip()
    http = httpx.Client(base_url=service.url, timeout=30)
    auth = {"Authorization": f"Bearer {tokens['alice']}"}

    def four_run() -> bool:
        answer = http.get(f"/v1/jobs/{sleepy_id}", headers=auth).json()
        return bool(answer["tasks"]["running"] == 4)

    _wait(four_run)
    http.close()
    cancelled = cli("cancel", sleepy_id)
    assert cancelled.stdout == (
        f"cancelled {sleepy_id}: 4 running tasks stopped, 2 pending tasks dropped\n"
    )
    text = service.stop()
    assert "fairshare serve: stopped: 0 jobs left pending or running (resumed on restart), " in (
        text
    )
    saved = _usage(tmp_path / "db")
    alice = saved["users"]["alice"]["usage"][0]
    assert alice > 0 and saved["users"]["bob"]["usage"] == [0.0]
    # Restarted: alice's usage goes on (decayed by seconds of a one-hour half-life).
    again = _Service(tmp_path)
    again.stop()
    restored = _usage(tmp_path / "db")["users"]["alice"]["usage"][0]
    assert alice * 0.99 < restored <= alice
