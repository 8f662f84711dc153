"""``fairshare sweep`` through the installed executable (SPEC section 7): the results, the
report, identical rows whatever ``--jobs``, a re-run that runs only the missing cells, an
interrupted sweep that goes on where it stopped, and rejected input that writes nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import fairshare
from fairshare.experiments import TIMING_COLUMNS

from conftest import (
    EXAMPLES,
    assert_rejected,
    default_signals,
    fairshare_executable,
    run_fairshare,
)

SCENARIO = """\
machines:
  - {name: a, count: 6, capacity: {slots: 2}, rack: r1}
  - {name: b, count: 6, capacity: {slots: 2}, rack: r2}
workload: {generator: facebook-2009, jobs: 12}
"""

GRID = """\
scenario: scenario.yaml
policies: [fifo, fair]
seeds: [0, 1]
options:
  delay-scheduling: [null, "5,10"]
"""


def write_grid(tmp_path: Path, grid: str = GRID, scenario: str = SCENARIO) -> Path:
    (tmp_path / "scenario.yaml").write_text(scenario)
    path = tmp_path / "grid.yaml"
    path.write_text(grid)
    return path


def sweep(grid: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_fairshare("sweep", str(grid), "--out", str(out), *args)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def stable(out: Path) -> pl.DataFrame:
    """results.parquet without the columns that vary from run to run."""
    return pl.read_parquet(out / "results.parquet").drop(TIMING_COLUMNS)


def test_a_sweep_writes_one_row_per_cell_in_the_grid_order_and_its_report(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    done = sweep(write_grid(tmp_path), out, "--jobs", "2")
    assert "ran 8 cells" in done.stdout and "in 2 worker processes" in done.stdout
    assert done.stderr == ""
    results = pl.read_parquet(out / "results.parquet")
    assert results.columns[:4] == ["scenario", "policy", "seed", "delay-scheduling"]
    assert results.select("policy", "seed", "delay-scheduling").rows() == [
        ("fifo", 0, None),
        ("fifo", 1, None),
        ("fair", 0, None),
        ("fair", 1, None),
        ("fifo", 0, "5,10"),
        ("fifo", 1, "5,10"),
        ("fair", 0, "5,10"),
        ("fair", 1, "5,10"),
    ]
    assert set(results["scenario"]) == {"scenario.yaml"}
    # Each row holds its run's summary.json: the same as simulating that cell alone.
    for policy, seed, delay in (("fair", 1, None), ("fifo", 0, (5.0, 10.0))):
        alone = fairshare.simulate(
            tmp_path / "scenario.yaml",
            policy,
            seed=seed,
            options=fairshare.SimOptions(delay=delay),
        ).summary
        swept = pl.col("delay-scheduling")
        row = results.filter(
            (pl.col("policy") == policy)
            & (pl.col("seed") == seed)
            & (swept.is_null() if delay is None else swept == "5,10")
        ).row(0, named=True)
        for field in ("makespan", "mean_response_time", "p95_slowdown", "events", "tasks"):
            assert row[field] == alone[field], (policy, seed, field)
        assert row["locality_node"] == alone["locality"]["node"]  # type: ignore[index]
        assert json.loads(row["size_bins"]) == alone["size_bins"]
    # The report: a row per policy and setting, a figure per headline statistic.
    page = (out / "sweep.html").read_text()
    for label in ("fifo, delay-scheduling=none", "fair, delay-scheduling=5,10"):
        assert f'<td class="l">{label}</td><td>2</td>' in page
    assert page.count("<svg") >= 5 and "± " in page
    marker = json.loads((out / ".fairshare-output").read_text())
    assert marker["command"] == "sweep"
    assert marker["files"] == ["cells", "results.parquet", "sweep.html"]
    assert len(list((out / "cells").glob("*.parquet"))) == 8


def test_results_do_not_depend_on_the_number_of_workers(tmp_path: Path) -> None:
    grid = write_grid(tmp_path)
    sweep(grid, tmp_path / "one", "--jobs", "1")
    sweep(grid, tmp_path / "two", "--jobs", "2")
    one, two = stable(tmp_path / "one"), stable(tmp_path / "two")
    assert one.height == 8 and one.equals(two)
    assert (tmp_path / "one" / "sweep.html").read_bytes() == (
        tmp_path / "two" / "sweep.html"
    ).read_bytes()


def test_a_rerun_runs_only_the_missing_cells_and_merges_the_same_results(
    tmp_path: Path,
) -> None:
    grid, out = write_grid(tmp_path), tmp_path / "out"
    sweep(grid, out, "--jobs", "2")
    first = pl.read_parquet(out / "results.parquet")
    files = sorted((out / "cells").glob("*.parquet"))
    removed = files[1::3]
    kept = {p: p.stat().st_mtime_ns for p in files if p not in removed}
    for file in removed:
        file.unlink()
    done = sweep(grid, out, "--jobs", "2")
    assert f"ran {len(removed)} cells" in done.stdout
    assert f"{len(kept)} were done before" in done.stdout
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    assert sorted((out / "cells").glob("*.parquet")) == files
    second = pl.read_parquet(out / "results.parquet")
    assert second.drop(TIMING_COLUMNS).equals(first.drop(TIMING_COLUMNS))
    # The kept cells' rows are the first sweep's, timing included; the re-run ones differ
    # only in their timing, if at all.
    rerun = second["cell_seconds"] != first["cell_seconds"]
    assert int(rerun.sum()) <= len(removed)
    again = sweep(grid, out)
    assert "nothing to run: all 8 cells were done before" in again.stdout
    assert pl.read_parquet(out / "results.parquet").equals(second)


SLOW_SCENARIO = """\
machines:
  - {name: a, count: 50, capacity: {slots: 4}, rack: r1}
  - {name: b, count: 50, capacity: {slots: 4}, rack: r2}
