"""The deterministic event engine: replays jobs on a cluster under an online policy and
records every task attempt (SPEC section 3, ``fairshare simulate``).

It drives a :class:`fairshare.policies.Policy` through the protocol of
:mod:`fairshare.policies.protocol` and owns everything the policy must not: simulated time,
task durations, input-block placement and the run records.

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
time as its submit time. A job is numbered (its index in the records) when it is submitted.
A user cancelled (``JobEvent`` ``cancel_user``: Choosy section 7's sudden leave) has its
running jobs cancelled and submits nothing afterwards (its later jobs are not recorded).

``isolated_response`` (the slowdown denominator) is the job's response time alone on the
empty cluster, computed analytically: its tasks, in order, each take the earliest free slot of
the machines it may use (slots: whole tasks per machine), maps then reduces, every read local.
"""

from __future__ import annotations

import math
import time as wallclock
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from fairshare import collector
from fairshare.cluster import Cluster, FloatArray, Machine
from fairshare.policies import Decision, Launch, Policy, TaskRef, make_policy
from fairshare.runlog import (
    ROW_ATTEMPT,
    ROW_FINISH,
    AttemptRows,
    JobRecord,
    RunLog,
    greedy_end,
)
from fairshare.sim.events import (
    ADD,
    ARRIVAL,
    CANCEL,
    CANCEL_USER,
    FAIL,
    FINISH,
    REMOVE,
    WAKEUP,
    Arrival,
    EventQueue,
    Finish,
    JobChange,
    JobRun,
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
from fairshare.sim.overcommit import Overcommit
from fairshare.sim.placement import BlockPlacer
from fairshare.workload.eligibility import TaskFit
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    PerTaskDurations,
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
    # The run allocates a few tuples per running task (its event, its TaskRef) and no
    # reference cycles on its hot path: the cyclic collector's passes over them cost about a
    # fifth of a long run, so it waits until the log's columns are built.
    with collector.paused():
        run.run(iter(jobs), machine_events, job_events)
        rows = AttemptRows.from_flat(run.attempts, run.killed, run.truncated)
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
    )


