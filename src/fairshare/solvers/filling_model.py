"""The HiGHS model of progressive filling over machine types (Choosy section 5.1, Algorithm 1;
TSF section V-B, Algorithm 1): one LP, built once and modified in place round by round.

:class:`FillingLP` holds the model and every change of it: raising the level
(:meth:`FillingLP.raise_level`, which freezes the users it takes to their caps), freezing
users (:meth:`FillingLP.freeze`), and the primitives :mod:`fairshare.solvers.freeze_test`
edits it with. :mod:`fairshare.solvers.filling_lp` drives it and explains the rounds, classes
and pools. Between solves only bounds, costs and a pool's row change, so the simplex
warm-starts from the previous basis, which stays primal feasible (primal simplex).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import highspy
import numpy as np

from fairshare.allocation.types import IntArray
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.errors import InvalidRequest, SolverFailure
from fairshare.solvers.exact_check import exact_violations
from fairshare.solvers.filling_problem import FillingProblem, hosts, tasks_alone
from fairshare.solvers.highs import new_highs

_INF = float(highspy.kHighsInf)
_LP_TOLERANCE = 1e-10
_NEGLIGIBLE = 1e-11
"""A matrix entry this small relative to its neighbours is left out of the LP: a resource a
class uses at most this fraction of while it fills its binding one, or a user whose need at
the round's level is at most this fraction of what it could run alone. Either changes any
amount by at most this relative amount; the amounts reported are computed from the levels,
not read back from the LP."""
_SMALLEST = 1e-12
"""HiGHS's ``small_matrix_value`` (its least): it would drop a smaller entry, with a warning."""
_LEVEL_GIVE = 1e-9
"""How far below its value a freeze test's fallback lets the level go (relative)."""
_BISECT = 1e-12
"""The relative width at which :meth:`FillingLP._bisect_level` stops."""
_RELAXED = {"relaxed": 1e-9, "relaxed wide": 1e-7}
"""The last steps of the chain: how far below their values they let frozen amounts (and a
freeze test's level) go, relative (:meth:`FillingLP._relax_frozen`)."""
_ROUNDING = 4 * float(np.finfo(np.float64).eps)
"""A level this close (relative) to a user's cap level reaches the cap: rounding only."""
_RESIDUAL = 1e-9
"""How far (relative to the size of its terms, at least 1) a row's activity computed from
HiGHS's column values may be from the row value HiGHS reports: ten times the LP's tolerance,
far above the rounding of the sums (see :meth:`FillingLP._consistent`)."""
_LARGEST = 1e15
"""The largest matrix entry HiGHS accepts (``large_matrix_value``)."""


