"""Event engine: determinism, errors, and invariants under random event sequences."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import (
    ONLINE_POLICIES,
    Decision,
    Policy,
    PolicyError,
    TaskRef,
    make_policy,
)
from fairshare.policies.drf import Drf
from fairshare.runlog import AttemptRows, RunLog
from fairshare.sim.engine import MachineEvent, SimOptions, SimulationError, simulate
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    PerTaskDurations,
    ReducePhase,
)

from conftest import scaled_examples
from strategies import mixed_cluster


def _assert_same_run(log: RunLog, other: RunLog) -> None:
    """Two runs made the same decisions: the same attempts, job records and events."""
    assert log.attempts == other.attempts
    assert [repr(j) for j in log.jobs] == [repr(j) for j in other.jobs]
    assert log.events == other.events


def test_unknown_policy_is_a_policy_error() -> None:
    with pytest.raises(PolicyError) as err:
        simulate(mixed_cluster(2), [], "lottery", seed=0)
    assert err.value.where == "policy"
    assert "unknown online policy 'lottery'" in err.value.what


def test_unsorted_jobs_are_rejected() -> None:
    jobs = [
        Job("a", 5.0, "a", np.array([1.0, 1.0]), 1, FixedDuration(1.0)),
        Job("b", 1.0, "b", np.array([1.0, 1.0]), 1, FixedDuration(1.0)),
    ]
    with pytest.raises(SimulationError) as err:
        simulate(mixed_cluster(2), iter(jobs), "drf", seed=0)
    assert err.value.where == "jobs[1].submit"


def test_same_seed_same_run_and_reduces_follow_maps() -> None:
    jobs = [
        Job(
            f"j{k}",
            float(k),
            f"u{k % 2}",
            np.array([1.0, 2.0]),
            6,
            ExponentialDuration(5.0),
            input_replicas=2,
            reduce=ReducePhase(2, 1.0, 3.0),
        )
        for k in range(5)
    ]
    a = simulate(mixed_cluster(4), jobs, "fair", seed=9)
    b = simulate(mixed_cluster(4), jobs, "fair", seed=9)
    assert a.attempts == b.attempts and a.events == b.events
    for record in a.jobs:
        maps = [t for t in a.attempts if t.job == record.job and t.phase == "map"]
        reduces = [t for t in a.attempts if t.job == record.job and t.phase == "reduce"]
        assert len(maps) == 6 and len(reduces) == 2
        assert min(r.start for r in reduces) == max(m.finish for m in maps)
        assert record.finish == max(r.finish for r in reduces)
        assert record.isolated_response > 0


@st.composite
def _workloads(draw: st.DrawFn) -> tuple[int, list[Job], list[MachineEvent], str, SimOptions]:
    n = draw(st.integers(2, 6))
    count = draw(st.integers(1, 8))
    jobs = []
    t = 0.0
    for k in range(count):
        t += draw(st.sampled_from([0.0, 0.5, 3.0]))
        jobs.append(
            Job(
                f"j{k}",
                t,
                f"u{draw(st.integers(0, 2))}",
                np.array(
                    [draw(st.sampled_from([1.0, 2.0, 3.0])), draw(st.sampled_from([1.0, 4.0]))]
                ),
                draw(st.integers(1, 12)),
                FixedDuration(draw(st.sampled_from([1.0, 2.5, 7.0]))),
                constraint=draw(
                    st.sampled_from([None, Constraint("fast"), Constraint("rack == 'r0'")])
                ),
                input_replicas=draw(st.sampled_from([None, 2])),
            )
        )
    events = []
    if draw(st.booleans()):
        events.append(MachineEvent(draw(st.sampled_from([1.0, 4.0])), "remove", "m1"))
    if draw(st.booleans()):
        events.append(
            MachineEvent(
                2.0,
                "add",
                Machine("extra", np.array([8.0, 8.0]), rack="r0", attributes={"fast": True}),
            )
        )
    # slots over-commits machines by design (tests/test_comparators.py).
    policy = draw(st.sampled_from(sorted(p for p in ONLINE_POLICIES if p != "slots")))
    options = SimOptions(
        delay=draw(st.sampled_from([None, (1.0, 2.0)])),
        preemption=draw(st.sampled_from([None, (2.0, 4.0)])),
    )
    return n, jobs, events, policy, options


@settings(
    max_examples=scaled_examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(_workloads())
def test_invariants_under_random_events(
    case: tuple[int, list[Job], list[MachineEvent], str, SimOptions],
) -> None:
    """No machine over capacity, no constraint violated, no task launched twice at once or
    lost: every task of a finished job completes exactly once (killed attempts aside)."""
    n, jobs, events, policy, options = case
    cluster = mixed_cluster(n)
    log = simulate(cluster, jobs, policy, seed=1, options=options, machine_events=events)
    machines = {m.name: m for m in cluster.machines}
    machines["extra"] = Machine("extra", np.array([8.0, 8.0]), rack="r0", attributes={"fast": True})
    by_job = {j.name: j for j in jobs}
    # Capacity: sweep start/finish instants per machine (finishes before starts at a time).
    for name, machine in machines.items():
        points = sorted(
            [(a.finish, 0, a) for a in log.attempts if a.machine == name]
            + [(a.start, 1, a) for a in log.attempts if a.machine == name],
            key=lambda p: (p[0], p[1]),
        )
        used = np.zeros(2)
        for _, kind, a in points:
            used += by_job[a.job].demand if kind else -by_job[a.job].demand
            assert np.all(used <= machine.capacity + 1e-9)
    for a in log.attempts:
        job = by_job[a.job]
        if job.constraint is not None:
            assert job.constraint.matches(machines[a.machine])
    # Each task: attempts never overlap, exactly one completes when the job finished.
    for record in log.jobs:
        job = by_job[record.job]
        tasks: dict[tuple[str, int], list[tuple[float, float, bool]]] = {}
        for a in log.attempts:
            if a.job == record.job:
                tasks.setdefault((a.phase, a.task), []).append((a.start, a.finish, a.killed))
        for spans in tasks.values():
            spans.sort()
            for (_, end, _), (start, _, _) in itertools.pairwise(spans):
                assert start >= end
            assert sum(not killed for *_, killed in spans) <= 1
        if record.finish is not None:
            assert len(tasks) == job.tasks
            assert all(sum(not k for *_, k in s) == 1 for s in tasks.values())


def test_tasks_running_at_until_are_recorded_up_to_until() -> None:
    """A run stopped at ``until`` keeps the busy time of the tasks still running: each is an
    attempt ending at ``until`` marked truncated, not killed; finished tasks are untouched."""
    cluster = Cluster.build(["cpu", "mem"], [Machine("m0", np.array([4.0, 4.0]))])
    jobs = [
        Job("short", 0.0, "a", np.array([1.0, 1.0]), 1, FixedDuration(2.0)),
        Job("long", 1.0, "b", np.array([1.0, 1.0]), 2, FixedDuration(10.0)),
        Job("late", 9.0, "a", np.array([1.0, 1.0]), 1, FixedDuration(1.0)),
    ]
    log = simulate(cluster, jobs, "drf", seed=0, options=SimOptions(until=4.0))
    rows = [(a.job, a.task, a.start, a.finish, a.killed, a.truncated) for a in log.attempts]
    assert rows == [
        ("short", 0, 0.0, 2.0, False, False),
        ("long", 0, 1.0, 4.0, False, True),
        ("long", 1, 1.0, 4.0, False, True),
    ]
    assert sum(a.finish - a.start for a in log.attempts) == 8.0
    finish = {j.job: j.finish for j in log.jobs}
    assert finish == {"short": 2.0, "long": None}


def test_reducers_hoarding_the_only_slot_end_the_run_instead_of_crashing() -> None:
    """FAIR section 5.1's slot hoarding taken to deadlock: with ``reduce_slowstart`` 0.5 the
    reducer takes the one slot after the first map (the job's reduce side goes first among
    its sides) and waits for a map that can never run. The run ends when no event is left;
    the reducer is a truncated attempt up to the last event and the job never finishes."""
    cluster = Cluster.build(["cpu"], [Machine("m0", np.array([1.0]))])
    job = Job(
        "j", 0.0, "a", np.array([1.0]), 2, FixedDuration(10.0), reduce=ReducePhase(1, 1.0, 1.0)
    )
    log = simulate(cluster, [job], "drf", seed=0, options=SimOptions(reduce_slowstart=0.5))
    rows = [(a.phase, a.task, a.start, a.finish, a.truncated) for a in log.attempts]
    assert rows == [("map", 0, 0.0, 10.0, False), ("reduce", 0, 10.0, 10.0, True)]
    assert [j.finish for j in log.jobs] == [None]


class _NoWakeups(Policy):
    """DRF that declares it never asks for a wake-up, counting the calls it still gets."""

    name = "drf"
    uses_wakeups = False

    def __init__(self, cluster: Cluster) -> None:
        self.inner = make_policy("drf", cluster)
        self.asked = 0

    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        self.inner.job_submitted(now, job_id, job, blocks)

    def task_finished(self, now: float, task: TaskRef) -> None:
        self.inner.task_finished(now, task)

    def machine_added(self, now: float, machine: Machine) -> None:
        self.inner.machine_added(now, machine)

    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
        return self.inner.machine_removed(now, name)

    def advance(self, now: float) -> None:
        self.inner.advance(now)

    def task_failed(self, now: float, task: TaskRef) -> None:
        self.inner.task_failed(now, task)

    def job_cancelled(self, now: float, job_id: int) -> list[TaskRef]:
        return self.inner.job_cancelled(now, job_id)

    def decide(self, now: float) -> list[Decision]:
        return self.inner.decide(now)

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        return self.inner.finish_and_decide(now, task)

    def next_wakeup(self) -> float | None:
        self.asked += 1
        return self.inner.next_wakeup()


def test_a_policy_without_wakeups_is_not_asked_and_decides_the_same() -> None:
    cluster = mixed_cluster(4)
    jobs = [
        Job(f"j{k}", float(k), f"u{k % 3}", np.array([1.0, 2.0]), 8, ExponentialDuration(4.0))
        for k in range(6)
    ]
    policy = _NoWakeups(cluster)
    quiet = simulate(cluster, jobs, policy, seed=3)
    plain = simulate(cluster, jobs, "drf", seed=3)
    assert policy.asked == 0
    _assert_same_run(quiet, plain)


def _never_quiescent(name: str, cluster: Cluster, options: SimOptions) -> Policy:
    """Policy ``name`` that never lets the driver hold finishes back (a subclass: the
    compiled policies' methods cannot be replaced on an instance)."""
    base = type(make_policy(name, cluster))

    class NeverQuiescent(base):  # type: ignore[valid-type,misc]
        def quiescent(self) -> bool:
            return False

    policy: Policy = NeverQuiescent(cluster, options=options.policy_options())
    return policy


@settings(
    max_examples=scaled_examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(_workloads())
def test_finishes_held_back_while_quiescent_change_nothing(
    case: tuple[int, list[Job], list[MachineEvent], str, SimOptions],
) -> None:
    """The protocol's promise (policies.protocol): delivering the finishes a quiescent policy
    lets the driver hold back in one tasks_finished call decides exactly what delivering
    them one by one, each with its decision round, decides."""
    n, jobs, events, name, options = case
    cluster = mixed_cluster(n)
    held = simulate(cluster, jobs, name, seed=2, options=options, machine_events=events)
    policy = _never_quiescent(name, cluster, options)
    one_by_one = simulate(cluster, jobs, policy, seed=2, options=options, machine_events=events)
    _assert_same_run(held, one_by_one)


def _finishes_one_by_one(name: str, cluster: Cluster, options: SimOptions) -> Policy:
    """Policy ``name``, never quiescent, taking a time's finishes as one ``task_finished``
    call each (the protocol's own ``tasks_finished_at``) instead of its one release."""
    never_quiescent = type(_never_quiescent(name, cluster, options))

    class OneByOne(never_quiescent):  # type: ignore[valid-type,misc]
        def tasks_finished_at(self, now: float, tasks: Sequence[TaskRef]) -> None:
            for task in tasks:
                self.task_finished(now, task)

    policy: Policy = OneByOne(cluster, options=options.policy_options())
    return policy


@settings(
    max_examples=scaled_examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(_workloads())
def test_a_time_s_finishes_in_one_call_decide_as_one_call_each(
    case: tuple[int, list[Job], list[MachineEvent], str, SimOptions],
) -> None:
    """The engine delivers the finishes of one time (a busy cluster's) in one
    ``tasks_finished_at`` call: every policy decides what it decides taking them one
    ``task_finished`` call at a time."""
    n, jobs, events, name, options = case
    cluster = mixed_cluster(n)
    batched = _never_quiescent(name, cluster, options)
    one_by_one = _finishes_one_by_one(name, cluster, options)
    log = simulate(cluster, jobs, batched, seed=2, options=options, machine_events=events)
    again = simulate(cluster, jobs, one_by_one, seed=2, options=options, machine_events=events)
    _assert_same_run(log, again)


class _CallsDrf(Drf):
    """DRF recording how the engine tells it of finishes."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self.calls: list[tuple[str, float, int]] = []

    def task_finished(self, now: float, task: TaskRef) -> None:
        self.calls.append(("task_finished", now, 1))
        super().task_finished(now, task)

    def tasks_finished_at(self, now: float, tasks: Sequence[TaskRef]) -> None:
        self.calls.append(("tasks_finished_at", now, len(tasks)))
        super().tasks_finished_at(now, tasks)

    def tasks_finished(
        self, now: float, tasks: Sequence[TaskRef], times: Sequence[float] | None = None
    ) -> None:
        self.calls.append(("tasks_finished", now, len(tasks)))
        super().tasks_finished(now, tasks, times)


def test_a_busy_cluster_s_finishes_of_one_time_come_in_one_call() -> None:
    """DRF gives a and b four slots each at 0; their eight tasks end together at 10 while
    a's other four wait: one call delivers the eight (one release: each user's entries
    refreshed once), then the round that places a's four. Their finishes at 20, with nothing
    left to place, are held back to the end of the run."""
    cluster = Cluster.build(
        ["cpu", "mem"], [Machine("m0", np.array([4.0, 4.0])), Machine("m1", np.array([4.0, 4.0]))]
    )
    one = np.array([1.0, 1.0])
    jobs = [
        Job("a", 0.0, "u0", one, 8, FixedDuration(10.0)),
        Job("b", 0.0, "u1", one, 4, FixedDuration(10.0)),
    ]
    policy = _CallsDrf(cluster)
    log = simulate(cluster, jobs, policy, seed=0)
    assert policy.calls == [("tasks_finished_at", 10.0, 8), ("tasks_finished", 20.0, 4)]
    assert [(r.job, r.first_start, r.finish) for r in log.jobs] == [
        ("a", 0.0, 20.0),
        ("b", 0.0, 10.0),
    ]


class _CountingDrf(Drf):
    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self.held: list[int] = []

    def tasks_finished(
        self, now: float, tasks: Sequence[TaskRef], times: Sequence[float] | None = None
    ) -> None:
        self.held.append(len(tasks))
        super().tasks_finished(now, tasks, times)


def test_a_cluster_with_room_holds_finishes_back_until_the_next_arrival() -> None:
    """Two jobs that both fit at once: after the first arrival's round, every finish before
    the second arrival is held back and delivered, in one call, just before it."""
    cluster = mixed_cluster(4)
    jobs = [
        Job("a", 0.0, "u0", np.array([1.0, 1.0]), 4, PerTaskDurations((1.0, 2.0, 3.0, 4.0))),
        Job("b", 10.0, "u1", np.array([1.0, 1.0]), 4, PerTaskDurations((1.0, 2.0, 3.0, 4.0))),
    ]
    policy = _CountingDrf(cluster)
    log = simulate(cluster, jobs, policy, seed=0)
    plain = simulate(cluster, jobs, "drf", seed=0)
    assert log.attempts == plain.attempts
    # The engine asks for quiescence after every decision round, the one that launched a's
    # four tasks too: all four of a's finishes (t=1..4) are held until b arrives at t=10;
    # b's four the same, until the run ends.
    assert policy.held == [4, 4]


def test_a_finish_sharing_its_time_with_an_arrival_is_not_held_back() -> None:
    """Hypothesis found it: j0's last task finishes on m0 at 3.5, when j3 arrives. Delivered
    together before one decision round, the finish makes m0 the first machine offered, so j3
    runs there; held back, j3 would have taken the first bucket's machine (m1)."""
    one = np.array([1.0, 1.0])
    jobs = [
        Job("j0", 0.0, "u1", one, 8, FixedDuration(2.5), constraint=Constraint("fast")),
        Job("j1", 0.0, "u0", one, 1, FixedDuration(1.0)),
        Job("j2", 0.5, "u0", one, 1, FixedDuration(1.0)),
        Job("j3", 3.5, "u0", one, 1, FixedDuration(1.0)),
    ]
    cluster = mixed_cluster(2)
    held = simulate(cluster, jobs, "cdrf", seed=2)
    policy = _never_quiescent("cdrf", cluster, SimOptions())
    one_by_one = simulate(cluster, jobs, policy, seed=2)
    assert held.attempts == one_by_one.attempts
    (j3,) = [a for a in held.attempts if a.job == "j3"]
    assert (j3.machine, j3.start) == ("m0", 3.5)


def test_flat_attempt_rows_come_out_sorted_with_their_flags() -> None:
    # Two attempts launched at one time out of key order, then an earlier-keyed one: the
    # columns follow (start, job order, phase, task, attempt), and the killed and truncated
    # offsets mark the attempts they were noted on.
    flat: list[object] = []
    flat += (1.0, 1, "map", 0, 0, "m0", 4.0, None)  # offset 0: killed
    flat += (1.0, 0, "map", 3, 0, "m1", 2.0, "node")  # offset 8
    flat += (1.0, 0, "map", 2, 1, "m1", 9.0, None)  # offset 16: truncated
    flat += (0.5, 2, "reduce", 0, 0, "m2", 1.5, None)  # offset 24
    rows = AttemptRows.from_flat(flat, killed={0}, truncated={16})
    assert rows.start.tolist() == [0.5, 1.0, 1.0, 1.0]
    assert rows.order.tolist() == [2, 0, 0, 1]
    assert rows.names("phase") == ["reduce", "map", "map", "map"]
    assert rows.task.tolist() == [0, 2, 3, 0]
    assert rows.attempt.tolist() == [0, 1, 0, 0]
    assert rows.names("machine") == ["m2", "m1", "m1", "m0"]
    assert rows.finish.tolist() == [1.5, 9.0, 2.0, 4.0]
    assert rows.names("locality") == [None, None, "node", None]
    assert rows.killed.tolist() == [False, False, False, True]
    assert rows.truncated.tolist() == [False, True, False, False]


def test_flat_attempt_rows_sort_phases_by_name() -> None:
    # At one time, job and task index, a copy part sorts before a map before a reduce: the
    # order of the phase names, whatever the codes the columns store them by.
    flat: list[object] = []
    flat += (2.0, 0, "reduce", 0, 0, "m0", 3.0, None)
    flat += (2.0, 0, "map", 0, 0, "m0", 3.0, "rack")
    flat += (2.0, 0, "copy", 0, 0, "m1", 3.0, None)
    flat += (2.0, 0, "map", 0, 1, "m1", 3.0, "off_rack")
    rows = AttemptRows.from_flat(flat, killed=(), truncated=())
    assert rows.names("phase") == ["copy", "map", "map", "reduce"]
    assert rows.attempt.tolist() == [0, 0, 1, 0]
    assert rows.names("locality") == [None, "rack", "off_rack", None]
    assert rows.machine_names == ("m0", "m1")
    assert not rows.start.flags.writeable


def test_sorted_flat_attempt_rows_keep_their_order() -> None:
    flat: list[object] = []
    for task in range(5):
        flat += (0.0, 0, "map", task, 0, f"m{task}", 1.0 + task, None)
    rows = AttemptRows.from_flat(flat, killed=(), truncated=())
    assert rows.task.tolist() == [0, 1, 2, 3, 4]
    assert rows.finish.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert rows.killed.tolist() == [False] * 5
