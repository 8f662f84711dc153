"""HTML reports and the output directories of a run and of a comparison."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fairshare.metrics import run_frames, timeline
from fairshare.metrics.summary import makespan
from fairshare.report import render_compare, render_run, write_compare, write_outputs
from fairshare.report.figures import (
    allocation_figure,
    bins_figure,
    cdf_figure,
    locality_figure,
    top_users,
)
from fairshare.report.html import fmt, pct
from fairshare.report.scales import Scale, nice_ticks
from fairshare.report.svg import num
from fairshare.runlog import JobRecord, RunLog, TaskAttempt
from test_metrics import CLUSTER, _pair, run, tiny


def _svgs(html: str) -> int:
    return len(re.findall(r"<svg\b", html))


def test_write_outputs_files_and_determinism(tmp_path: Path) -> None:
    write_outputs(tiny(), tmp_path / "one")
    write_outputs(tiny(wall=9.0), tmp_path / "two")
    names = sorted(p.name for p in (tmp_path / "one").iterdir())
    # The tiny run's jobs name a queue ("root"), so queues.csv is written too.
    assert names == [
        "jobs.csv",
        "queues.csv",
        "report.html",
        "summary.json",
        "tasks.parquet",
        "timeline.csv",
    ]
    for name in ("jobs.csv", "queues.csv", "report.html", "tasks.parquet", "timeline.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_run_report_has_figures_and_numbers() -> None:
    html = render_run(tiny())
    # Allocation, CDFs, slowdown by size and locality, all inline.
    assert _svgs(html) == 4
    for anchor in ("fig-allocation", "fig-cdf", "fig-slowdown", "fig-locality"):
        assert f'id="{anchor}"' in html
    assert "<code>drf</code>" in html
    assert "seed 7" in html
    assert "<td>mean response time (s)</td><td>10.5</td>" in html
    assert "<td>p50 / p95 response time (s)</td><td>10.5 / 10.95</td>" in html
    assert "<td>node-local</td><td>33.3%</td>" in html
    assert "<td>cpu</td><td>30.2%</td>" in html
    assert "<td>delay_scheduling</td><td>[5, 10]</td>" in html
    # Self-contained: no scripts, stylesheets or images fetched from anywhere.
    assert "<script" not in html
    assert "<link" not in html
    assert not re.search(r'(src|href)="https?:', html)
    assert "wall_seconds" not in html


def test_report_groups_many_users_as_others() -> None:
    users = tuple(f"u{i:02d}" for i in range(15))
    jobs = [
        JobRecord(f"j{i}", u, "root", 0.0, 1, np.array([1.0, 1.0]), 1.0, 0.0, 1.0 + i, 1.0)
        for i, u in enumerate(users)
    ]
    attempts = [
        TaskAttempt(f"j{i}", u, "map", 0, 0, "m1", 0.0, 1.0 + i) for i, u in enumerate(users)
    ]
    log = RunLog("fair", 1, CLUSTER, users, tuple(jobs), tuple(attempts), 30, 0.1)
    html = render_run(log)
    assert "others (5 users)" in html
    # The ten longest-running users are drawn by name, the five shortest are not.
    assert "u14" in html.split('id="fig-allocation"')[1].split("</figure>")[0]
    legend = html.split('id="fig-allocation"')[1].split("</figure>")[0]
    assert "u00" not in legend


def test_report_without_tasks_or_input_says_so() -> None:
    log = run([JobRecord("j1", "a", "root", 0.0, 1, np.ones(2), 1.0, None, None, 1.0)], [])
    html = render_run(log)
    assert "no task ran" in html
    assert "No task read input data" in html
    assert "<td>mean slowdown</td><td>—</td>" in html


def test_write_compare(tmp_path: Path) -> None:
    a, b = _pair()
    write_compare([a, b], tmp_path / "one", reference=1)
    write_compare([a, b], tmp_path / "two", reference="choosy")
    for name in ("compare.json", "compare.csv", "compare.html"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    doc = json.loads((tmp_path / "one" / "compare.json").read_text())
    assert doc["reference"] == "choosy"
    assert [r["label"] for r in doc["runs"]] == ["fifo", "choosy"]
    csv = (tmp_path / "one" / "compare.csv").read_text().splitlines()
    assert csv[0].startswith("label,policy,seed,jobs,finished_jobs,makespan,")
    assert csv[1].startswith("fifo,fifo,7,2,2,10.000000,")
    html = (tmp_path / "one" / "compare.html").read_text()
    # RMSE, CDFs, slowdown bins, and one allocation figure per run; no locality data.
    assert _svgs(html) == 5
    assert "No task read input data" in html
    assert "Slowdown relative to choosy" in html
    # Job jb: 10 s in fifo against 5 s in the reference: slowdown 2 in the < 30 s bin.
    assert "1.50 (0.50) n=2" in html


def test_render_compare_single_run_has_no_rmse_curve() -> None:
    html = render_compare([tiny()])
    assert "no other run to compare with the reference" in html


def test_number_formatting() -> None:
    assert fmt(None) == "—"
    assert fmt(1234567) == "1,234,567"
    assert fmt(0.123456) == "0.1235"
    assert fmt(12345.6) == "12,346"
    assert pct(0.5) == "50.0%"
    assert pct(None) == "—"


# The report's SVG writer (fairshare.report.svg, its scales and ticks in fairshare.report.scales),
# which replaced matplotlib in the report.


def test_nice_ticks_follow_one_two_two_and_a_half_five() -> None:
    assert [t.label for t in nice_ticks(0.0, 2411.0, 9)] == ["0", "500", "1000", "1500", "2000"]
    assert [t.label for t in nice_ticks(0.0, 0.525, 9)] == [
        "0.0",
        "0.1",
        "0.2",
        "0.3",
        "0.4",
        "0.5",
    ]
    assert [t.label for t in nice_ticks(0.0, 1.02, 9)] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert [t.label for t in nice_ticks(0.0, 2.1, 9)] == [
        "0.00",
        "0.25",
        "0.50",
        "0.75",
        "1.00",
        "1.25",
        "1.50",
        "1.75",
        "2.00",
    ]
    assert [t.value for t in nice_ticks(3.0, 3.0, 9)] == [3.0]


def test_symlog_scale_is_matplotlibs_and_ticks_decades() -> None:
    scale = Scale(0.0, 2000.0, "symlog", linthresh=1.5)
    # Linear within linthresh (spanning 1 / 0.9 decades), one unit per decade beyond.
    assert scale.transform(1.5) == pytest.approx(1 / 0.9)
    assert scale.transform(15.0) == pytest.approx(1 / 0.9 + 1)
    assert scale.transform(-15.0) == pytest.approx(-(1 / 0.9 + 1))
    assert scale.fraction(0.0) == 0.0 and scale.fraction(2000.0) == 1.0
    ticks = scale.ticks(9)
    assert [(t.value, t.label, t.power) for t in ticks] == [
        (0.0, "0", None),
        (1.0, "", "0"),
        (10.0, "", "1"),
        (100.0, "", "2"),
        (1000.0, "", "3"),
    ]


def test_svg_numbers_have_two_decimals_and_no_negative_zero() -> None:
    assert [num(v) for v in (0.0, -0.001, 1.0, 2.345, 12.5, -3.256)] == [
        "0",
        "0",
        "1",
        "2.35",
        "12.5",
        "-3.26",
    ]


def test_figures_draw_each_layer_bar_and_curve() -> None:
    log = tiny()
    tl = timeline(log)
    span = makespan(run_frames(log))
    svg = allocation_figure(tl, span)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 648 ')
    drawn = len(top_users(tl, span))
    assert svg.count("<polygon") == drawn
    assert ">dominant share</text>" in svg and ">time (s)</text>" in svg
    assert allocation_figure(tl, span) == svg  # the same data, the same bytes
    f = run_frames(log)
    cdf = cdf_figure([("a", f.response), ("b", f.response)], [("a", f.queueing_delay)] * 2)
    # Two curves per panel and a legend of two line samples above both.
    assert cdf.count("<polyline") == 4
    assert cdf.count('stroke="#4e79a7" stroke-width="1.5"/>') == 1
    assert ">response time (finished jobs)</text>" in cdf
    rows = [{"bin": 0, "v": 2.0}, {"bin": 2, "v": 1.0}]
    bars = bins_figure([("x", rows), ("y", rows)], "v", "mean slowdown")
    # Four bars and two legend squares; the bins' labels as ticks.
    assert bars.count("<rect") == 6
    assert ">1-25</text>" in bars and ">51-100</text>" in bars
    loc = locality_figure([("all jobs", {"node": 0.5, "rack": 0.25, "off_rack": 0.25})])
    assert loc.count("<rect") == 3 + 3 and ">off-rack</text>" in loc


def test_empty_figures_say_why_without_ticks() -> None:
    svg = bins_figure([("x", [{"bin": 0, "v": None}])], "v", "mean slowdown")
    assert ">no finished job</text>" in svg
    assert "<rect" not in svg and "<polygon" not in svg
    assert ">no response time to show</text>" in cdf_figure(
        [("a", np.array([np.nan]))], [("a", np.array([np.nan]))]
    )


def test_report_loads_no_matplotlib() -> None:
    # matplotlib's import and savefig cost more CPU than the rest of a large run's outputs.
    code = (
        "import sys, fairshare.report; from test_report import tiny; "
        "fairshare.report.render_run(tiny()); print('matplotlib' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    )
    assert done.stdout.strip() == "False"


def test_long_legend_labels_are_cut_and_tiny_spans_get_one_tick() -> None:
    long = "u" * 300
    users = (long, "b")
    jobs = [
        JobRecord(f"j{i}", u, "root", 0.0, 1, np.array([1.0, 1.0]), 1.0, 0.0, 2.0, 1.0)
        for i, u in enumerate(users)
    ]
    attempts = [TaskAttempt(f"j{i}", u, "map", 0, 0, "m1", 0.0, 2.0) for i, u in enumerate(users)]
    log = RunLog("fair", 1, CLUSTER, users, tuple(jobs), tuple(attempts), 4, 0.1)
    svg = allocation_figure(timeline(log), 2.0)
    assert ">" + "u" * 39 + "\u2026</text>" in svg and long not in svg
    # The axes keep most of the figure's 648 points of width.
    assert svg.count("<polygon") == 2
    points = re.search(r'<polygon points="([^"]*)"', svg)
    assert points is not None
    assert max(float(pair.split(",")[0]) for pair in points.group(1).split()) > 400
    assert [t.value for t in nice_ticks(1.0, 1.0 + 1e-310, 9)] == [1.0]
