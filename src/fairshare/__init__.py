"""fairshare: fair multi-resource cluster scheduling.

Exact offline solvers, online schedulers, a trace-driven simulator and a fairness property
checker for the policies of five papers: the FAIR scheduler, Dominant Resource Fairness (DRF),
Hierarchical DRF (H-DRF), Constrained Max-Min Fairness with Choosy, and Task Share Fairness (TSF).

The Python API (:mod:`fairshare.api`) is exported here: :func:`load_scenario` and
:func:`parse_scenario` read a scenario, :func:`solve` computes its exact fair allocation,
:func:`simulate` and :func:`compare` replay jobs under online policies, :func:`check` searches
for a violation of a fairness property. The names are loaded on first use, so ``import
fairshare`` does not pay for the simulator, polars or HiGHS until they are needed. Every error
they raise about their input is a :class:`FairshareError` (``except fairshare.FairshareError``
catches them all).

Examples
--------
DRF section 4.1: A's tasks need <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>, on <9 CPUs, 18 GB>.

>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
...     source="drf-section-4.1",
... )
>>> fairshare.solve(scenario, "drf").tasks_by_user()
{'A': 3.0, 'B': 2.0}
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fairshare import kernel as _kernel

__version__ = "0.1.0"

if _kernel.pure_python_requested():
    _kernel.use_pure_python()
elif _stale := _kernel.stale_modules():
    import sys as _sys

    _kernel.use_pure_python()
    _sys.stderr.write(
        f"fairshare: the compiled kernel is older than {_stale[0]}'s source; running the "
        "Python sources (rebuild it with: pip install -e .)\n"
    )

if TYPE_CHECKING:
    from fairshare.api import (
        ONLINE_POLICIES,
        PROPERTIES,
        SOLVER_POLICIES,
        Allocation,
        ChangeCheck,
        CheckResult,
        Comparison,
        FairshareError,
        InvalidRequest,
        PolicyError,
        Run,
        Scenario,
        ScenarioError,
        SimOptions,
        Solution,
        SolverFailure,
        UnknownPolicy,
        WhatIf,
        check,
        check_change,
        compare,
        load_scenario,
        parse_scenario,
        replay,
        screen_unrunnable,
        simulate,
        solve,
        unrunnable_jobs,
        validate_comparison,
        validate_policy,
        whatif,
        workload_of,
    )

__all__ = [
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
]


_ERRORS = frozenset({"FairshareError", "PolicyError", "UnknownPolicy"})
"""The names :mod:`fairshare.errors` defines: loaded from there, so that an ``except
fairshare.FairshareError`` does not import the whole API (the simulator, polars)."""


def __getattr__(name: str) -> Any:
    if name in __all__:
        home = "fairshare.errors" if name in _ERRORS else "fairshare.api"
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fairshare' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
