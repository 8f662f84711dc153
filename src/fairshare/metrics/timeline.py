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

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from fairshare.metrics.frames import FloatArray, IntArray, cached
from fairshare.metrics.totals import attempt_demands, attempt_users, demand_rows
from fairshare.runlog import RunLog

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
    return cached(log, "timeline", _timeline)


TIMELINE_CHUNK = 1 << 16
"""Attempts read per pass of the timeline (:func:`timeline_batches`): what a pass holds in
flight is some two chunks' events (a few tens of MB) and the attempts running at its time,
whatever the run's size (and smaller chunks stay in the processor's caches: 2^16 walked a
run of 1.27 million attempts in half the time 2^18 took). Read at each call, so a test may
lower it."""


class TimelineRows(NamedTuple):
    """Change rows of :func:`timeline_batches`, in (time, user) order."""

    time: FloatArray
    user: IntArray
    running: IntArray
    share: FloatArray


def _timeline(log: RunLog) -> Timeline:
    """:func:`timeline`: the batches of :func:`timeline_batches` as one table."""
    users = attempt_users(log)
    batches = list(timeline_batches(log))
    if not batches:
        empty_f = np.zeros(0, dtype=np.float64)
        empty_i = np.zeros(0, dtype=np.int64)
        return Timeline(users.names, empty_f, empty_i, empty_i, empty_f, empty_i)
    t = np.concatenate([b.time for b in batches])
    u = np.concatenate([b.user for b in batches])
    r = np.concatenate([b.running for b in batches])
    share = np.concatenate([b.share for b in batches])
    # The rows are in (time, user) order; a stable sort by user gives (user, time).
    by_user = np.argsort(u, kind="stable")
    return Timeline(users.names, t, u, r, share, by_user)


def timeline_batches(log: RunLog) -> Iterator[TimelineRows]:
    """The change rows of ``log``'s timeline (module docstring) in (time, user) order, a
    batch at a time: one pass over the attempts, :data:`TIMELINE_CHUNK` at a time
    (:func:`~fairshare.metrics.totals.attempt_chunks`, the spill file's rows for a long
    run), holding only the attempts still running (issue 32).

    The attempts are in start order, so once a chunk is read every event before its last
    start time is known: the starts before it, and the ends before it of the attempts read
    (a heap of pending ends, as arrays). Each batch is those events, in (user, time, event)
    order, where the event of attempt k is k for its start and ``n + k`` for its end (at
    one time, starts before ends); each user's running count and load per resource go on
    from the values carried from the last batch, sums taken one event at a time in that
    order (:func:`segmented_cumsum`): the same numbers in the same order whatever the chunk,
    so the rows are the same to the bit. A user's values are its own sums from 0, never
    another user's float residue.

    Parameters
    ----------
    log : RunLog
        A run.

    Yields
    ------
    TimelineRows
        The rows of the batch's times, which are before the next batch's.
    """
    users = attempt_users(log)
    total = np.asarray(log.cluster.total, dtype=np.float64)
    # Demands as fractions of the pooled total, so the dominant share is a max over columns
    # (a resource the cluster has none of counts for none); an end adds the demand negated.
    columns = [(c, 1.0 / t) for c, t in enumerate(total.tolist()) if t > 0]
    demand = attempt_demands(log)
    scaled = np.empty((demand.shape[0], len(columns)), dtype=np.float64)
    for j, (c, scale) in enumerate(columns):
        scaled[:, j] = demand[:, c] * scale
    state = _Carried(len(users.names), len(columns))
    n_all = log.attempt_count
    empty = _Events.empty()
    deferred = empty  # read, starting at the latest start time read
    pending = empty  # started, not yet ended
    for lo, rows, user in users.chunks(log, TIMELINE_CHUNK):
        k = np.arange(lo, lo + len(rows.start), dtype=np.int64)
        fresh = _Events(rows.start, rows.finish, k, user, demand_rows(log, rows))
        read = _Events.join(deferred, fresh)
        latest = float(rows.start[-1])
        ready = read.start < latest
        starts = read.take(ready)
        deferred = read.take(~ready)
        pending = _Events.join(pending, starts)
        ending = pending.finish < latest
        ends = pending.take(ending)
        pending = pending.take(~ending)
        batch = state.rows(starts, ends, n_all, scaled)
        if batch.time.size:
            yield batch
    pending = _Events.join(pending, deferred)
    batch = state.rows(deferred, pending, n_all, scaled)
    if batch.time.size:
        yield batch


