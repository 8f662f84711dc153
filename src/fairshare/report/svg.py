"""A small SVG writer for the report's charts.

A figure of one or more axes, each with a linear or symmetric-log scale and its ticks
(:mod:`fairshare.report.scales`), grid, labels, a title and a legend, and the three marks the
report draws (filled polygons for stacked areas and bars, step lines for CDFs); and the layout
of text around an axes (how wide a label is, how much room ticks and labels take).

It keeps the look the report had when matplotlib drew it (matplotlib's default style with
the top and right spines hidden and a light grid: the same sizes in points, tick rules and
colours), at a small fraction of the cost: the figures are a few hundred points each, and
importing matplotlib and running its ``savefig`` cost more CPU time than the rest of
writing a 200,000-task run's report.

Determinism: the text depends only on the data; every number is printed with two decimals
and there are no ids, dates or random salts. Text is kept as text, so the page's reader
selects and searches it. Sizes are in points (1/72 inch), as in matplotlib's SVG; the
``<svg>`` element scales to the page width with its ``viewBox``.

Examples
--------
One bar on a 2 x 1 inch figure:

>>> from fairshare.report.scales import Scale, Tick
>>> from fairshare.report.svg import Axes, Figure
>>> figure = Figure(2.0, 1.0)
>>> axes = Axes(10.0, 10.0, 100.0, 50.0, Scale(0.0, 1.0), Scale(0.0, 1.0))
>>> axes.rect(0.0, 0.5, 0.0, 1.0, "#4e79a7")
>>> axes.parts
['<rect x="10" y="10" width="50" height="50" fill="#4e79a7"/>']
>>> figure.frame(axes, xticks=[Tick(0.0, "0"), Tick(1.0, "1")], yticks=None)
>>> figure.to_svg()[:80]
'<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 144 72" font-f'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Literal

import numpy as np

from fairshare.report.scales import FloatArray, Scale, Tick

FONT = "DejaVu Sans, Bitstream Vera Sans, Arial, Helvetica, sans-serif"
"""The font family of every text (matplotlib's default, then common fallbacks)."""
FONT_SIZE = 10.0
"""Tick labels and axis labels (matplotlib's ``font.size`` 10)."""
TITLE_SIZE = 12.0
"""Axes titles (matplotlib's ``large``)."""
LEGEND_SIZE = 8.0
"""Legend labels, points (smaller than tick labels, so a legend of many users fits)."""
CHAR_WIDTH = 0.6
"""Mean advance of a character in DejaVu Sans, in ems: used to lay out text before it is
drawn (the browser measures the real glyphs; a label is never clipped by a few percent)."""
TICK = 3.5
"""Tick length and the gap between tick and label, points."""
LINE = 0.8
"""Spine, tick and grid line width, points."""
GRID_COLOR = "#b0b0b0"
"""Grid lines' colour (matplotlib's ``grid.color``)."""
GRID_OPACITY = 0.3
"""Grid lines' opacity."""
TEXT_COLOR = "#000000"
"""Text, spines and ticks."""
EDGE = 4.0
"""Space between the figure's border and anything drawn."""


def num(value: float) -> str:
    """A coordinate as SVG text: two decimals, trailing zeros dropped, never ``-0``.

    Parameters
    ----------
    value : float
        A coordinate or size, in points.

    Returns
    -------
    str

    Examples
    --------
    >>> from fairshare.report.svg import num
    >>> num(2.5), num(3.0), num(-0.001)
    ('2.5', '3', '0')
    """
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float) -> float:
    """Estimated width of ``text`` at ``size`` points (:data:`CHAR_WIDTH` ems per character).

    Parameters
    ----------
    text : str
        The text.
    size : float
        The font size, in points.

    Returns
    -------
    float
        Points.
    """
    return len(text) * CHAR_WIDTH * size


def tick_width(tick: Tick) -> float:
    """The estimated width of a tick's label, in points (a symlog decade: ``10`` and its
    exponent).

    Parameters
    ----------
    tick : Tick
        The tick.

    Returns
    -------
    float
        Points.

    Examples
    --------
    >>> from fairshare.report.scales import Tick
    >>> tick_width(Tick(0.5, "0.5")), tick_width(Tick(100.0, "", power="2"))
    (18.0, 16.2)
    """
    if tick.power is None:
        return text_width(tick.label, FONT_SIZE)
    return text_width("10", FONT_SIZE) + text_width(tick.power, 0.7 * FONT_SIZE)


LEGEND_LABEL = 40
"""Characters of a legend label shown; a longer name (a user's, a job's) is cut with an
ellipsis, so that the legend cannot squeeze the axes beside it to nothing."""


