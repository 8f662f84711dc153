"""One error hierarchy (issue 27, item 6): every error the library raises is a
``fairshare.FairshareError``; an unknown policy is one ``PolicyError`` from ``solve``,
``simulate``, ``compare`` and ``check`` alike; library messages name fields (``until``) and the
command line shows its flags (``--until``) in their place."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import fairshare
from fairshare.cli import main
from fairshare.cli.app import FLAGS, command_tree, flag, flags_in
from fairshare.errors import FairshareError, PolicyError, UnknownPolicy
from fairshare.fairness import UnknownProperty
from fairshare.sim.options import OptionError, SimOptions

from conftest import assert_rejected, run_fairshare

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TWO_JOBS = str(EXAMPLES / "sim-two-jobs.yaml")
DRF = str(EXAMPLES / "drf-section-4.1.yaml")

PRIVATE = {
    "fairshare.solvers.progressive._NoJump": "ends a jump that cannot be taken; caught there",
    "fairshare.solvers.filling_model._Infeasible": "becomes an InvalidRequest in that module",
    "fairshare.workload.reading._DuplicateKeyError": "becomes a ScenarioError when reading",
    "fairshare.workload.reading._LimitExceeded": "becomes a ScenarioError when reading",
    "fairshare.workload.reading._JsonConstantError": "becomes a ScenarioError when reading",
    "fairshare.backends.ray_task._SandboxError": "a task's exit code 126 and its error, there",
}
"""The exceptions of fairshare that are not :class:`FairshareError`: private signals between
a function and its caller in the same module, which never reach a user."""

EXTRA = {"ray", "fastapi", "uvicorn", "httpx", "starlette", "prometheus_client"}
"""The ``[ray]`` extra's packages: a module that imports them is skipped without them."""

NOT_IMPORTED = {"fairshare.__main__": "runs the command line when imported"}


def _modules() -> tuple[list[ModuleType], list[str]]:
    """Every module of the package, imported, and the names of those skipped because the
    ``[ray]`` extra is missing."""
    loaded: list[ModuleType] = [fairshare]
    skipped: list[str] = []
    for info in pkgutil.walk_packages(fairshare.__path__, prefix="fairshare."):
        if info.name in NOT_IMPORTED:
            continue
        try:
            loaded.append(importlib.import_module(info.name))
        except ModuleNotFoundError as err:
            if (err.name or "").split(".")[0] not in EXTRA:
                raise
            skipped.append(info.name)
    return loaded, skipped


