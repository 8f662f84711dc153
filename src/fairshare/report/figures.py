"""The report's figures as inline SVG text, drawn by :mod:`fairshare.report.svg`.

Stacked areas (the allocation over time, Choosy Figures 10-14, H-DRF Figure 9), step CDFs
(response time and queueing delay, FAIR Figure 12, Choosy Figures 8-9) and bars (slowdown
and locality by job size, FAIR Figures 10-11).

Why not matplotlib, which drew them before: each figure is a few hundred points drawn from
binned data, and importing matplotlib and running its ``savefig`` on the three figures of a
run cost more CPU time than everything else ``simulate`` writes
(``fairshare bench end-to-end``). matplotlib stays a dependency for the paper figures to
come; the writer here keeps its look (sizes, ticks, grid, colours, legends).

Determinism: the SVG text depends only on the data (:mod:`fairshare.report.svg`).

Examples
--------
>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
...     source="two-jobs",
... )
>>> log = fairshare.simulate(scenario, "fair").log
>>> from fairshare.metrics import timeline
>>> from fairshare.report.figures import allocation_figure
>>> svg = allocation_figure(timeline(log), 30.0)
>>> svg.startswith("<svg"), svg.count("<polygon")  # one stacked area per user
(True, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fairshare.metrics import FAIR_BIN_LABELS, Timeline, ecdf, resample, share_integrals
from fairshare.metrics.frames import FloatArray
from fairshare.metrics.timeline import TimelineView
from fairshare.report.scales import Scale, Tick
from fairshare.report.svg import (
    EDGE,
    FONT_SIZE,
    Axes,
    Figure,
    LegendEntry,
    axis_room,
    legend_height,
    legend_width,
    tick_bins,
)

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
"""The colours of runs and users, in order (the Tableau 10 palette)."""
OTHERS_COLOR = "#bab0ac"
"""The colour of the users stacked as "others"."""
LOCALITY_COLORS = {"node": "#59a14f", "rack": "#edc948", "off_rack": "#e15759"}
"""The colour of each locality level."""


def top_users(tl: Timeline, horizon: float, n: int = TOP_USERS) -> list[int]:
    """The users with the largest share-seconds, largest first.

    Ties go to the user first in scenario order; users who never ran are left out.

    Parameters
    ----------
    tl : Timeline
        The run's timeline.
    horizon : float
        The end of the time axis.
    n : int
        The most users returned.

    Returns
    -------
    list of int
        Indices into ``tl.users``.

    Examples
    --------
    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> log = fairshare.simulate(scenario, "fair").log
    >>> from fairshare.metrics import timeline
    >>> from fairshare.report.figures import top_users
    >>> top_users(timeline(log), 30.0)
    [0, 1]
    """
    return top_by_area(share_integrals(tl, horizon), n)


def top_by_area(area: FloatArray, n: int = TOP_USERS) -> list[int]:
    """:func:`top_users` of the users' share-seconds ``area``."""
    order = sorted(range(area.size), key=lambda i: (-area[i], i))
    return [i for i in order[:n] if area[i] > 0]


