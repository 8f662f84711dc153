"""What a reproduction target is, and how its numbers are judged (``fairshare reproduce``,
SPEC section 7).

A :class:`Target` is one figure or table of a paper's evaluation: the grids it runs (one
or more :class:`Part`, each a sweep grid of policies x seeds x options), and a function
that reads the merged results into :class:`Measured` numbers, each beside the paper's
(:class:`Claim`), and draws the figure. :func:`judge` turns a claim and our values over the
seeds into a :class:`Row` with its verdict:

- ``reproduced``: the paper gives a number and our mean is within the claim's tolerance of
  it; or the paper gives a direction only and our whole 95% interval is on its side;
- ``same-direction``: our mean is on the same side of the claim's neutral value as the
  paper's number (or direction), but not within the tolerance (or the interval crosses);
- ``differs``: our mean is on the other side, or there is no number at all; with a
  one-line reason.

Examples
--------
>>> from fairshare.experiments.targets.base import Claim, judge
>>> gain = Claim("throughput gain", 1.7, tolerance=0.2, neutral=1.0)
>>> judge(gain, [1.6, 1.8, 1.7]).verdict
'reproduced'
>>> judge(gain, [1.2, 1.3, 1.25]).verdict
'same-direction'
>>> row = judge(gain, [0.9, 0.95, 0.92])
>>> row.verdict, row.reason
('differs', 'ours 0.9233 is below 1 where the paper has 1.7 above it')
>>> faster = Claim("FIFO's makespan over fair's", None, neutral=1.0, direction="<")
>>> judge(faster, [0.8, 0.85, 0.9]).verdict, judge(faster, [0.8, 1.1]).verdict
('reproduced', 'same-direction')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from fairshare.metrics.intervals import mean_interval

if TYPE_CHECKING:
    import polars as pl

    from fairshare.experiments.grid import Grid

__all__ = [
    "VERDICTS",
    "Claim",
    "Evaluation",
    "Measured",
    "Part",
    "Row",
    "Target",
    "judge",
]

VERDICTS = ("reproduced", "same-direction", "differs")
"""The verdicts of a row, best first."""

Verdict = Literal["reproduced", "same-direction", "differs"]


@dataclass(frozen=True)
class Claim:
    """What the paper says about one metric.

    Parameters
    ----------
    metric : str
        The metric, as the row names it (``node locality, 3 maps, delay scheduling``).
    paper : float or None
        The paper's number; None where it gives only a direction.
    tolerance : float
        How far from the paper's number our mean may be and still be ``reproduced``
        (in the metric's own units).
    neutral : float or None
        The value that separates the two directions (1 for a ratio or gain, 0 for a
        difference); None where only closeness counts (a fraction that has no direction).
    direction : ``">"`` or ``"<"`` or None
        The paper's direction against ``neutral`` when it gives no number.
    """

    metric: str
    paper: float | None
    tolerance: float = 0.0
    neutral: float | None = None
    direction: Literal[">", "<"] | None = None

    def shown_paper(self) -> float | str:
        """The ``paper`` field of the row: the number, or the direction as text."""
        if self.paper is not None:
            return self.paper
        return f"{self.direction} {_fmt(self.neutral)}"


@dataclass(frozen=True)
class Row:
    """A row of ``result.json``: ``metric``, ``paper``, ``ours`` (the mean over seeds),
    ``spread`` (half the 95% interval over seeds; 0 with one seed), ``verdict`` and
    ``reason`` (one line where it is not ``reproduced``, else None)."""

    metric: str
    paper: float | str
    ours: float | None
    spread: float
    verdict: Verdict
    reason: str | None
    seeds: int

    def document(self) -> dict[str, object]:
        """The row as ``result.json`` holds it."""
        return {
            "metric": self.metric,
            "paper": self.paper,
            "ours": None if self.ours is None else round(self.ours, 6),
            "spread": round(self.spread, 6),
            "verdict": self.verdict,
            "reason": self.reason,
        }


def _fmt(value: float | None) -> str:
    """A number for a reason line: four significant digits."""
    return "none" if value is None else f"{value:.4g}"


def _side(value: float, neutral: float) -> str:
    """``above`` or ``below`` (or ``at``) ``neutral``."""
    return "above" if value > neutral else "below" if value < neutral else "at"


def judge(claim: Claim, values: Sequence[float | None]) -> Row:
    """The row of ``claim`` given our values of the metric, one per seed (module docstring).

    Parameters
    ----------
    claim : Claim
        The paper's number or direction.
    values : Sequence of float or None
        Ours, per seed (None or non-finite for a seed without the metric).

    Returns
    -------
    Row
    """
    interval = mean_interval(values)
    ours = interval.mean
    spread = interval.half_width
    paper = claim.shown_paper()

    def row(verdict: Verdict, reason: str | None) -> Row:
        """The row with this verdict."""
        return Row(claim.metric, paper, ours, spread, verdict, reason, interval.n)

    if ours is None:
        return row("differs", "no run gave this metric (no finished job or task measured it)")
    if claim.paper is None:
        assert claim.direction is not None and claim.neutral is not None
        neutral = claim.neutral
        right = ours > neutral if claim.direction == ">" else ours < neutral
        if not right:
            return row(
                "differs",
                f"ours {_fmt(ours)} is {_side(ours, neutral)} {_fmt(neutral)} where the paper "
                f"has {claim.direction} {_fmt(neutral)}",
            )
        low = interval.low if interval.low is not None else ours
        high = interval.high if interval.high is not None else ours
        clear = low > neutral if claim.direction == ">" else high < neutral
        if clear:
            return row("reproduced", None)
        return row(
            "same-direction",
            f"the 95% interval over seeds ({_fmt(low)} to {_fmt(high)}) reaches {_fmt(neutral)}",
        )
    if abs(ours - claim.paper) <= claim.tolerance + 1e-12:
        return row("reproduced", None)
    off = (
        f"ours {_fmt(ours)} is {_fmt(abs(ours - claim.paper))} from the paper's "
        f"{_fmt(claim.paper)} (tolerance {_fmt(claim.tolerance)})"
    )
    if claim.neutral is None:
        return row("differs", off)
    neutral = claim.neutral
    if (ours - neutral) * (claim.paper - neutral) > 0 or ours == claim.paper:
        return row("same-direction", off)
    return row(
        "differs",
        f"ours {_fmt(ours)} is {_side(ours, neutral)} {_fmt(neutral)} where the paper has "
        f"{_fmt(claim.paper)} {_side(claim.paper, neutral)} it",
    )


@dataclass(frozen=True)
class Measured:
    """One metric: the paper's claim and our values, one per seed."""

    claim: Claim
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class Evaluation:
    """What a target's results say: the measured metrics and the figure (an ``<svg>``)."""

    measured: tuple[Measured, ...]
    figure: str


@dataclass(frozen=True)
class Part:
    """One grid of a target, labelled (``3 maps``; a target with one grid has one part)."""

    label: str
    grid: Grid


@dataclass(frozen=True)
class Target:
    """A figure or table of a paper's evaluation.

    Parameters
    ----------
    name : str
        The command line's name (``fair-table3``).
    paper : str
        ``FAIR``, ``H-DRF``, ``Choosy`` or ``TSF``.
    figure : str
        The figures and tables (``Table 3, Fig 12``).
    description : str
        One line.
    section : str
        The paper's section the numbers come from.
    default_scale : float
        The scale ``reproduce`` runs at without ``--scale`` (1 is the paper's size).
    default_seeds : int
        The seeds without ``--seeds``.
    build : callable, optional
        ``(scale, seeds) -> list of Part``; None for a target the model cannot express yet.
    evaluate : callable, optional
        ``(results, seeds) -> Evaluation``: ``results`` holds every part's rows, with a
        ``part`` column.
    scaled : callable
        ``scale -> str``: the experiment at that scale, in words (``40 of 100 machines``).
    needs : str, optional
        What the model lacks to express it (then ``build`` is None).
    typical_seconds : float, optional
        Wall seconds at the default scale on the 2-core development machine.
    verdict : str, optional
        The verdicts at the default scale, as measured (``4 reproduced, 2 differ``).
    note : str, optional
        One line: where and why the model's experiment differs from the paper's, printed
        under the target's rows.
    """

    name: str
    paper: str
    figure: str
    description: str
    section: str
    default_scale: float = 1.0
    default_seeds: int = 5
    build: Callable[[float, tuple[int, ...]], list[Part]] | None = None
    evaluate: Callable[[pl.DataFrame, tuple[int, ...]], Evaluation] | None = None
    scaled: Callable[[float], str] = field(default=lambda scale: "the paper's size")
    needs: str | None = None
    typical_seconds: float | None = None
    verdict: str | None = None
    note: str | None = None

    @property
    def runnable(self) -> bool:
        """Whether the current model expresses the target."""
        return self.build is not None and self.needs is None


def per_seed(
    frame: pl.DataFrame, seeds: Sequence[int], value: Callable[[pl.DataFrame], float | None]
) -> tuple[float | None, ...]:
    """``value`` of each seed's rows of ``frame`` (None where it has no finite value)."""
    out: list[float | None] = []
    for seed in seeds:
        found = value(frame.filter(frame["seed"] == seed))
        out.append(found if found is not None and math.isfinite(found) else None)
    return tuple(out)
