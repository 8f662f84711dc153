"""Policy ``kueue`` against Kueue's own suites (the oracle): the dominant resource shares of
``pkg/cache/scheduler/fair_sharing_test.go`` (``TestDominantResourceShare``), and the
admissions, preemptions and weighted shares of
``test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go``, each replayed
from a fixture of Kueue objects (``tests/data/kueue/``) imported with ``fairshare import
kueue`` and simulated (kubernetes-sigs/kueue)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.policies import PolicyOptions, make_policy
from fairshare.policies.kueue import KueueRanking
from fairshare.policies.kueue_tree import KueueTree
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload import ScenarioError, parse_scenario
from fairshare.workload.imports.kueue import read_kueue
from fairshare.workload.model import MIN_WEIGHT, FixedDuration, Job, Queue, QueuePreemption

from conftest import scaled_examples

DATA = Path(__file__).resolve().parent / "data" / "kueue"


# ------------------------------------------------------------------ dominant resource share


def _lending_pair(
    cq_quota: tuple[float, ...], lender: tuple[float, ...], weight: float = 1.0
) -> KueueTree:
    """TestDominantResourceShare's "test-cohort": ``cq`` beside ``lending-cq``."""
    total = tuple(a + b for a, b in zip(cq_quota, lender, strict=True))
    return KueueTree(
        [
            Queue("test-cohort", quota=total),
            Queue("test-cohort/cq", weight=weight, quota=cq_quota),
            Queue("test-cohort/lending-cq", quota=lender),
        ],
        ("cpu", "gpu")[: len(cq_quota)],
    )


def _shares(tree: KueueTree, usage: list[float]) -> dict[str, int | float]:
    rows = tree.usage({tree.index["test-cohort/cq"]: usage})
    return {path: tree.drs(i, rows).per_mille for i, path in enumerate(tree.paths)}


@pytest.mark.parametrize(
    ("case", "cq", "lender", "usage", "weight", "expected"),
    [
        # (7 - 5) * 1000 / 10 = 200 on the GPUs, (3 - 2) * 1000 / 10 = 100 on the CPUs.
        ("usage above nominal", (2.0, 5.0), (8.0, 5.0), [3.0, 7.0], 1.0, 200),
        ("one resource above nominal", (2.0, 5.0), (8.0, 5.0), [3.0, 3.0], 1.0, 100),
        ("usage below nominal", (2.0, 5.0), (8.0, 5.0), [1.0, 2.0], 1.0, 0),
        ("above nominal with integer weight", (2.0, 5.0), (8.0, 5.0), [0.0, 7.0], 2.0, 100),
        ("above nominal with decimal weight", (2.0, 5.0), (8.0, 5.0), [0.0, 7.0], 0.5, 400),
        # Kueue's weight 0 (the scenario's MIN_WEIGHT): an infinite share (math.MaxInt).
        (
            "above nominal with zero weight",
            (2.0, 5.0),
            (8.0, 5.0),
            [0.0, 7.0],
            MIN_WEIGHT,
            math.inf,
        ),
        # 1 * 1000 / 1500 = 0.67, rounded up as Kueue rounds weightedShare.
        (
            "usage slightly above nominal in a cohort with large quotas",
            (0.0, 500.0),
            (0.0, 1000.0),
            [0.0, 501.0],
            1.0,
            1,
        ),
    ],
)
def test_dominant_resource_share_matches_kueues_unit_cases(
    case: str,
    cq: tuple[float, ...],
    lender: tuple[float, ...],
    usage: list[float],
    weight: float,
    expected: float,
) -> None:
    """kubernetes-sigs/kueue pkg/cache/scheduler/fair_sharing_test.go,
    TestDominantResourceShare, the case named ``case``: the ClusterQueue's weighted share in
    per mille; the lender and the cohort stay at 0."""
    shares = _shares(_lending_pair(cq, lender, weight), usage)
    assert shares == {"test-cohort": 0, "test-cohort/cq": expected, "test-cohort/lending-cq": 0}


