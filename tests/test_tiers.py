"""The suite's tiers and Hypothesis profiles (``tests/tiers.py``, ``tests/conftest.py``): every
test module is in exactly one tier, every test carries exactly one tier marker, the tests that
start a process are ``e2e`` wherever they are, and ``CI`` selects the derandomized profile."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import settings

import test_cli
import test_constraints
import test_fuzz
import test_trace_numbers

from conftest import RAY_MODULES, hypothesis_profile, scaled_examples
from tiers import FILE_TIERS, LIBRARY_CONTRACT, TESTS, TIERS, file_tier, starts_process, tier_of


def test_every_test_module_is_in_exactly_one_tier() -> None:
    listed = Counter(name for names in FILE_TIERS.values() for name in names)
    assert sorted(FILE_TIERS) == sorted(TIERS)
    assert [name for name, count in listed.items() if count > 1] == []
    assert sorted(listed) == sorted(path.name for path in TESTS.glob("test_*.py"))


def test_the_ray_tier_is_the_modules_kept_on_one_worker() -> None:
    assert {f"tests/{name}" for name in FILE_TIERS["ray"]} == RAY_MODULES
    assert file_tier("test_live_ray.py") == "ray"
    with pytest.raises(KeyError, match=r"test_absent\.py is in no tier"):
        file_tier("test_absent.py")


def test_the_library_contract_modules_run_in_process() -> None:
    """The oldest environment runs their ``unit`` and ``property`` tests: a module of the
    ``e2e`` or ``ray`` tier would give it none."""
    assert len(set(LIBRARY_CONTRACT)) == len(LIBRARY_CONTRACT)
    assert {file_tier(name) for name in LIBRARY_CONTRACT} <= {"unit", "property"}


def test_every_collected_test_has_exactly_one_tier(request: pytest.FixtureRequest) -> None:
    items = request.session.items
    assert request.node in items
    for item in items:
        tiers = [marker.name for marker in item.iter_markers() if marker.name in TIERS]
        assert len(set(tiers)) == 1, (item.nodeid, tiers)


def test_a_test_that_runs_a_process_is_e2e_in_a_unit_module() -> None:
    assert file_tier("test_cli.py") == "unit"
    end_to_end = test_cli.test_console_script_end_to_end_has_no_traceback
    assert starts_process(end_to_end)
    assert tier_of("test_cli.py", end_to_end, []) == "e2e"
    in_process = test_cli.test_json_document_has_the_spec_fields
    assert not starts_process(in_process)
    assert tier_of("test_cli.py", in_process, []) == "unit"


def test_a_process_started_through_a_module_helper_is_found() -> None:
    """``simulate`` of test_trace_numbers runs conftest's ``run_fairshare``; the fuzz tests
    start their worker through a class of their module."""
    through_helper = (
        test_trace_numbers.test_submit_plus_duration_at_the_bound_keeps_the_summary_finite
    )
    assert starts_process(through_helper)
    assert not starts_process(test_trace_numbers.test_duplicate_job_ids_name_the_trace_line)
    assert starts_process(test_fuzz.test_the_worker_reports_a_crash_instead_of_hanging)


def test_a_hypothesis_test_of_a_unit_module_is_property() -> None:
    drawn = test_constraints.test_random_expressions_match_reference
    assert tier_of("test_constraints.py", drawn, []) == "property"
    assert tier_of("test_fuzz.py", test_fuzz.test_fuzzed_scenarios_solve_cleanly, []) == "e2e"


@pytest.fixture
def interpreter_version() -> str:
    return subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.version_info[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_fixture_that_starts_a_process_makes_its_test_e2e(
    interpreter_version: str, request: pytest.FixtureRequest
) -> None:
    assert interpreter_version == "3"
    assert request.node.get_closest_marker("e2e") is not None
    assert request.node.get_closest_marker("unit") is None


def test_the_library_contract_list_prints_for_ci() -> None:
    done = subprocess.run(
        [sys.executable, str(TESTS / "tiers.py"), "library-contract"],
        capture_output=True,
        text=True,
        check=True,
    )
    paths = done.stdout.split()
    assert paths == [f"tests/{name}" for name in LIBRARY_CONTRACT]
    assert all((TESTS.parent / path).is_file() for path in paths)


def test_ci_selects_the_derandomized_profile_and_hypothesis_profile_overrides() -> None:
    assert hypothesis_profile({}) == "dev"
    assert hypothesis_profile({"CI": "1"}) == "ci"
    assert hypothesis_profile({"CI": "true"}) == "ci"
    assert hypothesis_profile({"CI": "false"}) == "dev"
    assert hypothesis_profile({"CI": "0"}) == "dev"
    assert hypothesis_profile({"CI": "1", "HYPOTHESIS_PROFILE": "nightly"}) == "nightly"
    assert hypothesis_profile({"HYPOTHESIS_PROFILE": "ci"}) == "ci"


def test_the_profiles() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize is True
    assert ci.deadline is None
    assert ci.database is None
    assert settings.get_profile("dev").derandomize is False
    assert settings.get_profile("dev").deadline is None
    assert 2 * settings.get_profile("dev").max_examples == ci.max_examples
    nightly = settings.get_profile("nightly")
    assert nightly.max_examples == 10 * ci.max_examples
    assert nightly.deadline is None


def test_a_tests_own_budget_scales_with_the_profile() -> None:
    """A count is sized for ``ci``: half of it under ``dev``, ten times under ``nightly``."""
    active = settings.default.max_examples
    assert scaled_examples(400) == 400 * active // settings.get_profile("ci").max_examples
    assert (
        scaled_examples(400)
        == {"dev": 200, "ci": 400, "nightly": 4000}[hypothesis_profile(os.environ)]
    )
    assert scaled_examples(0) == 1
