"""The scenario's ``events``: a job or a whole user cancelled at a time (Choosy section 7's
sudden leave), a machine failing or joining; validated at load, run by the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fairshare
from fairshare.cluster import Machine
from fairshare.workload import ScenarioError, parse_scenario

from conftest import assert_rejected, run_fairshare


def _data(events: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "machines": [
            {"name": "m1", "capacity": {"cpu": 2}, "rack": "r1"},
            {"name": "m2", "capacity": {"cpu": 2}, "rack": "r1"},
        ],
        "users": [{"name": "carol", "demand": {"cpu": 1}}],
        "jobs": [
            {"name": "a", "submit": 0, "user": "alice", "tasks": 4, "duration": 10},
            {"name": "b", "submit": 0, "user": "bob", "tasks": 4, "duration": 10},
            {"name": "b2", "submit": 20, "user": "bob", "tasks": 2, "duration": 10},
        ],
        "events": events,
    }


def _run(events: list[dict[str, Any]], policy: str = "drf") -> dict[str, Any]:
    run = fairshare.simulate(parse_scenario(_data(events), source="s"), policy)
    return {j.job: j for j in run.log.jobs}


def test_the_scenario_keeps_its_events_in_file_order() -> None:
    scenario = parse_scenario(
        _data(
            [
                {"at": 50, "machine_joins": {"name": "m3", "capacity": {"cpu": 4}, "rack": "r2"}},
                {"at": 30, "cancel_job": "a"},
                {"at": 60, "machine_fails": "m3"},
                {"at": 40, "cancel_user": "bob"},
            ]
        ),
        source="s",
    )
    kinds = [(e.time, e.kind) for e in scenario.events]
    assert kinds == [
        (50.0, "machine_joins"),
        (30.0, "cancel_job"),
        (60.0, "machine_fails"),
        (40.0, "cancel_user"),
    ]
    joining = scenario.events[0].target
    assert isinstance(joining, Machine)
    assert (joining.name, joining.capacity.tolist(), joining.rack) == ("m3", [4.0], "r2")


def test_a_cancelled_job_is_unfinished_and_the_others_run() -> None:
    jobs = _run([{"at": 5, "cancel_job": "a"}])
    assert jobs["a"].finish is None
    # With a's two slots free from 5, b's second wave starts then.
    assert jobs["b"].finish == 15.0
    assert jobs["b2"].finish is not None


def test_a_user_that_leaves_stops_its_jobs_and_submits_no_more() -> None:
    jobs = _run([{"at": 5, "cancel_user": "bob"}])
    assert jobs["b"].finish is None
    assert "b2" not in jobs  # submitted after bob left: never submitted, not recorded
    assert jobs["a"].finish == 15.0


def test_a_failing_machine_kills_its_tasks_and_a_joining_one_takes_work() -> None:
    jobs = _run(
        [
            {"at": 5, "machine_fails": "m2"},
            {"at": 6, "machine_joins": {"name": "m3", "capacity": {"cpu": 8}}},
        ],
        policy="fifo",
    )
    # m2's two tasks are killed at 5; at 6 the new machine runs every waiting task.
    assert jobs["a"].finish is not None and jobs["b"].finish is not None
    run = fairshare.simulate(
        parse_scenario(_data([{"at": 5, "machine_fails": "m2"}]), source="s"), "fifo"
    )
    assert run.summary["preempted_tasks"] == 2
    assert not any(a.machine == "m2" and a.start >= 5 for a in run.log.attempts)


@pytest.mark.parametrize(
    ("event", "where", "what"),
    [
        ({"at": 1, "cancel_job": "zz"}, "events[0].cancel_job", "unknown job 'zz'"),
        ({"at": 1, "cancel_user": "zz"}, "events[0].cancel_user", "unknown user 'zz'"),
        ({"at": 1, "machine_fails": "m9"}, "events[0].machine_fails", "unknown machine 'm9'"),
        (
            {"at": 1, "machine_joins": {"name": "m1", "capacity": {"cpu": 1}}},
            "events[0].machine_joins.name",
            "already in the cluster",
        ),
        (
            {"at": 1, "machine_joins": {"name": "m5", "capacity": {"gpu": 1}}},
            "events[0].machine_joins.capacity.gpu",
            "unknown resource 'gpu'",
        ),
        ({"at": -1, "cancel_job": "a"}, "events[0].at", "must be a number >= 0"),
        ({"at": 1}, "events[0]", "exactly one of cancel_job"),
        (
            {"at": 1, "cancel_job": "a", "cancel_user": "bob"},
            "events[0]",
            "got cancel_job, cancel_user",
        ),
        ({"at": 1, "explode": "a"}, "events[0].explode", "unknown field 'explode'"),
    ],
)
def test_bad_events_name_their_field(event: dict[str, Any], where: str, what: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_data([event]), source="s.yaml")
    assert err.value.where == where
    assert what in err.value.what


def test_machines_fail_only_while_they_are_in_the_cluster() -> None:
    joins = {"at": 10, "machine_joins": {"name": "m3", "capacity": {"cpu": 1}}}
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_data([joins, {"at": 10, "machine_fails": "m3"}]), source="s")
    assert err.value.where == "events[1].machine_fails"
    assert "joins at 10 s" in err.value.what
    with pytest.raises(ScenarioError) as err:
        parse_scenario(
            _data([{"at": 3, "machine_fails": "m1"}, {"at": 4, "machine_fails": "m1"}]), source="s"
        )
    assert err.value.where == "events[1].machine_fails"
    parse_scenario(_data([joins, {"at": 11, "machine_fails": "m3"}]), source="s")


def test_a_generated_workloads_names_are_checked_when_it_is_generated() -> None:
    data = {
        "machines": [{"name": "m", "count": 4, "capacity": {"slots": 2}}],
        "workload": {
            "generator": "facebook-2009",
            "jobs": 12,
            "users": 3,
            "reduce": False,
            "arrival": 2,
            "duration": 30,
        },
        "events": [{"at": 40, "cancel_job": "job07"}, {"at": 60, "cancel_user": "user2"}],
    }
    run = fairshare.simulate(parse_scenario(data, source="g"), "fair")
    jobs = {j.job: j for j in run.log.jobs}
    assert jobs["job07"].submit < 40 and jobs["job07"].finish is None
    user2 = [j for j in run.log.jobs if j.user == "user2"]
    assert user2 and all(j.finish is None or j.finish <= 60 for j in user2)
    assert any(j.finish is None for j in user2)
    for bad, where in (
        ({"at": 1, "cancel_job": "job12"}, "events[0].cancel_job"),
        ({"at": 1, "cancel_job": "job7"}, "events[0].cancel_job"),
        ({"at": 1, "cancel_user": "user3"}, "events[0].cancel_user"),
    ):
        with pytest.raises(ScenarioError) as err:
            fairshare.simulate(parse_scenario({**data, "events": [bad]}, source="g"), "fair")
        assert err.value.where == where


def test_the_command_line_runs_events_and_rejects_unknown_names(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_text(json.dumps(_data([{"at": 5, "cancel_user": "bob"}])))
    done = run_fairshare("simulate", str(path), "--policy", "drf", "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert (summary["jobs"], summary["finished_jobs"]) == (2, 1)
    path.write_text(json.dumps(_data([{"at": 5, "cancel_job": "nope"}])))
    line = assert_rejected(
        run_fairshare("simulate", str(path), "--policy", "drf", "--out", str(tmp_path / "x"))
    )
    assert line.startswith(f"error: {path}: events[0].cancel_job: unknown job 'nope'; jobs: ")
    assert not (tmp_path / "x").exists()


def test_events_are_deterministic() -> None:
    events = [{"at": 5, "machine_fails": "m1"}, {"at": 7, "cancel_job": "b"}]
    one = fairshare.simulate(parse_scenario(_data(events), source="s"), "fair", seed=3)
    two = fairshare.simulate(parse_scenario(_data(events), source="s"), "fair", seed=3)
    assert one.jobs_frame().equals(two.jobs_frame())
    assert np.isfinite(one.summary["makespan"])  # type: ignore[arg-type]
