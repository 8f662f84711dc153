"""The deterministic event engine: replays jobs on a cluster under an online policy and
records every task attempt (SPEC section 3, ``fairshare simulate``).

It drives a :class:`fairshare.policies.Policy` through the protocol of
:mod:`fairshare.policies.protocol` and owns everything the policy must not: simulated time,
task durations, input-block placement and the run records.

Determinism:

- Events are ordered by time, then kind (task finished, machine removed, machine added, job
  submitted, policy wake-up), then insertion order. All events at one time are delivered
  before the policy is asked to ``decide``, once.
- One ``numpy.random.Generator`` seeded by ``seed`` per run. At a job's submission, in job
  order, it draws the job's map durations (Pareto: ``minimum * (1 + pareto(alpha))``,
  exponential with the mean), then, for jobs that read input, each map task's block
  replicas (``replicas`` machines drawn uniformly from the live ones, repeats dropped). Draws
  do not depend on the policy, so two policies see the same tasks.
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

``isolated_response`` (the slowdown denominator) is the job's response time alone on the
empty cluster, computed analytically: its tasks, in order, each take the earliest free slot of
the machines it may use (slots: whole tasks per machine), maps then reduces, every read local.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import math
import time as wallclock
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Literal

import numpy as np

from fairshare.cluster import Cluster, FloatArray, Machine
from fairshare.policies import (
    Decision,
    Kill,
    Launch,
    Policy,
    PolicyError,
    PolicyOptions,
    TaskRef,
    make_policy,
)
from fairshare.policies.copy_compute import DEFAULT_MAX_COMPUTING, DEFAULT_MAX_REDUCERS
from fairshare.sim.records import (
    ROW_ATTEMPT,
    ROW_FINISH,
    AttemptRows,
    JobRecord,
    Locality,
    RunLog,
)
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

FINISH, REMOVE, ADD, SUBMIT, WAKE = range(5)
"""Event kinds, in the order same-time events are delivered."""

_FINISH_TIME = itemgetter(0)
"""A finish event's time (the sort key of a lane)."""


class Pause(Kill):
    """Stop a running task now and keep its progress: launched again (on any machine), it
    runs only the part it had left. This is the free preemption and migration of Choosy
    section 7.1's offline reference schedulers (a migration is a pause and a launch at the
    same instant). The paused stretch is recorded as an attempt that is not killed; the task
    resumes as the next attempt. A driver that cannot pause may treat it as a :class:`Kill`."""


class SimulationError(PolicyError):
    """A request the simulator cannot run (bad option, unsorted jobs, unknown machine).
    ``where`` and ``what`` form SPEC section 4's error line."""


@dataclass(frozen=True)
class SimOptions:
    """Options of a run. ``delay``, ``job_delays``, ``preemption``, ``pool_order`` and
    ``headroom`` are the policy mechanisms of :class:`fairshare.policies.PolicyOptions`;
    ``until`` stops the run at that time (None: when no event is left); tasks still running
    then are recorded as attempts that end at ``until`` with ``truncated=True``.

    ``copy_compute_splitting`` turns on FAIR section 5.2's copy-compute splitting (SPEC
    section 3's ``--copy-compute-splitting``) with, per machine, at most ``max_reducers``
    reducers and ``max_computing`` compute parts (and copy parts per job), the paper's
    example of 6 and 2 by default (:mod:`fairshare.policies.copy_compute`).
    ``reduce_slowstart`` is the fraction of a job's maps that must finish before its
    reducers launch (Hadoop's ``mapred.reduce.slowstart.completed.maps``); None means 1.0
    (after the last map) without splitting and 0.0 (after the first map: copying overlaps
    the maps) with it."""

    delay: tuple[float, float] | None = None
    job_delays: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    preemption: tuple[float, float] | None = None
    pool_order: Literal["fair", "fifo"] = "fair"
    headroom: bool = False
    rack_slowdown: float = 1.2
    off_rack_slowdown: float = 1.5
    until: float | None = None
    copy_compute_splitting: bool = False
    max_reducers: int = DEFAULT_MAX_REDUCERS
    max_computing: int = DEFAULT_MAX_COMPUTING
    reduce_slowstart: float | None = None

    @property
    def slowstart(self) -> float:
        """``reduce_slowstart`` with its default filled in."""
        if self.reduce_slowstart is not None:
            return self.reduce_slowstart
        return 0.0 if self.copy_compute_splitting else 1.0

    def policy_options(self) -> PolicyOptions:
        return PolicyOptions(
            delay=self.delay,
            job_delays=self.job_delays,
            preemption=self.preemption,
            pool_order=self.pool_order,
            headroom=self.headroom,
            reduce_slowstart=self.slowstart,
            copy_compute=(
                (self.max_reducers, self.max_computing) if self.copy_compute_splitting else None
            ),
        )

    def record(self) -> dict[str, object]:
        return {
            "delay": self.delay,
            "preemption": self.preemption,
            "pool_order": self.pool_order,
            "headroom": self.headroom,
            "rack_slowdown": self.rack_slowdown,
            "off_rack_slowdown": self.off_rack_slowdown,
            "copy_compute_splitting": self.copy_compute_splitting,
            "max_reducers": self.max_reducers,
            "max_computing": self.max_computing,
            "reduce_slowstart": self.slowstart,
        }


