"""The suite runs on several processes (``python -m pytest -n auto``, pytest-xdist): the tests
that start Ray run on one worker, one after another (conftest's ``RAY_MODULES``)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import RAY_MODULES, xdist_scope

TESTS = Path(__file__).resolve().parent


def test_the_modules_marked_ray_are_the_ones_kept_on_one_worker() -> None:
    marked = {
        f"tests/{path.name}"
        for path in TESTS.glob("test_*.py")
        # pytestmark on one line, or a list over several lines
        if re.search(
            r"^pytestmark = (?:\[[^\]]*|.*)pytest\.mark\.ray\b|^@pytest\.mark\.ray\b",
            path.read_text(),
            re.M,
        )
    }
    assert marked == RAY_MODULES


def test_the_ray_tests_are_one_unit_and_every_other_test_its_own() -> None:
    assert xdist_scope("tests/test_live_ray.py::test_a_node_removed_mid_run_loses_no_task") == "ray"
    assert (
        xdist_scope(
            "tests/test_sweep_ray.py::test_a_local_ray_instance_gives_the_local_executors_results"
        )
        == "ray"
    )
    assert xdist_scope("tests/test_live_ray_mapping.py::test_a_node_is_a_machine") == (
        "tests/test_live_ray_mapping.py::test_a_node_is_a_machine"
    )
    assert (
        xdist_scope("tests/test_limits.py::test_jumps[3]") == "tests/test_limits.py::test_jumps[3]"
    )