class _Run:
    """One simulation run's mutable state."""

    def __init__(
        self, cluster: Cluster, policy: Policy, rng: np.random.Generator, opts: SimOptions
    ) -> None:
        self.policy = policy
        self.rng = rng
        self.opts = opts
        self.resources = cluster.resources
        self.machines: dict[str, Machine] = {m.name: m for m in cluster.machines}
        self.live: list[str] = [m.name for m in cluster.machines]
        self.queue = EventQueue()
        self.events = 0
        self.runs: dict[int, JobRun] = {}
        # One record per job in submission order, written when the job finishes or the run
        # ends (None until then: the isolated response depends on the machines by then).
        self.records: list[JobRecord | None] = []
        # Submitted job -> its index; every job read so far (names are unique).
        self.order: dict[str, int] = {}
        self.names: set[str] = set()
        # Closed loop: job name -> the jobs submitted when it ends (kept until then).
        self.followers: dict[str, list[Job]] = {}
        # Users cancelled as a whole: their later jobs are not submitted.
        self.gone: set[str] = set()
        # Input files shared by jobs (hot files) -> their blocks' replicas, drawn as needed.
        self.files: dict[str, list[tuple[str, ...]]] = {}
        # The live machines by rack, for block placement; rebuilt when machines change.
        self.placer: BlockPlacer | None = None
        # Attempts flat, records.ROW_FIELDS items each (start, job order, phase, task,
        # attempt, machine, finish, locality), made into the log's sorted columns at the end.
        # An attempt's items are appended at its launch (written as the task will end), so
        # the list is in start order but for ties; kills and truncations are noted by the
        # attempt's offset in the list (its slot).
        self.attempts: list[Any] = []
        self.killed: set[int] = set()
        self.truncated: set[int] = set()
        # Running reducer (or copy part) -> its Finish (its running entry); a running map
        # task's is in its job's map_entries.
        self.running: dict[TaskRef, Finish] = {}
        # Paused task -> fraction of its work left (see Pause).
        self.resume: dict[TaskRef, float] = {}
        # Task that resumed after a pause -> the fraction of its work its attempt started
        # with (left behind when it finishes: a finished task never runs again).
        self.fraction: dict[TaskRef, float] = {}
        self.attempt_of: dict[TaskRef, int] = {}
        # Where whole tasks fit on the alive machines (the isolated response's slots); built
        # on first use and dropped when machines change.
        self.fit: TaskFit | None = None
        self.wakes: set[float] = set()
        # Jobs left unfinished when no event was left (not stopped by ``until``).
        self.stranded: tuple[str, ...] = ()
        self.slow = {
            "node": 1.0,
            "rack": opts.rack_slowdown,
            "off_rack": opts.off_rack_slowdown,
        }
        # Contention on over-committed machines, for a policy that over-commits them (the
        # slot scheduler): see fairshare.sim.overcommit.
        self.over: Overcommit | None = None
        if getattr(policy, "overcommits", False):
            self.over = Overcommit(cluster.resources, opts.thrash_factor, self._retime)

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
        policy said it is ``quiescent`` after the last round, such a finish of a job without
        a reduce phase is only held back, and the held finishes go in one
        ``tasks_finished`` call before anything else reaches the policy."""
        self.job_iter = jobs
        self.last_submit = -math.inf
        self.next_index = 0
        self.next_read = 0
        self._next_job(0.0)
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
        pop = queue.pop
        finish = self._finish
        policy = self.policy
        wakeups = policy.uses_wakeups
        over = self.over
        stop = self.opts.until if self.opts.until is not None else math.inf
        quiet = False  # the policy's quiescent() after the last decision round
        held: list[TaskRef] = []  # finishes held back while quiet
        delivered = False  # events of this time were delivered: a decision round is due
        exhausted = True
        events = 0
        now = 0.0
        while times:
            now = times[0]
            if now > stop:
                exhausted = False
                break
            event = pop()
            events += 1
            decisions: list[Decision] | None = None
            if type(event) is Finish:
                task = event.task
                if finish(now, event):
                    # The only event at its time (the finish may have queued reducers).
                    alone = not delivered and (not times or times[0] != now)
                    if alone and task.phase == "map":
                        if quiet and event.run.maps_only:
                            held.append(task)
                            continue
                        if held:
                            policy.tasks_finished(now, held)
                            held = []
                        decisions = policy.finish_and_decide(now, task)
                    else:
                        if held:
                            policy.tasks_finished(now, held)
                            held = []
                        policy.task_finished(now, task)
                elif over is not None and (not delivered or (times and times[0] == now)):
                    # A finish event replaced by a retimed one: nothing happened at its time.
                    continue
            else:
                if held:
                    policy.tasks_finished(now, held)
                    held = []
                assert not isinstance(event, Finish)
                self._deliver(now, event)
            if decisions is None:
                if times and times[0] == now:
                    delivered = True  # the rest of this time's events first
                    continue
                if held:
                    policy.tasks_finished(now, held)
                    held = []
                decisions = policy.decide(now)
            delivered = False
            self._apply(now, decisions)
            # A round that launched nothing may leave a policy with nothing to place.
            quiet = not decisions and policy.quiescent()
            if wakeups:
                self._ask_wakeup(now)
        if held:
            policy.tasks_finished(now, held)
        self.events = events
        if exhausted:
            # No event was left to move them: their waiting tasks fit on no machine they may
            # use (too large, a constraint no machine meets, or room held forever).
            self.stranded = tuple(run.job.name for run in self.runs.values() if run.finish is None)
        self._close(now)

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
            self._submit(now, event.job)
        elif type(event) is JobChange:
            self._job_change(now, event)
        elif type(event) is MachineChange:
            if event.kind == ADD:
                assert isinstance(event.machine, Machine)
                self._add(now, event.machine)
            else:
                assert isinstance(event.machine, str)
                self._remove(now, event.machine)
        else:
            self.wakes.discard(now)
            self.policy.advance(now)

    def _finish(self, now: float, event: Finish) -> bool:
        """Retire the running task of finish ``event``, and count it; False (nothing done)
        for the stale event of a task killed or paused before it finished. Its attempt's
        row was written whole at the launch (it ends when it was due to). Telling the policy
        is the caller's."""
        task = event.task
        run = event.run
        if task.phase == "map":
            entries = run.map_entries
            index = task.task
            if entries[index] is not event:
                return False
            entries[index] = None
            if self.over is not None:
                self.over.stop(now, task)
            if not run.maps_only:
                run.maps_done += 1
                if run.maps_done == run.maps and run.waiting:
                    self._maps_finished(now, run)
        else:
            if self.running.get(task) is not event:
                return False
            del self.running[task]
            if self.over is not None:
                self.over.stop(now, task)
            if task.phase == "copy":
                return True  # the reducer's compute part is still to run: not finished yet
        run.done += 1
        if run.done == run.total:
            run.finish = now
            self.records[run.index] = self._record(run)
            del self.runs[run.index]
            if self.followers:
                self._release(now, run.job.name)
        return True

    # ----------------------------------------------------------------- decisions

    def _apply(self, now: float, decisions: Sequence[Decision]) -> None:
        """Apply a decision round in order: every launch starts its task here (its attempt's
        row written as the task will end, its running entry, its finish event), kills and
        pauses stop theirs. The round's map launches form one lane (see
        :mod:`fairshare.sim.events`), which a batch launches one job's tasks in a row for."""
        if not decisions:
            return
        runs = self.runs
        attempts = self.attempts
        attempt_of = self.attempt_of
        resume = self.resume
        slow = self.slow
        tokens = self.queue.tokens
        new = tuple.__new__
        lane: list[Finish] = []
        last_job = -1
        run: JobRun | None = None
        for decision in decisions:
            if type(decision) is not Launch:
                if type(decision) is Pause:
                    self._pause(now, decision.task)
                else:
                    self._kill(now, decision.task)
                continue
            task, machine, locality = decision
            job_id, phase, index = task
            if job_id != last_job:
                last_job = job_id
                run = runs[job_id]
                if run.first_start is None:
                    run.first_start = now
            assert run is not None
            attempt = attempt_of.get(task, 0) if attempt_of else 0
            slot = len(attempts)
            if phase == "map":
                seconds = run.map_seconds[index]
                if locality is not None:
                    seconds *= slow[locality]
                if not resume:
                    # The common launch: a map task, in the round's lane.
                    end = now + seconds
                    attempts += (now, run.index, phase, index, attempt, machine, end, locality)
                    entry = new(Finish, (end, FINISH, next(tokens), task, slot, run, lane))
                    run.map_entries[index] = entry
                    lane.append(entry)
                    continue
            else:
                seconds = self._reduce_seconds(run.job, task)
            fraction = resume.pop(task, 1.0) if resume else 1.0
            if fraction != 1.0:
                seconds *= fraction
                self.fraction[task] = fraction
            if (
                phase != "map"
                and run.maps_done < run.maps
                and not (phase == "reduce" and self.opts.copy_compute_splitting)
            ):
                # Launched before the last map finished: it holds its room and waits (no
                # finish event until the maps are done).
                run.waiting[task] = None
                end = math.inf
                locality = None
            else:
                end = now + seconds
            attempts += (now, run.index, phase, index, attempt, machine, end, locality)
            token = next(tokens) if end != math.inf else 0
            entry = new(Finish, (end, FINISH, token, task, slot, run, None))
            if phase == "map":
                run.map_entries[index] = entry
            else:
                self.running[task] = entry
            if end != math.inf:
                self.queue.push(entry)
        if lane:
            self.queue.open_lane(lane)
        if self.over is not None:
            self._overcommitted(now, decisions)

    def _overcommitted(self, now: float, decisions: Sequence[Decision]) -> None:
        """The round's launches join their machines' loads, whose tasks are retimed where
        contention changed (:mod:`fairshare.sim.overcommit`)."""
        over = self.over
        assert over is not None
        for decision in decisions:
            if type(decision) is not Launch:
                continue
            task, machine, _ = decision
            run = self.runs[task.job]
            entry = run.map_entries[task.task] if task.phase == "map" else self.running[task]
            assert entry is not None
            job = run.job
            if task.phase == "copy":
                demand = np.zeros(len(self.resources))
            elif task.phase == "map" or job.reduce is None or job.reduce.demand is None:
                demand = job.demand
            else:
                demand = job.reduce.demand
            over.launch(now, task, self.machines[machine], demand, entry.time)
        over.settle(now)

    def _retime(self, ref: TaskRef, end: float) -> None:
        """Running task ``ref`` now finishes at ``end``: a new finish event replaces its
        entry (the old one is stale) and its attempt's row."""
        run = self.runs[ref.job]
        old = run.map_entries[ref.task] if ref.phase == "map" else self.running[ref]
        assert old is not None, f"{ref} is not running"
        entry = Finish(end, FINISH, self.queue.token(), ref, old.slot, run, None)
        self._row(entry, end)
        if ref.phase == "map":
            run.map_entries[ref.task] = entry
        else:
            self.running[ref] = entry
        self.queue.push(entry)

    def _next_job(self, now: float) -> None:
        """Queue the arrival of the next job of the stream: jobs are read one ahead, so a
        trace larger than memory runs; checks the order and names as it goes. Closed-loop
        jobs read on the way are kept for the job they follow (module docstring)."""
        while True:
            job = next(self.job_iter, None)
            if job is None:
                return
            where = f"jobs[{self.next_read}]"
            self.next_read += 1
            if job.name in self.names:
                raise SimulationError(f"{where}.name", f"job name '{job.name}' repeats")
            if job.duration is None:
                raise SimulationError(
                    f"{where}.duration", "a simulated job needs its tasks' duration (seconds)"
                )
            if job.after is not None:
                self._follow(now, job, where)
                self.names.add(job.name)
                continue
            if not job.submit >= self.last_submit:
                raise SimulationError(
                    f"{where}.submit",
                    f"jobs must be sorted by submit time: {job.submit} < {self.last_submit}",
                )
            self.names.add(job.name)
            self.last_submit = job.submit
            self.queue.push(Arrival(job.submit, ARRIVAL, self.queue.token(), job))
            return

    def _follow(self, now: float, job: Job, where: str) -> None:
        """Keep closed-loop ``job`` until the job it follows ends; a job that ended before
        ``job`` was read is followed from now."""
        after = job.after
        assert after is not None
        if after not in self.names:
            raise SimulationError(
                f"{where}.after",
                f"job '{job.name}' follows '{after}', which is not among the jobs before it",
            )
        index = self.order.get(after)
        if index is not None and self.records[index] is not None:
            self._arrive(now, job)
        else:
            self.followers.setdefault(after, []).append(job)

    def _release(self, now: float, name: str) -> None:
        """Job ``name`` ended: the jobs that follow it arrive after their think time."""
        for job in self.followers.pop(name, ()):
            self._arrive(now, job)

    def _arrive(self, now: float, job: Job) -> None:
        """Queue closed-loop ``job``'s arrival ``think`` seconds after ``now``."""
        submit = now + job.think
        self.queue.push(Arrival(submit, ARRIVAL, self.queue.token(), replace(job, submit=submit)))

    def _submit(self, now: float, job: Job) -> None:
        """Submit ``job``: draw its durations and input blocks (in job order, so every
        policy sees the same tasks) and tell the policy. A job of a cancelled user is
        dropped."""
        if job.user in self.gone:
            if job.after is None:
                self._next_job(now)
            return
        index = self.next_index
        self.next_index += 1
        self.order[job.name] = index
        seconds = _durations(job, self.rng)
        blocks: list[tuple[str, ...]] | None = None
        if job.input_replicas and self.live:
            blocks = self._blocks(job)
        run = JobRun(index, job, seconds)
        self.runs[index] = run
        self.records.append(None)
        self.policy.job_submitted(now, index, job, blocks)
        if job.after is None:
            self._next_job(now)
        if run.total == 0:
            run.first_start = run.finish = now
            self.records[index] = self._record(run)
            if self.followers:
                self._release(now, job.name)

    def _blocks(self, job: Job) -> list[tuple[str, ...]]:
        """The replicas of each map task's input block: its own, or block ``i`` of the shared
        file it reads (drawing the blocks the file lacks)."""
        if self.placer is None:
            racks = {name: self.machines[name].rack for name in self.live}
            self.placer = BlockPlacer(self.live, racks)
        replicas = job.input_replicas
        assert replicas is not None
        if job.input_file is None:
            return self.placer.place(job.tasks, replicas, job.replica_placement, self.rng)
        file = self.files.setdefault(job.input_file, [])
        if len(file) < job.tasks:
            file += self.placer.place(
                job.tasks - len(file), replicas, job.replica_placement, self.rng
            )
        return file[: job.tasks]

    def _row(
        self, state: Finish, end: float, *, killed: bool = False, truncated: bool = False
    ) -> None:
        """Rewrite the attempt row of a task that ran from its launch (``state``) to
        ``end``."""
        slot = state.slot
        self.attempts[slot + ROW_FINISH] = end
        if killed:
            self.killed.add(slot)
        if truncated:
            self.truncated.add(slot)

    def _attempt(self, state: Finish) -> int:
        """The attempt number of running task ``state``."""
        attempt: int = self.attempts[state.slot + ROW_ATTEMPT]
        return attempt

    def _started(self, state: Finish) -> float:
        """When running task ``state`` started."""
        start: float = self.attempts[state.slot]
        return start

    def _reduce_seconds(self, job: Job, ref: TaskRef) -> float:
        """A reducer's seconds once the maps are done: copy and compute, or with splitting
        the part ``ref`` names."""
        reduce = job.reduce
        assert reduce is not None
        if ref.phase == "copy":
            return reduce.copy
        if self.opts.copy_compute_splitting:
            return reduce.compute
        return reduce.copy + reduce.compute

    def _maps_finished(self, now: float, run: JobRun) -> None:
        """The job's last map finished: the reducers waiting for it copy (and compute) now."""
        for ref in run.waiting:
            seconds = self._reduce_seconds(run.job, ref) * self.fraction.get(ref, 1.0)
            end = now + seconds if self.over is None else self.over.resume(now, ref, seconds)
            self._retime(ref, end)
        run.waiting.clear()

    def _stop(self, ref: TaskRef, run: JobRun) -> Finish:
        """Retire running task ``ref`` of ``run`` before its finish: its entry."""
        if ref.phase == "map":
            state = run.map_entries[ref.task]
            assert state is not None, f"{ref} is not running"
            run.map_entries[ref.task] = None
            return state
        return self.running.pop(ref)

    def _kill(self, now: float, ref: TaskRef) -> None:
        """Kill running task ``ref`` (preemption, a machine removed): its work is lost and
        it runs again as the next attempt."""
        run = self.runs[ref.job]
        state = self._stop(ref, run)
        run.waiting.pop(ref, None)
        self.fraction.pop(ref, None)
        if self.over is not None:
            self.over.stop(now, ref)
        self._row(state, now, killed=True)
        self.attempt_of[ref] = self._attempt(state) + 1

    def _pause(self, now: float, ref: TaskRef) -> None:
        """Pause running task ``ref`` (a reference scheduler's :class:`Pause`): the fraction
        of its work left is kept for its next attempt."""
        run = self.runs[ref.job]
        state = self._stop(ref, run)
        run.waiting.pop(ref, None)
        self._row(state, now)
        self.attempt_of[ref] = self._attempt(state) + 1
        end, start, fraction = state.time, self._started(state), self.fraction.pop(ref, 1.0)
        if not math.isfinite(end):
            self.resume[ref] = fraction  # it was waiting for the maps: no work done yet
        else:
            self.resume[ref] = fraction * (end - now) / (end - start) if end > start else 0.0

    def _job_change(self, now: float, event: JobChange) -> None:
        """A task fails (its attempt recorded as killed, the task pending again), a job is
        cancelled (its running tasks killed, the job recorded unfinished), or a user leaves
        (its running jobs cancelled, its later ones dropped); see :class:`JobEvent`."""
        if event.kind == CANCEL_USER:
            self.gone.add(event.job)
            for leaving in [r for r in self.runs.values() if r.job.user == event.job]:
                self._cancel(now, leaving)
            return
        index = self.order.get(event.job)
        run = self.runs.get(index) if index is not None else None
        if run is None:
            return
        if event.kind == CANCEL:
            self._cancel(now, run)
            return
        if not 0 <= event.task < run.maps or run.map_entries[event.task] is None:
            return
        ref = TaskRef(run.index, "map", event.task)
        self._kill(now, ref)
        self.policy.task_failed(now, ref)

    def _cancel(self, now: float, run: JobRun) -> None:
        """Cancel running job ``run``: its running tasks killed, the job recorded
        unfinished, the jobs that follow it released."""
        for ref in self.policy.job_cancelled(now, run.index):
            self._kill(now, ref)
        self.records[run.index] = self._record(run)
        del self.runs[run.index]
        if self.followers:
            self._release(now, run.job.name)

    def _add(self, now: float, machine: Machine) -> None:
        """A machine joins; the isolated responses' slots are recomputed on next use."""
        if machine.name in self.machines:
            raise SimulationError(
                "machine_events", f"machine '{machine.name}' is already in the cluster"
            )
        self.machines[machine.name] = machine
        self.live.append(machine.name)
        self.fit = None
        self.placer = None
        self.policy.machine_added(now, machine)

    def _remove(self, now: float, name: str) -> None:
        """A machine leaves; the tasks the policy says ran on it are killed."""
        if name not in self.machines:
            raise SimulationError("machine_events", f"no machine '{name}' to remove")
        del self.machines[name]
        self.live.remove(name)
        self.fit = None
        self.placer = None
        for ref in self.policy.machine_removed(now, name):
            self._kill(now, ref)

    def _close(self, last: float) -> None:
        """Jobs still running when the run ends keep ``finish=None``; refresh their rows. Tasks
        still running are recorded as truncated attempts up to ``until``, or, when no event is
        left (reducers launched early by ``reduce_slowstart`` that hold every machine the
        job's remaining maps could use wait forever: FAIR section 5.1's slot hoarding taken to
        deadlock), up to the time ``last`` of the last event."""
        end = self.opts.until if self.opts.until is not None else last
        running = list(self.running.values())
        for run in self.runs.values():
            running += [state for state in run.map_entries if state is not None]
        for state in running:
            self._row(state, max(end, self._started(state)), truncated=True)
        for run in self.runs.values():
            self.records[run.index] = self._record(run)

    # ----------------------------------------------------------------- records

    def _record(self, run: JobRun) -> JobRecord:
        """The job record of ``run`` as it stands (unfinished jobs keep ``finish=None``)."""
        job = run.job
        return JobRecord(
            job=job.name,
            user=job.user,
            queue=job.queue,
            submit=job.submit,
            tasks=run.total,
            demand=job.demand,
            weight=job.weight,
            first_start=run.first_start,
            finish=run.finish,
            isolated_response=self._isolated(run),
            reduce_demand=job.reduce.demand if job.reduce is not None else None,
        )

    def _isolated(self, run: JobRun) -> float:
        """The job's response time alone on the empty cluster (the slowdown denominator,
        module docstring); inf when no machine it may use holds one of its tasks."""
        job = run.job
        if run.total == 0:
            return 0.0
        slots = self._slots(job, job.demand) if job.tasks else 1
        if slots == 0 or (job.min_tasks is not None and slots < job.min_tasks):
            # A gang whose tasks never fit at once never starts.
            return math.inf
        end = greedy_end(run.map_seconds, slots, 0.0)
        if job.reduce is not None and job.reduce.tasks:
            demand = job.demand if job.reduce.demand is None else job.reduce.demand
            slots = self._slots(job, demand)
            if slots == 0:
                return math.inf
            each = job.reduce.copy + job.reduce.compute
            end = greedy_end([each] * job.reduce.tasks, slots, end)
        return end

    def _slots(self, job: Job, demand: FloatArray) -> int:
        """Whole tasks of ``demand`` that fit at once on the live machines ``job`` may use."""
        if self.fit is None:
            self.fit = TaskFit(list(self.machines.values()), self.resources)
        return self.fit.slots(job.constraint, job.machines, demand)


def _durations(job: Job, rng: np.random.Generator) -> Sequence[float]:
    """The job's map task durations (seconds), drawn from the run's generator. Draws are kept
    as packed doubles (``array``), not a float object each: a job keeps them until it
    finishes, and thousands of jobs' worth of objects would crowd the running tasks' out of
    the cache (the online benchmark)."""
    duration = job.duration
    n = job.tasks
    if isinstance(duration, FixedDuration):
        return [duration.seconds] * n
    if isinstance(duration, PerTaskDurations):
        given = duration.seconds
        return [given[i % len(given)] for i in range(n)] if given else [0.0] * n
    if isinstance(duration, ParetoDuration):
        draws = duration.minimum * (1.0 + rng.pareto(duration.alpha, n))
    else:
        assert isinstance(duration, ExponentialDuration)
        draws = rng.exponential(duration.mean, n)
    packed = array("d")
    packed.frombytes(draws.astype(np.float64, copy=False).tobytes())
    return packed
