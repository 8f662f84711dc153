"""The scheduler's state and the one function for each change of it: users, job parts and
machines (the framework's cache), owned by :class:`Ledger`, the only writer of them.

Every path that changes the state, fast or not, calls the function named here; none has a
copy of its own:

| state change | the one function |
| --- | --- |
| a job arrives (its parts registered, its maps pending or its gang waiting) | :meth:`Ledger.submit` |
| a task starts on a machine (counted, its part retired when drained, accounted) | :meth:`Ledger.start_task` |
| a task stops: finished, killed, lost or failed (one reason each) | :meth:`Ledger.stop_task` |
| running tasks stop, a batch of finishes held back included | :meth:`Ledger.release` |
| a killed, lost or failed task is pending again | :meth:`Ledger.requeue` |
| a running gang is preempted whole and waits as a gang again | :meth:`Ledger.requeue_gang` |
| a job leaves unfinished (cancelled, or failed) | :meth:`Ledger.cancel` |
| a user's rank, pending work or cap changed | :meth:`Ledger.touch` |
| a job part gains pending tasks / has none left | :meth:`Ledger.activate` / :meth:`Ledger.retire` |
| a machine joins / leaves | :meth:`Ledger.machine_added` / :meth:`Ledger.machine_removed` |
| a machine's free room changed (its move between buckets) | :meth:`fairshare.policies.state.ClusterState.rebucket` |

The ledger calls its two strategies when what they read changed: the
:class:`~fairshare.policies.ranking.Ranking` (shares, ranks, a new user, the cluster's
totals) and the :class:`~fairshare.policies.ranking.Selection` (a touched user). The
placement (offering machines, :mod:`fairshare.policies.placer`) and preemption
(:mod:`fairshare.policies.preemption`) read it and change it only through these functions.

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
>>> policy.ledger.stop_task(TaskRef(0, "map", 1), "killed")
>>> policy.ledger.part_of(TaskRef(0, "map", 1)).pending, policy.users[0].running
(2, 1)
>>> [d.task.task for d in policy.decide(1.0)]
[1]
>>> [ref.task for ref in policy.job_cancelled(2.0, 0)], policy.users[0].running
([0, 1], 0)
"""  # noqa: E501 (the table is one row per line)

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Sequence
from heapq import heappop, heappush
from typing import Final, Literal

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster, Machine
from fairshare.policies.copy_compute import CopyComputeAdmission
from fairshare.policies.decisions import Launch
from fairshare.policies.gangs import Ending, Reservation, expected_seconds
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import Decision, Locality, TaskRef
from fairshare.policies.quota import QuotaTree
from fairshare.policies.ranking import Ranking, Selection
from fairshare.policies.records import (
    Demand,
    JobHeapEntry,
    JobState,
    PreemptionState,
    UserState,
    part_id,
)
from fairshare.policies.state import ClusterState
from fairshare.policies.usage import DecayedUsage
from fairshare.tolerances import FIT
from fairshare.workload.model import Job, Queue, ReducePhase, User

StopReason = Literal["finished", "killed", "lost", "failed"]
"""Why a running task stops (:meth:`Ledger.stop_task`)."""

DRAINED: Final = 0
""":meth:`Ledger.start_task`: the task's part has no pending task left (retired)."""
ROOM: Final = 1
""":meth:`Ledger.start_task`: another task of the same demand fits the machine's room."""
FULL: Final = 2
""":meth:`Ledger.start_task`: another task of the same demand does not fit. (The three are
``Final``: mypyc compiles them as constants, not as lookups of the module's globals on every
launch.)"""


