"""Placement: offering machines to users in rank order (the offer loop of Mesos, the heartbeat
loop of Hadoop's FAIR scheduler, TSF section V-D's online algorithm), under one ordered list of
filters (:mod:`fairshare.policies.filters`).

Whenever room frees up on a machine, the machine is offered to the user (or pool) the
selection picks (:class:`~fairshare.policies.ranking.Selection`: the lowest rank that can use
it and whose next task fits), one task at a time, until nothing fits
(:meth:`Placer.offer_machine`). ``pick`` filters may make the picked user sit out the offer,
``launch`` filters may end its turn before a launch; every launch is the ledger's
:meth:`~fairshare.policies.ledger.Ledger.start_task`.

Placing several tasks on one machine does not re-select before every task when the answer is
known: after a launch the chosen user keeps the machine while its task still fits and its new
rank stays below a lower bound on every other user's entry in the groups that fit
(:meth:`~fairshare.policies.ranking.Selection.bound`). The decisions are exactly those of
selecting before each task; the batch only skips the selections whose answer is known, and is
on only when the selection vouches for it and no ``pick`` filter judges each task
(:attr:`Placer.batching`, decided once, when the scheduler is built). An arriving job takes the
machines its class may use from the cluster's free-vector buckets
(:class:`fairshare.policies.state.ClusterState`), one fit test per bucket.

Order of work inside a decision (:meth:`Placer.place`): compute admissions (copy-compute
splitting), the waiting gangs when something happened that may let one start
(:mod:`fairshare.policies.gangs`: all or nothing on one snapshot, EASY backfilling's
reservation), machines with new room in the order they got it, jobs with new work; with
headroom, again while room held back for tasks that stopped waiting frees.

Examples
--------
The filters a DRF scheduler places with, with delay scheduling on:

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import PolicyOptions, make_policy
>>> cluster = Cluster.build(["cpu"], [Machine("m", np.array([4.0]))])
>>> policy = make_policy("drf", cluster, options=PolicyOptions(delay=(5.0, 10.0)))
>>> [f.name for f in policy.placer.filters], policy.placer.batching
(['eligibility', 'fit', 'delay-scheduling'], True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from heapq import heapify, heappop, heappush
from itertools import islice
from typing import Any, Final

from mypy_extensions import mypyc_attr

from fairshare.policies.delay import locality_of, pick_map
from fairshare.policies.filters import Filter, Fit, Reservation, RoomChain, RoomFilter
from fairshare.policies.gangs import Reservation as GangReservation
from fairshare.policies.gangs import gain, gang_plan, reserve
from fairshare.policies.headroom import Headroom
from fairshare.policies.ledger import DRAINED, ROOM, Ledger
from fairshare.policies.protocol import Decision, Locality, TaskRef
from fairshare.policies.ranking import NO_PICK, Pick, Selection, rank_before
from fairshare.policies.records import Demand, HeapEntry, JobState, Room, UserState
from fairshare.policies.state import fits, key_fits
from fairshare.tolerances import FIT

_NO_BOUND: Final = HeapEntry(0, 0.0, 0.0, 0, -1, 0)
"""A batch's bound before it has one (read only once ``below`` is set)."""


