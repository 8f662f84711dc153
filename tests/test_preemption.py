"""Preemption (FAIR section 3.2, issue 4): deterministic, terminating, no flapping, never below
a fair share, for every online policy (rules in :mod:`fairshare.policies.preemption`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import ONLINE_POLICIES, Kill, Launch, PolicyOptions, Scheduler, make_policy
from fairshare.policies.preemption import Preemptor, fair_targets
from fairshare.policies.protocol import Decision
from fairshare.policies.shares import fair_shares, hierarchical_shares
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload.model import (
    FixedDuration,
    Job,
    PerTaskDurations,
    Queue,
    ReducePhase,
    User,
)

from conftest import WHOLE_JOB_POLICIES, scaled_examples
from strategies import mixed_cluster


def _slots(n: int) -> Cluster:
    return Cluster.build(["slots"], [Machine(f"m{i}", np.array([1.0])) for i in range(n)])


def _running_at(log: RunLog, t: float) -> dict[str, int]:
    out: dict[str, int] = {}
    for a in log.attempts:
        if a.start <= t < a.finish:
            out[a.user] = out.get(a.user, 0) + 1
    return out


def _former_livelock(long: float) -> list[Job]:
    """Minimised from a random workload (seed 271 of the issue's search): under FIFO with
    preemption (2, 4), u0's job (younger than both of u1's) was fair-starved; each kill of
    u1's newest tasks handed the room straight back to u1's older job, and the kill repeated
    every half second for as long as ``j2`` ran (12,000 events for ``long`` = 3,000)."""
    return [
        Job(
            "j1",
            3.5,
            "u1",
            np.array([1.0, 4.0]),
            10,
            FixedDuration(1.0),
            constraint=Constraint("fast"),
        ),
        Job("j2", 3.5, "u1", np.array([2.0, 1.0]), 2, FixedDuration(long)),
        Job("j3", 4.0, "u0", np.array([3.0, 1.0]), 2, FixedDuration(1.0)),
    ]


def test_former_fifo_livelock_terminates_without_kills() -> None:
    """Under FIFO the younger user is owed nothing (its share is priority), so it never kills;
    the run is as long as without preemption, whatever ``j2``'s length."""
    for long in (30.0, 3000.0):
        jobs = _former_livelock(long)
        log = simulate(
            mixed_cluster(2), jobs, "fifo", seed=1, options=SimOptions(preemption=(2.0, 4.0))
        )
        plain = simulate(mixed_cluster(2), jobs, "fifo", seed=1)
        assert sum(a.killed for a in log.attempts) == 0
        assert log.events == plain.events == 17
        assert {j.job: j.finish for j in log.jobs} == {"j1": 8.5, "j2": 3.5 + long, "j3": 9.5}


def test_former_livelock_under_fair_sharing_policies() -> None:
    """The same workload under the fair-sharing policies: u0 reaches half its fair share by
    placement before Tfair, so nothing is killed and the run ends with the same events."""
    jobs = _former_livelock(3000.0)
    for policy in ("fair", "drf", "tsf"):
        log = simulate(
            mixed_cluster(2), jobs, policy, seed=1, options=SimOptions(preemption=(2.0, 4.0))
        )
        assert sum(a.killed for a in log.attempts) == 0
        assert log.events == 18
        assert {j.job: j.finish for j in log.jobs} == {"j1": 9.5, "j2": 3003.5, "j3": 5.5}


def test_fair_share_preemption_after_tfair() -> None:
    """FAIR section 3.2: pool A (no minimum share) arrives at t = 1 while pool B holds all 10
    slots with long tasks. A's fair share is 5; it is below half of it from t = 1, so at
    t = 1 + Tfair = 6 the 5 most recently launched of B's tasks are killed and A runs 5."""
    jobs = [
        Job(
            "b",
            0.0,
            "B",
            np.array([1.0]),
            10,
            PerTaskDurations(tuple(1000.0 + i for i in range(10))),
        ),
        Job("a", 1.0, "A", np.array([1.0]), 8, FixedDuration(100.0)),
    ]
    log = simulate(_slots(10), jobs, "fair", seed=0, options=SimOptions(preemption=(1e9, 5.0)))
    killed = [a for a in log.attempts if a.killed]
    assert sorted(a.task for a in killed) == [5, 6, 7, 8, 9]
    assert {a.finish for a in killed} == {6.0}
    assert _running_at(log, 5.9) == {"B": 10}
    assert _running_at(log, 6.5) == {"A": 5, "B": 5}
    # B is never taken below its fair share: no second round while both hold 5.
    assert len(killed) == 5


