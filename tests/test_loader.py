"""The scenario loader (SPEC sections 1 and 4): valid files build the right objects; every kind
of bad input is rejected with one ``error: FILE: WHERE: WHAT`` line naming the field."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from fairshare.cluster.constraints import Constraint
from fairshare.workload.loader import ScenarioError, load_scenario, parse_scenario
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    ParetoDuration,
    PerTaskDurations,
    ReducePhase,
    Scenario,
)
from fairshare.workload.yaml_reading import read_yaml_documents

FULL_YAML = """\
resources: [cpu, mem, gpu]
machines:
  - name: m1
    capacity: {cpu: 9, mem: 12}
    rack: r1
    attributes: {gpu: false, kernel: "5.4", public_ip: true}
  - name: web
    count: 3
    capacity: {cpu: 1, mem: 1.5}
    rack: r2
  - {name: g1, capacity: {cpu: 8, mem: 64, gpu: 4}, attributes: {gpu: true, cores: 8}}
queues:
  - {path: ads, weight: 4}
  - {path: ads/prod, weight: 7}
  - {path: dev, weight: 1, min_share: 10, max_share: 50}
users:
  - name: u1
    demand: {cpu: 1, mem: 2}
    weight: 2
    queue: ads/prod
    max_tasks: 100
    min_share: 20
    max_share: 60
    machines: [m1, web-0]
  - {name: u2, demand: {gpu: 1, cpu: 0.5}, queue: dev}
jobs:
  - name: j1
    submit: 0
    user: u1
    queue: ads/prod
    weight: 1
    demand: {cpu: 1, mem: 2}
    tasks: 3
    duration: 20
    input: {replicas: 3}
    reduce: {tasks: 5, copy: 10, compute: 60}
  - {name: j2, submit: 5.5, demand: {cpu: 1}, tasks: 2, duration: [1, 2.5]}
  - {name: j3, submit: 7, demand: {cpu: 1}, tasks: 4, duration: {pareto: {alpha: 1.9, min: 10}}}
  - {name: j4, submit: 9, demand: {cpu: 1}, tasks: 1, duration: {exponential: {mean: 30}}}
workload: {generator: facebook-2009, jobs: 100, seed_shift: 3}
"""

ONE_MACHINE: dict[str, Any] = {"machines": [{"name": "m1", "capacity": {"cpu": 4, "mem": 8}}]}


def canonical(value: object) -> object:
    """Domain objects as plain, comparable data (numpy arrays do not compare with ==)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "type": type(value).__name__,
            **{f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    return value


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def load_error(tmp_path: Path, text: str, name: str = "scenario.yaml") -> ScenarioError:
    path = write(tmp_path, text, name)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.file == str(path)
    return info.value


def parse_error(data: object) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data, "s.yaml")
    return info.value


def with_changes(**sections: Any) -> dict[str, Any]:
    data = copy.deepcopy(ONE_MACHINE)
    data.update(copy.deepcopy(sections))
    return data


# ------------------------------------------------------------------------------------------
# Valid scenarios


