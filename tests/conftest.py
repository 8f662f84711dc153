"""Shared fixtures (the paper examples shipped in examples/, loaded once per test), the tests'
tiers as markers (``tests/tiers.py``), the Hypothesis profiles, and the scheduling of the Ray
tests under pytest-xdist."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

import fairshare
from fairshare import kernel
from fairshare.cluster import Cluster, Machine
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions, simulate
from fairshare.solvers.filling_problem import FillingProblem
from fairshare.workload.loader import load_scenario
from fairshare.workload.model import Scenario

from tiers import FILE_TIERS, TESTS, TIERS, tier_of

WHOLE_JOB_POLICIES = frozenset({"kueue", "kueue-classical", "slurm-fairtree"})
"""Policies that start every job whole, all its tasks at once (Kueue admits a workload whole;
Slurm allocates a job all its nodes together), and preempt by their own rules, not by FAIR's
``--preemption`` timeouts: a job larger than the machines (or the quota) it may use never
runs. The tests of per-task mechanisms every other policy shares leave them out; their own
tests cover them (``tests/test_kueue*.py``, ``tests/test_slurm_fairtree.py``)."""
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SAMPLE_DATA = Path(__file__).resolve().parent.parent / "data" / "samples"
"""The real trace samples shipped in the repository (``data/samples/``: one folder per trace
format, each with its ``SOURCE.md``), so the trace tests run on a bare clone."""

RAY_MODULES = frozenset(f"tests/{name}" for name in FILE_TIERS["ray"])
"""The test modules that start Ray (the ``ray`` tier), which ``python -m pytest -n N`` runs on
one worker, one after another (:func:`pytest_xdist_make_scheduler`)."""

# Hypothesis profiles (issue 27 item 7). No profile has a deadline: a deadline is a timed
# assertion, which fails on a loaded machine (tests/test_hygiene.py forbids the others).
BASE_EXAMPLES = 100
"""The ``ci`` profile's ``max_examples``: the budget tests' own counts are sized for."""
DEV_EXAMPLES = BASE_EXAMPLES // 2
"""The ``dev`` profile's: a user's ``python -m pytest -n auto`` (the README's command, which
must finish in minutes on two cores) draws half of CI's examples, fresh ones every run (not
derandomized), with Hypothesis's example database replaying a failure until it is fixed."""
# Each from Hypothesis's own defaults: a profile made without a parent inherits the one loaded
# (Hypothesis loads its own "ci" profile on import where CI is set).
_DEFAULTS = settings.get_profile("default")
settings.register_profile("dev", _DEFAULTS, max_examples=DEV_EXAMPLES, deadline=None)
# CI: the same examples on every run (a red run can be repeated with the same inputs), and no
# example database written into the clone.
settings.register_profile(
    "ci", _DEFAULTS, max_examples=BASE_EXAMPLES, deadline=None, derandomize=True, database=None
)
# A longer search, for a scheduled run: ten times every test's examples.
settings.register_profile("nightly", _DEFAULTS, max_examples=10 * BASE_EXAMPLES, deadline=None)


def hypothesis_profile(environ: Mapping[str, str]) -> str:
    """The Hypothesis profile for environment ``environ``: ``HYPOTHESIS_PROFILE`` when set, else
    ``ci`` where ``CI`` is set (``.ci/run`` exports ``CI=1``; CI services set ``CI=true``),
    else ``dev``."""
    chosen = environ.get("HYPOTHESIS_PROFILE", "")
    if chosen:
        return chosen
    return "ci" if environ.get("CI", "").lower() not in ("", "0", "false") else "dev"


settings.load_profile(hypothesis_profile(os.environ))


def scaled_examples(count: int) -> int:
    """A test's own budget ``count`` (Hypothesis examples or seeds of a seeded sweep, sized
    for its cost under the ``ci`` profile) in the active profile's proportion: ``count`` under
    ``ci``, half of it under ``dev``, ten times it under ``nightly``. An explicit
    ``max_examples`` overrides the profile's, so a test that sets one passes it through here."""
    return max(1, count * settings.default.max_examples // BASE_EXAMPLES)


def _fixture_functions(item: pytest.Item) -> list[Callable[..., Any]]:
    """The functions of the test suite's fixtures that ``item`` uses (pytest's own, such as
    ``tmp_path``, are not the suite's). pytest has no public accessor for them:
    ``_fixtureinfo`` has held them since pytest 3."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [
        definition.func
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
        if Path(definition.func.__code__.co_filename).parent == TESTS
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks every test with its tier (``tests/tiers.py``): ``python -m pytest -m unit`` runs
    the ``unit`` tier. A tier marker a test carries itself (the Ray modules' ``pytestmark``)
    must agree with the one computed."""
    for item in items:
        function = getattr(item, "function", None)
        if function is None:
            continue
        tier = tier_of(item.path.name, function, _fixture_functions(item))
        marked = {marker.name for marker in item.iter_markers()} & set(TIERS)
        if marked - {tier}:
            raise pytest.UsageError(
                f"{item.nodeid}: marked {sorted(marked)}, but its tier is {tier} (tests/tiers.py)"
            )
        item.add_marker(tier)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Says which fairshare the tests imported and which kernel ran, even under ``-q`` (the
    header is not printed then): CI installs a built wheel and runs the tests from the
    checkout, where the installed, compiled copy must be the one imported, not ``src/``."""
    kind = "compiled" if kernel.compiled() else "pure-Python"
    terminalreporter.write_line(
        f"fairshare: {Path(fairshare.__file__).parent} ({kind} kernel); "
        f"Hypothesis profile: {hypothesis_profile(os.environ)}"
    )


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


def choosy_figure_1_problem() -> FillingProblem:
    """Choosy Figure 1: ten one-slot machines as six types; u1..u4 get 1.5, 1.5, 3 and 4."""
    usable = np.array(
        [[1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1]],
        dtype=np.bool_,
    )
    return FillingProblem(
        capacity=np.ones((6, 1)),
        count=np.array([1.0, 1, 1, 1, 4, 2]),
        usable=usable,
        demands=np.ones((4, 1)),
        share_per_task=np.ones(4),
        weights=np.ones(4),
        caps=np.full(4, np.inf),
        initial=np.zeros(4),
    )
