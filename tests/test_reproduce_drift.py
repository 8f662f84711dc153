"""The committed verdicts cannot drift from the code (issue 33 item 7): two fast deterministic
targets (``hdrf-fig9``, ``tsf-table2``) rerun at their default scale and seeds give exactly
the rows ``docs/reproductions.json`` holds. ``choosy-table2`` (wall-clock run times) is never
rerun here: its verdicts depend on the machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairshare.experiments.reproduce import RESULT, run_target
from fairshare.experiments.targets import target
from fairshare.experiments.verdict_table import target_entry

SUMMARY = Path(__file__).resolve().parents[1] / "docs" / "reproductions.json"


@pytest.mark.parametrize("name", ["hdrf-fig9", "tsf-table2"])
def test_a_fresh_run_at_the_defaults_gives_the_committed_rows(name: str, tmp_path: Path) -> None:
    t = target(name)
    assert not t.wall_clock
    committed = {e["target"]: e for e in json.loads(SUMMARY.read_text())["targets"]}[name]
    assert committed["status"] == "run"
    run_target(t, tmp_path, scale=t.default_scale, seeds=None, jobs=1)
    fresh = target_entry(
        t, json.loads((tmp_path / name / RESULT).read_text()), version="", commit=""
    )
    assert [r["metric"] for r in fresh["rows"]] == [r["metric"] for r in committed["rows"]]
    for got, want in zip(fresh["rows"], committed["rows"], strict=True):
        assert got["verdict"] == want["verdict"], got["metric"]
        for key in ("paper", "tolerance", "neutral", "kind"):
            assert got[key] == want[key], (got["metric"], key)
        for key in ("ours", "spread"):
            assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-6), (got["metric"], key)
