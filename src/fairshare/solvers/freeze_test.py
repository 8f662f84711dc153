"""The freeze test of progressive filling (Choosy's SATURATED in section 5.1's Algorithm 1, TSF's
FREEZE in section V-B's Algorithm 1): which active users can still grow at the round's level
while every other user keeps its level.

The papers solve one LP per active user per round: quadratic in the users. Here each active
user j has a slack column v_j in its level row ``n_j - k_j * level - v_j >= 0`` (scaled), held
at 0 while the level rises. After the level LP, the level is fixed and one LP maximises the sum
of v_j over the undecided users, each v_j in [0, delta]. Every user with v_j > 0 in that
solution can grow (the solution itself is the witness); if none can, every undecided user is
frozen, since any user able to grow alone would make the sum positive. Otherwise the users
found are set aside (their v_j stays free in [0, delta] but leaves the objective) and the LP is
solved again over the rest. Each solve either finds a new growing user or proves that all
remaining ones are frozen, and Choosy 5.1's convexity argument (growing users can grow
together) makes a small delta find almost all of them at once: in practice a round costs the
level LP plus two warm-started freeze LPs, however many users there are (:func:`growable`).

Before that, a user that needs a resource which is full over every type its tasks could reach
(:func:`full_users`) is frozen without an LP, a test in units of the resource's capacity: the
LP's tolerance, in units of the rows it shares with far larger users, can hide a need of a full
resource a billionth of a user's others. Then a user with room left on a type it may use
(every resource it demands below capacity there, and no queue cap) grows without any LP
(:func:`room_to_grow`); at a level just reached that is nearly every growing user, so the
freeze LP has only the few others to decide. The result is exactly the papers' per-user test,
which :func:`growable_per_user` implements for the tests that check it
(``tests/test_filling_lp.py``).

(Dual values alone are not enough: a user is frozen iff its level row is tight on the whole
optimal face, i.e. iff some optimal dual prices its row positively (Goldman-Tucker), but a
simplex returns one vertex dual, which can price a growable user's row at zero or a frozen
user's row too. Saturation of every type a user may use is necessary, not sufficient: the user
can still grow by displacing another onto a type with room; hence :func:`full_users` sums a
resource over the types such displacements can reach.)
"""

from __future__ import annotations

import numpy as np

from fairshare.allocation.types import IntArray
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.filling_model import FillingLP

_DELTA = 1e-3
"""Upper bound of a freeze-test slack, as a fraction of the user's tasks alone: small, so that
many growing users reach it at once and a vertex cannot hand all room to a few."""
_GROWS = 1e-8
"""A slack above this (fraction of the user's tasks alone) means the user can grow."""
_ROOM = 1e-7
"""A capacity row (scaled to the type's total) filled above ``1 - _ROOM`` counts as full when
looking for users with room to grow: larger than the LP tolerance, so a row that only looks
slack by rounding sends its users to the freeze-test LP instead."""

_FULL = 1e-9
"""A resource counts as full on a set of machine types when what their users hold at the
round's level leaves less than this fraction of it: ten times the LP's tolerance, the
precision to which the level LP fills its binding rows (see :func:`full_users`)."""


def growable(model: FillingLP) -> BoolArray:
    """The batched freeze test: which active users can still grow at the current level while
    every other user keeps its level (see the module docstring).

    A pool's members grow or not together: they are interchangeable. Users with room on a
    type of theirs (:func:`room_to_grow`) grow without an LP; their slacks stay at 0, which
    keeps the test exact for the others (a user that can grow can do so with everyone else
    held). The model is left as it was found (slacks at 0, out of the objective).

    Parameters
    ----------
    model : FillingLP
        The model, just after :meth:`FillingLP.raise_level`.

    Returns
    -------
    BoolArray
        Per user: True for the active users that can grow.

    Raises
    ------
    SolverFailure
        HiGHS could not solve a freeze-test LP.

    Examples
    --------
    Choosy Figure 1 at the first round's level, 1.5 machines: u1 and u2 have filled the
    machines they may use (found without an LP), u3 and u4 can still grow.

    >>> from fairshare.solvers.filling_problem import FillingProblem
    >>> usable = np.array(
    ...     [[1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1]],
    ...     dtype=np.bool_,
    ... )
    >>> problem = FillingProblem(
    ...     capacity=np.ones((6, 1)), count=np.array([1.0, 1, 1, 1, 4, 2]), usable=usable,
    ...     demands=np.ones((4, 1)), share_per_task=np.ones(4), weights=np.ones(4),
    ...     caps=np.full(4, np.inf), initial=np.zeros(4),
    ... )
    >>> model = FillingLP(problem)
    >>> _ = model.raise_level()
    >>> full_users(model).tolist()
    [True, True, False, False]
    >>> growable(model).tolist()
    [False, False, True, True]
    """
    active, bound = _columns(model)
    grows = np.zeros(model.entities, dtype=np.bool_)
    full = np.zeros(model.entities, dtype=np.bool_)
    full[model.entity_of[full_users(model)]] = True
    obvious = room_to_grow(model)
    grows[model.entity_of[obvious]] = True
    grows &= ~full
    keep = ~grows[active] & ~full[active]
    active, bound = active[keep], bound[keep]
    v = model.v0 + active
    model.set_bounds(v, np.zeros(len(v)), bound)
    undecided = active
    try:
        while len(undecided):
            cost = np.zeros(len(active))
            cost[np.isin(active, undecided)] = 1.0
            model.set_costs(v, cost)
            model.solve("freeze test")
            found = active[_slack_values(model, v) > _GROWS]
            if not np.isin(found, undecided).any():
                break
            grows[found] = True
            undecided = undecided[~grows[undecided]]
    finally:
        model.set_costs(v, np.zeros(len(v)))
        model.set_bounds(v, np.zeros(len(v)), np.zeros(len(v)))
    return _growing_users(model, grows)


