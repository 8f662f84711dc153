"""Gangs under the slot scheduler's over-commit model (sim/overcommit.py): a decision round
may launch a gang's tasks and stop them again (preemption rule 9, the gang stopped whole), and
launch them once more elsewhere, all at one time. The model must follow the round in order:
each launch joins its machine's load before the decisions after it, and a kill takes the
task out of the load it joined. Both scenarios below are Hypothesis's shrunk examples of
``tests/test_gang.py::test_gangs_never_start_partially``, which crashed the simulator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import test_gang
from fairshare.cluster.constraints import Constraint
from fairshare.runlog import RunLog
from fairshare.sim.engine import MachineEvent, SimOptions, simulate
from fairshare.workload.model import FixedDuration, Job, PerTaskDurations

from conftest import mixed_cluster, scaled_examples


def _attempts(log: RunLog, job: str) -> list[tuple[int, int, str, float, float, bool]]:
    """(task, attempt, machine, start, finish, killed) of the job's attempts, in task order."""
    rows = [a for a in log.attempts if a.job == job]
    return sorted((a.task, a.attempt, a.machine, a.start, a.finish, a.killed) for a in rows)


def test_gang_launched_and_killed_in_one_round() -> None:
    """At 4 the slot scheduler launches j2's task on m0 and, in the same round, kills it for
    u0's j0 (preemption with a 2 s timeout for u0's share): the kill used to find the task
    outside the model's load, and the round's end found no running entry for its launch.

    The times, by hand: j1's gang (<2, 4> each) starts whole at 0, eight tasks on m0 (16
    CPUs of 8: 2x; memory over: 2x thrashing; 4x) and three on m1 (6 CPUs of 4, thrashing:
    3x). On m1 two 1 s tasks end at 3, the 3 s one has 2 s left alone: 5. On m0 the 1 s tasks
    end at 4; the five 3 s ones have 2 s left, and with j0's three tasks <1, 1> m0 runs at
    13/8 * 2 = 3.25x: j0's end at 4 + 3.25 = 7.25, when j2's second attempt and j0's last
    two take their place (the same 3.25x): all end at 7.25 + 3.25 = 10.5."""
    jobs = [
        Job(
            "j0",
            0.0,
            "u0",
            np.array([1.0, 1.0]),
            5,
            PerTaskDurations((1.0,) * 5),
            constraint=Constraint("fast"),
        ),
        Job(
            "j1",
            0.0,
            "u2",
            np.array([2.0, 4.0]),
            11,
            PerTaskDurations((1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0, 1.0, 1.0, 3.0)),
            min_tasks=8,
        ),
        Job(
            "j2",
            0.0,
            "u2",
            np.array([1.0, 1.0]),
            1,
            PerTaskDurations((1.0,)),
            constraint=Constraint("fast"),
            min_tasks=1,
        ),
    ]
    log = simulate(
        mixed_cluster(2), jobs, "slots", seed=2, options=SimOptions(preemption=(2.0, 4.0))
    )
    assert _attempts(log, "j2") == [
        (0, 0, "m0", 4.0, 4.0, True),
        (0, 1, "m0", 7.25, 10.5, False),
    ]
    assert _attempts(log, "j0") == [
        (0, 0, "m0", 4.0, 7.25, False),
        (1, 0, "m0", 4.0, 7.25, False),
        (2, 0, "m0", 4.0, 7.25, False),
        (3, 0, "m0", 7.25, 10.5, False),
        (4, 0, "m0", 7.25, 10.5, False),
    ]
    gang = _attempts(log, "j1")
    assert [a[3] for a in gang] == [0.0] * 11  # started whole (min_tasks 8), never killed
    assert [(a[2], a[4]) for a in gang] == [("m0", 4.0)] * 3 + [("m0", 10.5)] * 5 + [
        ("m1", 3.0),
        ("m1", 3.0),
        ("m1", 5.0),
    ]
    assert [(r.job, r.first_start, r.finish) for r in log.jobs] == [
        ("j0", 4.0, 10.5),
        ("j1", 0.0, 10.5),
        ("j2", 4.0, 10.5),
    ]


