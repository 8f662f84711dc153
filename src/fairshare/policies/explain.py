"""Why a job is not running: SPEC section 8.5's document (``fairshare explain``), as a pure
function of a scheduler and a job (:func:`explain`).

The explanation asks the scheduler's own objects, never a copy of their rules: the ranking
(:class:`~fairshare.policies.ranking.Ranking`'s ``user_rank``, ``job_rank``, ``gang_rank`` and
``reported_shares``: who is served first, with their shares), the placer's one ordered list
of filters (:attr:`Placer.filters <fairshare.policies.placer.Placer.filters>`: each
refusal's kind is its :attr:`~fairshare.policies.filters.Filter.reason`, its words its
:meth:`~fairshare.policies.filters.Filter.describe`, asked only after the same
:meth:`~fairshare.policies.filters.Filter.admits` placement asks said no), and the gang
admission's plan (:func:`~fairshare.policies.gangs.gang_plan`). It reads the state and
changes no decision, so the simulator (``fairshare explain JOB --run DIR``, at a time of a
recorded run) and the live service (its scheduler, at the time of the request) call the same
function.

The reasons come in the order placement meets them for the job:

1. ``constraint``, alone, when no machine can ever take a task: every machine fails an
   ``index`` filter (its constraint or whitelist), is smaller than the task, or (a gang) all
   the machines it may use together hold fewer tasks than must start at once.
2. ``priority``: pending work of a higher priority, served first (the first key of every
   order: the heap entry's tier).
3. ``fair-share``: the policy's order (its ranking; FIFO's is submission): users with pending
   work ranked ahead of the job's user, earlier jobs of the same user, and the room that
   others' running tasks hold (the ``room`` filters whose reason is ``fair-share``: the plain
   fit test).
4. the other ``room`` filters (``headroom``), then the ``pick`` filters (``quota``), asked even
   when no machine has room (they judge the user, not the machine), then for a gang its
   admission (``gang``: room for all its tasks at once; ``reservation``: the room it would
   use is reserved for the head gang), then the ``launch`` filters (``reservation``, delay
   scheduling, custom filters), each in the placer's list order.

A ``room`` or ``launch`` filter is asked on every machine the job may use whose earlier
filters admit it (placement never asks the later ones there); a reason names how many
machines it binds on. ``ahead`` lists the users served before the job's user, in the order
the policy serves them (at most :data:`AHEAD_SHOWN`), each with its share as the policy
reports it (SPEC section 8.3's ``shares``).

Examples
--------
User a (weight 3) and user b share four slots; b's job waits behind a:

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job, User
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([4.0]))])
>>> users = [User("a", np.array([1.0]), weight=3.0), User("b", np.array([1.0]))]
>>> drf = make_policy("drf", cluster, users=users)
>>> drf.job_submitted(0.0, 0, Job("x", 0.0, "b", np.array([1.0]), 4))
>>> _ = drf.decide(0.0)
>>> drf.job_submitted(1.0, 1, Job("y", 1.0, "a", np.array([1.0]), 8))
>>> drf.job_submitted(1.0, 2, Job("z", 1.0, "b", np.array([1.0]), 1))
>>> _ = drf.decide(1.0)
>>> why = explain(drf, 2)
>>> why.state, [r.kind for r in why.reasons], why.ahead
('pending', ['fair-share'], (('a', 0.0),))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fairshare.policies.filters import Filter
from fairshare.policies.gangs import gang_plan, tasks_fitting
from fairshare.policies.ledger import Ledger
from fairshare.policies.records import JobState, UserState, part_id, shown_amount
from fairshare.policies.scheduler import Scheduler
from fairshare.policies.state import fits

__all__ = ["AHEAD_SHOWN", "KINDS", "Explanation", "Reason", "explain"]

KINDS = ("quota", "fair-share", "gang", "reservation", "constraint", "headroom", "priority")
"""The kinds of reason (SPEC section 8.5)."""

AHEAD_SHOWN = 10
"""At most this many users are listed in ``ahead`` (the reasons count them all)."""

_SHOWN_NAMES = 3
"""Names quoted in a reason's sentence."""


