"""Reports of simulated runs: the self-contained ``report.html`` of one run, the comparison of
several runs of one workload (``compare.json``, ``compare.csv``, ``compare.html``), and the
writers of the output directories of ``fairshare simulate`` and ``fairshare compare``."""

from fairshare.report.html import (
    render_compare,
    render_run,
    write_compare,
    write_outputs,
)

__all__ = ["render_compare", "render_run", "write_compare", "write_outputs"]
