"""Simulator benchmarks at the scale of the papers' macrobenchmarks.

- ``choosy`` (Choosy section 7.1): 1,000 one-slot machines, one hour (``until`` 3,600 s), 300
  jobs with Facebook sizes (FAIR Table 2) and Google-like constraints (Sharma et al.), from the
  ``google-constraints`` generator. Online ``choosy`` targets 1.5 s (Choosy's Table 2).
- ``offline``: the same workload under Choosy's exact reference schedulers
  (``offline-restricted`` by default; 228.5 s in the paper, target 20 s).
- ``tsf`` (TSF section VI): 1,000 two-resource machines, about 180,000 tasks in 4,500 jobs
  with two-resource demands, under every online policy (target 2 s).

Each case measures the wall seconds of ``simulate`` (not building the workload, nor
``log.attempts``: ``RunLog.attempt_count`` reads the engine's rows) and the process's peak
resident memory, so :func:`run_case_in_child` runs it in a fresh interpreter. The figures
recorded in ``benchmarks/simulate_scale.py`` are for the default sizes; ``machines`` and
``jobs`` shrink a case for quick checks, whose figures are not comparable with them.

Examples
--------
TSF's case shrunk to 4 machines and 3 jobs, in this process (``seconds`` and
``peak_rss_mib`` vary from run to run):

>>> figures = run_case("tsf", "drf", machines=4, jobs=3)
>>> figures["policy"], figures["jobs"]
('drf', 3)
>>> sorted(figures)
['events', 'jobs', 'peak_rss_mib', 'policy', 'seconds', 'task_attempts']
>>> plan("tsf", ["drf", "fair"])
[Planned(case='tsf', policy='drf', target=2.0), Planned(case='tsf', policy='fair', target=2.0)]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from fairshare.cluster import Cluster, Machine
from fairshare.policies import ONLINE_POLICIES
from fairshare.sim.engine import SimOptions, simulate
from fairshare.sim.reference import REFERENCE_POLICIES, make_reference
from fairshare.workload.generators import Workload, generate
from fairshare.workload.model import ExponentialDuration, Job, WorkloadSpec

SEED = 1
"""Seeds the workloads and the simulations."""
CASES = ("choosy", "offline", "tsf")
"""What ``--only`` selects; ``offline`` runs the ``choosy`` workload under reference schedulers."""
TARGETS = {"choosy": 1.5, "offline": 20.0, "tsf": 2.0}
"""Seconds each case should take: Choosy's Table 2 for ``choosy``, a tenth of the paper's
228.5 s for ``offline``, and TSF section VI's scale in two seconds."""
CHOOSY_MACHINES, CHOOSY_JOBS = 1000, 300
"""Choosy section 7.1's scale: one-slot machines and jobs in one hour."""
TSF_MACHINES, TSF_JOBS = 1000, 4500
"""TSF section VI's scale: two-resource machines and jobs (about 180,000 tasks)."""


def choosy_workload(machines: int = CHOOSY_MACHINES, jobs: int = CHOOSY_JOBS) -> Workload:
    """Choosy section 7.1's workload, from the ``google-constraints`` generator.

    Parameters
    ----------
    machines : int
        One-slot machines, 40 to a rack.
    jobs : int
        Jobs with Facebook sizes (FAIR Table 2) and Google-like constraints, arriving every
        12 s on average.

    Returns
    -------
    Workload
        The cluster and the jobs, streamed by the generator as ``simulate`` reads them.

    Examples
    --------
    >>> workload = choosy_workload(machines=10, jobs=3)
    >>> len(workload.cluster.machines), [(job.name, job.tasks) for job in workload.jobs]
    (10, [('job0', 59), ('job1', 57), ('job2', 13)])
    """
    ms = [Machine(f"m{i}", np.array([1.0]), f"r{i // 40}", {}) for i in range(machines)]
    cluster = Cluster.build(("slot",), ms)
    spec = WorkloadSpec("google-constraints", {"jobs": jobs, "arrival": 12})
    return generate(spec, cluster, np.random.default_rng(SEED).spawn(1)[0])


def tsf_cluster(machines: int = TSF_MACHINES) -> Cluster:
    """TSF section VI's cluster: machines alternating <32 CPUs, 16 GB> and <16, 32>, 40 to a
    rack.

    Parameters
    ----------
    machines : int
        Machines.

    Returns
    -------
    Cluster

    Examples
    --------
    >>> tsf_cluster(4).capacities.tolist()
    [[32.0, 16.0], [16.0, 32.0], [32.0, 16.0], [16.0, 32.0]]
    """
    ms = [
        Machine(f"m{i}", np.array([16.0, 32.0] if i % 2 else [32.0, 16.0]), f"r{i // 40}", {})
        for i in range(machines)
    ]
    return Cluster.build(("cpu", "mem"), ms)


def tsf_jobs(rng: np.random.Generator, jobs: int = TSF_JOBS) -> list[Job]:
    """TSF section VI's jobs: Poisson arrivals (mean gap 0.8 s) from 100 users, four demand
    shapes, 20-60 tasks of 30 s (exponential) each.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of every draw.
    jobs : int
        Jobs.

    Returns
    -------
    list of Job
        In submission order.

    Examples
    --------
    >>> import numpy as np
    >>> [(job.name, job.tasks) for job in tsf_jobs(np.random.default_rng(1), 3)]
    [('job0000', 21), ('job0001', 32), ('job0002', 30)]
    """
    shapes = [
        np.array([1.0, 2.0]),
        np.array([2.0, 1.0]),
        np.array([1.0, 4.0]),
        np.array([4.0, 2.0]),
    ]
    for shape in shapes:
        shape.setflags(write=False)
    out = []
    submit = 0.0
    for j in range(jobs):
        submit += float(rng.exponential(0.8))
        out.append(
            Job(
                name=f"job{j:04d}",
                submit=submit,
                user=f"user{int(rng.integers(100))}",
                demand=shapes[int(rng.integers(len(shapes)))],
                tasks=int(rng.integers(20, 61)),
                duration=ExponentialDuration(30.0),
            )
        )
    return out


