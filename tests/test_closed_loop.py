"""Closed-loop submitters: a job submitted ``think`` seconds after the job it follows ends
(FAIR section 6.3's users that keep submitting), from the scenario (``after``/``think``) and
from a generator (``closed_loop: {think: S}``)."""

from __future__ import annotations

import dataclasses
import json
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import fairshare
from fairshare.sim import JobEvent, SimulationError, simulate
from fairshare.workload import ScenarioError, parse_scenario
from fairshare.workload.generators import Workload, generate
from fairshare.workload.model import FixedDuration, Job, WorkloadSpec

from conftest import assert_rejected, run_fairshare


def _chain() -> dict[str, object]:
    return {
        "machines": [{"name": "m", "capacity": {"slots": 2}}],
        "jobs": [
            {"name": "a1", "submit": 0, "user": "alice", "tasks": 2, "duration": 10},
            {"name": "b", "submit": 5, "user": "bob", "tasks": 4, "duration": 10},
            {"name": "a2", "after": "a1", "think": 3, "user": "alice", "tasks": 2, "duration": 10},
            {"name": "a3", "after": "a2", "user": "alice", "tasks": 1, "duration": 10},
        ],
    }


def test_each_job_is_submitted_think_seconds_after_the_one_it_follows_ends() -> None:
    run = fairshare.simulate(parse_scenario(_chain(), source="s"), "fifo")
    jobs = {j.job: j for j in run.log.jobs}
    # FIFO on 2 slots: a1 0-10; b 10-30 (two waves); a2 arrives at 13, runs 30-40; a3 at 40.
    assert (jobs["a1"].submit, jobs["a1"].finish) == (0.0, 10.0)
    assert (jobs["b"].first_start, jobs["b"].finish) == (10.0, 30.0)
    assert (jobs["a2"].submit, jobs["a2"].first_start, jobs["a2"].finish) == (13.0, 30.0, 40.0)
    assert (jobs["a3"].submit, jobs["a3"].finish) == (40.0, 50.0)
    # Jobs are numbered by submission: the log lists them in that order.
    assert [j.job for j in run.log.jobs] == ["a1", "b", "a2", "a3"]


def test_the_policy_changes_when_a_closed_loop_job_arrives() -> None:
    run = fairshare.simulate(parse_scenario(_chain(), source="s"), "fair")
    jobs = {j.job: j for j in run.log.jobs}
    # Fair sharing gives a2 a slot as soon as one frees after its arrival at 13: at 20.
    assert jobs["a2"].submit == 13.0 and jobs["a2"].first_start == 20.0


def test_a_cancelled_job_releases_its_follower() -> None:
    scenario = parse_scenario(_chain(), source="s")
    events = [JobEvent(4.0, "cancel", "a1")]
    workload = fairshare.workload_of(scenario)
    log = simulate(workload.cluster, workload.jobs, "fifo", seed=0, job_events=events)
    jobs = {j.job: j for j in log.jobs}
    assert jobs["a1"].finish is None
    assert jobs["a2"].submit == 7.0


def test_a_job_that_follows_an_unknown_or_later_job_is_rejected() -> None:
    data = _chain()
    jobs = data["jobs"]
    assert isinstance(jobs, list)
    jobs[2]["after"] = "a3"
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, source="s.yaml")
    assert err.value.where == "jobs[2].after"
    assert "unknown job 'a3'" in err.value.what


@pytest.mark.parametrize(
    ("change", "where", "what"),
    [
        ({"submit": 3}, "jobs[2].submit", "give 'think'"),
        ({"think": -1}, "jobs[2].think", "must be a number >= 0"),
    ],
)
def test_bad_closed_loop_fields(change: dict[str, object], where: str, what: str) -> None:
    data = _chain()
    jobs = data["jobs"]
    assert isinstance(jobs, list)
    jobs[2].update(change)
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, source="s.yaml")
    assert err.value.where == where
    assert what in err.value.what


def test_think_needs_after_and_submit_is_required_without_it() -> None:
    base = {"machines": [{"name": "m", "capacity": {"slots": 1}}]}
    job = {"name": "a", "tasks": 1, "duration": 1}
    with pytest.raises(ScenarioError) as err:
        parse_scenario({**base, "jobs": [job]}, source="s")
    assert (err.value.where, err.value.what) == (
        "jobs[0].submit",
        "missing required field 'submit'",
    )
    with pytest.raises(ScenarioError) as err:
        parse_scenario({**base, "jobs": [{**job, "submit": 0, "think": 2}]}, source="s")
    assert err.value.where == "jobs[0].think"


