"""Reports of simulated runs and the writers of ``simulate``'s and ``compare``'s outputs.

The self-contained ``report.html`` of one run, the comparison of several runs of one
workload (``compare.json``, ``compare.csv``, ``compare.html``), and the writers of the
output directories of ``fairshare simulate`` and ``fairshare compare``
(:mod:`fairshare.report.outdir` publishes them atomically).
"""

from fairshare.report.html import (
    render_compare,
    render_run,
    write_compare,
    write_outputs,
)

__all__ = ["render_compare", "render_run", "write_compare", "write_outputs"]
