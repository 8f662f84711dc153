"""The deterministic event engine: replays jobs on a cluster under an online policy and
records every task attempt (SPEC section 3, ``fairshare simulate``).

It drives a :class:`fairshare.policies.Policy` through the protocol of
:mod:`fairshare.policies.protocol` and owns everything the policy must not: simulated time,
task durations, input-block placement and the run records. This module has
:func:`simulate`, the event loop and its decision rounds; the run's state and every change
of it are :mod:`fairshare.sim.run_state`'s: a task starts by one path
(``RunState.start``) and stops by one path whatever the reason (``RunState.stop``:
finished, killed or paused), alongside submissions, job and machine changes and the job
records.

Determinism:

- Events (:mod:`fairshare.sim.events`) are ordered by time, then kind (task finished,
  machine removed, machine added, job submitted, policy wake-up), then insertion order. All
  events at one time are delivered before the policy is asked to ``decide``, once.
- One ``numpy.random.Generator`` seeded by ``seed`` per run. At a job's submission, in job
  order, it draws the job's map durations (Pareto: ``minimum * (1 + pareto(alpha))``,
  exponential with the mean), then, for jobs that read input, each map task's block
  replicas (:mod:`fairshare.sim.placement`: HDFS's rack-aware placement by default, or
  uniformly; repeats dropped). A job reading a shared input file (``input_file``, hot files)
  reads the blocks the file already has and draws only those it lacks. Draws do not depend
  on the policy, so two policies see the same tasks.
- A map task that reads its block from another machine of the rack runs ``rack_slowdown``
  times longer; from another rack, ``off_rack_slowdown`` times (FAIR section 4's locality).
- Reducers (FAIR section 5) become runnable when every map of the job has finished, or with
  ``reduce_slowstart`` when that fraction of them has (Hadoop launches them "as soon as its
  first few maps finish", FAIR section 5.1). A reducer runs ``copy + compute`` seconds from
  its launch, or, launched before the maps finish, holds its room idle until the last map
  finishes and then runs them (slot hoarding). A reducer's demand is the reduce phase's own
  when the job gives one (Hadoop's reduce slots, FAIR section 5.3).
- With copy-compute splitting (FAIR section 5.2, :mod:`fairshare.policies.copy_compute`), a
  reducer is a copy part (no resources; it becomes runnable when the job's first map
  finishes and ends ``copy`` seconds after its launch or after the job's last map finish,
  whichever is later: the last map's output must be fetched too) and a compute part
  (``compute`` seconds, the reduce demand) that its machine admits after the copy. Both are
  recorded as attempts (phases ``copy`` and ``reduce``); a job's task count and finish count
  a reducer once, when its compute part finishes.

Streaming: ``jobs`` is consumed lazily, one job ahead, and must be sorted by ``submit``; a
trace larger than memory runs (only the records grow).

Closed loop: a job with ``after`` (a closed-loop submitter's next job) is not submitted at
its ``submit``: it is kept when read (it must come after the job it follows in the stream)
and submitted ``think`` seconds after that job ends (finishes or is cancelled), with that
time as its submit time; a job with ``after_all`` (a task of a DAG) likewise, once every
job it names has ended. A job is numbered (its index in the records) when it is submitted.
A user cancelled (``JobEvent`` ``cancel_user``: Choosy section 7's sudden leave) has its
running jobs cancelled and submits nothing afterwards (its later jobs are not recorded).

``isolated_response`` (the slowdown denominator) is the job's response time alone on the
empty cluster, computed analytically: its tasks, in order, each take the earliest free slot of
the machines it may use (slots: whole tasks per machine), maps then reduces, every read local.
"""

from __future__ import annotations

import math
import time as wallclock
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final

import numpy as np

from fairshare import collector
from fairshare.cluster import Cluster, Machine
from fairshare.policies import Decision, Launch, Policy, TaskRef, make_policy
from fairshare.policies.protocol import final_shares
from fairshare.runlog import (
    JobRecord,
    RunLog,
)
from fairshare.sim.events import (
    ADD,
    CANCEL,
    CANCEL_USER,
    FAIL,
    REMOVE,
    WAKEUP,
    Arrival,
    Finish,
    JobChange,
    MachineChange,
    Wakeup,
)
from fairshare.sim.options import (
    JobEvent,
    MachineEvent,
    Pause,
    SimOptions,
    SimulationError,
)
from fairshare.sim.run_state import FINISHED, KILLED, PAUSED, RunState
from fairshare.workload.model import (
    Job,
    Queue,
    User,
)
from fairshare.workload.scaling import scale_jobs

