"""Time `fairshare solve` end to end on a 1,000-user, 3-resource, 3-level-hierarchy scenario.

Usage: python benchmarks/solve_scale.py [--users N] [--repeat K]

Writes the generated scenario to a temporary directory and runs the installed `fairshare`
command (process start, loading, validation, solving, printing the JSON) K times per policy,
reporting the median wall time, plus the in-process solve time alone.

A thin wrapper over ``fairshare bench solve --only hierarchy`` (same options, plus ``--json``;
end to end is ``python -m fairshare solve``); the scenario is defined once, in
``fairshare.bench.solve``.
"""

from __future__ import annotations

import sys

from fairshare.cli import main

if __name__ == "__main__":
    main(["bench", "solve", "--only", "hierarchy", *sys.argv[1:]])
