"""Issue 30's first contact, through the installed executable: ``--version``, the version in
every output, a trace that brings its machines needs no scenario, the missing trace named,
the ``--until`` and no-jobs warnings, ``check --fail-on-violation`` and its progress bar,
and ``tenant add``'s warning about a token a ``git add .`` would commit."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
from pathlib import Path

import pytest

import fairshare
from fairshare.cli.version import git_commit

from conftest import EXAMPLES, fairshare_executable, run_fairshare

NODES = """sn,cpu_milli,memory_mib,gpu,model
node-a,8000,16384,0,
node-b,16000,65536,2,V100M16
"""
PODS = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "pod-0,4000,8192,0,0,,LS,Running,0,100,0\n"
    "pod-1,8000,32768,1,1000,V100M16,LS,Running,10,70,10\n"
)
"""An alibaba-gpu pod list of two pods and its node list of two nodes (the trace's columns)."""


def alibaba(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "openb_node_list_all_node.csv").write_text(NODES, encoding="utf-8")
    pods = directory / "openb_pod_list_default.csv"
    pods.write_text(PODS, encoding="utf-8")
    return pods


def test_version_names_the_build() -> None:
    for flag in ("--version", "-V"):
        done = run_fairshare(flag)
        assert (done.returncode, done.stderr) == (0, "")
        lines = done.stdout.splitlines()
        assert lines[0] == f"fairshare {fairshare.__version__}"
        assert lines[1] in ("kernel: compiled (mypyc)", "kernel: pure Python (not compiled)") or (
            lines[1].startswith("kernel: pure Python (")
        )
        assert lines[2].startswith("Python 3.")
        package = Path(fairshare.__file__).resolve().parent
        commit = git_commit(package.parent.parent) if package.parent.name == "src" else None
        if commit is None:
            assert len(lines) == 3, lines
        else:
            assert lines[3] == f"commit {commit} ({package.parent.parent})"
    assert "--version" in run_fairshare("--help").stdout


def test_git_commit_reads_a_worktree_and_packed_refs(tmp_path: Path) -> None:
    common = tmp_path / "repo.git"
    (common / "worktrees" / "w").mkdir(parents=True)
    (common / "packed-refs").write_text("# pack-refs\n" + "cd" * 20 + " refs/heads/topic\n")
    (common / "worktrees" / "w" / "HEAD").write_text("ref: refs/heads/topic\n")
    (common / "worktrees" / "w" / "commondir").write_text("../..\n")
    checkout = tmp_path / "w"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {common / 'worktrees' / 'w'}\n")
    assert git_commit(checkout) == "cd" * 20
    (common / "worktrees" / "w" / "HEAD").write_text("ef" * 20 + "\n")  # a detached HEAD
    assert git_commit(checkout) == "ef" * 20


def test_every_output_records_the_version(tmp_path: Path) -> None:
    version = fairshare.__version__
    out = tmp_path / "run"
    done = run_fairshare(
        "simulate", str(EXAMPLES / "sim-fair-section-5.3.yaml"), "-p", "fair", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "summary.json").read_text())["fairshare_version"] == version
    solved = run_fairshare(
        "solve", str(EXAMPLES / "drf-section-4.1.yaml"), "--policy", "drf", "--json"
    )
    assert json.loads(solved.stdout)["fairshare_version"] == version
    checked = run_fairshare(
        "check", "--policy", "drf", "--property", "envy-freeness", "--trials", "2", "--json"
    )
    assert json.loads(checked.stdout)["fairshare_version"] == version


def test_a_trace_with_its_machines_needs_no_scenario(tmp_path: Path) -> None:
    pods = alibaba(tmp_path / "trace")
    out = tmp_path / "out"
    done = run_fairshare("simulate", "--trace", f"alibaba-gpu:{pods}", "-p", "drf", "-o", str(out))
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["machines"], summary["jobs"], summary["finished_jobs"]) == (2, 2, 2)
    assert json.loads((out / "scenario.json").read_text()) == {}
    compared = run_fairshare(
        "compare",
        "--trace",
        f"alibaba-gpu:{pods}",
        "--policies",
        "drf,fifo",
        "-o",
        str(tmp_path / "c"),
    )
    assert compared.returncode == 0, compared.stderr
    # explain runs the recorded inputs again: the empty scenario and the trace.
    explained = run_fairshare("explain", "pod-0", "--run", str(out), "--at", "50", "--json")
    assert explained.returncode == 0, explained.stderr


