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

The rounds are those of the papers' Algorithm 1: an LP raises the level of the active users
as far as it goes, then a freeze test finds the users that cannot grow any further (holding
every other user at its level) and freezes them at the round's level; the others stay active.
One HiGHS model is built once and modified between solves (bounds, costs and a pool's row,
so the simplex warm-starts from the previous basis, which stays primal feasible: primal
simplex); the solver output is silent.

**The freeze test.** The papers solve one LP per active user per round (Choosy's SATURATED,
TSF's FREEZE): quadratic in the users. Here each active user j has a slack column v_j in its
level row ``n_j - k_j * level - v_j >= 0`` (scaled), held at 0 while the level rises. After the
level LP, the level is fixed and one LP maximises the sum of v_j over the undecided users, each
v_j in [0, delta]. Every user with v_j > 0 in that solution can grow (the solution itself is the
witness); if none can, every undecided user is frozen, since any user able to grow alone would
make the sum positive. Otherwise the users found are set aside (their v_j stays free in
[0, delta] but leaves the objective) and the LP is solved again over the rest. Each solve either
finds a new growing user or proves that all remaining ones are frozen, and Choosy 5.1's convexity
argument (growing users can grow together) makes a small delta find almost all of them at once:
in practice a round costs the level LP plus two warm-started freeze LPs, however many users
there are. Before that, a user that needs a resource which is full over every type its tasks
could reach (``FillingLP._full_users``) is frozen without an LP, a test in units of the
resource's capacity: the LP's tolerance, in units of the rows it shares with far larger users,
can hide a need of a full resource a billionth of a user's others. Then a user with room
left on a type it may use (every resource it demands below capacity there, and no queue cap)
grows without any LP; at a level just reached that is nearly every growing user, so the freeze
LP has only the few others to decide. The result is
exactly the paper's per-user test, which ``FillingLP.growable_per_user`` implements for the
tests that check it (``tests/test_filling_lp.py``).

(Dual values alone are not enough: a user is frozen iff its level row is tight on the whole
optimal face, i.e. iff some optimal dual prices its row positively (Goldman-Tucker), but a
simplex returns one vertex dual, which can price a growable user's row at zero or a frozen
user's row too. Saturation of every type a user may use is necessary, not sufficient: the user
can still grow by displacing another onto a type with room; hence ``_full_users`` sums a
resource over the types such displacements can reach.)

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

import contextlib
import os
import sys
import threading
from dataclasses import dataclass, field

import highspy
import numpy as np
import numpy.typing as npt

from fairshare.allocation import Allocation, Placement
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.errors import InvalidRequest, SolverFailure
from fairshare.workload.eligibility import MATCHES_NO_MACHINE, MachineTypes, machine_types
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.model import Scenario

IntArray = npt.NDArray[np.int64]

_INF = float(highspy.kHighsInf)
_DELTA = 1e-3
"""Upper bound of a freeze-test slack, as a fraction of the user's tasks alone: small, so that
many growing users reach it at once and a vertex cannot hand all room to a few."""
_GROWS = 1e-8
"""A slack above this (fraction of the user's tasks alone) means the user can grow."""
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
_LARGEST = 1e15
"""The largest matrix entry HiGHS accepts (``large_matrix_value``)."""
_ROOM = 1e-7
"""A capacity row (scaled to the type's total) filled above ``1 - _ROOM`` counts as full when
looking for users with room to grow: larger than the LP tolerance, so a row that only looks
slack by rounding sends its users to the freeze-test LP instead."""

_FULL = 1e-9
"""A resource counts as full on a set of machine types when what their users hold at the
round's level leaves less than this fraction of it: ten times the LP's tolerance, the
precision to which the level LP fills its binding rows (see ``FillingLP._full_users``)."""

_STDOUT_LOCK = threading.Lock()


def new_highs() -> highspy.Highs:
    """A silent HiGHS model.

    highspy 1.16 prints its banner on file descriptor 1 while ``Highs()`` is constructed, before
    ``output_flag`` can be set, which would corrupt the JSON a caller prints on stdout. So the
    descriptor points at the null device for the construction only (under a lock: descriptors
    are per process). Where descriptor 1 cannot be duplicated (closed, or a sandbox), the model
    is built as it is.
    """
    with _STDOUT_LOCK:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        try:
            saved = os.dup(1)
        except OSError:
            saved = -1
        if saved < 0:
            highs = highspy.Highs()  # type: ignore[no-untyped-call]
        else:
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(null, 1)
                finally:
                    os.close(null)
                highs = highspy.Highs()  # type: ignore[no-untyped-call]
            finally:
                os.dup2(saved, 1)
                os.close(saved)
    highs.setOptionValue("output_flag", False)
    return highs


@dataclass(frozen=True)
class FillingProblem:
    """A progressive-filling instance over machine types.

    ``capacity[t]`` is one machine of type t, ``count[t]`` its number of machines and
    ``usable[i, t]`` whether user i may run there (pairs whose machines lack a resource the user
    demands are dropped by the engine). ``demands`` are per task; ``share_per_task[i]`` (> 0)
    turns user i's tasks into the share the policy equalises, divided by ``weights[i]``.
    ``caps`` may be infinite; ``initial`` (at most ``caps``) are the minimum tasks. Each group
    ``group_members[g]`` (users of a queue) holds at most ``group_caps[g]`` tasks in total.
    """

    capacity: FloatArray
    count: FloatArray
    usable: BoolArray
    demands: FloatArray
    share_per_task: FloatArray
    weights: FloatArray
    caps: FloatArray
    initial: FloatArray
    group_members: tuple[IntArray, ...] = ()
    group_caps: FloatArray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class FillingResult:
    """Tasks per user, and per (user, type) as sparse triples; ``level[i]`` the weighted share
    at which user i froze; ``rounds[k]`` (level, users frozen in round k); ``lp_solves`` the
    number of LPs solved."""

    tasks: FloatArray
    pair_user: IntArray
    pair_type: IntArray
    pair_tasks: FloatArray
    level: FloatArray
    rounds: tuple[tuple[float, IntArray], ...]
    lp_solves: int

    def per_type(self, types: int) -> FloatArray:
        """The dense users x types matrix of tasks (for small problems and tests)."""
        out = np.zeros((len(self.tasks), types), dtype=np.float64)
        np.add.at(out, (self.pair_user, self.pair_type), self.pair_tasks)
        return out


def hosts(capacity: FloatArray, demands: FloatArray) -> BoolArray:
    """users x types: True where a machine of the type has every resource the user demands."""
    missing = (demands > 0).astype(np.float64) @ (capacity <= 0).astype(np.float64).T
    return np.asarray(missing == 0, dtype=np.bool_)


def tasks_alone(capacity: FloatArray, count: FloatArray, demands: FloatArray) -> FloatArray:
    """users x types: the (divisible) tasks a user could run alone on all machines of a type,
    ``count_t * min_r capacity_tr / demand_ir`` (TSF V-B's h_i summed per type)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = capacity[None, :, :] / demands[:, None, :]
    ratio = np.where(demands[:, None, :] > 0, ratio, np.inf)
    per_machine = ratio.min(axis=2)
    per_machine = np.where(np.isfinite(per_machine), per_machine, 0.0)
    return np.asarray(per_machine * count[None, :], dtype=np.float64)


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
    ``pool=False`` gives every user its own entity (the papers' per-user model).
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
        self._build()
        fixed = np.where(participates, low, 0.0)
        self.level = np.where(self.active, np.nan, problem.share_per_task * fixed / problem.weights)
        self.lp_solves = 0
        self.cap_frozen: list[tuple[float, IntArray]] = []
        self.current_level = 0.0
        # users held at their minimum (= cap) from the start hold exactly that
        held = participates & ~self.active
        self.fixed[held] = np.minimum(low[held], caps[held]) / scale[held]
        for i in np.flatnonzero(participates & ~self.active & ~self.pooled):
            self._release_row(int(self.entity_of[i]))

    # model construction

    def _build(self) -> None:
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
        self.entity_coefficient = self._pool_sums(self.coefficient * self.active)
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

    def _pool_sums(self, per_user: FloatArray) -> FloatArray:
        """Per entity: the sum of ``per_user`` over a pool's members (0 for other entities)."""
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
                self._pool_sums(np.where(self.active, self.scaled_cap, self.fixed))[: self.pools],
                self.scaled_cap[single],
            )
        )
        # n is at most 1 (its tasks alone): a bound far above that can never bind, and only
        # widens the range of numbers HiGHS sees
        return np.where(np.isfinite(cap) & (cap <= 2.0), cap, _INF)

    # solving

    def _solve(self, what: str) -> None:
        """Solve the model as it stands. Only the level LP can be infeasible (minimum shares
        that do not fit: ``_Infeasible``); every other LP starts from a feasible point, so
        any other status is numerical trouble, a ``SolverFailure`` saying which LP and why."""
        self.highs.run()
        self.lp_solves += 1
        status = self.highs.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal and what != "level":
            status = self._solve_again()
            if status == highspy.HighsModelStatus.kOptimal:
                return
        if what == "level" and status in (
            highspy.HighsModelStatus.kInfeasible,
            highspy.HighsModelStatus.kUnboundedOrInfeasible,
        ):
            raise _Infeasible(what)
        if status != highspy.HighsModelStatus.kOptimal:
            text = self.highs.modelStatusToString(status)
            raise SolverFailure(f"HiGHS could not solve the {what} LP: {text}")
        self._read_solution()

    def _solve_again(self) -> highspy.HighsModelStatus:
        """The fallback of a freeze test that HiGHS could not solve (on a badly scaled model,
        the level fixed at the level LP's solution can be infeasible by more than the
        tolerance in HiGHS's internal scaling): from scratch, with dual simplex, and the level
        allowed ``_LEVEL_GIVE`` below its value. That gives a user at most that fraction of its
        level as slack, far below ``_GROWS``, so the test still separates the same users."""
        level = np.array([self.level_col], dtype=np.int64)
        lp_level = self.current_level / self.round_scale
        self._set_cols(level, np.array([lp_level * (1 - _LEVEL_GIVE)]), np.array([lp_level]))
        self.highs.clearSolver()
        self.highs.setOptionValue("simplex_strategy", 1)
        try:
            self.highs.run()
            self.lp_solves += 1
            status = self.highs.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                self._read_solution()
        finally:
            self.highs.setOptionValue("simplex_strategy", 4)
            self._set_cols(level, np.array([lp_level]), np.array([lp_level]))
        return status

    def _read_solution(self) -> None:
        solution = self.highs.getSolution()
        self.solution = np.asarray(solution.col_value, dtype=np.float64)
        self.row_value = np.asarray(solution.row_value, dtype=np.float64)

    def _set_cols(self, cols: IntArray, lower: FloatArray, upper: FloatArray) -> None:
        if len(cols):
            self.highs.changeColsBounds(
                len(cols), cols.astype(np.int32), lower.astype(np.float64), upper.astype(np.float64)
            )

    def _set_costs(self, cols: IntArray, cost: FloatArray) -> None:
        if len(cols):
            self.highs.changeColsCost(len(cols), cols.astype(np.int32), cost.astype(np.float64))

    def _lp_coefficient(self, entities: IntArray) -> FloatArray:
        """The level column's entries (negated) of ``entities``' level rows in this round's
        units; 0 for an entity whose need at the round's level is negligible (_NEGLIGIBLE)."""
        value = self.entity_coefficient[entities] * self.round_scale
        return np.where(value >= _NEGLIGIBLE, value, 0.0)

    def _round_scale(self) -> float:
        """The power of two that brings the largest active entity coefficient to [0.5, 1)."""
        active = self._entity_active(np.arange(self.entities))
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
        entities = np.flatnonzero(self._entity_active(np.arange(self.entities)))
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
        coefficient = self._pool_sums(np.where(self.active, self.coefficient, 0.0))
        frozen = self._pool_sums(np.where(self.active, 0.0, self.fixed))
        self.entity_coefficient[touched] = coefficient[touched]
        lp_value = self._lp_coefficient(touched)
        upper = self._entity_caps()
        if self._lifting:
            upper = np.where(self._entity_active(np.arange(self.entities)), _INF, upper)
        for e, value in zip(touched, lp_value, strict=True):
            row = int(self.level_row0 + e)
            self.highs.changeCoeff(row, int(self.level_col), -float(value))
            self.highs.changeRowBounds(row, float(frozen[e]), _INF)
        self._set_cols(self.n0 + touched, np.zeros(len(touched)), upper[touched])

    def raise_level(self) -> float:
        """Maximise the active users' level (the round's LP); return it in share units.

        Caps would stop every round at the lowest cap among the active users, one round per
        distinct cap. Instead the LP runs with the active users' caps lifted: at its level L,
        truncating every user to its cap keeps the allocation feasible, so each user whose cap
        is at or below L reaches its cap in the leximin allocation. Those users are frozen at
        their caps together and the LP is solved again (warm-started) until every remaining
        active user's cap lies above L; then L is the round's level with the caps restored.
        """
        level = np.array([self.level_col], dtype=np.int64)
        self._rescale_level()
        self._set_cols(level, np.zeros(1), np.array([_INF if self.active.any() else 0.0]))
        self._set_costs(level, np.ones(1))
        with np.errstate(divide="ignore", invalid="ignore"):
            cap_level = np.where(self.coefficient > 0, self.scaled_cap / self.coefficient, _INF)
        lifted_users = np.flatnonzero(self.active & np.isfinite(self.caps))
        lifted = np.unique(self.entity_of[lifted_users])
        self._set_cols(self.n0 + lifted, self._entity_low(lifted), _unbounded(lifted))
        self._lifting = True
        try:
            while True:
                try:
                    self._solve("level")
                except _Infeasible:
                    raise InvalidRequest(
                        "users[*].min_share",
                        "the minimum shares do not fit together on the machines their users may "
                        "use (or exceed a queue's max_share); lower them",
                    ) from None
                self.current_level = float(self.solution[self.level_col]) * self.round_scale
                capped = self.active & (cap_level <= self.current_level * (1 + 1e-12) + 1e-15)
                if not capped.any():
                    break
                self._freeze_at_cap(capped, cap_level)
                # the fastest entity may have just been capped: a weight 10^11 times smaller
                # left alone would have a negligible (dropped) coefficient, the level unbounded
                self._rescale_level()
                self._set_cols(level, np.zeros(1), np.array([_INF if self.active.any() else 0.0]))
        finally:
            self._lifting = False
            still = lifted[self._entity_active(lifted)]
            self._set_cols(self.n0 + still, self._entity_low(still), self._entity_caps()[still])
        self._set_costs(level, np.zeros(1))
        lp_level = np.array([self.current_level / self.round_scale])
        self._set_cols(level, lp_level, lp_level)
        return self.current_level * self.level_unit

    def _entity_low(self, entities: IntArray) -> FloatArray:
        """Lower bounds of the entities' n: a user's minimum; 0 for a pool (its row holds F_c)."""
        user = self.entity_user[entities]
        owner = np.maximum(user, 0)
        return np.where(user >= 0, self.low[owner] / self.scale[owner], 0.0)

    def _entity_active(self, entities: IntArray) -> BoolArray:
        """Whether each of ``entities`` has an active user."""
        counts = np.bincount(self.entity_of[self.active], minlength=self.entities)
        return np.asarray(counts[entities] > 0, dtype=np.bool_)

    def _freeze_at_cap(self, users: BoolArray, cap_level: FloatArray) -> None:
        """Freeze ``users`` at their caps, each at its own level (``cap_level``, scaled)."""
        chosen = np.flatnonzero(users)
        single = chosen[~self.pooled[chosen]]
        cap = self.scaled_cap[single]
        self._set_cols(self.n0 + self.entity_of[single], cap, cap)
        for i in single:
            self._release_row(int(self.entity_of[i]))
        self.active[chosen] = False
        self.fixed[chosen] = self.scaled_cap[chosen]
        self._update_pools(chosen)
        self.level[chosen] = cap_level[chosen] * self.level_unit
        self.cap_frozen.append((float(cap_level[chosen].max() * self.level_unit), chosen))

    def _freeze_test_columns(self) -> tuple[IntArray, FloatArray]:
        """The active entities and the most each may grow in a freeze test: ``_DELTA``, or a
        pool's room below its active members' caps when that is less."""
        active = np.flatnonzero(self._entity_active(np.arange(self.entities)))
        room = self._pool_sums(
            np.where(self.active, self.scaled_cap - self.coefficient * self.current_level, 0.0)
        )
        bound = np.where(active < self.pools, np.minimum(room[active], _DELTA), _DELTA)
        return active, bound

    def _growing_users(self, grows: BoolArray) -> BoolArray:
        """Active users whose entity ``grows`` (per entity)."""
        out = np.zeros(self.users, dtype=np.bool_)
        mine = np.flatnonzero(self.active)
        out[mine] = grows[self.entity_of[mine]]
        return out

    def _room_to_grow(self) -> BoolArray:
        """Active users that can grow alone in the current LP solution: some type they may use
        has room left in every resource they demand (and no queue's cap binds them, since
        their queue is left out). They need no freeze-test LP: at a level just reached, most
        users that can still grow are such users, and the LP then decides only the rest."""
        rows = self.cap_row >= 0
        tight = np.zeros(self.cap_row.shape, dtype=np.bool_)
        tight[rows] = self.row_value[self.cap_row[rows]] >= 1.0 - _ROOM
        needs = (self.problem.demands > 0).astype(np.float64)
        blocked = (needs @ tight.T.astype(np.float64)) > 0
        open_type = (self.usable & ~blocked).any(axis=1)
        return np.asarray(self.active & ~self.in_group & open_type, dtype=np.bool_)

    def _held(self, users: IntArray) -> FloatArray:
        """What ``users`` hold at the current level (scaled): an active user its level's amount
        within its minimum and cap, any other what it was frozen at."""
        at_level = self.coefficient[users] * self.current_level
        scaled_low = self.low[users] / self.scale[users]
        value = np.minimum(np.maximum(at_level, scaled_low), self.scaled_cap[users])
        return np.asarray(np.where(self.active[users], value, self.fixed[users]), np.float64)

    def _full_users(self) -> BoolArray:
        """Active users that cannot grow, decided without an LP and relative to capacity.

        The *closure* of a user is the set of machine types its tasks could end up on after
        any reshuffle: its usable types, and every usable type of a class the level LP's
        solution places on a type already in the set. Every class with all its usable types
        inside a closure keeps at least what it holds at the level (``_held``) inside it, and
        every other class is outside it (or it would be in the closure), so when a resource
        the user demands is full over its closure at those amounts (``_FULL``), the user
        cannot grow without lowering someone: it is frozen (Choosy Algorithm 1's SATURATED,
        TSF Algorithm 1's FREEZE). With one resource, or when the closure is one type, the
        converse holds too (queue caps aside): the freeze-test LP then only confirms growth.

        The test is in units of the resource's capacity, not the user's: a user whose need of
        a full resource is 1e-9 of its other needs, or one that could take a type a
        billionth of the cluster's size, would otherwise "grow" within the LP's tolerance
        (one part in 10^10 of the rows it shares with users a billion times larger)."""
        out = np.zeros(self.users, dtype=np.bool_)
        classes = len(self.class_first)
        if not classes or not self.active.any():
            return out
        p = self.problem
        usable = self.usable[self.class_first].astype(np.float64)  # classes x types
        types = usable.shape[1]
        present = np.zeros((classes, types))
        y = self.solution[: len(self.pair_class)]
        present[self.pair_class, self.pair_type] = y > 0
        # reach[t, u]: a class placed on type t may use type u (reflexive, transitive)
        reach = ((present.T @ usable) > 0) | np.eye(types, dtype=np.bool_)
        while True:
            wider = (reach.astype(np.float64) @ reach.astype(np.float64)) > 0
            if np.array_equal(wider, reach):
                break
            reach = wider
        active_class = np.unique(self.class_of[self.active & (self.class_of >= 0)])
        closure = (usable[active_class] @ reach.astype(np.float64)) > 0
        distinct, which = np.unique(closure, axis=0, return_inverse=True)
        # inside[k, c]: class c's usable types all lie in closure k
        inside = ((~distinct).astype(np.float64) @ usable.T) == 0
        member = np.flatnonzero(self.class_of >= 0)
        tasks = self._held(member) * self.scale[member]
        class_use = np.zeros((classes, p.demands.shape[1]))
        np.add.at(class_use, self.class_of[member], tasks[:, None] * p.demands[member])
        used = inside.astype(np.float64) @ class_use
        capacity = distinct.astype(np.float64) @ (p.capacity * p.count[:, None])
        full = used >= (1.0 - _FULL) * capacity
        blocked = np.zeros(classes, dtype=np.bool_)
        blocked[active_class] = (full[which.ravel()] & (self.class_unit[active_class] > 0)).any(
            axis=1
        )
        out[member] = blocked[self.class_of[member]]
        return np.asarray(out & self.active, dtype=np.bool_)

    def growable(self) -> BoolArray:
        """The batched freeze test: which active users can still grow at the current level
        while every other user keeps its level (see the module docstring). A pool's members
        grow or not together: they are interchangeable. Users with room on a type of theirs
        (``_room_to_grow``) grow without an LP; their slacks stay at 0, which keeps the test
        exact for the others (a user that can grow can do so with everyone else held)."""
        active, bound = self._freeze_test_columns()
        grows = np.zeros(self.entities, dtype=np.bool_)
        full = np.zeros(self.entities, dtype=np.bool_)
        full[self.entity_of[self._full_users()]] = True
        obvious = self._room_to_grow()
        grows[self.entity_of[obvious]] = True
        grows &= ~full
        keep = ~grows[active] & ~full[active]
        active, bound = active[keep], bound[keep]
        v = self.v0 + active
        self._set_cols(v, np.zeros(len(v)), bound)
        undecided = active
        try:
            while len(undecided):
                cost = np.zeros(len(active))
                cost[np.isin(active, undecided)] = 1.0
                self._set_costs(v, cost)
                self._solve("freeze test")
                found = active[self._slack_values(v) > _GROWS]
                if not np.isin(found, undecided).any():
                    break
                grows[found] = True
                undecided = undecided[~grows[undecided]]
        finally:
            self._set_costs(v, np.zeros(len(v)))
            self._set_cols(v, np.zeros(len(v)), np.zeros(len(v)))
        return self._growing_users(grows)

    def _slack_values(self, cols: IntArray) -> FloatArray:
        return np.asarray(self.solution[cols], dtype=np.float64)

    def growable_per_user(self) -> BoolArray:
        """The papers' freeze test (Choosy's SATURATED, TSF's FREEZE): one LP per active
        entity (per user in the per-user model), maximising it alone while the others keep
        their level."""
        active, bound = self._freeze_test_columns()
        grows = np.zeros(self.entities, dtype=np.bool_)
        full = np.zeros(self.entities, dtype=np.bool_)
        full[self.entity_of[self._full_users()]] = True
        keep = ~full[active]
        for e, most in zip(active[keep], bound[keep], strict=True):
            col = np.array([self.v0 + e], dtype=np.int64)
            self._set_cols(col, np.zeros(1), np.full(1, most))
            self._set_costs(col, np.ones(1))
            try:
                self._solve("freeze test")
            finally:
                self._set_costs(col, np.zeros(1))
                self._set_cols(col, np.zeros(1), np.zeros(1))
            grows[e] = self.solution[self.v0 + e] > _GROWS
        return self._growing_users(grows)

    def freeze(self, users: BoolArray) -> None:
        """Freeze ``users`` (active ones) at the current level: their tasks become a lower bound
        (a pool's F_c) and their level rows are released."""
        chosen = np.flatnonzero(users & self.active)
        if not len(chosen):
            return
        scaled_cap = self.scaled_cap[chosen]
        value = self._held(chosen)
        self.fixed[chosen] = value
        self.active[chosen] = False
        alone = ~self.pooled[chosen]
        single = chosen[alone]
        self._set_cols(
            self.n0 + self.entity_of[single],
            value[alone],
            np.where(np.isfinite(scaled_cap[alone]), scaled_cap[alone], _INF),
        )
        for i in single:
            self._release_row(int(self.entity_of[i]))
        self._update_pools(chosen)
        self.level[chosen] = self.current_level * self.level_unit

    def finish(self) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
        """The allocation split back into users: (user, type, tasks) triples and the tasks per
        user. Every user's tasks are exact: what it was frozen at (its level times its
        coefficient, its minimum or its cap), not the LP's reading of it, which is only good
        to the LP's tolerance in units of the user's tasks alone (a user with a tiny weight or
        a cap far below what it could run alone would lose all precision). The LP gives the
        placement: each class's amounts on its types are rescaled to its members' exact total
        (a class the LP left empty, within tolerance, spreads it in proportion to its tasks
        alone on each type)."""
        y = np.maximum(self.solution[: len(self.pair_class)], 0.0)
        part = self.participates
        n = np.where(part, np.minimum(self.fixed * self.scale, self.caps), 0.0)
        dominant = self.problem.demands.max(axis=1)
        amount = y * self.class_alone[self.pair_class]  # class units on each type
        classes = len(self.class_first)
        members_of = self.class_of >= 0
        target = np.bincount(
            self.class_of[members_of], weights=(n * dominant)[members_of], minlength=classes
        )
        placed = np.bincount(self.pair_class, weights=amount, minlength=classes)
        empty = (placed <= 0) & (target > 0)
        if empty.any():
            p = self.problem
            alone = tasks_alone(p.capacity, p.count, p.demands[self.class_first])
            spread = empty[self.pair_class]
            amount[spread] = alone[self.pair_class[spread], self.pair_type[spread]]
            placed = np.bincount(self.pair_class, weights=amount, minlength=classes)
        ratio = np.where(placed > 0, target / np.where(placed > 0, placed, 1.0), 0.0)
        amount = amount * ratio[self.pair_class]
        users: list[IntArray] = []
        types: list[IntArray] = []
        tasks: list[FloatArray] = []
        sizes = np.bincount(self.class_of[members_of], minlength=classes)
        single = sizes[self.pair_class] == 1
        if single.any():
            owner = self.class_first[self.pair_class[single]]
            users.append(owner)
            types.append(self.pair_type[single])
            tasks.append(amount[single] / dominant[owner])
        for c in np.flatnonzero(sizes > 1):
            on = np.flatnonzero(self.pair_class == c)
            member = np.flatnonzero(self.class_of == c)
            u, t, x = _northwest_corner(n[member] * dominant[member], amount[on])
            users.append(member[u])
            types.append(self.pair_type[on][t])
            tasks.append(x / dominant[member[u]])
        user = np.concatenate(users) if users else np.zeros(0, dtype=np.int64)
        kind = np.concatenate(types) if types else np.zeros(0, dtype=np.int64)
        amount_out = np.concatenate(tasks) if tasks else np.zeros(0)
        keep = amount_out > 0
        user, kind, amount_out = user[keep], kind[keep], amount_out[keep]
        totals = np.bincount(user, weights=amount_out, minlength=self.users).astype(np.float64)
        return user.astype(np.int64), kind.astype(np.int64), amount_out, totals


