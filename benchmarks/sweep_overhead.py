"""What ``fairshare sweep`` costs beyond its cells' simulations, and what ``--jobs`` gains.

A grid of 4 policies x 5 seeds on a mid-size generated workload (H-DRF's Facebook 2010
sizes, 500 jobs of about 100,000 tasks from 100 users with TSF section VI's four demand
shapes, on 200 two-resource machines of two kinds) runs through the installed executable
with ``--jobs 1`` (cells in the command's process) and ``--jobs N`` (a pool of worker
processes), each into a fresh directory, alternating for ``--rounds`` rounds. Reported per
run, from ``results.parquet``'s own columns and the command's wall time:

- ``simulate``: the sum over cells of ``wall_seconds`` (the simulation alone);
- ``cells``: the sum of ``cell_seconds`` (the cell: scenario, simulation, summary, row);
- ``in-cell``: (cells - simulate) / simulate, what a cell adds to its simulation (mostly
  ``summary.json``'s metrics);
- ``sweep``: the command's wall seconds, start-up, grid check, merge and report included;
- ``machinery``: sweep x workers / cells - 1, what the sweep adds to its cells' time
  (dispatch, each cell's file, merging, the report, the interpreter's start);
- ``parallelism``: cells / sweep, the cells' own seconds run per second of the sweep (at
  most N): unlike the speed-up, it holds when other processes take cores during one run
  and not the other, as they do on a shared machine;
- ``speed-up``: the ``--jobs 1`` sweep's seconds over the ``--jobs N`` one's.

Timings on the shared 2-core machine vary by 10-20% from run to run, and by half when
another process takes a core for a while; compare rounds, and read ``parallelism``.

Recorded figures (2026-11-26, the 2-core machine in a quiet spell, compiled kernel; the
table is in ``docs/performance.md``, "Sweeps", the figures of a loaded spell in
``benchmarks/HISTORY.md``):

- 500 jobs: ``--jobs 1`` 23.9-24.2 s, ``--jobs 2`` 12.5-12.9 s (1.88-1.91x); a cell 7.6-7.8%
  over its simulation; the sweep 4.1-4.2% over its cells with one job, 11.0-11.6% with two.
- 1,000 jobs (TSF section VI's scale): 65.2 s and 35.0 s (1.86x); 6.4%; 2.0% and 8.6%.

Usage: ``python benchmarks/sweep_overhead.py [--jobs 2] [--rounds 1] [--workload-jobs 500]
[--json]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

GRID = """\
machines:
  - {{name: a, count: 100, capacity: {{cpu: 32, mem: 16}}, rack: r1}}
  - {{name: b, count: 100, capacity: {{cpu: 16, mem: 32}}, rack: r2}}
workload:
  generator: facebook-2010
  jobs: {jobs}
  arrival: 2
  users: 100
  duration: {{exponential: {{mean: 30}}}}
  demand: [{{cpu: 1, mem: 2}}, {{cpu: 2, mem: 1}}, {{cpu: 1, mem: 4}}, {{cpu: 4, mem: 2}}]
policies: [fifo, fair, drf, tsf]
seeds: 5
"""


def executable() -> str:
    beside = Path(sys.executable).parent / "fairshare"
    found = str(beside) if beside.exists() else shutil.which("fairshare")
    if found is None:
        raise SystemExit("the fairshare executable is not installed (pip install -e .)")
    return found


def run(grid: Path, out: Path, jobs: int) -> dict[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [executable(), "sweep", str(grid), "--out", str(out), "--jobs", str(jobs)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    results = pl.read_parquet(out / "results.parquet")
    simulate = float(results["wall_seconds"].sum())
    cells = float(results["cell_seconds"].sum())
    return {
        "jobs": jobs,
        "cells": results.height,
        "tasks_per_cell": float(results["tasks"].mean()),  # type: ignore[arg-type]
        "sweep_seconds": round(seconds, 2),
        "simulate_seconds": round(simulate, 2),
        "cell_seconds": round(cells, 2),
        "in_cell_overhead": round(cells / simulate - 1, 4),
        "machinery_overhead": round(seconds * jobs / cells - 1, 4),
        "parallelism": round(cells / seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="workers of the parallel sweep")
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds")
    parser.add_argument("--workload-jobs", type=int, default=500, help="jobs per cell's run")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    options = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        grid = Path(tmp) / "grid.yaml"
        grid.write_text(GRID.format(jobs=options.workload_jobs))
        for round_ in range(options.rounds):
            pair = {}
            for jobs in (1, options.jobs):
                out = Path(tmp) / f"out-{round_}-{jobs}"
                pair[jobs] = run(grid, out, jobs)
                shutil.rmtree(out)
                print(json.dumps(pair[jobs]), file=sys.stderr)
            speedup = pair[1]["sweep_seconds"] / pair[options.jobs]["sweep_seconds"]
            figures.append({"serial": pair[1], "parallel": pair[options.jobs], "speedup": speedup})
    if options.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{'jobs':>4} {'cells':>5} {'sweep s':>8} {'simulate s':>10} {'cells s':>8} "
        f"{'in-cell':>8} {'machinery':>9} {'parallel':>8} {'speed-up':>8}"
    )
    for entry in figures:
        for key in ("serial", "parallel"):
            f = entry[key]
            assert isinstance(f, dict)
            speedup = f"{entry['speedup']:.2f}x" if key == "parallel" else ""
            print(
                f"{f['jobs']:>4} {f['cells']:>5} {f['sweep_seconds']:>8.2f} "
                f"{f['simulate_seconds']:>10.2f} {f['cell_seconds']:>8.2f} "
                f"{100 * f['in_cell_overhead']:>7.1f}% {100 * f['machinery_overhead']:>8.1f}% "
                f"{f['parallelism']:>7.2f}x {speedup:>8}"
            )


if __name__ == "__main__":
    main()