def _axes(
    fig: Figure,
    x: Scale,
    y: Scale,
    *,
    box: tuple[float, float, float, float] | None = None,
    xticks: Sequence[Tick] | None = None,
    yticks: Sequence[Tick] | None = None,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    right: float = 0.0,
    above: float = 0.0,
    ticks: bool = True,
) -> tuple[Axes, list[Tick] | None, list[Tick] | None]:
    """An axes laid out in ``box`` (left, top, width, height; the whole figure by default)
    with room for its ticks and labels, ``right`` points kept free on its right (an outside
    legend) and ``above`` above its title (a legend on top). Ticks are chosen for the room
    the axes gets unless given; ``ticks`` False draws none (an empty axes)."""
    bx, by, bw, bh = box if box is not None else (0.0, 0.0, fig.width, fig.height)
    _, bottom, top = axis_room(
        yticks=None, xlabel=bool(xlabel), ylabel=bool(ylabel), title=bool(title), xticks=ticks
    )
    height = max(bh - bottom - top - above, 10.0)
    y_ticks = (
        (list(yticks) if yticks is not None else y.ticks(tick_bins(height, "y"))) if ticks else None
    )
    left, _, _ = axis_room(
        yticks=y_ticks, xlabel=bool(xlabel), ylabel=bool(ylabel), title=bool(title)
    )
    # Half of the last x label may stick out on the right.
    tail = 0.5 * FONT_SIZE * 3.0 if ticks else 0.0
    width = max(bw - left - max(right, tail) - EDGE, 10.0)
    x_ticks = (
        (list(xticks) if xticks is not None else x.ticks(tick_bins(width, "x"))) if ticks else None
    )
    return Axes(bx + left, by + top + above, width, height, x, y), x_ticks, y_ticks


def _palette(k: int) -> str:
    """The ``k``-th colour of :data:`PALETTE`, cycling."""
    return PALETTE[k % len(PALETTE)]


def _padded(lo: float, hi: float) -> tuple[float, float]:
    """``[lo, hi]`` widened by 5% of its span each side (matplotlib's default margins)."""
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


def allocation_figure(
    tl: Timeline, horizon: float, title: str = "", users: Sequence[str] | None = None
) -> str:
    """Dominant share of each user over time, stacked (Choosy Figures 10-14, H-DRF Figure 9).

    The top users by share-seconds (:data:`TOP_USERS`), the rest as one "others" layer; each
    layer shows the user's time-averaged share in :data:`GRID_POINTS` bins.

    Parameters
    ----------
    tl : Timeline
        The run's timeline.
    horizon : float
        The end of the time axis (a common one lines up the runs of a comparison).
    title : str
        A title above the axes; empty for none.
    users : sequence of str, optional
        The users to draw as layers, in this order, each in the colour of its position (so
        that two figures given the same list colour a user alike); the others form the
        "others" layer. Default: the run's top users.

    Returns
    -------
    str
        An ``<svg>`` element, to be inlined in an HTML report.
    """
    fig = Figure(9.0, 3.8)
    if len(tl) == 0 or horizon <= 0:
        return _empty(fig, "no task ran", title)
    grid = np.linspace(0.0, horizon, GRID_POINTS + 1)
    return _allocation(
        fig, tl.users, resample(tl, grid), share_integrals(tl, horizon), horizon, title, users
    )


def allocation_figure_of(view: TimelineView, horizon: float, title: str = "") -> str:
    """:func:`allocation_figure` of a run's :class:`~fairshare.metrics.timeline.TimelineView`
    (resampled on :data:`GRID_POINTS` bins up to ``horizon``), the same figure."""
    fig = Figure(9.0, 3.8)
    if view.rows == 0 or horizon <= 0:
        return _empty(fig, "no task ran", title)
    return _allocation(fig, view.users, view.resampled, view.integrals, horizon, title, None)


