"""Slurm's Fair Tree (``slurm-fairtree``, :mod:`fairshare.policies.slurm`) against Slurm's own
oracle: the test of Fair Tree in Slurm's test suite, the Fair Tree documentation's example,
and the issue's acceptance check (two backlogged accounts of shares 70 and 30 converge to 70/30
of the usage)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.policies import PolicyOptions, TaskRef, make_policy
from fairshare.policies.slurm import (
    NO_VAL,
    PRIORITY_DECAY_HALF_LIFE,
    SlurmFairTree,
    fair_tree,
)
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload.model import FixedDuration, Job, Queue, User

from conftest import scaled_examples

# SchedMD/slurm, testsuite/expect/test24.4.prog.c (the associations, in the order the program
# adds them: name, parent, Share (None: "parent"), raw usage) and testsuite/expect/test24.4
# (what `sshare -l -P` prints for them: NormShares, RawUsage, EffectvUsage, FairShare, Level
# FS; None where sshare prints nothing).
TEST24_4_TREE: list[tuple[str, str, float | None, float]] = [
    ("aA", "root", 40, 0),
    ("aAA", "aA", 30, 0),
    ("uAA1", "aAA", 1, 20),
    ("aAB", "aA", 10, 0),
    ("uAB1", "aAB", 1, 25),
    ("uAB2", "aAB", 1, 0),
    ("aB", "root", 60, 0),
    ("aBA", "aB", 25, 0),
    ("uBA1", "aBA", 1, 25),
    ("aBB", "aB", 35, 0),
    ("uBB1", "aBB", 1, 0),
    ("aC", "root", 0, 30),
    ("uC1", "aC", 0, 30),
    ("aD", "root", 50, 0),
    ("aDA", "aD", None, 35),
    ("uDA1", "aDA", None, 10),
    ("uDA2", "aDA", 30, 10),
    ("uDA3", "aDA", 50, 25),
    ("uD1", "aD", None, 20),
    ("uD2", "aD", 40, 20),
    ("uD3", "aD", 50, 25),
    ("aE", "root", 10, 0),
    ("aE1", "aE", 10, 0),
    ("aE2", "aE", 10, 0),
    ("u1", "root", 10, 0),
    ("aF", "root", 20, 0),
    ("uF1", "aF", 10, 0),
    ("uF2", "aF", 20, 0),
    ("aG", "root", 8, 20),
    ("uG1", "aG", 10, 10),
    ("aGA", "aG", 10, 10),
    ("uGA1", "aGA", 20, 4),
    ("uGA2", "aGA", 20, 6),
    ("u2", "root", 10, 10),
]
TEST24_4_USERS = {
    "uAA1", "uAB1", "uAB2", "uBA1", "uBB1", "uC1", "uDA1", "uDA2", "uDA3", "uD1", "uD2",
    "uD3", "aE1", "aE2", "u1", "uF1", "uF2", "uG1", "uGA1", "uGA2", "u2",
}  # fmt: skip
TEST24_4_SSHARE: dict[str, tuple[float, float, float, float | None, float | None]] = {
    "u1": (0.048077, 0, 0.000000, 1.000000, math.inf),
    "u2": (0.048077, 10, 0.041667, 0.666667, 1.153846),
    "aA": (0.192308, 45, 0.187500, None, 1.025641),
    "aAA": (0.750000, 20, 0.444444, None, 1.687500),
    "uAA1": (1.000000, 20, 1.000000, 0.619048, 1.000000),
    "aAB": (0.250000, 25, 0.555556, None, 0.450000),
    "uAB1": (0.500000, 25, 1.000000, 0.523810, 0.500000),
    "uAB2": (0.500000, 0, 0.000000, 0.571429, math.inf),
    "aB": (0.288462, 25, 0.104167, None, 2.769231),
    "aBA": (0.416667, 25, 1.000000, None, 0.416667),
    "uBA1": (1.000000, 25, 1.000000, 0.714286, 1.000000),
    "aBB": (0.583333, 0, 0.000000, None, math.inf),
    "uBB1": (1.000000, 0, 0.000000, 0.761905, math.inf),
    "aC": (0.000000, 30, 0.125000, None, 0.000000),
    "uC1": (0.000000, 30, 1.000000, 0.047619, 0.000000),
    "aD": (0.240385, 110, 0.458333, None, 0.524476),
    "uD1": (0.240385, 20, 0.181818, 0.476190, None),
    "uD2": (0.235294, 20, 0.181818, 0.238095, 1.294118),
    "uD3": (0.294118, 25, 0.227273, 0.333333, 1.294118),
    "aDA": (0.240385, 45, 0.409091, None, None),
    "uDA1": (0.240385, 10, 0.090909, 0.476190, None),
    "uDA2": (0.176471, 10, 0.090909, 0.380952, 1.941176),
    "uDA3": (0.294118, 25, 0.227273, 0.333333, 1.294118),
    "aE": (0.048077, 0, 0.000000, None, math.inf),
    "aE1": (0.500000, 0, 0.000000, 1.000000, math.inf),
    "aE2": (0.500000, 0, 0.000000, 1.000000, math.inf),
    "aF": (0.096154, 0, 0.000000, None, math.inf),
    "uF1": (0.333333, 0, 0.000000, 1.000000, math.inf),
    "uF2": (0.666667, 0, 0.000000, 1.000000, math.inf),
    "aG": (0.038462, 20, 0.083333, None, 0.461538),
    "uG1": (0.500000, 10, 0.500000, 0.190476, 1.000000),
    "aGA": (0.500000, 10, 0.500000, None, 1.000000),
    "uGA1": (0.500000, 4, 0.400000, 0.190476, 1.250000),
    "uGA2": (0.500000, 6, 0.600000, 0.095238, 0.833333),
}


def test_slurm_test24_4_fair_tree_sshare_values() -> None:
    """SchedMD/slurm ``testsuite/expect/test24.4`` ("Test of Fair Tree multifactor"): the
    association tree of ``test24.4.prog.c`` (general cases aA-aC, ``Share=parent`` in aD,
    ties in aE, aF and aG, users under the root) and every value its ``sshare -l`` prints:
    normalised shares, raw and effective usage, fair-share factor and level fairshare, to
    sshare's six decimals. Among them: uD2 and uD3 are not tied (their LF differ in the last
    bits), uDA3 and uD3 are; uGA1 shares uG1's rank through its tied account; aE's and aF's
    users and u1 all get 1.0."""
    index = {"root": 0}
    parent, shares, is_user, usage = [-1], [1.0], [False], [0.0]
    names = ["root"]
    for name, up, share, raw in TEST24_4_TREE:
        index[name] = len(parent)
        parent.append(index[up])
        shares.append(None if share is None else float(share))
        is_user.append(name in TEST24_4_USERS)
        usage.append(float(raw))
        names.append(name)
    tree = fair_tree(parent, shares, is_user, usage)
    assert sum(is_user) == 21
    for name, (norm, raw, efctv, factor, level) in TEST24_4_SSHARE.items():
        node = index[name]
        assert tree.shares_norm[node] == pytest.approx(norm, abs=5e-7), name
        assert tree.usage[node] == raw, name
        assert tree.usage_efctv[node] == pytest.approx(efctv, abs=5e-7), name
        if factor is None:
            assert math.isnan(tree.factor[node]), name
        else:
            assert tree.factor[node] == pytest.approx(factor, abs=5e-7), name
        if level is None:
            # sshare prints no Level FS for Share=parent: users get inf, accounts NO_VAL.
            assert tree.level_fs[node] == (math.inf if name in TEST24_4_USERS else NO_VAL)
        elif math.isinf(level):
            assert tree.level_fs[node] == math.inf, name
        else:
            assert tree.level_fs[node] == pytest.approx(level, abs=5e-7), name
    # The ranking itself: every user's rank out of 21, as test24.4 expects.
    ranks = {names[n]: round(tree.factor[n] * 21) for n in range(len(names)) if is_user[n]}
    assert ranks == {
        "u1": 21, "aE1": 21, "aE2": 21, "uF1": 21, "uF2": 21, "uBB1": 16, "uBA1": 15,
        "u2": 14, "uAA1": 13, "uAB2": 12, "uAB1": 11, "uD1": 10, "uDA1": 10, "uDA2": 8,
        "uD3": 7, "uDA3": 7, "uD2": 5, "uG1": 4, "uGA1": 4, "uGA2": 2, "uC1": 1,
    }  # fmt: skip


def test_tied_accounts_are_not_merged_as_in_fair_tree_c() -> None:
    """``fair_tree.c``'s ``_count_tied_accounts`` never counts a tied account (it stops at
    the first account), so tied sibling accounts are walked one after the other, not merged
    as ``fair_tree.html`` ("Ties", rule 3) says. Accounts A and B tie (LF 1.0); A's users a1
    (no usage: inf) and a2 (LF 0.5), B's user b1 (LF 1.0). Merged, the order would be a1,
    b1, a2; as the code runs, all of A's users rank before B's, and b1, the first user of the
    tied account, takes the rank of a2, the last ranked before it."""
    tree = fair_tree(
        parent=[-1, 0, 1, 1, 0, 4],
        shares=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        is_user=[False, False, True, True, False, True],
        usage=[0.0, 0.0, 0.0, 5.0, 0.0, 5.0],
    )
    # A and B: S = 1/2, U = 1/2, LF = 1.0 each (tied). A: a1 inf, a2 (1/2)/1 = 0.5; B: b1 1.0.
    assert tree.level_fs[1] == tree.level_fs[4] == 1.0
    assert [round(tree.factor[n] * 3) for n in (2, 3, 5)] == [3, 2, 2]


def _slots(count: int) -> Cluster:
    return Cluster.build(["cpu"], [Machine(f"m{i}", np.array([1.0])) for i in range(count)])


def test_fair_tree_docs_example_user_b_ranks_above_user_a() -> None:
    """``fair_tree.html``, "Overview for End Users": root => Acct1 => Acct12 => UserA and
    root => Acct1 => Acct16 => UserB; "If UserB has a higher FairShare value than UserA,
    Acct16 has a higher Level FS value than Acct12". UserA runs alone first; once UserB
    shows up both are backlogged, and at the next calculation Acct16 (less usage for equal
    shares) has the higher Level FS, UserB the higher FairShare, and UserB's jobs start
    first."""
    queues = [Queue("Acct1"), Queue("Acct1/Acct12"), Queue("Acct1/Acct16")]
    users = [
        User("UserA", np.array([1.0]), queue="Acct1/Acct12"),
        User("UserB", np.array([1.0]), queue="Acct1/Acct16"),
    ]
    policy = make_policy("slurm-fairtree", _slots(2), users=users, queues=queues)
    policy.job_submitted(0.0, 0, Job("a0", 0.0, "UserA", np.array([1.0]), 2, FixedDuration(400)))
    assert [d.task.job for d in policy.decide(0.0)] == [0, 0]
    policy.job_submitted(350.0, 1, Job("a1", 350.0, "UserA", np.array([1.0]), 2))
    policy.job_submitted(360.0, 2, Job("b1", 360.0, "UserB", np.array([1.0]), 2))
    assert policy.decide(360.0) == []
    policy.task_finished(400.0, TaskRef(0, "map", 0))
    policy.task_finished(400.0, TaskRef(0, "map", 1))
    assert [d.task.job for d in policy.decide(400.0)] == [2, 2]
    queues_fs, users_fs = policy.ranking.reported_shares()
    assert queues_fs["Acct1/Acct16"] > queues_fs["Acct1/Acct12"]
    assert users_fs == {"UserA": 0.5, "UserB": 1.0}
    assert queues_fs["Acct1"] == pytest.approx(1.0)  # alone under the root


def test_ranks_are_fixed_between_calculations() -> None:
    """``PriorityCalcPeriod``: the factors are calculated at the first decision of each 300 s
    period and not in between, so the user that led at t=0 keeps leading until t=300 however
    much it uses; at t=300 the other one leads."""
    users = [User("a", np.array([1.0])), User("b", np.array([1.0]))]
    policy = make_policy("slurm-fairtree", _slots(1), users=users)
    for i in range(4):
        policy.job_submitted(0.0, i, Job(f"a{i}", 0.0, "a", np.array([1.0]), 1, FixedDuration(100)))
    started = [d.task.job for d in policy.decide(0.0)]
    policy.job_submitted(1.0, 9, Job("b", 1.0, "b", np.array([1.0]), 1, FixedDuration(100)))
    started += [d.task.job for d in policy.decide(1.0)]
    for t in (100.0, 200.0, 300.0):
        policy.task_finished(t, TaskRef(started[-1], "map", 0))
        started += [d.task.job for d in policy.decide(t)]
    # a and b tie at t=0 (no usage: inf); a's jobs, submitted first, go first, and a keeps
    # its rank until the calculation at t=300, where b (no usage) leads.
    assert started == [0, 1, 2, 9]


def test_a_new_user_ranks_first_in_its_account_until_the_next_calculation() -> None:
    """A user that appears between two calculations has no usage, so Fair Tree ranks it first
    within its account: it takes the best factor of that account until the next calculation
    (:meth:`FairTreeRanking.on_new_user`)."""
    queues = [Queue("A", 1.0), Queue("B", 1.0)]
    users = [User("a1", np.array([1.0]), queue="A"), User("b1", np.array([1.0]), queue="B")]
    policy = make_policy("slurm-fairtree", _slots(2), users=users, queues=queues)
    policy.job_submitted(0.0, 0, Job("x", 0.0, "a1", np.array([1.0]), 1, FixedDuration(50)))
    policy.decide(0.0)
    policy.task_finished(50.0, TaskRef(0, "map", 0))
    policy.decide(50.0)
    policy.job_submitted(300.0, 1, Job("y", 300.0, "b1", np.array([1.0]), 1, FixedDuration(9)))
    policy.decide(300.0)  # the calculation: b1 (B has no usage) 1.0, a1 0.5
    assert isinstance(policy, SlurmFairTree)
    ranking = policy.fair_tree
    assert ranking.factor == [0.5, 1.0]
    policy.task_finished(309.0, TaskRef(1, "map", 0))
    policy.job_submitted(310.0, 2, Job("z", 310.0, "a2", np.array([1.0]), 1, queue="A"))
    assert ranking.factor == [0.5, 1.0, 0.5]  # a1's, the best in A
    policy.job_submitted(311.0, 3, Job("w", 311.0, "c1", np.array([1.0]), 1, queue="C"))
    assert ranking.factor[3] == 1.0  # a new account: the root's best
    policy.decide(600.0)
    # The calculation at t=600: C (no usage) first, then B (y ran 9 s: LF 2.2), then A
    # (x ran 50 s: LF 0.39), where a2 (no usage) goes before a1.
    assert ranking.factor == [0.25, 0.75, 0.5, 1.0]


def test_jobs_start_whole_with_easy_backfilling_by_default() -> None:
    """Slurm allocates a job all its nodes at once, and ``sched/backfill`` lets a later job
    start only where it does not delay the first waiting one. On 4 slots with 3 busy until
    t=100, v's 4-task job waits whole (nothing of it starts on the free slot) with a
    reservation of all 4 slots at t=100; of two later 1-task jobs, w's, expected to end by
    then (50 s), starts on the free slot, v's of 500 s waits."""
    users = [User("u", np.array([1.0])), User("v", np.array([1.0]))]
    policy = make_policy("slurm-fairtree", _slots(4), users=users)
    assert policy.options.backfill == "easy"
    policy.job_submitted(0.0, 0, Job("big", 0.0, "u", np.array([1.0]), 3, FixedDuration(100)))
    assert len(policy.decide(0.0)) == 3
    policy.job_submitted(1.0, 1, Job("gang", 1.0, "v", np.array([1.0]), 4, FixedDuration(10)))
    policy.job_submitted(2.0, 2, Job("long", 2.0, "v", np.array([1.0]), 1, FixedDuration(500)))
    policy.job_submitted(3.0, 3, Job("short", 3.0, "w", np.array([1.0]), 1, FixedDuration(50)))
    assert [d.task.job for d in policy.decide(3.0)] == [3]
    reservation = policy.reservation
    assert reservation is not None and reservation.start == 100.0


