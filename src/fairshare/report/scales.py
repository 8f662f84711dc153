"""The report's axis scales and ticks: where a data value falls along an axis, and where the
ticks go and how they are labelled.

Linear scales and matplotlib's ``symlog`` (linear within ``linthresh`` of 0, logarithmic
beyond), and matplotlib's ``MaxNLocator`` tick rule (multiples of 1, 2, 2.5 or 5 times a power
of ten), so the figures the SVG writer (:mod:`fairshare.report.svg`) draws keep the look they had
when matplotlib drew them. Pure arithmetic: no text is measured or drawn here.

Examples
--------
>>> scale = Scale(0.0, 8.0)
>>> scale.fraction(2.0), [tick.label for tick in scale.ticks(4)]
(0.25, ['0', '2', '4', '6', '8'])
>>> [tick.power for tick in Scale(0.0, 1000.0, "symlog").ticks(9)]
[None, '0', '1', '2', '3']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
"""A float64 numpy array: data coordinates."""


@dataclass(frozen=True)
class Tick:
    """A tick at data value ``value`` with label ``label``.

    Parameters
    ----------
    value : float
        Where the tick is, in data coordinates.
    label : str
        Its label (empty for a symlog decade, drawn as a power of ten).
    power : str, optional
        Draws the label as ``10`` with ``power`` as exponent (a symlog decade).
    """

    value: float
    label: str
    power: str | None = None


def _decimals(values: Sequence[float], step: float) -> int:
    """The fewest decimals (up to 8) that print every value exactly enough for ``step``."""
    for places in range(0, 8):
        if all(abs(round(v, places) - v) < step * 1e-6 for v in values):
            return places
    return 8


def nice_ticks(lo: float, hi: float, bins: int) -> list[Tick]:
    """Ticks at multiples of 1, 2, 2.5 or 5 times a power of ten across ``[lo, hi]``.

    matplotlib's ``MaxNLocator`` with its default steps, labelled with as many decimals as the
    step needs.

    Parameters
    ----------
    lo, hi : float
        The axis's data range.
    bins : int
        The most intervals between ticks.

    Returns
    -------
    list of Tick

    Examples
    --------
    >>> from fairshare.report.scales import nice_ticks
    >>> [tick.label for tick in nice_ticks(0.0, 7.3, 5)]
    ['0', '2', '4', '6']
    >>> [tick.label for tick in nice_ticks(0.0, 1.0, 4)]
    ['0.00', '0.25', '0.50', '0.75', '1.00']
    """
    raw = (hi - lo) / max(bins, 1)
    if not (math.isfinite(raw) and raw > 1e-300):  # a single value, or a span too small to split
        return [Tick(lo, _label(lo, 0))]
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = 10 * magnitude
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if factor * magnitude >= raw * (1 - 1e-9):
            step = factor * magnitude
            break
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    values = [k * step for k in range(first, last + 1)]
    places = _decimals(values, step)
    return [Tick(v, _label(v, places)) for v in values]


def _label(value: float, places: int) -> str:
    """``value`` with ``places`` decimals, without a ``-`` on zero."""
    text = f"{value:.{places}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


@dataclass(frozen=True)
class Scale:
    """An axis's data range and transform.

    Linear, or matplotlib's ``symlog``: linear within ``linthresh`` of 0, logarithmic beyond,
    base 10, ``linscale`` 1.

    Parameters
    ----------
    lo, hi : float
        The data values at the start and the end of the axis (``hi < lo`` runs it backwards).
    kind : {"linear", "symlog"}
        The transform.
    linthresh : float
        The half-width of the linear part of a symlog scale.
    """

    lo: float
    hi: float
    kind: Literal["linear", "symlog"] = "linear"
    linthresh: float = 1.0

    def transform(self, value: float) -> float:
        """``value`` in transformed coordinates (itself on a linear scale).

        Parameters
        ----------
        value : float
            A data value.

        Returns
        -------
        float
        """
        if self.kind == "linear":
            return value
        # matplotlib's SymmetricalLogTransform: the linear part spans linscale / (1 - 1/base)
        # decades' worth of axis.
        c, linear = self.linthresh, 1.0 / (1.0 - 0.1)
        magnitude = abs(value)
        if magnitude <= c:
            return value / c * linear
        return math.copysign(linear + math.log10(magnitude / c), value)

    def fraction(self, value: float) -> float:
        """Where ``value`` falls along the axis: 0 at ``lo``, 1 at ``hi`` (clamped).

        Parameters
        ----------
        value : float
            A data value.

        Returns
        -------
        float

        Examples
        --------
        >>> from fairshare.report.scales import Scale
        >>> Scale(0.0, 10.0).fraction(2.5), Scale(0.0, 10.0).fraction(20.0)
        (0.25, 1.0)
        """
        return float(self.fractions(np.array([value], dtype=np.float64))[0])

    def fractions(self, values: FloatArray) -> FloatArray:
        """:meth:`fraction` of every value, computed as arrays (a curve's points).

        Parameters
        ----------
        values : FloatArray
            Data values.

        Returns
        -------
        FloatArray
        """
        a, b = self.transform(self.lo), self.transform(self.hi)
        if b == a:
            return np.zeros_like(values)
        if self.kind == "linear":
            moved = values
        else:
            c, linear = self.linthresh, 1.0 / (1.0 - 0.1)
            magnitude = np.abs(values)
            logged = np.log10(np.maximum(magnitude, c) / c)
            moved = np.where(
                magnitude <= c, values / c * linear, np.copysign(linear + logged, values)
            )
        return np.clip((moved - a) / (b - a), 0.0, 1.0)

    def ticks(self, bins: int) -> list[Tick]:
        """The axis's ticks: :func:`nice_ticks` on a linear scale; 0 and powers of ten on symlog.

        Parameters
        ----------
        bins : int
            The most intervals between ticks (decades are thinned to about this many).

        Returns
        -------
        list of Tick
        """
        if self.kind == "linear":
            return nice_ticks(self.lo, self.hi, bins)
        ticks = [Tick(0.0, "0")] if self.lo <= 0 <= self.hi else []
        # Every decade above 0 in range, the one inside the linear part included.
        low = math.floor(math.log10(self.linthresh) + 1e-9)
        high = math.floor(math.log10(self.hi) + 1e-9) if self.hi > 0 else low - 1
        powers = list(range(low, high + 1))
        stride = max(1, math.ceil(len(powers) / max(bins, 1)))
        ticks.extend(
            Tick(10.0**p, "", power=str(p).replace("-", "\u2212")) for p in powers[::stride]
        )
        return ticks