def _allocation(
    fig: Figure,
    names: Sequence[str],
    shares: FloatArray,
    area: FloatArray,
    horizon: float,
    title: str,
    users: Sequence[str] | None,
) -> str:
    """The allocation figure of the users' resampled ``shares`` and share-seconds ``area``."""
    grid = np.linspace(0.0, horizon, GRID_POINTS + 1)
    mid = (grid[:-1] + grid[1:]) / 2
    if users is None:
        top = top_by_area(area)
        positions = list(range(len(top)))
    else:
        index = {name: i for i, name in enumerate(names)}
        chosen = [(k, index[name]) for k, name in enumerate(users) if name in index]
        positions, top = [k for k, _ in chosen], [i for _, i in chosen]
    layers = [shares[i] for i in top]
    labels = [names[i] for i in top]
    colors = [_palette(k) for k in positions]
    # The other users with a share, in index order (np.setdiff1d's answer, without the
    # numpy.ma import its first call costs).
    others = area > 0
    others[top] = False
    rest = np.flatnonzero(others)
    if rest.size:
        layers.append(shares[rest].sum(axis=0))
        labels.append(f"others ({rest.size} users)")
        colors.append(OTHERS_COLOR)
    if not layers:  # tasks ran, but on so large a cluster that every share rounds to 0
        return _empty(fig, "every dominant share rounds to 0", title)
    stacked = np.cumsum(np.array(layers), axis=0)
    highest = float(stacked[-1].max())
    entries = [LegendEntry(label, color) for label, color in zip(labels, colors, strict=True)]
    entries.reverse()  # the top layer first, as the areas stack
    room = legend_width(entries) + 0.01 * fig.width
    ax, xticks, yticks = _axes(
        fig,
        Scale(0.0, horizon),
        Scale(0.0, highest * 1.05 if highest > 0 else 1.0),
        xlabel="time (s)",
        ylabel="dominant share",
        title=title,
        right=room,
    )
    outline = np.concatenate([mid, mid[::-1]])
    lower = np.zeros_like(mid)
    for layer, color in zip(stacked, colors, strict=True):
        ax.polygon(outline, np.concatenate([layer, lower[::-1]]), color)
        lower = layer
    fig.frame(
        ax, xticks=xticks, yticks=yticks, xlabel="time (s)", ylabel="dominant share", title=title
    )
    fig.legend(entries, ax.left + ax.width + 0.01 * ax.width, ax.top)
    return fig.to_svg()


def _empty(fig: Figure, message: str, title: str = "") -> str:
    """A figure with an empty axes saying ``message`` (nothing to draw)."""
    ax, _, _ = _axes(fig, Scale(0.0, 1.0), Scale(0.0, 1.0), title=title, ticks=False)
    fig.empty(ax, message)
    if title:
        fig.text(ax.left, ax.top - 6.0, title, size=12.0)
    return fig.to_svg()


def _cdf_axes(
    fig: Figure,
    box: tuple[float, float, float, float],
    series: Sequence[tuple[str, FloatArray]],
    xlabel: str,
    title: str,
    colors: Sequence[str],
    above: float,
) -> None:
    """One panel of :func:`cdf_figure`: a step CDF per run, on a symlog axis when the
    values span more than two decades.
    """
    curves: list[tuple[FloatArray, FloatArray, str]] = []
    positive_min = math.inf
    largest = 0.0
    for (_, values), color in zip(series, colors, strict=True):
        x, y = ecdf(values)
        if x.size == 0:
            continue
        curves.append((x, y, color))
        if (x > 0).any():
            positive_min = min(positive_min, float(x[x > 0].min()))
        largest = max(largest, float(x.max()))
    if not curves:
        ax, _, _ = _axes(
            fig, Scale(0.0, 1.0), Scale(0.0, 1.0), box=box, title=title, ticks=False, above=above
        )
        fig.empty(ax, f"no {xlabel.split(' (', maxsplit=1)[0]} to show")
        fig.text(ax.left, ax.top - 6.0, title, size=12.0)
        return
    # Times are never negative; anchoring at 0 also keeps a single value from filling the
    # axis as a lone vertical line.
    right = max(largest * 1.05, 1.0)
    # Heavy-tailed job sizes (FAIR Table 2) squeeze linear CDFs into one corner.
    if math.isfinite(positive_min) and largest / positive_min > 100:
        x_scale = Scale(0.0, right, "symlog", max(positive_min, 1e-3))
    else:
        x_scale = Scale(0.0, right)
    ax, xticks, yticks = _axes(
        fig,
        x_scale,
        Scale(0.0, 1.02),
        box=box,
        xlabel=xlabel,
        ylabel="fraction of jobs",
        title=title,
        above=above,
    )
    for x, y, color in curves:
        # Start each curve at F = 0 so a single value still draws a visible step.
        ax.steps(np.concatenate([x[:1], x]), np.concatenate([[0.0], y]), color)
    fig.frame(
        ax, xticks=xticks, yticks=yticks, xlabel=xlabel, ylabel="fraction of jobs", title=title
    )


