"""Load and time scaling (``--load-scale``, ``--time-scale``, sweep options) and the summary's
bounded slowdown and Jain's fairness indexes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fairshare
from fairshare.experiments import parse_grid, run_cell
from fairshare.experiments.options import read_option
from fairshare.metrics.fairness_metrics import bounded_slowdowns, jain_index
from fairshare.sim.options import OptionError, SimOptions
from fairshare.workload import parse_scenario
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    PerTaskDurations,
    ReducePhase,
)
from fairshare.workload.scaling import scale_jobs

from conftest import assert_rejected, run_fairshare


def _data(submits: tuple[float, float] = (0, 4), duration: float = 10) -> dict[str, Any]:
    return {
        "machines": [{"name": "m", "capacity": {"slots": 2}}],
        "jobs": [
            {"name": "a", "submit": submits[0], "tasks": 4, "duration": duration},
            {"name": "b", "submit": submits[1], "tasks": 2, "duration": duration},
        ],
    }


def _rows(run: fairshare.api.Run) -> list[tuple[str, float, float | None]]:
    return [(j.job, j.submit, j.finish) for j in run.log.jobs]


def test_load_and_time_scaling_equal_the_rescaled_scenario() -> None:
    options = SimOptions(load_scale=2.0, time_scale=3.0)
    scaled = fairshare.simulate(parse_scenario(_data(), source="s"), "fair", options=options)
    by_hand = fairshare.simulate(parse_scenario(_data((0, 2), 30), source="s"), "fair")
    assert _rows(scaled) == _rows(by_hand)
    assert scaled.summary["makespan"] == by_hand.summary["makespan"] == 90.0
    assert scaled.summary["options"]["load_scale"] == 2.0  # type: ignore[index]


def test_scaling_every_kind_of_duration_and_reduce_times() -> None:
    shape = np.array([1.0])
    jobs = [
        Job("f", 8.0, "u", shape, 1, FixedDuration(2.0), reduce=ReducePhase(1, 3.0, 4.0)),
        Job("p", 8.0, "u", shape, 2, PerTaskDurations((1.0, 2.0))),
        Job("x", 8.0, "u", shape, 1, ParetoDuration(1.9, 10.0)),
        Job("e", 8.0, "u", shape, 1, ExponentialDuration(6.0), after="x", think=4.0),
    ]
    f, p, x, e = scale_jobs(jobs, load=4.0, time=0.5)
    assert (f.submit, f.duration, f.reduce) == (2.0, FixedDuration(1.0), ReducePhase(1, 1.5, 2.0))
    assert p.duration == PerTaskDurations((0.5, 1.0))
    assert x.duration == ParetoDuration(1.9, 5.0)
    assert (e.duration, e.think) == (ExponentialDuration(3.0), 1.0)


def test_a_scaled_distribution_draws_the_same_numbers_scaled() -> None:
    data = _data()
    for job in data["jobs"]:
        job["duration"] = {"pareto": {"alpha": 2.0, "min": 5}}
    scenario = parse_scenario(data, source="s")
    plain = fairshare.simulate(scenario, "fifo", seed=4).tasks_frame()
    doubled = fairshare.simulate(
        scenario, "fifo", seed=4, options=SimOptions(time_scale=2.0, load_scale=0.5)
    ).tasks_frame()
    assert np.allclose(doubled["start"].to_numpy(), 2 * plain["start"].to_numpy())
    assert np.allclose(doubled["finish"].to_numpy(), 2 * plain["finish"].to_numpy())


@pytest.mark.parametrize("field", ["load_scale", "time_scale"])
@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf"), 2e6])
def test_scales_out_of_range_are_refused(field: str, value: float) -> None:
    with pytest.raises(OptionError) as err:
        SimOptions(**{field: value})  # type: ignore[arg-type]
    assert err.value.where == field
    assert err.value.rule == "must be a number from 1e-06 to 1e+06"


def test_the_command_line_and_sweep_options(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_data()))
    done = run_fairshare(
        "simulate", str(path), "--policy", "fifo", "--load-scale", "2", "--time-scale", "0.5",
        "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert (summary["options"]["load_scale"], summary["options"]["time_scale"]) == (2.0, 0.5)
    assert summary["makespan"] == 15.0  # 30 s of FIFO work at half the durations
    line = assert_rejected(
        run_fairshare(
            "simulate", str(path), "--policy", "fifo", "--time-scale", "0",
            "--out", str(tmp_path / "x"),
        )
    )  # fmt: skip
    assert line == f"error: {path}: --time-scale: must be a number from 1e-06 to 1e+06, got 0"
    assert read_option("load-scale", 3) == (3.0, {"load_scale": 3.0})
    assert read_option("time-scale", 0.25) == (0.25, {"time_scale": 0.25})
    with pytest.raises(ValueError, match=r"must be a number from 1e-06 to 1e\+06, got 0"):
        read_option("load-scale", 0)
    with pytest.raises(ValueError, match="expected a number"):
        read_option("time-scale", "fast")


# ------------------------------------------------------------------------- metrics


def test_bounded_slowdown_follows_feitelsons_definition() -> None:
    response = np.array([3.0, 30.0, 100.0, np.nan, 5.0])
    isolated = np.array([1.0, 20.0, 50.0, 10.0, np.inf])
    # max(1, r / max(iso, 10)): 3/10 -> 1; 30/20 = 1.5; 100/50 = 2; unfinished and
    # unrunnable jobs have none.
    got = bounded_slowdowns(response, isolated)
    assert got[:3].tolist() == [1.0, 1.5, 2.0]
    assert np.isnan(got[3]) and np.isnan(got[4])
    assert bounded_slowdowns(np.array([3.0]), np.array([1.0]), tau=1.0).tolist() == [3.0]


def test_jains_index() -> None:
    assert jain_index(np.array([2.0, 2.0, 2.0])) == 1.0
    assert jain_index(np.array([1.0, 0.0])) == 0.5
    assert jain_index(np.array([1.0, 3.0, np.nan])) == pytest.approx(16 / 20)
    assert jain_index(np.array([np.nan])) is None
    assert jain_index(np.array([0.0, 0.0])) is None


def test_the_summary_has_the_new_fields() -> None:
    # FIFO on 2 slots: a (4 tasks of 10 s) 0-20, b (2 tasks, submitted at 4) 20-30.
    # Isolated responses 20 and 10; slowdowns 1 and 26/10 = 2.6.
    run = fairshare.simulate(parse_scenario(_data(), source="s"), "fifo")
    s = run.summary
    assert (s["mean_slowdown"], s["mean_bounded_slowdown"]) == (1.8, 1.8)
    assert s["p50_bounded_slowdown"] == 1.8 and s["bounded_slowdown_tau"] == 10.0
    assert s["jain_slowdown"] == pytest.approx((3.6**2) / (2 * (1 + 2.6**2)), abs=1e-6)
    # Mean shares over the 30 s makespan: a holds the cluster 0-20 (2/3), b 20-30 (1/3).
    shares = [s["users"][u]["mean_share"] for u in ("a", "b")]  # type: ignore[index]
    assert shares == pytest.approx([2 / 3, 1 / 3], abs=1e-6)
    assert s["jain_share"] == pytest.approx(1.0 / (2 * (4 / 9 + 1 / 9)), abs=1e-6)


def test_short_jobs_are_bounded() -> None:
    data = _data((0, 0), 1)
    run = fairshare.simulate(parse_scenario(data, source="s"), "fifo")
    s = run.summary
    # b waits 2 s behind a's two waves of 1 s: slowdown 3 / 1 = 3, bounded max(1, 3/10) = 1.
    assert s["p95_slowdown"] is not None and s["p95_slowdown"] > 1  # type: ignore[operator]
    assert s["mean_bounded_slowdown"] == 1.0


def test_sweep_rows_carry_the_new_fields() -> None:
    grid = parse_grid(
        {**_data(), "policies": ["fifo"], "seeds": [0], "options": {"load-scale": [1, 2]}},
        source="g",
    )
    rows = [run_cell(cell) for cell in grid.cells()]
    assert [row["load-scale"] for row in rows] == [1.0, 2.0]
    assert [row["options_load_scale"] for row in rows] == [1.0, 2.0]
    assert all(row["mean_bounded_slowdown"] is not None for row in rows)
    assert all(0 < row["jain_slowdown"] <= 1 for row in rows)  # type: ignore[operator]
