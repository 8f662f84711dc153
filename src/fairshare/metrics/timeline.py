"""The allocation over time (SPEC section 3, ``timeline.csv``).

Each user's allocation is a step function of time: the number of its task attempts running,
and its dominant share of the cluster, ``max_r (sum of the running attempts' demand on r) /
(the cluster's total capacity of r)`` (DRF section 4, computed on the pooled cluster as the
DRF and H-DRF papers do). An attempt runs on ``[start, finish)``; a killed attempt holds its
resources until it is killed. The timeline has one row per (time, user) at which the user's
value changed; before its first row a user runs nothing. An attempt that ends when another
of the same user starts is no change and gives no row. Rows are sorted by time, then by user
in scenario order. This is the data of the allocation figures (Choosy Figures 10-14, H-DRF
Figure 9).

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
>>> steps = timeline(log)
>>> steps.time.tolist(), [steps.users[u] for u in steps.user], steps.share.tolist()
([0.0, 10.0, 10.0, 30.0, 30.0], ['a', 'a', 'b', 'a', 'b'], [1.0, 0.5, 0.5, 0.0, 0.0])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from fairshare.metrics.frames import (
    FloatArray,
    IntArray,
    RunFrames,
    cached,
    run_frames,
)
from fairshare.runlog import RunLog

EventIndex = npt.NDArray[np.signedinteger[Any]]
"""Event indices into the 2n events of a timeline: int32 where they fit, else int64."""

SHARE_DECIMALS = 12
"""Shares are rounded here before change detection, so float residue of running sums
(1e-16) neither creates spurious rows nor leaves a 'zero' share at 1e-17."""


@dataclass(frozen=True)
class Timeline:
    """The change rows of all users' allocation step functions, sorted by (time, user index).

    Parameters
    ----------
    users : tuple of str
        The run's users; ``user`` indexes them.
    time : FloatArray
        Each row's time.
    user : IntArray
        Each row's user.
    running : IntArray
        The user's running task attempts from that time on.
    share : FloatArray
        The user's dominant share from that time on.
    by_user : IntArray
        The rows in (user, time) order.
    """

    users: tuple[str, ...]
    time: FloatArray
    user: IntArray
    running: IntArray
    share: FloatArray
    by_user: IntArray
    """The rows in (user, time) order: the order the step functions are built in, kept so
    that the per-user integrals and the figures' resampling do not sort the rows again."""
    integrals: dict[float, FloatArray] = field(default_factory=dict, compare=False, repr=False)
    """:func:`share_integrals` by horizon, computed once: the summary, the report's user
    count and its allocation figure all ask for them up to the makespan."""

    def __len__(self) -> int:
        """The number of change rows."""
        return int(self.time.shape[0])


def timeline(log: RunLog) -> Timeline:
    """The allocation step functions of ``log`` (module docstring), cached per log.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).

    Returns
    -------
    Timeline
    """
    return cached(log, "timeline", lambda lg: _timeline(run_frames(lg)))


TIMELINE_CHUNK = 1 << 18
"""Events per pass of the timeline's running sums (:func:`_timeline`): what the sums hold in
flight is this many events' worth (some 100 MB), whatever the run's size. Read at each call,
so a test may lower it."""


def _timeline(f: RunFrames) -> Timeline:
    """The step functions of the frames: cumulative sums of starts and ends per user,
    restarted at each user's first row.

    The 2n events are sorted once by (user, time); the sums then walk that order a
    :data:`TIMELINE_CHUNK` of events at a time, each pass carrying the sums, the current
    user's base values and the last row over to the next. A cumulative sum is sequential,
    so a sum continued from its carried value adds the same numbers in the same order as
    one sum over all the events: the rows are the same to the bit whatever the chunk.
    """
    n = f.a_start.shape[0]
    if n == 0:
        empty_f = np.zeros(0, dtype=np.float64)
        empty_i = np.zeros(0, dtype=np.int64)
        return Timeline(f.users, empty_f, empty_i, empty_i, empty_f, empty_i)
    # Event k < n starts attempt k (one more task, its demand more), event n + k ends it.
    order = _events_by_user_time(f)
    # Demands as fractions of the pooled total, so the dominant share is a max over columns
    # (a resource the cluster has none of counts for none); an end adds the demand negated.
    columns = [(c, 1.0 / total) for c, total in enumerate(f.total.tolist()) if total > 0]
    walk = _Walk(len(columns))
    pieces: list[tuple[FloatArray, IntArray, IntArray, FloatArray]] = []
    chunk = TIMELINE_CHUNK
    for lo in range(0, 2 * n, chunk):
        hi = min(2 * n, lo + chunk)
        pieces.append(walk.rows(f, order, lo, hi, n, columns))
    del order
    t = np.concatenate([p[0] for p in pieces])
    u = np.concatenate([p[1] for p in pieces])
    r = np.concatenate([p[2] for p in pieces])
    share = np.concatenate([p[3] for p in pieces])
    del pieces

    # Rows are in (user, time) order, so a stable sort by time gives (time, user).
    out = np.argsort(t, kind="stable")
    by_user = np.empty_like(out)
    by_user[out] = np.arange(out.size)
    return Timeline(f.users, t[out], u[out], r[out], share[out], by_user)


