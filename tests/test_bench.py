"""`fairshare bench` on tiny sizes: structure, counts and errors (never timings), and the
benchmark workloads pinned so the recorded figures stay comparable."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from fairshare.bench import online, scaling, simulate, solve
from fairshare.cli import main
from fairshare.workload.model import Job

ROOT = Path(__file__).parents[1]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    captured = capsys.readouterr()
    code = stop.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def assert_one_line_error(code: int, out: str, err: str, start: str) -> None:
    assert code == 2 and out == ""
    assert err.startswith(start) and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_online_json_counts_every_placement(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "online", "--machines", "40", "--jobs", "5", "--tasks", "4"]
    code, out, err = run([*argv, "--policies", "drf,tsf", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["benchmark"] == "online"
    assert (doc["machines"], doc["jobs"], doc["tasks"], doc["decisions"]) == (40, 5, 4, 20)
    assert doc["bare_heap_rate"] > 0
    assert doc["repeat"] == 3
    assert [p["policy"] for p in doc["policies"]] == ["drf", "tsf"]
    for entry in doc["policies"]:
        assert set(entry) == {
            "policy",
            "placements",
            "events",
            "cpu_seconds",
            "wall_seconds",
            "rate",
            "best_rate",
            "x_bare_heap",
            "cpu_seconds_runs",
        }
        # 40 machines hold every task at once: one launch per task, no retries.
        assert entry["placements"] == 5 * 4
        assert entry["events"] > 0
        # The median run of three, and the best no slower than it.
        runs = entry["cpu_seconds_runs"]
        assert len(runs) == 3
        assert entry["cpu_seconds"] == sorted(runs)[1]
        assert entry["best_rate"] >= entry["rate"]


def test_online_times_the_cost_of_a_usage_half_life(capsys: pytest.CaptureFixture[str]) -> None:
    """``--usage-half-life``: each policy plain and with usage over time, side by side, with
    the second's rate over the first's; the same placements either way on a cluster that
    holds every task."""
    argv = ["bench", "online", "--machines", "40", "--jobs", "5", "--tasks", "4"]
    code, out, err = run([*argv, "--policies", "drf", "--usage-half-life", "60", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["usage_half_life"] == 60.0
    entries = doc["policies"]
    assert [(e["policy"], e["variant"]) for e in entries] == [("drf", "plain"), ("drf", "usage")]
    assert entries[0]["x_plain"] == 1.0
    assert entries[1]["x_plain"] == pytest.approx(entries[1]["rate"] / entries[0]["rate"], rel=1e-3)
    assert entries[0]["placements"] == entries[1]["placements"] == 20
    code, out, err = run([*argv, "--usage-half-life", "0"], capsys)
    assert_one_line_error(code, out, err, "error: command line: --usage-half-life: ")
    code, out, err = run([*argv, "--usage-half-life", "60", "--gangs"], capsys)
    assert_one_line_error(code, out, err, "error: command line: --usage-half-life: ")


def test_online_figures_take_the_median_run_and_the_best_rate() -> None:
    runs = [online.OnlineRun("drf", 100, 120, cpu, cpu) for cpu in (2.0, 1.0, 4.0, 3.0)]
    figures = online.figures_of(runs)
    # Of an even count, the slower middle run.
    assert figures.median.cpu_seconds == 3.0
    assert figures.best_rate == 100.0
    assert figures.runs == tuple(runs)
    assert online.figures_of(runs[:3]).median.cpu_seconds == 2.0


def test_online_table_names_each_policy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["bench", "online", "--machines", "10", "--jobs", "3", "--tasks", "2"], capsys
    )
    assert code == 0
    for text in ("drf", "tsf", "choosy", "placements", "bare heap", "10 machines"):
        assert text in out


@pytest.mark.parametrize(
    ("argv", "start"),
    [
        (
            ["bench", "online", "--jobs", "5", "--policies", "drf,nope"],
            "error: command line: --policies: unknown online policy 'nope'; allowed: fifo,",
        ),
        (
            ["bench", "online", "--policies", "drf,,tsf"],
            "error: command line: --policies: expected a comma-separated list",
        ),
        (["bench", "nope"], "error: command line: fairshare bench: No such command 'nope'"),
        (
            ["bench", "end-to-end", "--policies", "drf,nope"],
            "error: command line: --policies: unknown online policy 'nope'; allowed: fifo,",
        ),
        (
            ["bench", "end-to-end", "--repeat", "0"],
            "error: command line: fairshare bench end-to-end: ",
        ),
        (
            ["bench", "simulate", "--only", "everything"],
            "error: command line: --only: unknown benchmark case 'everything'; allowed: choosy,",
        ),
        (
            ["bench", "simulate", "--only", "tsf", "--policies", "drf,zzz"],
            "error: command line: --policies: unknown online policy 'zzz'",
        ),
        (
            ["bench", "simulate", "--only", "offline", "--policies", "drf"],
            "error: command line: --policies: unknown reference scheduler 'drf'",
        ),
        (
            ["bench", "solve", "--only", "hierarchy,nope"],
            "error: command line: --only: unknown benchmark case 'nope'; allowed: hierarchy,",
        ),
        (["bench", "online", "--jobs", "0"], "error: command line: fairshare bench online: "),
        (
            ["bench", "scaling", "--sizes", "200,0"],
            "error: command line: --sizes: must be positive whole numbers of jobs",
        ),
        (
            ["bench", "scaling", "--policies", "nope"],
            "error: command line: --policies: unknown online policy 'nope'",
        ),
    ],
)
def test_bad_benchmark_or_policy_is_one_line_and_exit_2(
    argv: list[str], start: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_one_line_error(*run(argv, capsys), start)


def test_end_to_end_json_times_each_policy_against_its_simulation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["bench", "end-to-end", "--machines", "20", "--jobs", "4", "--tasks", "3"]
    code, out, err = run([*argv, "--policies", "drf,fifo", "--repeat", "2", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert {k: doc[k] for k in ("benchmark", "machines", "jobs", "tasks", "repeat")} == {
        "benchmark": "end-to-end",
        "machines": 20,
        "jobs": 4,
        "tasks": 3,
        "repeat": 2,
    }
    assert [p["policy"] for p in doc["policies"]] == ["drf", "fifo"]
    for figure in doc["policies"]:
        assert set(figure) == {
            "policy",
            "wall_seconds",
            "simulation_seconds",
            "ratio",
            "cpu_seconds",
            "simulation_cpu_seconds",
            "cpu_ratio",
            "wall_seconds_runs",
            "cpu_seconds_runs",
        }
        assert len(figure["wall_seconds_runs"]) == len(figure["cpu_seconds_runs"]) == 2
        # The whole process includes the simulation it reports.
        assert figure["wall_seconds"] > figure["simulation_seconds"] > 0
        assert figure["cpu_seconds"] > figure["simulation_cpu_seconds"] > 0
        assert figure["ratio"] == pytest.approx(
            figure["wall_seconds"] / figure["simulation_seconds"], rel=1e-3
        )
        assert figure["cpu_ratio"] == pytest.approx(
            figure["cpu_seconds"] / figure["simulation_cpu_seconds"], rel=1e-3
        )


def test_end_to_end_table_names_each_policy(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "end-to-end", "--machines", "10", "--jobs", "2", "--tasks", "2"]
    code, out, _ = run([*argv, "--policies", "tsf", "--repeat", "1"], capsys)
    assert code == 0
    assert "fairshare simulate end to end: 10 machines, 2 jobs x 2 tasks" in out
    assert "end-to-end s" in out and "ratio" in out
    assert any(line.startswith("│ tsf ") for line in out.splitlines())


def test_simulate_json_runs_every_case_in_a_child(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "simulate", "--machines", "20", "--jobs", "6", "--policies", "drf"]
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert (doc["benchmark"], doc["machines"], doc["jobs"]) == ("simulate", 20, 6)
    runs = doc["runs"]
    assert [(r["case"], r["policy"], r["target_seconds"]) for r in runs] == [
        ("choosy", "choosy", 1.5),
        ("choosy", "offline-restricted", 20.0),
        ("tsf", "drf", 2.0),
    ]
    for r in runs:
        assert set(r) == {
            "case",
            "policy",
            "target_seconds",
            "jobs",
            "task_attempts",
            "events",
            "seconds",
            "peak_rss_mib",
        }
        assert r["jobs"] == 6 and r["peak_rss_mib"] > 0
    # No preemption and no `until` in the TSF case: each task runs exactly once.
    tsf_tasks = sum(job.tasks for job in simulate.tsf_jobs(np.random.default_rng(1), 6))
    assert runs[2]["task_attempts"] == tsf_tasks
    # The child ran the same deterministic workload as this process would.
    here = simulate.run_case("tsf", "drf", 20, 6)
    assert (here["task_attempts"], here["events"]) == (tsf_tasks, runs[2]["events"])


def test_simulate_table_marks_shrunk_runs(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "simulate", "--only", "tsf", "--policies", "fifo", "--machines", "10"]
    code, out, _ = run([*argv, "--jobs", "4"], capsys)
    assert code == 0
    assert "shrunk: not comparable" in out and "fifo" in out and "< 2.0" in out


def test_scaling_json_runs_every_size_of_every_policy_in_a_child(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["bench", "scaling", "--policies", "drf,fair", "--sizes", "3,6", "--machines", "20"]
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert (doc["benchmark"], doc["machines"], doc["arrival"]) == ("scaling", 20, 12.0)
    assert [entry["policy"] for entry in doc["policies"]] == ["drf", "fair"]
    for entry in doc["policies"]:
        runs = entry["runs"]
        assert [(r["policy"], r["jobs"]) for r in runs] == [
            (entry["policy"], 3),
            (entry["policy"], 6),
        ]
        for r in runs:
            # No preemption and no `until`: every map and reducer runs exactly once.
            jobs = scaling.workload(entry["policy"], r["jobs"], 20).jobs
            assert r["tasks"] == sum(j.tasks + (j.reduce.tasks if j.reduce else 0) for j in jobs)
            assert r["cpu_seconds"] >= 0 and r["rate"] > 0
        assert entry["ratio"] == pytest.approx(runs[0]["rate"] / runs[1]["rate"], rel=1e-3)
    # Fair's jobs have reducers; drf's are single-phase.
    assert any(j.reduce for j in scaling.workload("fair", 6, 20).jobs)
    assert not any(j.reduce for j in scaling.workload("drf", 6, 20).jobs)


def test_scaling_table_names_each_policy_and_size(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "scaling", "--policies", "hdrf", "--sizes", "2,4", "--machines", "12"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert "hdrf" in out and "2 jobs" in out and "4 jobs" in out and "ratio" in out


def test_solve_json_times_each_policy_of_each_case(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "solve", "--only", "hierarchy,tsf", "--users", "12", "--repeat", "1"]
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["benchmark"] == "solve"
    hierarchy, tsf = doc["cases"]
    assert (hierarchy["case"], hierarchy["users"], hierarchy["queues"]) == ("hierarchy", 12, 110)
    assert (hierarchy["machines"], hierarchy["machine_types"]) == (100, 3)
    assert [(r["policy"], r["integral"]) for r in hierarchy["in_process"]] == [
        (policy, integral)
        for policy in ("drf", "hdrf", "collapsed-drf", "asset", "ceei")
        for integral in (False, True)
    ]
    assert [r["policy"] for r in hierarchy["end_to_end"]] == ["drf", "hdrf"]
    assert all(r["tasks"] > 0 for r in hierarchy["in_process"])
    assert (tsf["case"], tsf["users"], tsf["machines"], tsf["machine_types"]) == (
        "tsf",
        12,
        1000,
        100,
    )
    assert tsf["in_process"][0]["lp_solves"] >= 1
    assert 0 <= tsf["narrow_users"] <= 1 and tsf["repeat"] == 1


def test_scripts_are_wrappers_over_the_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "online_throughput.py"),
            "--machines",
            "10",
            "--jobs",
            "3",
            "--tasks",
            "2",
            "--policies",
            "fifo",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["policies"][0]["placements"] == 6


def test_cli_start_does_not_import_the_benchmarks() -> None:
    """Nor the simulator: of ``fairshare.sim`` only the table of the commands' options,
    which imports nothing (its package loads the engine on first use)."""
    code = (
        "import sys, fairshare.cli; prefixes = ('fairshare.bench', 'fairshare.sim'); "
        "print(sorted(m for m in sys.modules if m.startswith(prefixes)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['fairshare.sim', 'fairshare.sim.option_table']"


# The workloads behind the recorded figures, pinned: a change here makes old and new figures
# incomparable, so it must be deliberate (and the figures re-measured).


def _digest(jobs: Iterable[Job]) -> str:
    h = hashlib.sha256()
    for j in jobs:
        constraint = None if j.constraint is None else str(j.constraint)
        demand = tuple(np.asarray(j.demand).tolist())
        h.update(
            repr((j.name, j.submit, j.user, demand, j.tasks, repr(j.duration), constraint)).encode()
        )
    return h.hexdigest()[:16]


def test_online_workload_is_unchanged() -> None:
    cluster, jobs = online.workload()
    assert len(cluster.machines) == 10_000 and len(jobs) == 1000
    assert sum(job.constraint is not None for job in jobs) == 333
    assert _digest(jobs) == "a14d07ffb047cad5"


def test_simulate_workloads_are_unchanged() -> None:
    jobs = simulate.tsf_jobs(np.random.default_rng(simulate.SEED))
    assert len(jobs) == 4500 and sum(job.tasks for job in jobs) == 179_692
    assert _digest(jobs) == "04293f7907e5948b"
    assert len(simulate.tsf_cluster().machines) == 1000
    workload = simulate.choosy_workload()
    assert len(workload.cluster.machines) == 1000
    assert _digest(workload.jobs) == "257b039591555101"


def test_scaling_workloads_are_unchanged() -> None:
    constrained = scaling.workload("drf", 200)
    assert len(constrained.cluster.machines) == 1000 and constrained.options is None
    assert sum(job.tasks for job in constrained.jobs) == 71_431
    assert _digest(constrained.jobs) == "713998c9efac49b0"
    queued = scaling.workload("hdrf", 200)
    assert {job.queue for job in queued.jobs} == set(scaling.LEAF_QUEUES)
    assert _digest(queued.jobs) == "f1b85f5f8f360360"
    delayed = scaling.workload("fair", 200)
    assert delayed.options is not None and delayed.options.delay == (5.0, 10.0)
    assert _digest(delayed.jobs) == "aeef25b439d25295"


@pytest.mark.parametrize(
    ("case", "digest"),
    [("hierarchy", "ddd26f3857cc7f33"), ("cmmf", "0e609609d77370b4"), ("tsf", "2679139533108e0e")],
)
def test_solve_scenarios_are_unchanged(case: str, digest: str) -> None:
    spec = solve.CASES[case]
    document = json.dumps(spec.build(spec.users), sort_keys=True).encode()
    assert hashlib.sha256(document).hexdigest()[:16] == digest
