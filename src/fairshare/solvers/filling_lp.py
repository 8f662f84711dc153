"""Exact progressive filling over machine types by linear programming (Choosy section 5.1,
Algorithm 1; TSF section V-B, Algorithm 1).

One engine computes every divisible constrained max-min allocation whose equalised quantity is
linear in a user's tasks: constrained max-min fairness (Choosy 4.2, 4.2.1), Task Share Fairness
(TSF V-A), constrained CDRF (TSF IV-B3) and DRFH (TSF IV-B2). User i's share is
``share_per_task[i] * n_i`` and the engine maximises, leximin, the weighted level
``share_i / weight_i`` subject to

- machine capacity per (machine type, resource): machines are coalesced into types as in Choosy
  5.1 (``fairshare.workload.eligibility``), one variable per (user, type) and one capacity row
  per (type, resource) that some eligible user demands;
- eligibility (the constraint graph of Choosy section 3 / TSF II-A, on types);
- caps (``User.cap``, a user's demand) and queue ``max_share`` as upper bounds;
- minimum shares as lower bounds: filling starts from them, a user above the water is left
  where it is until the level reaches it (FAIR Appendix A's rule, as in ``waterfill``).

The rounds are those of the papers' Algorithm 1 (:func:`progressive_filling`): an LP raises the
level of the active users as far as it goes, then a freeze test finds the users that cannot
grow any further (holding every other user at its level) and freezes them at the round's level;
the others stay active. The problem and its result are :mod:`fairshare.solvers.filling_problem`;
the one HiGHS model, built once and modified between solves, is
:class:`~fairshare.solvers.filling_model.FillingLP`; the freeze test, batched (a few LPs per
round however many users there are) and exactly the papers' per-user test, is
:mod:`fairshare.solvers.freeze_test`; a scenario becomes a problem, and the result an
allocation placed on machines, in :mod:`fairshare.solvers.placed`.

Users with the same usable types and the same demand direction are interchangeable on the
machines, so they share one variable per type (a "class", weighted by each member's size);
a single-resource problem thus has one variable per (constraint pattern, type), and classes are
split back into users at the end without losing exactness.

**Pools.** For the same reason a class's users without a minimum share or a capped queue share
one level row: at the round's level L they need ``K_c * L`` together (``K_c`` the sum of their
coefficients) on top of ``F_c``, what its frozen members hold, and whether the class can grow
is a property of the class, so one freeze-test slack serves them all. Members frozen at their
caps or by the freeze test move from ``K_c`` to ``F_c`` (a coefficient and a row bound
changed in place). On the Choosy-like benchmark (5,000 users, 100 types) this shrinks the LP
from 5,000 level rows and 10,000 user columns to a few hundred, and the solves from ~4.6 s to
~0.5 s. Users with a minimum share (which may sit above the water) or in a queue with a
``max_share`` (a row across classes) keep a row of their own; ``pool=False`` and the per-user
test give every user its own row, the papers' model, which the tests compare against.
"""

from __future__ import annotations

import numpy as np

from fairshare.allocation.types import IntArray
from fairshare.cluster import FloatArray
from fairshare.solvers.errors import SolverFailure
from fairshare.solvers.filling_model import FillingLP
from fairshare.solvers.filling_problem import FillingProblem, FillingResult, tasks_alone
from fairshare.solvers.freeze_test import growable, growable_per_user, least_growing


def progressive_filling(
    problem: FillingProblem, *, per_user_test: bool = False, pool: bool = True
) -> FillingResult:
    """The leximin (weighted max-min) allocation of ``problem`` by progressive filling in
    rounds (Choosy Algorithm 1, TSF Algorithm 1).

    Parameters
    ----------
    problem : FillingProblem
        Machine types, eligibility, demands, shares per task, weights, caps, minimums and
        capped queues.
    per_user_test : bool
        Run the papers' model: one level row per user and one freeze-test LP per user,
        instead of pools and the batched test (same result, slower; for validation).
    pool : bool
        False keeps the batched test but gives every user its own level row.

    Returns
    -------
    FillingResult
        Tasks per user and per (user, type), the level each user froze at, the rounds.

    Raises
    ------
    InvalidRequest
        The minimum shares do not fit on the machines their users may use.
    SolverFailure
        HiGHS could not solve an LP, or the rounds stalled (numerical trouble).

    Examples
    --------
    Choosy Figure 1: ten one-slot machines as six types by who may use them; u1 may use m1 and
    m4, u2 m3 and m4, u3 m2, m3, m4, m6 and m7, u4 m5 to m10.

    >>> usable = np.array(
    ...     [[1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1]],
    ...     dtype=np.bool_,
    ... )
    >>> problem = FillingProblem(
    ...     capacity=np.ones((6, 1)), count=np.array([1.0, 1, 1, 1, 4, 2]), usable=usable,
    ...     demands=np.ones((4, 1)), share_per_task=np.ones(4), weights=np.ones(4),
    ...     caps=np.full(4, np.inf), initial=np.zeros(4),
    ... )
    >>> np.round(progressive_filling(problem).tasks, 9).tolist()
    [1.5, 1.5, 3.0, 4.0]
    """
    model = FillingLP(problem, pool=pool and not per_user_test)
    rounds: list[tuple[float, IntArray]] = []
    if not model.active.any():
        model.raise_level()
    while model.active.any():
        level = model.raise_level()
        rounds.extend(model.cap_frozen)
        model.cap_frozen.clear()
        if not model.active.any():
            break
        grows = growable_per_user(model) if per_user_test else growable(model)
        frozen = model.active & ~grows
        if not frozen.any():
            # numerical: the level could not rise, so some user cannot grow (least_growing)
            frozen = model.active & least_growing(model)
        if not frozen.any():
            raise SolverFailure(
                f"progressive filling stalled at level {level:g}: every active user seems able "
                "to grow (numerical trouble)"
            )
        model.freeze(frozen)
        rounds.append((level, np.flatnonzero(frozen).astype(np.int64)))
    user, kind, tasks, totals = _split_into_users(model)
    return FillingResult(
        tasks=totals,
        pair_user=user,
        pair_type=kind,
        pair_tasks=tasks,
        level=np.where(np.isnan(model.level), 0.0, model.level),
        rounds=tuple(rounds),
        lp_solves=model.lp_solves,
    )


