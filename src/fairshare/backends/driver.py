"""The live driver: any online policy of :mod:`fairshare.policies` against a live executor.

It is the live counterpart of the simulator's engine (:mod:`fairshare.sim.engine`): both feed
the protocol of :mod:`fairshare.policies.protocol` and apply its decisions, and share no code
but that protocol and the run records (:mod:`fairshare.runlog`). Here time is the executor's
clock, tasks run as long as they run (a live job has no duration; its ``estimate``, which
EASY backfilling's reservations count on, never stops a task), and events come from the
cluster:

- a submitted job (:class:`LiveJob`) becomes ``job_submitted``; a replayed one (a restarted
  service's unfinished job) offers the policy only its tasks not yet finished;
- a finished attempt becomes ``task_finished``; a failed one ``task_failed`` (the task runs
  again) until one task has failed more than the job's ``max_retries`` times, when the job
  fails: ``job_cancelled``, its running attempts cancelled, the error kept;
- a tenant's cancellation becomes ``job_cancelled``;
- nodes that appear or disappear (polled, and an attempt lost with its node as an early
  signal) become ``machine_added`` / ``machine_removed``; the tasks lost are re-queued by the
  policy and run again (no retry counted);
- a policy's ``Launch`` becomes one attempt on the chosen node, a ``Kill`` a forced cancel
  (the attempt is never reported finished); ``next_wakeup`` bounds the wait for events.

Durability is the :class:`Journal`'s: every state change is written there before the
matching executor call, so that a service killed at any moment resumes from it (see
:mod:`fairshare.service.store`). Submissions and cancellations may come from other threads
(:meth:`LiveDriver.submit`, :meth:`LiveDriver.cancel`); everything else runs on the driver's
thread, in :meth:`LiveDriver.step`.

Examples
--------
A task that fails is retried; one that fails more than its job's ``max_retries`` times
fails its job, whose error names it:

>>> import numpy as np
>>> from fairshare.backends import FakeExecutor, Journal, LiveDriver, LiveJob
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import User
>>> class Printed(Journal):
...     def job_ended(self, job, state, error=None):
...         print(job, state, error)
>>> executor = FakeExecutor(("cpu",), [Machine("n1", np.array([4.0]))],
...                         failure=lambda spec: "exit code 1" if spec.index == 0 else None)
>>> policy = make_policy("fifo", Cluster.build(executor.resources, executor.nodes()))
>>> driver = LiveDriver(policy, executor, users=[User("t", np.array([1.0]))],
...                     journal=Printed())
>>> driver.submit(LiveJob("j", "t", "j", 2, {"cpu": 1}, ("true",), max_retries=1))
>>> while driver.active():
...     driver.step(10.0)
j failed task 0 failed 2 times: exit code 1
"""

from __future__ import annotations

import math
import pickle
import queue
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from fairshare.backends.executor import ExecEvent, Executor, Failed, TaskSpec
from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import Decision, Kill, Launch, PolicyError, Scheduler, TaskRef
from fairshare.policies.protocol import final_shares
from fairshare.runlog import ROW_FIELDS, ROW_FINISH, AttemptRows, JobRecord, RunLog, greedy_end
from fairshare.workload.eligibility import TaskFit
from fairshare.workload.model import Job, User

DEFAULT_MAX_RETRIES = 3
"""How many times a task may fail and run again before its job fails (Ray's own default)."""

JobEnd = Literal["finished", "failed", "cancelled"]
"""How a live job ended."""


