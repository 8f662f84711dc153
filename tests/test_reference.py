"""The reference schedulers of Choosy sections 7.1-7.2 (``fairshare.sim.reference``)."""

from __future__ import annotations

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import parse_constraint
from fairshare.policies import Decision, PolicyError
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions, simulate
from fairshare.sim.reference import (
    REFERENCE_POLICIES,
    Migration,
    Periodic,
    Preemption,
    ReferencePolicy,
    ReferenceScheduler,
    Restricted,
    make_reference,
)
from fairshare.workload.generators import generate
from fairshare.workload.model import FixedDuration, Job, ReducePhase, WorkloadSpec


def _one_slot_cluster(n: int) -> Cluster:
    return Cluster.build(
        ("slot",), [Machine(f"m{i}", np.array([1.0]), None, {}) for i in range(1, n + 1)]
    )


def _job(
    name: str, submit: float, tasks: int, seconds: float, machines: list[str] | None = None
) -> Job:
    demand = np.array([1.0])
    demand.setflags(write=False)
    constraint = None
    if machines is not None:
        constraint = parse_constraint("name in [" + ", ".join(f"'{m}'" for m in machines) + "]")
    return Job(name, submit, name, demand, tasks, FixedDuration(seconds), constraint=constraint)


def _running_at(log: RunLog, t: float) -> dict[str, int]:
    out: dict[str, int] = {}
    for a in log.attempts:
        if a.start <= t < a.finish:
            out[a.user] = out.get(a.user, 0) + 1
    return out


def _run(policy: str, cluster: Cluster, jobs: list[Job]) -> RunLog:
    return simulate(cluster, jobs, make_reference(policy, cluster), seed=0)


FIGURE_5 = [
    ("u1", ["m1", "m2"]),
    ("u2", ["m2", "m3", "m4", "m5"]),
    ("u3", ["m5", "m6", "m7", "m8", "m9"]),
]


@pytest.mark.parametrize("policy", list(REFERENCE_POLICIES))
def test_users_joining_an_empty_cluster_get_cmmf_at_once(policy: str) -> None:
    """Choosy section 7.2, Figure 13: the offline schedulers reach the CMMF allocation as soon
    as the users join; on Choosy's Figure 5 constraints that is 2, 3 and 4 machines."""
    cluster = _one_slot_cluster(9)
    jobs = [_job(name, 0.0, 10, 10.0, machines) for name, machines in FIGURE_5]
    log = _run(policy, cluster, jobs)
    assert _running_at(log, 0.0) == {"u1": 2, "u2": 3, "u3": 4}
    assert all(record.finish is not None for record in log.jobs)


def test_restricted_offline_does_not_move_running_tasks() -> None:
    """A late user waits for tasks to finish under the restricted reference, but gets its
    share at once when pausing is free, and paused tasks resume where they left off."""
    cluster = _one_slot_cluster(4)
    jobs = [_job("a", 0.0, 8, 10.0), _job("b", 2.0, 2, 10.0)]
    restricted = _run("offline-restricted", cluster, jobs)
    assert _running_at(restricted, 2.0) == {"a": 4}
    assert _running_at(restricted, 10.0) == {"a": 2, "b": 2}
    paused = _run("offline-preemption", cluster, jobs)
    assert _running_at(paused, 2.0) == {"a": 2, "b": 2}
    assert paused.preempted_tasks == 0
    # Work is conserved: every task's attempts add up to its 10 s.
    work: dict[tuple[str, int], float] = {}
    for a in paused.attempts:
        work[(a.job, a.task)] = work.get((a.job, a.task), 0.0) + a.finish - a.start
    assert work == {key: pytest.approx(10.0) for key in work} and len(work) == 10
    assert next(r.finish for r in paused.jobs if r.job == "b") == 12.0


def test_migration_moves_a_task_to_make_room_for_a_constrained_user() -> None:
    """u1 may use only m1; a flexible job holds m1 and m2 with m3 free. Migration moves the
    flexible task from m1 to m3 at once; the restricted reference cannot."""
    cluster = _one_slot_cluster(3)
    jobs = [_job("flex", 0.0, 2, 10.0, ["m1", "m2", "m3"]), _job("pick", 1.0, 1, 5.0, ["m1"])]
    # Occupy m3 first so that m1 and m2 go to flex, then free m3 before pick arrives.
    blocker = _job("blocker", 0.0, 1, 0.5, ["m3"])
    jobs = [blocker, *jobs]
    migration = _run("offline-migration", cluster, jobs)
    restricted = _run("offline-restricted", cluster, jobs)
    pick_m = next(r for r in migration.jobs if r.job == "pick")
    pick_r = next(r for r in restricted.jobs if r.job == "pick")
    assert pick_r.first_start == 10.0
    assert pick_m.first_start == 1.0 and pick_m.finish == 6.0