class _Events(NamedTuple):
    """Attempts as a timeline pass holds them: start, finish, index k in the log, user and
    demand row (:func:`~fairshare.metrics.totals.demand_rows`)."""

    start: FloatArray
    finish: FloatArray
    k: IntArray
    user: IntArray
    demand: IntArray

    @classmethod
    def empty(cls) -> _Events:
        f = np.zeros(0, dtype=np.float64)
        i = np.zeros(0, dtype=np.int64)
        return cls(f, f, i, i, i)

    @classmethod
    def join(cls, a: _Events, b: _Events) -> _Events:
        if not a.k.size:
            return b
        if not b.k.size:
            return a
        return cls(
            np.concatenate([a.start, b.start]),
            np.concatenate([a.finish, b.finish]),
            np.concatenate([a.k, b.k]),
            np.concatenate([a.user, b.user]),
            np.concatenate([a.demand, b.demand]),
        )

    def take(self, mask: npt.NDArray[np.bool_]) -> _Events:
        return _Events(
            self.start[mask], self.finish[mask], self.k[mask], self.user[mask], self.demand[mask]
        )


class _Carried:
    """What one batch of :func:`timeline_batches` hands the next, per user: its running
    count, its load per resource column, and its last row's count and share (whether its
    next row is a change; a user before its first row stands at 0 tasks, share 0)."""

    def __init__(self, users: int, columns: int) -> None:
        self.running = np.zeros(users, dtype=np.int64)
        self.load = np.zeros((users, columns), dtype=np.float64)
        self.row_running = np.zeros(users, dtype=np.int64)
        self.row_share = np.zeros(users, dtype=np.float64)

    def rows(self, starts: _Events, ends: _Events, n: int, scaled: FloatArray) -> TimelineRows:
        """The change rows of the events of ``starts`` (their starts) and ``ends`` (their
        ends), the carried values updated."""
        time = np.concatenate([starts.start, ends.finish])
        user = np.concatenate([starts.user, ends.user])
        event = np.concatenate([starts.k, ends.k + n])
        ending = np.zeros(time.size, dtype=np.bool_)
        ending[starts.k.size :] = True
        demand = np.concatenate([starts.demand, ends.demand])
        if not time.size:
            empty_f = np.zeros(0, dtype=np.float64)
            empty_i = np.zeros(0, dtype=np.int64)
            return TimelineRows(empty_f, empty_i, empty_i, empty_f)
        order = np.lexsort((event, time, user))
        time, user, ending, demand = time[order], user[order], ending[order], demand[order]
        del order, event
        m = time.size
        first = np.empty(m, dtype=np.bool_)
        first[0] = True
        np.not_equal(user[1:], user[:-1], out=first[1:])
        seg_start = np.flatnonzero(first)
        seg_user = user[seg_start]
        seg_len = np.diff(np.append(seg_start, m))
        # The running count: integer sums, exact in any order.
        steps = np.where(ending, np.int64(-1), np.int64(1))
        total = np.cumsum(steps)
        before = np.repeat(total[seg_start] - steps[seg_start], seg_len)
        running = total - before + np.repeat(self.running[seg_user], seg_len)
        # Only the last event of each (user, time) gives a row.
        last = np.empty(m, dtype=np.bool_)
        np.not_equal(time[1:], time[:-1], out=last[:-1])
        last[:-1] |= first[1:]
        last[-1] = True
        top = np.zeros(int(last.sum()), dtype=np.float64)
        columns = scaled.shape[1]
        if columns:  # (a cluster with none of any resource has no columns)
            # Every column's sums over one layout of the users' segments.
            step = as_items(scaled)[demand].view(np.float64).reshape(m, columns)
            np.negative(step, out=step, where=ending[:, None])
            load = Segments(seg_start, seg_len).cumsum(step, self.load[seg_user])
            self.load[seg_user] = load[seg_start + seg_len - 1]
            at_rows = load[last]
            for j in range(columns):
                np.maximum(top, at_rows[:, j], out=top)
        self.running[seg_user] = running[seg_start + seg_len - 1]
        t, u, r = time[last], user[last], running[last]
        share = np.where(r > 0, np.round(top, SHARE_DECIMALS), 0.0)
        # A row is kept where the user's value changed from its previous row (carried
        # across batches; a user's first row changes from nothing: 0 tasks, share 0).
        fresh = np.empty(t.size, dtype=np.bool_)
        fresh[0] = True
        np.not_equal(u[1:], u[:-1], out=fresh[1:])
        prev_r = np.empty_like(r)
        prev_s = np.empty_like(share)
        prev_r[1:], prev_s[1:] = r[:-1], share[:-1]
        prev_r[fresh] = self.row_running[u[fresh]]
        prev_s[fresh] = self.row_share[u[fresh]]
        changed = (r != prev_r) | (share != prev_s)
        ends_at = np.append(np.flatnonzero(fresh)[1:] - 1, t.size - 1)
        self.row_running[u[ends_at]] = r[ends_at]
        self.row_share[u[ends_at]] = share[ends_at]
        t, u, r, share = t[changed], u[changed], r[changed], share[changed]
        # Rows are in (user, time) order; a stable sort by time gives (time, user).
        by_time = np.argsort(t, kind="stable")
        return TimelineRows(t[by_time], u[by_time], r[by_time], share[by_time])