@dataclass(frozen=True)
class MachineEvent:
    """A machine joins (``machine`` a :class:`Machine`) or leaves (``machine`` its name)."""

    time: float
    kind: Literal["add", "remove"]
    machine: Machine | str


class _JobRun:
    __slots__ = (
        "done",
        "finish",
        "first_start",
        "index",
        "job",
        "map_entries",
        "map_seconds",
        "maps",
        "maps_done",
        "maps_only",
        "total",
        "waiting",
    )

    def __init__(self, index: int, job: Job, map_seconds: Sequence[float]) -> None:
        self.index = index
        self.job = job
        self.map_seconds = map_seconds
        self.maps = job.tasks
        # Per map task, its running entry (None while it does not run): a list slot per task
        # is cheaper to set and clear than a dict entry per launch (issue 4's hot path).
        self.map_entries: list[_Running | None] = [None] * job.tasks
        # No reduce phase: a policy's promise to hold back finishes covers its maps.
        self.maps_only = job.reduce is None
        self.total = job.tasks + (job.reduce.tasks if job.reduce is not None else 0)
        self.done = 0
        # Read only for a job with a reduce phase (its reducers wait for it): the hot finish
        # path counts it only there.
        self.maps_done = 0
        # Reducers (or copy parts) launched before the last map finished: they wait for it.
        self.waiting: dict[TaskRef, None] = {}
        self.first_start: float | None = None
        self.finish: float | None = None


# A running task, which is also its finish event: (finish time, FINISH, token, task, slot of
# its row in the attempt list, its job's run, its lane). The row, written at the launch,
# holds the rest (attempt, machine, start, locality); ``_Run.fraction`` the share of the
# task's work an attempt that resumes after a pause started with. A reducer waiting for its
# job's maps has finish time inf and token 0 and is not queued. The task's running entry
# (``_JobRun.map_entries[task]`` for a map task, ``_Run.running[task]`` for the others) is
# this very tuple, so a finish event is current when its task's running entry is the event
# (a killed task's stale event fails the test).
#
# A lane holds the finish events of the map tasks one decision round launched, sorted by
# (time, token) and queued one at a time: only its first is in the event queue, and popping
# it queues the next (see _Run.run). The queue then holds a few hundred lanes' heads instead
# of every running task (tens of thousands in issue 4's benchmark), and its heap stays small
# and in cache; merging sorted lanes this way delivers the events in the order one heap of
# all of them would. Other finish events have no lane (None).
_Running = tuple[float, int, int, TaskRef, int, _JobRun, "list[_Running] | None"]
# Any other event: (time, kind, token, payload).
_Event = tuple[float, int, int, object]
# The events queued at one time: one event, or a heap of them by (kind, token).
_Slot = _Running | _Event | list[_Running | _Event]


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
) -> RunLog:
    """Replay ``jobs`` (sorted by submit time) on ``cluster`` under ``policy`` (a SPEC
    section 3 name, or a policy object built on the same cluster). ``users`` and ``queues``
    configure pools and the hierarchy (weights, minimum shares, caps). Raises
    :class:`SimulationError` / :class:`PolicyError` for bad requests."""
    started = wallclock.perf_counter()
    opts = options if options is not None else SimOptions()
    _check_options(opts)
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
    run = _Run(cluster, sched, rng, opts)
    # The run allocates a few tuples per running task (its event, its TaskRef) and no
    # reference cycles on its hot path: the cyclic collector's passes over them cost about a
    # fifth of a long run (issue 4), so it waits until the log's columns are built.
    collecting = gc.isenabled()
    gc.disable()
    try:
        run.run(iter(jobs), machine_events)
        rows = AttemptRows.from_flat(run.attempts, run.killed, run.truncated)
    finally:
        if collecting:
            gc.enable()
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


