"""Reducer slow-start (FAIR section 5.1) as a scenario field (per job), a run option
(``--reduce-slowstart``, a sweep option) and a generator parameter; separate reduce demands
in the ``facebook-2009`` and ``zipf`` generators."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import fairshare
from fairshare.experiments.options import read_option
from fairshare.workload import ScenarioError, parse_scenario
from fairshare.workload.generators import generate
from fairshare.workload.model import WorkloadSpec

from conftest import assert_rejected, run_fairshare


def _scenario(reduce_extra: dict[str, object] | None = None) -> dict[str, object]:
    """One machine with 2 map slots and 1 reduce slot; a job of 4 maps of 10 s (two waves,
    ending at 10 and 20) and one reducer of 5 s compute."""
    return {
        "resources": ["map", "reduce"],
        "machines": [{"name": "m", "capacity": {"map": 2, "reduce": 1}}],
        "jobs": [
            {
                "name": "j",
                "submit": 0,
                "demand": {"map": 1},
                "tasks": 4,
                "duration": 10,
                "reduce": {
                    "tasks": 1,
                    "copy": 0,
                    "compute": 5,
                    "demand": {"reduce": 1},
                    **(reduce_extra or {}),
                },
            }
        ],
    }


def _reducer(run: fairshare.api.Run) -> tuple[float, float]:
    (reducer,) = [a for a in run.log.attempts if a.phase == "reduce"]
    return reducer.start, reducer.finish


def test_by_default_reducers_launch_after_the_last_map() -> None:
    run = fairshare.simulate(parse_scenario(_scenario(), source="s"), "fifo")
    assert _reducer(run) == (20.0, 25.0)


def test_a_jobs_slowstart_launches_its_reducer_after_that_fraction_of_maps() -> None:
    # Half the maps finish at 10: the reducer launches then and holds its slot until the
    # last map finishes at 20 (slot hoarding), then computes 5 s.
    run = fairshare.simulate(parse_scenario(_scenario({"slowstart": 0.5}), source="s"), "fifo")
    assert _reducer(run) == (10.0, 25.0)


def test_the_run_option_is_the_default_and_a_jobs_own_value_wins() -> None:
    scenario = parse_scenario(_scenario(), source="s")
    early = fairshare.simulate(scenario, "drf", options=fairshare.SimOptions(reduce_slowstart=0.5))
    assert _reducer(early) == (10.0, 25.0)
    own = parse_scenario(_scenario({"slowstart": 1.0}), source="s")
    late = fairshare.simulate(own, "drf", options=fairshare.SimOptions(reduce_slowstart=0.5))
    assert _reducer(late) == (20.0, 25.0)


@pytest.mark.parametrize("value", [1.5, -0.1, "half", True])
def test_a_bad_slowstart_names_its_field(value: object) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario({"slowstart": value}), source="s.yaml")
    assert err.value.where == "jobs[0].reduce.slowstart"
    assert "fraction from 0 to 1" in err.value.what


def test_the_command_line_option(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_scenario()))
    done = run_fairshare(
        "simulate", str(path), "--policy", "fifo", "--reduce-slowstart", "0.5",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["options"]["reduce_slowstart"] == 0.5
    line = assert_rejected(
        run_fairshare(
            "simulate", str(path), "--policy", "fifo", "--reduce-slowstart", "2",
            "--out", str(tmp_path / "bad"),
        )
    )  # fmt: skip
    assert line == f"error: {path}: --reduce-slowstart: must be a fraction in [0, 1], got 2.0"
    assert not (tmp_path / "bad").exists()


def test_the_sweep_option() -> None:
    assert read_option("reduce-slowstart", 0.25) == (0.25, {"reduce_slowstart": 0.25})
    assert read_option("reduce-slowstart", None) == (None, {"reduce_slowstart": None})
    with pytest.raises(ValueError, match=r"must be a fraction in \[0, 1\], got 3"):
        read_option("reduce-slowstart", 3)


def _cluster() -> fairshare.Scenario:
    return parse_scenario(
        {"machines": [{"name": "m", "count": 8, "capacity": {"map": 4, "reduce": 2}, "rack": "r"}]},
        source="c",
    )


@pytest.mark.parametrize("generator", ["facebook-2009", "zipf"])
def test_generators_give_reducers_their_own_demand_and_slowstart(generator: str) -> None:
    scenario = _cluster()
    spec = WorkloadSpec(
        generator,
        {
            "jobs": 20,
            "demand": {"map": 1},
            "reduce": {"copy": 3, "compute": 7, "demand": {"reduce": 1}, "slowstart": 0.3},
        },
    )
    jobs = list(generate(spec, scenario.cluster, np.random.default_rng(4)).jobs)
    assert len(jobs) == 20
    for job in jobs:
        assert job.demand.tolist() == [1.0, 0.0]
        assert job.reduce is not None and job.reduce.tasks >= 1
        assert job.reduce.demand is not None and job.reduce.demand.tolist() == [0.0, 1.0]
        assert (job.reduce.copy, job.reduce.compute, job.reduce.slowstart) == (3.0, 7.0, 0.3)


def test_generated_reducers_without_the_new_fields_are_as_before() -> None:
    scenario = _cluster()
    spec = WorkloadSpec("facebook-2009", {"jobs": 5, "demand": {"map": 1}})
    jobs = list(generate(spec, scenario.cluster, np.random.default_rng(4)).jobs)
    assert all(
        j.reduce is not None
        and (j.reduce.copy, j.reduce.compute, j.reduce.demand, j.reduce.slowstart)
        == (10.0, 20.0, None, None)
        for j in jobs
    )


@pytest.mark.parametrize(
    ("reduce", "where", "what"),
    [
        ({"demand": {"gpu": 1}}, "workload.reduce.demand.gpu", "unknown resource 'gpu'"),
        ({"slowstart": 2}, "workload.reduce.slowstart", "must be a fraction from 0 to 1"),
        ({"tasks": 3}, "workload.reduce", "{copy: S, compute: S}"),
    ],
)
def test_bad_generator_reduce_parameters(reduce: dict[str, object], where: str, what: str) -> None:
    spec = WorkloadSpec("zipf", {"jobs": 2, "reduce": reduce})
    with pytest.raises(ScenarioError) as err:
        generate(spec, _cluster().cluster, np.random.default_rng(0))
    assert err.value.where == where
    assert what in err.value.what


def test_reference_schedulers_refuse_the_option() -> None:
    with pytest.raises(fairshare.PolicyError) as err:
        fairshare.api.validate_policy(
            "offline-restricted", fairshare.SimOptions(reduce_slowstart=0.5)
        )
    assert err.value.where == "reduce_slowstart"
