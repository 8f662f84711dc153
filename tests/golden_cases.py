"""The (example, policy, integral) triples whose `fairshare solve --json` output is kept as a
golden file in tests/golden/. Regenerate after an intended change with
`python tests/golden_cases.py` and review the diff."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fairshare.allocation import allocation_document
from fairshare.solvers import solve
from fairshare.workload.loader import load_scenario

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
GOLDEN = HERE / "golden"

CASES: list[tuple[str, str, bool]] = [
    ("drf-section-4.1", "drf", False),
    ("drf-section-4.1", "drf", True),
    ("drf-section-4.1", "asset", False),
    ("drf-section-4.1", "ceei", False),
    ("drf-section-4.1", "ceei", True),
    ("fair-figure-3", "max-min", False),
    ("hdrf-figure-2", "hdrf", False),
    ("hdrf-figure-4", "hdrf", True),
    ("hdrf-section-3.2", "collapsed-drf", False),
    ("hdrf-figure-8", "hdrf", False),
    ("hdrf-figure-8", "hdrf", True),
    ("quickstart", "hdrf", False),
    ("quickstart", "drf", True),
    ("quickstart", "collapsed-drf", False),
    ("choosy-figure-1", "cmmf", False),
    ("choosy-figure-1", "cmmf", True),
    ("choosy-figure-1", "independent", False),
    ("tsf-figure-2a", "cdrf", False),
    ("tsf-figure-4", "tsf", False),
    ("tsf-figure-4", "tsf", True),
    ("tsf-figure-4", "drfh", False),
    ("tsf-figure-4", "per-machine-drf", True),
]


def golden_path(example: str, policy: str, integral: bool) -> Path:
    suffix = "-integral" if integral else ""
    return GOLDEN / f"{example}.{policy}{suffix}.json"


def render(example: str, policy: str, integral: bool) -> str:
    scenario = load_scenario(EXAMPLES / f"{example}.yaml")
    document = allocation_document(scenario, solve(scenario, policy, integral=integral))
    return json.dumps(document, indent=2) + "\n"


if __name__ == "__main__":
    for case in CASES:
        golden_path(*case).write_text(render(*case))
        print("wrote", golden_path(*case).relative_to(HERE.parent), file=sys.stderr)
