"""``fairshare explain`` (SPEC section 8.5): the reasons a job waits, in the order they bind,
who is served first with their shares, and the estimated start, on small runs whose every
value is worked out by hand in each test's docstring; and the library function
(:func:`fairshare.policies.explain.explain`) asking the scheduler's own filters."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fairshare.cli import main
from fairshare.cli.explain import explain_run
from fairshare.cluster import Cluster, Machine
from fairshare.policies import Scheduler
from fairshare.policies.explain import KINDS, explain
from fairshare.policies.filters import Filter
from fairshare.workload.model import Job

FAIR = """
machines:
  - {name: m1, capacity: {cpu: 4}}
users:
  - {name: alice, weight: 4}
  - {name: bob, weight: 1}
jobs:
  - {name: a1, submit: 0, user: alice, tasks: 12, duration: 10, demand: {cpu: 1}}
  - {name: b0, submit: 0, user: bob, tasks: 1, duration: 10, demand: {cpu: 1}}
  - {name: b1, submit: 1, user: bob, tasks: 1, duration: 10, demand: {cpu: 1}}
  - {name: gpu-job, submit: 2, user: bob, tasks: 1, duration: 5, demand: {cpu: 1},
     constraint: "gpu"}
"""

GANG = """
machines:
  - {name: m, count: 2, capacity: {cpu: 4}}
jobs:
  - {name: small, submit: 0, user: u1, tasks: 6, duration: 10, demand: {cpu: 1}}
  - {name: mpi, submit: 1, user: u2, tasks: 8, gang: true, duration: 10, demand: {cpu: 1}}
  - {name: tail, submit: 2, user: u3, tasks: 2, duration: 100, demand: {cpu: 1}}
"""

QUOTA = """
machines:
  - {name: m1, capacity: {cpu: 8}}
queues:
  - {path: research, quota: {cpu: 2}, borrowing_limit: {cpu: 0}}
  - {path: ops, quota: {cpu: 6}}
jobs:
  - {name: r0, submit: 0, user: rita, queue: research, tasks: 2, duration: 10, demand: {cpu: 1}}
  - {name: r1, submit: 1, user: rita, queue: research, tasks: 1, duration: 10, demand: {cpu: 1}}
"""

PRIORITY = """
machines:
  - {name: m1, capacity: {cpu: 2}}
jobs:
  - {name: first, submit: 0, user: u1, tasks: 2, duration: 10, demand: {cpu: 1}}
  - {name: urgent, submit: 1, user: u2, tasks: 2, duration: 10, demand: {cpu: 1}, priority: 5}
  - {name: normal, submit: 1, user: u3, tasks: 1, duration: 10, demand: {cpu: 1}}
"""


def cli(*args: str) -> tuple[int, str]:
    """``fairshare ARGS`` in process: exit code and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(list(args))
        except SystemExit as done:
            code = int(done.code or 0)
    return code, out.getvalue()


def run(tmp_path: Path, text: str, policy: str, *options: str) -> Path:
    """Simulate ``text`` under ``policy`` into a run directory."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(text)
    out = tmp_path / "run"
    code, _ = cli("simulate", str(scenario), "--policy", policy, "--out", str(out), *options)
    assert code == 0
    return out


def why(out: Path, job: str, at: float) -> dict[str, Any]:
    inputs = json.loads((out / "run.json").read_text())
    return explain_run(out, inputs, job, at)


def test_fair_share_names_the_heavier_user_ahead(tmp_path: Path) -> None:
    """alice (weight 4) and bob (weight 1) share 4 CPUs from t=0: DRF gives alice 3 tasks
    (share 0.75, rank 0.75 / 4 = 0.1875) and bob 1 (rank 0.25). bob's b1 arrives at t=1 on
    a full cluster; alice ranks ahead with share 0.75. Without new arrivals, the four tasks
    of t=0 end at t=10, alice (rank 0.1875 < 0.25) takes 3 slots again and bob's b1 the
    fourth: it starts at t=10."""
    doc = why(run(tmp_path, FAIR, "drf"), "b1", 1.0)
    assert doc["state"] == "pending"
    assert [r["kind"] for r in doc["reasons"]] == ["fair-share"]
    assert doc["reasons"][0]["users_ahead"] == 1
    assert "alice" in doc["reasons"][0]["detail"]
    assert doc["ahead"] == [{"user": "alice", "share": 0.75}]
    assert doc["estimated_start"] == 10.0


def test_constraint_for_a_job_no_machine_can_take(tmp_path: Path) -> None:
    """gpu-job's constraint ``gpu`` matches no machine: ``constraint`` alone, never starts."""
    doc = why(run(tmp_path, FAIR, "drf"), "gpu-job", 2.0)
    assert doc["state"] == "pending"
    assert [r["kind"] for r in doc["reasons"]] == ["constraint"]
    assert "'gpu'" in doc["reasons"][0]["detail"]
    assert doc["estimated_start"] is None


