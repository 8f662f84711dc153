"""Every output file of ``simulate`` and ``compare``, byte for byte, against golden digests.

Speed work on the loader, the metrics and the writers must not move a byte of what a run
writes (issue 15). ``tests/golden/simulate_outputs.txt`` holds the SHA-256 of each file of a
set of runs (the paper examples under several policies and mechanisms, a JSON scenario of
the end-to-end benchmark's workload at a small size, a comparison), written by the code
before that work. ``summary.json`` is compared without its ``wall_seconds`` line, the one
value that may differ. A Parquet file names the writer's version in its bytes, so
``tasks.parquet`` is compared by its schema and rows (as CSV).

Regenerate (only for a deliberate change of an output, which the commit explains):
``python tests/test_simulate_outputs.py > tests/golden/simulate_outputs.txt``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from fairshare.bench.end_to_end import write_scenario
from fairshare.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden" / "simulate_outputs.txt"
ONLINE = "online.json"
"""The end-to-end benchmark's workload at 300 machines and 60 jobs of 20 tasks, written by
:func:`write_scenario` into the run's directory."""

CASES: dict[str, list[str]] = {
    "two-jobs-drf": ["simulate", "sim-two-jobs.yaml", "--policy", "drf"],
    "two-jobs-fifo-until": ["simulate", "sim-two-jobs.yaml", "--policy", "fifo", "--until", "7"],
    "two-jobs-fair-preemption": [
        "simulate", "sim-two-jobs.yaml", "--policy", "fair", "--preemption", "1,2",
        "--pool-order", "fifo",
    ],
    "section-5.3-fair": ["simulate", "sim-fair-section-5.3.yaml", "--policy", "fair"],
    "section-5.3-fair-ccs": [
        "simulate", "sim-fair-section-5.3.yaml", "--policy", "fair", "--copy-compute-splitting",
    ],
    "sticky-fair": ["simulate", "sim-fair-sticky-slots.yaml", "--policy", "fair"],
    "sticky-fair-delay": [
        "simulate", "sim-fair-sticky-slots.yaml", "--policy", "fair", "--delay-scheduling",
        "5,10", "--rack-slowdown", "1.5", "--off-rack-slowdown", "2",
    ],
    "hdrf-headroom": ["simulate", "sim-hdrf-section-5.2.yaml", "--policy", "hdrf", "--headroom"],
    "choosy-constraints": [
        "simulate", "sim-choosy-constraints.yaml", "--policy", "choosy", "--seed", "3",
    ],
    "online-drf": ["simulate", ONLINE, "--policy", "drf", "--seed", "7"],
    "online-tsf": ["simulate", ONLINE, "--policy", "tsf", "--seed", "7"],
    "online-choosy": ["simulate", ONLINE, "--policy", "choosy", "--seed", "7"],
    "compare-constraints": [
        "compare", "sim-choosy-constraints.yaml", "--policies", "choosy,drf,offline-restricted",
        "--reference", "offline-restricted",
    ],
}  # fmt: skip
"""Each run's command line, its scenario relative to ``examples/`` (or the benchmark's
workload); ``--out`` is added."""

_WALL_SECONDS = re.compile(rb'^ *"wall_seconds": [^\n]*\n', re.MULTILINE)


def digest(path: Path) -> str:
    """The SHA-256 of the file as compared (see the module docstring)."""
    if path.suffix == ".parquet":
        frame = pl.read_parquet(path)
        data = (str(frame.schema) + "\n" + frame.write_csv()).encode()
    else:
        data = path.read_bytes()
        if path.name in ("summary.json", "compare.json"):
            data = _WALL_SECONDS.sub(b"", data)
    return hashlib.sha256(data).hexdigest()


def outputs(name: str, directory: Path) -> dict[str, str]:
    """Run case ``name`` in ``directory``: the digest of every file it wrote, by path."""
    argv = list(CASES[name])
    if argv[1] == ONLINE:
        write_scenario(directory, machines=300, jobs=60, tasks=20)
        argv[1] = str(directory / ONLINE)
    else:
        argv[1] = str(EXAMPLES / argv[1])
    out = directory / "out"
    errors = io.StringIO()
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(errors),
        pytest.raises(SystemExit) as stop,
    ):
        main([*argv, "--out", str(out)])
    assert stop.value.code in (0, None), errors.getvalue()
    return {
        path.relative_to(out).as_posix(): digest(path)
        for path in sorted(out.rglob("*"))
        if path.is_file() and path.name != ".fairshare-output"
    }


def golden() -> dict[str, dict[str, str]]:
    expected: dict[str, dict[str, str]] = {}
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        name, file, value = line.split()
        expected.setdefault(name, {})[file] = value
    return expected


@pytest.mark.parametrize("name", list(CASES))
def test_outputs_match_the_golden_digests(name: str, tmp_path: Path) -> None:
    assert outputs(name, tmp_path) == golden()[name]


def test_every_case_has_golden_digests() -> None:
    assert set(golden()) == set(CASES)


def _lines() -> Iterator[str]:
    for name in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            for file, value in outputs(name, Path(tmp)).items():
                yield f"{name} {file} {value}"


if __name__ == "__main__":
    for line in _lines():
        sys.stdout.write(line + "\n")
