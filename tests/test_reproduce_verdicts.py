"""The verdict rule of ``fairshare reproduce`` (SPEC section 7) on fixed numbers, on the
cases issue 33 found counted wrongly, and as a property: a pure function under which ours on
the other side of the neutral value is never ``reproduced``."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.experiments.targets import TARGETS
from fairshare.experiments.targets.base import Claim, judge
from fairshare.experiments.targets.verdict import VERDICTS, decide

from conftest import scaled_examples


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


def test_a_direction_is_never_reproduced_and_needs_its_interval() -> None:
    claim = Claim("FIFO over fair", None, neutral=1.0, direction=">", source="FIFO best")
    row = judge(claim, [1.5, 1.6, 1.55])
    assert row.verdict == "same-direction" and row.paper is None and row.tolerance is None
    assert row.shown == "> 1" and row.source == "FIFO best"
    assert judge(claim, [1.1, 0.95, 1.3]).verdict == "inconclusive"
    row = judge(claim, [0.86, 0.85, 0.84])
    assert row.verdict == "differs" and row.reason == (
        "ours 0.85 is below 1 where the paper has > 1"
    )


def test_no_value_is_inconclusive() -> None:
    row = judge(Claim("gain", 2.0, tolerance=0.5, neutral=1.0), [None, float("nan")])
    assert row.verdict == "inconclusive" and row.ours is None
    assert row.reason is not None and row.reason.startswith("no run gave")


def test_the_row_document_has_specs_fields() -> None:
    row = judge(Claim("gain", 1.7, 0.2, 1.0, source="Table 3: 1.7x"), [1.69, 1.7, 1.71])
    assert row.document() == {
        "metric": "gain",
        "paper": 1.7,
        "ours": pytest.approx(1.7),
        "spread": round(row.spread, 6),
        "verdict": "reproduced",
        "reason": None,
        "neutral": 1.0,
        "tolerance": 0.2,
        "source": "Table 3: 1.7x",
    }


def test_every_target_states_the_choices_the_paper_does_not_fix() -> None:
    for target in TARGETS:
        assert target.setup, target.name
        for choice in target.setup:
            assert choice.parameter and choice.value and choice.why, target.name
    parameters = {c.parameter for t in TARGETS for c in t.setup}
    # The choices issue 33 found deciding verdicts unprinted.
    for named in ("rack slowdown", "reducer slow-start", "job sizes", "task length", "scale"):
        assert named in parameters, named


# ---- issue 33's cases ----------------------------------------------------------------------


def test_hdrf_slower_than_four_slots_differs_even_within_tolerance() -> None:
    # H-DRF Fig 12: the paper's 4-slot makespan over H-DRF's is 1.049; ours 0.985 is
    # within 0.1 of it but on the other side of 1 (H-DRF slower).
    verdict, reason = decide(1.049, 0.985, 0.01, neutral=1.0, tolerance=0.1)
    assert verdict == "differs"
    assert reason == "ours 0.985 is below 1 where the paper has 1.049 above it"


@pytest.mark.parametrize(
    ("paper", "ours", "spread", "neutral"),
    [
        (1.049, 0.9991, 0.0068, 1.0),  # a ratio whose interval holds 1
        (0.10, 0.0003, 0.0008, 0.0),  # a difference whose interval holds 0
        (413.0, 27.0, 451.0, 0.0),  # 27 ± 451 %
        (None, 27.0, 451.0, 0.0),  # the same as a direction-only claim
    ],
)
def test_an_interval_holding_neutral_is_inconclusive(
    paper: float | None, ours: float, spread: float, neutral: float
) -> None:
    verdict, reason = decide(
        paper,
        ours,
        spread,
        neutral=neutral,
        tolerance=None if paper is None else 1000.0,
        direction=">" if paper is None else None,
    )
    assert verdict == "inconclusive"
    assert reason is not None and "includes the neutral" in reason


def test_a_direction_only_claim_on_its_side_is_same_direction() -> None:
    assert decide(None, 0.4, 0.1, neutral=1.0, direction="<")[0] == "same-direction"
    assert decide(None, 1.4, 0.1, neutral=1.0, direction="<")[0] == "differs"


def test_outside_tolerance_on_the_papers_side_with_a_clear_interval() -> None:
    assert decide(2.0, 1.3, 0.1, neutral=1.0, tolerance=0.5) == (
        "same-direction",
        "ours 1.3 is 0.7 from the paper's 2 (tolerance 0.5)",
    )


def test_no_neutral_and_outside_tolerance_differs() -> None:
    assert decide(0.995, 0.9, 0.0, tolerance=0.02)[0] == "differs"
    assert decide(0.995, 0.99, 0.3, tolerance=0.02)[0] == "reproduced"


def test_a_claim_of_no_effect_is_judged_by_closeness() -> None:
    # Choosy Table 1's 1.00 cells: the paper's number is the neutral value itself.
    assert decide(1.0, 1.0004, 0.001, neutral=1.0, tolerance=0.005)[0] == "reproduced"
    assert decide(1.0, 1.02, 0.001, neutral=1.0, tolerance=0.005)[0] == "differs"


# ---- properties ------------------------------------------------------------------------------

FINITE = st.floats(-1e6, 1e6, allow_nan=False)
CLAIMS = st.tuples(
    st.one_of(st.none(), FINITE),  # paper
    FINITE,  # ours
    st.floats(0, 1e6, allow_nan=False),  # spread
    FINITE,  # neutral
    st.floats(0, 1e6, allow_nan=False),  # tolerance
    st.sampled_from([">", "<"]),
)


@settings(max_examples=scaled_examples(500), deadline=None)
@given(CLAIMS)
def test_the_verdict_is_a_pure_function(
    claim: tuple[float | None, float, float, float, float, str],
) -> None:
    paper, ours, spread, neutral, tolerance, direction = claim
    args = (paper, ours, spread)
    kwargs = {
        "neutral": neutral,
        "tolerance": None if paper is None else tolerance,
        "direction": direction if paper is None else None,
    }
    first = decide(*args, **kwargs)  # type: ignore[arg-type]
    assert first == decide(*args, **kwargs)  # type: ignore[arg-type]
    assert first[0] in VERDICTS
    assert (first[1] is None) == (first[0] == "reproduced")
    if first[0] in ("reproduced", "same-direction") and paper != neutral:
        assert not ours - spread <= neutral <= ours + spread


@settings(max_examples=scaled_examples(500), deadline=None)
@given(CLAIMS)
def test_flipping_ours_across_neutral_never_keeps_reproduced(
    claim: tuple[float | None, float, float, float, float, str],
) -> None:
    paper, ours, spread, neutral, tolerance, _ = claim
    if paper is None or paper == neutral:
        return  # no side to keep (direction-only claims are never reproduced)
    mirrored = 2 * neutral - ours
    if not math.isfinite(mirrored) or mirrored == ours:
        return
    before = decide(paper, ours, spread, neutral=neutral, tolerance=tolerance)[0]
    after = decide(paper, mirrored, spread, neutral=neutral, tolerance=tolerance)[0]
    if before == "reproduced":
        assert after in ("differs", "inconclusive")