def _events_by_user_time(f: RunFrames) -> EventIndex:
    """The 2n events (attempt k's start, then as event n + k its end) in (user, time, event)
    order: :func:`~fairshare.metrics.frames.order_by_user_time`'s two stable sorts, each
    input freed as soon as read and the indices kept as int32 where they fit, so that the
    sort holds about 36 bytes per attempt at its peak rather than 74 (the same permutation).
    """
    n = f.a_start.shape[0]
    by_time: EventIndex = np.argsort(np.concatenate([f.a_start, f.a_finish]), kind="stable")
    if 2 * n < np.iinfo(np.int32).max:
        by_time = by_time.astype(np.int32)
    # Users as small integers: the second sort is a radix sort on them.
    small = f.a_user.astype(np.int16 if len(f.users) < np.iinfo(np.int16).max else np.int64)
    user = np.concatenate([small, small])
    del small
    user = user[by_time]
    by_user = np.argsort(user, kind="stable")
    del user
    order: EventIndex = by_time[by_user]
    return order


class _Walk:
    """What one pass of :func:`_timeline` hands the next: the running sums at the end of the
    events seen, the base values of the user whose events were last (its sums before its
    first event, subtracted so that its values restart there, as if the earlier users'
    float residue were not in the sums), and the last row (its user, count and share:
    whether the next row is a change)."""

    def __init__(self, resources: int) -> None:
        self.started = False
        self.user = -1
        self.running = 0
        self.load = [0.0] * resources
        self.base_running = 0
        self.base_load = [0.0] * resources
        self.row: tuple[int, int, float] | None = None

    def rows(
        self,
        f: RunFrames,
        order: EventIndex,
        lo: int,
        hi: int,
        n: int,
        columns: list[tuple[int, float]],
    ) -> tuple[FloatArray, IntArray, IntArray, FloatArray]:
        """The change rows (time, user, running, share) of events ``order[lo:hi]``, in
        (user, time) order, the carried values updated."""
        idx = order[lo:hi]
        ending = idx >= n
        att = np.where(ending, idx - n, idx)
        times = np.where(ending, f.a_finish[att], f.a_start[att])
        user = f.a_user[att]
        m = idx.shape[0]
        running = np.cumsum(np.where(ending, np.int8(-1), np.int8(1)), dtype=np.int64)
        running += self.running
        # A user's first event; the first of the pass is one unless it goes on the last
        # pass's user.
        first = np.empty(m, dtype=np.bool_)
        first[0] = not self.started or int(user[0]) != self.user
        np.not_equal(user[1:], user[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        # Only the last event of each (user, time) gives a row; the pass's last event looks
        # at the next pass's first.
        last = np.empty(m, dtype=np.bool_)
        if hi < order.shape[0]:
            k = int(order[hi])
            after = f.a_finish[k - n] if k >= n else f.a_start[k]
            after_user = int(f.a_user[k - n if k >= n else k])
            last[-1] = bool(after != times[-1]) or after_user != int(user[-1])
        else:
            last[-1] = True
        np.not_equal(times[1:], times[:-1], out=last[:-1])
        last[:-1] |= first[1:]
        # Each event's user's group: 0 the carried user, j the pass's j-th first event.
        group = np.cumsum(first)[last]
        t, u = times[last], user[last].astype(np.int64)
        bases = np.empty(starts.shape[0] + 1, dtype=np.int64)
        bases[0] = self.base_running
        bases[1:] = running[starts] - np.where(ending[starts], -1, 1)
        r = running[last] - bases[group]
        self.running = int(running[-1])
        if starts.shape[0]:
            self.base_running = int(bases[-1])
        del running, times
        top = np.zeros(len(t))
        for j, (column, scale) in enumerate(columns):
            demand = f.a_demand[att, column] * scale
            step = np.where(ending, -demand, demand)
            if self.started:
                load = np.cumsum(np.concatenate([[self.load[j]], step]))[1:]
            else:
                load = np.cumsum(step)
            base = np.empty(starts.shape[0] + 1, dtype=np.float64)
            base[0] = self.base_load[j]
            base[1:] = load[starts] - step[starts]
            np.maximum(top, load[last] - base[group], out=top)
            self.load[j] = float(load[-1])
            if starts.shape[0]:
                self.base_load[j] = float(base[-1])
        share = np.where(r > 0, np.round(top, SHARE_DECIMALS), 0.0)
        self.started = True
        self.user = int(user[-1])

        # A row is kept where the user's value changed (a user's first row: from nothing).
        same = np.zeros(len(t), dtype=np.bool_)
        changed = np.ones(len(t), dtype=np.bool_)
        if len(t):
            prev = self.row
            if prev is not None:
                same[0] = int(u[0]) == prev[0]
                changed[0] = int(r[0]) != prev[1] or float(share[0]) != prev[2]
            same[1:] = u[1:] == u[:-1]
            changed[1:] = (r[1:] != r[:-1]) | (share[1:] != share[:-1])
            self.row = (int(u[-1]), int(r[-1]), float(share[-1]))
        fresh = ~same
        changed[fresh] = (r[fresh] != 0) | (share[fresh] != 0)
        return t[changed], u[changed], r[changed], share[changed]


def share_integrals(tl: Timeline, horizon: float) -> FloatArray:
    """Per user, the integral of its dominant share over ``[0, horizon]`` (share-seconds).

    Parameters
    ----------
    tl : Timeline
        The run's timeline.
    horizon : float
        The end of the interval (the makespan, or a common one of several runs).

    Returns
    -------
    FloatArray
        One value per user of ``tl.users``.

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
    >>> from fairshare.metrics import share_integrals, timeline
    >>> share_integrals(timeline(log), 30.0).tolist()  # a: 10 s at 1, 20 s at 0.5
    [20.0, 10.0]
    """
    known = tl.integrals.get(horizon)
    if known is None:
        known = tl.integrals[horizon] = _share_integrals(tl, horizon)
    return known.copy()


def _share_integrals(tl: Timeline, horizon: float) -> FloatArray:
    n_users = len(tl.users)
    if len(tl) == 0:
        return np.zeros(n_users, dtype=np.float64)
    order = tl.by_user
    t, u, s = tl.time[order], tl.user[order], tl.share[order]
    nxt = np.empty_like(t)
    nxt[:-1] = t[1:]
    nxt[-1] = horizon
    last_of_user = np.ones(len(t), dtype=np.bool_)
    last_of_user[:-1] = u[1:] != u[:-1]
    nxt = np.where(last_of_user, horizon, nxt)
    width = np.clip(np.minimum(nxt, horizon) - np.minimum(t, horizon), 0.0, None)
    return np.bincount(u, weights=s * width, minlength=n_users).astype(np.float64)


def resample(tl: Timeline, grid: FloatArray) -> FloatArray:
    """Time-averaged share of each user over the bins ``[grid[k], grid[k+1])``.

    For plotting long runs without drawing every step.

    Parameters
    ----------
    tl : Timeline
        The run's timeline.
    grid : FloatArray
        Increasing bin edges.

    Returns
    -------
    FloatArray
        The users x (len(grid) - 1) matrix of average shares.
    """
    n_users = len(tl.users)
    out = np.zeros((n_users, max(len(grid) - 1, 0)), dtype=np.float64)
    if len(tl) == 0 or len(grid) < 2:
        return out
    order = tl.by_user
    t, u, s = tl.time[order], tl.user[order], tl.share[order]
    widths = np.diff(grid)
    bounds = np.searchsorted(u, np.arange(n_users + 1))
    for i in range(n_users):
        lo, hi = bounds[i], bounds[i + 1]
        if lo == hi:
            continue
        ti, si = t[lo:hi], s[lo:hi]
        # Cumulative integral of the step function at each change time, then at the grid.
        cum = np.concatenate([[0.0], np.cumsum(si[:-1] * np.diff(ti))])
        k = np.searchsorted(ti, grid, side="right") - 1
        val = np.where(k >= 0, si[np.maximum(k, 0)], 0.0)
        at = np.where(k >= 0, cum[np.maximum(k, 0)] + val * (grid - ti[np.maximum(k, 0)]), 0.0)
        out[i] = np.diff(at) / np.where(widths > 0, widths, 1.0)
    return out