def cdf_figure(
    response: Sequence[tuple[str, FloatArray]], delay: Sequence[tuple[str, FloatArray]]
) -> str:
    """Side-by-side CDFs of response time and queueing delay, one curve per run.

    FAIR Figure 12's comparison, Choosy Figure 9. With several runs, one legend sits above
    both panels.

    Parameters
    ----------
    response : Sequence of (str, FloatArray)
        Per run, its label and its jobs' response times (NaN: unfinished, left out).
    delay : Sequence of (str, FloatArray)
        Per run, its label and its jobs' queueing delays (NaN: never started, left out).

    Returns
    -------
    str
        An ``<svg>`` element, to be inlined in an HTML report.
    """
    fig = Figure(9.0, 3.3)
    colors = [_palette(k) for k in range(len(response))]
    above = 0.0
    entries = [
        LegendEntry(label, color, "line")
        for (label, _), color in zip(response, colors, strict=True)
    ]
    columns = min(len(entries), 4)
    if len(response) > 1:
        # One legend above both panels: inside either it would cover the curves.
        above = legend_height(math.ceil(len(entries) / columns)) + 2.0
    half = fig.width / 2
    _cdf_axes(
        fig,
        (0.0, 0.0, half, fig.height),
        response,
        "response time (s)",
        "response time (finished jobs)",
        colors,
        above,
    )
    _cdf_axes(
        fig,
        (half, 0.0, half, fig.height),
        delay,
        "queueing delay (s)",
        "queueing delay (started jobs)",
        colors,
        above,
    )
    if len(response) > 1:
        width = legend_width(entries, columns)
        fig.legend(entries, (fig.width - width) / 2, EDGE, columns)
    return fig.to_svg()


def bins_figure(
    runs: Sequence[tuple[str, Sequence[dict[str, object]]]], key: str, ylabel: str
) -> str:
    """Grouped bars of ``key`` per FAIR Table 2 size bin, one bar per run (FAIR Figure 10).

    Parameters
    ----------
    runs : Sequence of (str, Sequence of dict)
        Per run, its label and its :func:`~fairshare.metrics.size_bins` rows.
    key : str
        The statistic drawn (``mean_slowdown``).
    ylabel : str
        The y axis label.

    Returns
    -------
    str
        An ``<svg>`` element, to be inlined in an HTML report.
    """
    fig = Figure(9.0, 3.2)
    present = sorted({int(str(r["bin"])) for _, rows in runs for r in rows})
    if not any(isinstance(r.get(key), int | float) for _, rows in runs for r in rows):
        return _empty(fig, "no finished job" if present else "no jobs")
    width = 0.8 / max(len(runs), 1)
    bars: list[tuple[float, float, str]] = []
    for k, (_, rows) in enumerate(runs):
        by_bin = {int(str(r["bin"])): r.get(key) for r in rows}
        for position, b in enumerate(present):
            value = by_bin.get(b)
            height = float(value) if isinstance(value, int | float) else 0.0
            bars.append((position + (k - (len(runs) - 1) / 2) * width, height, _palette(k)))
    highest = max((h for _, h, _ in bars), default=0.0)
    entries = [LegendEntry(label, _palette(k)) for k, (label, _) in enumerate(runs)]
    room = legend_width(entries) + 0.01 * fig.width if len(runs) > 1 else 0.0
    xlabel = "job size (maps), FAIR Table 2 bins"
    ax, xticks, yticks = _axes(
        fig,
        Scale(*_padded(-0.4, len(present) - 1 + 0.4)),
        Scale(0.0, highest * 1.05 if highest > 0 else 1.0),
        xticks=[Tick(float(p), FAIR_BIN_LABELS[b]) for p, b in enumerate(present)],
        xlabel=xlabel,
        ylabel=ylabel,
        right=room,
    )
    for centre, height, color in bars:
        ax.rect(centre - width / 2, centre + width / 2, 0.0, height, color)
    fig.frame(ax, xticks=xticks, yticks=yticks, xlabel=xlabel, ylabel=ylabel)
    if len(runs) > 1:
        fig.legend(entries, ax.left + ax.width + 0.01 * ax.width, ax.top)
    return fig.to_svg()


