"""Preemption with the Tmin / Tfair timeouts (FAIR section 3.2) for every online policy, and
FAIR's slot allocation (Appendix A, Algorithm 2) that defines the shares it protects.

Shares are measured in the policy's own unit: what one running task adds to its user's share
(:meth:`fairshare.policies.ranking.Ranking.share_per_task`: one slot for FAIR, the dominant share
for DRF, the task share for TSF, ...). FAIR section 3.2 speaks of slots; the same water-filling
on the policy's unit gives every policy a fair share (:meth:`Scheduler.preemption_shares`):

- capacity is the share all users hold now (FAIR's "slots": preemption reassigns, it never
  finds room that placement could not), demand is what a user holds plus its pending tasks
  (up to its cap), weights and minimum shares are those the policy orders users by: minimum
  shares only for FAIR (the other policies ignore them when they place), collapsed weights for
  ``collapsed-drf``; for ``hdrf`` and ``naive-hdrf`` the water-filling follows the queue tree
  (:func:`hierarchical_shares`), in dominant-share units;
- FIFO has no fair share: its share is priority, so its "fair share" is what FIFO itself
  would give from scratch, the capacity filled in order of each user's oldest unfinished job.
  Under FIFO only an older job can be starved, and only younger jobs are victims.

The :class:`Preemptor` finds victims on what the ledger reads as a
:class:`PreemptionView` (the Protocol lists exactly what it reads), asks the placer's filters
whether the room the victims would free admits the starved user's task (the framework's
PostFilter re-runs the Filter plugins: :meth:`~fairshare.policies.placer.Placer.trial_admits`),
and only then kills (:meth:`~fairshare.policies.ledger.Ledger.requeue`) and offers the freed
machine (:meth:`~fairshare.policies.placer.Placer.offer_machine`).

Rules, all deterministic (ties: user index, then launch order):

1. A user is *min-starved* while it has pending tasks and holds less than ``min(min_share,
   demand)``, *fair-starved* while it holds less than half its fair share; a timer starts when
   the condition is first seen and clears when it stops holding. A user that is not starved
   under the policy's own shares never triggers kills.
2. After ``Tmin`` seconds min-starved it may take back up to its minimum share; after ``Tfair``
   fair-starved, up to its fair share (launching while its share stays within it).
3. Victims are the most recently launched tasks, over all users, on machines where the
   starved user's next task fits once they are gone. A kill never takes its user below its
   fair share (``share - task share >= fair share``), so a victim is never starved itself.
4. The room a kill frees is reserved for the starved user that caused it: kills happen one
   machine at a time, only where the starved user's next task fits (and every filter of the
   placer but the ``pick`` ones, such as delay scheduling and EASY backfilling's
   reservation, lets it launch there), and that task is launched on that
   machine at once, before any other placement sees the room. The victim cannot take the
   room back, whatever the policy's order (FIFO would otherwise hand it straight back to an
   older victim, and the kill would repeat at every event: a livelock). A kill the offer
   launches nothing after ends the starved user's turn in that decision.
5. No flapping, structurally: a task launched for a starved user is never a victim while that
   user is below its fair share; and a user that lost a task to another cannot have that
   user's tasks killed for it until ``Tfair`` seconds after the kill.

Rules 2 and 3 move share from users at or above their fair share to users below theirs, and
rule 4 makes every kill a launch for the starved user, so each kill brings the allocation
closer to the fair one: with fixed demands, the kills stop.

Quotas and priorities (issue 18; :mod:`fairshare.policies.quota`), served before minimum and
fair shares, each with rule 4's reserved room:

6. A user whose next task fits within the quotas of every queue above it, pending for
   ``Tmin`` seconds, reclaims: victims are tasks *borrowed* across queues with quotas (their
   queue still uses at least its quota of a resource the task holds without it), and a
   victim's user keeps its minimum share.
7. A user whose next job has a higher priority than a running task, pending for ``Tmin``
   seconds, preempts tasks of strictly lower priorities (newest first) whose users keep their
   minimum shares; rules 1-5 never take a task of a higher priority than the starved job's.
8. With quotas, a task is a victim across queues with quotas only when it is borrowed, and
   the launch on the freed room keeps the beneficiary's queues within their quotas.

Gangs (:mod:`fairshare.policies.gangs`; Volcano and Kueue preempt a PodGroup, a workload,
whole), for every rule above:

9. Victims of no gang are taken first; a gang is a victim only when they do not make room.
   A gang's task is never killed alone: all the gang's running tasks are, together (its user
   must keep its fair share, or its minimum share for rules 6 and 7, without all of them;
   for a quota, the gang is borrowed when the task it is reached through is), and the gang
   waits for admission again as a gang (:meth:`~fairshare.policies.ledger.Ledger.requeue_gang`):
   its ``min_tasks`` start together again or not at all. The room it frees on its other
   machines goes to the starved user first (rule 4), before any further kill.

Why rules 6-8 stop: a reclaim lowers the total borrowed quota (its victims are borrowed, its
launch borrows nothing), and a priority kill raises the running priorities without raising
what is borrowed, so with fixed demands no two queues reclaim from each other for ever
(Kueue #3779). Rule 9 keeps it: a gang's tasks that were not borrowed go down with it, but
the launches on the room it frees keep the beneficiary's queues within their quotas, so
nothing they launch is borrowed and no reclaim takes it back.

Examples
--------
FAIR section 3.2: pool A (minimum share 5 slots) arrives at t=1 while pool B holds all ten
slots. After Tmin = 10 s min-starved, the five most recently launched of B's tasks are
killed, each machine going at once to A.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import PolicyOptions, make_policy
>>> from fairshare.workload.model import Job, User
>>> cluster = Cluster.build(["slots"], [Machine(f"m{i}", np.array([1.0])) for i in range(10)])
>>> users = [User("A", np.array([1.0]), min_share=5), User("B", np.array([1.0]))]
>>> fair = make_policy("fair", cluster, users=users,
...                    options=PolicyOptions(preemption=(10.0, 1e9)))
>>> fair.job_submitted(0.0, 0, Job("b", 0.0, "B", np.array([1.0]), 10))
>>> len(fair.decide(0.0))
10
>>> fair.job_submitted(1.0, 1, Job("a", 1.0, "A", np.array([1.0]), 8))
>>> fair.decide(1.0), fair.next_wakeup()
([], 11.0)
>>> fair.advance(11.0)
>>> [(type(d).__name__, d.task.job, d.task.task) for d in fair.decide(11.0)][:4]
[('Kill', 0, 9), ('Launch', 1, 0), ('Kill', 0, 8), ('Launch', 1, 1)]
"""

