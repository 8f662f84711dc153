"""Comparing runs of one workload under different policies.

The RMSE between allocation vectors over time (Choosy section 7.1, Figure 8), slowdown
relative to a reference run by job duration (Choosy Table 1), and the side-by-side table
behind ``compare.json``/``compare.csv``.

RMSE (Choosy section 7.1): at time t, with c_i and o_i the allocations of user i in the two
runs, RMSE(t) = sqrt((1/n) * sum_i (c_i - o_i)^2). Here the allocation of a user is its
dominant share (``timeline.csv``), components are matched by user (a swap of allocations
between two users counts as a difference), and n counts the users present at t in either run:
a user with a job submitted and not finished, or with tasks running. RMSE(t) is a step
function over the union of both runs' change times up to the later makespan; intervals with
no user present are left out. Its statistics are time-weighted: the mean is the integral over
the time with users present, and quantiles are of the time spent at or below a value.

Examples
--------
>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
...     source="two-jobs",
... )
>>> fifo = fairshare.simulate(scenario, "fifo").log
>>> fair = fairshare.simulate(scenario, "fair").log
>>> from fairshare.metrics import compare_frame, compare_runs
>>> document = compare_runs([fifo, fair])
>>> document["reference"], [run["label"] for run in document["runs"]]
('fifo', ['fifo', 'fair'])
>>> compare_frame(document)["mean_response_time"].to_list()
[24.5, 29.5]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from fairshare.metrics.bins import relative_slowdown
from fairshare.metrics.frames import (
    FloatArray,
    IntArray,
    RunFrames,
    order_by_user_time,
    run_frames,
)
from fairshare.metrics.stats import clean
from fairshare.metrics.summary import _summary, makespan
from fairshare.metrics.timeline import share_integrals, timeline
from fairshare.metrics.totals import run_totals
from fairshare.runlog import RunLog


@dataclass(frozen=True)
class RmseSeries:
    """RMSE(t) as a step function: ``rmse[k]`` on ``[start[k], start[k] + width[k])``.

    Parameters
    ----------
    start : FloatArray
        Each interval's start.
    width : FloatArray
        Each interval's length (positive).
    rmse : FloatArray
        The RMSE on the interval.
    users : IntArray
        The users present on the interval.

    Examples
    --------
    FAIR's dominant shares differ from FIFO's by 0.5 for both users from 10 s to 30 s:

    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> fifo = fairshare.simulate(scenario, "fifo").log
    >>> fair = fairshare.simulate(scenario, "fair").log
    >>> from fairshare.metrics import allocation_rmse
    >>> series = allocation_rmse(fair, fifo)
    >>> series.start.tolist(), series.rmse.tolist()
    ([0.0, 1.0, 10.0, 20.0], [0.0, 0.0, 0.5, 0.5])
    >>> series.stats()["mean"]  # 0.5 for 20 of the 30 seconds
    0.3333333333333333
    """

    start: FloatArray
    width: FloatArray
    rmse: FloatArray
    users: IntArray

    def weighted_quantile(self, q: float) -> float | None:
        """The smallest value v such that RMSE(t) <= v for at least a fraction ``q`` of the time.

        Parameters
        ----------
        q : float
            From 0 to 1.

        Returns
        -------
        float or None
            None for an empty series.
        """
        if self.rmse.size == 0 or self.width.sum() <= 0:
            return None
        order = np.argsort(self.rmse, kind="stable")
        cum = np.cumsum(self.width[order])
        k = int(np.searchsorted(cum, q * cum[-1], side="left"))
        return float(self.rmse[order][min(k, order.size - 1)])

    def cdf(self) -> tuple[FloatArray, FloatArray]:
        """Sorted RMSE values and the fraction of time at or below each (Choosy Figure 8).

        Returns
        -------
        tuple of (FloatArray, FloatArray)
        """
        order = np.argsort(self.rmse, kind="stable")
        cum = np.cumsum(self.width[order])
        total = cum[-1] if cum.size and cum[-1] > 0 else 1.0
        return self.rmse[order], cum / total

    def mean_between(self, start: float, end: float) -> float | None:
        """The time-weighted mean RMSE over ``[start, end)`` (Choosy section 7.2 compares
        the allocations while users join with those while they leave).

        Parameters
        ----------
        start, end : float
            The window.

        Returns
        -------
        float or None
            None when no user is present in the window.

        Examples
        --------
        >>> import numpy as np
        >>> from fairshare.metrics.compare import RmseSeries
        >>> series = RmseSeries(
        ...     np.array([0.0, 10.0]), np.array([10.0, 10.0]), np.array([0.5, 0.1]),
        ...     np.array([2, 2]),
        ... )
        >>> series.mean_between(5, 15), series.mean_between(30, 40)
        (0.3, None)
        """
        low = np.maximum(self.start, start)
        high = np.minimum(self.start + self.width, end)
        weight = np.clip(high - low, 0.0, None)
        total = float(weight.sum())
        return float((self.rmse * weight).sum() / total) if total > 0 else None

    def stats(self) -> dict[str, float | None]:
        """The series' time-weighted statistics, as ``compare.json`` reports them.

        Returns
        -------
        dict of str to float or None
            ``mean``, ``p50``, ``p95``, ``max`` and ``seconds`` (the time with users present);
            None where the series is empty.
        """
        total = float(self.width.sum())
        return {
            "mean": float((self.rmse * self.width).sum() / total) if total > 0 else None,
            "p50": self.weighted_quantile(0.5),
            "p95": self.weighted_quantile(0.95),
            "max": float(self.rmse.max()) if self.rmse.size else None,
            "seconds": total,
        }


def _user_map(f: RunFrames, names: dict[str, int]) -> IntArray:
    """Translate a run's user indices into a shared name index."""
    for u in f.users:
        names.setdefault(u, len(names))
    return np.array([names[u] for u in f.users], dtype=np.int64)


