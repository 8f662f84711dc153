"""Means over repeated runs with confidence intervals (the seeds of a sweep).

Student's t interval: mean ± t(level, n - 1) · s / sqrt(n), with ``s`` the sample standard
deviation. It assumes the runs' statistic is roughly normal over seeds; with the few seeds a
sweep has (3 to 10), the t quantile, not the normal one, keeps the interval honest (with 5
seeds it is 2.78 standard errors wide each side, not 1.96).

Examples
--------
>>> from fairshare.metrics.intervals import mean_interval
>>> interval = mean_interval([10.0, 12.0, 14.0])
>>> interval.mean, interval.n, round(interval.half_width, 3)
(12.0, 3, 4.968)
>>> mean_interval([7.0]).low is None, mean_interval([None, float("nan")]).mean is None
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CONFIDENCE", "Interval", "mean_interval"]

CONFIDENCE = 0.95
"""The confidence level of the intervals a sweep reports."""


@dataclass(frozen=True)
class Interval:
    """A mean and its confidence interval.

    Parameters
    ----------
    mean : float or None
        The mean of the finite values; None when there are none.
    low, high : float or None
        The interval's ends; None with fewer than two values.
    n : int
        How many finite values.
    """

    mean: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width; 0 when there is no interval."""
        if self.low is None or self.high is None:
            return 0.0
        return (self.high - self.low) / 2


def mean_interval(values: Iterable[float | int | None], level: float = CONFIDENCE) -> Interval:
    """The mean of the finite values and its Student's t confidence interval.

    Parameters
    ----------
    values : Iterable of float, int or None
        One value per run; None, NaN and infinities (a statistic the run did not have) are
        left out.
    level : float
        The confidence level, in (0, 1).

    Returns
    -------
    Interval
    """
    from scipy.special import stdtrit  # noqa: PLC0415 (SciPy loads only when a sweep reports)

    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    n = len(finite)
    if n == 0:
        return Interval(None, None, None, 0)
    mean = math.fsum(finite) / n
    if n == 1:
        return Interval(mean, None, None, 1)
    variance = math.fsum((v - mean) ** 2 for v in finite) / (n - 1)
    half = float(stdtrit(n - 1, 0.5 + level / 2)) * math.sqrt(variance / n)
    return Interval(mean, mean - half, mean + half, n)