def test_the_engine_refuses_a_stream_where_a_follower_comes_first() -> None:
    cluster = parse_scenario(_chain(), source="s").cluster
    shape = np.array([1.0])
    jobs = [
        Job("f", 0.0, "u", shape, 1, FixedDuration(1.0), after="p"),
        Job("p", 0.0, "u", shape, 1, FixedDuration(1.0)),
    ]
    with pytest.raises(SimulationError) as err:
        simulate(cluster, jobs, "fifo", seed=0)
    assert err.value.where == "jobs[0].after"


def _cluster() -> fairshare.Scenario:
    return parse_scenario(
        {"machines": [{"name": "m", "count": 4, "capacity": {"slots": 4}}]}, source="c"
    )


def test_generated_closed_loop_users_run_one_job_at_a_time() -> None:
    scenario = _cluster()
    spec = WorkloadSpec(
        "facebook-2009",
        {"jobs": 40, "users": 3, "closed_loop": {"think": 7}, "reduce": False, "duration": 5},
    )
    jobs = list(generate(spec, scenario.cluster, np.random.default_rng(2)).jobs)
    assert len(jobs) == 40
    firsts = [j for j in jobs if j.after is None]
    assert len(firsts) == len({j.user for j in jobs}) <= 3
    run = fairshare.api.replay(scenario, Workload(iter(jobs), scenario.cluster), "fair")
    by_user: dict[str, list[fairshare.runlog.JobRecord]] = {}
    for record in run.log.jobs:
        by_user.setdefault(record.user, []).append(record)
    assert sum(len(records) for records in by_user.values()) == 40
    for records in by_user.values():
        records.sort(key=lambda r: r.submit)
        for before, after in pairwise(records):
            assert before.finish is not None
            assert after.submit == pytest.approx(before.finish + 7.0)


def test_closed_loop_needs_users_and_a_think_time() -> None:
    cluster = _cluster().cluster
    for params, where in (
        ({"closed_loop": {"think": 7}}, "workload.closed_loop"),
        ({"closed_loop": {"think": -1}, "users": 2}, "workload.closed_loop.think"),
        ({"closed_loop": 3, "users": 2}, "workload.closed_loop"),
    ):
        with pytest.raises(ScenarioError) as err:
            generate(WorkloadSpec("zipf", {"jobs": 3, **params}), cluster, np.random.default_rng(0))
        assert err.value.where == where


def test_the_command_line_runs_a_closed_loop_scenario(tmp_path: Path) -> None:
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(_chain()))
    done = run_fairshare("simulate", str(path), "--policy", "fifo", "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert (summary["jobs"], summary["finished_jobs"], summary["makespan"]) == (4, 4, 50.0)
    data = _chain()
    jobs = data["jobs"]
    assert isinstance(jobs, list)
    jobs[3]["after"] = "nobody"
    path.write_text(json.dumps(data))
    line = assert_rejected(
        run_fairshare("simulate", str(path), "--policy", "fifo", "--out", str(tmp_path / "x"))
    )
    assert line.startswith(f"error: {path}: jobs[3].after: unknown job 'nobody'")


def test_a_follower_submitted_at_its_time_equals_dataclasses_replace() -> None:
    """``Job.submitted_at`` (the run's copy of a follower at its submission) has every field
    of ``dataclasses.replace(job, submit=...)``, each the same object but ``submit``."""
    job = Job(
        "j",
        0.0,
        "u",
        np.array([1.0, 2.0]),
        3,
        FixedDuration(4.0),
        priority=2,
        after_all=("a", "b"),
        think=1.5,
        estimate=9.0,
    )
    later = job.submitted_at(7.5)
    expected = dataclasses.replace(job, submit=7.5)
    assert type(later) is Job and later.submit == 7.5 and job.submit == 0.0
    for f in dataclasses.fields(Job):
        if f.name != "submit":
            assert getattr(later, f.name) is getattr(expected, f.name), f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        later.submit = 1.0  # type: ignore[misc]


def test_a_trace_task_made_with_of_task_equals_the_constructor() -> None:
    """``Job.of_task`` (the trace readers' fast path) makes the job the constructor makes:
    equal, the same field objects, the fields in the same order."""
    demand = np.array([0.5, 1.0])
    duration = FixedDuration(30.0)
    fast = Job.of_task("j_1/M2_1", 4.0, "j_1", demand, 7, duration, ("j_1/M1",))
    made = Job("j_1/M2_1", 4.0, "j_1", demand, 7, duration, after_all=("j_1/M1",))
    assert fast == made and type(fast) is Job
    assert list(vars(fast)) == list(vars(made))
    for name, value in vars(made).items():
        assert vars(fast)[name] is value or vars(fast)[name] == value, name
