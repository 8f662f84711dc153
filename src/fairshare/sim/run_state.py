"""One simulation run's state and every change of it (SPEC section 3, ``fairshare
simulate``); the event loop of :mod:`fairshare.sim.engine` decides when each happens.

Each change is in one place:

- a task starts: :meth:`RunState.start`, the one path that applies a ``Launch`` decision
  (its attempt's row, its running entry and finish event, its place in the over-commit
  model's load);
- a running task stops: :meth:`RunState.stop`, one path whatever the reason
  (:data:`FINISHED`, :data:`KILLED` by preemption, a failure, its machine removed or its job
  cancelled, or :data:`PAUSED` by a reference scheduler's ``Pause``), and a task retimed (its
  machine's contention changed, or its job's last map finished);
- a job's submission: the stream read one job ahead, the job's map durations and input
  blocks drawn from the run's generator (in job order, so that every policy sees the same
  tasks), closed-loop jobs kept until the job they follow ends;
- a job cancelled, a user leaving, a machine joining or leaving;
- the job records, with their isolated response times (the slowdown denominator).

The semantics (durations, locality, reducers, closed loop, isolated response) are those of
:mod:`fairshare.sim.engine`'s docstring.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import numpy as np
from librt.vecs import append, vec
from mypy_extensions import i64

from fairshare.allocation.types import IntArray
from fairshare.cluster import Cluster, FloatArray, Machine
from fairshare.policies import Launch, Policy, TaskRef
from fairshare.runlog import (
    LOCALITIES,
    PHASES,
    AttemptRows,
    AttemptSpill,
    JobRecord,
    RowColumns,
    SpilledRows,
    greedy_end,
    uniform_end,
)
from fairshare.sim.events import (
    ARRIVAL,
    CANCEL,
    CANCEL_USER,
    FINISH,
    Arrival,
    EventQueue,
    Finish,
    JobChange,
    JobRun,
)
from fairshare.sim.options import SimOptions, SimulationError
from fairshare.sim.overcommit import Overcommit
from fairshare.sim.placement import BlockPlacer
from fairshare.workload.eligibility import TaskFit
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    PerTaskDurations,
)

FINISHED: Final = 0
"""A reason a running task stops (:meth:`RunState.stop`): its finish event is due."""
KILLED: Final = 1
"""A reason a running task stops: killed (preemption, a failure, its machine removed, its job
cancelled); its work is lost."""
PAUSED: Final = 2
"""A reason a running task stops: paused (:class:`~fairshare.sim.options.Pause`); the
fraction of its work left is kept."""

SPILL_ROWS = 65_536
"""The attempts held in :class:`LaunchRows` at which the closed ones move into a piece of
columns (:meth:`RunState.spill`): about 4 MB of arrays, copied in a millisecond. Read at each
spill, so a test may lower it."""

assert PHASES == ("map", "reduce", "copy") and LOCALITIES == ("node", "rack", "off_rack")


def phase_code(phase: str) -> int:
    """A phase's code in :data:`fairshare.runlog.PHASES` (a map task's, the usual, first).

    >>> [phase_code(p) for p in ("map", "reduce", "copy")]
    [0, 1, 2]
    """
    if phase == "map":
        return 0
    return 1 if phase == "reduce" else 2


def locality_code(locality: str | None) -> int:
    """A locality level's code in :data:`fairshare.runlog.LOCALITIES`, -1 for None (an
    attempt that read no input data).

    >>> [locality_code(level) for level in (None, "node", "rack", "off_rack")]
    [-1, 0, 1, 2]
    """
    if locality is None:
        return -1
    if locality == "node":
        return 0
    return 1 if locality == "rack" else 2


class LaunchRows:
    """The attempt rows launched since the last spill (:meth:`RunState.spill`), one typed
    array (``librt.vecs.vec``) per field in launch order, names coded (phases and localities
    as :func:`phase_code` and :func:`locality_code`, machines in the run's order of first
    use): a launch writes eight numbers, with no object made per field, and a spill hands
    them over as numpy arrays with a copy each, not a conversion item by item (the columns
    of a Python list of objects were a tenth of a large replay).

    The arrays are sized once, for the rows until the next spill (``capacity``, cut from
    arrays of zeros made once), and a launch writes its row's items in place: an ``append``
    per field is a call through librt's API table, about 55 instructions where a write is
    about 20. Rows past the size are appended. ``count`` rows are held; the arrays' items
    after them are not rows.

    Row ``k`` here is the run's attempt slot ``base + k`` (:class:`RunState`).

    Examples
    --------
    >>> rows = LaunchRows(4)
    >>> rows.add(5.0, 3, 0, 7, 0, 1, 9.0, -1)
    >>> rows.count, rows.task[0], rows.finish[0]
    (1, 7, 9.0)
    >>> rows.columns(0, 1, ("m0", "m1")).machine.tolist()
    [1]
    """

    def __init__(self, capacity: int = 0) -> None:
        self.count = 0
        self.start = _FLOAT_ZEROS[:capacity]
        self.order = _INT_ZEROS[:capacity]
        self.phase = _INT_ZEROS[:capacity]
        self.task = _INT_ZEROS[:capacity]
        self.attempt = _INT_ZEROS[:capacity]
        self.machine = _INT_ZEROS[:capacity]
        self.finish = _FLOAT_ZEROS[:capacity]
        self.locality = _INT_ZEROS[:capacity]
        self.capacity = len(self.start)

    def add(
        self,
        start: float,
        order: i64,
        phase: i64,
        task: i64,
        attempt: i64,
        machine: i64,
        finish: float,
        locality: i64,
    ) -> None:
        """Write an attempt's row after the others."""
        k = self.count
        if k < self.capacity:
            self.start[k] = start
            self.order[k] = order
            self.phase[k] = phase
            self.task[k] = task
            self.attempt[k] = attempt
            self.machine[k] = machine
            self.finish[k] = finish
            self.locality[k] = locality
        else:
            self.start = append(self.start, start)
            self.order = append(self.order, order)
            self.phase = append(self.phase, phase)
            self.task = append(self.task, task)
            self.attempt = append(self.attempt, attempt)
            self.machine = append(self.machine, machine)
            self.finish = append(self.finish, finish)
            self.locality = append(self.locality, locality)
            self.capacity = k + 1
        self.count = k + 1

    def columns(self, lo: int, hi: int, machine_names: tuple[str, ...]) -> RowColumns:
        """Rows ``lo:hi`` as numpy arrays (copies), machines coded in ``machine_names``."""
        return RowColumns(
            start=_copied(self.start, np.float64, lo, hi),
            order=_copied(self.order, np.int64, lo, hi),
            phase=_copied(self.phase, np.int64, lo, hi),
            task=_copied(self.task, np.int64, lo, hi),
            attempt=_copied(self.attempt, np.int64, lo, hi),
            machine=_copied(self.machine, np.int64, lo, hi),
            machine_names=machine_names,
            finish=_copied(self.finish, np.float64, lo, hi),
            locality=_copied(self.locality, np.int64, lo, hi),
        )

    def tail(self, lo: int, capacity: int) -> LaunchRows:
        """The rows from ``lo`` on, in new arrays sized for ``capacity`` rows (a spill keeps
        its last start time's)."""
        rows = LaunchRows(capacity)
        for k in range(lo, self.count):
            rows.add(
                self.start[k],
                self.order[k],
                self.phase[k],
                self.task[k],
                self.attempt[k],
                self.machine[k],
                self.finish[k],
                self.locality[k],
            )
        return rows