def _presence_steps(f: RunFrames) -> tuple[FloatArray, IntArray, FloatArray]:
    """Per (time, user) change rows of each user's number of jobs in the system."""
    fin = np.isfinite(f.finish)
    t = np.concatenate([f.submit, f.finish[fin]])
    u = np.concatenate([f.job_user, f.job_user[fin]])
    d = np.concatenate([np.ones(f.submit.size), -np.ones(int(fin.sum()))])
    order = order_by_user_time(u, t)
    t, u, d = t[order], u[order], d[order]
    c = np.cumsum(d)
    first = np.ones(t.size, dtype=np.bool_)
    first[1:] = u[1:] != u[:-1]
    seg = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    c = c - (c[starts] - d[starts])[seg]
    last = np.ones(t.size, dtype=np.bool_)
    last[:-1] = (u[1:] != u[:-1]) | (t[1:] != t[:-1])
    return t[last], u[last], c[last]


def allocation_rmse(log: RunLog, reference: RunLog) -> RmseSeries:
    """RMSE(t) between the allocation vectors of ``log`` and ``reference`` (module docstring).

    Parameters
    ----------
    log : RunLog
        The run compared.
    reference : RunLog
        The reference run, of the same jobs.

    Returns
    -------
    RmseSeries
    """
    f, g = run_frames(log), run_frames(reference)
    names: dict[str, int] = {}
    maps = [_user_map(f, names), _user_map(g, names)]
    ts, us, ks, vs = [], [], [], []
    # Streams: 0/1 share in run f/g, 2/3 jobs present in run f/g.
    for k, (one, frames) in enumerate(((log, f), (reference, g))):
        tl = timeline(one)
        ts.append(tl.time)
        us.append(maps[k][tl.user])
        ks.append(np.full(tl.time.size, k))
        vs.append(tl.share)
        pt, pu, pc = _presence_steps(frames)
        ts.append(pt)
        us.append(maps[k][pu])
        ks.append(np.full(pt.size, 2 + k))
        vs.append(pc)
    t = np.concatenate(ts)
    u = np.concatenate(us)
    k_all = np.concatenate(ks)
    v = np.concatenate(vs)
    horizon = max(makespan(f), makespan(g))
    empty = np.zeros(0, dtype=np.float64)
    if t.size == 0:
        return RmseSeries(empty, empty, empty, np.zeros(0, dtype=np.int64))
    order = np.lexsort((k_all, t, u))
    t, u, k_all, v = t[order], u[order], k_all[order], v[order]
    rows = np.arange(t.size)
    filled = []
    for k in range(4):
        # Forward-fill stream k within each user: the last row of stream k at or before
        # this row, if it belongs to the same user; else the user's initial value 0.
        last = np.maximum.accumulate(np.where(k_all == k, rows, -1))
        valid = (last >= 0) & (u[np.maximum(last, 0)] == u)
        filled.append(np.where(valid, v[np.maximum(last, 0)], 0.0))
    share_f, share_g, jobs_f, jobs_g = filled
    end = np.ones(t.size, dtype=np.bool_)
    end[:-1] = (u[1:] != u[:-1]) | (t[1:] != t[:-1])
    t, u = t[end], u[end]
    sq = ((share_f - share_g) ** 2)[end]
    present = ((jobs_f > 0) | (jobs_g > 0) | (share_f > 0) | (share_g > 0))[end].astype(np.float64)
    first = np.ones(t.size, dtype=np.bool_)
    first[1:] = u[1:] != u[:-1]
    d_sq = np.where(first, sq, sq - np.roll(sq, 1))
    d_n = np.where(first, present, present - np.roll(present, 1))
    by_time = np.argsort(t, kind="stable")
    t, d_sq, d_n = t[by_time], d_sq[by_time], d_n[by_time]
    s_sum = np.cumsum(d_sq)
    n_sum = np.cumsum(d_n)
    last_t = np.ones(t.size, dtype=np.bool_)
    last_t[:-1] = t[1:] != t[:-1]
    t, s_sum, n_sum = t[last_t], s_sum[last_t], np.rint(n_sum[last_t]).astype(np.int64)
    nxt = np.append(t[1:], max(horizon, float(t[-1])))
    width = np.minimum(nxt, horizon) - np.minimum(t, horizon)
    keep = (width > 0) & (n_sum > 0)
    rmse = np.sqrt(np.clip(s_sum[keep], 0.0, None) / n_sum[keep])
    return RmseSeries(t[keep], width[keep], rmse, n_sum[keep])


