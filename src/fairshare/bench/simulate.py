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
CASES = ("choosy", "offline", "tsf")
"""What ``--only`` selects; ``offline`` runs the ``choosy`` workload under reference schedulers."""
TARGETS = {"choosy": 1.5, "offline": 20.0, "tsf": 2.0}
"""Seconds each case should take: Choosy's Table 2 for ``choosy``, a tenth of the paper's
228.5 s for ``offline``, and TSF section VI's scale in two seconds."""
CHOOSY_MACHINES, CHOOSY_JOBS = 1000, 300
TSF_MACHINES, TSF_JOBS = 1000, 4500


def choosy_workload(machines: int = CHOOSY_MACHINES, jobs: int = CHOOSY_JOBS) -> Workload:
    """Choosy section 7.1's workload: one-slot machines, 40 to a rack, and ``jobs`` jobs
    arriving every 12 s on average (streamed by the generator as ``simulate`` reads them)."""
    ms = [Machine(f"m{i}", np.array([1.0]), f"r{i // 40}", {}) for i in range(machines)]
    cluster = Cluster.build(("slot",), ms)
    spec = WorkloadSpec("google-constraints", {"jobs": jobs, "arrival": 12})
    return generate(spec, cluster, np.random.default_rng(SEED).spawn(1)[0])


def tsf_cluster(machines: int = TSF_MACHINES) -> Cluster:
    """TSF section VI's cluster: machines alternating (32 CPU, 16 mem) and (16, 32)."""
    ms = [
        Machine(f"m{i}", np.array([16.0, 32.0] if i % 2 else [32.0, 16.0]), f"r{i // 40}", {})
        for i in range(machines)
    ]
    return Cluster.build(("cpu", "mem"), ms)


def tsf_jobs(rng: np.random.Generator, jobs: int = TSF_JOBS) -> list[Job]:
    """TSF section VI's jobs: Poisson arrivals (mean gap 0.8 s) from 100 users, four demand
    shapes, 20-60 tasks of 30 s (exponential) each."""
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
    """Run ``policy`` on ``case``'s workload (``choosy`` or ``tsf``) in this process and
    return its figures (``seconds`` of ``simulate``, ``peak_rss_mib`` of the process)."""
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
    """:func:`run_case` in a fresh interpreter, so the peak memory is the case's own."""
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
    """One run of the benchmark: the workload, the policy and its target in seconds."""

    case: str
    policy: str
    target: float


def plan(only: str | None, policies: Sequence[str] | None) -> list[Planned]:
    """The runs of ``simulate_scale.py [--only CASE] [--policies ...]``: online ``choosy`` on
    Choosy's workload, the reference schedulers on it (``policies`` with ``only='offline'``,
    else ``offline-restricted``) and TSF's workload under ``policies`` (default: every online
    policy). Raises ``ValueError`` naming what is wrong for an unknown case or policy."""
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
    for name in names:
        if name not in allowed:
            raise ValueError(f"unknown {kind} {name!r}; allowed: {', '.join(allowed)}")
