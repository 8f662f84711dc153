"""The simulator's events and its event queue.

Events are records (:class:`Timed` and its subclasses): every one starts with ``(time, kind,
token)``, and events come out of the queue by time, then kind (the order
of :data:`FINISH`, :data:`REMOVE`, :data:`ADD`, :data:`ARRIVAL`, :data:`WAKEUP`, :data:`FAIL`,
:data:`CANCEL`, :data:`CANCEL_USER`), then token
(insertion order), so that the payload after them is never compared.

A running task *is* its :class:`Finish` event: the task's running entry
(``JobRun.map_entries[task]`` for a map task, the engine's ``running[task]`` for the others)
is this very record, so a finish event is current when its task's running entry is the
event (a killed task's stale event fails the test). A reducer waiting for its job's maps has
time inf and token 0 and is not queued.

A *lane* holds the finish events of the map tasks one decision round launched, sorted by
(time, token) and queued one at a time: only its first is in the queue, and popping it queues
the next. The queue then holds a few hundred lanes' heads instead of every running task
(tens of thousands in the online benchmark), and its heap stays small and in cache; merging
sorted lanes this way delivers the events in the order one heap of all of them would. Other
finish events have no lane (None).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Final

from fairshare.cluster import Machine
from fairshare.policies import TaskRef
from fairshare.workload.model import FixedDuration, Job

# The heap functions as Final names: the compiled kernel keeps them in C statics, where an
# imported function is a dictionary look-up at every call.
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush
heapreplace: Final = heapq.heapreplace

FINISH: Final = 0
"""Event kinds, in the order same-time events are delivered (a failure or a cancellation at
a job's submission time comes after it; a user's at a time, after its jobs' arrivals): a
task's finish first. Final, so that the compiled kernel inlines each kind where it is read."""
REMOVE: Final = 1
"""A machine leaves."""
ADD: Final = 2
"""A machine joins."""
ARRIVAL: Final = 3
"""A job is submitted."""
WAKEUP: Final = 4
"""The policy asked to be advanced."""
FAIL: Final = 5
"""A running task fails."""
CANCEL: Final = 6
"""A job is cancelled."""
CANCEL_USER: Final = 7
"""A user's jobs are all cancelled."""


class JobRun:
    """What the engine keeps of one submitted job until it finishes.

    Parameters
    ----------
    index : int
        The job's order of submission (its index in the run's job records).
    job : Job
        The job.
    map_seconds : sequence of float
        Each map task's duration, drawn at submission (before any locality slowdown); empty
        when the job gives one for all (``seconds_each``).

    Attributes
    ----------
    seconds_each : float
        Every map task's duration when the job gives one for all (a fixed duration, a trace
        task's instances), else -1: read at each launch instead of ``map_seconds``, whose
        item is a generic sequence read (it may be an ``array``).
    maps, total : int
        The job's map tasks, and all its tasks (maps and reducers, a split reducer once).
    done, maps_done : int
        Tasks finished, and map tasks finished (counted only for a job with a reduce phase).
    map_entries : list of Finish or None
        Per map task, its running entry (its :class:`Finish` event) while it runs.
    maps_only : bool
        The job has no reduce phase.
    waiting : dict of TaskRef to None
        Reducers (or copy parts) launched before the last map finished, in launch order.
    first_start, finish : float or None
        When the job's first task started and its last finished (None until then).
    """

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
        "seconds_each",
        "total",
        "waiting",
    )

    def __init__(self, index: int, job: Job, map_seconds: Sequence[float]) -> None:
        self.index = index
        self.job = job
        self.map_seconds = map_seconds
        duration = job.duration
        self.seconds_each = duration.seconds if isinstance(duration, FixedDuration) else -1.0
        self.maps = job.tasks
        # Per map task, its running entry (None while it does not run): a list slot per task
        # is cheaper to set and clear than a dict entry per launch, on the hottest path.
        self.map_entries: list[Finish | None] = [None] * job.tasks
        # No reduce phase: a policy's promise to hold back finishes covers its maps.
        self.maps_only = job.reduce is None
        self.total = job.tasks + (job.reduce.tasks if job.reduce is not None else 0)
        self.done = 0
        # Read only for a job with a reduce phase (its reducers wait for it): the finish of
        # a map task counts it only there.
        self.maps_done = 0
        # Reducers (or copy parts) launched before the last map finished: they wait for it.
        self.waiting: dict[TaskRef, None] = {}
        self.first_start: float | None = None
        self.finish: float | None = None


class Timed:
    """What every event starts with, and its order: by ``time``, then ``kind``, then
    ``token``, so that the payload after them is never compared. A compiled class, not a
    tuple: the engine makes one :class:`Finish` per launched task, and a NamedTuple's
    construction (a tuple copied into its subclass) cost about a twentieth of a large
    replay.

    Attributes
    ----------
    time : float
        When it happens.
    kind : int
        Its kind (:data:`FINISH` ... :data:`CANCEL_USER`).
    token : int
        Insertion order among same-time events of one kind.
    """

    __slots__ = ("kind", "time", "token")

    def __init__(self, time: float, kind: int, token: int) -> None:
        self.time = time
        self.kind = kind
        self.token = token

    def __lt__(self, other: Timed) -> bool:
        if self.time != other.time:
            return self.time < other.time
        if self.kind != other.kind:
            return self.kind < other.kind
        return self.token < other.token

    def __repr__(self) -> str:
        return f"{type(self).__name__}(time={self.time!r}, kind={self.kind}, token={self.token})"


