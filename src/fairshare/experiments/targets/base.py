"""What a reproduction target is, and how its numbers are judged (``fairshare reproduce``,
SPEC section 7).

A :class:`Target` is one figure or table of a paper's evaluation: the grids it runs (one
or more :class:`Part`, each a sweep grid of policies x seeds x options), the choices it
makes that the paper does not fix (:class:`Setup`), and a function that reads the merged
results into :class:`Measured` numbers, each beside the paper's (:class:`Claim`, with the
paper's words as its ``source``), and draws the figure. :func:`judge` turns a claim and our
values over the seeds into a :class:`Row` whose verdict is SPEC section 7's rule
(:func:`~.verdict.decide`): ``reproduced``, ``same-direction``, ``inconclusive`` or
``differs``, with a one-line reason.

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
>>> judge(gain, [0.8, 1.1]).verdict
'inconclusive'
>>> faster = Claim("FIFO's makespan over fair's", None, neutral=1.0, direction="<")
>>> judge(faster, [0.8, 0.85, 0.9]).verdict, judge(faster, [0.8, 1.1]).verdict
('same-direction', 'inconclusive')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from fairshare.experiments.targets.verdict import VERDICTS, Verdict, decide
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
    "Setup",
    "Target",
    "Variant",
    "counted",
    "judge",
]

Kind = Literal["claim", "model-check"]
"""A row's kind: a ``claim`` of the paper, or a ``model-check``: a number the model's own
rules fix (rack locality with delay scheduling is 1.0 by construction), or the model set
against a formula the paper derives but prints no number of (Choosy's ramp-up bound, where
the tolerance can only be ours): shown, never counted in the verdicts."""


@dataclass(frozen=True)
class Claim:
    """What the paper says about one metric.

    Parameters
    ----------
    metric : str
        The metric, as the row names it (``node locality, 3 maps, delay scheduling``). A
        threshold of ours (not printed by the paper) is named here as ours.
    paper : float or None
        The paper's number, as it prints it; None where it gives only a direction.
    tolerance : float
        How far from the paper's number our mean may be and still be ``reproduced``
        (in the metric's own units): the paper's printed precision or spread.
    neutral : float or None
        The value that separates the two directions (1 for a ratio or gain, 0 for a
        difference); None where only closeness counts (a fraction that has no direction).
    direction : ``">"`` or ``"<"`` or None
        The paper's direction against ``neutral`` when it gives no number.
    source : str
        The paper's words or table cell behind ``paper`` (or behind the direction).
    kind : ``"claim"`` or ``"model-check"``
        ``model-check`` for a row true by construction in the model, or one that sets the
        model against a formula of the paper with no printed number (:data:`Kind`): it
        is judged and shown, but no verdict count includes it (issue 33, item 3).
    """

    metric: str
    paper: float | None
    tolerance: float = 0.0
    neutral: float | None = None
    direction: Literal[">", "<"] | None = None
    source: str = ""
    kind: Kind = "claim"

    def shown_paper(self) -> float | str:
        """The paper's number, or its direction as text (``> 1``), for people."""
        if self.paper is not None:
            return self.paper
        return f"{self.direction} {_fmt(self.neutral)}"


@dataclass(frozen=True)
class Row:
    """A row of ``result.json`` (SPEC section 7): ``metric``, ``paper`` (None for a
    direction-only claim), ``ours`` (the mean over seeds), ``spread`` (half the 95% interval
    over seeds; 0 with one seed), ``verdict`` and ``reason`` (one line where it is not
    ``reproduced``, else None), ``neutral``, ``tolerance`` (None without a number) and
    ``source``; ``shown`` is the paper's column for people (``> 1`` for a direction);
    ``kind`` is ``model-check`` for a row no verdict count includes (:data:`Kind`)."""

    metric: str
    paper: float | None
    ours: float | None
    spread: float
    verdict: Verdict
    reason: str | None
    seeds: int
    neutral: float | None = None
    tolerance: float | None = None
    source: str = ""
    shown: float | str | None = None
    kind: Kind = "claim"

    def document(self) -> dict[str, object]:
        """The row as ``result.json`` holds it (``kind`` only on a model check, so the
        rows of claims keep SPEC section 7's fields)."""
        extra: dict[str, object] = {"kind": self.kind} if self.kind != "claim" else {}
        return {
            "metric": self.metric,
            "paper": self.paper,
            "ours": None if self.ours is None else round(self.ours, 6),
            "spread": round(self.spread, 6),
            "verdict": self.verdict,
            "reason": self.reason,
            "neutral": self.neutral,
            "tolerance": self.tolerance,
            "source": self.source,
            **extra,
        }


def _fmt(value: float | None) -> str:
    """A number for a reason line: four significant digits."""
    return "none" if value is None else f"{value:.4g}"


def judge(claim: Claim, values: Sequence[float | None]) -> Row:
    """The row of ``claim`` given our values of the metric, one per seed: the mean and
    95% interval over seeds judged by :func:`~.verdict.decide` (SPEC section 7's rule).

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
    tolerance = None if claim.paper is None else claim.tolerance
    # A paper's number at the neutral value (a slowdown of 1.00: no difference) claims no
    # side: only closeness counts, and the row says so with no neutral (an interval across
    # it would otherwise read as an inconclusive direction beside a reproduced verdict).
    sided = claim.neutral is not None and claim.paper != claim.neutral
    neutral = claim.neutral if sided else None
    verdict, reason = decide(
        claim.paper,
        interval.mean,
        interval.half_width,
        neutral=claim.neutral,
        tolerance=tolerance,
        direction=claim.direction,
    )
    return Row(
        claim.metric,
        claim.paper,
        interval.mean,
        interval.half_width,
        verdict,
        reason,
        interval.n,
        neutral,
        tolerance,
        claim.source,
        claim.shown_paper(),
        claim.kind,
    )


def counted(rows: Sequence[Row]) -> list[Row]:
    """The rows the verdict counts include: every row but the model checks."""
    return [row for row in rows if row.kind != "model-check"]


@dataclass(frozen=True)
class Variant:
    """One value of a :class:`Setup`'s sensitivity sweep: the value in words and the
    target's grids built with it (``fairshare reproduce --sensitivity``).

    Parameters
    ----------
    value : str
        The value (``rack slowdown 1.2``).
    build : callable
        ``(scale, seeds) -> list of Part``, the target's build with this value.
    """

    value: str
    build: Callable[[float, tuple[int, ...]], list[Part]]


@dataclass(frozen=True)
class Setup:
    """A choice a target makes that the paper does not fix, or that differs from it
    (``result.json``'s ``setup``, SPEC section 7).

    Parameters
    ----------
    parameter : str
        What is chosen (``rack slowdown``).
    value : str
        Its value here, in words (``2.0 (a non-local map runs 2x longer)``).
    why : str
        Where the value comes from (the paper's text, a documented default) or why.
    verdicts_change : bool or None
        Whether any verdict changes across the parameter's plausible range, as last
        measured at the default scale (``fairshare reproduce --sensitivity`` measures it
        afresh); None where no sensitivity sweep has been run.
    sweep : tuple of Variant
        The ends of the parameter's plausible range (issue 33, item 4), each a build of the
        target with that value; empty where the parameter is not swept.
    """

    parameter: str
    value: str
    why: str
    verdicts_change: bool | None = None
    sweep: tuple[Variant, ...] = ()

    def document(self) -> dict[str, object]:
        """The choice as ``result.json`` holds it (the swept values are in its
        ``sensitivity``, written by ``--sensitivity``)."""
        return {
            "parameter": self.parameter,
            "value": self.value,
            "why": self.why,
            "verdicts_change": self.verdicts_change,
        }


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
    setup : tuple of Setup
        The choices the paper does not fix (``result.json``'s ``setup``).
    note : str, optional
        One line: where and why the model's experiment differs from the paper's, printed
        under the target's rows.
    wall_clock : bool
        Its numbers are wall-clock times measured while it runs (Choosy Table 2's solver
        run times): its verdicts depend on the machine and its load, so the committed
        verdict table marks it and the drift test does not rerun it.
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
    setup: tuple[Setup, ...] = ()
    note: str | None = None
    wall_clock: bool = False

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
