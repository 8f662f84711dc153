"""``fairshare explain`` through the installed executable (SPEC section 8.5): the JSON a
script reads, and a wrong JOB or DIR as one ``error:`` line with exit 2 (SPEC section 4)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import assert_rejected, run_fairshare

SCENARIO = """
machines:
  - {name: m1, capacity: {cpu: 4}}
users:
  - {name: alice, weight: 4}
  - {name: bob, weight: 1}
jobs:
  - {name: a1, submit: 0, user: alice, tasks: 12, duration: 10, demand: {cpu: 1}}
  - {name: b0, submit: 0, user: bob, tasks: 1, duration: 10, demand: {cpu: 1}}
  - {name: b1, submit: 1, user: bob, tasks: 1, duration: 10, demand: {cpu: 1}}
"""


def test_explain_json_through_the_executable(tmp_path: Path) -> None:
    """b1 waits behind alice (weight 4, share 0.75) at its submit time and starts at t=10
    (worked out in tests/test_explain.py)."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "run"
    done = run_fairshare("simulate", str(scenario), "--policy", "drf", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "run.json").read_text())["policy"] == "drf"
    done = run_fairshare("explain", "b1", "--run", str(out), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["job"] == "b1" and doc["state"] == "pending" and doc["at"] == 1.0
    assert [r["kind"] for r in doc["reasons"]] == ["fair-share"]
    assert doc["ahead"] == [{"user": "alice", "share": 0.75}]
    assert doc["estimated_start"] == 10.0
    done = run_fairshare("explain", "a1", "--run", str(out), "--at", "5")
    assert done.returncode == 0 and done.stdout == "a1 at t=5 (drf): running\n"
    line = assert_rejected(run_fairshare("explain", "zz", "--run", str(out)))
    assert "no job named 'zz'" in line and "jobs.csv" in line
    line = assert_rejected(run_fairshare("explain", "b1", "--run", str(tmp_path)))
    assert "--run" in line