def test_full_scenario_builds_every_field(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, FULL_YAML))
    assert isinstance(scenario, Scenario)
    assert scenario.source == str(tmp_path / "scenario.yaml")
    cluster = scenario.cluster
    assert cluster.resources == ("cpu", "mem", "gpu")
    assert cluster.machine_names == ("m1", "web-0", "web-1", "web-2", "g1")
    assert cluster.capacities.tolist()[0] == [9.0, 12.0, 0.0]
    assert cluster.total.tolist() == [20.0, 80.5, 4.0]
    m1 = cluster.machines[0]
    assert m1.rack == "r1"
    assert dict(m1.attributes) == {"gpu": False, "kernel": "5.4", "public_ip": True}

    assert [(q.path, q.weight, q.min_share, q.max_share) for q in scenario.queues] == [
        ("ads", 4.0, 0.0, math.inf),
        ("ads/prod", 7.0, 0.0, math.inf),
        ("dev", 1.0, 10.0, 50.0),
    ]
    u1, u2 = scenario.users
    assert u1.demand.dtype == np.float64
    assert u1.demand.tolist() == [1.0, 2.0, 0.0]
    assert (u1.weight, u1.queue, u1.max_tasks, u1.min_share, u1.max_share) == (
        2.0,
        "ads/prod",
        100.0,
        20.0,
        60.0,
    )
    assert u1.machines == frozenset({"m1", "web-0"})
    assert u1.constraint is None
    assert u2.demand.tolist() == [0.5, 0.0, 1.0]
    assert (u2.weight, u2.queue, u2.max_tasks, u2.max_share, u2.machines) == (
        1.0,
        "dev",
        math.inf,
        math.inf,
        None,
    )
    assert scenario.demands.shape == (2, 3)

    j1, j2, j3, j4 = scenario.jobs
    assert (j1.user, j1.queue, j1.tasks, j1.input_replicas) == ("u1", "ads/prod", 3, 3)
    assert j1.duration == FixedDuration(20.0)
    assert j1.reduce == ReducePhase(tasks=5, copy=10.0, compute=60.0)
    assert (j2.user, j2.queue, j2.submit) == ("j2", "", 5.5)
    assert j2.duration == PerTaskDurations((1.0, 2.5))
    assert j3.duration == ParetoDuration(alpha=1.9, minimum=10.0)
    assert j4.duration == ExponentialDuration(mean=30.0)
    assert j4.input_replicas is None and j4.reduce is None

    assert scenario.workload is not None
    assert scenario.workload.generator == "facebook-2009"
    assert dict(scenario.workload.params) == {"jobs": 100, "seed_shift": 3}


def test_yaml_and_json_give_equal_scenarios(tmp_path: Path) -> None:
    from_yaml = load_scenario(write(tmp_path, FULL_YAML))
    data = yaml.safe_load(FULL_YAML)
    from_json = load_scenario(write(tmp_path, json.dumps(data, indent=2), "scenario.json"))
    # no suffix: JSON because the text starts with '{'
    sniffed = load_scenario(write(tmp_path, json.dumps(data), "scenario"))
    from_dict = parse_scenario(data, str(tmp_path / "scenario.yaml"))
    expected = canonical(dataclasses.replace(from_yaml, source=""))
    for other in (from_json, sniffed, from_dict):
        assert canonical(dataclasses.replace(other, source="")) == expected


def test_count_expands_to_numbered_machines() -> None:
    scenario = parse_scenario(
        {
            "machines": [
                {
                    "name": "web",
                    "count": 3,
                    "capacity": {"cpu": 2},
                    "rack": "r7",
                    "attributes": {"ssd": True},
                },
                {"name": "db", "capacity": {"cpu": 8}},
            ]
        },
        "s.yaml",
    )
    machines = scenario.cluster.machines
    assert [m.name for m in machines] == ["web-0", "web-1", "web-2", "db"]
    for machine in machines[:3]:
        assert machine.capacity.tolist() == [2.0]
        assert machine.rack == "r7"
        assert dict(machine.attributes) == {"ssd": True}