def test_no_fair_share_preemption_at_half_the_fair_share() -> None:
    """A pool holding half its fair share or more is not fair-starved: A gets 3 of 10 slots
    from finishes at t = 2 (fair share 5, half 2.5), so Tfair never expires and nothing is
    killed."""
    jobs = [
        Job(
            "b",
            0.0,
            "B",
            np.array([1.0]),
            10,
            PerTaskDurations((2.0, 2.0, 2.0, *(1000.0 + i for i in range(7)))),
        ),
        Job("b2", 0.5, "B", np.array([1.0]), 5, FixedDuration(1000.0)),
        Job("a", 1.0, "A", np.array([1.0]), 8, FixedDuration(100.0)),
    ]
    log = simulate(_slots(10), jobs, "fair", seed=0, options=SimOptions(preemption=(1e9, 5.0)))
    assert sum(a.killed for a in log.attempts) == 0
    assert _running_at(log, 10.0) == {"A": 3, "B": 7}


def test_fair_min_share_then_fair_share() -> None:
    """Tmin, then Tfair (FAIR section 3.2): A (min share 1) and C (no minimum) arrive at t = 1
    while B holds all 12 slots; the fair shares are 4 each. At t = 1 + Tmin = 3 A takes its
    minimum share (B's newest task); A, still below half its fair share, and C take their
    fair shares at t = 1 + Tfair = 9 (3 + 4 more kills, newest first, A first), B keeps 4."""
    users = [
        User("A", np.array([1.0]), min_share=1),
        User("B", np.array([1.0])),
        User("C", np.array([1.0])),
    ]
    jobs = [
        Job(
            "b",
            0.0,
            "B",
            np.array([1.0]),
            12,
            PerTaskDurations(tuple(1000.0 + i for i in range(12))),
        ),
        Job("a", 1.0, "A", np.array([1.0]), 8, FixedDuration(100.0)),
        Job("c", 1.0, "C", np.array([1.0]), 8, FixedDuration(100.0)),
    ]
    log = simulate(
        _slots(12), jobs, "fair", seed=0, users=users, options=SimOptions(preemption=(2.0, 8.0))
    )
    kills = sorted((a.finish, a.task) for a in log.attempts if a.killed)
    assert kills == [(3.0, 11), *((9.0, t) for t in range(4, 11))]
    started = [a.user for a in log.attempts if a.start == 9.0]
    assert (started.count("A"), started.count("C")) == (3, 4)
    assert _running_at(log, 3.5) == {"A": 1, "B": 11}
    assert _running_at(log, 9.5) == {"A": 4, "B": 4, "C": 4}


def test_fifo_preemption_serves_the_older_job() -> None:
    """FIFO's share is priority: job a (user A, oldest) has 4 reducers pending at t = 1 while
    the younger b holds 3 of the 4 slots; a is below half its FIFO share (4), so at t = 1 +
    Tfair = 3 b's 3 tasks are killed and a runs all 4 reducers; b never kills back."""
    jobs = [
        Job(
            "a", 0.0, "A", np.array([1.0]), 1, FixedDuration(1.0), reduce=ReducePhase(4, 0.0, 50.0)
        ),
        Job("b", 0.5, "B", np.array([1.0]), 3, FixedDuration(100.0)),
    ]
    log = simulate(_slots(4), jobs, "fifo", seed=0, options=SimOptions(preemption=(1.0, 2.0)))
    kills = sorted((a.finish, a.user, a.task) for a in log.attempts if a.killed)
    assert kills == [(3.0, "B", 0), (3.0, "B", 1), (3.0, "B", 2)]
    assert _running_at(log, 3.5) == {"A": 4}
    assert {j.job: j.finish for j in log.jobs} == {"a": 53.0, "b": 153.0}


# ---------------------------------------------------------------- random workloads x policies


@st.composite
def _workloads(draw: st.DrawFn) -> tuple[int, list[Job], str, SimOptions]:
    n = draw(st.integers(2, 5))
    jobs = []
    t = 0.0
    for k in range(draw(st.integers(1, 7))):
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
                FixedDuration(draw(st.sampled_from([1.0, 2.5, 7.0, 30.0]))),
                constraint=draw(
                    st.sampled_from([None, Constraint("fast"), Constraint("rack == 'r0'")])
                ),
                input_replicas=draw(st.sampled_from([None, 2])),
            )
        )
    # slots over-commits machines by design (tests/test_comparators.py).
    policy = draw(
        st.sampled_from(
            sorted(p for p in ONLINE_POLICIES if p != "slots" and p not in WHOLE_JOB_POLICIES)
        )
    )
    options = SimOptions(
        delay=draw(st.sampled_from([None, (1.0, 2.0)])),
        preemption=draw(st.sampled_from([(2.0, 4.0), (0.0, 0.0), (1.0, 30.0)])),
    )
    return n, jobs, policy, options


