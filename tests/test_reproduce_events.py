"""The targets that need scenario events, closed-loop jobs and hot files (Choosy Figures
10-12, FAIR Figure 15, H-DRF Figure 11's closed loop, FAIR Figures 13-14's shared data set),
and the cells targets share, at tiny scales."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from fairshare.experiments.reproduce import run_target
from fairshare.experiments.targets import target
from fairshare.workload import parse_scenario


def _scenario(name: str, scale: float, label: str | None = None) -> dict[str, object]:
    """The first (or the labelled) part's scenario of ``name``'s grid, as a document."""
    build = target(name).build
    assert build is not None
    parts = build(scale, (0,))
    chosen = next(p for p in parts if label is None or p.label == label)
    return json.loads(json.dumps(chosen.grid.variants[0].document))


def test_choosy_flow_users_leave_suddenly_by_cancel_events() -> None:
    scenario = _scenario("choosy-fig10-12", 0.2)
    events = scenario["events"]
    assert isinstance(events, list) and len(events) == 9
    assert [e["cancel_user"] for e in events] == [f"user{u}" for u in range(9)]
    assert [e["at"] for e in events] == [20.0 + 2 * u for u in range(9)]
    jobs = scenario["jobs"]
    assert isinstance(jobs, list)
    assert [j["submit"] for j in jobs] == [2.0 * u for u in range(9)]
    parse_scenario(scenario, source="choosy-fig10-12")


def test_choosy_flow_matches_the_papers_directions(tmp_path: Path) -> None:
    result = run_target(target("choosy-fig10-12"), tmp_path, scale=0.2, seeds=(0, 1), jobs=1)
    rows = {row.metric.split(" (")[0].split(", below our")[0]: row for row in result.rows}
    join = rows["RMSE vs preemption, joins over leaves"]
    assert join.ours is not None and join.ours > 1.5
    restricted = rows["mean RMSE vs restricted offline"]
    assert restricted.ours is not None and 0 < restricted.ours < 0.05
    leaves = rows["RMSE vs preemption while users leave"]
    assert leaves.ours is not None and leaves.ours < 0.05
    # Figure 12: Choosy stays closer to the ideal offline allocation than the periodic
    # offline scheduler, which converges to one particular plan.
    hybrid = rows["RMSE from the ideal, Choosy over periodic offline"]
    assert hybrid.ours is not None and 0 < hybrid.ours < 1


def test_fair_io_rate_biasing_chains_jobs_on_one_hot_file() -> None:
    scenario = _scenario("fair-fig15", 0.1)
    jobs = scenario["jobs"]
    assert isinstance(jobs, list)
    assert {j["input"]["file"] for j in jobs} == {"hot"}
    heads = [j for j in jobs if "submit" in j]
    assert len(heads) == 20 and all(j["submit"] == 0 for j in heads)
    follower = next(j for j in jobs if j["name"] == "scan-3-1")
    assert follower["after"] == "scan-3-0" and "submit" not in follower
    build = target("fair-fig15").build
    assert build is not None
    parts = {p.label: p for p in build(0.1, (0,))}
    biased = parts["IO-rate biasing"]
    delays = biased.grid.cells()[0].options.job_delays
    assert delays and set(delays.values()) == {(0.0, 0.0)}
    assert all(name.startswith("compute-") for name in delays)
    cell = parts["untuned delay"].grid.cells()[0]
    assert cell.options.delay == (10.0, 10.0) and not cell.options.job_delays
    assert cell.options.until == 60.0


def test_fair_io_rate_biasing_untuned_delay_is_worst(tmp_path: Path) -> None:
    result = run_target(target("fair-fig15"), tmp_path, scale=0.25, seeds=(0,), jobs=1)
    rows = {row.metric: row for row in result.rows}
    worst = rows["jobs completed, scan jobs: untuned delay over no delay (worst)"]
    assert worst.ours is not None and worst.ours < 1
    over_untuned = rows["jobs completed, compute jobs: IO-rate biasing over untuned delay"]
    assert over_untuned.ours is not None and over_untuned.ours > 1


def test_hdrf_fig11_leaves_submit_closed_loop() -> None:
    jobs = _scenario("hdrf-fig11", 0.1)["jobs"]
    assert isinstance(jobs, list)
    by_leaf: dict[str, list[dict[str, object]]] = {}
    for job in jobs:
        by_leaf.setdefault(str(job["user"]), []).append(job)
    for leaf_jobs in by_leaf.values():
        assert leaf_jobs[0]["submit"] == 0 and "after" not in leaf_jobs[0]
        for previous, job in itertools.pairwise(leaf_jobs):
            assert job["after"] == previous["name"] and "submit" not in job


def test_sticky_slots_jobs_scan_one_data_set_with_varied_map_times() -> None:
    jobs = _scenario("fair-fig13-14", 0.1, "5 jobs")["jobs"]
    assert isinstance(jobs, list) and len(jobs) == 5
    assert {j["input"]["file"] for j in jobs} == {"dataset"}
    assert all(j["tasks"] == 144 for j in jobs)
    assert all(j["duration"] == {"exponential": {"mean": 10}} for j in jobs)


@pytest.mark.parametrize("first", ["choosy-table1", "choosy-fig8"])
def test_choosy_macro_targets_share_their_cells(first: str, tmp_path: Path) -> None:
    done = run_target(target(first), tmp_path, scale=0.03, seeds=(0,), jobs=1)
    assert done.ran == 3 and done.reused == 0
    for other in ("choosy-table1", "choosy-fig8", "choosy-table2"):
        if other == first:
            continue
        again = run_target(target(other), tmp_path, scale=0.03, seeds=(0,), jobs=1)
        assert (again.ran, again.reused) == (0, 3)
        cells = sorted(p.name for p in (tmp_path / other / "sweep" / "cells").iterdir())
        assert cells == sorted(p.name for p in (tmp_path / first / "sweep" / "cells").iterdir())
