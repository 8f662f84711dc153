"""The tasks' sandbox without Ray (issue 31, item 1; docs/live.md, "Trust model"): the
environment a task sees, the arguments its process is started with, the tenants' user and
directory names, ``serve``'s choice of sandbox and its refusals, the database made private,
and a task run by :func:`~fairshare.backends.ray_task.run_command` in its sandbox (as the
worker's own user, which needs no root): its directory, its capped output files, a link
left in its logs directory never followed, what it leaves running killed."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairshare.backends import ray_task
from fairshare.backends.ray_task import (
    SAFE_PATH,
    Account,
    popen_arguments,
    run_command,
    task_environment,
    tenant_slug,
    tenant_user,
    valid_user_name,
)
from fairshare.service.sandbox import (
    DEFAULT_PREFIX,
    SandboxRefused,
    choose_sandbox,
    private_database,
)

from conftest import run_fairshare

# ---------------------------------------------------------------- environment and arguments


def test_a_tasks_environment_holds_only_its_own_variables(monkeypatch: Any) -> None:
    monkeypatch.setenv("SERVICE_SECRET", "hush")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    env = task_environment(
        {
            "FAIRSHARE_TASK_INDEX": "2",
            "FAIRSHARE_JOB_ID": "j",
            "RAY_ADDRESS": "auto",
            "ray_auth_token": "x",
            "HOME": "/root",
        },
        "/srv/tasks/alice",
    )
    assert env == {
        "PATH": SAFE_PATH,
        "LANG": "C.UTF-8",
        "FAIRSHARE_TASK_INDEX": "2",
        "FAIRSHARE_JOB_ID": "j",
        "HOME": "/srv/tasks/alice",
    }


def test_a_sandboxed_process_switches_user_drops_groups_and_has_its_own_session() -> None:
    me = os.geteuid()
    other = Account("fairshare-t-bob", me + 1, 4321)
    kwargs = popen_arguments(["true"], {"FAIRSHARE_ATTEMPT": "0"}, other, "/srv/t/bob")
    assert kwargs == {
        "env": {
            "PATH": SAFE_PATH,
            "LANG": "C.UTF-8",
            "FAIRSHARE_ATTEMPT": "0",
            "HOME": "/srv/t/bob",
        },
        "cwd": "/srv/t/bob",
        "start_new_session": True,
        "umask": 0o077,
        "user": me + 1,
        "group": 4321,
        "extra_groups": [],
    }
    # As the worker's own user (--insecure-same-user): no switch, the rest kept.
    same = popen_arguments(["true"], {}, Account("svc", me, os.getegid()), "/srv/t/a")
    assert "user" not in same and same["cwd"] == "/srv/t/a" and same["start_new_session"]
    assert set(same["env"]) == {"PATH", "LANG", "HOME"}


def test_without_a_sandbox_a_task_keeps_the_workers_environment(monkeypatch: Any) -> None:
    monkeypatch.setenv("BENCH_VAR", "1")
    kwargs = popen_arguments(["true"], {"FAIRSHARE_TASK_INDEX": "0"}, None, None)
    assert kwargs["env"]["BENCH_VAR"] == "1" and kwargs["env"]["FAIRSHARE_TASK_INDEX"] == "0"
    assert "user" not in kwargs and "cwd" not in kwargs


def test_tenant_names_become_distinct_valid_user_names() -> None:
    assert tenant_user(DEFAULT_PREFIX, "alice") == "fairshare-t-alice"
    names = ["alice", "Alice", "ALICE", "al ice", "al-ice", "a" * 40, "a" * 41, "é"]
    users = [tenant_user(DEFAULT_PREFIX, n) for n in names]
    assert len(set(users)) == len(names)
    assert all(valid_user_name(u) and len(u) <= 32 for u in users)


@given(st.text(min_size=1, max_size=60), st.text(min_size=1, max_size=60))
def test_any_two_tenants_get_two_valid_user_names(a: str, b: str) -> None:
    ua, ub = tenant_user(DEFAULT_PREFIX, a), tenant_user(DEFAULT_PREFIX, b)
    assert valid_user_name(ua) and len(ua) <= 32
    assert (ua == ub) == (a == b)
    assert tenant_slug(a) == tenant_slug(a)


# ---------------------------------------------------------------------- serve's choice


def test_serve_as_root_runs_each_tenant_as_its_own_user_by_default() -> None:
    choice = choose_sandbox(None, None, False, "/srv/t", local=True, switch=True, uid=0)
    assert choice.settings == {
        "mode": "tenant",
        "prefix": "fairshare-t-",
        "create_users": True,
        "root": "/srv/t",
    }
    assert choice.warning is None


def test_serve_that_cannot_switch_users_refuses_saying_what_to_set_up() -> None:
    with pytest.raises(SandboxRefused) as refused:
        choose_sandbox(None, None, False, None, local=True, switch=False, uid=1000)
    assert refused.value.where == "--task-user"
    for needed in ("CAP_SETUID", "--task-user-prefix", "--insecure-same-user", "uid 1000"):
        assert needed in refused.value.what
    # With --ray the workers are elsewhere: their privileges are checked there, per task.
    remote = choose_sandbox(None, "team-", False, None, local=False, switch=False, uid=1000)
    assert remote.settings["prefix"] == "team-"


def test_insecure_same_user_is_a_warning() -> None:
    choice = choose_sandbox(None, None, True, None, local=True, switch=False, uid=1000)
    assert choice.settings == {"mode": "same", "root": None}
    assert choice.warning is not None and choice.warning.startswith("warning: ")
    assert "uid 1000" in choice.warning and "\n" not in choice.warning


@pytest.mark.parametrize(
    ("args", "where", "what"),
    [
        (("nobody", "p-", False, None), "--task-user-prefix", "give one of"),
        (("nobody", None, True, None), "--insecure-same-user", "give one of"),
        (("no body", None, False, None), "--task-user", "not a valid user name"),
        (("root", None, False, None), "--task-user", "root or the service's own user"),
        (("fs-no-such-user", None, False, None), "--task-user", "no user 'fs-no-such-user'"),
        ((None, "0bad", False, None), "--task-user-prefix", "at most 12 characters"),
        ((None, "waytoolongprefix-", False, None), "--task-user-prefix", "at most 12"),
        ((None, None, False, "relative/dir"), "--task-dir", "absolute path"),
    ],
)
def test_contradictory_or_invalid_sandbox_options_are_refused(
    args: tuple[Any, ...], where: str, what: str
) -> None:
    with pytest.raises(SandboxRefused) as refused:
        choose_sandbox(*args, local=True, switch=True, uid=4242)
    assert refused.value.where == where and what in refused.value.what


def test_the_database_and_its_wal_become_private(tmp_path: Path) -> None:
    db = tmp_path / "db"
    for name in ("db", "db-wal", "db-shm"):
        (tmp_path / name).write_text("x")
        (tmp_path / name).chmod(0o644)
    tmp_path.chmod(0o700)
    assert private_database(db) is None
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {
        "db": 0o600,
        "db-wal": 0o600,
        "db-shm": 0o600,
    }


def test_a_database_in_a_directory_everyone_writes_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "open-to-all"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(SandboxRefused) as refused:
        private_database(shared / "db")
    assert refused.value.where == "--db" and "writable by every user" in refused.value.what
    shared.chmod(0o1777)  # sticky, as /tmp: no one replaces another's file
    assert private_database(shared / "db") is None
    shared.chmod(0o755)
    warning = private_database(shared / "db")
    assert warning == (
        f"warning: {shared}: the database's directory is open to other users (mode 755; the "
        f"database itself is 0600): chmod 700 {shared}, or keep it in a directory of its own"
    )


def test_serve_refuses_contradictory_sandbox_options_in_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("users:\n  - {name: alice}\n")
    done = run_fairshare(
        "serve",
        str(scenario),
        "--policy",
        "drf",
        "--db",
        str(tmp_path / "db"),
        "--task-user",
        "nobody",
        "--insecure-same-user",
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: command line: --insecure-same-user: give one of --task-user, "
        "--task-user-prefix and --insecure-same-user, not --task-user and --insecure-same-user"
    ]


# ------------------------------------------------------------------- a sandboxed task


def _same_user(root: Path, tenant: str = "alice", key: str = "j:0:0") -> dict[str, Any]:
    return {"mode": "same", "root": str(root), "tenant": tenant, "key": key}


def test_a_task_runs_in_its_tenants_directory_with_its_output_in_files(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("SERVICE_SECRET", "hush")
    root = tmp_path / "tasks"
    command = ["sh", "-c", 'pwd; echo "[$SERVICE_SECRET]"; echo oops >&2; exit 5']
    assert run_command(command, {"FAIRSHARE_TASK_INDEX": "0"}, _same_user(root)) == (5, "oops")
    home = root / "alice"
    assert stat.S_IMODE(root.stat().st_mode) == 0o711
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert (home / "logs" / "j.0.0.out").read_text() == f"{home}\n[]\n"
    assert (home / "logs" / "j.0.0.err").read_text() == "oops\n"
    assert stat.S_IMODE((home / "logs" / "j.0.0.out").stat().st_mode) == 0o600


def test_a_tasks_output_is_cut_at_the_cap(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(ray_task, "OUTPUT_CAP", 1000)
    command = ["sh", "-c", "yes x | head -c 50000; yes y | head -c 50000 >&2"]
    code, tail = run_command(command, {}, _same_user(tmp_path))
    assert code == 0 and set(tail.replace("\n", "")) == {"y"} and len(tail) <= 2000
    out = (tmp_path / "alice" / "logs" / "j.0.0.out").read_text()
    assert out.startswith("x\n" * 500)
    assert out.endswith("\n[fairshare: output cut at 1000 bytes]\n")
    assert len(out) == 1000 + len("\n[fairshare: output cut at 1000 bytes]\n")


def test_a_link_left_in_the_logs_directory_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    logs = tmp_path / "tasks" / "alice" / "logs"
    assert run_command(["true"], {}, _same_user(tmp_path / "tasks"))[0] == 0
    (logs / "j.0.1.out").symlink_to(victim)
    sandbox = _same_user(tmp_path / "tasks", key="j:0:1")
    assert run_command(["echo", "overwritten"], {}, sandbox)[0] == 0
    assert victim.read_text() == "precious\n"
    assert (logs / "j.0.1.out").read_text() == "overwritten\n"
    # The logs directory itself replaced by a link: the task fails, nothing is written.
    (logs / "j.0.1.out").unlink()
    for entry in logs.iterdir():
        entry.unlink()
    logs.rmdir()
    logs.symlink_to(tmp_path)
    code, error = run_command(["true"], {}, sandbox)
    assert code == 126 and error.startswith("sandbox: ")


def test_what_a_task_leaves_running_is_killed_when_it_ends(tmp_path: Path) -> None:
    # One child still holds the task's output; the other let it go (a daemon's way).
    late, quiet = tmp_path / "late", tmp_path / "quiet"
    for command in (
        f"(sleep 2; touch {late}) & echo started",
        f"(sleep 2; touch {quiet}) >/dev/null 2>&1 & echo started",
    ):
        assert run_command(["sh", "-c", command], {}, _same_user(tmp_path / "tasks")) == (0, "")
    import time  # noqa: PLC0415

    time.sleep(3)
    assert not late.exists() and not quiet.exists()


def test_a_task_directory_root_others_can_write_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    code, error = run_command(["true"], {}, _same_user(root))
    assert code == 126 and "writable by it alone" in error


def test_a_task_user_missing_on_the_node_fails_the_task_saying_so(tmp_path: Path) -> None:
    sandbox = {
        "mode": "user",
        "user": "fs-no-such-user",
        "root": str(tmp_path),
        "tenant": "a",
        "key": "k",
    }
    code, error = run_command(["true"], {}, sandbox)
    assert code == 126 and "no user fs-no-such-user on this node" in error


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")
def test_as_root_a_task_runs_as_the_task_user(tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    tmp_path.chmod(0o755)
    sandbox = {"mode": "user", "user": "nobody", "root": str(tmp_path / "t"), "tenant": "a"}
    code, _ = run_command(["sh", "-c", "id -u; id -G; umask"], {}, {**sandbox, "key": "k"})
    assert code == 0
    out = (tmp_path / "t" / "a" / "logs" / "k.out").read_text().split()
    assert out == [str(nobody.pw_uid), str(nobody.pw_gid), "0077"]
    assert (tmp_path / "t" / "a").stat().st_uid == nobody.pw_uid


def _interfaces(text: str) -> list[str]:
    return [line.split(":")[0].strip() for line in text.splitlines()[2:]]


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root")
def test_a_task_without_network_sees_no_interface_and_still_switches_user(
    tmp_path: Path,
) -> None:
    host = _interfaces(Path("/proc/self/net/dev").read_text())
    if host == ["lo"]:
        pytest.skip("this machine has no interface but loopback: nothing to hide")
    nobody = pwd.getpwnam("nobody")
    tmp_path.chmod(0o755)
    sandbox = {
        "mode": "user",
        "user": "nobody",
        "root": str(tmp_path / "t"),
        "tenant": "a",
        "key": "k",
        "network": "none",
    }
    command = ["sh", "-c", "id -u; id -G; cat /proc/self/net/dev"]
    assert run_command(command, {}, sandbox)[0] == 0
    lines = (tmp_path / "t" / "a" / "logs" / "k.out").read_text().splitlines()
    assert lines[:2] == [str(nobody.pw_uid), str(nobody.pw_gid)]
    assert _interfaces("\n".join(lines[2:])) == ["lo"]
    # The loopback is down: not even the node's own services answer (they do with the
    # node's network).
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        return
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        port = listening.getsockname()[1]
        connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        assert run_command([python, "-c", connect], {}, {**sandbox, "network": "host"}) == (
            0,
            "",
        )
        code, error = run_command([python, "-c", connect], {}, sandbox)
    assert code == 1 and error.endswith("Network is unreachable"), error


def test_a_task_network_is_host_or_none() -> None:
    choice = choose_sandbox(None, None, False, None, local=True, network="none", uid=0, switch=True)
    assert choice.settings["network"] == "none"
    assert (
        "network"
        not in choose_sandbox(None, None, False, None, local=True, uid=0, switch=True).settings
    )
    with pytest.raises(SandboxRefused) as refused:
        choose_sandbox(None, None, False, None, local=True, network="lan", uid=0, switch=True)
    assert refused.value.where == "--task-network" and "host, none" in refused.value.what
    with pytest.raises(SandboxRefused) as refused:
        choose_sandbox(None, "p-", False, None, local=True, network="none", uid=1000, switch=True)
    assert "root" in refused.value.what


def test_tenant_add_keeps_the_database_and_the_token_file_private(tmp_path: Path) -> None:
    import subprocess  # noqa: PLC0415

    from conftest import fairshare_executable  # noqa: PLC0415

    token = tmp_path / "alice.token"
    with token.open("w") as out:
        done = subprocess.run(
            [fairshare_executable(), "tenant", "add", "alice", "--db", str(tmp_path / "db")],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert token.read_text().strip().startswith("fs_")
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "db").stat().st_mode) == 0o600


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="drops root's capabilities with setpriv",
)
def test_serve_without_the_capabilities_to_switch_users_refuses_or_warns(
    tmp_path: Path,
) -> None:
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    scenario = tmp_path / "s.yaml"
    scenario.write_text("users:\n  - {name: alice}\n")
    # Root without CAP_SETUID and CAP_SETGID, as an unprivileged service user would be.
    serve = [
        "setpriv",
        "--bounding-set=-all",
        "--inh-caps=-all",
        "--",
        sys.executable,
        "-m",
        "fairshare",
        "serve",
        str(scenario),
        "--policy",
        "drf",
        "--db",
        str(tmp_path / "db"),
        "--port",
        "0",
    ]
    refused = subprocess.run(serve, capture_output=True, text=True, timeout=120, check=False)
    assert refused.returncode == 2
    [line] = refused.stderr.splitlines()
    assert line.startswith("error: command line: --task-user: tenants' commands must not run")
    assert "CAP_SETUID" in line and "--insecure-same-user" in line
    # Acknowledged: one warning line, and the service goes on (to a Ray address that is
    # not there, here, so that it stops at once).
    warned = subprocess.run(
        [*serve, "--insecure-same-user", "--ray", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = warned.stderr.splitlines()
    assert warned.returncode == 2 and len(lines) == 2, warned.stderr
    assert lines[0].startswith("warning: --insecure-same-user: tenants' commands run as uid 0")
    # Without the [ray] extra serve stops at the missing package, after the options' checks.
    extra = all(importlib.util.find_spec(name) for name in ("ray", "fastapi", "uvicorn"))
    assert lines[1].startswith(
        "error: command line: --ray: cannot connect to Ray"
        if extra
        else "error: command line: serve: needs the"
    )
