"""``fairshare simulate`` end to end, as a user waits for it: the online benchmark's workload
(:mod:`fairshare.bench.online`) written as a scenario file, then the installed command run in
a fresh process (start-up, imports, loading, simulating, writing every output file).

The yardstick is the simulation's own time, which the same process records as
``summary.json``'s ``wall_seconds``: the ratio says how much of what the user waits for is
not the simulation. Medians over ``repeat`` runs of each policy, the policies interleaved so
that a busy machine disturbs them alike.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fairshare.bench import online
from fairshare.cluster import Cluster
from fairshare.workload.model import ExponentialDuration, Job


def scenario_document(cluster: Cluster, jobs: Sequence[Job]) -> dict[str, object]:
    """The scenario file (SPEC section 1) of ``cluster`` and ``jobs`` with exponential
    durations (the online benchmark's jobs); the run's seed draws the durations."""
    resources = list(cluster.resources)

    def amounts(vector: Sequence[float]) -> dict[str, float]:
        return {r: float(v) for r, v in zip(resources, vector, strict=True) if v}

    documents: list[dict[str, object]] = []
    for job in jobs:
        assert isinstance(job.duration, ExponentialDuration)
        entry: dict[str, object] = {
            "name": job.name,
            "submit": job.submit,
            "user": job.user,
            "demand": amounts(job.demand.tolist()),
            "tasks": job.tasks,
            "duration": {"exponential": {"mean": job.duration.mean}},
        }
        if job.constraint is not None:
            entry["constraint"] = job.constraint.source
        documents.append(entry)
    return {
        "resources": resources,
        "machines": [
            {
                "name": m.name,
                "capacity": amounts(m.capacity.tolist()),
                "rack": m.rack,
                "attributes": dict(m.attributes),
            }
            for m in cluster.machines
        ],
        "jobs": documents,
    }


@dataclass(frozen=True)
class EndToEnd:
    """One policy's median end-to-end wall seconds and the simulation's own (median) seconds
    inside those runs."""

    policy: str
    wall_seconds: float
    simulation_seconds: float
    runs: tuple[float, ...]

    @property
    def ratio(self) -> float:
        """End-to-end time over the simulation's own time."""
        return self.wall_seconds / self.simulation_seconds if self.simulation_seconds else 0.0


def write_scenario(
    directory: Path,
    machines: int = online.MACHINES,
    jobs: int = online.JOBS,
    tasks: int = online.TASKS,
) -> Path:
    """Write the online benchmark's workload as ``directory/online.json``."""
    cluster, job_list = online.workload(machines, jobs, tasks)
    path = directory / "online.json"
    path.write_text(json.dumps(scenario_document(cluster, job_list)), encoding="utf-8")
    return path


def run_simulate(scenario: Path, policy: str, out: Path) -> tuple[float, float]:
    """Wall seconds of ``python -m fairshare simulate SCENARIO --policy P --out OUT`` and
    the simulation's own seconds from the ``summary.json`` it wrote."""
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fairshare",
            "simulate",
            str(scenario),
            "--policy",
            policy,
            "--seed",
            str(online.SIM_SEED),
            "--out",
            str(out),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return wall, float(summary["wall_seconds"])


def measure(
    policies: Sequence[str],
    repeat: int,
    machines: int = online.MACHINES,
    jobs: int = online.JOBS,
    tasks: int = online.TASKS,
) -> list[EndToEnd]:
    """The end-to-end figures of each policy, ``repeat`` runs each, interleaved."""
    walls: dict[str, list[float]] = {p: [] for p in policies}
    sims: dict[str, list[float]] = {p: [] for p in policies}
    with tempfile.TemporaryDirectory(prefix="fairshare-e2e-") as tmp:
        directory = Path(tmp)
        scenario = write_scenario(directory, machines, jobs, tasks)
        for k in range(repeat):
            for policy in policies:
                wall, sim = run_simulate(scenario, policy, directory / f"{policy}-{k}")
                walls[policy].append(wall)
                sims[policy].append(sim)
    return [
        EndToEnd(p, statistics.median(walls[p]), statistics.median(sims[p]), tuple(walls[p]))
        for p in policies
    ]
