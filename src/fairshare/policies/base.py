"""The share-ordered online scheduler every policy builds on: the protocol's events
(:mod:`fairshare.policies.protocol`) on top of the bookkeeping
(:mod:`fairshare.policies.ledger`: one function per state change), the headroom
(:mod:`fairshare.policies.headroom`) and the placement (:mod:`fairshare.policies.filling`).

A policy is a subclass that overrides some of these extension points. Overriding one never
changes a decision of the others, but some turn off a fast path that relies on the base's
version (the decisions stay the same; the run is slower):

| extension point | what it says | default | overriding it turns off |
| --- | --- | --- | --- |
| ``share_per_task(job)`` | what one running task adds to its user's share | 1 | nothing |
| ``user_rank(user, group)`` | the order of users (lowest first) | share / divisor | one heap entry per user for all its groups (an entry per group instead) |
| ``job_rank(job)`` | the order of a user's jobs | submission order | nothing (set ``reorder_jobs`` when it moves as jobs run) |
| ``select(mi)`` | the (user, group) a machine serves next | lowest valid heap entry whose task fits | batched launches, the fused finish and held-back finishes, the solo offer |
| ``_bound(mi, u)`` | a lower bound on every other user's entry (keeps a batch going) | heaps' tops | the solo offer |
| ``skip(user, group)``, ``_restore_held()`` | set a (user, group) aside for one offer (delay scheduling), and back | pop and push the heap entry | nothing |
| ``_touch(user)`` | the user's rank changed: refresh what selection reads | push fresh heap entries | nothing (H-DRF's own selection relies on its own) |
| ``on_new_user(user)``, ``on_cluster_change()`` | a user appears; a machine joins or leaves | nothing | nothing |
| ``tracks_allocation`` | keep per-resource user allocations | False | held-back finishes |
| ``finish_and_decide(now, task)`` | the protocol's fused finish | :meth:`Scheduler.finish_and_decide` | held-back finishes |
| ``preemption_weight``, ``preemption_min_share``, ``preemption_shares`` | the fair shares preemption protects | weight, 0, FAIR's water-filling | nothing |

:meth:`Scheduler._own_selection` says whether the selection in use is the one the fast paths
were written for (a policy with its own, such as H-DRF, answers for its own).

What preemption (:mod:`fairshare.policies.preemption`) uses, by design: ``head_job``,
``part_of``, ``may_place``, ``requeue``, ``requeue_gang``, ``offer_machine``, ``wake_at``,
``running_tasks``, ``machine_of``, ``launch_order`` and ``preemption_state``.

Order of work inside :meth:`Scheduler.decide`: the waiting gangs, when something happened that
may let one start (:mod:`fairshare.policies.gangs`), then machines with new room in the order
they got it, then jobs with new work; with preemption on, then the kills (FAIR section 3.2) and the
placements on the room they free.

Examples
--------
The base itself orders users by running tasks over weight (a max-min of tasks): on six
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
"""  # noqa: E501 (the extension points' table is one row per line)

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster, Machine
from fairshare.policies.filling import Filling
from fairshare.policies.gangs import expected_seconds
from fairshare.policies.options import PolicyOptions
from fairshare.policies.preemption import preempt
from fairshare.policies.protocol import Decision, TaskRef
from fairshare.policies.records import JobState, UserState, part_id
from fairshare.policies.shares import fair_shares
from fairshare.workload.model import Job, Queue, User


