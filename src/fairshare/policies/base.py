"""The share-ordered online scheduler every policy builds on (the offer loop of Mesos, the
heartbeat loop of Hadoop's FAIR scheduler, TSF section V-D's online algorithm).

Whenever room frees up on a machine, the machine is offered to the user (or pool) with the
lowest *key* that can use it and whose next task fits, one task at a time, until nothing fits.
A policy is a key: weighted dominant share for DRF, task share for TSF, resource share for
Choosy/CMMF, FAIR's "distance below minimum and fair share", submission order for FIFO. Inside
a user, its jobs go in the policy's job order (FIFO by default).

Data structures (why a decision is O(G + log n), G the groups eligible for the machine):
users sit in one heap per group (see :mod:`fairshare.policies.state`) keyed by
``(key, user order, user index, version)``; a change of a user's share pushes a fresh entry and
the old one is dropped when it surfaces (lazy invalidation). Ties go to the user seen first:
users named in the scenario in scenario order, then the others in order of their first job's
submission.

Placing several tasks on one machine does not re-select before every task when the answer is
known: after a launch the chosen user keeps the machine while its task still fits and its new
key stays below a lower bound on every other user's entry in the groups that fit (a heap's
top, or the first valid entry under the user's own). The decisions are exactly those of
selecting before each task; the batch only skips the selections whose answer is known.
An arriving job takes machines from its class's free-vector buckets
(:class:`fairshare.policies.state.ClusterState`), one fit test per bucket.

Order of work inside :meth:`Scheduler.decide`: machines with new room in the order they got
it, then jobs with new work; with preemption on, then the kills (FAIR section 3.2) and the
placements on the room they free.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from heapq import heappop, heappush

from fairshare.cluster import Cluster, Machine
from fairshare.policies.copy_compute import CopyComputeAdmission
from fairshare.policies.delay import deadlines, locality_of, pick_map
from fairshare.policies.options import PolicyOptions
from fairshare.policies.preemption import PreemptionState, fair_shares, preempt
from fairshare.policies.protocol import Decision, Launch, Locality, Policy, TaskRef
from fairshare.policies.state import (
    EPS,
    ClusterState,
    Demand,
    JobState,
    UserState,
    fits,
    side_key,
)
from fairshare.workload.model import Job, Queue, User


class Scheduler(Policy):
    """Share-ordered online scheduling with delay scheduling and preemption (see module)."""

    name = "base"
    tracks_allocation = False
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
        self.jobs: dict[int, JobState] = {}
        self.dirty: dict[int, None] = {}
        # Jobs with new pending tasks, to be offered the free machines they may use.
        self._offers: dict[int, None] = {}
        self._held: list[tuple[int, tuple[float, int, int, int]]] = []
        self._wakeups: list[float] = []
        self._launch_seq = 0
        # Running task -> its launch number (across users), kept only with preemption, which
        # kills the most recently launched tasks first (FAIR section 3.2): without it a
        # launch allocates nothing for its order.
        self.launch_order: dict[TaskRef, int] | None = (
            {} if self.options.preemption is not None else None
        )
        self.preemption_state = PreemptionState()
        # H-DRF section 5's headroom (see headroom()): each machine's capacity as floats,
        # and the groups whose tasks the headroom was last kept for (when one drops out,
        # room it held back may be used: its machines are offered again).
        self._headroom = self.options.headroom
        self._capacity: dict[int, Demand] = {}
        self._group_keys: dict[Demand, dict[int, tuple[float, float] | None]] = {}
        self._kept_for: frozenset[int] = frozenset()
        # Whether a job's place among its user's jobs moves as it runs tasks (FAIR's fair
        # order inside a pool); FIFO order never moves.
        self.reorder_jobs = False
        # Batched launches (see _fill) rely on the share-ordered selection of this class (a
        # job order that moves is followed inside the batch).
        self._batching = type(self).select is Scheduler.select
        # Copy-compute splitting (FAIR section 5.2): the machines' admission control, and
        # per (machine, demand) how many compute parts fit on the machine's capacity.
        self._cpac: CopyComputeAdmission | None = None
        if self.options.copy_compute is not None:
            self._cpac = CopyComputeAdmission(*self.options.copy_compute)
        self._compute_slots: dict[tuple[int, Demand], int] = {}
        # Hooks left as they are here let the hot paths skip the calls (see _fill and
        # finish_and_decide); a subclass that overrides one gets the general path.
        cls = type(self)
        self._plain_hooks = (
            cls.on_launch is Scheduler.on_launch and cls.on_release is Scheduler.on_release
        )
        self._plain_key = cls.user_key is Scheduler.user_key
        # Whether finish_and_decide may take its fast path at all (the per-call conditions
        # are checked there): no mechanism it leaves to the general path is on.
        self._fused = (
            self._cpac is None
            and self.options.preemption is None
            and not self.options.headroom
            and self._batching
            and self._plain_hooks
        )
        # Whether finishes may be held back while nobody waits (see quiescent): this
        # class's fused path, not a subclass's own.
        self._quiet_path = (
            self._fused
            and cls.finish_and_decide is Scheduler.finish_and_decide
            and not self.tracks_allocation
        )
        self._resource_range = range(len(self.cluster.resources))
        # Whether an offer may skip the selection and the batch bound when the offered job's
        # user is the only one with work (see _place): this class's selection and bound, the
        # plain fit test.
        self._solo_offers = (
            cls.select is Scheduler.select
            and cls._bound is Scheduler._bound
            and self._plain_hooks
            and not self.options.headroom
        )
        # Only delay-scheduling waits and preemption timeouts ask for wake-ups.
        self.uses_wakeups = (
            self.options.delay is not None
            or bool(self.options.job_delays)
            or self.options.preemption is not None
        )
        for user in users:
            self._user(user.name, None)

    # ------------------------------------------------------------------ policy hooks

    def share_per_task(self, job: JobState) -> float:
        """How much one running task of ``job`` adds to its user's share."""
        return 1.0

    def user_key(self, user: UserState, group: int) -> float:
        """The quantity the policy equalises (lower goes first): weighted share by default."""
        return user.share / user.divisor

    def job_key(self, job: JobState) -> float:
        """The order of a user's jobs: FIFO (submission order)."""
        return float(job.id)

    def select(self, mi: int) -> tuple[int, int] | None:
        """The (user, group) to serve next on machine ``mi``: the lowest valid heap entry over
        the groups that may use ``mi`` and whose task fits there. Ties (one user's equal
        entries in two groups) go to the group listed first for the machine."""
        cs = self.cluster
        free = cs.free[mi]
        users = self.users
        groups = cs.groups
        best: tuple[float, int, int, int] | None = None
        best_group = -1
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
            if not self._headroom:
                demand = grp.demand
                i = 0
                for d in demand:
                    if free[i] + EPS < d:
                        break
                    i += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
                else:
                    best = entry
                    best_group = g
            elif self._fits(mi, free, grp.demand):
                best = entry
                best_group = g
        if best is None:
            return None
        return best[2], best_group

    def skip(self, user: int, group: int) -> None:
        """Set (user, group) aside for the rest of this machine's offer (delay scheduling)."""
        entry = heapq.heappop(self.cluster.groups[group].heap)
        self._held.append((group, entry))

    def refresh_all(self) -> None:
        """Recompute every job's share per task and every key (the cluster or the weights
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

    # ------------------------------------------------------------------ protocol: events

    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        cs = self.cluster
        user = self._user(job.user, job)
        demand = tuple(map(float, job.demand.tolist()))
        cls = cs.class_of(job)
        group = cs.group_of(cls, demand)
        state = JobState(job_id, job, user.idx, group, demand)
        state.share_per_task = self.share_per_task(state)
        state.reduce_after = self._reducers_after(state.maps)
        reducers = self._reduce_sides(job_id, job, user, cls, demand)
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
        if state.pending:
            self._activate(state, user)
        elif reducers:
            self._reducers_runnable(job_id, user)

    def task_finished(self, now: float, task: TaskRef) -> None:
        job = self._state(task)
        user = self.users[job.user]
        mi = self._release(job, user, task)
        self._mark(mi)
        job.finished += 1
        cpac = self._cpac
        if task.phase == "map":
            job.maps_done += 1
            if job.maps_done == job.reduce_after:
                self._reducers_runnable(job.id, user)
            if job.finished == job.maps:
                del self.jobs[job.key]
        elif task.phase == "copy":
            assert cpac is not None
            # The reducer keeps its reducer slot and asks its machine to compute.
            cpac.copy_stopped(task.job, mi, finished=True)
            cpac.wait(TaskRef(task.job, "reduce", task.task), mi)
        else:
            if cpac is not None:
                cpac.compute_stopped(mi)
            if job.finished == job.reduces:
                del self.jobs[job.key]
                # The copy side lives as long as the computes: a lost one copies again.
                self.jobs.pop(side_key(job.id, "copy"), None)
        self._touch(user)

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        """:meth:`task_finished` then :meth:`decide` (the protocol's fused call), with a fast
        path for the steady state of issue 4's throughput bar: a map task finishes, nothing
        else waits to be placed, and its machine is offered at once without being marked
        dirty, re-bucketed before the offer or passed through :meth:`_place`. The decisions
        are those of the two calls: ``decide`` would offer exactly this machine, first
        (nothing else is dirty, no job waits for offers), and buckets are read only by
        offers, so one re-bucketing after the fill leaves them as the general path's two do
        (with :meth:`ClusterState.bump` when the machine ends where it started).

        Everything else takes the general path: reducers becoming runnable, copy-compute
        splitting, preemption, headroom, delay-scheduling wake-ups, and subclasses with their
        own selection or launch hooks (H-DRF, which has a fused path of its own on
        :meth:`_fused_release`)."""
        released = self._fused_release(task)
        if released is None:
            self.task_finished(now, task)
            return self.decide(now)
        user, mi = released
        cs = self.cluster
        free = cs.free[mi]
        # _touch, inlined.
        user.version += 1
        if user.running < user.cap and user.job_heaps:
            groups = cs.groups
            for g in user.job_heaps:
                key = user.share / user.divisor if self._plain_key else self.user_key(user, g)
                heappush(groups[g].heap, (key, user.idx, user.idx, user.version))
        # While nobody has pending work, no selection can find anyone.
        pick = self.select(mi) if cs.active_groups else None
        if pick is None:
            cs.settle(mi)
            return []
        out: list[Decision] = []
        old = cs.key_of[mi]
        freed = old is not None and tuple(free) != old
        self._fill(mi, now, out, pick)
        if freed and cs.key_of[mi] == old:
            # Filled back to where it was: the general path's two re-bucketings (at the
            # finish, after the fill) would have moved it to the end of its bucket, and
            # offers take machines from there.
            cs.bump(mi)
        return out

    def quiescent(self) -> bool:
        """The protocol's promise that finishes may be held back (see
        :mod:`fairshare.policies.protocol`): nobody has work to place, no machine or job
        waits for an offer, no wake-up is due, and no mechanism of the general path is on
        (the fused path's conditions). Policies with their own fused path (H-DRF) do not
        promise it."""
        return (
            self._quiet_path
            and not self.cluster.active_groups
            and not self.dirty
            and not self._offers
            and not self._wakeups
        )

    def tasks_finished(self, now: float, tasks: Sequence[TaskRef]) -> None:
        """Finishes held back while :meth:`quiescent`, in the order they happened: each is
        released as :meth:`finish_and_decide` releases it when nobody can be served (its
        machine re-bucketed at once and not marked dirty: there is no decision to take)."""
        if not self._quiet_path:
            super().tasks_finished(now, tasks)
            return
        # The tasks are map tasks of jobs without a reduce phase (the protocol's promise
        # covers no other), on machines that are alive (the tasks of a removed machine were
        # re-queued when it left), and no policy that keeps per-resource allocations takes
        # this path (H-DRF has its own fused path): the release needs none of those checks.
        jobs = self.jobs
        users = self.users
        cs = self.cluster
        frees = cs.free
        key_of = cs.key_of
        cfor = cs.cfor
        pools = cs.pools
        n_res = self._resource_range
        reorder = self.reorder_jobs
        for task in tasks:
            job = jobs[task[0]]
            user = users[job.user]
            where = job.where
            index = task[2]
            mi = where[index]  # type: ignore[index]
            where[index] = -1  # type: ignore[index]
            demand = job.demand
            free = frees[mi]
            for r in n_res:
                free[r] += demand[r]
            user.running -= 1
            user.share -= job.share_per_task
            if user.running == 0:
                user.share = 0.0
                user.alloc = [0.0] * len(free)
            job.running -= 1
            if reorder and job.pending > 0:
                job.version += 1
                heappush(user.job_heaps[job.group], (self.job_key(job), job.key, job.version))
            job.finished += 1
            job.maps_done += 1
            if job.finished == job.maps:
                del jobs[job.key]
            if user.job_heaps:
                self._touch(user)
            else:
                user.version += 1
            # ClusterState.settle, inlined: a call per finish costs 1.7% of issue 4's
            # benchmark.
            old = key_of[mi]
            if old is None:
                cs.rebucket(mi)
                continue
            free_key = tuple(free)
            if free_key != old:
                for c in cfor[mi]:
                    pool = pools[c]
                    left = pool[old]
                    del left[mi]
                    if not left:
                        del pool[old]
                    joined = pool.get(free_key)
                    if joined is None:
                        pool[free_key] = {mi: None}
                    else:
                        joined[mi] = None
                key_of[mi] = free_key

    def _fused_release(self, task: TaskRef) -> tuple[UserState, int] | None:
        """The finish half of a fused path: map task ``task`` released inline (what
        :meth:`task_finished` does for it, without marking its machine dirty or re-bucketing
        it); returns its user and machine. None, with nothing changed, when the
        general path must take the finish: a fused path is off for this policy's options,
        the job's reducers become runnable, machines or jobs wait for offers, a delay
        wake-up is due, or the machine is gone."""
        job = self.jobs.get(task[0]) if task[1] == "map" else None
        if (
            job is None
            or not self._fused
            # Reducers becoming runnable (a job without them has none to wake).
            or (job.maps_done + 1 == job.reduce_after and job.job.reduce is not None)
            or self.dirty
            or self._offers
            or self._wakeups
        ):
            return None
        user = self.users[job.user]
        where = job.where
        assert where is not None
        mi = where[task[2]]
        cs = self.cluster
        if not cs.alive[mi]:
            return None
        where[task[2]] = -1
        # _release, inlined (on_release is the base's no-op).
        demand = job.demand
        free = cs.free[mi]
        if self.tracks_allocation:
            alloc = user.alloc
            for r in self._resource_range:
                d = demand[r]
                free[r] += d
                alloc[r] -= d
        else:
            for r in self._resource_range:
                free[r] += demand[r]
        user.running -= 1
        user.share -= job.share_per_task
        if user.running == 0:
            user.share = 0.0
            user.alloc = [0.0] * len(free)
        job.running -= 1
        if self.reorder_jobs and job.pending > 0:
            job.version += 1
            heappush(user.job_heaps[job.group], (self.job_key(job), job.key, job.version))
        job.finished += 1
        job.maps_done += 1
        if job.finished == job.maps:
            del self.jobs[job.key]
        return user, mi

    def machine_added(self, now: float, machine: Machine) -> None:
        mi = self.cluster.add_machine(machine)
        self.on_cluster_change()
        self._mark(mi)

    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
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
            self._requeue(ref)
        if self._cpac is not None:
            # Reducers that had copied there and wait to compute lost their data: copy again.
            for ref in self._cpac.forget_machine(mi):
                copy = TaskRef(ref.job, "copy", ref.task)
                side = self.jobs[side_key(ref.job, "copy")]
                self._pend(side, self.users[side.user], copy)
        cs.remove_machine(mi)
        self.dirty.pop(mi, None)
        self.on_cluster_change()
        return lost

    def advance(self, now: float) -> None:
        # A delay-scheduling level may have moved up: offer free machines again.
        if self.options.delay is not None or self.options.job_delays:
            for mi in self.cluster.roomy:
                self.dirty[mi] = None

    def on_cluster_change(self) -> None:
        """Called after a machine joins or leaves; policies whose share depends on the
        cluster recompute it."""

    # ------------------------------------------------------------------ protocol: decisions

    def decide(self, now: float) -> list[Decision]:
        out: list[Decision] = []
        while self._wakeups and self._wakeups[0] <= now:
            heapq.heappop(self._wakeups)
        self._place(now, out)
        if self.options.preemption is not None:
            # After placing, so free room counts as given; kills free machines to place on.
            self._preempt(now, out)
            self._place(now, out)
        return out

    def _place(self, now: float, out: list[Decision]) -> None:
        if self._cpac is not None and self._cpac.waiting:
            # The machines admit computes first: those reducers already hold their slots.
            self._admit_computes(out)
        self._offer(now, out)
        # Room held back as headroom for tasks that no longer wait (the last ones launched,
        # or their user reached its cap) may be used now: offer the machines again.
        while self._headroom and self._headroom_released():
            self._offer(now, out)

    def _offer(self, now: float, out: list[Decision]) -> None:
        """Offer the machines with new room, then the jobs with new work (see _place)."""
        cs = self.cluster
        dirty = self.dirty
        alive = cs.alive
        select = self.select
        while dirty:
            mi = next(iter(dirty))
            del dirty[mi]
            if alive[mi]:
                # Most machines freed by a finish find nobody to serve: select first.
                pick = select(mi)
                if pick is not None:
                    self._fill(mi, now, out, pick)
        # A job with new work is offered free machines only until it has none left: every
        # other user already had its chance at them (they were not dirty). Machines come from
        # the class's free-vector buckets (see fairshare.policies.state), one fit test per
        # bucket; a job that reads input tries every machine of a fitting bucket, since
        # there the machine decides the locality.
        offers = self._offers
        jobs = self.jobs
        headroom = self._headroom
        while offers:
            job_id = next(iter(offers))
            del offers[job_id]
            job = jobs.get(job_id)
            if job is None:
                continue
            demand = job.demand
            solo = self._solo_offers
            owner = self.users[job.user]
            workers = cs.groups[job.group].users
            for key, bucket in list(cs.pools[cs.groups[job.group].cls].items()):
                if job.pending == 0:
                    break
                if not fits(key, demand):
                    continue
                if job.blocks is not None or job.phase == "copy" or headroom:
                    # The machine decides the locality, or (a copy part, which takes no
                    # room) whether it admits one more reducer, or (headroom) how much of
                    # its room a task may use: try every machine.
                    for mi in list(bucket):
                        if job.pending == 0:
                            break
                        if cs.key_of[mi] == key:
                            self._fill(mi, now, out)
                    continue
                while bucket and job.pending > 0:
                    # The bucket's last machine, put straight back: popitem also forgets
                    # the deleted entries at the dict's end, which next(reversed(bucket))
                    # would walk past on every offer (machines leave buckets all the time).
                    mi = bucket.popitem()[0]
                    bucket[mi] = None
                    if (
                        solo
                        and cs.active_groups == 1
                        and len(workers) == 1
                        and owner.running < owner.cap
                    ):
                        # The job's user is the only one with work and its task fits: the
                        # selection is known, and no other user bounds the batch.
                        self._fill(mi, now, out, (job.user, job.group), solo=True)
                    else:
                        self._fill(mi, now, out)
                    if cs.key_of[mi] == key:
                        # Nothing was placed (cap or delay): the bucket's twins fare the same.
                        break

    def next_wakeup(self) -> float | None:
        return self._wakeups[0] if self._wakeups else None

    # ------------------------------------------------------------------ internals

    def _user(self, name: str, job: Job | None) -> UserState:
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

    def on_new_user(self, user: UserState) -> None:
        """Called when a user (or pool) first appears."""

    def _fits(self, mi: int, free: Sequence[float], demand: Demand) -> bool:
        """Whether a task of ``demand`` may launch on machine ``mi`` whose free room is
        ``free``: it fits, and with headroom on, it leaves the machine's headroom free
        unless it may use it (:meth:`headroom`)."""
        if not fits(free, demand):
            return False
        if not self._headroom:
            return True
        room = self.headroom(mi)
        if room is None:
            return True
        kept, size = room
        capacity = self._capacity[mi]
        if _size(demand, capacity) >= size - EPS:
            return True  # as large as the task the headroom is kept for
        if not fits(kept, demand):
            # It needs more of some resource than the headroom holds: if it never fits
            # beside the headroom, it may use it (held back, it would starve).
            for c, h, d in zip(capacity, kept, demand, strict=True):
                if c - h + EPS < d:
                    return True
        return all(f - d + EPS >= h for f, d, h in zip(free, demand, kept, strict=True))

    def headroom(self, mi: int) -> tuple[Demand, float] | None:
        """H-DRF section 5's headroom on machine ``mi`` (None: none is kept), and its size.

        The paper keeps, on each server, "a headroom equal to the size of the largest task",
        so that "a task with large resource demands does not get starved out by tasks with
        smaller demands" (section 5.2). Here the headroom is the demand of the largest task
        that waits for ``mi``: a pending task of a user below its cap, allowed on ``mi`` and
        fitting its capacity (so a task no machine can hold reserves nothing). A task's
        size on ``mi`` is its dominant share of ``mi``'s capacity; ties go to the larger
        sum of shares, then to the group seen first. The headroom follows the waiting
        tasks: when the largest ones stop waiting, it shrinks to the next largest, and
        nothing is kept while nobody waits.

        Who may use it (:meth:`_fits`): a task as large as the headroom's (the tasks it is
        kept for), and a task that needs more of some resource than the headroom holds and
        never fits beside it on ``mi`` (held back, it would starve for as long as the large
        tasks wait; it is a large task too, and the policy's order decides between them).
        Any other task leaves the headroom free: a task within the headroom is what would
        starve the large one, taking each bit of room as it frees. So a large task never
        waits for room that smaller tasks keep taking, and a task that fits an idle machine
        always starts: beside the headroom, in it, or once the larger tasks stopped waiting
        (they fit the idle machine, so they do not wait for ever): the headroom never
        strands a job."""
        capacity = self._capacity.get(mi)
        if capacity is None:
            capacity = self._capacity[mi] = tuple(
                map(float, self.cluster.machines[mi].capacity.tolist())
            )
        # Per capacity, each group's (size, sum of shares), None if it never fits.
        keys = self._group_keys.get(capacity)
        if keys is None:
            keys = self._group_keys[capacity] = {}
        groups = self.cluster.groups
        users = self.users
        best: Demand | None = None
        best_key = (EPS, 0.0)
        for g in self.cluster.afor[mi]:
            grp = groups[g]
            if not grp.users:
                continue
            if g in keys:
                key = keys[g]
            else:
                demand = grp.demand
                key = keys[g] = (
                    (_size(demand, capacity), sum(_shares(demand, capacity)))
                    if fits(capacity, demand)
                    else None
                )
            if key is None or not key > best_key:
                continue
            for u in grp.users:
                if users[u].running < users[u].cap:
                    best = grp.demand
                    best_key = key
                    break
        if best is None:
            return None
        return best, best_key[0]

    def _headroom_released(self) -> bool:
        """Whether a group the headroom was kept for no longer waits (its last task
        launched, or its users reached their caps) since the last call: then every machine
        with room is marked for a new offer, as the room held back for it is free to use."""
        groups = self.cluster.groups
        users = self.users
        waiting = frozenset(
            g
            for g in self.cluster.active
            if any(users[u].running < users[u].cap for u in groups[g].users)
        )
        released = not self._kept_for <= waiting
        self._kept_for = waiting
        if released:
            for mi in self.cluster.roomy:
                self.dirty[mi] = None
        return released and bool(self.dirty)

    def _touch(self, user: UserState) -> None:
        """The user's key changed: push fresh entries in every group it has work in."""
        user.version += 1
        if user.running >= user.cap:
            return
        groups = self.cluster.groups
        if self._plain_key:
            # One entry serves every group: the key does not depend on the group.
            entry = (user.share / user.divisor, user.idx, user.idx, user.version)
            for g in user.job_heaps:
                heappush(groups[g].heap, entry)
            return
        for g in user.job_heaps:
            heappush(groups[g].heap, (self.user_key(user, g), user.idx, user.idx, user.version))

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
        heapq.heappush(heap, (self.job_key(job), job.key, job.version))
        user.pending += job.pending
        self._touch(user)
        self._offers[job.key] = None
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

    def machine_of(self, ref: TaskRef) -> int | None:
        """The machine index task ``ref`` runs on (None: it does not run)."""
        side = self.jobs.get(ref.job if ref.phase == "map" else side_key(ref.job, ref.phase))
        if side is None:
            return None
        if side.where is None:
            return self.users[side.user].tasks.get(ref)
        mi = side.where[ref.task]
        return mi if mi >= 0 else None

    def running_tasks(self) -> list[list[tuple[TaskRef, int]]]:
        """Per user, its running tasks and their machines: maps by job and task, then the
        others in launch order."""
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

    def _state(self, ref: TaskRef) -> JobState:
        """The job side that runs task ``ref``."""
        if ref.phase == "map":
            return self.jobs[ref.job]
        return self.jobs[side_key(ref.job, ref.phase)]

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
            self.jobs[side.key] = side
        return sides

    def _reducers_after(self, maps: int) -> int:
        """How many of a job's ``maps`` must finish before its reducers may launch
        (``reduce_slowstart``, FAIR section 5.1; at least the first)."""
        return max(1, math.ceil(self.options.reduce_slowstart * maps - EPS))

    def _reducers_runnable(self, job_id: int, user: UserState) -> None:
        """The job's reducers (its copy parts, with copy-compute splitting) may launch."""
        side = self.jobs.get(side_key(job_id, "reduce" if self._cpac is None else "copy"))
        if side is None:
            return  # a job without reducers
        side.pending = side.reduces
        self._activate(side, user)

    def _head_job(self, user: UserState, group: int) -> JobState:
        heap = user.job_heaps[group]
        jobs = self.jobs
        while True:
            _, job_id, version = heap[0]
            job = jobs.get(job_id)
            if job is not None and job.version == version and job.pending > 0:
                return job
            heapq.heappop(heap)

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
                    # A level whose deadline has passed already applies; the driver needs
                    # the next one, or it never wakes the job again.
                    for t in deadlines(job):
                        if t > now:
                            heapq.heappush(self._wakeups, t)
                    return None
                return TaskRef(job.id, "map", picked[0]), picked[1]
            index = job.next_map
            job.next_map += 1
            return TaskRef(job.id, "map", index), None
        index = job.next_reduce
        job.next_reduce += 1
        return TaskRef(job.id, "reduce", index), None

    def _may_copy(self, job: JobState, mi: int) -> bool:
        cpac = self._cpac
        assert cpac is not None
        compute = self.jobs[side_key(job.id, "reduce")].demand
        slots = self._compute_slots.get((mi, compute))
        if slots is None:
            capacity = self.cluster.machines[mi].capacity
            slots = min(
                (
                    int((float(c) + EPS) // d)
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
                side = self.jobs[side_key(ref.job, "reduce")]
                if not (cpac.may_compute(mi) and self._fits(mi, free, side.demand)):
                    kept.append(ref)
                    continue
                user = self.users[side.user]
                for r, d in enumerate(side.demand):
                    free[r] -= d
                    if self.tracks_allocation:
                        user.alloc[r] += d
                self._launch_seq += 1
                user.tasks[ref] = mi
                if self.launch_order is not None:
                    self.launch_order[ref] = self._launch_seq
                user.running += 1
                user.share += side.share_per_task
                side.running += 1
                cpac.compute_started(mi)
                out.append(Launch(ref, cs.names[mi], None))
                self.on_launch(user, side)
                self._touch(user)
            if kept:
                queue.extend(kept)
            else:
                del cpac.waiting[mi]
            cs.rebucket(mi)

    def _fill(
        self,
        mi: int,
        now: float,
        out: list[Decision],
        pick: tuple[int, int] | None = None,
        *,
        solo: bool = False,
    ) -> None:
        """Offer machine ``mi`` until nothing more fits (``pick``: a selection already made;
        ``solo``: its user is the only one with work, so nothing bounds its first batch).

        Launches of one user run as a batch without re-selecting while the user provably
        stays first: its key after each launch stays below ``bound``, a lower bound on every
        other user's entry in the groups that fit (see :meth:`_bound`), and its task still
        fits. The decisions are those of selecting before every launch."""
        cs = self.cluster
        free = cs.free[mi]
        name = cs.names[mi]
        users = self.users
        jobs = self.jobs
        select = self.select
        batch = self._batching
        user_key = self.user_key
        fits_here = self._fits
        headroom = self._headroom
        hooks = not self._plain_hooks
        plain_key = self._plain_key
        reorder = self.reorder_jobs
        track = self.tracks_allocation
        new = tuple.__new__
        n_res = self._resource_range
        seq = self._launch_seq
        order = self.launch_order
        # Whether a batch may take the tight loop below (the plain hooks, key and fit test).
        fast = batch and not hooks and plain_key and not reorder and not track and not headroom
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
                        if v > EPS:
                            break
                    else:
                        break
                pick = select(mi)
                if pick is None:
                    break
            user = users[pick[0]]
            group = pick[1]
            pick = None
            job = self._head_job(user, group)
            demand = job.demand
            alloc = user.alloc if track else None
            bound: tuple[float, int, int, int] | None = None
            bounded = solo
            solo = False
            launched = False
            # A map side that reads no input takes its maps in order: _take's common case,
            # inlined (TaskRef and Launch built as plain tuples of their classes).
            simple = job.phase == "map" and job.blocks is None
            job_id = job.id
            # Whether the next launch is known to be allowed (after a step that passed every
            # check, or a lone user's first: see _place): then, in the steady state of a
            # batch (an arriving job filling a machine), a tight loop makes the launches the
            # step below would make, counters in locals and every check in the same order on
            # the same floats, up to the job's last task, which the step launches (it retires
            # the job).
            tight = bounded
            while True:
                if tight and fast and simple and not job.requeue and job.pending > 1:
                    where = job.where
                    assert where is not None
                    first = job.next_map
                    index = first
                    # The job keeps its last task for the general step; the user stops at
                    # its cap (running + launches >= cap, as the step tests it).
                    last = first + job.pending - 1
                    capped = first + (user.cap - user.running)
                    share = user.share
                    spt = job.share_per_task
                    divisor = user.divisor
                    uidx = user.idx
                    below = bound[:2] if bound is not None else None
                    stopped = False
                    while index < last:
                        ref = new(TaskRef, (job_id, "map", index))
                        index += 1
                        for r in n_res:
                            free[r] -= demand[r]
                        where[index - 1] = mi
                        share += spt
                        out.append(new(Launch, (ref, name, None)))
                        if index >= capped:
                            stopped = True
                            break
                        for r in n_res:
                            if free[r] + EPS < demand[r]:
                                stopped = True
                                break
                        if stopped:
                            alone = cs.active_groups == 1
                            break
                        if below is not None and not (share / divisor, uidx) < below:
                            stopped = True
                            break
                    launched_here = index - first
                    if order is None:
                        seq += launched_here
                    else:
                        for t in range(first, index):
                            seq += 1
                            order[new(TaskRef, (job_id, "map", t))] = seq
                    job.next_map = index
                    user.running += launched_here
                    user.pending -= launched_here
                    user.share = share
                    job.running += launched_here
                    job.pending -= launched_here
                    if stopped:
                        self._touch(user)
                        break
                if simple and not job.requeue:
                    index = job.next_map
                    job.next_map = index + 1
                    ref = new(TaskRef, (job_id, "map", index))
                    locality: Locality | None = None
                else:
                    took = self._take(job, mi, now)
                    if took is None:
                        if launched:
                            # Refresh the user's entries, then select again: the skip
                            # applies to the entry a fresh selection would see.
                            self._touch(user)
                        else:
                            self.skip(user.idx, group)
                        break
                    ref, locality = took
                if alloc is None:
                    for r in n_res:
                        free[r] -= demand[r]
                else:
                    for r in n_res:
                        d = demand[r]
                        free[r] -= d
                        alloc[r] += d
                seq += 1
                if job.where is None:
                    user.tasks[ref] = mi
                else:
                    job.where[ref[2]] = mi
                if order is not None:
                    order[ref] = seq
                user.running += 1
                user.pending -= 1
                user.share += job.share_per_task
                job.running += 1
                job.pending -= 1
                out.append(new(Launch, (ref, name, locality)))
                launched = True
                moved = False
                if job.pending > 0:
                    if reorder:
                        # The job's place among its user's jobs moved (FAIR's fair order):
                        # the batch goes on with whichever job now heads the user's heap.
                        job.version += 1
                        heappush(user.job_heaps[group], (self.job_key(job), job.key, job.version))
                        moved = True
                else:
                    job.version += 1
                    heap = user.job_heaps[group]
                    while heap:
                        top = jobs.get(heap[0][1])
                        if top is not None and top.version == heap[0][2] and top.pending > 0:
                            break
                        heappop(heap)
                    if not heap:
                        del user.job_heaps[group]
                        group_users = cs.groups[group].users
                        del group_users[user.idx]
                        if not group_users:
                            cs.group_active(group, False)
                    if hooks:
                        self.on_launch(user, job)
                    self._touch(user)
                    break
                if hooks:
                    self.on_launch(user, job)
                if not batch or user.running >= user.cap:
                    self._touch(user)
                    break
                if not headroom:
                    for r in n_res:
                        if free[r] + EPS < demand[r]:
                            break
                    else:
                        r = -1
                    if r >= 0:
                        self._touch(user)
                        alone = cs.active_groups == 1
                        break
                elif not fits_here(mi, free, demand):
                    self._touch(user)
                    break
                if not bounded:
                    bound = self._bound(mi, user.idx)
                    bounded = True
                if (
                    bound is not None
                    and not (
                        (user.share / user.divisor if plain_key else user_key(user, group)),
                        user.idx,
                    )
                    < bound[:2]
                ):
                    self._touch(user)
                    break
                if moved:
                    job = self._head_job(user, group)
                    simple = job.phase == "map" and job.blocks is None
                    job_id = job.id
                # Every check passed: the next launch is allowed (the tight loop may take it).
                tight = True
        self._launch_seq = seq
        self._restore_held()
        if cs.key_of[mi] is None:
            # Out of the buckets before (full, or freed by the fused finish path without
            # re-bucketing): it needs re-bucketing only if it has room now.
            for v in free:
                if v > EPS:
                    cs.rebucket(mi)
                    break
        else:
            for v in free:
                if v > EPS:
                    # Had room and keeps some: a move between buckets.
                    cs.settle(mi)
                    break
            else:
                cs.rebucket(mi)

    def _bound(self, mi: int, u: int) -> tuple[float, int, int, int] | None:
        """A lower bound on the heap entries of every user but ``u`` in the groups whose task
        fits on ``mi`` (None: there is none). A heap's top bounds all its entries; when the
        top is ``u``'s own, the first valid entry under it does."""
        cs = self.cluster
        free = cs.free[mi]
        groups = cs.groups
        users = self.users
        fits_here = self._fits
        best: tuple[float, int, int, int] | None = None
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
            if fits_here(mi, free, grp.demand):
                best = cand
        return best

    def on_launch(self, user: UserState, job: JobState) -> None:
        """Called after each launch (policies with derived state update it here)."""

    def _restore_held(self) -> None:
        if self._held:
            groups = self.cluster.groups
            for g, entry in self._held:
                heapq.heappush(groups[g].heap, entry)
            self._held.clear()

    def _release(self, job: JobState, user: UserState, ref: TaskRef) -> int:
        where = job.where
        if where is None:
            mi = user.tasks.pop(ref)
        else:
            mi = where[ref.task]
            where[ref.task] = -1
        if self.launch_order is not None:
            del self.launch_order[ref]
        demand = job.demand
        alloc = user.alloc
        track = self.tracks_allocation
        if self.cluster.alive[mi]:
            free = self.cluster.free[mi]
            for r in range(len(demand)):
                d = demand[r]
                free[r] += d
                if track:
                    alloc[r] -= d
        elif track:
            for r in range(len(demand)):
                alloc[r] -= demand[r]
        user.running -= 1
        user.share -= job.share_per_task
        if user.running == 0:
            # Exact zero: no drift from summing and subtracting shares.
            user.share = 0.0
            user.alloc = [0.0] * len(alloc)
        job.running -= 1
        if self.reorder_jobs and job.pending > 0:
            job.version += 1
            heapq.heappush(user.job_heaps[job.group], (self.job_key(job), job.key, job.version))
        self.on_release(user, job)
        return mi

    def on_release(self, user: UserState, job: JobState) -> None:
        """Called after a task of ``job`` stops running."""

    def _mark(self, mi: int) -> None:
        if self.cluster.alive[mi]:
            self.cluster.rebucket(mi)
            self.dirty[mi] = None

    def _requeue(self, ref: TaskRef) -> None:
        """A running task was killed or lost: it is pending again, as if it never started
        (with copy-compute splitting, a reducer's copy or compute part: it copies again)."""
        job = self._state(ref)
        user = self.users[job.user]
        mi = self._release(job, user, ref)
        self._mark(mi)
        if self._cpac is not None and ref.phase != "map":
            if ref.phase == "copy":
                self._cpac.copy_stopped(ref.job, mi, finished=False)
            else:
                self._cpac.compute_stopped(mi)
            ref = TaskRef(ref.job, "copy", ref.task)
            job = self.jobs[side_key(ref.job, "copy")]
        self._pend(job, user, ref)

    def _pend(self, job: JobState, user: UserState, ref: TaskRef) -> None:
        """Task ``ref`` of ``job`` is pending again."""
        job.requeue.append(ref)
        if job.pending == 0:
            job.pending = 1
            self._activate(job, user)
        else:
            job.pending += 1
            user.pending += 1
            self._touch(user)

    # ------------------------------------------------------------------ preemption

    def _preempt(self, now: float, out: list[Decision]) -> None:
        """FAIR section 3.2: see :mod:`fairshare.policies.preemption` for the rules."""
        preempt(self, now, out)

    def preemption_weight(self, user: UserState) -> float:
        """The weight the policy divides a user's share by (for its fair share)."""
        return user.weight

    def preemption_min_share(self, user: UserState) -> float:
        """The user's minimum share in share units: none, unless the policy places by it."""
        return 0.0

    def preemption_shares(self, demands: Sequence[float], capacity: float) -> list[float]:
        """Every user's fair share, in the policy's share unit, of ``capacity`` given its
        ``demands``: FAIR's Appendix A water-filling with the policy's weights and minimum
        shares (see :mod:`fairshare.policies.preemption`)."""
        return fair_shares(
            demands,
            [self.preemption_min_share(u) for u in self.users],
            [self.preemption_weight(u) for u in self.users],
            capacity,
        )


def _shares(demand: Demand, capacity: Demand) -> list[float]:
    """A task's share of each resource of a machine (resources it lacks count 0)."""
    return [d / c if c > 0 else 0.0 for d, c in zip(demand, capacity, strict=True)]


def _size(demand: Demand, capacity: Demand) -> float:
    """A task's size on a machine: its dominant share of the machine's capacity (DRF)."""
    return max(_shares(demand, capacity), default=0.0)