@dataclass(frozen=True)
class LegendEntry:
    """A legend row: a filled square (``kind`` patch) or a line sample, then its label.

    Parameters
    ----------
    label : str
        The label (shown cut to :data:`LEGEND_LABEL` characters).
    color : str
        The mark's colour.
    kind : {"patch", "line"}
        A filled square (areas, bars) or a line sample (curves).
    """

    label: str
    color: str
    kind: Literal["patch", "line"] = "patch"

    @property
    def shown(self) -> str:
        """The label as drawn: cut with an ellipsis beyond :data:`LEGEND_LABEL` characters."""
        cut = self.label[: LEGEND_LABEL - 1] + "\u2026"
        return self.label if len(self.label) <= LEGEND_LABEL else cut


def legend_width(entries: Sequence[LegendEntry], columns: int = 1) -> float:
    """Width of a legend of ``entries`` in ``columns`` columns.

    Parameters
    ----------
    entries : Sequence of LegendEntry
        The rows.
    columns : int
        The columns they are laid out in.

    Returns
    -------
    float
        Points.
    """
    size = LEGEND_SIZE
    widest = max((text_width(e.shown, size) for e in entries), default=0.0)
    cell = 2.0 * size + 0.8 * size + widest
    return columns * cell + (columns - 1) * 2.0 * size


def legend_height(rows: int) -> float:
    """Height of a legend of ``rows`` rows.

    Parameters
    ----------
    rows : int
        Rows of entries.

    Returns
    -------
    float
        Points.
    """
    return rows * LEGEND_SIZE * 1.5


@dataclass
class Axes:
    """A plotting area in a figure, and the marks drawn in it.

    Parameters
    ----------
    left, top : float
        The area's top left corner in the figure, points.
    width, height : float
        The area's size, points.
    x, y : Scale
        The horizontal and vertical scales.
    parts : list of str
        The SVG elements of the marks, in drawing order (:meth:`Figure.frame` draws them).
    """

    left: float
    top: float
    width: float
    height: float
    x: Scale
    y: Scale
    parts: list[str] = field(default_factory=list)

    def px(self, value: float) -> float:
        """The figure x coordinate of data value ``value``.

        Parameters
        ----------
        value : float
            A data value on the x scale.

        Returns
        -------
        float
        """
        return self.left + self.x.fraction(value) * self.width

    def py(self, value: float) -> float:
        """The figure y coordinate of data value ``value`` (SVG's y grows downwards).

        Parameters
        ----------
        value : float
            A data value on the y scale.

        Returns
        -------
        float
        """
        return self.top + (1.0 - self.y.fraction(value)) * self.height

    def points(self, xs: FloatArray, ys: FloatArray) -> str:
        """``x,y`` pairs of figure coordinates of data points, space-separated.

        Computed as arrays, rounded to two decimals (a figure's thousands of points cost a few
        milliseconds).

        Parameters
        ----------
        xs, ys : FloatArray
            The points' data coordinates.

        Returns
        -------
        str
            An SVG ``points`` attribute.
        """
        px = np.round(self.left + self.x.fractions(xs) * self.width, 2) + 0.0
        py = np.round(self.top + (1.0 - self.y.fractions(ys)) * self.height, 2) + 0.0
        return " ".join(map("{:g},{:g}".format, px.tolist(), py.tolist()))

    def polygon(self, xs: FloatArray, ys: FloatArray, color: str) -> None:
        """A filled polygon through data points (stacked areas).

        Parameters
        ----------
        xs, ys : FloatArray
            The corners' data coordinates.
        color : str
            The fill colour.
        """
        self.parts.append(f'<polygon points="{self.points(xs, ys)}" fill="{color}"/>')

    def rect(self, x0: float, x1: float, y0: float, y1: float, color: str) -> None:
        """A filled rectangle between data coordinates (a bar).

        Parameters
        ----------
        x0, x1 : float
            The horizontal extent, data coordinates.
        y0, y1 : float
            The vertical extent, data coordinates.
        color : str
            The fill colour.
        """
        left, right = sorted((self.px(x0), self.px(x1)))
        top, bottom = sorted((self.py(y0), self.py(y1)))
        self.parts.append(
            f'<rect x="{num(left)}" y="{num(top)}" width="{num(right - left)}" '
            f'height="{num(bottom - top)}" fill="{color}"/>'
        )

    def steps(self, xs: FloatArray, ys: FloatArray, color: str) -> None:
        """A step line through data points, 1.5 points wide.

        Each value is held until the next x (matplotlib's ``step(where="post")``).

        Parameters
        ----------
        xs, ys : FloatArray
            The points' data coordinates.
        color : str
            The line colour.
        """
        # Each point after the first is reached by a horizontal move at the previous value.
        corner_x = np.repeat(xs, 2)[1:]
        corner_y = np.repeat(ys, 2)[:-1]
        self.parts.append(
            f'<polyline points="{self.points(corner_x, corner_y)}" fill="none" '
            f'stroke="{color}" stroke-width="1.5" stroke-linejoin="round" '
            'stroke-linecap="square"/>'
        )


