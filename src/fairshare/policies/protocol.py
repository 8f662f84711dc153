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
that a finish of a map task whose job has no reduce phase, the only event at its time,
leads to no decision and needs no other timestamp than its own order: until the next other
event (or ``decide`` call), the driver may keep such finishes and hand them over in one
``tasks_finished(now, tasks)`` call, in the order they happened (``now``: no earlier than
the last). The result is by contract that of delivering them one by one, each with
``finish_and_decide`` (which returns nothing). A finish that shares its time with another
event is not covered: delivered with it before one ``decide``, its machine is offered
first. A simulator with a cluster that has room skips most of its decision rounds this way;
a live backend may use it for finishes that come one at a time.
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
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Literal, NamedTuple, Protocol

from fairshare.cluster import Machine
from fairshare.workload.model import Job

Phase = Literal["map", "reduce", "copy"]
Locality = Literal["node", "rack", "off_rack"]


class TaskRef(NamedTuple):
    """One task of one job: ``phase`` is ``"map"``, ``"reduce"`` or (copy-compute splitting)
    ``"copy"``."""

    job: int
    phase: Phase
    task: int


class Launch(NamedTuple):
    """Start ``task`` on ``machine`` now. ``locality`` says where its input block was found
    (None when the task reads no block)."""

    task: TaskRef
    machine: str
    locality: Locality | None


class Kill(NamedTuple):
    """Kill the running ``task`` now (preemption); it will be launched again later."""

    task: TaskRef
    machine: str


Decision = Launch | Kill


class PolicyError(ValueError):
    """A request a policy cannot serve (unknown policy, a resource the cluster lacks, a bad
    option). ``where`` names the option or field and ``what`` says what is wrong and what is
    allowed, so a command line can print SPEC section 4's ``error: FILE: WHERE: WHAT``."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


class Policy(Protocol):
    """An online scheduler driven by events (see the module docstring for the protocol).

    A protocol: the schedulers of :mod:`fairshare.policies` have its methods without deriving
    from it (they are compiled classes, see :mod:`fairshare.kernel`); a policy written in
    Python may derive from it to inherit the default methods below, and must then define every
    abstract one.
    """

    name: ClassVar[str]
    uses_wakeups: bool = True
    """False promises that :meth:`next_wakeup` always returns None (see the module
    docstring); the safe default True makes a driver ask after every decision round."""

    @abstractmethod
    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None: ...

    @abstractmethod
    def task_finished(self, now: float, task: TaskRef) -> None: ...

    @abstractmethod
    def machine_added(self, now: float, machine: Machine) -> None: ...

    @abstractmethod
    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
        """Forget machine ``name``; returns the tasks that were running on it (now pending)."""

    @abstractmethod
    def advance(self, now: float) -> None: ...

    @abstractmethod
    def task_failed(self, now: float, task: TaskRef) -> None:
        """Running ``task`` stopped without finishing: it is pending again."""

    @abstractmethod
    def job_cancelled(self, now: float, job_id: int) -> list[TaskRef]:
        """Job ``job_id`` leaves: returns its tasks that were running (now stopped)."""

    @abstractmethod
    def decide(self, now: float) -> list[Decision]: ...

    @abstractmethod
    def next_wakeup(self) -> float | None: ...

    def quiescent(self) -> bool:
        """Whether finishes may be held back and delivered by :meth:`tasks_finished` (see
        the module docstring); asked after a decision round."""
        return False

    def tasks_finished(self, now: float, tasks: Sequence[TaskRef]) -> None:
        """Finishes held back while :meth:`quiescent`, in the order they happened."""
        for task in tasks:
            self.task_finished(now, task)

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        """``task_finished(now, task)`` then ``decide(now)``, for a finish that is the only
        event at ``now`` (see the module docstring)."""
        self.task_finished(now, task)
        return self.decide(now)
