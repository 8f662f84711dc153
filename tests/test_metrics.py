"""Metrics of run logs, against values computed by hand on tiny logs.

The main log (``tiny``): a cluster of two machines (cpu 4, mem 8 each; total 8, 16), two jobs
and four attempts.

    j1 (user a, submit 0, demand (1, 2), isolated 5): task 0 on m1 [0, 5) node-local;
       task 1 on m2 [0, 3) rack-local, killed; task 1 again on m1 [5, 10) rack-local.
    j2 (user b, submit 1, demand (2, 1), isolated 8): task 0 on m2 [4, 12) off-rack.

Response times 10 and 11, slowdowns 2 and 1.375, queueing delays 0 and 3, makespan 12.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.metrics import (
    allocation_rmse,
    compare_frame,
    compare_runs,
    fair_bin,
    jobs_frame,
    percentile,
    relative_slowdown,
    run_labels,
    size_bins,
    summary,
    tasks_frame,
    timeline,
    timeline_frame,
    write_run_files,
)
from fairshare.runlog import JobRecord, Locality, Phase, RunLog, TaskAttempt

CLUSTER = Cluster.build(
    ("cpu", "mem"),
    [Machine("m1", np.array([4.0, 8.0]), "r1"), Machine("m2", np.array([4.0, 8.0]), "r2")],
)


def job(
    name: str,
    user: str,
    submit: float,
    tasks: int,
    demand: tuple[float, float],
    first_start: float | None,
    finish: float | None,
    isolated: float,
) -> JobRecord:
    return JobRecord(
        name, user, "root", submit, tasks, np.array(demand), 1.0, first_start, finish, isolated
    )


def att(
    j: str,
    user: str,
    task: int,
    start: float,
    finish: float,
    *,
    attempt: int = 0,
    machine: str = "m1",
    killed: bool = False,
    locality: Locality | None = None,
    phase: Phase = "map",
) -> TaskAttempt:
    return TaskAttempt(j, user, phase, task, attempt, machine, start, finish, killed, locality)


def run(
    jobs: list[JobRecord],
    attempts: list[TaskAttempt],
    users: tuple[str, ...] = ("a", "b"),
    policy: str = "drf",
    wall: float = 0.5,
    options: dict[str, object] | None = None,
) -> RunLog:
    return RunLog(policy, 7, CLUSTER, users, tuple(jobs), tuple(attempts), 9, wall, options or {})


def tiny(wall: float = 0.5) -> RunLog:
    return run(
        [
            job("j1", "a", 0.0, 2, (1.0, 2.0), 0.0, 10.0, 5.0),
            job("j2", "b", 1.0, 1, (2.0, 1.0), 4.0, 12.0, 8.0),
        ],
        [
            att("j1", "a", 0, 0.0, 5.0, locality="node"),
            att("j1", "a", 1, 0.0, 3.0, machine="m2", killed=True, locality="rack"),
            att("j2", "b", 0, 4.0, 12.0, machine="m2", locality="off_rack"),
            att("j1", "a", 1, 5.0, 10.0, attempt=1, locality="rack"),
        ],
        wall=wall,
        options={"delay_scheduling": (5, 10)},
    )


def test_summary_hand_computed() -> None:
    s = summary(tiny())
    assert s["policy"] == "drf"
    assert s["seed"] == 7
    assert s["jobs"] == 2
    assert s["tasks"] == 3
    assert s["task_attempts"] == 4
    assert s["makespan"] == 12.0
    assert s["mean_response_time"] == 10.5
    assert s["p50_response_time"] == 10.5
    # Linear interpolation: rank 0.95 * (2 - 1) between 10 and 11.
    assert s["p95_response_time"] == 10.95
    assert s["mean_slowdown"] == pytest.approx((2.0 + 1.375) / 2)
    assert s["mean_queueing_delay"] == 1.5
    assert s["p95_queueing_delay"] == pytest.approx(2.85, rel=1e-12)
    # The killed rack-local attempt does not count: node, rack, off-rack once each.
    assert s["locality"] == {"node": 1 / 3, "rack": 1 / 3, "off_rack": 1 / 3}
    assert s["locality_tasks"] == 3
    # cpu: a runs 5 + 3 + 5 task-seconds x 1, b 8 x 2 -> 29 / (8 x 12).
    # mem: a 13 x 2, b 8 x 1 -> 34 / (16 x 12).
    assert s["utilization"] == pytest.approx({"cpu": 29 / 96, "mem": 34 / 192}, rel=1e-12)
    assert s["preempted_tasks"] == 1
    assert s["wasted_task_seconds"] == 3.0
    assert s["events"] == 9
    assert s["wall_seconds"] == 0.5
    assert s["unfinished_jobs"] == 0
    assert s["options"] == {"delay_scheduling": [5, 10]}
    users = s["users"]
    assert isinstance(users, dict)
    # a: share 0.25 on [0, 3), 0.125 on [3, 10); b: 0.25 on [4, 12); over 12 s.
    assert users["a"]["mean_share"] == pytest.approx(1.625 / 12, rel=1e-12)
    assert users["b"]["mean_share"] == pytest.approx(2.0 / 12, rel=1e-12)
    assert users["a"]["task_seconds"] == 10.0
    assert users["b"]["mean_slowdown"] == 1.375


def test_percentile_definition() -> None:
    values = np.array([1.0, 2.0, 3.0, 4.0, np.nan])
    assert percentile(values, 50) == 2.5
    assert percentile(values, 95) == pytest.approx(3.85)
    assert percentile(np.array([np.nan]), 50) is None


def test_timeline_rows_are_changes_only() -> None:
    frame = timeline_frame(tiny())
    assert frame.columns == ["time", "user", "running_tasks", "share", "queue_share"]
    # At t = 5 a's attempt ends as its retry starts: no change, no row.
    assert frame.rows() == [
        (0.0, "a", 2, 0.25, None),
        (3.0, "a", 1, 0.125, None),
        (4.0, "b", 1, 0.25, None),
        (10.0, "a", 0, 0.0, None),
        (12.0, "b", 0, 0.0, None),
    ]


def test_timeline_dominant_share_mixes_jobs_of_one_user() -> None:
    # Two jobs of user a with different demands: cpu (1 + 3) / 8 = 0.5 beats mem
    # (2 + 1) / 16 when both run.
    log = run(
        [
            job("j1", "a", 0.0, 1, (1.0, 2.0), 0.0, 4.0, 4.0),
            job("j2", "a", 0.0, 1, (3.0, 1.0), 2.0, 6.0, 4.0),
        ],
        [att("j1", "a", 0, 0.0, 4.0), att("j2", "a", 0, 2.0, 6.0)],
    )
    tl = timeline(log)
    assert tl.share.tolist() == [0.125, 0.5, 0.375, 0.0]
    assert tl.running.tolist() == [1, 2, 1, 0]


def test_jobs_csv_text(tmp_path: Path) -> None:
    write_run_files(tiny(), tmp_path)
    lines = (tmp_path / "jobs.csv").read_text().splitlines()
    assert lines[0].startswith("job,user,submit,first_start,finish,response_time,slowdown,tasks,")
    assert lines[1].startswith(
        "j1,a,0.000000,0.000000,10.000000,10.000000,2.000000,2,root,1.000000,2,1-25,"
    )
    assert lines[2].startswith("j2,b,1.000000,4.000000,12.000000,11.000000,1.375000,1,")
    frame = jobs_frame(tiny())
    assert frame["task_attempts"].to_list() == [3, 1]
    assert frame["killed_attempts"].to_list() == [1, 0]
    assert frame["node_local"].to_list() == [1, 0]
    assert frame["rack_local"].to_list() == [1, 0]
    assert frame["off_rack"].to_list() == [0, 1]


def test_tasks_parquet_round_trip(tmp_path: Path) -> None:
    write_run_files(tiny(), tmp_path)
    frame = pl.read_parquet(tmp_path / "tasks.parquet")
    assert frame.equals(tasks_frame(tiny()))
    assert frame["rack"].to_list() == ["r1", "r2", "r2", "r1"]
    assert frame["duration"].to_list() == [5.0, 3.0, 8.0, 5.0]
    assert frame["killed"].to_list() == [False, True, False, False]


def test_outputs_are_byte_identical(tmp_path: Path) -> None:
    write_run_files(tiny(), tmp_path / "one")
    write_run_files(tiny(), tmp_path / "two")
    write_run_files(tiny(wall=3.25), tmp_path / "three")
    for name in ("summary.json", "jobs.csv", "timeline.csv", "tasks.parquet"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    one = (tmp_path / "one" / "summary.json").read_text()
    three = (tmp_path / "three" / "summary.json").read_text()
    assert one.endswith("}\n")
    diff = [(x, y) for x, y in zip(one.splitlines(), three.splitlines(), strict=True) if x != y]
    assert diff == [('  "wall_seconds": 0.5,', '  "wall_seconds": 3.25,')]
    keys = list(json.loads(one))
    assert keys == sorted(keys)


def test_no_finished_jobs_and_no_input_data(tmp_path: Path) -> None:
    log = run(
        [
            job("j1", "a", 0.0, 2, (1.0, 1.0), 1.0, None, 5.0),
            job("j2", "b", 2.0, 1, (1.0, 1.0), None, None, 5.0),
        ],
        [att("j1", "a", 0, 1.0, 4.0, killed=True), att("j1", "a", 0, 4.0, 6.0, attempt=1)],
    )
    write_run_files(log, tmp_path)
    text = (tmp_path / "summary.json").read_text()
    assert "NaN" not in text
    assert "Infinity" not in text
    s = json.loads(text)
    assert s["unfinished_jobs"] == 2
    assert s["finished_jobs"] == 0
    for key in ("mean_response_time", "p50_response_time", "p95_response_time", "mean_slowdown"):
        assert s[key] is None
    assert s["locality"] == {"node": None, "rack": None, "off_rack": None}
    assert s["makespan"] == 6.0
    assert s["mean_queueing_delay"] == 1.0
    # 5 task-seconds of 1 cpu on 8 cpus over 6 s.
    assert s["utilization"]["cpu"] == pytest.approx(5 / 48, rel=1e-12)
    jobs = (tmp_path / "jobs.csv").read_text().splitlines()
    assert jobs[2].startswith("j2,b,2.000000,,,,,1,")


def test_empty_run() -> None:
    s = summary(run([], []))
    assert s["makespan"] == 0.0
    assert s["utilization"] == {"cpu": None, "mem": None}
    assert s["jobs"] == 0
    assert s["size_bins"] == []
    assert len(timeline(run([], []))) == 0


def test_fair_table2_bins() -> None:
    maps = np.array([0, 1, 25, 26, 50, 51, 100, 101, 3200, 3201, 10_000])
    assert fair_bin(maps).tolist() == [0, 0, 0, 1, 1, 2, 2, 3, 7, 8, 8]


def test_size_bins_count_maps_not_reduces() -> None:
    # 30 tasks of which 5 reduces (task 0 tried twice): 25 maps, bin 0 (1-25).
    reduces = [
        att("j1", "a", t, 1.0, 2.0, phase="reduce", attempt=0, locality=None) for t in range(5)
    ]
    reduces.append(att("j1", "a", 0, 2.0, 3.0, phase="reduce", attempt=1))
    big = [att("j2", "b", t, 0.0, 1.0, locality="node") for t in range(26)]
    log = run(
        [
            job("j1", "a", 0.0, 30, (1.0, 1.0), 1.0, 3.0, 1.5),
            job("j2", "b", 0.0, 26, (1.0, 1.0), 0.0, 1.0, 1.0),
        ],
        [*reduces, *big],
    )
    rows = size_bins(log)
    assert [(r["maps"], r["jobs"], r["mean_slowdown"]) for r in rows] == [
        ("1-25", 1, 2.0),
        ("26-50", 1, 1.0),
    ]
    assert rows[0]["locality"] == {"node": None, "rack": None, "off_rack": None}
    assert rows[1]["locality"] == {"node": 1.0, "rack": 0.0, "off_rack": 0.0}


def _pair() -> tuple[RunLog, RunLog]:
    """Run A: a at 0.125 and b at 0.25 on [0, 10). Run B: b's job ends at 5."""
    a = run(
        [
            job("ja", "a", 0.0, 1, (1.0, 2.0), 0.0, 10.0, 10.0),
            job("jb", "b", 0.0, 1, (2.0, 1.0), 0.0, 10.0, 10.0),
        ],
        [att("ja", "a", 0, 0.0, 10.0), att("jb", "b", 0, 0.0, 10.0)],
        policy="fifo",
    )
    b = run(
        [
            job("ja", "a", 0.0, 1, (1.0, 2.0), 0.0, 10.0, 10.0),
            job("jb", "b", 0.0, 1, (2.0, 1.0), 0.0, 5.0, 5.0),
        ],
        [att("ja", "a", 0, 0.0, 10.0), att("jb", "b", 0, 0.0, 5.0)],
        policy="choosy",
    )
    return a, b