def run_case(
    case: str, policy: str, machines: int | None = None, jobs: int | None = None
) -> dict[str, object]:
    """Run ``policy`` on ``case``'s workload in this process and return its figures.

    Parameters
    ----------
    case : str
        ``choosy`` (one hour, ``until`` 3,600 s) or ``tsf``.
    policy : str
        An online policy, or on ``choosy`` a reference scheduler.
    machines, jobs : int, optional
        Shrink the case (default: its own scale).

    Returns
    -------
    dict
        ``policy``, ``jobs``, ``task_attempts``, ``events``, ``seconds`` of ``simulate``
        and ``peak_rss_mib`` of the process.

    Raises
    ------
    ValueError
        An unknown case.
    PolicyError
        An unknown policy.
    """
    if case == "choosy":
        workload = choosy_workload(machines or CHOOSY_MACHINES, jobs or CHOOSY_JOBS)
        chosen = (
            make_reference(policy, workload.cluster) if policy in REFERENCE_POLICIES else policy
        )
        started = time.perf_counter()
        log = simulate(
            workload.cluster, workload.jobs, chosen, seed=SEED, options=SimOptions(until=3600.0)
        )
    elif case == "tsf":
        rng = np.random.default_rng(SEED)
        cluster = tsf_cluster(machines or TSF_MACHINES)
        job_list = tsf_jobs(rng, jobs or TSF_JOBS)
        started = time.perf_counter()
        log = simulate(cluster, job_list, policy, seed=SEED)
    else:
        raise ValueError(f"unknown case {case!r}; allowed: choosy, tsf")
    seconds = time.perf_counter() - started
    return {
        "policy": policy,
        "jobs": len(log.jobs),
        "task_attempts": log.attempt_count,
        "events": log.events,
        "seconds": round(seconds, 2),
        # ru_maxrss is in KiB on Linux.
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def run_case_in_child(
    case: str, policy: str, machines: int | None = None, jobs: int | None = None
) -> dict[str, object]:
    """:func:`run_case` in a fresh interpreter, so the peak memory is the case's own.

    Parameters
    ----------
    case, policy, machines, jobs
        As for :func:`run_case`.

    Returns
    -------
    dict
        The figures of :func:`run_case`.

    Raises
    ------
    RuntimeError
        The child failed (a bug in fairshare); the message holds its traceback.
    """
    code = (
        "import json; from fairshare.bench.simulate import run_case; "
        f"print(json.dumps(run_case({case!r}, {policy!r}, {machines!r}, {jobs!r})))"
    )
    # A failing child is a bug in fairshare: its traceback is raised here, not swallowed.
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"benchmark case {case}/{policy} failed:\n{done.stderr}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@dataclass(frozen=True)
class Planned:
    """One run of the benchmark.

    Attributes
    ----------
    case : str
        The workload: ``choosy`` or ``tsf``.
    policy : str
        The online policy or reference scheduler.
    target : float
        The seconds it should take (:data:`TARGETS`).
    """

    case: str
    policy: str
    target: float


def plan(only: str | None, policies: Sequence[str] | None) -> list[Planned]:
    """The runs of ``simulate_scale.py [--only CASE] [--policies ...]``.

    Parameters
    ----------
    only : str, optional
        A name of :data:`CASES` (default: all three).
    policies : sequence of str, optional
        With ``only='offline'``, the reference schedulers (default: ``offline-restricted``);
        otherwise the online policies of the ``tsf`` case (default: every one).

    Returns
    -------
    list of Planned
        Online ``choosy`` on Choosy's workload, the reference schedulers on it, then TSF's
        workload under each policy.

    Raises
    ------
    ValueError
        An unknown case or policy, named in the message.

    Examples
    --------
    >>> [(run.case, run.policy) for run in plan(None, None)[:3]]
    [('choosy', 'choosy'), ('choosy', 'offline-restricted'), ('tsf', 'fifo')]
    >>> plan("offline", ["nope"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown reference scheduler 'nope'; allowed: ...
    """
    if only is not None and only not in CASES:
        raise ValueError(f"unknown benchmark case {only!r}; allowed: {', '.join(CASES)}")
    runs: list[Planned] = []
    if only in (None, "choosy"):
        runs.append(Planned("choosy", "choosy", TARGETS["choosy"]))
    if only in (None, "offline"):
        names = list(policies) if only and policies else ["offline-restricted"]
        _known(names, REFERENCE_POLICIES, "reference scheduler")
        runs.extend(Planned("choosy", name, TARGETS["offline"]) for name in names)
    if only in (None, "tsf"):
        names = list(policies) if policies else list(ONLINE_POLICIES)
        _known(names, ONLINE_POLICIES, "online policy")
        runs.extend(Planned("tsf", name, TARGETS["tsf"]) for name in names)
    return runs


def _known(names: Sequence[str], allowed: Collection[str], kind: str) -> None:
    """Raise ``ValueError`` for the first of ``names`` not ``allowed``, before any run."""
    for name in names:
        if name not in allowed:
            raise ValueError(f"unknown {kind} {name!r}; allowed: {', '.join(allowed)}")
