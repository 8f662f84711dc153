"""The test suite's own rules: it must pass on a loaded machine (that it needs nothing beside
the repository: ``tests/test_samples.py``)."""

from __future__ import annotations

import ast
import re
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