@pytest.mark.parametrize("policy", list(REFERENCE_POLICIES))
def test_reference_runs_never_overload_a_machine(policy: str) -> None:
    rng = np.random.default_rng(5)
    for _ in range(8):
        cluster = _one_slot_cluster(int(rng.integers(2, 6)))
        names = [m.name for m in cluster.machines]
        jobs = []
        for j in range(int(rng.integers(2, 6))):
            allowed = sorted(
                set(rng.choice(names, size=int(rng.integers(1, len(names) + 1))).tolist())
            )
            jobs.append(
                _job(f"j{j}", float(j), int(rng.integers(1, 6)), float(rng.integers(1, 6)), allowed)
            )
        log = _run(policy, cluster, jobs)
        edges = sorted({a.start for a in log.attempts} | {a.finish for a in log.attempts})
        for t in edges:
            busy = [a.machine for a in log.attempts if a.start <= t < a.finish]
            assert len(busy) == len(set(busy))
        work: dict[tuple[str, int], float] = {}
        for a in log.attempts:
            work[(a.job, a.task)] = work.get((a.job, a.task), 0.0) + a.finish - a.start
        for job in jobs:
            assert isinstance(job.duration, FixedDuration)
            for t in range(job.tasks):
                assert work[(job.name, t)] == pytest.approx(job.duration.seconds)


def _constrained_run(policy: str, seed: int, *, exhaustive: bool) -> RunLog:
    """A small Choosy 7.1 workload (Google-like constraints, Facebook sizes) on 30 slots."""
    machines = [Machine(f"m{i}", np.array([1.0]), f"r{i // 10}", {}) for i in range(30)]
    cluster = Cluster.build(("slot",), machines)
    spec = WorkloadSpec("google-constraints", {"jobs": 25, "arrival": 3, "duration": 2})
    workload = generate(spec, cluster, np.random.default_rng(seed))
    reference = make_reference(policy, workload.cluster)
    reference.exhaustive = exhaustive
    return simulate(
        workload.cluster, workload.jobs, reference, seed=seed, options=SimOptions(until=120.0)
    )


