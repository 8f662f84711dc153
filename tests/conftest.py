"""Shared fixtures: the paper examples shipped in examples/, loaded once per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairshare.workload.loader import load_scenario
from fairshare.workload.model import Scenario

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name: str) -> Scenario:
    return load_scenario(EXAMPLES / f"{name}.yaml")


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES
