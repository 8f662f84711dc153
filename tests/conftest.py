"""Shared fixtures: the paper examples shipped in examples/, loaded once per test."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload.loader import load_scenario
from fairshare.workload.model import Scenario

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SAMPLE_DATA = Path(
    os.environ.get("FAIRSHARE_SAMPLE_DATA")
    or Path(__file__).resolve().parents[2] / "shared" / "data"
)
"""The real trace samples (``../shared/data`` beside the repository, or the environment's
``FAIRSHARE_SAMPLE_DATA``); only tests that read them skip when they are absent."""


RAY_MODULES = frozenset({"tests/test_live_ray.py", "tests/test_sweep_ray.py"})
"""The test modules that start Ray (marked ``ray``), which ``python -m pytest -n N`` runs on one
worker, one after another (:func:`pytest_xdist_make_scheduler`)."""


def xdist_scope(nodeid: str) -> str:
    """The unit of work a test is in under ``-n N``: ``ray`` for every test of
    :data:`RAY_MODULES`, else the test alone."""
    return "ray" if nodeid.split("::", 1)[0] in RAY_MODULES else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n N`` (pytest-xdist's ``--dist load``), tests go to the workers as they free
    up, except that the tests that start Ray go to one worker together (:func:`xdist_scope`):
    a ``ray.cluster_utils.Cluster`` writes its address where ``ray.init()`` without one looks
    (``/tmp/ray/ray_current_cluster``), so a sweep's local Ray instance started beside a test
    cluster would join it, and two clusters at once would share two cores. (``xdist_group``
    marks and ``--dist loadgroup`` do not group under pytest 9.2: pytest-xdist issue 1386.)
    Other ``--dist`` modes are pytest-xdist's own."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling  # noqa: PLC0415

    class RayTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return RayTogether(config, log)


def example(name: str) -> Scenario:
    return load_scenario(EXAMPLES / f"{name}.yaml")


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES


def fairshare_executable() -> str:
    """The installed ``fairshare`` console script of this interpreter's environment."""
    beside = Path(sys.executable).parent / "fairshare"
    found = str(beside) if beside.exists() else shutil.which("fairshare")
    if found is None:
        raise RuntimeError("the fairshare executable is not installed (pip install -e .)")
    return found


def default_signals() -> None:
    """A ``preexec_fn`` for a child a test signals: SIGINT, SIGTERM and SIGHUP at their
    defaults, as in a terminal's foreground job. fairshare keeps a signal its parent ignores
    ignored (``nohup``, a shell's background job, where SIGINT is ignored), and pytest itself
    may run as one."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def run_fairshare(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``fairshare`` as a user would: a process of its own, output captured."""
    return subprocess.run(
        [fairshare_executable(), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def assert_rejected(done: subprocess.CompletedProcess[str]) -> str:
    """Exit 2, nothing on stdout, exactly one ``error:`` line on stderr (SPEC section 4)."""
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert done.stderr.endswith("\n")
    return lines[0]


def simulate_text(text: str, tmp_path: Path, policy: str, *, headroom: bool = False) -> RunLog:
    """Simulate the scenario ``text`` (YAML) under ``policy`` with seed 0: its jobs by submit
    time, its users and queues, and headroom if asked."""
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    scenario = load_scenario(path)
    return simulate(
        scenario.cluster,
        sorted(scenario.jobs, key=lambda job: job.submit),
        policy,
        seed=0,
        users=scenario.users,
        queues=scenario.queues,
        options=SimOptions(headroom=headroom),
    )


def mixed_cluster(n: int) -> Cluster:
    """``n`` machines of the gang and backfilling tests: even ones <8 CPUs, 8 GB> on rack r0,
    odd ones <4, 8> on r1; every third (m0, m3, ...) has ``fast: true``."""
    machines = [
        Machine(
            f"m{i}",
            np.array([4.0, 8.0]) if i % 2 else np.array([8.0, 8.0]),
            rack=f"r{i % 2}",
            attributes={"fast": i % 3 == 0},
        )
        for i in range(n)
    ]
    return Cluster.build(["cpu", "mem"], machines)
