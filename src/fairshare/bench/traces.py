"""``fairshare simulate`` of the Alibaba traces as a user runs it: each trace given (its
directory, ``alibaba-2018`` and ``alibaba-2017`` of SPEC section 3) replayed on an empty
scenario (``{}``: the trace's machine table is the cluster) by the installed command in a
fresh process, every output file written.

Per trace it records the tasks simulated, the simulation's rate (tasks over
``summary.json``'s ``wall_seconds``, issue target: 250,000 a second), the end-to-end wall time
and its ratio to the simulation's (target: at most 1.5), the same in CPU seconds (a shared
machine inflates wall time, not CPU time), and the child's peak resident memory (its own
``ru_maxrss``, from ``wait4``: the maximum over this process's children would mix the runs).
:func:`machine` says where: the CPU model, the cores, the interpreter, whether the online
core is the compiled kernel, and the load average before the runs. ``fairshare bench
traces`` runs it.

Examples
--------
The machine's description (the measurement itself starts processes, which takes seconds):

>>> facts = machine()
>>> sorted(facts)
['cores', 'cpu', 'kernel', 'load_average', 'platform', 'python']
>>> facts["kernel"] in ("compiled", "pure Python")
True
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fairshare import kernel
from fairshare.bench.end_to_end import TIMED_CHILD

TRACES = ("alibaba-2018", "alibaba-2017")
"""The traces the benchmark replays (SPEC section 3's reader names), in the order run."""
TARGET_RATE = 250_000.0
"""The simulation rate the benchmark is judged against (tasks per second)."""
TARGET_RATIO = 1.5
"""The end-to-end wall time allowed over the simulation's own."""


def machine() -> dict[str, object]:
    """Where the figures were measured.

    Returns
    -------
    dict
        ``cpu`` (the model name of ``/proc/cpuinfo``, else :func:`platform.processor`),
        ``cores`` (those this process may run on), ``python`` (the version),
        ``platform``, ``kernel`` (``compiled`` or ``pure Python``: the online core this
        environment loads, :func:`fairshare.kernel.compiled`) and ``load_average`` (1, 5
        and 15 minutes; empty where unknown).
    """
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:  # not Linux
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "cpu": cpu,
        "cores": cores,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "kernel": "compiled" if kernel.compiled() else "pure Python",
        "load_average": load,
    }


@dataclass(frozen=True)
class TraceRun:
    """One ``fairshare simulate --trace`` process.

    Attributes
    ----------
    tasks : int
        Tasks simulated (``summary.json``'s ``tasks``).
    machines : int
        The cluster's machines.
    simulation_seconds : float
        The simulation's own wall time (``summary.json``'s ``wall_seconds``).
    wall_seconds : float
        The process's wall time.
    simulation_cpu_seconds : float
        The CPU seconds of the API's ``replay`` inside it.
    cpu_seconds : float
        The process's CPU time (user + system).
    peak_rss_bytes : int
        The process's peak resident memory.
    """

    tasks: int
    machines: int
    simulation_seconds: float
    wall_seconds: float
    simulation_cpu_seconds: float
    cpu_seconds: float
    peak_rss_bytes: int


