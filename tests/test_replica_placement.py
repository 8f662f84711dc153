"""HDFS-style rack-aware replica placement (the default) and uniform placement of input
blocks, and input files shared by several jobs (hot files)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.policies import ONLINE_POLICIES, make_policy
from fairshare.sim import SimOptions, simulate
from fairshare.sim.placement import BlockPlacer
from fairshare.workload import ScenarioError, parse_scenario
from fairshare.workload.generators import generate
from fairshare.workload.model import FixedDuration, Job, WorkloadSpec

RACKS = {f"r{k}-m{i}": f"r{k}" for k in range(4) for i in range(5)}


def _rack(name: str) -> str:
    return RACKS[name]


def test_rack_aware_puts_one_replica_on_one_rack_and_two_on_another() -> None:
    placer = BlockPlacer(list(RACKS), dict(RACKS))
    blocks = placer.place(2000, 3, "rack-aware", np.random.default_rng(1))
    assert all(len(block) == 3 for block in blocks)
    for first, second, third in blocks:
        assert _rack(second) == _rack(third) != _rack(first)
    # The first replica is uniform over the machines, the remote rack uniform over the others.
    firsts = Counter(block[0] for block in blocks)
    assert set(firsts) == set(RACKS) and max(firsts.values()) < 2 * 2000 / len(RACKS)
    pairs = Counter((_rack(b[0]), _rack(b[1])) for b in blocks)
    assert len(pairs) == 12  # every ordered pair of distinct racks


def test_uniform_placement_spreads_replicas_over_racks() -> None:
    placer = BlockPlacer(list(RACKS), dict(RACKS))
    blocks = placer.place(2000, 3, "uniform", np.random.default_rng(1))
    racks_per_block = Counter(len({_rack(m) for m in block}) for block in blocks)
    # Three racks for most blocks: what rack-aware placement never gives.
    assert racks_per_block[3] > 500


def test_more_replicas_and_small_racks() -> None:
    racks = {"a": "A", "b": "B", "c": "C", "d": "C"}
    blocks = BlockPlacer(list(racks), racks).place(500, 5, "rack-aware", np.random.default_rng(2))
    for block in blocks:
        assert len(set(block)) == len(block) and 2 <= len(block) <= 4
        assert racks[block[1]] != racks[block[0]]
        if racks[block[1]] == "C":  # a rack of two machines holds two replicas
            assert {block[1], block[2]} == {"c", "d"}


def test_one_rack_or_none_draws_uniformly() -> None:
    racks: dict[str, str | None] = {f"m{i}": None for i in range(6)}
    blocks = BlockPlacer(list(racks), racks).place(300, 3, "rack-aware", np.random.default_rng(0))
    again = BlockPlacer(list(racks), racks).place(300, 3, "uniform", np.random.default_rng(0))
    assert blocks == again


class _Recorder:
    """Collects the blocks each job is submitted with (a policy's view)."""

    def __init__(self) -> None:
        self.blocks: dict[str, list[tuple[str, ...]] | None] = {}


def _cluster() -> Cluster:
    machines = [Machine(name, np.array([2.0]), rack=rack) for name, rack in RACKS.items()]
    return Cluster.build(["slots"], machines)


def _blocks_seen(jobs: list[Job], seed: int = 0) -> dict[str, list[tuple[str, ...]] | None]:
    recorder = _Recorder()
    base = make_policy("fifo", _cluster())

    class Spy(type(base)):  # type: ignore[misc]
        def job_submitted(self, now: float, job_id: int, job: Job, blocks: Any) -> None:
            recorder.blocks[job.name] = blocks
            super().job_submitted(now, job_id, job, blocks)

    spy = Spy(_cluster())
    simulate(_cluster(), jobs, spy, seed=seed)
    return recorder.blocks


def _job(name: str, submit: float, tasks: int, **extra: Any) -> Job:
    return Job(
        name, submit, name, np.array([1.0]), tasks, FixedDuration(5.0), input_replicas=3, **extra
    )


def test_the_simulator_places_blocks_rack_aware_by_default() -> None:
    seen = _blocks_seen([_job("a", 0.0, 200)])
    blocks = seen["a"]
    assert blocks is not None and len(blocks) == 200
    for first, second, third in blocks:
        assert _rack(second) == _rack(third) != _rack(first)


def test_jobs_reading_one_file_share_its_blocks() -> None:
    jobs = [
        _job("a", 0.0, 30, input_file="hot"),
        _job("b", 1.0, 50, input_file="hot"),
        _job("c", 2.0, 20, input_file="hot"),
        _job("d", 3.0, 30),
    ]
    seen = _blocks_seen(jobs)
    a, b, c, d = (seen[name] for name in "abcd")
    assert a is not None and b is not None and c is not None and d is not None
    assert b[:30] == a and c == a[:20]  # the file grows to its largest reader's blocks
    assert len(b) == 50 and d != a


def test_uniform_is_available_per_job() -> None:
    seen = _blocks_seen([_job("a", 0.0, 400, replica_placement="uniform")])
    blocks = seen["a"]
    assert blocks is not None
    assert any(len({_rack(m) for m in block}) == 3 for block in blocks)


def test_scenario_input_fields() -> None:
    scenario = parse_scenario(
        {
            "machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}],
            "jobs": [
                {
                    "name": "a",
                    "submit": 0,
                    "tasks": 2,
                    "duration": 1,
                    "input": {"replicas": 2, "file": "logs", "placement": "uniform"},
                },
                {"name": "b", "submit": 0, "tasks": 2, "duration": 1, "input": {"replicas": 2}},
            ],
        },
        source="s",
    )
    a, b = scenario.jobs
    assert (a.input_file, a.replica_placement) == ("logs", "uniform")
    assert (b.input_file, b.replica_placement) == (None, "rack-aware")


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        ("placement", "random", "must be one of rack-aware, uniform, got 'random'"),
        ("file", "", "must be a non-empty string"),
    ],
)
def test_bad_input_fields(field: str, value: object, what: str) -> None:
    data = {
        "machines": [{"name": "m", "capacity": {"slots": 1}}],
        "jobs": [
            {
                "name": "a",
                "submit": 0,
                "tasks": 1,
                "duration": 1,
                "input": {"replicas": 1, field: value},
            }
        ],
    }
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, source="s")
    assert err.value.where == f"jobs[0].input.{field}"
    assert what in err.value.what