def test_a_job_its_machines_never_hold_is_rejected() -> None:
    """Slurm refuses at submission a job no configuration of its nodes can hold ("Requested
    node configuration is not available"): a 5-task job on 4 slots leaves at once, waits as
    no gang, and the jobs after it run."""
    policy = make_policy("slurm-fairtree", _slots(4))
    policy.job_submitted(0.0, 0, Job("huge", 0.0, "u", np.array([1.0]), 5))
    policy.job_submitted(0.0, 1, Job("fits", 0.0, "u", np.array([1.0]), 4))
    assert list(policy.gangs) == [1]  # only the one that fits waits
    assert [d.task.job for d in policy.decide(0.0)] == [1, 1, 1, 1]
    assert policy.reservation is None


def test_an_explicit_option_is_kept() -> None:
    """The caller's own settings win: ``min_tasks`` of a job, and the half-life."""
    options = PolicyOptions(usage_half_life=60.0)
    policy = make_policy("slurm-fairtree", _slots(4), options=options)
    assert policy.ledger.resource_usage is not None
    assert policy.ledger.resource_usage.half_life == 60.0
    policy.job_submitted(0.0, 0, Job("x", 0.0, "u", np.array([1.0]), 6, min_tasks=2))
    assert len(policy.decide(0.0)) == 4  # a gang of 2, the rest as room allows
    default = make_policy("slurm-fairtree", _slots(1))
    assert default.ledger.resource_usage is not None
    assert default.ledger.resource_usage.half_life == PRIORITY_DECAY_HALF_LIFE


