"""Reference schedulers of Choosy sections 7.1-7.2, built on the exact integral CMMF solver.

Choosy compares its greedy online rule against schedulers that compute the constrained
max-min fair (CMMF) allocation exactly (Choosy section 5, here
:func:`fairshare.solvers.cmmf_flow.cmmf_whole_tasks`: progressive filling by network flow,
whole tasks, machine types coalesced). They are policies of the same protocol as
:mod:`fairshare.policies` (the engine drives them unchanged), registered as extensions of
SPEC section 3's policy names:

``offline-restricted``
    Section 7.1's "Restricted Offline": the optimal offline scheduler that may not migrate or
    preempt. Whenever room frees up or work arrives, it gives the *free* capacity to reach the
    lexicographically largest vector of weighted shares with every running task left where
    it is (running tasks are an offset each user starts from).
``offline-migration``
    Section 7.1's "Migration": running tasks may move between machines at no cost (never
    stopped). The target is the CMMF allocation of the whole cluster in which every user keeps
    at least its running tasks; tasks move (a pause and a launch at the same instant, see
    :class:`fairshare.sim.engine.Pause`) only when that target is strictly fairer than the
    restricted one.
``offline-preemption``
    Section 7.1's "Preemption": tasks may also be paused at no cost and resume from where they
    left off. The target is the CMMF allocation of the whole cluster from scratch; users above
    it have their newest tasks paused, again only when that is strictly fairer than not.
``periodic-offline``
    Section 7.2's hybrid: solves a new offline CMMF allocation when a user joins or leaves and
    then converges to it as tasks finish, giving a freed machine to a user that holds fewer
    machines *of that type* than the plan says (the largest shortfall first). When no user is
    short on that type the machine goes to the lowest share that can use it, so no machine
    idles while someone could use it.

What the reference schedulers share (Choosy's model, section 3): one resource (each task
demands one resource, the same for every job: the first job decides which), a user's share is
the amount of it held divided by its weight, and a user's demand is its running plus pending
tasks. The unit that receives a share is a user (a job, unless jobs name a shared ``user``)
with one constraint and one task size; a user whose jobs differ in constraint or task size
is one unit per (constraint, size). Maps come before reduces and a job's tasks run in order;
the data locality of each launch is reported but not sought. Minimum and maximum shares,
delay scheduling and preemption timeouts are FAIR's mechanisms, not Choosy's, and are not
used. Each decision solves one or two flow problems over machine types, so these schedulers
are orders of magnitude slower than the online ones, as Choosy's Table 2 reports.

The state a reference scheduler keeps (units, jobs, machines) and the protocol's events that
change it are :class:`fairshare.sim.reference_state.ReferenceState`; this module is the
decisions: :class:`ReferenceScheduler` computes the exact allocations every scheduler shares
(the restricted one, the whole cluster's target) and applies them, and a :class:`Mode` per
scheduler (:class:`Restricted`, :class:`Migration`, :class:`Preemption`, :class:`Periodic`,
named by its :class:`ReferencePolicy` entry) says which of them it computes and how it moves
to it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fairshare.cluster import Cluster
from fairshare.policies import Decision
from fairshare.registry import PolicyInfo, by_name
from fairshare.sim.engine import SimulationError
from fairshare.sim.reference_state import DIGITS, EPS, ReferenceState, Unit
from fairshare.workload.eligibility import MachineTypes, coalesce
from fairshare.workload.model import Queue, User

__all__ = [
    "REFERENCE_POLICIES",
    "Migration",
    "Mode",
    "Periodic",
    "Preemption",
    "ReferencePolicy",
    "ReferenceScheduler",
    "Restricted",
    "make_reference",
]


class ReferenceScheduler(ReferenceState):
    """The four reference schedulers of Choosy sections 7.1-7.2 (see the module docstring).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    mode : str
        Which scheduler: a key of :data:`REFERENCE_POLICIES`.
    users : sequence of User
        The scenario's users: their weights.
    queues : sequence of Queue
        Accepted for the protocol's signature; Choosy's model has no queues.

    Attributes
    ----------
    mode : Mode
        How this scheduler decides (its :class:`ReferencePolicy` entry's mode).

    Raises
    ------
    SimulationError
        ``mode`` is not a reference scheduler, or two machines have the same name.
    """

    def __init__(
        self,
        cluster: Cluster,
        mode: str,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
    ) -> None:
        entry = REFERENCE_POLICIES.get(mode)
        if entry is None:
            raise SimulationError(
                "policy",
                f"unknown reference scheduler {mode!r}; expected one of "
                f"{', '.join(REFERENCE_POLICIES)}",
            )
        super().__init__(cluster, mode, users=users)
        self.mode: Mode = entry.mode()

    # ------------------------------------------------------------------ protocol: decisions

    def decide(self, now: float) -> list[Decision]:
        """One decision (Choosy 7.1-7.2): the scheduler's :class:`Mode` decides.

        Parameters
        ----------
        now : float
            The current time.

        Returns
        -------
        list of Decision
            Pauses first, then launches; nothing when no event came since the last one.
        """
        if not self.dirty:
            return []
        self.dirty = False
        out: list[Decision] = []
        if self.waiting:
            self.mode.decide(self, out)
        self.hard = self.capped = False
        self.finished.clear()
        self.fresh.clear()
        self.widened.clear()
        return out

    def candidates(self) -> list[int]:
        """Free machines on which some waiting unit may run a task that fits, by index."""
        room = self.room
        if self.exhaustive:
            candidates: set[int] = set(room)
        else:
            candidates = {mi for mi in self.fresh if mi in room}
            for u in self.widened:
                unit = self.units[u]
                if unit.pending:
                    ok = self.eligible[unit.cls]
                    candidates.update(mi for mi in room if ok[mi])
        waiting = [self.units[u] for u in self.waiting]
        out = []
        for mi in sorted(candidates):
            fits = self.free[mi] + EPS
            if any(unit.size <= fits and self.eligible[unit.cls][mi] for unit in waiting):
                out.append(mi)
        return out

    # ------------------------------------------------------------------ the exact allocations

    def restricted(self, machines: list[int]) -> dict[tuple[int, int], int]:
        """New tasks per (unit, machine) on the free capacity of ``machines`` (those a waiting
        unit can use), leximin over running + new (Choosy 7.1's restricted offline scheduler).
        Running tasks enter the flow as a private machine per unit holding exactly them,
        guaranteed as its initial tasks."""
        if not machines:
            return {}
        units = [self.units[u] for u in sorted(self.waiting)]
        one = self._single_slot(units, machines)
        if one is not None:
            return one
        placement = self._solve(units, machines, [self.free[mi] for mi in machines], True)
        out: dict[tuple[int, int], int] = {}
        total: dict[int, int] = {}
        for (u, m), tasks in placement.items():
            total[u] = total.get(u, 0) + tasks
            if m < len(machines):
                out[(u, machines[m])] = tasks
        # The flow may have put some running tasks on free machines instead of the private
        # one: only the total counts, so keep each unit's new tasks, total - running.
        for unit in units:
            extra = sum(t for (v, _), t in out.items() if v == unit.idx) - (
                total.get(unit.idx, 0) - len(unit.running)
            )
            for key in sorted((k for k in out if k[0] == unit.idx), reverse=True):
                if extra <= 0:
                    break
                cut = min(extra, out[key])
                out[key] -= cut
                extra -= cut
        return {k: t for k, t in out.items() if t > 0}

    def _single_slot(
        self, units: list[Unit], machines: list[int]
    ) -> dict[tuple[int, int], int] | None:
        """The exact answer without a flow when one task's worth of usable room is free and
        every pending task has one size (the common case once the cluster is full): the
        leximin optimum gives it to the eligible unit with the lowest weighted share, with the
        solver's tie rule (the largest size / weight, then the first unit). This is Choosy
        section 6's observation that its greedy rule is the restricted offline optimum when
        one machine frees up. None when the flow is needed."""
        size = units[0].size
        if len(machines) != 1 or any(u.size != size for u in units):
            return None
        mi = machines[0]
        if self.free[mi] + EPS >= 2 * size:
            return None
        best: tuple[float, float, int] | None = None
        for unit in units:
            if self.eligible[unit.cls][mi]:
                rank = (
                    round(len(unit.running) * size / unit.weight, DIGITS),
                    -size / unit.weight,
                    unit.idx,
                )
                if best is None or rank < best:
                    best = rank
        return {} if best is None else {(best[2], mi): 1}

    def whole_cluster(self, *, keep_running: bool) -> dict[tuple[int, int], int]:
        """Tasks per (unit, machine) of the CMMF allocation of the whole cluster, every unit
        keeping at least its running tasks if ``keep_running`` (free migration) or not
        (free preemption)."""
        units = [u for u in self.units if u.pending or u.running]
        machines = [mi for mi in range(len(self.names)) if self.alive[mi]]
        # Running tasks already occupy these capacities, so a unit keeps them as its
        # initial tasks within the machines, not on private ones.
        placement = self._solve(
            units, machines, [self.capacity[mi] for mi in machines], keep_running, private=False
        )
        return {(u, machines[m]): t for (u, m), t in placement.items() if m < len(machines)}

    def _solve(
        self,
        units: list[Unit],
        machines: list[int],
        capacity: list[float],
        offsets: bool,
        *,
        private: bool = True,
    ) -> dict[tuple[int, int], int]:
        """Integral weighted CMMF (:func:`cmmf_whole_tasks`) of ``units`` over ``machines``
        with ``capacity``. Machines are coalesced into types (Choosy 5.1,
        :func:`~fairshare.workload.eligibility.coalesce`) by what the flow can tell apart:
        which of ``units`` may use them, and their capacity; machines that differ only in
        attributes no unit here asks about are one type. With ``offsets`` each unit is
        guaranteed its running tasks: on a private machine holding exactly them when
        ``private`` (``capacity`` is then the free capacity, running tasks excluded), else
        within ``capacity``. Returns whole tasks per (unit index, position in
        ``machines``; positions past the end are the private machines of running tasks)."""
        n_units, n_machines = len(units), len(machines)
        where = np.asarray(machines, dtype=np.int64)
        rows = [np.frombuffer(self.eligible[u.cls], dtype=np.bool_)[where] for u in units]
        allowed = np.stack(rows) if rows else np.zeros((0, n_machines), dtype=np.bool_)
        amounts = np.asarray(capacity, dtype=np.float64).reshape(n_machines, 1)
        types = coalesce(allowed, amounts, DIGITS)
        if offsets and private:
            # One private type per unit with running tasks, holding exactly them, that only
            # this unit may use.
            holders = [row for row, unit in enumerate(units) if unit.running]
            n_types = len(types.count)
            own = np.zeros((n_units, len(holders)), dtype=np.bool_)
            own[holders, np.arange(len(holders))] = True
            held = [len(units[row].running) * units[row].size for row in holders]
            types = MachineTypes(
                machine_type=np.concatenate(
                    (types.machine_type, np.arange(n_types, n_types + len(holders)))
                ),
                capacity=np.concatenate(
                    (types.capacity, np.asarray(held, dtype=np.float64).reshape(-1, 1))
                ),
                count=np.concatenate((types.count, np.ones(len(holders), dtype=np.int64))),
                eligible=np.concatenate((types.eligible, own), axis=1),
            )
        running = np.array([len(u.running) for u in units], dtype=np.float64)
        demands = np.array([[u.size] for u in units], dtype=np.float64).reshape(n_units, 1)
        weights = np.array([u.weight for u in units], dtype=np.float64)
        caps = running + np.array([u.pending for u in units], dtype=np.float64)
        initial = running if offsets else np.zeros(n_units)
        # Imported here: naming the reference schedulers (`fairshare simulate` checks its
        # --policy against them) must not load the solvers and HiGHS.
        from fairshare.solvers.cmmf_flow import cmmf_whole_tasks  # noqa: PLC0415

        result = cmmf_whole_tasks(types, demands, weights, caps, initial)
        out: dict[tuple[int, int], int] = {}
        result_rows: list[int] = result.users.tolist()
        positions: list[int] = result.machines.tolist()
        tasks_at: list[float] = result.tasks.tolist()
        for row, m, tasks in zip(result_rows, positions, tasks_at, strict=True):
            whole = round(tasks)
            if whole > 0:
                pair = (units[row].idx, m)
                out[pair] = out.get(pair, 0) + whole
        return out

    def totals(self, tasks: dict[tuple[int, int], int], *, add_running: bool) -> dict[int, int]:
        """Tasks per active unit in ``tasks`` (plus those it runs, with ``add_running``)."""
        totals: dict[int, int] = {}
        for unit in self.units:
            if unit.pending or unit.running:
                totals[unit.idx] = len(unit.running) if add_running else 0
        for (u, _), t in tasks.items():
            totals[u] = totals.get(u, 0) + t
        return totals

    def levels(self, totals: dict[int, int]) -> list[float]:
        """The sorted vector of weighted shares, compared lexicographically (CMMF)."""
        return sorted(
            round(t * self.units[u].size / self.units[u].weight, DIGITS) for u, t in totals.items()
        )

    # ------------------------------------------------------------------ applying a plan

    def apply_new(self, new: dict[tuple[int, int], int], out: list[Decision]) -> None:
        """Launch ``new`` tasks per (unit, machine), in that order."""
        for (u, mi), tasks in sorted(new.items()):
            unit = self.units[u]
            for _ in range(tasks):
                self.launch(unit, mi, out)

    def apply_target(self, target: dict[tuple[int, int], int], out: list[Decision]) -> None:
        """Move to ``target`` tasks per (unit, machine): pause the newest tasks where a unit
        has too many (all pauses first, so no machine is ever over capacity), then launch where
        it has too few, paused tasks first (a migration), then pending ones."""
        launches: list[tuple[int, int, int]] = []
        for unit in self.units:
            if not (unit.pending or unit.running):
                continue
            have: dict[int, int] = {}
            for mi in unit.running.values():
                have[mi] = have.get(mi, 0) + 1
            for ref, mi in reversed(list(unit.running.items())):
                if have[mi] > target.get((unit.idx, mi), 0):
                    have[mi] -= 1
                    self.pause(unit, ref, out)
            for (u, mi), tasks in target.items():
                if u == unit.idx and tasks > have.get(mi, 0):
                    launches.append((u, mi, tasks - have.get(mi, 0)))
        for u, mi, tasks in sorted(launches):
            unit = self.units[u]
            for _ in range(tasks):
                if not unit.pending:
                    break
                self.launch(unit, mi, out)


# ---------------------------------------------------------------------------------- the modes


class Mode(ABC):
    """How one reference scheduler of Choosy sections 7.1-7.2 decides: which exact allocation
    it computes and how it moves to it, from the operations every mode shares
    (:class:`ReferenceScheduler`'s ``candidates``, ``restricted``, ``whole_cluster``,
    ``apply_new``, ``apply_target``, and the state's ``launch`` and ``pause``).

    A mode is named by its :class:`ReferencePolicy` entry; each scheduler makes its own
    instance, so a mode may keep state between decisions (periodic-offline's plan).
    """

    @abstractmethod
    def decide(self, scheduler: ReferenceScheduler, out: list[Decision]) -> None:
        """Append one decision's pauses and launches to ``out``.

        Parameters
        ----------
        scheduler : ReferenceScheduler
            The scheduler, with units waiting.
        out : list of Decision
            The decisions so far.
        """


class Restricted(Mode):
    """offline-restricted (Choosy section 7.1's "Restricted Offline"): the CMMF allocation of
    the free capacity, every running task left where it is."""

    def decide(self, scheduler: ReferenceScheduler, out: list[Decision]) -> None:
        """Launch the restricted allocation on the machines that can take a task.

        Parameters
        ----------
        scheduler : ReferenceScheduler
            The scheduler.
        out : list of Decision
            The decisions so far.
        """
        scheduler.apply_new(scheduler.restricted(scheduler.candidates()), out)


class _TowardsTarget(Mode):
    """The free-migration and free-preemption references (Choosy section 7.1): the restricted
    allocation, solved on the machines that can take a task only, is compared with the whole
    cluster's CMMF target, and the target is reached (pauses, then launches) when strictly
    fairer. :meth:`shortcut` skips the comparison when the events since the last decision
    cannot make the target fairer than what the restricted step reaches, which the last
    decision, being optimal, guarantees."""

    keep_running: ClassVar[bool]
    """Whether every unit keeps at least its running tasks in the target (free migration)."""

    def decide(self, scheduler: ReferenceScheduler, out: list[Decision]) -> None:
        """The shortcut when it applies, else the fairer of the restricted allocation and
        the target (the restricted one on ties).

        Parameters
        ----------
        scheduler : ReferenceScheduler
            The scheduler.
        out : list of Decision
            The decisions so far.
        """
        if not scheduler.exhaustive and not scheduler.hard and self.shortcut(scheduler, out):
            return
        restricted = scheduler.restricted(scheduler.candidates())
        from fairshare.solvers.errors import InvalidRequest  # noqa: PLC0415 (as in _solve)

        try:
            target = scheduler.whole_cluster(keep_running=self.keep_running)
        except InvalidRequest:
            if not self.keep_running:
                raise
            # Units of several task sizes on shared machines are packed greedily (first-fit
            # decreasing, ``fill_whole_tasks``), which can fail to place the running tasks the
            # target must keep although they do run: no target keeping them was found, so
            # they stay where they are and only the restricted step applies.
            scheduler.apply_new(restricted, out)
            return
        if scheduler.levels(scheduler.totals(restricted, add_running=True)) >= scheduler.levels(
            scheduler.totals(target, add_running=False)
        ):
            scheduler.apply_new(restricted, out)
        else:
            scheduler.apply_target(target, out)

    @abstractmethod
    def shortcut(self, scheduler: ReferenceScheduler, out: list[Decision]) -> bool:
        """Decide without the whole cluster's solve, after events (no arrival, no machine
        change) that cannot make the target fairer than the restricted step.

        Parameters
        ----------
        scheduler : ReferenceScheduler
            The scheduler.
        out : list of Decision
            The decisions so far.

        Returns
        -------
        bool
            Whether it decided (False: the comparison is needed).
        """


class Preemption(_TowardsTarget):
    """offline-preemption (Choosy section 7.1's "Preemption"): the target is the whole
    cluster's CMMF allocation from scratch; units above it have their newest tasks paused."""

    keep_running = False

    def shortcut(self, scheduler: ReferenceScheduler, out: list[Decision]) -> bool:
        """When only tasks finished, each of a unit that still has as many tasks pending, the
        old allocation stays feasible and optimal (those units' caps do not bind) and
        relaunching each finished task's successor restores it: the restricted allocation is
        at least as fair, and is what the comparison would pick.

        Parameters
        ----------
        scheduler : ReferenceScheduler
            The scheduler.
        out : list of Decision
            The decisions so far.

        Returns
        -------
        bool
            Whether it decided (no unit's cap may bind: ``capped`` is unset).
        """
        if scheduler.capped:
            return False
        scheduler.apply_new(scheduler.restricted(scheduler.candidates()), out)
        return True


class Migration(_TowardsTarget):
    """offline-migration (Choosy section 7.1's "Migration"): the target is the whole
    cluster's CMMF allocation in which every unit keeps at least its running tasks; tasks move
    (a pause and a launch at the same instant) only when it is strictly fairer."""

    keep_running = True

    def shortcut(self, scheduler: ReferenceScheduler, out: list[Decision]) -> bool:
        """After one task finished (one free slot, one task size): the old allocation was a
        maximum flow and caps only fell, so at most one more task fits; the fairest way to
        add it is the waiting unit of lowest share that an augmenting path reaches, exactly
        the optimum the flow would find.

        That unit (lowest weighted share; the solver's tie rule: then the largest
        size / weight, then the first unit) gets the freed slot, directly or by a chain of
        migrations (a unit eligible there moves one task into it, freeing a machine for the
        next, ...); a unit the restricted rule would pick at the same level wins, as the
        comparison with the target prefers the restricted allocation on ties.

        Parameters
        ----------
        scheduler : ReferenceScheduler
            The scheduler.
        out : list of Decision
            The decisions so far.

        Returns
        -------
        bool
            Whether it decided (False for several free slots or task sizes).
        """
        s = scheduler
        fresh = [mi for mi in s.fresh if mi in s.room]
        if len(fresh) != 1 or len(s.sizes) != 1:
            return False
        mi = fresh[0]
        size = next(iter(s.sizes))
        if s.free[mi] + EPS >= 2 * size or s.free[mi] + EPS < size:
            return False

        def level(unit: Unit) -> tuple[float, float]:
            """The unit's weighted share now, then after one more task (the tie-break)."""
            return (round(len(unit.running) * size / unit.weight, DIGITS), -size / unit.weight)

        waiting = [s.units[u] for u in s.waiting]
        direct = [unit for unit in waiting if s.eligible[unit.cls][mi]]
        best = min(direct, key=lambda unit: (*level(unit), unit.idx), default=None)
        if best is not None and not any(level(unit) < level(best) for unit in waiting):
            s.launch(best, mi, out)
            return True
        # Grow, breadth first, the machines whose slot can be passed on to mi: a unit
        # eligible on one of them (``via``: the nearest such machine) may move a task there
        # from any machine it holds, which joins the set.
        reach = 1 << mi
        frontier = reach
        via: dict[int, int] = {}
        passes: dict[int, tuple[Unit, int]] = {}
        left = [unit for unit in s.units if unit.pending or unit.running]
        while frontier and left:
            found = [unit for unit in left if s.eligible_bits[unit.cls] & frontier]
            if not found:
                break
            grown = 0
            for unit in found:
                mask = s.eligible_bits[unit.cls] & frontier
                via[unit.idx] = (mask & -mask).bit_length() - 1
                new = unit.held & ~reach & ~grown
                while new:
                    low = new & -new
                    new ^= low
                    passes[low.bit_length() - 1] = (unit, via[unit.idx])
                    grown |= low
            left = [unit for unit in left if unit.idx not in via]
            reach |= grown
            frontier = grown
        reached = [unit for unit in waiting if unit.idx in via]
        pick = min(reached, key=lambda unit: (*level(unit), unit.idx), default=None)
        if pick is None:
            return True
        if best is not None and level(best) <= level(pick):
            pick = best
        # Move along the path, the hop into mi first, so each move lands on a free slot.
        chain: list[tuple[Unit, int, int]] = []
        at = via[pick.idx] if pick is not best else mi
        while at != mi:
            mover, to = passes[at]
            chain.append((mover, at, to))
            at = to
        for mover, source, to in reversed(chain):
            ref = next(r for r in reversed(mover.running) if mover.running[r] == source)
            s.pause(mover, ref, out)
            s.launch(mover, to, out)
        s.launch(pick, via[pick.idx] if pick is not best else mi, out)
        return True


class Periodic(Mode):
    """periodic-offline (Choosy section 7.2's hybrid): the plan is solved again only when a
    unit joins or leaves or the machines change; in between, each machine that can take a
    task goes to the waiting unit furthest below its plan for the machine's type, else to the
    lowest share that can use it."""

    def __init__(self) -> None:
        # Tasks per (unit, machine signature) of the last whole-cluster CMMF allocation.
        self.plan: dict[tuple[int, int], int] = {}

    def decide(self, scheduler: ReferenceScheduler, out: list[Decision]) -> None:
        """Plan again if the state asks (``replan``), then fill each candidate machine.

        Parameters
        ----------
        scheduler : ReferenceScheduler
            The scheduler.
        out : list of Decision
            The decisions so far.
        """
        s = scheduler
        if s.replan or not self.plan:
            s.replan = False
            target = s.whole_cluster(keep_running=False)
            self.plan = {}
            for (u, mi), tasks in target.items():
                # Choosy 7.2 counts machines per type: the signature is the type.
                key = (u, s.sig[mi])
                self.plan[key] = self.plan.get(key, 0) + tasks
        held, plan = s.held, self.plan
        for mi in s.candidates():
            sig = s.sig[mi]
            while True:
                free = s.free[mi] + EPS
                best: tuple[float, float, int] | None = None
                for u in s.waiting:
                    unit = s.units[u]
                    if unit.size > free or not s.eligible[unit.cls][mi]:
                        continue
                    short = plan.get((u, sig), 0) - held.get((u, sig), 0)
                    share = len(unit.running) * unit.size / unit.weight
                    rank = (0.0 if short > 0 else 1.0, -short if short > 0 else share, u)
                    if best is None or rank < best:
                        best = rank
                if best is None:
                    break
                s.launch(s.units[best[2]], mi, out)


# -------------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class ReferencePolicy(PolicyInfo):
    """A reference scheduler: its name, what it does, its paper section, and its mode (an
    entry of :data:`REFERENCE_POLICIES`).

    Parameters
    ----------
    name : str
        The policy's name (``--policy NAME``).
    summary : str
        What it does, on one line.
    source : str
        The paper section it implements.
    mode : type of Mode
        How it decides; each scheduler makes its own instance.
    """

    mode: type[Mode]


REFERENCE_POLICIES: dict[str, ReferencePolicy] = by_name(
    (
        ReferencePolicy(
            "offline-restricted",
            "exact CMMF of the free capacity, no migration or preemption",
            "Choosy section 7.1",
            Restricted,
        ),
        ReferencePolicy(
            "offline-migration",
            "exact CMMF with free migration of running tasks",
            "Choosy section 7.1",
            Migration,
        ),
        ReferencePolicy(
            "offline-preemption",
            "exact CMMF with free pausing and migration",
            "Choosy section 7.1",
            Preemption,
        ),
        ReferencePolicy(
            "periodic-offline",
            "exact CMMF solved on joins and leaves, converged to as tasks finish",
            "Choosy section 7.2",
            Periodic,
        ),
    )
)


def make_reference(
    name: str,
    cluster: Cluster,
    *,
    users: Sequence[User] = (),
    queues: Sequence[Queue] = (),
) -> ReferenceScheduler:
    """A fresh reference scheduler.

    Parameters
    ----------
    name : str
        A key of :data:`REFERENCE_POLICIES`.
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The scenario's users: their weights.
    queues : sequence of Queue
        Accepted like an online policy's; Choosy's model has no queues.

    Returns
    -------
    ReferenceScheduler

    Raises
    ------
    SimulationError
        ``name`` is not a reference scheduler.

    Examples
    --------
    Two jobs of one-CPU tasks on two 2-CPU machines: the restricted offline scheduler gives
    each two CPUs, the CMMF allocation.

    >>> from fairshare.workload.loader import parse_scenario
    >>> jobs = [
    ...     {"name": "a", "submit": 0, "demand": {"cpu": 1}, "tasks": 4, "duration": 10},
    ...     {"name": "b", "submit": 0, "demand": {"cpu": 1}, "tasks": 2, "duration": 5},
    ... ]
    >>> machines = [{"name": "m", "count": 2, "capacity": {"cpu": 2}}]
    >>> scenario = parse_scenario({"machines": machines, "jobs": jobs}, "two-jobs")
    >>> policy = make_reference("offline-restricted", scenario.cluster)
    >>> for k, job in enumerate(scenario.jobs):
    ...     policy.job_submitted(0.0, k, job)
    >>> sorted(scenario.jobs[d.task.job].name for d in policy.decide(0.0))
    ['a', 'a', 'b', 'b']
    """
    return ReferenceScheduler(cluster, name, users=users, queues=queues)
