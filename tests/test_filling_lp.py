"""The progressive-filling LP engine (Choosy section 5.1, Algorithm 1; TSF section V-B) against
the papers' own model.

- The batched freeze test with pooled level rows gives the same allocation, the same levels and
  the same rounds as the papers' model: one level row per user and one freeze-test LP per
  active user per round (Choosy's SATURATED, TSF's FREEZE), on random small problems whose
  users share constraint patterns and demand directions (so that pools form), with weights,
  caps, minimum shares and capped queues.
- Pooled and per-user level rows agree under the batched test too.
- The full-user test (``freeze_test.full_users``, vectorised over distinct usable sets) freezes
  exactly the users its definition does, computed user by user, in every round.
- Every result is feasible: capacity per (type, resource), usable types, caps, minimums, queues.
- Packing a result onto machines keeps each (user, type) amount, fits every machine and
  lists each (user, machine) pair once.
- Machine types (the LP's columns) give each machine the eligibility its own constraint
  evaluation gives, with attribute values that compare equal across types (1, 1.0, true).
- Choosy Figure 1 (u1 = u2 = 1.5, u3 = 3, u4 = 4) holds with every user and machine cloned,
  which puts the clones in one pool.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.solvers.errors import InvalidRequest
from fairshare.solvers.filling_lp import progressive_filling
from fairshare.solvers.filling_model import FillingLP
from fairshare.solvers.filling_problem import FillingProblem, FillingResult
from fairshare.solvers.freeze_test import full_users, growable
from fairshare.solvers.placed import pack_over_machines
from fairshare.workload.eligibility import MachineTypes, machine_types
from fairshare.workload.model import Scenario, User

from conftest import scaled_examples

TOLERANCE = 1e-6


@st.composite
def filling_problems(draw: st.DrawFn) -> FillingProblem:
    """2-4 machine types, 1-2 resources, 1-8 users drawn from 1-3 constraint patterns and 1-3
    demand vectors (so users repeat and pool), weights, some caps, minimums and a queue."""
    resources = draw(st.integers(1, 2))
    types = draw(st.integers(2, 4))
    capacity = np.array(
        [[draw(st.integers(1, 8)) for _ in range(resources)] for _ in range(types)], float
    )
    count = np.array([draw(st.integers(1, 3)) for _ in range(types)], float)
    patterns = [
        np.array([draw(st.booleans()) for _ in range(types)], np.bool_)
        for _ in range(draw(st.integers(1, 3)))
    ]
    kinds = []
    for _ in range(draw(st.integers(1, 3))):
        demand = np.array([draw(st.integers(0, 3)) for _ in range(resources)], float)
        demand[0] = max(demand[0], 1.0)
        kinds.append(demand)
    users = draw(st.integers(1, 8))
    usable = np.array([patterns[draw(st.integers(0, len(patterns) - 1))] for _ in range(users)])
    demands = np.array([kinds[draw(st.integers(0, len(kinds) - 1))] for _ in range(users)])
    weights = np.array([float(draw(st.integers(1, 3))) for _ in range(users)])
    caps = np.array(
        [
            float(draw(st.integers(0, 10))) if draw(st.integers(0, 2)) == 0 else np.inf
            for _ in range(users)
        ]
    )
    initial = np.array(
        [
            float(draw(st.integers(0, 2))) if draw(st.integers(0, 4)) == 0 else 0.0
            for _ in range(users)
        ]
    )
    initial = np.minimum(initial, caps)
    if draw(st.booleans()):  # TSF-like: a share per task of its own per user
        share_per_task = np.array([1.0 / draw(st.integers(1, 20)) for _ in range(users)])
    else:  # CMMF-like: the amount of the first resource
        share_per_task = demands[:, 0].copy()
    members: tuple[np.ndarray, ...] = ()
    group_caps = np.zeros(0)
    if users > 1 and draw(st.booleans()):
        listed = sorted(set(draw(st.lists(st.integers(0, users - 1), min_size=1, max_size=3))))
        members = (np.array(listed, dtype=np.int64),)
        group_caps = np.array([float(draw(st.integers(1, 12)))])
    return FillingProblem(
        capacity=capacity,
        count=count,
        usable=usable,
        demands=demands,
        share_per_task=share_per_task,
        weights=weights,
        caps=caps,
        initial=initial,
        group_members=members,
        group_caps=group_caps,
    )


def _solve(problem: FillingProblem, **options: bool) -> FillingResult | None:
    try:
        return progressive_filling(problem, **options)
    except InvalidRequest:
        return None  # minimum shares that do not fit: every model must say so


def _assert_feasible(problem: FillingProblem, result: FillingResult) -> None:
    types = len(problem.count)
    per_type = result.per_type(types)
    assert np.all(per_type >= -TOLERANCE)
    assert np.all(per_type[~problem.usable] <= TOLERANCE)
    used = np.einsum("it,ir->tr", per_type, problem.demands)
    assert np.all(used <= problem.capacity * problem.count[:, None] + TOLERANCE)
    assert np.allclose(per_type.sum(axis=1), result.tasks, atol=TOLERANCE)
    assert np.all(result.tasks <= problem.caps + TOLERANCE)
    placeable = (problem.usable & (per_type >= 0)).any(axis=1)
    assert np.all(result.tasks[placeable] >= problem.initial[placeable] - TOLERANCE)
    for members, limit in zip(problem.group_members, problem.group_caps, strict=True):
        assert result.tasks[members].sum() <= limit + TOLERANCE


def _assert_same(a: FillingResult, b: FillingResult) -> None:
    scale = max(1.0, float(np.abs(a.tasks).max(initial=0.0)))
    np.testing.assert_allclose(a.tasks, b.tasks, atol=TOLERANCE * scale)
    level_scale = max(1.0, float(np.abs(a.level).max(initial=0.0)))
    np.testing.assert_allclose(a.level, b.level, atol=TOLERANCE * level_scale)


@settings(
    max_examples=scaled_examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(filling_problems())
def test_batched_pooled_test_equals_papers_per_user_test(problem: FillingProblem) -> None:
    batched = _solve(problem)
    per_user = _solve(problem, per_user_test=True)
    assert (batched is None) == (per_user is None)
    if batched is None or per_user is None:
        return
    _assert_feasible(problem, batched)
    _assert_feasible(problem, per_user)
    _assert_same(batched, per_user)


@settings(
    max_examples=scaled_examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(filling_problems())
def test_pooled_rows_equal_per_user_rows(problem: FillingProblem) -> None:
    pooled = _solve(problem)
    own_rows = _solve(problem, pool=False)
    assert (pooled is None) == (own_rows is None)
    if pooled is None or own_rows is None:
        return
    _assert_same(pooled, own_rows)


def _full_by_definition(model: FillingLP) -> np.ndarray:
    """``freeze_test.full_users`` as its docstring defines it, one active user at a time: the
    closure grows from the user's usable types by every usable type of a class the LP places
    on a type already in it; a resource the user demands is full when the classes whose
    usable types all lie in the closure hold (at the level) at least 1 - 1e-9 of it there."""
    p = model.problem
    usable = model.usable[model.class_first]
    y = model.solution[: len(model.pair_class)]
    placed_on = [set() for _ in range(len(p.count))]
    for c, t, value in zip(model.pair_class, model.pair_type, y, strict=True):
        if value > 0:
            placed_on[t].add(int(c))
    held = np.zeros(model.users)
    member = np.flatnonzero(model.class_of >= 0)
    held[member] = model.held(member) * model.scale[member]
    out = np.zeros(model.users, dtype=np.bool_)
    for i in np.flatnonzero(model.active & (model.class_of >= 0)):
        closure = set(np.flatnonzero(model.usable[i]).tolist())
        while True:
            wider = set(closure)
            for t in closure:
                for c in placed_on[t]:
                    wider |= set(np.flatnonzero(usable[c]).tolist())
            if wider == closure:
                break
            closure = wider
        inside = [c for c in range(len(usable)) if set(np.flatnonzero(usable[c])) <= closure]
        users = np.flatnonzero(np.isin(model.class_of, inside))
        used = (held[users, None] * p.demands[users]).sum(axis=0)
        types = sorted(closure)
        capacity = (p.capacity[types] * p.count[types, None]).sum(axis=0)
        out[i] = bool(np.any((p.demands[i] > 0) & (used >= (1 - 1e-9) * capacity)))
    return out


@settings(
    max_examples=scaled_examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(filling_problems(), st.data())
def test_full_users_equal_their_definition_in_every_round(
    problem: FillingProblem, data: st.DataObject
) -> None:
    """At the LP's placement of every round, and at any other placement (which classes sit on
    which types: chains of types the LP seldom makes on problems this small)."""
    try:
        model = FillingLP(problem)
        while model.active.any():
            model.raise_level()
            if not model.active.any():
                break
            np.testing.assert_array_equal(full_users(model), _full_by_definition(model))
            solution = model.solution
            pairs = len(model.pair_class)
            placed = data.draw(st.lists(st.booleans(), min_size=pairs, max_size=pairs))
            model.solution = solution.copy()
            model.solution[:pairs] = np.array(placed, dtype=np.float64)
            np.testing.assert_array_equal(full_users(model), _full_by_definition(model))
            model.solution = solution
            frozen = model.active & ~growable(model)
            if not frozen.any():
                break
            model.freeze(frozen)
    except InvalidRequest:
        return  # minimum shares that do not fit


def test_full_users_follow_a_chain_of_displacements() -> None:
    """x may use type A only, p A or B, q B or C (one slot each); q is capped at half a task.
    With p placed on A and q on B, x can grow: q moves to C, p to B. Its closure is all three
    types (two displacements away), where half a slot is free; one step away (A, B) is full."""
    problem = FillingProblem(
        capacity=np.ones((3, 1)),
        count=np.ones(3),
        usable=np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=np.bool_),
        demands=np.ones((3, 1)),
        share_per_task=np.ones(3),
        weights=np.ones(3),
        caps=np.array([np.inf, np.inf, 0.5]),
        initial=np.zeros(3),
    )
    model = FillingLP(problem)
    model.raise_level()
    assert model.active.tolist() == [True, True, False]
    placed = {(0, 0), (1, 0), (2, 1)}  # (class, type): x and p on A, q on B
    pairs = zip(model.pair_class, model.pair_type, strict=True)
    model.solution[: len(model.pair_class)] = [float((int(c), int(t)) in placed) for c, t in pairs]
    assert full_users(model).tolist() == [False, False, False]
    assert _full_by_definition(model).tolist() == [False, False, False]


@pytest.mark.parametrize("copies", [1, 3])
def test_choosy_figure_1_with_clones(copies: int) -> None:
    """Choosy Figure 1 (and Figure 4's divisible CMMF): machines m1..m10 as types by eligible
    users ({m1}, {m2}, {m3}, {m4}, {m5, m8, m9, m10}, {m6, m7}), every machine and user cloned
    ``copies`` times: the clones of a user share a pool and each gets the paper's amount."""
    count = np.array([1, 1, 1, 1, 4, 2], float) * copies
    usable = np.array(
        [
            [1, 0, 0, 1, 0, 0],  # u1: m1, m4
            [0, 0, 1, 1, 0, 0],  # u2: m3, m4
            [0, 1, 1, 1, 0, 1],  # u3: m2, m3, m4, m6, m7
            [0, 0, 0, 0, 1, 1],  # u4: m5..m10
        ],
        np.bool_,
    )
    usable = np.repeat(usable, copies, axis=0)
    users = len(usable)
    problem = FillingProblem(
        capacity=np.ones((6, 1)),
        count=count,
        usable=usable,
        demands=np.ones((users, 1)),
        share_per_task=np.ones(users),
        weights=np.ones(users),
        caps=np.full(users, np.inf),
        initial=np.zeros(users),
    )
    expected = np.repeat([1.5, 1.5, 3.0, 4.0], copies)
    for options in ({}, {"per_user_test": True}):
        result = progressive_filling(problem, **options)
        np.testing.assert_allclose(result.tasks, expected, atol=1e-9)
        _assert_feasible(problem, result)
        # two rounds: u1 and u2 freeze at 1.5, then u3 at 3 (u4 reaches 4 in the last round)
        assert [round(level, 9) for level, _ in result.rounds][:2] == [1.5, 3.0]


@settings(
    max_examples=scaled_examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(filling_problems())
@example(
    # HiGHS 1.16 stopped this one's third level LP in status Unknown when warm-started
    # (tests/test_filling_highs_retry.py)
    FillingProblem(
        capacity=np.array([[6.0], [1.0], [1.0], [1.0]]),
        count=np.array([3.0, 1.0, 2.0, 3.0]),
        usable=np.array([[1, 1, 0, 1], [0, 1, 0, 1]] + [[1, 1, 0, 1]] * 4 + [[1, 0, 1, 0]], bool),
        demands=np.ones((7, 1)),
        share_per_task=np.ones(7),
        weights=np.array([1.0, 2.0, 1.0, 1.0, 1.0, 3.0, 3.0]),
        caps=np.array([np.inf] * 5 + [7.0, np.inf]),
        initial=np.zeros(7),
        group_members=(np.array([0], dtype=np.int64),),
        group_caps=np.array([1.0]),
    )
)
def test_packing_onto_machines_is_feasible_and_keeps_amounts(problem: FillingProblem) -> None:
    result = _solve(problem)
    if result is None:
        return
    types = len(problem.count)
    count = problem.count.astype(np.int64)
    machine_type = np.repeat(np.arange(types), count)[::-1].copy()  # types interleave freely
    layout = MachineTypes(
        machine_type=machine_type,
        capacity=problem.capacity,
        count=count,
        eligible=problem.usable,
    )
    users = len(problem.demands)
    placement = pack_over_machines(
        layout, result.pair_user, result.pair_type, result.pair_tasks, users, problem.demands
    )
    pairs = set(zip(placement.users.tolist(), placement.machines.tolist(), strict=True))
    assert len(pairs) == len(placement.users)
    assert np.all(placement.tasks > 0)
    per_type = np.zeros((users, types))
    np.add.at(per_type, (placement.users, machine_type[placement.machines]), placement.tasks)
    np.testing.assert_allclose(per_type, result.per_type(types), atol=TOLERANCE)
    usage = placement.machine_usage(problem.demands)
    assert np.all(usage <= problem.capacity[machine_type] + TOLERANCE)


CONSTRAINTS = [
    "gpu",
    "not gpu",
    "gpu == 1",
    "gpu == true",
    "cores > 1",
    "zone == 'x' or rack == 'r1'",
    "gpu and cores >= 2",
    "zone != 'y'",
]
VALUES = [True, False, 1, 0, 1.0, 2, 2.5, "x", "y"]


@settings(max_examples=scaled_examples(100), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.dictionaries(st.sampled_from(["gpu", "cores", "zone"]), st.sampled_from(VALUES)),
            st.sampled_from([None, "r1", "r2"]),
            st.integers(1, 3),
        ),
        min_size=1,
        max_size=8,
    ),
    st.lists(st.sampled_from(CONSTRAINTS), min_size=1, max_size=6),
)
def test_machine_types_match_each_machine(
    entries: list[tuple[dict[str, object], str | None, int]], constraints: list[str]
) -> None:
    machines = []
    for k, (attributes, rack, copies) in enumerate(entries):
        capacity = np.array([1.0])
        for c in range(copies):  # like the loader's `count`: one capacity array, equal dicts
            machines.append(Machine(f"m{k}-{c}", capacity, rack, dict(attributes)))  # type: ignore[arg-type]
    scenario = Scenario(
        source="<test>",
        cluster=Cluster.build(("cpu",), machines),
        users=tuple(
            User(f"u{i}", np.array([1.0]), constraint=Constraint(text))
            for i, text in enumerate(constraints)
        ),
    )
    types = machine_types(scenario)
    expected = np.array([[Constraint(t).matches(m) for m in machines] for t in constraints])
    np.testing.assert_array_equal(types.eligible[:, types.machine_type], expected)