def _exceptions() -> dict[str, type[BaseException]]:
    """Every ``Exception`` subclass defined in fairshare, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for module in _modules()[0]:
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, Exception)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_library_error_is_a_fairshare_error() -> None:
    found = _exceptions()
    outside = sorted(
        name
        for name, cls in found.items()
        if not issubclass(cls, FairshareError) and name not in PRIVATE
    )
    assert outside == []
    # The walk reached the errors of every layer (it would pass vacuously if it found none).
    for name in (
        "fairshare.errors.PolicyError",
        "fairshare.workload.errors.ScenarioError",
        "fairshare.workload.errors.FieldError",
        "fairshare.workload.traces._common.TraceError",
        "fairshare.cluster.constraint_syntax.ConstraintSyntaxError",
        "fairshare.solvers.errors.InvalidRequest",
        "fairshare.solvers.errors.SolverFailure",
        "fairshare.sim.options.SimulationError",
        "fairshare.sim.options.OptionError",
        "fairshare.report.outdir.OutDirError",
        "fairshare.fairness.outcomes.Inconclusive",
        "fairshare.fairness.properties.UnknownProperty",
        "fairshare.experiments.grid_model.GridError",
        "fairshare.experiments.executors.ExecutorError",
        "fairshare.experiments.store.SweepDirError",
        "fairshare.experiments.reproduce.TargetUnavailable",
        "fairshare.service.core.ServiceError",
        "fairshare.service.store.StoreError",
        "fairshare.cli.app.InputError",
    ):
        assert name in found, name
        assert issubclass(found[name], FairshareError), name


def test_the_allowed_exceptions_are_private_and_exist() -> None:
    found = _exceptions()
    for name in PRIVATE:
        assert name.rsplit(".", 1)[1].startswith("_"), name
        assert name in found, f"{name} is gone: take it off the list"


def test_the_ray_extra_modules_are_walked_when_installed() -> None:
    _, skipped = _modules()
    extra_installed = all(importlib.util.find_spec(name) is not None for name in EXTRA)
    assert (
        skipped == []
        if extra_installed
        else set(skipped)
        <= {
            "fairshare.backends.ray_cluster",
            "fairshare.backends.ray_task",
            "fairshare.service.app",
            "fairshare.service.server",
            "fairshare.service.client",
            "fairshare.service.metrics",
        }
    )


def test_the_errors_keep_their_builtin_bases() -> None:
    # Callers that caught ValueError / RuntimeError / KeyError before the hierarchy still do.
    assert issubclass(PolicyError, ValueError)
    assert issubclass(fairshare.InvalidRequest, ValueError)
    assert issubclass(fairshare.SolverFailure, RuntimeError)
    assert issubclass(UnknownProperty, KeyError)


def test_one_policy_error_class_under_every_name() -> None:
    from fairshare import policies  # noqa: PLC0415
    from fairshare.policies import protocol  # noqa: PLC0415
    from fairshare.solvers import UnknownPolicy as SolverUnknownPolicy  # noqa: PLC0415

    assert fairshare.PolicyError is policies.PolicyError is protocol.PolicyError is PolicyError
    assert fairshare.UnknownPolicy is SolverUnknownPolicy is UnknownPolicy
    assert fairshare.FairshareError is FairshareError
    assert issubclass(UnknownPolicy, PolicyError)


UNKNOWN: dict[str, tuple[Callable[[], object], str]] = {
    "solve": (lambda: fairshare.solve(DRF, "lottery"), "policy"),
    "simulate": (lambda: fairshare.simulate(TWO_JOBS, "lottery"), "policy"),
    "compare": (lambda: fairshare.compare(TWO_JOBS, ["fifo", "lottery"]), "policies"),
    "check": (lambda: fairshare.check("lottery", "envy-freeness", trials=1), "policy"),
}


@pytest.mark.parametrize("entry", sorted(UNKNOWN))
def test_an_unknown_policy_is_a_policy_error_everywhere(entry: str) -> None:
    call, where = UNKNOWN[entry]
    with pytest.raises(fairshare.PolicyError) as err:
        call()
    assert type(err.value) is fairshare.UnknownPolicy
    assert isinstance(err.value, fairshare.FairshareError)
    assert err.value.where == where
    assert err.value.what.startswith("unknown ")
    assert "'lottery'" in err.value.what
    assert "allowed: " in err.value.what or "expected one of " in err.value.what


def test_an_unknown_property_is_a_fairshare_error() -> None:
    with pytest.raises(fairshare.FairshareError) as err:
        fairshare.check("drf", "fairness", trials=1)
    assert type(err.value) is UnknownProperty
    assert str(err.value).startswith("property_name: unknown property 'fairness'; allowed: ")


def test_a_library_option_error_names_the_field() -> None:
    with pytest.raises(OptionError) as err:
        SimOptions(until=-1)
    assert (err.value.where, err.value.what) == (
        "until",
        "must be a number >= 0, at most 1e+15, got -1",
    )
    assert "--" not in str(err.value)
    with pytest.raises(OptionError) as both:
        SimOptions(backfill="easy", copy_compute_splitting=True)
    assert both.value.where == "backfill"
    assert "with copy_compute_splitting (" in both.value.what


def test_a_reference_scheduler_names_the_field_it_refuses() -> None:
    with pytest.raises(PolicyError) as err:
        fairshare.validate_policy("offline-restricted", SimOptions(delay=(5.0, 10.0)))
    assert err.value.where == "delay"


def test_the_command_line_prints_the_flag(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_fairshare(
        "simulate", TWO_JOBS, "--policy", "drf", "--until", "-1", "--out", str(out)
    )
    line = assert_rejected(done)
    assert line == f"error: {TWO_JOBS}: --until: must be a number >= 0, at most 1e+15, got -1"
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--policy", "fair", "--backfill", "easy", "--copy-compute-splitting"],
         "--backfill: EASY backfilling does not combine with --copy-compute-splitting "
         "(compute parts are admitted by their machines, not by the reservation), got easy"),
        (["--policy", "offline-restricted", "--delay-scheduling", "5,10"],
         "--delay-scheduling: does not combine with the reference scheduler "
         "'offline-restricted', which places tasks by the exact offline allocation"),
        (["--policy", "fair", "--load-scale", "0"],
         "--load-scale: must be a number from 1e-06 to 1e+06, got 0"),
    ],
)  # fmt: skip
def test_the_command_line_maps_each_field_to_its_flag(
    argv: list[str], line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["simulate", TWO_JOBS, *argv, "--out", str(tmp_path / "o")])
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"error: {TWO_JOBS}: {line}\n"


def test_every_mapped_flag_is_an_option_of_the_command_line() -> None:
    tree = command_tree([], whole=True)
    options: set[str] = set()
    stack = [tree]
    while stack:
        command = stack.pop()
        options.update(o for p in command.params for o in getattr(p, "opts", ()))
        stack.extend(getattr(command, "commands", {}).values())
    assert sorted(set(FLAGS.values()) - options) == []


def test_flag_leaves_what_is_not_an_option_as_it_is() -> None:
    assert flag("until") == "--until"
    assert flag("ray_address") == "--ray"
    assert flag("jobs[2].name") == "jobs[2].name"
    assert flags_in("leave ray_address out; until then") == "leave --ray out; until then"


def test_the_base_class_loads_without_the_api() -> None:
    # `except fairshare.FairshareError` must not import the simulator and polars.
    code = (
        "import sys, fairshare\n"
        "assert fairshare.FairshareError.__module__ == 'fairshare.errors'\n"
        "print(sorted(m for m in ('fairshare.api', 'polars') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
