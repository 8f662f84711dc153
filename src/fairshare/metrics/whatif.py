"""The comparison of two runs of the same jobs under two configurations (SPEC section 8.4,
``fairshare whatif``): per tenant, its wait, slowdown and share of the cluster before and
after, sorted by who loses most.

Definitions (``docs/whatif.md``):

- **wait** of a job: ``first_start - submit``. A job that never started although it could
  run somewhere (it waited to the end of the run: starved, or cut by ``until``) counts as
  waiting until the run's end, a lower bound, so that a tenant starved by the change does not
  vanish from its statistics; a job that can never run on any machine (the same in both runs)
  is left out.
- **share** of a tenant: its fraction of the resource-seconds the run's tasks held, each
  resource relative to the cluster's capacity (a task holding 2 of 8 CPUs and 1 of 4 GPUs
  for 10 s holds 10 * (2/8 + 1/4) = 5 capacity-seconds), summed over resources, as the
  decayed usage of SPEC section 8.3 counts it. Preempted attempts held their resources too
  and are counted; ``preempted`` alone is reported beside.
- **worse** / **better**: ``delta_wait_p95 = wait_p95_after - wait_p95_before`` above
  :data:`~fairshare.tolerances.WAIT_DELTA` / below minus it.
- **growth** of a p95 wait (``check --max-wait-increase``): ``(after - before) /
  max(before, WAIT_FLOOR)``: a wait under :data:`WAIT_FLOOR` seconds counts as one of that
  length, so a tenant that did not wait before fails the gate when it waits more than
  ``F * WAIT_FLOOR`` seconds after.

Examples
--------
Weights that swap: ``b`` loses and is listed first.

>>> import fairshare
>>> def run(wa, wb):
...     jobs = [{"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4, "duration": 10}
...             for k in range(6) for u in "ab"]
...     return fairshare.simulate(fairshare.parse_scenario(
...         {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...          "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
...          "jobs": jobs}, source="swap"), "drf").log
>>> frame = tenants_frame(run(1, 3), run(3, 1))
>>> frame["user"].to_list(), frame["delta_wait_p95"].to_list()
(['b', 'a'], [50.0, -50.0])
>>> tenant_verdicts(frame)
(1, 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from fairshare.metrics.frames import FloatArray, IntArray, RunFrames, run_frames
from fairshare.metrics.intervals import mean_interval
from fairshare.metrics.stats import percentile
from fairshare.metrics.summary import makespan
from fairshare.runlog import RunLog
from fairshare.tolerances import WAIT_DELTA

__all__ = [
    "INTERVAL_COLUMNS",
    "TENANT_COLUMNS",
    "WAIT_FLOOR",
    "TenantStats",
    "tenant_stats",
    "tenant_verdicts",
    "tenants_frame",
    "tenants_over_seeds",
    "wait_growth",
]

TENANT_COLUMNS: tuple[str, ...] = (
    "user",
    "jobs",
    "wait_mean_before",
    "wait_mean_after",
    "wait_p95_before",
    "wait_p95_after",
    "slowdown_mean_before",
    "slowdown_mean_after",
    "share_before",
    "share_after",
    "delta_wait_p95",
)
"""``tenants.csv``'s columns (SPEC section 8.4), in its order."""

EXTRA_COLUMNS: tuple[str, ...] = ("preempted_before", "preempted_after")
"""Columns after SPEC's: each tenant's preempted capacity-seconds (killed attempts' held
resources, each relative to the capacity) in each run."""

INTERVAL_COLUMNS: tuple[str, ...] = ("delta_wait_p95_low", "delta_wait_p95_high", "seeds")
"""Columns added with several seeds: the 95% confidence interval of ``delta_wait_p95`` over
the seeds (Student's t, :func:`~fairshare.metrics.intervals.mean_interval`) and how many
seeds had a value."""

WAIT_FLOOR = 1.0
"""Seconds: a p95 wait below this counts as this long when its growth is measured
(:func:`wait_growth`), so that a tenant that did not wait before has a finite growth."""


@dataclass(frozen=True)
class TenantStats:
    """One run's per-tenant statistics (the ``_before`` or ``_after`` half of a row).

    Attributes
    ----------
    users : tuple of str
        The tenants, in the run's order.
    jobs : IntArray
        Jobs per tenant.
    wait_mean, wait_p95, slowdown_mean : tuple of (float or None)
        Per tenant; None without a value (no job that could run).
    share : FloatArray
        Each tenant's fraction of the capacity-seconds held (module docstring).
    preempted : FloatArray
        Each tenant's capacity-seconds held by attempts that were killed.
    """

    users: tuple[str, ...]
    jobs: IntArray
    wait_mean: tuple[float | None, ...]
    wait_p95: tuple[float | None, ...]
    slowdown_mean: tuple[float | None, ...]
    share: FloatArray
    preempted: FloatArray