def test_gang_without_room(tmp_path: Path) -> None:
    """mpi needs 8 CPUs at once on two 4-CPU machines; small holds 6 until t=10: the free
    room holds 2 of its tasks. It starts at t=10, when small ends."""
    doc = why(run(tmp_path, GANG, "drf"), "mpi", 1.0)
    assert [r["kind"] for r in doc["reasons"]] == ["gang"]
    assert doc["reasons"][0]["tasks"] == 8 and doc["reasons"][0]["room_for"] == 2
    assert doc["estimated_start"] == 10.0


def test_reservation_under_easy_backfilling(tmp_path: Path) -> None:
    """With EASY backfilling mpi (8 CPUs) holds the reservation from t=10, when small's 6
    tasks end; tail's 100 s tasks would not end by then and every CPU is reserved: tail
    waits for mpi (t=10 to 20) and starts at t=20."""
    out = run(tmp_path, GANG, "drf", "--backfill", "easy")
    doc = why(out, "tail", 2.0)
    assert [r["kind"] for r in doc["reasons"]] == ["reservation"]
    assert "'mpi'" in doc["reasons"][0]["detail"]
    assert doc["estimated_start"] == 20.0


def test_quota_with_a_borrowing_limit(tmp_path: Path) -> None:
    """research has a 2-CPU quota and may borrow none; r0 holds both, so r1 waits on a
    machine with 6 CPUs free until r0 ends at t=10."""
    doc = why(run(tmp_path, QUOTA, "drf"), "r1", 1.0)
    assert [r["kind"] for r in doc["reasons"]] == ["quota"]
    assert "queue research uses 2 of 2 cpu" in doc["reasons"][0]["detail"]
    assert doc["estimated_start"] == 10.0


def test_quota_for_a_gang_as_a_whole(tmp_path: Path) -> None:
    """Queue small holds 4 CPUs and may borrow none; g1 (a gang of 3) runs; g2, another gang
    of 3, would take small to 6: ``quota`` for all its tasks at once (each alone would fit:
    3 + 1 <= 4), although 5 CPUs are free. It starts at t=10, when g1 ends."""
    text = """
machines:
  - {name: node, count: 2, capacity: {cpu: 4}}
queues:
  - {path: small, quota: {cpu: 4}, borrowing_limit: {cpu: 0}}
  - {path: big, quota: {cpu: 4}}
jobs:
  - {name: g1, submit: 0, user: alice, queue: small, tasks: 3, gang: true, duration: 10,
     demand: {cpu: 1}}
  - {name: g2, submit: 0, user: alice, queue: small, tasks: 3, gang: true, duration: 10,
     demand: {cpu: 1}}
"""
    doc = why(run(tmp_path, text, "drf"), "g2", 0.0)
    assert [r["kind"] for r in doc["reasons"]] == ["quota"]
    assert doc["reasons"][0]["detail"] == (
        "queue small uses 3 of 4 cpu, its quota plus borrowing limit; "
        "the gang's 3 tasks need 3 cpu at once"
    )
    assert doc["estimated_start"] == 10.0


