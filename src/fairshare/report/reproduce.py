"""The figure and the page of a reproduced paper target (``fairshare reproduce``'s
``figure.svg`` and ``report.html``, :func:`render_reproduction`).

Most of the papers' evaluation figures are grouped bars (FAIR Figures 10-14 and Table 3,
H-DRF Figures 11-13, Choosy Table 1, TSF Figure 10): one group per category (a job size,
a size bin, a leaf of the hierarchy), one bar per series (a scheduler or a setting). Each
bar here is our mean over seeds with a whisker over its 95% interval, and a black diamond
marks the paper's number where it states one. Line figures (Choosy Figure 6's ramp-up
against pickiness) are drawn as lines with the same marks.

Examples
--------
>>> from fairshare.report.reproduce import Bar, grouped_figure
>>> svg = grouped_figure(
...     "FAIR Table 3", "node locality", ["3 maps", "10 maps"],
...     [("standard", [Bar(0.05, 0.03, 0.07, 0.02), Bar(0.4, 0.35, 0.45, 0.37)]),
...      ("delay scheduling", [Bar(0.8, 0.7, 0.9, 0.75), Bar(0.99, None, None, 0.99)])],
... )
>>> svg.startswith("<svg") and svg.count("<rect") >= 4 and "FAIR Table 3" in svg
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fairshare.report.figures import PALETTE
from fairshare.report.html import _ENV, fmt
from fairshare.report.scales import Scale, Tick
from fairshare.report.svg import (
    EDGE,
    FONT_SIZE,
    LINE,
    Axes,
    Figure,
    LegendEntry,
    axis_room,
    legend_width,
    num,
    text_width,
    tick_bins,
)

__all__ = ["Bar", "grouped_figure", "render_reproduction"]


@dataclass(frozen=True)
class Bar:
    """One bar: our mean, its 95% interval (None without one) and the paper's number (None
    where the paper states none)."""

    mean: float | None
    low: float | None = None
    high: float | None = None
    paper: float | None = None


def _marks(ax: Axes, x: float, bar: Bar, width: float) -> None:
    """The whisker over the bar's interval and the paper's diamond."""
    cap = 0.25 * abs(ax.px(x + width) - ax.px(x))
    if bar.low is not None and bar.high is not None:
        px, low, high = ax.px(x), ax.py(bar.low), ax.py(bar.high)
        ax.parts.append(
            f'<path d="M{num(px)} {num(low)}V{num(high)}M{num(px - cap)} {num(low)}'
            f'H{num(px + cap)}M{num(px - cap)} {num(high)}H{num(px + cap)}" '
            f'stroke="#000000" stroke-width="{num(1.5 * LINE)}" fill="none"/>'
        )
    if bar.paper is not None:
        px, py, r = ax.px(x), ax.py(bar.paper), 4.0
        ax.parts.append(
            f'<path d="M{num(px)} {num(py - r)}L{num(px + r)} {num(py)}L{num(px)} '
            f'{num(py + r)}L{num(px - r)} {num(py)}Z" fill="#000000"><title>paper: '
            f"{bar.paper:.4g}</title></path>"
        )


def grouped_figure(
    title: str,
    ylabel: str,
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[Bar]]],
    *,
    lines: bool = False,
) -> str:
    """Grouped bars (or lines) of our means with 95% whiskers and the paper's diamonds.

    Parameters
    ----------
    title : str
        The paper's figure (``FAIR Table 3 / Figure 12``).
    ylabel : str
        The metric.
    categories : Sequence of str
        The groups along x.
    series : Sequence of (str, Sequence of Bar)
        Per series, its label and one :class:`Bar` per category.
    lines : bool
        Draw each series as a line through its means instead of bars.

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    entries = [LegendEntry(label, PALETTE[k % len(PALETTE)]) for k, (label, _) in enumerate(series)]
    entries.append(LegendEntry("paper", "#000000"))
    # Each category's slot is at least as wide as its tick label and a gap, so labels never
    # overlap (TSF Figure 5's "job1 at 200 s" did); the y axis takes about 60 points.
    slot = max((text_width(c, FONT_SIZE) for c in categories), default=0.0) + FONT_SIZE
    needed = len(categories) * slot + 60.0 + legend_width(entries) + 3 * EDGE
    fig = Figure(
        max(6.0, 1.2 + 0.9 * len(categories) * max(1, len(series)) ** 0.5, needed / 72.0), 3.4
    )
    values = [0.0]
    for _, bars in series:
        for bar in bars:
            values.extend(v for v in (bar.mean, bar.high, bar.paper) if v is not None)
    lo = min(values)
    hi = max(values)
    hi = hi * 1.08 if hi > 0 else 1.0
    room = legend_width(entries) + EDGE
    x = Scale(-0.5, len(categories) - 0.5)
    y = Scale(min(lo, 0.0), hi)
    left, bottom, top = axis_room(yticks=None, xlabel=False, ylabel=True, title=True)
    height = fig.height - bottom - top
    yticks = y.ticks(tick_bins(height, "y"))
    left, _, _ = axis_room(yticks=yticks, xlabel=False, ylabel=True, title=True)
    ax = Axes(left, top, fig.width - left - room - EDGE, height, x, y)
    xticks = [Tick(float(k), label) for k, label in enumerate(categories)]
    width = 0.8 / max(len(series), 1)
    for k, (_, bars) in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        if lines:
            points = [(c, b.mean) for c, b in enumerate(bars) if b.mean is not None]
            if points:
                coords = " ".join(f"{num(ax.px(c))},{num(ax.py(m))}" for c, m in points)
                ax.parts.append(
                    f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="1.5"/>'
                )
            for c, bar in enumerate(bars):
                _marks(ax, float(c), bar, 0.1)
            continue
        for c, bar in enumerate(bars):
            centre = c + (k - (len(series) - 1) / 2) * width
            if bar.mean is not None:
                ax.rect(centre - width / 2, centre + width / 2, 0.0, bar.mean, color)
            _marks(ax, centre, bar, width)
    fig.frame(ax, xticks=xticks, yticks=yticks, ylabel=ylabel, title=title)
    fig.legend(entries, ax.left + ax.width + EDGE, ax.top)
    return fig.to_svg()


