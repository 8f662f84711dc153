"""The public Python API: what ``import fairshare`` exports, pinned; its docstring examples run
as doctests; and the API gives what the command line gives for the same input."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import fairshare
from fairshare import kernel
from fairshare.allocation import Allocation

from conftest import run_fairshare

EXAMPLES = Path(__file__).parent.parent / "examples"

PUBLIC = {
    "fairshare": [
        "ONLINE_POLICIES",
        "PROPERTIES",
        "SOLVER_POLICIES",
        "Allocation",
        "ChangeCheck",
        "CheckResult",
        "Comparison",
        "FairshareError",
        "InvalidRequest",
        "PolicyError",
        "Run",
        "Scenario",
        "ScenarioError",
        "SimOptions",
        "Solution",
        "SolverFailure",
        "UnknownPolicy",
        "WhatIf",
        "__version__",
        "check",
        "check_change",
        "compare",
        "load_scenario",
        "parse_scenario",
        "replay",
        "screen_unrunnable",
        "simulate",
        "solve",
        "unrunnable_jobs",
        "validate_comparison",
        "validate_policy",
        "whatif",
        "workload_of",
    ],
    "fairshare.experiments": [
        "TIMING_COLUMNS",
        "Cell",
        "ExecutorError",
        "Grid",
        "GridError",
        "SweepDirError",
        "SweepResult",
        "flat_summary",
        "load_grid",
        "parse_grid",
        "run_cell",
        "run_sweep",
    ],
    "fairshare.api": [
        "ONLINE_POLICIES",
        "PROPERTIES",
        "SOLVER_POLICIES",
        "Allocation",
        "ChangeCheck",
        "CheckResult",
        "Comparison",
        "FairshareError",
        "InvalidRequest",
        "PolicyError",
        "Run",
        "Scenario",
        "ScenarioError",
        "SimOptions",
        "Solution",
        "SolverFailure",
        "UnknownPolicy",
        "WhatIf",
        "check",
        "check_change",
        "compare",
        "load_scenario",
        "parse_scenario",
        "replay",
        "screen_unrunnable",
        "simulate",
        "solve",
        "unrunnable_jobs",
        "validate_comparison",
        "validate_policy",
        "whatif",
        "workload_of",
    ],
    "fairshare.allocation": [
        "Allocation",
        "Placement",
        "allocation_document",
        "check_allocation",
        "printed_allocation",
    ],
    "fairshare.cluster": [
        "AttributeValue",
        "BoolArray",
        "Cluster",
        "FloatArray",
        "Machine",
        "attribute_signature",
    ],
    "fairshare.workload": [
        "Job",
        "Queue",
        "Scenario",
        "ScenarioError",
        "User",
        "load_scenario",
        "parse_scenario",
    ],
    "fairshare.solvers": [
        "SOLVER_POLICIES",
        "InvalidRequest",
        "SolverFailure",
        "SolverPolicy",
        "UnknownPolicy",
        "solve",
    ],
    "fairshare.policies": [
        "ONLINE_POLICIES",
        "Decision",
        "Filter",
        "Kill",
        "Launch",
        "Policy",
        "PolicyError",
        "PolicyOptions",
        "Ranking",
        "Scheduler",
        "TaskRef",
        "make_policy",
    ],
    "fairshare.sim": [
        "JobRecord",
        "JobEvent",
        "MachineEvent",
        "RunLog",
        "SimOptions",
        "SimulationError",
        "TaskAttempt",
        "simulate",
    ],
    "fairshare.fairness": [
        "PROPERTIES",
        "CheckResult",
        "Counterexample",
        "FairnessProperty",
        "Inconclusive",
        "UnknownProperty",
        "Violation",
        "check",
    ],
    "fairshare.registry": ["PolicyInfo", "by_name"],
    "fairshare.sim.option_table": [
        "BACKFILL",
        "BY_FIELD",
        "BY_NAME",
        "COPY_COMPUTE_SPLITTING",
        "DELAY_SCHEDULING",
        "HEADROOM",
        "LOAD_SCALE",
        "MAX_CAPACITY",
        "NOT_OPTIONS",
        "OFF_RACK_SLOWDOWN",
        "OPTIONS",
        "POOL_ORDER",
        "PREEMPTION",
        "RACK_SLOWDOWN",
        "REDUCE_SLOWSTART",
        "SEED",
        "SLOTS",
        "SLOWSTART_ALONE",
        "SLOWSTART_SPLIT",
        "THRASH_FACTOR",
        "TIME_SCALE",
        "TRACE",
        "UNTIL",
        "USAGE_HALF_LIFE",
        "OptionKind",
        "SimOption",
    ],
    "fairshare.backends": [
        "DEFAULT_MAX_RETRIES",
        "ExecEvent",
        "Executor",
        "FakeExecutor",
        "Failed",
        "Finished",
        "Journal",
        "LiveDriver",
        "LiveJob",
        "OutputRef",
        "TaskSpec",
    ],
    "fairshare.service.client": ["DEFAULT_SERVER", "Client", "ClientError"],
    "fairshare.report": ["render_compare", "render_run", "write_compare", "write_outputs"],
}

DOCTESTED = ["fairshare.api", "fairshare._api_results"]
"""The API's examples run here; every other module's in ``tests/test_doctests.py``."""


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    """Adding or removing a public name is a decision: this list changes with it."""
    loaded = importlib.import_module(module)
    assert sorted(loaded.__all__) == sorted(PUBLIC[module])
    for name in loaded.__all__:
        assert getattr(loaded, name) is not None


def test_every_public_name_is_documented() -> None:
    for module in PUBLIC:
        loaded = importlib.import_module(module)
        assert loaded.__doc__, module
        for name in loaded.__all__:
            value = getattr(loaded, name)
            if callable(value) and not isinstance(value, type(sys)):
                # A compiled kernel class keeps no docstring: its source's is checked.
                home = kernel.source_module(getattr(value, "__module__", module))
                documented = getattr(home, getattr(value, "__name__", name), value)
                assert documented.__doc__, f"{module}.{name} has no docstring"


@pytest.mark.parametrize("module", DOCTESTED)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_import_fairshare_loads_no_solver_or_simulator() -> None:
    """``import fairshare`` is cheap: the API is loaded on first use."""
    code = (
        "import sys, fairshare; "
        "print(sorted(m for m in sys.modules if m.startswith(('fairshare.', 'polars', "
        "'highspy', 'scipy', 'matplotlib'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # fairshare.kernel: the standard library only, to choose the kernel's sources.
    assert done.stdout.strip() == "['fairshare.kernel']"
    assert "solve" in dir(fairshare)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        _ = fairshare.nonsense  # type: ignore[attr-defined]


def test_solve_gives_the_document_of_solve_json() -> None:
    path = EXAMPLES / "tsf-figure-4.yaml"
    solution = fairshare.solve(path, "tsf")
    assert isinstance(solution.allocation, Allocation)
    done = run_fairshare("solve", str(path), "--policy", "tsf", "--json")
    assert done.returncode == 0
    assert solution.to_dict() == json.loads(done.stdout)


def test_solution_frame_has_one_row_per_user_and_resources_used() -> None:
    solution = fairshare.solve(EXAMPLES / "drf-section-4.1.yaml", "drf")
    frame = solution.frame()
    assert frame.columns == ["user", "tasks", "share", "weight", "cpu", "mem"]
    approx = pytest.approx
    assert frame.rows() == [
        ("A", approx(3.0), approx(2 / 3), 1.0, approx(3.0), approx(12.0)),
        ("B", approx(2.0), approx(2 / 3), 1.0, approx(6.0), approx(2.0)),
    ]


def test_run_write_gives_the_files_of_simulate(tmp_path: Path) -> None:
    path = EXAMPLES / "sim-fair-section-5.3.yaml"
    run = fairshare.simulate(path, "fair", seed=3)
    run.write(tmp_path / "api")
    done = run_fairshare(
        "simulate", str(path), "--policy", "fair", "--seed", "3", "--out", str(tmp_path / "cli")
    )
    assert done.returncode == 0, done.stderr
    for name in ("jobs.csv", "timeline.csv"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    api_summary = json.loads((tmp_path / "api" / "summary.json").read_text())
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    api_summary.pop("wall_seconds")
    cli_summary.pop("wall_seconds")
    assert api_summary == cli_summary
    assert run.summary["policy"] == "fair"
    assert run.summary["seed"] == 3
    assert isinstance(run.jobs_frame(), pl.DataFrame)
    assert run.jobs_frame().height == run.summary["jobs"]
    assert run.tasks_frame().height >= run.summary["tasks"]


def test_compare_runs_every_policy_on_the_same_jobs() -> None:
    result = fairshare.compare(EXAMPLES / "sim-fair-section-5.3.yaml", ["fifo", "fair"], seed=1)
    assert [run.policy for run in result.runs] == ["fifo", "fair"]
    fifo, fair = (run.jobs_frame() for run in result.runs)
    assert fifo.select("job", "submit", "tasks").equals(fair.select("job", "submit", "tasks"))
    assert result.run("fair") is result.runs[1]
    assert result.frame()["policy"].to_list() == ["fifo", "fair"]
    document = result.to_dict()
    assert [r["label"] for r in document["runs"]] == ["fifo", "fair"]  # type: ignore[index]


def test_compare_rejects_a_policy_twice_and_an_unknown_reference() -> None:
    path = EXAMPLES / "sim-two-jobs.yaml"
    with pytest.raises(fairshare.PolicyError, match="listed twice"):
        fairshare.compare(path, ["fifo", "fifo"])
    with pytest.raises(fairshare.PolicyError, match="not one of the compared"):
        fairshare.compare(path, ["fifo"], reference="drf")


def test_simulate_rejects_an_unknown_policy_naming_the_allowed_ones() -> None:
    with pytest.raises(fairshare.PolicyError, match="unknown policy 'nope'; allowed: fifo"):
        fairshare.simulate(EXAMPLES / "sim-two-jobs.yaml", "nope")


def test_check_finds_the_papers_counterexample() -> None:
    """Asset fairness violates sharing incentive (DRF section 5.1)."""
    result = fairshare.check("asset", "sharing-incentive", seed=0)
    assert not result.holds
    assert result.counterexample is not None


def test_the_three_policy_registries_share_one_shape() -> None:
    from fairshare.registry import PolicyInfo, by_name  # noqa: PLC0415
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415

    for registry in (fairshare.SOLVER_POLICIES, fairshare.ONLINE_POLICIES, REFERENCE_POLICIES):
        assert registry
        for name, entry in registry.items():
            assert isinstance(entry, PolicyInfo)
            assert entry.name == name and entry.summary and entry.source
    twice = [PolicyInfo("drf", "a", "b"), PolicyInfo("drf", "c", "d")]
    with pytest.raises(ValueError, match="'drf' is registered twice"):
        by_name(twice)


def test_the_top_level_package_exports_the_whole_api() -> None:
    """``import fairshare`` gives every name of :mod:`fairshare.api` (and the version)."""
    assert set(fairshare.__all__) == set(PUBLIC["fairshare.api"]) | {"__version__"}
    assert fairshare.unrunnable_jobs is fairshare.api.unrunnable_jobs