def test_priority_first(tmp_path: Path) -> None:
    """urgent (priority 5) and normal arrive at t=1 on a full cluster: urgent's two tasks
    are served first, at t=10; normal starts when they end, at t=20."""
    doc = why(run(tmp_path, PRIORITY, "drf"), "normal", 1.0)
    assert [r["kind"] for r in doc["reasons"]] == ["priority", "fair-share"]
    assert doc["ahead"] == [{"user": "u2", "share": 0.0}]
    assert doc["estimated_start"] == 20.0


KUEUE = """
machines:
  - {name: m1, capacity: {cpu: 10}}
queues:
  - {path: co, quota: {cpu: 10}}
  - {path: co/a, quota: {cpu: 4}, borrowing_limit: {cpu: 2}}
  - {path: co/b, quota: {cpu: 6}}
users:
  - {name: lq-a, queue: co/a}
  - {name: lq-b, queue: co/b}
jobs:
  - {name: a1, submit: 0, user: lq-a, tasks: 6, duration: 10, demand: {cpu: 1}}
  - {name: a2, submit: 1, user: lq-a, tasks: 1, duration: 10, demand: {cpu: 1}}
"""


def test_kueue_quota_with_cohort_borrowing(tmp_path: Path) -> None:
    """ClusterQueue co/a (nominal 4 CPUs, borrowing limit 2) runs a1's 6 tasks, 2 borrowed
    from co/b's idle quota (Kueue's ``available``: nominal, then the cohort's lendable room
    up to the borrowing limit; kubernetes-sigs/kueue pkg/cache, "borrowingLimit"). a2 asks
    1 CPU more with 4 CPUs idle on the machine: the quota refuses it until a1 ends at
    t=10."""
    doc = why(run(tmp_path, KUEUE, "kueue"), "a2", 1.0)
    assert doc["reasons"] == [
        {
            "kind": "quota",
            "detail": "ClusterQueue co/a uses 6 cpu (nominal quota 4); with what its cohort "
            "lends it has 0 more, and the workload asks 1",
            "filter": "kueue-quota",
            "machines": 1,
        }
    ]
    assert doc["estimated_start"] == 10.0


SLURM = """
machines:
  - {name: m, count: 2, capacity: {cpu: 4}}
queues:
  - {path: phys, weight: 1}
  - {path: chem, weight: 1}
users:
  - {name: p1, queue: phys}
  - {name: c1, queue: chem}
jobs:
  - {name: small, submit: 0, user: p1, tasks: 6, duration: 10, demand: {cpu: 1}}
  - {name: mpi, submit: 1, user: c1, tasks: 8, gang: true, duration: 10, demand: {cpu: 1}}
  - {name: tail, submit: 2, user: p1, tasks: 2, duration: 100, demand: {cpu: 1}}
"""


def test_slurm_fairtree_rank_and_backfill_reservation(tmp_path: Path) -> None:
    """Fair Tree ranks c1 (no usage) above p1 (running small); mpi, the head, holds the
    backfill reservation of every CPU from t=10; tail's 100 s would not end by then: it is
    not backfilled and starts after mpi, at t=20."""
    doc = why(run(tmp_path, SLURM, "slurm-fairtree"), "tail", 2.0)
    assert [r["kind"] for r in doc["reasons"]] == ["fair-share", "reservation"]
    assert doc["ahead"] == [{"user": "c1", "share": 1.0}]
    assert doc["estimated_start"] == 20.0


FIFO = """
machines:
  - {name: m1, capacity: {cpu: 2}}
jobs:
  - {name: j1, submit: 0, user: u1, tasks: 4, duration: 10, demand: {cpu: 1}}
  - {name: j2, submit: 1, user: u2, tasks: 1, duration: 10, demand: {cpu: 1}}
  - {name: j3, submit: 2, user: u3, tasks: 1, duration: 10, demand: {cpu: 1}}
"""