class FillingLP:
    """The HiGHS model of one progressive-filling problem, modified in place round by round.

    Columns: y (class x type pairs, in units of the class's tasks alone), n (level entities: a
    user's tasks alone, or a pool's members' total in the same units), the level (in units of
    the lowest alone level), v (entities' freeze-test slacks, same units as n). Rows: capacity
    per (type, resource), one link per class (its types' y sum to its entities' n), one level
    row per entity, one row per capped group.

    A *pool* is the users of one class with no minimum share and no capped queue: they start
    together, are interchangeable on the machines, and are held at one level by one row
    ``n_c - K_c * level - v_c >= F_c`` (``K_c`` the active members' coefficients, ``F_c`` the
    frozen members' amounts). Every other participating user is an entity of its own with the
    row ``n_i - k_i * level - v_i >= 0`` and its minimum and cap as bounds of n_i.

    Parameters
    ----------
    problem : FillingProblem
        The problem; users with no usable type or a cap of 0 take no part.
    pool : bool
        Pool interchangeable users into one level row; False gives every user its own
        entity (the papers' per-user model).

    Raises
    ------
    InvalidRequest
        A user has a minimum share but no machine it may use can run its tasks.
    SolverFailure
        The scaled coefficients span more than HiGHS resolves, or HiGHS rejects the model.

    Examples
    --------
    The first round of Choosy Figure 1
    (:func:`~fairshare.solvers.filling_lp.progressive_filling`) raises the level to 1.5.

    >>> usable = np.array(
    ...     [[1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1]],
    ...     dtype=np.bool_,
    ... )
    >>> problem = FillingProblem(
    ...     capacity=np.ones((6, 1)), count=np.array([1.0, 1, 1, 1, 4, 2]), usable=usable,
    ...     demands=np.ones((4, 1)), share_per_task=np.ones(4), weights=np.ones(4),
    ...     caps=np.full(4, np.inf), initial=np.zeros(4),
    ... )
    >>> round(FillingLP(problem).raise_level(), 9)
    1.5
    """

    def __init__(self, problem: FillingProblem, *, pool: bool = True) -> None:
        self.problem = problem
        demands = problem.demands
        users = len(demands)
        self.users = users
        usable = problem.usable & hosts(problem.capacity, demands)
        alone = np.where(usable, tasks_alone(problem.capacity, problem.count, demands), 0.0)
        usable &= alone > 0
        self.usable = usable
        self.alone = alone.sum(axis=1)
        caps = np.asarray(problem.caps, dtype=np.float64)
        low = np.minimum(np.asarray(problem.initial, dtype=np.float64), caps)
        self.low = low
        self.caps = caps
        participates = usable.any(axis=1) & (caps > 0)
        stranded = np.flatnonzero(~usable.any(axis=1) & (low > 0))
        if len(stranded):
            raise InvalidRequest(
                f"users[{int(stranded[0])}].min_share",
                f"a minimum share of {low[stranded[0]]:g} tasks, but no machine the user may "
                "use can run its tasks; lower it to 0",
            )
        self.participates = participates
        scale = np.where(participates, self.alone, 1.0)
        self.scale = scale
        # The level unit: the lowest level a user could reach alone, so the first rounds'
        # levels are of order 1 whatever the policy's share unit.
        with np.errstate(divide="ignore"):
            alone_level = problem.share_per_task * self.alone / problem.weights
        self.level_unit = float(alone_level[participates].min()) if participates.any() else 1.0
        # n_i >= k_i * level, in scaled units: n'_i >= coefficient_i * level'.
        with np.errstate(divide="ignore", invalid="ignore"):  # users left out: 0
            self.coefficient = np.where(
                participates,
                problem.weights * self.level_unit / (problem.share_per_task * scale),
                0.0,
            )
        self.scaled_cap = np.where(participates, caps / scale, 0.0)
        in_group = np.zeros(users, dtype=np.bool_)
        for listed in problem.group_members:
            in_group[np.asarray(listed, dtype=np.int64)] = True
        # A minimum share can lift a user above the water and a queue's cap couples it with
        # users of other classes: such users keep a row of their own.
        self.pooled = participates & (low <= 0) & ~in_group if pool else np.zeros(users, np.bool_)
        self.in_group = in_group
        room = np.where(np.isfinite(caps), caps - low, np.inf)
        self.active = participates & (room > 1e-12 * np.maximum(1.0, low))
        # the scaled amount at which a pooled user was frozen (its share of its pool's F_c)
        self.fixed = np.zeros(users)
        self._lifting = False
        self._restore: Callable[[], None] | None = None
        self._build()
        fixed = np.where(participates, low, 0.0)
        self.level = np.where(self.active, np.nan, problem.share_per_task * fixed / problem.weights)
        self.lp_solves = 0
        self.steps: list[str] = []
        self.cap_frozen: list[tuple[float, IntArray]] = []
        self.current_level = 0.0
        # users held at their minimum (= cap) from the start hold exactly that
        held = participates & ~self.active
        self.fixed[held] = np.minimum(low[held], caps[held]) / scale[held]
        for i in np.flatnonzero(participates & ~self.active & ~self.pooled):
            self._release_row(int(self.entity_of[i]))

    # model construction

    def _build(self) -> None:
        """Build the HiGHS model once: the users' classes and entities, their columns and
        rows (see the module)."""
        p = self.problem
        users = self.users
        demands = p.demands
        dominant = demands.max(axis=1)
        direction = demands / dominant[:, None]
        keys: dict[tuple[bytes, bytes], int] = {}
        class_of = np.full(users, -1, dtype=np.int64)
        packed = np.packbits(self.usable, axis=1)
        for i in np.flatnonzero(self.participates):
            key = (packed[i].tobytes(), direction[i].tobytes())
            class_of[i] = keys.setdefault(key, len(keys))
        classes = len(keys)
        self.class_of = class_of
        members = np.flatnonzero(class_of >= 0)
        # classes are numbered in order of their first member
        _, first_index = np.unique(class_of[members], return_index=True)
        first = members[first_index].astype(np.int64)
        self.class_first = first
        class_usable = self.usable[first] if classes else np.zeros((0, len(p.count)), np.bool_)
        pair_class, pair_type = np.nonzero(class_usable)
        self.pair_class = pair_class.astype(np.int64)
        self.pair_type = pair_type.astype(np.int64)
        pairs = len(pair_class)
        # class unit: one task of the class's first member scaled to dominant component 1
        unit = direction[first] if classes else np.zeros((0, demands.shape[1]))
        class_alone = self.alone[first] * dominant[first] if classes else np.zeros(0)
        self.class_alone = class_alone
        self.class_unit = unit
        # Classes that differ only in their demand direction reach the same machine types:
        # the full-user test (``freeze_test.full_users``) works on these distinct type sets.
        type_set: dict[bytes, int] = {}
        self.set_of_class = np.array(
            [type_set.setdefault(packed[i].tobytes(), len(type_set)) for i in first],
            dtype=np.int64,
        )
        _, set_first = np.unique(self.set_of_class, return_index=True)
        self.type_sets = class_usable[set_first]

        # Level entities: one per pool (numbered by class), then one per other participant.
        # A member's scaled tasks n'_i are in its class's unit already (the class's tasks
        # alone equal each member's, times its dominant demand), so a pool's n is their sum.
        part = np.flatnonzero(self.participates)
        pool_class = np.unique(class_of[self.pooled])
        pool_of_class = np.full(classes, -1, dtype=np.int64)
        pool_of_class[pool_class] = np.arange(len(pool_class))
        single = part[~self.pooled[part]]
        entities = len(pool_class) + len(single)
        entity_of = np.full(users, -1, dtype=np.int64)
        entity_of[self.pooled] = pool_of_class[class_of[self.pooled]]
        entity_of[single] = len(pool_class) + np.arange(len(single))
        self.entity_of = entity_of
        self.entities = entities
        self.pools = len(pool_class)
        entity_class = np.concatenate((pool_class, class_of[single])).astype(np.int64)
        entity_user = np.concatenate((np.full(len(pool_class), -1), single)).astype(np.int64)
        self.entity_user = entity_user
        self.entity_coefficient = self.pool_sums(self.coefficient * self.active)
        self.entity_coefficient[self.pools :] = self.coefficient[single]
        # The LP's level column is in units of ``round_scale`` levels, a power of two chosen
        # each round so that the fastest active entity's coefficient is in [0.5, 1): weights
        # from 1e-6 to 1e6 would otherwise put coefficients of 1e-12 in one column.
        self.round_scale = 1.0
        self.round_scale = self._round_scale()

        # capacity rows: (type, resource) pairs that some pair uses
        types, resources = p.capacity.shape
        used = np.zeros((types, resources), dtype=np.bool_)
        if pairs:
            # unbuffered: several classes share a type, and each marks its own resources
            np.logical_or.at(used, pair_type, unit[pair_class] > 0)
        cap_type, cap_resource = np.nonzero(used)
        cap_row = np.full((types, resources), -1, dtype=np.int64)
        cap_row[cap_type, cap_resource] = np.arange(len(cap_type))
        capacity_rows = len(cap_type)
        self.cap_row = cap_row
        link_row0 = capacity_rows
        level_row0 = link_row0 + classes
        group_row0 = level_row0 + entities
        groups = len(p.group_members)
        rows = group_row0 + groups

        y0, n0 = 0, pairs
        level_col = n0 + entities
        v0 = level_col + 1
        cols = v0 + entities
        self.n0, self.level_col, self.v0 = n0, level_col, v0
        self.level_row0 = level_row0

        entries_row: list[IntArray] = []
        entries_col: list[IntArray] = []
        entries_val: list[FloatArray] = []

        # y columns: capacity rows and their class's link row
        if pairs:
            amount = unit[pair_class] * class_alone[pair_class, None]
            total = (p.capacity * p.count[:, None])[pair_type]
            k_pair, k_res = np.nonzero(unit[pair_class] > 0)
            value = amount[k_pair, k_res] / total[k_pair, k_res]
            # the pair's binding resource has the largest entry; one used a negligible
            # fraction as much while that one fills can never bind (see _NEGLIGIBLE)
            binding = np.zeros(pairs)
            np.maximum.at(binding, k_pair, value)
            kept = value >= _NEGLIGIBLE * binding[k_pair]
            entries_row.append(cap_row[pair_type[k_pair[kept]], k_res[kept]])
            entries_col.append(y0 + k_pair[kept])
            entries_val.append(value[kept])
            entries_row.append(link_row0 + self.pair_class)
            entries_col.append(y0 + np.arange(pairs))
            entries_val.append(np.ones(pairs))
        # n columns: class link (-1), level row (+1), group rows
        every = np.arange(entities)
        entries_row.append(link_row0 + entity_class)
        entries_col.append(n0 + every)
        entries_val.append(-np.ones(entities))
        entries_row.append(level_row0 + every)
        entries_col.append(n0 + every)
        entries_val.append(np.ones(entities))
        group_upper = np.zeros(groups)
        for g, listed in enumerate(p.group_members):
            members = np.asarray(listed, dtype=np.int64)
            group = members[self.participates[members]]
            limit = float(p.group_caps[g])
            divisor = limit if limit > 0 else 1.0
            group_upper[g] = 1.0 if limit > 0 else 0.0
            entries_row.append(np.full(len(group), group_row0 + g, dtype=np.int64))
            entries_col.append(n0 + entity_of[group])
            entries_val.append(self.scale[group] / divisor)
        # level column and v columns: level rows
        level_value = self._lp_coefficient(every)
        nonzero = level_value > 0
        entries_row.append(level_row0 + every[nonzero])
        entries_col.append(np.full(int(nonzero.sum()), level_col, dtype=np.int64))
        entries_val.append(-level_value[nonzero])
        entries_row.append(level_row0 + every)
        entries_col.append(v0 + every)
        entries_val.append(-np.ones(entities))

        row = np.concatenate(entries_row)
        col = np.concatenate(entries_col)
        val = np.concatenate(entries_val)
        magnitude = np.abs(val)
        if len(val) and (magnitude.min() <= _SMALLEST or magnitude.max() > _LARGEST):
            raise SolverFailure(
                "the scenario's numbers span too many orders of magnitude for the LP "
                f"(a coefficient of {magnitude.min():.3g} or {magnitude.max():.3g} after "
                "scaling; HiGHS resolves 1e-12 to 1e15): bring capacities, demands, caps and "
                "weights closer together"
            )
        order = np.lexsort((row, col))
        row, col, val = row[order], col[order], val[order]
        start = np.searchsorted(col, np.arange(cols + 1)).astype(np.int32)

        col_lower = np.zeros(cols)
        col_upper = np.full(cols, _INF)
        col_lower[n0 + self.pools : level_col] = self.low[single] / self.scale[single]
        col_upper[n0:level_col] = self._entity_caps()
        col_upper[v0:cols] = 0.0
        cost = np.zeros(cols)
        cost[level_col] = 1.0
        row_lower = np.full(rows, -_INF)
        row_upper = np.full(rows, _INF)
        row_upper[:capacity_rows] = 1.0
        row_lower[link_row0:level_row0] = 0.0
        row_upper[link_row0:level_row0] = 0.0
        row_lower[level_row0:group_row0] = 0.0
        row_upper[group_row0:rows] = group_upper

        highs = new_highs()
        highs.setOptionValue("presolve", "off")
        # Every solve after the first changes costs (level LP <-> freeze test) and only relaxes
        # bounds or moves them through the current point, so the last basis stays primal
        # feasible and primal simplex continues from it; HiGHS's default dual simplex must
        # first repair dual feasibility, 3-10 times the iterations on the benchmarks.
        highs.setOptionValue("simplex_strategy", 4)
        highs.setOptionValue("primal_feasibility_tolerance", _LP_TOLERANCE)
        highs.setOptionValue("dual_feasibility_tolerance", _LP_TOLERANCE)
        highs.setOptionValue("small_matrix_value", _SMALLEST)
        highs.setOptionValue("large_matrix_value", _LARGEST)
        status = highs.passModel(
            cols,
            rows,
            len(val),
            int(highspy.MatrixFormat.kColwise),
            int(highspy.ObjSense.kMaximize),
            0.0,
            cost,
            col_lower,
            col_upper,
            row_lower,
            row_upper,
            start,
            row.astype(np.int32),
            val.astype(np.float64),
            np.zeros(cols, dtype=np.int32),  # all continuous
        )
        if status != highspy.HighsStatus.kOk:
            raise SolverFailure(f"HiGHS rejected the filling LP ({status.name})")
        self.highs = highs
        self.cols = cols
        self.solution = np.zeros(cols)
        self.row_value = np.zeros(rows)

    def pool_sums(self, per_user: FloatArray) -> FloatArray:
        """Per entity: the sum of ``per_user`` over a pool's members (0 for other entities).

        Parameters
        ----------
        per_user : FloatArray
            One value per user.

        Returns
        -------
        FloatArray
            One value per entity.
        """
        members = np.flatnonzero(self.pooled)
        sums = np.zeros(self.entities)
        np.add.at(sums, self.entity_of[members], per_user[members])
        return sums

    def _entity_caps(self) -> FloatArray:
        """Upper bounds of the entities' n: a user's cap; a pool's frozen amount plus its
        active members' caps (so a pool never takes more than its members may hold)."""
        single = self.entity_user[self.pools :]
        cap = np.concatenate(
            (
                self.pool_sums(np.where(self.active, self.scaled_cap, self.fixed))[: self.pools],
                self.scaled_cap[single],
            )
        )
        # n is at most 1 (its tasks alone): a bound far above that can never bind, and only
        # widens the range of numbers HiGHS sees
        return np.where(np.isfinite(cap) & (cap <= 2.0), cap, _INF)

    # solving

    def solve(self, what: str) -> None:
        """Solve the model as it stands and read its solution (``solution``, ``row_value``),
        through the fallback chain :data:`STEPS`.

        Each step solves the LP (:meth:`_attempt`); its candidate is accepted only when HiGHS
        reports it optimal, its column values reproduce HiGHS's row values
        (:meth:`_consistent`) and an exact rational check finds it within the LP's rows and
        bounds (:func:`fairshare.solvers.exact_check.exact_violations`). Otherwise the next
        step runs: warm start from the last basis (primal simplex); a fresh solve with
        forced scaling (dual simplex, basis dropped); HiGHS's interior point method with
        crossover; the scaled solve with frozen amounts 1e-9, then 1e-7 below their values
        (:meth:`_relax_frozen`); for the level LP, bisection over feasibility LPs
        (:meth:`_bisect_level`). Only the level LP may be infeasible (minimum shares that
        do not fit), and only once every step says so; every other LP starts from a
        feasible point, so a status no step turns into an accepted candidate is numerical
        trouble.

        Parameters
        ----------
        what : str
            ``"level"`` for the level LP, else the name of the LP for the error message.

        Raises
        ------
        SolverFailure
            No step of the chain gave an accepted candidate, saying which LP and why.
        """
        level_fixed = what != "level"
        first = STEPS.index("scaled") if _COLD.get() else 0
        reasons: list[str] = []
        infeasible = True
        for step in STEPS[first:]:
            self.steps.append(step)
            status = self._attempt(step, level_fixed=level_fixed)
            if status == highspy.HighsModelStatus.kOptimal:
                infeasible = False
                # the relaxed step's candidate is checked against its relaxed bounds
                reason = self._rejection()
                self._restore_bounds()
                if reason is None:
                    return
                reasons.append(f"{step}: {reason}")
                continue
            self._restore_bounds()
            if status not in _INFEASIBLE:
                infeasible = False
            reasons.append(f"{step}: {self.highs.modelStatusToString(status)}")
        if what == "level" and infeasible:
            raise _Infeasible(what)
        if what == "level" and self._bisect_level():
            self.steps.append("bisect")
            return
        last = reasons[-1].split(": ", 1)[1]
        raise SolverFailure(
            f"HiGHS could not solve the {what} LP: {last} (tried {'; '.join(reasons)})"
        )

    def _bisect_level(self) -> bool:
        """The level LP's last resort: the highest level at which the model is feasible, by
        bisection over feasibility LPs (the level column fixed, no objective; each solved as
        the ``scaled`` step and accepted by the same checks), to :data:`_BISECT` of the
        level. A model whose entries span many orders of magnitude can leave every step of
        the chain at status Unknown with a point 3e-4 outside a bound (corpus scenario 532,
        drfh), while each fixed level is decided at once. Leaves the solution at that level
        and the level column as it found it (free, in the objective).

        Returns
        -------
        bool
            Whether a feasible level was found (False: not even level 0 is).
        """
        level = np.array([self.level_col], dtype=np.int64)
        best: tuple[FloatArray, FloatArray] | None = None

        def feasible(value: float) -> bool:
            nonlocal best
            self.set_bounds(level, np.array([value]), np.array([value]))
            status = self._attempt("scaled", level_fixed=False)
            accepted = status == highspy.HighsModelStatus.kOptimal and self._rejection() is None
            if accepted:
                best = (self.solution.copy(), self.row_value.copy())
            return accepted

        self.set_costs(level, np.zeros(1))
        try:
            if not feasible(0.0):
                return False
            low, high = 0.0, 1.0
            for _ in range(64):  # the level is of order 1 in the round's units
                if not feasible(high):
                    break
                low, high = high, 2 * high
            else:
                return False  # unbounded: not a level LP's trouble to hide
            for _ in range(64):
                middle = (low + high) / 2
                if not low < middle < high or high - low <= _BISECT * high:
                    break
                if feasible(middle):
                    low = middle
                else:
                    high = middle
            feasible(low)  # the solution read last is the level's own
            assert best is not None
            self.solution, self.row_value = best
            return True
        finally:
            self.set_costs(level, np.ones(1))
            self.set_bounds(level, np.zeros(1), np.array([_INF]))

    def _rejection(self) -> str | None:
        """Why the solution just read is not accepted, or None when it is."""
        if not self._consistent():
            return "columns off their rows (numerical trouble)"
        wrong = exact_violations(self.highs.getLp(), self.solution, _RESIDUAL)
        return None if wrong is None else f"exact check: {wrong}"

    def _attempt(self, step: str, *, level_fixed: bool) -> highspy.HighsModelStatus:
        """One step of the fallback chain (:meth:`solve`): solve the LP and read an optimal
        solution.

        ``warm`` runs HiGHS from the last basis. The others drop the basis first
        (``clearSolver``) and presolve the LP: ``scaled`` with dual simplex and forced
        equilibration scaling, ``interior`` with the interior point method and crossover (a
        basic solution, whose row values the checks compare). On a model whose entries span
        fifteen orders of magnitude the simplex from an unpresolved start can stall at a
        point 1e-7 outside a bound (status Unknown) where the presolved LP is solved exactly
        (``tests/test_lp_fallback.py``). Warm-started, HiGHS 1.16 can stop short of an answer
        on a small, well-scaled model (a level LP switching to dual simplex from the
        previous round's basis ends in status Unknown, ``tests/test_filling_highs_retry.py``),
        which the same LP from scratch solves. A freeze test (``level_fixed``: the level
        column fixed at the level LP's solution) can be infeasible by more than the tolerance
        in HiGHS's internal scaling on a badly scaled model, so the steps after ``warm``
        also let the level go ``_LEVEL_GIVE`` below its value. That gives a user at most
        that fraction of its level as slack, far below the freeze test's ``_GROWS``, so the
        test still separates the same users. Presolve runs without its forcing-row rule
        (:data:`_NO_FORCING_ROWS`): a user capped at 6.5e-11 of its tasks alone has a
        column whose whole range is under the tolerance, so its class's link row looks
        forced and the rule fixes the user at its cap, over its queue's row (an entry of
        6e10): the LP "infeasible" at every level, 0 included (corpus scenario 38269 of
        seed 7, ``tests/test_lp_fallback.py``).

        Parameters
        ----------
        step : str
            One of :data:`STEPS`.
        level_fixed : bool
            The level column is fixed (a freeze test), not maximised (the level LP).

        Returns
        -------
        highspy.HighsModelStatus
            The solve's status; when optimal, its solution is read. The bounds a step moved
            stay moved until :meth:`_restore_bounds` (after the candidate is checked
            against them).
        """
        highs = self.highs
        if step == "warm":
            highs.run()
            self.lp_solves += 1
            status = highs.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                self._read_solution()
            return status
        level = np.array([self.level_col], dtype=np.int64)
        lp_level = self.current_level / self.round_scale
        give = _RELAXED.get(step, 0.0)
        if give:
            self._relax_frozen(give)
        if level_fixed:
            low = lp_level * (1 - max(_LEVEL_GIVE, give))
            self.set_bounds(level, np.array([low]), np.array([lp_level]))
            frozen = self._restore

            def restore() -> None:
                self.set_bounds(level, np.array([lp_level]), np.array([lp_level]))
                if frozen is not None:
                    frozen()

            self._restore = restore
        highs.clearSolver()
        highs.setOptionValue("presolve", "on")
        highs.setOptionValue("presolve_rule_off", _NO_FORCING_ROWS)
        if step != "interior":
            highs.setOptionValue("simplex_strategy", 1)
            highs.setOptionValue("simplex_scale_strategy", _FORCED_SCALING)
        else:
            highs.setOptionValue("solver", "ipm")
            highs.setOptionValue("run_crossover", "on")
        try:
            highs.run()
            self.lp_solves += 1
            status = highs.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                self._read_solution()
        finally:
            highs.setOptionValue("simplex_strategy", 4)
            highs.setOptionValue("simplex_scale_strategy", _DEFAULT_SCALING)
            highs.setOptionValue("solver", "simplex")
            highs.setOptionValue("presolve", "off")
            highs.setOptionValue("presolve_rule_off", 0)
        return status

    def _relax_frozen(self, give: float) -> None:
        """Lower every positive lower bound of the entities' amounts (a frozen user's tasks,
        a pool's ``F_c``, a minimum share) by ``give`` of itself (:data:`_RELAXED`), for
        the relaxed steps; a freeze test's level goes as far below its value.

        Users frozen at amounts computed from their levels can leave the others a room
        that rounding makes empty or negative (a user frozen at its cap, 0.9999995 of what
        it could run alone, beside machines another user needs), and a level row whose
        terms are 1e-5 of a user's tasks alone is held only to HiGHS's absolute tolerance
        (1e-10: a level 4e-8 too high for a queue's cap row, corpus scenario 895): the LP
        is then infeasible or HiGHS stops at status Unknown, though the exact problem is
        feasible a hair lower. The amounts reported are the frozen values themselves, not
        the LP's (``_split_into_users`` rescales the placement to them; caps are enforced
        exactly after, ``PlacedInput.within_caps``), so the give moves a placement by at
        most that fraction: within the checks' tolerance (1e-7). The wider give lets a
        frozen user's slack pass the freeze test's ``_GROWS``: it is the last step, and a
        user wrongly found growing only costs a round (the level cannot rise, and
        ``least_growing`` freezes it). :meth:`_restore_bounds` puts the
        bounds back once the candidate is checked.
        """
        lp = self.highs.getLp()
        cols = np.arange(self.n0, self.level_col, dtype=np.int64)
        col_lower = np.asarray(lp.col_lower_, dtype=np.float64)[cols]
        col_upper = np.asarray(lp.col_upper_, dtype=np.float64)[cols]
        rows = np.arange(self.level_row0, self.level_row0 + self.entities, dtype=np.int64)
        row_lower = np.asarray(lp.row_lower_, dtype=np.float64)[rows]
        row_upper = np.asarray(lp.row_upper_, dtype=np.float64)[rows]
        give = 1.0 - give
        self.set_bounds(cols, np.where(col_lower > 0, col_lower * give, col_lower), col_upper)
        lifted = np.flatnonzero((row_lower > 0) & np.isfinite(row_lower))
        for k in lifted:
            self.highs.changeRowBounds(int(rows[k]), float(row_lower[k] * give), row_upper[k])

        def restore() -> None:
            self.set_bounds(cols, col_lower, col_upper)
            for k in lifted:
                self.highs.changeRowBounds(int(rows[k]), float(row_lower[k]), row_upper[k])

        self._restore = restore

    def _restore_bounds(self) -> None:
        """Undo :meth:`_relax_frozen` (nothing when the bounds are not relaxed)."""
        if self._restore is not None:
            self._restore()
            self._restore = None

    def _consistent(self) -> bool:
        """Whether the solution just read satisfies the model's rows: HiGHS's row values equal
        the matrix times its column values, to ``_RESIDUAL`` of the terms' size.

        Warm-started after a coefficient change, HiGHS 1.16 can report "optimal", with no
        primal infeasibility, column values off by up to 1e-7 while its row values are exact
        (a level 1e-7 too high: a capacity row over-filled by that much; the same basis
        solved from scratch gives the exact values). The level is read from the columns, so
        such a solution is solved again from scratch (``tests/test_numeric_range.py``,
        ``test_warm_start_with_columns_off_their_rows_is_solved_again``).

        Returns
        -------
        bool
            False when some row's activity differs from HiGHS's row value.
        """
        matrix = self.highs.getLp().a_matrix_
        start = np.asarray(matrix.start_, dtype=np.int64)
        index = np.asarray(matrix.index_, dtype=np.int64)
        value = np.asarray(matrix.value_, dtype=np.float64)
        outer = np.repeat(np.arange(len(start) - 1), np.diff(start))
        if matrix.format_ == highspy.MatrixFormat.kColwise:
            row, col = index, outer
        else:
            row, col = outer, index
        terms = value * self.solution[col]
        rows = len(self.row_value)
        activity = np.bincount(row, weights=terms, minlength=rows)
        size = np.bincount(row, weights=np.abs(terms), minlength=rows)
        residual = np.abs(activity - self.row_value)
        return bool(np.all(residual <= _RESIDUAL * np.maximum(size, 1.0)))

    def _read_solution(self) -> None:
        """Keep the optimal solve's column and row values."""
        solution = self.highs.getSolution()
        self.solution = np.asarray(solution.col_value, dtype=np.float64)
        self.row_value = np.asarray(solution.row_value, dtype=np.float64)

    def set_bounds(self, cols: IntArray, lower: FloatArray, upper: FloatArray) -> None:
        """Change the bounds of the columns ``cols`` to ``[lower, upper]``.

        Parameters
        ----------
        cols : IntArray
            Column indices (nothing changes when empty).
        lower, upper : FloatArray
            The new bounds, one per column.
        """
        if len(cols):
            self.highs.changeColsBounds(
                len(cols), cols.astype(np.int32), lower.astype(np.float64), upper.astype(np.float64)
            )

    def set_costs(self, cols: IntArray, cost: FloatArray) -> None:
        """Change the objective coefficients of the columns ``cols`` to ``cost``.

        Parameters
        ----------
        cols : IntArray
            Column indices (nothing changes when empty).
        cost : FloatArray
            The new coefficients, one per column.
        """
        if len(cols):
            self.highs.changeColsCost(len(cols), cols.astype(np.int32), cost.astype(np.float64))

    def _lp_coefficient(self, entities: IntArray) -> FloatArray:
        """The level column's entries (negated) of ``entities``' level rows in this round's
        units; 0 for an entity whose need at the round's level is negligible (_NEGLIGIBLE)."""
        value = self.entity_coefficient[entities] * self.round_scale
        return np.where(value >= _NEGLIGIBLE, value, 0.0)

    def _round_scale(self) -> float:
        """The power of two that brings the largest active entity coefficient to [0.5, 1)."""
        active = self.entity_active(np.arange(self.entities))
        largest = float(self.entity_coefficient[active].max(initial=0.0))
        if largest <= 0 or not np.isfinite(largest):
            return self.round_scale
        return float(np.ldexp(1.0, -int(np.frexp(largest)[1])))

    def _rescale_level(self) -> None:
        """Before a round: choose the round's level unit and rewrite the active rows."""
        scale = self._round_scale()
        if scale == self.round_scale:
            return
        self.round_scale = scale
        entities = np.flatnonzero(self.entity_active(np.arange(self.entities)))
        for e, value in zip(entities, self._lp_coefficient(entities), strict=True):
            self.highs.changeCoeff(int(self.level_row0 + e), int(self.level_col), -float(value))

    def _release_row(self, entity: int) -> None:
        """A frozen (or fixed) user's level row no longer ties it to the level."""
        self.highs.changeRowBounds(self.level_row0 + entity, -_INF, _INF)

    def _update_pools(self, users: IntArray) -> None:
        """Rewrite the level rows of the pools of ``users`` (some of whose members were just
        frozen): ``K_c`` over the active members, ``F_c`` over the frozen ones, and the cap."""
        pooled = users[self.pooled[users]]
        if not len(pooled):
            return
        touched = np.unique(self.entity_of[pooled])
        # recomputed from the members rather than decremented, so no rounding accumulates
        coefficient = self.pool_sums(np.where(self.active, self.coefficient, 0.0))
        frozen = self.pool_sums(np.where(self.active, 0.0, self.fixed))
        self.entity_coefficient[touched] = coefficient[touched]
        lp_value = self._lp_coefficient(touched)
        upper = self._entity_caps()
        if self._lifting:
            upper = np.where(self.entity_active(np.arange(self.entities)), _INF, upper)
        for e, value in zip(touched, lp_value, strict=True):
            row = int(self.level_row0 + e)
            self.highs.changeCoeff(row, int(self.level_col), -float(value))
            self.highs.changeRowBounds(row, float(frozen[e]), _INF)
        self.set_bounds(self.n0 + touched, np.zeros(len(touched)), upper[touched])

    def raise_level(self) -> float:
        """Maximise the active users' level (the round's LP) and fix the level column there.

        Caps would stop every round at the lowest cap among the active users, one round per
        distinct cap. Instead the LP runs with the active users' caps lifted: at its level L,
        truncating every user to its cap keeps the allocation feasible, so each user whose cap
        is at or below L reaches its cap in the leximin allocation. Those users are frozen at
        their caps together and the LP is solved again (warm-started) until every remaining
        active user's cap lies above L; then L is the round's level with the caps restored.
        The users frozen at their caps are listed in ``cap_frozen``.

        Returns
        -------
        float
            The round's level, in share units (weighted share).

        Raises
        ------
        InvalidRequest
            The minimum shares do not fit together (or exceed a queue's ``max_share``).
        SolverFailure
            HiGHS could not solve the level LP.
        """
        level = np.array([self.level_col], dtype=np.int64)
        self._rescale_level()
        self.set_bounds(level, np.zeros(1), np.array([_INF if self.active.any() else 0.0]))
        self.set_costs(level, np.ones(1))
        with np.errstate(divide="ignore", invalid="ignore"):
            cap_level = np.where(self.coefficient > 0, self.scaled_cap / self.coefficient, _INF)
        lifted_users = np.flatnonzero(self.active & np.isfinite(self.caps))
        lifted = np.unique(self.entity_of[lifted_users])
        self.set_bounds(self.n0 + lifted, self._entity_low(lifted), _unbounded(lifted))
        self._lifting = True
        try:
            while True:
                try:
                    self.solve("level")
                except _Infeasible:
                    raise InvalidRequest(
                        "users[*].min_share",
                        "the minimum shares do not fit together on the machines their users may "
                        "use (or exceed a queue's max_share); lower them",
                    ) from None
                self.current_level = float(self.solution[self.level_col]) * self.round_scale
                # Only rounding slack (a few units in the last place): a cap 1e-12 above the
                # level is not reached when the resource is full there, and freezing its user
                # at the cap would hand it what a user 1e-12 its size needs (it got nothing,
                # not DRF's 1e-7 tasks). A user just below its cap stays active; the freeze
                # test then stops it at the level.
                capped = self.active & (cap_level <= self.current_level * (1 + _ROUNDING))
                if not capped.any():
                    break
                self._freeze_at_cap(capped, cap_level)
                # the fastest entity may have just been capped: a weight 10^11 times smaller
                # left alone would have a negligible (dropped) coefficient, the level unbounded
                self._rescale_level()
                self.set_bounds(level, np.zeros(1), np.array([_INF if self.active.any() else 0.0]))
        finally:
            self._lifting = False
            still = lifted[self.entity_active(lifted)]
            self.set_bounds(self.n0 + still, self._entity_low(still), self._entity_caps()[still])
        self.set_costs(level, np.zeros(1))
        lp_level = np.array([self.current_level / self.round_scale])
        self.set_bounds(level, lp_level, lp_level)
        return self.current_level * self.level_unit

    def _entity_low(self, entities: IntArray) -> FloatArray:
        """Lower bounds of the entities' n: a user's minimum; 0 for a pool (its row holds F_c)."""
        user = self.entity_user[entities]
        owner = np.maximum(user, 0)
        return np.where(user >= 0, self.low[owner] / self.scale[owner], 0.0)

    def entity_active(self, entities: IntArray) -> BoolArray:
        """Whether each of ``entities`` (entity indices) has an active user.

        Parameters
        ----------
        entities : IntArray
            Entity indices.

        Returns
        -------
        BoolArray
            One per entity.
        """
        counts = np.bincount(self.entity_of[self.active], minlength=self.entities)
        return np.asarray(counts[entities] > 0, dtype=np.bool_)

    def _freeze_at_cap(self, users: BoolArray, cap_level: FloatArray) -> None:
        """Freeze ``users`` at their caps, each at its own level (``cap_level``, scaled)."""
        chosen = np.flatnonzero(users)
        single = chosen[~self.pooled[chosen]]
        cap = self.scaled_cap[single]
        self.set_bounds(self.n0 + self.entity_of[single], cap, cap)
        for i in single:
            self._release_row(int(self.entity_of[i]))
        self.active[chosen] = False
        self.fixed[chosen] = self.scaled_cap[chosen]
        self._update_pools(chosen)
        self.level[chosen] = cap_level[chosen] * self.level_unit
        self.cap_frozen.append((float(cap_level[chosen].max() * self.level_unit), chosen))

    def held(self, users: IntArray) -> FloatArray:
        """What ``users`` hold at the current level.

        Parameters
        ----------
        users : IntArray
            User indices.

        Returns
        -------
        FloatArray
            Scaled (in units of each user's tasks alone): an active user its level's amount
            within its minimum and cap, any other what it was frozen at.
        """
        at_level = self.coefficient[users] * self.current_level
        scaled_low = self.low[users] / self.scale[users]
        value = np.minimum(np.maximum(at_level, scaled_low), self.scaled_cap[users])
        return np.asarray(np.where(self.active[users], value, self.fixed[users]), np.float64)

    def freeze(self, users: BoolArray) -> None:
        """Freeze ``users`` at the current level (Choosy Algorithm 1's and TSF Algorithm 1's
        freezing step): their tasks become a lower bound (a pool's F_c) and their level rows
        are released.

        Parameters
        ----------
        users : BoolArray
            Per user; only active users are frozen.
        """
        chosen = np.flatnonzero(users & self.active)
        if not len(chosen):
            return
        scaled_cap = self.scaled_cap[chosen]
        value = self.held(chosen)
        self.fixed[chosen] = value
        self.active[chosen] = False
        alone = ~self.pooled[chosen]
        single = chosen[alone]
        self.set_bounds(
            self.n0 + self.entity_of[single],
            value[alone],
            np.where(np.isfinite(scaled_cap[alone]), scaled_cap[alone], _INF),
        )
        for i in single:
            self._release_row(int(self.entity_of[i]))
        self._update_pools(chosen)
        self.level[chosen] = self.current_level * self.level_unit


