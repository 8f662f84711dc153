"""The simulator's decisions are pinned: a refactor or an optimisation that moves one fails here.

``tests/golden/decision_fingerprints.txt`` holds one line per (online policy, mechanism) run of
:func:`fairshare.bench.fingerprint.configs`: the number of task attempts and a digest of every
attempt, job record and the event count. A deliberate change of behaviour regenerates the file
(``python benchmarks/decision_fingerprint.py > tests/golden/decision_fingerprints.txt``) and says
in its commit why each moved line moved.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fairshare.bench import fingerprint as module
from fairshare.bench.fingerprint import configs, fingerprint
from fairshare.policies import ONLINE_POLICIES
from fairshare.runlog import RunLog

GOLDEN = Path(__file__).parent / "golden" / "decision_fingerprints.txt"
EXPECTED = {
    tuple(line.split()[:2]): line for line in GOLDEN.read_text().splitlines() if line.strip()
}
CONFIGS = {config[0]: config for config in configs()}


def test_the_golden_file_covers_every_policy_and_mechanism() -> None:
    assert set(EXPECTED) == {(p, c) for p in ONLINE_POLICIES for c in CONFIGS}
    assert len(EXPECTED) == len(ONLINE_POLICIES) * len(CONFIGS)


@pytest.mark.parametrize("policy", sorted(ONLINE_POLICIES))
def test_decisions_match_the_committed_fingerprints(policy: str) -> None:
    moved = [
        f"expected {EXPECTED[(policy, name)]!r}, got {got!r}"
        for name, config in CONFIGS.items()
        if (got := fingerprint(policy, config)) != EXPECTED[(policy, name)]
    ]
    assert not moved, "\n".join(moved)


def test_the_fingerprint_sees_one_moved_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """A digest that ignored the records would pass any refactor: one changed attempt
    changes it."""
    config = CONFIGS["plain"]
    original = module.fingerprint("drf", config)
    real_lines = module._record_lines

    def one_changed(log: RunLog) -> Iterator[str]:
        lines = list(real_lines(log))
        lines[0] += "x"
        return iter(lines)

    monkeypatch.setattr(module, "_record_lines", one_changed)
    assert module.fingerprint("drf", config) != original