def growable_per_user(model: FillingLP) -> BoolArray:
    """The papers' freeze test (Choosy's SATURATED, TSF's FREEZE): one LP per active entity
    (per user in the per-user model), maximising it alone while the others keep their level.

    The same answer as :func:`growable`, at one LP per entity; for the tests that check the
    batched test against it.

    Parameters
    ----------
    model : FillingLP
        The model, just after :meth:`FillingLP.raise_level`.

    Returns
    -------
    BoolArray
        Per user: True for the active users that can grow.

    Raises
    ------
    SolverFailure
        HiGHS could not solve a freeze-test LP.
    """
    active, bound = _columns(model)
    grows = np.zeros(model.entities, dtype=np.bool_)
    full = np.zeros(model.entities, dtype=np.bool_)
    full[model.entity_of[full_users(model)]] = True
    keep = ~full[active]
    for e, most in zip(active[keep], bound[keep], strict=True):
        col = np.array([model.v0 + e], dtype=np.int64)
        model.set_bounds(col, np.zeros(1), np.full(1, most))
        model.set_costs(col, np.ones(1))
        try:
            model.solve("freeze test")
        finally:
            model.set_costs(col, np.zeros(1))
            model.set_bounds(col, np.zeros(1), np.zeros(1))
        grows[e] = model.solution[model.v0 + e] > _GROWS
    return _growing_users(model, grows)


def least_growing(model: FillingLP) -> BoolArray:
    """The active users that grow least, when the batched test finds every one able to grow
    although the level LP could not raise their level: a contradiction only rounding makes
    (by Choosy 5.1's convexity argument, users that can each grow can grow together, so the
    level would rise by the least growth over their number). The LP's tolerance then lets a
    user whose need of a full resource is a tiny entry of its row seem to grow; the users
    that grow least are those the full resource holds.

    Parameters
    ----------
    model : FillingLP
        The model, just after :meth:`FillingLP.raise_level`.

    Returns
    -------
    BoolArray
        Per user: True for the active users whose entity's most growth, alone with every
        other user held at its level (the papers' per-user test), is the least.

    Raises
    ------
    SolverFailure
        HiGHS could not solve a freeze-test LP.
    """
    active, bound = _columns(model)
    growth = np.full(model.entities, np.inf)
    for e, most in zip(active, bound, strict=True):
        col = np.array([model.v0 + e], dtype=np.int64)
        model.set_bounds(col, np.zeros(1), np.full(1, most))
        model.set_costs(col, np.ones(1))
        try:
            model.solve("freeze test")
        finally:
            model.set_costs(col, np.zeros(1))
            model.set_bounds(col, np.zeros(1), np.zeros(1))
        growth[e] = model.solution[model.v0 + e] / most if most > 0 else 0.0
    least = growth <= growth.min() * (1 + 1e-6) + _GROWS
    return _growing_users(model, least)


