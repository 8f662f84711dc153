"""Records per second of the trace readers on the shared samples, and jobs per second of the
built-in generators.

Usage: python benchmarks/traces_throughput.py [--data DIR] [--jobs N] [--repeat K]

Each reader streams its sample to the end (parsing, validating, building every Job); the best
of K runs is reported, with the process's peak resident memory at the end to show that
streaming keeps it flat. ``--data`` defaults to ``../shared/data`` beside the checkout.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from fairshare.cluster import Cluster, Machine
from fairshare.workload.generators import generate
from fairshare.workload.loader import GENERATORS
from fairshare.workload.model import WorkloadSpec
from fairshare.workload.traces import open_trace

SAMPLES = (
    ("swim", "swim-facebook/FB-2009_samples_24_times_1hr_0.tsv"),
    ("swim", "swim-facebook/FB-2010_samples_24_times_1hr_withInputPaths_0.tsv"),
    ("google-2011", "google-clusterdata-2011"),
    ("alibaba-gpu", "alibaba-gpu-v2023/openb_pod_list_gpuspec33.csv"),
    ("swf", "pwa-swf/KTH-SP2-1996-2.1-cln.swf.gz"),
    ("swf", "pwa-swf/LCG.swf.gz"),
)


def cluster(machines: int = 1000) -> Cluster:
    capacity = np.array([16.0, 64.0])
    capacity.setflags(write=False)
    return Cluster.build(("cpu", "mem"), [Machine(f"m{i}", capacity) for i in range(machines)])


def best_rate(run: object, repeat: int) -> tuple[int, float]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return count, count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).parents[1] / ".." / "shared" / "data"
    )
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs per generator")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    machines = cluster()
    print(f"{'source':<70} {'jobs':>8} {'per second':>12}")
    for fmt, relative in SAMPLES:
        path = args.data / relative
        on = None if fmt == "alibaba-gpu" else machines
        count, rate = best_rate(
            lambda fmt=fmt, path=path, on=on: sum(1 for _ in open_trace(fmt, path, on).jobs),
            args.repeat,
        )
        print(f"{fmt + ':' + relative:<70} {count:>8} {rate:>12,.0f}")
    for name in GENERATORS:
        spec = WorkloadSpec(name, {"jobs": args.jobs})
        count, rate = best_rate(
            lambda spec=spec: sum(
                1 for _ in generate(spec, machines, np.random.default_rng(0)).jobs
            ),
            args.repeat,
        )
        print(f"{'generator ' + name:<70} {count:>8} {rate:>12,.0f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
