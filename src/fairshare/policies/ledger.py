"""The scheduler's bookkeeping: users, job parts and machines, and the one function for each
change of their state.

Every path that changes the state, fast or not, calls the function named here; none has a
copy of its own:

- a task starts on a machine: :meth:`Ledger._launch`;
- running tasks stop (finished, killed or lost), and finished ones are counted (maps done,
  reducers runnable, a part retired): :meth:`Ledger._release` (one call for a batch);
- a user's rank, pending work or cap changed: :meth:`Ledger._touch`;
- a job part has new pending tasks: :meth:`Ledger._activate`; it has none left:
  :meth:`Ledger._retire`;
- a killed, lost or failed task is pending again: :meth:`fairshare.policies.stops.Stops.requeue`
  (its stop: :meth:`~fairshare.policies.stops.Stops._stop`);
- a running gang is preempted, all its tasks at once, and waits as a gang again:
  :meth:`~fairshare.policies.stops.Stops.requeue_gang`;
- a job leaves unfinished (cancelled, or failed):
  :meth:`~fairshare.policies.stops.Stops._cancel`;
- a waiting gang starts, all its ``min_tasks`` at once:
  :meth:`fairshare.policies.filling.Filling._admit_gang` (each task by :meth:`Ledger._launch`);
- a machine's free room changed (its move between buckets):
  :meth:`fairshare.policies.state.ClusterState.rebucket`.

The placement (offering machines) is :mod:`fairshare.policies.filling`; the protocol's events
are :class:`fairshare.policies.base.Scheduler`.

Examples
--------
A killed task is pending again as if it never started, and is the first to launch when its
machine is offered:

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import TaskRef, make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([2.0]))])
>>> policy = make_policy("fifo", cluster)
>>> policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0]), 3))
>>> [d.task.task for d in policy.decide(0.0)]
[0, 1]
>>> policy.requeue(TaskRef(0, "map", 1))
>>> policy.part_of(TaskRef(0, "map", 1)).pending, policy.users[0].running
(2, 1)
>>> [d.task.task for d in policy.decide(1.0)]
[1]
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Sequence
from heapq import heappop, heappush
from typing import ClassVar, Literal

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.copy_compute import CopyComputeAdmission
from fairshare.policies.gangs import Ending, Reservation
from fairshare.policies.options import PolicyOptions
from fairshare.policies.preemption import PreemptionState
from fairshare.policies.protocol import Decision, Launch, Locality, TaskRef
from fairshare.policies.quota import QuotaTree
from fairshare.policies.records import Demand, JobState, UserState, part_id
from fairshare.policies.state import ClusterState
from fairshare.tolerances import FIT
from fairshare.workload.model import Job, Queue, ReducePhase, User

_new = tuple.__new__
"""Builds a NamedTuple (``TaskRef``, ``Launch``) without its Python-level ``__new__``."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Ledger:
    """The state every online policy keeps and its state changes (see the module).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users, created in this order (the order of ties).
    queues : sequence of Queue
        The queue hierarchy, for the policies that read it.
    options : PolicyOptions, optional
        The mechanisms' settings (default: none on).

    Attributes
    ----------
    name : str
        The policy's SPEC name (``base`` here; every policy sets its own).
    tracks_allocation : bool
        Whether each user's running demand per resource is kept (``UserState.alloc``).
    cluster : ClusterState
        Machines, free room, constraint classes and groups.
    users : list of UserState
        The users (or FAIR pools) in order of appearance.
    jobs : dict of int to JobState
        The job parts with work left, by part id (see
        :func:`~fairshare.policies.records.part_id`).
    options : PolicyOptions
        The mechanisms' settings.
    """

    name: ClassVar[str] = "base"
    tracks_allocation: ClassVar[bool] = False
    """Whether ``UserState.alloc`` (the user's running demand, per resource) is kept up to
    date: only for a policy that reads it (H-DRF's vectors); the others order users by the
    scalar share, and skipping the vector saves a twentieth of a large simulation."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        self.options = options if options is not None else PolicyOptions()
        self.cluster = ClusterState(cluster.resources, cluster.machines)
        self.queues = tuple(queues)
        self.configured = {u.name: u for u in users}
        self.users: list[UserState] = []
        self.user_index: dict[str, int] = {}
        # Job parts by part id (see JobState).
        self.jobs: dict[int, JobState] = {}
        # Machines with new room, to be offered in the order they got it.
        self.dirty: dict[int, None] = {}
        # Job parts with new pending tasks, to be offered the free machines they may use.
        self._offers: dict[int, None] = {}
        self._wakeups: list[float] = []
        self._launch_seq = 0
        # Running task -> its launch number (across users), kept only with preemption, which
        # kills the most recently launched tasks first (FAIR section 3.2): without it a
        # launch allocates nothing for its order.
        self.launch_order: dict[TaskRef, int] | None = (
            {} if self.options.preemption is not None else None
        )
        self.preemption_state = PreemptionState()
        # Whether a job's place among its user's jobs moves as it runs tasks (FAIR's fair
        # order inside a pool); FIFO order never moves.
        self.reorder_jobs = False
        # Copy-compute splitting (FAIR section 5.2): the machines' admission control, and
        # per (machine, demand) how many compute parts fit on the machine's capacity.
        self._cpac: CopyComputeAdmission | None = None
        if self.options.copy_compute is not None:
            self._cpac = CopyComputeAdmission(*self.options.copy_compute)
        self._compute_slots: dict[tuple[int, Demand], int] = {}
        # Whether a job with a priority other than 0 arrived: users' heap entries then carry
        # the priority of their next job per group (see _touch); never unset.
        self.prioritized = False
        # With the base's rank, one heap entry serves every group of a user (see _touch).
        self._plain_rank = type(self).user_rank is Ledger.user_rank
        # Nominal quotas with lending and borrowing (fairshare.policies.quota), when a queue
        # has one: they read every user's allocation.
        self.quotas: QuotaTree | None = None
        if any(q.quota is not None for q in self.queues):
            self.quotas = QuotaTree(self.queues, len(cluster.resources))
        # tracks_allocation as an attribute of the instance (read on every launch).
        self._track = self.tracks_allocation or self.quotas is not None
        # With the base's _touch, a user without pending work has nothing to refresh.
        self._plain_touch = type(self)._touch is Ledger._touch
        # Gangs waiting for admission, by part id in submission order (they hold nothing and
        # are in no job heap: fairshare.policies.gangs), and whether something happened that
        # may let one start (a gang arrived, a machine joined or left; freed room marks
        # machines dirty).
        self.gangs: dict[int, JobState] = {}
        self._gang_news = False
        # While gangs wait, the demands of the tasks released since their last try.
        self._freed: list[Demand] = []
        # EASY backfilling: every running task's expected end, machine and demand; the head
        # gang's reservation and the room it leaves over per machine (None: no reservation).
        self._ends: dict[TaskRef, Ending] | None = {} if self.options.backfill is not None else None
        # The same entries sorted by expected end (then launch number): a reservation reads
        # the earliest ones only.
        self._by_end: list[Ending] = []
        self._end_seq = 0
        self.reservation: Reservation | None = None
        self._reserved: dict[int, list[float]] | None = None
        # The time of the decision being taken (launches record their expected ends by it).
        self._now = 0.0
        for user in users:
            self._user(user.name, None)

    # ------------------------------------------------------------------ policy hooks

    def share_per_task(self, job: JobState) -> float:
        """How much one running task of ``job`` adds to its user's share: the policy's unit
        of share (the base's: one task).

        Parameters
        ----------
        job : JobState
            The job part (its demand and group are set).

        Returns
        -------
        float
        """
        return 1.0

    def user_rank(self, user: UserState, group: int) -> float:
        """The quantity the policy equalises (lower goes first): weighted share by default.

        Parameters
        ----------
        user : UserState
            The user.
        group : int
            The group its next task would come from.

        Returns
        -------
        float
            The user's rank; ties go to the lower user index.
        """
        return user.share / user.divisor

    def job_rank(self, job: JobState) -> float:
        """The order of a user's jobs (lower goes first): FIFO, by submission.

        Parameters
        ----------
        job : JobState
            The job part.

        Returns
        -------
        float
        """
        return float(job.id)

    def gang_rank(self, job: JobState) -> tuple[float, int, float, int]:
        """The order in which waiting gangs are tried (lowest first): their user's rank
        (:meth:`user_rank` in the gang's group), the user's index, :meth:`job_rank`, then
        submission order.

        Parameters
        ----------
        job : JobState
            A waiting gang's map side.

        Returns
        -------
        tuple of (float, int, float, int)
        """
        user = self.users[job.user]
        return (self.user_rank(user, job.group), user.idx, self.job_rank(job), job.id)

    def on_new_user(self, user: UserState) -> None:
        """Called when a user (or pool) first appears.

        Parameters
        ----------
        user : UserState
            The new user, last in ``users``.
        """

    def on_cluster_change(self) -> None:
        """Called after a machine joins or leaves; policies whose share depends on the
        cluster recompute it."""

    def refresh_all(self) -> None:
        """Recompute every job's share per task and every rank (the cluster or the weights
        changed under a policy whose share depends on them)."""
        for user in self.users:
            user.share = 0.0
        for job in self.jobs.values():
            job.share_per_task = self.share_per_task(job)
            self.users[job.user].share += job.running * job.share_per_task
        for grp in self.cluster.groups:
            grp.heap.clear()
        for user in self.users:
            self._touch(user)

    # ------------------------------------------------------------------ lookups

    def _user(self, name: str, job: Job | None) -> UserState:
        """The user ``name``, created (with its configured or its job's weight) when new."""
        idx = self.user_index.get(name)
        if idx is not None:
            return self.users[idx]
        configured = self.configured.get(name)
        user = UserState(len(self.users), name, len(self.cluster.resources))
        if configured is not None:
            user.weight = user.divisor = configured.weight
            user.cap = configured.cap
            user.min_share = configured.min_share
            user.queue = configured.queue
        elif job is not None:
            user.weight = user.divisor = job.weight
            user.queue = job.queue
        self.users.append(user)
        self.user_index[name] = user.idx
        self.on_new_user(user)
        return user

    def part_of(self, ref: TaskRef) -> JobState:
        """The job part that runs task ``ref``.

        Parameters
        ----------
        ref : TaskRef
            A task of a job with work left.

        Returns
        -------
        JobState
            Its map side, or its reduce or copy side.
        """
        if ref.phase == "map":
            return self.jobs[ref.job]
        return self.jobs[part_id(ref.job, ref.phase)]

    def head_job(self, user: UserState, group: int) -> JobState:
        """The job part that ``user`` launches its next task of ``group`` from (the user must
        have pending work there).

        Parameters
        ----------
        user : UserState
            The user.
        group : int
            A group it has pending work in.

        Returns
        -------
        JobState
            The first of its jobs in the group by :meth:`job_rank`.
        """
        job = self._first_pending(user.job_heaps[group])
        assert job is not None, "the user has pending work in the group"
        return job

    def _first_pending(self, heap: list[tuple[int, float, int, int]]) -> JobState | None:
        """The top of a user's job heap once its stale entries (a job's older version, or a
        job with nothing pending) are dropped; None when none is left."""
        jobs = self.jobs
        while heap:
            _, _, key, version = heap[0]
            job = jobs.get(key)
            if job is not None and job.version == version and job.pending > 0:
                return job
            heappop(heap)
        return None

    # ------------------------------------------------------------------ state changes

    def _launch(
        self,
        job: JobState,
        user: UserState,
        ref: TaskRef,
        mi: int,
        locality: Locality | None,
        out: list[Decision],
    ) -> bool:
        """Start task ``ref`` of ``job`` on machine ``mi``: its demand leaves the machine's
        free room and joins its user's share (and allocation), it is numbered for
        preemption, and the launch is appended to ``out``. Taking the task from the pending
        ones is the caller's (a compute part was never pending). Returns whether another
        task of the same demand fits the machine's room (the plain fit test,
        :func:`fairshare.policies.state.fits`, on the room left: a batch asks it after
        every launch, and the subtraction has the floats at hand)."""
        demand = job.demand
        cs = self.cluster
        free = cs.free[mi]
        room = True
        r = 0
        for d in demand:
            left = free[r] - d
            free[r] = left
            if left + FIT < d:
                room = False
            r += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
        if self._track:
            alloc = user.alloc
            r = 0
            for d in demand:
                alloc[r] += d
                r += 1  # noqa: SIM113
        where = job.where
        if where is None:
            user.tasks[ref] = mi
        else:
            where[ref[2]] = mi
        if self.launch_order is not None:
            self._launch_seq += 1
            self.launch_order[ref] = self._launch_seq
        if self._ends is not None:
            self._end_seq += 1
            ending = (self._now + job.expected, self._end_seq, mi, demand)
            self._ends[ref] = ending
            insort(self._by_end, ending)
        user.running += 1
        user.share += job.share_per_task
        job.running += 1
        out.append(_new(Launch, (ref, cs.names[mi], locality)))
        return room

    def _release(
        self, tasks: Sequence[TaskRef], *, finished: bool, then: Literal["offer", "settle", "hold"]
    ) -> int:
        """Stop running ``tasks``, in order (finished, killed or lost): each one's demand
        goes back to its machine and leaves its user's share; its user's heap entries go
        stale. The machine is then re-bucketed and marked for the next decision's offers
        (``then`` ``"offer"``), only re-bucketed (``"settle"``: nobody waits), or left as it
        is (``"hold"``: the caller offers it at once and re-buckets it after). With
        ``finished``, each task is also counted as finished (:meth:`_count_finish`) and its
        user's entries refreshed (:meth:`_touch`); a killed or lost task is the caller's to
        re-queue. Returns the machine of the last.

        One call releases a whole batch (the finishes a driver held back): the hottest
        path of a large run, so the per-task steps are taken here, not by a call each."""
        jobs = self.jobs
        users = self.users
        cs = self.cluster
        alive = cs.alive
        frees = cs.free
        rebucket = cs.rebucket
        dirty = self.dirty
        order = self.launch_order
        track = self._track
        reorder = self.reorder_jobs
        touch = self._touch
        plain_touch = self._plain_touch
        offer = then == "offer"
        settle = offer or then == "settle"
        ends = self._ends
        freed = self._freed if self.gangs else None
        mi = -1
        for ref in tasks:
            if ref[1] == "map":
                job = jobs[ref[0]]
                user = users[job.user]
                where = job.where
                assert where is not None
                index = ref[2]
                mi = where[index]
                where[index] = -1
            else:
                job = jobs[part_id(ref[0], ref[1])]
                user = users[job.user]
                where = None
                mi = user.tasks.pop(ref)
            if order is not None:
                del order[ref]
            if ends is not None:
                by_end = self._by_end
                del by_end[bisect_left(by_end, ends.pop(ref))]
            demand = job.demand
            if freed is not None:
                freed.append(demand)
            if alive[mi]:
                free = frees[mi]
                r = 0
                for d in demand:
                    free[r] += d
                    r += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
                if settle:
                    rebucket(mi)
                    if offer:
                        dirty[mi] = None
            if track:
                alloc = user.alloc
                r = 0
                for d in demand:
                    alloc[r] -= d
                    r += 1  # noqa: SIM113
            user.share -= job.share_per_task
            user.version += 1
            user.running -= 1
            if not user.running:
                # Exact zero: no drift from summing and subtracting shares.
                user.share = 0.0
                user.alloc = [0.0] * len(demand)
            job.running -= 1
            if reorder and job.pending > 0:
                job.version += 1
                heappush(
                    user.job_heaps[job.group],
                    (-job.priority, self.job_rank(job), job.part_id, job.version),
                )
            if not finished:
                continue
            if where is None:
                self._count_finish(job, user, ref, mi)
            else:
                # A map task's count, the hot one, in place (a reducer part's: above).
                job.finished += 1
                job.maps_done += 1
                if job.maps_done == job.reduce_after:
                    self._reducers_runnable(job.id, user)
                if job.finished == job.maps:
                    del jobs[job.part_id]
            if user.job_heaps or not plain_touch:
                touch(user)
            # else: the base's _touch would only move the version, moved above.
        return mi

    def _count_finish(self, job: JobState, user: UserState, ref: TaskRef, mi: int) -> None:
        """A reducer's part (``ref`` of ``job``, released from machine ``mi``) finished:
        count it, retire a part whose tasks all finished, and with copy-compute splitting
        (FAIR section 5.2) ask the machine to compute a reducer that finished copying. (A
        map task's count is :meth:`_release`'s.)"""
        job.finished += 1
        cpac = self._cpac
        if ref[1] == "copy":
            assert cpac is not None
            # The reducer keeps its reducer slot and asks its machine to compute.
            cpac.copy_stopped(ref.job, mi, finished=True)
            cpac.wait(TaskRef(ref.job, "reduce", ref.task), mi)
            return
        if cpac is not None:
            cpac.compute_stopped(mi)
        if job.finished == job.reduces:
            del self.jobs[job.part_id]
            # The copy side lives as long as the computes: a lost one copies again.
            self.jobs.pop(part_id(job.id, "copy"), None)

    def _touch(self, user: UserState) -> None:
        """The user's rank, pending work or cap changed: push fresh entries in every group it
        has work in (the older ones go stale: see :class:`fairshare.policies.records.Group`)."""
        user.version += 1
        if not user.job_heaps or user.running >= user.cap:
            return
        groups = self.cluster.groups
        if self.prioritized:
            # The tier is the priority of the job the user launches from next in the group.
            for g, heap in user.job_heaps.items():
                head = self._first_pending(heap)
                tier = 0 if head is None else -head.priority
                heappush(groups[g].heap, (tier, self.user_rank(user, g), user.idx, user.version))
            return
        if self._plain_rank:
            # One entry serves every group: the rank does not depend on the group.
            entry = (0, user.share / user.divisor, user.idx, user.version)
            for g in user.job_heaps:
                heappush(groups[g].heap, entry)
            return
        for g in user.job_heaps:
            heappush(groups[g].heap, (0, self.user_rank(user, g), user.idx, user.version))

    def _activate(self, job: JobState, user: UserState) -> None:
        """``job`` has new pending tasks: put it in its user's job heap and offer it the free
        machines it may use."""
        job.version += 1
        heap = user.job_heaps.get(job.group)
        if heap is None:
            heap = user.job_heaps[job.group] = []
            group_users = self.cluster.groups[job.group].users
            if not group_users:
                self.cluster.group_active(job.group, True)
            group_users[user.idx] = None
        heappush(heap, (-job.priority, self.job_rank(job), job.part_id, job.version))
        user.pending += job.pending
        self._touch(user)
        self._offers[job.part_id] = None
        if job.phase == "copy":
            # Copy parts take no room, so machines without room may take them too.
            cs = self.cluster
            for mi in range(len(cs.names)):
                if (
                    cs.alive[mi]
                    and mi not in cs.roomy
                    and cs.eligible(cs.groups[job.group].cls, mi)
                ):
                    self.dirty[mi] = None

    def _retire(self, job: JobState, user: UserState) -> None:
        """``job`` launched its last pending task: its entry in its user's job heap goes
        stale, and a user left with no job in the group leaves the group (the group goes
        inactive when it was the last)."""
        job.version += 1
        group = job.group
        if self._first_pending(user.job_heaps[group]) is None:
            del user.job_heaps[group]
            group_users = self.cluster.groups[group].users
            del group_users[user.idx]
            if not group_users:
                self.cluster.group_active(group, False)

    # ------------------------------------------------------------------ map-reduce parts

    def _reduce_sides(
        self, job_id: int, job: Job, user: UserState, cls: int, demand: Demand
    ) -> list[JobState]:
        """Register the reduce side of a new job (and its copy side with copy-compute
        splitting), not yet runnable. A reducer's demand is the reduce phase's own (Hadoop's
        reduce slots, FAIR section 5.3); a copy part's is zero (FAIR section 5.2)."""
        reduce = job.reduce
        if reduce is None or reduce.tasks == 0:
            return []
        cs = self.cluster
        rdemand = demand if reduce.demand is None else tuple(map(float, reduce.demand.tolist()))
        sides = [JobState(job_id, job, user.idx, cs.group_of(cls, rdemand), rdemand, "reduce")]
        if self._cpac is not None:
            zero = (0.0,) * len(demand)
            sides.append(JobState(job_id, job, user.idx, cs.group_of(cls, zero), zero, "copy"))
        for side in sides:
            side.share_per_task = self.share_per_task(side)
            self.jobs[side.part_id] = side
        return sides

    def _reducers_after(self, maps: int, reduce: ReducePhase | None = None) -> int:
        """How many of a job's ``maps`` must finish before its reducers may launch: the
        job's own slow-start, else the run's ``reduce_slowstart`` (FAIR section 5.1; at
        least the first)."""
        fraction = self.options.reduce_slowstart
        if reduce is not None and reduce.slowstart is not None:
            fraction = reduce.slowstart
        return max(1, math.ceil(fraction * maps - FIT))

    def _reducers_runnable(self, job_id: int, user: UserState) -> None:
        """The job's reducers (its copy parts, with copy-compute splitting) may launch."""
        side = self.jobs.get(part_id(job_id, "reduce" if self._cpac is None else "copy"))
        if side is None:
            return  # a job without reducers
        side.pending = side.reduces
        self._activate(side, user)
