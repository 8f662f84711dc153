"""Copy-compute splitting with CPAC (FAIR section 5.2) and reducer slot hoarding (FAIR
section 5.1) in the simulator, with hand-computed numbers.

The cluster of FAIR section 5.3's simulations: nodes with one map slot and one reduce slot,
as two resources; maps ask for a map slot, reducers (their compute parts) for a reduce slot.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.metrics.summary import summary
from fairshare.policies.copy_compute import CopyComputeAdmission
from fairshare.policies.protocol import TaskRef
from fairshare.runlog import RunLog
from fairshare.sim.engine import MachineEvent, SimOptions, SimulationError, simulate
from fairshare.workload.model import FixedDuration, Job, ReducePhase

MAP = np.array([1.0, 0.0])
REDUCE = np.array([0.0, 1.0])
HOARDING = SimOptions(reduce_slowstart=0.0)
"""Hadoop without CPAC: reducers launch at the job's first map finish and hold their slot."""
CPAC = SimOptions(copy_compute_splitting=True, max_reducers=3, max_computing=1)
"""FAIR section 5.2 on one-reduce-slot nodes: 1 computing, 3 reducers per node."""


def nodes(n: int, reduce_slots: float = 1.0) -> Cluster:
    machines = [Machine(f"n{i}", np.array([1.0, reduce_slots])) for i in range(n)]
    return Cluster.build(("map_slot", "reduce_slot"), machines)


def job(name: str, submit: float, maps: int, seconds: float, reduce: ReducePhase) -> Job:
    return Job(name, submit, name, MAP, maps, FixedDuration(seconds), reduce=reduce)


def figure_6_jobs() -> list[Job]:
    """A big job (10 maps of 10 s, 2 reducers copying 1 s and computing 10 s) and a small
    one submitted at 5 s (1 map of 10 s, 1 reducer: copy 1 s, compute 2 s)."""
    return [
        job("big", 0.0, 10, 10.0, ReducePhase(2, 1.0, 10.0, REDUCE)),
        job("small", 5.0, 1, 10.0, ReducePhase(1, 1.0, 2.0, REDUCE)),
    ]


def spans(log: RunLog, name: str, phase: str) -> list[tuple[str, float, float]]:
    return sorted(
        (a.machine, a.start, a.finish) for a in log.attempts if a.job == name and a.phase == phase
    )


def finishes(log: RunLog) -> dict[str, float | None]:
    return {j.job: j.finish for j in log.jobs}


def test_figure_6_cpac_frees_reduce_slots_hoarded_by_a_big_job() -> None:
    """FAIR section 5.1 / Figure 6 and 5.2. Both runs: the big job's maps run 0-10 on both
    nodes; at 10 its reducers become runnable and the small job's map takes one map slot
    (10-20), the big job's other 7 maps run 10-60 (the last alone 50-60), so its copies end
    at 61 and its computes at 71.

    Without splitting the big job's two reducers take both reduce slots at 10 and idle in
    them until 71: the small job's reducer, runnable at 20, starts at 71 and ends at 74
    (copy 1 + compute 2): response 69 s. With CPAC the big job's reducers copy without a
    reduce slot (at most one copying per node, max_computing), the small job's reducer
    copies 20-21 and computes 21-23: response 18 s. The big job is not slower (71 s)."""
    hoard = simulate(nodes(2), figure_6_jobs(), "fair", seed=0, options=HOARDING)
    assert finishes(hoard) == {"big": 71.0, "small": 74.0}
    assert spans(hoard, "big", "reduce") == [("n0", 10.0, 71.0), ("n1", 10.0, 71.0)]
    assert spans(hoard, "small", "reduce") == [("n1", 71.0, 74.0)]

    cpac = simulate(nodes(2), figure_6_jobs(), "fair", seed=0, options=CPAC)
    assert finishes(cpac) == {"big": 71.0, "small": 23.0}
    assert spans(cpac, "big", "copy") == [("n0", 10.0, 61.0), ("n1", 10.0, 61.0)]
    assert spans(cpac, "big", "reduce") == [("n0", 61.0, 71.0), ("n1", 61.0, 71.0)]
    assert spans(cpac, "small", "copy") == [("n1", 20.0, 21.0)]
    assert spans(cpac, "small", "reduce") == [("n1", 21.0, 23.0)]
    assert [j.finish - j.submit for j in cpac.jobs if j.finish is not None] == [71.0, 18.0]
    # A reducer counts once in the job's tasks, however it is split.
    assert [j.tasks for j in cpac.jobs] == [12, 2]