class Figure:
    """An SVG figure holding axes and text.

    Parameters
    ----------
    width, height : float
        The figure's size, inches (drawn in points, 72 per inch).
    """

    def __init__(self, width: float, height: float) -> None:
        self.width = width * 72.0
        self.height = height * 72.0
        self.parts: list[str] = []

    def text(
        self,
        x: float,
        y: float,
        content: str,
        *,
        size: float = FONT_SIZE,
        anchor: Literal["start", "middle", "end"] = "start",
        color: str = TEXT_COLOR,
        rotate: bool = False,
        power: str | None = None,
    ) -> None:
        """Text whose baseline's ``anchor`` point is at ``(x, y)``.

        Parameters
        ----------
        x, y : float
            The anchor point, figure points.
        content : str
            The text (escaped for SVG).
        size : float
            The font size, points.
        anchor : {"start", "middle", "end"}
            Which point of the text sits at ``x``.
        color : str
            The text colour.
        rotate : bool
            Turn the text a quarter left (a y label).
        power : str, optional
            A superscript exponent appended to the text.
        """
        body = escape(content)
        if power is not None:
            body += f'<tspan dy="{num(-0.4 * size)}" font-size="{num(0.7 * size)}">'
            body += f"{escape(power)}</tspan>"
        turn = f' transform="rotate(-90 {num(x)} {num(y)})"' if rotate else ""
        self.parts.append(
            f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" '
            f'text-anchor="{anchor}" fill="{color}"{turn}>{body}</text>'
        )

    def line(self, x0: float, y0: float, x1: float, y1: float, extra: str = "") -> None:
        """A line in the text colour, :data:`LINE` points wide.

        Parameters
        ----------
        x0, y0, x1, y1 : float
            The ends, figure points.
        extra : str
            More SVG attributes (a line cap).
        """
        self.parts.append(
            f'<line x1="{num(x0)}" y1="{num(y0)}" x2="{num(x1)}" y2="{num(y1)}" '
            f'stroke="{TEXT_COLOR}" stroke-width="{num(LINE)}"{extra}/>'
        )

    def frame(
        self,
        ax: Axes,
        *,
        xticks: Sequence[Tick] | None,
        yticks: Sequence[Tick] | None,
        xlabel: str = "",
        ylabel: str = "",
        title: str = "",
        grid: bool = True,
    ) -> None:
        """Draw the axes: grid lines behind its marks, then the spines, ticks and labels.

        The left and bottom spines, the ticks and their labels, the axis labels and the title
        (left-aligned above the axes), as matplotlib's default style with the top and right spines
        hidden.

        Parameters
        ----------
        ax : Axes
            The axes, with its marks.
        xticks, yticks : Sequence of Tick or None
            The ticks; None draws none.
        xlabel, ylabel : str
            The axis labels; empty for none.
        title : str
            The title; empty for none.
        grid : bool
            Draw grid lines at the ticks.
        """
        right, bottom = ax.left + ax.width, ax.top + ax.height
        grid_lines: list[str] = []
        if grid:
            for tick in xticks or ():
                gx = num(ax.px(tick.value))
                grid_lines.append(
                    f'<line x1="{gx}" y1="{num(ax.top)}" x2="{gx}" y2="{num(bottom)}"/>'
                )
            for tick in yticks or ():
                gy = num(ax.py(tick.value))
                grid_lines.append(
                    f'<line x1="{num(ax.left)}" y1="{gy}" x2="{num(right)}" y2="{gy}"/>'
                )
        if grid_lines:
            self.parts.append(
                f'<g stroke="{GRID_COLOR}" stroke-opacity="{GRID_OPACITY}" '
                f'stroke-width="{num(LINE)}">' + "".join(grid_lines) + "</g>"
            )
        self.parts.extend(ax.parts)
        self.line(ax.left, ax.top, ax.left, bottom, ' stroke-linecap="square"')
        self.line(ax.left, bottom, right, bottom, ' stroke-linecap="square"')
        for tick in xticks or ():
            x = ax.px(tick.value)
            self.line(x, bottom, x, bottom + TICK)
            self.text(
                x,
                bottom + TICK + TICK + 0.8 * FONT_SIZE,
                tick.label or "10",
                anchor="middle",
                power=tick.power,
            )
        label_width = max((tick_width(t) for t in yticks or ()), default=0.0)
        for tick in yticks or ():
            y = ax.py(tick.value)
            self.line(ax.left - TICK, y, ax.left, y)
            self.text(
                ax.left - TICK - TICK,
                y + 0.35 * FONT_SIZE,
                tick.label or "10",
                anchor="end",
                power=tick.power,
            )
        if xlabel:
            below = bottom + TICK + TICK + (FONT_SIZE * 1.2 if xticks else 0.0) + TICK
            self.text(ax.left + ax.width / 2, below + 0.8 * FONT_SIZE, xlabel, anchor="middle")
        if ylabel:
            x = ax.left - TICK - TICK - label_width - TICK - 0.2 * FONT_SIZE
            self.text(x, ax.top + ax.height / 2, ylabel, anchor="middle", rotate=True)
        if title:
            self.text(ax.left, ax.top - 6.0, title, size=TITLE_SIZE)

    def empty(self, ax: Axes, message: str) -> None:
        """An axes with nothing to show: its spines and ``message`` in the middle, grey.

        Parameters
        ----------
        ax : Axes
            The empty axes.
        message : str
            Why it is empty.
        """
        self.frame(ax, xticks=None, yticks=None, grid=False)
        self.text(
            ax.left + ax.width / 2,
            ax.top + ax.height / 2 + 0.35 * FONT_SIZE,
            message,
            anchor="middle",
            color="#666666",
        )

    def legend(
        self, entries: Sequence[LegendEntry], left: float, top: float, columns: int = 1
    ) -> None:
        """A frameless legend whose top left corner is at ``(left, top)``.

        Entries row by row; matplotlib's handle 2 ems long and 0.7 high, 0.8 ems before the label.

        Parameters
        ----------
        entries : Sequence of LegendEntry
            The rows.
        left, top : float
            The top left corner, figure points.
        columns : int
            The columns the entries are laid out in.
        """
        size = LEGEND_SIZE
        widest = max((text_width(e.shown, size) for e in entries), default=0.0)
        cell = 2.0 * size + 0.8 * size + widest + 2.0 * size
        row_height = 1.5 * size
        for k, entry in enumerate(entries):
            row, column = divmod(k, columns)
            x = left + column * cell
            middle = top + row * row_height + row_height / 2
            if entry.kind == "patch":
                self.parts.append(
                    f'<rect x="{num(x)}" y="{num(middle - 0.35 * size)}" '
                    f'width="{num(2.0 * size)}" height="{num(0.7 * size)}" fill="{entry.color}"/>'
                )
            else:
                self.parts.append(
                    f'<line x1="{num(x)}" y1="{num(middle)}" x2="{num(x + 2.0 * size)}" '
                    f'y2="{num(middle)}" stroke="{entry.color}" stroke-width="1.5"/>'
                )
            self.text(x + 2.8 * size, middle + 0.35 * size, entry.shown, size=size)

    def to_svg(self) -> str:
        """The ``<svg>`` element, as wide as its container, aspect ratio kept.

        Returns
        -------
        str
        """
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="100%" '
            f'viewBox="0 0 {num(self.width)} {num(self.height)}" '
            f'font-family="{FONT}">' + "".join(self.parts) + "</svg>"
        )


