"""The verdict logic of ``fairshare reproduce`` on fixed numbers."""

from __future__ import annotations

import pytest

from fairshare.experiments.targets.base import Claim, judge


def test_a_number_within_tolerance_is_reproduced() -> None:
    row = judge(Claim("gain", 1.7, tolerance=0.2, neutral=1.0), [1.5, 1.7, 1.9])
    assert row.verdict == "reproduced" and row.reason is None
    assert row.ours == pytest.approx(1.7)
    # Student's t with 2 degrees of freedom: 4.303 standard errors of 0.1155.
    assert row.spread == pytest.approx(4.302653 * 0.2 / 3**0.5, rel=1e-5)


def test_outside_tolerance_on_the_papers_side_is_same_direction() -> None:
    row = judge(Claim("gain", 1.7, tolerance=0.2, neutral=1.0), [1.2, 1.2])
    assert row.verdict == "same-direction"
    assert row.reason == "ours 1.2 is 0.5 from the paper's 1.7 (tolerance 0.2)"


def test_the_other_side_differs_with_a_reason() -> None:
    row = judge(Claim("gain", 1.7, tolerance=0.2, neutral=1.0), [0.8])
    assert row.verdict == "differs"
    assert row.reason == "ours 0.8 is below 1 where the paper has 1.7 above it"
    assert row.spread == 0.0


def test_without_a_neutral_value_only_closeness_counts() -> None:
    claim = Claim("locality", 0.75, tolerance=0.1)
    assert judge(claim, [0.7, 0.8]).verdict == "reproduced"
    row = judge(claim, [0.3])
    assert row.verdict == "differs" and row.reason is not None and "0.45 from" in row.reason


def test_a_direction_is_reproduced_when_the_interval_clears_it() -> None:
    claim = Claim("FIFO over fair", None, neutral=1.0, direction=">")
    assert judge(claim, [1.5, 1.6, 1.55]).verdict == "reproduced"
    assert judge(claim, [1.1, 0.95, 1.3]).verdict == "same-direction"
    row = judge(claim, [0.9, 0.8])
    assert row.verdict == "differs" and row.reason == (
        "ours 0.85 is below 1 where the paper has > 1"
    )
    assert row.paper == "> 1"


def test_no_value_differs() -> None:
    row = judge(Claim("gain", 2.0, tolerance=0.5, neutral=1.0), [None, float("nan")])
    assert row.verdict == "differs" and row.ours is None
    assert row.reason is not None and row.reason.startswith("no run gave")
