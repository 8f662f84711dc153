"""Online scheduling throughput: task placements per CPU second, end to end.

10,000 machines (two attribute classes, two racks of sizes), 1,000 jobs of 200 tasks each, a
third of them constrained to a machine class, three task shapes, exponential durations,
submissions spread over time. :func:`run_policy` runs ``simulate`` for one policy and measures
placements per second (launches / CPU time of the process, which a busy shared machine
disturbs less than wall time; wall time is kept too); :func:`heap_loop` times a bare heapq
push/pop loop over the same number of decisions (one push and one pop per placement, the floor
of any heap-driven simulator), the yardstick the rate is divided by.

The recorded figures (``benchmarks/online_throughput.py``, DEVELOPERS.md "Online policies")
are for the defaults below; other sizes are not comparable with them.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload.model import ExponentialDuration, Job

MACHINES = 10_000
JOBS = 1000
TASKS = 200
POLICIES = ("drf", "tsf", "choosy")
WORKLOAD_SEED = 7
"""Seed of the job durations' means (the workload)."""
SIM_SEED = 1
"""Seed of the simulation (the task durations drawn from those means)."""


def workload(
    machines: int = MACHINES, jobs: int = JOBS, tasks: int = TASKS, seed: int = WORKLOAD_SEED
) -> tuple[Cluster, list[Job]]:
    """The benchmark's cluster and jobs: ``machines`` machines alternating 8 and 16 CPUs
    (every third one with an ``ssd``, 40 to a rack) and ``jobs`` jobs of ``tasks`` tasks, one
    every half second, from 100 users, every third one constrained to ``ssd``."""
    rng = np.random.default_rng(seed)
    ms = [
        Machine(
            f"m{i}",
            np.array([8.0, 16.0]) if i % 2 else np.array([16.0, 32.0]),
            rack=f"r{i // 40}",
            attributes={"ssd": i % 3 == 0},
        )
        for i in range(machines)
    ]
    cluster = Cluster.build(["cpu", "mem"], ms)
    shapes = [np.array([1.0, 2.0]), np.array([2.0, 2.0]), np.array([1.0, 4.0])]
    ssd = Constraint("ssd")
    out = []
    for j in range(jobs):
        out.append(
            Job(
                name=f"j{j}",
                submit=float(j) * 0.5,
                user=f"u{j % 100}",
                demand=shapes[j % 3],
                tasks=tasks,
                duration=ExponentialDuration(float(rng.uniform(20, 200))),
                constraint=ssd if j % 3 == 1 else None,
            )
        )
    return cluster, out


def heap_loop(decisions: int) -> float:
    """CPU seconds of one heap push and one pop per decision."""
    started = time.process_time()
    heap: list[tuple[float, int]] = []
    for i in range(decisions):
        heapq.heappush(heap, (i * 0.37 % 101.0, i))
    while heap:
        heapq.heappop(heap)
    return time.process_time() - started


@dataclass(frozen=True)
class OnlineRun:
    """One policy's run: task attempts launched, events, CPU and wall seconds of ``simulate``."""

    policy: str
    placements: int
    events: int
    cpu_seconds: float
    wall_seconds: float

    @property
    def rate(self) -> float:
        """Placements per CPU second."""
        return self.placements / self.cpu_seconds if self.cpu_seconds > 0 else float("inf")


@dataclass(frozen=True)
class OnlineFigures:
    """One policy's repeated runs (same workload, same decisions, so only the time varies):
    the run of median CPU time, and the best rate (the least disturbed run: on a shared
    machine, noise only ever adds time)."""

    median: OnlineRun
    runs: tuple[OnlineRun, ...]

    @property
    def best_rate(self) -> float:
        return max(run.rate for run in self.runs)


def figures_of(runs: Sequence[OnlineRun]) -> OnlineFigures:
    """The figures of one policy's runs (at least one; of an even count, the slower of the
    two middle runs is the median)."""
    ordered = sorted(runs, key=lambda run: run.cpu_seconds)
    return OnlineFigures(ordered[len(ordered) // 2], tuple(runs))


def run_policy(cluster: Cluster, jobs: list[Job], policy: str) -> OnlineRun:
    """Simulate ``jobs`` under ``policy``; raises ``PolicyError`` for a bad policy name."""
    started = time.perf_counter()
    cpu_started = time.process_time()
    log = simulate(cluster, jobs, policy, seed=SIM_SEED, options=SimOptions())
    cpu = time.process_time() - cpu_started
    wall = time.perf_counter() - started
    # attempt_count reads the engine's rows without building TaskAttempt objects.
    return OnlineRun(policy, log.attempt_count, log.events, cpu, wall)
