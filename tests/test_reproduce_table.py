"""The committed verdict table (issue 33 item 7): README's verdict counts and the per-row
table of ``docs/experiments.md`` are exactly what :mod:`fairshare.experiments.verdict_table`
generates from ``docs/reproductions.json``, and that file covers every runnable target at its
defaults. Regenerate all three with ``python benchmarks/reproduce_all.py --out DIR``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fairshare.experiments.targets import TARGETS, target
from fairshare.experiments.targets.verdict import VERDICTS
from fairshare.experiments.verdict_table import (
    NOT_RUN,
    README_BEGIN,
    README_END,
    ROWS_BEGIN,
    ROWS_END,
    SummaryError,
    counts,
    dump,
    readme_section,
    replace_section,
    rows_section,
    summarise,
    target_entry,
)

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = ROOT / "docs" / "reproductions.json"


def _committed() -> dict[str, object]:
    return json.loads(SUMMARY.read_text(encoding="utf-8"))


def _section(path: Path, begin: str, end: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(begin)
    return text[start : text.index(end, start) + len(end)]


def test_readme_verdict_table_is_generated_from_the_committed_summary() -> None:
    assert _section(ROOT / "README.md", README_BEGIN, README_END) == readme_section(_committed())


def test_experiments_rows_are_generated_from_the_committed_summary() -> None:
    got = _section(ROOT / "docs" / "experiments.md", ROWS_BEGIN, ROWS_END)
    assert got == rows_section(_committed())


def test_summary_file_is_in_its_canonical_form() -> None:
    assert SUMMARY.read_text(encoding="utf-8") == dump(_committed())


def test_summary_holds_every_runnable_target_at_its_defaults() -> None:
    entries = _committed()["targets"]
    assert isinstance(entries, list)
    assert [e["target"] for e in entries] == [t.name for t in TARGETS if t.runnable]
    for entry in entries:
        t = target(entry["target"])
        assert (entry["scale"], entry["seeds"]) == (t.default_scale, t.default_seeds)
        assert entry["wall_clock"] is t.wall_clock
        assert entry["status"] in ("run", "not run")
        if entry["status"] == "run":
            assert entry["rows"], entry["target"]
            assert entry["commit"] and entry["version"]
            for row in entry["rows"]:
                assert row["verdict"] in VERDICTS
                assert row["kind"] in ("claim", "model-check")


def test_only_choosy_table2_depends_on_the_wall_clock() -> None:
    assert [t.name for t in TARGETS if t.wall_clock] == ["choosy-table2"]


def test_counts_leave_model_checks_out_of_the_verdicts() -> None:
    rows = [
        {"verdict": "reproduced", "kind": "claim"},
        {"verdict": "reproduced", "kind": "claim"},
        {"verdict": "inconclusive", "kind": "claim"},
        {"verdict": "reproduced", "kind": "model-check"},
        {"verdict": "differs", "kind": "claim"},
    ]
    assert counts(rows) == {
        "reproduced": 2,
        "same-direction": 0,
        "inconclusive": 1,
        "differs": 1,
        "model-check": 1,
    }


def _result(name: str, scale: float, seeds: int) -> dict[str, object]:
    row = {
        "metric": "m | n",
        "paper": None,
        "ours": 1.25,
        "spread": 0.5,
        "verdict": "inconclusive",
        "reason": "why",
        "neutral": 1.0,
        "tolerance": None,
        "source": "s",
    }
    return {"target": name, "rows": [row], "scale": scale, "seeds": seeds, "setup": []}


def test_an_entry_keeps_the_row_and_its_setting() -> None:
    t = target("hdrf-fig9")
    entry = target_entry(
        t, _result(t.name, t.default_scale, t.default_seeds), version="v", commit="c"
    )
    assert entry["rows"] == [
        {
            "metric": "m | n",
            "paper": None,
            "ours": 1.25,
            "spread": 0.5,
            "tolerance": None,
            "neutral": 1.0,
            "verdict": "inconclusive",
            "kind": "claim",
        }
    ]
    section = rows_section({"targets": [entry]})
    assert "| `hdrf-fig9` | m \\| n | direction vs 1 | 1.25 ± 0.5 | - | inconclusive |" in section


def test_a_result_off_the_defaults_is_refused() -> None:
    t = target("hdrf-fig9")
    with pytest.raises(SummaryError, match=r"scale 0\.5 with 3 seeds"):
        target_entry(t, _result(t.name, 0.5, t.default_seeds), version="v", commit="c")
    with pytest.raises(SummaryError, match="tsf-table2"):
        target_entry(t, _result("tsf-table2", 1.0, 3), version="v", commit="c")


def test_a_missing_result_is_recorded_as_not_run(tmp_path: Path) -> None:
    document = summarise(tmp_path, TARGETS, version="v", commit="c")
    entries = document["targets"]
    assert isinstance(entries, list)
    assert {e["status"] for e in entries} == {"not run"}
    assert f"| `hdrf-fig12-13` | 0.1 (5) | {NOT_RUN} | | | | |" in readme_section(document)


def test_only_the_chosen_targets_are_replaced(tmp_path: Path) -> None:
    t = target("hdrf-fig9")
    (tmp_path / t.name).mkdir()
    (tmp_path / t.name / "result.json").write_text(
        json.dumps(_result(t.name, t.default_scale, t.default_seeds))
    )
    document = summarise(
        tmp_path, TARGETS, version="v", commit="new", previous=_committed(), names=[t.name]
    )
    entries = {e["target"]: e for e in document["targets"]}  # type: ignore[union-attr]
    old = {e["target"]: e for e in _committed()["targets"]}  # type: ignore[union-attr]
    assert entries[t.name]["commit"] == "new"
    assert entries["tsf-table2"] == old["tsf-table2"]


def test_replace_section_needs_both_markers() -> None:
    assert replace_section("a<b>x</b>c", "<b>", "</b>", "Y") == "aYc"
    with pytest.raises(SummaryError, match="missing the markers"):
        replace_section("a<b>x", "<b>", "</b>", "Y")


def test_the_script_check_passes_on_the_committed_files() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "reproduce_all.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_committed_row_claims_a_side_its_interval_does_not_clear() -> None:
    """Issue 33's acceptance over the committed run: no row ``reproduced`` on the other side
    of its neutral value than the paper's number, and no row whose interval ``ours ± spread``
    includes its neutral value ``reproduced`` or ``same-direction`` (a paper's number at the
    neutral value claims no side, and its row has none)."""
    summary = json.loads(SUMMARY.read_text())
    judged = 0
    for entry in summary["targets"]:
        for row in entry["rows"]:
            neutral, ours = row["neutral"], row["ours"]
            if row["paper"] is not None and neutral is not None:
                assert row["paper"] != neutral, (entry["target"], row["metric"])
            if (
                neutral is None
                or ours is None
                or row["verdict"] not in ("reproduced", "same-direction")
            ):
                continue
            judged += 1
            assert not ours - row["spread"] <= neutral <= ours + row["spread"], row["metric"]
            if row["paper"] is not None:
                assert (ours - neutral) * (row["paper"] - neutral) > 0, row["metric"]
    assert judged >= 30
