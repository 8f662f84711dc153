"""Shared fixtures: the paper examples shipped in examples/, loaded once per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fairshare.workload.loader import load_scenario
from fairshare.workload.model import Scenario

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SAMPLE_DATA = Path(
    os.environ.get("FAIRSHARE_SAMPLE_DATA")
    or Path(__file__).resolve().parents[2] / "shared" / "data"
)
"""The real trace samples (``../shared/data`` beside the repository, or the environment's
``FAIRSHARE_SAMPLE_DATA``); only tests that read them skip when they are absent."""


def example(name: str) -> Scenario:
    return load_scenario(EXAMPLES / f"{name}.yaml")


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES
