"""Small statistics shared by the metrics.

Percentiles, means and empirical CDFs of the finite values that answer None (JSON null)
instead of NaN when there is nothing to summarise, and the cleaning of documents for JSON.

Examples
--------
>>> import numpy as np
>>> from fairshare.metrics import percentile
>>> percentile(np.array([1.0, 2.0, 3.0, 4.0, np.nan]), 50)
2.5
>>> percentile(np.array([np.nan]), 50) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from fairshare.metrics.frames import FloatArray

FLOAT_DECIMALS = 6
"""The decimals of every float in a CSV file (a table, rounded for people). JSON never
rounds: :func:`clean` keeps every float as it was computed, which ``json`` prints as its
shortest round-trip representation.
"""


def finite(values: FloatArray) -> FloatArray:
    """The finite values of ``values`` (NaN marks a job that never finished or started).

    Parameters
    ----------
    values : FloatArray
        Any values.

    Returns
    -------
    FloatArray
    """
    return values[np.isfinite(values)]


def mean(values: FloatArray) -> float | None:
    """Mean of the finite values.

    Parameters
    ----------
    values : FloatArray
        The values; NaN and infinities are left out.

    Returns
    -------
    float or None
        None when there are no finite values.
    """
    v = finite(values)
    return float(v.mean()) if v.size else None


def std(values: FloatArray) -> float | None:
    """Population standard deviation (ddof 0) of the finite values.

    Parameters
    ----------
    values : FloatArray
        The values; NaN and infinities are left out.

    Returns
    -------
    float or None
        None when there are no finite values.
    """
    v = finite(values)
    return float(v.std()) if v.size else None


def percentile(values: FloatArray, q: float) -> float | None:
    """The ``q``-th percentile of the finite values.

    Linear interpolation between order statistics (numpy's default, Hyndman-Fan type 7): for
    sorted values x_0 .. x_{n-1} it is x at rank q/100 * (n - 1).

    The same floating-point operations as ``np.percentile`` (its ``_lerp``: from the upper
    neighbour when the fraction is at least a half), so the same bits; without its cost,
    which on first use includes importing ``numpy.ma`` (0.01 s of a ``simulate``).

    Parameters
    ----------
    values : FloatArray
        The values; NaN and infinities are left out.
    q : float
        The percentile, from 0 to 100.

    Returns
    -------
    float or None
        None when there are no finite values.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentiles must be in the range [0, 100], got {q}")
    v = finite(values)
    if not v.size:
        return None
    last = v.size - 1
    rank = last * (q / 100)
    if rank >= last:
        return float(v.max())
    below = math.floor(rank)
    low, high = (float(x) for x in np.partition(v, (below, below + 1))[below : below + 2])
    fraction = rank - below
    step = high - low
    return high - step * (1 - fraction) if fraction >= 0.5 else low + step * fraction


def ecdf(values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Empirical CDF of the finite values.

    Parameters
    ----------
    values : FloatArray
        The values; NaN and infinities are left out.

    Returns
    -------
    tuple of (FloatArray, FloatArray)
        The sorted values x, and F(x) = (i + 1) / n.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.metrics import ecdf
    >>> x, f = ecdf(np.array([3.0, 1.0, np.nan, 2.0]))
    >>> x.tolist(), f.round(3).tolist()
    ([1.0, 2.0, 3.0], [0.333, 0.667, 1.0])
    """
    v = np.sort(finite(values))
    return v, np.arange(1, v.size + 1, dtype=np.float64) / max(v.size, 1)


def clean(value: object) -> object:
    """A JSON-ready copy of ``value``.

    Floats exactly as computed (no ``-0.0``; ``json`` prints the shortest representation
    that reads back as the same float, so nothing is lost), NaN and infinities as None,
    tuples as lists, numpy scalars and arrays as Python numbers and lists, mapping keys as
    strings; anything else unknown as its ``str``.

    Parameters
    ----------
    value : object
        A document: mappings, sequences, numbers, strings, None.

    Returns
    -------
    object

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.metrics import clean
    >>> clean({"share": np.float64(2 / 3), "times": (1, float("inf")), 7: -0.0})
    {'share': 0.6666666666666666, 'times': [1, None], '7': 0.0}
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.generic):
        return clean(value.item())
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return 0.0 if value == 0 else value
    if isinstance(value, Mapping):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [clean(v) for v in value.tolist()]
    if isinstance(value, Sequence):
        return [clean(v) for v in value]
    return str(value)
