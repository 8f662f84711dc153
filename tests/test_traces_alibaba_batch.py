"""The Alibaba cluster-trace-v2017 and v2018 readers (``alibaba-2017``, ``alibaba-2018``:
:mod:`fairshare.workload.traces.alibaba_batch`) on the samples in ``data/samples/``, their bad
records, and the task DAGs they need (:attr:`fairshare.workload.model.Job.after_all`)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import fairshare
from fairshare.cluster import Cluster, Machine
from fairshare.sim.engine import simulate
from fairshare.workload.model import FixedDuration, Job
from fairshare.workload.traces import TraceError, open_trace

from conftest import SAMPLE_DATA

V2017 = SAMPLE_DATA / "alibaba-2017"
V2018 = SAMPLE_DATA / "alibaba-2018"
_DAG = re.compile(r"[A-Za-z]+(\d+)((?:_\d+)*)")


# ------------------------------------------------------------------- the samples


def test_v2018_sample_machines_and_tasks() -> None:
    workload = open_trace("alibaba-2018", V2018, None)
    cluster = workload.cluster
    assert len(cluster.machines) == 142
    assert cluster.resources == ("cpu", "mem")
    first = cluster.machines[0]
    # m_1,0,219,17,96,100,USING: rack failure_domain_1, both domains as attributes.
    assert (first.name, first.rack, dict(first.attributes)) == (
        "m_1",
        "219",
        {"failure_domain_1": 219, "failure_domain_2": 17},
    )
    assert cluster.capacities[0].tolist() == [96.0, 100.0]
    jobs = list(workload.jobs)
    assert len(jobs) == 400
    assert sum(job.tasks for job in jobs) == 4231
    assert len({job.user for job in jobs}) == 114
    by_name = {job.name: job for job in jobs}
    # 0,j_1446403,R23_22,268,50.0,0.3,9: task 23 of j_1446403 after its task 22 (M22 or R22).
    r23 = by_name["j_1446403/R23_22"]
    assert (r23.user, r23.tasks, r23.demand.tolist(), r23.submit) == (
        "j_1446403",
        9,
        [0.5, 0.3],
        0.0,
    )
    assert isinstance(r23.duration, FixedDuration) and r23.duration.seconds == 268.0
    (parent,) = r23.after_all
    found = _DAG.fullmatch(parent.removeprefix("j_1446403/"))
    assert found is not None and found[1] == "22"
    # J25_16_18_24 needs three tasks, each yielded before it.
    position = {job.name: i for i, job in enumerate(jobs)}
    j25 = by_name["j_1446403/J25_16_18_24"]
    assert len(j25.after_all) == 3
    assert all(position[p] < position[j25.name] for p in j25.after_all)
    assert not by_name[next(n for n in by_name if "/task_" in n)].after_all


def test_v2018_dag_order_in_a_simulation() -> None:
    """Every dependent task's first instance starts at or after the last finish of every
    task it names (the sample under DRF, on the machines the trace brings)."""
    workload = open_trace("alibaba-2018", V2018, None)
    log = simulate(workload.cluster, workload.jobs, "drf", seed=0)
    records = {record.job: record for record in log.jobs}
    assert len(records) == 400
    jobs = {job.name: job for job in open_trace("alibaba-2018", V2018, None).jobs}
    checked = 0
    for name, job in jobs.items():
        for parent in job.after_all:
            first_start = records[name].first_start
            parent_finish = records[parent].finish
            assert first_start is not None and parent_finish is not None
            assert first_start >= parent_finish, (name, parent)
            checked += 1
    assert checked == 299


def test_v2017_sample_finished_tasks_in_creation_order() -> None:
    workload = open_trace("alibaba-2017", V2017, None)
    assert len(workload.cluster.machines) == 400
    assert workload.cluster.capacities[0].tolist() == [64.0, 0.6900059534594777]
    jobs = list(workload.jobs)
    # 300 rows: 265 Terminated + 5 Failed kept, 28 Running + 2 Waiting dropped.
    assert len(jobs) == 270
    assert sum(job.tasks for job in jobs) == 123683 - 2467 - 845
    submits = [job.submit for job in jobs]
    assert submits == sorted(submits)
    assert list(workload.warnings) == [
        f"warning: {V2017 / 'batch_task.csv'}: skipped tasks: 30 Waiting or Running (no end time)"
    ]
    # 6459,6524,3,4,15740,Terminated,50,0.007956928: 15,740 instances of half a core, 65 s.
    task = next(job for job in jobs if job.name == "3/4")
    assert (task.user, task.tasks, task.submit, task.demand.tolist()) == (
        "3",
        15740,
        6459.0,
        [0.5, 0.007956928],
    )
    assert isinstance(task.duration, FixedDuration) and task.duration.seconds == 65.0


def test_the_scenario_machines_serve_when_given() -> None:
    cluster = Cluster.build(["memory", "cpu"], [Machine("m", np.array([1.0, 8.0]))])
    job = next(open_trace("alibaba-2018", V2018 / "sample_tasks.csv", cluster).jobs)
    assert (job.name, job.demand.tolist()) == ("j_1446403/M21", [0.59, 0.5])  # mem, cpu
    slots = Cluster.build(["slot"], [Machine("m", np.array([1.0]))])
    with pytest.raises(TraceError, match="demands cpu but the cluster has no resource named 'cpu'"):
        next(open_trace("alibaba-2017", V2017, slots).jobs)


# ------------------------------------------------------------------- bad records


def _trace(tmp: Path, tasks: str, machines: str = "m_1,0,1,1,96,100,USING\n") -> Path:
    (tmp / "sample_tasks.csv").write_text(tasks)
    (tmp / "machine_meta.csv").write_text(machines)
    return tmp


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        (
            "0,j_1,M1,5,100,1,1\n0,j_1,R2_1_3,5,100,1,1\n",
            "line 2: field task_name: 'R2_1_3' needs task 3, which job 'j_1' does not have",
        ),
        (
            "0,j_1,M1_2,5,100,1,1\n0,j_1,R2_1,5,100,1,1\n",
            "line 1: field task_name: 'M1_2' is in a dependency cycle of job 'j_1'",
        ),
        ("0,j_1,R1_1,5,100,1,1\n", "line 1: field task_name: 'R1_1' is in a dependency cycle"),
        (
            "0,j_1,M1,5,100,1,1\n0,j_1,R1,5,100,1,1\n",
            "line 2: field task_name: task number 1 repeats in job 'j_1' (first at line 1)",
        ),
        ("0,j_1,M1,5,lots,1,1\n", "line 1: field plan_cpu: must be a number"),
        ("0,j_1,M1,5,100,,1\n", "line 1: field plan_mem: must be a number"),
        ("0,j_1,M1,5,100,1,1.5\n", "line 1: field instance_num: must be a whole number"),
        ("0,j_1,M1,-5,100,1,1\n", "line 1: field duration: must be a number of seconds"),
        ("0,j_1,M1,5,100,1\n", "line 1: expected 7 comma-separated fields, got 6"),
        ("0,j_1,R2_x,5,100,1,1\n", "line 1: field task_name: a DAG task name is a letter"),
        (
            "0,j_1,M1,5,100,1,1\n0,j_2,M1,5,100,1,1\n0,j_1,M2,5,100,1,1\n",
            "line 3: field job_name: job 'j_1' has rows apart (first at line 1)",
        ),
        (
            "5,j_1,M1,5,100,1,1\n4,j_2,M1,5,100,1,1\n",
            "line 2: field arrival: 4 is before the previous row's (5)",
        ),
        ("0,j_1,M1,5,0,0,1\n", "line 1: field plan_cpu: the task demands no cpu or memory"),
        (
            "M1,1,j_1,1,Terminated,157213,157295,100,0.3\n",
            "line 1: has the official batch_task table's 9 columns; alibaba-2018 reads the",
        ),
    ],
)
def test_v2018_bad_records_name_the_line_and_field(
    tmp_path: Path, tasks: str, message: str
) -> None:
    trace = _trace(tmp_path, tasks)
    with pytest.raises(TraceError) as caught:
        list(open_trace("alibaba-2018", trace, None).jobs)
    assert str(caught.value).startswith(f"error: {trace / 'sample_tasks.csv'}: {message}")


@pytest.mark.parametrize(
    ("machines", "message"),
    [
        ("m_1,0,1,1,,100,USING\n", "line 1: field cpu_num: must be a number"),
        ("m_1,0,1,1,96,0,USING\n", "line 1: a machine needs a CPU and a memory capacity"),
        ("m_1,0,x,1,96,100,USING\n", "line 1: field failure_domain_1: must be a whole number"),
        ("", "file: lists no machines"),
    ],
)
def test_v2018_machine_table_without_capacities(
    tmp_path: Path, machines: str, message: str
) -> None:
    trace = _trace(tmp_path, "0,j_1,M1,5,100,1,1\n", machines)
    with pytest.raises(TraceError) as caught:
        open_trace("alibaba-2018", trace, None)
    assert str(caught.value).startswith(f"error: {trace / 'machine_meta.csv'}: {message}")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("1,2,3,4,5,Terminated,fifty,0.1", "line 2: field plan_cpu: must be a number"),
        ("1,2,3,4,5,Done,50,0.1", "line 2: field status: must be one of Terminated, Failed"),
        ("1,2,3,4,x,Terminated,50,0.1", "line 2: field instance_num: must be a whole number"),
        ("1,2,3,4,5,Terminated,50", "line 2: expected 8 comma-separated fields, got 7"),
    ],
)
def test_v2017_bad_records_name_the_line_and_field(tmp_path: Path, row: str, message: str) -> None:
    (tmp_path / "batch_task.csv").write_text(f"0,1,1,1,1,Terminated,50,0.1\r\n{row}\r\n")
    (tmp_path / "server_event.csv").write_text("0,1,add,,64,0.69,1\n")
    with pytest.raises(TraceError) as caught:
        list(open_trace("alibaba-2017", tmp_path, None).jobs)
    assert str(caught.value).startswith(f"error: {tmp_path / 'batch_task.csv'}: {message}")


def test_v2017_machine_without_capacity_and_missing_tables(tmp_path: Path) -> None:
    (tmp_path / "batch_task.csv").write_text("0,1,1,1,1,Terminated,50,0.1\n")
    (tmp_path / "server_event.csv").write_text("0,1,add,,,0.69,1\n")
    with pytest.raises(TraceError, match=r"server_event.csv: line 1: field cpu capacity"):
        open_trace("alibaba-2017", tmp_path, None)
    (tmp_path / "server_event.csv").unlink()
    with pytest.raises(TraceError, match=r"no server_event\.csv beside the task table"):
        open_trace("alibaba-2017", tmp_path, None)
    (tmp_path / "batch_task.csv").unlink()
    with pytest.raises(TraceError, match=r"holds no Alibaba v2017 batch_task.csv"):
        open_trace("alibaba-2017", tmp_path, Cluster.build(["cpu"], [Machine("m", np.ones(1))]))


# ------------------------------------------------------------------- after_all


def _job(name: str, submit: float, seconds: float, after: tuple[str, ...] = ()) -> Job:
    return Job(name, submit, "u", np.array([1.0]), 1, FixedDuration(seconds), after_all=after)


def test_a_job_with_after_all_waits_for_every_job_it_names() -> None:
    """c needs a (ends at 10) and b (ends at 4): submitted at 10, the later end, though a
    slot is free from 4; d needs only b and starts at 4."""
    cluster = Cluster.build(["slot"], [Machine(f"m{i}", np.array([1.0])) for i in range(3)])
    jobs = [
        _job("a", 0, 10),
        _job("b", 0, 4),
        _job("c", 0, 1, ("a", "b")),
        _job("d", 0, 2, ("b",)),
    ]
    log = simulate(cluster, jobs, "fifo", seed=0)
    runs = {record.job: (record.submit, record.first_start, record.finish) for record in log.jobs}
    assert runs == {
        "a": (0.0, 0.0, 10.0),
        "b": (0.0, 0.0, 4.0),
        "c": (10.0, 10.0, 11.0),
        "d": (4.0, 4.0, 6.0),
    }


def test_after_all_names_only_jobs_before() -> None:
    cluster = Cluster.build(["slot"], [Machine("m", np.array([1.0]))])
    with pytest.raises(fairshare.FairshareError, match=r"jobs\[1\]\.after_all"):
        simulate(cluster, [_job("a", 0, 1), _job("c", 0, 1, ("a", "z"))], "fifo", seed=0)


HUGE = "1" + "0" * 400
"""A 401-digit number: beyond the float range."""


@pytest.mark.parametrize(
    ("column", "field"),
    [(0, "arrival"), (3, "duration"), (4, "plan_cpu"), (5, "plan_mem"), (6, "instance_num")],
)
def test_v2018_huge_numbers_name_the_line_and_field(
    tmp_path: Path, column: int, field: str
) -> None:
    row = ["0", "j_2", "M1", "5", "100", "1", "1"]
    row[column] = HUGE
    trace = _trace(tmp_path, "0,j_1,M1,5,100,1,1\n" + ",".join(row) + "\n")
    with pytest.raises(TraceError) as caught:
        list(open_trace("alibaba-2018", trace, None).jobs)
    assert str(caught.value).startswith(
        f"error: {trace / 'sample_tasks.csv'}: line 2: field {field}:"
    )
    assert len(str(caught.value)) < 400 + len(str(trace))


@pytest.mark.parametrize(
    ("column", "field"),
    [
        (0, "create_timestamp"),
        (1, "modify_timestamp"),
        (4, "instance_num"),
        (6, "plan_cpu"),
        (7, "plan_mem"),
    ],
)
def test_v2017_huge_numbers_name_the_line_and_field(
    tmp_path: Path, column: int, field: str
) -> None:
    row = ["1", "5", "1", "2", "3", "Terminated", "50", "0.01"]
    row[column] = HUGE
    (tmp_path / "batch_task.csv").write_text("0,1,1,1,1,Terminated,50,0.1\n" + ",".join(row) + "\n")
    (tmp_path / "server_event.csv").write_text("0,1,add,,64,0.69,1\n")
    with pytest.raises(TraceError) as caught:
        list(open_trace("alibaba-2017", tmp_path, None).jobs)
    assert str(caught.value).startswith(
        f"error: {tmp_path / 'batch_task.csv'}: line 2: field {field}:"
    )