def axis_room(
    *,
    yticks: Sequence[Tick] | None,
    xlabel: bool,
    ylabel: bool,
    title: bool,
    xticks: bool = True,
) -> tuple[float, float, float]:
    """Room to leave left of, below and above an axes for its ticks, labels and title.

    Parameters
    ----------
    yticks : Sequence of Tick or None
        The y ticks (their labels' width).
    xlabel, ylabel, title : bool
        Whether the axes has them.
    xticks : bool
        Whether it has x ticks.

    Returns
    -------
    tuple of (float, float, float)
        Left, bottom and top room, points.
    """
    label_width = max((tick_width(t) for t in yticks or ()), default=0.0)
    left = EDGE + (FONT_SIZE * 1.2 + TICK if ylabel else 0.0) + label_width + 2 * TICK
    bottom = EDGE + 2 * TICK + (FONT_SIZE * 1.2 if xticks else 0.0)
    bottom += FONT_SIZE * 1.2 + TICK if xlabel else 0.0
    top = EDGE + (TITLE_SIZE * 1.2 + 6.0 if title else FONT_SIZE * 0.6)
    return left, bottom, top


def tick_bins(length: float, axis: Literal["x", "y"]) -> int:
    """How many tick intervals fit along ``length`` points (at most 9).

    matplotlib's ``get_tick_space``: three label heights apart on x, two on y.

    Parameters
    ----------
    length : float
        The axis's length, points.
    axis : {"x", "y"}
        Which axis.

    Returns
    -------
    int
    """
    spacing = FONT_SIZE * (3.0 if axis == "x" else 2.0)
    return max(1, min(int(length // spacing), 9))
