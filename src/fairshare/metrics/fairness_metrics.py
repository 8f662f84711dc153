"""Bounded slowdown and Jain's fairness index (``summary.json``'s additions to SPEC section 3).

Bounded slowdown
    Feitelson, Rudolph, Schwiegelshohn, Sevcik and Wong, "Theory and Practice in Parallel
    Job Scheduling" (JSSPP 1997): ``max(1, response / max(isolated, tau))``.
    The plain slowdown of a job that runs for a second and waits ten is 11; divided by a
    threshold ``tau`` instead, very short jobs stop dominating the mean. Feitelson divides
    by the job's run time; here the denominator is the job's response time alone on the
    empty cluster (the plain slowdown's, SPEC section 3), which is its run time for a job
    of one wave of tasks. ``tau`` is 10 seconds by default, Feitelson's value.
Jain's fairness index
    Jain, Chiu and Hawe, "A Quantitative Measure of Fairness and Discrimination for Resource
    Allocation in Shared Computer Systems" (DEC-TR-301, 1984): for values ``x_1 .. x_n``,
    ``(sum x)^2 / (n sum x^2)``, 1 when all are equal, ``1/n`` when one value holds
    everything. ``summary.json`` gives it twice: over the finished jobs' slowdowns
    (``jain_slowdown``: how evenly the policy slows jobs down) and over the users' mean
    dominant shares over the makespan (``jain_share``: how evenly it shares the cluster
    over time; users that held nothing count as 0).

Examples
--------
>>> import numpy as np
>>> from fairshare.metrics.fairness_metrics import bounded_slowdowns, jain_index
>>> bounded_slowdowns(np.array([11.0, 40.0, 3.0]), np.array([1.0, 20.0, 5.0])).tolist()
[1.1, 2.0, 1.0]
>>> jain_index(np.array([1.0, 1.0, 1.0, 1.0])), jain_index(np.array([4.0, 0.0, 0.0, 0.0]))
(1.0, 0.25)
"""

from __future__ import annotations

import numpy as np

from fairshare.metrics.frames import FloatArray

__all__ = ["BOUNDED_SLOWDOWN_TAU", "bounded_slowdowns", "jain_index"]

BOUNDED_SLOWDOWN_TAU = 10.0
"""The threshold (seconds) of the bounded slowdown: Feitelson et al.'s 10 s."""


def bounded_slowdowns(
    response: FloatArray, isolated: FloatArray, tau: float = BOUNDED_SLOWDOWN_TAU
) -> FloatArray:
    """Per job, ``max(1, response / max(isolated, tau))`` (module docstring).

    Parameters
    ----------
    response : FloatArray
        Each job's response time (NaN for a job that did not finish).
    isolated : FloatArray
        Each job's response time alone on the empty cluster (inf for a job that can never
        run).
    tau : float
        The threshold, in seconds, > 0.

    Returns
    -------
    FloatArray
        NaN where the response time is unknown or the isolated response is not finite.
    """
    with np.errstate(invalid="ignore"):
        bounded = np.maximum(1.0, response / np.maximum(isolated, tau))
    bounded[~(np.isfinite(response) & np.isfinite(isolated))] = np.nan
    return np.asarray(bounded, dtype=np.float64)


def jain_index(values: FloatArray) -> float | None:
    """Jain's fairness index of the finite values of ``values`` (module docstring).

    Parameters
    ----------
    values : FloatArray
        Values >= 0; NaN and infinities are left out.

    Returns
    -------
    float or None
        From ``1/n`` to 1; None when no finite value is left or all are 0.
    """
    v = values[np.isfinite(values)]
    squares = float((v * v).sum())
    if v.size == 0 or squares == 0.0:
        return None
    total = float(v.sum())
    return total * total / (v.size * squares)