@dataclass(frozen=True)
class LiveJob:
    """A tenant's job: ``tasks`` tasks, each running ``command`` with ``demand`` (by resource
    name) under ``constraint`` (the tenant's own constraint applies too). ``done`` lists the
    task indices already finished and ``failures`` the failures so far per task (a job
    replayed after a restart).

    Parameters
    ----------
    id : str
        The job's id, unique in the service.
    tenant : str
        The tenant (a user of the policy) it runs for.
    name : str
        The name the tenant gave it.
    tasks : int
        Its tasks, 0 .. tasks-1.
    demand : mapping of str to float
        What each task holds, by resource name.
    command : tuple of str
        The argv each task runs (``FAIRSHARE_TASK_INDEX`` tells it which).
    constraint : str, optional
        A placement constraint (SPEC's constraint language), in addition to the tenant's.
    max_retries : int
        How many times one task may fail and run again before the job fails.
    done : frozenset of int
        Tasks already finished (a replayed job).
    failures : mapping of int to int
        Failures so far per task (a replayed job).
    min_tasks : int, optional
        A gang (SPEC section 1's ``min_tasks``; ``tasks`` for ``gang: true``): the policy
        admits this many of its tasks in one decision or none, and the driver launches them
        in one batch (:mod:`fairshare.policies.gangs`). None: every task starts on its own.
    priority : int
        Its priority among its tenant's jobs and its queue's (SPEC section 1's ``priority``;
        higher first).
    estimate : float, optional
        Seconds one of its tasks is expected to run at most (the user's requested time, as
        SWF's field 9 and :attr:`~fairshare.workload.model.Job.estimate`): what EASY
        backfilling's reservations count on (:mod:`fairshare.policies.gangs`). A task that
        runs past it is not stopped; the reservation it delays is then late. None: unknown
        (a reservation counts on the task never ending).
    attempts : mapping of int to int
        Attempts started so far per task (a replayed job): the next attempt's number
        follows them, so that attempt numbers (``FAIRSHARE_ATTEMPT``, the attempt's key)
        never repeat across restarts.
    """

    id: str
    tenant: str
    name: str
    tasks: int
    demand: Mapping[str, float]
    command: tuple[str, ...]
    constraint: str | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    done: frozenset[int] = frozenset()
    failures: Mapping[int, int] = field(default_factory=dict)
    min_tasks: int | None = None
    priority: int = 0
    estimate: float | None = None
    attempts: Mapping[int, int] = field(default_factory=dict)


class Journal:
    """Where the driver writes every state change before acting on it (the service's
    database). This base class keeps nothing: a driver without durability (a benchmark)."""

    def task_launched(self, job: str, index: int, attempt: int, machine: str) -> None:
        """Attempt ``attempt`` of task ``index`` is about to start on ``machine``.

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        attempt : int
            The attempt's number (0 first).
        machine : str
            The node it starts on.
        """

    def task_finished(self, job: str, index: int) -> None:
        """The task finished.

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        """

    def task_pending(
        self, job: str, index: int, *, failures: int, error: str | None = None
    ) -> None:
        """The task stopped without finishing (killed, lost or failed: ``failures`` is its
        count of failures so far, ``error`` the last) and is pending again.

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        failures : int
            Its failures so far (a kill or a loss counts none).
        error : str, optional
            Why it stopped.
        """

    def task_failed(self, job: str, index: int, *, failures: int, error: str) -> None:
        """The task failed for good (more than its job's ``max_retries`` failures); the job
        fails with it (:meth:`job_ended` follows).

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        failures : int
            Its failures, the last included.
        error : str
            The last failure's error.
        """

    def job_ended(self, job: str, state: JobEnd, error: str | None = None) -> None:
        """The job finished, failed (``error``) or was cancelled; its tasks not finished
        end with it.

        Parameters
        ----------
        job : str
            The job's id.
        state : {"finished", "failed", "cancelled"}
            How it ended.
        error : str, optional
            Why it failed.
        """

    def commit(self) -> None:
        """Make the writes so far durable: called before every executor call (a launch, a
        cancel) and at the end of every step."""


@dataclass
class _Running:
    """What the driver keeps of one live job while it runs."""

    spec: LiveJob
    jid: int
    order: int
    indices: list[int]
    submit: float
    attempts: dict[int, int] = field(default_factory=dict)
    failures: dict[int, int] = field(default_factory=dict)
    running: dict[int, tuple[str, int]] = field(default_factory=dict)
    left: int = 0
    first_start: float | None = None
    # Its attempts flat (fairshare.runlog's ROW_FIELDS each; ``running`` holds offsets in
    # it), the offsets of those killed, and the seconds of those that finished: kept here
    # until the job ends, then spilled with its record (see _Spill).
    rows: list[Any] = field(default_factory=list)
    killed: set[int] = field(default_factory=set)
    durations: list[float] = field(default_factory=list)


