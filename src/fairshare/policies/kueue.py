"""Kueue's admission rules (kubernetes-sigs/kueue, ``pkg/scheduler``), on the composed core:
policy ``kueue`` (fair sharing on: Kueue's ``fairSharing.enable: true``) and
``kueue-classical`` (fair sharing off).

The scenario's queues are Kueue's objects (:mod:`fairshare.policies.kueue_tree`): a queue with
no child queue is a ClusterQueue (CQ), a queue with children a Cohort, each user a LocalQueue
(LQ) of its queue's CQ. A job is a Kueue *workload*: admitted whole or not at all (every job
is a gang of all its tasks, ``min_tasks = tasks``), against its CQ's quota.

What implements what:

- *Quota* (:class:`KueueQuota`, the one filter placement and admission ask): a workload fits
  when its whole request fits what its CQ may still use (Kueue's ``available``: its nominal
  quota, then what its cohort tree lends, up to ``borrowing_limit``; a CQ without a cohort
  cannot borrow). A user whose queue is no CQ (the root, or a queue with child queues) is
  governed by no quota: its workloads wait only for room on the machines.
- *Order* (:class:`KueueAdmission`): the scheduling cycle of ``scheduler.go``. Each CQ
  nominates its head (``BestEffortFIFO``: higher priority first, then earlier submission;
  with a usage half-life, Admission Fair Sharing puts first the LocalQueue with the lowest
  decayed usage over its weight, ``queueOrderingFunc``); the heads are tried in the order of
  the fair-sharing iterator (``fair_sharing_iterator.go``: the tournament that, level by level
  from the root cohort, prefers the child that does not borrow on the workload's resources,
  then the lowest dominant resource share *after* admission, then priority, then submission),
  or without fair sharing of the classical iterator (non-borrowing first, priority,
  submission). A head that neither fits nor can preempt is set aside (inadmissible) until
  work ends or machines change; its CQ's next workload is the head of the next cycle.
- *Preemption*, only where the CQ's ``preemption`` enables it (``preemption.go``): candidates
  are workloads of the same CQ (``within_cluster_queue``) and of borrowing CQs of the cohort
  tree (``reclaim_within_cohort``), ordered by ``CandidatesOrdering`` (other CQs first, lower
  priority, most recently admitted). With fair sharing, the targets follow
  ``TargetClusterQueueOrdering`` (the CQ whose branch has the highest share) and the
  strategies ``LessThanOrEqualToFinalShare`` then ``LessThanInitialShare`` at the two
  branches' almost-least-common ancestors; a preemptor within its nominal quota takes
  candidates regardless of shares (``FairSharingPreemptWithinNominal``). Without fair sharing,
  classical preemption removes candidates while the workload does not fit
  (``borrow_within_cohort`` decides whether the preemptor may borrow after preempting
  lower-priority work of borrowing CQs). Either way, victims are added back newest last while
  the workload still fits (``fillBackWorkloads``); the workload is admitted at once on the
  room they free.
- *Shares*: :meth:`KueueRanking.reported_shares` gives each CQ's and Cohort's weighted share in
  per mille as Kueue reports ``status.fairSharing.weightedShare``, and each user (LocalQueue)
  its Admission Fair Sharing usage (with a usage half-life) or its dominant share of the
  cluster.

Differences with Kueue (the model has none of these): flavors (a resource's flavors are summed,
or kept apart as resources ``cpu@FLAVOR`` by ``fairshare import kueue --keep-flavors``);
a workload's usage is its running tasks (Kueue keeps a workload's whole quota until it ends);
workloads are admitted in the same instant as the preemptions that make room (Kueue waits for
the evictions); Admission Fair Sharing's entry penalty lasts one decision; FIFO options
``StrictFIFO`` and the feature gates off by default are not modelled.

Examples
--------
One cohort of two ClusterQueues with 5 CPUs each; ``a`` fills the 10 CPUs with 1-CPU
workloads, then ``b``, which reclaims within its cohort, takes its 5 back.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job, Queue, QueuePreemption
>>> cluster = Cluster.build(["cpu"], [Machine("m", np.array([10.0]))])
>>> reclaim = QueuePreemption(reclaim_within_cohort="any")
>>> queues = [
...     Queue("co", quota=(10.0,)),
...     Queue("co/a", quota=(5.0,), preemption=reclaim),
...     Queue("co/b", quota=(5.0,), preemption=reclaim),
... ]
>>> kueue = make_policy("kueue", cluster, queues=queues)
>>> for i in range(10):
...     kueue.job_submitted(0.0, i, Job(f"a{i}", 0.0, "lq-a", np.ones(1), 1, queue="co/a"))
>>> len(kueue.decide(0.0))
10
>>> for i in range(10, 15):
...     kueue.job_submitted(1.0, i, Job(f"b{i}", 1.0, "lq-b", np.ones(1), 1, queue="co/b"))
>>> decisions = kueue.decide(1.0)
>>> sum(type(d).__name__ == "Kill" for d in decisions), [u.running for u in kueue.users]
(5, [5, 5])
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import replace
from heapq import heapify, heappop, heappush
from typing import ClassVar

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster, Machine
from fairshare.policies.drf import DrfRanking
from fairshare.policies.filters import Filter, Stage
from fairshare.policies.gangs import gain
from fairshare.policies.kueue_tree import Drs, KueueTree, Rows
from fairshare.policies.ledger import Ledger
from fairshare.policies.options import PolicyOptions
from fairshare.policies.placer import Placer
from fairshare.policies.protocol import Decision, Kill, TaskRef
from fairshare.policies.records import Demand, JobState, Room, UserState, shown_amount
from fairshare.policies.scheduler import Scheduler
from fairshare.tolerances import FIT
from fairshare.workload.model import Job, Queue, QueuePreemption, User

__all__ = ["Kueue", "KueueAdmission", "KueueClassical", "KueueQuota", "KueueRanking"]

SAMPLING_INTERVAL = 300.0
"""Kueue's default ``admissionFairSharing.usageSamplingInterval`` (5 min): the entry penalty
of an admission is its request times ``1 - 2 ** (-interval / half_life)``."""

FREED_KEPT = 4096
"""How many released tasks the fast finish path lets the ledger remember before the placer
forgets them (only waiting gangs read them, through the admission's own counts)."""

UNMANAGED = -1
"""The "ClusterQueue" of users in no ClusterQueue: no quota, no cohort, no preemption."""


@mypyc_attr(allow_interpreted_subclasses=True)
class KueueRanking(DrfRanking):
    """Kueue's quota tree and shares (see the module): a user's own rank is its dominant
    share (as DRF's), which orders nothing here but the reported user shares; the tree gives
    the ClusterQueues' usage, quotas and weighted shares.

    Parameters
    ----------
    queues : sequence of Queue
        The scenario's queues, with their quotas and preemption settings.
    resources : sequence of str
        The cluster's resources.
    """

    def __init__(self, queues: Sequence[Queue], resources: Sequence[str]) -> None:
        super().__init__()
        self.tracks_allocation = True
        self.tracks_resource_usage = True
        self.tree = KueueTree(queues, resources)
        self.settings = [q.preemption for q in queues]
        # Per user index, its ClusterQueue's node (UNMANAGED: none).
        self.cq_of: list[int] = []
        self.managed: list[int] = []

    def on_new_user(self, user: UserState) -> bool:
        """The new user (LocalQueue) belongs to the ClusterQueue of its queue, if that queue
        is one.

        Parameters
        ----------
        user : UserState
            The new user.

        Returns
        -------
        bool
            False: no divisor changes.
        """
        node = self.tree.index.get(user.queue, UNMANAGED)
        if node != UNMANAGED and not self.tree.is_cq[node]:
            node = UNMANAGED
        self.cq_of.append(node)
        if node != UNMANAGED:
            self.managed.append(user.idx)
        return False

    def rows(self) -> Rows:
        """Every node's usage now: what the running tasks of the users of each ClusterQueue
        hold, carried up the tree (:meth:`KueueTree.usage`).

        Returns
        -------
        list of list of float
        """
        users = self.ledger.users
        size = self.tree.resources
        per_cq: dict[int, list[float]] = {}
        for u in self.managed:
            user = users[u]
            if not user.running:
                continue
            row = per_cq.setdefault(self.cq_of[u], [0.0] * size)
            for r, x in enumerate(user.alloc):
                row[r] += x
        return self.tree.usage(per_cq)

    def lq_usage(self, user: UserState, penalty: Sequence[float] | None = None) -> float:
        """The user's (LocalQueue's) Admission Fair Sharing usage: its decayed mean
        consumption per resource (in resource units) plus ``penalty``, summed over resources
        (resource weights 1) and divided by its weight (Kueue's ``CalculateUsage``); 0
        without a usage half-life.

        Parameters
        ----------
        user : UserState
            The user.
        penalty : sequence of float, optional
            Entry penalties of its admissions not yet in its usage.

        Returns
        -------
        float
        """
        ledger = self.ledger
        usage = ledger.resource_usage
        if usage is None or ledger.options.usage_half_life is None:
            return 0.0
        total = ledger.cluster.total
        mean = usage.average(user.idx, ledger.now)
        value = sum(m * t for m, t in zip(mean, total, strict=True))
        if penalty is not None:
            value += sum(penalty)
        if user.weight <= 0:
            return math.inf
        return value / user.weight

    def queue_shares(self) -> dict[str, float]:
        """Each ClusterQueue's and Cohort's weighted share in per mille (see
        :meth:`reported_shares`), without the users'.

        Returns
        -------
        dict of str to float
        """
        tree = self.tree
        rows = self.rows()
        return {path: float(tree.drs(i, rows).per_mille) for i, path in enumerate(tree.paths)}

    def reported_shares(self) -> tuple[dict[str, float], dict[str, float]]:
        """Each ClusterQueue's and Cohort's weighted share in per mille as Kueue reports
        ``status.fairSharing.weightedShare`` (:attr:`Drs.per_mille`), and each user's
        (LocalQueue's) Admission Fair Sharing usage with a usage half-life, else its dominant
        share of the cluster (SPEC section 8.3).

        Returns
        -------
        (dict of str to float, dict of str to float)
        """
        queues = self.queue_shares()
        afs = self.ledger.options.usage_half_life is not None
        users = {u.name: self.lq_usage(u) if afs else self.standing(u) for u in self.ledger.users}
        return queues, users


@mypyc_attr(allow_interpreted_subclasses=True)
class KueueQuota(Filter):
    """Kueue's quota: a workload (a waiting gang: all its tasks) or a task may start only if
    its request fits what its ClusterQueue may still use (:meth:`KueueTree.fits`). Admission
    (:class:`KueueAdmission`) and preemption ask it on their trial usage; placement asks it
    (a ``pick`` filter) for the tasks that start one by one (reducers)."""

    reason: ClassVar[str] = "quota"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The ClusterQueue that cannot hold the request: what it may still use (its nominal
        quota, then what its cohort lends up to its borrowing limit) against what the
        workload asks (see :meth:`~fairshare.policies.filters.Filter.describe`).

        Parameters
        ----------
        job : JobState
        mi : int
        free : sequence of float
        now : float

        Returns
        -------
        str
        """
        ranking = self.ranking()
        node = ranking.cq_of[job.user]
        if node == UNMANAGED:
            return "no quota governs its queue"
        tree = ranking.tree
        rows = ranking.rows()
        names = self.ledger.cluster.resources
        request = self.request(job)
        for r, v in enumerate(request):
            if v > 0 and math.isfinite(tree.subtree[node][r]):
                left = tree.available(rows, node, r)
                if v > left + FIT:
                    return (
                        f"ClusterQueue {tree.paths[node]} uses {shown_amount(rows[node][r])} "
                        f"{names[r]} (nominal quota {shown_amount(tree.subtree[node][r])}); "
                        f"with what its cohort lends it has {shown_amount(left)} more, and "
                        f"the workload asks {shown_amount(v)}"
                    )
        return f"ClusterQueue {tree.paths[node]} cannot hold the workload"

    stage: ClassVar[Stage] = "pick"

    def ranking(self) -> KueueRanking:
        """The policy's ranking, which holds the tree."""
        ranking = self.ledger.ranking
        assert isinstance(ranking, KueueRanking)
        return ranking

    def request(self, job: JobState) -> list[float]:
        """What starting ``job`` asks of its quota: all the tasks of a waiting gang, else one.

        Parameters
        ----------
        job : JobState

        Returns
        -------
        list of float
        """
        count = job.gang if job.gang else 1
        return [d * count for d in job.demand]

    def fits(self, job: JobState, rows: Rows) -> bool:
        """Whether ``job``'s request fits its ClusterQueue on usage ``rows``.

        Parameters
        ----------
        job : JobState
        rows : list of list of float
            Every node's usage (:meth:`KueueRanking.rows`, or a trial one).

        Returns
        -------
        bool
        """
        ranking = self.ranking()
        node = ranking.cq_of[job.user]
        return node == UNMANAGED or ranking.tree.fits(rows, node, self.request(job))

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """:meth:`fits` on the usage now (see :meth:`Filter.admits`).

        Parameters
        ----------
        job : JobState
        mi : int
            Unused: quotas pool the cluster.
        free : sequence of float
            Unused.
        now : float
            Unused.

        Returns
        -------
        bool
        """
        ranking = self.ranking()
        if ranking.cq_of[job.user] == UNMANAGED:
            return True
        return self.fits(job, ranking.rows())


class _Entry:
    """A workload considered for admission: its part, ClusterQueue, request and order."""

    __slots__ = ("cq", "job", "order", "request")

    def __init__(self, job: JobState, cq: int, request: list[float], burst: int) -> None:
        self.job = job
        self.cq = cq
        self.request = request
        self.order = (-job.priority, job.job.submit, burst, job.id)


class KueueAdmission:
    """Kueue's scheduling cycle over the waiting workloads (see the module).

    Parameters
    ----------
    ledger : Ledger
        The state; every launch and kill goes through it (and the placer).
    placer : Placer
        Launches an admitted workload whole (:meth:`Placer.admit_gang`).
    ranking : KueueRanking
        The tree and the shares.
    quota : KueueQuota
        The quota filter (the placer's).
    fair_sharing : bool
        Kueue's ``fairSharing.enable``.
    """

    def __init__(
        self,
        ledger: Ledger,
        placer: Placer,
        ranking: KueueRanking,
        quota: KueueQuota,
        fair_sharing: bool,
    ) -> None:
        self.ledger = ledger
        self.placer = placer
        self.ranking = ranking
        self.quota = quota
        self.fair_sharing = fair_sharing
        # Per ClusterQueue (UNMANAGED too): waiting workloads by (order, part id).
        self.heaps: dict[int, list[tuple[tuple[int, float, int, int], int]]] = {}
        # The fair tie rule for workloads created at the same time (Kueue leaves their order
        # to its heap): a LocalQueue's k-th workload of one instant goes in round k, so a
        # burst of equal timestamps is served round-robin across LocalQueues, not in the
        # order the LocalQueues are listed. Per user: (its last submit time, its round).
        self.burst: dict[int, tuple[float, int]] = {}
        self.rounds: dict[int, int] = {}
        # Heads found inadmissible, until work ends or machines change: those refused by
        # quota or preemption (all tried again), and those whose tasks lacked room, tried
        # again once the room released on machines they may use could make them fit: per
        # demand, by the total gain (gangs.gain) at which that happens for a class that may
        # use every machine; per machine signature, the others (each counting its own gain).
        self.parked: list[int] = []
        self.short: dict[Demand, list[tuple[int, int]]] = {}
        self.gained: dict[Demand, int] = {}
        self.waiters: dict[int, dict[Demand, dict[int, JobState]]] = {}
        self.sigs: dict[int, list[int]] = {}
        self.ready: list[int] = []
        self.gain_of: dict[tuple[Demand, Demand], int] = {}
        # Whether a workload waiting for the room released anywhere may fit now.
        self.due = False
        # Heads refused by quota (of ClusterQueues that do not preempt), per (cohort tree,
        # resource), by the amount of that resource released in the tree (counted since the
        # start, per tree) that could first make them fit.
        self.freed_in: dict[int, list[float]] = {}
        self.quota_wait: dict[tuple[int, int], list[tuple[float, int]]] = {}
        self.reset = False
        self.woken = False
        self.news = False
        # Admission order of running workloads (the most recent is preempted first).
        self.admitted: dict[int, int] = {}
        self.count = 0
        # Entry penalties of this decision's admissions, per user.
        self.penalty: dict[int, list[float]] = {}

    # ------------------------------------------------------------------ the queues

    def submitted(self, part: int) -> None:
        """A workload arrived (or was evicted): it waits in its ClusterQueue.

        Parameters
        ----------
        part : int
            Its map side's part id.
        """
        job = self.ledger.gangs.get(part)
        if job is None:
            return
        cq = self.ranking.cq_of[job.user]
        heap = self.heaps.setdefault(cq, [])
        burst = self.rounds.get(part)
        if burst is None:
            last = self.burst.get(job.user)
            submit = job.job.submit
            burst = last[1] + 1 if last is not None and last[0] == submit else 0
            self.burst[job.user] = (submit, burst)
            self.rounds[part] = burst
        heappush(heap, ((-job.priority, job.job.submit, burst, job.id), part))
        self.news = True

    def wake(self) -> None:
        """Machines or workloads changed: every inadmissible workload is tried again
        (Kueue requeues them when quota or capacity frees)."""
        self.woken = True
        self.reset = True

    def _head(self, cq: int, now: float) -> JobState | None:
        """The ClusterQueue's head: its first waiting workload (with Admission Fair Sharing,
        of the LocalQueue with the lowest usage), taken out of its heap; None when empty."""
        heap = self.heaps.get(cq)
        gangs = self.ledger.gangs
        while heap and heap[0][1] not in gangs:
            heappop(heap)
        if not heap:
            return None
        if cq == UNMANAGED or self.ledger.options.usage_half_life is None:
            return gangs[heappop(heap)[1]]
        # Admission Fair Sharing: LocalQueue usage first, then the base order.
        ranking = self.ranking
        users = self.ledger.users
        best: tuple[float, tuple[int, float, int, int]] | None = None
        pick = -1
        for i, (order, part) in enumerate(heap):
            job = gangs.get(part)
            if job is None:
                continue
            user = users[job.user]
            key = (ranking.lq_usage(user, self.penalty.get(user.idx)), order)
            if best is None or key < best:
                best, pick = key, i
        if pick < 0:
            heap.clear()
            return None
        part = heap[pick][1]
        heap[pick] = heap[-1]
        heap.pop()
        heapify(heap)
        return gangs[part]

    # ------------------------------------------------------------------ the cycle

    def run(self, now: float, out: list[Decision]) -> None:
        """Scheduling cycles until every waiting workload was admitted or set aside: each
        cycle takes one head per ClusterQueue and tries them in the iterator's order.

        Parameters
        ----------
        now : float
            The time of the decision.
        out : list of Decision
            Where launches and kills are appended.
        """
        if self.woken:
            self.woken = False
            if self.reset or self.due or self.ready or self.parked:
                self._unpark()
        if not self.news:
            return
        self.news = False
        self.penalty.clear()
        rows = self.ranking.rows()
        while True:
            entries: list[_Entry] = []
            for cq in sorted(self.heaps):
                job = self._head(cq, now)
                if job is not None:
                    burst = self.rounds.get(job.part_id, 0)
                    entries.append(_Entry(job, cq, self.quota.request(job), burst))
            if not entries:
                break
            for entry in self._ordered(entries, rows):
                job = entry.job
                if self.quota.fits(job, rows):
                    if self.placer.admit_gang(job, now, out):
                        self._admitted(entry, rows, now)
                        continue
                elif entry.cq != UNMANAGED:
                    job.short = 0  # refused by quota, not for room
                    victims = self._preempt(entry, rows)
                    if victims:
                        self._evict(victims, rows, out)
                        if self.quota.fits(job, rows) and self.placer.admit_gang(job, now, out):
                            self._admitted(entry, rows, now)
                            continue
                    elif self.ranking.settings[entry.cq] == QueuePreemption():
                        self._park_quota(entry, rows)
                        continue
                self._park(job)

    def _park_quota(self, entry: _Entry, rows: Rows) -> None:
        """Set aside a head its ClusterQueue's quota refuses, of a ClusterQueue that does not
        preempt: until the tasks released in its cohort tree since could cover what it
        lacks of its most lacking resource (a release raises what the ClusterQueue may use
        by at most what it frees)."""
        tree = self.ranking.tree
        cq = entry.cq
        lack = -1.0
        worst = -1
        for r, v in enumerate(entry.request):
            if v > 0 and math.isfinite(tree.subtree[cq][r]):
                short = v - tree.available(rows, cq, r)
                if short > lack:
                    lack, worst = short, r
        if worst < 0 or lack <= FIT:
            self.parked.append(entry.job.part_id)
            return
        root = tree.root(cq)
        freed = self.freed_in.setdefault(root, [0.0] * tree.resources)
        heap = self.quota_wait.setdefault((root, worst), [])
        heappush(heap, (freed[worst] + lack - FIT, entry.job.part_id))

    def _park(self, job: JobState) -> None:
        """Set an inadmissible head aside (see :meth:`_unpark`)."""
        if job.short <= 0:
            self.parked.append(job.part_id)
            return
        cs = self.ledger.cluster
        cls = cs.groups[job.group].cls
        sigs = self._eligible_sigs(cls)
        if sigs is None:
            demand = job.demand
            total = self.gained.setdefault(demand, 0)
            heappush(self.short.setdefault(demand, []), (total + job.short, job.part_id))
            return
        waiters = self.waiters
        part = job.part_id
        demand = job.demand
        for g in sigs:
            waiting = waiters.get(g)
            if waiting is None:
                waiting = waiters[g] = {}
            alike = waiting.get(demand)
            if alike is None:
                alike = waiting[demand] = {}
            alike[part] = job

    def _eligible_sigs(self, cls: int) -> list[int] | None:
        """The machine signatures class ``cls`` may use; None when it may use every machine
        or its eligibility reads names (then the bound counts every machine)."""
        cs = self.ledger.cluster
        if cs.by_name[cls]:
            return None
        ok = cs.sig_ok[cls]
        if all(ok):
            return None
        known = self.sigs.get(cls)
        if known is None or len(known) > len(ok):
            known = self.sigs[cls] = [g for g, v in enumerate(ok) if v]
        return known

    def released(self, mi: int | None, demand: Demand, user: int) -> None:
        """A task of ``demand`` of user ``user`` stopped on machine ``mi`` (None: unknown,
        every workload set aside tries again): inadmissible workloads are tried again.

        Parameters
        ----------
        mi : int or None
        demand : tuple of float
        user : int
            The task's user (its ClusterQueue's tree gets the quota back).
        """
        self.woken = True
        if mi is None:
            self.reset = True
            return
        cq = self.ranking.cq_of[user]
        if cq != UNMANAGED and self.quota_wait:
            root = self.ranking.tree.root(cq)
            freed_in = self.freed_in.get(root)
            if freed_in is not None:
                for r, amount in enumerate(demand):
                    if amount > 0:
                        total = freed_in[r] = freed_in[r] + amount
                        waits = self.quota_wait.get((root, r))
                        while waits and waits[0][0] <= total:
                            self.ready.append(heappop(waits)[1])
        # The gain per demand asked (one computation for the many waiting alike; demands
        # are few, so each pair's is kept).
        gains: dict[Demand, int] = {}
        known = self.gain_of
        gained = self.gained
        short = self.short
        for d, before in gained.items():
            k = known.get((demand, d), -1)
            if k < 0:
                k = known[(demand, d)] = gain((demand,), d)
            gains[d] = k
            total = gained[d] = before + k
            heap = short.get(d)
            if heap and heap[0][0] <= total:
                self.due = True
        waiting = self.waiters.get(self.ledger.cluster.sig[mi])
        if waiting:
            # (A workload cancelled meanwhile is dropped when it is ready: _unpark.)
            done: list[JobState] = []
            for d, alike in waiting.items():
                if not alike:
                    continue
                k = gains.get(d, -1)
                if k < 0:
                    k = known.get((demand, d), -1)
                    if k < 0:
                        k = known[(demand, d)] = gain((demand,), d)
                    gains[d] = k
                if k <= 0:
                    continue
                for job in alike.values():
                    job.short -= k
                    if job.short <= 0:
                        done.append(job)
            for job in done:
                self._unwait(job)
                self.ready.append(job.part_id)

    def _unwait(self, job: JobState) -> None:
        """Take a workload set aside for room out of the signatures' lists."""
        sigs = self._eligible_sigs(self.ledger.cluster.groups[job.group].cls)
        for g in sigs or ():
            self.waiters[g][job.demand].pop(job.part_id, None)

    def _unpark(self) -> None:
        """Requeue the inadmissible workloads, but not one whose tasks lacked room at its
        last try and that the room released since on the machines it may use cannot have
        made fit: each released task adds at most ``ceil(freed / demand)`` tasks in its most
        generous resource (:func:`~fairshare.policies.gangs.gain`). A finish costs
        O(demands + workloads waiting on its machine's signature), not O(workloads set
        aside)."""
        gangs = self.ledger.gangs
        reset = self.reset
        self.reset = False
        self.due = False
        if reset:
            for waiting in self.waiters.values():
                for alike in waiting.values():
                    self.ready.extend(alike)
                waiting.clear()
            for waits in self.quota_wait.values():
                self.ready.extend(part for _, part in waits)
                waits.clear()
        for demand, heap in self.short.items():
            total = self.gained[demand]
            while heap and (reset or heap[0][0] <= total):
                self.ready.append(heappop(heap)[1])
        for part in dict.fromkeys(self.ready):
            job = gangs.get(part)
            if job is not None:
                job.short = 0
                self.submitted(part)
        self.ready.clear()
        parked = self.parked
        self.parked = []
        for part in parked:
            self.submitted(part)

    def _admitted(self, entry: _Entry, rows: Rows, now: float) -> None:
        """Count an admitted workload's usage in ``rows`` and its entry penalty."""
        self.rounds.pop(entry.job.part_id, None)
        if entry.cq != UNMANAGED:
            self.ranking.tree.add(rows, entry.cq, entry.request)
        self.count += 1
        self.admitted[entry.job.part_id] = self.count
        half_life = self.ledger.options.usage_half_life
        if half_life is not None:
            alpha = 1.0 - 0.5 ** (SAMPLING_INTERVAL / half_life)
            penalty = self.penalty.setdefault(entry.job.user, [0.0] * len(entry.request))
            for r, v in enumerate(entry.request):
                penalty[r] += alpha * v

    def _ordered(self, entries: list[_Entry], rows: Rows) -> Iterator[_Entry]:
        """The cycle's heads in the iterator's order (fair sharing's tournament, recomputed
        after every admission, or the classical sort)."""
        if not self.fair_sharing:
            tree = self.ranking.tree
            entries.sort(
                key=lambda e: (
                    e.cq != UNMANAGED and tree.borrows_with(rows, e.cq, e.request),
                    e.order,
                )
            )
            yield from entries
            return
        left = list(entries)
        while left:
            best = self._tournament(left, rows)
            left.remove(best)
            yield best

    def _tournament(self, entries: list[_Entry], rows: Rows) -> _Entry:
        """The next workload of the fair-sharing iterator: each root cohort's tournament
        winner (``runTournament``), then across trees (which Kueue leaves unordered) by
        priority and submission."""
        tree = self.ranking.tree
        by_root: dict[int, list[_Entry]] = {}
        winners: list[_Entry] = []
        for e in entries:
            if e.cq == UNMANAGED or tree.parent[e.cq] < 0:
                winners.append(e)
            else:
                by_root.setdefault(tree.root(e.cq), []).append(e)
        for root, group in by_root.items():
            values = self._drs_values(group, rows)
            winner = self._run(root, {e.cq: e for e in group}, values)
            assert winner is not None
            winners.append(winner)
        return min(winners, key=lambda e: e.order)

    def _drs_values(self, group: list[_Entry], rows: Rows) -> dict[tuple[int, int], Drs]:
        """Per (cohort, workload), the share after admission of the cohort's child that holds
        the workload (``computeDRS``)."""
        tree = self.ranking.tree
        values: dict[tuple[int, int], Drs] = {}
        for e in group:
            trial = [list(row) for row in rows]
            tree.add(trial, e.cq, e.request)
            node = e.cq
            parent = tree.parent[node]
            while parent >= 0:
                values[(parent, e.job.part_id)] = tree.drs(node, trial)
                node = parent
                parent = tree.parent[node]
        return values

    def _run(
        self, cohort: int, by_cq: dict[int, _Entry], values: dict[tuple[int, int], Drs]
    ) -> _Entry | None:
        """``runTournament``: the winning workload below ``cohort``."""
        tree = self.ranking.tree
        candidates: list[_Entry] = []
        kids = tree.children[cohort]
        for c in kids:
            if not tree.is_cq[c]:
                won = self._run(c, by_cq, values)
                if won is not None:
                    candidates.append(won)
        for c in kids:
            if tree.is_cq[c] and c in by_cq:
                candidates.append(by_cq[c])
        if not candidates:
            return None
        best = candidates[0]
        for e in candidates[1:]:
            if self._less(e, best, cohort, values):
                best = e
        return best

    @staticmethod
    def _less(a: _Entry, b: _Entry, cohort: int, values: dict[tuple[int, int], Drs]) -> bool:
        """``entryComparer.less``: not borrowing on the requested resources at this level,
        then the lower share, then the higher priority, then the earlier submission."""
        da = values[(cohort, a.job.part_id)]
        db = values[(cohort, b.job.part_id)]
        ba = any(a.request[r] > 0 for r in da.borrowing)
        bb = any(b.request[r] > 0 for r in db.borrowing)
        if ba != bb:
            return not ba
        ka, kb = da.key(), db.key()
        if ka != kb:
            return ka < kb
        if a.job.priority != b.job.priority:
            return a.job.priority > b.job.priority
        return a.job.job.submit < b.job.job.submit

    # ------------------------------------------------------------------ preemption

    def _candidates(self, entry: _Entry, rows: Rows) -> list[tuple[JobState, int]]:
        """``findCandidates``: running workloads of the same ClusterQueue that its
        ``within_cluster_queue`` allows, and of the cohort tree's borrowing ClusterQueues
        that its ``reclaim_within_cohort`` allows, using a resource the workload lacks;
        sorted by ``CandidatesOrdering``."""
        ranking = self.ranking
        tree = ranking.tree
        cq = entry.cq
        settings = ranking.settings[cq]
        job = entry.job
        short = [
            r
            for r, v in enumerate(entry.request)
            if v > 0 and math.isfinite(tree.subtree[cq][r]) and v > tree.available(rows, cq, r)
        ]
        if not short:
            short = [r for r, v in enumerate(entry.request) if v > 0]
        root = tree.root(cq) if tree.parent[cq] >= 0 else -1
        borrowing: dict[int, bool] = {}
        out: list[tuple[JobState, int]] = []
        for side in self.ledger.jobs.values():
            if not side.running or side.phase != "map" or side.part_id not in self.admitted:
                continue
            other = ranking.cq_of[side.user]
            if other == UNMANAGED or not any(side.demand[r] > 0 for r in short):
                continue
            if other == cq:
                policy = settings.within_cluster_queue
            elif root >= 0 and tree.root(other) == root:
                policy = settings.reclaim_within_cohort
                is_borrowing = borrowing.get(other)
                if is_borrowing is None:
                    row, cap = rows[other], tree.subtree[other]
                    is_borrowing = borrowing[other] = any(row[r] > cap[r] for r in short)
                if not is_borrowing:
                    continue
            else:
                continue
            if _satisfies(policy, job, side):
                out.append((side, other))
        users = self.ledger.users

        def order(c: tuple[JobState, int]) -> tuple[bool, float, int, int, int]:
            side, other = c
            lq = 0.0
            if other == cq and side.user != job.user:
                lq = -ranking.lq_usage(users[side.user])
            return (other == cq, lq, side.priority, -self.admitted[side.part_id], side.id)

        out.sort(key=order)
        return out

    def _usage_of(self, side: JobState) -> list[float]:
        """What a running workload holds."""
        return [d * side.running for d in side.demand]

    def _preempt(self, entry: _Entry, rows: Rows) -> list[tuple[JobState, int]]:
        """The workloads to preempt so that ``entry`` fits (empty: none can make it fit)."""
        settings = self.ranking.settings[entry.cq]
        if settings == QueuePreemption():
            return []
        candidates = self._candidates(entry, rows)
        if not candidates:
            return []
        if self.fair_sharing:
            return self._fair(entry, rows, candidates)
        return self._classical(entry, rows, candidates)

    def _fits(self, entry: _Entry, rows: Rows, borrow: bool = True) -> bool:
        """``workloadFits``: the request fits (and, ``borrow`` False, borrows nothing)."""
        tree = self.ranking.tree
        if not borrow and tree.borrows_with(rows, entry.cq, entry.request):
            return False
        return tree.fits(rows, entry.cq, entry.request)

    def _remove(self, rows: Rows, victim: tuple[JobState, int], sign: float = -1.0) -> None:
        self.ranking.tree.add(rows, victim[1], self._usage_of(victim[0]), sign)

    def _fill_back(
        self, entry: _Entry, rows: Rows, targets: list[tuple[JobState, int]], borrow: bool
    ) -> list[tuple[JobState, int]]:
        """``fillBackWorkloads``: add victims back, newest choice first, while the workload
        still fits."""
        kept = list(targets)
        for i in range(len(kept) - 2, -1, -1):
            self._remove(rows, kept[i], 1.0)
            if self._fits(entry, rows, borrow):
                kept[i] = kept[-1]
                kept.pop()
            else:
                self._remove(rows, kept[i])
        return kept

    def _classical(
        self, entry: _Entry, rows: Rows, candidates: list[tuple[JobState, int]]
    ) -> list[tuple[JobState, int]]:
        """Classical preemption (``classicalPreemptions``): remove candidates in order while
        the workload does not fit; a preemptor may borrow after preempting only candidates
        its ``borrow_within_cohort`` allows (otherwise it must fit within its quota)."""
        settings = self.ranking.settings[entry.cq]
        tree = self.ranking.tree
        threshold = settings.max_priority_threshold
        job = entry.job
        for borrow in (True, False):
            trial = [list(row) for row in rows]
            targets: list[tuple[JobState, int]] = []
            for cand in candidates:
                side, other = cand
                if other != entry.cq and not any(
                    v > 0 and trial[other][r] > tree.subtree[other][r] + FIT
                    for r, v in enumerate(entry.request)
                ):
                    continue  # its queue no longer borrows: nothing to reclaim there
                if borrow and other != entry.cq:
                    # Preempting another queue's work while borrowing: only lower priorities
                    # under borrowWithinCohort (up to its threshold).
                    if settings.borrow_within_cohort == "never" or side.priority >= job.priority:
                        continue
                    if threshold is not None and side.priority > threshold:
                        continue
                self._remove(trial, cand)
                targets.append(cand)
                if self._fits(entry, trial, borrow):
                    kept = self._fill_back(entry, trial, targets, borrow)
                    return kept
        return []

    def _fair(
        self, entry: _Entry, rows: Rows, candidates: list[tuple[JobState, int]]
    ) -> list[tuple[JobState, int]]:
        """Fair-sharing preemption (``fairPreemptions``): rule S2-a
        (``LessThanOrEqualToFinalShare``), then S2-b (``LessThanInitialShare``) on the
        candidates S2-a passed over."""
        tree = self.ranking.tree
        trial = [list(row) for row in rows]
        tree.add(trial, entry.cq, entry.request)
        targets: list[tuple[JobState, int]] = []
        retry: list[tuple[JobState, int]] = []

        def fits_now() -> bool:
            tree.add(trial, entry.cq, entry.request, -1.0)
            ok = self._fits(entry, trial)
            tree.add(trial, entry.cq, entry.request)
            return ok

        within = not any(
            entry.request[r] > 0 and trial[entry.cq][r] > tree.subtree[entry.cq][r]
            for r in range(tree.resources)
        )
        ordering = _TargetOrdering(tree, entry.cq, candidates)
        done = False
        for target in ordering.targets(trial):
            queue = ordering.queues[target]
            if target == entry.cq or within:
                victim = queue.pop(0)
                self._remove(trial, victim)
                targets.append(victim)
                if fits_now():
                    done = True
                    break
                continue
            mine, theirs = ordering.almost_lcas(target)
            new_share = tree.drs(mine, trial)
            old_share = tree.drs(theirs, trial)
            if new_share.key()[0] == 1 and old_share.key()[0] == 0:
                retry.extend(queue)
                queue.clear()
                continue
            while queue:
                victim = queue.pop(0)
                self._remove(trial, victim)
                after = tree.drs(theirs, trial)
                if new_share.key() <= after.key():
                    targets.append(victim)
                    if fits_now():
                        done = True
                    break
                self._remove(trial, victim, 1.0)
                retry.append(victim)
            if done:
                break
        if not done and retry:
            ordering = _TargetOrdering(tree, entry.cq, retry)
            for target in ordering.targets(trial):
                queue = ordering.queues[target]
                mine, theirs = ordering.almost_lcas(target)
                passed = tree.drs(mine, trial).key() < tree.drs(theirs, trial).key()
                victim = queue.pop(0)
                if passed:
                    self._remove(trial, victim)
                    targets.append(victim)
                    if fits_now():
                        done = True
                        break
                ordering.drop(target)
        if not done:
            return []
        tree.add(trial, entry.cq, entry.request, -1.0)
        return self._fill_back(entry, trial, targets, True)

    def _evict(self, victims: list[tuple[JobState, int]], rows: Rows, out: list[Decision]) -> None:
        """Preempt ``victims`` whole: their tasks are killed and each waits again as a
        workload, set aside until work ends (Kueue requeues an evicted workload)."""
        ledger = self.ledger
        names = ledger.cluster.names
        # The room the kills free is not counted against the set-aside workloads' lack of
        # room (ledger.freed is cleared after this decision): they try again.
        self.wake()
        for side, other in victims:
            assert side.phase == "map"
            self.ranking.tree.add(rows, other, self._usage_of(side), -1.0)
            for t, mi in enumerate(side.where):
                if mi >= 0:
                    out.append(Kill(TaskRef(side.id, "map", t), names[mi]))
            ledger.preemption_state.kills += len(ledger.requeue_gang(side))
            del self.admitted[side.part_id]
            side.short = 0
            self.parked.append(side.part_id)


def _satisfies(policy: str, preemptor: JobState, candidate: JobState) -> bool:
    """``SatisfiesPreemptionPolicy``: whether ``policy`` lets ``preemptor`` preempt
    ``candidate``."""
    if policy == "any":
        return True
    lower = preemptor.priority > candidate.priority
    if policy == "lower_priority":
        return lower
    if policy == "lower_or_newer_equal_priority":
        newer = preemptor.priority == candidate.priority and (
            preemptor.job.submit < candidate.job.submit
        )
        return lower or newer
    return False


class _TargetOrdering:
    """``TargetClusterQueueOrdering``: from the root cohort down, the child with the highest
    share that still has candidates and borrows (see the module)."""

    def __init__(
        self, tree: KueueTree, preemptor: int, candidates: list[tuple[JobState, int]]
    ) -> None:
        self.tree = tree
        self.preemptor = preemptor
        self.queues: dict[int, list[tuple[JobState, int]]] = {}
        for cand in candidates:
            self.queues.setdefault(cand[1], []).append(cand)
        self.ancestors = set(tree.path_up(preemptor)[1:])
        self.pruned: set[int] = set()

    def drop(self, cq: int) -> None:
        """``DropQueue``."""
        self.pruned.add(cq)

    def targets(self, rows: Rows) -> Iterator[int]:
        """The target ClusterQueues, one at a time (the caller pops or drops between)."""
        tree = self.tree
        cq = self.preemptor
        if tree.parent[cq] < 0:
            while cq not in self.pruned and self.queues.get(cq):
                yield cq
            return
        root = tree.root(cq)
        while root not in self.pruned:
            target = self._next(root, rows)
            if target is not None:
                yield target

    def _next(self, cohort: int, rows: Rows) -> int | None:
        tree = self.tree
        negative = (0, -1.0)
        best_cq, best_cq_key = -1, negative
        best_co, best_co_key = -1, negative
        for c in tree.children[cohort]:
            if c in self.pruned:
                continue
            drs = tree.drs(c, rows)
            key = drs.key()
            if tree.is_cq[c]:
                if (not drs.borrowing and c != self.preemptor) or not self.queues.get(c):
                    self.pruned.add(c)
                elif key > best_cq_key:
                    best_cq, best_cq_key = c, key
            elif not drs.borrowing and c not in self.ancestors:
                self.pruned.add(c)
            elif key >= best_co_key:
                best_co, best_co_key = c, key
        if best_cq < 0 and best_co < 0:
            self.pruned.add(cohort)
            return None
        if best_co >= 0 and best_co_key >= best_cq_key:
            return self._next(best_co, rows)
        return best_cq

    def almost_lcas(self, target: int) -> tuple[int, int]:
        """The preemptor's and the target's almost-least-common ancestors (the children of
        their lowest common cohort on the way to each)."""
        tree = self.tree
        lca = next(a for a in tree.path_up(target)[1:] if a in self.ancestors)

        def below(node: int) -> int:
            while tree.parent[node] != lca:
                node = tree.parent[node]
            return node

        return below(self.preemptor), below(target)


@mypyc_attr(allow_interpreted_subclasses=True)
class Kueue(Scheduler):
    """Kueue with fair sharing (``fairSharing.enable: true``; see the module).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (LocalQueues), in scenario order.
    queues : sequence of Queue
        ClusterQueues and Cohorts, with quotas, limits, weights and preemption settings.
    options : PolicyOptions, optional
        ``usage_half_life`` turns on Admission Fair Sharing; FAIR's ``preemption`` timeouts
        do not apply (Kueue preempts by its queues' settings).
    """

    name = "kueue"
    fair_sharing = True

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        ranking = KueueRanking(queues, cluster.resources)
        # The generic quota filter and tree (fairshare.policies.quota) stay off: Kueue's own
        # quotas are the tree's.
        plain = [replace(q, quota=None, borrowing_limit=None, lending_limit=None) for q in queues]
        quota = KueueQuota()
        super().__init__(
            cluster, users=users, queues=plain, options=options, ranking=ranking, filters=[quota]
        )
        self.placer.gang_admission = False
        self.admission = KueueAdmission(
            self.ledger, self.placer, ranking, quota, type(self).fair_sharing
        )

    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        """A workload arrives: admitted whole (a gang of all its tasks) or not at all.

        Parameters
        ----------
        now : float
        job_id : int
        job : Job
        blocks : sequence of sequence of str, optional
        """
        if job.min_tasks is None:
            job = replace(job, min_tasks=job.tasks)
        super().job_submitted(now, job_id, job, blocks)
        self.admission.submitted(job_id)

    def task_finished(self, now: float, task: TaskRef) -> None:
        """A task ended: its quota frees; inadmissible workloads are tried again.

        Parameters
        ----------
        now : float
        task : TaskRef
        """
        self._released(task)
        super().task_finished(now, task)

    def tasks_finished_at(self, now: float, tasks: Sequence[TaskRef]) -> None:
        """:meth:`task_finished` for each task in order (each frees its quota first).

        Parameters
        ----------
        now : float
        tasks : sequence of TaskRef
        """
        for task in tasks:
            self.task_finished(now, task)

    def task_failed(self, now: float, task: TaskRef) -> None:
        """A task failed (see :meth:`task_finished`).

        Parameters
        ----------
        now : float
        task : TaskRef
        """
        self._released(task)
        super().task_failed(now, task)

    def _released(self, task: TaskRef) -> None:
        """Tell the admission where the room of a stopping task frees."""
        mi = self.ledger.machine_of(task)
        part = self.ledger.part_of(task)
        self.admission.released(mi, part.demand, part.user)

    def machine_added(self, now: float, machine: Machine) -> None:
        """A machine joined: inadmissible workloads are tried again.

        Parameters
        ----------
        now : float
        machine : Machine
        """
        super().machine_added(now, machine)
        self.admission.wake()

    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
        """A machine left (its tasks are lost and pending again).

        Parameters
        ----------
        now : float
        name : str

        Returns
        -------
        list of TaskRef
        """
        lost = super().machine_removed(now, name)
        self.admission.wake()
        return lost

    def job_cancelled(self, now: float, job_id: int) -> list[TaskRef]:
        """A workload left: its quota frees.

        Parameters
        ----------
        now : float
        job_id : int

        Returns
        -------
        list of TaskRef
        """
        stopped = super().job_cancelled(now, job_id)
        self.admission.wake()
        return stopped

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        """:meth:`task_finished` then :meth:`decide`, with a fast path when only workloads
        (gangs) wait: the finished task's machine is re-bucketed at once rather than offered,
        since no task waits to be placed one by one (the scheduler's fused path is off for a
        policy with a ``pick`` filter).

        Parameters
        ----------
        now : float
        task : TaskRef

        Returns
        -------
        list of Decision
        """
        ledger = self.ledger
        job = ledger.jobs.get(task.job) if task.phase == "map" else None
        if (
            job is None
            or job.maps_done + 1 == job.reduce_after
            or ledger.cluster.active_groups
            or ledger.dirty
            or ledger.offers
            or ledger.wakeups
        ):
            return super().finish_and_decide(now, task)
        ledger.now = now
        mi = ledger.release((task,), finished=True, then="settle")
        admission = self.admission
        admission.released(mi, job.demand, job.user)
        out: list[Decision] = []
        admission.run(now, out)
        if out or ledger.dirty or ledger.offers or len(ledger.freed) > FREED_KEPT:
            # Offers of room to the tasks that start one by one, and the room released
            # since the last cycle forgotten (the placer clears it).
            self.placer.place(now, out)
        return out

    def quiescent(self) -> bool:
        """Whether finishes may be held back (the protocol's promise): nothing waits (no
        workload, no task, no machine or job to offer, no wake-up).

        Returns
        -------
        bool
        """
        ledger = self.ledger
        return (
            not ledger.gangs
            and not ledger.cluster.active_groups
            and not ledger.dirty
            and not ledger.offers
            and not ledger.wakeups
        )

    def tasks_finished(
        self, now: float, tasks: Sequence[TaskRef], times: Sequence[float] | None = None
    ) -> None:
        """Finishes held back while :meth:`quiescent`, released in order, their machines
        re-bucketed (nothing waits to be offered them; no workload waits for their room).

        Parameters
        ----------
        now : float
            The time of the last of them.
        tasks : sequence of TaskRef
            The finished tasks, in order.
        times : sequence of float, optional
            Each one's time, at which its usage over time is booked (None: all at ``now``).
        """
        ledger = self.ledger
        ledger.release(tasks, finished=True, then="settle", times=times)
        ledger.now = now
        self.admission.wake()

    def decide(self, now: float) -> list[Decision]:
        """Kueue's scheduling cycles (admissions and preemptions), then the offers of room to
        the tasks that start one by one.

        Parameters
        ----------
        now : float

        Returns
        -------
        list of Decision
        """
        out: list[Decision] = []
        ledger = self.ledger
        ledger.now = now
        wakeups = ledger.wakeups
        while wakeups and wakeups[0] <= now:
            heappop(wakeups)
        self.admission.run(now, out)
        self.placer.place(now, out)
        return out


@mypyc_attr(allow_interpreted_subclasses=True)
class KueueClassical(Kueue):
    """Kueue without fair sharing (``fairSharing.enable: false``): the classical iterator
    and classical preemption (see the module); constructed as :class:`Kueue`."""

    name = "kueue-classical"
    fair_sharing = False