def _split_into_users(model: FillingLP) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """The allocation split back into users: (user, type, tasks) triples and the tasks per
    user. Every user's tasks are exact: what it was frozen at (its level times its
    coefficient, its minimum or its cap), not the LP's reading of it, which is only good
    to the LP's tolerance in units of the user's tasks alone (a user with a tiny weight or
    a cap far below what it could run alone would lose all precision). The LP gives the
    placement: each class's amounts on its types are rescaled to its members' exact total
    (a class the LP left empty, within tolerance, spreads it in proportion to its tasks
    alone on each type)."""
    y = np.maximum(model.solution[: len(model.pair_class)], 0.0)
    part = model.participates
    n = np.where(part, np.minimum(model.fixed * model.scale, model.caps), 0.0)
    dominant = model.problem.demands.max(axis=1)
    amount = y * model.class_alone[model.pair_class]  # class units on each type
    classes = len(model.class_first)
    members_of = model.class_of >= 0
    target = np.bincount(
        model.class_of[members_of], weights=(n * dominant)[members_of], minlength=classes
    )
    placed = np.bincount(model.pair_class, weights=amount, minlength=classes)
    empty = (placed <= 0) & (target > 0)
    if empty.any():
        p = model.problem
        alone = tasks_alone(p.capacity, p.count, p.demands[model.class_first])
        spread = empty[model.pair_class]
        amount[spread] = alone[model.pair_class[spread], model.pair_type[spread]]
        placed = np.bincount(model.pair_class, weights=amount, minlength=classes)
    ratio = np.where(placed > 0, target / np.where(placed > 0, placed, 1.0), 0.0)
    amount = amount * ratio[model.pair_class]
    users: list[IntArray] = []
    types: list[IntArray] = []
    tasks: list[FloatArray] = []
    sizes = np.bincount(model.class_of[members_of], minlength=classes)
    single = sizes[model.pair_class] == 1
    if single.any():
        owner = model.class_first[model.pair_class[single]]
        users.append(owner)
        types.append(model.pair_type[single])
        tasks.append(amount[single] / dominant[owner])
    for c in np.flatnonzero(sizes > 1):
        on = np.flatnonzero(model.pair_class == c)
        member = np.flatnonzero(model.class_of == c)
        u, t, x = _northwest_corner(n[member] * dominant[member], amount[on])
        users.append(member[u])
        types.append(model.pair_type[on][t])
        tasks.append(x / dominant[member[u]])
    user = np.concatenate(users) if users else np.zeros(0, dtype=np.int64)
    kind = np.concatenate(types) if types else np.zeros(0, dtype=np.int64)
    amount_out = np.concatenate(tasks) if tasks else np.zeros(0)
    keep = amount_out > 0
    user, kind, amount_out = user[keep], kind[keep], amount_out[keep]
    totals = np.bincount(user, weights=amount_out, minlength=model.users).astype(np.float64)
    return user.astype(np.int64), kind.astype(np.int64), amount_out, totals


def _northwest_corner(
    supply: FloatArray, demand: FloatArray
) -> tuple[IntArray, IntArray, FloatArray]:
    """Split amounts ``demand`` (per type) among members with totals ``supply`` so that each
    member takes a contiguous run of types: at most members + types - 1 pieces. Supplies are
    rescaled to the demands' total (they agree up to the LP's tolerance)."""
    total = float(demand.sum())
    if total <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    supply_total = float(supply.sum())
    supply = supply * (total / supply_total) if supply_total > 0 else supply
    a = np.cumsum(supply)
    b = np.cumsum(demand)
    a[-1] = b[-1] = total
    cuts = np.unique(np.concatenate(([0.0], a, b)))
    lengths = np.diff(cuts)
    middle = cuts[:-1] + lengths / 2
    member = np.minimum(np.searchsorted(a, middle), len(supply) - 1)
    kind = np.minimum(np.searchsorted(b, middle), len(demand) - 1)
    keep = lengths > 1e-15 * total
    member, kind, lengths = member[keep], kind[keep], lengths[keep]
    # A piece is a difference of running sums, exact only to the rounding of the total: a
    # member 1e-10 of the total would keep six digits of its tasks. So each member's pieces
    # are scaled back to its own amount (a type's total moves by at most that rounding).
    got = np.bincount(member, weights=lengths, minlength=len(supply))
    # A member within that rounding of the total (1e-15 of it: its only piece was dropped as
    # a sliver above, or its run has no cut of its own) would get nothing: it is placed
    # whole on the type where its run starts (the last type with an amount, at the end).
    lost = np.flatnonzero((supply > 0) & (got <= 0))
    if len(lost):
        start = np.concatenate(([0.0], a[:-1]))[lost]
        last = int(np.flatnonzero(demand > 0)[-1])
        member = np.concatenate((member, lost))
        kind = np.concatenate((kind, np.minimum(np.searchsorted(b, start, side="right"), last)))
        lengths = np.concatenate((lengths, supply[lost]))
        got[lost] = supply[lost]
    lengths = lengths * np.where(got > 0, supply / np.where(got > 0, got, 1.0), 0.0)[member]
    return member.astype(np.int64), kind.astype(np.int64), lengths
