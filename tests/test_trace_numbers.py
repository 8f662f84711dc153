"""Numbers at the edge (issue 14, items 6 and 7): every number of a trace record and of a
scenario's times is finite and within its documented bound, a repeated job id names the
trace line, and extreme but finite input prints no numpy warning and no ``inf``.

The trace files are built here; nothing needs the shared samples.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.workload.loader import ScenarioError, load_scenario
from fairshare.workload.traces import TraceError, open_trace

from conftest import assert_rejected, run_fairshare

HUGE = "1" + "0" * 400
"""A 401-digit integer: beyond the float range (int -> float overflowed, maps hung)."""


def cluster(resources: tuple[str, ...] = ("cpu", "mem", "gpu")) -> Cluster:
    capacity = np.full(len(resources), 8.0)
    capacity.setflags(write=False)
    return Cluster.build(resources, [Machine(f"m{i}", capacity) for i in range(4)])


def replay(fmt: str, path: Path) -> TraceError:
    """The error of reading every job of the trace at ``path``."""
    with pytest.raises(TraceError) as err:
        for _ in open_trace(fmt, path, cluster()).jobs:
            pass
    assert "\n" not in str(err.value) and len(str(err.value)) < 400 + len(str(path))
    return err.value


SWIM_GOOD = "job0\t10\t10\t740773\t2339561\t627471\n"


def swim(tmp_path: Path, second: str) -> Path:
    path = tmp_path / "t.tsv"
    path.write_text(SWIM_GOOD + second + "\n")
    return path


@pytest.mark.parametrize(
    ("column", "name"),
    [
        (1, "submit time (column 2)"),
        (2, "gap (column 3)"),
        (3, "map input bytes (column 4)"),
        (4, "shuffle bytes (column 5)"),
        (5, "reduce output bytes (column 6)"),
    ],
)
@pytest.mark.parametrize("value", [HUGE, "1e308", "inf", "nan", "-5", "1" + "0" * 30])
def test_swim_huge_numbers_name_the_line_and_field(
    tmp_path: Path, column: int, name: str, value: str
) -> None:
    fields = ["job1", "20", "10", "1000", "1000", "1000"]
    fields[column] = value
    path = swim(tmp_path, "\t".join(fields))
    err = replay("swim", path)
    assert (err.file, err.where) == (str(path), "line 2")
    assert err.what.startswith(f"field {name}: must be a whole number from 0 to ")
    shown = repr(value) if len(value) <= 40 else f"{value[:40]!r}... ({len(value):,} characters)"
    assert err.what.endswith(f", got {shown}")


def test_swim_bounds_are_the_documented_ones(tmp_path: Path) -> None:
    # The largest accepted values replay; one more is rejected.
    top = f"job1\t{10**15}\t0\t{10**6 * 128 * 2**20}\t{10**6 * 2**30}\t{10**18}"
    jobs = list(open_trace("swim", swim(tmp_path, top), cluster()).jobs)
    assert jobs[1].submit == 1e15 and jobs[1].tasks == 10**6
    assert jobs[1].reduce is not None and jobs[1].reduce.tasks == 10**6
    over = f"job1\t20\t0\t{10**6 * 128 * 2**20 + 1}\t0\t0"
    err = replay("swim", swim(tmp_path, over))
    assert err.what.startswith(
        "field map input bytes (column 4): must be a whole number from 0 to "
        "134,217,728,000,000 (at most 1,000,000 maps of 128 MiB)"
    )


SWF_ROW = ["2", "100", "5", "60", "4", "-1", "-1", "4", "120", "-1", "1", "7", "1", "1", "1"]
SWF_ROW += ["-1", "-1", "-1"]


def swf(tmp_path: Path, index: int, value: str, suffix: str = ".swf") -> Path:
    row = list(SWF_ROW)
    row[index] = value
    first = " ".join(["1", "0", *SWF_ROW[2:]])
    path = tmp_path / f"t{suffix}"
    text = f"; header\n{first}\n{' '.join(row)}\n"
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("index", "name"),
    [
        (0, "job number (field 1)"),
        (1, "submit time (field 2)"),
        (3, "run time (field 4)"),
        (4, "allocated processors (field 5)"),
        (7, "requested processors (field 8)"),
        (11, "user id (field 12)"),
    ],
)
@pytest.mark.parametrize("value", ["1e308", HUGE, "inf", "nan", "-5"])
def test_swf_huge_numbers_name_the_line_and_field(
    tmp_path: Path, index: int, name: str, value: str
) -> None:
    path = swf(tmp_path, index, value, ".swf.gz")
    err = replay("swf", path)
    assert (err.file, err.where) == (str(path), "line 3")
    assert err.what.startswith(f"field {name}: must be a number ")
    assert "(missing)" in err.what


def test_swf_processors_beyond_the_task_bound_are_rejected(tmp_path: Path) -> None:
    # Before: 1e7 processors became a job of 10 million tasks, 1e300 of 10^300.
    err = replay("swf", swf(tmp_path, 4, "10000001"))
    assert err.what == (
        "field allocated processors (field 5): must be a number from 0 to 1e+06, or -1 "
        "(missing), got '10000001'"
    )


def test_swf_submit_plus_run_time_at_the_bound_stays_finite(tmp_path: Path) -> None:
    path = swf(tmp_path, 3, "1e15")
    path.write_text(path.read_text().replace(" 100 ", " 1000000000000000 ", 1))
    jobs = list(open_trace("swf", path, cluster()).jobs)
    assert jobs[1].submit == 1e15
    assert np.isfinite(jobs[1].submit + jobs[1].duration.seconds)  # type: ignore[attr-defined]


POD_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    "creation_time,deletion_time,scheduled_time\n"
)
POD = ["p1", "500", "256", "1", "1000", "", "BE", "Running", "5", "65", "6"]


def pods(tmp_path: Path, index: int, value: str) -> Path:
    row = list(POD)
    row[index] = value
    path = tmp_path / "pods.csv"
    path.write_text(POD_HEADER + "p0,500,256,0,0,,BE,Running,0,60,1\n" + ",".join(row) + "\n")
    return path


@pytest.mark.parametrize(
    ("index", "name"),
    [
        (1, "cpu_milli"),
        (2, "memory_mib"),
        (3, "num_gpu"),
        (4, "gpu_milli"),
        (8, "creation_time"),
        (9, "deletion_time"),
        (10, "scheduled_time"),
    ],
)
@pytest.mark.parametrize("value", ["1e308", HUGE, "inf", "nan", "-5", "1e-300"])
def test_alibaba_huge_numbers_name_the_line_and_field(
    tmp_path: Path, index: int, name: str, value: str
) -> None:
    path = pods(tmp_path, index, value)
    err = replay("alibaba-gpu", path)
    assert (err.file, err.where) == (str(path), "line 3")
    assert err.what.startswith(f"field {name}: must be a number 0 or from ")


def test_alibaba_node_list_huge_capacity_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(POD_HEADER + ",".join(POD) + "\n")
    nodes = tmp_path / "openb_node_list_gpu_node.csv"
    nodes.write_text(f"sn,cpu_milli,memory_mib,gpu,model\nn0,8000,4096,1,T4\nn1,{HUGE},1,0,\n")
    with pytest.raises(TraceError) as err:
        open_trace("alibaba-gpu", path, None)
    assert (err.value.file, err.value.where) == (str(nodes), "line 3")
    assert err.value.what.startswith("field cpu_milli: must be a number 0 or from 1e-06 to 1e+18")


def google(tmp_path: Path, rows: list[str]) -> Path:
    table = tmp_path / "trace" / "job_events"
    table.mkdir(parents=True)
    shard = table / "part-00000-of-00001.csv.gz"
    shard.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode(), mtime=0))
    return shard


@pytest.mark.parametrize(
    ("row", "name"),
    [
        (f"{HUGE},,7,0,u,0,n,l", "timestamp (field 1)"),
        (f"{10**21 + 1},,7,0,u,0,n,l", "timestamp (field 1)"),
        (f"700000000,,{2**63},0,u,0,n,l", "job ID (field 3)"),
        ("700000000,,7,1e3,u,0,n,l", "event type (field 4)"),
    ],
)
def test_google_huge_numbers_name_the_shard_line_and_field(
    tmp_path: Path, row: str, name: str
) -> None:
    shard = google(tmp_path, ["600000000,,6,0,u,0,n,l", row])
    with pytest.raises(TraceError) as err:
        list(open_trace("google-2011", tmp_path / "trace", cluster()).jobs)
    assert (err.value.file, err.value.where) == (str(shard), "line 2")
    assert err.value.what.startswith(f"field {name}: must be a whole number from 0 to ")


# --------------------------------------------------------------------------------------------
# Item 7: a repeated job id is the trace's error, at the second occurrence's line


def test_duplicate_job_ids_name_the_trace_line(tmp_path: Path) -> None:
    cases = {
        "swim": swim(tmp_path, "job1\t20\t10\t1\t0\t0\njob0\t30\t10\t1\t0\t0"),
        "swf": swf(tmp_path, 0, "1"),
        "alibaba-gpu": pods(tmp_path, 0, "p0"),
    }
    names = {"swim": "job id (column 1) 'job0'", "swf": "job number (field 1) '1'"}
    names["alibaba-gpu"] = "pod name 'p0'"
    lines = {"swim": 3, "swf": 3, "alibaba-gpu": 3}
    firsts = {"swim": 1, "swf": 2, "alibaba-gpu": 2}
    for fmt, path in cases.items():
        err = replay(fmt, path)
        assert (err.file, err.where) == (str(path), f"line {lines[fmt]}")
        assert err.what == (
            f"{names[fmt]} repeats (first at line {firsts[fmt]}); job ids must be unique"
        )


def test_google_resubmitted_job_id_is_one_job(tmp_path: Path) -> None:
    # A job ID names one job in google-2011: a later SUBMIT of it is ignored (no repeat).
    google(tmp_path, ["600000000,,6,0,u,0,n,l", "600000001,,6,4,u,0,n,l", "600000002,,6,0,u"
                      ",0,n,l", "600000003,,6,4,u,0,n,l"])  # fmt: skip
    jobs = list(open_trace("google-2011", tmp_path / "trace", cluster()).jobs)
    assert [j.name for j in jobs] == ["6"]


# --------------------------------------------------------------------------------------------
# Scenario times: submit + duration never overflows


@pytest.mark.parametrize(
    ("job", "where", "what"),
    [
        ("{name: a, submit: 1.0e+308, tasks: 1, duration: 1.0e+308}", "jobs[0].submit",
         "must be a number of seconds from 0 to 1e+15, got 1e+308"),
        ("{name: a, submit: 0, tasks: 1, duration: 1.0e+16}", "jobs[0].duration",
         "must be a number of seconds from 1e-06 to 1e+15, got 1e+16"),
        ("{name: a, submit: 0, tasks: 1, duration: 1.0e-300}", "jobs[0].duration",
         "must be a number of seconds from 1e-06 to 1e+15, got 1e-300"),
        ("{name: a, submit: 0, tasks: 2, duration: [1, 1.0e+308]}", "jobs[0].duration[1]",
         "must be a number of seconds from 1e-06 to 1e+15, got 1e+308"),
        ("{name: a, submit: 0, tasks: 1, duration: {pareto: {alpha: 2, min: 1.0e+300}}}",
         "jobs[0].duration.pareto.min", "must be a number of seconds from 1e-06 to 1e+15"),
        ("{name: a, submit: 0, tasks: 1, duration: 1, reduce: {tasks: 1, copy: 1.0e+308}}",
         "jobs[0].reduce.copy", "must be a number of seconds from 0 to 1e+15, got 1e+308"),
    ],
)  # fmt: skip
def test_submit_plus_duration_overflow_is_rejected(
    tmp_path: Path, job: str, where: str, what: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"machines: [{{name: m, capacity: {{cpu: 2}}}}]\njobs: [{job}]\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.where == where
    assert what in err.value.what


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("machines: [{name: m, capacity: {cpu: 1.0e+300}}]\nusers: [{name: u}]",
         "machines[0].capacity.cpu"),
        ("machines: [{name: m, capacity: {cpu: 2}}]\nusers: [{name: u, demand: {cpu: 1.0e-300}}]",
         "users[0].demand.cpu"),
        ("machines: [{name: m, capacity: {cpu: 2}}]\nusers: [{name: u, weight: 1.0e+300}]",
         "users[0].weight"),
        ("machines: [{name: m, capacity: {cpu: 2}}]\nusers: [{name: u, min_share: 1.0e+300}]",
         "users[0].min_share"),
    ],
)  # fmt: skip
def test_amounts_beyond_the_float_safe_range_are_rejected(
    tmp_path: Path, text: str, where: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert err.value.where == where


# --------------------------------------------------------------------------------------------
# Through the executable: one error line; no RuntimeWarning and no inf at the bounds


def simulate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    scenario = tmp_path / "s.yaml"
    if not scenario.exists():
        scenario.write_text("machines: [{name: m, count: 4, capacity: {cpu: 8, mem: 8, gpu: 2}}]\n")
    return run_fairshare(
        "simulate", str(scenario), "--policy", "drf", *args, "--out", str(tmp_path / "out")
    )


def test_huge_swim_numbers_are_one_error_line_through_the_executable(tmp_path: Path) -> None:
    for column, name in ((1, "submit time (column 2)"), (3, "map input bytes (column 4)"),
                         (4, "shuffle bytes (column 5)")):  # fmt: skip
        fields = ["job1", "20", "10", "1000", "1000", "1000"]
        fields[column] = HUGE
        trace = swim(tmp_path, "\t".join(fields))
        line = assert_rejected(simulate(tmp_path, "--trace", f"swim:{trace}"))
        assert line.startswith(f"error: {trace}: line 2: field {name}: must be a whole number")
        assert len(line) < 300 + len(str(trace))
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("fmt", "line", "what"),
    [
        ("swim", 3, "job id (column 1) 'job0' repeats (first at line 1)"),
        ("swf", 3, "job number (field 1) '1' repeats (first at line 2)"),
        ("alibaba-gpu", 3, "pod name 'p0' repeats (first at line 2)"),
    ],
)
def test_duplicate_job_ids_name_the_trace_line_through_the_executable(
    tmp_path: Path, fmt: str, line: int, what: str
) -> None:
    trace = {
        "swim": lambda: swim(tmp_path, "job1\t20\t10\t1\t0\t0\njob0\t30\t10\t1\t0\t0"),
        "swf": lambda: swf(tmp_path, 0, "1"),
        "alibaba-gpu": lambda: pods(tmp_path, 0, "p0"),
    }[fmt]()
    error = assert_rejected(simulate(tmp_path, "--trace", f"{fmt}:{trace}"))
    assert error == f"error: {trace}: line {line}: {what}; job ids must be unique"
    assert not (tmp_path / "out").exists()


def strict_json(text: str) -> object:
    def refuse(token: str) -> object:
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_submit_plus_duration_at_the_bound_keeps_the_summary_finite(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "machines: [{name: m, capacity: {cpu: 1}}]\n"
        "jobs:\n"
        "  - {name: a, submit: 0, tasks: 1, duration: 1.0e+15}\n"
        "  - {name: b, submit: 1.0e+15, tasks: 1, duration: 1.0e+15}\n"
    )
    done = simulate(tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = strict_json((tmp_path / "out" / "summary.json").read_text())
    assert isinstance(summary, dict) and summary["makespan"] == 2e15
    overflowing = tmp_path / "big"
    overflowing.mkdir()
    (overflowing / "s.yaml").write_text(
        "machines: [{name: m, capacity: {cpu: 1}}]\n"
        "jobs: [{name: a, submit: 1.0e+308, tasks: 1, duration: 1.0e+308}]\n"
    )
    line = assert_rejected(simulate(overflowing))
    assert line.startswith(f"error: {overflowing / 's.yaml'}: jobs[0].submit: ")
    assert line.endswith("must be a number of seconds from 0 to 1e+15, got 1e+308")
    assert not (overflowing / "out").exists()


EXTREME = """\
machines:
  - {name: m1, capacity: {cpu: 1.0e+15, mem: 1.0e-9}, rack: r1}
  - {name: m2, capacity: {cpu: 1.0e-9, mem: 1.0e+15}, rack: r2}