def run_labels(logs: Sequence[RunLog]) -> list[str]:
    """A distinct label per run.

    The policy; where two runs share a policy, the policy with the options that differ
    (``fair [delay_scheduling=[5, 10]]``); numbered if still equal.

    Parameters
    ----------
    logs : Sequence of RunLog
        The runs, in order.

    Returns
    -------
    list of str

    Examples
    --------
    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> fifo = fairshare.simulate(scenario, "fifo").log
    >>> fair = fairshare.simulate(scenario, "fair").log
    >>> from fairshare.metrics import run_labels
    >>> run_labels([fifo, fair, fifo])
    ['fifo #1', 'fair', 'fifo #2']
    """
    labels = []
    for log in logs:
        same = [o for o in logs if o.policy == log.policy]
        if len(same) == 1:
            labels.append(log.policy)
            continue
        keys = sorted({k for o in same for k in o.options})
        differing = [
            k
            for k in keys
            if len({json.dumps(clean(o.options.get(k)), sort_keys=True) for o in same}) > 1
        ]
        parts = [f"{k}={json.dumps(clean(log.options.get(k)))}" for k in differing]
        labels.append(f"{log.policy} [{', '.join(parts)}]" if parts else log.policy)
    counts: dict[str, int] = {}
    out = []
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
        out.append(label if labels.count(label) == 1 else f"{label} #{counts[label]}")
    return out


COMPARE_COLUMNS: tuple[str, ...] = (
    "label",
    "policy",
    "seed",
    "jobs",
    "finished_jobs",
    "makespan",
    "mean_response_time",
    "p50_response_time",
    "p95_response_time",
    "mean_slowdown",
    "mean_queueing_delay",
    "locality_node",
    "locality_rack",
    "locality_off_rack",
    "preempted_tasks",
    "rmse_mean",
    "rmse_p95",
    "rmse_max",
)
"""``compare.csv`` columns, then ``utilization_<resource>`` per resource."""


