"""The report's figures, drawn with matplotlib's object API (no pyplot, so no global backend
or figure state) and returned as inline SVG text.

Determinism: SVG ids are salted with a fixed string, the date is left out, and text is kept
as text (``svg.fonttype: none``) so the bytes depend only on the data and matplotlib's
version.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from fairshare.metrics import FAIR_BIN_LABELS, Timeline, ecdf, resample, share_integrals
from fairshare.metrics.frames import FloatArray

TOP_USERS = 10
"""Users drawn individually in an allocation figure; the rest are stacked as 'others'."""

GRID_POINTS = 400
"""Time bins of an allocation figure: each shows the users' time-averaged share in the bin,
so a run with a million changes draws as fast as one with ten."""

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#86bcb6",
)
OTHERS_COLOR = "#bab0ac"
LOCALITY_COLORS = {"node": "#59a14f", "rack": "#edc948", "off_rack": "#e15759"}

_RC: Any = {  # a dict; typed Any because matplotlib types keys as a Literal union
    "svg.hashsalt": "fairshare",
    "svg.fonttype": "none",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}


def _figure(width: float = 9.0, height: float = 3.6) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasSVG(fig)
    return fig


def to_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element for inlining in HTML (XML prologue and DOCTYPE
    dropped, width made responsive)."""
    buf = io.StringIO()
    with mpl.rc_context(_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    start = text.index("<svg")
    svg = text[start:]
    # Scale to the page width while keeping the aspect ratio from the viewBox.
    return re.sub(
        r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 width="100%"', svg, count=1
    )


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#666")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)


def top_users(tl: Timeline, horizon: float, n: int = TOP_USERS) -> list[int]:
    """Indices of the ``n`` users with the largest share-seconds, largest first; ties go to
    the user first in scenario order."""
    area = share_integrals(tl, horizon)
    order = sorted(range(len(tl.users)), key=lambda i: (-area[i], i))
    return [i for i in order[:n] if area[i] > 0]


def allocation_figure(tl: Timeline, horizon: float, title: str = "") -> str:
    """Dominant share of each user over time, stacked (Choosy Figures 10-14, H-DRF Figure 9):
    the top users by share-seconds, the rest as 'others'."""
    with mpl.rc_context(_RC):
        fig = _figure(9.0, 3.8)
        ax = fig.add_subplot()
        if len(tl) == 0 or horizon <= 0:
            _empty(ax, "no task ran")
            return to_svg(fig)
        grid = np.linspace(0.0, horizon, GRID_POINTS + 1)
        shares = resample(tl, grid)
        mid = (grid[:-1] + grid[1:]) / 2
        top = top_users(tl, horizon)
        layers = [shares[i] for i in top]
        labels = [tl.users[i] for i in top]
        colors = [PALETTE[k % len(PALETTE)] for k in range(len(top))]
        area = share_integrals(tl, horizon)
        rest = np.setdiff1d(np.flatnonzero(area > 0), top)
        if rest.size:
            layers.append(shares[rest].sum(axis=0))
            labels.append(f"others ({rest.size} users)")
            colors.append(OTHERS_COLOR)
        if not layers:  # tasks ran, but on so large a cluster that every share rounds to 0
            _empty(ax, "every dominant share rounds to 0")
            return to_svg(fig)
        ax.stackplot(mid, np.array(layers), labels=labels, colors=colors, linewidth=0)
        ax.set_xlim(0, horizon)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("dominant share")
        if title:
            ax.set_title(title, loc="left")
        ax.legend(
            loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, reverse=True
        )
        return to_svg(fig)


def _cdf_axes(
    ax: Axes, series: Sequence[tuple[str, FloatArray]], xlabel: str, colors: Sequence[str]
) -> None:
    drawn = False
    positive_min = np.inf
    largest = 0.0
    for (label, values), color in zip(series, colors, strict=True):
        x, y = ecdf(values)
        if x.size == 0:
            continue
        drawn = True
        # Start each curve at F = 0 so a single value still draws a visible step.
        ax.step(
            np.concatenate([[x[0]], x]),
            np.concatenate([[0.0], y]),
            where="post",
            label=label,
            color=color,
        )
        if (x > 0).any():
            positive_min = min(positive_min, float(x[x > 0].min()))
        largest = max(largest, float(x.max()))
    if not drawn:
        _empty(ax, f"no {xlabel.split(' (', maxsplit=1)[0]} to show")
        return
    # Heavy-tailed job sizes (FAIR Table 2) squeeze linear CDFs into one corner.
    if np.isfinite(positive_min) and largest / positive_min > 100:
        ax.set_xscale("symlog", linthresh=max(positive_min, 1e-3))
    # Times are never negative; anchoring at 0 also keeps a single value from filling the
    # axis as a lone vertical line.
    ax.set_xlim(left=0, right=max(largest * 1.05, 1.0))
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of jobs")


def cdf_figure(
    response: Sequence[tuple[str, FloatArray]], delay: Sequence[tuple[str, FloatArray]]
) -> str:
    """Side-by-side CDFs of response time and queueing delay, one curve per run (FAIR
    Figure 12's comparison, Choosy Figure 9)."""
    with mpl.rc_context(_RC):
        fig = _figure(9.0, 3.3)
        left, right = fig.subplots(1, 2)
        colors = [PALETTE[k % len(PALETTE)] for k in range(len(response))]
        _cdf_axes(left, response, "response time (s)", colors)
        left.set_title("response time (finished jobs)", loc="left")
        _cdf_axes(right, delay, "queueing delay (s)", colors)
        right.set_title("queueing delay (started jobs)", loc="left")
        if len(response) > 1:
            # One legend above both panels: inside either it would cover the curves.
            handles, labels = left.get_legend_handles_labels()
            if not handles:
                handles, labels = right.get_legend_handles_labels()
            fig.legend(
                handles,
                labels,
                loc="outside upper center",
                ncols=min(len(labels), 4),
                fontsize=8,
                frameon=False,
            )
        return to_svg(fig)


def bins_figure(
    runs: Sequence[tuple[str, Sequence[dict[str, object]]]], key: str, ylabel: str
) -> str:
    """Grouped bars of ``key`` per FAIR Table 2 size bin, one bar per run (FAIR Figure 10)."""
    with mpl.rc_context(_RC):
        fig = _figure(9.0, 3.2)
        ax = fig.add_subplot()
        present = sorted({int(str(r["bin"])) for _, rows in runs for r in rows})
        if not any(isinstance(r.get(key), int | float) for _, rows in runs for r in rows):
            _empty(ax, "no finished job" if present else "no jobs")
            return to_svg(fig)
        width = 0.8 / max(len(runs), 1)
        pos = np.arange(len(present), dtype=np.float64)
        for k, (label, rows) in enumerate(runs):
            by_bin = {int(str(r["bin"])): r.get(key) for r in rows}
            vals = [by_bin.get(b) for b in present]
            heights = [float(v) if isinstance(v, int | float) else 0.0 for v in vals]
            ax.bar(
                pos + (k - (len(runs) - 1) / 2) * width,
                heights,
                width=width,
                label=label,
                color=PALETTE[k % len(PALETTE)],
            )
        ax.set_xticks(pos, [FAIR_BIN_LABELS[b] for b in present])
        ax.set_xlabel("job size (maps), FAIR Table 2 bins")
        ax.set_ylabel(ylabel)
        if len(runs) > 1:
            ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return to_svg(fig)


def locality_figure(rows: Sequence[tuple[str, dict[str, object]]]) -> str:
    """Stacked bars of node / rack / off-rack fractions, one bar per row (FAIR Figure 11)."""
    with mpl.rc_context(_RC):
        fig = _figure(9.0, 0.9 + 0.32 * max(len(rows), 2))
        ax = fig.add_subplot()
        labels = [label for label, _ in rows]
        y = np.arange(len(rows), dtype=np.float64)
        left = np.zeros(len(rows))
        for level, color in LOCALITY_COLORS.items():
            vals = np.array(
                [
                    float(str(loc.get(level))) if loc.get(level) is not None else 0.0
                    for _, loc in rows
                ]
            )
            ax.barh(y, vals, left=left, color=color, label=level.replace("_", "-"), height=0.7)
            left += vals
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("fraction of completed tasks with input data")
        ax.legend(ncols=3, fontsize=8, frameon=False, loc="lower left", bbox_to_anchor=(0, 1.0))
        return to_svg(fig)


def rmse_figure(series: Sequence[tuple[int, str, FloatArray, FloatArray]], reference: str) -> str:
    """CDF over time of the RMSE between each run's allocation vector and the reference's
    (Choosy Figure 8); x in percent of the cluster. Each series is (run index, label, x, F),
    the run index picking the run's color in the other figures."""
    with mpl.rc_context(_RC):
        fig = _figure(9.0, 3.2)
        ax = fig.add_subplot()
        drawn = False
        for k, label, x, y in series:
            if x.size == 0:
                continue
            drawn = True
            ax.step(
                np.concatenate([[0.0], 100 * x]),
                np.concatenate([[0.0], y]),
                where="post",
                label=label,
                color=PALETTE[k % len(PALETTE)],
            )
        if not drawn:
            _empty(ax, "no other run to compare with the reference")
            return to_svg(fig)
        ax.set_xlim(left=0)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel(f"RMSE of dominant shares vs {reference} (% of cluster)")
        ax.set_ylabel("fraction of time")
        ax.legend(fontsize=8, frameon=False, loc="lower right")
        return to_svg(fig)
