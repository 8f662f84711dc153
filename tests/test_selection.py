"""The per-group heap selection (:mod:`fairshare.policies.selection`): its shortcuts (the
demand floor that ends an offer, the fit test before a look at a heap, stale entries dropped
in bulk) pick exactly the user a full scan of every entry picks, and keep the heaps bounded
by their users, not by the run's length; the groups listed for each machine (``afor``, one
list shared by the machines of a profile) are exactly the listed groups it may run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies.choosy import ChoosyRanking
from fairshare.policies.drf import DrfRanking
from fairshare.policies.fair import FairRanking
from fairshare.policies.fifo import FifoRanking
from fairshare.policies.ranking import NO_PICK, Pick, Ranking, rank_before
from fairshare.policies.records import HeapEntry, entry_before
from fairshare.policies.scheduler import Scheduler
from fairshare.policies.selection import STALE_SLACK, HeapSelection
from fairshare.policies.state import fits
from fairshare.policies.tsf import TsfRanking
from fairshare.sim.engine import MachineEvent, simulate
from fairshare.workload.model import FixedDuration, Job


def _full_scan(selection: HeapSelection, mi: int) -> Pick:
    """The lowest valid entry over every group listed for ``mi`` whose task fits, each heap
    read whole (no shortcut); ties to the group listed first."""
    ledger: Any = selection.ledger
    cs = ledger.cluster
    best: HeapEntry | None = None
    best_group = -1
    for grp in cs.afor[mi]:
        g = grp.index
        if not fits(cs.free[mi], grp.demand):
            continue
        for entry in sorted(grp.heap):
            user = ledger.users[entry.user]
            if entry.version == user.version and g in user.job_heaps and user.running < user.cap:
                if best is None or entry.key() < best.key():
                    best, best_group = entry, g
                break
    return NO_PICK if best is None else (best.user, best_group)


def _check_top_bounds(selection: HeapSelection) -> None:
    """Each group's (top_tier, top_rank) is at most its heap top's (tier, rank)."""
    ledger: Any = selection.ledger
    for grp in ledger.cluster.groups:
        if grp.heap:
            assert (grp.top_tier, grp.top_rank) <= grp.heap[0].key()[:2]


def _full_bound(selection: HeapSelection, mi: int, u: int) -> HeapEntry | None:
    """The lowest valid entry of a user but ``u`` over every group listed for ``mi`` whose
    task fits, each heap read whole."""
    ledger: Any = selection.ledger
    cs = ledger.cluster
    best: HeapEntry | None = None
    for grp in cs.afor[mi]:
        g = grp.index
        if not fits(cs.free[mi], grp.demand):
            continue
        for entry in grp.heap:
            user = ledger.users[entry.user]
            current = entry.version == user.version and user.running < user.cap
            valid = current and g in user.job_heaps
            if valid and entry.user != u and (best is None or entry.key() < best.key()):
                best = entry
    return best


class _Checked(HeapSelection):
    """The selection, each pick compared with the full scan, each bound checked to be one
    (from the last selection's record or from a scan), and every heap's size checked."""

    def __init__(self) -> None:
        super().__init__()
        self.selects = 0
        self.largest_heap = 0
        self.largest_of: dict[int, int] = {}
        self.bounds = 0
        self.recorded_bounds = 0
        # Per group, the most users it had at a push since its heap was last within the
        # bound of its users then: users leave a group without a push, and its stale entries
        # wait for the next push (or to surface), so the bound is that of the most users.
        self.peak_users: dict[int, int] = {}

    def _push(self, g: int, entry: HeapEntry) -> None:
        users = len(self.ledger.cluster.groups[g].users)
        self.peak_users[g] = max(self.peak_users.get(g, 0), users)
        super()._push(g, entry)

    def bound(self, mi: int, u: int) -> HeapEntry | None:
        self.bounds += 1
        self.recorded_bounds += self._seen_mi == mi and self._seen_user == u
        expected = _full_bound(self, mi, u)
        got = super().bound(mi, u)
        if got is None:
            assert expected is None  # nobody bounds the batch: nobody else fits
        elif expected is not None:
            assert got.key()[:4] <= expected.key()[:4]
        return got

    def select(self, mi: int) -> Pick:
        expected = _full_scan(self, mi)
        _check_top_bounds(self)
        got = super().select(mi)
        assert got == expected
        _check_top_bounds(self)
        self.selects += 1
        ledger: Any = self.ledger
        cs = ledger.cluster
        for machine in range(len(cs.names)):
            assert cs.afor[machine] == [
                grp
                for g, grp in enumerate(cs.groups)
                if cs.listed[g] and cs.eligible(grp.cls, machine)
            ]
            assert all(cs.groups[grp.index] is grp for grp in cs.afor[machine])
        for g, grp in enumerate(ledger.cluster.groups):
            self.largest_heap = max(self.largest_heap, len(grp.heap))
            self.largest_of[g] = max(self.largest_of.get(g, 0), len(grp.heap))
            users = len(grp.users)
            peak = max(users, self.peak_users.get(g, 0))
            assert len(grp.heap) <= 2 * peak + STALE_SLACK + 1
            if len(grp.heap) <= 2 * users + STALE_SLACK + 1:
                self.peak_users[g] = users
            if not grp.users:
                assert not grp.heap  # an inactive group holds no entry
        return got


_RANKINGS: dict[str, Callable[[], Ranking]] = {
    "drf": DrfRanking,
    "fair": lambda: FairRanking("fair"),
    "tsf": lambda: TsfRanking(True),
    "fifo": FifoRanking,
    "choosy": lambda: ChoosyRanking(0),
}

_SHAPES = [(1.0, 1.0), (2.0, 1.0), (1.0, 3.0), (3.0, 2.0), (0.5, 0.5)]


def _job_specs(
    users: int, tasks: int, last: st.SearchStrategy[Any], most: int
) -> st.SearchStrategy[list[tuple[int, int, int, int, Any]]]:
    """Jobs as (user, shape, tasks, submit, ``last``) tuples."""
    return st.lists(
        st.tuples(
            st.integers(0, users - 1),
            st.integers(0, len(_SHAPES) - 1),
            st.integers(1, tasks),
            st.integers(0, 20),
            last,
        ),
        min_size=1,
        max_size=most,
    )


@settings(deadline=None)
@given(
    _job_specs(5, 12, st.integers(1, 9), 25),  # the last item: the tasks' duration
    st.sampled_from(sorted(_RANKINGS)),
)
# Found by a random search: a group's heap grew within the bound of its three users, two of
# whom then left it, leaving 68 entries (stale ones, for its next push to drop) for one user.
@example(
    specs=[(0, 0, 3, 0, 6), (0, 0, 8, 2, 1), (0, 0, 11, 1, 8), (1, 0, 12, 0, 8)]
    + [(0, 0, 1, 0, 1)] * 7
    + [(0, 0, 2, 0, 1), (0, 0, 1, 0, 2), (0, 0, 3, 1, 1), (0, 3, 1, 0, 1), (1, 3, 1, 0, 1)]
    + [(2, 0, 1, 3, 1), (2, 2, 4, 0, 1), (2, 3, 4, 1, 3), (3, 1, 3, 3, 3)],
    policy="choosy",
)
def test_selection_picks_what_a_full_scan_picks(
    specs: list[tuple[int, int, int, int, int]], policy: str
) -> None:
    """On random full clusters of mixed shapes, every selection of every offer equals the
    full scan's pick, every heap stays within twice its users plus the slack (its most users
    since it was last within that bound), and a group without users holds no entry."""
    cluster = Cluster.build(
        ["cpu", "mem"],
        [Machine(f"m{i}", np.array([4.0, 4.0 + 2 * i])) for i in range(3)],
    )
    jobs = [
        Job(f"j{k}", float(t), f"u{u}", np.array(_SHAPES[s]), n, FixedDuration(float(d)))
        for k, (u, s, n, t, d) in enumerate(sorted(specs, key=lambda x: x[3]))
    ]
    selection = _Checked()
    sched = Scheduler(cluster, ranking=_RANKINGS[policy](), selection=selection)
    log = simulate(cluster, jobs, sched, seed=0)
    assert log.attempt_count == sum(job.tasks for job in jobs)


def _never_fitting(large: list[str]) -> tuple[Any, _Checked, Scheduler]:
    """DRF on one machine of <4, 4>, every selection checked: a task of <8, 8> (it fits
    nowhere) for each user in ``large``, and 400 small tasks each for users a and b, every one
    of which changes its user's rank twice. Returns the log, the selection and the policy."""
    cluster = Cluster.build(["cpu", "mem"], [Machine("m", np.array([4.0, 4.0]))])
    jobs = [Job(f"large-{u}", 0.0, u, np.array([8.0, 8.0]), 1, FixedDuration(1.0)) for u in large]
    jobs += [Job(f"small-{u}", 0.0, u, np.array([1.0, 1.0]), 400, FixedDuration(1.0)) for u in "ab"]
    selection = _Checked()
    sched = Scheduler(cluster, ranking=DrfRanking(), selection=selection)
    return simulate(cluster, jobs, sched, seed=0), selection, sched