workload: {generator: facebook-2009, jobs: 150}
"""


def test_an_interrupted_sweep_goes_on_where_it_stopped(tmp_path: Path) -> None:
    grid = write_grid(
        tmp_path, "scenario: scenario.yaml\npolicies: [fifo, fair]\nseeds: 4\n", SLOW_SCENARIO
    )
    out = tmp_path / "out"
    running = subprocess.Popen(
        [fairshare_executable(), "sweep", str(grid), "--out", str(out), "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,  # noqa: PLW1509 (it only resets dispositions)
    )

    def files_written() -> int:
        # Whole files only: a cell's file has a hidden name until it is written.
        if not (out / "cells").is_dir():
            return 0
        return sum(not p.name.startswith(".") for p in (out / "cells").glob("*.parquet"))

    try:
        while not files_written():
            assert running.poll() is None, running.communicate()
            time.sleep(0.01)
        running.send_signal(signal.SIGINT)
        stdout, stderr = running.communicate(timeout=120)
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 128 + signal.SIGINT, stderr
    assert stdout == ""
    done = files_written()
    assert 1 <= done < 8
    assert stderr == (
        f"error: interrupted by SIGINT: {done} of 8 cells are done, kept in {out / 'cells'}; "
        "run the same command again to run the rest\n"
    )
    assert not (out / "results.parquet").exists()
    assert not [p for p in (out / "cells").iterdir() if p.name.startswith(".")]
    resumed = sweep(grid, out, "--jobs", "2")
    assert f"ran {8 - done} cells" in resumed.stdout
    assert f"{done} were done before" in resumed.stdout
    assert pl.read_parquet(out / "results.parquet").height == 8


def test_rejected_input_writes_nothing(tmp_path: Path) -> None:
    grid = write_grid(tmp_path, GRID.replace("[fifo, fair]", "[fifo, fiar]"))
    out = tmp_path / "out"
    line = assert_rejected(run_fairshare("sweep", str(grid), "--out", str(out)))
    assert line.startswith(f"error: {grid}: policies[1]: unknown policy 'fiar'; allowed: ")
    assert not out.exists()
    bad = write_grid(tmp_path, GRID + "parameters: {workload.jobs: [12, 0]}\n")
    line = assert_rejected(run_fairshare("sweep", str(bad), "--out", str(out)))
    assert line == (
        f"error: {bad}: parameters.workload.jobs[1]: makes the scenario invalid: "
        "workload.jobs: jobs must be a whole number >= 1, got 0"
    )
    assert not out.exists()
    good = write_grid(tmp_path)
    # Another command's output, or a directory of the user's, is not a sweep's.
    simulated = tmp_path / "simulated"
    done = run_fairshare(
        "simulate", str(EXAMPLES / "sim-two-jobs.yaml"), "-p", "fifo", "--out", str(simulated)
    )
    assert done.returncode == 0, done.stderr
    before = sorted(os.listdir(simulated))
    line = assert_rejected(run_fairshare("sweep", str(good), "--out", str(simulated)))
    assert line == (
        f"error: {simulated}: --out: holds the output of `fairshare simulate`, not of a sweep; "
        "choose a new or empty directory"
    )
    assert sorted(os.listdir(simulated)) == before
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    line = assert_rejected(run_fairshare("sweep", str(good), "--out", str(mine)))
    assert line.startswith(f"error: {mine}: --out: is not empty and holds no .fairshare-output")
    assert os.listdir(mine) == ["notes.txt"]
    line = assert_rejected(
        run_fairshare("sweep", str(good), "--out", str(out), "--executor", "slurm")
    )
    assert line == "error: command line: --executor: expected local or ray, got 'slurm'"
    line = assert_rejected(run_fairshare("sweep", str(good), "--out", str(out), "--ray", "x:1"))
    assert line == "error: command line: --ray: is the cluster of --executor ray; add it"
    assert not out.exists()


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_a_path_in_the_way_is_refused(tmp_path: Path, kind: str) -> None:
    grid, out = write_grid(tmp_path), tmp_path / "out"
    sweep(grid, out, "--jobs", "1")
    (out / "results.parquet").unlink()
    if kind == "directory":
        (out / "results.parquet").mkdir()
    else:
        for file in (out / "cells").iterdir():
            file.unlink()
        (out / "cells").rmdir()
        (out / "cells").write_text("mine")
    line = assert_rejected(run_fairshare("sweep", str(grid), "--out", str(out)))
    assert line.startswith("error: ") and ": --out: is in the way: fairshare writes" in line


_WITHOUT_RAY = """
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "ray":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Missing())
from fairshare.cli import main
main(sys.argv[1:])
"""


def test_without_the_ray_extra_a_sweep_runs_and_the_ray_executor_names_it(tmp_path: Path) -> None:
    grid = write_grid(tmp_path, GRID.replace("seeds: [0, 1]", "seeds: [0]"))
    command = [sys.executable, "-c", _WITHOUT_RAY, "sweep", str(grid)]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "local"), "--jobs", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ran 4 cells" in done.stdout
    line = assert_rejected(
        subprocess.run(
            [*command, "--out", str(tmp_path / "ray"), "--executor", "ray"],
            capture_output=True,
            text=True,
            check=False,
        )
    )
    assert line == (
        "error: command line: --executor: ray needs the [ray] extra: pip install 'fairshare[ray]'"
    )
    assert not (tmp_path / "ray").exists()


def test_a_problem_found_while_a_cell_runs_is_one_error_line(tmp_path: Path) -> None:
    # The reference schedulers take jobs of one resource; the generated jobs here demand two,
    # which only the run finds out. The sweep stops at it; the cells done before stay.
    grid = write_grid(
        tmp_path,
        "machines: [{name: m, count: 4, capacity: {cpu: 4, mem: 8}}]\n"
        "workload: {generator: facebook-2010, jobs: 5, demand: {cpu: 1, mem: 1}}\n"
        "policies: [drf, offline-restricted]\nseeds: [0]\n",
    )
    out = tmp_path / "out"
    line = assert_rejected(run_fairshare("sweep", str(grid), "--out", str(out), "--jobs", "1"))
    assert line.startswith(f"error: {grid}: jobs 'job0'.demand: the reference scheduler ")
    assert line.endswith("(policy=offline-restricted, seed=0)")
    assert not (out / "results.parquet").exists()
    assert len(list((out / "cells").glob("*.parquet"))) == 1  # drf's