from __future__ import annotations

import math
from typing import Final, Protocol

from mypy_extensions import mypyc_attr

from fairshare.policies.ledger import Ledger
from fairshare.policies.options import PolicyOptions
from fairshare.policies.placer import Placer
from fairshare.policies.protocol import Decision, Kill, Launch, TaskRef
from fairshare.policies.quota import QuotaTree
from fairshare.policies.ranking import Ranking
from fairshare.policies.records import JobState, PreemptionState, UserState
from fairshare.policies.state import ClusterState
from fairshare.tolerances import FIT as EPS


class PreemptionView(Protocol):
    """What preemption reads of the scheduler's state (the ledger is one): it finds victims
    on this and writes nothing; the kills and launches go through the ledger and the placer.
    """

    options: PolicyOptions
    users: list[UserState]
    jobs: dict[int, JobState]
    cluster: ClusterState
    quotas: QuotaTree | None
    prioritized: bool
    launch_order: dict[TaskRef, int] | None
    preemption_state: PreemptionState
    ranking: Ranking

    def head_job(self, user: UserState, group: int) -> JobState:
        """The job part ``user`` launches its next task of ``group`` from."""
        ...

    def part_of(self, ref: TaskRef) -> JobState:
        """The job part that runs task ``ref``."""
        ...

    def machine_of(self, ref: TaskRef) -> int | None:
        """The machine task ``ref`` runs on."""
        ...

    def running_tasks(self) -> list[list[tuple[TaskRef, int]]]:
        """Per user, its running tasks and their machines."""
        ...