def test_gang_relaunched_elsewhere_in_one_round() -> None:
    """At 10.5 the slot scheduler launches gang j5 on m0, stops it whole there (u1's j4 has
    priority 5: rule 7, gangs whole: rule 9), and launches it again on m2, in one round. The
    model used to put j5's tasks on both machines, and m0's load kept them after they left:
    m0's next change retimed a task that was not running there.

    m0 at 10.5, by hand: j1's two tasks end; j4's six running tasks <2, 1> (launched at 8.5
    with 1 s of work at 4x: 16 CPUs of 8 and 14 GB of 8) have 0.5 s left, and with j4's tasks
    9 and 10 m0 runs 16 CPUs of 8, memory within: 2x, so they end at 11.5. j4's 9 and 10 then
    have 0.5 s left; j2's gang restarts there with three tasks <3, 4>: 13 CPUs of 8, 14 GB of
    8: 3.25x, and they end at 11.5 + 1.625 = 13.125. Had j5 stayed in m0's load (<1, 4> each)
    m0 would have thrashed from 10.5 on."""
    cpu_mem = np.array
    jobs = [
        Job("j0", 0.0, "u0", cpu_mem([1.0, 1.0]), 8, PerTaskDurations((1.0,) * 8)),
        Job(
            "j1",
            0.0,
            "u0",
            cpu_mem([2.0, 4.0]),
            5,
            PerTaskDurations((1.0, 1.0, 3.0, 5.0, 5.0)),
            min_tasks=1,
        ),
        Job("j2", 0.5, "u0", cpu_mem([3.0, 4.0]), 5, FixedDuration(2.5), min_tasks=5),
        Job("j3", 2.5, "u0", cpu_mem([1.0, 1.0]), 1, PerTaskDurations((1.0,))),
        Job("j4", 8.5, "u1", cpu_mem([2.0, 1.0]), 12, FixedDuration(1.0), priority=5),
        Job("j5", 9.0, "u0", cpu_mem([1.0, 4.0]), 2, FixedDuration(1.0), min_tasks=2),
    ]
    log = simulate(
        mixed_cluster(3),
        jobs,
        "slots",
        seed=2,
        options=SimOptions(preemption=(2.0, 4.0)),
        machine_events=[MachineEvent(1.0, "remove", "m1")],
    )
    gang = _attempts(log, "j5")
    assert [a[:3] for a in gang] == [(0, 0, "m0"), (0, 1, "m2"), (1, 0, "m0"), (1, 1, "m2")]
    # Stopped whole where it first started, started whole again at once elsewhere.
    assert [(a[3], a[5]) for a in gang if a[1] == 0] == [(10.5, True)] * 2
    assert [(a[3], a[5]) for a in gang if a[1] == 1] == [(10.5, False)] * 2
    assert [a[4] for a in gang if a[1] == 1] == pytest.approx([13.32857142857143] * 2)
    j4 = {a[0]: a for a in _attempts(log, "j4")}
    assert [(j4[t][2], j4[t][3], j4[t][4]) for t in range(3, 11)] == [("m0", 8.5, 11.5)] * 6 + [
        ("m0", 10.5, 13.125)
    ] * 2
    # j2's gang, stopped whole at 10.5 for j4, starts again whole at 11.5.
    j2 = _attempts(log, "j2")
    assert [(a[1], a[3], a[4], a[5]) for a in j2 if a[1] == 0] == [(0, 0.5, 10.5, True)] * 5
    assert [a[3] for a in j2 if a[1] == 1] == [11.5] * 5
    assert [a[4] for a in j2 if a[1] == 1 and a[2] == "m0"] == [17.625] * 3
    finish = {r.job: r.finish for r in log.jobs}
    assert [finish["j4"], finish["j5"]] == pytest.approx([13.32857142857143] * 2)


def test_gang_stopped_twice_restarts_with_its_first_stopped_tasks() -> None:
    """Found by Hypothesis (the invariant below): at 2.5 j1's gang (5 tasks, min_tasks 2) is
    stopped whole for j3 (priority 5); at 2.59 it restarts with tasks 0 and 1 on m0 and is
    stopped again in the same round. Its stopped tasks wait in the order they stopped
    (``Ledger.requeue_gang``): 2, 3, 4, then 0, 1, so the gang restarts whole at 2.83 with
    tasks 2 and 3, and 4, 0 and 1, beyond min_tasks, start on their own (4.83, 4.83, 5). The
    invariant used to expect the tasks stopped last (0 and 1) to be the restarted gang, and
    read their separate starts as a gang started partially."""
    one = np.array([1.0, 1.0])
    jobs = [
        Job("j0", 0.0, "u0", one, 5, PerTaskDurations((1.0,) * 5)),
        Job("j1", 0.0, "u1", np.array([2.0, 4.0]), 5, FixedDuration(1.0), min_tasks=2),
        Job("j2", 0.0, "u0", one, 1, PerTaskDurations((1.0,)), min_tasks=1),
        Job("j3", 0.5, "u0", one, 8, FixedDuration(2.5), constraint=Constraint("fast"), priority=5),
        Job("j4", 0.5, "u0", one, 1, PerTaskDurations((1.0,))),
        Job("j5", 0.5, "u0", one, 1, PerTaskDurations((1.0,))),
        Job("j6", 0.5, "u0", one, 1, PerTaskDurations((1.0,))),
    ]
    options = SimOptions(preemption=(2.0, 4.0))
    log = simulate(mixed_cluster(2), jobs, "slots", seed=2, options=options)
    gang = [(a[0], a[1], a[2], round(a[3], 4), a[5]) for a in _attempts(log, "j1")]
    assert gang == [
        (0, 0, "m1", 0.0, True),
        (0, 1, "m0", 2.5909, True),
        (0, 2, "m1", 4.8333, False),
        (1, 0, "m1", 0.0, True),
        (1, 1, "m0", 2.5909, True),
        (1, 2, "m0", 5.0, False),
        (2, 0, "m0", 0.0, True),
        (2, 1, "m1", 2.8333, False),
        (3, 0, "m0", 0.0, True),
        (3, 1, "m1", 2.8333, False),
        (4, 0, "m0", 0.0, True),
        (4, 1, "m1", 4.8333, False),
    ]
    invariant = test_gang.test_gangs_never_start_partially.hypothesis.inner_test  # type: ignore[attr-defined]
    invariant((2, jobs, [], "slots", options))


@settings(
    max_examples=scaled_examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.data())
def test_gangs_never_start_partially_over_committed(data: st.DataObject) -> None:
    """``test_gang``'s invariant over random runs, every one under the slot scheduler (its
    over-commit model), where the shared test draws it among all the policies."""
    n, jobs, events, _, options = data.draw(test_gang._gang_runs())
    invariant = test_gang.test_gangs_never_start_partially.hypothesis.inner_test  # type: ignore[attr-defined]
    invariant((n, jobs, events, "slots", options))