def test_generator_hot_files_and_placement() -> None:
    cluster = _cluster()
    spec = WorkloadSpec(
        "facebook-2009",
        {"jobs": 400, "hot_files": {"fraction": 0.5, "files": 2}, "replica_placement": "uniform"},
    )
    jobs = list(generate(spec, cluster, np.random.default_rng(5)).jobs)
    files = Counter(job.input_file for job in jobs)
    assert set(files) == {None, "hot0", "hot1"}
    assert 150 < files["hot0"] + files["hot1"] < 250  # about half the jobs
    assert all(job.replica_placement == "uniform" for job in jobs)
    plain = list(generate(WorkloadSpec("facebook-2009", {"jobs": 50}), cluster,
                          np.random.default_rng(5)).jobs)  # fmt: skip
    assert all(j.input_file is None and j.replica_placement == "rack-aware" for j in plain)
    # The files come from a generator of their own: the jobs are the same as without them.
    assert [(j.submit, j.tasks) for j in plain] == [(j.submit, j.tasks) for j in jobs[:50]]


@pytest.mark.parametrize(
    ("params", "where", "what"),
    [
        ({"hot_files": {"fraction": 2}}, "workload.hot_files.fraction", "fraction from 0 to 1"),
        ({"hot_files": {"fraction": 0.5, "files": 0}}, "workload.hot_files.files", ">= 1"),
        ({"hot_files": 3}, "workload.hot_files", "{fraction: F, files: K}"),
        ({"replica_placement": "near"}, "workload.replica_placement", "rack-aware, uniform"),
    ],
)
def test_bad_generator_parameters(params: dict[str, object], where: str, what: str) -> None:
    with pytest.raises(ScenarioError) as err:
        generate(WorkloadSpec("zipf", {"jobs": 3, **params}), _cluster(), np.random.default_rng(0))
    assert err.value.where == where
    assert what in err.value.what


@pytest.mark.parametrize("name", ["fair", "drf"])
def test_rack_aware_blocks_give_delay_scheduling_rack_local_reads(name: str) -> None:
    # With rack-aware placement every block has two replicas on one rack and one on
    # another: a map that waits for a rack-local slot finds one on two racks of four.
    jobs = [_job(f"j{i}", float(i), 40) for i in range(6)]
    log = simulate(_cluster(), jobs, name, seed=3, options=SimOptions(delay=(1.0, 3.0)))
    levels = Counter(a.locality for a in log.attempts)
    assert levels["off_rack"] < levels["node"] + levels["rack"]
    assert sum(levels.values()) == 240 and name in ONLINE_POLICIES
