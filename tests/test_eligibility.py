"""Machine-type coalescing (Choosy section 5.1) agrees machine by machine with the constraints,
and the online policies, the reference schedulers and the solvers take their eligibility from
the one model, :mod:`fairshare.workload.eligibility`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster import BoolArray, Cluster, Machine
from fairshare.cluster.constraints import Constraint, parse_constraint
from fairshare.policies.state import ClusterState
from fairshare.sim.engine import simulate
from fairshare.sim.reference import make_reference
from fairshare.solvers import solve
from fairshare.workload import eligibility
from fairshare.workload.eligibility import machine_types
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import FixedDuration, Job, Scenario

SCENARIO = {
    "resources": ["cpu", "mem"],
    "machines": [
        {"name": "a", "count": 3, "capacity": {"cpu": 4, "mem": 8}, "attributes": {"gpu": True}},
        {"name": "b", "count": 2, "capacity": {"cpu": 4, "mem": 8}, "attributes": {"gpu": False}},
        {"name": "c", "count": 4, "capacity": {"cpu": 8, "mem": 8}, "rack": "r2"},
        {"name": "d", "count": 2, "capacity": {"cpu": 4, "mem": 8}, "attributes": {"gpu": True}},
    ],
    "users": [
        {"name": "any", "demand": {"cpu": 1}},
        {"name": "gpu", "demand": {"cpu": 1}, "constraint": "gpu"},
        {"name": "rack", "demand": {"cpu": 1}, "constraint": "rack == 'r2' or not gpu"},
        {"name": "listed", "demand": {"cpu": 1}, "machines": ["a-0", "c-3"]},
        {"name": "named", "demand": {"cpu": 1}, "constraint": "name in ['d-1', 'b-0']"},
    ],
}


def test_types_coalesce_equal_machines_and_split_on_whitelists_and_names() -> None:
    scenario = parse_scenario(SCENARIO, "<inline>")
    types = machine_types(scenario)
    # a-0 (listed) | a-1, a-2, d-0 | b-0 (named) | b-1 | c-0..c-2 | c-3 (listed) | d-1 (named)
    assert types.machine_type.tolist() == [0, 1, 1, 2, 3, 4, 4, 4, 5, 1, 6]
    assert types.count.tolist() == [1, 3, 1, 1, 3, 1, 1]
    assert types.capacity[4].tolist() == [8, 8]


def test_type_eligibility_matches_each_machine() -> None:
    scenario = parse_scenario(SCENARIO, "<inline>")
    types = machine_types(scenario)
    machines = scenario.cluster.machines
    expected = np.array(
        [
            [
                (u.constraint is None or u.constraint.matches(m))
                and (u.machines is None or m.name in u.machines)
                for m in machines
            ]
            for u in scenario.users
        ]
    )
    np.testing.assert_array_equal(scenario.eligibility(), expected)
    np.testing.assert_array_equal(types.eligible[:, types.machine_type], expected)


def test_true_and_one_are_different_machine_types() -> None:
    """Python finds ``True == 1``; the constraint language does not (``gpu == 1`` rejects a
    machine whose ``gpu`` is ``true``). Two such machines in a row once shared a type, and
    the second inherited the first's verdict (found by Hypothesis). Exact solvers (types)
    and online policies (signatures) now keep them apart."""
    scenario = parse_scenario(
        {
            "resources": ["cpu"],
            "machines": [
                {"name": "t", "capacity": {"cpu": 4}, "attributes": {"gpu": True}},
                {"name": "one", "capacity": {"cpu": 4}, "attributes": {"gpu": 1}},
            ],
            "users": [{"name": "u", "demand": {"cpu": 1}, "constraint": "gpu == 1"}],
        },
        "<inline>",
    )
    types = machine_types(scenario)
    assert types.machine_type.tolist() == [0, 1]
    assert types.eligible[:, types.machine_type].tolist() == [[False, True]]

    jobs = [
        Job(
            "j", 0.0, "u", np.array([1.0]), 6, FixedDuration(1.0), constraint=Constraint("gpu == 1")
        )
    ]
    for policy in ("drf", "choosy", "tsf", "hdrf"):
        log = simulate(scenario.cluster, jobs, policy, seed=0)
        assert {a.machine for a in log.attempts} == {"one"}, policy
        assert [j.finish for j in log.jobs] == [2.0], policy


# ------------------------------------------------------------------ one eligibility model

# Constraints over what the machines below may carry: boolean, integer and string
# attributes, the rack and the name (names make a class be evaluated machine by machine).
CONSTRAINTS = [
    None,
    "gpu",
    "not gpu",
    "gpu == 1",
    "zone == 'a'",
    "zone != 'b' and gpu",
    "rack == 'r1' or not gpu",
    "name in ['m0', 'm3', 'm5']",
    "name != 'm1' and zone == 'a'",
]
NAMES = [f"m{i}" for i in range(8)]


@st.composite
def machines(draw: st.DrawFn) -> list[Machine]:
    """Eight one-resource machines with a few attribute values, often repeated, so that
    signatures are shared and split (every name exists: the loader checks whitelists)."""
    out = []
    for name in NAMES:
        attributes: dict[str, bool | int | str] = {}
        gpu = draw(st.sampled_from([None, True, False, 1]))
        if gpu is not None:
            attributes["gpu"] = gpu
        zone = draw(st.sampled_from([None, "a", "b"]))
        if zone is not None:
            attributes["zone"] = zone
        rack = draw(st.sampled_from([None, "r1", "r2"]))
        capacity = np.array([draw(st.sampled_from([4.0, 8.0]))])
        out.append(Machine(name, capacity, rack, attributes))
    return out


classes = st.tuples(
    st.sampled_from(CONSTRAINTS),
    st.none() | st.frozensets(st.sampled_from(NAMES), min_size=1, max_size=4),
)


def _job(k: int, constraint: str | None, whitelist: frozenset[str] | None) -> Job:
    return Job(
        f"j{k}",
        0.0,
        f"u{k}",
        np.array([1.0]),
        1,
        FixedDuration(1.0),
        constraint=None if constraint is None else parse_constraint(constraint),
        machines=whitelist,
    )


def _scenario(cluster: list[Machine], jobs: list[Job]) -> Scenario:
    users = [
        {
            "name": job.user,
            "demand": {"cpu": 1},
            **({} if job.constraint is None else {"constraint": job.constraint.source}),
            **({} if job.machines is None else {"machines": sorted(job.machines)}),
        }
        for job in jobs
    ]
    described = [
        {
            "name": m.name,
            "capacity": {"cpu": float(m.capacity[0])},
            "attributes": dict(m.attributes),
            **({} if m.rack is None else {"rack": m.rack}),
        }
        for m in cluster
    ]
    return parse_scenario({"machines": described, "users": users}, "<drawn>")


@settings(max_examples=60, deadline=None)
@given(machines(), st.lists(classes, min_size=1, max_size=5), st.integers(0, 4))
def test_policies_reference_schedulers_and_solvers_share_one_eligibility(
    cluster: list[Machine], drawn: list[tuple[str | None, frozenset[str] | None]], late: int
) -> None:
    """The online policies' ClusterState (per signature or per machine, also for machines
    that join after the class exists), the reference schedulers' tables and the solvers'
    machine types all equal ``eligibility.allowed`` machine by machine."""
    jobs = [_job(k, constraint, whitelist) for k, (constraint, whitelist) in enumerate(drawn)]
    first = cluster[: max(1, len(cluster) - late)]
    joining = cluster[len(first) :]
    state = ClusterState(["cpu"], first)
    reference = make_reference("offline-restricted", Cluster.build(["cpu"], first))
    for k, job in enumerate(jobs):
        state.class_of(job)
        reference.job_submitted(0.0, k, job)
    for machine in joining:
        state.add_machine(machine)
        reference.machine_added(0.0, machine)
    types = machine_types(_scenario(cluster, jobs))
    for k, job in enumerate(jobs):
        expected = eligibility.allowed(job.constraint, job.machines, cluster).tolist()
        by_hand = [
            (job.constraint is None or job.constraint.matches(m))
            and (job.machines is None or m.name in job.machines)
            for m in cluster
        ]
        assert expected == by_hand
        cls = state.class_of(job)
        assert [state.eligible(cls, mi) for mi in range(len(cluster))] == expected
        unit = reference.units[reference.jobs[k].unit]
        assert [bool(b) for b in reference.eligible[unit.cls]] == expected
        assert types.eligible[k, types.machine_type].tolist() == expected


def test_the_three_users_take_eligibility_from_the_one_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Patch the canonical functions to refuse one machine: the online policies, the
    reference schedulers and the solvers all stop using it, so none keeps a copy of the
    rules."""
    spec = {
        "resources": ["cpu"],
        "machines": [
            {"name": "m", "count": 3, "capacity": {"cpu": 4}, "attributes": {"pool": "x"}},
            # a capacity of its own: a signature (and a machine type) of its own
            {"name": "big", "capacity": {"cpu": 8}, "attributes": {"pool": "x"}},
        ],
        "users": [{"name": "a", "demand": {"cpu": 1}, "constraint": "pool == 'x'"}],
    }
    scenario = parse_scenario(spec, "<inline>")
    cluster = scenario.cluster
    jobs = [
        Job(
            "j",
            0.0,
            "a",
            np.array([1.0]),
            20,
            FixedDuration(10.0),
            constraint=Constraint("pool == 'x'"),
        )
    ]

    def used() -> tuple[set[str], set[str], float]:
        online = {a.machine for a in simulate(cluster, jobs, "drf", seed=0).attempts}
        reference = make_reference("offline-restricted", cluster)
        offline = {a.machine for a in simulate(cluster, jobs, reference, seed=0).attempts}
        allocation = solve(scenario, "tsf", integral=True)
        assert allocation.placement is not None
        on_big = allocation.placement.toarray()[0, 3]
        return online, offline, float(on_big)

    assert used() == ({"m-0", "m-1", "m-2", "big"}, {"m-0", "m-1", "m-2", "big"}, 8.0)

    real_allows, real_allowed = eligibility.allows, eligibility.allowed

    def allows(
        constraint: Constraint | None, whitelist: frozenset[str] | None, machine: Machine
    ) -> bool:
        return machine.name != "big" and real_allows(constraint, whitelist, machine)

    def allowed(
        constraint: Constraint | None,
        whitelist: frozenset[str] | None,
        machines: Sequence[Machine],
        codes: eligibility.AttributeCodes | None = None,
    ) -> BoolArray:
        ok = real_allowed(constraint, whitelist, machines, codes)
        return ok & np.array([m.name != "big" for m in machines], dtype=np.bool_)

    monkeypatch.setattr(eligibility, "allows", allows)
    monkeypatch.setattr(eligibility, "allowed", allowed)
    assert used() == ({"m-0", "m-1", "m-2"}, {"m-0", "m-1", "m-2"}, 0.0)
