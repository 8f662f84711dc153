"""The ``sweep.html`` report of ``fairshare sweep`` (SPEC section 7): per policy and option,
the means over seeds of the headline statistics with their 95% confidence intervals, as a
table and as one figure per statistic (bars to the mean, whiskers over the interval).

It leaves out the timing columns and anything about where the cells ran, so the same
results give a byte-identical page whichever executor ran them.

Examples
--------
>>> from fairshare.metrics.intervals import mean_interval
>>> from fairshare.report.sweep import SweepSetting, render_sweep
>>> settings = [
...     SweepSetting("fifo", "fifo", {"mean_slowdown": mean_interval([2.0, 3.0, 2.5])}),
...     SweepSetting("fair", "fair", {"mean_slowdown": mean_interval([1.5, 1.7, 1.6])}),
... ]
>>> metrics = [("mean_slowdown", "mean slowdown")]
>>> page = render_sweep("grid.yaml", [("cells", "6")], settings, metrics)
>>> page.startswith("<!DOCTYPE html>"), page.count("<svg")
(True, 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fairshare.metrics.intervals import CONFIDENCE, Interval
from fairshare.report.figures import PALETTE, _axes, _empty, _padded
from fairshare.report.html import _ENV, fmt
from fairshare.report.scales import Scale, Tick
from fairshare.report.svg import LINE, Figure, num

__all__ = ["SweepSetting", "interval_figure", "render_sweep"]


@dataclass(frozen=True)
class SweepSetting:
    """A setting of a sweep (a policy with one value of every swept option and parameter;
    its cells differ only by seed): its label, policy and statistics.

    Parameters
    ----------
    label : str
        The policy, then each swept option and parameter (``drf, delay-scheduling=5,10``).
    policy : str
        The policy (it picks the setting's colour).
    stats : Mapping of str to Interval
        Per statistic (a ``results.parquet`` column), its mean over seeds and interval.
    """

    label: str
    policy: str
    stats: Mapping[str, Interval]


def _shown(interval: Interval | None) -> str:
    """``mean ± half-width`` for the table; the mean alone without an interval."""
    if interval is None or interval.mean is None:
        return "—"
    if interval.low is None:
        return fmt(interval.mean)
    return f"{fmt(interval.mean)} ± {fmt(interval.half_width)}"


def interval_figure(rows: Sequence[tuple[str, str, Interval]], xlabel: str) -> str:
    """Horizontal bars to each row's mean with whiskers over its confidence interval.

    Parameters
    ----------
    rows : Sequence of (str, str, Interval)
        Per bar, top to bottom: its label, its colour and its interval.
    xlabel : str
        The statistic.

    Returns
    -------
    str
        An ``<svg>`` element, to be inlined in an HTML report.
    """
    fig = Figure(9.0, 0.9 + 0.3 * max(len(rows), 2))
    present = [r for r in rows if r[2].mean is not None]
    if not present:
        return _empty(fig, "no run had this statistic")
    ends = [0.0]
    for _, _, interval in present:
        assert interval.mean is not None
        ends.append(interval.mean)
        ends.extend(x for x in (interval.low, interval.high) if x is not None)
    lo, hi = min(ends), max(ends)
    hi = hi if hi > lo else lo + 1.0
    top, bottom = _padded(-0.4, len(rows) - 1 + 0.4)
    ax, xticks, yticks = _axes(
        fig,
        Scale(lo - 0.02 * (hi - lo) if lo < 0 else 0.0, hi + 0.05 * (hi - lo)),
        Scale(bottom, top),  # the first row on top: the y axis runs downwards
        yticks=[Tick(float(k), label) for k, (label, _, _) in enumerate(rows)],
        xlabel=xlabel,
    )
    for k, (_, color, interval) in enumerate(rows):
        if interval.mean is None:
            continue
        ax.rect(0.0, interval.mean, k - 0.3, k + 0.3, color)
        if interval.low is None or interval.high is None:
            continue
        y, left, right = ax.py(float(k)), ax.px(interval.low), ax.px(interval.high)
        cap = 0.15 * abs(ax.py(0.0) - ax.py(1.0))
        ax.parts.append(
            f'<path d="M{num(left)} {num(y)}H{num(right)}M{num(left)} {num(y - cap)}'
            f'V{num(y + cap)}M{num(right)} {num(y - cap)}V{num(y + cap)}" '
            f'stroke="#000000" stroke-width="{num(1.5 * LINE)}" fill="none"/>'
        )
    fig.frame(ax, xticks=xticks, yticks=yticks, xlabel=xlabel)
    return fig.to_svg()


def render_sweep(
    title: str,
    facts: Sequence[tuple[str, str]],
    settings: Sequence[SweepSetting],
    metrics: Sequence[tuple[str, str]],
) -> str:
    """The ``sweep.html`` text.

    Parameters
    ----------
    title : str
        What was swept (the grid file).
    facts : Sequence of (str, str)
        Lines of the header table (scenario, axes, cells).
    settings : Sequence of SweepSetting
        The settings (the cells of each differ only by seed), in the grid's order.
    metrics : Sequence of (str, str)
        The statistics shown, each as its column and its label.

    Returns
    -------
    str
        A self-contained HTML page.
    """
    policies: list[str] = []
    for setting in settings:
        if setting.policy not in policies:
            policies.append(setting.policy)
    colors = {p: PALETTE[k % len(PALETTE)] for k, p in enumerate(policies)}
    table = [
        (setting.label, [_shown(setting.stats.get(column)) for column, _ in metrics])
        for setting in settings
    ]
    seeds = [
        max((interval.n for interval in setting.stats.values()), default=0) for setting in settings
    ]
    figures = [
        (
            label,
            interval_figure(
                [
                    (g.label, colors[g.policy], g.stats.get(column, Interval(None, None, None, 0)))
                    for g in settings
                ],
                label,
            ),
        )
        for column, label in metrics
    ]
    return _ENV.get_template("sweep.html.j2").render(
        title=title,
        facts=facts,
        labels=[label for _, label in metrics],
        table=[(label, n, cells) for (label, cells), n in zip(table, seeds, strict=True)],
        figures=figures,
        confidence=f"{100 * CONFIDENCE:g}%",
    )