class _Watch:
    """Wraps a policy's preemption step: records (victim, beneficiary) per kill and checks
    that no kill takes its user below the fair share preemption computed for that step."""

    def __init__(self) -> None:
        self.pairs: list[tuple[int, int, float]] = []

    def step(
        self,
        policy: Scheduler,
        inner: Callable[[float, list[Decision]], None],
        now: float,
        out: list[Decision],
    ) -> None:
        _, fair = fair_targets(policy.preemptor)
        before = [u.share for u in policy.users]
        start = len(out)
        inner(now, out)
        lost = [0.0] * len(policy.users)
        launched = [False] * len(policy.users)
        victims: list[int] = []
        for d in out[start:]:
            side = policy.part_of(d.task)
            if isinstance(d, Kill):
                victims.append(side.user)
                lost[side.user] += side.share_per_task
            elif isinstance(d, Launch):
                launched[side.user] = True
                self.pairs.extend((v, side.user, now) for v in victims)
                victims = []
        assert not victims, "every kill is followed by a launch for the starved user"
        for i, amount in enumerate(lost):
            if amount > 0:
                assert policy.users[i].share >= fair[i] - 1e-9
                if not launched[i]:
                    assert before[i] - amount >= fair[i] - 1e-9


def _watched(name: str, cluster: Cluster, options: SimOptions) -> tuple[Scheduler, _Watch]:
    """Policy ``name`` whose preemption steps a :class:`_Watch` checks (its preemptor
    replaced by a subclass: the compiled objects' methods cannot be replaced on an
    instance)."""
    watch = _Watch()
    policy = make_policy(name, cluster, options=options.policy_options())

    class Watched(Preemptor):
        def run(self, now: float, out: list[Decision]) -> None:
            watch.step(policy, super().run, now, out)

    policy.preemptor = Watched(policy.ledger, policy.ledger, policy.placer)
    return policy, watch