def test_busy_time_counts_compute_parts_not_copies() -> None:
    """Utilization over the 74 s / 71 s makespans. Map slots: 11 maps x 10 s = 110 of 2 x
    makespan in both. Reduce slots: hoarding holds 2 x 61 + 3 = 125 slot-seconds (the idle
    wait included, as Hadoop's slots are held); CPAC's computes 2 x 10 + 2 = 22."""
    hoard = summary(simulate(nodes(2), figure_6_jobs(), "fair", seed=0, options=HOARDING))
    assert hoard["utilization"] == {
        "map_slot": pytest.approx(110 / 148, abs=1e-6),
        "reduce_slot": pytest.approx(125 / 148, abs=1e-6),
    }
    cpac = summary(simulate(nodes(2), figure_6_jobs(), "fair", seed=0, options=CPAC))
    assert cpac["utilization"] == {
        "map_slot": pytest.approx(110 / 142, abs=1e-6),
        "reduce_slot": pytest.approx(22 / 142, abs=1e-6),
    }


def test_cpac_overlaps_the_next_copy_with_a_compute() -> None:
    """FAIR section 5.2's throughput point: one job, one node with one reduce slot, a 1 s map
    and two reducers (copy 5 s, compute 5 s). Unsplit, the reducers run in sync, 1-11 and
    11-21. With CPAC the first copies 1-6 and computes 6-11 while the second copies 6-11
    (one copy per job per node), then computes 11-16: the job ends at 16 instead of 21."""
    jobs = [job("j", 0.0, 1, 1.0, ReducePhase(2, 5.0, 5.0, REDUCE))]
    plain = simulate(nodes(1), jobs, "fair", seed=0)
    assert finishes(plain) == {"j": 21.0}
    assert spans(plain, "j", "reduce") == [("n0", 1.0, 11.0), ("n0", 11.0, 21.0)]
    cpac = simulate(nodes(1), jobs, "fair", seed=0, options=CPAC)
    assert finishes(cpac) == {"j": 16.0}
    assert spans(cpac, "j", "copy") == [("n0", 1.0, 6.0), ("n0", 6.0, 11.0)]
    assert spans(cpac, "j", "reduce") == [("n0", 6.0, 11.0), ("n0", 11.0, 16.0)]