@mypyc_attr(allow_interpreted_subclasses=True)
class Preemptor:
    """FAIR section 3.2's preemption and rules 6-9 (see the module), for one scheduler.

    Parameters
    ----------
    view : PreemptionView
        What it reads (the scheduler's ledger).
    ledger : Ledger
        The same state, through whose functions the kills go.
    placer : Placer
        The filters the freed room must pass, and the offer of the freed machine.
    """

    def __init__(self, view: PreemptionView, ledger: Ledger, placer: Placer) -> None:
        self.view = view
        self.ledger = ledger
        self.placer = placer

    def run(self, now: float, out: list[Decision]) -> None:
        """Apply rules 1-9 once (:func:`preempt`).

        Parameters
        ----------
        now : float
            The time of the decision.
        out : list of Decision
            Where the kills and launches are appended, in order.
        """
        preempt(self, now, out)


def fair_targets(pre: Preemptor) -> tuple[list[float], list[float]]:
    """Every user's demand and fair share now, in the policy's share unit: the demand is the
    share it holds plus that of its pending tasks (up to its cap), the fair share the policy's
    :meth:`~fairshare.policies.ranking.Ranking.preemption_shares` of the share held by all.

    Parameters
    ----------
    pre : Preemptor
        The preemptor, on its scheduler's state.

    Returns
    -------
    (list of float, list of float)
        Per user, its demand and its fair share.
    """
    users = pre.view.users
    n = len(users)
    pending_share = [0.0] * n
    for job in pre.view.jobs.values():
        if job.pending > 0:
            pending_share[job.user] += job.pending * job.share_per_task
    demands: list[float] = []
    for i, u in enumerate(users):
        extra = pending_share[i]
        if u.pending > 0 and u.running + u.pending > u.cap:
            extra *= max(0.0, u.cap - u.running) / u.pending
        demands.append(u.share + extra)
    capacity = sum(u.share for u in users)
    return demands, pre.view.ranking.preemption_shares(demands, capacity)


FAIR: Final = 0
"""A kill for a user below its minimum or fair share (rules 1-5)."""
QUOTA: Final = 1
"""A kill for a queue below its quota (rule 6)."""
PRIORITY: Final = 2
"""A kill for a higher priority (rule 7)."""


