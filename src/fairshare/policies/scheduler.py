"""The scheduler every online policy is: a façade that implements the protocol
(:mod:`fairshare.policies.protocol`) by delegating to the composed core.

| object | what it does | module |
| --- | --- | --- |
| :class:`~fairshare.policies.ledger.Ledger` | owns the state; one function per change of it | ``ledger.py`` |
| :class:`~fairshare.policies.ranking.Ranking` | the order of users, jobs and gangs; preemption's fair shares | ``ranking.py``, one per policy |
| :class:`~fairshare.policies.ranking.Selection` | which (user, group) a machine serves next | ``selection.py`` (heaps), ``hdrf.py`` (the tree) |
| filters | may this task go on this machine now | ``filters.py``, ``headroom.py`` |
| :class:`~fairshare.policies.placer.Placer` | offers machines under the filters | ``placer.py`` |
| :class:`~fairshare.policies.preemption.Preemptor` | kills to make room, under the same filters | ``preemption.py`` |

A policy is a ranking, optionally its own selection, and filters, with the mechanisms of
:class:`~fairshare.policies.options.PolicyOptions` (each a filter, or a ranking or ledger
input); :func:`~fairshare.policies.make_policy` builds the registered ones. The fast paths
are properties of the composed objects, decided once here: batched launches when the
selection vouches for its bound and no ``pick`` filter is on; the fused finish
(:meth:`Scheduler.finish_and_decide`) when, besides, no copy-compute splitting, preemption or
room filter other than the plain fit test is on; finishes held back while quiescent when,
besides, the ranking reads no per-resource allocation.

Order of work inside :meth:`Scheduler.decide`: the placer's offers (:meth:`Placer.place`),
then with preemption on the kills (FAIR section 3.2) and the placements on the room they free.

Examples
--------
The base ranking orders users by running tasks over weight (a max-min of tasks): on six
slots, user a of weight 2 gets four tasks and b two.

>>> import numpy as np
>>> from collections import Counter
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import Scheduler
>>> from fairshare.workload.model import Job, User
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([6.0]))])
>>> users = [User("a", np.array([1.0]), weight=2.0), User("b", np.array([1.0]))]
>>> policy = Scheduler(cluster, users=users)
>>> policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0]), 10))
>>> policy.job_submitted(0.0, 1, Job("y", 0.0, "b", np.array([1.0]), 10))
>>> sorted(Counter(d.task.job for d in policy.decide(0.0)).items())
[(0, 4), (1, 2)]
"""  # noqa: E501 (the objects' table is one row per line)

from __future__ import annotations

import math
from collections.abc import Sequence
from heapq import heappop
from typing import ClassVar, Final

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster, Machine
from fairshare.policies.filters import (
    CopyAdmission,
    DelayScheduling,
    Eligibility,
    Filter,
    Fit,
    Quota,
    Reservation,
)
from fairshare.policies.gangs import Reservation as GangReservation
from fairshare.policies.headroom import Headroom
from fairshare.policies.ledger import Ledger
from fairshare.policies.options import PolicyOptions
from fairshare.policies.placer import Placer
from fairshare.policies.preemption import Preemptor
from fairshare.policies.protocol import Decision, TaskRef
from fairshare.policies.quota import QuotaTree
from fairshare.policies.ranking import NO_PICK, Pick, Ranking, Selection
from fairshare.policies.records import Demand, JobState, PreemptionState, Room, UserState
from fairshare.policies.selection import HeapSelection
from fairshare.policies.state import ClusterState
from fairshare.workload.model import Job, Queue, User

RERANK_FRACTION: Final = 1.0 / 32.0
"""With usage over time, every rank is recomputed at least once per this fraction of the
half-life: between two recomputations a standing's decayed part drifts by at most
``1 - 2 ** -RERANK_FRACTION`` (2.1%), as Slurm's ``PriorityCalcPeriod`` and Kueue's
``usageSamplingInterval`` bound theirs, but driven by the run's own events, not a clock."""


def mechanism_filters(options: PolicyOptions, queues: Sequence[Queue]) -> list[Filter]:
    """The filters the options and the queues turn on, in the order placement asks them:
    eligibility, the room filter (headroom, else the plain fit test), quotas, EASY
    backfilling's reservation, delay scheduling, copy-compute admission.

    Parameters
    ----------
    options : PolicyOptions
        The mechanisms' settings.
    queues : sequence of Queue
        The queue hierarchy (quotas, when a queue has one).

    Returns
    -------
    list of Filter

    Examples
    --------
    >>> [f.name for f in mechanism_filters(PolicyOptions(headroom=True), ())]
    ['eligibility', 'headroom']
    """
    filters: list[Filter] = [Eligibility(), Headroom() if options.headroom else Fit()]
    if any(q.quota is not None for q in queues):
        filters.append(Quota())
    if options.backfill is not None:
        # Before delay scheduling: a launch the reservation refuses starts no locality wait.
        filters.append(Reservation())
    if options.delay is not None or options.job_delays:
        filters.append(DelayScheduling())
    if options.copy_compute is not None:
        filters.append(CopyAdmission())
    return filters


@mypyc_attr(allow_interpreted_subclasses=True)
class Scheduler:
    """Share-ordered online scheduling with delay scheduling and preemption: the protocol's
    events on the composed core (see the module).

    Used as it is, it orders users by running tasks over weight. Build a registered policy
    with :func:`~fairshare.policies.make_policy`.

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (weights, minimum shares, caps, queues) in scenario order, the
        order of ties; a job's user not listed joins with its job's weight and queue.
    queues : sequence of Queue
        The queue hierarchy (H-DRF section 2.1), for the policies that read it.
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting,
        backfilling (default: none).
    ranking : Ranking, optional
        The policy's order (default: running tasks over weight).
    selection : Selection, optional
        The policy's selection (default: the per-group user heaps).
    filters : sequence of Filter
        The policy's own filters, asked after the mechanisms' (:func:`mechanism_filters`).

    Attributes
    ----------
    name : str
        The policy's SPEC name (``base`` here; every policy sets its own).
    overcommits : bool
        Whether the tasks it places on a machine may demand more than the machine has.
    ledger : Ledger
        The state.
    placer : Placer
        The placement and its filters.
    fused : bool
        Whether :meth:`finish_and_decide` may take its fast path (see the module).
    quiet : bool
        Whether finishes may be held back while :meth:`quiescent`.
    """

    name: ClassVar[str] = "base"
    overcommits: ClassVar[bool] = False

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
        ranking: Ranking | None = None,
        selection: Selection | None = None,
        filters: Sequence[Filter] = (),
    ) -> None:
        self.options = options if options is not None else PolicyOptions()
        opts = self.options
        self.ranking = ranking if ranking is not None else Ranking()
        if opts.usage_half_life is not None:
            # A standing moves with time, so the rank is the ranking's (user_rank), never
            # the share read inline.
            self.ranking.by_share = False
        self.selection = selection if selection is not None else HeapSelection()
        self.ledger = Ledger(
            cluster, queues=queues, options=opts, ranking=self.ranking, selection=self.selection
        )
        self.placer = Placer(
            self.ledger, self.selection, [*mechanism_filters(opts, queues), *filters]
        )
        self.preemptor = Preemptor(self.ledger, self.ledger, self.placer)
        self.ledger.add_users(users)
        self.selection.ready()
        placer = self.placer
        # The fused finish: batched launches, and nothing the general path must see.
        self.fused = (
            placer.batching
            and opts.copy_compute is None
            and opts.preemption is None
            and placer.room is None
        )
        # Finishes held back while nobody waits: the fused path, and no per-resource
        # allocation to keep up to date (usage over time is booked at each finish's time).
        self.quiet = self.fused and not self.ranking.tracks_allocation
        # Usage over time: every rank is recomputed at least once per RERANK_FRACTION of the
        # half-life (a user's own events recompute its rank at once), so that an idle user's
        # decaying past counts while it waits (see fairshare.policies.usage).
        half_life = opts.usage_half_life
        if half_life is None and self.ledger.resource_usage is not None:
            half_life = self.ledger.resource_usage.half_life
        self.rerank_every = math.inf if half_life is None else half_life * RERANK_FRACTION
        self.rerank_at = self.rerank_every
        # Only delay-scheduling waits and preemption timeouts ask for wake-ups.
        self.uses_wakeups = (
            opts.delay is not None or bool(opts.job_delays) or opts.preemption is not None
        )

    # ------------------------------------------------------------------ the state, read

    @property
    def cluster(self) -> ClusterState:
        """Machines, free room, constraint classes and groups."""
        return self.ledger.cluster

    @property
    def users(self) -> list[UserState]:
        """The users (or FAIR pools) in order of appearance."""
        return self.ledger.users

    @property
    def jobs(self) -> dict[int, JobState]:
        """The job parts with work left, by part id."""
        return self.ledger.jobs

    @property
    def gangs(self) -> dict[int, JobState]:
        """Gangs waiting for admission, by part id."""
        return self.ledger.gangs

    @property
    def queues(self) -> tuple[Queue, ...]:
        """The queue hierarchy."""
        return self.ledger.queues

    @property
    def quotas(self) -> QuotaTree | None:
        """The queues' quotas, when a queue has one."""
        return self.ledger.quotas

    @property
    def preemption_state(self) -> PreemptionState:
        """What preemption remembers between decisions (timers, protected tasks, kills)."""
        return self.ledger.preemption_state

    @property
    def reservation(self) -> GangReservation | None:
        """EASY backfilling's reservation for the head gang, if any."""
        return self.ledger.reservation

    def part_of(self, ref: TaskRef) -> JobState:
        """The job part that runs task ``ref`` (:meth:`Ledger.part_of`).

        Parameters
        ----------
        ref : TaskRef
            A task of a job with work left.

        Returns
        -------
        JobState
        """
        return self.ledger.part_of(ref)

    def machine_of(self, ref: TaskRef) -> int | None:
        """The machine task ``ref`` runs on (:meth:`Ledger.machine_of`).

        Parameters
        ----------
        ref : TaskRef
            The task.

        Returns
        -------
        int or None
        """
        return self.ledger.machine_of(ref)

    def running_tasks(self) -> list[list[tuple[TaskRef, int]]]:
        """Per user, its running tasks and their machines (:meth:`Ledger.running_tasks`).

        Returns
        -------
        list of list of (TaskRef, int)
        """
        return self.ledger.running_tasks()

    def select(self, mi: int) -> Pick | None:
        """The (user, group) machine ``mi`` would serve next (the selection's answer).

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        (int, int) or None
            None when no user's next task fits.
        """
        pick = self.selection.select(mi)
        return None if pick[0] < 0 else pick

    def may_place(self, mi: int, free: Room, demand: Demand) -> bool:
        """Whether a task of ``demand`` may use machine ``mi`` whose free room is ``free``
        (the room filter in force: :meth:`Placer.room_admits`).

        Parameters
        ----------
        mi : int
            The machine's index.
        free : sequence of float
            Its free room.
        demand : Demand
            The task's demand.

        Returns
        -------
        bool
        """
        return self.placer.room_admits(mi, free, demand)

    def headroom(self, mi: int) -> tuple[Demand, float] | None:
        """H-DRF section 5's headroom on machine ``mi`` and its size (None: none kept, or
        headroom off; :meth:`Headroom.headroom`).

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        (Demand, float) or None
        """
        headroom = self.placer.headroom
        return None if headroom is None else headroom.headroom(mi)

    def preemption_shares(self, demands: Sequence[float], capacity: float) -> list[float]:
        """Every user's fair share of ``capacity`` (:meth:`Ranking.preemption_shares`).

        Parameters
        ----------
        demands : sequence of float
            Per user, the share it holds plus that of its pending tasks.
        capacity : float
            The share all users hold now.

        Returns
        -------
        list of float
        """
        return self.ranking.preemption_shares(demands, capacity)

    # ------------------------------------------------------------------ protocol: events

    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        """A job arrives: its map side is pending and offered the free machines it may use
        at the next :meth:`decide`; its reduce side (and copy side) waits for its maps.

        Parameters
        ----------
        now : float
            The time of the arrival.
        job_id : int
            The driver's id for the job (submission order, unique).
        job : Job
            The job.
        blocks : sequence of sequence of str, optional
            For a job that reads input, per map task the machines holding its block (data
            locality and delay scheduling, FAIR section 4).
        """
        waits = None
        if blocks is not None:
            waits = self.options.job_delays.get(job.name, self.options.delay)
        self.ledger.now = now
        self.ledger.submit(job_id, job, blocks, waits)

    def task_finished(self, now: float, task: TaskRef) -> None:
        """A task finished: its room is free and its machine is offered at the next
        :meth:`decide`.

        Parameters
        ----------
        now : float
            The time of the finish.
        task : TaskRef
            The task, running until now.
        """
        self.ledger.now = now
        self.ledger.stop_task(task, "finished")

    def tasks_finished_at(self, now: float, tasks: Sequence[TaskRef]) -> None:
        """:meth:`task_finished` for each task in order, in one call of
        :meth:`Ledger.release`, which releases a batch as it releases one task after the
        other (the instances of a trace's task end together).

        Parameters
        ----------
        now : float
            The time of the finishes.
        tasks : sequence of TaskRef
            The tasks, running until now.
        """
        self.ledger.now = now
        self.ledger.release(tasks, finished=True, then="offer")

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        """:meth:`task_finished` then :meth:`decide` (the protocol's fused call), with a fast
        path for the steady state of a busy cluster: a map task finishes, nothing else
        waits to be placed, and its machine is offered at once without being marked for
        offers or re-bucketed before the offer. The decisions are those of the two calls:
        ``decide`` would offer exactly this machine, first (nothing else is marked, no job
        waits for offers), and buckets are read only by offers, so one re-bucketing after
        the offer leaves them as the general path's two do (with
        :meth:`ClusterState.bump` when the machine ends where it started).

        Parameters
        ----------
        now : float
            The time of the finish, the only event at that time.
        task : TaskRef
            The finished task.

        Returns
        -------
        list of Decision
            What :meth:`decide` would return after :meth:`task_finished`.
        """
        if not self._fusable(task) or now >= self.rerank_at:
            self.task_finished(now, task)
            return self.decide(now)
        ledger = self.ledger
        ledger.now = now
        mi = ledger.release((task,), finished=True, then="hold")
        cs = ledger.cluster
        # While nobody has pending work, no selection can find anyone.
        pick = self.selection.select(mi) if cs.active_groups else NO_PICK
        if pick[0] < 0:
            cs.rebucket(mi)
            return []
        out: list[Decision] = []
        old = cs.free_of[mi]
        freed = old is not None and not old.same(cs.free[mi])
        self.placer.offer_machine(mi, now, out, pick)
        if freed and cs.free_of[mi] == old:
            # Filled back to where it was: the general path's two re-bucketings (at the
            # finish, after the offer) would have moved it to the end of its bucket, and
            # offers take machines from there.
            cs.bump(mi)
        return out

    def _fusable(self, task: TaskRef) -> bool:
        """Whether the finish of ``task`` may take the fused path; not when the fused path
        is off for this policy's options, the task is no map task, the job's reducers
        become runnable, machines or jobs wait for offers, a wake-up is due, gangs wait, or
        the machine is gone."""
        ledger = self.ledger
        job = ledger.jobs.get(task.job) if task.phase == "map" else None
        if (
            job is None
            or not self.fused
            # Reducers becoming runnable (a job without them has none to wake).
            or job.maps_done + 1 == job.reduce_after
            or ledger.dirty
            or ledger.offers
            or ledger.wakeups
            # Freed room may admit a waiting gang (tried before any offer).
            or ledger.gangs
        ):
            return False
        return ledger.cluster.alive[job.where[task.task]]

    def reported_shares(self) -> tuple[dict[str, float], dict[str, float]]:
        """Each queue's and user's share as the policy computes it now (SPEC section 8.3's
        ``shares``: :meth:`Ranking.reported_shares
        <fairshare.policies.ranking.Ranking.reported_shares>`).

        Returns
        -------
        (dict of str to float, dict of str to float)
            Shares by queue path, and by user name.
        """
        return self.ranking.reported_shares()

    def queue_shares(self) -> dict[str, float]:
        """Each queue's share as the policy computes it now (the run samples it for
        ``timeline.csv``'s ``queue_share``).

        Returns
        -------
        dict of str to float
        """
        return self.ranking.queue_shares()

    def quiescent(self) -> bool:
        """The protocol's promise that finishes may be held back (see
        :mod:`fairshare.policies.protocol`): nobody has work to place, no machine or job
        waits for an offer, no wake-up is due, and the quiet path is on for this policy
        (see the module).

        Returns
        -------
        bool
            Whether the driver may hold finishes back for :meth:`tasks_finished`.
        """
        ledger = self.ledger
        return (
            self.quiet
            and not ledger.cluster.active_groups
            and not ledger.dirty
            and not ledger.offers
            and not ledger.wakeups
            and not ledger.gangs
        )

    def tasks_finished(
        self, now: float, tasks: Sequence[TaskRef], times: Sequence[float] | None = None
    ) -> None:
        """Finishes held back while :meth:`quiescent`, in the order they happened: each is
        released as :meth:`finish_and_decide` releases it when nobody can be served (its
        machine re-bucketed at once and not marked dirty: there is no decision to take).

        Parameters
        ----------
        now : float
            The time of the last of them.
        tasks : sequence of TaskRef
            The finished tasks, in the order they finished.
        times : sequence of float, optional
            Each one's time, at which its usage over time is booked (None: all at ``now``).
        """
        if not self.quiet:
            for k, task in enumerate(tasks):
                self.task_finished(now if times is None else times[k], task)
            return
        ledger = self.ledger
        ledger.release(tasks, finished=True, then="settle", times=times)
        ledger.now = now

    def machine_added(self, now: float, machine: Machine) -> None:
        """A machine joins: it is offered at the next :meth:`decide` (and rankings whose
        shares depend on the cluster's totals recompute them).

        Parameters
        ----------
        now : float
            The time it joins.
        machine : Machine
            The machine; its name may be that of a machine removed before.

        Raises
        ------
        ValueError
            A machine of that name is in the cluster already.
        """
        self.ledger.now = now
        self.ledger.machine_added(machine)

    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
        """A machine leaves: the tasks running on it are lost and pending again (with
        copy-compute splitting, its reducers waiting to compute copy again).

        Parameters
        ----------
        now : float
            The time it leaves.
        name : str
            The machine's name.

        Returns
        -------
        list of TaskRef
            The tasks that were running on it, sorted (the driver records them killed).

        Examples
        --------
        >>> import numpy as np
        >>> from fairshare.cluster import Cluster, Machine
        >>> from fairshare.policies import make_policy
        >>> from fairshare.workload.model import Job
        >>> cluster = Cluster.build(["slots"], [Machine("m1", np.array([2.0]))])
        >>> policy = make_policy("fair", cluster)
        >>> policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0]), 3))
        >>> len(policy.decide(0.0))
        2
        >>> policy.machine_removed(1.0, "m1")
        [TaskRef(job=0, phase='map', task=0), TaskRef(job=0, phase='map', task=1)]
        >>> policy.machine_added(2.0, Machine("m2", np.array([4.0])))
        >>> [(d.task.task, d.machine) for d in policy.decide(2.0)]
        [(0, 'm2'), (1, 'm2'), (2, 'm2')]
        """
        self.ledger.now = now
        return self.ledger.machine_removed(name)

    def task_failed(self, now: float, task: TaskRef) -> None:
        """A running task failed: its room is free and it is pending again.

        Parameters
        ----------
        now : float
            The time of the failure.
        task : TaskRef
            The task, running until now.
        """
        self.ledger.now = now
        self.ledger.stop_task(task, "failed")

    def job_cancelled(self, now: float, job_id: int) -> list[TaskRef]:
        """A job leaves unfinished: its pending tasks are dropped and its running tasks stop.

        Parameters
        ----------
        now : float
            The time of the cancellation.
        job_id : int
            The driver's id of the job.

        Returns
        -------
        list of TaskRef
            Its tasks that were running, sorted; empty for a job that already finished.
        """
        self.ledger.now = now
        return self.ledger.cancel(job_id)

    def advance(self, now: float) -> None:
        """Time passed (a wake-up of :meth:`next_wakeup`): with delay scheduling, every
        machine with room is offered again at the next :meth:`decide`, as a job's allowed
        locality may have widened.

        Parameters
        ----------
        now : float
            The new time.
        """
        if self.options.delay is not None or self.options.job_delays:
            self.ledger.mark_roomy()

    def next_wakeup(self) -> float | None:
        """When a delay-scheduling wait or a preemption timeout next ends.

        Returns
        -------
        float or None
            The earliest such time, or None when nothing waits.
        """
        wakeups = self.ledger.wakeups
        return wakeups[0] if wakeups else None

    # ------------------------------------------------------------------ protocol: decisions

    def decide(self, now: float) -> list[Decision]:
        """Offer the machines with new room in the order they got it, then the jobs with new
        work; with preemption on, then the kills and the launches on the room they free.

        Parameters
        ----------
        now : float
            The time of the decision.

        Returns
        -------
        list of Decision
            The launches and kills, in the order to apply them.
        """
        out: list[Decision] = []
        ledger = self.ledger
        ledger.now = now
        if now >= self.rerank_at:
            ledger.rerank()
            self.rerank_at = now + self.rerank_every
        wakeups = ledger.wakeups
        while wakeups and wakeups[0] <= now:
            heappop(wakeups)
        self.placer.place(now, out)
        if self.options.preemption is not None:
            # After placing, so free room counts as given; kills free machines to place on.
            self.preemptor.run(now, out)
            self.placer.place(now, out)
        return out