def test_billing_counts_cpus() -> None:
    """Slurm bills a job its CPUs when ``TRESBillingWeights`` is unset: on <cpu, mem>, a user
    holding much memory and few CPUs has less usage than one holding many CPUs."""
    cluster = Cluster.build(["mem", "cpu"], [Machine("m", np.array([100.0, 10.0]))])
    users = [User("heavy-mem", np.array([90.0, 1.0])), User("cpus", np.array([1.0, 5.0]))]
    policy = make_policy("slurm-fairtree", cluster, users=users)
    policy.job_submitted(0.0, 0, Job("x", 0.0, "heavy-mem", np.array([90.0, 1.0]), 1))
    policy.job_submitted(0.0, 1, Job("y", 0.0, "cpus", np.array([1.0, 5.0]), 1))
    policy.decide(0.0)
    policy.decide(300.0)
    _, factors = policy.ranking.reported_shares()
    assert factors == {"heavy-mem": 1.0, "cpus": 0.5}


def _cpu_seconds(log: RunLog, start: float, end: float) -> dict[str, float]:
    used: dict[str, float] = {}
    for a in log.attempts:
        overlap = min(a.finish, end) - max(a.start, start)
        if overlap > 0:
            used[a.user] = used.get(a.user, 0.0) + overlap
    return used


