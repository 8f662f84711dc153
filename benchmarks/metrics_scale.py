"""Time metrics and output files on a synthetic run of about 200,000 task attempts.

    python benchmarks/metrics_scale.py [--attempts N] [--users U] [--out DIR] [--html]

The run log is made up, not simulated: jobs with FAIR Table 2 sizes arrive by a Poisson
process from Zipf-distributed users, and their tasks take the earliest free slot of a
1,000-slot cluster in submission order (FIFO), with a few percent killed and re-run and
random locality. It has the shape and volume of a real run, which is all the metrics need.
Prints the time of each step; the HTML report is timed only with --html.
"""

from __future__ import annotations

import argparse
import heapq
import tempfile
import time
from pathlib import Path

import numpy as np

from fairshare.cluster import Cluster, Machine
from fairshare.metrics import run_frames, summary, timeline, write_run_files
from fairshare.report import render_run
from fairshare.runlog import JobRecord, Locality, RunLog, TaskAttempt

FAIR_SIZES = (16, 40, 80, 160, 320, 600, 1200, 2400, 6400)
FAIR_WEIGHTS = (0.58, 0.096, 0.086, 0.084, 0.056, 0.043, 0.025, 0.013, 0.017)


def synthetic_log(
    attempts: int = 200_000, users: int = 300, seed: int = 1, policy: str = "fifo"
) -> RunLog:
    """A plausible FIFO run log with about ``attempts`` task attempts."""
    rng = np.random.default_rng(seed)
    machines = [Machine(f"m{i}", np.array([8.0, 32.0]), rack=f"r{i // 20}") for i in range(125)]
    cluster = Cluster.build(("cpu", "mem"), machines)
    slots: list[tuple[float, int]] = [(0.0, i) for i in range(125 * 8)]
    heapq.heapify(slots)
    user_names = tuple(f"u{i:03d}" for i in range(users))
    zipf = 1.0 / np.arange(1, users + 1) ** 1.1
    zipf /= zipf.sum()
    localities: tuple[Locality, ...] = ("node", "rack", "off_rack")
    jobs: list[JobRecord] = []
    rows: list[TaskAttempt] = []
    t = 0.0
    j = 0
    while len(rows) < attempts:
        t += float(rng.exponential(3.0))
        size = int(rng.choice(FAIR_SIZES, p=FAIR_WEIGHTS))
        size = min(size, max(attempts - len(rows), 1))
        user = user_names[int(rng.choice(users, p=zipf))]
        name = f"j{j:05d}"
        j += 1
        durations = rng.uniform(9.0, 60.0, size)
        first = None
        finish = 0.0
        for task in range(size):
            attempt = 0
            while True:
                free, slot = heapq.heappop(slots)
                start = max(free, t)
                killed = bool(rng.random() < 0.03)
                end = start + (durations[task] / 2 if killed else durations[task])
                rows.append(
                    TaskAttempt(
                        name,
                        user,
                        "map",
                        task,
                        attempt,
                        f"m{slot // 8}",
                        start,
                        end,
                        killed,
                        localities[int(rng.choice(3, p=(0.7, 0.2, 0.1)))],
                    )
                )
                heapq.heappush(slots, (end, slot))
                first = start if first is None else min(first, start)
                if not killed:
                    finish = max(finish, end)
                    break
                attempt += 1
        isolated = float(durations.max()) * max(1.0, size / 1000)
        jobs.append(
            JobRecord(
                name, user, "root", t, size, np.array([1.0, 4.0]), 1.0, first, finish, isolated
            )
        )
    rows.sort(key=lambda a: (a.start, a.job, a.task, a.attempt))
    return RunLog(policy, seed, cluster, user_names, tuple(jobs), tuple(rows), 2 * len(rows), 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=200_000)
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--html", action="store_true", help="also time report.html")
    args = parser.parse_args()

    t0 = time.perf_counter()
    log = synthetic_log(args.attempts, args.users)
    t1 = time.perf_counter()
    print(
        f"synthetic log: {len(log.attempts):,} attempts, {len(log.jobs):,} jobs, "
        f"{len(log.users)} users ({t1 - t0:.2f} s, not part of the metrics)"
    )

    steps: list[tuple[str, float]] = []
    start = time.perf_counter()
    run_frames(log)
    steps.append(("columnar view (one pass over the records)", time.perf_counter() - start))
    start = time.perf_counter()
    tl = timeline(log)
    steps.append((f"timeline ({len(tl):,} change rows)", time.perf_counter() - start))
    start = time.perf_counter()
    summary(log)
    steps.append(("summary.json document", time.perf_counter() - start))
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        start = time.perf_counter()
        write_run_files(log, out)
        steps.append(
            (
                "write summary.json, jobs.csv, timeline.csv, tasks.parquet",
                time.perf_counter() - start,
            )
        )
        if args.html:
            start = time.perf_counter()
            (out / "report.html").write_text(render_run(log), encoding="utf-8")
            steps.append(("report.html", time.perf_counter() - start))
    for label, seconds in steps:
        print(f"{seconds:8.3f} s  {label}")
    cold = steps[0][1] + steps[1][1] + steps[2][1]
    print(f"{cold:8.3f} s  metrics from a cold log (view + timeline + summary)")


if __name__ == "__main__":
    main()
