"""The test suite's tiers (issue 27 item 7): every test module in exactly one, and each test's.

A tier is a pytest marker, registered in ``pyproject.toml``, that conftest's
``pytest_collection_modifyitems`` puts on every test (``python -m pytest -m unit`` runs one):

``unit``
    In process, on fixed examples: fairshare's functions called directly.
``property``
    In process, on inputs Hypothesis draws (the profile of ``tests/conftest.py`` sets how many).
``e2e``
    End to end: the installed executable or ``python -m fairshare`` in a process of its own, the
    decision fingerprints, the ``reproduce`` targets.
``ray``
    On a local Ray cluster (the ``[ray]`` extra); one xdist worker runs them one after another.

:data:`FILE_TIERS` gives every ``tests/test_*.py`` its tier (``tests/test_tiers.py`` checks
that each is in exactly one, so a new module cannot be forgotten). A module of the ``unit`` or
``property`` tier may still hold tests that start a process: those are ``e2e``
(:func:`starts_process` finds them by the names they use), and the Hypothesis tests of a
``unit`` module are ``property``, so that ``-m unit`` runs the fast in-process examples only.

:data:`LIBRARY_CONTRACT` lists the modules whose in-process tests call numpy, SciPy/HiGHS,
pydantic, PyYAML, typer/rich, polars/pyarrow, Jinja2 and Hypothesis through fairshare's code:
CI runs their ``unit`` and ``property`` tests in the environment of the oldest declared versions
(``python tests/tiers.py library-contract`` prints them for ``.ci/run``). This module imports
nothing outside the standard library, so that CI can run it before anything is installed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

TESTS = Path(__file__).resolve().parent

TIERS = ("unit", "property", "e2e", "ray")
"""The tier markers, in the order ``pyproject.toml`` registers them."""

FILE_TIERS: dict[str, tuple[str, ...]] = {
    "unit": (
        "test_api.py",
        "test_attempt_spill.py",
        "test_backfill.py",
        "test_bench.py",
        "test_cli.py",
        "test_cli_coercion.py",
        "test_cli_help.py",
        "test_cli_tree.py",
        "test_closed_loop.py",
        "test_collector.py",
        "test_comparators.py",
        "test_constraints.py",
        "test_copy_compute.py",
        "test_core_shape.py",
        "test_delay.py",
        "test_docs_hygiene.py",
        "test_doctests.py",
        "test_eligibility.py",
        "test_engine.py",
        "test_explain.py",
        "test_errors.py",
        "test_fairness.py",
        "test_fairness_claims.py",
        "test_fairness_gangs.py",
        "test_fairness_quotas.py",
        "test_filling_highs_retry.py",
        "test_filling_lp.py",
        "test_gang.py",
        "test_gang_overcommit.py",
        "test_gang_preemption.py",
        "test_generators.py",
        "test_hdrf_headroom.py",
        "test_hdrf_headroom_resources.py",
        "test_hdrf_online.py",
        "test_hdrf_priority.py",
        "test_hdrf_starvation.py",
        "test_hygiene.py",
        "test_import_serve.py",
        "test_import_slurm.py",
        "test_import_yarn.py",
        "test_import_hostile.py",
        "test_job_events.py",
        "test_kernel.py",
        "test_kernel_cache.py",
        "test_kueue.py",
        "test_kueue_import.py",
        "test_limits.py",
        "test_live_backfill.py",
        "test_live_driver.py",
        "test_live_gangs.py",
        "test_live_http.py",
        "test_live_memory.py",
        "test_live_optional.py",
        "test_live_ray_address.py",
        "test_live_ray_mapping.py",
        "test_live_service.py",
        "test_live_store.py",
        "test_live_tenant.py",
        "test_loader.py",
        "test_generator_sizes.py",
        "test_lp_fallback.py",
        "test_lp_corpus_cases.py",
        "test_queue_caps_every_policy.py",
        "test_metrics.py",
        "test_numeric_range.py",
        "test_offer_buckets.py",
        "test_option_table.py",
        "test_paper_examples.py",
        "test_parallel.py",
        "test_policies_batching.py",
        "test_policies_paper.py",
        "test_release_batches.py",
        "test_event_queue.py",
        "test_selection.py",
        "test_preemption.py",
        "test_priority.py",
        "test_progress.py",
        "test_quota.py",
        "test_reduce_slowstart.py",
        "test_reference.py",
        "test_replica_placement.py",
        "test_report.py",
        "test_reproduce_table.py",
        "test_reproduce_verdicts.py",
        "test_samples.py",
        "test_scaling_and_fairness_metrics.py",
        "test_scenario_events.py",
        "test_sim_options.py",
        "test_simulate.py",
        "test_simulate_outputs.py",
        "test_slurm_fairtree.py",
        "test_streamed_outputs.py",
        "test_sweep_grid.py",
        "test_task_sandbox.py",
        "test_tiers.py",
        "test_trace_formats.py",
        "test_trace_kueue_workloads.py",
        "test_trace_numbers.py",
        "test_trace_slurm_sacct.py",
        "test_traces.py",
        "test_traces_alibaba_batch.py",
        "test_unrunnable.py",
        "test_whatif.py",
    ),
    "property": (
        "test_attempt_rows.py",
        "test_constrained_properties.py",
        "test_fair_ties.py",
        "test_kernel_records.py",
        "test_solver_properties.py",
        "test_streamed_metrics.py",
        "test_timeline_reference.py",
        "test_usage_over_time.py",
    ),
    "e2e": (
        "test_bench_traces.py",
        "test_decision_fingerprints.py",
        "test_executable.py",
        "test_explain_cli.py",
        "test_first_contact.py",
        "test_fuzz.py",
        "test_kueue_cli.py",
        "test_live_cli.py",
        "test_live_store_cli.py",
        "test_live_transport.py",
        "test_live_ops.py",
        "test_out_dir.py",
        "test_reproduce.py",
        "test_reproduce_events.py",
        "test_reproduce_sensitivity.py",
        "test_reproduce_drift.py",
        "test_reproduce_targets.py",
        "test_sweep.py",
        "test_traces_alibaba_batch_cli.py",
        "test_whatif_cli.py",
        "test_whatif_tutorial.py",
    ),
    "ray": (
        "test_live_isolation.py",
        "test_live_load_ray.py",
        "test_live_ray.py",
        "test_live_tenant_ray.py",
        "test_sweep_ray.py",
        "test_whatif_ray.py",
    ),
}
"""Every test module's tier, by file name (each in exactly one)."""

