"""The issue's named paper scenarios, run through the event engine with exact values."""

from __future__ import annotations

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions, simulate
from fairshare.solvers import solve
from fairshare.workload.loader import load_scenario
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    PerTaskDurations,
    Queue,
    User,
)


def running_at(log: RunLog, t: float, key: str = "user") -> dict[str, int]:
    out: dict[str, int] = {}
    for a in log.attempts:
        if a.start <= t < a.finish:
            name = getattr(a, key)
            out[name] = out.get(name, 0) + 1
    return out


def _figure_4a() -> tuple[Cluster, list[Job], list[Queue]]:
    cluster = Cluster.build(["cpu", "gpu"], [Machine("m", np.array([10.0, 10.0]))])
    queues = [Queue("n1"), Queue("n2")]

    def job(name: str, queue: str, demand: list[float]) -> Job:
        return Job(name, 0.0, name, np.array(demand), 3000, ExponentialDuration(10.0), queue=queue)

    jobs = [job("n1,1", "n1", [1, 0]), job("n2,1", "n2", [1, 0]), job("n2,2", "n2", [0, 1])]
    return cluster, jobs, queues


def test_hdrf_section_3_3_naive_hdrf_starves_n21() -> None:
    """H-DRF section 3.3: as tasks finish and restart, naive H-DRF gives n2,1's CPUs to n1,1
    until n2,1 is starved (10 CPUs to n1,1, 10 GPUs to n2,2)."""
    cluster, jobs, queues = _figure_4a()
    log = simulate(
        cluster, jobs, "naive-hdrf", seed=3, queues=queues, options=SimOptions(until=400)
    )
    assert running_at(log, 0.0) == {"n1,1": 5, "n2,1": 5, "n2,2": 10}
    for t in (100.0, 200.0, 300.0):
        assert running_at(log, t) == {"n1,1": 10, "n2,2": 10}


def test_hdrf_section_3_4_dynamic_hdrf_keeps_5_5_10() -> None:
    """H-DRF section 3.4: with rescaling and blocked nodes ignored, every freed CPU goes back
    to the leaf that freed it: 5 / 5 / 10 throughout (Figure 4b)."""
    cluster, jobs, queues = _figure_4a()
    log = simulate(cluster, jobs, "hdrf", seed=3, queues=queues, options=SimOptions(until=400))
    for t in (0.0, 100.0, 200.0, 300.0):
        assert running_at(log, t) == {"n1,1": 5, "n2,1": 5, "n2,2": 10}


def test_collapsed_drf_section_3_2_weights_favour_n11() -> None:
    """H-DRF section 3.2: flattened weights 1/2, 1/4, 1/4: n1,1 gets twice n2,1's CPUs."""
    cluster, jobs, queues = _figure_4a()
    log = simulate(
        cluster, jobs, "collapsed-drf", seed=3, queues=queues, options=SimOptions(until=50)
    )
    assert running_at(log, 0.0) == {"n1,1": 7, "n2,1": 3, "n2,2": 10}


def test_choosy_converges_to_cmmf_figure_3() -> None:
    """Choosy section 6 on Choosy Figure 3: the online scheduler reaches the exact CMMF
    allocation (u1 on m1-m3, u2 on the other seven) computed by the offline solver."""
    scenario = load_scenario("examples/choosy-figure-3.yaml")
    exact = solve(scenario, "cmmf", integral=True)
    jobs = [
        Job(u.name, 0.0, u.name, u.demand, 2000, ExponentialDuration(5.0), machines=u.machines)
        for u in scenario.users
    ]
    # u2 arrives first and grabs m-2; Choosy hands m-2 to u1 as soon as it frees.
    jobs[0] = Job(
        "u1", 1.0, "u1", jobs[0].demand, 2000, ExponentialDuration(5.0), machines=jobs[0].machines
    )
    jobs.sort(key=lambda j: j.submit)
    log = simulate(scenario.cluster, jobs, "choosy", seed=5, options=SimOptions(until=300))
    assert running_at(log, 0.5) == {"u2": 8}
    want = {u.name: round(exact.tasks[i]) for i, u in enumerate(scenario.users)}
    assert want == {"u1": 3, "u2": 7}
    for t in (100.0, 150.0, 200.0):
        assert running_at(log, t) == want


def test_tsf_table_ii_first_phase() -> None:
    """TSF section VI-A, Table II: with Job 2 (nodes 1-25) running, online TSF gives it all of
    nodes 1-25 (task share 50/100 = 1/2) and Job 1 nodes 26-50 (50/75 = 2/3)."""
    small = [Machine(f"n{i}", np.array([1.0, 1024.0])) for i in range(1, 26)]
    big = [Machine(f"n{i}", np.array([2.0, 1024.0])) for i in range(26, 51)]
    cluster = Cluster.build(["cpu", "mem"], small + big)
    jobs = [
        Job("job1", 0.0, "job1", np.array([1.0, 512.0]), 1000, _jitter(23.2, 1000)),
        Job(
            "job2",
            10.0,
            "job2",
            np.array([0.5, 512.0]),
            150,
            _jitter(18.3, 150),
            machines=frozenset(m.name for m in small),
        ),
    ]
    log = simulate(cluster, jobs, "tsf", seed=0, options=SimOptions(until=100))
    assert running_at(log, 5.0) == {"job1": 75}
    assert running_at(log, 45.0) == {"job1": 50, "job2": 50}
    on_small = {a.machine for a in log.attempts if a.job == "job1" and a.start <= 45 < a.finish}
    assert on_small == {m.name for m in big}
    # Table II's last row: alone and unconstrained, job 1 runs h = 75 tasks and job 2 h = 100,
    # so the task shares at t = 45 are 2/3 and 1/2, as the paper's text says.
    alone = {
        job.name: sum(int((m.capacity / job.demand).min()) for m in cluster.machines)
        for job in jobs
    }
    assert alone == {"job1": 75, "job2": 100}
    shares = {name: n / alone[name] for name, n in running_at(log, 45.0).items()}
    assert shares == pytest.approx({"job1": 2 / 3, "job2": 1 / 2})


def _jitter(mean: float, n: int) -> PerTaskDurations:
    """Task runtimes up to 20% either side of the mean, as in TSF section VI-A."""
    return PerTaskDurations(tuple(mean * (0.8 + 0.4 * ((7 * i) % 11) / 10) for i in range(n)))


def _locality_workload() -> tuple[Cluster, list[Job]]:
    machines = [Machine(f"m{i}", np.array([2.0]), rack=f"r{i // 5}") for i in range(20)]
    cluster = Cluster.build(["slots"], machines)
    jobs = [
        Job(f"j{k}", k * 1.0, f"j{k}", np.array([1.0]), 2, FixedDuration(10.0), input_replicas=2)
        for k in range(200)
    ]
    return cluster, jobs


def _node_local_fraction(log: RunLog) -> float:
    done = [a for a in log.attempts if not a.killed]
    return sum(a.locality == "node" for a in done) / len(done)


def test_delay_scheduling_raises_locality_of_small_jobs() -> None:
    """FAIR section 4: with small jobs, strict order launches most tasks non-locally; waiting
    a few seconds (T1 = T2 = 5) for a local slot lifts node locality."""
    cluster, jobs = _locality_workload()
    plain = simulate(cluster, jobs, "fair", seed=11)
    delayed = simulate(cluster, jobs, "fair", seed=11, options=SimOptions(delay=(5.0, 5.0)))
    without, with_delay = _node_local_fraction(plain), _node_local_fraction(delayed)
    assert with_delay >= without + 0.25
    assert with_delay >= 0.8


def test_fair_min_share_preemption_after_tmin() -> None:
    """FAIR section 3.2: pool A (min share 5) arrives while pool B holds all 10 slots with
    long tasks; after Tmin = 10 s, the 5 most recently launched of B's tasks are killed."""
    cluster = Cluster.build(["slots"], [Machine(f"m{i}", np.array([1.0])) for i in range(10)])
    users = [User("A", np.array([1.0]), min_share=5), User("B", np.array([1.0]))]
    jobs = [
        Job(
            "b",
            0.0,
            "B",
            np.array([1.0]),
            10,
            PerTaskDurations(tuple(1000.0 + i for i in range(10))),
        ),
        Job("a", 1.0, "A", np.array([1.0]), 8, FixedDuration(100.0)),
    ]
    log = simulate(
        cluster, jobs, "fair", seed=0, users=users, options=SimOptions(preemption=(10.0, 1e9))
    )
    killed = [a for a in log.attempts if a.killed]
    assert len(killed) == 5
    assert {a.finish for a in killed} == {11.0}
    assert sorted(a.task for a in killed) == [5, 6, 7, 8, 9]
    assert running_at(log, 11.5) == {"A": 5, "B": 5}
    no_preemption = simulate(cluster, jobs, "fair", seed=0, users=users)
    assert running_at(no_preemption, 11.5) == {"B": 10}
