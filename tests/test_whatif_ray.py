"""``fairshare whatif --executor ray`` makes its runs as Ray tasks, as a sweep does (SPEC
section 8.4, issue 29), and gives the answer of the runs made in this process: on a
``ray.cluster_utils.Cluster`` (a head without CPUs and one node with two) at its address.
Marked ``ray``: run wherever the ``[ray]`` extra is installed, skipped without it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster as RayCluster  # noqa: E402

from conftest import run_fairshare  # noqa: E402

pytestmark = pytest.mark.ray


def _scenario(wa: float, wb: float) -> dict[str, Any]:
    return {
        "machines": [{"name": "m", "capacity": {"cpu": 4}}],
        "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
        "jobs": [
            {"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4, "duration": 10}
            for k in range(6)
            for u in "ab"
        ],
    }


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


def test_a_ray_cluster_gives_the_answer_of_this_process(
    tmp_path: Path, cluster: RayCluster
) -> None:
    """Weights 3:1 then 1:3, two seeds: four runs on the cluster's two CPUs; tenants.csv and
    the runs' files are byte for byte those of the runs made here, and ``a`` loses first."""
    before, after = tmp_path / "before.yaml", tmp_path / "after.yaml"
    before.write_text(yaml.safe_dump(_scenario(3, 1)))
    after.write_text(yaml.safe_dump(_scenario(1, 3)))
    common = [str(before), str(after), "--policy", "drf", "--seeds", "2"]
    here = run_fairshare("whatif", *common, "--out", str(tmp_path / "here"))
    assert here.returncode == 0, here.stderr
    argv = [*common, "--executor", "ray", "--ray", cluster.address, "--out", str(tmp_path / "ray")]
    done = run_fairshare("whatif", *argv)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"making 4 runs on Ray at {cluster.address}" in done.stderr
    for name in ("tenants.csv", "before/jobs.csv", "after/jobs.csv", "after/timeline.csv"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()
    rows = (tmp_path / "ray" / "tenants.csv").read_text().splitlines()
    assert rows[1].startswith("a,")
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert (summary["tenants_worse"], summary["tenants_better"]) == (1, 1)