@dataclass(frozen=True)
class TraceFigures:
    """One trace's medians over its runs.

    Attributes
    ----------
    trace : str
        The reader (``alibaba-2018``, ``alibaba-2017``).
    path : str
        The trace's directory.
    policy : str
        The online policy.
    runs : tuple of TraceRun
        Every run, in the order run.

    Examples
    --------
    >>> run = TraceRun(1_000_000, 10, 4.0, 5.0, 3.5, 4.9, 2**29)
    >>> f = TraceFigures("alibaba-2018", "DIR", "drf", (run,))
    >>> f.rate, f.ratio, f.cpu_rate, round(f.cpu_ratio, 2), f.peak_rss_bytes
    (250000.0, 1.25, 285714.28571428574, 1.4, 536870912)
    """

    trace: str
    path: str
    policy: str
    runs: tuple[TraceRun, ...]

    def _median(self, figure: Callable[[TraceRun], float]) -> float:
        return float(statistics.median(figure(r) for r in self.runs))

    @property
    def tasks(self) -> int:
        """Tasks simulated (the same in every run)."""
        return self.runs[0].tasks

    @property
    def machines(self) -> int:
        """The cluster's machines."""
        return self.runs[0].machines

    @property
    def simulation_seconds(self) -> float:
        """Median simulation wall time."""
        return self._median(lambda r: r.simulation_seconds)

    @property
    def wall_seconds(self) -> float:
        """Median end-to-end wall time."""
        return self._median(lambda r: r.wall_seconds)

    @property
    def simulation_cpu_seconds(self) -> float:
        """Median simulation CPU time."""
        return self._median(lambda r: r.simulation_cpu_seconds)

    @property
    def cpu_seconds(self) -> float:
        """Median end-to-end CPU time."""
        return self._median(lambda r: r.cpu_seconds)

    @property
    def rate(self) -> float:
        """Tasks per second of the simulation's median wall time (the issue's rate)."""
        return self.tasks / self.simulation_seconds if self.simulation_seconds else 0.0

    @property
    def cpu_rate(self) -> float:
        """Tasks per CPU second of the simulation (what a busy machine does not move)."""
        return self.tasks / self.simulation_cpu_seconds if self.simulation_cpu_seconds else 0.0

    @property
    def ratio(self) -> float:
        """End-to-end wall time over the simulation's, medians."""
        return self.wall_seconds / self.simulation_seconds if self.simulation_seconds else 0.0

    @property
    def cpu_ratio(self) -> float:
        """End-to-end CPU time over the simulation's, medians."""
        return (
            self.cpu_seconds / self.simulation_cpu_seconds if self.simulation_cpu_seconds else 0.0
        )

    @property
    def peak_rss_bytes(self) -> int:
        """The largest peak resident memory of the runs."""
        return max(r.peak_rss_bytes for r in self.runs)

    def document(self) -> dict[str, object]:
        """The figures as ``fairshare bench traces --json`` prints them.

        Returns
        -------
        dict
        """
        return {
            "trace": self.trace,
            "path": self.path,
            "policy": self.policy,
            "tasks": self.tasks,
            "machines": self.machines,
            "simulation_seconds": round(self.simulation_seconds, 6),
            "rate": round(self.rate, 1),
            "wall_seconds": round(self.wall_seconds, 6),
            "ratio": round(self.ratio, 6),
            "simulation_cpu_seconds": round(self.simulation_cpu_seconds, 6),
            "cpu_rate": round(self.cpu_rate, 1),
            "cpu_seconds": round(self.cpu_seconds, 6),
            "cpu_ratio": round(self.cpu_ratio, 6),
            "peak_rss_bytes": self.peak_rss_bytes,
            "runs": [
                {
                    "simulation_seconds": round(r.simulation_seconds, 6),
                    "wall_seconds": round(r.wall_seconds, 6),
                    "simulation_cpu_seconds": round(r.simulation_cpu_seconds, 6),
                    "cpu_seconds": round(r.cpu_seconds, 6),
                    "peak_rss_bytes": r.peak_rss_bytes,
                }
                for r in self.runs
            ],
        }


def _rss_bytes(maxrss: int) -> int:
    """``ru_maxrss`` in bytes: kilobytes on Linux, bytes on macOS."""
    return maxrss if sys.platform == "darwin" else maxrss * 1024


