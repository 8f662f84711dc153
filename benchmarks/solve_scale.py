"""Time `fairshare solve` end to end on a 1,000-user, 3-resource, 3-level-hierarchy scenario.

Usage: python benchmarks/solve_scale.py [--users N] [--repeat K]

Writes the generated scenario to a temporary directory and runs the installed `fairshare`
command (process start, loading, validation, solving, printing the JSON) K times per policy,
reporting the median wall time, plus the in-process solve time alone.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from fairshare.solvers import solve
from fairshare.workload.loader import load_scenario


def generate(users: int, seed: int = 1) -> dict[str, object]:
    """Ten organisations of ten teams, users spread evenly; 100 heterogeneous machines."""
    rng = np.random.default_rng(seed)
    queues: list[dict[str, object]] = []
    for org in range(10):
        queues.append({"path": f"org{org}", "weight": int(rng.integers(1, 5))})
        for team in range(10):
            queues.append({"path": f"org{org}/team{team}", "weight": int(rng.integers(1, 5))})
    user_list = []
    for i in range(users):
        demand = {
            "cpu": int(rng.integers(1, 9)),
            "mem": int(rng.integers(1, 33)),
            "gpu": int(rng.integers(0, 2)) * int(rng.integers(0, 2)),
        }
        entry: dict[str, object] = {
            "name": f"u{i}",
            "queue": f"org{i % 10}/team{(i // 10) % 10}",
            "demand": demand,
            "weight": int(rng.integers(1, 4)),
        }
        if rng.random() < 0.5:
            entry["max_tasks"] = int(rng.integers(1, 200))
        user_list.append(entry)
    machines = [
        {"name": "cpu", "count": 60, "capacity": {"cpu": 64, "mem": 256, "gpu": 0}},
        {"name": "mem", "count": 30, "capacity": {"cpu": 32, "mem": 1024, "gpu": 0}},
        {"name": "gpu", "count": 10, "capacity": {"cpu": 32, "mem": 512, "gpu": 8}},
    ]
    return {
        "resources": ["cpu", "mem", "gpu"],
        "machines": machines,
        "queues": queues,
        "users": user_list,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scale.yaml"
        path.write_text(yaml.safe_dump(generate(args.users), sort_keys=False))
        scenario = load_scenario(path)
        print(
            f"{args.users} users, {len(scenario.queues)} queues, "
            f"{len(scenario.cluster.machines)} machines, 3 resources"
        )
        for policy in ("drf", "hdrf", "collapsed-drf", "asset", "ceei"):
            for integral in (False, True):
                runs = []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    solve(scenario, policy, integral=integral)
                    runs.append(time.perf_counter() - start)
                kind = "integral" if integral else "divisible"
                print(
                    f"  solve {policy:14s} {kind:9s} in process: "
                    f"median {statistics.median(runs) * 1000:8.1f} ms"
                )
        for policy in ("drf", "hdrf"):
            runs = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "fairshare",
                        "solve",
                        str(path),
                        "--policy",
                        policy,
                        "--json",
                    ],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
                runs.append(time.perf_counter() - start)
            print(
                f"  fairshare solve --policy {policy} end to end: "
                f"median {statistics.median(runs):.3f} s over {args.repeat} runs"
            )


if __name__ == "__main__":
    main()
