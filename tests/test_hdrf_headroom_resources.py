"""H-DRF section 5's headroom holds a smaller task back only on the resources it takes.

The paper keeps on each server "a headroom equal to the resources required by the largest
task to ensure that a task with large resource demands does not get starved out by tasks
with smaller demands", in a scheduler made Pareto-efficient "by continuing scheduling tasks
if there exists leaf nodes that do not demand the saturated resources" (section 5.2). The
headroom used to require a smaller task's free room minus its demand to cover the whole
headroom, the resources it does not take included: while GPU tasks waited and a server's
GPU was busy, no CPU task started there until the GPU task ended (the CPUs of section 5.2's
servers, <6 GB, 4 CPUs, 1 GPU>, were busy only 47-55% of the first 500 s of ``hdrf-fig11``'s
schedule with exponential lengths while CPU work waited; 74-99% now, 89-100% without the
headroom).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.policies import PolicyOptions, make_policy
from fairshare.runlog import RunLog
from fairshare.workload.model import FixedDuration, Job

from conftest import simulate_text


def _run(text: str, tmp_path: Path, policy: str, *, headroom: bool = True) -> RunLog:
    return simulate_text(text, tmp_path, policy, headroom=headroom)


def _spans(log: RunLog) -> dict[str, tuple[float | None, float | None]]:
    return {j.job: (j.first_start, j.finish) for j in log.jobs}


def _running(log: RunLog, prefix: str, at: float) -> int:
    """Tasks of jobs named ``prefix...`` running at time ``at``."""
    return sum(1 for a in log.attempts if a.job.startswith(prefix) and a.start <= at < a.finish)


# ------------------------------------------------------------------ the idle CPUs


THREE_SERVERS = """
resources: [mem, cpu, gpu]
machines:
  - {name: s, count: 3, capacity: {mem: 6, cpu: 4, gpu: 1}}
users:
  - {name: c, demand: {mem: 1, cpu: 1}}
  - {name: g, demand: {mem: 1, gpu: 1}}
jobs:
  - {name: cpu, submit: 0, user: c, demand: {mem: 1, cpu: 1}, tasks: 24, duration: 10}
  - {name: gpu, submit: 0, user: g, demand: {mem: 1, gpu: 1}, tasks: 6, duration: 25}
"""


@pytest.mark.parametrize(
    "policy", ["fifo", "fair", "drf", "hdrf", "naive-hdrf", "collapsed-drf", "tsf", "choosy"]
)
def test_headroom_cpu_tasks_start_beside_a_busy_gpu_on_three_servers(
    tmp_path: Path, policy: str
) -> None:
    """Three servers <6 GB, 4 CPUs, 1 GPU>, 24 CPU tasks of 10 s, 6 GPU tasks of 25 s: the
    GPU tasks' headroom <1 GB, 0, 1 GPU> is kept while the second three wait. A CPU task
    takes no GPU, so a busy GPU does not hold it back: 12 CPU tasks run from 0 and 12 from
    10, beside the 1 GB each server keeps for the next GPU task, exactly as without the
    headroom. Before, only 9 started at 0 (a server stopped taking CPU tasks once its GPU
    task launched), none from 10 to 25 (all 12 CPUs idle), and the CPU job ended at 45."""
    held = _run(THREE_SERVERS, tmp_path, policy)
    assert _spans(held) == {"cpu": (0.0, 20.0), "gpu": (0.0, 50.0)}
    assert [_running(held, "cpu", t) for t in (0.0, 10.0, 15.0, 20.0)] == [12, 12, 12, 0]
    assert [_running(held, "gpu", t) for t in (0.0, 10.0, 25.0)] == [3, 3, 3]
    plain = _run(THREE_SERVERS, tmp_path, policy, headroom=False)
    assert sorted((a.job, a.start, a.machine) for a in held.attempts) == sorted(
        (a.job, a.start, a.machine) for a in plain.attempts
    )


def test_headroom_is_kept_only_on_the_resources_a_smaller_task_takes() -> None:
    """``may_place`` on a server <6 GB, 4 CPUs, 1 GPU> while a GPU task <1 GB, 0, 1 GPU> waits
    (the headroom): with the GPU busy (0 free), a CPU task may start if it leaves 1 GB free;
    a 1.5 GB CPU task may not take the last 2 GB (0.5 left), a 1 GB one may; a GPU task is as
    large as the headroom's and may use it."""
    cluster = Cluster.build(("mem", "cpu", "gpu"), [Machine("s0", np.array([6.0, 4.0, 1.0]))])
    policy = make_policy("hdrf", cluster, options=PolicyOptions(headroom=True))
    for job, (user, demand) in enumerate(
        (("a", [1.5, 1.0, 0.0]), ("b", [1.0, 1.0, 0.0]), ("g", [1.0, 0.0, 1.0]))
    ):
        policy.job_submitted(
            0.0, job, Job(f"j{job}", 0.0, user, np.array(demand), 4, FixedDuration(10.0))
        )
    assert policy.headroom(0) == ((1.0, 0.0, 1.0), 1.0)
    assert policy.may_place(0, (5.0, 4.0, 0.0), (1.5, 1.0, 0.0))
    assert policy.may_place(0, (3.5, 3.0, 0.0), (1.5, 1.0, 0.0))
    assert not policy.may_place(0, (2.0, 2.0, 0.0), (1.5, 1.0, 0.0))
    assert policy.may_place(0, (2.0, 2.0, 0.0), (1.0, 1.0, 0.0))
    assert not policy.may_place(0, (1.0, 2.0, 1.0), (1.0, 1.0, 0.0))
    assert policy.may_place(0, (1.0, 0.0, 1.0), (1.0, 0.0, 1.0))
    off = make_policy("hdrf", cluster)
    assert off.may_place(0, (1.0, 2.0, 0.0), (1.0, 1.0, 0.0))


