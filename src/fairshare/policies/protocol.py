"""The engine-agnostic scheduling protocol: events in, decisions out.

A *driver* (the simulator in :mod:`fairshare.sim.engine`, or a live backend) owns time and the
real tasks; a *policy* owns the scheduling state and decides. The policy never reads a clock:
every call carries the timestamp ``now`` (seconds, non-decreasing from call to call).

Events in (methods of :class:`Policy`):

- ``job_submitted(now, job_id, job, blocks)``: a job arrives. ``job_id`` is the driver's
  integer id for it (submission order, unique); ``blocks`` is, for a job that reads input, one
  tuple per map task of the machine names that hold its input block (for data locality).
- ``task_finished(now, task)``: a task the policy launched has completed.
- ``machine_added(now, machine)`` / ``machine_removed(now, name)``: the cluster changes. Tasks
  running on a removed machine are lost; the policy re-queues them (the driver records them
  as killed).
- ``advance(now)``: time passed with nothing else happening (a heartbeat or a wake-up the
  policy asked for with :meth:`Policy.next_wakeup`).
- ``task_failed(now, task)``: a running task stopped without finishing (its command failed,
  its worker crashed). The policy frees its room and re-queues it, as for a lost task; the
  driver decides whether it runs again, and cancels the job when it gives up on it.
- ``job_cancelled(now, job_id)``: the job leaves before it finished (its tenant cancelled it,
  or it failed). Its pending tasks are dropped and its running tasks stop: the policy frees
  their room and returns them, and the driver stops them and must not report any of them
  finished (nor failed) afterwards. Cancelling a job that already finished returns nothing.

A live job's tasks have no known duration (``Job.duration`` is None): the policy never reads
durations, only the driver that runs tasks does.

Decisions out: after one or more events, the driver calls ``decide(now)`` and applies the
returned :class:`Launch` and :class:`Kill` decisions in order. A launch is assumed to start at
``now``; a kill takes effect at ``now`` and the task is treated as if it never ran (FAIR
section 3.2): the policy re-queues it, and the driver must not report it as finished.
``next_wakeup()`` returns the earliest future time at which the policy wants ``advance``
(delay-scheduling waits, preemption timeouts), or None. A policy whose ``next_wakeup()``
always returns None may say so with ``uses_wakeups = False`` (set by the time it is handed
to a driver, fixed from then on); a driver may then skip the call after each decision round.

When a task's finish is the only event at its time, a driver may call
``finish_and_decide(now, task)`` instead of ``task_finished`` then ``decide``: the result is
by contract the same, and a policy may override it with a fused fast path (a finished task
whose machine is handed straight to the next task, the steady state of a busy cluster).
The default implementation is the composition of the two calls.

A driver may also hold finishes back. While ``quiescent()`` is True, the policy promises
that a finish of a map task whose job has no reduce phase, the only event at its time or
one of several such finishes at one time, leads to no decision and needs no other timestamp
than its own order: until the next other event (or ``decide`` call), the driver may keep
such finishes and hand them over in one ``tasks_finished(now, tasks, times)`` call, in the
order they happened (``now``: no earlier than the last; ``times``: each one's time, for a
policy that books usage over time). The result is by contract that of delivering them one
by one, each with ``finish_and_decide`` (which returns nothing), or those of one time each
with ``task_finished`` before one ``decide`` (which returns nothing). A finish that shares
its time with another kind of event is not covered: delivered with it before one
``decide``, its machine is offered first. A simulator with a cluster that has room skips
most of its decision rounds this way (the instances of a trace's task, launched together,
end together); a live backend may use it for finishes that come one at a time.
The default is never quiescent; ``tasks_finished`` then calls ``task_finished`` in order.

A task is named by ``TaskRef(job_id, phase, task)``; map tasks are 0 .. tasks-1 and reduce
tasks 0 .. reduce.tasks-1 of the ``reduce`` phase. Reduces become runnable when every map of
the job has finished (MapReduce's dependence), or earlier with ``reduce_slowstart`` (FAIR
section 5.1), a rule the policy applies itself; a reducer launched before the maps finish
holds its room until they have. With copy-compute splitting (FAIR section 5.2) reducer ``t``
runs as two tasks on one machine: ``TaskRef(job, "copy", t)`` (fetching map outputs: no
resources, ends ``copy`` seconds after the job's last map, or after its launch if later),
then ``TaskRef(job, "reduce", t)`` (the compute part, the reduce demand for ``compute``
seconds), which the policy launches on the copy's machine when that machine admits it.

Examples
--------
DRF section 4.1 driven by hand: user A's tasks need <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>, on
one machine of <9 CPUs, 18 GB>. The first decision gives A three tasks and B two; when one
of B's tasks finishes, its room goes back to B (the lower dominant share).

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import TaskRef, make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["cpu", "mem"], [Machine("m1", np.array([9.0, 18.0]))])
>>> drf = make_policy("drf", cluster)
>>> drf.job_submitted(0.0, 0, Job("a", 0.0, "A", np.array([1.0, 4.0]), 10))
>>> drf.job_submitted(0.0, 1, Job("b", 0.0, "B", np.array([3.0, 1.0]), 10))
>>> [(d.task.job, d.task.task) for d in drf.decide(0.0)]
[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
>>> drf.finish_and_decide(5.0, TaskRef(1, "map", 0))
[Launch(task=TaskRef(job=1, phase='map', task=2), machine='m1', locality=None)]
>>> drf.next_wakeup() is None
True
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Literal, NamedTuple, Protocol

from fairshare.cluster import Machine
from fairshare.errors import PolicyError as PolicyError  # noqa: PLC0414 - re-exported
from fairshare.policies.decisions import Launch as Launch  # noqa: PLC0414 - re-exported
from fairshare.policies.decisions import TaskRef as TaskRef  # noqa: PLC0414 - re-exported
from fairshare.workload.model import Job

Phase = Literal["map", "reduce", "copy"]
"""A task's phase: a map task, a reducer, or a reducer's copy part (copy-compute splitting)."""

Locality = Literal["node", "rack", "off_rack"]
"""Where a map task's input block was found, seen from the machine it runs on (FAIR section
4): on the machine, in its rack, or elsewhere."""


class Kill(NamedTuple):
    """A decision: kill the running ``task`` now (preemption, FAIR section 3.2).

    The policy has re-queued the task, as if it never ran: it will be launched again later,
    and the driver must not report it finished.

    Attributes
    ----------
    task : TaskRef
        The task to kill.
    machine : str
        The machine it runs on.
    """

    task: TaskRef
    machine: str


Decision = Launch | Kill
"""What ``decide`` returns, in the order the driver applies them."""


class Policy(Protocol):
    """An online scheduler driven by events (see the module docstring for the protocol).

    A protocol: the schedulers of :mod:`fairshare.policies` have its methods without deriving
    from it (they are compiled classes, see :mod:`fairshare.kernel`); a policy written in
    Python may derive from it to inherit the default methods below, and must then define every
    abstract one. Every method takes ``now``, the driver's time in seconds, never earlier
    than the last call's.

    Attributes
    ----------
    name : str
        The policy's SPEC section 3 name (``drf``, ``hdrf``, ...), written in the run log.
    uses_wakeups : bool
        False promises that :meth:`next_wakeup` always returns None.
    """

    name: ClassVar[str]
    uses_wakeups: bool = True
    """False promises that :meth:`next_wakeup` always returns None (see the module
    docstring); the safe default True makes a driver ask after every decision round."""

    @abstractmethod
    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        """A job arrives: its map tasks are pending (its reducers once its maps allow).

        Parameters
        ----------
        now : float
            The time of the arrival.
        job_id : int
            The driver's id for the job (submission order, unique): the ``job`` of its
            tasks' :class:`TaskRef`.
        job : Job
            The job: user, demand, tasks, constraints, reduce phase.
        blocks : sequence of sequence of str, optional
            For a job that reads input, per map task the names of the machines holding its
            block (data locality, FAIR section 4); None for a job without input.
        """

    @abstractmethod
    def task_finished(self, now: float, task: TaskRef) -> None:
        """A task the policy launched has completed: its room is free.

        Parameters
        ----------
        now : float
            The time of the finish.
        task : TaskRef
            The task, running until now.
        """

    def tasks_finished_at(self, now: float, tasks: Sequence[TaskRef]) -> None:
        """Tasks that completed at ``now``, in order: by contract :meth:`task_finished` for
        each (a driver's finishes of one time, delivered together before that time's
        ``decide``; the default calls it for each).

        Parameters
        ----------
        now : float
            The time of the finishes.
        tasks : sequence of TaskRef
            The tasks, running until now.
        """
        for task in tasks:
            self.task_finished(now, task)

    @abstractmethod
    def machine_added(self, now: float, machine: Machine) -> None:
        """A machine joins the cluster (its name new, or that of a machine removed before).

        Parameters
        ----------
        now : float
            The time it joins.
        machine : Machine
            The machine, with its capacity, rack and attributes.
        """

    @abstractmethod
    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
        """Forget machine ``name``: the tasks running on it are lost and pending again.

        Parameters
        ----------
        now : float
            The time it leaves.
        name : str
            The machine's name.

        Returns
        -------
        list of TaskRef
            The tasks that were running on it, sorted; the driver records them killed.
        """

    @abstractmethod
    def advance(self, now: float) -> None:
        """Time passed with nothing else happening (a wake-up asked by :meth:`next_wakeup`,
        or a heartbeat).

        Parameters
        ----------
        now : float
            The new time.
        """

    @abstractmethod
    def task_failed(self, now: float, task: TaskRef) -> None:
        """Running ``task`` stopped without finishing: its room is free and it is pending
        again.

        Parameters
        ----------
        now : float
            The time of the failure.
        task : TaskRef
            The task, running until now.
        """

    @abstractmethod
    def job_cancelled(self, now: float, job_id: int) -> list[TaskRef]:
        """Job ``job_id`` leaves before it finished: its pending tasks are dropped and its
        running tasks stop.

        Parameters
        ----------
        now : float
            The time of the cancellation.
        job_id : int
            The driver's id of the job.

        Returns
        -------
        list of TaskRef
            Its tasks that were running (now stopped; the driver stops them and reports
            none of them finished), sorted; empty for a job that already finished.
        """

    @abstractmethod
    def decide(self, now: float) -> list[Decision]:
        """The decisions the events since the last call lead to.

        Parameters
        ----------
        now : float
            The time of the decision (that of the last event).

        Returns
        -------
        list of Decision
            :class:`Launch` and :class:`Kill` decisions, to apply in order.
        """

    @abstractmethod
    def next_wakeup(self) -> float | None:
        """When the policy next wants :meth:`advance` (a delay-scheduling wait or a
        preemption timeout ends).

        Returns
        -------
        float or None
            The earliest such time, or None when it waits for nothing.
        """

    def reported_shares(self) -> tuple[dict[str, float], dict[str, float]]:
        """Each queue's and user's share as the policy computes it now (SPEC section 8.3's
        ``shares``); a policy without shares reports none.

        Returns
        -------
        (dict of str to float, dict of str to float)
            Shares by queue path, and by user name.
        """
        return {}, {}

    def queue_shares(self) -> dict[str, float]:
        """Each queue's share as the policy computes it now (:meth:`reported_shares`'s
        first part).

        Returns
        -------
        dict of str to float
        """
        return self.reported_shares()[0]

    def quiescent(self) -> bool:
        """Whether finishes may be held back and delivered by :meth:`tasks_finished` (see
        the module docstring); asked after a decision round.

        Returns
        -------
        bool
            True promises that finishes of map tasks of jobs without a reduce phase (one
            alone at its time, or several at one time) lead to no decision until another
            event; the default is never.
        """
        return False

    def tasks_finished(
        self, now: float, tasks: Sequence[TaskRef], times: Sequence[float] | None = None
    ) -> None:
        """Finishes held back while :meth:`quiescent`, in the order they happened.

        Parameters
        ----------
        now : float
            The time of the last of them.
        tasks : sequence of TaskRef
            The finished tasks, in order.
        times : sequence of float, optional
            Each one's time (None: all at ``now``).
        """
        for k, task in enumerate(tasks):
            self.task_finished(now if times is None else times[k], task)

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        """``task_finished(now, task)`` then ``decide(now)``, for a finish that is the only
        event at ``now`` (see the module docstring).

        Parameters
        ----------
        now : float
            The time of the finish.
        task : TaskRef
            The finished task.

        Returns
        -------
        list of Decision
            What ``decide(now)`` would return after the finish.
        """
        self.task_finished(now, task)
        return self.decide(now)


def final_shares(policy: object) -> dict[str, dict[str, float]]:
    """What a run's ``summary.json`` reports as ``shares`` (SPEC section 8.3): the policy's
    :meth:`Policy.reported_shares` as ``{"queues": ..., "users": ...}``, or empty for a
    policy that reports none (a reference scheduler, which does not implement it).

    Parameters
    ----------
    policy : object
        The run's policy.

    Returns
    -------
    dict
    """
    report = getattr(policy, "reported_shares", None)
    if report is None:
        return {}
    queues, users = report()
    if not queues and not users:
        return {}
    return {"queues": dict(queues), "users": dict(users)}
