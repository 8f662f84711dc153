"""The levels of progressive filling and the jumps over them, shared by every integral filler.

A walk of progressive filling (DRF Algorithm 1 and H-DRF Algorithm 1 in
:mod:`fairshare.solvers.progressive`; the whole-task allocators of
:mod:`fairshare.solvers.whole_tasks`, :mod:`fairshare.solvers.per_machine` and
:mod:`fairshare.solvers.cmmf_flow`) orders users by their level, the weighted share a user has
before its next task, and hands the next task to the lowest.

Jumps. One task at a time costs time in proportion to the tasks, and a capacity of 10^12
tiny tasks would never finish. On a flat tree, filling one task at a time hands out tasks in
the order of the level each task starts at (the user's weighted share before it; ties by
scenario order), so the state after every task that starts below a level ``L`` is known in
closed form (:func:`level_counts`); if those tasks fit together they fit one by one, because
free capacity only shrinks. :func:`jump_to_level` finds, by bisection over ``L``
(:func:`search_level`), the highest level whose tasks all fit, and the one-at-a-time loop goes
on from there; after every :data:`JUMP_MIN_TASKS` tasks it hands out (a user set aside may
leave the others room for many more), the next jump is tried. The result is the same
allocation as one task at a time. Jumps of fewer than :data:`JUMP_MIN_TASKS` tasks are not
taken, so small problems follow the papers' loop literally, and :func:`tasks_that_may_fit`
keeps the cost of trying one out of small problems.

Levels are rounded to :data:`_DIGITS` decimals (:func:`rounded_level`), so equal shares
reached by different float paths tie. With 10^12 tasks one task moves a level by less than
the rounding and many counts share a level; :func:`level_counts` searches the fewest count
that reaches a level, so jumps stay exact there too (tested with the rounding coarsened to
3 decimals on problems small enough to go one task at a time).

Examples
--------
DRF section 4.1 with a million times the capacity: the state once every task that starts
below a dominant share of 1/3 is handed out.

>>> import numpy as np
>>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
>>> step = (demands / np.array([9e6, 18e6])).max(axis=1)
>>> level_counts(np.zeros(2), step, np.full(2, np.inf), rounded_level(1 / 3)).tolist()
[1500000.0, 1000000.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from fairshare.cluster import BoolArray, FloatArray

FIT_TOL = 1e-9
"""Relative slack of the fit and cap tests (see :func:`fit_slack`)."""
_DIGITS = 12
"""The decimals levels are rounded to (:func:`rounded_level`)."""

JUMP_MIN_TASKS = 4096
"""The fewest tasks a jump hands out; below that, one task at a time is as fast."""

BISECTIONS = 200
"""The most bisections of a level search; floats run out long before."""

FitTest = Callable[[FloatArray], bool]
"""A test of tasks per user: whether they fit (or, for a search, whether it is done)."""


def fit_slack(capacity: FloatArray, demands: FloatArray) -> FloatArray:
    """How far past the free capacity a task may reach and still fit.

    1e-9 of the capacity, so that round-off in task sizes such as 0.1 never strands a task,
    but under 1% of the smallest task's amount of the resource, so that a capacity of 10^12
    tasks of size 1 does not take a thousand more.

    Parameters
    ----------
    capacity : FloatArray
        The capacity per resource (or rows of them, one per machine).
    demands : FloatArray
        Users x resources: one task's demand.

    Returns
    -------
    FloatArray
        The slack per resource (per row of ``capacity``).

    Examples
    --------
    >>> import numpy as np
    >>> demands = np.array([[0.5, 4.0], [0.25, 1.0]])
    >>> fit_slack(np.array([1.0, 1e12]), demands).tolist()
    [1e-09, 0.01]
    """
    smallest = np.where(demands > 0, demands, np.inf).min(axis=0, initial=np.inf)
    return np.asarray(
        np.minimum(FIT_TOL * np.maximum(1.0, capacity), 0.01 * smallest), dtype=np.float64
    )


def rounded_level(value: float) -> float:
    """A level as the walks order by it: rounded to :data:`_DIGITS` decimals.

    Rounded as ``numpy.round`` does (``rint(value * 10^d) / 10^d``), so that a level
    computed one task at a time equals the one :func:`level_counts` computes for many users
    at once, and equal shares reached by different float paths tie.

    Parameters
    ----------
    value : float
        A weighted share.

    Returns
    -------
    float
        ``value`` rounded (unchanged when it is not finite once scaled).

    Examples
    --------
    >>> 0.1 + 0.2 == 0.3, rounded_level(0.1 + 0.2) == rounded_level(0.3)
    (False, True)
    """
    scale = 10.0**_DIGITS
    scaled = value * scale
    return round(scaled) / scale if math.isfinite(scaled) else value


def level_counts(x: FloatArray, step: FloatArray, limit: FloatArray, level: float) -> FloatArray:
    """Each user's tasks once every task that starts below ``level`` is handed out.

    That is the fewest ``c >= x`` with ``rounded_level(c * step) >= level`` (the level a
    user is ordered by), but no more than ``floor(limit)``. A task may move the rounded
    level by less than its rounding (steps under 10^-12: 10^12 tasks), and then many counts
    share a level: the fewest is searched between the counts whose unrounded share is a
    rounding grain below ``level`` and one task above it.

    Parameters
    ----------
    x : FloatArray
        Each user's tasks now.
    step : FloatArray
        The weighted share of one task (> 0); a user without one (0, infinite) keeps ``x``.
    limit : FloatArray
        Each user's most tasks (inf for none).
    level : float
        The level.

    Returns
    -------
    FloatArray
        Tasks per user.

    Examples
    --------
    A task is 1/9 of user 0's level and 1/6 of user 1's, whose limit is 2 tasks:

    >>> import numpy as np
    >>> step = np.array([1 / 9, 1 / 6])
    >>> level_counts(np.zeros(2), step, np.array([np.inf, 2.0]), 0.5).tolist()
    [5.0, 2.0]
    """
    valid = (step > 0) & np.isfinite(step)
    safe = np.where(valid, step, 1.0)
    grain = 10.0**-_DIGITS

    def reached(counts: FloatArray) -> BoolArray:
        return np.asarray(np.round(counts * safe, _DIGITS) >= level, dtype=np.bool_)

    high = np.maximum(np.ceil(level / safe) + 1, 0.0)
    low = np.maximum(np.floor((level - grain) / safe) - 1, -1.0)
    for _ in range(64):  # float error in the divisions: widen until the bracket holds
        short = ~reached(high)
        over = (low >= 0) & reached(low)
        if not short.any() and not over.any():
            break
        high = np.where(short, 2 * high + 1, high)
        low = np.where(over, np.floor(low / 2) - 1, low)
    ceiling = np.floor(limit + FIT_TOL)
    # A user whose limit is at or below a count short of the level ends at its limit: no
    # need to search (its count there may be past 2^53, where floats skip integers).
    settled = low >= ceiling
    while True:  # invariant: low is short of the level (or -1), high reaches it
        open_ = (high - low > 1) & ~settled
        if not open_.any():
            break
        middle = np.floor((low + high) / 2)
        # past 2^53 no float lies strictly between: high is the closest count there is
        open_ &= (middle > low) & (middle < high)
        up = reached(middle)
        low = np.where(open_ & ~up, middle, low)
        high = np.where(open_ & up, middle, high)
        settled |= ~open_
    counts = np.minimum(np.maximum(high, x), ceiling)
    return np.asarray(np.where(valid, np.maximum(counts, x), x), dtype=np.float64)


def jump_to_level(
    x: FloatArray, step: FloatArray, limit: FloatArray, active: BoolArray, fits: FitTest
) -> FloatArray | None:
    """Jump a flat walk to the highest level whose tasks all fit (module docstring).

    The result is the tasks per user after handing out, one at a time in level order,
    every task of the ``active`` users below the highest level at which they all fit
    together.

    Parameters
    ----------
    x : FloatArray
        Each user's tasks now.
    step : FloatArray
        The weighted share of one task per user.
    limit : FloatArray
        Each user's most tasks (inf for none).
    active : BoolArray
        The users the walk may still give tasks.
    fits : FitTest
        Whether new counts fit; it must hold for ``x`` and stay false once false as counts
        grow.

    Returns
    -------
    FloatArray or None
        The tasks per user after the jump; None when that is fewer than
        :data:`JUMP_MIN_TASKS` tasks, or when an active user's share does not rise with its
        tasks (its level never moves, so no level bounds it).

    Examples
    --------
    DRF section 4.1 with a million times the capacity, equalising dominant shares; at the
    paper's own capacity the jump would hand out 5 tasks, too few to take.

    >>> import numpy as np
    >>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
    >>> def fitting(free):
    ...     return lambda counts: bool(np.all(counts @ demands <= free))
    >>> step = (demands / np.array([9e6, 18e6])).max(axis=1)
    >>> x, limit, everyone = np.zeros(2), np.full(2, np.inf), np.array([True, True])
    >>> jump_to_level(x, step, limit, everyone, fitting(np.array([9e6, 18e6]))).tolist()
    [3000000.0, 2000000.0]
    >>> print(jump_to_level(x, step * 1e6, limit, everyone, fitting(np.array([9.0, 18.0]))))
    None
    """
    if not active.any() or np.any(step[active] <= 0) or not np.all(np.isfinite(step[active])):
        return None
    x_on, step_on, limit_on = x[active], step[active], limit[active]
    ceiling = np.floor(limit_on + FIT_TOL)

    def counts(level: float) -> FloatArray:
        out = x.copy()
        out[active] = level_counts(x_on, step_on, limit_on, level)
        return out

    low = float(np.round(x_on * step_on, _DIGITS).min())
    return search_level(
        x,
        counts,
        low,
        float(step_on.max()),
        fits,
        lambda trial: bool(np.all(trial[active] >= ceiling)),
        int(active.sum()),
    )


def search_level(
    x: FloatArray,
    counts: Callable[[float], FloatArray],
    low: float,
    span: float,
    fits: FitTest,
    exhausted: FitTest,
    close: int,
) -> FloatArray | None:
    """The search behind every jump, flat or on a queue tree.

    The level doubles from ``low`` by ``span`` until its tasks do not fit (or nobody can
    take more: ``exhausted``), then bisects until at most ``close`` tasks separate the
    levels that fit and do not.

    Parameters
    ----------
    x : FloatArray
        Each user's tasks now.
    counts : callable
        ``counts(level)`` is the state after every task that starts below ``level``
        (``counts(low)`` is ``x``).
    low : float
        The level of the state ``x``.
    span : float
        The first step of the level (one task's largest step).
    fits : FitTest
        Whether a state fits.
    exhausted : FitTest
        Whether a state leaves nobody able to take more tasks.
    close : int
        The tasks between the bracketing states at which bisection stops.

    Returns
    -------
    FloatArray or None
        The highest state found that fits, or None when it is fewer than
        :data:`JUMP_MIN_TASKS` tasks past ``x`` (or the level overflows the floats).
    """
    high = low + span
    for _ in range(2100):  # doubling from one task's step reaches any finite level
        trial = counts(high)
        if not fits(trial):
            break
        if exhausted(trial):
            return trial if float((trial - x).sum()) >= JUMP_MIN_TASKS else None
        low, span = high, span * 2
        high = low + span
        if not np.isfinite(high):
            return None
    else:
        return None
    if float((trial - x).sum()) < JUMP_MIN_TASKS:
        return None  # even the first level that does not fit is a small step: no jump
    best = counts(low)
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if not low < middle < high or float((trial - best).sum()) <= close:
            break  # a task or so per user is left between the levels: the loop does those
        candidate = counts(middle)
        if fits(candidate):
            low, best = middle, candidate
        else:
            high, trial = middle, candidate
    return best if float((best - x).sum()) >= JUMP_MIN_TASKS else None


def tasks_that_may_fit(
    x: FloatArray, limit: FloatArray, active: BoolArray, room: FloatArray, demands: FloatArray
) -> float:
    """An upper bound on the tasks the ``active`` users can still get: each alone in
    ``room`` and below its limit. A jump is not tried below :data:`JUMP_MIN_TASKS`, which
    keeps the cost of trying one out of small problems.

    Parameters
    ----------
    x : FloatArray
        Each user's tasks now.
    limit : FloatArray
        Each user's most tasks (inf for none).
    active : BoolArray
        The users that may still get tasks.
    room : FloatArray
        The free capacity per resource (plus slack).
    demands : FloatArray
        Users x resources: one task's demand.

    Returns
    -------
    float
        The sum over active users of the tasks each could get alone.

    Examples
    --------
    DRF section 4.1: alone, A fits 4.5 tasks in <9 CPUs, 18 GB> and B 3.

    >>> import numpy as np
    >>> demands = np.array([[1.0, 4.0], [3.0, 1.0]])
    >>> limit, active = np.full(2, np.inf), np.array([True, True])
    >>> tasks_that_may_fit(np.zeros(2), limit, active, np.array([9.0, 18.0]), demands)
    7.5
    """
    if not active.any():
        return 0.0
    mine = demands[active]
    with np.errstate(divide="ignore", invalid="ignore"):
        alone = np.where(mine > 0, np.maximum(room, 0.0) / mine, np.inf).min(axis=1)
    return float(np.minimum(alone, limit[active] - x[active]).sum())
