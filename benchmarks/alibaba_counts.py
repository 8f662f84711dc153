"""The full Alibaba batch traces' sizes as the readers see them (issue 32): cluster-trace-v2018's
hour holds 3,056,536 instances on 4,034 machines; v2017's finished tasks 10,530,116 instances on
1,313 machines. The full data sets are not in the repository (docs/traces.md says where to get
them), so this is a script, not a test: it prints the counts and exits 1 when one differs.

Usage: ``python benchmarks/alibaba_counts.py [--v2017 DIR] [--v2018 DIR]`` (defaults: the data
sets' directories beside the repository, where ``data/samples/make_samples.py`` cuts them).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fairshare.workload.traces import open_trace

BESIDE = Path(__file__).resolve().parents[2] / "shared" / "data"
EXPECTED = {
    "alibaba-2018": (4034, 3_056_536),
    "alibaba-2017": (1313, 10_530_116),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--v2017", type=Path, default=BESIDE / "alibaba-v2017-batch")
    parser.add_argument("--v2018", type=Path, default=BESIDE / "alibaba-v2018-batch")
    args = parser.parse_args()
    wrong = 0
    for name, path in (("alibaba-2018", args.v2018), ("alibaba-2017", args.v2017)):
        started = time.perf_counter()
        trace = open_trace(name, path, None)
        machines = len(trace.cluster.machines)
        instances = sum(job.tasks for job in trace.jobs)
        seconds = time.perf_counter() - started
        ok = (machines, instances) == EXPECTED[name]
        wrong += not ok
        print(
            f"{name}: {instances:,} instances on {machines:,} machines, read in {seconds:.1f} s"
            + ("" if ok else f" (expected {EXPECTED[name][1]:,} on {EXPECTED[name][0]:,})")
        )
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
