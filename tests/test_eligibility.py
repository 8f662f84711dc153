"""Machine-type coalescing (Choosy section 5.1) agrees machine by machine with the constraints."""

from __future__ import annotations

import numpy as np

from fairshare.cluster.constraints import Constraint
from fairshare.sim.engine import simulate
from fairshare.workload.eligibility import machine_types
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import FixedDuration, Job

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
