"""``fairshare whatif`` and the regression gate ``check --before/--after`` (SPEC section 8.4),
in process: the per-tenant comparison (metrics/whatif.py), the API (fairshare.whatif,
fairshare.check_change), the files (report/whatif.py) and the properties evaluated on a given
configuration (fairness/gate.py)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import fairshare
from fairshare.cli import main
from fairshare.cluster import Cluster, Machine
from fairshare.fairness import gate
from fairshare.metrics.timeline import timeline
from fairshare.metrics.whatif import (
    INTERVAL_COLUMNS,
    TENANT_COLUMNS,
    WAIT_FLOOR,
    tenant_stats,
    tenants_frame,
    wait_growth,
)
from fairshare.policies import PolicyError
from fairshare.report.figures import PALETTE, allocation_figure
from fairshare.sim.engine import SimOptions
from fairshare.workload.model import FixedDuration, Job
from fairshare.workload.trace_formats import TRACE_FORMATS, TraceFormat


def swapped(wa: float, wb: float, *, slots: int = 4) -> dict[str, Any]:
    """Two backlogged tenants with weights ``wa`` and ``wb``: six jobs of four tasks each at
    time 0 on four slots, so that the weights decide who waits."""
    return {
        "machines": [{"name": "m", "capacity": {"cpu": slots}}],
        "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
        "jobs": [
            {"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4, "duration": 10}
            for k in range(6)
            for u in "ab"
        ],
    }


def write(tmp_path: Path, name: str, document: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        else:
            code = 0
    return code, out.getvalue(), err.getvalue()


def test_weights_that_swap_name_the_tenant_that_loses_first_api(tmp_path: Path) -> None:
    """Issue 29's acceptance: a:3,b:1 becomes a:1,b:3 -> ``a`` loses first, with a positive
    delta_wait_p95; ``b`` gains as much (DRF of the one resource: 3 of 4 slots to the heavier
    tenant, so its six jobs finish by t=80 instead of t=120)."""
    before = write(tmp_path, "before", swapped(3, 1))
    after = write(tmp_path, "after", swapped(1, 3))
    result = fairshare.whatif(before, after, policy="drf")
    frame = result.tenants_frame()
    assert frame.columns[: len(TENANT_COLUMNS)] == list(TENANT_COLUMNS)
    first = frame.row(0, named=True)
    assert first["user"] == "a" and first["delta_wait_p95"] == 50.0
    assert (first["wait_p95_before"], first["wait_p95_after"]) == (57.5, 107.5)
    assert frame.row(1, named=True)["delta_wait_p95"] == -50.0
    assert result.verdicts() == (1, 1)
    gate_result = fairshare.check_change(before, after, policy="drf")
    assert not gate_result.passed
    assert [(f["kind"], f["user"]) for f in gate_result.failures] == [("wait", "a")]
    same = fairshare.check_change(before, before, policy="drf")
    assert same.passed and same.failures == ()


def test_the_files_and_their_documents(tmp_path: Path) -> None:
    result = fairshare.whatif(
        fairshare.parse_scenario(swapped(3, 1), source="before"),
        fairshare.parse_scenario(swapped(1, 3), source="after"),
        policy="drf",
    )
    doc = result.write(tmp_path / "out")
    out = tmp_path / "out"
    lines = (out / "tenants.csv").read_text().splitlines()
    assert lines[0].split(",")[: len(TENANT_COLUMNS)] == list(TENANT_COLUMNS)
    assert lines[1].startswith("a,6,30.000000,70.000000,57.500000,107.500000,")
    assert doc["tenants_worse"] == 1 and doc["tenants_better"] == 1
    assert doc["policies"] == {"before": "drf", "after": "drf"}
    assert doc["scenarios"] == {"before": "before", "after": "after"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["before"]["jobs"] == 12 and summary["after"]["makespan"] == 120.0
    assert summary["worst"]["user"] == "a" and summary["worst"]["delta_wait_p95"] == 50.0
    for run in ("before", "after"):
        assert (out / run / "jobs.csv").is_file() and (out / run / "report.html").is_file()
    page = (out / "report.html").read_text()
    assert "1 of 2 tenants wait longer at the 95th percentile" in page
    assert "Worst: a, p95 wait 57.5 s → 107.5 s (+50 s, +87%)." in page
    # Deterministic: the same runs give the same bytes.
    result.write(tmp_path / "again")
    for name in ("tenants.csv", "report.html"):
        assert (out / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


def test_share_counts_each_resource_relative_to_its_capacity() -> None:
    """x holds 2 of 4 CPUs for 10 s (5 capacity-seconds), y 1 of 2 GPUs for 20 s (10): shares
    1/3 and 2/3, whatever the units of the resources."""
    scenario = fairshare.parse_scenario(
        {
            "machines": [{"name": "m", "capacity": {"cpu": 4, "gpu": 2}}],
            "jobs": [
                {"name": "x", "submit": 0, "tasks": 1, "duration": 10, "demand": {"cpu": 2}},
                {"name": "y", "submit": 0, "tasks": 1, "duration": 20, "demand": {"gpu": 1}},
            ],
        },
        source="two-resources",
    )
    stats = tenant_stats(fairshare.simulate(scenario, "drf").log)
    assert stats.users == ("x", "y")
    assert stats.share.round(6).tolist() == [0.333333, 0.666667]


def test_a_job_that_never_starts_waits_until_the_end_of_its_run() -> None:
    """With ``until`` 15, the second job (submitted at 1, behind a 100 s job on the only slot)
    never starts: its wait counts as 15 - 1 = 14 s, not as missing."""
    scenario = fairshare.parse_scenario(
        {
            "machines": [{"name": "m", "capacity": {"slots": 1}}],
            "jobs": [
                {"name": "long", "submit": 0, "tasks": 1, "duration": 100},
                {"name": "late", "submit": 1, "tasks": 1, "duration": 1},
            ],
        },
        source="censored",
    )
    log = fairshare.simulate(scenario, "fifo", options=SimOptions(until=15.0)).log
    stats = tenant_stats(log)
    assert dict(zip(stats.users, stats.wait_p95, strict=True)) == {"long": 0.0, "late": 14.0}


def test_wait_growth_counts_a_short_wait_as_the_floor() -> None:
    assert WAIT_FLOOR == 1.0
    assert wait_growth(10.0, 15.0) == 0.5
    assert wait_growth(0.0, 0.1) == pytest.approx(0.1)
    assert wait_growth(0.0, 5.0) == 5.0
    assert wait_growth(None, 5.0) is None


def test_the_same_configuration_twice_changes_nothing() -> None:
    scenario = fairshare.parse_scenario(swapped(3, 1), source="same")
    result = fairshare.whatif(scenario, scenario, policy="drf")
    frame = result.tenants_frame()
    assert frame["delta_wait_p95"].to_list() == [0.0, 0.0]
    assert result.verdicts() == (0, 0)


def test_two_policies_on_one_configuration() -> None:
    """FIFO then DRF: ``b``'s jobs, queued behind all of ``a``'s under FIFO... a's and b's
    jobs alternate in submission order here, so what changes is each job's wait."""
    scenario = fairshare.parse_scenario(swapped(3, 1), source="one")
    result = fairshare.whatif(scenario, scenario, before_policy="fifo", after_policy="drf")
    assert [run.policy for run in result.pairs[0]] == ["fifo", "drf"]
    frame = result.tenants_frame()
    assert frame["user"].to_list() == ["a", "b"] or frame["user"].to_list() == ["b", "a"]
    deltas = dict(zip(frame["user"].to_list(), frame["delta_wait_p95"].to_list(), strict=True))
    assert deltas["b"] > 0 > deltas["a"]


