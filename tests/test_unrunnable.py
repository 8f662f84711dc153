"""Issue 14 items 9 and 10: jobs that can never run, and machines that come from a trace.

Item 9: a job whose tasks fit on no machine it may use (a demand larger than every machine, a
constraint that matches no machine, or both together) is warned about before the run and
counted in ``summary.json``; its ``jobs.csv`` row has empty fields, never ``inf``.

Item 10: with ``--trace alibaba-gpu:PATH`` (or ``google-2011`` with a ``machine_events``
table) a scenario may omit ``machines`` (SPEC section 3: "the node list beside it gives the
machines unless the scenario has them").
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.report import write_outputs
from fairshare.sim.engine import simulate
from fairshare.workload.eligibility import MATCHES_NO_MACHINE, TaskFit
from fairshare.workload.loader import parse_scenario

from conftest import SAMPLE_DATA, assert_rejected, run_fairshare

UNRUNNABLE_SCENARIO = {
    "machines": [
        {"name": "small", "capacity": {"cpu": 4, "mem": 8}, "attributes": {"gpu": False}},
        {"name": "wide", "capacity": {"cpu": 2, "mem": 16}},
    ],
    "jobs": [
        {"name": "ok", "submit": 0, "demand": {"cpu": 1, "mem": 1}, "tasks": 4, "duration": 10},
        # cpu 8 is more than any machine has
        {"name": "too-big", "submit": 1, "demand": {"cpu": 8, "mem": 1}, "tasks": 2, "duration": 5},
        # no machine has the attribute gpu true
        {
            "name": "no-match",
            "submit": 2,
            "demand": {"cpu": 1, "mem": 1},
            "tasks": 1,
            "duration": 5,
            "constraint": "gpu",
        },
        # the only machine the constraint allows (small) has mem 8 < 10, though wide has 16
        {
            "name": "both",
            "submit": 3,
            "demand": {"cpu": 1, "mem": 10},
            "tasks": 1,
            "duration": 5,
            "constraint": "gpu == false",
        },
    ],
}


def strict_json(text: str) -> object:
    def refuse(token: str) -> object:
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# Item 9: the one check (TaskFit) and what the run reports


def test_task_fit_says_why_each_job_can_never_run() -> None:
    scenario = parse_scenario(UNRUNNABLE_SCENARIO, "s.json")
    fit = TaskFit(scenario.cluster.machines, scenario.cluster.resources)
    reasons = {job.name: fit.never_runs(job) for job in scenario.jobs}
    assert reasons == {
        "ok": None,
        "too-big": "its task demand (cpu 8, mem 1) fits on no machine",
        "no-match": MATCHES_NO_MACHINE,
        "both": "its task demand (cpu 1, mem 10) fits on no machine its constraint allows",
    }


def test_unrunnable_reduce_phase_is_caught_too() -> None:
    document = {
        "machines": [{"name": "m", "capacity": {"map": 2, "reduce": 1}}],
        "jobs": [
            {
                "name": "mr",
                "submit": 0,
                "demand": {"map": 1},
                "tasks": 2,
                "duration": 1,
                "reduce": {"tasks": 1, "compute": 1, "demand": {"reduce": 2}},
            }
        ],
    }
    scenario = parse_scenario(document, "s.json")
    fit = TaskFit(scenario.cluster.machines, scenario.cluster.resources)
    assert fit.never_runs(scenario.jobs[0]) == "its task demand (reduce 2) fits on no machine"


def test_unrunnable_jobs_counted_in_summary_and_means_over_finished_jobs(tmp_path: Path) -> None:
    scenario = parse_scenario(UNRUNNABLE_SCENARIO, "s.json")
    log = simulate(scenario.cluster, sorted(scenario.jobs, key=lambda j: j.submit), "drf", seed=0)
    doc = write_outputs(log, tmp_path)
    assert doc["unrunnable_jobs"] == 3
    assert doc["unrunnable_job_ids"] == ["too-big", "no-match", "both"]
    assert doc["unfinished_jobs"] == 3 and doc["finished_jobs"] == 1
    assert doc["mean_response_time"] == 10.0 and doc["mean_slowdown"] == 1.0
    strict_json((tmp_path / "summary.json").read_text())


def test_unrunnable_job_rows_in_jobs_csv_have_empty_fields_not_inf(tmp_path: Path) -> None:
    scenario = parse_scenario(UNRUNNABLE_SCENARIO, "s.json")
    log = simulate(scenario.cluster, sorted(scenario.jobs, key=lambda j: j.submit), "drf", seed=0)
    write_outputs(log, tmp_path)
    text = (tmp_path / "jobs.csv").read_text()
    assert "inf" not in text.lower()
    rows = {row["job"]: row for row in csv.DictReader(text.splitlines())}
    for name in ("too-big", "no-match", "both"):
        row = rows[name]
        assert (row["finish"], row["response_time"], row["slowdown"]) == ("", "", "")
        assert row["isolated_response"] == ""
    assert rows["ok"]["isolated_response"] == "10.000000"


def test_simulate_warns_once_per_unrunnable_job_and_counts_them(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.json", UNRUNNABLE_SCENARIO)
    out = tmp_path / "out"
    done = run_fairshare("simulate", str(scenario), "--policy", "drf", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines == [
        f"warning: {scenario}: job 'too-big' can never run: its task demand (cpu 8, mem 1) "
        "fits on no machine; it is reported unfinished and counted in summary.json's "
        "unrunnable_jobs",
        f"warning: {scenario}: job 'no-match' can never run: its constraint matches no "
        "machine; it is reported unfinished and counted in summary.json's unrunnable_jobs",
        f"warning: {scenario}: job 'both' can never run: its task demand (cpu 1, mem 10) fits "
        "on no machine its constraint allows; it is reported unfinished and counted in "
        "summary.json's unrunnable_jobs",
    ]
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict)
    assert summary["unrunnable_jobs"] == 3 and summary["finished_jobs"] == 1
    assert "jobs that can never run" in done.stdout
    assert "inf" not in (out / "jobs.csv").read_text().lower()


def test_simulate_summarises_many_unrunnable_jobs_in_one_warning(tmp_path: Path) -> None:
    jobs = [
        {"name": f"j{k}", "submit": k, "demand": {"cpu": 9}, "tasks": 1, "duration": 1}
        for k in range(12)
    ]
    jobs.append({"name": "fits", "submit": 20, "demand": {"cpu": 1}, "tasks": 1, "duration": 1})
    document = {"machines": [{"name": "m", "capacity": {"cpu": 4}}], "jobs": jobs}
    scenario = write(tmp_path / "s.json", document)
    out = tmp_path / "out"
    done = run_fairshare("simulate", str(scenario), "--policy", "fifo", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"warning: {scenario}: 12 jobs can never run ('j0', 'j1', 'j2', 'j3', 'j4' and 7 more; "
        "'j0': its task demand (cpu 9) fits on no machine); they are reported unfinished and "
        "counted in summary.json's unrunnable_jobs"
    ]
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict)
    assert summary["unrunnable_jobs"] == 12
    assert summary["unrunnable_job_ids"] == [f"j{k}" for k in range(12)]


def test_compare_warns_once_and_counts_unrunnable_jobs_per_policy(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.json", UNRUNNABLE_SCENARIO)
    out = tmp_path / "out"
    done = run_fairshare("compare", str(scenario), "--policies", "drf,fifo", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 3 and all(line.startswith("warning: ") for line in lines)
    for policy in ("drf", "fifo"):
        summary = strict_json((out / policy / "summary.json").read_text())
        assert isinstance(summary, dict) and summary["unrunnable_jobs"] == 3
    strict_json((out / "compare.json").read_text())


def test_rejected_policy_prints_no_unrunnable_warning(tmp_path: Path) -> None:
    # cmmf-mem shares memory, which this cluster lacks: the one error line is all there is
    document = {
        "machines": [{"name": "m", "capacity": {"cpu": 4}}],
        "jobs": [{"name": "big", "submit": 0, "demand": {"cpu": 9}, "tasks": 1, "duration": 1}],
    }
    scenario = write(tmp_path / "s.json", document)
    done = run_fairshare(
        "simulate", str(scenario), "--policy", "cmmf-mem", "--out", str(tmp_path / "out")
    )
    assert "mem" in assert_rejected(done)
    assert not (tmp_path / "out").exists()


def test_engine_slots_come_from_task_fit() -> None:
    # The slowdown denominator and the warning ask the same object: a machine of 0.3 holds
    # three tasks of 0.1 (float rounding), so the isolated response is one task's duration.
    capacity = np.array([0.3])
    capacity.setflags(write=False)
    cluster = Cluster.build(("cpu",), [Machine("m", capacity, None, {})])
    document = {
        "machines": [{"name": "m", "capacity": {"cpu": 0.3}}],
        "jobs": [{"name": "j", "submit": 0, "demand": {"cpu": 0.1}, "tasks": 3, "duration": 2}],
    }
    job = parse_scenario(document, "s.json").jobs[0]
    assert TaskFit(cluster.machines, cluster.resources).slots(None, None, job.demand) == 3
    log = simulate(cluster, [job], "fifo", seed=0)
    assert log.jobs[0].isolated_response == 2.0


@pytest.mark.parametrize("policy", ["fifo", "tsf"])
def test_unrunnable_job_does_not_block_the_others(policy: str) -> None:
    scenario = parse_scenario(UNRUNNABLE_SCENARIO, "s.json")
    log = simulate(scenario.cluster, scenario.jobs, policy, seed=0)
    finished = {r.job for r in log.jobs if r.finish is not None}
    assert finished == {"ok"}


def test_jobs_after_until_are_not_warned_about(tmp_path: Path) -> None:
    document = {
        "machines": [{"name": "m", "capacity": {"cpu": 4}}],
        "jobs": [
            {"name": "early", "submit": 0, "demand": {"cpu": 1}, "tasks": 1, "duration": 1},
            {"name": "late-big", "submit": 50, "demand": {"cpu": 9}, "tasks": 1, "duration": 1},
        ],
    }
    scenario = write(tmp_path / "s.json", document)
    out = tmp_path / "out"
    done = run_fairshare(
        "simulate", str(scenario), "--policy", "fifo", "--until", "10", "--out", str(out)
    )
    assert (done.returncode, done.stderr) == (0, "")
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict) and summary["unrunnable_jobs"] == 0


# ---------------------------------------------------------------------------------------------
# Item 10: machines from the trace when the scenario lists none

NODES = """sn,cpu_milli,memory_mib,gpu,model
node-a,8000,16384,0,
node-b,16000,65536,2,V100M16
node-c,16000,65536,1,T4
"""
PODS = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    """pod-0,4000,8192,0,0,,LS,Running,0,100,0
pod-1,8000,32768,1,1000,V100M16,LS,Running,10,70,10
pod-2,2000,4096,1,500,,BE,Running,20,50,20
pod-3,32000,4096,0,0,,BE,Pending,30,60,
"""
)


def alibaba_trace(directory: Path, node_list: str = "openb_node_list_all_node.csv") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / node_list).write_text(NODES, encoding="utf-8")
    pods = directory / "openb_pod_list_default.csv"
    pods.write_text(PODS, encoding="utf-8")
    return pods


def simulate_trace(
    scenario: Path, trace: str, out: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    return run_fairshare(
        "simulate", str(scenario), "--policy", "drf", "--trace", trace, "--out", str(out), *extra
    )


@pytest.mark.parametrize("text", ["{}", "users:\n  - {name: pod-0, weight: 2, demand: {cpu: 1}}\n"])
def test_scenario_without_machines_uses_the_alibaba_node_list(text: str, tmp_path: Path) -> None:
    pods = alibaba_trace(tmp_path / "trace")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    done = simulate_trace(scenario, f"alibaba-gpu:{pods}", out)
    assert done.returncode == 0, done.stderr
    # pod-3 asks for 32 cores; the biggest node has 16
    assert done.stderr.splitlines() == [
        f"warning: {pods}: job 'pod-3' can never run: its task demand (cpu 32, mem 4) fits on "
        "no machine; it is reported unfinished and counted in summary.json's unrunnable_jobs"
    ]
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict)
    assert summary["machines"] == 3
    assert (summary["jobs"], summary["finished_jobs"], summary["unrunnable_jobs"]) == (4, 3, 1)
    assert set(summary["utilization"]) == {"cpu", "mem", "gpu"}  # type: ignore[arg-type]
    machines_used = {row["machine"] for row in csv.DictReader(tasks_csv(out))}
    assert machines_used <= {"node-a", "node-b", "node-c"}


def tasks_csv(out: Path) -> list[str]:
    return pl.read_parquet(out / "tasks.parquet").write_csv().splitlines()


def test_gpu_node_list_is_used_when_the_all_node_list_is_absent(tmp_path: Path) -> None:
    pods = alibaba_trace(tmp_path / "trace", "openb_node_list_gpu_node.csv")
    scenario = write(tmp_path / "s.json", {})
    out = tmp_path / "out"
    done = simulate_trace(scenario, f"alibaba-gpu:{pods}", out)
    assert done.returncode == 0, done.stderr
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict) and summary["machines"] == 3


def test_scenario_machines_win_over_the_node_list(tmp_path: Path) -> None:
    pods = alibaba_trace(tmp_path / "trace")
    big = {
        "name": "big",
        "count": 2,
        "capacity": {"cpu": 64, "mem": 256, "gpu": 8},
        "attributes": {"gpu_model": "V100M16"},
    }
    document = {"machines": [big]}
    scenario = write(tmp_path / "s.json", document)
    out = tmp_path / "out"
    done = simulate_trace(scenario, f"alibaba-gpu:{pods}", out)
    assert (done.returncode, done.stderr) == (0, "")
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict)
    assert (summary["machines"], summary["finished_jobs"], summary["unrunnable_jobs"]) == (2, 4, 0)


def test_compare_without_machines_uses_the_node_list(tmp_path: Path) -> None:
    pods = alibaba_trace(tmp_path / "trace")
    scenario = write(tmp_path / "s.json", {})
    out = tmp_path / "out"
    done = run_fairshare(
        "compare",
        str(scenario),
        "--policies",
        "drf,tsf",
        "--trace",
        f"alibaba-gpu:{pods}",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    for policy in ("drf", "tsf"):
        summary = strict_json((out / policy / "summary.json").read_text())
        assert isinstance(summary, dict) and summary["machines"] == 3


@pytest.mark.parametrize(
    ("fmt", "why"),
    [
        ("swim", "a swim trace lists no machines"),
        ("swf", "a swf trace lists no machines"),
        ("google-2011", "the google-2011 job_events table lists no machines"),
    ],
)
def test_trace_without_machines_needs_them_in_the_scenario(
    fmt: str, why: str, tmp_path: Path
) -> None:
    scenario = write(tmp_path / "s.json", {})
    done = simulate_trace(scenario, f"{fmt}:{tmp_path / 'trace'}", tmp_path / "out")
    assert assert_rejected(done) == (
        f"error: {scenario}: machines: missing required field 'machines': {why}; list the "
        "machines in the scenario"
    )
    assert not (tmp_path / "out").exists()


def test_alibaba_without_node_list_or_machines_is_one_error_line(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    pods = trace / "openb_pod_list_default.csv"
    pods.write_text(PODS, encoding="utf-8")
    scenario = write(tmp_path / "s.json", {})
    line = assert_rejected(simulate_trace(scenario, f"alibaba-gpu:{pods}", tmp_path / "out"))
    assert line.startswith(f"error: {scenario}: machines: missing required field 'machines': ")
    assert "no node list is beside the pod list" in line


def test_corrupt_node_list_names_its_line(tmp_path: Path) -> None:
    pods = alibaba_trace(tmp_path / "trace")
    (pods.parent / "openb_node_list_all_node.csv").write_text(NODES + "node-d,lots,1,0,\n")
    scenario = write(tmp_path / "s.json", {})
    line = assert_rejected(simulate_trace(scenario, f"alibaba-gpu:{pods}", tmp_path / "out"))
    assert line.startswith(f"error: {pods.parent / 'openb_node_list_all_node.csv'}: line 5: ")


@pytest.mark.parametrize("command", ["solve", "simulate"])
def test_no_machines_and_no_trace_is_still_an_error(command: str, tmp_path: Path) -> None:
    document = {
        "users": [{"name": "u", "demand": {"cpu": 1}}],
        "jobs": [{"name": "j", "submit": 0, "tasks": 1, "duration": 1, "demand": {"cpu": 1}}],
    }
    scenario = write(tmp_path / "s.json", document)
    tail = ["--policy", "drf"] + (["--out", str(tmp_path / "out")] if command == "simulate" else [])
    line = assert_rejected(run_fairshare(command, str(scenario), *tail))
    assert (
        line
        == f"error: {scenario}: machines: missing required field 'machines' (at least one machine)"
    )


def test_resources_must_match_the_trace_machines(tmp_path: Path) -> None:
    pods = alibaba_trace(tmp_path / "trace")
    scenario = write(tmp_path / "s.json", {"resources": ["cpu", "gpu"]})
    line = assert_rejected(simulate_trace(scenario, f"alibaba-gpu:{pods}", tmp_path / "out"))
    assert line == (
        f"error: {scenario}: resources: the machines come from the trace, whose resources are "
        "cpu, mem, gpu; omit 'resources' or list exactly those"
    )


def test_user_demand_checked_against_the_trace_machines(tmp_path: Path) -> None:
    pods = alibaba_trace(tmp_path / "trace")
    document = {"users": [{"name": "u", "demand": {"disk": 1}}]}
    scenario = write(tmp_path / "s.json", document)
    line = assert_rejected(simulate_trace(scenario, f"alibaba-gpu:{pods}", tmp_path / "out"))
    assert line == (
        f"error: {scenario}: users[0].demand.disk: unknown resource 'disk'; "
        "resources: cpu, mem, gpu"
    )


def test_alibaba_sample_without_machines_runs_on_its_node_list(tmp_path: Path) -> None:
    pods = SAMPLE_DATA / "alibaba-gpu" / "openb_pod_list_default.csv"
    nodes = SAMPLE_DATA / "alibaba-gpu" / "openb_node_list_all_node.csv"
    scenario = write(tmp_path / "s.json", {})
    out = tmp_path / "out"
    done = simulate_trace(scenario, f"alibaba-gpu:{pods}", out, "--until", "100000")
    assert (done.returncode, done.stderr) == (0, "")
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict)
    assert summary["machines"] == len(nodes.read_text().splitlines()) - 1 == 1523


def test_rejected_trace_prints_no_unrunnable_warning(tmp_path: Path) -> None:
    # pod-3 can never run, and a later pod repeats a name: the run is rejected part-way,
    # and the one error line is all there is (the fuzz test found this)
    pods = alibaba_trace(tmp_path / "trace")
    with pods.open("a", encoding="utf-8") as handle:
        handle.write("pod-0,1000,1024,0,0,,BE,Running,40,60,40\n")
    scenario = write(tmp_path / "s.json", {})
    line = assert_rejected(simulate_trace(scenario, f"alibaba-gpu:{pods}", tmp_path / "out"))
    assert "'pod-0' repeats" in line
    assert not (tmp_path / "out").exists()