def locality_figure(rows: Sequence[tuple[str, dict[str, object]]]) -> str:
    """Stacked bars of node / rack / off-rack fractions, one bar per row (FAIR Figure 11).

    Parameters
    ----------
    rows : Sequence of (str, dict)
        Per bar, its label and the fractions per level (``node``, ``rack``, ``off_rack``).

    Returns
    -------
    str
        An ``<svg>`` element, to be inlined in an HTML report.
    """
    fig = Figure(9.0, 0.9 + 0.32 * max(len(rows), 2))
    entries = [
        LegendEntry(level.replace("_", "-"), color) for level, color in LOCALITY_COLORS.items()
    ]
    xlabel = "fraction of completed tasks with input data"
    # The first row on top: the y axis runs downwards.
    lo, hi = _padded(-0.35, len(rows) - 1 + 0.35)
    ax, xticks, yticks = _axes(
        fig,
        Scale(0.0, 1.0),
        Scale(hi, lo),
        yticks=[Tick(float(k), label) for k, (label, _) in enumerate(rows)],
        xlabel=xlabel,
        above=legend_height(1),
    )
    start = [0.0] * len(rows)
    for level, color in LOCALITY_COLORS.items():
        for k, (_, loc) in enumerate(rows):
            value = loc.get(level)
            fraction = float(str(value)) if value is not None else 0.0
            ax.rect(start[k], start[k] + fraction, k - 0.35, k + 0.35, color)
            start[k] += fraction
    fig.frame(ax, xticks=xticks, yticks=yticks, xlabel=xlabel)
    fig.legend(entries, ax.left, ax.top - legend_height(1), columns=3)
    return fig.to_svg()


def rmse_figure(series: Sequence[tuple[int, str, FloatArray, FloatArray]], reference: str) -> str:
    """CDF over time of the RMSE between each run's allocation and the reference's.

    Choosy Figure 8; x in percent of the cluster.

    Parameters
    ----------
    series : Sequence of (int, str, FloatArray, FloatArray)
        Per run: its index (which picks the run's colour in the other figures), its label,
        and :meth:`~fairshare.metrics.RmseSeries.cdf`'s values and fractions.
    reference : str
        The reference run's label.

    Returns
    -------
    str
        An ``<svg>`` element, to be inlined in an HTML report.
    """
    fig = Figure(9.0, 3.2)
    curves = [(k, label, x, y) for k, label, x, y in series if x.size]
    if not curves:
        return _empty(fig, "no other run to compare with the reference")
    largest = max(100 * float(x.max()) for _, _, x, _ in curves)
    xlabel = f"RMSE of dominant shares vs {reference} (% of cluster)"
    ax, xticks, yticks = _axes(
        fig,
        Scale(0.0, largest * 1.05 if largest > 0 else 1.0),
        Scale(0.0, 1.02),
        xlabel=xlabel,
        ylabel="fraction of time",
    )
    entries = []
    for k, label, x, y in curves:
        ax.steps(np.concatenate([[0.0], 100 * x]), np.concatenate([[0.0], y]), _palette(k))
        entries.append(LegendEntry(label, _palette(k), "line"))
    fig.frame(ax, xticks=xticks, yticks=yticks, xlabel=xlabel, ylabel="fraction of time")
    # Inside, lower right: a CDF's lower right corner is empty.
    width = legend_width(entries)
    fig.legend(
        entries,
        ax.left + ax.width - width - 4.0,
        ax.top + ax.height - legend_height(len(entries)) - 4.0,
    )
    return fig.to_svg()
