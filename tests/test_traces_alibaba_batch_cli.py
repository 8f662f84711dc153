"""``fairshare simulate --trace alibaba-2017:PATH`` / ``alibaba-2018:PATH`` through the installed
executable: an empty scenario is enough (the trace brings the machines), and a bad record is
exit code 2 and one ``error:`` line naming the file, the line and the field (SPEC section 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SAMPLE_DATA, assert_rejected, run_fairshare

OUTPUTS = {"summary.json", "jobs.csv", "timeline.csv", "tasks.parquet", "report.html"}


def _simulate(tmp_path: Path, trace: str) -> tuple[Path, list[str]]:
    scenario = tmp_path / "empty.yaml"
    scenario.write_text("{}\n")
    out = tmp_path / "out"
    argv = ["simulate", str(scenario), "--policy", "drf", "--trace", trace, "--out", str(out)]
    return out, argv


@pytest.mark.parametrize(("fmt", "jobs", "tasks"), [("2017", 270, 120371), ("2018", 400, 4231)])
def test_an_empty_scenario_replays_the_sample(
    tmp_path: Path, fmt: str, jobs: int, tasks: int
) -> None:
    out, argv = _simulate(tmp_path, f"alibaba-{fmt}:{SAMPLE_DATA / f'alibaba-{fmt}'}")
    done = run_fairshare(*argv)
    assert done.returncode == 0, done.stderr
    assert {path.name for path in out.iterdir()} >= OUTPUTS
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["jobs"], summary["tasks"]) == (jobs, tasks)
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    if fmt == "2017":  # 28 Running and 2 Waiting rows of the sample
        assert any("skipped tasks: 30 Waiting or Running (no end time)" in w for w in warnings)


@pytest.mark.parametrize(
    ("tasks", "machines", "bad", "where"),
    [
        ("0,j_1,M1,5,100,1,1\n0,j_1,R2_1_3,5,100,1,1\n", None, "sample_tasks.csv",
         "line 2: field task_name: 'R2_1_3' needs task 3"),
        ("0,j_1,M1_2,5,100,1,1\n0,j_1,R2_1,5,100,1,1\n", None, "sample_tasks.csv",
         "line 1: field task_name: 'M1_2' is in a dependency cycle"),
        ("0,j_1,M1,5,100,1,1\n0,j_1,M2,5,many,1,1\n", None, "sample_tasks.csv",
         "line 2: field plan_cpu: must be a number"),
        ("0,j_1,M1,5,100,1,1\n", "m_1,0,1,1,,,USING\n", "machine_meta.csv",
         "line 1: field cpu_num: must be a number"),
    ],
)  # fmt: skip
def test_a_bad_record_is_one_error_line(
    tmp_path: Path, tasks: str, machines: str | None, bad: str, where: str
) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "sample_tasks.csv").write_text(tasks)
    (trace / "machine_meta.csv").write_text(machines or "m_1,0,1,1,96,100,USING\n")
    out, argv = _simulate(tmp_path, f"alibaba-2018:{trace}")
    line = assert_rejected(run_fairshare(*argv))
    assert line.startswith(f"error: {trace / bad}: {where}"), line
    assert not out.exists()


def test_a_non_numeric_v2017_demand_is_one_error_line(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "batch_task.csv").write_text("1,5,1,1,2,Terminated,50,0.01\n2,9,1,2,3,Failed,50,x\n")
    (trace / "server_event.csv").write_text("0,1,add,,64,0.69,1\n")
    out, argv = _simulate(tmp_path, f"alibaba-2017:{trace}")
    line = assert_rejected(run_fairshare(*argv))
    assert line.startswith(f"error: {trace / 'batch_task.csv'}: line 2: field plan_mem: must be")
    assert not out.exists()