def test_a_group_that_never_fits_keeps_a_bounded_heap() -> None:
    """Users a and b each have a task of <8, 8>, which fits no machine of <4, 4>, while their
    400 small tasks each change their ranks twice: every change pushes an entry in the large
    group, which no selection reads (it never fits). A push over the user's own older top
    replaces it, but the other user's entries pile up under it. The heap is cut back at
    twice its two users plus the slack, where it would otherwise hold about 1,600 entries."""
    log, selection, sched = _never_fitting(["a", "b"])
    assert log.stranded == ("large-a", "large-b")
    assert log.attempt_count == 800
    large_group = sched.ledger.cluster.groups[0]
    assert large_group.demand == (8.0, 8.0)
    assert len(large_group.heap) <= 4 + STALE_SLACK + 1
    # Seen at a selection: within one push of the cut.
    assert selection.largest_of[0] in (4 + STALE_SLACK, 4 + STALE_SLACK + 1)


def test_a_push_over_the_users_own_top_replaces_it() -> None:
    """User a alone has a task of <8, 8> that fits nowhere, and 400 small tasks: each of
    a's about 800 changes of rank pushes an entry in the large group over a's own older
    one, which it replaces (the group's (tier, rank) bound follows the new top); the heap
    holds one entry all along, where it held up to twice its user plus the slack."""
    log, selection, sched = _never_fitting(["a"])
    assert log.stranded == ("large-a",)
    large_group = sched.ledger.cluster.groups[0]
    assert large_group.demand == (8.0, 8.0)
    assert len(large_group.heap) == 1
    user_a = sched.ledger.users[0]
    assert large_group.heap[0].user == user_a.idx
    assert large_group.heap[0].version == user_a.version
    assert (large_group.top_tier, large_group.top_rank) == large_group.heap[0].key()[:2]
    assert selection.largest_of[0] == 1