def test_dominant_resource_share_of_hierarchical_cohorts() -> None:
    """TestDominantResourceShare, "cohort has resource share": cq (5 GPUs) under child-cohort
    (weight 2) under root (45 GPUs of its own) uses 10: it borrows 5 of the 50 its cohort
    could lend (100), child-cohort 5 of root's 50 over its weight (50); and "resource share
    affected by borrowing limit": with no quota and child-cohort's borrowing limit of 10, cq
    borrows 10 of 10 (1000) and child-cohort 10 of 50 (200)."""
    tree = KueueTree(
        [
            Queue("root", quota=(50.0,)),
            Queue("root/child-cohort", weight=2.0),
            Queue("root/child-cohort/cq", quota=(5.0,)),
        ],
        ("gpu",),
    )
    rows = tree.usage({tree.index["root/child-cohort/cq"]: [10.0]})
    assert [tree.drs(i, rows).per_mille for i in range(3)] == [0, 50, 100]
    limited = KueueTree(
        [
            Queue("root", quota=(50.0,)),
            Queue("root/child-cohort", quota=(0.0,), borrowing_limit=(10.0,)),
            Queue("root/child-cohort/cq", quota=(0.0,)),
        ],
        ("gpu",),
    )
    rows = limited.usage({limited.index["root/child-cohort/cq"]: [10.0]})
    assert [limited.drs(i, rows).per_mille for i in range(3)] == [0, 200, 1000]


def test_flavors_of_a_resource_add_up_in_the_share() -> None:
    """Kueue sums a resource's flavors (``calculateLendable`` per resource name): 3 CPUs
    borrowed on flavor a of the 10 lendable on a and b together is 300, not 600."""
    tree = KueueTree(
        [
            Queue("co", quota=(5.0, 5.0)),
            Queue("co/cq", quota=(0.0, 0.0)),
            Queue("co/lender", quota=(5.0, 5.0)),
        ],
        ("cpu@a", "cpu@b"),
    )
    rows = tree.usage({tree.index["co/cq"]: [3.0, 0.0]})
    assert tree.drs(tree.index["co/cq"], rows).per_mille == 300


def test_available_respects_lending_and_borrowing_limits() -> None:
    """Kueue's ``available``: a lender keeps its quota above the lending limit; a borrower
    stops at its borrowing limit; a ClusterQueue with no cohort cannot borrow."""
    tree = KueueTree(
        [
            Queue("co", quota=(10.0,)),
            Queue("co/a", quota=(4.0,), borrowing_limit=(2.0,)),
            Queue("co/b", quota=(6.0,), lending_limit=(1.0,)),
            Queue("alone", quota=(3.0,)),
        ],
        ("cpu",),
    )
    rows = tree.usage({})
    a, b, alone = tree.index["co/a"], tree.index["co/b"], tree.index["alone"]
    assert tree.available(rows, a, 0) == 5.0  # 4 + the 1 b lends (the limit would allow 2)
    assert tree.available(rows, b, 0) == 10.0  # its 6 + a's 4
    assert tree.available(rows, alone, 0) == 3.0


# ------------------------------------------------------------------ Kueue's integration cases


def _job(name: str, user: str, submit: float, duration: float, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "user": f"core/{user}",
        "submit": submit,
        "duration": duration,
        "tasks": extra.pop("tasks", 1),
        "demand": {"cpu": extra.pop("cpu", 1)},
        **extra,
    }


def _run(
    fixture: str,
    jobs: list[dict[str, Any]],
    until: float,
    policy: str = "kueue",
    half_life: float | None = None,
    capacity: float | None = None,
) -> tuple[RunLog, KueueRanking]:
    """Import ``fixture`` as ``fairshare import kueue`` does, add ``jobs``, simulate until
    ``until`` (on one machine of ``capacity`` CPUs instead of the imported ones, if given);
    the log and the policy's ranking (its shares at the last event)."""
    imported = read_kueue([str(DATA / fixture)])
    data = {**imported.scenario, "jobs": jobs}
    if capacity is not None:
        data["machines"] = [{"name": "big", "capacity": {"cpu": capacity}}]
    scenario = parse_scenario(data, source=fixture)
    options = PolicyOptions(usage_half_life=half_life)
    kueue = make_policy(
        policy, scenario.cluster, users=scenario.users, queues=scenario.queues, options=options
    )
    log = simulate(
        scenario.cluster,
        scenario.jobs,
        kueue,
        seed=0,
        users=scenario.users,
        queues=scenario.queues,
        options=SimOptions(until=until),
    )
    assert isinstance(kueue.ranking, KueueRanking)
    return log, kueue.ranking


def _running(log: RunLog, t: float) -> dict[str, int]:
    """Running tasks (here: admitted one-task workloads) per LocalQueue at time ``t``."""
    out: dict[str, int] = {}
    for a in log.attempts:
        if a.start <= t < a.finish or (a.truncated and a.start <= t <= a.finish):
            name = a.user.removeprefix("core/")
            out[name] = out.get(name, 0) + 1
    return out


def _kills(log: RunLog) -> dict[str, int]:
    out: dict[str, int] = {}
    for a in log.attempts:
        if a.killed:
            name = a.user.removeprefix("core/")
            out[name] = out.get(name, 0) + 1
    return out