_ZEROS_KEPT: Final = 1 << 17
"""Rows of zeros :class:`LaunchRows` cuts its arrays from (twice :data:`SPILL_ROWS`)."""
_FLOAT_ZEROS: Final = vec[float]([0.0] * _ZEROS_KEPT)
_INT_ZEROS: Final = vec[i64]([0] * _ZEROS_KEPT)


def _copied(column: Any, dtype: type[np.generic], lo: int, hi: int) -> Any:
    """Items ``lo:hi`` of a typed array, copied into a numpy array of ``dtype``."""
    return np.frombuffer(column, dtype=dtype)[lo:hi].copy()


class OpenRows:
    """The spilled attempt rows whose tasks may still run (:meth:`RunState.spill`), as
    columns sorted by slot: for each, its row in the spill file, its start, attempt number
    and end as last written. A superset of the running tasks' rows (those ending at the
    spill's time or later), trimmed at each spill to those ending then or later: a row whose
    task still runs never ends before the current time, so it is never trimmed. Columns, not
    a dict of tuples: a spill adds tens of thousands at once, vectorised, in 40 bytes each.

    Examples
    --------
    >>> rows = OpenRows()
    >>> rows.add(5.0, np.array([0, 8]), np.array([1, 0]), np.array([5.0, 5.0]),
    ...          np.array([0, 2]), np.array([6.0, 9.0]))
    >>> at = rows.find(8)
    >>> int(rows.rows[at]), int(rows.attempt[at])
    (0, 2)
    >>> rows.add(7.0, np.array([16]), np.array([2]), np.array([7.0]), np.array([0]),
    ...          np.array([8.0]))
    >>> rows.slots.tolist()  # the row ending at 6.0 is trimmed
    [8, 16]
    """

    def __init__(self) -> None:
        self.slots: IntArray = np.zeros(0, dtype=np.int64)
        self.rows: IntArray = np.zeros(0, dtype=np.int64)
        self.start: FloatArray = np.zeros(0)
        self.attempt: IntArray = np.zeros(0, dtype=np.int64)
        self.end: FloatArray = np.zeros(0)

    def add(
        self,
        now: float,
        slots: IntArray,
        rows: IntArray,
        start: FloatArray,
        attempt: IntArray,
        end: FloatArray,
    ) -> None:
        """Trim the rows ending before ``now`` and add a spill's (slots above all held)."""
        keep = self.end >= now
        self.slots = np.concatenate((self.slots[keep], slots))
        self.rows = np.concatenate((self.rows[keep], rows))
        self.start = np.concatenate((self.start[keep], start))
        self.attempt = np.concatenate((self.attempt[keep], attempt))
        self.end = np.concatenate((self.end[keep], end))

    def find(self, slot: int) -> int:
        """Where the row of attempt slot ``slot`` (a running task's, spilled) is held."""
        at = int(np.searchsorted(self.slots, slot))
        assert at < self.slots.shape[0] and int(self.slots[at]) == slot, slot
        return at


