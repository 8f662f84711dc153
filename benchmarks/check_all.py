"""Time `fairshare check --all` (every solver policy against every property, default trials)
end to end, and report the slowest cells and each violation's time to counterexample.

    python benchmarks/check_all.py [--seed S]
"""

from __future__ import annotations

import argparse
import time

from fairshare.fairness import PROPERTIES, check
from fairshare.solvers import SOLVER_POLICIES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    results = [
        check(policy, prop, seed=args.seed) for policy in SOLVER_POLICIES for prop in PROPERTIES
    ]
    wall = time.perf_counter() - start
    print(f"check --all: {len(results)} cells in {wall:.1f} s (seed {args.seed})")
    print("time to counterexample (search + shrinking):")
    for r in results:
        if r.counterexample is not None:
            print(f"  {r.policy:16s} {r.property:30s} trial {r.trials:3d}  {r.seconds:6.2f} s")
    print("slowest cells:")
    for r in sorted(results, key=lambda r: -r.seconds)[:8]:
        print(f"  {r.policy:16s} {r.property:30s} {r.verdict():9s} {r.seconds:6.2f} s")


if __name__ == "__main__":
    main()