class _Spill:
    """Ended jobs' records and attempts, out of memory: appended to an unnamed temporary
    file as each job ends (a live service runs for ever, and what it keeps per ended job
    grew without bound, issue 31), read back in order by :meth:`LiveDriver.log`. Pickle is
    safe here: the file is this process's own, unnamed, and nothing else writes it."""

    def __init__(self) -> None:
        # Open for the driver's life (closed with it: the file has no name).
        self._file = tempfile.TemporaryFile(prefix="fairshare-records-")  # noqa: SIM115

    def add(self, record: JobRecord, run: _Running) -> None:
        """Append the ended job's record and its attempts (all closed)."""
        pickle.dump(
            (record, run.order, run.rows, sorted(run.killed)),
            self._file,
            protocol=pickle.HIGHEST_PROTOCOL,
        )

    def read(self) -> Iterator[tuple[JobRecord, int, list[Any], list[int]]]:
        """Every entry so far, in the order they were added."""
        self._file.flush()
        end = self._file.tell()
        self._file.seek(0)
        try:
            while self._file.tell() < end:
                yield pickle.load(self._file)
        finally:
            self._file.seek(end)


class LiveDriver:
    """Runs ``policy`` against ``executor`` (see the module).

    Parameters
    ----------
    policy : Scheduler
        An online policy built over the executor's nodes at the start
        (:func:`~fairshare.policies.make_policy`).
    executor : Executor
        The cluster that runs the tasks.
    users : sequence of User
        The tenants (the scenario's users: weights, queues, constraints); every job's
        tenant must be one of them.
    journal : Journal, optional
        Where every state change is written before the driver acts on it (default: a
        journal that keeps nothing).
    poll_interval : float
        How often the nodes are listed, in seconds (0: at every step).
    """

    def __init__(
        self,
        policy: Scheduler,
        executor: Executor,
        *,
        users: Sequence[User],
        journal: Journal | None = None,
        poll_interval: float = 1.0,
    ) -> None:
        if getattr(policy, "overcommits", False):
            # The slot scheduler places tasks that do not fit: a real cluster refuses them,
            # and only the simulator models what over-commit costs.
            raise PolicyError(
                "policy",
                f"'{policy.name}' over-commits machines, which only the simulator models; "
                "it does not run live",
            )
        self.policy = policy
        self.executor = executor
        self.resources = executor.resources
        self.users = {u.name: u for u in users}
        self.user_names = tuple(u.name for u in users)
        self.journal = journal if journal is not None else Journal()
        self.poll_interval = poll_interval
        self.start = executor.now()
        self._next_poll = -math.inf
        self.machines: dict[str, Machine] = {m.name: m for m in policy.cluster.machines}
        self._inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._jobs: dict[int, _Running] = {}
        self._by_id: dict[str, int] = {}
        self._keys: dict[str, tuple[int, int]] = {}
        self._next_jid = 0
        # The run's records (fairshare.runlog): a running job's attempts are its own; an
        # ended job's record and attempts leave memory for a file (issue 31: memory
        # bounded however many jobs have finished), read back only by log().
        self._slots: dict[str, int] = {}
        self._orders = 0
        self._spill = _Spill()
        self._lock = threading.Lock()
        self._shares: dict[str, tuple[int, float]] = {}
        # Executor calls waiting for the journal's commit (see _flush).
        self._calls: list[tuple[TaskSpec, str] | str] = []
        self.events = 0
        self._capacities = [m.capacity.copy() for m in self.machines.values()]
        self.decisions = 0
        """Launches and kills taken from the policy so far (``fairshare_decisions_total``)."""
        self.on_first_start: Callable[[str, float], None] | None = None
        """Called on this thread with a job's tenant and its wait in seconds (since the
        driver received it) when its first task launches (``fairshare_job_wait_seconds``)."""
        self._publish()

    # ------------------------------------------------------------------ from other threads

    def submit(self, job: LiveJob) -> None:
        """Hand a job to the driver (any thread); it reaches the policy at the next step. A
        job whose id the driver has seen is ignored.

        Parameters
        ----------
        job : LiveJob
            The job.
        """
        self._inbox.put(("submit", job))

    def cancel(self, job_id: str) -> None:
        """Cancel a job (any thread); a job already ended is left as it is.

        Parameters
        ----------
        job_id : str
            The job's id.
        """
        self._inbox.put(("cancel", job_id))

    def shares(self) -> dict[str, tuple[int, float]]:
        """Per tenant: running tasks and the policy's share, as of the last step (any
        thread).

        Returns
        -------
        dict of str to (int, float)
            Per tenant name, its running tasks and its share in the policy's unit.
        """
        with self._lock:
            return dict(self._shares)

    def capacities(self) -> list[np.ndarray]:
        """The capacity of every node alive, as of the last poll (any thread): what a
        task's demand must fit on one of, to ever run.

        Returns
        -------
        list of numpy.ndarray
            One vector over :attr:`resources` per node.
        """
        with self._lock:
            return list(self._capacities)

    def explain(self, job_id: str, timeout: float) -> dict[str, object] | None:
        """Why a job is not running (SPEC section 8.5: ``state``, ``reasons``, ``ahead``),
        asked of the policy on the driver's thread at its next step (any thread; the
        policy is the driver's alone).

        Parameters
        ----------
        job_id : str
            The job's id.
        timeout : float
            The longest wait for the driver's thread, in seconds.

        Returns
        -------
        dict or None
            :meth:`fairshare.policies.explain.Explanation.document`; None when the job has
            not reached the policy yet.

        Raises
        ------
        TimeoutError
            The driver's thread did not answer in time.
        """
        from fairshare.policies.explain import explain  # noqa: PLC0415

        answer: Future[dict[str, object] | None] = Future()

        def ask() -> None:
            jid = self._by_id.get(job_id)
            try:
                answer.set_result(None if jid is None else explain(self.policy, jid).document())
            except Exception as err:  # the asking thread raises it; this loop goes on
                answer.set_exception(err)

        self._inbox.put(("ask", ask))
        try:
            return answer.result(timeout)
        except FutureTimeout:
            raise TimeoutError(f"the scheduler did not answer within {timeout:g} s") from None

    # ------------------------------------------------------------------ the loop

    def now(self) -> float:
        """Seconds since the driver started (the policy's and the records' time).

        Returns
        -------
        float
        """
        return self.executor.now() - self.start

    def active(self) -> bool:
        """Whether some job has not ended (or a submission or cancellation waits).

        Returns
        -------
        bool
        """
        return bool(self._jobs) or not self._inbox.empty()

    def running(self) -> int:
        """How many attempts run now.

        Returns
        -------
        int
        """
        return len(self._keys)

    def step(self, timeout: float) -> None:
        """Deliver what waits (submissions, cancellations, node changes, a wake-up), apply
        the policy's decisions, then wait up to ``timeout`` seconds (less when the policy
        wants a wake-up or a poll is due) for attempts to end and deliver those.

        Parameters
        ----------
        timeout : float
            The longest wait for attempts to end, in seconds.
        """
        now = self.now()
        self._drain(now)
        if now >= self._next_poll:
            self.poll_nodes(now)
        wake = self.policy.next_wakeup()
        if wake is not None and wake <= now:
            self.policy.advance(now)
        self._decide(now)
        wait = timeout
        wake = self.policy.next_wakeup()
        if wake is not None:
            wait = min(wait, max(0.0, wake - now))
        if self.poll_interval > 0:
            wait = min(wait, max(0.0, self._next_poll - now))
        events = self.executor.wait(wait)
        if events:
            now = self.now()
            for event in events:
                self._ended(now, event)
            self._decide(now)
        self._publish()

    def poll_nodes(self, now: float) -> None:
        """Compare the executor's nodes with the policy's machines: new ones are added, gone
        ones removed (their tasks re-queued).

        Parameters
        ----------
        now : float
            The driver's time.
        """
        self._next_poll = now + self.poll_interval
        alive = {m.name: m for m in self.executor.nodes()}
        for name in [n for n in self.machines if n not in alive]:
            self._node_gone(now, name)
        for name, machine in alive.items():
            if name not in self.machines:
                self.machines[name] = machine
                self.policy.machine_added(now, machine)
                self.events += 1
        capacities = [m.capacity.copy() for m in self.machines.values()]
        with self._lock:
            self._capacities = capacities

    # ------------------------------------------------------------------ events

    def _drain(self, now: float) -> None:
        """Deliver the submissions and cancellations other threads put in the inbox."""
        while True:
            try:
                kind, payload = self._inbox.get_nowait()
            except queue.Empty:
                return
            if kind == "ask":
                payload()
                continue
            self.events += 1
            if kind == "submit":
                self._submitted(now, payload)
            else:
                self._cancelled(now, payload)

    def _submitted(self, now: float, spec: LiveJob) -> None:
        """A job reaches the policy with its unfinished tasks (numbered 0.. for it)."""
        if spec.id in self._by_id:
            return  # running already (the ids of ended jobs are the journal's to know)
        indices = [i for i in range(spec.tasks) if i not in spec.done]
        jid = self._next_jid
        self._next_jid += 1
        run = _Running(spec, jid, self._orders, indices, now)
        self._orders += 1
        run.failures = dict(spec.failures)
        run.attempts = dict(spec.attempts)
        run.left = len(indices)
        self._jobs[jid] = run
        self._by_id[spec.id] = jid
        self.policy.job_submitted(now, jid, self._policy_job(spec, now, len(indices)))
        if not indices:
            # Every task had finished (a replayed job whose end was not yet written).
            self.journal.job_ended(spec.id, "finished")
            self._end(now, run, "finished")

    def _policy_job(self, spec: LiveJob, now: float, tasks: int) -> Job:
        """The policy's view of a live job: the tenant's queue, weight and constraint."""
        user = self.users[spec.tenant]
        constraint = user.constraint
        if spec.constraint is not None:
            constraint = Constraint(
                spec.constraint
                if constraint is None
                else f"({constraint.source}) and ({spec.constraint})"
            )
        demand = np.array([float(spec.demand.get(r, 0.0)) for r in self.resources])
        # A gang with a task finished has started: the rest is an ordinary job's (a task
        # lost or failed runs again on its own). One replayed before any task finished
        # starts together again, as many of its tasks as are left.
        min_tasks = None if spec.min_tasks is None or spec.done else min(spec.min_tasks, tasks)
        return Job(
            name=spec.id,
            submit=now,
            user=spec.tenant,
            demand=demand,
            tasks=tasks,
            queue=user.queue,
            weight=user.weight,
            constraint=constraint,
            machines=user.machines,
            priority=spec.priority,
            min_tasks=min_tasks,
            estimate=spec.estimate,
        )

    def _cancelled(self, now: float, job_id: str) -> None:
        """A tenant cancelled the job: written ended, stopped and recorded unfinished."""
        jid = self._by_id.get(job_id)
        run = self._jobs.get(jid) if jid is not None else None
        if run is None:
            return
        self.journal.job_ended(run.spec.id, "cancelled")
        self._stop_job(now, run)
        self._end(now, run, None)

    def _stop_job(self, now: float, run: _Running) -> None:
        """The job leaves the policy; its running attempts are cancelled (already written
        ended by the caller's ``job_ended``)."""
        for ref in self.policy.job_cancelled(now, run.jid):
            key = self._forget(now, run, ref.task, killed=True)
            if key is not None:
                self._calls.append(key)

    def _ended(self, now: float, event: ExecEvent) -> None:
        """An attempt ended: finished, lost with its node (no retry counted) or failed
        (retried, or its job fails past ``max_retries``)."""
        where = self._keys.get(event.key)
        if where is None:
            return  # an attempt cancelled or lost before it reported
        self.events += 1
        run = self._jobs[where[0]]
        pi = where[1]
        index = run.indices[pi]
        if not isinstance(event, Failed):
            self.journal.task_finished(run.spec.id, index)
            self._forget(now, run, pi, killed=False)
            self.policy.task_finished(now, TaskRef(run.jid, "map", pi))
            run.left -= 1
            if run.left == 0:
                self.journal.job_ended(run.spec.id, "finished")
                self._end(now, run, "finished")
            return
        if event.lost:
            if event.node is not None and event.node in self.machines:
                # Its node died: an early signal, before the poll would see it.
                alive = {m.name for m in self.executor.nodes()}
                if event.node not in alive:
                    self._node_gone(now, event.node)
                    return
            self.journal.task_pending(
                run.spec.id, index, failures=run.failures.get(index, 0), error=event.error
            )
            self._forget(now, run, pi, killed=True)
            self.policy.task_failed(now, TaskRef(run.jid, "map", pi))
            return
        failures = run.failures[index] = run.failures.get(index, 0) + 1
        if failures > run.spec.max_retries:
            error = (
                f"task {index} failed {failures} time{'s' if failures > 1 else ''}: {event.error}"
            )
            self.journal.task_failed(run.spec.id, index, failures=failures, error=event.error)
            self.journal.job_ended(run.spec.id, "failed", error)
            self._stop_job(now, run)
            self._end(now, run, None)
            return
        self.journal.task_pending(run.spec.id, index, failures=failures, error=event.error)
        self._forget(now, run, pi, killed=True)
        self.policy.task_failed(now, TaskRef(run.jid, "map", pi))

    def _node_gone(self, now: float, name: str) -> None:
        """Node ``name`` left: its attempts are written pending and cancelled."""
        del self.machines[name]
        self.events += 1
        for ref in self.policy.machine_removed(now, name):
            run = self._jobs[ref.job]
            index = run.indices[ref.task]
            self.journal.task_pending(
                run.spec.id, index, failures=run.failures.get(index, 0), error=f"node {name} left"
            )
            key = self._forget(now, run, ref.task, killed=True)
            if key is not None:
                self._calls.append(key)

    # ------------------------------------------------------------------ decisions

    def _decide(self, now: float) -> None:
        """Take the policy's decisions, write them, then make the executor calls."""
        decisions: list[Decision] = self.policy.decide(now)
        self.decisions += len(decisions)
        for decision in decisions:
            run = self._jobs[decision.task.job]
            pi = decision.task.task
            if type(decision) is Launch:
                self._launch(now, run, pi, decision.machine)
            else:
                assert isinstance(decision, Kill)
                index = run.indices[pi]
                self.journal.task_pending(
                    run.spec.id, index, failures=run.failures.get(index, 0), error="preempted"
                )
                key = self._forget(now, run, pi, killed=True)
                assert key is not None
                self._calls.append(key)
        self._flush()

    def _flush(self) -> None:
        """Commit the journal, then make the executor calls it covers, in order: nothing
        reaches the cluster before it is written."""
        self.journal.commit()
        calls, self._calls = self._calls, []
        for call in calls:
            if isinstance(call, str):
                self.executor.cancel(call)
            else:
                self.executor.launch(*call)

    def _launch(self, now: float, run: _Running, pi: int, machine: str) -> None:
        """Write the policy's launch of task ``pi`` and queue the executor call."""
        index = run.indices[pi]
        attempt = run.attempts.get(index, 0)
        run.attempts[index] = attempt + 1
        spec = run.spec
        key = f"{spec.id}:{index}:{attempt}"
        self.journal.task_launched(spec.id, index, attempt, machine)
        self._keys[key] = (run.jid, pi)
        run.running[pi] = (key, len(run.rows))
        if run.first_start is None:
            run.first_start = now
            if self.on_first_start is not None:
                self.on_first_start(spec.tenant, now - run.submit)
        run.rows += (now, run.order, "map", index, attempt, machine, math.nan, None)
        self._calls.append(
            (
                TaskSpec(key, spec.id, index, attempt, spec.command, spec.demand, spec.tenant),
                machine,
            )
        )

    def _forget(self, now: float, run: _Running, pi: int, *, killed: bool) -> str | None:
        """Attempt of policy task ``pi`` ended now: its row closed; its key (None if it was
        not running)."""
        held = run.running.pop(pi, None)
        if held is None:
            return None
        key, slot = held
        del self._keys[key]
        run.rows[slot + ROW_FINISH] = now
        if killed:
            run.killed.add(slot)
        else:
            run.durations.append(now - run.rows[slot])
        return key

    def _end(self, now: float, run: _Running, outcome: JobEnd | None) -> None:
        """The job left the driver: finished (``outcome``), or failed or cancelled (None:
        recorded unfinished)."""
        del self._jobs[run.jid]
        del self._by_id[run.spec.id]
        self._spill.add(self._record(run, now if outcome == "finished" else None), run)

    # ------------------------------------------------------------------ records

    def _record(self, run: _Running, finish: float | None) -> JobRecord:
        """The job's record, its isolated response from the durations its tasks took."""
        spec = run.spec
        user = self.users[spec.tenant]
        demand = np.array([float(spec.demand.get(r, 0.0)) for r in self.resources])
        seconds = run.durations
        fit = TaskFit(list(self.machines.values()), self.resources)
        job = self._policy_job(spec, run.submit, spec.tasks)
        slots = fit.slots(job.constraint, job.machines, demand)
        isolated = greedy_end(seconds, slots, 0.0) if slots else math.inf
        return JobRecord(
            job=spec.id,
            user=spec.tenant,
            queue=user.queue,
            submit=run.submit,
            tasks=spec.tasks,
            demand=demand,
            weight=user.weight,
            first_start=run.first_start,
            finish=finish,
            isolated_response=isolated,
        )

    def log(self, policy: str, wall_seconds: float) -> RunLog:
        """The run so far as a :class:`RunLog` (SPEC section 3's outputs): attempts still
        running are truncated now, jobs still running are recorded unfinished.

        Parameters
        ----------
        policy : str
            The policy's name, for the log.
        wall_seconds : float
            The run's wall time so far.

        Returns
        -------
        RunLog
            The log :mod:`fairshare.metrics` and :mod:`fairshare.report` read, as a
            simulation's (``options`` is ``{"live": True}``, ``seed`` 0).
        """
        now = self.now()
        records: list[JobRecord | None] = [None] * self._orders
        rows: list[Any] = []
        killed: list[int] = []
        truncated: list[int] = []
        for record, order, flat, offsets in self._spill.read():
            records[order] = record
            killed += (len(rows) + k for k in offsets)
            rows += flat
        for run in self._jobs.values():
            records[run.order] = self._record(run, None)
            killed += (len(rows) + k for k in run.killed)
            for slot in range(0, len(run.rows), ROW_FIELDS):
                if math.isnan(run.rows[slot + ROW_FINISH]):
                    truncated.append(len(rows) + slot)
            rows += run.rows
        for slot in truncated:
            rows[slot + ROW_FINISH] = now
        jobs = tuple(r for r in records if r is not None)
        cluster = Cluster.build(self.resources, list(self.machines.values()))
        return RunLog.from_rows(
            policy=policy,
            seed=0,
            cluster=cluster,
            users=self.user_names,
            jobs=jobs,
            rows=AttemptRows.from_flat(rows, killed, truncated),
            events=self.events,
            wall_seconds=wall_seconds,
            options={"live": True},
            shares=final_shares(self.policy),
        )

    def _publish(self) -> None:
        """Copy the policy's running tasks and shares for :meth:`shares` (other threads)."""
        shares = dict.fromkeys(self.user_names, (0, 0.0))
        for user in self.policy.users:
            shares[user.name] = (user.running, float(user.share))
        with self._lock:
            self._shares = shares