class _Infeasible(Exception):
    pass


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
    return member[keep].astype(np.int64), kind[keep].astype(np.int64), lengths[keep]


def _unbounded(cols: IntArray) -> FloatArray:
    return np.full(len(cols), _INF)


def progressive_filling(
    problem: FillingProblem, *, per_user_test: bool = False, pool: bool = True
) -> FillingResult:
    """The leximin (weighted max-min) allocation of ``problem`` by progressive filling in
    rounds (Choosy Algorithm 1, TSF Algorithm 1). ``per_user_test`` runs the papers' model:
    one level row per user and one freeze-test LP per user, instead of pools and the batched
    test (same result, slower; for validation). ``pool=False`` keeps the batched test but
    gives every user its own level row."""
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
        grows = model.growable_per_user() if per_user_test else model.growable()
        frozen = model.active & ~grows
        if not frozen.any():
            raise SolverFailure(
                f"progressive filling stalled at level {level:g}: every active user seems able "
                "to grow (numerical trouble)"
            )
        model.freeze(frozen)
        rounds.append((level, np.flatnonzero(frozen).astype(np.int64)))
    user, kind, tasks, totals = model.finish()
    return FillingResult(
        tasks=totals,
        pair_user=user,
        pair_type=kind,
        pair_tasks=tasks,
        level=np.where(np.isnan(model.level), 0.0, model.level),
        rounds=tuple(rounds),
        lp_solves=model.lp_solves,
    )


