"""Priorities under H-DRF (issue 18): Algorithm 4's walk prefers, at each level, the child
holding the highest-priority pending work in a group that fits the machine, then the H-DRF
order (:func:`fairshare.policies.hdrf_views.highest_then_lowest`), so that priorities between
queues work for ``hdrf`` and ``naive-hdrf`` as they do for the flat policies (the tier of the
shared scheduler's group heap entries)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import fairshare
from fairshare.policies.hdrf import Hdrf, NaiveHdrf
from fairshare.policies.ranking import NO_PICK, Pick
from fairshare.policies.state import EPS, fits
from fairshare.runlog import RunLog
from fairshare.sim.engine import simulate
from fairshare.workload import parse_scenario
from test_hdrf_online import OPTIONS, ReferenceNaiveHdrf, ReferenceTree, _case, _postorder

HDRF_POLICIES = ("hdrf", "naive-hdrf")


def _run(jobs: list[dict[str, Any]], policy: str, **scenario: Any) -> RunLog:
    parsed = parse_scenario(
        {
            "machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}],
            "jobs": jobs,
            **scenario,
        },
        source="hdrf-priority-test",
    )
    return fairshare.simulate(parsed, policy).log


def _first_start(log: RunLog, job: str) -> float | None:
    return next(j.first_start for j in log.jobs if j.job == job)


@pytest.mark.parametrize("policy", HDRF_POLICIES)
def test_a_higher_priority_queue_is_served_before_a_lower_share(policy: str) -> None:
    # Queue b's user holds all four slots; when they free, queue a (share 0) would go first
    # by H-DRF's order; b's priority-3 job goes first.
    jobs = [
        {"name": "b0", "submit": 0, "user": "ub", "queue": "b/y", "tasks": 4, "duration": 10},
        {"name": "a1", "submit": 1, "user": "ua", "queue": "a/x", "tasks": 4, "duration": 10},
        {
            "name": "b1",
            "submit": 2,
            "user": "ub",
            "queue": "b/y",
            "tasks": 4,
            "duration": 10,
            "priority": 3,
        },
    ]
    queues = [{"path": p} for p in ("a", "a/x", "b", "b/y")]
    log = _run(jobs, policy, queues=queues)
    assert _first_start(log, "b1") == 10.0
    assert _first_start(log, "a1") == 20.0


@pytest.mark.parametrize("policy", HDRF_POLICIES)
def test_without_priorities_the_queues_share_the_freed_slots(policy: str) -> None:
    # The same run with b1 at priority 0: H-DRF's order serves queue a (share 0) first, and
    # the two queues end with two slots each.
    jobs = [
        {"name": "b0", "submit": 0, "user": "ub", "queue": "b/y", "tasks": 4, "duration": 10},
        {"name": "a1", "submit": 1, "user": "ua", "queue": "a/x", "tasks": 4, "duration": 10},
        {"name": "b1", "submit": 2, "user": "ub", "queue": "b/y", "tasks": 4, "duration": 10},
    ]
    queues = [{"path": p} for p in ("a", "a/x", "b", "b/y")]
    log = _run(jobs, policy, queues=queues)
    at_ten = [a.job for a in log.attempts if a.start == 10.0]
    assert at_ten[0] == "a1"
    assert sorted(at_ten) == ["a1", "a1", "b1", "b1"]


@pytest.mark.parametrize("policy", HDRF_POLICIES)
def test_within_the_top_priority_the_hdrf_order_decides(policy: str) -> None:
    # Two queues with priority-1 work and one with priority 0: the two priority-1 users split
    # the slots by H-DRF (two each, the lower share first), the priority-0 job waits.
    jobs = [
        {"name": "c0", "submit": 0, "user": "uc", "queue": "c", "tasks": 4, "duration": 10},
        {"name": "c1", "submit": 1, "user": "uc", "queue": "c", "tasks": 4, "duration": 10},
        {"name": "a1", "submit": 1, "user": "ua", "queue": "a", "tasks": 8, "duration": 10},
        {"name": "b1", "submit": 1, "user": "ub", "queue": "b", "tasks": 8, "duration": 10},
    ]
    for job in jobs[2:]:
        job["priority"] = 1
    queues = [{"path": p} for p in ("a", "b", "c")]
    log = _run(jobs, policy, queues=queues)
    starts = sorted((a.start, a.job) for a in log.attempts if a.start == 10.0)
    assert [job for _, job in starts].count("a1") == 2
    assert [job for _, job in starts].count("b1") == 2
    # 16 priority-1 tasks on 4 slots: four rounds of 10 s from t=10.
    assert _first_start(log, "c1") == 50.0


class _PrioritizedTree(ReferenceTree):
    """The paper's full recomputation with the walk preferring, at each node, the children
    holding the highest priority among the leaves that can launch on the machine."""

    def select(self, mi: int) -> Pick:
        if not self.ledger.prioritized:
            return super().select(mi)
        cs = self.ledger.cluster
        free = cs.free[mi]
        # Per leaf's user: its best fitting group (highest priority, then first listed).
        best: dict[int, tuple[int, int]] = {}
        for g in cs.groups_for(mi):
            grp = cs.groups[g]
            if not grp.users or not fits(free, grp.demand):
                continue
            for u in grp.users:
                user = self.ledger.users[u]
                if (u, g) in self._skipped or user.running >= user.cap:
                    continue
                p = self.ledger.head_job(user, g).priority
                if u not in best or p > best[u][0]:
                    best[u] = (p, g)
        if not best:
            return NO_PICK
        tier: dict[int, int] = {}
        for node in _postorder(self._children):
            u = self._user_of_node.get(node)
            if u is not None:
                if u in best:
                    tier[node] = best[u][0]
                continue
            below = [tier[c] for c in self._children[node] if c in tier]
            if below:
                tier[node] = max(below)
        # The shares: the parent class's full recomputation, read through its walk on the
        # children holding the top priority only.
        share = self._shares(mi)
        served = self.served_below()
        node = 0
        while node not in self._user_of_node:
            chosen = -1
            chosen_key = 0.0
            for c in sorted(self._children[node], key=lambda c: (served[c], c)):
                if tier.get(c) == tier[node]:
                    key = share[c] / self.weight[c]
                    if chosen < 0 or key < chosen_key - 1e-12:
                        chosen, chosen_key = c, key
            node = chosen
        u = self._user_of_node[node]
        return u, best[u][1]

    def _shares(self, mi: int) -> list[float]:
        """Algorithm 3's shares over the whole tree for machine ``mi``'s free resources."""
        cs = self.ledger.cluster
        free = cs.free[mi]
        total = cs.total
        resources = range(len(total))
        y = [r for r in resources if free[r] > EPS and total[r] > 0]
        size = len(self.parent)
        vector = [[0.0] * len(total) for _ in range(size)]
        share = [0.0] * size
        demanding = [False] * size
        for node in _postorder(self._children):
            u = self._user_of_node.get(node)
            if u is not None:
                user = self.ledger.users[u]
                vector[node] = [
                    user.alloc[r] / total[r] if total[r] > 0 else 0.0 for r in resources
                ]
                if self.dynamic:
                    demanding[node] = (
                        user.pending > 0
                        and user.running < user.cap
                        and all(d <= EPS or r in y for r, d in enumerate(self._demand_of(user)))
                    )
                    share[node] = max((vector[node][r] for r in y), default=0.0)
                else:
                    share[node] = max(vector[node], default=0.0)
                continue
            children = self._children[node]
            acc = [0.0] * len(total)
            active = [c for c in children if demanding[c]] if self.dynamic else []
            demanding[node] = bool(active)
            low = min((share[c] / self.weight[c] for c in active), default=0.0)
            for c in children:
                scale = 1.0
                if self.dynamic and demanding[c] and share[c] > 0:
                    scale = low * self.weight[c] / share[c]
                for r in resources:
                    acc[r] += vector[c][r] * scale
            vector[node] = acc
            if self.dynamic:
                share[node] = max((acc[r] for r in y), default=0.0)
            else:
                share[node] = max(acc, default=0.0)
        return share


class _PrioritizedReference(ReferenceNaiveHdrf):
    tree_class = _PrioritizedTree


class _PrioritizedReferenceHdrf(_PrioritizedReference):
    name = "hdrf"
    dynamic = True


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("options", ["plain", "delay", "preemption"])
def test_prioritized_walk_decides_as_the_full_recomputation(
    dynamic: bool, seed: int, options: str
) -> None:
    cluster, jobs, users, queues, events = _case(seed, 3 if seed % 2 else 2)
    rng = np.random.default_rng(1000 + seed)
    jobs = [dataclasses.replace(job, priority=int(rng.choice([0, 0, 1, 2, -1]))) for job in jobs]
    opts = OPTIONS[options]
    fast_cls, ref_cls = (
        (Hdrf, _PrioritizedReferenceHdrf) if dynamic else (NaiveHdrf, _PrioritizedReference)
    )
    logs = [
        simulate(
            cluster,
            jobs,
            cls(cluster, users=users, queues=queues, options=opts.policy_options()),
            seed=seed,
            users=users,
            queues=queues,
            options=opts,
            machine_events=events,
        )
        for cls in (fast_cls, ref_cls)
    ]
    assert logs[0].attempts == logs[1].attempts
    # The priorities moved decisions: the run differs from the one without them.
    plain = simulate(
        cluster,
        [dataclasses.replace(job, priority=0) for job in jobs],
        fast_cls(cluster, users=users, queues=queues, options=opts.policy_options()),
        seed=seed,
        users=users,
        queues=queues,
        options=opts,
        machine_events=events,
    )
    assert plain.attempts != logs[0].attempts