def test_a_batchs_bound_comes_from_its_selection() -> None:
    """DRF on one machine of <8, 8>: a (tasks of <1, 1>) and b (tasks of <2, 2>) submit at
    once. Every batch's bound is answered from the record of the selection that picked its
    user (no second scan of the groups), and is a lower bound on b's entry (checked)."""
    cluster = Cluster.build(["cpu", "mem"], [Machine("m", np.array([8.0, 8.0]))])
    jobs = [
        Job("x", 0.0, "a", np.array([1.0, 1.0]), 6, FixedDuration(2.0)),
        Job("y", 0.0, "b", np.array([2.0, 2.0]), 3, FixedDuration(3.0)),
    ]
    selection = _Checked()
    sched = Scheduler(cluster, ranking=DrfRanking(), selection=selection)
    log = simulate(cluster, jobs, sched, seed=0)
    assert log.attempt_count == 9
    assert selection.bounds > 0
    assert selection.recorded_bounds == selection.bounds


@settings(deadline=None)
@given(
    # The last item: a constraint or a whitelist.
    _job_specs(4, 8, st.sampled_from([None, "fast", "m0,m2", "m1,m4", "m3"]), 20),
    st.lists(st.integers(1, 20), max_size=3),  # times machines join
)
def test_machines_alike_share_their_listed_groups(
    specs: list[tuple[int, int, int, int, str | None]], joins: list[int]
) -> None:
    """Attribute constraints, whitelists (classes read by name, which split the machines of
    one signature) and machines joining mid-run: at every selection each machine's listed
    groups are exactly the listed groups whose class may use it, and picks match the scan."""
    machines = [
        Machine(f"m{i}", np.array([4.0, 8.0]), rack=f"r{i % 2}", attributes={"fast": i % 2 == 0})
        for i in range(4)
    ]
    cluster = Cluster.build(["cpu", "mem"], machines)
    jobs = []
    for k, (u, shape, n, t, rule) in enumerate(sorted(specs, key=lambda x: x[3])):
        whitelist = frozenset(rule.split(",")) if rule is not None and "," in rule else None
        constraint = Constraint(rule) if rule == "fast" else None
        if rule == "m3":
            whitelist = frozenset({"m3"})
        jobs.append(
            Job(
                f"j{k}",
                float(t),
                f"u{u}",
                np.array(_SHAPES[shape]),
                n,
                FixedDuration(3.0),
                constraint=constraint,
                machines=whitelist,
            )
        )
    events = [
        MachineEvent(float(t), "add", Machine(f"m{4 + i}", np.array([4.0, 8.0]), rack="r0"))
        for i, t in enumerate(sorted(joins))
    ]
    selection = _Checked()
    sched = Scheduler(cluster, ranking=DrfRanking(), selection=selection)
    log = simulate(cluster, jobs, sched, seed=0, machine_events=events)
    assert len(log.jobs) == len(jobs)
    cs = sched.ledger.cluster
    # Machines of one profile share one list object; machines alike for every class share
    # a profile.
    for machine in range(len(cs.names)):
        assert cs.afor[machine] is cs.profile_groups[cs.profile[machine]]


_FIELDS = st.tuples(
    st.integers(-3, 0),
    st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, float("inf")]),
    st.sampled_from([0.0, 1.0, 2.0, float("inf")]),
    st.integers(0, 3),
    st.integers(-1, 3),
    st.integers(0, 2),
)


@settings(max_examples=300, deadline=None)
@given(a=_FIELDS, b=_FIELDS)
def test_heap_entries_order_as_their_tuples(
    a: tuple[int, float, float, int, int, int], b: tuple[int, float, float, int, int, int]
) -> None:
    """A heap entry compares (``<``, ``entry_before``) and a user's key against an entry
    compares (``rank_before``) as the tuples they stand for: heaps of entries keep the
    order heaps of tuples kept, equal floats (-0.0 and 0.0) passing to the next field."""
    first, second = HeapEntry(*a), HeapEntry(*b)
    assert first.key() == a
    assert (first < second) is (a < b)
    assert entry_before(first, second) is (a < b)
    assert rank_before(a[0], a[1], a[2], a[3], second) is (a[:4] < b[:4])
    assert sorted([first, second], key=HeapEntry.key) == sorted([first, second])
