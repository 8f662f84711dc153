"""``fairshare whatif`` and ``fairshare check --before/--after`` through the installed
executable, as an operator or a CI job runs them (SPEC section 8.4, issue 29's acceptance)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import yaml

from conftest import assert_rejected, run_fairshare


def swapped(wa: float, wb: float) -> dict[str, Any]:
    """Two backlogged tenants with weights ``wa`` and ``wb`` sharing four CPUs."""
    return {
        "machines": [{"name": "m", "capacity": {"cpu": 4}}],
        "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
        "jobs": [
            {"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4, "duration": 10}
            for k in range(6)
            for u in "ab"
        ],
    }


def configurations(tmp_path: Path) -> tuple[Path, Path]:
    before, after = tmp_path / "before.yaml", tmp_path / "after.yaml"
    before.write_text(yaml.safe_dump(swapped(3, 1)))
    after.write_text(yaml.safe_dump(swapped(1, 3)))
    return before, after


def test_weights_that_swap_name_the_tenant_that_loses_first(tmp_path: Path) -> None:
    """Issue 29's acceptance: ``whatif`` lists first the tenant whose weight dropped, with a
    positive delta_wait_p95; ``check --before/--after`` exits 1 on the change and 0 on
    identical inputs."""
    before, after = configurations(tmp_path)
    out = tmp_path / "out"
    done = run_fairshare("whatif", str(before), str(after), "--policy", "drf", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 of 2 tenants wait longer at p95, 1 less")
    with (out / "tenants.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["user"] == "a" and float(rows[0]["delta_wait_p95"]) == 50.0
    assert rows[1]["user"] == "b" and float(rows[1]["delta_wait_p95"]) == -50.0
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["tenants_worse"], summary["tenants_better"]) == (1, 1)
    assert summary["before"]["policy"] == summary["after"]["policy"] == "drf"
    assert sorted(p.name for p in out.iterdir()) == [
        ".fairshare-output",
        "after",
        "before",
        "report.html",
        "summary.json",
        "tenants.csv",
    ]

    gate = run_fairshare("check", "--before", str(before), "--after", str(after), "--policy", "drf")
    assert gate.returncode == 1, gate.stderr
    assert gate.stdout.splitlines()[0].startswith("FAIL wait a: p95 wait 57.5 s -> 107.5 s")
    same = run_fairshare(
        "check", "--before", str(before), "--after", str(before), "--policy", "drf", "--json"
    )
    assert same.returncode == 0, same.stderr
    document = json.loads(same.stdout)
    assert document["passed"] is True and document["failures"] == []


def test_the_gate_json_names_the_tenant(tmp_path: Path) -> None:
    before, after = configurations(tmp_path)
    done = run_fairshare(
        "check", "--before", str(before), "--after", str(after), "--policy", "drf", "--json"
    )
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["passed"] is False
    assert [(f["kind"], f["user"], f["property"]) for f in document["failures"]] == [
        ("wait", "a", None)
    ]


def test_rejected_inputs_write_nothing(tmp_path: Path) -> None:
    before, after = configurations(tmp_path)
    out = tmp_path / "out"
    line = assert_rejected(run_fairshare("whatif", str(before), str(after), "--out", str(out)))
    assert line.startswith(f"error: {before}: --policy: ")
    line = assert_rejected(
        run_fairshare(
            "whatif",
            str(before),
            str(tmp_path / "missing.yaml"),
            "--policy",
            "drf",
            "--out",
            str(out),
        )
    )
    assert "missing.yaml" in line
    assert not out.exists()
    line = assert_rejected(run_fairshare("check", "--before", str(before), "--after", str(after)))
    assert line.startswith(f"error: {before}: --policy: ")


def test_explain_reads_each_run_of_a_whatif(tmp_path: Path) -> None:
    """``whatif`` records each run's inputs in ``before/`` and ``after/`` (run.json,
    scenario.json), so ``fairshare explain`` answers for either run; AFTER lists no jobs of
    its own and replays BEFORE's, which its scenario.json then holds. Under weights 1:3 at
    t=0, a runs 1 CPU and b 3 (equal ranks 0.25/1 = 0.75/3): a's second job waits behind a's
    first, on a full machine, and starts at t=40 as the run recorded."""
    before, after = configurations(tmp_path)
    document = swapped(1, 3)
    del document["jobs"]
    after.write_text(yaml.safe_dump(document))
    out = tmp_path / "out"
    done = run_fairshare("whatif", str(before), str(after), "--policy", "drf", "--out", str(out))
    assert done.returncode == 0, done.stderr
    recorded = json.loads((out / "after" / "scenario.json").read_text())
    assert len(recorded["jobs"]) == 12 and recorded["users"][1] == {"name": "b", "weight": 3}
    why = run_fairshare("explain", "a1", "--run", str(out / "after"), "--at", "0", "--json")
    assert why.returncode == 0, why.stderr
    answer = json.loads(why.stdout)
    assert answer["state"] == "pending"
    assert answer["reasons"][0]["kind"] == "fair-share"
    assert answer["reasons"][0]["detail"].startswith("1 earlier job of a comes first")
    assert "running tasks: b 3, a 1" in answer["reasons"][0]["detail"]
    assert answer["estimated_start"] == 40.0


def _without_wall(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text())
    for run in ("before", "after"):
        document[run].pop("wall_seconds")
    return dict(document)


def test_worker_processes_give_the_same_answer(tmp_path: Path) -> None:
    """``--executor local --jobs 2`` makes the runs (two seeds, four runs) in worker
    processes, as a sweep does: the same tenants.csv and summary.json (wall time aside) as
    one after the other in this process."""
    before, after = configurations(tmp_path)
    common = [str(before), str(after), "--policy", "drf", "--seeds", "2"]
    here = run_fairshare("whatif", *common, "--out", str(tmp_path / "here"))
    assert here.returncode == 0, here.stderr
    pool = run_fairshare(
        "whatif", *common, "--executor", "local", "--jobs", "2", "--out", str(tmp_path / "pool")
    )
    assert pool.returncode == 0, pool.stderr
    assert "making 4 runs in worker processes" in pool.stderr
    for name in ("tenants.csv", "before/jobs.csv", "after/timeline.csv"):
        assert (tmp_path / "pool" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()
    assert _without_wall(tmp_path / "pool" / "summary.json") == _without_wall(
        tmp_path / "here" / "summary.json"
    )


def test_executor_flags_are_checked(tmp_path: Path) -> None:
    before, after = configurations(tmp_path)
    common = [str(before), str(after), "--policy", "drf", "--out", str(tmp_path / "out")]
    line = assert_rejected(run_fairshare("whatif", *common, "--executor", "moon"))
    assert line == "error: command line: --executor: expected local or ray, got 'moon'"
    line = assert_rejected(run_fairshare("whatif", *common, "--ray", "127.0.0.1:1"))
    assert line == "error: command line: --ray: is the cluster of --executor ray; add it"
    line = assert_rejected(run_fairshare("whatif", *common, "--jobs", "2"))
    assert line == "error: command line: --jobs: needs --executor local or ray"
    assert not (tmp_path / "out").exists()
