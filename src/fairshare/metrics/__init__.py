"""Metrics of simulated runs: pure functions of a :class:`~fairshare.sim.records.RunLog`.

They give the SPEC section 3 outputs (``summary.json``, ``jobs.csv``, ``timeline.csv``,
``tasks.parquet``) and the papers' evaluation metrics: FAIR Table 2 size bins, Choosy
section 7.1's allocation RMSE and relative slowdown, CDFs of response time and queueing
delay, locality per bin. Every metric is computed from the log's columnar view
(:func:`run_frames`), built once per log.

Examples
--------
Eight tasks of job ``a`` and then four of ``b`` on four slots: FIFO runs ``a`` to the end
first; FAIR shares the slots once ``b`` arrives, which delays ``a`` and finishes ``b`` no
sooner, so the batch's mean response time rises (FAIR section 6.2.6).

>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
...     source="two-jobs",
... )
>>> fifo = fairshare.simulate(scenario, "fifo").log
>>> fair = fairshare.simulate(scenario, "fair").log
>>> from fairshare.metrics import compare_runs, summary
>>> summary(fifo)["mean_response_time"], summary(fair)["mean_response_time"]
(24.5, 29.5)
>>> compare_runs([fifo, fair])["runs"][1]["rmse_vs_reference"]["max"]
0.5
"""

from fairshare.metrics.bins import (
    CHOOSY_BIN_LABELS,
    FAIR_BIN_LABELS,
    fair_bin,
    relative_slowdown,
    size_bins,
)
from fairshare.metrics.compare import (
    RmseSeries,
    allocation_rmse,
    compare_frame,
    compare_runs,
    resolve_reference,
    run_labels,
)
from fairshare.metrics.frames import RunFrames, run_frames
from fairshare.metrics.stats import clean, ecdf, percentile
from fairshare.metrics.summary import summary
from fairshare.metrics.tables import (
    JOB_COLUMNS,
    TIMELINE_COLUMNS,
    dumps_json,
    jobs_frame,
    tasks_frame,
    timeline_frame,
    write_csv,
    write_run_files,
)
from fairshare.metrics.timeline import Timeline, resample, share_integrals, timeline

__all__ = [
    "CHOOSY_BIN_LABELS",
    "FAIR_BIN_LABELS",
    "JOB_COLUMNS",
    "TIMELINE_COLUMNS",
    "RmseSeries",
    "RunFrames",
    "Timeline",
    "allocation_rmse",
    "clean",
    "compare_frame",
    "compare_runs",
    "dumps_json",
    "ecdf",
    "fair_bin",
    "jobs_frame",
    "percentile",
    "relative_slowdown",
    "resample",
    "resolve_reference",
    "run_frames",
    "run_labels",
    "share_integrals",
    "size_bins",
    "summary",
    "tasks_frame",
    "timeline",
    "timeline_frame",
    "write_csv",
    "write_run_files",
]