class Finish(Timed):
    """A running task and its finish event (see the module).

    Attributes
    ----------
    time : float
        When the task finishes (inf for a reducer waiting for its job's maps).
    kind : int
        :data:`FINISH`.
    token : int
        Insertion order among same-time events (0 for a waiting reducer, never queued).
    task : TaskRef
        The task.
    slot : int
        Its attempt's row number in the run (the engine's attempt slot; written at the
        launch, as the task will end).
    run : JobRun
        Its job's run.
    lane : list of Finish or None
        The lane the event belongs to (the round's map launches), or None.
    """

    __slots__ = ("lane", "run", "slot", "task")

    def __init__(
        self,
        time: float,
        kind: int,
        token: int,
        task: TaskRef,
        slot: int,
        run: JobRun,
        lane: list[Finish] | None,
    ) -> None:
        # The fields set here, not by Timed.__init__: one call per launched task.
        self.time = time
        self.kind = kind
        self.token = token
        self.task = task
        self.slot = slot
        self.run = run
        self.lane = lane


class Arrival(Timed):
    """A job is submitted: ``job`` at ``time`` (its ``submit``), kind :data:`ARRIVAL`.

    Attributes
    ----------
    time : float
        The job's submit time.
    kind : int
        :data:`ARRIVAL`.
    token : int
        Insertion order among same-time events.
    job : Job
        The job.
    """

    __slots__ = ("job",)

    def __init__(self, time: float, kind: int, token: int, job: Job) -> None:
        super().__init__(time, kind, token)
        self.job = job


class MachineChange(Timed):
    """A machine joins (``kind`` :data:`ADD`, ``machine`` a :class:`Machine`) or leaves
    (:data:`REMOVE`, ``machine`` its name) at ``time``.

    Attributes
    ----------
    time : float
        When it joins or leaves.
    kind : int
        :data:`ADD` or :data:`REMOVE`.
    token : int
        Insertion order among same-time events.
    machine : Machine or str
        The machine that joins, or the name of the one that leaves.
    """

    __slots__ = ("machine",)

    def __init__(self, time: float, kind: int, token: int, machine: Machine | str) -> None:
        super().__init__(time, kind, token)
        self.machine = machine


class Wakeup(Timed):
    """The policy asked to be advanced at ``time`` (kind :data:`WAKEUP`): a delay
    scheduling wait or a preemption timeout ends then.

    Attributes
    ----------
    time : float
        When the policy is advanced.
    kind : int
        :data:`WAKEUP`.
    token : int
        Insertion order among same-time events.
    """

    __slots__ = ()


class JobChange(Timed):
    """A running task of job ``job`` (its name) fails (``kind`` FAIL; ``task`` its map task),
    or the job is cancelled (CANCEL), or ``job`` names a user whose jobs are all cancelled
    (CANCEL_USER).

    Attributes
    ----------
    time : float
        When it happens.
    kind : int
        :data:`FAIL`, :data:`CANCEL` or :data:`CANCEL_USER`.
    token : int
        Insertion order among same-time events.
    job : str
        The job's name (the user's, for CANCEL_USER).
    task : int
        The failing map task (unused for a cancellation).
    """

    __slots__ = ("job", "task")

    def __init__(self, time: float, kind: int, token: int, job: str, task: int) -> None:
        super().__init__(time, kind, token)
        self.job = job
        self.task = task


Event = Finish | Arrival | MachineChange | Wakeup | JobChange
"""Every event the queue holds."""


def _finish_time(event: Finish) -> float:
    """An event's time: a lane's sort key. A compiled function reads the field directly,
    where ``operator.attrgetter`` looked the attribute up by name on each event (a fortieth
    of a saturated replay's event loop)."""
    return event.time


