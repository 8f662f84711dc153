"""The placed (constrained) policies' side of progressive filling: from a scenario to a
:class:`~fairshare.solvers.filling_problem.FillingProblem` on machine types, and from the
per-(user, type) result back to an allocation on individual machines.

CMMF (Choosy sections 4.2 and 5.1), TSF (TSF section V), DRFH and constrained CDRF (TSF
sections IV-B2, IV-B3) and the per-machine policies all start from :func:`prepare_placed`
(machine types as in Choosy 5.1, usable pairs, effective caps and minimums, capped queues,
warnings) and end with :func:`placed_allocation`. A type's machines are identical and have the
same eligible users, so any split of a type's allocation among them is the same allocation
(Choosy 5.1); :func:`pack_over_machines` chooses one with few (user, machine) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairshare.allocation import Allocation, Placement
from fairshare.allocation.types import IntArray
from fairshare.cluster import BoolArray, FloatArray
from fairshare.solvers.filling_lp import progressive_filling
from fairshare.solvers.filling_problem import FillingProblem, hosts
from fairshare.workload.eligibility import MATCHES_NO_MACHINE, MachineTypes, machine_types
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.model import Scenario


@dataclass(frozen=True)
class PlacedInput:
    """What every placed (constrained) policy needs, with the scenario-level checks done
    (built by :func:`prepare_placed`).

    Parameters
    ----------
    types : MachineTypes
        The scenario's machines coalesced into types (Choosy section 5.1).
    usable : BoolArray
        users x types: user i may run on type t and its machines have every resource i
        demands.
    caps : FloatArray
        Per user: its cap, or 0 for a user with no usable type (which gets a warning, SPEC
        section 1).
    initial : FloatArray
        Per user: ``min(min_share, cap)``.
    group_members : tuple of IntArray
        The users of each queue with a ``max_share``.
    group_caps : FloatArray
        Each such queue's ``max_share`` in tasks.
    warnings : tuple of str
        One line per user that receives nothing.
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
        machines (:func:`~fairshare.solvers.filling_lp.progressive_filling`, then
        :func:`pack_over_machines` and :meth:`within_caps`).

        Parameters
        ----------
        scenario : Scenario
            The scenario this input was prepared from.
        share_per_task : FloatArray
            Per user, what one task adds to the share the policy equalises.

        Returns
        -------
        tuple of (Placement, int)
            The placement, and the number of LPs it took.

        Raises
        ------
        InvalidRequest
            The minimum shares do not fit.
        SolverFailure
            HiGHS could not solve an LP.

        Examples
        --------
        Choosy Figure 4's divisible CMMF of Figure 1 (one slot per machine):

        >>> from fairshare.workload.loader import parse_scenario
        >>> machines = [{"name": f"m{k}", "capacity": {"slots": 1}} for k in range(1, 11)]
        >>> users = [
        ...     {"name": "u1", "machines": ["m1", "m4"]},
        ...     {"name": "u2", "machines": ["m3", "m4"]},
        ...     {"name": "u3", "machines": ["m2", "m3", "m4", "m6", "m7"]},
        ...     {"name": "u4", "machines": ["m5", "m6", "m7", "m8", "m9", "m10"]},
        ... ]
        >>> scenario = parse_scenario(
        ...     {"resources": ["slots"], "machines": machines, "users": users}, "figure-1"
        ... )
        >>> data = prepare_placed(scenario)
        >>> placement, lp_solves = data.fill(scenario, scenario.demands[:, 0])
        >>> np.round(placement.per_user(), 9).tolist()
        [1.5, 1.5, 3.0, 4.0]
        """
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
        its ``max_share``, exactly (caps are caps, as the pooled solvers guarantee).

        A user or queue above its cap by rounding has its entries scaled down to it, with a
        margin of a few units in the last place per entry summed, so that any order of
        summation stays within. The placed policies' solvers all end here.

        Parameters
        ----------
        placement : Placement
            Tasks per (user, machine).

        Returns
        -------
        Placement
            ``placement`` itself when nothing is over, else the scaled copy.
        """
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
        """The filling problem on machine types of ``scenario`` with ``share_per_task``.

        Parameters
        ----------
        scenario : Scenario
            The scenario this input was prepared from (demands and weights).
        share_per_task : FloatArray
            Per user, what one task adds to the share the policy equalises.

        Returns
        -------
        FillingProblem
        """
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
    """Machine types, usable pairs, effective caps and minimums, queue caps and warnings.

    Parameters
    ----------
    scenario : Scenario
        A validated scenario.

    Returns
    -------
    PlacedInput
        What the placed policies need; a user with no machine it may use, or none with every
        resource it demands, has a cap of 0 and a warning.
    """
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
    members, limits = build_hierarchy(scenario).capped_queues()
    return PlacedInput(
        types=types,
        usable=usable,
        caps=caps,
        initial=initial,
        group_members=members,
        group_caps=limits,
        warnings=tuple(warnings),
    )


def spread_over_machines(
    types: MachineTypes, user: IntArray, kind: IntArray, tasks: FloatArray, users: int
) -> Placement:
    """Per-machine placement of per-(user, type) tasks: the machines of a type share the
    type's allocation evenly (they are identical and have the same eligible users).

    Parameters
    ----------
    types : MachineTypes
        The machine types the tasks are on.
    user, kind, tasks : IntArray, IntArray, FloatArray
        Tasks per (user, type), as sparse triples.
    users : int
        The number of users (the placement's first dimension).

    Returns
    -------
    Placement
        Each (user, type) entry split evenly over the type's machines.
    """
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
    evenly, as :func:`spread_over_machines` does, since a machine must fit every resource.

    Parameters
    ----------
    types : MachineTypes
        The machine types the tasks are on.
    user, kind, tasks : IntArray, IntArray, FloatArray
        Tasks per (user, type), as sparse triples.
    users : int
        The number of users (the placement's first dimension).
    demands : FloatArray
        users x resources, per task.

    Returns
    -------
    Placement
        The same tasks per (user, type), on the type's machines, none over capacity.
    """
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
    """The allocation whose tasks are ``placement``'s per-user sums.

    Parameters
    ----------
    policy : str
        The policy's SPEC name.
    integral : bool
        Whether the tasks are whole.
    placement : Placement
        Tasks per (user, machine).
    shares : FloatArray
        Per user, the share the policy equalises.
    warnings : tuple of str
        From :class:`PlacedInput`.
    lp_solves : int or None
        The number of LPs solved, for the benchmarks (in the allocation's extras).

    Returns
    -------
    Allocation
    """
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
    """Whole tasks of the minimum shares (the integral solvers start from them).

    Parameters
    ----------
    initial : FloatArray
        Per user, its minimum tasks (``PlacedInput.initial``).

    Returns
    -------
    FloatArray
        Rounded down, a rounding error below a whole task counting as the whole task.
    """
    return np.floor(initial + 1e-9)
