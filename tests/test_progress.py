"""The progress bar of ``simulate`` and ``compare`` (issue 32 item 3): on stderr only, shown
with ``--progress`` (or on a terminal), never with ``--quiet``, and the output files do not
change with it."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from fairshare.cli import main, runs
from fairshare.sim.engine import PROGRESS_EVENTS

SCENARIO = {
    "machines": [{"name": "m", "count": 20, "capacity": {"slots": 10}}],
    "jobs": [
        {"name": f"j{k}", "submit": k, "tasks": 500, "duration": 3 + k % 5} for k in range(60)
    ],
}
"""30,000 tasks: more than one :data:`PROGRESS_EVENTS` of events, so the engine reports."""


def _run(tmp_path: Path, name: str, *flags: str) -> tuple[str, dict[str, bytes]]:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO), encoding="utf-8")
    out = tmp_path / name
    errors = io.StringIO()
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(errors),
        pytest.raises(SystemExit) as stop,
    ):
        main(["simulate", str(scenario), "--policy", "drf", "--out", str(out), *flags])
    assert stop.value.code in (0, None), errors.getvalue()
    files = {
        p.name: p.read_bytes()
        for p in sorted(out.iterdir())
        if p.is_file() and p.name not in ("summary.json", ".fairshare-output")
    }
    return errors.getvalue(), files


def test_progress_on_stderr_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert PROGRESS_EVENTS < 60 * 500  # the engine reports at least once
    monkeypatch.setattr(runs, "PROGRESS_AFTER", 0.0)
    shown, with_bar = _run(tmp_path, "bar", "--progress")
    assert "tasks (" in shown and "simulated" in shown and "/ 59 s" in shown
    quiet, without = _run(tmp_path, "quiet", "--progress", "--quiet")
    assert quiet == ""
    default, plain = _run(tmp_path, "plain")  # stderr is no terminal here: no bar
    assert default == ""
    assert with_bar == without == plain
    assert set(plain) >= {"jobs.csv", "timeline.csv", "tasks.parquet", "report.html"}


def test_quiet_wins() -> None:
    assert runs.progress_shown(quiet=True, progress=True) is False
    assert runs.progress_shown(quiet=False, progress=True) is True
    assert runs.progress_shown(quiet=False, progress=False) is None