def test_several_seeds_give_intervals() -> None:
    document = swapped(3, 1)
    for job in document["jobs"]:
        job["duration"] = {"exponential": {"mean": 10}}
    old = fairshare.parse_scenario(document, source="before")
    document = swapped(1, 3)
    for job in document["jobs"]:
        job["duration"] = {"exponential": {"mean": 10}}
    new = fairshare.parse_scenario(document, source="after")
    result = fairshare.whatif(old, new, policy="drf", seed=5, seeds=3)
    assert result.seeds == [5, 6, 7]
    frame = result.tenants_frame()
    assert frame.columns[-len(INTERVAL_COLUMNS) :] == list(INTERVAL_COLUMNS)
    first = frame.row(0, named=True)
    assert first["user"] == "a" and first["seeds"] == 3
    assert first["delta_wait_p95_low"] < first["delta_wait_p95"] < first["delta_wait_p95_high"]
    per_seed = [f.row(0, named=True)["delta_wait_p95"] for f in result.seed_frames()]
    assert first["delta_wait_p95"] == pytest.approx(sum(per_seed) / 3)


def test_a_run_without_a_policy_is_refused() -> None:
    scenario = fairshare.parse_scenario(swapped(3, 1), source="s")
    with pytest.raises(PolicyError) as raised:
        fairshare.whatif(scenario, scenario)
    assert raised.value.where == "policy"
    with pytest.raises(PolicyError) as raised:
        fairshare.whatif(scenario, scenario, policy="drf", seeds=0)
    assert raised.value.where == "seeds"