__all__ = ["JobEvent", "MachineEvent", "Pause", "SimOptions", "SimulationError", "simulate"]


def simulate(
    cluster: Cluster,
    jobs: Iterable[Job],
    policy: str | Policy,
    *,
    seed: int,
    users: Sequence[User] = (),
    queues: Sequence[Queue] = (),
    options: SimOptions | None = None,
    machine_events: Iterable[MachineEvent] = (),
    job_events: Iterable[JobEvent] = (),
    at: tuple[float, Callable[[Policy], None]] | None = None,
    progress: Callable[[float, int], None] | None = None,
) -> RunLog:
    """Replay jobs on a cluster under an online policy, in simulated time.

    The event loop of the module docstring (SPEC section 3, ``fairshare simulate``): jobs are
    submitted at their ``submit`` time, the policy places their tasks, and every task attempt
    and job is recorded. The run ends when no event is left, or at ``options.until``.

    Parameters
    ----------
    cluster : Cluster
        The machines at the start of the run (``machine_events`` add and remove others).
    jobs : iterable of Job
        The jobs, sorted by ``submit``; read lazily, one job ahead, so a trace larger than
        memory runs.
    policy : str or Policy
        A SPEC section 3 name (``fifo``, ``fair``, ``drf``, ``hdrf``, ``choosy``, ``tsf``,
        ...), or a policy object built on the same cluster (a reference scheduler of
        :mod:`fairshare.sim.reference`).
    seed : int
        Seeds the run's one generator: task durations drawn from distributions and input
        block placement. The same seed and inputs give the same run.
    users : sequence of User
        The scenario's users (weights, minimum shares, caps, FAIR pools), in scenario order:
        the order of ties and of the log's ``users``.
    queues : sequence of Queue
        The queue hierarchy (H-DRF section 2.1), when the policy uses one.
    options : SimOptions, optional
        Delay scheduling, preemption, copy-compute splitting, headroom, ``until``, locality
        slowdowns (default: none of them).
    machine_events : iterable of MachineEvent
        Machines joining or leaving during the run.
    job_events : iterable of JobEvent
        Tasks failing and jobs cancelled during the run (what a live cluster does,
        :mod:`fairshare.backends`); a cancelled job is recorded unfinished.
    at : (float, callable), optional
        ``(T, look)``: ``look(policy)`` is called once, with the policy as it stands at time
        T: after every event at or before T and its decision round, before any later event
        (at the end of the run if none is later). ``fairshare explain`` reads the policy
        there; ``look`` must not change it.
    progress : callable, optional
        Called as ``progress(now, launched)`` every :data:`PROGRESS_EVENTS` events with the
        simulated time and the task attempts launched so far (a progress bar); it must not
        change the run.

    Returns
    -------
    RunLog
        Every task attempt and job record of the run, ready for :mod:`fairshare.metrics`.

    Raises
    ------
    SimulationError
        Options a run cannot take, jobs not sorted by submit time, a repeated job name, or a
        machine event naming a machine already there (``add``) or absent (``remove``).
    PolicyError
        An unknown policy name, or a request the policy cannot serve.

    Examples
    --------
    Job ``a`` (four tasks of 10 s) and, 5 s later, job ``b`` (two tasks) on two slots:
    FIFO finishes ``a`` first, FAIR shares the slots as soon as one frees.

    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.workload.model import FixedDuration, Job
    >>> cluster = Cluster.build(["slots"], [Machine("m", np.array([2.0]))])
    >>> jobs = [
    ...     Job("a", 0.0, "alice", np.array([1.0]), 4, FixedDuration(10.0)),
    ...     Job("b", 5.0, "bob", np.array([1.0]), 2, FixedDuration(10.0)),
    ... ]
    >>> [(r.job, r.finish) for r in simulate(cluster, jobs, "fifo", seed=0).jobs]
    [('a', 20.0), ('b', 30.0)]
    >>> log = simulate(cluster, jobs, "fair", seed=0)
    >>> [(r.job, r.first_start, r.finish) for r in log.jobs]
    [('a', 0.0, 30.0), ('b', 10.0, 30.0)]
    >>> log.users, log.attempt_count
    (('alice', 'bob'), 6)
    """
    started = wallclock.perf_counter()
    opts = options if options is not None else SimOptions()
    sched: Policy
    if isinstance(policy, str):
        sched = make_policy(
            policy, cluster, users=users, queues=queues, options=opts.policy_options()
        )
        policy_name = policy
    else:
        sched = policy
        policy_name = policy.name
    rng = np.random.default_rng(seed)
    if opts.load_scale != 1.0 or opts.time_scale != 1.0:
        jobs = scale_jobs(jobs, load=opts.load_scale, time=opts.time_scale)
    run = _Run(cluster, sched, rng, opts)
    run.sampling = bool(queues) and hasattr(sched, "queue_shares")
    run.at = at
    run.progress = progress
    # The run allocates a few tuples per running task (its event, its TaskRef) and no
    # reference cycles on its hot path: the cyclic collector's passes over them cost about a
    # fifth of a long run, so it waits until the log's columns are built.
    with collector.paused():
        run.run(iter(jobs), machine_events, job_events)
        rows = run.attempt_rows()
    user_names = [u.name for u in users]
    seen = set(user_names)
    records = [r for r in run.records if r is not None]
    assert len(records) == len(run.records), "every job is recorded by the end of the run"
    for record in records:
        if record.user not in seen:
            seen.add(record.user)
            user_names.append(record.user)
    # The log makes TaskAttempts from the rows only if someone reads log.attempts.
    return RunLog.from_rows(
        policy=policy_name,
        seed=seed,
        cluster=cluster,
        users=tuple(user_names),
        jobs=tuple(records),
        rows=rows,
        events=run.events,
        wall_seconds=wallclock.perf_counter() - started,
        options=opts.record(),
        stranded=run.stranded,
        shares=final_shares(sched),
        queue_shares=tuple(run.queue_shares),
        user_queues=_user_queues(users, records),
    )