@mypyc_attr(allow_interpreted_subclasses=True)
class Scheduler(Filling):
    """Share-ordered online scheduling with delay scheduling and preemption (see module).

    The protocol's events of :mod:`fairshare.policies.protocol` on the bookkeeping of
    :class:`~fairshare.policies.ledger.Ledger`: every policy of
    :data:`~fairshare.policies.ONLINE_POLICIES` is a subclass that overrides some extension
    points (the module's table). Used as it is, it orders users by running tasks over
    weight. Build a registered policy with :func:`~fairshare.policies.make_policy`.

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
        Delay scheduling, preemption, headroom, reducer slow-start, copy-compute splitting
        (default: none).

    Examples
    --------
    A policy written in Python overrides an extension point: here a user's share is the
    memory its tasks hold, so b's small tasks go first until the shares meet.

    >>> import numpy as np
    >>> from collections import Counter
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.policies import Scheduler
    >>> from fairshare.policies.records import JobState
    >>> from fairshare.workload.model import Job
    >>> class MemoryShare(Scheduler):
    ...     def share_per_task(self, job: JobState) -> float:
    ...         return job.demand[1] / self.cluster.total[1]
    >>> cluster = Cluster.build(["cpu", "mem"], [Machine("m", np.array([6.0, 12.0]))])
    >>> policy = MemoryShare(cluster)
    >>> policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0, 4.0]), 10))
    >>> policy.job_submitted(0.0, 1, Job("y", 0.0, "b", np.array([1.0, 1.0]), 10))
    >>> sorted(Counter(d.task.job for d in policy.decide(0.0)).items())
    [(0, 2), (1, 4)]
    >>> [round(user.share, 3) for user in policy.users]
    [0.667, 0.333]
    """

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        # Entries set aside by skip() for the rest of one machine's offer.
        self._held: list[tuple[int, tuple[int, float, int, int]]] = []
        super().__init__(cluster, users=users, queues=queues, options=options)
        cls = type(self)
        # Batched launches (see Filling._serve) rely on the selection this class was
        # written for (a job order that moves is followed inside the batch).
        # Quotas test every launch against the queues' usage (Filling.offer_machine), so
        # they select every task afresh.
        self._batching = self._own_selection() and self.quotas is None
        # Whether finish_and_decide may take its fast path at all (the per-call conditions
        # are checked there): no mechanism it leaves to the general path is on.
        self._fused = (
            self._batching
            and self._cpac is None
            and self.options.preemption is None
            and not self.options.headroom
        )
        # Whether finishes may be held back while nobody waits (see quiescent): this
        # class's fused path, without per-resource allocations (H-DRF's vectors).
        self._quiet_path = (
            self._fused
            and cls.finish_and_decide is Scheduler.finish_and_decide
            and not self.tracks_allocation
        )
        # Whether an offer may skip the selection and the batch bound when the offered job's
        # user is the only one with work (see Filling._offer_job): this class's selection
        # and bound, the plain fit test.
        self._solo_offers = (
            self._batching
            and cls.select is Filling.select
            and cls._bound is Filling._bound
            and not self.options.headroom
        )
        # Only delay-scheduling waits and preemption timeouts ask for wake-ups.
        self.uses_wakeups = (
            self.options.delay is not None
            or bool(self.options.job_delays)
            or self.options.preemption is not None
        )

    def _own_selection(self) -> bool:
        """Whether this policy selects with the selection the batched launches and the fused
        finish were written for (the base's; H-DRF answers for its own)."""
        return type(self).select is Filling.select

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
        cs = self.cluster
        user = self._user(job.user, job)
        demand = tuple(map(float, job.demand.tolist()))
        if job.priority:
            self.prioritized = True
        cls = cs.class_of(job)
        group = cs.group_of(cls, demand)
        state = JobState(job_id, job, user.idx, group, demand)
        state.share_per_task = self.share_per_task(state)
        reducers = self._reduce_sides(job_id, job, user, cls, demand)
        if self._ends is not None:
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
            waits = self.options.job_delays.get(job.name, self.options.delay)
            state.waits = waits
        if state.maps:
            self.jobs[job_id] = state
        if job.min_tasks is not None and state.pending:
            # A gang waits outside the job heaps until all its tasks fit at once.
            state.gang = job.min_tasks
            self.gangs[job_id] = state
            self._gang_news = True
        elif state.pending:
            self._activate(state, user)
        elif reducers:
            self._reducers_runnable(job_id, user)

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
        self._release((task,), finished=True, then="offer")

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        """:meth:`task_finished` then :meth:`decide` (the protocol's fused call), with a fast
        path for the steady state of a busy cluster: a map task finishes, nothing else
        waits to be placed, and its machine is offered at once without being marked for
        offers or re-bucketed before the offer. The decisions are those of the two calls:
        ``decide`` would offer exactly this machine, first (nothing else is marked, no job
        waits for offers), and buckets are read only by offers, so one re-bucketing after
        the offer leaves them as the general path's two do (with
        :meth:`ClusterState.bump` when the machine ends where it started).

        Everything else takes the general path (see :meth:`_fusable`).

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
        if not self._fusable(task):
            self.task_finished(now, task)
            return self.decide(now)
        self._now = now
        mi = self._release((task,), finished=True, then="hold")
        cs = self.cluster
        # While nobody has pending work, no selection can find anyone.
        pick = self.select(mi) if cs.active_groups else None
        if pick is None:
            cs.rebucket(mi)
            return []
        out: list[Decision] = []
        old = cs.free_of[mi]
        freed = old is not None and tuple(cs.free[mi]) != old
        self.offer_machine(mi, now, out, pick)
        if freed and cs.free_of[mi] == old:
            # Filled back to where it was: the general path's two re-bucketings (at the
            # finish, after the offer) would have moved it to the end of its bucket, and
            # offers take machines from there.
            cs.bump(mi)
        return out

    def _fusable(self, task: TaskRef) -> bool:
        """Whether the finish of ``task`` may take the fused path; not when the fused path
        is off for this policy's options, the task is no map task, the job's reducers
        become runnable, machines or jobs wait for offers, a wake-up is due, or the machine
        is gone."""
        job = self.jobs.get(task[0]) if task[1] == "map" else None
        if (
            job is None
            or not self._fused
            # Reducers becoming runnable (a job without them has none to wake).
            or job.maps_done + 1 == job.reduce_after
            or self.dirty
            or self._offers
            or self._wakeups
            # Freed room may admit a waiting gang (tried before any offer).
            or self.gangs
        ):
            return False
        where = job.where
        assert where is not None
        return self.cluster.alive[where[task[2]]]

    def quiescent(self) -> bool:
        """The protocol's promise that finishes may be held back (see
        :mod:`fairshare.policies.protocol`): nobody has work to place, no machine or job
        waits for an offer, no wake-up is due, and no mechanism of the general path is on
        (the fused path's conditions). Policies with their own fused path or per-resource
        allocations (H-DRF) do not promise it.

        Returns
        -------
        bool
            Whether the driver may hold finishes back for :meth:`tasks_finished`.
        """
        return (
            self._quiet_path
            and not self.cluster.active_groups
            and not self.dirty
            and not self._offers
            and not self._wakeups
            and not self.gangs
        )

    def tasks_finished(self, now: float, tasks: Sequence[TaskRef]) -> None:
        """Finishes held back while :meth:`quiescent`, in the order they happened: each is
        released as :meth:`finish_and_decide` releases it when nobody can be served (its
        machine re-bucketed at once and not marked dirty: there is no decision to take).
        The tasks are map tasks of jobs without a reduce phase on machines that are alive
        (the protocol's promise covers no other; the tasks of a removed machine were
        re-queued when it left).

        Parameters
        ----------
        now : float
            The time of the last of them.
        tasks : sequence of TaskRef
            The finished tasks, in the order they finished.
        """
        if not self._quiet_path:
            for task in tasks:
                self.task_finished(now, task)
            return
        self._release(tasks, finished=True, then="settle")

    def machine_added(self, now: float, machine: Machine) -> None:
        """A machine joins: it is offered at the next :meth:`decide` (and policies whose
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
        mi = self.cluster.add_machine(machine)
        self.on_cluster_change()
        self.dirty[mi] = None
        self._gang_news = True
        for gang in self.gangs.values():
            gang.short = 0  # new room: every gang may fit

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
        cs = self.cluster
        mi = cs.index[name]
        lost: list[TaskRef] = []
        for user in self.users:
            for ref, at in list(user.tasks.items()):
                if at == mi:
                    lost.append(ref)
        for side in self.jobs.values():
            where = side.where
            if where is not None and mi in where:
                lost += [TaskRef(side.id, "map", t) for t, at in enumerate(where) if at == mi]
        lost.sort()
        for ref in lost:
            self.requeue(ref)
        if self._cpac is not None:
            # Reducers that had copied there and wait to compute lost their data: copy again.
            for ref in self._cpac.forget_machine(mi):
                copy = TaskRef(ref.job, "copy", ref.task)
                side = self.jobs[part_id(ref.job, "copy")]
                self._pend(side, self.users[side.user], copy)
        cs.remove_machine(mi)
        self.dirty.pop(mi, None)
        self.on_cluster_change()
        # A reservation may have counted on the machine.
        self._gang_news = True
        return lost

    def task_failed(self, now: float, task: TaskRef) -> None:
        """A running task failed: its room is free and it is pending again
        (:meth:`~fairshare.policies.stops.Stops.requeue`).

        Parameters
        ----------
        now : float
            The time of the failure.
        task : TaskRef
            The task, running until now.
        """
        self.requeue(task)

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
        return self._cancel(job_id)

    def advance(self, now: float) -> None:
        """Time passed (a wake-up of :meth:`next_wakeup`): with delay scheduling, every
        machine with room is offered again at the next :meth:`decide`, as a job's allowed
        locality may have widened.

        Parameters
        ----------
        now : float
            The new time.
        """
        # A job's allowed locality may have widened (delay scheduling): offer free machines
        # again.
        if self.options.delay is not None or self.options.job_delays:
            for mi in self.cluster.roomy:
                self.dirty[mi] = None

    def next_wakeup(self) -> float | None:
        """When a delay-scheduling wait or a preemption timeout next ends.

        Returns
        -------
        float or None
            The earliest such time, or None when nothing waits.
        """
        return self._wakeups[0] if self._wakeups else None

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
        self._now = now
        while self._wakeups and self._wakeups[0] <= now:
            heappop(self._wakeups)
        self._place(now, out)
        if self.options.preemption is not None:
            # After placing, so free room counts as given; kills free machines to place on.
            self._preempt(now, out)
            self._place(now, out)
        return out

    # ------------------------------------------------------------------ running tasks

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
        if side.where is None:
            return self.users[side.user].tasks.get(ref)
        mi = side.where[ref.task]
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
            where = side.where
            if where is not None and side.running:
                running[side.user] += [
                    (TaskRef(side.id, "map", t), mi) for t, mi in enumerate(where) if mi >= 0
                ]
        for user, tasks in zip(self.users, running, strict=True):
            tasks.extend(user.tasks.items())
        return running

    # ------------------------------------------------------------------ preemption

    def _preempt(self, now: float, out: list[Decision]) -> None:
        """FAIR section 3.2: see :mod:`fairshare.policies.preemption` for the rules."""
        preempt(self, now, out)

    def preemption_weight(self, user: UserState) -> float:
        """The weight the policy divides a user's share by, for its fair share.

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
            Its weight (``collapsed-drf``: its flattened weight).
        """
        return user.weight

    def preemption_min_share(self, user: UserState) -> float:
        """The user's minimum share in share units: none, unless the policy places by it.

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
            0 (FAIR: the pool's ``min_share``, in slots).
        """
        return 0.0

    def preemption_shares(self, demands: Sequence[float], capacity: float) -> list[float]:
        """Every user's fair share, in the policy's share unit, of ``capacity`` given its
        ``demands``: FAIR's Appendix A water-filling with the policy's weights and minimum
        shares (see :mod:`fairshare.policies.preemption`).

        Parameters
        ----------
        demands : sequence of float
            Per user, the share it holds plus that of its pending tasks (up to its cap).
        capacity : float
            The share all users hold now.

        Returns
        -------
        list of float
            Per user, its fair share.
        """
        return fair_shares(
            demands,
            [self.preemption_min_share(u) for u in self.users],
            [self.preemption_weight(u) for u in self.users],
            capacity,
        )
