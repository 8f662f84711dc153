"""Competitive Equilibrium from Equal Incomes (DRF paper, section 5.2).

Every user gets the same budget (its weight, for weighted incomes) and buys tasks at
per-resource prices that clear the market. With Leontief utilities (a user values only whole
task bundles) the equilibrium is the allocation maximising the weighted Nash welfare
sum_i w_i log x_i subject to capacities (Eisenberg-Gale), with users' caps and minimum shares
as bounds on x_i.

We solve its dual exactly: minimise over prices p >= 0 the convex function
g(p) = p.R + sum_i max_{lo_i <= x <= hi_i} (w_i log x - x p.d_i), whose maximiser for user i
is x_i = clip(w_i / (p.d_i), lo_i, hi_i). Each iteration takes a Newton step (least squares,
as the Hessian is singular when prices are not unique) or, when that does not lower the dual,
a projected-gradient step, so the method always progresses and ends at machine precision.
There is one variable per resource.
"""

from __future__ import annotations

import numpy as np

from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.errors import SolverFailure

_ITERATIONS = 2000
"""The most price updates; the method ends at machine precision long before."""


def ceei(
    demands: FloatArray,
    capacity: FloatArray,
    weights: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
) -> FloatArray:
    """Tasks per user at the CEEI equilibrium (divisible), by the dual of the module
    docstring.

    Parameters
    ----------
    demands : FloatArray
        Users x resources: one task's demand.
    capacity : FloatArray
        The pooled capacity per resource.
    weights : FloatArray
        Each user's income (its weight).
    lower, upper : FloatArray
        Each user's tasks at least (minimum shares, which must fit together) and at most
        (caps; inf for none).

    Returns
    -------
    FloatArray
        Tasks per user, within the bounds, using no resource beyond its capacity.

    Raises
    ------
    SolverFailure
        The prices did not converge to a bounded demand.

    Examples
    --------
    DRF section 5.2: with A's tasks <1 CPU, 4 GB> and B's <3 CPUs, 1 GB> on <9 CPUs, 18 GB>,
    CEEI gives A 45/11 tasks and B 18/11; capping B at one task leaves A the rest of the
    memory.

    >>> import numpy as np
    >>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
    >>> capacity = np.array([9.0, 18.0])
    >>> tasks = ceei(demands, capacity, np.ones(2), np.zeros(2), np.full(2, np.inf))
    >>> (tasks * 11).round(6).tolist()
    [45.0, 18.0]
    >>> capped = ceei(demands, capacity, np.ones(2), np.zeros(2), np.array([np.inf, 1.0]))
    >>> capped.round(6).tolist()
    [4.25, 1.0]
    """
    wants = upper > lower
    x = lower.astype(np.float64).copy()
    # A resource the minimum shares use up has no finite clearing price: every user that needs
    # it stays at its minimum, and leaving it in the market would send its price to infinity.
    exhausted = lower @ demands >= capacity * (1 - 1e-12)
    wants &= ~((demands[:, exhausted] > 0).any(axis=1))
    if not wants.any():
        return x
    # Users held at a fixed amount (cap equal to minimum share) are not in the market: what
    # they hold is taken out of the supply first.
    supply = capacity - x[~wants] @ demands[~wants]
    used = supply > 0
    scaled = np.where(used, demands / np.where(used, supply, 1.0), 0.0)
    d = scaled[wants]
    w = weights[wants]
    lo = lower[wants]
    hi = upper[wants]
    m = d.shape[1]
    ones = np.ones(m)

    def respond(prices: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Each user's best tasks at ``prices`` (within its bounds), and its cost per task."""
        cost = d @ prices
        with np.errstate(divide="ignore"):
            ideal = np.where(cost > 0, w / np.where(cost > 0, cost, 1.0), np.inf)
        return np.clip(ideal, lo, hi), cost

    def dual(prices: FloatArray) -> float:
        """The dual g(p) of the module docstring; inf where a user's demand is unbounded."""
        tasks, cost = respond(prices)
        if not np.all(np.isfinite(tasks)):
            return np.inf
        positive = tasks > 0
        value = float(prices @ ones)
        value += float(np.sum(w[positive] * np.log(tasks[positive])))
        value -= float(np.sum(tasks * cost))
        return value

    def newton_direction(prices: FloatArray, free: BoolArray) -> FloatArray:
        """The Newton step of g over the ``free`` prices (the others held)."""
        tasks, cost = respond(prices)
        gradient = ones - tasks @ d
        interior = (tasks > lo) & (tasks < hi) & (cost > 0)
        weight_term = np.where(interior, w / np.where(interior, cost, 1.0) ** 2, 0.0)
        hessian = (d[:, free] * weight_term[:, None]).T @ d[:, free]
        # The Hessian is singular when prices can trade off without changing any user's cost
        # (more resources than users, or a resource no user needs at the margin): along its
        # null space the dual is linear, so the step there follows the plain gradient.
        values, vectors = np.linalg.eigh(hessian)
        along = vectors.T @ gradient[free]
        curved = values > 1e-12 * max(1.0, float(values.max(initial=0.0)))
        step = np.where(curved, along / np.where(curved, values, 1.0), along)
        direction = np.zeros(m)
        direction[free] = -(vectors @ step)
        return direction

    def imbalance(prices: FloatArray) -> float:
        """The projected gradient's size: zero exactly at the equilibrium prices."""
        tasks, _ = respond(prices)
        if not np.all(np.isfinite(tasks)):
            return np.inf
        gradient = ones - tasks @ d
        return float(np.max(np.abs(np.where(prices > 0, gradient, np.minimum(gradient, 0.0)))))

    prices = np.full(m, float(w.sum()) / m)
    value = dual(prices)
    error = imbalance(prices)
    for _ in range(_ITERATIONS):
        if error < 1e-15:
            break
        tasks, _ = respond(prices)
        gradient = ones - tasks @ d
        # Bertsekas' projected Newton: a price within eps of zero whose market has spare
        # supply is held at its bound, or the Newton step crawls towards zero forever.
        eps = min(1e-2, float(np.linalg.norm(prices - np.maximum(prices - gradient, 0.0))))
        pinned = (prices <= eps) & (gradient > 0)
        moved = False
        for direction in (newton_direction(prices, ~pinned), -gradient):
            step = 1.0
            while step > 1e-12:
                candidate = np.maximum(prices + step * direction, 0.0)
                candidate_value = dual(candidate)
                decrease = value - candidate_value
                sufficient = decrease > 1e-4 * float(gradient @ (prices - candidate))
                # Near the optimum the dual stops changing in floating point; there a step is
                # judged by the market's imbalance instead.
                flat = error < 1e-4 and decrease >= -1e-13 * max(1.0, abs(value))
                candidate_error = imbalance(candidate)
                if sufficient or (flat and candidate_error < error):
                    prices, value, error, moved = candidate, candidate_value, candidate_error, True
                    break
                step *= 0.5
            if moved:
                break
        if not moved:
            break
    tasks, _ = respond(prices)
    if not np.all(np.isfinite(tasks)):
        raise SolverFailure("CEEI prices did not converge: a user's demand is unbounded")
    # Rounding can leave a resource over by an ulp: shrink the part above the minimum shares.
    extra = (tasks - lo) @ d
    room = ones - lo @ d
    over = extra > room
    if over.any():
        tasks = lo + (tasks - lo) * float((room[over] / extra[over]).min())
    x[wants] = tasks
    return x
