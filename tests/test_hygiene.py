"""The test suite's own rules: it must pass on a loaded machine and without the samples."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
_CLOCKS = re.compile(r"\b(perf_counter|process_time|monotonic|time\.time|thread_time)\b")


def test_no_test_asserts_a_duration() -> None:
    """Timings belong in ``benchmarks/``: an assertion on one fails on a loaded machine."""
    offenders = []
    for path in sorted(TESTS.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        clocked: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _CLOCKS.search(ast.unparse(node.value)):
                clocked.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assert):
                continue
            text = ast.unparse(node.test)
            names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
            if _CLOCKS.search(text) or names & clocked:
                offenders.append(f"{path.name}:{node.lineno}: {text}")
    assert offenders == []


def test_trace_tests_that_build_their_own_files_run_without_the_samples(tmp_path: Path) -> None:
    env = {**os.environ, "FAIRSHARE_SAMPLE_DATA": str(tmp_path / "absent")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rs",
            str(TESTS / "test_traces.py"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=TESTS.parent,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    counts = {
        word: int(number)
        for number, word in re.findall(r"(\d+) (passed|skipped|failed)", done.stdout)
    }
    assert counts.get("failed", 0) == 0
    assert counts["passed"] >= 4  # SWF and Google from rows, the argument parser, Alibaba lists
    assert counts["skipped"] >= 1
