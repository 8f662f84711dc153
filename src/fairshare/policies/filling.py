"""Placement: offering machines to users in rank order (the offer loop of Mesos, the heartbeat
loop of Hadoop's FAIR scheduler, TSF section V-D's online algorithm).

Whenever room frees up on a machine, the machine is offered to the user (or pool) with the
lowest *rank* that can use it and whose next task fits, one task at a time, until nothing
fits (:meth:`Filling.offer_machine`). Users sit in one heap per group (see
:mod:`fairshare.policies.state`) ordered by ``(rank, user order, user index, version)``; a
change of a user's share pushes a fresh entry and the old one is dropped when it surfaces
(lazy invalidation), so a selection is O(G + log n), G the groups eligible for the machine.
Ties go to the user seen first: users named in the scenario in scenario order, then the
others in order of their first job's submission.

Placing several tasks on one machine does not re-select before every task when the answer is
known: after a launch the chosen user keeps the machine while its task still fits and its new
rank stays below a lower bound on every other user's entry in the groups that fit (a heap's
top, or the first valid entry under the user's own: :meth:`Filling._bound`). The decisions
are exactly those of selecting before each task; the batch only skips the selections whose
answer is known. An arriving job takes the machines its class may use from the cluster's
free-vector buckets (:class:`fairshare.policies.state.ClusterState`), one fit test per bucket.

Examples
--------
A machine freed by a finish goes to the user with the lowest rank whose task fits. Under
DRF on <8 CPUs, 16 GB>, when one of a's four tasks of <1 CPU, 3 GB> finishes, b has the
lower dominant share (two tasks of <2 CPUs, 2 GB>: 4/8 against a's 9/16) but its task does
not fit the freed room: a is served.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import TaskRef, make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["cpu", "mem"], [Machine("m", np.array([8.0, 16.0]))])
>>> drf = make_policy("drf", cluster)
>>> drf.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0, 3.0]), 9))
>>> drf.job_submitted(0.0, 1, Job("y", 0.0, "b", np.array([2.0, 2.0]), 9))
>>> [d.task.job for d in drf.decide(0.0)]
[0, 1, 0, 1, 0, 0]
>>> drf.task_finished(1.0, TaskRef(0, "map", 0))
>>> drf.select(0)  # (user a, its group)
(0, 0)
>>> drf.task_finished(2.0, TaskRef(1, "map", 0))
>>> drf.select(0)  # (user b, its group)
(1, 1)
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush

from mypy_extensions import mypyc_attr

from fairshare.policies.delay import deadlines, locality_of, pick_map
from fairshare.policies.gangs import Reservation, gain, gang_plan, reserve
from fairshare.policies.headroom import Headroom
from fairshare.policies.ledger import _new
from fairshare.policies.protocol import Decision, Locality, TaskRef
from fairshare.policies.records import Demand, JobState, UserState, part_id
from fairshare.policies.state import fits
from fairshare.tolerances import FIT

Pick = tuple[int, int]
"""A selection: (user index, group)."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Filling(Headroom):
    """Offers of machines (see the module): the selection of the next user for a machine,
    and the offer loop that launches its tasks.

    Built by :class:`~fairshare.policies.base.Scheduler`, whose parameters it takes.
    """

    # Set by the subclass's constructor (fairshare.policies.base.Scheduler).
    _batching: bool
    _solo_offers: bool
    _held: list[tuple[int, tuple[int, float, int, int]]]

    # ------------------------------------------------------------------ selection hooks

    def select(self, mi: int) -> Pick | None:
        """The (user, group) to serve next on machine ``mi``: the lowest valid heap entry over
        the groups that may use ``mi`` and whose task fits there. Ties (one user's equal
        entries in two groups) go to the group listed first for the machine.

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        (int, int) or None
            The user's index and the group, or None when no user's next task fits.
        """
        cs = self.cluster
        free = cs.free[mi]
        users = self.users
        groups = cs.groups
        best: tuple[int, float, int, int] | None = None
        best_group = -1
        headroom = self._headroom
        cs.selects += 1
        # Groups nobody has pending work in hold only stale entries: skipped (see afor).
        for g in cs.afor[mi]:
            grp = groups[g]
            heap = grp.heap
            # Stale entries never become valid again (a user's version only grows), so they
            # are dropped whether or not the group fits: the fit test runs only for a top
            # that would win.
            while heap:
                entry = heap[0]
                user = users[entry[2]]
                if entry[3] == user.version and g in user.job_heaps and user.running < user.cap:
                    break
                heappop(heap)
            else:
                continue
            if best is not None and not entry < best:
                continue
            if fits(free, grp.demand) if not headroom else self.may_place(mi, free, grp.demand):
                best = entry
                best_group = g
        if best is None:
            return None
        return best[2], best_group

    def skip(self, user: int, group: int) -> None:
        """Set (user, group) aside for the rest of this machine's offer (delay scheduling).

        Parameters
        ----------
        user : int
            The user's index.
        group : int
            The group its skipped task belongs to.
        """
        entry = heappop(self.cluster.groups[group].heap)
        self._held.append((group, entry))

    def _restore_held(self) -> None:
        """The offer is over: entries set aside by :meth:`skip` go back."""
        if self._held:
            groups = self.cluster.groups
            for g, entry in self._held:
                heappush(groups[g].heap, entry)
            self._held.clear()

    def _bound(self, mi: int, u: int) -> tuple[int, float, int, int] | None:
        """A lower bound on the heap entries of every user but ``u`` in the groups whose task
        fits on ``mi`` (None: there is none). A heap's top bounds all its entries; when the
        top is ``u``'s own, the first valid entry under it does."""
        cs = self.cluster
        free = cs.free[mi]
        groups = cs.groups
        users = self.users
        best: tuple[int, float, int, int] | None = None
        # Only listed groups can hold a valid entry (see ClusterState.afor).
        for g in cs.afor[mi]:
            grp = groups[g]
            heap = grp.heap
            if not heap:
                continue
            cand = heap[0]
            if cand[2] == u:
                # Look under u's entry: drop the stale entries that surface (u's own older
                # ones above all), then put u's entry back.
                mine = heappop(heap)
                while heap:
                    top = heap[0]
                    user = users[top[2]]
                    if top[3] == user.version and g in user.job_heaps and user.running < user.cap:
                        break
                    heappop(heap)
                if not heap:
                    heappush(heap, mine)
                    continue
                cand = heap[0]
                heappush(heap, mine)
            if best is not None and not cand < best:
                continue
            if self.may_place(mi, free, grp.demand):
                best = cand
        return best

    # ------------------------------------------------------------------ offers

    def _place(self, now: float, out: list[Decision]) -> None:
        """Offer everything that has news: compute admissions, machines with new room, jobs
        with new work."""
        if self._cpac is not None and self._cpac.waiting:
            # The machines admit computes first: those reducers already hold their slots.
            self._admit_computes(out)
        if (self.gangs or self.reservation is not None) and (self._gang_news or self.dirty):
            self._admit_gangs(now, out)
        self._offer(now, out)
        # Room held back as headroom for tasks that no longer wait (the last ones launched,
        # or their user reached its cap) may be used now: offer the machines again.
        while self._headroom and self._headroom_released():
            self._offer(now, out)

    def _offer(self, now: float, out: list[Decision]) -> None:
        """Offer the machines with new room in the order they got it, then the jobs with new
        work."""
        cs = self.cluster
        dirty = self.dirty
        alive = cs.alive
        while dirty:
            mi = next(iter(dirty))
            del dirty[mi]
            if alive[mi]:
                self.offer_machine(mi, now, out)
        offers = self._offers
        while offers:
            part = next(iter(offers))
            del offers[part]
            job = self.jobs.get(part)
            if job is not None:
                self._offer_job(job, now, out)

    def _offer_job(self, job: JobState, now: float, out: list[Decision]) -> None:
        """Offer job part ``job`` (new work) the free machines it may use, until it has no
        pending task left: every other user already had its chance at them (they were not
        dirty). Machines come from the cluster's free-vector buckets, one fit test per
        bucket, and within a fitting bucket the machines the job's class may use, last in
        first out (see :class:`~fairshare.policies.state.ClusterState`); a job that reads
        input tries every eligible machine of a fitting bucket in order, since there the
        machine decides the locality."""
        cs = self.cluster
        demand = job.demand
        owner = self.users[job.user]
        workers = cs.groups[job.group].users
        every_machine = (
            job.blocks is not None
            or job.phase == "copy"
            or self._headroom
            or self._reserved is not None
        )
        cls = cs.groups[job.group].cls
        # The class's eligibility table: per machine for a class that reads names, else per
        # signature.
        by_name = cs.by_name[cls]
        ok = cs.machine_ok[cls] if by_name else cs.sig_ok[cls]
        sig = cs.sig
        free_of = cs.free_of
        for free, bucket in list(cs.buckets.items()):
            if job.pending == 0:
                break
            if not fits(free, demand):
                continue
            if every_machine:
                # The machine decides the locality, or (a copy part, which takes no room)
                # whether it admits one more reducer, or (headroom, a reservation) how much
                # of its room a task may use: try every machine.
                for mi in list(bucket):
                    if job.pending == 0:
                        break
                    if free_of[mi] == free and ok[mi if by_name else sig[mi]]:
                        self.offer_machine(mi, now, out)
                continue
            # A snapshot, as an offer moves its machine out of the bucket.
            for mi in reversed(list(bucket)):
                if job.pending == 0:
                    break
                if not ok[mi if by_name else sig[mi]] or free_of[mi] != free:
                    continue
                if (
                    self._solo_offers
                    and cs.active_groups == 1
                    and len(workers) == 1
                    and owner.running < owner.cap
                ):
                    # The job's user is the only one with work and its task fits: the
                    # selection is known, and no other user bounds the batch.
                    self.offer_machine(mi, now, out, (job.user, job.group), solo=True)
                else:
                    self.offer_machine(mi, now, out, None)
                if free_of[mi] == free:
                    # Nothing was placed (cap or delay): the bucket's eligible twins fare
                    # the same.
                    break

    def offer_machine(
        self,
        mi: int,
        now: float,
        out: list[Decision],
        pick: Pick | None = None,
        *,
        solo: bool = False,
    ) -> None:
        """Offer machine ``mi`` until nothing more fits, then re-bucket it: the one offer of a
        machine every path makes (``pick``: a selection already made, such as preemption's
        starved user; ``solo``: its user is the only one with work, so nothing bounds its
        first batch).

        Parameters
        ----------
        mi : int
            The machine's index.
        now : float
            The time of the decision.
        out : list of Decision
            Where the launches are appended.
        pick : (int, int), optional
            The (user, group) to serve first, already selected.
        solo : bool
            The picked user is the only one with work.
        """
        cs = self.cluster
        free = cs.free[mi]
        select = self.select
        users = self.users
        serve = self._serve
        # Set when the served group's next task no longer fits and it is the only group with
        # work: a selection would find nobody, so the offer ends without one.
        alone = False
        while True:
            if pick is None:
                if alone:
                    break
                if not cs.tiny_groups:
                    # No task fits on a machine without room, so a full machine needs no
                    # selection (the one-slot machines of Choosy section 7.1 end every
                    # offer full).
                    for v in free:
                        if v > FIT:
                            break
                    else:
                        break
                pick = select(mi)
                if pick is not None and self.quotas is not None:
                    # A user whose launch the quotas refuse sits out the rest of the offer.
                    while pick is not None and not self.quota_admits(pick[0], pick[1]):
                        self.skip(pick[0], pick[1])
                        pick = select(mi)
                if pick is None:
                    break
            alone = serve(mi, now, out, users[pick[0]], pick[1], solo)
            pick = None
            solo = False
        self._restore_held()
        cs.rebucket(mi)

    def _serve(
        self, mi: int, now: float, out: list[Decision], user: UserState, group: int, bounded: bool
    ) -> bool:
        """Launch ``user``'s tasks of ``group`` on machine ``mi`` as one batch, without
        re-selecting, while the user provably stays first: its rank after each launch stays
        below a lower bound on every other user's entry in the groups that fit (``bounded``:
        none needed for the first launch; see :meth:`_bound`) and its task still fits. The
        decisions are those of selecting before every launch. Returns whether the offer is
        over because the group's next task no longer fits and no other group has work."""
        cs = self.cluster
        free = cs.free[mi]
        launch = self._launch
        touch = self._touch
        reorder = self.reorder_jobs
        batching = self._batching
        headroom = self._headroom
        plain_rank = self._plain_rank
        reserved = self._reserved
        job = self.head_job(user, group)
        demand = job.demand
        # A map side that reads no input takes its maps in order (_take's common case).
        in_order = job.where is not None and job.blocks is None
        uidx = user.idx
        # (tier, rank, user order) of the lowest other entry (None: nobody else bounds the
        # batch); the user's tier is its head job's priority, fixed while the batch lasts.
        below: tuple[int, float, int] | None = None
        tier = -job.priority
        launched = False
        while True:
            if reserved is not None and mi in reserved and not self._backfills(job, mi):
                # EASY: the task would delay the head gang's reserved start.
                if launched:
                    touch(user)
                else:
                    self.skip(uidx, group)
                return False
            if in_order and not job.requeue:
                index = job.next_map
                job.next_map = index + 1
                ref: TaskRef = _new(TaskRef, (job.id, "map", index))
                locality: Locality | None = None
            else:
                took = self._take(job, mi, now)
                if took is None:
                    if launched:
                        # Refresh the user's entries, then select again: the skip applies to
                        # the entry a fresh selection would see.
                        touch(user)
                    else:
                        self.skip(uidx, group)
                    return False
                ref, locality = took
            room = launch(job, user, ref, mi, locality, out)
            launched = True
            user.pending -= 1
            job.pending -= 1
            if job.pending == 0:
                self._retire(job, user)
                touch(user)
                return False
            if reorder:
                # The job's place among its user's jobs moved (FAIR's fair order): the batch
                # goes on with whichever job then heads the user's heap.
                job.version += 1
                heappush(
                    user.job_heaps[group],
                    (-job.priority, self.job_rank(job), job.part_id, job.version),
                )
            if not batching or user.running >= user.cap:
                touch(user)
                return False
            if not headroom:
                if not room:
                    touch(user)
                    return cs.active_groups == 1
            elif not self.may_place(mi, free, demand):
                touch(user)
                return False
            if not bounded:
                bound = self._bound(mi, uidx)
                if bound is not None:
                    below = (bound[0], bound[1], bound[2])
                bounded = True
            if below is not None:
                rank = user.share / user.divisor if plain_rank else self.user_rank(user, group)
                if not (tier, rank, uidx) < below:
                    touch(user)
                    return False
            if reorder:
                job = self.head_job(user, group)
                tier = -job.priority
                in_order = job.where is not None and job.blocks is None

    # ------------------------------------------------------------------ gangs, backfilling

    def _admit_gangs(self, now: float, out: list[Decision]) -> None:
        """Try the waiting gangs in the policy's order (:meth:`gang_rank`), each on the free
        room as it stands (:func:`~fairshare.policies.gangs.gang_plan`): admitted whole, or
        passed over holding nothing (a gang admitted moves its user's rank: the others are
        ranked afresh). With EASY backfilling the first gang passed over that
        could ever fit gets the reservation (:func:`~fairshare.policies.gangs.reserve`), which
        the gangs after it and then every offer of this and later decisions respect, until
        the next decision with news computes it again (see
        :mod:`fairshare.policies.gangs`)."""
        self._gang_news = False
        cs = self.cluster
        users = self.users
        backfill = self._ends is not None
        reservation: Reservation | None = None
        # A gang that lacked room for some tasks at its last try is not tried again until
        # the room released since could hold them (gangs.gain, once per demand and pass): on
        # a busy cluster, where each finish frees room for a task or two, most gangs wait
        # without a plan being sought.
        freed = self._freed
        gains: dict[Demand, int] = {}
        # The gangs by rank; an admission moves its user's rank (its version), so an entry
        # of an older version is ranked afresh when it surfaces.
        heap = [
            (self.gang_rank(job), users[job.user].version, job.part_id)
            for job in self.gangs.values()
        ]
        heapify(heap)
        while heap:
            _, version, part = heappop(heap)
            job = self.gangs[part]
            user = users[job.user]
            if version != user.version:
                heappush(heap, (self.gang_rank(job), user.version, part))
                continue
            need = job.gang
            if user.running + need > user.cap:
                continue  # over its user's cap: it waits for its own tasks to end
            end = now + job.expected
            demand = job.demand
            plan: list[tuple[int, int]] | None = None
            if job.short > 0 and freed:
                more = gains.get(demand)
                if more is None:
                    more = gains[demand] = gain(freed, demand)
                job.short -= more
            if job.short <= 0:
                cls = cs.groups[job.group].cls
                plan, have = gang_plan(cs, cls, demand, need, reservation, end)
                job.short = need - have
            if plan is not None:
                self._admit_gang(job, user, plan, reservation, end, out)
            elif backfill and reservation is None:
                cls = cs.groups[job.group].cls
                reservation = reserve(cs, job.part_id, cls, demand, need, self._by_end, now)
        freed.clear()
        self.reservation = reservation
        self._reserved = reservation.extra if reservation is not None else None

    def _admit_gang(
        self,
        job: JobState,
        user: UserState,
        plan: list[tuple[int, int]],
        reservation: Reservation | None,
        end: float,
        out: list[Decision],
    ) -> None:
        """Launch a waiting gang's tasks on ``plan``'s machines, all in this decision (each
        through :meth:`_launch`, a machine re-bucketed once its tasks are placed); its other
        tasks then wait as any job's do. A gang reading input takes the locality its machines
        give: it waits for room, never for locality."""
        cs = self.cluster
        launched = job.launched
        for mi, n in plan:
            if reservation is not None:
                reservation.admits(mi, job.demand, end, n)
            for _ in range(n):
                if job.requeue:
                    # A gang preempted whole starts its stopped tasks again first.
                    ref = job.requeue.popleft()
                    index = ref.task
                else:
                    index = job.next_map
                    job.next_map = index + 1
                    ref = TaskRef(job.id, "map", index)
                locality: Locality | None = None
                if launched is not None:
                    locality = locality_of(job, index, mi, cs.rack)
                    launched[index] = 1
                self._launch(job, user, ref, mi, locality, out)
                job.pending -= 1
            cs.rebucket(mi)
        del self.gangs[job.part_id]
        job.gang = 0
        if job.pending > 0:
            self._activate(job, user)
        else:
            self._touch(user)

    def _backfills(self, job: JobState, mi: int) -> bool:
        """Whether a task of ``job`` may start on machine ``mi``, part of the reservation's
        plan, without delaying the head gang (EASY; the room it takes from what the head
        leaves over is counted)."""
        reservation = self.reservation
        assert reservation is not None
        return reservation.admits(mi, job.demand, self._now + job.expected)

    def _take(self, job: JobState, mi: int, now: float) -> tuple[TaskRef, Locality | None] | None:
        """The next task of ``job`` for machine ``mi``; None if delay scheduling skips or the
        machine admits no more of the job's reducers (FAIR section 5.2)."""
        if job.phase == "copy":
            if not self._may_copy(job, mi):
                return None
            assert self._cpac is not None
            self._cpac.copy_started(job.id, mi)
            if job.requeue:
                return job.requeue.popleft(), None
            job.next_reduce += 1
            return TaskRef(job.id, "copy", job.next_reduce - 1), None
        if job.requeue:
            ref = job.requeue.popleft()
            if ref.phase == "map" and job.blocks is not None:
                return ref, locality_of(job, ref.task, mi, self.cluster.rack)
            return ref, None
        if job.maps_done < job.maps:
            if job.blocks is not None:
                picked = pick_map(job, mi, self.cluster.rack, now)
                if picked is None:
                    # A locality whose deadline has passed already applies; the driver needs
                    # the next one, or it never wakes the job again.
                    for t in deadlines(job):
                        if t > now:
                            self.wake_at(t)
                    return None
                return TaskRef(job.id, "map", picked[0]), picked[1]
            index = job.next_map
            job.next_map += 1
            return TaskRef(job.id, "map", index), None
        index = job.next_reduce
        job.next_reduce += 1
        return TaskRef(job.id, "reduce", index), None

    def quota_admits(self, u: int, g: int) -> bool:
        """Whether the queues' quotas let user ``u`` launch a task of group ``g`` now: its
        queues' borrowing limits and their siblings' lending limits
        (:meth:`fairshare.policies.quota.QuotaTree.admits`, on the pooled free room).

        Parameters
        ----------
        u : int
            The user's index.
        g : int
            The group of its task.

        Returns
        -------
        bool
        """
        quotas = self.quotas
        assert quotas is not None
        users = self.users
        free = list(self.cluster.total)
        for user in users:
            if user.running:
                for r, x in enumerate(user.alloc):
                    free[r] -= x
        return quotas.admits(
            quotas.usage(users),
            quotas.chain(users[u].queue),
            self.cluster.groups[g].demand,
            free,
            quotas.pending(users),
        )

    def wake_at(self, t: float) -> None:
        """Ask the driver to call ``advance`` at ``t`` (a delay-scheduling wait or a
        preemption timeout ends then).

        Parameters
        ----------
        t : float
            The time; :meth:`~fairshare.policies.base.Scheduler.next_wakeup` reports the
            earliest pending one.
        """
        heappush(self._wakeups, t)

    # ------------------------------------------------------------------ copy-compute

    def _may_copy(self, job: JobState, mi: int) -> bool:
        """Whether machine ``mi`` admits one more copy part of ``job`` (CPAC, FAIR section
        5.2), with the job's compute parts that fit the machine's capacity cached."""
        cpac = self._cpac
        assert cpac is not None
        compute = self.jobs[part_id(job.id, "reduce")].demand
        slots = self._compute_slots.get((mi, compute))
        if slots is None:
            capacity = self.cluster.machines[mi].capacity
            slots = min(
                (
                    int((float(c) + FIT) // d)
                    for c, d in zip(capacity, compute, strict=True)
                    if d > 0
                ),
                default=cpac.max_computing,
            )
            self._compute_slots[(mi, compute)] = slots
        return cpac.may_copy(job.id, mi, slots)

    def _admit_computes(self, out: list[Decision]) -> None:
        """Each machine admits the reducers that finished copying there into their compute
        phase, in the order they asked, while a compute slot is free and the reduce demand
        fits (CPAC, FAIR section 5.2). Compute parts count in their user's share."""
        cpac = self._cpac
        assert cpac is not None
        cs = self.cluster
        for mi in list(cpac.waiting):
            queue = cpac.waiting[mi]
            free = cs.free[mi]
            kept: list[TaskRef] = []
            while queue:
                ref = queue.popleft()
                side = self.jobs[part_id(ref.job, "reduce")]
                if not (cpac.may_compute(mi) and self.may_place(mi, free, side.demand)):
                    kept.append(ref)
                    continue
                user = self.users[side.user]
                self._launch(side, user, ref, mi, None, out)  # (room: asked afresh)
                cpac.compute_started(mi)
                self._touch(user)
            if kept:
                queue.extend(kept)
            else:
                del cpac.waiting[mi]
            cs.rebucket(mi)
