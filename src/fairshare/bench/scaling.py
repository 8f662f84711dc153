"""Throughput as the workload grows: simulated tasks per CPU second at 200 to 4,500 jobs.

The cluster is TSF section VI's size, 1,000 machines of <16 CPUs, 64 GB> in four blocks of 250
(40 to a rack); the jobs come from the built-in generators, arriving every 12 s on average
(Choosy section 7.1's rate), each task one CPU and 2 GB:

- ``drf``, ``tsf``, ``choosy``: the ``google-constraints`` generator (FAIR Table 2's job
  sizes, Sharma et al.'s Google-like constraints: about one constraint class per job, so the
  number of classes grows with the jobs); every job is its own user.
- ``hdrf``: the same jobs from 100 users in five leaf queues of a two-level hierarchy.
- ``kueue``, ``kueue-classical``: the same jobs from 100 LocalQueues of five ClusterQueues
  in one cohort, each with a fifth of the cluster as nominal quota (each job admitted whole).
- ``fair``: the ``facebook-2009`` generator (maps reading blocks held on 3 machines, reducers)
  with delay scheduling (5 s at node level, 10 s more at rack level: FAIR section 4).

A run is timed on the CPU clock (``time.process_time``) around ``simulate`` alone, in a fresh
interpreter so that no run inherits another's heap; the rate is task attempts per CPU second.
The per-event cost is independent of the number of jobs when the rate at 4,500 jobs stays
within 1.5x of the rate at 200 (the ratio printed).

Examples
--------
A run shrunk to 20 machines and 3 jobs, in this process (``cpu_seconds`` and ``rate`` vary
from run to run):

>>> run = run_point("drf", 3, machines=20)
>>> run.policy, run.jobs, run.tasks > 0
('drf', 3, True)
>>> ratio([ScalingRun("drf", 200, 10, 1.0), ScalingRun("drf", 4500, 10, 2.0)])
2.0
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from fairshare.cluster import Cluster, Machine
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload.generators import generate
from fairshare.workload.model import Job, Queue, WorkloadSpec

SEED = 1
"""Seeds the workloads and the simulations."""
SIZES = (200, 800, 2000, 4500)
"""Jobs per run: from a small run to TSF section VI's 4,500 jobs."""
POLICIES = ("drf", "tsf", "choosy", "hdrf", "fair")
"""The policies the benchmark runs by default (issue: scaling throughput)."""
MACHINES = 1000
"""TSF section VI's cluster size."""
QUEUES = (Queue("a", 3.0), Queue("a/x"), Queue("a/y", 2.0), Queue("b"), Queue("b/x"), Queue("c"))
"""``hdrf``'s hierarchy: two levels, weighted."""
LEAF_QUEUES = ("a/x", "a/y", "b", "b/x", "c")
"""The queues ``hdrf``'s jobs are spread over."""
KUEUE_QUEUES = (
    Queue("bench", quota=(16000.0, 64000.0)),
    *(Queue(f"bench/cq{i}", quota=(3200.0, 12800.0)) for i in range(5)),
)
"""``kueue``'s ClusterQueues: five in one cohort, a fifth of the 1,000 machines each."""
KUEUE_POLICIES = ("kueue", "kueue-classical")
"""The policies that run on :data:`KUEUE_QUEUES`."""
DELAY = (5.0, 10.0)
"""``fair``'s delay scheduling waits (node level, then rack level)."""


@dataclass(frozen=True)
class ScalingRun:
    """One timed run.

    Attributes
    ----------
    policy : str
        The online policy.
    jobs : int
        Jobs in the workload.
    tasks : int
        Task attempts simulated.
    cpu_seconds : float
        CPU time of ``simulate``.
    """

    policy: str
    jobs: int
    tasks: int
    cpu_seconds: float

    @property
    def rate(self) -> float:
        """Task attempts per CPU second."""
        return self.tasks / max(self.cpu_seconds, 1e-9)