def test_flat_cohort_without_preemption_shares_freed_quota_fairly() -> None:
    """fair_sharing_test.go, "Preemption is disabled" / "Admits workloads respecting fair
    share": a (3 CPUs) takes 8 of the cohort's 8 (weighted share 625); b's 5 newer workloads
    wait; as a's workloads finish one by one, b gets three (its share after admission is
    lower), then a one (equal shares, a's workload is older): 5 and 3, shares 250 and 250;
    two more finish: 4 and 4, shares 125 and 375."""
    jobs = [_job(f"a{i}", "a", 0, (i + 1) * 10 if i < 6 else 1000) for i in range(10)]
    jobs += [_job(f"b{i}", "b", 1, 1000) for i in range(5)]
    log, ranking = _run("flat_no_preemption.yaml", jobs, until=65)
    assert _running(log, 5) == {"a": 8}
    assert _running(log, 15) == {"a": 7, "b": 1}
    assert _running(log, 25) == {"a": 6, "b": 2}
    assert _running(log, 35) == {"a": 5, "b": 3}
    assert _running(log, 45) == {"a": 5, "b": 3}
    assert _running(log, 62) == {"a": 4, "b": 4}
    queues, _ = ranking.reported_shares()
    assert queues == {"all": 0.0, "all/a": 125.0, "all/b": 375.0, "all/shared": 0.0}
    assert not _kills(log)


def test_flat_cohort_with_preemption_reclaims_to_the_fair_share() -> None:
    """fair_sharing_test.go, "Preemption is enabled" / "Admits workloads respecting fair
    share": a takes 9 of 9 CPUs (share 667); b's 5 workloads preempt 4 of a's (b within its
    quota, then LessThanOrEqualToFinalShare) and stop at 5 and 4 (shares 2/9 and 1/9); c's
    one workload preempts one more of a's, the ClusterQueue with the highest share: a's
    weightedShare is 112."""
    jobs = [_job(f"a{i}", "a", 0, 1000) for i in range(10)]
    jobs += [_job(f"b{i}", "b", 10, 1000) for i in range(5)]
    jobs += [_job("c0", "c", 20, 1000)]
    log, ranking = _run("flat_preemption.yaml", jobs, until=30)
    assert _running(log, 5) == {"a": 9}
    assert _running(log, 15) == {"a": 5, "b": 4}
    assert _running(log, 25) == {"a": 4, "b": 4, "c": 1}
    assert _kills(log) == {"a": 5}
    queues, _ = ranking.reported_shares()
    assert queues == {"all": 0.0, "all/a": 112.0, "all/b": 112.0, "all/c": 0.0}


def test_the_same_cohort_without_preemption_settings_preempts_nothing() -> None:
    """The flat cohort of the previous test with Kueue's default preemption (never): b waits
    for a's workloads instead of preempting them."""
    imported = read_kueue([str(DATA / "flat_preemption.yaml")])
    for queue in imported.scenario["queues"]:
        queue.pop("preemption", None)
    jobs = [_job(f"a{i}", "a", 0, 1000) for i in range(10)]
    jobs += [_job(f"b{i}", "b", 10, 1000) for i in range(5)]
    scenario = parse_scenario({**imported.scenario, "jobs": jobs}, source="no-preemption")
    log = simulate(
        scenario.cluster,
        scenario.jobs,
        "kueue",
        seed=0,
        queues=scenario.queues,
        users=scenario.users,
        options=SimOptions(until=30),
    )
    assert _running(log, 15) == {"a": 9}
    assert not _kills(log)


def test_hierarchical_cohorts_share_by_level() -> None:
    """fair_sharing_test.go, "using hierarchical cohorts" / "admits workloads respecting fair
    share": two ClusterQueues of 2 CPUs two levels below root, beside a bank of 10: each
    admits 5; first-left's weighted share is 6/14 (429), second-left's and second-right's
    3/14 (215), first-right's and bank's 0."""
    jobs: list[dict[str, Any]] = []
    for i in range(5):
        jobs += [_job(f"l{i}", "second-left", 0, 1000), _job(f"r{i}", "second-right", 0, 1000)]
    log, ranking = _run("hierarchical.yaml", jobs, until=10)
    assert _running(log, 5) == {"second-left": 5, "second-right": 5}
    queues, _ = ranking.reported_shares()
    assert queues["root/first-left"] == 429.0
    assert queues["root/first-left/second-left"] == 215.0
    assert queues["root/first-left/second-right"] == 215.0
    assert queues["root/first-right"] == 0.0
    assert queues["root/first-right/bank"] == 0.0


