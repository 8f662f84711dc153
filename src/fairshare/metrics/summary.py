"""The run summary (SPEC section 3, ``summary.json``).

Definitions, fixed here because the papers leave them open:

- The run starts at time 0. ``makespan`` is the last finish time of any attempt or job.
- Response time (finish - submit), slowdown (response / isolated response) and their
  statistics are over **finished** jobs; a job that never finished is left out of them and
  counted in ``unfinished_jobs``. A job that can never run (no machine it may use holds one
  of its tasks, or a gang whose ``min_tasks`` those machines never hold at once, so it has
  no isolated response either) is unfinished too, and also counted
  in ``unrunnable_jobs``, with the first ``UNRUNNABLE_IDS`` of their names in
  ``unrunnable_job_ids`` (``simulate`` warns about them once the run is done). A job whose
  isolated response is not positive has no
  slowdown. Queueing delay (first start - submit, the wait FAIR section 4 attacks) is over
  jobs that started. Percentiles interpolate linearly between order statistics
  (``fairshare.metrics.stats.percentile``).
- ``locality``: fractions of the completed (not killed) attempts that read an input block,
  by the level they ran at (node-local, rack-local but not node-local, off-rack); the three
  sum to 1 (FAIR section 4, Table 3 and Figure 11). All None when no attempt read input.
- ``utilization``: per resource, the busy fraction over the makespan, sum over attempts
  (killed ones too: they held the resources) of demand x duration / (capacity x makespan),
  with each attempt's own demand (a reducer's reduce demand; a split reducer's copy part
  holds nothing, FAIR section 5.2).
  None for a resource of zero capacity, or when the makespan is 0.
- ``preempted_tasks``: attempts killed by preemption (FAIR section 3.2).
- ``machines``: the machines the run started with (the scenario's, or a trace's node list).
- ``mean_bounded_slowdown`` (and its p50, p95): Feitelson's bounded slowdown,
  ``max(1, response / max(isolated response, bounded_slowdown_tau))`` with tau 10 s, over
  finished jobs; ``jain_slowdown``: Jain's fairness index over the finished jobs'
  slowdowns; ``jain_share``: Jain's index over the users' mean shares (``users[*].mean_share``)
  (:mod:`fairshare.metrics.fairness_metrics` gives the definitions and their sources).
- Statistics with nothing to summarise are None (JSON null), never NaN.
- ``fairshare_version``: the release that wrote it (``fairshare.__version__``, the same for
  every run of a build, so outputs stay byte-identical).
"""

from __future__ import annotations

import numpy as np

from fairshare import __version__
from fairshare.metrics.bins import _size_bins
from fairshare.metrics.fairness_metrics import BOUNDED_SLOWDOWN_TAU, bounded_slowdowns, jain_index
from fairshare.metrics.frames import LOCALITY_LEVELS, BoolArray, FloatArray, RunFrames
from fairshare.metrics.stats import clean, mean, percentile
from fairshare.metrics.timeline import share_integrals, timeline
from fairshare.metrics.totals import RunTotals, run_totals
from fairshare.runlog import RunLog

UNRUNNABLE_IDS = 20
"""How many names of jobs that can never run ``summary.json`` lists (it counts them
all).
"""


def unrunnable(f: RunFrames | RunTotals) -> BoolArray:
    """Which jobs can never run: unfinished, and no slot anywhere for one of their tasks.

    The engine's isolated response is infinite exactly then.

    Parameters
    ----------
    f : RunFrames or RunTotals
        The run's columnar view (:func:`~fairshare.metrics.run_frames`) or its totals
        (:func:`~fairshare.metrics.totals.run_totals`).

    Returns
    -------
    BoolArray
        One entry per job.
    """
    return np.asarray(~np.isfinite(f.finish) & np.isinf(f.isolated), dtype=np.bool_)


def makespan(f: RunFrames | RunTotals) -> float:
    """The last finish time of any attempt or job (the run starts at 0).

    Parameters
    ----------
    f : RunFrames or RunTotals
        The run's columnar view (:func:`~fairshare.metrics.run_frames`) or its totals
        (:func:`~fairshare.metrics.totals.run_totals`).

    Returns
    -------
    float
        0 for a run in which nothing ran.
    """
    last = f.a_finish if isinstance(f, RunFrames) else np.array([f.last_finish])
    ends = np.concatenate([last, f.finish[np.isfinite(f.finish)], [0.0]])
    return float(ends.max())


def locality_fractions(f: RunTotals) -> tuple[dict[str, float | None], int]:
    """Locality fractions of the completed attempts that read input, and how many there were.

    Parameters
    ----------
    f : RunTotals
        The run's totals (:func:`~fairshare.metrics.totals.run_totals`).

    Returns
    -------
    tuple of (dict of str to float or None, int)
        Per level (``node``, ``rack``, ``off_rack``), the fraction of those attempts (all None
        when there were none), and their count.
    """
    counts = f.completed_at.sum(axis=1)
    total = int(counts.sum())
    return {
        level: (float(counts[i]) / total if total else None)
        for i, level in enumerate(LOCALITY_LEVELS)
    }, total