class EventQueue:
    """The simulator's events, delivered by time, then kind, then token (module docstring).

    A heap of times (one entry per event) and the events at each time: floats compare in a
    fraction of the time tuples take, and with tens of thousands of tasks running the heap's
    comparisons were most of the queue's cost.

    Attributes
    ----------
    times : list of float
        The heap of queued times, one entry per queued event (empty: nothing queued).
    at : dict of float to Event or list of Event
        The events queued at each time: one event, or a heap of them by (kind, token).

    Examples
    --------
    >>> queue = EventQueue()
    >>> queue.push(Wakeup(5.0, WAKEUP, queue.token()))
    >>> queue.push(Arrival(5.0, ARRIVAL, queue.token(), None))
    >>> queue.push(Wakeup(1.0, WAKEUP, queue.token()))
    >>> [(type(event).__name__, event.time) for event in (queue.pop(), queue.pop(), queue.pop())]
    [('Wakeup', 1.0), ('Arrival', 5.0), ('Wakeup', 5.0)]
    >>> queue.times
    []
    """

    def __init__(self) -> None:
        self.times: list[float] = []
        # The events queued at one time: one event, or a heap of them by (kind, token).
        self.at: dict[float, Event | list[Event]] = {}
        # Event tokens (insertion order among same-time events of one kind); 0 means none.
        self.last_token = 0
        # A lane's next event when it ends at the time of the event just popped from its lane
        # and comes before every event queued in ``at`` at that time: kept here, not in
        # ``at`` (the instances of a trace's task launched together end together, and
        # thousands of them in a row each went into the heap of their time and out again,
        # a dozen comparisons each where the lanes of a dozen rounds end at one time). Its
        # time keeps its entry in ``times``; a push at its time puts it in ``at`` first.
        self.follow: Finish | None = None
        # While ``follow`` stands: the heap of the events queued in ``at`` at its time (None:
        # none). Only a pop at that time or a push there (which parks the follower) changes
        # them, so pop's lane step reads it instead of looking the time up (a float key is
        # hashed again at every look-up).
        self.follow_rest: list[Event] | None = None

    def token(self) -> int:
        """A new event token.

        Returns
        -------
        int
            One more than the last token: the order of insertion among same-time events of
            one kind (0 is left for events that are never queued).
        """
        self.last_token += 1
        return self.last_token

    def push(self, event: Event) -> None:
        """Queue ``event``; events at one time come out by (kind, token).

        Parameters
        ----------
        event : Event
            The event; its token must be new (from :meth:`token`), so that the payload after
            ``(time, kind, token)`` is never compared.
        """
        at = event.time
        follow = self.follow
        if follow is not None and follow.time == at:
            self.follow = None
            self._park(follow)
        self._park(event)
        heappush(self.times, at)

    def _park(self, event: Event) -> None:
        """Put ``event`` among the events queued in ``at`` at its time (its entry in
        ``times`` is the caller's)."""
        at = event.time
        held = self.at.setdefault(at, event)  # (pop's lane step starts the same way)
        if held is not event:
            if isinstance(held, list):
                heappush(held, event)
            else:
                self.at[at] = [held, event] if held < event else [event, held]

    def pop(self) -> Event:
        """Take the next event out of the queue; a finish event's lane queues its next one.

        Returns
        -------
        Event
            The event of the lowest (time, kind, token). The queue must not be empty.
        """
        times = self.times
        at = times[0]
        event: Event | None = self.follow
        # The other events still queued at this time, a heap (None: none).
        rest: list[Event] | None = None
        if event is not None and event.time == at:
            # The first event of the lowest time (it comes before those in ``at``, and a
            # push at its time would have put it there).
            self.follow = None
            rest = self.follow_rest
        else:
            if event is not None:
                # Something earlier was queued since: the follower waits in ``at``.
                self.follow = None
                self._park(event)
            held = self.at.pop(at)
            if type(held) is list:
                event = heappop(held)
                if held:
                    self.at[at] = held
                    rest = held
            else:
                event = held  # type: ignore[assignment]
        assert event is not None
        if type(event) is Finish:
            lane = event.lane
            if lane:
                head: Finish = lane.pop()
                nxt = head.time
                if nxt == at:
                    # The lane's next event ends at the same time (the instances of a trace's
                    # task launched together end together): the heap of times keeps its
                    # entry, which now stands for this event, kept aside while it comes
                    # before every other event queued at this time (its lane's run is
                    # delivered without a heap step each).
                    if rest is None or head < rest[0]:
                        self.follow = head
                        self.follow_rest = rest
                    else:
                        heappush(rest, head)
                    return event
                # push(head) without a call when nothing else is queued at its time (the
                # common case: one event per finish); one sift of the heap for the pop and
                # the push.
                if self.at.setdefault(nxt, head) is head:
                    heapreplace(times, nxt)
                    return event
                heappop(times)
                self.push(head)
                return event
        heappop(times)
        return event

    def open_lane(self, lane: list[Finish]) -> None:
        """Queue the finish events of a round's map launches as one lane (see the module).

        Parameters
        ----------
        lane : list of Finish
            The events, in launch (token) order, each with this very list as its ``lane``;
            sorted here, and then only its first event is in the queue at a time.

        Examples
        --------
        Three map tasks launched in one round (no job run: the queue never reads it):

        >>> from fairshare.policies import TaskRef
        >>> queue, lane = EventQueue(), []
        >>> for task, end in enumerate([30.0, 10.0, 20.0]):
        ...     ref = TaskRef(0, "map", task)
        ...     lane.append(Finish(end, FINISH, queue.token(), ref, 0, None, lane))
        >>> queue.open_lane(lane)
        >>> len(queue.times)
        1
        >>> [queue.pop().task.task for _ in range(3)]
        [1, 2, 0]
        """
        if len(lane) > 1:
            # Stable: events of one time stay in token (launch) order; popped from the end.
            lane.sort(key=_finish_time)
            lane.reverse()
        self.push(lane.pop())