# From a scenario to a filling problem, and back to an allocation


@dataclass(frozen=True)
class PlacedInput:
    """What every placed (constrained) policy needs, with the scenario-level checks done.

    ``usable[i, t]``: user i may run on type t and its machines have every resource i demands.
    Users with no usable type get a cap of 0 and a warning (SPEC section 1). ``initial`` is
    ``min(min_share, cap)``; ``group_*`` are the queues with a ``max_share``.
    """

    types: MachineTypes
    usable: BoolArray
    caps: FloatArray
    initial: FloatArray
    group_members: tuple[IntArray, ...]
    group_caps: FloatArray
    warnings: tuple[str, ...]

    def fill(self, scenario: Scenario, share_per_task: FloatArray) -> tuple[Placement, int]:
        """The divisible leximin allocation of ``share_per_task``-weighted tasks, placed on
        machines, and the number of LPs it took."""
        result = progressive_filling(self.problem(scenario, share_per_task))
        placement = pack_over_machines(
            self.types,
            result.pair_user,
            result.pair_type,
            result.pair_tasks,
            len(scenario.users),
            scenario.demands,
        )
        return self.within_caps(placement), result.lp_solves

    def within_caps(self, placement: Placement) -> Placement:
        """``placement`` with every user at most at its cap and every capped queue at most at
        its ``max_share``, exactly (caps are caps, as the pooled solvers guarantee): a user or
        queue above its cap by rounding has its entries scaled down to it, with a margin of a
        few units in the last place per entry summed, so that any order of summation stays
        within. The placed policies' solvers all end here."""
        tasks = placement.tasks.copy()
        users = placement.users
        ulp = 4 * np.finfo(np.float64).eps
        entries = np.bincount(users, minlength=placement.shape[0]).astype(np.float64)
        total = np.bincount(users, weights=tasks, minlength=placement.shape[0])
        over = total > self.caps
        if over.any():
            factor = np.ones(len(total))
            factor[over] = self.caps[over] / total[over] * (1 - ulp * (entries[over] + 1))
            tasks *= factor[users]
        for members, limit in zip(self.group_members, self.group_caps, strict=True):
            mine = np.isin(users, members)
            held = float(tasks[mine].sum())
            if held > limit:
                tasks[mine] *= limit / held * (1 - ulp * (int(mine.sum()) + 1))
        if np.array_equal(tasks, placement.tasks):
            return placement
        return Placement(placement.users, placement.machines, tasks, placement.shape)

    def problem(self, scenario: Scenario, share_per_task: FloatArray) -> FillingProblem:
        return FillingProblem(
            capacity=self.types.capacity,
            count=self.types.count.astype(np.float64),
            usable=self.usable,
            demands=scenario.demands,
            share_per_task=share_per_task,
            weights=scenario.weights,
            caps=self.caps,
            initial=self.initial,
            group_members=self.group_members,
            group_caps=self.group_caps,
        )