# ------------------------------------------------------------------ what the headroom is for


OVERTAKEN = """
resources: [mem, cpu, gpu]
machines:
  - {name: s, capacity: {mem: 6, cpu: 4, gpu: 1}}
users:
  - {name: l, demand: {mem: 3, gpu: 1}}
  - {name: b, demand: {mem: 0.5, gpu: 1}}
  - {name: c, demand: {mem: 1, cpu: 1}}
jobs:
  - {name: cpu-first, submit: 0, user: c, demand: {mem: 1, cpu: 1}, tasks: 4,
     duration: [1.5, 2.5, 3.5, 4.5]}
  - {name: cpu-rest, submit: 0, user: c, demand: {mem: 1, cpu: 1}, tasks: 60, duration: 4}
  - {name: gpu-small, submit: 0, user: b, demand: {mem: 0.5, gpu: 1}, tasks: 1, duration: 10}
  - {name: gpu-more, submit: 2, user: b, demand: {mem: 0.5, gpu: 1}, tasks: 4, duration: 10}
  - {name: gpu-large, submit: 1, user: l, demand: {mem: 3, gpu: 1}, tasks: 1, duration: 5}
"""


@pytest.mark.parametrize("policy", ["drf", "hdrf", "naive-hdrf", "collapsed-drf", "tsf", "choosy"])
def test_headroom_keeps_memory_beside_a_busy_gpu_for_the_large_gpu_task(
    tmp_path: Path, policy: str
) -> None:
    """Section 5.2: the headroom keeps "a task with large resource demands" from being
    "starved out by tasks with smaller demands". One server <6 GB, 4 CPUs, 1 GPU>: GPU
    tasks of 0.5 GB, one after the other (the first from t=0, the others from t=2), a GPU
    task of 3 GB from t=1, CPU tasks of 1 GB
    ending at staggered times. Without the headroom, CPU tasks take the memory each finish
    frees, so whenever the GPU frees only a 0.5 GB GPU task fits, and the large task waits
    until the small GPU job is done (50.5). With it, CPU tasks keep 3 GB free although the
    GPU is busy (they take the memory, not the GPU: two run from 3.5, 3.5 GB free), so when
    the GPU frees at 10 the large task starts (its user and the small jobs' both hold
    nothing then: the tie goes to the older pending task). Were the memory given up
    while the GPU is busy, this would be the run without headroom."""
    held = _run(OVERTAKEN, tmp_path, policy)
    assert _spans(held)["gpu-large"] == (10.0, 15.0)
    assert [_running(held, "cpu", t) for t in (0.0, 2.0, 3.5, 9.5, 10.0)] == [4, 3, 2, 2, 2]
    plain = _run(OVERTAKEN, tmp_path, policy, headroom=False)
    assert _spans(plain)["gpu-large"] == (50.5, 55.5)
    assert [_running(plain, "cpu", t) for t in (0.0, 4.5, 9.5, 10.0)] == [4, 4, 4, 4]