def test_allocation_rmse_choosy_definition() -> None:
    a, b = _pair()
    series = allocation_rmse(a, b)
    # [0, 5): identical vectors. [5, 10): b differs by 0.25, both users present in run A.
    assert series.start.tolist() == [0.0, 5.0]
    assert series.width.tolist() == [5.0, 5.0]
    assert series.users.tolist() == [2, 2]
    expected = math.sqrt(0.25**2 / 2)
    assert series.rmse == pytest.approx([0.0, expected])
    stats = series.stats()
    assert stats["mean"] == pytest.approx(expected / 2)
    assert stats["p50"] == 0.0
    assert stats["p95"] == pytest.approx(expected)
    assert stats["max"] == pytest.approx(expected)
    assert allocation_rmse(a, a).stats()["max"] == 0.0


def test_relative_slowdown_choosy_table1_bins() -> None:
    def one(name: str, finish: float) -> JobRecord:
        return job(name, "a", 0.0, 1, (1.0, 1.0), 0.0, finish, finish)

    ref = run([one("x", 10.0), one("y", 40.0), one("z", 100.0), one("w", 30.0)], [])
    mine = run([one("x", 12.0), one("y", 40.0), one("z", 50.0), one("w", 15.0)], [])
    rows = relative_slowdown(mine, ref)
    assert [r["jobs"] for r in rows] == [1, 3, 0, 0]
    assert rows[0]["mean_slowdown"] == pytest.approx(1.2)
    assert rows[0]["std_slowdown"] == 0.0
    # 30 s goes to the 30-120 s bin: ratios 1.0, 0.5 and 0.5.
    assert rows[1]["mean_slowdown"] == pytest.approx(2 / 3)
    assert rows[1]["std_slowdown"] == pytest.approx(np.std([1.0, 0.5, 0.5]))
    assert rows[2]["mean_slowdown"] is None