def test_the_command_refuses_a_missing_policy_and_writes_nothing(tmp_path: Path) -> None:
    before = write(tmp_path, "before", swapped(3, 1))
    out = tmp_path / "out"
    code, stdout, stderr = run_cli("whatif", str(before), str(before), "--out", str(out))
    assert code == 2 and stdout == ""
    assert stderr.startswith(f"error: {before}: --policy: ") and stderr.count("\n") == 1
    assert not out.exists()
    code, _, stderr = run_cli(
        "whatif", str(before), str(before), "--policy", "lottery", "--out", str(out)
    )
    assert code == 2 and ": --policy: unknown" in stderr and not out.exists()
    code, _, stderr = run_cli("check", "--before", str(before), "--policy", "drf")
    assert code == 2 and stderr.startswith("error: command line: --after: ")


def test_the_gate_on_the_command_line(tmp_path: Path) -> None:
    before = write(tmp_path, "before", swapped(3, 1))
    after = write(tmp_path, "after", swapped(1, 3))
    code, stdout, _ = run_cli(
        "check", "--before", str(before), "--after", str(after), "--policy", "drf"
    )
    assert code == 1
    assert stdout.splitlines()[0] == (
        "FAIL wait a: p95 wait 57.5 s -> 107.5 s (+87%, more than the 20% allowed)"
    )
    code, stdout, _ = run_cli(
        "check",
        "--before",
        str(before),
        "--after",
        str(after),
        "--policy",
        "drf",
        "--json",
        "--max-wait-increase",
        "1.0",
    )
    doc = json.loads(stdout)
    assert code == 0 and doc["passed"] is True and doc["failures"] == []
    assert [t["user"] for t in doc["tenants"]] == ["a", "b"]
    assert doc["tenants"][0]["growth"] == pytest.approx(50 / 57.5, abs=1e-6)
    assert {p["property"]: (p["before"], p["after"]) for p in doc["properties"]} == {
        "sharing-incentive": ("holds", "holds"),
        "envy-freeness": ("holds", "holds"),
        "pareto-efficiency": ("holds", "holds"),
    }


def test_a_property_that_fails_after_is_named_with_a_minimal_counterexample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asset fairness lacks sharing incentive (DRF section 5.1: A <1 CPU, 3 GB>, B <1, 1> on
    <30, 30>: B runs 12 tasks, its half of every resource would run 15); with equal demands it
    equals DRF and holds. The online policy is mapped to ``asset`` for the test: every online
    policy's own counterpart has the property."""
    monkeypatch.setitem(gate.SOLVER_FOR, "drf", "asset")
    jobs = [
        {
            "name": f"{u}{k}",
            "user": u,
            "submit": 0,
            "tasks": 1,
            "duration": 1,
            "demand": {"cpu": 1, "mem": 1},
        }
        for k in range(2)
        for u in "AB"
    ]
    machines = [{"name": "m1", "capacity": {"cpu": 30, "mem": 30}}]
    before = {
        "machines": machines,
        "users": [
            {"name": "A", "demand": {"cpu": 1, "mem": 3}},
            {"name": "B", "demand": {"cpu": 1, "mem": 3}},
        ],
        "jobs": jobs,
    }
    after = {**before, "users": [before["users"][0], {"name": "B", "demand": {"cpu": 1, "mem": 1}}]}
    result = fairshare.check_change(before, after, policy="drf")
    assert not result.passed
    (failure,) = result.failures
    assert failure["kind"] == "property" and failure["property"] == "sharing-incentive"
    assert "B runs 12 tasks but could run 15" in str(failure["detail"])
    counterexample = failure["counterexample"]
    assert isinstance(counterexample, dict)
    assert counterexample["solver"] == "asset"
    shrunk = counterexample["scenario"]
    assert len(shrunk["users"]) == 2 and len(shrunk["machines"]) == 1
    # The minimal scenario still violates it.
    assert gate.PROPERTIES["sharing-incentive"].violation(shrunk, "asset") is not None


def test_the_tenants_of_a_configuration_include_those_only_jobs_name() -> None:
    document = {
        "machines": [{"name": "m", "capacity": {"cpu": 4, "mem": 8}}],
        "users": [{"name": "a", "weight": 2}],
        "jobs": [
            {"name": "j1", "user": "a", "tasks": 3, "demand": {"cpu": 1, "mem": 1}},
            {"name": "j2", "user": "c", "tasks": 2, "demand": {"cpu": 2}, "queue": "q"},
            {"name": "j3", "user": "c", "tasks": 5, "demand": {"cpu": 1}},
        ],
    }
    users = gate.tenants_document(document)["users"]
    assert users == [
        {"name": "a", "weight": 2, "demand": {"cpu": 1, "mem": 1}},
        {"name": "c", "demand": {"cpu": 2}, "queue": "q", "max_tasks": 7},
    ]


