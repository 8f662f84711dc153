"""Run every reproduction target at its defaults and regenerate the committed verdicts.

The summary format and the tables are defined in :mod:`fairshare.experiments.verdict_table`.
One command regenerates ``docs/reproductions.json``, README's verdict table and the per-row
table of ``docs/experiments.md``:

    python benchmarks/reproduce_all.py --out /tmp/repro

Targets run one after the other at their default scale and seeds (``--jobs`` cells at a time,
default 1); a target already run into ``DIR`` reuses its cells. ``--only T[,T]`` runs and
updates those targets and keeps the others' committed entries; ``--collect`` runs nothing and
reads ``DIR/TARGET/result.json`` as they are (a target without one is recorded as not run);
``--commit SHA`` with ``--collect`` records the commit the results were run at (default: the
checkout's, ``+dirty`` when src/ has uncommitted changes). ``--check`` runs nothing and exits
1 when README or docs/experiments.md differ from ``docs/reproductions.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import fairshare
from fairshare.experiments.reproduce import run_target
from fairshare.experiments.targets import TARGETS
from fairshare.experiments.verdict_table import (
    README_BEGIN,
    README_END,
    ROWS_BEGIN,
    ROWS_END,
    dump,
    readme_section,
    replace_section,
    rows_section,
    summarise,
)

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = ROOT / "docs" / "reproductions.json"
README = ROOT / "README.md"
EXPERIMENTS = ROOT / "docs" / "experiments.md"


def _commit() -> str:
    """The checkout's commit (``+dirty`` when tracked files under src/ differ from it)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--", "src"], cwd=ROOT, check=False
        ).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def regenerated(document: dict[str, object]) -> dict[Path, str]:
    """README and docs/experiments.md with their generated sections from ``document``."""
    readme = README.read_text(encoding="utf-8")
    experiments = EXPERIMENTS.read_text(encoding="utf-8")
    return {
        README: replace_section(readme, README_BEGIN, README_END, readme_section(document)),
        EXPERIMENTS: replace_section(experiments, ROWS_BEGIN, ROWS_END, rows_section(document)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, metavar="DIR", help="the targets' directory")
    parser.add_argument("--only", help="comma-separated targets (default: every runnable one)")
    parser.add_argument("--jobs", type=int, default=1, help="cells at a time (default 1)")
    parser.add_argument("--collect", action="store_true", help="run nothing; read DIR")
    parser.add_argument("--check", action="store_true", help="compare the docs with the JSON")
    parser.add_argument(
        "--commit",
        help="with --collect: the commit DIR's results were run at (default: the checkout's)",
    )
    args = parser.parse_args()
    if args.check:
        document = json.loads(SUMMARY.read_text(encoding="utf-8"))
        stale = [
            path.name
            for path, text in regenerated(document).items()
            if text != path.read_text(encoding="utf-8")
        ]
        for name in stale:
            print(f"{name}: differs from {SUMMARY.name}; run {sys.argv[0]} --collect")
        return 1 if stale else 0
    if args.out is None:
        parser.error("--out DIR is needed (or --check)")
    runnable = [t for t in TARGETS if t.runnable]
    names = None if args.only is None else args.only.split(",")
    unknown = set(names or ()) - {t.name for t in runnable}
    if unknown:
        parser.error(f"unknown targets: {', '.join(sorted(unknown))}")
    if not args.collect:
        for t in runnable:
            if names is not None and t.name not in names:
                continue
            began = time.monotonic()
            done = run_target(t, args.out, scale=t.default_scale, seeds=None, jobs=args.jobs)
            print(
                f"{t.name}: {len(done.rows)} rows, {done.ran} cells run "
                f"({done.reused} reused) in {time.monotonic() - began:.0f} s",
                flush=True,
            )
    previous = json.loads(SUMMARY.read_text(encoding="utf-8")) if SUMMARY.is_file() else None
    document = summarise(
        args.out,
        TARGETS,
        version=fairshare.__version__,
        commit=args.commit if args.collect and args.commit else _commit(),
        previous=previous,
        names=names,
    )
    SUMMARY.write_text(dump(document), encoding="utf-8")
    for path, text in regenerated(document).items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote {SUMMARY.relative_to(ROOT)}, README.md and docs/experiments.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
