"""Live scheduling on Ray (issue 16): fairshare's driver against bare pinned Ray.

The same trivial tasks (``true``, one ``slot`` of a custom resource each) on a local
``ray.cluster_utils.Cluster`` (a head without CPUs, two nodes of one CPU and two slots),
submitted straight to Ray with ``NodeAffinitySchedulingStrategy(soft=False)`` round-robin,
and as two tenants' jobs under DRF through ``LiveDriver`` with every state change written to
the service's SQLite store first. Rounds alternate; medians. Reports tasks per second of
both, their ratio (the issue asks at least 0.8), the scheduling overhead per task (the
driver's time outside the executor: events, policy, records, database) and the policy's
share of it.

    python benchmarks/live_throughput.py [--tasks 400] [--rounds 3] [--no-journal] [--json]

2026-11-25, the shared 2-core machine, two runs: bare Ray 105-109 tasks/s, fairshare 97-111
(0.89-1.06x), 0.27 ms from a finish to the next launch, 0.05 ms per task in the policy;
``--no-journal`` 0.97x, 0.09 ms (docs/performance.md, "Live").

A thin wrapper over ``fairshare bench live`` (same options); the workload is defined once, in
``fairshare.bench.live``.
"""

from __future__ import annotations

import sys

from fairshare.cli import main

if __name__ == "__main__":
    main(["bench", "live", *sys.argv[1:]])