def segmented_cumsum(
    values: FloatArray, seg_start: IntArray, seg_len: IntArray, carry: FloatArray
) -> FloatArray:
    """Cumulative sums of consecutive segments of ``values``, each from its own start value
    ``carry``: every sum one addition after the other (``np.cumsum``'s order), so a sum
    continued from its carried value gives the bits of one sum over all of it
    (:class:`Segments`, which keeps the layout for several columns).

    Parameters
    ----------
    values : FloatArray
        The values, segment after segment; with a second axis, each column summed apart.
    seg_start, seg_len : IntArray
        Each segment's first index and length (positive, covering ``values``).
    carry : FloatArray
        Each segment's start value (a row per segment for values with columns).

    Returns
    -------
    FloatArray
        The shape of ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> segmented_cumsum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 2]), np.array([2, 2]),
    ...                  np.array([10.0, 0.5])).tolist()
    [11.0, 13.0, 3.5, 7.5]
    """
    return Segments(seg_start, seg_len).cumsum(values, carry)


class Segments:
    """Consecutive segments of an array laid out for cumulative sums of each
    (:func:`segmented_cumsum`): built once, used for every column summed over them.

    Segments of similar lengths are summed together, as the columns of a matrix padded
    with zeros (a cumulative sum down axis 0 is sequential in each column), so the work is
    a few vectorised passes however many segments, and the matrices hold at most about
    twice the values. Segments are bucketed by the power of two of their length; per
    bucket the layout keeps its segments, its values' indices and each value's flat place
    in the bucket's matrix.

    Parameters
    ----------
    seg_start, seg_len : IntArray
        Each segment's first index and length (positive, covering the values).
    """

    def __init__(self, seg_start: IntArray, seg_len: IntArray) -> None:
        self.parts: list[tuple[IntArray, IntArray, IntArray, int]] = []
        segments = seg_len.size
        if not segments:
            return
        bucket = np.ceil(np.log2(seg_len)).astype(np.uint8)
        # The segments grouped by bucket (a stable sort of small integers: in order within
        # each); a segment's column is its rank among its bucket's.
        seg_order = np.argsort(bucket, kind="stable")
        seg_count = np.bincount(bucket)
        seg_first = np.cumsum(seg_count) - seg_count
        ordered_len = seg_len[seg_order]
        ordered_from = np.cumsum(ordered_len) - ordered_len  # in the grouped order
        # The values grouped the same way: each segment's run of indices, one after another.
        shift = np.repeat(seg_start[seg_order], ordered_len)
        back = np.repeat(ordered_from, ordered_len)
        inside = np.arange(back.size) - back  # a value's place in its segment
        value_order = shift + inside
        rank = np.arange(segments) - np.repeat(seg_first, seg_count)
        value_rank = np.repeat(rank, ordered_len)
        value_first = np.append(ordered_from, back.size)[seg_first]
        value_count = np.bincount(bucket, weights=seg_len, minlength=seg_count.size)
        for b in np.flatnonzero(seg_count).tolist():
            segs = seg_order[seg_first[b] : seg_first[b] + seg_count[b]]
            lo = int(value_first[b])
            hi = lo + int(value_count[b])
            height = int(ordered_len[seg_first[b] : seg_first[b] + seg_count[b]].max()) + 1
            # Row ``inside + 1`` (row 0 holds the carried values), column ``rank``.
            flat = (inside[lo:hi] + 1) * segs.size + value_rank[lo:hi]
            self.parts.append((segs, value_order[lo:hi], flat, height))

    def cumsum(self, values: FloatArray, carry: FloatArray) -> FloatArray:
        """Each segment's cumulative sums of ``values`` from its ``carry`` (columns apart
        when ``values`` has a second axis, ``carry`` then a row per segment)."""
        values = np.ascontiguousarray(values)
        out = np.empty_like(values)
        columns = values.shape[1:]
        # Rows are moved as single items (numpy gathers rows of a few floats one float at a
        # time, about twenty times slower).
        given, taken = as_items(values), as_items(out)
        for segs, mine, flat, height in self.parts:
            grid = np.zeros((height, segs.size, *columns), dtype=np.float64)
            grid[0] = carry[segs]
            cells = as_items(grid.reshape(height * segs.size, *columns))
            cells[flat] = given[mine]
            np.cumsum(grid, axis=0, out=grid)
            taken[mine] = cells[flat]
        return out


