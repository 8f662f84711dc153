"""The figure of a reproduced paper target (``fairshare reproduce``'s ``figure.svg``).

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

from collections.abc import Sequence
from dataclasses import dataclass

from fairshare.report.figures import PALETTE
from fairshare.report.scales import Scale, Tick
from fairshare.report.svg import (
    EDGE,
    LINE,
    Axes,
    Figure,
    LegendEntry,
    axis_room,
    legend_width,
    num,
    tick_bins,
)

__all__ = ["Bar", "grouped_figure"]


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
    fig = Figure(max(6.0, 1.2 + 0.9 * len(categories) * max(1, len(series)) ** 0.5), 3.4)
    values = [0.0]
    for _, bars in series:
        for bar in bars:
            values.extend(v for v in (bar.mean, bar.high, bar.paper) if v is not None)
    lo = min(values)
    hi = max(values)
    hi = hi * 1.08 if hi > 0 else 1.0
    entries = [LegendEntry(label, PALETTE[k % len(PALETTE)]) for k, (label, _) in enumerate(series)]
    entries.append(LegendEntry("paper", "#000000"))
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
