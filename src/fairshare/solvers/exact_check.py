"""An exact rational check of an LP's candidate solution before progressive filling accepts
it (:meth:`fairshare.solvers.filling_model.FillingLP.solve`).

HiGHS reports a solution optimal when it is feasible within its tolerance in its own, scaled
model; the unscaled rows the levels are read from can then be off by more. The check
recomputes every row's activity ``sum_j a_ij x_j`` of the candidate in exact rational
arithmetic (:class:`fractions.Fraction`: a float is a dyadic rational, so products and sums
are exact) and compares it with the row's bounds, widened by ``tolerance`` times the size of
the row's terms (at least 1). Column values are compared with their bounds the same way.

Only rows whose float activity is not certainly inside need the rationals: a float sum of
``k`` products is within ``gamma_(k+1) = (k+1) u / (1 - (k+1) u)`` (``u = 2^-53``) times the
sum of the terms' magnitudes of the exact one (Higham, *Accuracy and Stability of Numerical
Algorithms*, section 3.1), so a row whose float activity lies that far inside the widened
bounds is inside exactly. Rows at a bound (capacity rows of a full machine type, every
level row) are checked exactly; the rest cost one float pass.

Examples
--------
A row ``x0 + x1 <= 1`` with the candidate (0.1, 0.9) holds exactly; (0.1, 0.9 + 1e-6) is
over by 1e-6, beyond a tolerance of 1e-9:

>>> import numpy as np
>>> rows = np.array([0, 0]), np.array([0, 1]), np.array([1.0, 1.0])
>>> bounds = np.array([-np.inf]), np.array([1.0]), np.zeros(2), np.full(2, np.inf)
>>> print(violations(*rows, *bounds, np.array([0.1, 0.9]), 1e-9))
None
>>> violations(*rows, *bounds, np.array([0.1, 0.9 + 1e-6]), 1e-9)
'row 0: 1.000001 above its upper bound 1'
"""

from __future__ import annotations

from fractions import Fraction

import highspy
import numpy as np

from fairshare.allocation.types import IntArray
from fairshare.cluster import FloatArray

_UNIT = 2.0**-53
"""The unit roundoff of a float64."""


def exact_violations(lp: highspy.HighsLp, x: FloatArray, tolerance: float) -> str | None:
    """The first row or column bound the candidate ``x`` of ``lp`` violates, exactly.

    Parameters
    ----------
    lp : highspy.HighsLp
        The LP (``Highs.getLp()``), its matrix column- or row-wise.
    x : FloatArray
        The candidate's column values.
    tolerance : float
        Relative slack of every bound (times the row's term magnitudes, at least 1).

    Returns
    -------
    str or None
        What is violated and by how much; None when the candidate is inside.
    """
    matrix = lp.a_matrix_
    start = np.asarray(matrix.start_, dtype=np.int64)
    index = np.asarray(matrix.index_, dtype=np.int64)
    value = np.asarray(matrix.value_, dtype=np.float64)
    outer = np.repeat(np.arange(len(start) - 1), np.diff(start))
    if matrix.format_ == highspy.MatrixFormat.kColwise:
        row, col = index, outer
    else:
        row, col = outer, index
    return violations(
        row,
        col,
        value,
        np.asarray(lp.row_lower_, dtype=np.float64),
        np.asarray(lp.row_upper_, dtype=np.float64),
        np.asarray(lp.col_lower_, dtype=np.float64),
        np.asarray(lp.col_upper_, dtype=np.float64),
        np.asarray(x, dtype=np.float64),
        tolerance,
    )


def violations(
    row: IntArray,
    col: IntArray,
    value: FloatArray,
    row_lower: FloatArray,
    row_upper: FloatArray,
    col_lower: FloatArray,
    col_upper: FloatArray,
    x: FloatArray,
    tolerance: float,
) -> str | None:
    """:func:`exact_violations` on the LP's arrays (the matrix as triples).

    Parameters
    ----------
    row, col, value : arrays
        The matrix's entries.
    row_lower, row_upper : FloatArray
        The rows' bounds (infinite for none).
    col_lower, col_upper : FloatArray
        The columns' bounds.
    x : FloatArray
        The candidate.
    tolerance : float
        Relative slack of every bound.

    Returns
    -------
    str or None
        The first violation, or None.
    """
    rows = len(row_lower)
    terms = value * x[col]
    activity = np.bincount(row, weights=terms, minlength=rows)
    size = np.bincount(row, weights=np.abs(terms), minlength=rows)
    count = np.bincount(row, minlength=rows) + 1
    error = count * _UNIT / (1 - count * _UNIT) * size
    slack = tolerance * np.maximum(size, 1.0)
    with np.errstate(invalid="ignore"):
        inside = (activity + error <= row_upper + slack) & (activity - error >= row_lower - slack)
    doubtful = np.flatnonzero(~inside)
    if len(doubtful):
        order = np.argsort(row, kind="stable")
        first = np.searchsorted(row[order], np.arange(rows + 1))
        for r in doubtful.tolist():
            entries = order[first[r] : first[r + 1]]
            exact = sum(
                (
                    Fraction(float(a)) * Fraction(float(b))
                    for a, b in zip(value[entries], x[col[entries]], strict=True)
                ),
                Fraction(0),
            )
            give = Fraction(float(slack[r]))
            if np.isfinite(row_upper[r]) and exact > Fraction(float(row_upper[r])) + give:
                return f"row {r}: {float(exact):.7g} above its upper bound {row_upper[r]:g}"
            if np.isfinite(row_lower[r]) and exact < Fraction(float(row_lower[r])) - give:
                return f"row {r}: {float(exact):.7g} below its lower bound {row_lower[r]:g}"
    give_col = tolerance * np.maximum(np.abs(np.where(np.isfinite(col_upper), col_upper, 0)), 1)
    above = np.flatnonzero(np.isfinite(col_upper) & (x > col_upper + give_col))
    if len(above):
        c = int(above[0])
        return f"column {c}: {x[c]:.7g} above its upper bound {col_upper[c]:g}"
    give_low = tolerance * np.maximum(np.abs(np.where(np.isfinite(col_lower), col_lower, 0)), 1)
    below = np.flatnonzero(np.isfinite(col_lower) & (x < col_lower - give_low))
    if len(below):
        c = int(below[0])
        return f"column {c}: {x[c]:.7g} below its lower bound {col_lower[c]:g}"
    return None