def _waits(f: RunFrames) -> FloatArray:
    """Each job's wait: censored at the run's end for a runnable job that never started,
    NaN for a job that can never run (module docstring)."""
    wait = f.first_start - f.submit
    never = ~np.isfinite(f.first_start)
    end = makespan(f)
    censored = np.maximum(end - f.submit, 0.0)
    wait = np.where(never & np.isfinite(f.isolated), censored, wait)
    return np.asarray(wait, dtype=np.float64)


def _capacity_seconds(f: RunFrames, mask: np.ndarray) -> FloatArray:
    """Per user, the capacity-seconds of the attempts in ``mask``: each resource held over
    its capacity, summed over resources, times the attempt's duration."""
    n = len(f.users)
    if f.a_start.size == 0:
        return np.zeros(n, dtype=np.float64)
    scale = np.where(f.total > 0, 1.0 / np.where(f.total > 0, f.total, 1.0), 0.0)
    held = (f.a_demand @ scale) if f.a_demand.ndim == 2 else np.zeros(f.a_start.size)
    weights = np.asarray(held * f.a_duration, dtype=np.float64)[mask]
    return np.bincount(f.a_user[mask], weights=weights, minlength=n).astype(np.float64)


def _mean(values: FloatArray) -> float | None:
    v = values[np.isfinite(values)]
    return float(v.mean()) if v.size else None


def tenant_stats(log: RunLog) -> TenantStats:
    """The per-tenant statistics of one run (module docstring).

    Parameters
    ----------
    log : RunLog
        A simulated run.

    Returns
    -------
    TenantStats
    """
    f = run_frames(log)
    n = len(f.users)
    wait = _waits(f)
    slow = f.slowdown
    order = np.argsort(f.job_user, kind="stable")
    bounds = np.searchsorted(f.job_user[order], np.arange(n + 1))
    means: list[float | None] = []
    p95s: list[float | None] = []
    slows: list[float | None] = []
    for i in range(n):
        rows = order[bounds[i] : bounds[i + 1]]
        means.append(_mean(wait[rows]))
        p95s.append(percentile(wait[rows], 95))
        slows.append(_mean(slow[rows]))
    held = _capacity_seconds(f, np.ones(f.a_start.size, dtype=np.bool_))
    total = float(held.sum())
    share = held / total if total > 0 else np.zeros(n, dtype=np.float64)
    return TenantStats(
        users=f.users,
        jobs=np.bincount(f.job_user, minlength=n).astype(np.int64),
        wait_mean=tuple(means),
        wait_p95=tuple(p95s),
        slowdown_mean=tuple(slows),
        share=np.asarray(share, dtype=np.float64),
        preempted=_capacity_seconds(f, f.a_killed),
    )


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _sort(frame: pl.DataFrame) -> pl.DataFrame:
    """``delta_wait_p95`` descending (who loses most first), undefined deltas last, then by
    user name: the same rows always in the same order."""
    return frame.sort(
        ["delta_wait_p95", "user"], descending=[True, False], nulls_last=True, maintain_order=True
    )


