"""Online scheduling throughput: task placements per CPU second, end to end.

10,000 machines (two attribute classes, two racks of sizes), 1,000 jobs of 200 tasks each, a
third of them constrained to a machine class, three task shapes, exponential durations,
submissions spread over time. :func:`run_policy` runs ``simulate`` for one policy and measures
placements per second (launches / CPU time of the process, which a busy shared machine
disturbs less than wall time; wall time is kept too); :func:`heap_loop` times a bare heapq
push/pop loop over the same number of decisions (one push and one pop per placement, the floor
of any heap-driven simulator), the yardstick the rate is divided by.

The recorded figures (``docs/performance.md``, "Online placements"; their history in
``benchmarks/HISTORY.md``) are for the defaults below; other sizes are not comparable with them.

Examples
--------
The benchmark's workload shrunk to 4 machines and 3 jobs of 5 tasks (the figures of such a
run are not comparable with the recorded ones):

>>> cluster, jobs = workload(machines=4, jobs=3, tasks=5)
>>> run = run_policy(cluster, jobs, "drf")
>>> run.policy, run.placements, run.events
('drf', 15, 18)
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
"""Machines of the benchmark's cluster."""
JOBS = 1000
"""Jobs of the benchmark's workload."""
TASKS = 200
"""Tasks per job."""
POLICIES = ("drf", "tsf", "choosy")
"""The policies the recorded figures are for."""
WORKLOAD_SEED = 7
"""Seed of the job durations' means (the workload)."""
SIM_SEED = 1
"""Seed of the simulation (the task durations drawn from those means)."""
GANG_TASKS = (8, 64)
"""The sizes of the gangs of ``workload(gangs=True)`` (uniform, both included)."""
VARIANTS = ("plain", "gangs", "gangs+easy")
"""What ``bench online --gangs`` times per policy: the workload with the gangs' jobs as
ordinary jobs, with them as gangs, and as gangs with EASY backfilling."""


def workload(
    machines: int = MACHINES,
    jobs: int = JOBS,
    tasks: int = TASKS,
    seed: int = WORKLOAD_SEED,
    gangs: bool | None = None,
) -> tuple[Cluster, list[Job]]:
    """The benchmark's cluster and jobs.

    Parameters
    ----------
    machines : int
        Machines alternating <16 CPUs, 32 GB> and <8, 16> (every third one with an ``ssd``,
        40 to a rack).
    jobs : int
        Jobs, one every half second, from 100 users, every third one constrained to
        ``ssd``, in three task shapes.
    tasks : int
        Tasks per job, of exponential durations whose means (20 to 200 s) are drawn per job.
    seed : int
        Seeds the durations' means.
    gangs : bool, optional
        None: the recorded workload. Otherwise a third of the jobs (three in every nine, so
        of every shape) have :data:`GANG_TASKS` tasks (drawn from their own generator, so the
        durations stay those of the recorded workload), as gangs (all their tasks start
        together) when True, as ordinary jobs when False: the two differ only in the gangs.

    Returns
    -------
    (Cluster, list of Job)

    Examples
    --------
    >>> cluster, jobs = workload(machines=4, jobs=3, tasks=5)
    >>> [(m.name, m.capacity.tolist(), m.attributes["ssd"]) for m in cluster.machines[:2]]
    [('m0', [16.0, 32.0], True), ('m1', [8.0, 16.0], False)]
    >>> [(job.name, job.submit, job.demand.tolist()) for job in jobs]
    [('j0', 0.0, [1.0, 2.0]), ('j1', 0.5, [2.0, 2.0]), ('j2', 1.0, [1.0, 4.0])]
    >>> [str(job.constraint) for job in jobs]
    ['None', 'ssd', 'None']
    """
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
    sizes = np.random.default_rng(seed + 1).integers(GANG_TASKS[0], GANG_TASKS[1] + 1, jobs)
    out = []
    for j in range(jobs):
        gang = gangs is not None and (j // 3) % 3 == 0
        size = int(sizes[j]) if gang else tasks
        out.append(
            Job(
                name=f"j{j}",
                submit=float(j) * 0.5,
                user=f"u{j % 100}",
                demand=shapes[j % 3],
                tasks=size,
                duration=ExponentialDuration(float(rng.uniform(20, 200))),
                constraint=ssd if j % 3 == 1 else None,
                min_tasks=size if gang and gangs else None,
            )
        )
    return cluster, out


def heap_loop(decisions: int) -> float:
    """CPU seconds of one heap push and one pop per decision: the floor of any heap-driven
    simulator, the yardstick the placement rate is divided by.

    Parameters
    ----------
    decisions : int
        Pushes (and pops).

    Returns
    -------
    float
        CPU seconds of the process (``time.process_time``).
    """
    started = time.process_time()
    heap: list[tuple[float, int]] = []
    for i in range(decisions):
        heapq.heappush(heap, (i * 0.37 % 101.0, i))
    while heap:
        heapq.heappop(heap)
    return time.process_time() - started


@dataclass(frozen=True)
class OnlineRun:
    """One policy's run of the benchmark.

    Attributes
    ----------
    policy : str
        The online policy.
    placements : int
        Task attempts launched.
    events : int
        Events the simulator processed.
    cpu_seconds, wall_seconds : float
        CPU and wall seconds of ``simulate``.
    """

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
    """One policy's repeated runs (same workload, same decisions, so only the time varies).

    Attributes
    ----------
    median : OnlineRun
        The run of median CPU time.
    runs : tuple of OnlineRun
        Every run, in the order run.
    """

    median: OnlineRun
    runs: tuple[OnlineRun, ...]

    @property
    def best_rate(self) -> float:
        """The best placements per CPU second: the least disturbed run's (on a shared
        machine, noise only ever adds time)."""
        return max(run.rate for run in self.runs)


def figures_of(runs: Sequence[OnlineRun]) -> OnlineFigures:
    """The figures of one policy's runs.

    Parameters
    ----------
    runs : sequence of OnlineRun
        At least one run; of an even count, the slower of the two middle runs is the median.

    Returns
    -------
    OnlineFigures

    Examples
    --------
    >>> runs = [OnlineRun("drf", 100, 200, cpu, cpu) for cpu in (2.0, 1.0, 4.0, 3.0)]
    >>> figures = figures_of(runs)
    >>> figures.median.cpu_seconds, figures.best_rate
    (3.0, 100.0)
    """
    ordered = sorted(runs, key=lambda run: run.cpu_seconds)
    return OnlineFigures(ordered[len(ordered) // 2], tuple(runs))


def run_policy(
    cluster: Cluster, jobs: list[Job], policy: str, options: SimOptions | None = None
) -> OnlineRun:
    """Simulate ``jobs`` under ``policy`` (seed :data:`SIM_SEED`) and time it.

    Parameters
    ----------
    cluster : Cluster
        The benchmark's cluster (:func:`workload`).
    jobs : list of Job
        The benchmark's jobs.
    policy : str
        An online policy.
    options : SimOptions, optional
        The run's options (default: none; ``backfill`` for the gangs' EASY variant).

    Returns
    -------
    OnlineRun

    Raises
    ------
    PolicyError
        An unknown policy name.
    """
    started = time.perf_counter()
    cpu_started = time.process_time()
    log = simulate(
        cluster, jobs, policy, seed=SIM_SEED, options=options if options else SimOptions()
    )
    cpu = time.process_time() - cpu_started
    wall = time.perf_counter() - started
    # attempt_count reads the engine's rows without building TaskAttempt objects.
    return OnlineRun(policy, log.attempt_count, log.events, cpu, wall)