@pytest.mark.parametrize("policy", ["offline-restricted", "offline-preemption", "periodic-offline"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_decisions_equal_the_exhaustive_ones(policy: str, seed: int) -> None:
    """Looking only at machines that freed up (and at the free machines of units with new
    work), and skipping the whole-cluster solve of offline-preemption after finishes of units
    that still wait, changes no decision: the run equals the one that examines every free
    machine and solves the whole cluster at every decision."""
    fast = _constrained_run(policy, seed, exhaustive=False)
    full = _constrained_run(policy, seed, exhaustive=True)
    assert len(fast.attempts) > 50
    assert fast.attempts == full.attempts and fast.jobs == full.jobs


class _CheckedMigration(ReferenceScheduler):
    """offline-migration that checks, at every decision, that the allocation it reaches has
    the level vector of the whole cluster's CMMF target with every running task kept."""

    checked = 0

    def decide(self, now: float) -> list[Decision]:
        expected = None
        if self.dirty and self.waiting:
            target = self.whole_cluster(keep_running=True)
            expected = self.levels(self.totals(target, add_running=False))
        out = super().decide(now)
        if expected is not None:
            held = {u.idx: len(u.running) for u in self.units if u.pending or u.running}
            assert self.levels(held) == expected
            self.checked += 1
        return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_migration_shortcut_reaches_the_cmmf_target(seed: int) -> None:
    machines = [Machine(f"m{i}", np.array([1.0]), f"r{i // 10}", {}) for i in range(30)]
    cluster = Cluster.build(("slot",), machines)
    spec = WorkloadSpec("google-constraints", {"jobs": 25, "arrival": 3, "duration": 2})
    workload = generate(spec, cluster, np.random.default_rng(seed))
    reference = _CheckedMigration(workload.cluster, "offline-migration")
    simulate(workload.cluster, workload.jobs, reference, seed=seed, options=SimOptions(until=120.0))
    assert reference.checked > 50


@pytest.mark.parametrize("exhaustive", [False, True])
def test_one_finished_task_frees_a_chain_of_migrations(exhaustive: bool) -> None:
    """d (only m1) ends at t=5 with nothing left; a (m1, m2) sits on m2, b (m2, m3) on m3, and
    c (only m3, share 0) waits. Migration moves a to m1 and b to m2 so that c starts on m3 at
    once; the restricted reference gives m1 to a, the only waiting unit that may use it."""
    cluster = _one_slot_cluster(3)
    jobs = [
        _job("d", 0.0, 1, 5.0, ["m1"]),
        _job("a", 0.0, 3, 100.0, ["m1", "m2"]),
        _job("b", 0.0, 3, 100.0, ["m2", "m3"]),
        _job("c", 1.0, 1, 10.0, ["m3"]),
    ]
    reference = make_reference("offline-migration", cluster)
    reference.exhaustive = exhaustive
    log = simulate(cluster, jobs, reference, seed=0)
    c = next(r for r in log.jobs if r.job == "c")
    assert (c.first_start, c.finish) == (5.0, 15.0)
    assert _running_at(log, 5.0) == {"a": 1, "b": 1, "c": 1}
    moved = sorted((a.job, a.machine, a.start, a.finish) for a in log.attempts if a.start < 5.0)
    assert moved == [
        ("a", "m2", 0.0, 5.0),
        ("b", "m3", 0.0, 5.0),
        ("d", "m1", 0.0, 5.0),
    ]
    restricted = _run("offline-restricted", cluster, jobs)
    assert next(r for r in restricted.jobs if r.job == "c").first_start == 100.0
    assert _running_at(restricted, 5.0) == {"a": 2, "b": 1}


@pytest.mark.parametrize("phase", ["demand", "reduce"])
def test_reference_schedulers_take_one_resource_and_one_size_per_job(phase: str) -> None:
    cluster = Cluster.build(["cpu", "mem"], [Machine("m", np.array([4.0, 4.0]))])
    two = np.array([1.0, 1.0])
    one = np.array([1.0, 0.0])
    job = (
        Job("j", 0.0, "j", two, 1, FixedDuration(1.0))
        if phase == "demand"
        else Job("j", 0.0, "j", one, 1, FixedDuration(1.0), reduce=ReducePhase(1, 0.0, 1.0, two))
    )
    policy = make_reference("offline-restricted", cluster)
    with pytest.raises(PolicyError) as info:
        simulate(cluster, [job], policy, seed=0)
    expected = "jobs 'j'.demand" if phase == "demand" else "jobs 'j'.reduce.demand"
    assert info.value.where == expected


class _Counted(Restricted):
    """offline-restricted's decisions, counted."""

    decisions = 0

    def decide(self, scheduler: ReferenceScheduler, out: list[Decision]) -> None:
        _Counted.decisions += 1
        super().decide(scheduler, out)


def test_a_scheduler_decides_through_its_registered_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each entry of REFERENCE_POLICIES names the Mode its scheduler decides by: a mode
    registered under a new name runs without any other change, and makes the decisions of
    the mode it extends."""
    assert {
        name: type(make_reference(name, _one_slot_cluster(1)).mode) for name in REFERENCE_POLICIES
    } == {
        "offline-restricted": Restricted,
        "offline-migration": Migration,
        "offline-preemption": Preemption,
        "periodic-offline": Periodic,
    }
    monkeypatch.setitem(
        REFERENCE_POLICIES,
        "counted",
        ReferencePolicy("counted", "offline-restricted, counted", "Choosy section 7.1", _Counted),
    )
    cluster = _one_slot_cluster(9)
    jobs = [_job(name, float(k), 10, 10.0, machines) for k, (name, machines) in enumerate(FIGURE_5)]
    counted = _run("counted", cluster, jobs)
    assert _Counted.decisions > 3
    restricted = _run("offline-restricted", cluster, jobs)
    assert counted.attempts == restricted.attempts and counted.jobs == restricted.jobs


def test_migration_with_several_task_sizes_keeps_running_tasks_it_cannot_repack() -> None:
    """One user (v) with jobs of two task sizes used to stop offline-migration with
    InvalidRequest ("the minimum shares do not fit"). At 1, u's <3> task takes m0 once one of
    v's <2> tasks moves to m1 (the migration); at 2, v's <1> job arrives with both machines
    full (m0: 2 + 3 of 5, m1: 3 x 2 of 6). The whole-cluster target keeps every running task,
    and the mixed-size packing (first-fit decreasing, largest first) fits only three of v's
    four 2s beside u's 3. The target is then not taken: the running tasks stay and
    the restricted step applies, so j2 starts as room frees up (three tasks when j1 ends at 3,
    the last at 4)."""
    cluster = Cluster.build(
        ["cpu"], [Machine("m0", np.array([5.0])), Machine("m1", np.array([6.0]))]
    )
    jobs = [
        Job("j0", 0.0, "v", np.array([2.0]), 4, FixedDuration(5.0)),
        Job("j1", 1.0, "u", np.array([3.0]), 1, FixedDuration(2.0)),
        Job("j2", 2.0, "v", np.array([1.0]), 4, FixedDuration(1.0)),
    ]
    log = _run("offline-migration", cluster, jobs)
    assert [(r.job, r.first_start, r.finish) for r in log.jobs] == [
        ("j0", 0.0, 5.0),
        ("j1", 1.0, 3.0),
        ("j2", 3.0, 5.0),
    ]
    moved = [(a.task, a.machine, a.start, a.finish) for a in log.attempts if a.job == "j0"]
    assert sorted(moved) == [
        (0, "m0", 0.0, 5.0),
        (1, "m0", 0.0, 1.0),
        (1, "m1", 1.0, 5.0),
        (2, "m1", 0.0, 5.0),
        (3, "m1", 0.0, 5.0),
    ]
    assert sorted(a.start for a in log.attempts if a.job == "j2") == [3.0, 3.0, 3.0, 4.0]