def tenants_frame(before: RunLog, after: RunLog) -> pl.DataFrame:
    """``tenants.csv`` of two runs of the same jobs: one row per tenant of either run.

    Parameters
    ----------
    before, after : RunLog
        The runs under the old and the new configuration.

    Returns
    -------
    polars.DataFrame
        Columns :data:`TENANT_COLUMNS` then :data:`EXTRA_COLUMNS`, sorted by
        ``delta_wait_p95`` descending, then user; nulls where a value is undefined.
    """
    old, new = tenant_stats(before), tenant_stats(after)
    seen = set(old.users)
    users = list(old.users) + [u for u in new.users if u not in seen]
    at_old = {u: i for i, u in enumerate(old.users)}
    at_new = {u: i for i, u in enumerate(new.users)}

    def pick(stats: TenantStats, at: dict[str, int], name: str, user: str) -> float | None:
        i = at.get(user)
        if i is None:
            return None
        value = getattr(stats, name)[i]
        return None if value is None else float(value)

    columns: dict[str, list[object]] = {c: [] for c in (*TENANT_COLUMNS, *EXTRA_COLUMNS)}
    for user in users:
        i, j = at_old.get(user), at_new.get(user)
        jobs = int(old.jobs[i]) if i is not None else int(new.jobs[j]) if j is not None else 0
        row: dict[str, object] = {"user": user, "jobs": jobs}
        for name, column in (
            ("wait_mean", "wait_mean"),
            ("wait_p95", "wait_p95"),
            ("slowdown_mean", "slowdown_mean"),
            ("share", "share"),
            ("preempted", "preempted"),
        ):
            row[f"{column}_before"] = pick(old, at_old, name, user)
            row[f"{column}_after"] = pick(new, at_new, name, user)
        before_p95 = row["wait_p95_before"]
        after_p95 = row["wait_p95_after"]
        assert before_p95 is None or isinstance(before_p95, float)
        assert after_p95 is None or isinstance(after_p95, float)
        row["delta_wait_p95"] = _delta(before_p95, after_p95)
        for column, values in columns.items():
            values.append(row[column])
    schema: dict[str, type[pl.DataType]] = dict.fromkeys(columns, pl.Float64)
    schema["user"] = pl.String
    schema["jobs"] = pl.Int64
    return _sort(pl.DataFrame(columns, schema=schema))


def tenants_over_seeds(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The tenants tables of several seeds as one: each value the mean over the seeds that
    have it, and the 95% interval of ``delta_wait_p95`` (:data:`INTERVAL_COLUMNS`).

    Parameters
    ----------
    frames : sequence of polars.DataFrame
        One :func:`tenants_frame` per seed.

    Returns
    -------
    polars.DataFrame
        Columns :data:`TENANT_COLUMNS`, :data:`EXTRA_COLUMNS`, :data:`INTERVAL_COLUMNS`,
        sorted as :func:`tenants_frame` sorts.
    """
    value_columns = [c for c in (*TENANT_COLUMNS, *EXTRA_COLUMNS) if c not in ("user", "jobs")]
    users: dict[str, None] = {}  # first-seen order
    for frame in frames:
        users.update(dict.fromkeys(frame["user"].to_list()))
    rows: dict[str, list[object]] = {
        c: [] for c in (*TENANT_COLUMNS, *EXTRA_COLUMNS, *INTERVAL_COLUMNS)
    }
    by_seed = [{row["user"]: row for row in frame.iter_rows(named=True)} for frame in frames]
    for user in users:
        present = [seed[user] for seed in by_seed if user in seed]
        rows["user"].append(user)
        # Generated workloads draw other jobs per seed: the mean count.
        rows["jobs"].append(round(sum(int(r["jobs"]) for r in present) / len(present)))
        for column in value_columns:
            rows[column].append(mean_interval(r[column] for r in present).mean)
        interval = mean_interval(r["delta_wait_p95"] for r in present)
        rows["delta_wait_p95_low"].append(interval.low)
        rows["delta_wait_p95_high"].append(interval.high)
        rows["seeds"].append(interval.n)
    schema: dict[str, type[pl.DataType]] = dict.fromkeys(rows, pl.Float64)
    schema["user"] = pl.String
    schema["jobs"] = pl.Int64
    schema["seeds"] = pl.Int64
    return _sort(pl.DataFrame(rows, schema=schema))


def tenant_verdicts(frame: pl.DataFrame) -> tuple[int, int]:
    """How many tenants wait longer and how many less at the 95th percentile.

    Parameters
    ----------
    frame : polars.DataFrame
        A :func:`tenants_frame`.

    Returns
    -------
    (int, int)
        Tenants whose ``delta_wait_p95`` exceeds :data:`~fairshare.tolerances.WAIT_DELTA`
        (worse), and those below minus it (better).
    """
    deltas = [d for d in frame["delta_wait_p95"].to_list() if d is not None]
    return sum(d > WAIT_DELTA for d in deltas), sum(d < -WAIT_DELTA for d in deltas)


def wait_growth(before: float | None, after: float | None) -> float | None:
    """The relative growth of a p95 wait: ``(after - before) / max(before, WAIT_FLOOR)``.

    Parameters
    ----------
    before, after : float or None
        The p95 waits; None when a run had none.

    Returns
    -------
    float or None
        None when either is None.

    Examples
    --------
    >>> wait_growth(10.0, 13.0), wait_growth(0.0, 0.5), wait_growth(0.0, 30.0)
    (0.3, 0.5, 30.0)
    """
    if before is None or after is None:
        return None
    growth = (after - before) / max(before, WAIT_FLOOR)
    return growth if math.isfinite(growth) else None