STEPS = ("warm", "scaled", "interior", "relaxed", "relaxed wide")
"""The fallback chain of every LP of the model, in order (:meth:`FillingLP.solve`)."""

_INFEASIBLE = (
    highspy.HighsModelStatus.kInfeasible,
    highspy.HighsModelStatus.kUnboundedOrInfeasible,
)
_DEFAULT_SCALING = 2
"""HiGHS's ``simplex_scale_strategy`` by default (equilibration, chosen per model)."""
_FORCED_SCALING = 3
"""``simplex_scale_strategy`` of the ``scaled`` step: forced equilibration."""

_NO_FORCING_ROWS = 1 << 6
"""``presolve_rule_off`` of the presolved steps: HiGHS's forcing-row rule (bit 6) off. It
decides that a row is forced by comparing its activity range with the absolute feasibility
tolerance, which the model's amounts (in units of a user's tasks alone) can lie below."""

_COLD: ContextVar[bool] = ContextVar("fairshare_filling_cold", default=False)


@contextmanager
def cold_starts() -> Iterator[None]:
    """Within the block, every LP of a filling model skips the warm start (its chain begins
    at the ``scaled`` step): the retry of a solve whose allocation failed its checks.

    Yields
    ------
    None
    """
    token = _COLD.set(True)
    try:
        yield
    finally:
        _COLD.reset(token)


class _Infeasible(Exception):
    """The level LP is infeasible: the minimum shares do not fit (an ``InvalidRequest``)."""


def _unbounded(cols: IntArray) -> FloatArray:
    """An upper bound of HiGHS's infinity for each of ``cols``."""
    return np.full(len(cols), _INF)