def test_default_resources_in_first_seen_order() -> None:
    scenario = parse_scenario(
        {
            "machines": [
                {"name": "a", "capacity": {"mem": 4, "cpu": 1}},
                {"name": "b", "capacity": {"gpu": 1, "cpu": 2}},
                {"name": "c", "capacity": {"disk": 0}},
            ]
        },
        "s.yaml",
    )
    assert scenario.cluster.resources == ("mem", "cpu", "gpu", "disk")
    assert scenario.cluster.capacities.tolist() == [
        [4.0, 1.0, 0.0, 0.0],
        [0.0, 2.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ]


def test_default_demand_is_one_unit_on_a_one_resource_cluster() -> None:
    scenario = parse_scenario(
        {
            "machines": [{"name": "c", "capacity": {"slots": 100}}],
            "users": [{"name": "pool1"}, {"name": "pool2", "demand": {"slots": 2}}],
            "jobs": [{"name": "j", "submit": 0, "tasks": 1, "duration": 1}],
        },
        "s.yaml",
    )
    assert [u.demand.tolist() for u in scenario.users] == [[1.0], [2.0]]
    assert scenario.jobs[0].demand.tolist() == [1.0]


def test_demand_is_required_with_several_resources() -> None:
    err = parse_error(with_changes(users=[{"name": "u"}]))
    assert err.where == "users[0].demand"
    assert "missing required field 'demand'" in err.what
    assert "cpu, mem" in err.what


def test_integral_floats_are_accepted_where_integers_are_required() -> None:
    scenario = parse_scenario(
        with_changes(
            machines=[{"name": "w", "count": 2.0, "capacity": {"cpu": 1}}],
            jobs=[{"name": "j", "submit": 0, "demand": {"cpu": 1}, "tasks": 2.0, "duration": 1}],
        ),
        "s.yaml",
    )
    assert scenario.cluster.machine_names == ("w-0", "w-1")
    assert scenario.jobs[0].tasks == 2
    assert isinstance(scenario.jobs[0].tasks, int)


def test_zero_demand_for_a_resource_no_machine_has_is_allowed() -> None:
    scenario = parse_scenario(
        {
            "resources": ["cpu", "gpu"],
            "machines": [{"name": "m", "capacity": {"cpu": 4}}],
            "users": [{"name": "u", "demand": {"cpu": 1, "gpu": 0}}],
        },
        "s.yaml",
    )
    assert scenario.users[0].demand.tolist() == [1.0, 0.0]


def test_null_sections_are_empty() -> None:
    scenario = parse_scenario(with_changes(queues=None, users=None, jobs=None), "s.yaml")
    assert (scenario.queues, scenario.users, scenario.jobs, scenario.workload) == ((), (), (), None)


def test_scenario_error_format() -> None:
    err = ScenarioError("a.yaml", "machines[3].capacity.cpu", "must be a number >= 0, got -3")
    assert str(err) == "error: a.yaml: machines[3].capacity.cpu: must be a number >= 0, got -3"
    assert (err.file, err.where, err.what) == (
        "a.yaml",
        "machines[3].capacity.cpu",
        "must be a number >= 0, got -3",
    )


def test_examples_load(examples_dir: Path) -> None:
    for path in sorted(examples_dir.glob("*.yaml")):
        assert load_scenario(path).cluster.machines


# ------------------------------------------------------------------------------------------
# Constraints (need fairshare.cluster.constraints.parse_constraint)


def test_constraint_is_parsed_and_combined_with_whitelist() -> None:
    scenario = parse_scenario(
        with_changes(
            machines=[
                {"name": "a", "capacity": {"cpu": 1}, "rack": "r1", "attributes": {"gpu": True}},
                {"name": "b", "capacity": {"cpu": 1}, "rack": "r3", "attributes": {"gpu": True}},
                {"name": "c", "capacity": {"cpu": 1}, "rack": "r1"},
            ],
            users=[
                {"name": "u", "constraint": "gpu and rack != 'r3'"},
                {"name": "v", "constraint": "gpu", "machines": ["b", "c"]},
            ],
        ),
        "s.yaml",
    )
    assert isinstance(scenario.users[0].constraint, Constraint)
    assert scenario.eligibility().tolist() == [[True, False, False], [False, True, False]]


def test_constraint_matching_no_machine_is_valid() -> None:
    scenario = parse_scenario(
        with_changes(users=[{"name": "u", "demand": {"cpu": 1}, "constraint": "fpga"}]),
        "s.yaml",
    )
    assert scenario.eligibility().tolist() == [[False]]


@pytest.mark.parametrize("text", ["__import__('os')", "gpu and", "rack == "])
def test_bad_constraint_is_rejected_with_its_column(text: str) -> None:
    err = parse_error(
        with_changes(
            users=[
                {"name": "ok", "demand": {"cpu": 1}},
                {"name": "u", "demand": {"cpu": 1}, "constraint": "gpu"},
                {"name": "bad", "demand": {"cpu": 1}, "constraint": text},
            ]
        )
    )
    assert err.where == "users[2].constraint"
    assert err.what.startswith("column ")
    column = int(err.what.split(":")[0].removeprefix("column "))
    assert 1 <= column <= len(text) + 1


def test_bad_job_constraint() -> None:
    job = {"name": "j", "submit": 0, "demand": {"cpu": 1}, "tasks": 1, "duration": 1}
    err = parse_error(with_changes(jobs=[{**job, "constraint": "__import__('os')"}]))
    assert err.where == "jobs[0].constraint"
    assert err.what.startswith("column ")


# ------------------------------------------------------------------------------------------
# Bad structure and numbers, one case per kind: (data, WHERE, words WHAT must contain)

USER = {"name": "u", "demand": {"cpu": 1}}
JOB = {"name": "j", "submit": 0, "demand": {"cpu": 1}, "tasks": 2, "duration": 5}
MACHINE = {"name": "m1", "capacity": {"cpu": 4, "mem": 8}}

BAD: dict[str, tuple[object, str, list[str]]] = {
    "missing machines": ({"users": [USER]}, "machines", ["missing required field 'machines'"]),
    "no machines": ({"machines": []}, "machines", ["at least one machine"]),
    "missing machine name": (
        {"machines": [{"capacity": {"cpu": 1}}]},
        "machines[0].name",
        ["missing required field 'name'"],
    ),
    "missing capacity": (
        {"machines": [{"name": "m"}]},
        "machines[0].capacity",
        ["missing required field 'capacity'"],
    ),
    "unknown machine field": (
        {"machines": [{"name": "m", "capacty": {"cpu": 1}}]},
        "machines[0].capacty",
        ["unknown field 'capacty'", "allowed: name, capacity, rack, attributes, count"],
    ),
    "unknown top-level field": (
        with_changes(user=[USER]),
        "user",
        ["unknown field 'user'", "allowed: resources, machines, queues, users, jobs, workload"],
    ),
    "unknown user field": (
        with_changes(users=[{**USER, "weigth": 2}]),
        "users[0].weigth",
        ["unknown field 'weigth'", "allowed:", "weight"],
    ),
    "machine not a mapping": (
        {"machines": ["m1"]},
        "machines[0]",
        ["must be a mapping", "got 'm1'"],
    ),
    "machines not a list": (
        {"machines": {"name": "m1"}},
        "machines",
        ["must be a list", "got a mapping"],
    ),
    "negative capacity": (
        {"machines": [{"name": "m", "capacity": {"cpu": -3}}]},
        "machines[0].capacity.cpu",
        ["must be a number >= 0, got -3"],
    ),
    "nan capacity": (
        {"machines": [{"name": "m", "capacity": {"cpu": math.nan}}]},
        "machines[0].capacity.cpu",
        ["must be a finite number, got nan"],
    ),
    "infinite demand": (
        with_changes(users=[{"name": "u", "demand": {"cpu": math.inf}}]),
        "users[0].demand.cpu",
        ["must be a finite number, got inf"],
    ),
    "string for number": (
        {"machines": [{"name": "m", "capacity": {"cpu": "4"}}]},
        "machines[0].capacity.cpu",
        ["must be a number", "got '4'", "without quotes"],
    ),
    "bool for number": (
        with_changes(users=[{**USER, "weight": True}]),
        "users[0].weight",
        ["must be a number > 0", "got true"],
    ),
    "number for name": (
        {"machines": [{"name": 7, "capacity": {"cpu": 1}}]},
        "machines[0].name",
        ["must be a non-empty string", "got 7"],
    ),
    "empty name": (
        with_changes(users=[{**USER, "name": ""}]),
        "users[0].name",
        ["must be a non-empty string"],
    ),
    "zero weight": (
        with_changes(users=[{**USER, "weight": 0}]),
        "users[0].weight",
        ["weight must be > 0, got 0"],
    ),
    "zero queue weight": (
        with_changes(queues=[{"path": "a", "weight": 0}]),
        "queues[0].weight",
        ["weight must be > 0, got 0"],
    ),
    "negative max_tasks": (
        with_changes(users=[{**USER, "max_tasks": -1}]),
        "users[0].max_tasks",
        ["must be a number >= 0, got -1"],
    ),
    "all-zero demand": (
        with_changes(users=[{"name": "u", "demand": {"cpu": 0}}]),
        "users[0].demand",
        ["at least one resource", "> 0"],
    ),
    "fractional count": (
        {"machines": [{"name": "w", "count": 2.5, "capacity": {"cpu": 1}}]},
        "machines[0].count",
        ["must be a whole number >= 1, got 2.5"],
    ),
    "zero count": (
        {"machines": [{"name": "w", "count": 0, "capacity": {"cpu": 1}}]},
        "machines[0].count",
        ["must be a whole number >= 1, got 0"],
    ),
    "fractional tasks": (
        with_changes(jobs=[{**JOB, "tasks": 2.5}]),
        "jobs[0].tasks",
        ["must be a whole number >= 1, got 2.5"],
    ),
    "negative attribute": (
        {"machines": [{"name": "m", "capacity": {"cpu": 1}, "attributes": {"zone": -1}}]},
        "machines[0].attributes.zone",
        [">= 0", "got -1"],
    ),
    "list attribute": (
        {"machines": [{"name": "m", "capacity": {"cpu": 1}, "attributes": {"zone": [1]}}]},
        "machines[0].attributes.zone",
        ["must be a string, number or boolean", "got a list"],
    ),
    "reserved attribute": (
        {"machines": [{"name": "m", "capacity": {"cpu": 1}, "attributes": {"rack": "r1"}}]},
        "machines[0].attributes.rack",
        ["'rack' is reserved"],
    ),
    "duplicate resource": (
        {"resources": ["cpu", "mem", "cpu"], "machines": [MACHINE]},
        "resources[2]",
        ["duplicate resource 'cpu'", "resources[0]"],
    ),
    "duplicate machine name": (
        {"machines": [MACHINE, {"name": "m2", "capacity": {"cpu": 1}}, MACHINE]},
        "machines[2].name",
        ["duplicate machine name 'm1'", "machines[2]", "machines[0]"],
    ),
    "duplicate machine name via count": (
        {
            "machines": [
                {"name": "web-1", "capacity": {"cpu": 1}},
                {"name": "web", "count": 3, "capacity": {"cpu": 1}},
            ]
        },
        "machines[1].name",
        ["duplicate machine name 'web-1'", "machines[1] (count: 3)", "machines[0]"],
    ),
    "duplicate user name": (
        with_changes(users=[USER, {**USER, "name": "v"}, USER]),
        "users[2].name",
        ["duplicate user name 'u'", "users[0]"],
    ),
    "duplicate job name": (
        with_changes(jobs=[JOB, JOB]),
        "jobs[1].name",
        ["duplicate job name 'j'", "jobs[0]"],
    ),
    "unknown resource in capacity": (
        {"resources": ["cpu", "mem"], "machines": [{"name": "m", "capacity": {"gpu": 1}}]},
        "machines[0].capacity.gpu",
        ["unknown resource 'gpu'", "cpu, mem"],
    ),
    "unknown resource in demand": (
        with_changes(users=[{"name": "u", "demand": {"cpu": 1, "gpu": 1}}]),
        "users[0].demand.gpu",
        ["unknown resource 'gpu'", "cpu, mem"],
    ),
    "demand of a resource no machine has": (
        {
            "resources": ["cpu", "gpu"],
            "machines": [{"name": "m", "capacity": {"cpu": 1, "gpu": 0}}],
            "users": [{"name": "u", "demand": {"gpu": 1}}],
        },
        "users[0].demand.gpu",
        ["no machine has resource 'gpu'"],
    ),
    "unknown queue": (
        with_changes(queues=[{"path": "ads"}], users=[{**USER, "queue": "dev"}]),
        "users[0].queue",
        ["unknown queue 'dev'", "declared queues: ads"],
    ),
    "unknown queue for a job": (
        with_changes(jobs=[{**JOB, "queue": "dev"}]),
        "jobs[0].queue",
        ["unknown queue 'dev'", "no queues are declared"],
    ),
    "undeclared parent queue": (
        with_changes(queues=[{"path": "dev"}, {"path": "ads/prod"}]),
        "queues[1].path",
        ["parent queue 'ads' is not declared"],
    ),
    "empty queue segment": (
        with_changes(queues=[{"path": "ads//prod"}]),
        "queues[0].path",
        ["non-empty"],
    ),
    "duplicate queue": (
        with_changes(queues=[{"path": "ads"}, {"path": "ads"}]),
        "queues[1].path",
        ["duplicate queue path 'ads'", "queues[0]"],
    ),
    "queue min_share > max_share": (
        with_changes(queues=[{"path": "a", "min_share": 60, "max_share": 50}]),
        "queues[0].min_share",
        ["min_share (60) must be <= max_share (50)"],
    ),
    "user min_share > max_share": (
        with_changes(users=[{**USER, "min_share": 20, "max_share": 10.5}]),
        "users[0].min_share",
        ["min_share (20) must be <= max_share (10.5)"],
    ),
    "unknown machine in whitelist": (
        with_changes(users=[{**USER, "machines": ["m1", "m9"]}]),
        "users[0].machines[1]",
        ["unknown machine 'm9'", "machines: m1"],
    ),
    "unknown machine in job whitelist": (
        with_changes(jobs=[{**JOB, "machines": ["zz"]}]),
        "jobs[0].machines[0]",
        ["unknown machine 'zz'"],
    ),
    "duration list length": (
        with_changes(jobs=[{**JOB, "tasks": 3, "duration": [1, 2]}]),
        "jobs[0].duration",
        ["lists 2 task durations", "3 tasks"],
    ),
    "negative duration in list": (
        with_changes(jobs=[{**JOB, "duration": [1, -2]}]),
        "jobs[0].duration[1]",
        ["must be > 0, got -2"],
    ),
    "zero duration": (
        with_changes(jobs=[{**JOB, "duration": 0}]),
        "jobs[0].duration",
        ["must be > 0, got 0"],
    ),
    "two distributions": (
        with_changes(
            jobs=[
                {**JOB, "duration": {"pareto": {"alpha": 1, "min": 1}, "exponential": {"mean": 1}}}
            ]
        ),
        "jobs[0].duration",
        ["exactly one"],
    ),
    "unknown distribution": (
        with_changes(jobs=[{**JOB, "duration": {"weibull": {"k": 1}}}]),
        "jobs[0].duration.weibull",
        ["unknown field 'weibull'", "allowed: pareto, exponential"],
    ),
    "pareto without min": (
        with_changes(jobs=[{**JOB, "duration": {"pareto": {"alpha": 2}}}]),
        "jobs[0].duration.pareto.min",
        ["missing required field 'min'"],
    ),
    "missing duration": (
        with_changes(jobs=[{"name": "j", "submit": 0, "demand": {"cpu": 1}, "tasks": 1}]),
        "jobs[0].duration",
        ["missing required field 'duration'"],
    ),
    "negative submit": (
        with_changes(jobs=[{**JOB, "submit": -1}]),
        "jobs[0].submit",
        ["must be a number >= 0, got -1"],
    ),
    "too many replicas": (
        with_changes(jobs=[{**JOB, "input": {"replicas": 3}}]),
        "jobs[0].input.replicas",
        ["at most the number of machines (1)", "got 3"],
    ),
    "negative reduce copy": (
        with_changes(jobs=[{**JOB, "reduce": {"tasks": 1, "copy": -1}}]),
        "jobs[0].reduce.copy",
        ["must be a number >= 0, got -1"],
    ),
    "reduce demand on an unknown resource": (
        with_changes(jobs=[{**JOB, "reduce": {"tasks": 1, "demand": {"disk": 1}}}]),
        "jobs[0].reduce.demand.disk",
        ["unknown resource 'disk'", "resources: cpu, mem"],
    ),
    "negative reduce demand": (
        with_changes(jobs=[{**JOB, "reduce": {"tasks": 1, "demand": {"cpu": -2}}}]),
        "jobs[0].reduce.demand.cpu",
        ["must be a number >= 0, got -2"],
    ),
    "unknown generator": (
        with_changes(workload={"generator": "yahoo", "jobs": 3}),
        "workload.generator",
        ["unknown generator 'yahoo'", "facebook-2009", "google-constraints"],
    ),
    "zero generator jobs": (
        with_changes(workload={"generator": "zipf", "jobs": 0}),
        "workload.jobs",
        ["must be a whole number >= 1, got 0"],
    ),
    "nan generator parameter": (
        with_changes(workload={"generator": "zipf", "skew": math.nan}),
        "workload.skew",
        ["must be a finite number"],
    ),
    "top-level list": ([ONE_MACHINE], "top level", ["must be a mapping", "got a list"]),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_scenario(case: str) -> None:
    data, where, words = BAD[case]
    err = parse_error(data)
    assert err.where == where, str(err)
    for word in words:
        assert word in err.what, str(err)
    message = str(err)
    assert message == f"error: s.yaml: {where}: {err.what}"
    assert "\n" not in message
    assert "pydantic" not in message.lower()
    assert "Input should" not in message


# ------------------------------------------------------------------------------------------
# Files: syntax, duplicate keys, special numbers, unreadable and empty files


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"error: {path}: file: cannot read (No such file or directory)"


def test_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path)
    assert info.value.where == "file"
    assert "cannot read" in info.value.what


@pytest.mark.parametrize("text", ["", "\n  \n", "# only a comment\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    err = load_error(tmp_path, text)
    assert err.where == "file"
    assert "empty" in err.what


def test_empty_json_file(tmp_path: Path) -> None:
    err = load_error(tmp_path, "", "s.json")
    assert (err.where, "empty" in err.what) == ("file", True)


def test_top_level_list_in_file(tmp_path: Path) -> None:
    err = load_error(tmp_path, "- name: m1\n- name: m2\n")
    assert err.where == "top level"
    assert "must be a mapping" in err.what and "got a list" in err.what


def test_top_level_scalar_in_file(tmp_path: Path) -> None:
    err = load_error(tmp_path, "just text\n")
    assert err.where == "top level"
    assert "got 'just text'" in err.what


def test_broken_yaml_reports_its_line(tmp_path: Path) -> None:
    text = "machines:\n  - name: m1\n    capacity: {cpu: 1\n  - name: m2\n"
    err = load_error(tmp_path, text)
    assert err.where == "line 4"
    assert err.what.startswith("invalid YAML: ")


def test_yaml_bad_indentation(tmp_path: Path) -> None:
    text = "machines:\n  - name: m1\n    capacity: {cpu: 1}\n   rack: r1\n"
    err = load_error(tmp_path, text)
    assert err.where == "line 4"
    assert "invalid YAML" in err.what


def test_yaml_duplicate_key(tmp_path: Path) -> None:
    text = "machines:\n  - name: m1\n    capacity: {cpu: 1}\n    name: m2\n"
    err = load_error(tmp_path, text)
    assert err.where == "line 4"
    assert err.what == "duplicate key 'name' (first at line 2)"


def test_yaml_duplicate_key_in_flow_mapping(tmp_path: Path) -> None:
    err = load_error(tmp_path, "machines:\n  - {name: m1, capacity: {cpu: 1, cpu: 2}}\n")
    assert (err.where, err.what) == ("line 2", "duplicate key 'cpu' (first at line 2)")


def test_yaml_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    text = (
        "machines:\n"
        "  - &m {name: m1, capacity: {cpu: 1}, rack: r1}\n"
        "  - {<<: *m, name: m2, rack: r2}\n"
    )
    scenario = load_scenario(write(tmp_path, text))
    assert [(m.name, m.rack) for m in scenario.cluster.machines] == [("m1", "r1"), ("m2", "r2")]


@pytest.mark.parametrize(
    ("literal", "shown"), [(".nan", "nan"), (".inf", "inf"), ("-.inf", "-inf"), (".NaN", "nan")]
)
def test_yaml_special_floats_are_rejected(tmp_path: Path, literal: str, shown: str) -> None:
    err = load_error(tmp_path, f"machines:\n  - {{name: m1, capacity: {{cpu: {literal}}}}}\n")
    assert err.where == "machines[0].capacity.cpu"
    assert f"must be a finite number, got {shown}" in err.what


def test_yaml_quoted_number_is_a_string(tmp_path: Path) -> None:
    err = load_error(tmp_path, "machines:\n  - {name: m1, capacity: {cpu: '4'}}\n")
    assert err.where == "machines[0].capacity.cpu"
    assert "got '4'" in err.what


def test_yaml_python_tags_are_not_executed(tmp_path: Path) -> None:
    err = load_error(tmp_path, "machines: !!python/object/apply:os.system ['true']\n")
    assert err.where == "line 1"
    assert "invalid YAML" in err.what


def test_broken_json_reports_its_line(tmp_path: Path) -> None:
    text = '{\n  "machines": [\n    {"name": "m1", "capacity": {"cpu": 1}}\n    {"name": "m2"}\n'
    err = load_error(tmp_path, text + "  ]\n}\n", "s.json")
    assert err.where == "line 4"
    assert err.what.startswith("invalid JSON: Expecting ',' delimiter")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_nan_and_infinity_are_rejected(tmp_path: Path, constant: str) -> None:
    text = '{"machines": [\n {"name": "NaN Infinity",\n  "capacity": {"cpu": ' + constant + "}}]}"
    err = load_error(tmp_path, text, "s.json")
    assert err.where == "line 3"
    assert constant in err.what and "finite" in err.what


def test_json_duplicate_key(tmp_path: Path) -> None:
    text = '{\n  "machines": [\n    {"name": "m1",\n     "name": "m2", "capacity": {}}\n  ]\n}\n'
    err = load_error(tmp_path, text, "s.json")
    assert err.where == "line 4"
    assert err.what.startswith("duplicate key 'name'")


def test_json_string_for_number(tmp_path: Path) -> None:
    text = '{"machines": [{"name": "m1", "capacity": {"cpu": "4"}}]}'
    err = load_error(tmp_path, text, "s.json")
    assert err.where == "machines[0].capacity.cpu"


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"machines: [{name: \xff}]\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.where == "file"
    assert "UTF-8" in info.value.what


def test_first_error_is_reported_deterministically() -> None:
    data = {
        "machines": [
            {"name": "m", "capacity": {"cpu": -1}},
            {"name": "n", "capacity": {"cpu": "x"}},
        ],
        "users": [{"name": "u", "weight": 0}],
    }
    messages = {str(parse_error(copy.deepcopy(data))) for _ in range(3)}
    assert messages == {
        "error: s.yaml: machines[0].capacity.cpu: cpu must be a number >= 0, got -1"
    }


def test_yaml_1_1_quirks_get_a_hint(tmp_path: Path) -> None:
    err = load_error(tmp_path, "machines: [{name: m, capacity: {cpu: 1e3}}]\n")
    assert err.where == "machines[0].capacity.cpu"
    assert "got '1e3'" in err.what and "1.0e+3" in err.what
    err = load_error(tmp_path, "machines: [{name: no, capacity: {cpu: 1}}]\n")
    assert err.where == "machines[0].name"
    assert "got false (quote it)" in err.what


def test_reduce_phase_may_demand_other_resources_than_the_maps() -> None:
    """Hadoop's map and reduce slots as two resources (FAIR section 5.3)."""
    scenario = parse_scenario(
        {
            "resources": ["map_slot", "reduce_slot"],
            "machines": [{"name": "n", "capacity": {"map_slot": 1, "reduce_slot": 1}}],
            "jobs": [
                {
                    "name": "j",
                    "submit": 0,
                    "demand": {"map_slot": 1},
                    "tasks": 4,
                    "duration": 25,
                    "reduce": {"tasks": 2, "compute": 50, "demand": {"reduce_slot": 1}},
                }
            ],
        },
        "s.yaml",
    )
    reduce = scenario.jobs[0].reduce
    assert reduce is not None and reduce.demand is not None
    assert reduce.demand.tolist() == [0.0, 1.0]
    assert scenario.jobs[0].demand.tolist() == [1.0, 0.0]


_YAML_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=8)
)
_YAML_VALUES = st.recursive(
    _YAML_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(documents=st.lists(_YAML_VALUES, min_size=1, max_size=3), flow=st.booleans())
def test_plain_yaml_reads_as_the_general_way_reads_it(documents: list[object], flow: bool) -> None:
    """Text without anchors, aliases, tags or merge keys is read straight from the parser's
    events (``yaml_reading._plain``); the objects are PyYAML's safe loader's and the general
    way's (forced here by a comment holding ``&``)."""
    text = yaml.safe_dump_all(documents, default_flow_style=flow, allow_unicode=True)
    plain = read_yaml_documents(text, "plain.yaml")
    general = read_yaml_documents(text + "# & forces the general way\n", "general.yaml")
    assert plain == general == list(yaml.safe_load_all(text))


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("a: 1\nb: 2\na: 3\n", "line 3", "duplicate key 'a' (first at line 1)"),
        ("x: {cpu: 1, cpu: 2}\n", "line 1", "duplicate key 'cpu' (first at line 1)"),
        ("- " + "[" * 200 + "]" * 200 + "\n", "line 1", None),
    ],
)
def test_plain_yaml_keeps_the_limits_and_errors(text: str, where: str, what: str | None) -> None:
    """The plain way refuses what the general way refuses, with the same line."""
    for variant in (text, text + "# &\n"):
        with pytest.raises(ScenarioError) as caught:
            read_yaml_documents(variant, "f.yaml")
        assert caught.value.where == where
        if what is not None:
            assert caught.value.what == what