def prepare_placed(scenario: Scenario) -> PlacedInput:
    """Machine types, usable pairs, effective caps and minimums, queue caps and warnings."""
    types = machine_types(scenario)
    demands = scenario.demands
    eligible = types.eligible
    usable = eligible & hosts(types.capacity, demands)
    warnings = []
    nowhere = ~eligible.any(axis=1)
    unhosted = ~nowhere & ~usable.any(axis=1)
    for i in np.flatnonzero(nowhere):
        warnings.append(
            f"user {scenario.users[i].name!r}: {MATCHES_NO_MACHINE}; it receives nothing"
        )
    for i in np.flatnonzero(unhosted):
        wanted = [r for r, d in zip(scenario.cluster.resources, demands[i], strict=True) if d > 0]
        warnings.append(
            f"user {scenario.users[i].name!r}: no machine it may use has all of "
            f"{', '.join(wanted)}; it receives nothing"
        )
    caps = np.where(usable.any(axis=1), scenario.caps, 0.0)
    initial = np.minimum(scenario.min_shares, caps)
    tree = build_hierarchy(scenario)
    members: list[IntArray] = []
    limits: list[float] = []
    for node in range(1, tree.size):
        if tree.user_of[node] < 0 and np.isfinite(tree.max_tasks[node]):
            below = tree.ancestors.users[tree.ancestors.nodes == node]
            members.append(below.astype(np.int64))
            limits.append(float(tree.max_tasks[node]))
    return PlacedInput(
        types=types,
        usable=usable,
        caps=caps,
        initial=initial,
        group_members=tuple(members),
        group_caps=np.array(limits, dtype=np.float64),
        warnings=tuple(warnings),
    )


