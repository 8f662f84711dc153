"""H-DRF section 5's per-server headroom (``--headroom``, ``PolicyOptions.headroom``).

The paper keeps on each server "a headroom equal to the size of the largest task, to ensure
that large tasks do not get starved out" (section 5), "by tasks with smaller demands"
(section 5.2). Issue 14 item 11: the headroom was the element-wise maximum of every demand,
usable only by a task of exactly that size, so on section 5.2's servers (6 GB, 4 CPUs, 1 GPU)
with CPU and GPU tasks no GPU task ever started, and the run ended without a word.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.policies import PolicyOptions, make_policy
from fairshare.runlog import RunLog
from fairshare.sim.engine import simulate
from fairshare.workload.loader import load_scenario
from fairshare.workload.model import FixedDuration, Job

from conftest import EXAMPLES, assert_rejected, run_fairshare, simulate_text

SECTION_5_2 = EXAMPLES / "sim-hdrf-section-5.2.yaml"


def _jobs_csv(path: Path) -> dict[str, tuple[str, str, str]]:
    with path.open() as f:
        return {
            row["job"]: (row["first_start"], row["finish"], row["tasks"])
            for row in csv.DictReader(f)
        }


def _run(text: str, tmp_path: Path, policy: str = "hdrf", *, headroom: bool = True) -> RunLog:
    return simulate_text(text, tmp_path, policy, headroom=headroom)


def _starts(log: RunLog, job: str) -> list[tuple[float, str]]:
    return sorted((a.start, a.machine) for a in log.attempts if a.job == job)


def _spans(log: RunLog) -> dict[str, tuple[float | None, float | None]]:
    return {j.job: (j.first_start, j.finish) for j in log.jobs}


# ------------------------------------------------------------------ the defect (section 5.2)


def test_section_5_2_gpu_jobs_start_and_finish_on_an_idle_cluster(tmp_path: Path) -> None:
    """Section 5.2's servers and Figure 10's tree, two servers: the GPU job runs one task per
    server from t=0 and finishes at 20; CPU tasks keep the memory of each server's GPU
    task's headroom <1 GB, 0, 1 GPU> free and use the other 5 GB and 4 CPUs, also beside a
    busy GPU: 7 of the 8 CPUs are busy from 0 (server-0 keeps 1 GB for the waiting GPU
    tasks). Before the fix the headroom was <1.5 GB, 1 CPU, 1 GPU>, which no task matches:
    gpu-1 never started. Later, a busy GPU held back every CPU task: server-0 ran one CPU
    task from 0 to 10 while 6 waited, and small-3 started at 10."""
    out = tmp_path / "run"
    done = run_fairshare(
        "simulate", str(SECTION_5_2), "--policy", "hdrf", "--headroom", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert _jobs_csv(out / "jobs.csv") == {
        "large-1": ("0.000000", "20.000000", "4"),
        "gpu-1": ("0.000000", "20.000000", "4"),
        "small-1": ("0.000000", "10.000000", "1"),
        "small-2": ("0.000000", "10.000000", "1"),
        "small-3": ("0.000000", "10.000000", "1"),
        "large-2": ("0.000000", "20.000000", "4"),
    }
    every = pl.read_parquet(out / "tasks.parquet")
    assert every.filter((pl.col("start") == 0.0) & (pl.col("job") != "gpu-1")).height == 7
    tasks = every.filter(pl.col("job") == "gpu-1")
    assert sorted(zip(tasks["start"].to_list(), tasks["machine"].to_list(), strict=True)) == [
        (0.0, "server-0"),
        (0.0, "server-1"),
        (10.0, "server-0"),
        (10.0, "server-1"),
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["finished_jobs"], summary["unfinished_jobs"], summary["makespan"]) == (
        6,
        0,
        20.0,
    )


def test_section_5_2_headroom_gives_the_gpu_job_every_gpu_with_both_hdrf_variants(
    tmp_path: Path,
) -> None:
    """Pareto-Efficient-C.S of section 5.2 is naive H-DRF with the headroom: both variants
    run the GPU job on both GPUs (finish 20). Without the headroom, CPU tasks fill one
    server's memory and the GPU job gets one GPU for part of the run (finish 30)."""
    out = tmp_path / "cmp"
    done = run_fairshare(
        "compare",
        str(SECTION_5_2),
        "--policies",
        "hdrf,naive-hdrf",
        "--headroom",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for policy in ("hdrf", "naive-hdrf"):
        assert _jobs_csv(out / policy / "jobs.csv")["gpu-1"] == ("0.000000", "20.000000", "4")
    scenario = load_scenario(SECTION_5_2)
    for policy in ("hdrf", "naive-hdrf"):
        log = simulate(
            scenario.cluster,
            scenario.jobs,
            policy,
            seed=0,
            users=scenario.users,
            queues=scenario.queues,
        )
        assert _spans(log)["gpu-1"] == (0.0, 30.0)


def test_headroom_is_the_largest_waiting_task_not_the_elementwise_maximum() -> None:
    """Per machine, the demand of the largest task waiting for it (dominant share of the
    machine), not <1.5, 1, 1>; once no GPU task waits it shrinks to the CPU task's."""
    cluster = Cluster.build(("mem", "cpu", "gpu"), [Machine("s0", np.array([6.0, 4.0, 1.0]))])
    policy = make_policy("hdrf", cluster, options=PolicyOptions(headroom=True))
    assert policy.headroom(0) is None  # nobody waits
    cpu = Job("cpu", 0.0, "a", np.array([1.5, 1.0, 0.0]), 8, FixedDuration(10.0))
    gpu = Job("gpu", 0.0, "b", np.array([1.0, 0.0, 1.0]), 1, FixedDuration(10.0))
    policy.job_submitted(0.0, 0, cpu)
    assert policy.headroom(0) == ((1.5, 1.0, 0.0), 0.25)
    policy.job_submitted(0.0, 1, gpu)
    assert policy.headroom(0) == ((1.0, 0.0, 1.0), 1.0)
    launched = sorted(d.task.job for d in policy.decide(0.0))
    # The GPU task, and CPU tasks within 6 - 1 = 5 GB while it waited: three of 1.5 GB.
    assert launched == [0, 0, 0, 1]
    assert policy.headroom(0) == ((1.5, 1.0, 0.0), 0.25)


# ------------------------------------------------------------------ the paper's claims


STARVING = """
machines:
  - {name: m, capacity: {cpu: 4, mem: 4}}
jobs:
  - {name: small, submit: 0, demand: {cpu: 1, mem: 1}, tasks: 12,
     duration: [1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4]}
  - {name: big, submit: 0.5, demand: {cpu: 2, mem: 2}, tasks: 1, duration: 3}
"""


@pytest.mark.parametrize("policy", ["hdrf", "naive-hdrf", "drf"])
def test_headroom_a_large_task_is_not_starved_by_smaller_tasks(tmp_path: Path, policy: str) -> None:
    """Section 5: the headroom ensures "that large tasks do not get starved out". Small
    tasks free one slot at a time: without the headroom each freed slot is refilled by a
    small task and the big task waits until the small job has nothing left to launch
    (t=10); with it, the slot freed at t=1 is held back and the big task starts at t=2."""
    without = _run(STARVING, tmp_path, policy, headroom=False)
    assert _spans(without) == {"small": (0.0, 12.0), "big": (10.0, 13.0)}
    held = _run(STARVING, tmp_path, policy)
    assert _spans(held) == {"small": (0.0, 13.0), "big": (2.0, 5.0)}
    # Released once the big task runs: small tasks take every slot again (two at t=5).
    assert [start for start, _ in _starts(held, "small")] == [0, 0, 0, 0, 3, 4, 5, 5, 7, 8, 9, 9]


RELEASED = """
machines:
  - {name: m, count: 2, capacity: {cpu: 2, mem: 2}}
jobs:
  - {name: small, submit: 0, demand: {cpu: 1, mem: 1}, tasks: 6, duration: [1, 5, 2, 2, 3, 3]}
  - {name: big, submit: 0.5, demand: {cpu: 2, mem: 2}, tasks: 1, duration: 10}
"""


def test_headroom_is_released_when_no_task_that_large_waits(tmp_path: Path) -> None:
    """The slot freed at t=1 is held back for the big task; at t=2 the big task takes the
    other machine, and the held slot is offered again at once (not at the machine's next
    finish, t=5): small's fifth task starts at t=2."""
    log = _run(RELEASED, tmp_path)
    big = _starts(log, "big")
    assert [start for start, _ in big] == [2.0]
    small = _starts(log, "small")
    assert [start for start, _ in small] == [0.0, 0.0, 0.0, 0.0, 2.0, 5.0]
    assert small[4][1] != big[0][1]
    assert _spans(log) == {"small": (0.0, 8.0), "big": (2.0, 12.0)}


NEVER_BESIDE = """
resources: [mem, cpu, gpu]
machines:
  - {name: s, capacity: {mem: 6, cpu: 4, gpu: 1}}
jobs:
  - {name: wide, submit: 0, user: a, demand: {mem: 5.5, cpu: 1}, tasks: 1, duration: 10}
  - {name: gpu, submit: 0, user: b, demand: {mem: 1, gpu: 1}, tasks: 3, duration: 10}
"""


def test_headroom_may_be_used_by_a_task_that_never_fits_beside_it(tmp_path: Path) -> None:
    """A task smaller than the headroom's but too large to run beside it (5.5 GB next to
    the GPU task's 1 GB on a 6 GB server) would starve for as long as GPU tasks wait: it
    may use the headroom, and fairness orders it with the GPU tasks (a first, by the tie
    order). The element-wise headroom <5.5, 1, 1> let neither job start."""
    log = _run(NEVER_BESIDE, tmp_path)
    assert _spans(log) == {"wide": (0.0, 10.0), "gpu": (10.0, 40.0)}
    assert log.stranded == ()


def test_headroom_never_strands_a_task_that_fits_an_idle_machine(tmp_path: Path) -> None:
    """Every job of the workloads above finishes under every online policy with the
    headroom: a task that fits an idle machine either fits beside the headroom or may use
    it."""
    for text in (STARVING, RELEASED, NEVER_BESIDE, SECTION_5_2.read_text()):
        for policy in ("fifo", "fair", "drf", "hdrf", "naive-hdrf", "tsf", "choosy"):
            log = _run(text, tmp_path, policy)
            assert log.stranded == ()
            assert all(job.finish is not None for job in log.jobs), policy


# ------------------------------------------------------------------ the warning


TOO_LARGE = """
machines:
  - {name: m, count: 2, capacity: {cpu: 4, mem: 8}}
jobs:
  - {name: fits, submit: 0, demand: {cpu: 1, mem: 1}, tasks: 2, duration: 5}
  - {name: too-large, submit: 0, demand: {cpu: 5, mem: 1}, tasks: 2, duration: 5}
"""


def test_a_run_that_ends_with_jobs_no_machine_takes_warns_in_one_line(tmp_path: Path) -> None:
    """A job no machine can hold is named in one ``warning:`` line (exit 0, results
    written): the load-time warning of jobs that can never run, and not a second time by the
    end-of-run warning of stranded jobs. A run cut by ``--until`` says the same.
    The headroom reserves nothing for a task no machine can hold, so the job that fits is
    not held back."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(TOO_LARGE)
    out = tmp_path / "run"
    done = run_fairshare(
        "simulate", str(scenario), "--policy", "hdrf", "--headroom", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"warning: {scenario}: job 'too-large' can never run: its task demand (cpu 5, mem 1) "
        "fits on no machine; it is reported unfinished and counted in summary.json's "
        "unrunnable_jobs"
    ]
    assert _jobs_csv(out / "jobs.csv")["fits"] == ("0.000000", "5.000000", "2")
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["finished_jobs"], summary["unfinished_jobs"]) == (1, 1)
    cut = run_fairshare(
        "simulate", str(scenario), "--policy", "hdrf", "--until", "3", "--out", str(tmp_path / "c")
    )
    assert cut.returncode == 0
    assert cut.stderr == done.stderr


def test_headroom_does_not_combine_with_a_reference_scheduler(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_fairshare(
        "simulate",
        str(EXAMPLES / "sim-two-jobs.yaml"),
        "--policy",
        "offline-restricted",
        "--headroom",
        "--out",
        str(out),
    )
    line = assert_rejected(done)
    assert ": --headroom: does not combine with the reference scheduler" in line
    assert not out.exists()