def as_items(rows: FloatArray) -> npt.NDArray[np.void]:
    """A C-contiguous array of floats as one item per row (its first axis), sharing its
    memory: a view numpy gathers and scatters a row at a time.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(3, 2)
    >>> as_items(a)[[2, 0]].view(np.float64).reshape(2, 2).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    width = rows.dtype.itemsize * (int(np.prod(rows.shape[1:])) if rows.ndim > 1 else 1)
    return rows.view(np.dtype((np.void, width))).reshape(rows.shape[0])


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


@dataclass(frozen=True)
class TimelineView:
    """What the summary and the report read of a timeline, computed batch by batch
    (:func:`timeline_view`) rather than from the whole :class:`Timeline`.

    Parameters
    ----------
    users : tuple of str
        The run's users.
    rows : int
        The timeline's rows.
    integrals : FloatArray
        :func:`share_integrals` up to the horizon.
    resampled : FloatArray
        :func:`resample` on ``np.linspace(0, horizon, grid_points + 1)`` (users x
        ``grid_points``; no columns for 0 grid points).
    """

    users: tuple[str, ...]
    rows: int
    integrals: FloatArray
    resampled: FloatArray


def timeline_view(
    log: RunLog,
    horizon: float,
    grid_points: int,
    each: Callable[[TimelineRows], None] | None = None,
) -> TimelineView:
    """The :class:`TimelineView` of ``log`` up to ``horizon``: one pass over its timeline's
    batches (:func:`timeline_batches`), each handed to ``each`` too (``timeline.csv``'s
    writer), holding per user its last row and, with ``grid_points``, its resampled row.

    The integrals and resampled shares are :func:`share_integrals`' and :func:`resample`'s
    to the bit: each user's terms are made by the same operations and added in the same
    (time) order, the rows of one user arriving in time order batch after batch.

    Parameters
    ----------
    log : RunLog
        A run.
    horizon : float
        The end of the integrals and of the grid (the makespan).
    grid_points : int
        The resampling bins (0: none).
    each : callable, optional
        Called with every batch of rows, in order.

    Returns
    -------
    TimelineView
    """
    users = attempt_users(log).names
    follow = _Follow(len(users), horizon, grid_points)
    for batch in timeline_batches(log):
        if each is not None:
            each(batch)
        follow.add(batch)
    return follow.view(users)


_PAIRS = 1 << 18
"""(Row, grid point) pairs :meth:`_Follow._fill` computes at a time."""


class _Follow:
    """Per user, its last row (time, share), the integral of its share so far and, with a
    grid, the cumulative integral at its last row and at each grid point passed
    (:func:`resample`'s ``at``)."""

    def __init__(self, users: int, horizon: float, grid_points: int) -> None:
        self.horizon = horizon
        self.rows = 0
        self.has = np.zeros(users, dtype=np.bool_)
        self.time = np.zeros(users, dtype=np.float64)
        self.share = np.zeros(users, dtype=np.float64)
        self.cum = np.zeros(users, dtype=np.float64)
        self.integral = np.zeros(users, dtype=np.float64)
        self.grid = (
            np.linspace(0.0, horizon, grid_points + 1)
            if grid_points > 0
            else np.zeros(0, dtype=np.float64)
        )
        self.at = np.zeros((users, self.grid.size), dtype=np.float64)

    def add(self, batch: TimelineRows) -> None:
        """Follow the rows of ``batch``."""
        m = batch.time.size
        if not m:
            return
        self.rows += m
        order = np.argsort(batch.user, kind="stable")
        t, u, s = batch.time[order], batch.user[order], batch.share[order]
        first = np.empty(m, dtype=np.bool_)
        first[0] = True
        np.not_equal(u[1:], u[:-1], out=first[1:])
        # Each row's predecessor: the row before it of its user, in this batch or carried.
        prev_t = np.empty(m, dtype=np.float64)
        prev_s = np.empty(m, dtype=np.float64)
        prev_t[1:], prev_s[1:] = t[:-1], s[:-1]
        prev_t[first], prev_s[first] = self.time[u[first]], self.share[u[first]]
        has_prev = np.ones(m, dtype=np.bool_)
        has_prev[first] = self.has[u[first]]
        self._close(u[has_prev], prev_t[has_prev], prev_s[has_prev], t[has_prev])
        if self.grid.size:
            # resample's cumulative integral at each row: the products of the rows before,
            # summed one after the other from the user's carried value.
            step = np.where(has_prev, prev_s * (t - prev_t), 0.0)
            seg_start = np.flatnonzero(first)
            seg_len = np.diff(np.append(seg_start, m))
            cum = segmented_cumsum(step, seg_start, seg_len, self.cum[u[seg_start]])
            prev_cum = np.empty(m, dtype=np.float64)
            prev_cum[1:] = cum[:-1]
            prev_cum[first] = self.cum[u[first]]
            self._fill(
                u[has_prev], prev_t[has_prev], prev_s[has_prev], prev_cum[has_prev], t[has_prev]
            )
            last = np.append(seg_start[1:] - 1, m - 1)
            self.cum[u[last]] = cum[last]
        last = np.append(np.flatnonzero(first)[1:] - 1, m - 1)
        self.time[u[last]] = t[last]
        self.share[u[last]] = s[last]
        self.has[u[last]] = True

    def _close(self, u: IntArray, t: FloatArray, s: FloatArray, nxt: FloatArray) -> None:
        """Add to the integrals the rows at ``t`` of users ``u`` (in each user's time order),
        followed by rows at ``nxt``: :func:`_share_integrals`' terms."""
        h = self.horizon
        width = np.clip(np.minimum(nxt, h) - np.minimum(t, h), 0.0, None)
        np.add.at(self.integral, u, s * width)

    def _fill(
        self, u: IntArray, t: FloatArray, s: FloatArray, cum: FloatArray, nxt: FloatArray
    ) -> None:
        """:func:`resample`'s ``at`` at the grid points from ``t`` (a row of user ``u``,
        share ``s``, cumulative integral ``cum``) to before ``nxt``."""
        grid = self.grid
        lo = np.searchsorted(grid, t, side="left")
        hi = np.searchsorted(grid, nxt, side="left")
        count = np.maximum(hi - lo, 0)
        # A few rows' worth of (row, grid point) pairs at a time: at the end every user's
        # last row may reach most of the grid (users x grid points pairs at once).
        ends = np.cumsum(count)
        first = 0
        while first < count.size:
            last = int(np.searchsorted(ends, int(ends[first]) - int(count[first]) + _PAIRS))
            last = min(max(last, first + 1), count.size)
            k, g = count[first:last], lo[first:last]
            total = int(k.sum())
            if total:
                which = np.repeat(np.arange(first, last), k)
                point = g[which - first] + np.arange(total) - np.repeat(np.cumsum(k) - k, k)
                self.at[u[which], point] = cum[which] + s[which] * (grid[point] - t[which])
            first = last

    def view(self, users: tuple[str, ...]) -> TimelineView:
        """The view, each user's last row followed to the horizon and the grid's end."""
        held = np.flatnonzero(self.has)
        t, s = self.time[held], self.share[held]
        self._close(held, t, s, np.full(held.size, self.horizon))
        if self.grid.size:
            self._fill(held, t, s, self.cum[held], np.full(held.size, np.inf))
            widths = np.diff(self.grid)
            # In place, and the cumulative values let go first: the matrices are the users'
            # times the grid's, the one part of the view that grows with the users.
            resampled = np.diff(self.at, axis=1)
            self.at = np.zeros((0, self.grid.size), dtype=np.float64)
            resampled /= np.where(widths > 0, widths, 1.0)
        else:
            resampled = np.zeros((len(users), 0), dtype=np.float64)
        return TimelineView(users, self.rows, self.integral, resampled)