def utilization(f: RunTotals, span: float) -> dict[str, float | None]:
    """Per resource, the busy fraction over ``span``.

    The sum over attempts (killed ones too: they held the resources) of demand x duration,
    over capacity x span, with each attempt's own demand.

    Parameters
    ----------
    f : RunTotals
        The run's totals (:func:`~fairshare.metrics.totals.run_totals`): the busy times,
        correctly rounded sums (the same bits whatever numpy's version, whose reductions
        along an axis changed order between 1.26 and 2.x, and JSON prints every bit).
    span : float
        The makespan.

    Returns
    -------
    dict of str to float or None
        None for a resource of zero capacity, or when ``span`` is 0.
    """
    out: dict[str, float | None] = {}
    for r, name in enumerate(f.resources):
        cap = float(f.total[r]) * span
        out[name] = f.busy[r] / cap if cap > 0 else None
    return out


def summary(log: RunLog) -> dict[str, object]:
    """The ``summary.json`` document of ``log`` (module docstring), JSON-ready.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).

    Returns
    -------
    dict of str to object
        Floats exact (never rounded), None for undefined statistics.

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
    >>> from fairshare.metrics import summary
    >>> document = summary(log)
    >>> document["makespan"], document["mean_response_time"], document["utilization"]
    (30.0, 29.5, {'slots': 1.0})
    >>> document["users"]["b"]["mean_response_time"]
    29.0
    """
    f = run_totals(log)
    span = makespan(f)
    return clean(_summary(log, f, share_integrals(timeline(log), span)))  # type: ignore[return-value]


def _summary(log: RunLog, f: RunTotals, integrals: FloatArray) -> dict[str, object]:
    """The summary document before cleaning (the writers add to it and clean once), given
    the users' share integrals up to the makespan (:func:`share_integrals`)."""
    span = makespan(f)
    resp = f.response
    slow = f.slowdown
    delay = f.queueing_delay
    finished = np.isfinite(f.finish)
    never = unrunnable(f)
    locality, locality_tasks = locality_fractions(f)
    bounded = bounded_slowdowns(resp, f.isolated, BOUNDED_SLOWDOWN_TAU)
    shares = integrals / span if span > 0 else np.full(len(f.users), np.nan)
    return {
        # Which build wrote it, for a bug report: constant per release, so outputs stay
        # byte-identical for the same inputs.
        "fairshare_version": __version__,
        "policy": log.policy,
        "seed": log.seed,
        "machines": len(log.cluster.machines),
        "jobs": len(f.job_names),
        "finished_jobs": int(finished.sum()),
        "unfinished_jobs": int((~finished).sum()),
        "unrunnable_jobs": int(never.sum()),
        "unrunnable_job_ids": [f.job_names[j] for j in np.flatnonzero(never)[:UNRUNNABLE_IDS]],
        "tasks": int(f.tasks.sum()),
        "task_attempts": f.attempts,
        "completed_attempts": f.completed,
        "makespan": span,
        "mean_response_time": mean(resp),
        "p50_response_time": percentile(resp, 50),
        "p95_response_time": percentile(resp, 95),
        "max_response_time": float(resp[finished].max()) if finished.any() else None,
        "mean_slowdown": mean(slow),
        "p50_slowdown": percentile(slow, 50),
        "p95_slowdown": percentile(slow, 95),
        "mean_bounded_slowdown": mean(bounded),
        "p50_bounded_slowdown": percentile(bounded, 50),
        "p95_bounded_slowdown": percentile(bounded, 95),
        "bounded_slowdown_tau": BOUNDED_SLOWDOWN_TAU,
        "jain_slowdown": jain_index(slow),
        "jain_share": jain_index(np.asarray(shares, dtype=np.float64)),
        "mean_queueing_delay": mean(delay),
        "p50_queueing_delay": percentile(delay, 50),
        "p95_queueing_delay": percentile(delay, 95),
        "locality": locality,
        "locality_tasks": locality_tasks,
        "utilization": utilization(f, span),
        "preempted_tasks": f.killed,
        "wasted_task_seconds": f.wasted,
        "events": log.events,
        "wall_seconds": log.wall_seconds,
        "options": log.options,
        "shares": log.shares or {"queues": {}, "users": {}},
        "size_bins": _size_bins(f),
        "users": _per_user(f, integrals, span),
    }


def _per_user(f: RunTotals, integrals: FloatArray, span: float) -> dict[str, dict[str, object]]:
    """Per user: jobs, finished jobs, mean response time and slowdown, task-seconds of
    completed attempts, and mean dominant share over the makespan (the time average of its
    ``timeline.csv`` share; H-DRF section 6 and Choosy section 7 compare these)."""
    n = len(f.users)
    jobs = np.bincount(f.job_user, minlength=n)
    fin = np.isfinite(f.finish)
    finished = np.bincount(f.job_user[fin], minlength=n)
    resp = np.bincount(f.job_user[fin], weights=f.response[fin], minlength=n)
    slow = f.slowdown
    has_slow = np.isfinite(slow)
    slow_n = np.bincount(f.job_user[has_slow], minlength=n)
    slow_sum = np.bincount(f.job_user[has_slow], weights=slow[has_slow], minlength=n)
    task_seconds = f.task_seconds
    out: dict[str, dict[str, object]] = {}
    for i, name in enumerate(f.users):
        out[name] = {
            "jobs": int(jobs[i]),
            "finished_jobs": int(finished[i]),
            "mean_response_time": float(resp[i] / finished[i]) if finished[i] else None,
            "mean_slowdown": float(slow_sum[i] / slow_n[i]) if slow_n[i] else None,
            "task_seconds": float(task_seconds[i]),
            "mean_share": float(integrals[i] / span) if span > 0 else None,
        }
    return out
