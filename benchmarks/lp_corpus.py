"""The solver policies on the seeded wide-range corpus (``fairshare.bench.lp_corpus``):
failures (an error on valid input, or an allocation the invariant checks reject as printed)
and the median time per solve. The LP policies by default; ``--policies all`` for every
solver policy.

Usage: ``python benchmarks/lp_corpus.py [--size N] [--seed S] [--policies P,Q|all] [--failures]``
"""

from __future__ import annotations

import argparse
import time

from fairshare.bench.lp_corpus import ALL_POLICIES, LP_POLICIES, SEED, SIZE, run_corpus


def main() -> None:
    """Run the corpus and print one line per (policy, mode) and the failures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--policies", default=",".join(LP_POLICIES))
    parser.add_argument("--failures", action="store_true", help="list every failure")
    args = parser.parse_args()
    start = time.perf_counter()
    policies = ALL_POLICIES if args.policies == "all" else tuple(args.policies.split(","))
    run = run_corpus(args.size, args.seed, policies)
    wall = time.perf_counter() - start
    print(f"corpus: {args.size} scenarios, seed {args.seed}; {run.solves} solves in {wall:.1f} s")
    kinds: dict[str, int] = {}
    for line in run.failures:
        what = line.split(": ", 2)[1]
        kind = what if what in ("checks", "as printed", "crash", "timeout") else "error"
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"failures: {len(run.failures)} {dict(sorted(kinds.items()))}")
    for (policy, mode), seconds in sorted(run.seconds.items()):
        fails = sum(1 for line in run.failures if line.split()[1:3] == [policy, f"{mode}:"])
        print(
            f"{policy:>15} {mode:>9}: {len(seconds) + 0:4d} solved, {fails:3d} failed, "
            f"median {1000 * run.median(policy, mode):.2f} ms"
        )
    if args.failures:
        for line in run.failures:
            print(" ", line)


if __name__ == "__main__":
    main()