def test_max_reducers_and_per_job_copies_per_node() -> None:
    """One node with three map slots and two reduce slots, max_reducers 3, max_computing 2,
    FIFO. Jobs a, b, c: one 1 s map each, 3 reducers copying 10 s and computing 1 s.

    - 1: a copies two (its per-node copy limit: 2 compute slots), b one (3 reducers).
    - 11: a0, a1 compute 11-12 (both compute slots); b0 waits, keeping its reducer slot.
    - 12: b0 computes 12-13; a2 and b1 copy 12-22 (3 reducers again).
    - 13: b2 copies 13-23. 22: a2, b1 compute 22-23. 23: b2 computes 23-24; c0, c1 copy
      23-33 (c's copy limit), compute 33-34; c2 copies 33-43, computes 43-44."""
    opts = SimOptions(copy_compute_splitting=True, max_reducers=3, max_computing=2)
    cluster = Cluster.build(("map_slot", "reduce_slot"), [Machine("n0", np.array([3.0, 2.0]))])
    jobs = [job(n, 0.0, 1, 1.0, ReducePhase(3, 10.0, 1.0, REDUCE)) for n in "abc"]
    log = simulate(cluster, jobs, "fifo", seed=0, options=opts)
    parts = sorted(
        (a.job, a.phase, a.task, a.start, a.finish) for a in log.attempts if a.phase != "map"
    )
    assert parts == [
        ("a", "copy", 0, 1.0, 11.0),
        ("a", "copy", 1, 1.0, 11.0),
        ("a", "copy", 2, 12.0, 22.0),
        ("a", "reduce", 0, 11.0, 12.0),
        ("a", "reduce", 1, 11.0, 12.0),
        ("a", "reduce", 2, 22.0, 23.0),
        ("b", "copy", 0, 1.0, 11.0),
        ("b", "copy", 1, 12.0, 22.0),
        ("b", "copy", 2, 13.0, 23.0),
        ("b", "reduce", 0, 12.0, 13.0),
        ("b", "reduce", 1, 22.0, 23.0),
        ("b", "reduce", 2, 23.0, 24.0),
        ("c", "copy", 0, 23.0, 33.0),
        ("c", "copy", 1, 23.0, 33.0),
        ("c", "copy", 2, 33.0, 43.0),
        ("c", "reduce", 0, 33.0, 34.0),
        ("c", "reduce", 1, 33.0, 34.0),
        ("c", "reduce", 2, 43.0, 44.0),
    ]
    assert finishes(log) == {"a": 23.0, "b": 24.0, "c": 44.0}


def test_admission_counts() -> None:
    cpac = CopyComputeAdmission(max_reducers=3, max_computing=2)
    assert cpac.may_copy(0, 0, compute_slots=1)
    cpac.copy_started(0, 0)
    # The job's copies per node are capped by its compute slots there (1), not 2.
    assert not cpac.may_copy(0, 0, compute_slots=1)
    assert cpac.may_copy(1, 0, compute_slots=2)
    cpac.copy_started(1, 0)
    cpac.copy_started(1, 0)
    assert not cpac.may_copy(2, 0, compute_slots=2)  # 3 reducers on the node
    cpac.copy_stopped(0, 0, finished=True)
    cpac.wait(TaskRef(0, "reduce", 0), 0)
    assert not cpac.may_copy(2, 0, compute_slots=2)  # the waiting reducer keeps its slot
    cpac.copy_stopped(1, 0, finished=False)
    assert cpac.may_copy(2, 0, compute_slots=2)
    assert cpac.forget_machine(0) == [TaskRef(0, "reduce", 0)]
    assert (cpac.reducers, cpac.copying, cpac.waiting) == ({}, {}, {})


def test_machine_lost_while_reducers_wait_to_compute() -> None:
    """The node of the Figure 6 run's small reducer leaves at 20.5, mid-copy: the copy is
    recorded killed and the reducer copies again on the other node (20.5-21.5, its maps are
    done), computing 21.5-23.5 there."""
    events = [MachineEvent(20.5, "remove", "n1")]
    log = simulate(nodes(2), figure_6_jobs(), "fair", seed=0, options=CPAC, machine_events=events)
    small = sorted(
        (a.phase, a.machine, a.start, a.finish, a.killed) for a in log.attempts if a.job == "small"
    )
    assert ("copy", "n1", 20.0, 20.5, True) in small
    assert ("copy", "n0", 20.5, 21.5, False) in small
    assert ("reduce", "n0", 21.5, 23.5, False) in small
    assert all(j.finish is not None for j in log.jobs)


@pytest.mark.parametrize(
    ("options", "where"),
    [
        ({"copy_compute_splitting": True, "max_reducers": 1, "max_computing": 2}, "max_computing"),
        ({"copy_compute_splitting": True, "max_computing": 0}, "max_computing"),
        ({"reduce_slowstart": 1.5}, "reduce_slowstart"),
    ],
)
def test_bad_options(options: dict[str, Any], where: str) -> None:
    # Options are checked when they are made, before any run.
    with pytest.raises(SimulationError) as info:
        SimOptions(**options)
    assert info.value.where == where