def test_backlogged_accounts_70_30_converge_to_70_30_of_usage() -> None:
    """Issue 28's acceptance: accounts of shares 70 and 30, each with a user that always has
    short jobs waiting (60 s, one CPU), on 10 CPUs for 2 days. Fair Tree gives the whole
    cluster to the account whose usage is below its share at each calculation (every 300 s),
    so its cumulative usage tracks 70/30: at each calculation the leader is the one below its
    target, and between two it can gain at most one period plus one job's length of the
    whole cluster (360 s x 10 CPUs), against the 0.86 million CPU seconds counted by the
    second day. Over the second day the fraction of CPU seconds of account A is 0.70 within
    0.01 (the bound's 2 x 3,600 / 864,000 = 0.008, rounded up)."""
    cluster = Cluster.build(["cpu"], [Machine(f"m{i}", np.array([1.0])) for i in range(10)])
    queues = [Queue("A", 70.0), Queue("B", 30.0)]
    users = [User("a", np.array([1.0]), queue="A"), User("b", np.array([1.0]), queue="B")]
    day = 86400.0
    per_user = int(2 * day / 60.0 * 10)  # as many as the cluster runs: both backlogged
    jobs = []
    for i in range(per_user):
        for name in ("a", "b"):
            jobs.append(Job(f"{name}{i}", 0.0, name, np.array([1.0]), 1, FixedDuration(60.0)))
    log = simulate(
        cluster,
        jobs,
        "slurm-fairtree",
        seed=1,
        users=users,
        queues=queues,
        options=SimOptions(until=2 * day),
    )
    used = _cpu_seconds(log, day, 2 * day)
    total = used["a"] + used["b"]
    assert total == pytest.approx(10 * day, rel=1e-6)  # busy all day
    assert used["a"] / total == pytest.approx(0.70, abs=0.01)