def spread_over_machines(
    types: MachineTypes, user: IntArray, kind: IntArray, tasks: FloatArray, users: int
) -> Placement:
    """Per-machine placement of per-(user, type) tasks: the machines of a type share the
    type's allocation evenly (they are identical and have the same eligible users)."""
    order = np.argsort(types.machine_type, kind="stable")
    start = np.concatenate(([0], np.cumsum(types.count)[:-1])).astype(np.int64)
    reps = types.count[kind].astype(np.int64)
    offsets = np.arange(int(reps.sum()), dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
    machines = order[np.repeat(start[kind], reps) + offsets]
    return Placement(
        users=np.repeat(user, reps).astype(np.int64),
        machines=machines.astype(np.int64),
        tasks=np.repeat(tasks / reps, reps).astype(np.float64),
        shape=(users, len(types.machine_type)),
    )


def pack_over_machines(
    types: MachineTypes,
    user: IntArray,
    kind: IntArray,
    tasks: FloatArray,
    users: int,
    demands: FloatArray,
) -> Placement:
    """Per-machine placement of per-(user, type) tasks for the pooled-over-types policies
    (CMMF, TSF, CDRF, DRFH): Choosy 5.1 allocates a type's machines as one, so any split of a
    type's allocation among its identical machines is the same allocation.

    Where every user on a type has the same demand direction (always, with one resource),
    the users fill its machines one after another, each taking a contiguous run: at most
    users + machines - 1 (user, machine) pairs per type instead of users x machines, which on
    a 100,000-machine cluster is the difference between ~10^5 and ~5 x 10^6 placement entries
    (and a 140 MB ``fairshare solve --json``). A type shared by different directions is split
    evenly, as :func:`spread_over_machines` does, since a machine must fit every resource."""
    machines = len(types.machine_type)
    order = np.argsort(types.machine_type, kind="stable")
    start = np.concatenate(([0], np.cumsum(types.count)[:-1])).astype(np.int64)
    by_type = np.argsort(kind, kind="stable")
    user, kind, tasks = user[by_type], kind[by_type], tasks[by_type]
    dominant = demands.max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        direction = demands[user] / dominant[user, None]
    kinds, first = np.unique(kind, return_index=True)
    reference = np.zeros((len(types.count), demands.shape[1]))
    reference[kinds] = direction[first]
    odd = np.abs(direction - reference[kind]).max(axis=1, initial=0.0) > 1e-12
    mixed = np.zeros(len(types.count), dtype=np.bool_)
    mixed[kind[odd]] = True
    packed = ~mixed[kind]
    even = spread_over_machines(types, user[~packed], kind[~packed], tasks[~packed], users)
    user, kind, tasks = user[packed], kind[packed], tasks[packed]
    if not len(user):
        return even
    # one machine of the type holds ``per_machine`` units of the direction (dominant units)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = types.capacity / reference
    per_machine = np.where(reference > 0, ratio, np.inf).min(axis=1)
    length = tasks * dominant[user] / per_machine[kind]  # in machines
    count = types.count.astype(np.float64)
    total = np.bincount(kind, weights=length, minlength=len(count))
    # the LP meets capacity only to its tolerance: never spill onto the next type's machines
    length = length * np.minimum(1.0, count / np.where(total > 0, total, 1.0))[kind]
    end = np.cumsum(length)
    begins = np.flatnonzero(np.r_[True, kind[1:] != kind[:-1]])
    base = np.repeat(np.r_[0.0, end][begins], np.diff(np.r_[begins, len(kind)]))
    end = end - base
    piece_start = np.r_[0.0, end[:-1]]
    piece_start[begins] = 0.0  # a type's first user starts at its first machine, exactly
    offset = start[kind].astype(np.float64)
    piece_start += offset
    piece_end = end + offset
    # An end within rounding of a machine boundary is on it, so no sliver spills over. Only
    # rounding: a machine may hold 10^12 tiny tasks, so a fixed 1e-9 of a machine would take
    # a thousand tasks from (or give them to) a user.
    for bound in (piece_start, piece_end):
        near: FloatArray = np.rint(bound)
        close = np.abs(bound - near) <= 16 * np.finfo(np.float64).eps * np.maximum(1.0, near)
        bound[close] = near[close]
    used = np.flatnonzero(np.bincount(kind, minlength=len(count)) > 0)
    boundaries = np.concatenate(
        [np.arange(start[t], start[t] + types.count[t] + 1, dtype=np.float64) for t in used]
    )
    cuts = np.unique(np.concatenate((boundaries, piece_start, piece_end)))
    middle = (cuts[:-1] + cuts[1:]) / 2
    piece = np.searchsorted(piece_start, middle, side="right") - 1
    inside = (piece >= 0) & (middle < piece_end[np.maximum(piece, 0)])
    piece, middle = piece[inside], middle[inside]
    share = np.diff(cuts)[inside]
    t = kind[piece]
    position = np.clip(np.floor(middle).astype(np.int64), start[t], start[t] + types.count[t] - 1)
    amount = share * per_machine[t] / dominant[user[piece]]
    # Positions are in machines, so a piece of 20 tasks beside 10^15 others is known only to
    # the rounding of its position: each (user, type) amount is restored from what was asked
    # (it fitted, up to that rounding), and one too small to survive as a piece at all goes
    # whole on the machine where it starts.
    placed = np.bincount(piece, weights=amount, minlength=len(user))
    asked = np.minimum(tasks, length * per_machine[kind] / dominant[user])
    amount = amount * np.where(placed > 0, asked / np.where(placed > 0, placed, 1.0), 0.0)[piece]
    lost = np.flatnonzero((placed <= 0) & (asked > 0))
    at = np.clip(np.floor(piece_start[lost]).astype(np.int64), start[kind[lost]], None)
    at = np.minimum(at, start[kind[lost]] + types.count[kind[lost]] - 1)
    return Placement(
        users=np.concatenate((even.users, user[piece], user[lost])).astype(np.int64),
        machines=np.concatenate((even.machines, order[position], order[at])).astype(np.int64),
        tasks=np.concatenate((even.tasks, amount, asked[lost])).astype(np.float64),
        shape=(users, machines),
    )


def placed_allocation(
    policy: str,
    integral: bool,
    placement: Placement,
    shares: FloatArray,
    warnings: tuple[str, ...],
    lp_solves: int | None = None,
) -> Allocation:
    """The allocation whose tasks are ``placement``'s per-user sums; ``lp_solves`` (for the
    benchmarks) goes to its extras."""
    return Allocation(
        policy=policy,
        integral=integral,
        tasks=placement.per_user(),
        shares=np.asarray(shares, dtype=np.float64),
        placement=placement,
        warnings=warnings,
        extras={} if lp_solves is None else {"lp_solves": lp_solves},
    )


def whole_minimums(initial: FloatArray) -> FloatArray:
    """Whole tasks of the minimum shares (the integral solvers start from them)."""
    return np.floor(initial + 1e-9)