def preempt(pre: Preemptor, now: float, out: list[Decision]) -> None:
    """Apply rules 1-9 (module docstring) once: update the timers, then for every user whose
    timeout expired kill and launch, one machine at a time, until it reaches its target or no
    machine can be freed for it: queues below their quotas first, then higher priorities,
    then minimum shares, then fair shares.

    Parameters
    ----------
    pre : Preemptor
        The preemptor, its scheduler with preemption on (its options' ``preemption``).
    now : float
        The time of the decision.
    out : list of Decision
        Where the kills and launches are appended, in order.
    """
    assert pre.view.options.preemption is not None
    t_min, t_fair = pre.view.options.preemption
    state = pre.view.preemption_state
    users = pre.view.users
    demands, fair = fair_targets(pre)
    owed: list[tuple[int, int, float, int]] = []
    timers = state.timers
    quotas = pre.view.quotas
    used = quotas.usage(users) if quotas is not None else None
    # The lowest priority running: a user whose next job is above it may preempt (rule 7).
    lowest: int | None = None
    if pre.view.prioritized:
        for job in pre.view.jobs.values():
            if job.running and (lowest is None or job.priority < lowest):
                lowest = job.priority
    for i, u in enumerate(users):
        min_target = min(pre.view.ranking.preemption_min_share(u), demands[i])
        min_starved = u.pending > 0 and u.share < min_target - EPS
        fair_starved = u.pending > 0 and u.share < fair[i] / 2 - EPS
        timers.update(i, now, min_starved, fair_starved)
        target = -math.inf
        since = timers.min_since.get(i)
        min_due = since is not None and now - since >= t_min
        if min_due:
            target = min_target
        since = timers.fair_since.get(i)
        if since is not None and now - since >= t_fair:
            target = max(target, fair[i])
        if target > u.share + EPS:
            # Minimum shares are restored before fair shares (FAIR section 3.2's order).
            owed.append((0 if min_due else 1, i, target, FAIR))
        if quotas is None and lowest is None:
            continue
        below_quota = above_lower = False
        if u.pending > 0:
            for g in u.job_heaps:
                job = pre.view.head_job(u, g)
                if lowest is not None and job.priority > lowest:
                    above_lower = True
                if (
                    quotas is not None
                    and used is not None
                    and any(job.demand)
                    and quotas.chain(u.queue)
                    and quotas.within(used, quotas.chain(u.queue), job.demand)
                ):
                    below_quota = True
        for waiting, table, kind, mode in (
            (below_quota, timers.quota_since, -2, QUOTA),
            (above_lower, timers.priority_since, -1, PRIORITY),
        ):
            if not waiting:
                table.pop(i, None)
                continue
            since = table.setdefault(i, now)
            if now - since >= t_min:
                owed.append((kind, i, math.inf, mode))
    for t in timers.deadlines(t_min, t_fair):
        if t > now:
            pre.ledger.wake_at(t)
    if not owed:
        return
    protected = state.protected
    for ref in [r for r in protected if pre.view.machine_of(r) is None]:
        del protected[ref]
    owed.sort()
    for _, starved, target, mode in owed:
        _serve(pre, state, now, out, starved, target, fair, t_fair, mode)


def _serve(
    pre: Preemptor,
    state: PreemptionState,
    now: float,
    out: list[Decision],
    starved: int,
    target: float,
    fair: list[float],
    t_fair: float,
    mode: int,
) -> None:
    """Free machines for user ``starved`` and launch its tasks there while its share stays
    within ``target`` (rules 2-5), its queues below their quotas (rule 6) or its next job
    above the priority of a victim (rule 7). A gang among the victims stops whole and waits
    as a gang again (rule 9); the room it frees on its other machines is the starved user's
    first, before more kills."""
    users = pre.view.users
    user = users[starved]
    cs = pre.view.cluster
    quotas = pre.view.quotas
    # Machines a gang's kills freed beside the one they were for.
    spare: list[int] = []
    while user.running < user.cap:
        used = quotas.usage(users) if quotas is not None else None
        best: tuple[tuple[int, int], int, int, list[tuple[TaskRef, int, int]]] | None = None
        for g in list(user.job_heaps):
            job = pre.view.head_job(user, g)
            if job.share_per_task <= 0 or not any(job.demand):
                # Tasks that hold nothing need no room and move no share.
                continue
            if mode == FAIR and user.share + job.share_per_task > target + EPS:
                continue
            if (
                mode == QUOTA
                and quotas is not None
                and used is not None
                and not quotas.within(used, quotas.chain(user.queue), job.demand)
            ):
                continue
            found = _spare(pre, spare, job, now)
            if found is None:
                found = _victims(pre, state, now, starved, job, fair, t_fair, mode, used)
            # Room free without a kill first, then the machine holding the newest victim,
            # over all of the user's groups (victims of no gang before gangs).
            if found is not None and (best is None or found[0] > best[0]):
                best = (found[0], g, found[1], found[2])
        if best is None:
            return
        _, group, machine, kills = best
        gangs: dict[int, JobState] = {}
        for ref, owner, mi in kills:
            out.append(Kill(ref, cs.names[mi]))
            side = pre.view.part_of(ref)
            if is_gang(side):
                gangs[side.part_id] = side
            else:
                pre.ledger.stop_task(ref, "killed")
            state.lost_at[(owner, starved)] = now
            state.kills += 1
            if mode == QUOTA:
                state.reclaims += 1
            elif mode == PRIORITY:
                state.priority_kills += 1
            if mi != machine and mi not in spare:
                spare.append(mi)
        for side in gangs.values():
            pre.ledger.requeue_gang(side)
        first = len(out)
        # Rule 4: the freed room goes to the starved user before any other placement.
        pre.placer.offer_machine(machine, now, out, (starved, group))
        launched = False
        for decision in out[first:]:
            if type(decision) is Launch and pre.view.part_of(decision.task).user == starved:
                launched = True
                if mode == FAIR:
                    state.protected[decision.task] = starved
        if not launched:
            if kills:
                # Rule 4 failed (the offer refused the task the filters expected it to take):
                # more kills could only hand more room to others, to be killed again.
                return
            # Spare room the offer did not take: no use offering it again in this decision.
            spare.remove(machine)