def test_no_scenario_and_no_trace_is_one_error_line(tmp_path: Path) -> None:
    done = run_fairshare("simulate", "-p", "drf", "-o", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: command line: SCENARIO: give a scenario file, or a trace")
    assert not (tmp_path / "out").exists()


def test_a_missing_pod_list_is_named_not_the_machines(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    missing = tmp_path / "nowhere" / "pods.csv"
    for scenario in ([str(empty)], []):
        done = run_fairshare(
            "simulate",
            *scenario,
            "--trace",
            f"alibaba-gpu:{missing}",
            "-p",
            "drf",
            "-o",
            str(tmp_path / "out"),
        )
        assert done.returncode == 2
        assert done.stderr == f"error: {missing}: file: no such alibaba-gpu trace\n"


def test_until_before_the_first_arrival_warns(tmp_path: Path) -> None:
    trace = tmp_path / "late.swf"
    trace.write_text(
        "1 599850 5 60 2 -1 -1 2 120 -1 1 7 1 1 1 -1 -1 -1\n"
        "2 600000 5 30 1 -1 -1 1 120 -1 1 8 1 1 1 -1 -1 -1\n"
    )
    scenario = tmp_path / "s.yaml"
    scenario.write_text("machines:\n  - {name: m, count: 2, capacity: {slots: 4}}\n")
    out = tmp_path / "out"
    done = run_fairshare(
        "simulate",
        str(scenario),
        "--trace",
        f"swf:{trace}",
        "--until",
        "400000",
        "-p",
        "fifo",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"warning: {trace}: --until 400,000 s ends before the first job arrives (at 599,850 s): "
        "no job was simulated\n"
    )
    assert json.loads((out / "summary.json").read_text())["jobs"] == 0
    # Without --until, the same trace runs both jobs and warns of nothing.
    again = run_fairshare(
        "simulate",
        str(scenario),
        "--trace",
        f"swf:{trace}",
        "-p",
        "fifo",
        "-o",
        str(tmp_path / "o2"),
    )
    assert (again.returncode, again.stderr) == (0, "")


def test_a_trace_without_jobs_warns(tmp_path: Path) -> None:
    trace = tmp_path / "empty.swf"
    trace.write_text("; Version: 2.2\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("machines:\n  - {name: m, capacity: {slots: 4}}\n")
    done = run_fairshare(
        "simulate",
        str(scenario),
        "--trace",
        f"swf:{trace}",
        "-p",
        "fifo",
        "-o",
        str(tmp_path / "o"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"warning: {trace}: no jobs to simulate (the trace gave none)\n"
    assert "jobs finished" in done.stdout and "0 of 0" in done.stdout


def test_check_fails_on_a_violation_only_when_asked() -> None:
    """asset fairness violates sharing incentive at its first trial (README's matrix)."""
    asked = ("check", "--policy", "asset", "--property", "sharing-incentive", "--json")
    assert run_fairshare(*asked).returncode == 0
    failed = run_fairshare(*asked, "--fail-on-violation")
    assert failed.returncode == 1 and json.loads(failed.stdout)["holds"] is False
    held = run_fairshare(
        "check",
        "--policy",
        "drf",
        "--property",
        "envy-freeness",
        "--trials",
        "3",
        "--fail-on-violation",
    )
    assert held.returncode == 0, held.stderr
    matrix = run_fairshare(
        "check", "--all", "--policy", "asset", "--trials", "3", "--fail-on-violation"
    )
    assert matrix.returncode == 1 and "asset / sharing-incentive" in matrix.stdout


def test_check_all_shows_progress_on_a_terminal() -> None:
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [fairshare_executable(), "check", "--all", "--policy", "drf", "--trials", "2"],
            stdout=subprocess.PIPE,
            stderr=secondary,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(primary)
    assert done.returncode == 0
    # rich redraws ten times a second: the labels shown depend on timing, the count does not.
    assert b"checking " in shown and b" 0/11" in shown
    assert "fairness properties by policy" in done.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="the warning asks git")
def test_tenant_add_warns_about_a_token_git_would_commit(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    token = tmp_path / "alice.token"
    with token.open("w") as handle:
        done = subprocess.run(
            [fairshare_executable(), "tenant", "add", "alice", "--db", str(tmp_path / "t.db")],
            stdout=handle,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0 and len(token.read_text().strip()) > 20
    warnings = done.stderr.splitlines()
    assert len(warnings) == 2, done.stderr
    assert warnings[0].startswith(f"warning: {token.resolve()}: a bearer token inside the git")
    assert warnings[1].startswith(f"warning: {(tmp_path / 't.db').resolve()}: ")
    (tmp_path / ".gitignore").write_text("/.fairshare/\n")
    (tmp_path / ".fairshare").mkdir()
    kept = tmp_path / ".fairshare" / "bob.token"
    with kept.open("w") as handle:
        quiet = subprocess.run(
            [
                fairshare_executable(),
                "tenant",
                "add",
                "bob",
                "--db",
                str(tmp_path / ".fairshare/t.db"),
            ],
            stdout=handle,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert (quiet.returncode, quiet.stderr) == (0, "")