class RunState:
    """One simulation run's mutable state and its changes (the module docstring lists them);
    the event loop and its decision rounds are :mod:`fairshare.sim.engine`'s.

    Parameters
    ----------
    cluster : Cluster
        The machines at the start of the run.
    policy : Policy
        The online policy the run drives.
    rng : numpy.random.Generator
        The run's one generator (task durations, input blocks).
    opts : SimOptions
        The run's options.
    """

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
        # Queue shares as the policy reports them, sampled after every decision round when
        # the run has queues (RunLog.queue_shares).
        self.sampling = False
        # A look at the policy at a time (simulate's ``at``: fairshare explain).
        self.at: tuple[float, Callable[[Policy], None]] | None = None
        self.next_sample = -math.inf
        self.queue_shares: list[tuple[float, str, float]] = []
        self.last_queue_shares: dict[str, float] = {}
        self.runs: dict[int, JobRun] = {}
        # Per job index, its run while it runs (None before and after): a launch's look-up
        # by the number its TaskRef holds, a list item where the dictionary's int keys
        # (another object than the TaskRef's, above 256) were compared by value.
        self.run_of: list[JobRun | None] = []
        # One record per job in submission order, written when the job finishes or the run
        # ends (None until then: the isolated response depends on the machines by then).
        self.records: list[JobRecord | None] = []
        # Submitted job -> its index; every job read so far (names are unique).
        self.order: dict[str, int] = {}
        self.names: set[str] = set()
        # Closed loop: job name -> the jobs submitted when it ends (kept until then).
        self.followers: dict[str, list[Job]] = {}
        # A job of several (``after_all``) -> how many of them have not ended yet.
        self.waiting: dict[str, int] = {}
        # Users cancelled as a whole: their later jobs are not submitted.
        self.gone: set[str] = set()
        # The job stream, read one job ahead (module docstring of fairshare.sim.engine): the
        # jobs not read yet, the last submit time read, the next job's index among those
        # submitted and among those read.
        self.job_iter: Iterator[Job] = iter(())
        self.last_submit = -math.inf
        self.next_index = 0
        self.next_read = 0
        # Input files shared by jobs (hot files) -> their blocks' replicas, drawn as needed.
        self.files: dict[str, list[tuple[str, ...]]] = {}
        # The live machines by rack, for block placement; rebuilt when machines change.
        self.placer: BlockPlacer | None = None
        # The attempts' rows (start, job order, phase, task, attempt, machine, finish,
        # locality), made into the log's sorted columns as they spill. An attempt's row is
        # appended at its launch (written as the task will end), so the rows are in start
        # order but for ties; an attempt is known by its row's number in the run (its slot),
        # and kills and truncations are noted by slot.
        self.rows = LaunchRows(SPILL_ROWS)
        self.killed: set[int] = set()
        self.truncated: set[int] = set()
        # The machines' codes in the rows, in the run's order of first use.
        self.machine_codes: dict[str, int] = {}
        self.machine_names: list[str] = []
        # Attempts leave the rows in pieces of columns (:meth:`spill`) written to a
        # temporary file, so that a long run holds its latest attempts only: ``base`` is the
        # slot of the rows' first, ``pieces`` holds the columns of the attempts before it.
        self.base = 0
        self.pieces = AttemptSpill()
        # Attempts spilled while they may still run, for the writes and reads of their row
        # until they end.
        self.spilled_open = OpenRows()
        self.spill_at = SPILL_ROWS
        # Told (simulated time, attempts launched) every PROGRESS_EVENTS events: a progress bar.
        self.progress: Callable[[float, int], None] | None = None
        # Running reducer (or copy part) -> its Finish (its running entry); a running map
        # task's is in its job's map_entries.
        self.running: dict[TaskRef, Finish] = {}
        # Paused task -> fraction of its work left (see fairshare.sim.options.Pause).
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

    # ----------------------------------------------------------------- jobs

    def next_job(self, now: float) -> None:
        """Queue the arrival of the next job of the stream: jobs are read one ahead, so a
        trace larger than memory runs; checks the order and names as it goes. Closed-loop
        jobs read on the way are kept for the job they follow (:mod:`fairshare.sim.engine`'s
        docstring)."""
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
            if job.follows:
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
        """Keep closed-loop ``job`` until the job it follows ends, or every job of its
        ``after_all`` (a task DAG); jobs that ended before ``job`` was read are followed
        from now."""
        field = "after_all" if job.after_all else "after"
        left = 0
        for after in job.after_all or (job.after or "",):
            if after not in self.names:
                raise SimulationError(
                    f"{where}.{field}",
                    f"job '{job.name}' follows '{after}', which is not among the jobs before it",
                )
            index = self.order.get(after)
            if index is None or self.records[index] is None:
                self.followers.setdefault(after, []).append(job)
                left += 1
        if left == 0:
            self._arrive(now, job)
        elif left > 1:
            self.waiting[job.name] = left

    def _release(self, now: float, name: str) -> None:
        """Job ``name`` ended: the jobs that follow it (and no other job still running)
        arrive after their think time."""
        for job in self.followers.pop(name, ()):
            left = self.waiting.pop(job.name, 1) - 1
            if left:
                self.waiting[job.name] = left
            else:
                self._arrive(now, job)

    def _arrive(self, now: float, job: Job) -> None:
        """Queue closed-loop ``job``'s arrival ``think`` seconds after ``now``."""
        submit = now + job.think
        self.queue.push(Arrival(submit, ARRIVAL, self.queue.token(), job.submitted_at(submit)))

    def submit(self, now: float, job: Job) -> None:
        """Submit ``job``: draw its durations and input blocks (in job order, so every
        policy sees the same tasks) and tell the policy. A job of a cancelled user is
        dropped."""
        if job.user in self.gone:
            if not job.follows:
                self.next_job(now)
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
        self.run_of.append(run)
        self.records.append(None)
        self.policy.job_submitted(now, index, job, blocks)
        if not job.follows:
            self.next_job(now)
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

    # ----------------------------------------------------------------- tasks

    def _row(
        self, state: Finish, end: float, *, killed: bool = False, truncated: bool = False
    ) -> None:
        """Rewrite the attempt row of a task that ran from its launch (``state``) to
        ``end``."""
        slot = state.slot
        if slot < self.base:
            self._rewrite_spilled(
                np.array([slot], dtype=np.int64),
                np.array([end], dtype=np.float64),
                killed=killed,
                truncated=truncated,
            )
            return
        self.rows.finish[slot - self.base] = end
        if killed:
            self.killed.add(slot)
        if truncated:
            self.truncated.add(slot)

    def _attempt(self, state: Finish) -> int:
        """The attempt number of running task ``state``."""
        if state.slot < self.base:
            spilled = self.spilled_open
            return int(spilled.attempt[spilled.find(state.slot)])
        return int(self.rows.attempt[state.slot - self.base])

    def _started(self, state: Finish) -> float:
        """When running task ``state`` started."""
        if state.slot < self.base:
            spilled = self.spilled_open
            return float(spilled.start[spilled.find(state.slot)])
        return self.rows.start[state.slot - self.base]

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

    def _retime(self, ref: TaskRef, end: float) -> None:
        """Running task ``ref`` now finishes at ``end``: a new finish event replaces its
        entry (the old one is stale) and its attempt's row."""
        old = self.entry(ref)
        run = old.run
        entry = Finish(end, FINISH, self.queue.token(), ref, old.slot, run, None)
        self._row(entry, end)
        if ref.phase == "map":
            run.map_entries[ref.task] = entry
        else:
            self.running[ref] = entry
        self.queue.push(entry)

    def entry(self, ref: TaskRef) -> Finish:
        """The running entry (its :class:`~fairshare.sim.events.Finish`) of running task
        ``ref``."""
        if ref.phase == "map":
            state = self.runs[ref.job].map_entries[ref.task]
        else:
            state = self.running.get(ref)
        assert state is not None, f"{ref} is not running"
        return state

    def start(self, now: float, launch: Launch, lane: list[Finish]) -> None:
        """Apply decision ``launch`` at ``now``: the one path by which a task starts (SPEC
        section 3; durations, locality and reducers as :mod:`fairshare.sim.engine`'s
        docstring says).

        The attempt's row is written whole, as the task will end; the task's running entry
        is its :class:`~fairshare.sim.events.Finish` event. A map task's event joins ``lane``,
        the round's map launches, which the caller queues as one lane once the round is
        applied (:mod:`fairshare.sim.events`); a reducer launched before its job's last map
        finished holds its room with no finish event (time inf) until the maps are done; any
        other event is queued now. A task resumed after a pause runs the fraction of its work
        it had left. With over-commit, the task joins its machine's load; the caller settles
        the machines once the round is applied.
        """
        task = launch.task
        machine = launch.machine
        locality = launch.locality
        phase = task.phase
        index = task.task
        # A job's id is its order of submission (submit), the row's job field.
        run = self.run_of[task.job]
        assert run is not None, "a launched task's job runs"
        if run.first_start is None:
            run.first_start = now
        if phase == "map":
            each = run.seconds_each
            seconds = each if each >= 0.0 else run.map_seconds[index]
            if locality is not None:
                seconds *= self.slow[locality]
        else:
            seconds = self._reduce_seconds(run.job, task)
        if self.resume:
            fraction = self.resume.pop(task, 1.0)
            if fraction != 1.0:
                seconds *= fraction
                self.fraction[task] = fraction
        attempt = self.attempt_of.get(task, 0) if self.attempt_of else 0
        rows = self.rows
        if rows.count >= self.spill_at:
            self.spill(now)
            rows = self.rows
        slot = rows.count + self.base
        code = self.machine_codes.get(machine, -1)
        if code < 0:
            code = len(self.machine_names)
            self.machine_codes[machine] = code
            self.machine_names.append(machine)
        if phase == "map":
            end = now + seconds
            rows.add(now, run.index, 0, index, attempt, code, end, locality_code(locality))
            entry = Finish(end, FINISH, self.queue.token(), task, slot, run, lane)
            run.map_entries[index] = entry
            lane.append(entry)
        elif run.maps_done < run.maps and not (
            phase == "reduce" and self.opts.copy_compute_splitting
        ):
            # Launched before the last map finished: it holds its room and waits (no finish
            # event until the maps are done).
            end = math.inf
            run.waiting[task] = None
            rows.add(now, run.index, phase_code(phase), index, attempt, code, end, -1)
            self.running[task] = Finish(end, FINISH, 0, task, slot, run, None)
        else:
            end = now + seconds
            rows.add(
                now,
                run.index,
                phase_code(phase),
                index,
                attempt,
                code,
                end,
                locality_code(locality),
            )
            entry = Finish(end, FINISH, self.queue.token(), task, slot, run, None)
            self.running[task] = entry
            self.queue.push(entry)
        if self.over is not None:
            self._load(now, task, machine, run, end)

    def _load(self, now: float, task: TaskRef, machine: str, run: JobRun, end: float) -> None:
        """Task ``task`` of ``run``, launched at ``now`` to end at ``end`` alone, joins the
        load of ``machine`` in the over-commit model (:mod:`fairshare.sim.overcommit`); its
        finish moves when the machine settles."""
        over = self.over
        assert over is not None
        job = run.job
        if task.phase == "copy":
            demand = np.zeros(len(self.resources))
        elif task.phase == "map" or job.reduce is None or job.reduce.demand is None:
            demand = job.demand
        else:
            demand = job.reduce.demand
        over.launch(now, task, self.machines[machine], demand, end)

    def stop(self, now: float, state: Finish, reason: int) -> bool:
        """Running task ``state`` (its running entry) ends at ``now``, for ``reason``: the one
        path by which a task stops running (SPEC section 3).

        Every reason retires the entry, and the task leaves its machine's load in the
        over-commit model, whose other tasks are retimed if their slowdown changes. Then:

        - :data:`FINISHED` (its finish event is due; its row was written whole at the
          launch): the task is counted, a job's last map lets its waiting reducers run, and
          a job's last task writes its record and releases the jobs that follow it. A copy
          part is not counted: the reducer's compute part is still to run.
        - :data:`KILLED` (preemption, a failure, its machine removed, its job cancelled): the
          work is lost, the row is marked killed, and the task runs again as its next
          attempt.
        - :data:`PAUSED` (a reference scheduler's :class:`~fairshare.sim.options.Pause`): the
          row ends now, not killed, and the fraction of the work left is kept for the next
          attempt.

        Returns
        -------
        bool
            False, and nothing done, when ``state`` is no longer its task's running entry:
            the stale finish event of a task stopped or retimed since it was queued (a kill
            or pause passes the current entry, from :meth:`entry`).
        """
        ref = state.task
        run = state.run
        if ref.phase == "map":
            entries = run.map_entries
            if entries[ref.task] is not state:
                return False
            entries[ref.task] = None
        else:
            if self.running.get(ref) is not state:
                return False
            del self.running[ref]
        if self.over is not None:
            self.over.stop(now, ref)
        if reason == FINISHED:
            if ref.phase == "map":
                if not run.maps_only:
                    run.maps_done += 1
                    if run.maps_done == run.maps and run.waiting:
                        self._maps_finished(now, run)
            elif ref.phase == "copy":
                return True
            run.done += 1
            if run.done == run.total:
                run.finish = now
                self.records[run.index] = self._record(run)
                del self.runs[run.index]
                self.run_of[run.index] = None
                if self.followers:
                    self._release(now, run.job.name)
            return True
        run.waiting.pop(ref, None)
        self.attempt_of[ref] = self._attempt(state) + 1
        if reason == KILLED:
            self.fraction.pop(ref, None)
            self._row(state, now, killed=True)
            return True
        self._row(state, now)
        end, start, fraction = state.time, self._started(state), self.fraction.pop(ref, 1.0)
        if not math.isfinite(end):
            self.resume[ref] = fraction  # it was waiting for the maps: no work done yet
        else:
            self.resume[ref] = fraction * (end - now) / (end - start) if end > start else 0.0
        return True

    # ----------------------------------------------------------------- scenario events

    def job_change(self, now: float, event: JobChange) -> None:
        """A task fails (its attempt recorded as killed, the task pending again), a job is
        cancelled (its running tasks killed, the job recorded unfinished), or a user leaves
        (its running jobs cancelled, its later ones dropped); see
        :class:`~fairshare.sim.options.JobEvent`."""
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
        self.stop(now, self.entry(ref), KILLED)
        self.policy.task_failed(now, ref)

    def _cancel(self, now: float, run: JobRun) -> None:
        """Cancel running job ``run``: its running tasks killed, the job recorded
        unfinished, the jobs that follow it released."""
        for ref in self.policy.job_cancelled(now, run.index):
            self.stop(now, self.entry(ref), KILLED)
        self.records[run.index] = self._record(run)
        del self.runs[run.index]
        self.run_of[run.index] = None
        if self.followers:
            self._release(now, run.job.name)

    def add_machine(self, now: float, machine: Machine) -> None:
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

    def remove_machine(self, now: float, name: str) -> None:
        """A machine leaves; the tasks the policy says ran on it are killed."""
        if name not in self.machines:
            raise SimulationError("machine_events", f"no machine '{name}' to remove")
        del self.machines[name]
        self.live.remove(name)
        self.fit = None
        self.placer = None
        for ref in self.policy.machine_removed(now, name):
            self.stop(now, self.entry(ref), KILLED)

    # ----------------------------------------------------------------- records

    def spill(self, now: float) -> None:
        """Move the attempt rows that start before the latest start time into a piece of
        columns (:meth:`AttemptRows.from_columns_open`) written to the spill file
        (:class:`AttemptSpill`), cut where the start time changes so that the pieces in
        order are the log's order (:meth:`AttemptRows.concat`).

        Rows of the latest start time stay, since attempts launched later at that time may
        sort before them. A row whose task still runs goes too: its start and attempt
        number are kept (:class:`OpenRows`) for the engine to read, and a later change of its
        end (its finish rewritten, a kill, a truncation) is written over its row in the
        table at the next spill (:meth:`AttemptSpill.patch`). So the rows never
        number more than about :data:`SPILL_ROWS`, however long a task runs.
        """
        rows = self.rows
        base = self.base
        start = rows.start
        count = rows.count
        cut = count - 1
        while cut > 0 and start[cut - 1] == start[cut]:
            cut -= 1
        self.spill_at = count - cut + SPILL_ROWS
        if cut <= 0:
            return
        end = base + cut
        killed = [slot - base for slot in self.killed if slot < end]
        truncated = [slot - base for slot in self.truncated if slot < end]
        columns = rows.columns(0, cut, tuple(self.machine_names))
        # The rows that stay (those of the latest start time) in new arrays: the arrays of
        # the rows that go are dropped whole.
        self.rows = rows.tail(cut, self.spill_at)
        # The rows still written to are those of running tasks, which end at ``now`` or
        # later (a finish event before ``now`` would have come): found on the columns, with
        # no look-up per row (a scan of the running tasks cost a tenth of a large replay).
        piece, launch_rows, table_rows = AttemptRows.from_columns_open(
            columns, killed, truncated, now
        )
        self.spilled_open.add(
            now,
            base + launch_rows,
            self.pieces.spilled + table_rows,
            piece.start[table_rows],
            piece.attempt[table_rows],
            piece.finish[table_rows],
        )
        self.pieces.append(piece)
        self.killed.difference_update(slot + base for slot in killed)
        self.truncated.difference_update(slot + base for slot in truncated)
        self.base = end

    def launched(self) -> int:
        """The attempts launched so far."""
        return self.base + self.rows.count

    def attempt_rows(self) -> AttemptRows | SpilledRows:
        """All the run's attempt rows as columns, sorted (at the end of the run, when every
        attempt is closed): in memory when nothing was spilled, else the spill file
        (:meth:`AttemptSpill.finish`), which the metrics read a chunk at a time.

        What is left of the rows goes to the spill file too, a piece of about
        :data:`SPILL_ROWS` rows at a time (cut where the start time changes, as
        :meth:`spill` cuts), and the rows are dropped: the rows, their columns and the whole
        run's columns are never held at once.
        """
        rows = self.rows
        start = rows.start
        count = rows.count
        names = tuple(self.machine_names)
        base = self.base
        killed = sorted(slot - base for slot in self.killed)
        truncated = sorted(slot - base for slot in self.truncated)
        lo = 0
        while count - lo > SPILL_ROWS:
            cut = lo + SPILL_ROWS
            while cut > lo and start[cut - 1] == start[cut]:
                cut -= 1
            if cut == lo:
                break  # one start time all along: the rest is one piece
            self.pieces.append(
                AttemptRows.from_columns(
                    rows.columns(lo, cut, names),
                    _within(killed, lo, cut),
                    _within(truncated, lo, cut),
                )
            )
            lo = cut
        last = AttemptRows.from_columns(
            rows.columns(lo, count, names),
            _within(killed, lo, count),
            _within(truncated, lo, count),
        )
        # Every row is in the file now (launched() still counts them).
        self.base = base + count
        self.rows = LaunchRows()
        self.killed.clear()
        self.truncated.clear()
        del rows, start
        return self.pieces.finish(last)

    def close(self, last: float) -> None:
        """Jobs still running when the run ends keep ``finish=None``; refresh their rows. Tasks
        still running are recorded as truncated attempts up to ``until``, or, when no event is
        left (reducers launched early by ``reduce_slowstart`` that hold every machine the
        job's remaining maps could use wait forever: FAIR section 5.1's slot hoarding taken to
        deadlock), up to the time ``last`` of the last event."""
        end = self.opts.until if self.opts.until is not None else last
        running = list(self.running.values())
        for run in self.runs.values():
            running += [state for state in run.map_entries if state is not None]
        spilled: list[Finish] = []
        for state in running:
            if state.slot < self.base:
                spilled.append(state)
            else:
                self._row(state, max(end, self._started(state)), truncated=True)
        if spilled:
            self._truncate_spilled(spilled, end)
        for run in self.runs.values():
            self.records[run.index] = self._record(run)

    def _truncate_spilled(self, states: list[Finish], end: float) -> None:
        """:meth:`_row` of running tasks whose rows were spilled, truncated at ``end`` (or
        their start, if later), all at once: one search of the open rows, not one per task
        (a run cut at ``until`` has tens of thousands still running)."""
        open_rows = self.spilled_open
        slots = np.fromiter((state.slot for state in states), dtype=np.int64, count=len(states))
        starts = open_rows.start[np.searchsorted(open_rows.slots, slots)]
        ends = np.maximum(end, starts)
        self._rewrite_spilled(slots, ends, killed=False, truncated=True)

    def _rewrite_spilled(
        self, slots: IntArray, ends: FloatArray, *, killed: bool, truncated: bool
    ) -> None:
        """Rewrite the spilled rows of the running tasks at attempt slots ``slots`` to end at
        ``ends``: their open rows and the spill file's patches. The one change of a spilled
        row, for one task (:meth:`_row`) or for every task still running at the end."""
        open_rows = self.spilled_open
        at = np.searchsorted(open_rows.slots, slots)
        assert bool(np.all(open_rows.slots[at] == slots)), "a running task's row is held"
        open_rows.end[at] = ends
        self.pieces.patch_many(open_rows.rows[at], ends, killed=killed, truncated=truncated)

    def _record(self, run: JobRun) -> JobRecord:
        """The job record of ``run`` as it stands (unfinished jobs keep ``finish=None``)."""
        job = run.job
        return JobRecord.of(
            job.name,
            job.user,
            job.queue,
            job.submit,
            run.total,
            job.demand,
            job.weight,
            run.first_start,
            run.finish,
            self._isolated(run),
            job.reduce.demand if job.reduce is not None else None,
        )

    def _isolated(self, run: JobRun) -> float:
        """The job's response time alone on the empty cluster (the slowdown denominator,
        :mod:`fairshare.sim.engine`'s docstring); inf when no machine it may use holds one of
        its tasks."""
        job = run.job
        if run.total == 0:
            return 0.0
        slots = self._slots(job, job.demand) if job.tasks else 1
        if slots == 0 or (job.min_tasks is not None and slots < job.min_tasks):
            # A gang whose tasks never fit at once never starts.
            return math.inf
        each = run.seconds_each
        if each >= 0.0:
            # Every map takes the same time (a trace task's instances): a step per round.
            end = uniform_end(each, job.tasks, slots, 0.0)
        else:
            end = greedy_end(run.map_seconds, slots, 0.0)
        if job.reduce is not None and job.reduce.tasks:
            demand = job.demand if job.reduce.demand is None else job.reduce.demand
            slots = self._slots(job, demand)
            if slots == 0:
                return math.inf
            each = job.reduce.copy + job.reduce.compute
            end = uniform_end(each, job.reduce.tasks, slots, end)
        return end

    def _slots(self, job: Job, demand: FloatArray) -> int:
        """Whole tasks of ``demand`` that fit at once on the live machines ``job`` may use."""
        if self.fit is None:
            self.fit = TaskFit(list(self.machines.values()), self.resources)
        return self.fit.slots(job.constraint, job.machines, demand)


def _within(offsets: list[int], lo: int, hi: int) -> list[int]:
    """The sorted ``offsets`` in ``[lo, hi)``, made relative to ``lo``."""
    return [o - lo for o in offsets[bisect_left(offsets, lo) : bisect_left(offsets, hi)]]


def _durations(job: Job, rng: np.random.Generator) -> Sequence[float]:
    """The job's map task durations (seconds), drawn from the run's generator. Draws are kept
    as packed doubles (``array``), not a float object each: a job keeps them until it
    finishes, and thousands of jobs' worth of objects would crowd the running tasks' out of
    the cache (the online benchmark)."""
    duration = job.duration
    n = job.tasks
    if isinstance(duration, FixedDuration):
        # Read as JobRun.seconds_each, never per task: no list of n equal numbers is made.
        return ()
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
