"""The live service's database through the installed executable (SPEC sections 4 and 6):
a second ``serve`` on a database another service holds, a damaged database, and ``tenant
add`` on a database it cannot write are each refused with exit 2 and one ``error:`` line
naming the database, before Ray starts."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fairshare.backends import LiveJob
from fairshare.service.store import Store

from conftest import assert_rejected, run_fairshare

SCENARIO = "users:\n  - {name: alice}\n"


def test_a_second_serve_on_a_held_database_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    pytest.importorskip("ray")
    pytest.importorskip("fastapi")
    db = tmp_path / "live.db"
    (tmp_path / "s.yaml").write_text(SCENARIO)
    Store(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from fairshare.service.store import Store; "
            f"s = Store({str(db)!r}); s.acquire(); print('held', flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        done = run_fairshare(
            "serve", str(tmp_path / "s.yaml"), "--policy", "drf", "--db", str(db), "--port", "0"
        )
        line = assert_rejected(done)
        assert line.startswith(f"error: {db}: --db: is in use by another fairshare serve (pid ")
        assert f"pid {holder.pid} on " in line and line.endswith("one service per database")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_a_damaged_database_is_refused_at_start(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    pytest.importorskip("fastapi")
    (tmp_path / "s.yaml").write_text(SCENARIO)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(bytes(range(256)) * 64)
    damaged = tmp_path / "damaged.db"
    store = Store(damaged)
    for i in range(300):
        store.add_job(LiveJob(f"j{i}", "alice", "j" * 100, 5, {"cpu": 1.0}, ("true",)))
    store.checkpoint()
    store.close()
    data = bytearray(damaged.read_bytes())
    data[-3 * 4096 :] = b"\x5a" * (3 * 4096)
    damaged.write_bytes(bytes(data))
    for db, what in ((garbage, "cannot use it as a fairshare database"), (damaged, "is damaged")):
        done = run_fairshare(
            "serve", str(tmp_path / "s.yaml"), "--policy", "drf", "--db", str(db), "--port", "0"
        )
        assert assert_rejected(done).startswith(f"error: {db}: --db: {what}")
        done = run_fairshare("tenant", "add", "alice", "--db", str(garbage))
        assert assert_rejected(done).startswith(f"error: {garbage}: --db: ")


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root to run the command as another user",
)
def test_tenant_add_on_a_database_it_cannot_write_is_one_line(tmp_path: Path) -> None:
    """A database this user may read but not write (root's file, mode 0644, read by
    nobody): one ``error:`` line, no traceback (the issue saw a traceback)."""
    # pytest's own temporary directories are private to root: a directory of its own in
    # the system's temporary directory, which user nobody may reach.
    folder = Path(tempfile.mkdtemp(prefix="fairshare-readonly-"))
    folder.chmod(0o755)
    try:
        db = folder / "live.db"
        Store(db).checkpoint()
        db.chmod(0o644)
        for stale in (Path(f"{db}-wal"), Path(f"{db}-shm")):
            stale.unlink(missing_ok=True)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
        probe = subprocess.run(
            [*nobody, "-c", f"import fairshare; open({str(db)!r}, 'rb').close()"],
            capture_output=True,
            env={**os.environ, "HOME": str(folder)},
            check=False,
            timeout=120,
        )
        if probe.returncode != 0:  # a private venv or temporary directory (CI's is 0700)
            pytest.skip("user nobody cannot import fairshare or reach the database here")
        done = subprocess.run(
            [
                *nobody,
                "-m",
                "fairshare",
                "tenant",
                "add",
                "alice",
                "--db",
                str(db),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": str(folder)},
            check=False,
            timeout=120,
        )
        line = assert_rejected(done)
        assert line.startswith(f"error: {db}: --db: ")
        assert "readonly" in line or "read-only" in line or "cannot" in line
    finally:
        shutil.rmtree(folder, ignore_errors=True)