queues:
  - {path: a, weight: 1.0e-9, min_share: 1.0e-300, max_share: 1.0e+15}
  - {path: b, weight: 1.0e+9}
users:
  - {name: u1, demand: {cpu: 1.0e-9, mem: 1.0e+15}, queue: a, max_tasks: 1.0e+15}
  - {name: u2, demand: {cpu: 1.0e+15, mem: 1.0e-9}, weight: 1.0e-9, queue: b, max_share: 1.0e-300}
  - {name: u3, demand: {cpu: 1.0e-9, mem: 1.0e-9}, weight: 1.0e+9, max_tasks: 1.0e-300}
jobs:
  - {name: j1, submit: 0, user: u1, demand: {cpu: 1.0e-9, mem: 1.0e+15}, tasks: 3,
     duration: 1.0e-6, input: {replicas: 2}, reduce: {tasks: 2, copy: 1.0e-300, compute: 1.0e+15}}
  - {name: j2, submit: 1.0e-300, user: u2, demand: {cpu: 1.0e+15, mem: 1.0e-9}, tasks: 2,
     duration: 1.0e+15, weight: 1.0e-9}
  - {name: j4, submit: 5, user: u2, demand: {cpu: 1.0e-9, mem: 1.0e-9}, tasks: 2,
     duration: {pareto: {alpha: 0.1, min: 1.0e+15}}}
  - {name: j5, submit: 6, demand: {cpu: 1.0e-9, mem: 1.0e-9}, tasks: 2,
     duration: {exponential: {mean: 1.0e-6}}}
  - {name: j3, submit: 1.0e+15, user: u3, demand: {cpu: 1.0e-9, mem: 1.0e-9}, tasks: 2,
     duration: 1.0e-6, weight: 1.0e+9}