def cluster(machines: int = MACHINES) -> Cluster:
    """The benchmark's cluster: ``machines`` of <16 CPUs, 64 GB> in four equal blocks
    (``b0-0`` ...), 40 to a rack.

    Parameters
    ----------
    machines : int
        Machines.

    Returns
    -------
    Cluster

    Examples
    --------
    >>> [m.name for m in cluster(8).machines][:3], cluster(8).capacities[0].tolist()
    (['b0-0', 'b0-1', 'b1-0'], [16.0, 64.0])
    """
    block = max(1, machines // 4)
    ms = [
        Machine(f"b{i // block}-{i % block}", np.array([16.0, 64.0]), f"r{i // 40}", {})
        for i in range(machines)
    ]
    return Cluster.build(("cpu", "mem"), ms)


@dataclass(frozen=True)
class ScalingWorkload:
    """What one run simulates.

    Attributes
    ----------
    cluster : Cluster
        The machines (with the generator's attributes).
    jobs : list of Job
        The jobs, in submission order.
    queues : tuple of Queue
        The hierarchy (``hdrf`` only).
    options : SimOptions or None
        Delay scheduling for ``fair``.
    """

    cluster: Cluster
    jobs: list[Job]
    queues: tuple[Queue, ...]
    options: SimOptions | None


def workload(
    policy: str, jobs: int, machines: int = MACHINES, arrival: float = 12.0
) -> ScalingWorkload:
    """The workload ``policy`` runs at ``jobs`` jobs (see the module).

    Parameters
    ----------
    policy : str
        ``fair`` gets the ``facebook-2009`` jobs with delay scheduling, ``hdrf`` the
        constrained jobs in queues, ``kueue`` the jobs in ClusterQueues (see the module),
        any other policy the constrained jobs.
    jobs : int
        Jobs.
    machines : int
        Machines (default: the benchmark's 1,000).
    arrival : float
        Mean seconds between job arrivals (default 12; a quarter of a second saturates the
        cluster, so that the waiting jobs pile up as the workload grows).

    Returns
    -------
    ScalingWorkload

    Examples
    --------
    >>> w = workload("hdrf", 4, machines=8)
    >>> [job.queue for job in w.jobs], len(w.queues)
    (['b/x', 'c', 'a/x', 'c'], 6)
    """
    params: dict[str, object] = {"jobs": jobs, "arrival": arrival, "demand": {"cpu": 1, "mem": 2}}
    options = None
    queues: tuple[Queue, ...] = ()
    if policy == "fair":
        kind = "facebook-2009"
        options = SimOptions(delay=DELAY)
    else:
        kind = "google-constraints"
        if policy == "hdrf":
            params.update(users=100, queues=list(LEAF_QUEUES))
            queues = QUEUES
        elif policy in KUEUE_POLICIES:
            params.update(users=100, queues=[q.path for q in KUEUE_QUEUES[1:]])
            queues = KUEUE_QUEUES
    generated = generate(
        WorkloadSpec(kind, params),
        cluster(machines),
        np.random.default_rng(SEED).spawn(1)[0],
        queues=[q.path for q in (*QUEUES, *KUEUE_QUEUES)],
    )
    return ScalingWorkload(generated.cluster, list(generated.jobs), queues, options)


def run_point(
    policy: str, jobs: int, machines: int = MACHINES, arrival: float = 12.0
) -> ScalingRun:
    """Simulate ``policy`` on its :func:`workload` in this process, timed on the CPU clock.

    Parameters
    ----------
    policy : str
        An online policy.
    jobs, machines, arrival
        As for :func:`workload`.

    Returns
    -------
    ScalingRun
    """
    w = workload(policy, jobs, machines, arrival)
    started = time.process_time()
    log = simulate(w.cluster, w.jobs, policy, seed=SEED, queues=w.queues, options=w.options)
    return ScalingRun(policy, jobs, log.attempt_count, time.process_time() - started)


def run_point_in_child(
    policy: str, jobs: int, machines: int = MACHINES, arrival: float = 12.0
) -> ScalingRun:
    """:func:`run_point` in a fresh interpreter.

    Parameters
    ----------
    policy, jobs, machines, arrival
        As for :func:`run_point`.

    Returns
    -------
    ScalingRun

    Raises
    ------
    RuntimeError
        The child failed (a bug in fairshare); the message holds its traceback.
    """
    code = (
        "import json, dataclasses; from fairshare.bench.scaling import run_point; "
        "print(json.dumps(dataclasses.asdict("
        f"run_point({policy!r}, {jobs!r}, {machines!r}, {arrival!r}))))"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"scaling run {policy}/{jobs} failed:\n{done.stderr}")
    return ScalingRun(**json.loads(done.stdout.strip().splitlines()[-1]))


def ratio(runs: Sequence[ScalingRun]) -> float:
    """The rate of the smallest run over the rate of the largest (1.0: no slowdown as the
    work grows; the issue asks at most 1.5).

    Parameters
    ----------
    runs : sequence of ScalingRun
        One policy's runs.

    Returns
    -------
    float
    """
    smallest = min(runs, key=lambda run: run.jobs)
    largest = max(runs, key=lambda run: run.jobs)
    return smallest.rate / max(largest.rate, 1e-9)


def as_dict(run: ScalingRun) -> dict[str, object]:
    """A run as the ``--json`` document prints it.

    Parameters
    ----------
    run : ScalingRun

    Returns
    -------
    dict

    Examples
    --------
    >>> as_dict(ScalingRun("drf", 200, 1000, 0.5))
    {'policy': 'drf', 'jobs': 200, 'tasks': 1000, 'cpu_seconds': 0.5, 'rate': 2000.0}
    """
    return {**asdict(run), "cpu_seconds": round(run.cpu_seconds, 4), "rate": round(run.rate, 1)}