_VERDICT_COLOURS = {
    "reproduced": "#1a7f37",
    "same-direction": "#9a6700",
    "inconclusive": "#57606a",
    "differs": "#cf222e",
}
"""The verdict column's colours (GitHub's success, attention, muted and danger)."""


def _plus_minus(ours: object, spread: object) -> str:
    """``mean ± half-width`` (the mean alone with no spread; an em dash with no mean)."""
    if not isinstance(ours, int | float):
        return "—"
    if not isinstance(spread, int | float) or spread == 0:
        return fmt(float(ours))
    return f"{fmt(float(ours))} ± {fmt(float(spread))}"


def render_reproduction(
    document: Mapping[str, Any],
    *,
    description: str,
    section: str,
    scaled: str,
    figure: str,
    note: str | None = None,
) -> str:
    """``DIR/TARGET/report.html`` of ``fairshare reproduce`` (SPEC section 7): the figure
    beside a table of every row (the paper's number and its source, ours ± the spread over
    seeds, the tolerance, the neutral value, the verdict and its reason), the setup, and the
    seeds and scale as run.

    Parameters
    ----------
    document : Mapping
        ``result.json``'s document.
    description : str
        The target in one line.
    section : str
        The paper's section.
    scaled : str
        The experiment at the scale it ran, in words.
    figure : str
        The ``<svg>`` of ``figure.svg``.
    note : str, optional
        Where the model's experiment differs from the paper's.

    Returns
    -------
    str
        A self-contained HTML page.

    Examples
    --------
    >>> from fairshare.report.reproduce import render_reproduction
    >>> doc = {"target": "t", "paper": "FAIR", "figure": "Fig 1", "scale": 1.0, "seeds": 5,
    ...        "rows": [{"metric": "gain", "paper": 1.7, "ours": 1.6, "spread": 0.05,
    ...                  "verdict": "same-direction", "reason": "far", "neutral": 1.0,
    ...                  "tolerance": 0.05, "source": "Table 3"}], "setup": []}
    >>> page = render_reproduction(doc, description="d", section="6.1", scaled="all",
    ...                            figure="<svg></svg>")
    >>> "1.6 ± 0.05" in page and "5 (0 to 4)" in page
    True
    """
    rows = [
        {
            "metric": row["metric"],
            "paper": (
                fmt(row["paper"])
                if row["paper"] is not None
                else "direction only"
                if row["neutral"] is None
                else "—"
            ),
            "source": row["source"],
            "ours": _plus_minus(row["ours"], row["spread"]),
            "tolerance": "—" if row["tolerance"] is None else f"± {fmt(row['tolerance'])}",
            "neutral": fmt(row["neutral"]),
            "verdict": (
                f"{row['verdict']} (model check)"
                if row.get("kind") == "model-check"
                else row["verdict"]
            ),
            "colour": _VERDICT_COLOURS.get(str(row["verdict"]), "#000000"),
            "reason": row["reason"] or "",
            "counted": row.get("kind") != "model-check",
        }
        for row in document["rows"]
    ]
    # Model checks (true by construction, or the model against a formula) are shown, never
    # counted.
    judged = [r for r in rows if r["counted"]]
    counts = {v: sum(1 for r in judged if r["verdict"] == v) for v in _VERDICT_COLOURS}
    checks = len(rows) - len(judged)
    sensitivity = document.get("sensitivity")
    swept = [
        {
            "parameter": run["parameter"],
            "value": run["value"],
            "changed": ", ".join(run["changed"]) or "none",
            "counts": ", ".join(
                f"{n} {v}"
                for v in _VERDICT_COLOURS
                if (n := sum(1 for x in run["verdicts"].values() if x == v))
            ),
        }
        for run in (sensitivity if isinstance(sensitivity, list) else [])
    ]
    seeds = int(document["seeds"])
    scale = float(document["scale"])
    return _ENV.get_template("reproduce.html.j2").render(
        name=document["target"],
        paper=document["paper"],
        figure_name=document["figure"],
        description=description,
        section=section,
        facts=[
            ("paper", f"{document['paper']} {document['figure']} ({section})"),
            ("scale", "1 (the paper's size)" if scale == 1 else f"{scale:g}: {scaled}"),
            ("seeds", f"{seeds} (0 to {seeds - 1})" if seeds > 1 else "1 (seed 0)"),
            (
                "verdicts",
                ", ".join(f"{n} {v}" for v, n in counts.items() if n)
                + f" (of {len(judged)})"
                + (f"; {checks} model checks not counted" if checks else ""),
            ),
        ],
        svg=figure,
        rows=rows,
        setup=[
            {
                "parameter": choice["parameter"],
                "value": choice["value"],
                "why": choice["why"],
                "changes": {True: "yes", False: "no", None: "not swept yet"}[
                    choice["verdicts_change"]
                ],
            }
            for choice in document["setup"]
        ],
        swept=swept,
        note=note,
    )
