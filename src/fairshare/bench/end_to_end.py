"""``fairshare simulate`` end to end, as a user waits for it: the online benchmark's workload
(:mod:`fairshare.bench.online`) written as a scenario file, then the installed command run in
a fresh process (start-up, imports, loading, simulating, writing every output file).

The yardstick is the simulation's own time, which the same process records as
``summary.json``'s ``wall_seconds``: the ratio says how much of what the user waits for is
not the simulation (the target is at most 1.5). On a shared machine wall time measures
the other processes too, so the CPU seconds are measured alike: the child's user + system
time (``RUSAGE_CHILDREN``) against the CPU time of the simulation inside it. Medians over
``repeat`` runs of each policy, the policies interleaved so that a busy machine disturbs
them alike. ``fairshare bench end-to-end`` runs it.

Examples
--------
The scenario file of a shrunk workload (the measurement itself starts processes, which
takes seconds):

>>> import json, tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as directory:
...     path = write_scenario(Path(directory), machines=2, jobs=1, tasks=2)
...     document = json.loads(path.read_text(encoding="utf-8"))
>>> path.name, len(document["machines"]), document["jobs"][0]["tasks"]
('online.json', 2, 2)
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fairshare.bench import online
from fairshare.cluster import Cluster
from fairshare.workload.model import ExponentialDuration, Job


def scenario_document(cluster: Cluster, jobs: Sequence[Job]) -> dict[str, object]:
    """The scenario document (SPEC section 1) of ``cluster`` and ``jobs``.

    Parameters
    ----------
    cluster : Cluster
        The machines, with racks and attributes.
    jobs : sequence of Job
        Jobs with exponential durations (the online benchmark's); the run's seed draws
        the durations.

    Returns
    -------
    dict
        A scenario document; zero amounts are left out.

    Examples
    --------
    >>> from fairshare.bench import online
    >>> cluster, jobs = online.workload(machines=2, jobs=1, tasks=2)
    >>> document = scenario_document(cluster, jobs)
    >>> machine = document["machines"][1]
    >>> machine["capacity"], machine["attributes"]
    ({'cpu': 8.0, 'mem': 16.0}, {'ssd': False})
    >>> sorted(document["jobs"][0])
    ['demand', 'duration', 'name', 'submit', 'tasks', 'user']
    """
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
class EndToEndRun:
    """One ``fairshare simulate`` process.

    Attributes
    ----------
    wall_seconds : float
        The process's wall time.
    simulation_seconds : float
        The simulation's own: ``summary.json``'s ``wall_seconds``.
    cpu_seconds : float
        The process's CPU time (user + system).
    simulation_cpu_seconds : float
        The CPU seconds of the API's ``replay`` inside it.
    """

    wall_seconds: float
    simulation_seconds: float
    cpu_seconds: float
    simulation_cpu_seconds: float


@dataclass(frozen=True)
class EndToEnd:
    """One policy's medians over its runs.

    On a busy machine wall time measures the machine; the CPU figures are the comparable
    ones.

    Attributes
    ----------
    policy : str
        The online policy.
    wall_seconds, simulation_seconds, cpu_seconds, simulation_cpu_seconds : float
        The medians of the runs' figures (:class:`EndToEndRun`).
    runs : tuple of EndToEndRun
        Every run, in the order run.

    Examples
    --------
    >>> runs = (EndToEndRun(3.0, 2.0, 2.8, 2.0),)
    >>> figures = EndToEnd("drf", 3.0, 2.0, 2.8, 2.0, runs)
    >>> figures.ratio, figures.cpu_ratio
    (1.5, 1.4)
    """

    policy: str
    wall_seconds: float
    simulation_seconds: float
    cpu_seconds: float
    simulation_cpu_seconds: float
    runs: tuple[EndToEndRun, ...]

    @property
    def ratio(self) -> float:
        """End-to-end wall time over the simulation's own."""
        return self.wall_seconds / self.simulation_seconds if self.simulation_seconds else 0.0

    @property
    def cpu_ratio(self) -> float:
        """End-to-end CPU time over the simulation's own."""
        return (
            self.cpu_seconds / self.simulation_cpu_seconds if self.simulation_cpu_seconds else 0.0
        )


def write_scenario(
    directory: Path,
    machines: int = online.MACHINES,
    jobs: int = online.JOBS,
    tasks: int = online.TASKS,
) -> Path:
    """Write the online benchmark's workload as ``directory/online.json``.

    Parameters
    ----------
    directory : Path
        An existing directory.
    machines, jobs, tasks : int
        The workload's size (:func:`fairshare.bench.online.workload`).

    Returns
    -------
    Path
        The file written.
    """
    cluster, job_list = online.workload(machines, jobs, tasks)
    path = directory / "online.json"
    path.write_text(json.dumps(scenario_document(cluster, job_list)), encoding="utf-8")
    return path


TIMED_CHILD = """
import sys, time
import fairshare.api as api
from fairshare.cli import main

replay, spent = api.replay, []

def timed(*args, **kwargs):
    start = time.process_time()
    try:
        return replay(*args, **kwargs)
    finally:
        spent.append(time.process_time() - start)

api.replay = timed
try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(repr(sum(spent)))
"""
"""The child process: the command line's ``main``, as the ``fairshare`` script runs it, with
the API's ``replay`` (the simulation, which the command calls) timed in CPU seconds and the
figure written to the file named first."""


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_simulate(scenario: Path, policy: str, out: Path) -> EndToEndRun:
    """Run ``fairshare simulate SCENARIO --policy P --seed S --out OUT`` in a fresh
    interpreter and measure it.

    Parameters
    ----------
    scenario : Path
        The scenario file (:func:`write_scenario`).
    policy : str
        An online policy.
    out : Path
        The output directory; the child's CPU figure goes next to it (``OUT.cpu``).

    Returns
    -------
    EndToEndRun
        Its wall and CPU seconds (``RUSAGE_CHILDREN``, user + system), and the
        simulation's own (``summary.json``'s ``wall_seconds``, the CPU seconds of
        ``replay`` in the child).

    Raises
    ------
    subprocess.CalledProcessError
        The command failed.
    """
    figure = out.with_name(out.name + ".cpu")
    command = [sys.executable, "-c", TIMED_CHILD, str(figure), "simulate", str(scenario)]
    command += ["--policy", policy, "--seed", str(online.SIM_SEED), "--out", str(out)]
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    simulation_cpu = float(figure.read_text(encoding="utf-8"))
    return EndToEndRun(wall, float(summary["wall_seconds"]), cpu, simulation_cpu)


def measure(
    policies: Sequence[str],
    repeat: int,
    machines: int = online.MACHINES,
    jobs: int = online.JOBS,
    tasks: int = online.TASKS,
    step: Callable[[str], None] | None = None,
) -> list[EndToEnd]:
    """The end-to-end figures of each policy, ``repeat`` runs each, interleaved so that a
    busy machine disturbs them alike.

    Parameters
    ----------
    policies : sequence of str
        Online policies.
    repeat : int
        Runs of each policy.
    machines, jobs, tasks : int
        The workload's size (:func:`fairshare.bench.online.workload`).
    step : callable, optional
        Told the policy before each run (a progress bar).

    Returns
    -------
    list of EndToEnd
        One per policy, in the order given.
    """
    runs: dict[str, list[EndToEndRun]] = {p: [] for p in policies}
    with tempfile.TemporaryDirectory(prefix="fairshare-e2e-") as tmp:
        directory = Path(tmp)
        scenario = write_scenario(directory, machines, jobs, tasks)
        for k in range(repeat):
            for policy in policies:
                if step is not None:
                    step(policy)
                runs[policy].append(run_simulate(scenario, policy, directory / f"{policy}-{k}"))
    return [
        EndToEnd(
            p,
            statistics.median(r.wall_seconds for r in runs[p]),
            statistics.median(r.simulation_seconds for r in runs[p]),
            statistics.median(r.cpu_seconds for r in runs[p]),
            statistics.median(r.simulation_cpu_seconds for r in runs[p]),
            tuple(runs[p]),
        )
        for p in policies
    ]
