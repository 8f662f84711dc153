"""Tasks that stop before their end, and what becomes of them: a killed, lost or failed task
pending again (:meth:`Stops.requeue`), a preempted gang waiting whole again
(:meth:`Stops.requeue_gang`), a job leaving unfinished (:meth:`Stops._cancel`). Each stop
releases its room through :meth:`~fairshare.policies.ledger.Ledger._release`, the one release
of every path; the ledger's other state changes are in :mod:`fairshare.policies.ledger`.

Examples
--------
A cancelled job's running tasks stop and its pending ones are dropped:

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([2.0]))])
>>> policy = make_policy("fifo", cluster)
>>> policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0]), 3))
>>> [d.task.task for d in policy.decide(0.0)]
[0, 1]
>>> [ref.task for ref in policy.job_cancelled(1.0, 0)], policy.users[0].running
([0, 1], 0)
"""

from __future__ import annotations

from mypy_extensions import mypyc_attr

from fairshare.policies.ledger import Ledger
from fairshare.policies.protocol import TaskRef
from fairshare.policies.records import JobState, UserState, part_id


@mypyc_attr(allow_interpreted_subclasses=True)
class Stops(Ledger):
    """The ledger's stops (see the module): built by
    :class:`~fairshare.policies.base.Scheduler`, whose parameters it takes."""

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
        if self._cpac is not None and ref.phase != "map":
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
        assert where is not None and min_tasks is not None and not job.gang
        user = self.users[job.user]
        stopped = [TaskRef(job.id, "map", t) for t, mi in enumerate(where) if mi >= 0]
        for ref in stopped:
            self._stop(ref)
        if job.pending > 0:
            # Its tasks beyond min_tasks leave the job heaps (the entries a stop pushed too):
            # nothing of the gang starts on its own.
            user.pending -= job.pending
            self._retire(job, user)
            self._offers.pop(job.part_id, None)
        job.requeue.extend(stopped)
        job.pending += len(stopped)
        job.gang = min(min_tasks, job.pending)
        job.short = 0
        self.gangs[job.part_id] = job
        self._gang_news = True
        self._touch(user)
        return stopped

    def _stop(self, ref: TaskRef) -> None:
        """Running task ``ref`` stops before its end (killed, lost, failed or cancelled): its
        room is released, and with copy-compute splitting its reducer leaves the machine's
        admission counts (FAIR section 5.2). Whether it runs again is the caller's."""
        mi = self._release((ref,), finished=False, then="offer")
        if self._cpac is not None and ref.phase != "map":
            if ref.phase == "copy":
                self._cpac.copy_stopped(ref.job, mi, finished=False)
            else:
                self._cpac.compute_stopped(mi)

    def _cancel(self, job_id: int) -> list[TaskRef]:
        """Job ``job_id`` leaves before it finished (cancelled by its tenant, or failed): each
        of its parts stops pending (:meth:`_retire`), its running tasks stop (:meth:`_stop`)
        and are returned, sorted, and the parts are forgotten. A job already finished (no
        part left) returns nothing."""
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
                self._gang_news = True  # it may have held the reservation
            elif part.pending > 0:
                user.pending -= part.pending
                part.pending = 0
                part.requeue.clear()
                self._retire(part, user)
            if part.where is not None:
                stopped += [TaskRef(job_id, "map", t) for t, mi in enumerate(part.where) if mi >= 0]
        stopped.sort()
        for ref in stopped:
            self._stop(ref)
        if self._cpac is not None:
            # Reducers that finished copying and wait to compute hold a reducer slot.
            self._cpac.forget_job(job_id)
        for part in parts:
            del self.jobs[part.part_id]
        self._touch(user)
        return stopped

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
