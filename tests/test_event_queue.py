"""The simulator's event queue delivers every event in (time, kind, token) order, lanes and
their kept-aside followers included (:class:`fairshare.sim.events.EventQueue`).

The model is one sorted list of every event queued so far and not yet popped, a lane's
events all in it at once: merging sorted lanes one head at a time must deliver exactly what
that list's minimum is at every pop. Times are drawn from a handful of values so that many
events, and the runs of many lanes, share a time (an Alibaba replay's usual case).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fairshare.policies import TaskRef
from fairshare.sim.events import (
    ARRIVAL,
    FINISH,
    WAKEUP,
    Arrival,
    Event,
    EventQueue,
    Finish,
    JobRun,
    Wakeup,
)
from fairshare.workload.model import FixedDuration, Job

# A job's run for the finish events (the queue never reads it; the compiled kernel checks its
# type).
RUN = JobRun(0, Job("j", 0.0, "u", np.array([1.0]), 1, FixedDuration(1.0)), [1.0])

TIMES = st.sampled_from([0.0, 1.0, 2.0, 3.0, 5.0])
# One operation: push a single event, open a lane of finishes, or pop.
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.sampled_from([FINISH, ARRIVAL, WAKEUP]), TIMES),
        # A lane's finishes, each maybe followed by a single event pushed while the round is
        # applied (a reducer's finish: its token falls between the lane's).
        st.tuples(
            st.just("lane"),
            st.lists(
                st.tuples(TIMES, st.one_of(st.none(), st.tuples(st.just(FINISH), TIMES))),
                min_size=1,
                max_size=6,
            ),
        ),
        st.tuples(st.just("pop")),
    ),
    max_size=60,
)


def _key(event: Event) -> tuple[float, int, int]:
    return (event.time, event.kind, event.token)


def _single(queue: EventQueue, kind: int, time: float, serial: int) -> Event:
    if kind == FINISH:
        return Finish(time, FINISH, queue.token(), TaskRef(serial, "map", 0), 0, RUN, None)
    if kind == ARRIVAL:
        return Arrival(time, ARRIVAL, queue.token(), RUN.job)
    return Wakeup(time, WAKEUP, queue.token())


@given(OPERATIONS)
def test_pops_follow_the_order_of_one_heap_of_every_event(operations: list[tuple]) -> None:
    queue = EventQueue()
    model: list[Event] = []
    serial = 0
    for operation in operations:
        if operation[0] == "push":
            serial += 1
            event = _single(queue, operation[1], operation[2], serial)
            queue.push(event)
            model.append(event)
        elif operation[0] == "lane":
            lane: list[Finish] = []
            for time, between in operation[1]:
                serial += 1
                entry = Finish(time, FINISH, queue.token(), TaskRef(serial, "map", 0), 0, RUN, lane)
                lane.append(entry)
                if between is not None:
                    serial += 1
                    single = _single(queue, between[0], between[1], serial)
                    queue.push(single)
                    model.append(single)
            model.extend(lane)
            queue.open_lane(lane)
        elif model:
            expected = min(model, key=_key)
            model.remove(expected)
            assert queue.pop() is expected
            # One entry in the heap of times per queued event (a lane's head stands for it).
            assert len(queue.times) == len(_in_queue(queue))
    # Drain: the rest come out in order too.
    while model:
        expected = min(model, key=_key)
        model.remove(expected)
        assert queue.pop() is expected
    assert queue.times == [] and queue.follow is None and not queue.at


def _in_queue(queue: EventQueue) -> list[Event]:
    events: list[Event] = [] if queue.follow is None else [queue.follow]
    for held in queue.at.values():
        events += held if isinstance(held, list) else [held]
    return events


def test_a_lane_run_at_a_shared_time_comes_before_later_tokens_without_the_heap() -> None:
    """Two lanes end at one time; the first round's lane is delivered whole first (its
    tokens are lower), each of its events after the first kept aside as the follower."""
    queue = EventQueue()
    lanes: list[list[Finish]] = [[], []]
    for lane in lanes:
        for task in range(3):
            ref = TaskRef(len(lane), "map", task)
            lane.append(Finish(4.0, FINISH, queue.token(), ref, 0, RUN, lane))
    first = list(lanes[0])
    second = list(lanes[1])
    for lane in lanes:
        queue.open_lane(lane)
    popped = [queue.pop()]
    assert queue.follow is first[1]  # kept aside: it comes before the other lane's head
    popped += [queue.pop() for _ in range(5)]
    assert popped == first + second
    assert queue.times == [] and queue.follow is None