@dataclass(frozen=True)
class Reason:
    """One reason a job is not running.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    detail : str
        One sentence for people.
    extra : dict
        Further fields of the reason's JSON object (``filter``, ``machines``, ...).
    """

    kind: str
    detail: str
    extra: dict[str, object] = field(default_factory=dict)

    def document(self) -> dict[str, object]:
        """The reason as SPEC section 8.5's JSON object.

        Returns
        -------
        dict
        """
        return {"kind": self.kind, "detail": self.detail, **self.extra}


@dataclass(frozen=True)
class Explanation:
    """Why a job is not running (see the module).

    Attributes
    ----------
    state : str
        ``pending``, ``running`` or ``finished`` (the scheduler holds no work of it).
    reasons : tuple of Reason
        In the order they bind; empty unless pending.
    ahead : tuple of (str, float)
        The users served first and their shares.
    """

    state: str
    reasons: tuple[Reason, ...] = ()
    ahead: tuple[tuple[str, float], ...] = ()

    def document(self) -> dict[str, object]:
        """``state``, ``reasons`` and ``ahead`` of SPEC section 8.5's document (the caller
        adds ``job`` and ``estimated_start``).

        Returns
        -------
        dict
        """
        return {
            "state": self.state,
            "reasons": [r.document() for r in self.reasons],
            "ahead": [{"user": u, "share": s} for u, s in self.ahead],
        }


def explain(scheduler: Scheduler, job_id: int) -> Explanation:
    """Why job ``job_id`` is not running on ``scheduler`` now (its ledger's time): a pure
    function of the scheduler's state (see the module for the reasons and their order).

    Parameters
    ----------
    scheduler : Scheduler
        An online policy, after its last decision.
    job_id : int
        The driver's id of the job (the simulator's: its index in submission order).

    Returns
    -------
    Explanation
    """
    ledger = scheduler.ledger
    ids = (job_id, part_id(job_id, "copy"), part_id(job_id, "reduce"))
    parts = [p for p in (ledger.jobs.get(i) for i in ids) if p is not None]
    if not parts:
        return Explanation("finished")
    if any(p.running for p in parts):
        return Explanation("running")
    waiting = [p for p in parts if p.pending > 0 or p.part_id in ledger.gangs]
    if not waiting:
        return Explanation("running")
    return _Explainer(scheduler, waiting[0]).run()


