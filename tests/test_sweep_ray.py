"""``fairshare sweep --executor ray`` gives the same results as the local executor (SPEC
section 7), on a local Ray instance the sweep starts and on a cluster at an address (a
``ray.cluster_utils.Cluster``: a head without CPUs and one node with two). Marked ``ray``:
run wherever the ``[ray]`` extra is installed, skipped without it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster as RayCluster  # noqa: E402

from fairshare.experiments import TIMING_COLUMNS  # noqa: E402

from conftest import assert_rejected, run_fairshare  # noqa: E402

pytestmark = pytest.mark.ray

GRID = """\
machines:
  - {name: a, count: 4, capacity: {slots: 2}, rack: r1}
  - {name: b, count: 4, capacity: {slots: 2}, rack: r2}
workload: {generator: facebook-2009, jobs: 8}
policies: [fifo, drf]
seeds: [0, 1]
options:
  delay-scheduling: [null, "5,10"]
parameters:
  workload.arrival: [10, 30]
"""


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("grid") / "grid.yaml"
    path.write_text(GRID)
    return path


@pytest.fixture(scope="module")
def local_results(grid: Path) -> tuple[pl.DataFrame, bytes]:
    out = grid.parent / "local"
    done = run_fairshare("sweep", str(grid), "--out", str(out), "--jobs", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    frame = pl.read_parquet(out / "results.parquet")
    assert frame.height == 16
    return frame.drop(TIMING_COLUMNS), (out / "sweep.html").read_bytes()


@pytest.fixture
def cluster() -> Iterator[RayCluster]:
    made = RayCluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    made.add_node(num_cpus=2)
    made.wait_for_nodes()
    try:
        yield made
    finally:
        made.shutdown()


def test_a_local_ray_instance_gives_the_local_executors_results(
    grid: Path, local_results: tuple[pl.DataFrame, bytes], tmp_path: Path
) -> None:
    out = tmp_path / "ray"
    done = run_fairshare("sweep", str(grid), "--out", str(out), "--executor", "ray", "--jobs", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ran 16 cells" in done.stdout and "on a local Ray instance" in done.stdout
    frame, page = local_results
    assert pl.read_parquet(out / "results.parquet").drop(TIMING_COLUMNS).equals(frame)
    assert (out / "sweep.html").read_bytes() == page


def test_a_ray_cluster_gives_the_local_executors_results_and_resumes(
    grid: Path, local_results: tuple[pl.DataFrame, bytes], tmp_path: Path, cluster: RayCluster
) -> None:
    out = tmp_path / "ray"
    argv = ["sweep", str(grid), "--out", str(out), "--executor", "ray", "--ray", cluster.address]
    done = run_fairshare(*argv)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"on Ray at {cluster.address}" in done.stdout
    frame, _ = local_results
    assert pl.read_parquet(out / "results.parquet").drop(TIMING_COLUMNS).equals(frame)
    # Parts written by the Ray run serve a local re-run, which runs only what is missing.
    files = sorted((out / "cells").glob("*.parquet"))
    for file in files[:3]:
        file.unlink()
    again = run_fairshare("sweep", str(grid), "--out", str(out), "--jobs", "1")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "ran 3 cells" in again.stdout and "13 were done before" in again.stdout
    assert pl.read_parquet(out / "results.parquet").drop(TIMING_COLUMNS).equals(frame)


def test_an_address_where_no_cluster_answers_is_one_error_line(grid: Path, tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on once this socket is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "out"
    line = assert_rejected(
        run_fairshare(
            "sweep", str(grid), "--out", str(out), "--executor", "ray", "--ray", f"127.0.0.1:{port}"
        )
    )
    assert line.startswith(
        f"error: command line: --ray: no Ray cluster answers at 127.0.0.1:{port} ("
    )
    assert not out.exists()
