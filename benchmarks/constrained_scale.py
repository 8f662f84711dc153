"""Time `fairshare solve` end to end on the constraint issue's two scales.

- CMMF: 5,000 users on 100,000 machines in 100 types, Google-like constraints (21 boolean
  machine attributes, about 1.8 required per user, so that a large fraction of users can use
  only a small part of the cluster; Sharma et al.'s model as Choosy section 7 uses it).
- TSF: 1,000 users on 100 machine types (10 machines each) with 3 resources, same constraints.

Usage: python benchmarks/constrained_scale.py [--repeat K] [--only cmmf|tsf]

Writes each scenario to a temporary directory (JSON, machines with `count`) and runs the
installed `fairshare solve --json` K times, reporting the median wall time end to end
(process start, loading, validation, coalescing, solving, printing) and the in-process
solve time, plus how many LPs the filling engine solved. The generated scenarios leave some
users with no machine; the CLI's warnings about them go to /dev/null.

Measured on the 2-core development machine (shared with other jobs, so +-30%), `--repeat 3`:

| scenario | before | after |
| --- | --- | --- |
| CMMF 5,000 users: LPs (15 solves) | ~4.6 s (23 solves) | 0.2-0.3 s |
| CMMF: `solve` in process | 8.4 s (LPs, 1.0 s machine types, 2.3 s placement) | 0.5-0.7 s |
| CMMF: `fairshare solve --json` end to end | 18 s CPU (5 M placement entries, 140 MB) | 2.0 s |
| TSF 1,000 users: `solve` in process (17 solves) | 8.5 s | 1.0-1.5 s |
| TSF: `fairshare solve --json` end to end | over 10 s (8.5 s + start, load) | 1.6-1.9 s |

What changed: pooled level rows per class, users with room on a type skip the freeze-test
LP, primal simplex for the warm starts (``fairshare.solvers.filling_lp``); machine types
keyed only where neighbouring machines differ, constraints evaluated per combination of the
attributes they read (``fairshare.workload.eligibility``); a type's users packed onto
contiguous machines. Of CMMF's 2.1 s end to end, about 1.2 s is importing the CLI (which
imports matplotlib, polars and scipy.optimize for other commands) and 0.8 s loading the
100,000 machines; the solve itself is 0.5 s. Since the freeze test relative to capacity
(2026-11-24): TSF 14 LPs and 0.64 s of CPU in process, CMMF 12 LPs and 0.80 s (min of 7).

A thin wrapper over ``fairshare bench solve --only cmmf,tsf`` (same options, plus ``--json``;
end to end is ``python -m fairshare solve``); the scenarios are defined once, in
``fairshare.bench.solve``.
"""

from __future__ import annotations

import sys

from fairshare.cli import main

if __name__ == "__main__":
    main(["bench", "solve", "--only", "cmmf,tsf", *sys.argv[1:]])