def resolve_reference(logs: Sequence[RunLog], reference: int | str) -> int:
    """The index of the reference run.

    Parameters
    ----------
    logs : Sequence of RunLog
        The runs.
    reference : int or str
        An index, or a run label or a policy name (the first run with that policy).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        No run matches (the message names the choices), or there are no runs.
    """
    if not logs:
        raise ValueError("compare needs at least one run")
    labels = run_labels(logs)
    if isinstance(reference, int):
        if not 0 <= reference < len(logs):
            raise ValueError(f"reference run {reference} out of range 0..{len(logs) - 1}")
        return reference
    if reference in labels:
        return labels.index(reference)
    for i, log in enumerate(logs):
        if log.policy == reference:
            return i
    raise ValueError(f"no run {reference!r} to compare against; runs: {', '.join(labels)}")


def compare_runs(logs: Sequence[RunLog], reference: int | str = 0) -> dict[str, object]:
    """The ``compare.json`` document of runs of one workload, JSON-ready.

    Per run (in the given order): its label, summary (without per-user detail), the RMSE of
    its allocation vectors against the reference run (Choosy Figure 8) and its slowdown
    relative to the reference by job duration (Choosy Table 1).

    Parameters
    ----------
    logs : Sequence of RunLog
        The runs, of the same jobs.
    reference : int or str
        The reference run: an index, a run label or a policy name.

    Returns
    -------
    dict of str to object
        ``reference`` (its label) and ``runs``; floats rounded, None for NaN.

    Raises
    ------
    ValueError
        No run is the reference.
    """
    reference = resolve_reference(logs, reference)
    labels = run_labels(logs)
    ref = logs[reference]
    runs = []
    for label, log in zip(labels, logs, strict=True):
        totals = run_totals(log)
        summ = _summary(log, totals, share_integrals(timeline(log), makespan(totals)))
        summ.pop("users")
        runs.append(
            {
                "label": label,
                "summary": summ,
                "rmse_vs_reference": allocation_rmse(log, ref).stats(),
                "slowdown_vs_reference": relative_slowdown(log, ref),
            }
        )
    doc = {"reference": labels[reference], "runs": runs}
    cleaned = clean(doc)
    assert isinstance(cleaned, dict)
    return cleaned


def compare_frame(doc: dict[str, object]) -> pl.DataFrame:
    """``compare.csv`` as a polars DataFrame: one row per run of a :func:`compare_runs` document.

    Parameters
    ----------
    doc : dict of str to object
        A :func:`compare_runs` document.

    Returns
    -------
    polars.DataFrame
        Columns :data:`COMPARE_COLUMNS`, then ``utilization_<resource>`` per resource.
    """
    runs = doc["runs"]
    assert isinstance(runs, list)
    rows = []
    resources: list[str] = []
    for run in runs:
        s = run["summary"]
        loc = s["locality"]
        rm = run["rmse_vs_reference"]
        row = {
            "label": run["label"],
            "policy": s["policy"],
            "seed": s["seed"],
            "jobs": s["jobs"],
            "finished_jobs": s["finished_jobs"],
            "makespan": s["makespan"],
            "mean_response_time": s["mean_response_time"],
            "p50_response_time": s["p50_response_time"],
            "p95_response_time": s["p95_response_time"],
            "mean_slowdown": s["mean_slowdown"],
            "mean_queueing_delay": s["mean_queueing_delay"],
            "locality_node": loc["node"],
            "locality_rack": loc["rack"],
            "locality_off_rack": loc["off_rack"],
            "preempted_tasks": s["preempted_tasks"],
            "rmse_mean": rm["mean"],
            "rmse_p95": rm["p95"],
            "rmse_max": rm["max"],
        }
        for r in s["utilization"]:
            if r not in resources:
                resources.append(r)
        rows.append((row, s["utilization"]))
    schema: dict[str, type[pl.DataType]] = {
        c: pl.Float64 for c in COMPARE_COLUMNS if c not in ("label", "policy")
    }
    for c in ("seed", "jobs", "finished_jobs", "preempted_tasks"):
        schema[c] = pl.Int64
    schema["label"] = pl.Utf8
    schema["policy"] = pl.Utf8
    for r in resources:
        schema[f"utilization_{r}"] = pl.Float64
    data = []
    for row, util in rows:
        full = dict(row)
        for r in resources:
            full[f"utilization_{r}"] = util.get(r)
        data.append(full)
    order = [*COMPARE_COLUMNS, *(f"utilization_{r}" for r in resources)]
    return pl.DataFrame(data, schema={c: schema[c] for c in order}, orient="row")
