"""Throughput as the workload grows (run by hand, never in CI): simulated tasks per CPU second
at 200, 800, 2,000 and 4,500 jobs on 1,000 machines of <16 CPUs, 64 GB>, for drf, tsf and
choosy (Google-like constrained jobs, about one constraint class per job), hdrf (the same jobs
in queues) and fair (Facebook 2009 jobs with input data and delay scheduling).

The current figures are in ``docs/performance.md`` ("Scaling with the workload"); those from
before the cluster-wide placement index in ``benchmarks/HISTORY.md``.

A thin wrapper over ``fairshare bench scaling`` (same options: ``--policies``, ``--sizes``,
``--machines``, ``--arrival``, ``--json``); the workloads are defined once, in
``fairshare.bench.scaling``.
"""

from __future__ import annotations

import sys

from fairshare.cli import main

if __name__ == "__main__":
    main(["bench", "scaling", *sys.argv[1:]])