LIBRARY_CONTRACT = (
    "test_api.py",
    "test_cli.py",
    "test_cli_coercion.py",
    "test_cli_tree.py",
    "test_collector.py",
    "test_constraints.py",
    "test_doctests.py",
    "test_eligibility.py",
    "test_fairness.py",
    "test_filling_lp.py",
    "test_generators.py",
    "test_limits.py",
    "test_loader.py",
    "test_metrics.py",
    "test_numeric_range.py",
    "test_option_table.py",
    "test_paper_examples.py",
    "test_report.py",
    "test_scenario_events.py",
    "test_simulate.py",
    "test_simulate_outputs.py",
    "test_streamed_metrics.py",
    "test_streamed_outputs.py",
    "test_sweep_grid.py",
    "test_trace_formats.py",
    "test_trace_numbers.py",
    "test_traces.py",
)
"""The modules of the library-contract tests that the oldest environment runs (their ``unit``
and ``property`` tests): the loader (PyYAML, pydantic), the solvers and LPs (numpy, SciPy,
HiGHS), the command line in process (typer, rich), the output files and traces (polars,
pyarrow), the reports (Jinja2, matplotlib), the sweeps' grids, the API and every module's
docstring examples. The policies and the simulator are fairshare's own code, run whole in the
newest environment."""

PROCESS_NAMES = frozenset({"subprocess", "run_fairshare", "fairshare_executable"})
"""Names through which a test starts a process: the ``subprocess`` module, and conftest's
helpers that run the installed executable."""


def file_tier(name: str) -> str:
    """The tier of test module ``name`` (a file name such as ``"test_cli.py"``).

    Raises
    ------
    KeyError
        When :data:`FILE_TIERS` does not list it.
    """
    for tier, names in FILE_TIERS.items():
        if name in names:
            return tier
    raise KeyError(f"tests/tiers.py: {name} is in no tier of FILE_TIERS")


def _code_names(code: CodeType) -> set[str]:
    """The global and attribute names ``code`` and the functions nested in it use."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            names |= _code_names(constant)
    return names


def _test_suite_functions(target: object) -> list[Callable[..., Any]]:
    """``target`` if it is a function of the test suite, a test-suite class's functions if it
    is such a class; nothing for the library's own code, which may start processes of its own
    (a sweep's workers) in a test that calls it in process."""
    functions = [target] if callable(target) and hasattr(target, "__code__") else []
    if isinstance(target, type):
        functions = [f for f in vars(target).values() if hasattr(f, "__code__")]
    return [f for f in functions if Path(f.__code__.co_filename).parent == TESTS]


def starts_process(function: Callable[..., Any], seen: set[CodeType] | None = None) -> bool:
    """Whether test ``function`` (or a fixture) starts a process.

    It does when it uses a name of :data:`PROCESS_NAMES`, itself or through a function or class
    of the test suite that it names, followed transitively (a module's helper that calls
    ``run_fairshare``, a worker class that calls ``subprocess.Popen``).

    Parameters
    ----------
    function : callable
        A test function or method, a Hypothesis test (its inner test is read) or a fixture.
    seen : set of code objects, optional
        The functions already followed (for recursion).

    Returns
    -------
    bool
    """
    seen = set() if seen is None else seen
    function = getattr(function, "__func__", function)
    inner = getattr(getattr(function, "hypothesis", None), "inner_test", None)
    function = inner if inner is not None else function
    code = getattr(function, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    names = _code_names(code)
    if names & PROCESS_NAMES:
        return True
    namespace: dict[str, object] = getattr(function, "__globals__", {})
    return any(
        starts_process(helper, seen)
        for name in sorted(names)
        for helper in _test_suite_functions(namespace.get(name))
    )


def tier_of(
    name: str,
    function: Callable[..., Any],
    fixtures: list[Callable[..., Any]],
) -> str:
    """The tier of one test: its module's, except that a test of a ``unit`` or ``property``
    module that starts a process (itself or through a fixture) is ``e2e``, and a Hypothesis
    test of a ``unit`` module is ``property``.

    Parameters
    ----------
    name : str
        The test module's file name.
    function : callable
        The test function.
    fixtures : list of callable
        The functions of the fixtures it uses.

    Returns
    -------
    str
        One of :data:`TIERS`.
    """
    tier = file_tier(name)
    if tier in ("e2e", "ray"):
        return tier
    if any(starts_process(f) for f in (function, *fixtures)):
        return "e2e"
    if tier == "unit" and getattr(function, "is_hypothesis_test", False):
        return "property"
    return tier


if __name__ == "__main__":
    # ``python tests/tiers.py library-contract``: the paths, for .ci/run's pytest command.
    if sys.argv[1:] != ["library-contract"]:
        sys.exit("usage: python tests/tiers.py library-contract")
    print("\n".join(f"tests/{name}" for name in LIBRARY_CONTRACT))