def test_fifo_order_is_submission(tmp_path: Path) -> None:
    """Under FIFO j1's last two tasks and j2 were submitted before j3: j1's run at t=10,
    j2 and j3 at t=20."""
    doc = why(run(tmp_path, FIFO, "fifo"), "j3", 2.0)
    assert [r["kind"] for r in doc["reasons"]] == ["fair-share"]
    assert doc["reasons"][0]["detail"].startswith("FIFO: 2 users with jobs submitted earlier")
    assert doc["ahead"] == [{"user": "u1", "share": 2.0}, {"user": "u2", "share": 0.0}]
    assert doc["estimated_start"] == 20.0


def test_running_finished_and_not_submitted(tmp_path: Path) -> None:
    """a1 runs at t=1 and has ended by t=40; b1 is not submitted at t=0."""
    out = run(tmp_path, FAIR, "drf")
    assert why(out, "a1", 1.0)["state"] == "running"
    assert why(out, "b0", 40.0)["state"] == "finished"
    late = why(out, "b1", 0.0)
    assert late["state"] == "not-submitted" and late["reasons"] == []


def test_the_look_changes_no_decision(tmp_path: Path) -> None:
    """The run with the look at T gives the recorded jobs' starts up to T: b0 and a1 start
    at 0 in both, and the estimate's run with no arrival after T=1 matches the full run for
    the jobs submitted by then (nothing arrives later in FAIR but gpu-job)."""
    out = run(tmp_path, FAIR, "drf")
    rows = (out / "jobs.csv").read_text().splitlines()
    starts = {r.split(",")[0]: r.split(",")[3] for r in rows[1:]}
    assert why(out, "b1", 1.0)["estimated_start"] == float(starts["b1"])


def test_text_and_json_through_the_command(tmp_path: Path) -> None:
    out = run(tmp_path, FAIR, "drf")
    code, text = cli("explain", "b1", "--run", str(out), "--at", "1")
    assert code == 0
    assert text.splitlines() == [
        "b1 at t=1 (drf): pending",
        f"  fair-share: {why(out, 'b1', 1.0)['reasons'][0]['detail']}",
        "  ahead (served first, with their shares): alice (0.75)",
        "  estimated start: t=10 if no new job arrives",
    ]
    code, text = cli("explain", "b1", "--run", str(out), "--json")
    assert code == 0 and json.loads(text)["at"] == 1.0


def test_unknown_job_is_exit_2(tmp_path: Path) -> None:
    out = run(tmp_path, FAIR, "drf")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as done:
        main(["explain", "nope", "--run", str(out)])
    assert done.value.code == 2
    assert "jobs.csv" in err.getvalue() and "'nope'" in err.getvalue()


class Drained(Filter):
    """A custom filter with its own reason: machine m0 is drained."""

    stage = "launch"
    reason = "headroom"

    def admits(self, job: Any, mi: int, free: Any, now: float) -> bool:
        return self.ledger.cluster.names[mi] != "m0"

    def describe(self, job: Any, mi: int, free: Any, now: float) -> str:
        return f"{self.ledger.cluster.names[mi]} is drained"


def test_a_custom_filter_gives_its_reason() -> None:
    """The explanation asks the placer's own filters: a filter added to a scheduler (as
    tests/test_core_shape.py adds one to placement and preemption) gives its reason; m0 has
    room but is drained, m1 is full."""
    machines = [Machine("m0", np.array([2.0])), Machine("m1", np.array([2.0]))]
    policy = Scheduler(Cluster.build(["slots"], machines), filters=[Drained()])
    policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0]), 3))
    policy.decide(0.0)
    policy.job_submitted(0.0, 1, Job("y", 0.0, "b", np.array([1.0]), 1))
    policy.decide(0.0)
    got = explain(policy, 1)
    assert got.state == "pending"
    assert [(r.kind, r.detail, r.extra) for r in got.reasons] == [
        ("headroom", "m0 is drained", {"filter": "drained", "machines": 1})
    ]
    assert all(r.kind in KINDS for r in got.reasons)