def full_users(model: FillingLP) -> BoolArray:
    """Active users that cannot grow, decided without an LP and relative to capacity.

    The *closure* of a user is the set of machine types its tasks could end up on after any
    reshuffle: its usable types, and every usable type of a class the level LP's solution
    places on a type already in the set. Every class with all its usable types inside a
    closure keeps at least what it holds at the level (:meth:`FillingLP.held`) inside it, and
    every other class is outside it (or it would be in the closure), so when a resource the
    user demands is full over its closure at those amounts (``_FULL``), the user cannot grow
    without lowering someone: it is frozen (Choosy Algorithm 1's SATURATED, TSF Algorithm 1's
    FREEZE). With one resource, or when the closure is one type, the converse holds too
    (queue caps aside): the freeze-test LP then only confirms growth.

    The test is in units of the resource's capacity, not the user's: a user whose need of a
    full resource is 1e-9 of its other needs, or one that could take a type a billionth of
    the cluster's size, would otherwise "grow" within the LP's tolerance (one part in 10^10
    of the rows it shares with users a billion times larger).

    Parameters
    ----------
    model : FillingLP
        The model, with a solution of the level LP (``model.solution``).

    Returns
    -------
    BoolArray
        Per user: True for the active users that a full resource freezes.
    """
    out = np.zeros(model.users, dtype=np.bool_)
    classes = len(model.class_first)
    if not classes or not model.active.any():
        return out
    p = model.problem
    # Relations between types are products of boolean matrices: numpy computes those
    # itself, while a float product this size goes to a multithreaded BLAS whose idle
    # workers spin, costing more CPU than the whole test and slowing the next LP.
    sets = model.type_sets  # distinct usable sets x types
    set_of_class = model.set_of_class
    types = sets.shape[1]
    placed = np.flatnonzero(model.solution[: len(model.pair_class)] > 0)
    # reach[t, u]: a class placed on type t may use type u (reflexive, transitive)
    reach = np.eye(types, dtype=np.bool_)
    if len(placed):
        on = model.pair_type[placed]
        order = np.argsort(on, kind="stable")
        on, placed = on[order], placed[order]
        first = np.flatnonzero(np.r_[True, on[1:] != on[:-1]])
        uses = sets[set_of_class[model.pair_class[placed]]]
        reach[on[first]] |= np.logical_or.reduceat(uses, first, axis=0)
    while True:
        wider = reach @ reach
        if np.array_equal(wider, reach):
            break
        reach = wider
    active_class = np.unique(model.class_of[model.active & (model.class_of >= 0)])
    active_set = np.unique(set_of_class[active_class])
    closure = sets[active_set] @ reach
    distinct, which = _distinct_rows(closure)
    # inside[k, s]: type set s lies in closure k
    inside = ~((~distinct) @ sets.T)
    member = np.flatnonzero(model.class_of >= 0)
    tasks = model.held(member) * model.scale[member]
    member_set = set_of_class[model.class_of[member]]
    set_use = np.stack(
        [
            np.bincount(member_set, weights=tasks * p.demands[member, r], minlength=len(sets))
            for r in range(p.demands.shape[1])
        ],
        axis=1,
    )
    used = inside.astype(np.float64) @ set_use
    capacity = distinct.astype(np.float64) @ (p.capacity * p.count[:, None])
    full = used >= (1.0 - _FULL) * capacity
    closure_of_set = np.zeros(len(sets), dtype=np.int64)
    closure_of_set[active_set] = which
    blocked = np.zeros(classes, dtype=np.bool_)
    mine = closure_of_set[set_of_class[active_class]]
    blocked[active_class] = (full[mine] & (model.class_unit[active_class] > 0)).any(axis=1)
    out[member] = blocked[model.class_of[member]]
    return np.asarray(out & model.active, dtype=np.bool_)


def room_to_grow(model: FillingLP) -> BoolArray:
    """Active users that can grow alone in the current LP solution: some type they may use has
    room left in every resource they demand (and no queue's cap binds them, since their queue
    is left out).

    They need no freeze-test LP: at a level just reached, most users that can still grow are
    such users, and the LP then decides only the rest.

    Parameters
    ----------
    model : FillingLP
        The model, with a solution of the level LP (``model.row_value``).

    Returns
    -------
    BoolArray
        Per user: True for the active users with room on a type of theirs.
    """
    rows = model.cap_row >= 0
    tight = np.zeros(model.cap_row.shape, dtype=np.bool_)
    tight[rows] = model.row_value[model.cap_row[rows]] >= 1.0 - _ROOM
    # a boolean product: numpy's own loop, not a multithreaded BLAS (see full_users)
    blocked = (model.problem.demands > 0) @ tight.T
    open_type = (model.usable & ~blocked).any(axis=1)
    return np.asarray(model.active & ~model.in_group & open_type, dtype=np.bool_)


def _columns(model: FillingLP) -> tuple[IntArray, FloatArray]:
    """The active entities and the most each may grow in a freeze test: ``_DELTA``, or a
    pool's room below its active members' caps when that is less."""
    active = np.flatnonzero(model.entity_active(np.arange(model.entities)))
    room = model.pool_sums(
        np.where(model.active, model.scaled_cap - model.coefficient * model.current_level, 0.0)
    )
    bound = np.where(active < model.pools, np.minimum(room[active], _DELTA), _DELTA)
    return active, bound


def _growing_users(model: FillingLP, grows: BoolArray) -> BoolArray:
    """Active users whose entity ``grows`` (per entity)."""
    out = np.zeros(model.users, dtype=np.bool_)
    mine = np.flatnonzero(model.active)
    out[mine] = grows[model.entity_of[mine]]
    return out


def _slack_values(model: FillingLP, cols: IntArray) -> FloatArray:
    """The last solve's values of the slack columns ``cols``."""
    return np.asarray(model.solution[cols], dtype=np.float64)


def _distinct_rows(rows: BoolArray) -> tuple[BoolArray, IntArray]:
    """The distinct rows of a boolean matrix and, per row, the index of its distinct row
    (``np.unique(rows, axis=0)``, whose row-wise sort costs far more than this on bytes)."""
    packed = np.ascontiguousarray(np.packbits(rows, axis=1))
    keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, which = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], np.asarray(which, dtype=np.int64).ravel()
