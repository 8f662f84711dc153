"""The selection every policy but H-DRF's uses: per group, a heap of the users with pending
work there, ordered by the policy's rank (:class:`HeapSelection`).

Users sit in one heap per group (see :mod:`fairshare.policies.state`) ordered by ``(priority
tier, rank, pending since, served, user index, version)``; a change of a user's rank pushes a
fresh entry (in place of the old one when that is the top) and an old one is dropped when it
surfaces (lazy invalidation), so a selection is O(G + log n), G the groups eligible for the
machine. A selection also records what it saw, from which the bound of the batch it starts is
answered (:meth:`HeapSelection.bound`). Equal ranks go by the fair tie rule: the
user whose oldest pending task was submitted first, then the user served least recently
(:meth:`~fairshare.policies.ledger.Ledger.pending_since`); before anyone is served, users named
in the scenario in scenario order, then the others in order of their first job's submission.

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

import heapq
import math
from typing import TYPE_CHECKING, Final

from mypy_extensions import mypyc_attr

from fairshare.policies.ranking import NO_PICK, Pick, Selection
from fairshare.policies.records import Group, HeapEntry, UserState, entry_before
from fairshare.policies.state import fits, fits_first_two

if TYPE_CHECKING:
    from fairshare.policies.filters import RoomFilter
    from fairshare.policies.ledger import Ledger


# The heap functions as Final names: the compiled kernel keeps them in C statics, where an
# imported function is a dictionary look-up at every call.
heapify: Final = heapq.heapify
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush
heapreplace: Final = heapq.heapreplace

_NO_ENTRY: Final = HeapEntry(0, 0.0, 0.0, 0, -1, 0)
"""A placeholder entry, returned beside False where there is none."""

STALE_SLACK: Final = 64
"""Stale entries a group's heap may hold beyond twice its users before they are dropped at
once (see :meth:`HeapSelection._push`)."""


@mypyc_attr(allow_interpreted_subclasses=True)
class HeapSelection(Selection):
    """The lowest valid heap entry over the groups that may use a machine and whose task fits
    there (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self.solo_offers = True
        self.idle_touches = False
        # Entries set aside by skip() for the rest of one machine's offer.
        self._held: list[tuple[int, HeapEntry]] = []
        # What the last selection saw, for bound() to answer from (see _recorded_bound):
        # the machine and the user it picked (-1: nothing to answer from), the lowest valid
        # top of another user it read, the heaps of the groups whose top was the user's, and
        # the lowest (tier, rank) bound of the fitting groups it passed unread.
        self._seen_mi = -1
        self._seen_user = -1
        self._second: HeapEntry = _NO_ENTRY
        self._has_second = False
        # The heaps are the first ``_mine_count`` items of ``_mine``, a list kept and
        # overwritten: a list's clear() frees its storage, which the next append allocates.
        self._mine: list[list[HeapEntry]] = []
        self._mine_count = 0
        self._passed = False
        self._passed_tier = 0
        self._passed_rank = 0.0

    def bind(self, ledger: Ledger, room: RoomFilter | None) -> None:
        """Read ``ledger``, and test room with ``room`` (None: the plain fit test).

        Parameters
        ----------
        ledger : Ledger
            The scheduler's state.
        room : RoomFilter or None
            The fit test in force (headroom), or None for the plain one.
        """
        self.ledger = ledger
        self.room = room
        self._by_share = ledger.ranking.by_share

    def touched(self, user: UserState) -> None:
        """Push fresh entries in every group the user has work in (the older ones went stale
        with its version).

        Parameters
        ----------
        user : UserState
            The user.
        """
        # A push may lower what the last selection saw.
        self._seen_mi = -1
        if not user.job_heaps or user.running >= user.cap:
            return
        ledger = self.ledger
        ranking = ledger.ranking
        since = ledger.pending_since(user)
        served = user.served
        idx = user.idx
        version = user.version
        if ledger.prioritized:
            # The tier is the priority of the job the user launches from next in the group.
            for g, heap in user.job_heaps.items():
                head = ledger.first_pending(heap)
                tier = 0 if head is None else -head.priority
                rank = ranking.user_rank(user, g)
                self._push(g, HeapEntry(tier, rank, since, served, idx, version))
            return
        if self._by_share:
            # One entry serves every group: the rank does not depend on the group.
            rank = user.share / user.divisor
            entry = HeapEntry(0, rank, since, served, idx, version)
            for g in user.groups:
                self._push(g, entry)
            return
        for g in user.groups:
            rank = ranking.user_rank(user, g)
            self._push(g, HeapEntry(0, rank, since, served, idx, version))

    def _push(self, g: int, entry: HeapEntry) -> None:
        """Push ``entry`` on group ``g``'s heap. Selections drop stale entries only as they
        surface in a group that fits the machine offered, so a group that seldom fits (a
        large task on a full cluster) would keep every entry its users' changes push: past
        twice its users' number (plus :data:`STALE_SLACK`), its stale entries are dropped
        all at once (amortised O(1) per push; the valid entries, and so every selection,
        stay the same). An entry is immutable once made: one serves each of the user's
        groups when its rank does not depend on the group."""
        grp = self.ledger.cluster.groups[g]
        heap = grp.heap
        if heap and heap[0].user == entry.user:
            # The top is the user's older entry, stale now (a push follows its version's
            # move): the new one takes its place in one sift, where a push beside it left
            # the stale one for a selection to pop. A group of one user (most groups of a
            # trace replay) keeps a heap of one entry, replaced in place with no sift (the
            # heap functions are Python calls). The (tier, rank) bound is the new top's: the
            # old top, its lower bound, is gone.
            if len(heap) == 1:
                heap[0] = entry
            else:
                heapreplace(heap, entry)
            top = heap[0]
            grp.top_tier = top.tier
            grp.top_rank = top.rank
            return
        _lower_top(grp, entry.tier, entry.rank)
        heappush(heap, entry)
        # The slack first: the users' dictionary is read only for a heap that may be over.
        size = len(heap)
        if size > STALE_SLACK + 2 and size > 2 * len(grp.users) + STALE_SLACK:
            heap[:] = [e for e in heap if self._current(e)]
            heapify(heap)

    def _current(self, entry: HeapEntry) -> bool:
        """Whether heap entry ``entry`` is valid: its user's latest and the user is under its
        cap (a stale entry never becomes valid again: a user's version only grows, and a user
        back under its cap is pushed afresh). The user then has work in the entry's group: a
        user's entries are pushed in its groups only, and its version moves when it leaves
        one (:meth:`~fairshare.policies.ledger.Ledger.retire`)."""
        user = self.ledger.users[entry.user]
        return entry.version == user.version and user.running < user.cap

    def select(self, mi: int) -> Pick:
        """The lowest valid heap entry over the groups that may use ``mi`` and whose task fits
        there. Ties (one user's equal entries in two groups) go to the group listed first
        for the machine.

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        (int, int)
            The user's index and the group, or :data:`~fairshare.policies.ranking.NO_PICK`
            when no user's next task fits.
        """
        ledger = self.ledger
        cs = ledger.cluster
        free = cs.free[mi]
        # The best entry so far (read while best_group >= 0).
        best = _NO_ENTRY
        best_group = -1
        best_tier = 0
        best_rank = 0.0
        room = self.room
        # The first two resources' room, unboxed for the quick fit test below (a group's
        # demand0/demand1 are -inf past its last resource); fits() tests the others.
        width = len(free)
        free0 = free[0] if width > 0 else 0.0
        free1 = free[1] if width > 1 else 0.0
        cs.selects += 1
        self._seen_mi = -1
        # A room filter admits at most what fits, so room short of every pending demand
        # ends the offer with no group looked at (a full cluster's usual last selection).
        if cs.fits_none(free):
            return NO_PICK
        # The record for bound() (see __init__): the heaps the best's user tops, the lowest
        # valid top of another user, and the lowest (tier, rank) bound of the fitting groups
        # passed unread.
        mine = self._mine
        mine_count = 0
        second: HeapEntry = _NO_ENTRY
        has_second = False
        passed = False
        passed_tier = 0
        passed_rank = 0.0
        # Groups nobody has pending work in hold only stale entries: skipped (see afor).
        for grp in cs.afor[mi]:
            heap = grp.heap
            if not heap:
                continue
            # A heap's top, stale or not, bounds its valid entries from below, and the group's
            # (top_tier, top_rank) bound the top: a group that cannot beat the best so far is
            # passed without reading its heap (equal keys are read: the later fields decide).
            if best_group >= 0:
                tier = grp.top_tier
                rank = grp.top_rank
                if tier > best_tier or (tier == best_tier and rank > best_rank):
                    # The lowest bound passed, of a group whose task fits (bound() reads
                    # those only).
                    lower = not passed or tier < passed_tier
                    if (
                        (lower or (tier == passed_tier and rank < passed_rank))
                        and fits_first_two(free0, free1, grp)
                        and (
                            (width <= 2 or fits(free, grp.demand))
                            if room is None
                            else room.room(mi, free, grp.demand)
                        )
                    ):
                        passed = True
                        passed_tier = tier
                        passed_rank = rank
                    continue
            # So is a group whose task does not fit: fits()'s test of the first two resources
            # first, on plain fields (a room filter admits at most what fits).
            if not fits_first_two(free0, free1, grp):
                continue
            if room is None:
                if width > 2 and not fits(free, grp.demand):
                    continue
            elif not room.room(mi, free, grp.demand):
                continue
            # Stale entries never become valid again (a user's version only grows): dropped
            # as they surface.
            while heap:
                entry = heap[0]
                if self._current(entry):
                    break
                heappop(heap)
            else:
                continue
            # The top is known now: the bound is tightened to it.
            grp.top_tier = entry.tier
            grp.top_rank = entry.rank
            # The record: the lowest top of a user but the best's (the best's user changes:
            # the former best is then the lowest other top), and the groups the best's user
            # tops, whose next entries bound the others there.
            if best_group < 0 or entry_before(entry, best):
                if best_group >= 0 and entry.user != best.user:
                    second = best
                    has_second = True
                    mine_count = 0
                if mine_count < len(mine):
                    mine[mine_count] = heap
                else:
                    mine.append(heap)
                mine_count += 1
                best = entry
                best_group = grp.index
                best_tier = entry.tier
                best_rank = entry.rank
            elif entry.user == best.user:
                if mine_count < len(mine):
                    mine[mine_count] = heap
                else:
                    mine.append(heap)
                mine_count += 1
            elif not has_second or entry_before(entry, second):
                second = entry
                has_second = True
        if best_group < 0:
            return NO_PICK
        self._seen_mi = mi
        self._seen_user = best.user
        self._second = second
        self._has_second = has_second
        self._mine_count = mine_count
        self._passed = passed
        self._passed_tier = passed_tier
        self._passed_rank = passed_rank
        return best.user, best_group

    def skip(self, user: int, group: int) -> None:
        """Set (user, group) aside for the rest of this machine's offer: its heap entry is
        popped and kept aside.

        Parameters
        ----------
        user : int
            The user's index.
        group : int
            The group its skipped task belongs to.
        """
        self._seen_mi = -1
        entry = heappop(self.ledger.cluster.groups[group].heap)
        self._held.append((group, entry))

    def restore_held(self) -> None:
        """The offer is over: entries set aside by :meth:`skip` go back."""
        self._seen_mi = -1
        if self._held:
            groups = self.ledger.cluster.groups
            for g, entry in self._held:
                grp = groups[g]
                _lower_top(grp, entry.tier, entry.rank)
                heappush(grp.heap, entry)
            self._held.clear()

    def bound(self, mi: int, u: int) -> HeapEntry | None:
        """A lower bound on the heap entries of every user but ``u`` in the groups whose task
        fits on ``mi`` (None: there is none). A heap's top bounds all its entries; when the
        top is ``u``'s own, the first valid entry under it does.

        Parameters
        ----------
        mi : int
            The machine's index.
        u : int
            The batch's user.

        Returns
        -------
        tuple or None
        """
        if self._seen_mi == mi and self._seen_user == u:
            self._seen_mi = -1
            return self._recorded_bound(u)
        ledger = self.ledger
        cs = ledger.cluster
        free = cs.free[mi]
        room = self.room
        # The lowest entry so far (read while found), compared field by field
        # (entry_before), as in select.
        best = _NO_ENTRY
        best_tier = 0
        best_rank = 0.0
        found = False
        width = len(free)
        free0 = free[0] if width > 0 else 0.0
        free1 = free[1] if width > 1 else 0.0
        # Only listed groups can hold a valid entry (see ClusterState.afor).
        for grp in cs.afor[mi]:
            heap = grp.heap
            if not heap:
                continue
            # Select's two tests, written out as there (a call per group scanned would cost
            # this loop and select's about 1% of a saturated replay): a group whose (tier,
            # rank) bound is above the lowest so far holds nothing lower, and one whose task
            # does not fit is passed, both before a look at its heap (the result is the same;
            # only the stale entries under u's that a look drops stay).
            if found:
                tier = grp.top_tier
                if tier > best_tier or (tier == best_tier and grp.top_rank > best_rank):
                    continue
            if not fits_first_two(free0, free1, grp):
                continue
            if room is None:
                if width > 2 and not fits(free, grp.demand):
                    continue
            elif not room.room(mi, free, grp.demand):
                continue
            some, cand = self._other_top(heap, u)
            if not some or (found and not entry_before(cand, best)):
                continue
            best = cand
            best_tier = cand.tier
            best_rank = cand.rank
            found = True
        return best if found else None

    def _recorded_bound(self, u: int) -> HeapEntry | None:
        """:meth:`bound` from what the last selection saw, which picked ``u`` on the same
        machine with nothing pushed since (the batch's first launch changed only ``u``'s
        state): the lowest valid top of another user among the fitting groups it read, the
        next entries under ``u``'s tops, and for the fitting groups it passed unread their
        (tier, rank) bound, as an entry before any other of that tier and rank (a batch
        ends on it when ``u`` reaches it; bound's own scan would have read those tops, so
        a batch may end sooner, with the same decisions)."""
        found = self._passed
        best = HeapEntry(self._passed_tier, self._passed_rank, -math.inf, 0, -1, 0)
        if self._has_second:
            second = self._second
            if not found or entry_before(second, best):
                best = second
                found = True
        mine = self._mine
        for i in range(self._mine_count):
            some, cand = self._other_top(mine[i], u)
            if some and (not found or entry_before(cand, best)):
                best = cand
                found = True
        return best if found else None

    def _other_top(self, heap: list[HeapEntry], u: int) -> tuple[bool, HeapEntry]:
        """The lowest entry of a group's ``heap`` that may be another user's than ``u``:
        its top, or when the top is ``u``'s the first valid entry under it (False: none).
        The stale entries that surface under ``u``'s (its own older ones above all) are
        dropped, and ``u``'s entry goes back."""
        if not heap:
            return False, _NO_ENTRY
        cand = heap[0]
        if cand.user == u:
            # The lower child bounds everything under the top: it is the answer when it is
            # another user's valid entry (stale entries are few: a push replaces its user's
            # top).
            size = len(heap)
            if size == 1:
                return False, _NO_ENTRY
            cand = heap[1]
            if size > 2:
                right = heap[2]
                if entry_before(right, cand):
                    cand = right
            if cand.user != u and self._current(cand):
                return True, cand
            mine = heappop(heap)
            while heap and not self._current(heap[0]):
                heappop(heap)
            if not heap:
                heappush(heap, mine)
                return False, _NO_ENTRY
            cand = heap[0]
            heappush(heap, mine)
        return True, cand


def _lower_top(grp: Group, tier: int, rank: float) -> None:
    """An entry of ``tier`` and ``rank`` is about to be pushed on ``grp``'s heap: its (tier,
    rank) bound on the top (:class:`~fairshare.policies.records.Group`) takes the entry's
    when the heap is empty or the entry's is lower."""
    if not grp.heap or tier < grp.top_tier or (tier == grp.top_tier and rank < grp.top_rank):
        grp.top_tier = tier
        grp.top_rank = rank