def test_hierarchical_cohorts_with_weights_and_priorities_preempt_to_fair_shares() -> None:
    """fair_sharing_test.go, "using hierarchical cohorts" / "preempts workloads to enforce
    fair share": best-effort (weight 0.5) and physics fill root's 12 CPUs at priority -1;
    six priority-100 workloads per ClusterQueue then preempt 2 of best-effort's and 4 of
    physics': best-effort 4, chemistry 2, physics 2, llm (weight 2) 4; shares best-effort
    4/12/0.5, research 8/12, chemistry and physics 2/12, llm 4/12/2."""
    jobs: list[dict[str, Any]] = []
    for i in range(6):
        jobs += [
            _job(f"be{i}", "best-effort-queue", 0, 1000, priority=-1),
            _job(f"ph{i}", "physics-queue", 0, 1000, priority=-1),
        ]
    for i in range(6):
        for queue in ("chemistry-queue", "physics-queue", "llm-queue", "best-effort-queue"):
            jobs.append(_job(f"hi-{queue}-{i}", queue, 10, 1000, priority=100))
    log, ranking = _run("hierarchical_preemption.yaml", jobs, until=20)
    assert _running(log, 5) == {"best-effort-queue": 6, "physics-queue": 6}
    assert _running(log, 15) == {
        "best-effort-queue": 4,
        "chemistry-queue": 2,
        "physics-queue": 2,
        "llm-queue": 4,
    }
    assert _kills(log) == {"best-effort-queue": 2, "physics-queue": 4}
    queues, _ = ranking.reported_shares()
    assert queues["root/best-effort"] == 667.0  # ceil(4 * 1000 / 12 / 0.5)
    assert queues["root/research"] == 667.0  # ceil(8 * 1000 / 12)
    assert queues["root/research/chemistry"] == 167.0
    assert queues["root/research/physics"] == 167.0
    assert queues["root/research/llm"] == 167.0  # ceil(4 * 1000 / 12 / 2)


def test_admission_fair_sharing_prefers_the_less_active_local_queue() -> None:
    """fair_sharing_test.go, "Using AdmissionFairSharing at ClusterQueue level" /
    "prioritizes workloads from less active LocalQueues to maintain fairness": lq-a fills
    cq1's 8 CPUs and queues two more; lq-b queues one later; when lq-a's first two finish,
    lq-b's workload is admitted before lq-a's older ones (without a usage half-life, FIFO
    admits lq-a's)."""
    jobs = [
        _job("a1", "lq-a", 0, 100, cpu=4),
        _job("a2", "lq-a", 0, 100, cpu=4),
        _job("a3", "lq-a", 1, 100, cpu=4),
        _job("a4", "lq-a", 1, 100, cpu=4),
        _job("b1", "lq-b", 2, 100, cpu=4),
    ]
    log, ranking = _run("admission_fair_sharing.yaml", jobs, until=150, half_life=1.0)
    starts = {a.job: a.start for a in log.attempts}
    assert starts == {"a1": 0.0, "a2": 0.0, "a3": 100.0, "b1": 100.0}
    _, users = ranking.reported_shares()
    assert users["core/lq-c"] == 0.0 and users["core/lq-a"] > 3.9
    fifo, _ = _run("admission_fair_sharing.yaml", jobs, until=150)
    assert {a.job: a.start for a in fifo.attempts} == {
        "a1": 0.0,
        "a2": 0.0,
        "a3": 100.0,
        "a4": 100.0,
    }


def test_admission_fair_sharing_after_quota_is_released() -> None:
    """fair_sharing_test.go, "Using AdmissionFairSharing at ClusterQueue level" / "admits
    workloads from less active LocalQueues after quota is released": lq-a's two workloads
    end at 100 and 200; lq-b (older) gets the first room, then lq-c, whose usage is lower."""
    jobs = [
        _job("wl1", "lq-a", 0, 100, cpu=4),
        _job("wl2", "lq-a", 0, 200, cpu=4),
        _job("b1", "lq-b", 1, 1000, cpu=4),
        _job("b2", "lq-b", 1, 1000, cpu=4),
        _job("c1", "lq-c", 2, 1000, cpu=4),
    ]
    log, _ = _run("admission_fair_sharing.yaml", jobs, until=250, half_life=1.0)
    assert {a.job: a.start for a in log.attempts} == {
        "wl1": 0.0,
        "wl2": 0.0,
        "b1": 100.0,
        "c1": 200.0,
    }


# ------------------------------------------------------------------ mechanics