def test_compare_document_and_csv() -> None:
    a, b = _pair()
    doc = compare_runs([a, b], reference=1)
    assert doc["reference"] == "choosy"
    runs = doc["runs"]
    assert isinstance(runs, list)
    assert runs[1]["rmse_vs_reference"]["max"] == 0.0
    assert runs[0]["rmse_vs_reference"]["max"] == pytest.approx(math.sqrt(0.25**2 / 2), rel=1e-12)
    frame = compare_frame(doc)
    assert frame.columns[:3] == ["label", "policy", "seed"]
    assert frame.columns[-2:] == ["utilization_cpu", "utilization_mem"]
    assert frame["label"].to_list() == ["fifo", "choosy"]
    with pytest.raises(ValueError, match="out of range"):
        compare_runs([a], reference=3)
    assert compare_runs([a, b], reference="choosy")["reference"] == "choosy"
    with pytest.raises(ValueError, match="runs: fifo, choosy"):
        compare_runs([a, b], reference="tsf")


def test_run_labels_distinguish_options() -> None:
    a = run([], [], policy="fair", options={"delay_scheduling": [5, 10]})
    b = run([], [], policy="fair")
    c = run([], [], policy="drf")
    d = run([], [], policy="drf")
    assert run_labels([a, b, c, d]) == [
        "fair [delay_scheduling=[5, 10]]",
        "fair [delay_scheduling=null]",
        "drf #1",
        "drf #2",
    ]
