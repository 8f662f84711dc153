"""The live service's load test (issue 31's acceptance): ``fairshare serve`` on a local Ray
instance, 10 tenants x 200 one-task jobs per round over HTTP, 4 slots, three rounds. Prints
each tenant's mean wait against the mean, jobs lost and tasks run twice, the service's RSS
after each round and the POST latency (docs/live.md, "Load test").

    python benchmarks/live_load.py [--tenants 10] [--jobs 200] [--rounds 3] [--cpus 4]

A thin wrapper over :func:`fairshare.bench.live_load.main`.
"""

from __future__ import annotations

from fairshare.bench.live_load import main

if __name__ == "__main__":
    main()