def test_fifo_has_no_offline_counterpart() -> None:
    assert gate.evaluate(swapped(3, 1), "fifo") == []
    assert [v.solver for v in gate.evaluate(swapped(3, 1), "kueue")] == ["hdrf"] * 4


def test_tenants_frame_of_runs_with_other_tenants() -> None:
    """A tenant of one run only gets its values there and an undefined delta, listed last."""
    one = fairshare.parse_scenario(
        {
            "machines": [{"name": "m", "capacity": {"slots": 1}}],
            "jobs": [{"name": "x", "submit": 0, "tasks": 1, "duration": 5}],
        },
        source="one",
    )
    two = fairshare.parse_scenario(
        {
            "machines": [{"name": "m", "capacity": {"slots": 1}}],
            "jobs": [
                {"name": "x", "submit": 0, "tasks": 1, "duration": 5},
                {"name": "y", "submit": 0, "tasks": 1, "duration": 5},
            ],
        },
        source="two",
    )
    frame = tenants_frame(fairshare.simulate(one, "fifo").log, fairshare.simulate(two, "fifo").log)
    assert frame["user"].to_list() == ["x", "y"]
    assert frame.row(1, named=True)["delta_wait_p95"] is None
    assert frame.row(1, named=True)["wait_p95_after"] == 5.0


def test_a_tenant_has_one_colour_in_both_share_charts() -> None:
    """The share charts of ``report.html`` draw the same users in the same colours: the
    before run's top users, then the after run's. Here user ``b`` never runs before (no
    jobs of its own there) and is the after run's only user besides ``a``; ``a`` keeps the
    first colour in both charts."""

    def run(users: list[str]) -> Any:
        scenario = fairshare.parse_scenario(
            {
                "machines": [{"name": "m", "capacity": {"cpu": 4}}],
                "jobs": [
                    {"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 2, "duration": 10}
                    for k in range(2)
                    for u in users
                ],
            },
            source="colours",
        )
        return fairshare.simulate(scenario, "drf").log

    before, after = timeline(run(["a"])), timeline(run(["b", "a"]))
    layers = ["a", "b"]

    def legend(svg: str) -> dict[str, str]:
        pairs = re.findall(r'fill="(#[0-9a-f]{6})"/><text [^>]*>([ab])</text>', svg)
        return {name: colour for colour, name in pairs}

    old = legend(allocation_figure(before, 40.0, users=layers))
    new = legend(allocation_figure(after, 40.0, users=layers))
    assert old == {"a": PALETTE[0]}
    assert new == {"a": PALETTE[0], "b": PALETTE[1]}


def test_the_gate_takes_the_machines_a_trace_brings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Configurations that list no machines are gated on a trace whose format brings them
    (SPEC section 3), as ``simulate`` and ``whatif`` replay them: a registered test format
    whose two one-slot machines are listed beside the trace; each job is its own user (a, b).
    The properties are evaluated on the configuration with those machines."""

    def read(path: Path, cluster: Cluster) -> Any:
        for line in path.read_text().splitlines():
            name, submit, tasks, seconds = line.split()
            yield Job(
                name, float(submit), name, np.ones(1), int(tasks), FixedDuration(float(seconds))
            )

    def machines(path: Path) -> Cluster:
        names = path.with_suffix(".machines").read_text().split()
        return Cluster.build(["slot"], [Machine(n, np.array([1.0])) for n in names])

    entry = TraceFormat("pairs", "test jobs", read, "whatif.md", machines)
    monkeypatch.setitem(TRACE_FORMATS, "pairs", entry)
    trace = tmp_path / "jobs.pairs"
    trace.write_text("a 0 4 10\nb 0 4 10\n")
    (tmp_path / "jobs.machines").write_text("n0 n1\n")
    config = {"users": [{"name": "a", "weight": 1}, {"name": "b", "weight": 1}]}
    gate = fairshare.check_change(config, config, policy="drf", trace=("pairs", trace))
    assert gate.passed
    assert gate.whatif.pairs[0][0].summary["machines"] == 2
    assert [row["user"] for row in gate.whatif.tenants_frame().iter_rows(named=True)] == ["a", "b"]