def _check_options(opts: SimOptions) -> None:
    for where, pair in (("--delay-scheduling", opts.delay), ("--preemption", opts.preemption)):
        if pair is not None and (
            len(pair) != 2 or any(not math.isfinite(x) or x < 0 for x in pair)
        ):
            raise SimulationError(where, f"expected two finite numbers >= 0, got {pair}")
    for where, value in (
        ("rack_slowdown", opts.rack_slowdown),
        ("off_rack_slowdown", opts.off_rack_slowdown),
    ):
        if not math.isfinite(value) or value <= 0:
            raise SimulationError(where, f"must be a finite number > 0, got {value}")
    if opts.reduce_slowstart is not None and not 0.0 <= opts.reduce_slowstart <= 1.0:
        raise SimulationError(
            "reduce_slowstart", f"must be a fraction in [0, 1], got {opts.reduce_slowstart}"
        )
    if opts.copy_compute_splitting and not 1 <= opts.max_computing <= opts.max_reducers:
        raise SimulationError(
            "--copy-compute-splitting",
            "max_computing and max_reducers must satisfy 1 <= max_computing <= max_reducers, "
            f"got {opts.max_computing} and {opts.max_reducers}",
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
        # The event queue: a heap of times (one entry per event) and the events at each time.
        # Floats compare in a fraction of the time tuples take, and with tens of thousands
        # of tasks running the heap's comparisons are most of the queue's cost (issue 4).
        self.times: list[float] = []
        self.at: dict[float, _Slot] = {}
        # Event tokens (insertion order among same-time events of one kind); 0 means none.
        self.tokens = itertools.count(1)
        self.events = 0
        self.runs: dict[int, _JobRun] = {}
        # One record per job in submission order, written when the job finishes or the run
        # ends (None until then: the isolated response depends on the machines by then).
        self.records: list[JobRecord | None] = []
        self.order: dict[str, int] = {}
        # Attempts flat, records.ROW_FIELDS items each (start, job order, phase, task,
        # attempt, machine, finish, locality), made into the log's sorted columns at the end.
        # An attempt's items are appended at its launch (written as the task will end), so
        # the list is in start order but for ties; kills and truncations are noted by the
        # attempt's offset in the list (its slot).
        self.attempts: list[Any] = []
        self.killed: set[int] = set()
        self.truncated: set[int] = set()
        # Running reducer (or copy part) -> its _Running entry (its finish event); a running
        # map task's is in its job's map_entries.
        self.running: dict[TaskRef, _Running] = {}
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
            None: 1.0,
            "node": 1.0,
            "rack": opts.rack_slowdown,
            "off_rack": opts.off_rack_slowdown,
        }

    def push(self, at: float, kind: int, payload: object) -> None:
        self._queue((at, kind, next(self.tokens), payload))

    def _queue(self, event: _Event | _Running) -> None:
        """Queue ``event``; events at one time come out by (kind, token)."""
        at = event[0]
        held = self.at.setdefault(at, event)
        if held is not event:
            if isinstance(held, list):
                heapq.heappush(held, event)
            else:
                self.at[at] = [held, event] if held < event else [event, held]
        heapq.heappush(self.times, at)

    def _pop(self) -> _Event | _Running:
        """The next event (the queue must not be empty); a finish event's lane queues its
        next one."""
        at = heapq.heappop(self.times)
        held = self.at.pop(at)
        if isinstance(held, list):
            event = heapq.heappop(held)
            if held:
                self.at[at] = held
        else:
            event = held
        if event[1] == FINISH:
            lane = event[6]  # type: ignore[misc]
            if lane:
                self._queue(lane.pop())
        return event

    def _open(self, lane: list[_Running]) -> None:
        """Queue the finish events of a round's map launches (see _Running)."""
        # Stable: events of one time stay in token (launch) order; popped from the end.
        lane.sort(key=_FINISH_TIME)
        lane.reverse()
        self._queue(lane.pop())

    def _start(
        self,
        now: float,
        end: float,
        ref: TaskRef,
        attempt: int,
        machine: str,
        locality: Locality | None,
        fraction: float,
        run: _JobRun,
    ) -> None:
        """Record a launch: the row (as the task will end: the hot finish path in
        :meth:`run` writes none; a reducer waiting for its maps ends at inf until they
        finish), the running entry and, when ``end`` is finite, the finish event (a waiting
        reducer has none yet)."""
        attempts = self.attempts
        slot = len(attempts)
        attempts += (now, run.index, ref.phase, ref.task, attempt, machine, end, locality)
        if fraction != 1.0:
            self.fraction[ref] = fraction
        token = next(self.tokens) if end != math.inf else 0
        entry = (end, FINISH, token, ref, slot, run, None)
        if ref.phase == "map":
            run.map_entries[ref.task] = entry
        else:
            self.running[ref] = entry
        if token:
            self._queue(entry)

    def run(self, jobs: Iterator[Job], machine_events: Iterable[MachineEvent]) -> None:
        self.job_iter = jobs
        self.last_submit = -math.inf
        self.next_index = 0
        self._next_job()
        for change in machine_events:
            self.push(change.time, ADD if change.kind == "add" else REMOVE, change.machine)
        times = self.times
        at = self.at
        policy = self.policy
        stop = self.opts.until if self.opts.until is not None else math.inf
        fused = policy.finish_and_decide
        wakes = policy.uses_wakeups
        runs = self.runs
        attempts = self.attempts
        attempt_of = self.attempt_of
        resume = self.resume
        slow = self.slow
        tokens = self.tokens
        heappop = heapq.heappop
        heappush = heapq.heappush
        quiescent = policy.quiescent
        # Finishes held back while the policy is quiescent (see the protocol): delivered in
        # one call before anything else reaches the policy.
        quiet = False
        deferred: list[TaskRef] = []
        events = 0
        now = 0.0
        # The hot path (issue 4's throughput): a map task's finish is handled here, and when
        # it is the only event at its time the policy's fused finish_and_decide replaces
        # task_finished + decide; map launches are applied here too. Everything else goes
        # through the methods below.
        exhausted = True
        while times:
            now = heappop(times)
            if now > stop:
                exhausted = False
                break
            held = at.pop(now)
            if type(held) is list:
                event = heappop(held)
                if held:
                    at[now] = held
            else:
                event = held  # type: ignore[assignment]
            events += 1
            decisions: list[Decision] | None = None
            ref = event[3]
            finish = event[1] == FINISH
            if finish:
                lane: list[_Running] | None = event[6]  # type: ignore[misc]
                if lane:
                    # The lane's next event, queued before anything looks at the queue.
                    head = lane.pop()
                    if at.setdefault(head[0], head) is head:
                        heappush(times, head[0])
                    else:
                        self._queue(head)  # another event at that time
            if finish and ref[1] == "map":  # type: ignore[index]
                # The event is a _Running (see its comment) of a map task.
                run = event[5]  # type: ignore[misc]
                entries = run.map_entries
                index = ref[2]  # type: ignore[index]
                if entries[index] is event:
                    # Its row was written whole at the launch (it ends when it was due to).
                    entries[index] = None
                    if not run.maps_only:
                        run.maps_done += 1
                        if run.maps_done == run.maps and run.waiting:
                            self._maps_finished(now, run)
                    run.done += 1
                    if run.done == run.total:
                        run.finish = now
                        self.records[run.index] = self._record(run)
                        del runs[run.index]
                    # Held back only when it is the only event at its time: with another
                    # one (a job arriving), the freed machine would be offered first.
                    if quiet and run.maps_only and (not times or times[0] != now):
                        deferred.append(ref)  # type: ignore[arg-type]
                        continue
                    if deferred:
                        policy.tasks_finished(now, deferred)
                        deferred = []
                    if not times or times[0] != now:
                        decisions = fused(now, ref)  # type: ignore[arg-type]
                    else:
                        policy.task_finished(now, ref)  # type: ignore[arg-type]
            else:
                if deferred:
                    policy.tasks_finished(now, deferred)
                    deferred = []
                self._event(event)
            if decisions is None:
                if deferred:
                    policy.tasks_finished(now, deferred)
                    deferred = []
                while times and times[0] == now:
                    events += 1
                    self._event(self._pop())
                decisions = policy.decide(now)
            last_job = -1
            launched: list[_Running] = []
            for decision in decisions:
                if type(decision) is Launch:
                    task, machine, locality = decision
                    job_id, phase, index = task
                    if phase == "map" and not resume:
                        if job_id != last_job:
                            # A batch launches one job's tasks in a row.
                            last_job = job_id
                            run = runs[job_id]
                            if run.first_start is None:
                                run.first_start = now
                            seconds = run.map_seconds
                            entries = run.map_entries
                            order = run.index
                        # x * 1.0 == x: a task that reads no block runs its own duration.
                        end = (
                            now + seconds[index]
                            if locality is None
                            else now + seconds[index] * slow[locality]
                        )
                        attempt = attempt_of.get(task, 0) if attempt_of else 0
                        # The row as the task will end, written now: a kill, pause or the
                        # run's end rewrites it, and the finish has nothing to write.
                        slot = len(attempts)
                        attempts += (now, order, "map", index, attempt, machine, end, locality)
                        entry = (end, FINISH, next(tokens), task, slot, run, launched)
                        entries[index] = entry
                        launched.append(entry)
                    else:
                        self._launch(now, decision)
                elif type(decision) is Pause:
                    self._pause(now, decision.task)
                else:
                    assert isinstance(decision, Kill)
                    self._kill(now, decision.task)
            if len(launched) > 1:
                self._open(launched)
            elif launched:
                # A lane of one (a freed one-slot machine refilled): queued as it is.
                self._queue(launched.pop())
            # A round that launched nothing may leave a policy with nothing to place.
            quiet = not decisions and quiescent()
            if wakes:
                wake = policy.next_wakeup()
                if wake is not None and wake > now and wake not in self.wakes:
                    self.wakes.add(wake)
                    self.push(wake, WAKE, None)
        if deferred:
            policy.tasks_finished(now, deferred)
        self.events = events
        if exhausted:
            # No event was left to move them: their waiting tasks fit on no machine they may
            # use (too large, a constraint no machine meets, or room held forever).
            self.stranded = tuple(run.job.name for run in runs.values() if run.finish is None)
        self._close(now)

    # ----------------------------------------------------------------- events

    def _event(self, event: _Event | _Running) -> None:
        now, kind, _, payload = event[:4]
        if kind == FINISH:
            self._finish(now, event)  # type: ignore[arg-type]
        elif kind == SUBMIT:
            self._submit(now, payload)  # type: ignore[arg-type]
        elif kind == ADD:
            self._add(now, payload)  # type: ignore[arg-type]
        elif kind == REMOVE:
            self._remove(now, payload)  # type: ignore[arg-type]
        else:
            self.wakes.discard(now)
            self.policy.advance(now)

    def _next_job(self) -> None:
        job = next(self.job_iter, None)
        if job is None:
            return
        where = f"jobs[{self.next_index}]"
        if not job.submit >= self.last_submit:
            raise SimulationError(
                f"{where}.submit",
                f"jobs must be sorted by submit time: {job.submit} < {self.last_submit}",
            )
        if job.name in self.order:
            raise SimulationError(f"{where}.name", f"job name '{job.name}' repeats")
        self.last_submit = job.submit
        self.order[job.name] = self.next_index
        self.next_index += 1
        self.push(job.submit, SUBMIT, job)

    def _submit(self, now: float, job: Job) -> None:
        index = self.order[job.name]
        seconds = _durations(job, self.rng)
        blocks: list[tuple[str, ...]] | None = None
        if job.input_replicas and self.live:
            picks = self.rng.integers(0, len(self.live), size=(job.tasks, job.input_replicas))
            live = self.live
            blocks = [tuple(dict.fromkeys(live[i] for i in row)) for row in picks.tolist()]
        run = _JobRun(index, job, seconds)
        self.runs[index] = run
        self.records.append(None)
        self.policy.job_submitted(now, index, job, blocks)
        self._next_job()
        if run.total == 0:
            run.first_start = run.finish = now
            self.records[index] = self._record(run)

    def _launch(self, now: float, decision: Launch) -> None:
        ref = decision.task
        run = self.runs[ref.job]
        if ref.phase == "map":
            seconds = run.map_seconds[ref.task] * self.slow[decision.locality]
        else:
            seconds = self._reduce_seconds(run.job, ref)
        fraction = self.resume.pop(ref, 1.0) if self.resume else 1.0
        seconds *= fraction
        if run.first_start is None:
            run.first_start = now
        attempt = self.attempt_of.get(ref, 0)
        if (
            ref.phase != "map"
            and run.maps_done < run.job.tasks
            and not (ref.phase == "reduce" and self.opts.copy_compute_splitting)
        ):
            # Launched before the last map finished: it holds its room and waits (no finish
            # event until the maps are done).
            run.waiting[ref] = None
            self._start(now, math.inf, ref, attempt, decision.machine, None, fraction, run)
            return
        self._start(
            now, now + seconds, ref, attempt, decision.machine, decision.locality, fraction, run
        )

    def _row(
        self, state: _Running, end: float, *, killed: bool = False, truncated: bool = False
    ) -> None:
        """Rewrite the attempt row of a task that ran from its launch (``state``) to
        ``end``."""
        slot = state[4]
        self.attempts[slot + ROW_FINISH] = end
        if killed:
            self.killed.add(slot)
        if truncated:
            self.truncated.add(slot)

    def _attempt(self, state: _Running) -> int:
        """The attempt number of running task ``state``."""
        attempt: int = self.attempts[state[4] + ROW_ATTEMPT]
        return attempt

    def _started(self, state: _Running) -> float:
        """When running task ``state`` started."""
        start: float = self.attempts[state[4]]
        return start

    def _finish(self, now: float, event: _Running) -> None:
        ref = event[3]
        run = event[5]
        if ref.phase == "map":
            if run.map_entries[ref.task] is not event:
                return  # killed before it finished
            run.map_entries[ref.task] = None
        else:
            if self.running.get(ref) is not event:
                return  # killed before it finished
            del self.running[ref]
        job = run.job
        self._row(event, now)
        if ref.phase == "map":
            run.maps_done += 1
            if run.maps_done == job.tasks and run.waiting:
                self._maps_finished(now, run)
        elif ref.phase == "copy":
            # The reducer's compute part is still to run: not a finished task yet.
            self.policy.task_finished(now, ref)
            return
        run.done += 1
        if run.done == run.total:
            run.finish = now
            self.records[run.index] = self._record(run)
            del self.runs[run.index]
        self.policy.task_finished(now, ref)

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

    def _maps_finished(self, now: float, run: _JobRun) -> None:
        """The job's last map finished: the reducers waiting for it copy (and compute) now."""
        for ref in run.waiting:
            state = self.running[ref]
            end = now + self._reduce_seconds(run.job, ref) * self.fraction.get(ref, 1.0)
            entry = (end, FINISH, next(self.tokens), ref, state[4], run, None)
            self._row(entry, end)
            self.running[ref] = entry
            self._queue(entry)
        run.waiting.clear()

    def _stop(self, ref: TaskRef, run: _JobRun) -> _Running:
        """Retire running task ``ref`` of ``run`` before its finish: its entry."""
        if ref.phase == "map":
            state = run.map_entries[ref.task]
            assert state is not None, f"{ref} is not running"
            run.map_entries[ref.task] = None
            return state
        return self.running.pop(ref)

    def _kill(self, now: float, ref: TaskRef) -> None:
        run = self.runs[ref.job]
        state = self._stop(ref, run)
        run.waiting.pop(ref, None)
        self.fraction.pop(ref, None)
        self._row(state, now, killed=True)
        self.attempt_of[ref] = self._attempt(state) + 1

    def _pause(self, now: float, ref: TaskRef) -> None:
        run = self.runs[ref.job]
        state = self._stop(ref, run)
        run.waiting.pop(ref, None)
        self._row(state, now)
        self.attempt_of[ref] = self._attempt(state) + 1
        end, start, fraction = state[0], self._started(state), self.fraction.pop(ref, 1.0)
        if not math.isfinite(end):
            self.resume[ref] = fraction  # it was waiting for the maps: no work done yet
        else:
            self.resume[ref] = fraction * (end - now) / (end - start) if end > start else 0.0

    def _add(self, now: float, machine: Machine) -> None:
        if machine.name in self.machines:
            raise SimulationError(
                "machine_events", f"machine '{machine.name}' is already in the cluster"
            )
        self.machines[machine.name] = machine
        self.live.append(machine.name)
        self.fit = None
        self.policy.machine_added(now, machine)

    def _remove(self, now: float, name: str) -> None:
        if name not in self.machines:
            raise SimulationError("machine_events", f"no machine '{name}' to remove")
        del self.machines[name]
        self.live.remove(name)
        self.fit = None
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

    def _record(self, run: _JobRun) -> JobRecord:
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

    def _isolated(self, run: _JobRun) -> float:
        job = run.job
        if run.total == 0:
            return 0.0
        slots = self._slots(job, job.demand) if job.tasks else 1
        if slots == 0:
            return math.inf
        end = _greedy(run.map_seconds, slots, 0.0)
        if job.reduce is not None and job.reduce.tasks:
            demand = job.demand if job.reduce.demand is None else job.reduce.demand
            slots = self._slots(job, demand)
            if slots == 0:
                return math.inf
            each = job.reduce.copy + job.reduce.compute
            end = _greedy([each] * job.reduce.tasks, slots, end)
        return end

    def _slots(self, job: Job, demand: FloatArray) -> int:
        if self.fit is None:
            self.fit = TaskFit(list(self.machines.values()), self.resources)
        return self.fit.slots(job.constraint, job.machines, demand)


def _greedy(seconds: Sequence[float], slots: int, start: float) -> float:
    """When ``seconds`` (in order, each on the earliest free of ``slots``) all finish."""
    if len(seconds) <= slots:
        return start + max(seconds, default=0.0)
    heap = [start] * slots
    end = start
    for s in seconds:
        t = heapq.heappop(heap) + s
        end = max(end, t)
        heapq.heappush(heap, t)
    return end


def _durations(job: Job, rng: np.random.Generator) -> Sequence[float]:
    """The job's map task durations (seconds), drawn from the run's generator. Draws are kept
    as packed doubles (``array``), not a float object each: a job keeps them until it
    finishes, and thousands of jobs' worth of objects would crowd the running tasks' out of
    the cache (issue 4's benchmark)."""
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