@st.composite
def _trees(draw: st.DrawFn) -> tuple[list[int], list[float | None], list[bool], list[float]]:
    """Random association trees: accounts and users, shares (some 0 or parent), usages (some
    0, some equal)."""
    parent, shares, is_user, usage = [-1], [1.0], [False], [0.0]
    accounts = [0]
    for _ in range(draw(st.integers(1, 25))):
        up = draw(st.sampled_from(accounts))
        user = draw(st.booleans())
        share = draw(st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.0, 5.0])))
        parent.append(up)
        shares.append(share)
        is_user.append(user)
        usage.append(draw(st.sampled_from([0.0, 1.0, 2.0, 3.5])) if user else 0.0)
        if not user:
            accounts.append(len(parent) - 1)
    return parent, shares, is_user, usage


def _fs_parent(parent: Sequence[int], shares: Sequence[float | None], node: int) -> int:
    p = parent[node]
    while p > 0 and shares[p] is None:
        p = parent[p]
    return p


@given(_trees())
@example(  # found by Hypothesis: account 7 ties with the empty account 6
    (
        [-1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4],
        [1.0, None, None, None, 1.0, None, 0.0, 0.0, *[None] * 9, 0.0],
        [i in (5, 8, 17) for i in range(18)],
        [0.0] * 18,
    )
)
@settings(max_examples=scaled_examples(200), deadline=None)
def test_a_better_sibling_account_ranks_all_its_users_higher(
    case: tuple[list[int], list[float | None], list[bool], list[float]],
) -> None:
    """``fair_tree.html``'s promise: "if accounts A and B are siblings and A has a higher
    fairshare factor [Level FS] than B, all children of A will have higher fairshare factors
    than all children of B"; and factors are ranks over the users, the best 1.0."""
    parent, shares, is_user, usage = case
    tree = fair_tree(parent, shares, is_user, usage)
    n = len(parent)
    users = [i for i in range(n) if is_user[i]]
    if not users:
        return
    assert max(tree.factor[u] for u in users) == 1.0
    for u in users:
        assert round(tree.factor[u] * len(users), 9) % 1 == 0
        assert 0 < tree.factor[u] <= 1

    def below(account: int) -> list[int]:
        out = []
        for u in users:
            p = _fs_parent(parent, shares, u)
            while p > 0 and p != account:
                p = _fs_parent(parent, shares, p)
            if p == account:
                out.append(u)
        return out

    def tied_with_an_empty_account(b: int) -> bool:
        """Whether a sibling account with ``b``'s level FS has no users below it: fair_tree.c
        then carries the tie into ``b`` and its first user keeps the rank last given."""
        return any(
            c != b
            and not is_user[c]
            and shares[c] is not None
            and _fs_parent(parent, shares, c) == _fs_parent(parent, shares, b)
            and tree.level_fs[c] == tree.level_fs[b]
            and not below(c)
            for c in range(1, n)
        )

    for a in range(1, n):
        for b in range(1, n):
            if (
                is_user[a]
                or is_user[b]
                or shares[a] is None
                or shares[b] is None
                or _fs_parent(parent, shares, a) != _fs_parent(parent, shares, b)
                or not tree.level_fs[a] > tree.level_fs[b]
            ):
                continue
            for x in below(a):
                for y in below(b):
                    if (shares[x] is None and shares[y] is None) or tied_with_an_empty_account(b):
                        # Share=parent users carry fair_tree.c's NO_VAL level FS, and the
                        # code ties consecutive equal values across accounts (the rank moves
                        # only when the level FS does): the docs' promise is for users with
                        # shares of their own, under accounts not tied with an empty one
                        # (test_a_tie_with_an_empty_account_carries_the_last_rank).
                        assert tree.factor[x] >= tree.factor[y]
                    else:
                        assert tree.factor[x] > tree.factor[y]