@mypyc_attr(allow_interpreted_subclasses=True)
class Ledger:
    """The state every online policy keeps and its state changes (see the module).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    queues : sequence of Queue
        The queue hierarchy, for the policies that read it.
    options : PolicyOptions
        The mechanisms' settings.
    ranking : Ranking
        The policy's order (bound to this ledger here).
    selection : Selection
        The policy's selection (bound by the scheduler, with its fit test).

    Attributes
    ----------
    cluster : ClusterState
        Machines, free room, constraint classes and groups.
    users : list of UserState
        The users (or FAIR pools) in order of appearance.
    jobs : dict of int to JobState
        The job parts with work left, by part id (see
        :func:`~fairshare.policies.records.part_id`).
    dirty : dict of int to None
        Machines with new room, to be offered in the order they got it.
    offers : dict of int to None
        Job parts with new pending tasks, to be offered the free machines they may use.
    wakeups : list of float
        A heap of the times the driver should call ``advance`` (delay-scheduling waits,
        preemption timeouts).
    gangs : dict of int to JobState
        Gangs waiting for admission, by part id in submission order (they hold nothing and
        are in no job heap: :mod:`fairshare.policies.gangs`).
    gang_news : bool
        Whether something happened that may let a waiting gang start.
    now : float
        The time of the decision being taken.
    """

    def __init__(
        self,
        cluster: Cluster,
        *,
        queues: Sequence[Queue],
        options: PolicyOptions,
        ranking: Ranking,
        selection: Selection,
    ) -> None:
        self.options = options
        self.ranking = ranking
        self.selection = selection
        self.cluster = ClusterState(cluster.resources, cluster.machines)
        self.queues = tuple(queues)
        self.configured: dict[str, User] = {}
        self.users: list[UserState] = []
        self.user_index: dict[str, int] = {}
        self.jobs: dict[int, JobState] = {}
        self.dirty: dict[int, None] = {}
        self.offers: dict[int, None] = {}
        self.wakeups: list[float] = []
        self.launch_seq = 0
        # Counts launches: a user's ``served`` is its value at the user's last launch (0
        # before its first), the fair tie rule's second key.
        self.serve_seq = 0
        # Running task -> its launch number (across users), kept only with preemption, which
        # kills the most recently launched tasks first (FAIR section 3.2): without it a
        # launch allocates nothing for its order.
        self.launch_order: dict[TaskRef, int] | None = (
            {} if options.preemption is not None else None
        )
        self.preemption_state = PreemptionState()
        # Copy-compute splitting (FAIR section 5.2): the machines' admission control.
        self.copy_compute: CopyComputeAdmission | None = None
        if options.copy_compute is not None:
            self.copy_compute = CopyComputeAdmission(*options.copy_compute)
        # Whether a job with a priority other than 0 arrived: users' heap entries then carry
        # the priority of their next job per group; never unset.
        self.prioritized = False
        # Nominal quotas with lending and borrowing (fairshare.policies.quota), when a queue
        # has one: they read every user's allocation.
        self.quotas: QuotaTree | None = None
        if any(q.quota is not None for q in self.queues):
            self.quotas = QuotaTree(self.queues, len(cluster.resources))
        # Usage over time (SPEC section 8.3, fairshare.policies.usage): per user, the decayed
        # share in the policy's own unit with ``usage_half_life``; and, for a ranking that
        # reads it (Kueue's admission fair sharing, Slurm's Fair Tree), the decayed use of
        # each resource relative to the cluster's capacity, with the option's half-life or
        # the ranking's own default.
        half_life = options.usage_half_life
        self.usage: DecayedUsage | None = None
        if half_life is not None:
            self.usage = DecayedUsage(half_life)
        self.resource_usage: DecayedUsage | None = None
        resource_half_life = half_life if half_life is not None else ranking.default_half_life
        if ranking.tracks_resource_usage and resource_half_life is not None:
            self.resource_usage = DecayedUsage(resource_half_life, len(cluster.resources))
        # Whether usage over time is kept: every launch and release then accounts for it.
        self.accounting = self.usage is not None or self.resource_usage is not None
        # Whether UserState.alloc is kept (read on every launch and release).
        self.track = (
            ranking.tracks_allocation or self.quotas is not None or self.resource_usage is not None
        )
        self.idle_touches = selection.idle_touches
        self.gangs: dict[int, JobState] = {}
        self.gang_news = False
        # While gangs wait, the demands of the tasks released since their last try.
        self.freed: list[Demand] = []
        # EASY backfilling: every running task's expected end, machine and demand; the same
        # entries sorted by expected end (then launch number), of which a reservation reads
        # the earliest; the head gang's reservation and the room it leaves over per machine.
        self.ends: dict[TaskRef, Ending] | None = {} if options.backfill is not None else None
        self.by_end: list[Ending] = []
        self.end_seq = 0
        self.reservation: Reservation | None = None
        self.reserved: dict[int, list[float]] | None = None
        # Machines joined or left so far (a kept reservation is of the cluster it saw).
        self.cluster_changes = 0
        self.now = 0.0
        ranking.bind(self)

    def add_users(self, users: Sequence[User]) -> None:
        """Create the configured users, in this order (the order of ties).

        Parameters
        ----------
        users : sequence of User
            The scenario's users (weights, minimum shares, caps, queues).
        """
        self.configured = {u.name: u for u in users}
        for user in users:
            self.user(user.name, None)

    # ------------------------------------------------------------------ lookups

    def user(self, name: str, job: Job | None) -> UserState:
        """The user ``name``, created (with its configured or its job's weight) when new.

        Parameters
        ----------
        name : str
            The user's name.
        job : Job, optional
            The job that names it (its weight and queue, for a user not configured).

        Returns
        -------
        UserState
        """
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
        if self.usage is not None:
            self.usage.add_account(self.now)
        if self.resource_usage is not None:
            self.resource_usage.add_account(self.now)
        self.selection.on_new_user(user)
        if self.ranking.on_new_user(user):
            for each in self.users:
                each.divisor = self.ranking.divisor(each)
            if len(self.users) > 1:
                self.refresh_all()
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
            The first of its jobs in the group by the ranking's ``job_rank``.
        """
        # The group's own key object (Group.key): found by identity.
        job = self.first_pending(user.job_heaps[self.cluster.groups[group].key])
        assert job is not None, "the user has pending work in the group"
        return job

    def pending_since(self, user: UserState) -> float:
        """The submit time of ``user``'s oldest pending task (inf: none pending): the fair
        tie rule's first key. Of users the policy ranks equal, the one whose oldest pending
        task was submitted first goes first, then the one served least recently
        (``UserState.served``), so that equal shares are not broken in scenario order: with
        short tasks a user that finishes one is back at an equal share at once, and the
        users listed first would win every tie and starve the others.

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
        """
        waiting = user.waiting
        while waiting:
            # A part left (finished or cancelled) has nothing pending.
            top = waiting[0]
            job = top[2]
            if job.pending > 0 and not job.gang:
                return top[0]
            heappop(waiting)
        return math.inf

    def first_pending(self, heap: list[JobHeapEntry]) -> JobState | None:
        """The top of a user's job heap once its stale entries (a job's older version, or a
        job with nothing pending) are dropped; None when none is left.

        Parameters
        ----------
        heap : list
            One of a user's ``job_heaps``.

        Returns
        -------
        JobState or None
        """
        while heap:
            # Two items read, not the entry unpacked: the compiled kernel would unbox all
            # five. A part left (finished or cancelled) has nothing pending.
            top = heap[0]
            job = top[4]
            if job.version == top[3] and job.pending > 0:
                return job
            heappop(heap)
        return None

    def machine_of(self, ref: TaskRef) -> int | None:
        """The machine task ``ref`` runs on.

        Parameters
        ----------
        ref : TaskRef
            The task.

        Returns
        -------
        int or None
            The machine's index in the cluster state, or None when the task does not run.
        """
        side = self.jobs.get(ref.job if ref.phase == "map" else part_id(ref.job, ref.phase))
        if side is None:
            return None
        if side.phase != "map":
            return self.users[side.user].tasks.get(ref)
        mi = int(side.where[ref.task])
        return mi if mi >= 0 else None

    def running_tasks(self) -> list[list[tuple[TaskRef, int]]]:
        """Per user, its running tasks and their machines.

        Returns
        -------
        list of list of (TaskRef, int)
            Per user index, its running tasks and their machine indexes: maps by job and
            task, then the others in launch order.
        """
        running: list[list[tuple[TaskRef, int]]] = [[] for _ in self.users]
        for side in self.jobs.values():
            if side.phase == "map" and side.running:
                running[side.user] += [
                    (TaskRef(side.id, "map", t), int(mi))
                    for t, mi in enumerate(side.where)
                    if mi >= 0
                ]
        for user, tasks in zip(self.users, running, strict=True):
            tasks.extend(user.tasks.items())
        return running

    # ------------------------------------------------------------------ arrivals, machines

    def submit(
        self,
        job_id: int,
        job: Job,
        blocks: Sequence[Sequence[str]] | None,
        waits: tuple[float, float] | None,
    ) -> None:
        """A job arrives: its parts are registered, its map side pending (or waiting as a
        gang), its reduce side (and copy side) waiting for its maps.

        Parameters
        ----------
        job_id : int
            The driver's id for the job (submission order, unique).
        job : Job
            The job.
        blocks : sequence of sequence of str, optional
            Per map task, the machines holding its input block (data locality).
        waits : (float, float) or None
            The job's delay-scheduling waits (FAIR Algorithm 1), for a job that reads input.
        """
        cs = self.cluster
        user = self.user(job.user, job)
        demand = tuple(map(float, job.demand.tolist()))
        if job.priority:
            self.prioritized = True
        cls = cs.class_of(job)
        group = cs.group_of(cls, demand)
        state = JobState(job_id, job, user.idx, group, demand)
        state.share_per_task = self.ranking.share_per_task(state)
        self.ranking.on_submit(state)
        reducers = self._reduce_sides(job_id, job, user, cls, demand)
        if self.ends is not None:
            state.expected = expected_seconds(job)
            reduce = job.reduce
            for side in reducers:
                assert reduce is not None
                side.expected = reduce.copy + reduce.compute
        if reducers:
            state.reduce_after = self._reducers_after(state.maps, job.reduce)
        if blocks is not None:
            index = cs.index
            state.blocks = [tuple(index[name] for name in holders) for holders in blocks]
            state.launched = bytearray(job.tasks)
            for t in range(job.tasks - 1, -1, -1):
                for mi in state.blocks[t]:
                    state.by_machine.setdefault(mi, []).append(t)
                    state.by_rack.setdefault(cs.rack[mi], []).append(t)
            state.waits = waits
        if state.maps:
            self.jobs[state.key] = state
        if job.min_tasks is not None and state.pending:
            # A gang waits outside the job heaps until all its tasks fit at once.
            state.gang = job.min_tasks
            self.gangs[job_id] = state
            self.gang_news = True
        elif state.pending:
            self.activate(state, user)
        elif reducers:
            self._reducers_runnable(job_id, user)

    def machine_added(self, machine: Machine) -> int:
        """A machine joins: it is offered at the next decision, every waiting gang may fit.

        Parameters
        ----------
        machine : Machine
            The machine; its name may be that of a machine removed before.

        Returns
        -------
        int
            Its index.
        """
        mi = self.cluster.add_machine(machine)
        self._cluster_changed()
        self.dirty[mi] = None
        self.gang_news = True
        for gang in self.gangs.values():
            gang.short = 0  # new room: every gang may fit
        return mi

    def machine_removed(self, name: str) -> list[TaskRef]:
        """A machine leaves: the tasks running on it are lost and pending again (with
        copy-compute splitting, its reducers waiting to compute copy again).

        Parameters
        ----------
        name : str
            The machine's name.

        Returns
        -------
        list of TaskRef
            The tasks that were running on it, sorted.
        """
        cs = self.cluster
        mi = cs.index[name]
        lost: list[TaskRef] = []
        for user in self.users:
            for ref, at in list(user.tasks.items()):
                if at == mi:
                    lost.append(ref)
        for side in self.jobs.values():
            where = side.where
            if side.phase == "map" and mi in where:
                lost += [TaskRef(side.id, "map", t) for t, at in enumerate(where) if at == mi]
        lost.sort()
        for ref in lost:
            self.stop_task(ref, "lost")
        if self.copy_compute is not None:
            # Reducers that had copied there and wait to compute lost their data: copy again.
            for ref in self.copy_compute.forget_machine(mi):
                copy = TaskRef(ref.job, "copy", ref.task)
                side = self.jobs[part_id(ref.job, "copy")]
                self._pend(side, self.users[side.user], copy)
        cs.remove_machine(mi)
        self.dirty.pop(mi, None)
        self._cluster_changed()
        # A reservation may have counted on the machine.
        self.gang_news = True
        return lost

    def _cluster_changed(self) -> None:
        """A machine joined or left: the strategies drop what they cached, and every share
        and rank is recomputed when the ranking's shares depend on the totals (and the rates
        of usage over time, which are relative to the capacity)."""
        self.selection.on_cluster_change()
        # A kept EASY reservation may count on a machine that left, or miss one that came.
        self.cluster_changes += 1
        ranking = self.ranking
        ranking.on_cluster_change()
        if ranking.cluster_dependent:
            self.refresh_all()
        if self.accounting:
            for user in self.users:
                self.account(user)

    def account(self, user: UserState) -> None:
        """The user's holding changed at ``now``: its usage over time is brought up to now
        at the rate it held, and its new rate set (its share; each resource's allocation
        relative to the cluster's capacity). The one place usage changes.

        Parameters
        ----------
        user : UserState
            The user.
        """
        now = self.now
        if self.usage is not None:
            self.usage.set_share(user.idx, now, user.share)
        if self.resource_usage is not None:
            self.resource_usage.set_relative(user.idx, now, user.alloc, self.cluster.total)

    def refresh_all(self) -> None:
        """Recompute every job's share per task and every rank (the cluster or the weights
        changed under a ranking whose share depends on them)."""
        for user in self.users:
            user.share = 0.0
        share_per_task = self.ranking.share_per_task
        for job in self.jobs.values():
            job.share_per_task = share_per_task(job)
            self.users[job.user].share += job.running * job.share_per_task
        for grp in self.cluster.groups:
            grp.heap.clear()
        for user in self.users:
            self.touch(user)

    def rerank(self) -> None:
        """Recompute every rank at ``now`` (usage over time: a standing's decayed part moves
        with the clock, so ranks computed at each user's last event drift; the scheduler
        calls this at least once per fraction of the half-life)."""
        for grp in self.cluster.groups:
            grp.heap.clear()
        for user in self.users:
            self.touch(user)

    def wake_at(self, t: float) -> None:
        """Ask the driver to call ``advance`` at ``t`` (a delay-scheduling wait or a
        preemption timeout ends then).

        Parameters
        ----------
        t : float
            The time.
        """
        heappush(self.wakeups, t)

    def mark_roomy(self) -> None:
        """Every alive machine with room is offered at the next decision (a job's allowed
        locality widened, or room held back as headroom is free again)."""
        for mi in self.cluster.roomy:
            self.dirty[mi] = None

    # ------------------------------------------------------------------ starting tasks

    def start_task(
        self,
        job: JobState,
        user: UserState,
        ref: TaskRef,
        mi: int,
        locality: Locality | None,
        out: list[Decision],
    ) -> int:
        """Start task ``ref`` of ``job`` on machine ``mi`` (the task is chosen by the
        placement: delay scheduling picks a map by locality): its demand leaves the machine's
        free room and joins its user's share (and allocation), it is numbered for preemption
        and EASY's expected ends, the launch is appended to ``out``, and it is counted: a
        pending task leaves its part's and user's pending counts and a drained part is
        retired; a waiting gang's task leaves its part's count (the gang's admission
        activates the rest); a compute part (copy-compute splitting) takes one of its
        machine's compute slots. Re-bucketing the machine is the offer's, once it ends.

        Parameters
        ----------
        job : JobState
            The task's part.
        user : UserState
            Its user.
        ref : TaskRef
            The task.
        mi : int
            The machine's index.
        locality : {"node", "rack", "off_rack"} or None
            Where its input block is (None: it reads none).
        out : list of Decision
            Where the launch is appended.

        Returns
        -------
        int
            :data:`DRAINED` (the part has no pending task left: retired, its user touched),
            :data:`ROOM` (another task of the same demand fits the room left, by the plain
            fit test) or :data:`FULL`.
        """
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
        if self.track:
            alloc = user.alloc
            r = 0
            for d in demand:
                # Written out: the compiled kernel makes ``alloc[r] += d`` a generic in-place
                # add of two boxed floats.
                alloc[r] = alloc[r] + d
                r += 1  # noqa: SIM113
        if job.phase == "map":
            job.where[ref.task] = mi
        else:
            user.tasks[ref] = mi
        if self.launch_order is not None:
            self.launch_seq += 1
            self.launch_order[ref] = self.launch_seq
        if self.ends is not None:
            self.end_seq += 1
            ending = (self.now + job.expected, self.end_seq, mi, demand)
            self.ends[ref] = ending
            insort(self.by_end, ending)
        user.running += 1
        user.share += job.share_per_task
        job.running += 1
        self.serve_seq += 1
        user.served = self.serve_seq
        if self.accounting:
            self.account(user)
        out.append(Launch(ref, cs.names[mi], locality))
        if job.gang:
            job.pending -= 1
        elif ref.phase == "reduce" and self.copy_compute is not None:
            # A compute part was never pending: it takes a compute slot of its machine.
            self.copy_compute.compute_started(mi)
            self.touch(user)
        else:
            user.pending -= 1
            job.pending -= 1
            if job.pending == 0:
                self.retire(job, user)
                self.touch(user)
                return DRAINED
        return ROOM if room else FULL

    # ------------------------------------------------------------------ stopping tasks

    def stop_task(self, ref: TaskRef, reason: StopReason) -> None:
        """Running task ``ref`` stops: ``finished`` (counted; its machine offered at the next
        decision), or ``killed``, ``lost`` or ``failed`` (pending again, :meth:`requeue`).

        Parameters
        ----------
        ref : TaskRef
            The task, running until now.
        reason : {"finished", "killed", "lost", "failed"}
            Why it stops.
        """
        if reason == "finished":
            self.release((ref,), finished=True, then="offer")
        else:
            self.requeue(ref)

    def release(
        self,
        tasks: Sequence[TaskRef],
        *,
        finished: bool,
        then: Literal["offer", "settle", "hold"],
        times: Sequence[float] | None = None,
    ) -> int:
        """Stop running ``tasks``, in order (finished, killed or lost): each one's demand
        goes back to its machine and leaves its user's share; its user's entries go stale.
        The machine is then re-bucketed and marked for the next decision's offers
        (``then`` ``"offer"``), only re-bucketed (``"settle"``: nobody waits), or left as it
        is (``"hold"``: the caller offers it at once and re-buckets it after). With
        ``finished``, each task is also counted as finished and its user touched; a killed
        or lost task is the caller's to re-queue.

        One call releases a whole batch (the finishes a driver held back): the hottest path
        of a large run, so the per-task steps are taken here, not by a call each.

        Parameters
        ----------
        tasks : sequence of TaskRef
            The running tasks.
        finished : bool
            Whether they finished (else killed, lost or failed).
        then : {"offer", "settle", "hold"}
            What becomes of their machines.
        times : sequence of float, optional
            Each task's stop time, at which usage over time books it (finishes a driver
            held back); None: all at ``now``.

        Returns
        -------
        int
            The machine of the last.
        """
        jobs = self.jobs
        users = self.users
        cs = self.cluster
        alive = cs.alive
        frees = cs.free
        dirty = self.dirty
        keys = cs.keys
        order = self.launch_order
        track = self.track
        ranking = self.ranking
        reorder = ranking.reorder_jobs
        idle_touches = self.idle_touches
        offer = then == "offer"
        settle = offer or then == "settle"
        ends = self.ends
        freed = self.freed if self.gangs else None
        accounting = self.accounting
        timed = accounting and times is not None
        k = 0
        mi = -1
        # The machine whose re-bucketing waits for the end of its run of consecutive releases
        # (-1: none). Buckets are read only by offers and gang plans, and ``roomy`` by
        # activating a copy part, so one move at the end of a run leaves them as a move per
        # release would: the intermediate buckets are joined and left again (see
        # ClusterState.rebucket), and a machine's room only grows here.
        moved = -1
        # Likewise the user whose touch waits for the end of its run of consecutive releases
        # (the instances of a task end together): only its last entry would stay valid, and
        # nothing here reads the selection's entries.
        waiting: UserState | None = None
        for ref in tasks:
            if timed:
                assert times is not None
                self.now = times[k]
                k += 1
            if ref.phase == "map":
                # The job id as the object the TaskRef holds (see TaskRef.key).
                job = jobs[ref.key]
                user = users[job.user]
                where = job.where
                index = ref.task
                mi = int(where[index])
                where[index] = -1
                is_map = True
            else:
                job = jobs[part_id(ref.job, ref.phase)]
                user = users[job.user]
                is_map = False
                mi = user.tasks.pop(ref)
            if order is not None:
                del order[ref]
            if ends is not None:
                by_end = self.by_end
                del by_end[bisect_left(by_end, ends.pop(ref))]
            demand = job.demand
            if freed is not None:
                freed.append(demand)
            if alive[mi]:
                free = frees[mi]
                r = 0
                for d in demand:
                    # Written out: the compiled kernel makes ``free[r] += d`` a generic
                    # in-place add of two boxed floats.
                    free[r] = free[r] + d
                    r += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
                if settle:
                    if moved != mi:
                        if moved >= 0:
                            cs.rebucket(moved)
                        moved = mi
                    if offer:
                        # The machine's own key object (ClusterState.keys).
                        dirty[keys[mi]] = None
            if track:
                alloc = user.alloc
                r = 0
                for d in demand:
                    alloc[r] = alloc[r] - d  # written out, as above
                    r += 1  # noqa: SIM113
            user.share -= job.share_per_task
            user.version += 1
            user.running -= 1
            if not user.running:
                # Exact zero: no drift from summing and subtracting shares.
                user.share = 0.0
                user.alloc = [0.0] * len(demand)
            if accounting:
                self.account(user)
            job.running -= 1
            if reorder and job.pending > 0:
                job.version += 1
                heappush(
                    user.job_heaps[job.group],
                    (-job.priority, ranking.job_rank(job), job.part_id, job.version, job),
                )
            if not finished:
                continue
            if not is_map or job.maps_done + 1 == job.reduce_after:
                # The count below reads what waits: a reducer part's may offer machines
                # (copy-compute splitting), and a job's last map activates its reducers
                # (a copy part's activation reads ``roomy``). The waiting move and touch first.
                if moved >= 0:
                    cs.rebucket(moved)
                    moved = -1
                if waiting is not None:
                    self.touch(waiting)
                    waiting = None
            if not is_map:
                self._count_finish(job, user, ref, mi)
            else:
                # A map task's count, the hot one, in place (a reducer part's: above).
                job.finished += 1
                job.maps_done += 1
                if job.maps_done == job.reduce_after:
                    self._reducers_runnable(job.id, user)
                if job.finished == job.maps:
                    del jobs[job.part_id]
            if (user.job_heaps or idle_touches) and waiting is not user:
                if waiting is not None:
                    self.touch(waiting)
                waiting = user
            # else: the selection has nothing to refresh; the version moved above.
        if waiting is not None:
            self.touch(waiting)
        if moved >= 0:
            cs.rebucket(moved)
        return mi

    def _count_finish(self, job: JobState, user: UserState, ref: TaskRef, mi: int) -> None:
        """A reducer's part (``ref`` of ``job``, released from machine ``mi``) finished:
        count it, retire a part whose tasks all finished, and with copy-compute splitting
        (FAIR section 5.2) ask the machine to compute a reducer that finished copying. (A
        map task's count is :meth:`release`'s.)"""
        job.finished += 1
        cpac = self.copy_compute
        if ref.phase == "copy":
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

    def requeue(self, ref: TaskRef) -> None:
        """A running task was killed, lost or failed: it is pending again, as if it never
        started (with copy-compute splitting, a reducer's copy or compute part: it copies
        again).

        Parameters
        ----------
        ref : TaskRef
            The task, running until now.
        """
        job = self.part_of(ref)
        user = self.users[job.user]
        self._stop(ref)
        if self.copy_compute is not None and ref.phase != "map":
            ref = TaskRef(ref.job, "copy", ref.task)
            job = self.jobs[part_id(ref.job, "copy")]
        self._pend(job, user, ref)

    def requeue_gang(self, job: JobState) -> list[TaskRef]:
        """Preemption takes a running gang (``job``, a map side with ``min_tasks``): all its
        running tasks stop, and it waits for admission again as a gang (in no job heap, its
        tasks not pending one by one), for ``min_tasks`` tasks, or all it has left if fewer:
        they start together again or not at all (:mod:`fairshare.policies.gangs`). Its
        stopped tasks run again before its never started ones.

        Parameters
        ----------
        job : JobState
            The gang's map side, with running tasks.

        Returns
        -------
        list of TaskRef
            The stopped tasks, by task index.
        """
        where = job.where
        min_tasks = job.job.min_tasks
        assert job.phase == "map" and min_tasks is not None and not job.gang
        user = self.users[job.user]
        stopped = [TaskRef(job.id, "map", t) for t, mi in enumerate(where) if mi >= 0]
        for ref in stopped:
            self._stop(ref)
        if job.pending > 0:
            # Its tasks beyond min_tasks leave the job heaps (the entries a stop pushed too):
            # nothing of the gang starts on its own.
            user.pending -= job.pending
            self.retire(job, user)
            self.offers.pop(job.part_id, None)
        job.requeue.extend(stopped)
        job.pending += len(stopped)
        job.gang = min(min_tasks, job.pending)
        job.short = 0
        self.gangs[job.part_id] = job
        self.gang_news = True
        self.touch(user)
        return stopped

    def _stop(self, ref: TaskRef) -> None:
        """Running task ``ref`` stops before its end (killed, lost, failed or cancelled): its
        room is released, and with copy-compute splitting its reducer leaves the machine's
        admission counts (FAIR section 5.2). Whether it runs again is the caller's."""
        mi = self.release((ref,), finished=False, then="offer")
        cpac = self.copy_compute
        if cpac is not None and ref.phase != "map":
            if ref.phase == "copy":
                cpac.copy_stopped(ref.job, mi, finished=False)
            else:
                cpac.compute_stopped(mi)

    def cancel(self, job_id: int) -> list[TaskRef]:
        """Job ``job_id`` leaves before it finished (cancelled by its tenant, or failed): each
        of its parts stops pending (:meth:`retire`), its running tasks stop and are returned,
        sorted, and the parts are forgotten. A job already finished (no part left) returns
        nothing.

        Parameters
        ----------
        job_id : int
            The driver's id of the job.

        Returns
        -------
        list of TaskRef
            Its tasks that were running, sorted.
        """
        parts = [
            part
            for part in (
                self.jobs.get(job_id),
                self.jobs.get(part_id(job_id, "reduce")),
                self.jobs.get(part_id(job_id, "copy")),
            )
            if part is not None
        ]
        if not parts:
            return []
        user = self.users[parts[0].user]
        stopped = [ref for ref in user.tasks if ref.job == job_id]
        for part in parts:
            if part.gang:
                # A waiting gang: in no job heap, and its tasks never counted as pending.
                del self.gangs[part.part_id]
                part.gang = 0
                part.pending = 0
                self.gang_news = True  # it may have held the reservation
            elif part.pending > 0:
                user.pending -= part.pending
                part.pending = 0
                part.requeue.clear()
                self.retire(part, user)
            if part.phase == "map":
                stopped += [TaskRef(job_id, "map", t) for t, mi in enumerate(part.where) if mi >= 0]
        stopped.sort()
        for ref in stopped:
            self._stop(ref)
        if self.copy_compute is not None:
            # Reducers that finished copying and wait to compute hold a reducer slot.
            self.copy_compute.forget_job(job_id)
        for part in parts:
            del self.jobs[part.part_id]
        self.touch(user)
        return stopped

    def _pend(self, job: JobState, user: UserState, ref: TaskRef) -> None:
        """Task ``ref`` of ``job`` is pending again."""
        job.requeue.append(ref)
        if job.pending == 0:
            job.pending = 1
            self.activate(job, user)
        else:
            job.pending += 1
            user.pending += 1
            self.touch(user)

    # ------------------------------------------------------------------ ranks, job heaps

    def touch(self, user: UserState) -> None:
        """The user's rank, pending work or cap changed: its version moves (its older entries
        go stale) and the selection refreshes what it reads.

        Parameters
        ----------
        user : UserState
            The user.
        """
        user.version += 1
        self.selection.touched(user)

    def activate(self, job: JobState, user: UserState) -> None:
        """``job`` has new pending tasks: put it in its user's job heap and offer it the free
        machines it may use.

        Parameters
        ----------
        job : JobState
            The job part.
        user : UserState
            Its user.
        """
        job.version += 1
        key = self.cluster.groups[job.group].key
        heap = user.job_heaps.get(key)
        if heap is None:
            heap = user.job_heaps[key] = []
            user.groups.append(job.group)
            group_users = self.cluster.groups[job.group].users
            if not group_users:
                self.cluster.group_active(job.group, True)
            group_users[user.idx] = None
        heappush(heap, (-job.priority, self.ranking.job_rank(job), job.part_id, job.version, job))
        heappush(user.waiting, (job.job.submit, job.part_id, job))
        user.pending += job.pending
        self.touch(user)
        self.offers[job.part_id] = None
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

    def retire(self, job: JobState, user: UserState) -> None:
        """``job`` launched its last pending task: its entry in its user's job heap goes
        stale, and a user left with no job in the group leaves the group (the group goes
        inactive when it was the last).

        Parameters
        ----------
        job : JobState
            The job part.
        user : UserState
            Its user.
        """
        job.version += 1
        group = job.group
        if self.first_pending(user.job_heaps[group]) is None:
            # The user's entries go stale too: a valid entry's group is one of its user's
            # groups (the selection need not look the group up).
            user.version += 1
            del user.job_heaps[group]
            user.groups.remove(group)
            group_users = self.cluster.groups[group].users
            del group_users[user.idx]
            if not group_users:
                self.cluster.group_active(group, False)
        if user.pending == 0:
            # Every entry of its pending-since heap is stale (pending_since would drop them
            # all): dropped now, since they hold their parts, and a user with nothing left to
            # launch is not asked again (a part's task list would be kept to the run's end).
            user.waiting.clear()

    def reorder(self, job: JobState, user: UserState) -> None:
        """The job's place among its user's jobs moved (FAIR's fair order inside a pool): a
        fresh entry in its user's job heap.

        Parameters
        ----------
        job : JobState
            The job part, with pending tasks.
        user : UserState
            Its user.
        """
        job.version += 1
        heappush(
            user.job_heaps[job.group],
            (-job.priority, self.ranking.job_rank(job), job.part_id, job.version, job),
        )

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
        if self.copy_compute is not None:
            zero = (0.0,) * len(demand)
            sides.append(JobState(job_id, job, user.idx, cs.group_of(cls, zero), zero, "copy"))
        for side in sides:
            side.share_per_task = self.ranking.share_per_task(side)
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
        side = self.jobs.get(part_id(job_id, "reduce" if self.copy_compute is None else "copy"))
        if side is None:
            return  # a job without reducers
        side.pending = side.reduces
        self.activate(side, user)