PROGRESS_EVENTS: Final = 16_384
"""How often (in events) ``simulate``'s ``progress`` is told how the run goes: a few
hundred times a second at the engine's rate, a test of an integer otherwise."""

SHARE_SAMPLE_SECONDS: Final = 1.0
"""With queues, each queue's share as the policy computes it is sampled after a decision
round at most once per this many simulated seconds, and at the end (``RunLog.queue_shares``):
a policy's shares cost O(users) to compute, and sampling every round of a large run cost a
kueue run four times its scheduling."""


def _user_queues(users: Sequence[User], records: Sequence[JobRecord]) -> dict[str, str]:
    """Each user's queue: the configured one, else its first job's (none: left out)."""
    out = {u.name: u.queue for u in users if u.queue}
    configured = {u.name for u in users}
    for record in records:
        if record.queue and record.user not in configured:
            out.setdefault(record.user, record.queue)
    return out


class _Run(RunState):
    """One simulation run: its event loop and decision rounds; the run's state and every
    change of it are :class:`~fairshare.sim.run_state.RunState`'s."""

    def run(
        self,
        jobs: Iterator[Job],
        machine_events: Iterable[MachineEvent],
        job_events: Iterable[JobEvent] = (),
    ) -> None:
        """The event loop: deliver the events of one time to the policy, then apply its
        decisions, until no event is left (or ``until``).

        Two shortcuts of the protocol (:mod:`fairshare.policies.protocol`) carry most of a
        large run. A map task's finish that is the only event at its time goes to
        ``finish_and_decide`` (the finish and the decision round in one call). While the
        policy said it is ``quiescent`` after the last round, a map task's finish of a job
        without a reduce phase, alone at its time or among other finishes only, is held
        back, and the held finishes go in one ``tasks_finished`` call before anything else
        reaches the policy (:meth:`_flush`). Otherwise the finishes of one time go in one
        ``tasks_finished_at`` call (by contract ``task_finished`` for each, in order), made
        before anything else of that time reaches the policy and before its round: the
        instances of a trace's task end together, and one release of them all touches
        their user once, where a call each touched it per finish."""
        self.job_iter = jobs
        self.next_job(0.0)
        queue = self.queue
        for change in machine_events:
            kind = ADD if change.kind == "add" else REMOVE
            queue.push(MachineChange(change.time, kind, queue.token(), change.machine))
        kinds = {"cancel": CANCEL, "fail": FAIL, "cancel_user": CANCEL_USER}
        for job_event in job_events:
            kind = kinds[job_event.kind]
            queue.push(
                JobChange(job_event.time, kind, queue.token(), job_event.job, job_event.task)
            )
        times = queue.times
        policy = self.policy
        wakeups = policy.uses_wakeups
        over = self.over
        stop = self.opts.until if self.opts.until is not None else math.inf
        # A look at the policy at a time (simulate's ``at``), once.
        at = self.at
        progress = self.progress
        # With queues, each queue's share as the policy computes it, after every round.
        sampling = self.sampling
        quiet = False  # the policy's quiescent() after the last decision round
        held: list[TaskRef] = []  # finishes held back while quiet
        held_at: list[float] = []  # and their times (usage over time books each at its own)
        # This time's finishes not yet delivered (one tasks_finished_at call, see above).
        batch: list[TaskRef] = []
        delivered = False  # events of this time were delivered: a decision round is due
        exhausted = True
        events = 0
        now = 0.0
        while times:
            now = times[0]
            if now > stop:
                exhausted = False
                break
            if at is not None and now > at[0]:
                if held:
                    # The finishes held back happened by the look's time: the policy hears
                    # of them first, as it would before this event.
                    policy.tasks_finished(held_at[-1], held, held_at)
                    held = []
                    held_at = []
                at[1](policy)
                at = None
            event = queue.pop()
            events += 1
            if progress is not None and not events % PROGRESS_EVENTS:
                progress(now, self.launched())
            decisions: list[Decision] | None = None
            if type(event) is Finish:
                task = event.task
                # False: a stale event, of a task stopped or retimed since it was queued.
                if self.stop(now, event, FINISHED):
                    # The only event at its time (the finish may have queued reducers).
                    alone = not delivered and (not times or times[0] != now)
                    if (
                        quiet
                        and task.phase == "map"
                        and event.run.maps_only
                        and (alone or not (delivered or sampling))
                    ):
                        # Held back whether alone or among other finishes at its time (the
                        # instances of one trace task end together), while no round is due
                        # (and no queue's share is sampled at its rounds): see _flush.
                        held.append(task)
                        held_at.append(now)
                        continue
                    if held:
                        delivered = self._flush(now, held, held_at) or delivered
                        held = []
                        held_at = []
                        alone = not delivered and (not times or times[0] != now)
                    if alone and task.phase == "map":
                        decisions = policy.finish_and_decide(now, task)
                    else:
                        # Not alone (or a reducer's): this time's round comes after the
                        # rest of its events, so nothing reads the policy before the batch
                        # is delivered.
                        batch.append(task)
                elif over is not None and (not delivered or (times and times[0] == now)):
                    # A finish event replaced by a retimed one: nothing happened at its time.
                    continue
            else:
                if held:
                    delivered = self._flush(now, held, held_at) or delivered
                    held = []
                    held_at = []
                assert not isinstance(event, Finish)
                if batch:
                    policy.tasks_finished_at(now, batch)
                    batch = []
                self._deliver(now, event)
            if decisions is None:
                if times and times[0] == now:
                    delivered = True  # the rest of this time's events first
                    continue
                if held:
                    self._flush(now, held, held_at)
                    held = []
                    held_at = []
                if batch:
                    policy.tasks_finished_at(now, batch)
                    batch = []
                decisions = policy.decide(now)
            delivered = False
            self._apply(now, decisions)
            if sampling and now >= self.next_sample:
                self.sample_shares(now)
                self.next_sample = now + SHARE_SAMPLE_SECONDS
            # Asked after every round, one that launched tasks too: a job placed whole on
            # arrival (a cluster with room) leaves nothing to place, and the finishes of its
            # tasks need no round.
            quiet = policy.quiescent()
            if wakeups:
                self._ask_wakeup(now)
        if held:
            policy.tasks_finished(now, held, held_at)
        if batch:
            policy.tasks_finished_at(now, batch)
        if at is not None:
            at[1](policy)
        if sampling:
            self.sample_shares(now)
        self.events = events
        if exhausted:
            # No event was left to move them: their waiting tasks fit on no machine they may
            # use (too large, a constraint no machine meets, or room held forever).
            self.stranded = tuple(run.job.name for run in self.runs.values() if run.finish is None)
        self.close(now)

    def _flush(self, now: float, held: list[TaskRef], held_at: list[float]) -> bool:
        """The finishes held back while the policy was quiescent reach it before anything
        else at ``now`` does: those of earlier times in one ``tasks_finished`` call, those
        of ``now`` itself as one ``task_finished`` each (``tasks_finished_at``), as they
        would have come without the holding (their machines then wait for this time's
        decision round, which another event at ``now`` makes due). Returns whether some
        finished at ``now``.

        Held finishes of an earlier time had no other event at their time, so without the
        holding their round would have offered their machines to nobody (the policy
        promised it, :meth:`~fairshare.policies.protocol.Policy.quiescent`): releasing them
        without offers leaves the policy as those rounds would have."""
        policy = self.policy
        k = len(held)
        while k and held_at[k - 1] == now:
            k -= 1
        if k:
            policy.tasks_finished(now, held[:k], held_at[:k])
        if k < len(held):
            policy.tasks_finished_at(now, held[k:])
            return True
        return False

    def sample_shares(self, now: float) -> None:
        """Record each queue's share as the policy computes it now, where it changed
        (``RunLog.queue_shares``)."""
        queues = self.policy.queue_shares()
        last = self.last_queue_shares
        for path, share in queues.items():
            if last.get(path) != share:
                last[path] = share
                self.queue_shares.append((now, path, share))

    def _ask_wakeup(self, now: float) -> None:
        """Queue the wake-up the policy asks for, once per time."""
        wake = self.policy.next_wakeup()
        if wake is not None and wake > now and wake not in self.wakes:
            self.wakes.add(wake)
            self.queue.push(Wakeup(wake, WAKEUP, self.queue.token()))

    # ----------------------------------------------------------------- events

    def _deliver(self, now: float, event: Arrival | MachineChange | Wakeup | JobChange) -> None:
        """Deliver an event other than a finish to the policy (finishes: see :meth:`run`)."""
        if type(event) is Arrival:
            self.submit(now, event.job)
        elif type(event) is JobChange:
            self.job_change(now, event)
        elif type(event) is MachineChange:
            if event.kind == ADD:
                assert isinstance(event.machine, Machine)
                self.add_machine(now, event.machine)
            else:
                assert isinstance(event.machine, str)
                self.remove_machine(now, event.machine)
        else:
            self.wakes.discard(now)
            self.policy.advance(now)

    # ----------------------------------------------------------------- decisions

    def _apply(self, now: float, decisions: Sequence[Decision]) -> None:
        """Apply a decision round in order: every launch starts its task
        (:meth:`~fairshare.sim.run_state.RunState.start`), kills and pauses stop theirs
        (:meth:`~fairshare.sim.run_state.RunState.stop`). The round's map launches form one
        lane (see :mod:`fairshare.sim.events`), queued once the round is applied.

        A round may launch a task and kill it again (a preemption in the same round: a gang
        launched whole, then stopped whole by rule 9), and launch it once more elsewhere; so
        each launch joins the over-commit model when it is applied, before the decisions
        after it, and a kill finds its task there whichever round launched it. The machines
        whose tasks changed settle once the round is applied."""
        if not decisions:
            return
        lane: list[Finish] = []
        for decision in decisions:
            if type(decision) is Launch:
                self.start(now, decision, lane)
            else:
                reason = PAUSED if type(decision) is Pause else KILLED
                self.stop(now, self.entry(decision.task), reason)
        if lane:
            self.queue.open_lane(lane)
        if self.over is not None:
            self.over.settle(now)