def run_trace(trace: str, path: Path, policy: str, out: Path, seed: int = 0) -> TraceRun:
    """Run ``fairshare simulate {} --trace TRACE:PATH --policy P --out OUT`` in a fresh
    interpreter and measure it.

    Parameters
    ----------
    trace : str
        The reader (:data:`TRACES`).
    path : Path
        The trace's directory.
    policy : str
        An online policy.
    out : Path
        The output directory; the empty scenario and the child's CPU figure go beside it.
    seed : int
        The run's seed.

    Returns
    -------
    TraceRun

    Raises
    ------
    subprocess.CalledProcessError
        The command failed (its stderr is in the error).
    """
    scenario = out.with_name(out.name + ".scenario.json")
    scenario.write_text("{}", encoding="utf-8")
    figure = out.with_name(out.name + ".cpu")
    command = [sys.executable, "-c", TIMED_CHILD, str(figure), "simulate", str(scenario)]
    command += ["--trace", f"{trace}:{path}", "--policy", policy, "--seed", str(seed)]
    command += ["--out", str(out)]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    # The child's own figures (wait4), not the maximum over every child this process had.
    errors = child.stderr.read()
    child.stderr.close()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, command, stderr=errors)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return TraceRun(
        tasks=int(summary["tasks"]),
        machines=int(summary["machines"]),
        simulation_seconds=float(summary["wall_seconds"]),
        wall_seconds=wall,
        simulation_cpu_seconds=float(figure.read_text(encoding="utf-8")),
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_rss_bytes=_rss_bytes(usage.ru_maxrss),
    )


def measure(
    traces: Mapping[str, Path],
    policy: str = "drf",
    repeat: int = 1,
    step: Callable[[str], None] | None = None,
    keep: Path | None = None,
) -> list[TraceFigures]:
    """Each trace's figures over ``repeat`` runs, the traces interleaved so that a busy
    machine disturbs them alike.

    Parameters
    ----------
    traces : mapping of str to Path
        Reader name (:data:`TRACES`) to the trace's directory.
    policy : str
        The online policy.
    repeat : int
        Runs of each trace.
    step : callable, optional
        Told the trace before each run (a progress bar).
    keep : Path, optional
        A directory for the runs' outputs (default: a temporary one, removed).

    Returns
    -------
    list of TraceFigures
        One per trace, in the order given.
    """
    runs: dict[str, list[TraceRun]] = {name: [] for name in traces}
    with tempfile.TemporaryDirectory(prefix="fairshare-traces-") as tmp:
        directory = keep if keep is not None else Path(tmp)
        for k in range(repeat):
            for name, path in traces.items():
                if step is not None:
                    step(name)
                out = directory / f"{name}-{policy}-{k}"
                runs[name].append(run_trace(name, path, policy, out))
    return [
        TraceFigures(name, str(path), policy, tuple(runs[name])) for name, path in traces.items()
    ]


def rows(figures: Sequence[TraceFigures]) -> list[list[str]]:
    """The table's rows: trace, tasks, machines, simulation s, rate, end-to-end s, ratio,
    simulation CPU s, CPU rate, CPU ratio, peak RSS.

    Parameters
    ----------
    figures : sequence of TraceFigures

    Returns
    -------
    list of list of str

    Examples
    --------
    >>> run = TraceRun(3_056_536, 4_034, 12.0, 16.0, 11.0, 15.0, 700 * 2**20)
    >>> rows([TraceFigures("alibaba-2018", "DIR", "drf", (run,))])[0]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['alibaba-2018', '3,056,536', '4,034', '12.00', '254.7k', '16.00', '1.33', '11.00',
     '277.9k', '1.36', '700 MiB']
    """
    return [
        [
            f.trace,
            f"{f.tasks:,}",
            f"{f.machines:,}",
            f"{f.simulation_seconds:.2f}",
            f"{f.rate / 1000:.1f}k",
            f"{f.wall_seconds:.2f}",
            f"{f.ratio:.2f}",
            f"{f.simulation_cpu_seconds:.2f}",
            f"{f.cpu_rate / 1000:.1f}k",
            f"{f.cpu_ratio:.2f}",
            f"{f.peak_rss_bytes / 2**20:,.0f} MiB",
        ]
        for f in figures
    ]


COLUMNS = (
    "trace",
    "tasks",
    "machines",
    "simulation s",
    "tasks/s",
    "end-to-end s",
    "ratio",
    "simulation CPU s",
    "tasks/CPU s",
    "CPU ratio",
    "peak RSS",
)
"""The table's columns (:func:`rows`)."""
