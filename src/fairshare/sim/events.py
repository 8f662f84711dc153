"""The simulator's events and its event queue.

Events are named records (NamedTuples, so that they order as tuples do): every one starts
with ``(time, kind, token)``, and events come out of the queue by time, then kind (the order
of :data:`FINISH`, :data:`REMOVE`, :data:`ADD`, :data:`ARRIVAL`, :data:`WAKEUP`, :data:`FAIL`,
:data:`CANCEL`), then token
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

import itertools
from collections.abc import Sequence
from heapq import heappop, heappush
from operator import itemgetter
from typing import NamedTuple

from fairshare.cluster import Machine
from fairshare.policies import TaskRef
from fairshare.workload.model import Job

FINISH, REMOVE, ADD, ARRIVAL, WAKEUP, FAIL, CANCEL = range(7)
"""Event kinds, in the order same-time events are delivered (a failure or a cancellation at
a job's submission time comes after it)."""


class JobRun:
    """What the engine keeps of one submitted job until it finishes."""

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


class Finish(NamedTuple):
    """A running task and its finish event (see the module). ``slot`` is the offset of its
    attempt's row in the engine's flat attempt list (written at the launch, as the task
    will end)."""

    time: float
    kind: int
    token: int
    task: TaskRef
    slot: int
    run: JobRun
    lane: list[Finish] | None


class Arrival(NamedTuple):
    """A job is submitted."""

    time: float
    kind: int
    token: int
    job: Job


class MachineChange(NamedTuple):
    """A machine joins (``kind`` ADD, ``machine`` a :class:`Machine`) or leaves (REMOVE, its
    name)."""

    time: float
    kind: int
    token: int
    machine: Machine | str


class Wakeup(NamedTuple):
    """The policy asked to be advanced now."""

    time: float
    kind: int
    token: int


class JobChange(NamedTuple):
    """A running task of job ``job`` (its name) fails (``kind`` FAIL; ``task`` its map task),
    or the job is cancelled (CANCEL)."""

    time: float
    kind: int
    token: int
    job: str
    task: int


Event = Finish | Arrival | MachineChange | Wakeup | JobChange

_TIME = itemgetter(0)
"""An event's time (the sort key of a lane)."""


class EventQueue:
    """A heap of times (one entry per event) and the events at each time: floats compare in
    a fraction of the time tuples take, and with tens of thousands of tasks running the
    heap's comparisons were most of the queue's cost."""

    def __init__(self) -> None:
        self.times: list[float] = []
        # The events queued at one time: one event, or a heap of them by (kind, token).
        self.at: dict[float, Event | list[Event]] = {}
        # Event tokens (insertion order among same-time events of one kind); 0 means none.
        self.tokens = itertools.count(1)

    def token(self) -> int:
        return next(self.tokens)

    def push(self, event: Event) -> None:
        """Queue ``event``; events at one time come out by (kind, token)."""
        at = event[0]
        held = self.at.setdefault(at, event)  # (pop's lane step starts the same way)
        if held is not event:
            if isinstance(held, list):
                heappush(held, event)
            else:
                self.at[at] = [held, event] if held < event else [event, held]  # type: ignore[operator]
        heappush(self.times, at)

    def pop(self) -> Event:
        """The next event (the queue must not be empty); a finish event's lane queues its
        next one."""
        at = heappop(self.times)
        held = self.at.pop(at)
        if type(held) is list:
            event = heappop(held)
            if held:
                self.at[at] = held
        else:
            event = held  # type: ignore[assignment]
        if event[1] == FINISH:
            lane = event[6]  # type: ignore[misc]
            if lane:
                head: Finish = lane.pop()
                # push(head) without a call when nothing else is queued at its time (the
                # common case: one event per finish).
                if self.at.setdefault(head[0], head) is head:
                    heappush(self.times, head[0])
                else:
                    self.push(head)
        return event

    def open_lane(self, lane: list[Finish]) -> None:
        """Queue the finish events of a round's map launches as one lane (see the module)."""
        if len(lane) > 1:
            # Stable: events of one time stay in token (launch) order; popped from the end.
            lane.sort(key=_TIME)
            lane.reverse()
        self.push(lane.pop())