class _Explainer:
    """The walk of :func:`explain` for one waiting job part."""

    def __init__(self, scheduler: Scheduler, job: JobState) -> None:
        self.scheduler = scheduler
        self.ledger: Ledger = scheduler.ledger
        self.job = job
        self.now = self.ledger.now
        self.user = self.ledger.users[job.user]
        self.gang = job.part_id in self.ledger.gangs
        self.filters = scheduler.placer.filters

    def stage(self, stage: str) -> list[Filter]:
        return [f for f in self.filters if f.stage == stage]

    # ------------------------------------------------------------------ the walk

    def run(self) -> Explanation:
        eligible, never = self.eligible()
        if never is not None:
            return Explanation("pending", (never,))
        ahead, priority, order = self.order()
        reasons: list[Reason] = []
        if priority is not None:
            reasons.append(priority)
        # room filters on each machine it may use; the fit test's refusals are fair-share
        room_refused: dict[int, list[int]] = {}
        roomy: list[int] = []
        if not self.gang:
            for mi in eligible:
                f = self.first_refusal(self.stage("room"), mi)
                if f is None:
                    roomy.append(mi)
                else:
                    room_refused.setdefault(f, []).append(mi)
        full = [
            mi
            for k, mis in room_refused.items()
            if self.filters[k].reason == "fair-share"
            for mi in mis
        ]
        fair = self.fair_share(order, full, roomy)
        if fair is not None:
            reasons.append(fair)
        for k, mis in room_refused.items():
            if self.filters[k].reason != "fair-share":
                reasons.append(self.filter_reason(self.filters[k], mis))
        # pick filters judge the user: asked on the machines with room, else on the first
        picks = self.stage("pick")
        asked = roomy if roomy else eligible[:1]
        passed: list[int] = []
        pick_refused: dict[int, list[int]] = {}
        for mi in asked:
            f = self.first_refusal(picks, mi)
            if f is None:
                passed.append(mi)
            else:
                pick_refused.setdefault(f, []).append(mi)
        for k, mis in pick_refused.items():
            reasons.append(self.filter_reason(self.filters[k], mis))
        if self.gang:
            # A gang's admission asks the pick filters for all its tasks at once (as
            # Placer.admits_whole does) before it looks for room.
            whole = [f for f in picks if not f.admits_whole(self.job, self.job.gang, self.now)]
            if whole:
                refusing = whole[0]
                detail = refusing.describe_whole(self.job, self.job.gang, self.now)
                if not pick_refused:
                    extra: dict[str, object] = {"filter": refusing.name, "machines": 0}
                    reasons.append(Reason(refusing.reason, detail, extra))
            else:
                reasons.extend(self.gang_reasons())
        else:
            launch_refused: dict[int, list[int]] = {}
            for mi in passed if roomy else []:
                f = self.first_refusal(self.stage("launch"), mi)
                if f is not None:
                    launch_refused.setdefault(f, []).append(mi)
            for k, mis in launch_refused.items():
                reasons.append(self.filter_reason(self.filters[k], mis))
        if not reasons:
            reasons.append(
                Reason(
                    "fair-share",
                    f"nothing holds it back but the order of work: {self.scheduler.name} "
                    "serves it at its next decision",
                )
            )
        return Explanation("pending", tuple(reasons), ahead)

    def first_refusal(self, filters: Sequence[Filter], mi: int) -> int | None:
        """The position in the placer's list of the first of ``filters`` refusing the job's
        next task on machine ``mi`` (None: all admit)."""
        free = self.ledger.cluster.free[mi]
        for f in filters:
            if not f.admits(self.job, mi, free, self.now):
                return self.filters.index(f)
        return None

    def filter_reason(self, f: Filter, machines: list[int]) -> Reason:
        """A filter's refusal on ``machines`` as a reason."""
        mi = machines[0]
        detail = f.describe(self.job, mi, self.ledger.cluster.free[mi], self.now)
        if f.stage in ("room", "launch") and len(machines) > 1:
            detail += f" (and on {len(machines) - 1} more machines it may use)"
        return Reason(f.reason, detail, {"filter": f.name, "machines": len(machines)})

    # ------------------------------------------------------------------ constraint

    def eligible(self) -> tuple[list[int], Reason | None]:
        """The machines that could ever take a task of the job (the ``index`` filters
        admit, the task fits the capacity), and the ``constraint`` reason when none can."""
        cs = self.ledger.cluster
        job = self.job
        index = self.stage("index")
        demand = job.demand
        refused: dict[int, list[int]] = {}
        small = 0
        eligible: list[int] = []
        alive = [mi for mi, up in enumerate(cs.alive) if up]
        capacity: dict[int, list[float]] = {}
        for mi in alive:
            k = self.first_refusal(index, mi)
            if k is not None:
                refused.setdefault(k, []).append(mi)
                continue
            capacity[mi] = [float(x) for x in cs.machines[mi].capacity]
            if fits(capacity[mi], demand):
                eligible.append(mi)
            else:
                small += 1
        need = job.gang if self.gang else 1
        holds = 0
        for mi in eligible:
            holds += tasks_fitting(capacity[mi], demand, need)
        if eligible and holds >= need:
            return eligible, None
        parts: list[str] = []
        for k, mis in refused.items():
            words = self.filters[k].describe(job, mis[0], cs.free[mis[0]], self.now)
            parts.append(f"{len(mis)} of {len(alive)} machines fail it ({words})")
        if small:
            parts.append(f"{small} are smaller than its task ({self.demand_text()})")
        if eligible:
            parts.append(
                f"it needs {need} tasks at once and the {len(eligible)} machines it may use "
                f"hold {holds} at most"
            )
        detail = "no machine can ever take it: " + "; ".join(parts or ["the cluster is empty"])
        extra: dict[str, object] = {"machines": 0}
        return [], Reason("constraint", detail, extra)

    def demand_text(self) -> str:
        names = self.ledger.cluster.resources
        return ", ".join(
            f"{n}={shown_amount(d)}" for n, d in zip(names, self.job.demand, strict=True) if d
        )

    # ------------------------------------------------------------------ the order of work

    def entry(self, user: UserState) -> tuple[int, float, float, int, int] | None:
        """A user's best heap entry over its groups with pending work: (tier, rank, pending
        since, served, index), the selection's order
        (:class:`~fairshare.policies.records.HeapEntry`)."""
        ledger = self.ledger
        ranking = ledger.ranking
        best: tuple[int, float, float, int, int] | None = None
        for group, heap in list(user.job_heaps.items()):
            head = ledger.first_pending(heap)
            if head is None:
                continue
            key = (
                -head.priority,
                ranking.user_rank(user, group),
                ledger.pending_since(user),
                user.served,
                user.idx,
            )
            if best is None or key < best:
                best = key
        return best

    def order(
        self,
    ) -> tuple[tuple[tuple[str, float], ...], Reason | None, tuple[list[UserState], int]]:
        """Who is served first: ``ahead`` (with shares), the ``priority`` reason, and the
        users of the job's tier ranked ahead with the count of its user's earlier jobs."""
        ledger = self.ledger
        ranking = ledger.ranking
        job, user = self.job, self.user
        if self.gang:
            mine = ranking.gang_rank(job)
            rivals = sorted(
                (ranking.gang_rank(g), g)
                for g in ledger.gangs.values()
                if g is not job and ranking.gang_rank(g) < mine
            )
            first: list[UserState] = []
            higher = [g for _, g in rivals if g.priority > job.priority]
            for _, g in rivals:
                owner = ledger.users[g.user]
                if owner not in first:
                    first.append(owner)
            own = sum(1 for _, g in rivals if g.user == user.idx)
            same = [u for u in first if u is not user]
        else:
            key = (
                -job.priority,
                ranking.user_rank(user, job.group),
                ledger.pending_since(user),
                user.served,
                user.idx,
            )
            entries = []
            for u in ledger.users:
                if u is user or not u.pending:
                    continue
                e = self.entry(u)
                if e is not None and e < key:
                    entries.append((e, u))
            entries.sort(key=lambda pair: pair[0])
            first = [u for _, u in entries]
            same = [u for e, u in entries if e[0] == key[0]]
            mine_rank = (-job.priority, ranking.job_rank(job), job.part_id)
            own = 0
            higher = []
            for p in ledger.jobs.values():
                if p.pending <= 0 or p.gang or p is job:
                    continue
                if p.priority > job.priority:
                    higher.append(p)
                elif (
                    p.user == user.idx
                    and p.group == job.group
                    and (-p.priority, ranking.job_rank(p), p.part_id) < mine_rank
                ):
                    own += 1
        shares = ranking.reported_shares()[1]
        ahead = tuple((u.name, shares.get(u.name, 0.0)) for u in first[:AHEAD_SHOWN])
        priority = None
        if higher:
            top = max(p.priority for p in higher)
            priority = Reason(
                "priority",
                f"{len(higher)} pending job{'s' if len(higher) != 1 else ''} of higher priority "
                f"(up to {top}; its own is {job.priority}) come first",
                {"jobs": len(higher)},
            )
        return ahead, priority, (same, own)

    def fair_share(
        self, order: tuple[list[UserState], int], full: list[int], roomy: list[int]
    ) -> Reason | None:
        """The ``fair-share`` reason: the policy's order ranks others first, or (no machine
        it may use has room) others' running tasks hold the room."""
        same, own = order
        if roomy and not self.gang:
            # A machine it may use has room: the order does not hold it back there (a
            # later filter does).
            return None
        name = self.scheduler.name
        words: list[str] = []
        if same:
            names = ", ".join(u.name for u in same[:_SHOWN_NAMES])
            more = f" and {len(same) - _SHOWN_NAMES} more" if len(same) > _SHOWN_NAMES else ""
            if name == "fifo":
                words.append(
                    f"FIFO: {len(same)} user{'s' if len(same) != 1 else ''} with jobs "
                    f"submitted earlier come first ({names}{more})"
                )
            else:
                words.append(
                    f"{len(same)} user{'s rank' if len(same) != 1 else ' ranks'} ahead of "
                    f"{self.user.name} in {name}'s fair-share order ({names}{more})"
                )
        if own:
            words.append(
                f"{own} earlier job{'s' if own != 1 else ''} of {self.user.name} "
                f"{'come' if own != 1 else 'comes'} first"
            )
        if full:
            words.append(f"no machine it may use has room for its task ({self.demand_text()})")
            holders = sorted(
                (u for u in self.ledger.users if u.running), key=lambda u: (-u.running, u.idx)
            )
            if holders:
                held = ", ".join(f"{u.name} {u.running}" for u in holders[:_SHOWN_NAMES])
                more = (
                    f" and {len(holders) - _SHOWN_NAMES} more users"
                    if len(holders) > _SHOWN_NAMES
                    else ""
                )
                words.append(f"running tasks: {held}{more}")
        if not words:
            return None
        extra: dict[str, object] = {"users_ahead": len(same), "rank": len(same) + 1}
        return Reason("fair-share", "; ".join(words), extra)

    # ------------------------------------------------------------------ gangs

    def gang_reasons(self) -> list[Reason]:
        """A waiting gang's admission: room for all its tasks at once, on the free room as it
        stands (:func:`gang_plan`, as placement tries it), then without the head gang's EASY
        reservation."""
        ledger = self.ledger
        cs = ledger.cluster
        job = self.job
        need = job.gang
        end = self.now + job.expected
        cls = cs.groups[job.group].cls
        reservation = ledger.reservation
        mine = reservation is not None and reservation.job == job.part_id
        plan, have = gang_plan(cs, cls, job.demand, need, None, end)
        out: list[Reason] = []
        if plan is None:
            if need == 1:  # a whole job of one task (Kueue's workloads, Slurm's jobs)
                detail = (
                    f"it needs room for its task ({self.demand_text()}); no machine it may "
                    "use has that much free"
                )
            else:
                detail = (
                    f"it needs room for {need} tasks at once ({self.demand_text()} each); the "
                    f"free room of the machines it may use holds {have}"
                )
            if mine and reservation is not None:
                detail += (
                    f"; it holds the EASY backfilling reservation, expected to start by "
                    f"t={shown_amount(reservation.start)}"
                )
            out.append(Reason("gang", detail, {"tasks": need, "room_for": have}))
        elif reservation is not None and not mine:
            held, _ = gang_plan(cs, cls, job.demand, need, reservation, end)
            if held is None:
                head = ledger.jobs.get(reservation.job)
                who = f"job {head.job.name!r}" if head is not None else "the head job"
                out.append(
                    Reason(
                        "reservation",
                        f"the room it would use is reserved for {who} (EASY backfilling) from "
                        f"t={shown_amount(reservation.start)}, and it would not end by then",
                    )
                )
        return out
