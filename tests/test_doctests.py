"""Every module's docstring examples run as doctests, so the README's test command
(``python -m pytest``) checks them; the API's (``fairshare.api`` and the results it returns,
``fairshare._api_results``) run in ``tests/test_api.py``.

Each module of the fairshare package is one test: its examples must all pass (a module
without examples passes). A module that needs an optional extra that is not installed (ray)
is skipped; any other import error fails. Each public package listed in
:data:`PACKAGES_WITH_EXAMPLES` must run at least one example in total, so a package whose
examples all vanished (a docstring rewritten without them, a module renamed) is caught.
"""

from __future__ import annotations

import doctest
import functools
import importlib
import pkgutil
import re
import tomllib
from pathlib import Path

import pytest

import fairshare
from fairshare import kernel

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"

OPTION_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

NOT_RUN = {
    "fairshare.__main__": "importing it runs the command line",
    "fairshare.api": "its examples run in tests/test_api.py",
    "fairshare._api_results": "its examples run in tests/test_api.py",
}

PACKAGES_WITH_EXAMPLES = (
    "fairshare.allocation",
    "fairshare.backends",
    "fairshare.bench",
    "fairshare.cli",
    "fairshare.cluster",
    "fairshare.experiments",
    "fairshare.fairness",
    "fairshare.metrics",
    "fairshare.policies",
    "fairshare.report",
    "fairshare.service",
    "fairshare.sim",
    "fairshare.solvers",
    "fairshare.workload",
    "fairshare.workload.traces",
)
"""Public packages whose modules must run at least one example in total."""


def _optional_modules() -> frozenset[str]:
    """The top-level modules of pyproject.toml's optional extras (``ray`` ...): only an
    ImportError naming one of these skips a module."""
    extras = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    names = set()
    for requirements in extras.values():
        for requirement in requirements:
            found = re.match(r"[A-Za-z0-9_.-]+", requirement)
            assert found is not None, requirement
            if found.group() != "fairshare":  # an extra naming others (fairshare[test])
                names.add(found.group().lower().replace("-", "_"))
    return frozenset(names)


OPTIONAL = _optional_modules()

MODULES = sorted(
    {"fairshare"}
    | {
        name
        for _, name, _ in pkgutil.walk_packages(fairshare.__path__, "fairshare.")
        # The compiled kernel's shared library (fairshare.kernel): code, not a module.
        if not name.endswith("__mypyc")
    }
)


@functools.cache
def _results(name: str) -> doctest.TestResults | str:
    """The doctest results of module ``name``, or why it was not run (a missing extra)."""
    try:
        module = importlib.import_module(name)
    except ImportError as err:
        missing = (err.name or "").partition(".")[0]
        if missing in OPTIONAL:
            return f"needs the optional {missing!r}, which is not installed"
        raise
    # A compiled kernel module keeps no docstrings: its examples are read from the source.
    return doctest.testmod(kernel.source_module(module.__name__), optionflags=OPTION_FLAGS)


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_pass(name: str) -> None:
    if name in NOT_RUN:
        pytest.skip(NOT_RUN[name])
    results = _results(name)
    if isinstance(results, str):
        pytest.skip(results)
    # testmod printed each failing example, its expected and actual output (pytest shows it)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples failed"


@pytest.mark.parametrize("package", PACKAGES_WITH_EXAMPLES)
def test_package_runs_examples(package: str) -> None:
    members = [n for n in MODULES if n == package or n.startswith(package + ".")]
    assert members, f"no module {package}"
    attempted = 0
    for name in members:
        if name in NOT_RUN:
            continue
        results = _results(name)
        if not isinstance(results, str):
            attempted += results.attempted
    assert attempted > 0, f"no example ran in {package}"


def test_every_module_is_found() -> None:
    """The walk reaches nested packages (the trace readers) and leaves nothing out."""
    assert "fairshare.workload.traces.swf" in MODULES
    assert "fairshare.cluster.constraints" in MODULES
    assert set(NOT_RUN) <= set(MODULES)
