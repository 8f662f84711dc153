"""Print, or check, the fingerprints of the simulator's decisions.

The matrix and the fingerprint are defined in :mod:`fairshare.bench.fingerprint`; the fixed
matrix's 266 lines (14 policies x 19 mechanisms) are committed in
``tests/golden/decision_fingerprints.txt`` and checked by the test suite. By hand:

    python benchmarks/decision_fingerprint.py --check tests/golden/decision_fingerprints.txt
    python benchmarks/decision_fingerprint.py --only hdrf,drf --random 150 > /tmp/before.txt

``--only POLICY[,POLICY]`` restricts the policies. ``--random N`` adds N small random
tie-heavy workloads (seeded by their number); 150 of them for every policy take a few minutes.
``--check FILE`` compares against FILE and exits 1 listing the lines that moved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairshare.bench.fingerprint import fingerprints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated policies (default: every online one)")
    parser.add_argument(
        "--random", type=int, default=0, metavar="N", help="add N random tie-heavy workloads"
    )
    parser.add_argument("--check", type=Path, metavar="FILE", help="compare against FILE")
    args = parser.parse_args()
    policies = args.only.split(",") if args.only else None
    lines = fingerprints(policies, args.random)
    if args.check is None:
        for line in lines:
            print(line, flush=True)
        return
    expected = args.check.read_text().splitlines()
    got = list(lines)
    moved = sorted(set(expected) ^ set(got))
    for line in moved:
        print(("- " if line in expected else "+ ") + line)
    sys.exit(1 if moved else 0)


if __name__ == "__main__":
    main()
