"""Metrics of simulated runs: pure functions of a ``RunLog`` (``fairshare.runlog``) that
give the SPEC section 3 outputs (``summary.json``, ``jobs.csv``, ``timeline.csv``) and the
papers' evaluation metrics: FAIR Table 2 size bins, Choosy section 7.1's allocation RMSE and
relative slowdown, CDFs of response time and queueing delay, locality per bin."""

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