def test_a_workload_is_admitted_whole_or_not_at_all() -> None:
    """Kueue admits a workload's pods together: a 6-task job waits while a 5-task one holds 5
    of its ClusterQueue's 6 CPUs (the machine has 10), then starts all 6 at once."""
    cluster = Cluster.build(["cpu"], [Machine("m", np.array([10.0]))])
    queues = [Queue("cq", quota=(6.0,))]
    jobs = [
        Job("small", 0.0, "lq", np.ones(1), 5, FixedDuration(10.0), queue="cq"),
        Job("big", 1.0, "lq", np.ones(1), 6, FixedDuration(10.0), queue="cq"),
    ]
    log = simulate(cluster, jobs, "kueue", seed=0, queues=queues)
    starts = sorted({a.start for a in log.attempts if a.job == "big"})
    assert starts == [10.0]


def test_classical_kueue_reclaims_within_its_quota() -> None:
    """Without fair sharing (``kueue-classical``) a ClusterQueue that reclaims its nominal
    quota preempts the borrower's most recent workloads, then nothing more (Kueue's
    classical preemption: ``pkg/scheduler/preemption/preemption_test.go``, "reclaim quota
    from borrower")."""
    cluster = Cluster.build(["cpu"], [Machine("m", np.array([6.0]))])
    reclaim = QueuePreemption(reclaim_within_cohort="any")
    queues = [
        Queue("co", quota=(6.0,)),
        Queue("co/a", quota=(3.0,), preemption=reclaim),
        Queue("co/b", quota=(3.0,), preemption=reclaim),
    ]
    jobs = [
        Job(f"a{i}", 0.0, "lq-a", np.ones(1), 1, FixedDuration(100.0), queue="co/a")
        for i in range(6)
    ]
    jobs += [
        Job(f"b{i}", 5.0, "lq-b", np.ones(1), 1, FixedDuration(100.0), queue="co/b")
        for i in range(4)
    ]
    log = simulate(
        cluster, jobs, "kueue-classical", seed=0, queues=queues, options=SimOptions(until=10)
    )
    killed = sorted(a.job for a in log.attempts if a.killed)
    assert killed == ["a3", "a4", "a5"]
    assert _running(log, 6.0) == {"lq-a": 3, "lq-b": 3}


def test_import_rejects_a_bad_fixture_with_one_located_error(tmp_path: Path) -> None:
    """A LocalQueue naming a missing ClusterQueue: one error naming the file, the document
    and the field."""
    path = tmp_path / "bad.yaml"
    path.write_text(
        "kind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: nope}\n"
    )
    with pytest.raises(ScenarioError) as err:
        read_kueue([str(path)])
    assert err.value.where == "document 1 (LocalQueue 'lq') spec.clusterQueue"
    assert "nope" in err.value.what


@st.composite
def _kueue_runs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    """Random jobs on the flat cohort with preemption (3 ClusterQueues of 3 CPUs): sizes,
    priorities, arrivals and durations drawn; either policy."""
    jobs = []
    for i in range(draw(st.integers(1, 14))):
        jobs.append(
            _job(
                f"j{i}",
                draw(st.sampled_from(["a", "b", "c"])),
                draw(st.sampled_from([0.0, 1.0, 5.0, 20.0])),
                draw(st.sampled_from([3.0, 10.0, 50.0])),
                tasks=draw(st.integers(1, 4)),
                priority=draw(st.sampled_from([0, 0, 5])),
            )
        )
    jobs.sort(key=lambda job: job["submit"])
    return jobs, draw(st.sampled_from(["kueue", "kueue-classical"]))


@settings(max_examples=scaled_examples(60), deadline=None)
@given(_kueue_runs())
def test_jobs_start_whole_and_the_cohort_never_exceeds_its_quota(
    case: tuple[list[dict[str, Any]], str],
) -> None:
    """On a machine of 20 CPUs, so that only the quotas bind: every job's tasks start
    together (Kueue admits a workload whole), the three ClusterQueues together never hold
    more than their cohort's 9 CPUs, and every job finishes."""
    jobs, policy = case
    log, _ = _run("flat_preemption.yaml", jobs, until=1e6, policy=policy, capacity=20.0)
    assert all(record.finish is not None for record in log.jobs)
    points = sorted({a.start for a in log.attempts} | {a.finish for a in log.attempts})
    for t in points:
        assert sum(_running(log, t).values()) <= 9
    for record in log.jobs:
        attempts = [a for a in log.attempts if a.job == record.job]
        by_attempt: dict[int, set[float]] = {}
        for a in attempts:
            by_attempt.setdefault(a.attempt, set()).add(a.start)
        assert all(len(starts) == 1 for starts in by_attempt.values()), record.job
        kills = {a.finish for a in attempts if a.killed}
        assert len(kills) <= len(by_attempt)
