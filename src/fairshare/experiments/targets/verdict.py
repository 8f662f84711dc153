"""The verdict of one reproduced number (SPEC section 7, ``fairshare reproduce``): one pure
function, :func:`decide`, that every target's rows go through.

The rule, in the order it is applied:

1. no value at all (no seed measured the metric): ``inconclusive``;
2. the claim has no side (no ``neutral``, or the paper's number is the neutral value
   itself, a claim of no effect): only closeness counts, ``reproduced`` within the
   tolerance, else ``differs`` ("outside the tolerance with no direction to compare");
3. the interval ``ours ± spread`` includes ``neutral``: ``inconclusive`` (the seeds do not
   tell the direction, so neither agreement nor disagreement is claimed);
4. ours on the other side of ``neutral`` than the paper's number (or direction):
   ``differs``, however close to the paper's number it is;
5. on the paper's side and within the tolerance of its number: ``reproduced``;
6. otherwise (on the paper's side, outside the tolerance, or a direction-only claim whose
   interval clears ``neutral``): ``same-direction``.

A direction-only claim (the paper prints no number) is therefore never ``reproduced``: there
is no number to be within the tolerance of.

Examples
--------
>>> from fairshare.experiments.targets.verdict import decide
>>> decide(1.049, 0.985, 0.01, neutral=1.0, tolerance=0.1)[0]  # H-DRF's Fig 12, 4 slots
'differs'
>>> decide(1.049, 0.9991, 0.0068, neutral=1.0, tolerance=0.1)[0]
'inconclusive'
>>> decide(None, 1.3, 0.1, neutral=1.0, direction=">")
('same-direction', 'the paper gives a direction only; ours 1.3 ± 0.1 is above 1 as it says')
>>> decide(0.75, 0.3, 0.0, tolerance=0.1)
('differs', "ours 0.3 is 0.45 from the paper's 0.75 (tolerance 0.1)")
"""

from __future__ import annotations

from typing import Literal

__all__ = ["VERDICTS", "Verdict", "decide"]

VERDICTS = ("reproduced", "same-direction", "inconclusive", "differs")
"""The verdicts of a row, best first."""

Verdict = Literal["reproduced", "same-direction", "inconclusive", "differs"]

_EPSILON = 1e-12
"""Slack on the tolerance comparison, so a value printed at the tolerance's edge passes."""


def _fmt(value: float | None) -> str:
    """A number for a reason line: four significant digits."""
    return "none" if value is None else f"{value:.4g}"


def _side(value: float, neutral: float) -> int:
    """+1 above ``neutral``, -1 below, 0 at it."""
    return (value > neutral) - (value < neutral)


_WORD = {1: "above", -1: "below", 0: "at"}


def decide(
    paper: float | None,
    ours: float | None,
    spread: float,
    *,
    neutral: float | None = None,
    tolerance: float | None = None,
    direction: Literal[">", "<"] | None = None,
) -> tuple[Verdict, str | None]:
    """The verdict of one row and its one-line reason (None when ``reproduced``).

    Parameters
    ----------
    paper : float or None
        The paper's number; None where it gives a direction only.
    ours : float or None
        Our mean over seeds; None where no seed measured it.
    spread : float
        Half our 95% interval over seeds (0 with one seed).
    neutral : float, optional
        The value that separates the two directions (1 for a ratio, 0 for a difference).
    tolerance : float, optional
        How far from ``paper`` ours may be and be ``reproduced`` (None with no number).
    direction : ``">"`` or ``"<"``, optional
        The paper's side of ``neutral`` when it gives no number.

    Returns
    -------
    (str, str or None)
        The verdict (module docstring) and why, unless ``reproduced``.

    Raises
    ------
    ValueError
        A direction-only claim without ``neutral`` and ``direction``.
    """
    if ours is None:
        return "inconclusive", "no run gave this metric (no finished job or task measured it)"
    allowed = 0.0 if tolerance is None else tolerance
    off = None
    if paper is not None:
        off = (
            f"ours {_fmt(ours)} is {_fmt(abs(ours - paper))} from the paper's "
            f"{_fmt(paper)} (tolerance {_fmt(allowed)})"
        )
    if paper is None:
        if neutral is None or direction is None:
            raise ValueError("a claim without a number needs a neutral value and a direction")
        wanted = 1 if direction == ">" else -1
    elif neutral is None or paper == neutral:
        if abs(ours - paper) <= allowed + _EPSILON:
            return "reproduced", None
        return "differs", off
    else:
        wanted = _side(paper, neutral)
    low, high = ours - abs(spread), ours + abs(spread)
    if low <= neutral <= high:
        return "inconclusive", (
            f"the 95% interval over seeds ({_fmt(low)} to {_fmt(high)}) includes the neutral "
            f"{_fmt(neutral)}"
        )
    side = _side(ours, neutral)
    if side != wanted:
        theirs = (
            f"{direction} {_fmt(neutral)}" if paper is None else f"{_fmt(paper)} {_WORD[wanted]} it"
        )
        return "differs", (
            f"ours {_fmt(ours)} is {_WORD[side]} {_fmt(neutral)} where the paper has {theirs}"
        )
    if paper is None:
        return "same-direction", (
            f"the paper gives a direction only; ours {_fmt(ours)} ± {_fmt(abs(spread))} is "
            f"{_WORD[side]} {_fmt(neutral)} as it says"
        )
    if abs(ours - paper) <= allowed + _EPSILON:
        return "reproduced", None
    return "same-direction", off