def is_gang(side: JobState) -> bool:
    """Whether ``side`` is a gang's map side (its tasks are preempted together, rule 9).

    Parameters
    ----------
    side : JobState
        A job part.

    Returns
    -------
    bool
    """
    return side.phase == "map" and side.job.min_tasks is not None


def _spare(
    pre: Preemptor, spare: list[int], job: JobState, now: float
) -> tuple[tuple[int, int], int, list[tuple[TaskRef, int, int]]] | None:
    """The first machine of ``spare`` (room a gang's kills freed) where the next task of
    ``job`` fits now and the placer's filters let it launch (:meth:`Placer.launch_admits`):
    (key, machine, no kills), or
    None."""
    cs = pre.view.cluster
    cls = cs.groups[job.group].cls
    for mi in spare:
        if (
            cs.alive[mi]
            and cs.eligible(cls, mi)
            and pre.placer.room_admits(mi, cs.free[mi], job.demand)
            and pre.placer.launch_admits(job, mi, now)
        ):
            return (2, 0), mi, []
    return None


def _victims(
    pre: Preemptor,
    state: PreemptionState,
    now: float,
    starved: int,
    job: JobState,
    fair: list[float],
    t_fair: float,
    mode: int,
    used: list[list[float]] | None,
) -> tuple[tuple[int, int], int, list[tuple[TaskRef, int, int]]] | None:
    """The newest victims whose removal lets the next task of ``job`` (of user ``starved``)
    fit on one machine: (key, machine, [(task, owner, its machine)]), or None. The key
    orders the choices over the user's groups: (1, launch number of the newest victim)
    without a gang among them, (0, ...) with one.

    Tasks are taken newest first over all users, those of no gang first; each goes to its
    machine's tally, and the first machine whose tally makes room for the task wins. A
    gang's task brings all the gang's running tasks along (rule 9): they go to the tally of
    every machine they free room on, and each of those may win. A task is passed over when
    its user would drop below its fair share (counting the tasks already tallied, a gang's
    all), when it was launched for a user still below its fair share, or when ``starved``
    lost a task to its user less than ``Tfair`` ago (rules 3 and 5); for a quota or a
    priority, when its user would drop below its minimum share instead. With priorities, a
    task of a higher priority than ``job`` is never a victim, nor of the same priority for
    rule 7; with quotas, a task is a victim across queues with quotas only when it is
    borrowed (a gang: the task it is reached through), and the launch must keep the starved
    user's queues within their quotas once the machine's victims are gone (rules 6 and 8)."""
    cs = pre.view.cluster
    users = pre.view.users
    cls = cs.groups[job.group].cls
    protected = state.protected
    lost_at = state.lost_at
    order = pre.view.launch_order
    quotas = pre.view.quotas
    assert order is not None, "launch numbers are kept with preemption on"
    # (no gang, launch number, task, owner, machine): sorted newest first, gangs' tasks last.
    candidates: list[tuple[int, int, TaskRef, int, int]] = []
    running = pre.view.running_tasks()
    for v in range(len(users)):
        if v == starved:
            continue
        lost = lost_at.get((starved, v))
        if mode == FAIR and lost is not None and now - lost < t_fair:
            continue
        for ref, mi in running[v]:
            if cs.alive[mi] and cs.eligible(cls, mi):
                plain = 0 if ref.phase == "map" and is_gang(pre.view.jobs[ref.job]) else 1
                candidates.append((plain, order[ref], ref, v, mi))
    candidates.sort(reverse=True)
    left = [u.share for u in users]
    room: dict[int, list[float]] = {}
    tally: dict[int, list[tuple[TaskRef, int, int]]] = {}
    allowed: dict[int, bool] = {}
    chains: list[list[int]] = []
    mine: list[int] = []
    left_used: list[list[float]] = []
    taken: set[int] = set()
    if quotas is not None and used is not None:
        chains = [quotas.chain(u.queue) for u in users]
        mine = chains[starved]
        left_used = [list(row) for row in used]
    for plain, seq, ref, v, mi in candidates:
        side = pre.view.part_of(ref)
        s = side.share_per_task
        if s <= 0 or not any(side.demand):
            continue
        if plain:
            kills = [(ref, v, mi)]
        elif side.part_id in taken:
            continue
        else:
            kills = [
                (TaskRef(side.id, "map", t), v, int(m)) for t, m in enumerate(side.where) if m >= 0
            ]
        k = len(kills)
        if mode == FAIR:
            if any(
                (owner := protected.get(r)) is not None and users[owner].share < fair[owner] - EPS
                for r, _, _ in kills
            ):
                continue
            if side.priority > job.priority or left[v] - s * k < fair[v] - EPS:
                continue
        else:
            if mode == PRIORITY and side.priority >= job.priority:
                continue
            if left[v] - s * k < pre.view.ranking.preemption_min_share(users[v]) - EPS:
                continue
        if quotas is not None:
            borrowed = quotas.borrowed(left_used, chains[v], mine, side.demand)
            if borrowed is False or (mode == QUOTA and borrowed is None):
                continue
        if plain:
            ok = allowed.get(mi)
            if ok is None:
                ok = allowed[mi] = pre.placer.launch_admits(job, mi, now)
            if not ok:
                continue
        else:
            taken.add(side.part_id)
        left[v] -= s * k
        if quotas is not None:
            for a in chains[v]:
                row = left_used[a]
                for r, d in enumerate(side.demand):
                    row[r] -= d * k
        # The machines the kills free room on, the one reached first.
        freed: list[int] = [mi]
        for _, _, m in kills:
            if m not in freed and cs.alive[m] and cs.eligible(cls, m):
                freed.append(m)
        for _, _, m in kills:
            if m not in freed:
                continue
            free = room.get(m)
            if free is None:
                free = room[m] = list(cs.free[m])
            for r, d in enumerate(side.demand):
                free[r] += d
        for m in freed:
            tally.setdefault(m, []).extend(kills)
        for m in freed:
            if not plain:
                ok = allowed.get(m)
                if ok is None:
                    ok = allowed[m] = pre.placer.launch_admits(job, m, now)
                if not ok:
                    continue
            if pre.placer.room_admits(m, room[m], job.demand) and (
                quotas is None
                or used is None
                or _within_after(pre, used, chains, mine, tally[m], job)
            ):
                return (plain, seq), m, tally[m]
    return None


def _within_after(
    pre: Preemptor,
    used: list[list[float]],
    chains: list[list[int]],
    mine: list[int],
    kills: list[tuple[TaskRef, int, int]],
    job: JobState,
) -> bool:
    """Whether one more task of ``job`` keeps the starved user's queues (``mine``) within
    their quotas once ``kills`` are gone (rule 8)."""
    quotas = pre.view.quotas
    assert quotas is not None
    after = [list(row) for row in used]
    for ref, v, _ in kills:
        demand = pre.view.part_of(ref).demand
        for a in chains[v]:
            row = after[a]
            for r, d in enumerate(demand):
                row[r] -= d
    return quotas.within(after, mine, job.demand)