@settings(
    max_examples=scaled_examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(_workloads())
def test_preemption_terminates_and_never_flaps(
    case: tuple[int, list[Job], str, SimOptions],
) -> None:
    """Every policy with preemption: the run ends within a few events per task, kills at most
    once per task, every kill launches the starved user's task on the freed machine, no kill
    takes its user below its fair share, and no two users take room from each other in turn
    within Tfair of the last kill between them (rule 5 of fairshare.policies.preemption)."""
    n, jobs, name, options = case
    cluster = mixed_cluster(n)
    policy, watch = _watched(name, cluster, options)
    log = simulate(cluster, jobs, policy, seed=1, options=options)
    tasks = sum(j.tasks for j in jobs)
    kills = sum(a.killed for a in log.attempts)
    assert all(j.finish is not None for j in log.jobs)
    assert kills == len(watch.pairs) <= tasks
    assert log.events <= 6 * tasks + 2 * len(jobs)
    # Alternations: per unordered pair of users, how often the direction of kills flips.
    # Rule 5: once u lost a task to v, v's tasks are not killed for u within Tfair.
    assert options.preemption is not None
    tfair = options.preemption[1]
    last: dict[frozenset[int], tuple[int, int, float]] = {}
    for victim, winner, when in watch.pairs:
        key = frozenset((victim, winner))
        before = last.get(key)
        if before is not None and before[:2] == (winner, victim):
            assert when - before[2] >= tfair, f"{name}: users {victim}, {winner} flap"
        last[key] = (victim, winner, when)
    again = simulate(cluster, jobs, name, seed=1, options=options)
    assert again.attempts == log.attempts


def test_policy_options_reach_preemption() -> None:
    """The fair shares preemption protects are the policy's own: FAIR's include minimum
    shares, DRF's ignore them (DRF does not place by them)."""
    users = [User("A", np.array([1.0]), min_share=3), User("B", np.array([1.0]))]
    options = PolicyOptions(preemption=(1.0, 1.0))
    for name, expected in (("fair", [3.0, 1.0]), ("drf", [2.0, 2.0])):
        policy = make_policy(name, _slots(4), users=users, options=options)
        assert policy.preemption_shares([4.0, 4.0], 4.0) == expected


def test_hierarchical_shares_split_by_queue_before_user() -> None:
    """root -> A (weight 1: users a1, a2), B (weight 1: user b1), 12 slots, everyone
    demanding 12: A and B get 6 each and A's users 3 each (flat water-filling would give
    4 / 4 / 4). A satisfied user's leftover stays in its queue first: with a2 demanding
    only 1, a1 gets A's other 5 and b1 still 6."""
    parent = [-1, 0, 0, 1, 1, 2]
    weights = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    leaves = [3, 4, 5]
    assert hierarchical_shares(parent, weights, leaves, [12.0, 12.0, 12.0], 12.0) == [
        3.0,
        3.0,
        6.0,
    ]
    assert fair_shares([12.0] * 3, [0.0] * 3, [1.0] * 3, 12.0) == [4.0, 4.0, 4.0]
    assert hierarchical_shares(parent, weights, leaves, [12.0, 1.0, 12.0], 12.0) == [
        5.0,
        1.0,
        6.0,
    ]
    # A queue that wants little gives the rest to its sibling; weights split by queue.
    assert hierarchical_shares(
        parent, [1.0, 3.0, 1.0, 1.0, 1.0, 1.0], leaves, [2.0, 1.0, 20.0], 12.0
    ) == [
        2.0,
        1.0,
        9.0,
    ]


def test_hdrf_preemption_restores_the_queue_tree_share() -> None:
    """H-DRF's fair shares follow the tree: queues A (users a1, a2) and B (user b1) of equal
    weight. a1 and a2 hold all 12 slots when b1 arrives; after Tfair, b1 takes back B's half
    (6 slots) from the newest tasks, and a1 and a2 keep 3 each. Flat weights would have
    stopped b1 at a third (4 slots), the behaviour before preemption read the tree."""
    long = PerTaskDurations(tuple(1000.0 + i for i in range(6)))
    jobs = [
        Job("a1", 0.0, "a1", np.array([1.0]), 6, long, queue="A"),
        Job("a2", 0.0, "a2", np.array([1.0]), 6, long, queue="A"),
        Job("b1", 1.0, "b1", np.array([1.0]), 12, FixedDuration(100.0), queue="B"),
    ]
    queues = (Queue("A"), Queue("B"))
    for policy in ("hdrf", "naive-hdrf"):
        log = simulate(
            _slots(12),
            jobs,
            policy,
            seed=0,
            queues=queues,
            options=SimOptions(preemption=(1e9, 5.0)),
        )
        assert _running_at(log, 5.9) == {"a1": 6, "a2": 6}, policy
        assert _running_at(log, 6.5) == {"a1": 3, "a2": 3, "b1": 6}, policy
        assert sum(a.killed for a in log.attempts) == 6, policy


def test_running_tasks_and_their_machines_as_preemption_reads_them() -> None:
    # Map tasks are kept per job (JobState.where), reducers per user: both show up, and a
    # finished or never launched task runs nowhere.
    cluster = _slots(3)
    policy = make_policy("drf", cluster)
    assert isinstance(policy, Scheduler)

    def job(name: str, user: str, reduce: ReducePhase | None = None) -> Job:
        return Job(
            name=name,
            submit=0.0,
            user=user,
            demand=np.array([1.0]),
            tasks=2,
            duration=FixedDuration(1.0),
            reduce=reduce,
        )

    jobs = [job("a", "u", ReducePhase(tasks=1, copy=0.0, compute=1.0)), job("b", "v")]
    for i, job in enumerate(jobs):
        policy.job_submitted(0.0, i, job)
    launched = [d for d in policy.decide(0.0) if isinstance(d, Launch)]
    assert len(launched) == 3
    for d in launched:
        assert cluster.machines[policy.machine_of(d.task)].name == d.machine  # type: ignore[index]
    running = policy.running_tasks()
    assert sorted(ref for tasks in running for ref, _ in tasks) == sorted(d.task for d in launched)
    done = launched[0].task
    policy.task_finished(1.0, done)
    assert policy.machine_of(done) is None
    assert done not in [ref for tasks in policy.running_tasks() for ref, _ in tasks]
    # Finish every map; the reducer then runs, kept with its user.
    running = {d.task for d in launched} - {done}
    now = 1.0
    while not any(ref.phase == "reduce" for ref in running):
        now += 1.0
        for ref in sorted(running):
            policy.task_finished(now, ref)
        running = {d.task for d in policy.decide(now) if isinstance(d, Launch)}
    (reducer,) = [ref for ref in running if ref.phase == "reduce"]
    assert policy.machine_of(reducer) is not None
    assert (reducer, policy.machine_of(reducer)) in policy.running_tasks()[0]
