"""Job-size bins for one run, and slowdown relative to a reference run.

Slowdown and locality by FAIR Table 2 bin of maps for one run (FAIR section 6.1, Table 2 and
Figures 10-11), and the slowdown of one run relative to a reference run by the job's
response time in the reference (Choosy section 7.1, Table 1).

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
>>> from fairshare.metrics import size_bins
>>> [(row["maps"], row["jobs"], row["mean_slowdown"]) for row in size_bins(log)]
[('1-25', 2, 2.2)]
"""

from __future__ import annotations

import numpy as np

from fairshare.metrics.frames import LOCALITY_LEVELS, IntArray, run_frames
from fairshare.metrics.stats import mean, percentile, std
from fairshare.metrics.totals import RunTotals, run_totals
from fairshare.runlog import RunLog

FAIR_MAP_BOUNDS: tuple[int, ...] = (25, 50, 100, 200, 400, 800, 1600, 3200)
"""Upper bounds (inclusive) of FAIR Table 2 bins 0-7 by number of maps; bin 8 is > 3200.
The paper writes the ranges as 1-25, 25-50, ...; a job on a boundary goes to the lower bin."""

FAIR_BIN_LABELS: tuple[str, ...] = (
    "1-25",
    "26-50",
    "51-100",
    "101-200",
    "201-400",
    "401-800",
    "801-1600",
    "1601-3200",
    ">3200",
)
"""The FAIR Table 2 bins by maps, as ``jobs.csv``'s ``size_bin`` writes them."""

CHOOSY_DURATION_BOUNDS: tuple[float, ...] = (30.0, 120.0, 600.0)
"""Choosy Table 1 bins by the job's duration under the reference scheduler, in seconds:
< 30, 30-120, 120-600, > 600 (a job of exactly 30 s is in the second bin)."""

CHOOSY_BIN_LABELS: tuple[str, ...] = ("<30s", "30-120s", "120-600s", ">600s")
"""The Choosy Table 1 bins by response time under the reference run."""


def fair_bin(maps: IntArray) -> IntArray:
    """The FAIR Table 2 bin (0-8) of each job, given its number of maps.

    Parameters
    ----------
    maps : IntArray
        Maps per job (0 maps goes to bin 0).

    Returns
    -------
    IntArray
        Indices into :data:`FAIR_BIN_LABELS`.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.metrics import FAIR_BIN_LABELS, fair_bin
    >>> [FAIR_BIN_LABELS[b] for b in fair_bin(np.array([1, 25, 26, 5000]))]
    ['1-25', '1-25', '26-50', '>3200']
    """
    return np.searchsorted(np.asarray(FAIR_MAP_BOUNDS), maps, side="left").astype(np.int64)


def size_bins(log: RunLog) -> list[dict[str, object]]:
    """The FAIR Table 2 statistics of ``log``, per bin that holds at least one job.

    Bins without jobs are left out so that small workloads give short tables.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).

    Returns
    -------
    list of dict
        Per bin: ``bin``, ``maps`` (its label), ``jobs``, ``finished_jobs``, mean and median
        slowdown, mean response time and queueing delay of finished jobs, and the ``locality``
        of the bin's completed attempts that read input (FAIR Figure 11) with their count,
        ``locality_tasks``.
    """
    return _size_bins(run_totals(log))


def _size_bins(f: RunTotals) -> list[dict[str, object]]:
    """:func:`size_bins` of the run's totals (the summary passes the ones it has)."""
    job_bin = fair_bin(f.maps)
    slow = f.slowdown
    resp = f.response
    delay = f.queueing_delay
    rows: list[dict[str, object]] = []
    for b, label in enumerate(FAIR_BIN_LABELS):
        in_bin = job_bin == b
        n = int(in_bin.sum())
        if n == 0:
            continue
        counts = f.completed_at[:, in_bin].sum(axis=1)
        total = int(counts.sum())
        locality: dict[str, float | None] = {
            level: (float(counts[i]) / total if total else None)
            for i, level in enumerate(LOCALITY_LEVELS)
        }
        rows.append(
            {
                "bin": b,
                "maps": label,
                "jobs": n,
                "finished_jobs": int(np.isfinite(resp[in_bin]).sum()),
                "mean_slowdown": mean(slow[in_bin]),
                "p50_slowdown": percentile(slow[in_bin], 50),
                "mean_response_time": mean(resp[in_bin]),
                "mean_queueing_delay": mean(delay[in_bin]),
                "locality": locality,
                "locality_tasks": total,
            }
        )
    return rows


def relative_slowdown(log: RunLog, reference: RunLog) -> list[dict[str, object]]:
    """Choosy Table 1: the slowdown of ``log`` relative to ``reference``, by job duration.

    For each job finished in both runs (matched by name) whose reference response time is
    positive, the ratio of its response time in ``log`` to that in ``reference``; binned by the
    reference response time (:data:`CHOOSY_BIN_LABELS`).

    Parameters
    ----------
    log : RunLog
        The run compared.
    reference : RunLog
        The reference run, of the same jobs.

    Returns
    -------
    list of dict
        Every bin, in order: ``bin``, ``duration`` (its label), ``jobs``, ``mean_slowdown``
        and population ``std_slowdown`` (None for an empty bin).

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
    >>> from fairshare.metrics import relative_slowdown
    >>> relative_slowdown(fair, fifo)[0]
    {'bin': 0, 'duration': '<30s', 'jobs': 2, 'mean_slowdown': 1.25, 'std_slowdown': 0.25}
    """
    f, g = run_frames(log), run_frames(reference)
    ref_index = {name: i for i, name in enumerate(g.job_names)}
    mine = np.array([i for i, n in enumerate(f.job_names) if n in ref_index], dtype=np.int64)
    theirs = np.array([ref_index[f.job_names[i]] for i in mine], dtype=np.int64)
    r_run = f.response[mine] if mine.size else np.zeros(0)
    r_ref = g.response[theirs] if theirs.size else np.zeros(0)
    ok = np.isfinite(r_run) & np.isfinite(r_ref) & (r_ref > 0)
    ratio = r_run[ok] / r_ref[ok]
    which = np.searchsorted(np.asarray(CHOOSY_DURATION_BOUNDS), r_ref[ok], side="right")
    rows: list[dict[str, object]] = []
    for b, label in enumerate(CHOOSY_BIN_LABELS):
        vals = ratio[which == b]
        rows.append(
            {
                "bin": b,
                "duration": label,
                "jobs": int(vals.size),
                "mean_slowdown": mean(vals),
                "std_slowdown": std(vals),
            }
        )
    return rows