def test_a_tie_with_an_empty_account_carries_the_last_rank() -> None:
    """What SchedMD/slurm src/plugins/priority/multifactor/fair_tree.c does where the Fair
    Tree page's promise ("all children of A will have higher fairshare factors than all
    children of B") does not hold. Under root: account x (share 1, no usage: level FS inf)
    with user u0 (share 0), a Share=parent user u1 (level FS inf), an empty account e and
    account b (both share 0: level FS 0) with a Share=parent user u2. _calc_tree_fs ties b
    with e (equal level FS) and _count_tied_accounts never merges accounts (its loop stops at
    the first account), so u2, b's first child, is tied and keeps the rank last given, u1's
    and u0's: all three users get the factor 1.0, u2 as high as u0 although x ranks above
    b. (Hypothesis found it; the property test above allows it.)"""
    parent = [-1, 0, 1, 0, 0, 0, 5]
    shares: list[float | None] = [1.0, 1.0, 0.0, None, 0.0, 0.0, None]
    is_user = [False, False, True, True, False, False, True]
    tree = fair_tree(parent, shares, is_user, [0.0] * 7)
    assert [tree.level_fs[i] for i in (1, 3, 4, 5)] == [math.inf, math.inf, 0.0, 0.0]
    assert [tree.factor[u] for u in (2, 3, 6)] == [1.0, 1.0, 1.0]