FIRST_BUCKETS: Final = 16
"""How many of the cluster's buckets :meth:`Placer._offer_job` copies first (the rest only
for a job that they do not place whole). Read at each offer, so a test may lower it."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Placer:
    """Offers of machines under an ordered list of filters (see the module).

    Parameters
    ----------
    ledger : Ledger
        The state, changed only through its functions.
    selection : Selection
        Which (user, group) a machine serves next.
    filters : sequence of Filter
        The filters, in the order they are asked (bound to ``ledger`` here).

    Attributes
    ----------
    filters : list of Filter
        The filters.
    room : RoomFilter or None
        The room filter in force, or None for the plain fit test (inlined).
    headroom : Headroom or None
        H-DRF section 5's headroom, when it is the room filter.
    batching : bool
        Whether a user keeps a machine for a batch of launches (see the module).
    """

    def __init__(self, ledger: Ledger, selection: Selection, filters: Sequence[Filter]) -> None:
        self.ledger = ledger
        self.selection = selection
        self.filters = list(filters)
        for f in self.filters:
            f.bind(ledger)
        rooms = [f for f in self.filters if isinstance(f, RoomFilter)]
        # The plain fit test alone is inlined on the hot paths (room None).
        self.room: RoomFilter | None = None
        if len(rooms) > 1:
            self.room = RoomChain(rooms)
        elif rooms and type(rooms[0]) is not Fit:
            self.room = rooms[0]
        self.headroom: Headroom | None = None
        for f in rooms:
            if isinstance(f, Headroom):
                self.headroom = f
        self.pick_filters = [f for f in self.filters if f.stage == "pick"]
        self.launch_filters = [f for f in self.filters if f.stage == "launch"]
        # Preemption's dry run: every filter but those judging a user against everyone's
        # allocation (see fairshare.policies.filters).
        self.trial_filters = [f for f in self.filters if f.stage != "pick"]
        self.reservation: Reservation | None = None
        # When the head gang's EASY reservation was last computed (kept for
        # PolicyOptions.backfill_interval seconds while the head stays the head).
        self.reserved_at = -math.inf
        self.reserved_changes = 0
        for f in self.launch_filters:
            if isinstance(f, Reservation):
                self.reservation = f
        self.batching = selection.batchable and not self.pick_filters
        # Whether placement admits the waiting gangs itself (off for a policy that decides
        # which gangs to try, and when, through admit_gang: Kueue's admission cycle).
        self.gang_admission = True
        self.solo_offers = self.batching and selection.solo_offers and self.room is None
        selection.bind(ledger, self.room)

    # ------------------------------------------------------------------ filters

    def room_admits(self, mi: int, free: Room, demand: Demand) -> bool:
        """Whether a task of ``demand`` may use machine ``mi`` whose free room is ``free``:
        the room filter in force (the plain fit test, or the headroom).

        Parameters
        ----------
        mi : int
            The machine's index.
        free : sequence of float
            Its free room (the actual one, or one a caller counts with tasks removed).
        demand : Demand
            The task's demand.

        Returns
        -------
        bool
        """
        room = self.room
        return fits(free, demand) if room is None else room.room(mi, free, demand)

    def trial_admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Preemption's dry run: whether every filter but the ``pick`` ones admits the next
        task of ``job`` on machine ``mi`` with free room ``free`` (the room its victims would
        leave), in the list's order.

        Parameters
        ----------
        job : JobState
            The starved user's job part.
        mi : int
            The machine's index.
        free : sequence of float
            The machine's free room once the victims are gone.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        return all(f.admits(job, mi, free, now) for f in self.trial_filters)

    def launch_admits(self, job: JobState, mi: int, now: float) -> bool:
        """Preemption's dry run, the filters that do not read the room (``index`` and
        ``launch``): whether they admit the next task of ``job`` on machine ``mi``.

        Parameters
        ----------
        job : JobState
            The starved user's job part.
        mi : int
            The machine's index.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        free = self.ledger.cluster.free[mi]
        for f in self.trial_filters:
            if f.stage != "room" and not f.admits(job, mi, free, now):
                return False
        return True

    # ------------------------------------------------------------------ offers

    def place(self, now: float, out: list[Decision]) -> None:
        """Offer everything that has news: compute admissions, waiting gangs, machines with
        new room, jobs with new work (see the module).

        Parameters
        ----------
        now : float
            The time of the decision.
        out : list of Decision
            Where the launches are appended.
        """
        ledger = self.ledger
        cpac = ledger.copy_compute
        if cpac is not None and cpac.waiting:
            # The machines admit computes first: those reducers already hold their slots.
            self._admit_computes(out)
        if not self.gang_admission:
            # The policy admitted its gangs already (admit_gang) and read the room released.
            ledger.gang_news = False
            ledger.freed.clear()
        elif (ledger.gangs or ledger.reservation is not None) and (
            ledger.gang_news or ledger.dirty
        ):
            self._admit_gangs(now, out)
        self._offer(now, out)
        # Room held back as headroom for tasks that no longer wait (the last ones launched,
        # or their user reached its cap) may be used now: offer the machines again.
        headroom = self.headroom
        while headroom is not None and headroom.released():
            ledger.mark_roomy()
            if not ledger.dirty:
                break
            self._offer(now, out)

    def _offer(self, now: float, out: list[Decision]) -> None:
        """Offer the machines with new room in the order they got it, then the jobs with new
        work."""
        ledger = self.ledger
        dirty = ledger.dirty
        alive = ledger.cluster.alive
        while dirty:
            # The machines in order, a copy at a time: taking the first key each time walked
            # the holes the deletions leave at the front of the dictionary, and cost as much
            # as a selection. A machine an offer marks again after its own offer comes after
            # the copy's, as it would have; one marked again before its turn keeps its place.
            # The keys as the dictionary's own objects (typed Any, so the compiled kernel
            # does not unbox them): its look-ups then find each by identity, where a new box
            # of a machine index above 256 was compared by value.
            keys: list[Any] = list(dirty)
            for key in keys:
                if key in dirty:
                    del dirty[key]
                    mi: int = key
                    if alive[mi]:
                        self.offer_machine(mi, now, out)
        offers = ledger.offers
        while offers:
            part = next(iter(offers))
            del offers[part]
            job = ledger.jobs.get(part)
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
        ledger = self.ledger
        cs = ledger.cluster
        demand = job.demand
        # The first two amounts, for fits_two below: fits() per bucket scanned, with its
        # generic sequence reads, was a twentieth of a saturated replay.
        width = len(demand)
        need0 = demand[0] if width > 0 else -math.inf
        need1 = demand[1] if width > 1 else -math.inf
        owner = ledger.users[job.user]
        workers = cs.groups[job.group].users
        every_machine = (
            job.blocks is not None
            or job.phase == "copy"
            or self.room is not None
            or ledger.reserved is not None
        )
        cls = cs.groups[job.group].cls
        # The class's eligibility table: per machine for a class that reads names, else per
        # signature.
        by_name = cs.by_name[cls]
        ok = cs.machine_ok[cls] if by_name else cs.sig_ok[cls]
        sig = cs.sig
        free_of = cs.free_of
        solo_offers = self.solo_offers
        # Most arrivals on a full cluster fit no bucket: said off the machines' list first.
        if width > 0 and not cs.fits_some_bucket(need0, need1, demand):
            return
        # The buckets as they are now, in order (offers move machines between them, and
        # add and drop buckets), copied lazily: a job is usually placed from the first few,
        # and a copy of thousands of buckets for every job cost more than its offers. The
        # leading buckets the job's task does not fit are passed on the dictionary itself,
        # with no copy: nothing is offered before the first that fits, so none of them
        # moves meanwhile. The copies start at ``first``, the position of the first bucket
        # that fits (there is one: a machine's room fits the task).
        buckets = cs.buckets
        total = len(buckets)
        first = 0
        for free in buckets:
            if key_fits(free, need0, need1, demand):
                break
            first += 1
        if first == total:
            return  # no bucket at all (every machine full) for a demand of no resource
        frees = list(islice(buckets, first, first + FIRST_BUCKETS))
        machine_sets = list(islice(buckets.values(), first, first + FIRST_BUCKETS))
        b = 0
        while job.pending != 0:
            if b == len(frees):
                if first + b == total:
                    break
                # The rest of the buckets as they were. An offer only re-buckets its own
                # machine, taken from a bucket seen already: the buckets it empties are among
                # those (dropped, or made again at the end), the buckets it makes are added at
                # the end (a bucket its machine leaves alone is moved to the new room's key,
                # so it is gone from its own), and the others keep their order (those before
                # ``first`` too: none of their machines was offered). So the rest are where
                # the first ones that are still there end.
                gone = 0
                for k in range(b):
                    if buckets.get(frees[k]) is not machine_sets[k]:
                        gone += 1
                frees += islice(buckets, first + b - gone, total - gone)
                machine_sets += islice(buckets.values(), first + b - gone, total - gone)
                assert first + len(frees) == total
            free = frees[b]
            bucket = machine_sets[b]
            b += 1
            if not key_fits(free, need0, need1, demand):
                continue
            if every_machine:
                # The machine decides the locality, or (a copy part, which takes no room)
                # whether it admits one more reducer, or (headroom, another room filter, a
                # reservation) how much of its room a task may use: try every machine.
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
                    solo_offers
                    and cs.active_groups == 1
                    and len(workers) == 1
                    and owner.running < owner.cap
                ):
                    # The job's user is the only one with work and its task fits: the
                    # selection is known, and no other user bounds the batch.
                    self.offer_machine(mi, now, out, (job.user, job.group), solo=True)
                else:
                    self.offer_machine(mi, now, out)
                if free_of[mi] == free:
                    # Nothing was placed (cap or delay): the bucket's eligible twins fare
                    # the same.
                    break

    def offer_machine(
        self,
        mi: int,
        now: float,
        out: list[Decision],
        pick: Pick = NO_PICK,
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
            The (user, group) to serve first, already selected (:data:`NO_PICK`: none).
        solo : bool
            The picked user is the only one with work.
        """
        ledger = self.ledger
        cs = ledger.cluster
        free = cs.free[mi]
        selection = self.selection
        users = ledger.users
        pick_filters = self.pick_filters
        # Set when the served group's next task no longer fits and it is the only group with
        # work: a selection would find nobody, so the offer ends without one.
        alone = False
        # The (user, group) to serve: two plain numbers, never a tuple made (see Pick).
        u, g = pick
        while True:
            if u < 0:
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
                u, g = selection.select(mi)
                if pick_filters:
                    # A user a pick filter refuses sits out the rest of the offer.
                    while u >= 0 and not self._pick_admits(u, g, mi, free, now):
                        selection.skip(u, g)
                        u, g = selection.select(mi)
                if u < 0:
                    break
            alone = self._serve(mi, now, out, users[u], g, solo)
            u = -1
            solo = False
        selection.restore_held()
        cs.rebucket(mi)

    def _pick_admits(self, u: int, g: int, mi: int, free: Room, now: float) -> bool:
        """Whether every ``pick`` filter admits user ``u``'s next task of group ``g``."""
        ledger = self.ledger
        job = ledger.head_job(ledger.users[u], g)
        return all(f.admits(job, mi, free, now) for f in self.pick_filters)

    def _serve(
        self, mi: int, now: float, out: list[Decision], user: UserState, group: int, bounded: bool
    ) -> bool:
        """Launch ``user``'s tasks of ``group`` on machine ``mi`` as one batch, without
        re-selecting, while the user provably stays first: its rank after each launch stays
        below a lower bound on every other user's entry in the groups that fit (``bounded``:
        none needed for the first launch; see :meth:`Selection.bound`), its task still fits
        and the ``launch`` filters admit it. The decisions are those of selecting before
        every launch. Returns whether the offer is over because the group's next task no
        longer fits and no other group has work."""
        ledger = self.ledger
        cs = ledger.cluster
        free = cs.free[mi]
        ranking = ledger.ranking
        reorder = ranking.reorder_jobs
        batching = self.batching
        room_filter = self.room
        by_share = ranking.by_share
        launch_filters = self.launch_filters
        reservation = self.reservation
        job = ledger.head_job(user, group)
        demand = job.demand
        # A map side that reads no input takes its maps in order (_take's common case).
        in_order = job.phase == "map" and job.blocks is None
        uidx = user.idx
        # The lowest other entry (when ``below``: else nobody else bounds the batch); a
        # user's tier is its head job's priority, fixed while the batch lasts, and its
        # pending since too (a batch ends when its job drains).
        below = False
        bound = _NO_BOUND
        since = ledger.pending_since(user)
        tier = -job.priority
        launched = False
        while True:
            if launch_filters:
                refused: Filter | None = None
                for f in launch_filters:
                    if not f.admits(job, mi, free, now):
                        refused = f
                        break
                if refused is not None:
                    refused.refused(job, mi, now)
                    if launched:
                        # Refresh the user's entries, then select again: a skip applies to
                        # the entry a fresh selection would see.
                        ledger.touch(user)
                    else:
                        self.selection.skip(uidx, group)
                    return False
            if in_order and not job.requeue:
                index = job.next_map
                job.next_map = index + 1
                ref = TaskRef(job.key, "map", index)
                locality: Locality | None = None
            else:
                ref, locality = self._take(job, mi, now)
            if reservation is not None:
                reservation.take(job, mi, now)
            state = ledger.start_task(job, user, ref, mi, locality, out)
            launched = True
            if state == DRAINED:
                return False
            if reorder:
                # The job's place among its user's jobs moved (FAIR's fair order): the batch
                # goes on with whichever job then heads the user's heap.
                ledger.reorder(job, user)
            if not batching or user.running >= user.cap:
                ledger.touch(user)
                return False
            if room_filter is None:
                if state != ROOM:
                    ledger.touch(user)
                    return cs.active_groups == 1
            elif not room_filter.room(mi, free, demand):
                ledger.touch(user)
                return False
            if not bounded:
                lowest = self.selection.bound(mi, uidx)
                if lowest is not None:
                    below = True
                    bound = lowest
                bounded = True
            if below:
                rank = user.share / user.divisor if by_share else ranking.user_rank(user, group)
                if not rank_before(tier, rank, since, user.served, bound):
                    ledger.touch(user)
                    return False
            if reorder:
                job = ledger.head_job(user, group)
                tier = -job.priority
                in_order = job.phase == "map" and job.blocks is None

    def _take(self, job: JobState, mi: int, now: float) -> tuple[TaskRef, Locality | None]:
        """The next task of ``job`` for machine ``mi`` (the ``launch`` filters admitted it): a
        re-queued one first, then by locality for a job that reads input (delay scheduling,
        FAIR Algorithm 1), else in order; a copy part takes one of the machine's reducer
        slots (FAIR section 5.2)."""
        if job.phase == "copy":
            cpac = self.ledger.copy_compute
            assert cpac is not None
            cpac.copy_started(job.id, mi)
            if job.requeue:
                return job.requeue.popleft(), None
            job.next_reduce += 1
            return TaskRef(job.id, "copy", job.next_reduce - 1), None
        if job.requeue:
            ref = job.requeue.popleft()
            if ref.phase == "map" and job.blocks is not None:
                return ref, locality_of(job, ref.task, mi, self.ledger.cluster.rack)
            return ref, None
        if job.maps_done < job.maps:
            if job.blocks is not None:
                picked = pick_map(job, mi, self.ledger.cluster.rack, now)
                assert picked is not None, "delay scheduling admitted the launch"
                # A map part's key is its job id, as the object the ledger holds.
                return TaskRef(job.key, "map", picked[0]), picked[1]
            index = job.next_map
            job.next_map += 1
            return TaskRef(job.key, "map", index), None
        index = job.next_reduce
        job.next_reduce += 1
        return TaskRef(job.id, "reduce", index), None

    # ------------------------------------------------------------------ gangs, backfilling

    def _admit_gangs(self, now: float, out: list[Decision]) -> None:
        """Try the waiting gangs in the ranking's order (``gang_rank``), each on the free
        room as it stands (:func:`~fairshare.policies.gangs.gang_plan`): admitted whole, or
        passed over holding nothing (a gang admitted moves its user's rank: the others are
        ranked afresh). With EASY backfilling the first gang passed over that could ever fit
        gets the reservation (:func:`~fairshare.policies.gangs.reserve`), which the gangs
        after it and then every offer of this and later decisions respect, until the next
        decision with news computes it again (see :mod:`fairshare.policies.gangs`)."""
        ledger = self.ledger
        ledger.gang_news = False
        cs = ledger.cluster
        users = ledger.users
        gang_rank = ledger.ranking.gang_rank
        backfill = ledger.ends is not None
        reservation: GangReservation | None = None
        # A gang that lacked room for some tasks at its last try is not tried again until
        # the room released since could hold them (gangs.gain, once per demand and pass): on
        # a busy cluster, where each finish frees room for a task or two, most gangs wait
        # without a plan being sought.
        freed = ledger.freed
        gains: dict[Demand, int] = {}
        # The gangs by rank; an admission moves its user's rank (its version), so an entry
        # of an older version is ranked afresh when it surfaces.
        heap = [
            (gang_rank(job), users[job.user].version, job.part_id) for job in ledger.gangs.values()
        ]
        heapify(heap)
        while heap:
            _, version, part = heappop(heap)
            job = ledger.gangs[part]
            user = users[job.user]
            if version != user.version:
                heappush(heap, (gang_rank(job), user.version, part))
                continue
            need = job.gang
            if user.running + need > user.cap:
                continue  # over its user's cap: it waits for its own tasks to end
            if not self.admits_whole(job, need, now):
                continue  # over a quota: it waits for its queues' usage to fall
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
                kept = ledger.reservation
                if (
                    kept is not None
                    and kept.job == job.part_id
                    and now < self.reserved_at + ledger.options.backfill_interval
                    and self.reserved_changes == ledger.cluster_changes
                ):
                    # Slurm's backfill pass runs every bf_interval: the head's reservation
                    # stands until then (see PolicyOptions.backfill_interval).
                    reservation = kept
                else:
                    cls = cs.groups[job.group].cls
                    reservation = reserve(cs, job.part_id, cls, demand, need, ledger.by_end, now)
                    self.reserved_at = now
                    self.reserved_changes = ledger.cluster_changes
        freed.clear()
        ledger.reservation = reservation
        ledger.reserved = reservation.extra if reservation is not None else None

    def admit_gang(self, job: JobState, now: float, out: list[Decision]) -> bool:
        """Admit waiting gang ``job`` now if the free room holds all its tasks at once (one
        :func:`~fairshare.policies.gangs.gang_plan` on the room as it stands, no
        reservation), for a policy that decides itself which gangs to try and in which order
        (:attr:`gang_admission` off).

        Parameters
        ----------
        job : JobState
            A waiting gang's map side.
        now : float
            The time of the decision.
        out : list of Decision
            Where the launches are appended.

        Returns
        -------
        bool
            Whether it was admitted (launched whole).
        """
        ledger = self.ledger
        user = ledger.users[job.user]
        need = job.gang
        if user.running + need > user.cap or not self.admits_whole(job, need, now):
            job.short = 0  # its own tasks' or its queues' ends, not room, let it start
            return False
        cs = ledger.cluster
        end = now + job.expected
        plan, have = gang_plan(cs, cs.groups[job.group].cls, job.demand, need, None, end)
        job.short = need - have
        if plan is None:
            return False
        self._admit_gang(job, user, plan, None, end, out)
        return True

    def admits_whole(self, job: JobState, count: int, now: float) -> bool:
        """Whether every ``pick`` filter lets ``count`` tasks of ``job`` start together (a
        gang's admission: :meth:`~fairshare.policies.filters.Filter.admits_whole`).

        Parameters
        ----------
        job : JobState
            A waiting gang's part.
        count : int
            How many of its tasks would start.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        return all(f.admits_whole(job, count, now) for f in self.pick_filters)

    def _admit_gang(
        self,
        job: JobState,
        user: UserState,
        plan: list[tuple[int, int]],
        reservation: GangReservation | None,
        end: float,
        out: list[Decision],
    ) -> None:
        """Launch a waiting gang's tasks on ``plan``'s machines, all in this decision (each
        through the ledger's ``start_task``, a machine re-bucketed once its tasks are
        placed); its other tasks then wait as any job's do. A gang reading input takes the
        locality its machines give: it waits for room, never for locality."""
        ledger = self.ledger
        cs = ledger.cluster
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
                    ref = TaskRef(job.key, "map", index)
                locality: Locality | None = None
                if launched is not None:
                    locality = locality_of(job, index, mi, cs.rack)
                    launched[index] = 1
                ledger.start_task(job, user, ref, mi, locality, out)
            cs.rebucket(mi)
        del ledger.gangs[job.part_id]
        job.gang = 0
        if job.pending > 0:
            ledger.activate(job, user)
        else:
            ledger.touch(user)

    # ------------------------------------------------------------------ copy-compute

    def _admit_computes(self, out: list[Decision]) -> None:
        """Each machine admits the reducers that finished copying there into their compute
        phase, in the order they asked, while a compute slot is free and the reduce demand
        fits (CPAC, FAIR section 5.2). Compute parts count in their user's share."""
        ledger = self.ledger
        cpac = ledger.copy_compute
        assert cpac is not None
        cs = ledger.cluster
        for mi in list(cpac.waiting):
            queue = cpac.waiting[mi]
            free = cs.free[mi]
            kept: list[TaskRef] = []
            while queue:
                ref = queue.popleft()
                side = ledger.part_of(ref)
                if not (cpac.may_compute(mi) and self.room_admits(mi, free, side.demand)):
                    kept.append(ref)
                    continue
                ledger.start_task(side, ledger.users[side.user], ref, mi, None, out)
            if kept:
                queue.extend(kept)
            else:
                del cpac.waiting[mi]
            cs.rebucket(mi)