"""
"""Every amount, weight and time at its bound (and tiny caps, shares, submits)."""


def fairshare_strict(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m fairshare`` with every RuntimeWarning an error (a traceback, exit 1)."""
    return subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "fairshare", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize("policy", ["fifo", "fair", "drf", "hdrf", "tsf", "choosy", "cmmf-cpu"])
def test_extreme_finite_numbers_print_no_runtime_warnings_in_simulate(
    tmp_path: Path, policy: str
) -> None:
    (tmp_path / "s.yaml").write_text(EXTREME)
    done = fairshare_strict("simulate", "s.yaml", "--policy", policy, "--out", "o", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr
    strict_json((tmp_path / "o" / "summary.json").read_text())


@pytest.mark.parametrize("policy", ["drf", "asset", "ceei", "hdrf", "collapsed-drf"])
def test_extreme_finite_numbers_print_no_runtime_warnings_in_solve(
    tmp_path: Path, policy: str
) -> None:
    (tmp_path / "s.yaml").write_text(EXTREME)
    done = fairshare_strict("solve", "s.yaml", "--policy", policy, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(line.startswith("warning: ") for line in done.stderr.splitlines())
    strict_json(done.stdout)


def test_values_beyond_the_bounds_are_one_error_line_not_warnings(tmp_path: Path) -> None:
    # 1e300 capacities and 1e-300 demands printed screens of overflow warnings before.
    (tmp_path / "s.yaml").write_text(
        EXTREME.replace("1.0e+15, mem: 1.0e-9}, rack", "1.0e+300, mem: 1.0e-300}, rack")
    )
    for args in (("solve", "s.yaml", "--policy", "drf", "--json"),
                 ("simulate", "s.yaml", "--policy", "drf", "--out", "o")):  # fmt: skip
        done = fairshare_strict(*args, cwd=tmp_path)
        line = assert_rejected(done)
        assert line.startswith("error: s.yaml: machines[0].capacity.cpu: ")
        assert "must be 0 or from 1e-09 to 1e+15, got 1e+300" in line


@pytest.mark.parametrize(
    ("option", "value", "what"),
    [
        ("--delay-scheduling", "1.7e308,1.7e308",
         "times must be numbers of seconds from 0 to 1e+15, got '1.7e308,1.7e308'"),
        ("--preemption", "5,1e16", "times must be numbers of seconds from 0 to 1e+15"),
        ("--until", "1.7e308", "must be a number >= 0, at most 1e+15, got 1.7e+308"),
        ("--rack-slowdown", "1e308", "must be a number > 0, at most 1e+06, got 1e+308"),
        ("--off-rack-slowdown", "1e7", "must be a number > 0, at most 1e+06, got 1e+07"),
    ],
)  # fmt: skip
def test_option_times_and_factors_beyond_the_bounds_are_rejected(
    tmp_path: Path, option: str, value: str, what: str
) -> None:
    # --delay-scheduling 1.7e308,1.7e308 summed waits to inf (numpy: invalid value in
    # subtract); slowdown factors of 1e308 overflowed the task times.
    (tmp_path / "s.yaml").write_text(EXTREME)
    done = fairshare_strict(
        "simulate", "s.yaml", "--policy", "fair", option, value, "--out", "o", cwd=tmp_path
    )
    line = assert_rejected(done)
    assert line.startswith(f"error: s.yaml: {option}: ") and what in line
    assert not (tmp_path / "o").exists()


def test_every_share_rounding_to_zero_still_writes_the_report(tmp_path: Path) -> None:
    # Capacities of 1e15 slots: every dominant share (1e-15) rounds to 0 in the timeline, and
    # the allocation figure's empty stack was a matplotlib TypeError (exit 1).
    (tmp_path / "s.yaml").write_text(
        "machines: [{name: m, count: 5, capacity: {cpu: 1.0e+15}, rack: r}]\n"
        "workload: {generator: zipf, jobs: 10}\n"
    )
    done = fairshare_strict("simulate", "s.yaml", "--policy", "fair", "--out", "o", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "every dominant share rounds to 0" in (tmp_path / "o" / "report.html").read_text()
