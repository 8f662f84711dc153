"""Built-in workload generators: parameters, determinism and the papers' statistics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.workload.generators import (
    ATTRIBUTES,
    FACEBOOK_2009_BINS,
    FACEBOOK_2010_BINS,
    REQUIRE_PROBABILITY,
    Workload,
    generate,
)
from fairshare.workload.loader import GENERATORS, ScenarioError, parse_scenario
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    ReducePhase,
    WorkloadSpec,
)

from conftest import scaled_examples


def cluster(machines: int = 100, resources: tuple[str, ...] = ("cpu", "mem")) -> Cluster:
    capacity = np.full(len(resources), 8.0)
    capacity.setflags(write=False)
    return Cluster.build(resources, [Machine(f"m{i}", capacity) for i in range(machines)])


def run(
    generator: str, seed: int = 0, machines: int = 100, **params: object
) -> tuple[list[Job], Workload]:
    workload = generate(
        WorkloadSpec(generator, params), cluster(machines), np.random.default_rng(seed)
    )
    return list(workload.jobs), workload


def bin_fractions(jobs: list[Job], bins: tuple[object, ...]) -> list[float]:
    counts = [0] * len(bins)
    for job in jobs:
        k = next(i for i, b in enumerate(bins) if b.low <= job.tasks <= b.high)  # type: ignore[attr-defined]
        counts[k] += 1
    return [c / len(jobs) for c in counts]


# --------------------------------------------------------------------------------------------
# Defaults and determinism


@pytest.mark.parametrize(
    ("generator", "count"),
    [("facebook-2009", 50), ("facebook-2010", 100), ("zipf", 30), ("google-constraints", 300)],
)
def test_default_job_counts_follow_the_papers(generator: str, count: int) -> None:
    jobs, _ = run(generator)
    assert len(jobs) == count
    assert len({j.name for j in jobs}) == count
    assert [j.submit for j in jobs] == sorted(j.submit for j in jobs)
    assert all(j.user == j.name and j.queue == "" for j in jobs)
    assert all(j.demand.tolist() == [1.0, 0.0] for j in jobs)
    assert all(j.duration == ParetoDuration(1.9, 10.0) for j in jobs)


@pytest.mark.parametrize("generator", GENERATORS)
def test_same_seed_same_jobs(generator: str) -> None:
    a, wa = run(generator, seed=7, jobs=40)
    b, wb = run(generator, seed=7, jobs=40)
    c, _ = run(generator, seed=8, jobs=40)
    key = [(j.name, j.submit, j.tasks, j.reduce, j.constraint, j.demand.tolist()) for j in a]
    assert key == [
        (j.name, j.submit, j.tasks, j.reduce, j.constraint, j.demand.tolist()) for j in b
    ]
    assert key != [
        (j.name, j.submit, j.tasks, j.reduce, j.constraint, j.demand.tolist()) for j in c
    ]
    assert [dict(m.attributes) for m in wa.cluster.machines] == [
        dict(m.attributes) for m in wb.cluster.machines
    ]


def test_first_jobs_of_a_seed_are_pinned() -> None:
    """A regression anchor: the draws of seed 0 (change them only on purpose)."""
    jobs, _ = run("facebook-2009", seed=0, jobs=3)
    rng = np.random.default_rng(0)
    cdf = np.cumsum([b.fraction for b in FACEBOOK_2009_BINS])
    submit = 0.0
    for job in jobs:
        submit += rng.exponential(30.0)
        chosen = FACEBOOK_2009_BINS[int(np.searchsorted(cdf / cdf[-1], rng.random(), "right"))]
        maps = int(rng.integers(chosen.low, chosen.high, endpoint=True))
        reducers = max(1, round(maps * rng.uniform(0.05, 0.25)))
        assert (job.submit, job.tasks) == (submit, maps)
        assert job.reduce == ReducePhase(reducers, 10.0, 20.0)
        assert job.input_replicas == 3
    assert [j.name for j in jobs] == ["job0", "job1", "job2"]


def test_jobs_are_drawn_lazily() -> None:
    workload = generate(
        WorkloadSpec("facebook-2009", {"jobs": 10**9}), cluster(), np.random.default_rng(1)
    )
    assert len(list(itertools.islice(workload.jobs, 5))) == 5


# --------------------------------------------------------------------------------------------
# The papers' statistics


def test_facebook_2009_table_2_bins_arrivals_and_reducers() -> None:
    jobs, _ = run("facebook-2009", seed=3, jobs=20000)
    fractions = bin_fractions(jobs, FACEBOOK_2009_BINS)
    for got, size_bin in zip(fractions, FACEBOOK_2009_BINS, strict=True):
        assert got == pytest.approx(size_bin.fraction, abs=0.01)
    gaps = np.diff([0.0] + [j.submit for j in jobs])
    assert gaps.mean() == pytest.approx(30.0, rel=0.03)
    assert np.std(gaps) == pytest.approx(30.0, rel=0.05)  # exponential: std = mean
    for job in jobs:
        assert job.reduce is not None
        assert (
            max(1, round(0.05 * job.tasks)) <= job.reduce.tasks <= max(1, round(0.25 * job.tasks))
        )
    assert max(j.tasks for j in jobs) <= 6400


def test_facebook_2010_table_1_bins() -> None:
    jobs, _ = run("facebook-2010", seed=4, jobs=20000)
    fractions = bin_fractions(jobs, FACEBOOK_2010_BINS)
    expected = [0.73 / 0.99, 0.10 / 0.99, 0.07 / 0.99, 0.09 / 0.99]
    assert fractions == pytest.approx(expected, abs=0.01)
    assert all(j.reduce is None for j in jobs)


def test_zipf_sizes_and_reducers() -> None:
    jobs, _ = run("zipf", seed=5, jobs=20000)
    maps = np.array([j.tasks for j in jobs])
    assert maps.min() == 1 and maps.max() <= 400
    harmonic = sum(1 / k for k in range(1, 401))
    assert (maps == 1).mean() == pytest.approx(1 / harmonic, abs=0.01)  # P(1) = 1 / H_400
    assert (maps == 2).mean() == pytest.approx(0.5 / harmonic, abs=0.01)
    for job in jobs:
        assert job.reduce is not None and 1 <= job.reduce.tasks <= max(1, job.tasks // 5)


def test_google_constraints_statistics() -> None:
    """Choosy section 7.1: 1.8 constraints per job; the average job can use about 38% of the
    machines, 40% of jobs under 20% of them and 30% under 10%."""
    jobs, workload = run("google-constraints", seed=6, machines=1000, jobs=4000)
    machines = workload.cluster.machines
    assert all(set(ATTRIBUTES) <= set(m.attributes) for m in machines)
    assert {m.attributes["machine_class"] for m in machines} == {"c0", "c1", "c2", "c3"}
    assert np.mean([m.attributes["a0"] for m in machines]) == 1.0
    counts = [len(j.constraint.attributes()) if j.constraint else 0 for j in jobs]
    assert np.mean(counts) == pytest.approx(sum(REQUIRE_PROBABILITY), abs=0.1)
    assert sum(REQUIRE_PROBABILITY) == pytest.approx(1.8)
    # which machines each job can use, from the attribute matrix (fast) ...
    has = np.array([[bool(m.attributes[a]) for a in ATTRIBUTES] for m in machines])
    masks = [
        has[:, [ATTRIBUTES.index(a) for a in j.constraint.attributes()]].all(axis=1)
        if j.constraint
        else np.ones(len(machines), dtype=bool)
        for j in jobs
    ]
    # ... which is what the constraint language says
    for job, mask in list(zip(jobs, masks, strict=True))[:100]:
        if job.constraint is not None:
            assert (job.constraint.mask(machines) == mask).all()
    usable = np.array([mask.mean() for mask in masks])
    assert usable.min() > 0  # every job can run somewhere
    assert usable.mean() == pytest.approx(0.38, abs=0.05)
    assert (usable < 0.2).mean() == pytest.approx(0.40, abs=0.06)
    assert (usable < 0.1).mean() == pytest.approx(0.30, abs=0.06)


def test_google_constraints_are_conjunctions_of_attributes() -> None:
    jobs, _ = run("google-constraints", seed=2, jobs=200)
    texts = [str(j.constraint) for j in jobs if j.constraint is not None]
    assert texts and all(all(part in ATTRIBUTES for part in text.split(" and ")) for text in texts)
    assert any(j.constraint is None for j in jobs)


def test_google_constraints_keep_scenario_attributes() -> None:
    attributes = dict.fromkeys(ATTRIBUTES, True) | {"a5": False}
    capacity = np.ones(1)
    capacity.setflags(write=False)
    given_cluster = Cluster.build(["cpu"], [Machine("m", capacity, None, attributes)])
    workload = generate(
        WorkloadSpec("google-constraints", {"jobs": 50}), given_cluster, np.random.default_rng(0)
    )
    assert workload.cluster is given_cluster
    jobs = list(workload.jobs)
    assert all(j.constraint is None or "a5" not in j.constraint.attributes() for j in jobs)


# --------------------------------------------------------------------------------------------
# Parameters


def test_parameters_shape_the_jobs() -> None:
    scenario = parse_scenario(
        {
            "machines": [{"name": "m", "count": 4, "capacity": {"cpu": 4, "mem": 8}}],
            "queues": [{"path": "a"}, {"path": "b"}],
            "workload": {
                "generator": "facebook-2009",
                "jobs": 200,
                "arrival": 5,
                "duration": {"exponential": {"mean": 12}},
                "demand": [{"cpu": 1, "mem": 1}, {"cpu": 1, "mem": 1.5}],
                "users": 3,
                "queues": ["a", "b"],
                "replicas": 2,
                "reduce": {"copy": 4, "compute": 6},
            },
        },
        "s.yaml",
    )
    assert scenario.workload is not None
    workload = generate(
        scenario.workload,
        scenario.cluster,
        np.random.default_rng(0),
        queues=[q.path for q in scenario.queues],
    )
    jobs = list(workload.jobs)
    assert {j.user for j in jobs} == {"user0", "user1", "user2"}
    assert {j.queue for j in jobs} == {"a", "b"}
    assert {tuple(j.demand.tolist()) for j in jobs} == {(1.0, 1.0), (1.0, 1.5)}
    assert {j.duration for j in jobs} == {ExponentialDuration(12.0)}
    assert {j.input_replicas for j in jobs} == {2}
    assert all(j.reduce is not None and (j.reduce.copy, j.reduce.compute) == (4, 6) for j in jobs)
    assert np.diff([0.0] + [j.submit for j in jobs]).mean() == pytest.approx(5.0, rel=0.2)


def test_fixed_duration_map_only_and_no_replicas() -> None:
    jobs, _ = run("zipf", jobs=5, duration=7, reduce=False, replicas=0)
    assert all(j.duration == FixedDuration(7.0) and j.reduce is None for j in jobs)
    assert all(j.input_replicas is None for j in jobs)
    jobs, _ = run("facebook-2009", machines=2, jobs=1)
    assert jobs[0].input_replicas == 2  # 3 by default, at most the machines


@pytest.mark.parametrize(
    ("params", "where", "what"),
    [
        ({"jobs": 0}, "workload.jobs", "must be a whole number >= 1, got 0"),
        ({"arrival": 0}, "workload.arrival", "must be a number > 0, got 0"),
        ({"duration": {"pareto": {"alpha": 0, "min": 1}}}, "workload.duration.pareto.alpha",
         "must be a number > 0, got 0"),
        ({"duration": {"weibull": {}}}, "workload.duration", "must be seconds per task"),
        ({"demand": {"gpu": 1}}, "workload.demand.gpu", "unknown resource 'gpu'"),
        ({"demand": {"cpu": 0}}, "workload.demand", "at least one resource"),
        ({"demand": [{"cpu": 1}, 3]}, "workload.demand[1]", "must be a mapping"),
        ({"users": 1.5}, "workload.users", "whole number >= 1"),
        ({"queues": ["x"]}, "workload.queues[0]", "unknown queue 'x'"),
        ({"replicas": 101}, "workload.replicas", "at most the number of machines (100)"),
        ({"reduce": {"copy": -1}}, "workload.reduce.copy", "must be a number >= 0"),
        ({"reduce": 3}, "workload.reduce", "{copy: S, compute: S}"),
        ({"s": 1}, "workload.s", "unknown parameter for generator 'facebook-2009'"),
    ],
)  # fmt: skip
def test_bad_parameters_name_the_field(params: dict[str, object], where: str, what: str) -> None:
    with pytest.raises(ScenarioError) as err:
        generate(WorkloadSpec("facebook-2009", params), cluster(), np.random.default_rng(0))
    assert err.value.where == where
    assert what in err.value.what


def test_unknown_generator() -> None:
    with pytest.raises(ScenarioError, match="unknown generator 'poisson'; allowed: facebook-2009"):
        generate(WorkloadSpec("poisson"), cluster(), np.random.default_rng(0))


@settings(max_examples=scaled_examples(30), deadline=None)
@given(
    generator=st.sampled_from(GENERATORS),
    seed=st.integers(0, 2**32 - 1),
    jobs=st.integers(1, 30),
    machines=st.integers(1, 20),
)
def test_every_generated_job_is_valid(generator: str, seed: int, jobs: int, machines: int) -> None:
    generated, workload = run(generator, seed=seed, machines=machines, jobs=jobs)
    assert len(generated) == jobs
    previous = 0.0
    for job in generated:
        assert job.submit >= previous
        previous = job.submit
        assert job.tasks >= 1
        assert job.input_replicas is None or 1 <= job.input_replicas <= machines
        assert job.reduce is None or job.reduce.tasks >= 1
        if job.constraint is not None:
            assert job.constraint.mask(workload.cluster.machines).any()
