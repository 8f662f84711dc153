"""Online H-DRF with cached views and per-node heaps (see :mod:`fairshare.policies.hdrf`)
makes exactly the decisions of the paper's presentation: Algorithm 3 recomputed over the
whole tree before every task, then Algorithm 4's walk by a full scan of each node's
children (H-DRF sections 3.3-3.4, Algorithms 2-4). The reference below is that code path,
kept as it was before the caches."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import PolicyOptions, Scheduler
from fairshare.policies.hdrf import Hdrf, HdrfRanking, NaiveHdrf, TreeSelection
from fairshare.policies.ranking import NO_PICK, Pick
from fairshare.policies.records import UserState
from fairshare.policies.state import EPS, fits
from fairshare.sim.engine import MachineEvent, SimOptions, simulate
from fairshare.workload.model import (
    ROOT,
    ExponentialDuration,
    FixedDuration,
    Job,
    Queue,
    ReducePhase,
    User,
)


class ReferenceTree(TreeSelection):
    """H-DRF's selection as the paper presents it: the whole tree per task (no caches, no
    batches)."""

    def __init__(self, queues: list[Queue], dynamic: bool) -> None:
        super().__init__(queues, dynamic)
        self.batchable = False

    def touched(self, user: UserState) -> None:
        pass  # nothing is cached

    def skip(self, user: int, group: int) -> None:
        self._skipped.add((user, group))

    def restore_held(self) -> None:
        self._skipped.clear()

    def served_below(self) -> list[int]:
        """Per node, the latest ``UserState.served`` of a leaf below it (the fair tie
        rule: ties between siblings go to the one served least recently, then the first)."""
        served = [0] * len(self.parent)
        for node in _postorder(self._children):
            u = self._user_of_node.get(node)
            if u is not None:
                served[node] = self.ledger.users[u].served
            else:
                served[node] = max((served[c] for c in self._children[node]), default=0)
        return served

    def _demand_of(self, user: UserState) -> tuple[float, ...]:
        for g in user.job_heaps:
            return self.ledger.cluster.groups[g].demand
        return ()

    def select(self, mi: int) -> Pick:
        cs = self.ledger.cluster
        free = cs.free[mi]
        total = cs.total
        resources = range(len(total))
        y = [r for r in resources if free[r] > EPS and total[r] > 0]
        candidate: dict[int, int] = {}
        for g in cs.groups_for(mi):
            grp = cs.groups[g]
            room = self.room
            fit = fits(free, grp.demand) if room is None else room.room(mi, free, grp.demand)
            if not grp.users or not fit:
                continue
            for u in grp.users:
                if u not in candidate and (u, g) not in self._skipped:
                    user = self.ledger.users[u]
                    if user.running < user.cap:
                        candidate[u] = g
        if not candidate:
            return NO_PICK
        size = len(self.parent)
        vector: list[list[float]] = [[0.0] * len(total) for _ in range(size)]
        share = [0.0] * size
        demanding = [False] * size
        reachable = [False] * size
        for node in _postorder(self._children):
            leaf_user = self._user_of_node.get(node)
            if leaf_user is not None:
                user = self.ledger.users[leaf_user]
                vector[node] = [
                    user.alloc[r] / total[r] if total[r] > 0 else 0.0 for r in resources
                ]
                reachable[node] = leaf_user in candidate
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
            if not children:
                continue
            reachable[node] = any(reachable[c] for c in children)
            acc = [0.0] * len(total)
            if self.dynamic:
                active = [c for c in children if demanding[c]]
                demanding[node] = bool(active)
                low = min((share[c] / self.weight[c] for c in active), default=0.0)
                for c in children:
                    scale = 1.0
                    if demanding[c] and share[c] > 0:
                        scale = low * self.weight[c] / share[c]
                    for r in resources:
                        acc[r] += vector[c][r] * scale
                vector[node] = acc
                share[node] = max((acc[r] for r in y), default=0.0)
            else:
                for c in children:
                    for r in resources:
                        acc[r] += vector[c][r]
                vector[node] = acc
                share[node] = max(acc, default=0.0)
        node = 0
        served = self.served_below()
        while node not in self._user_of_node:
            best = -1
            best_key = 0.0
            for c in sorted(self._children[node], key=lambda c: (served[c], c)):
                if reachable[c]:
                    key = share[c] / self.weight[c]
                    if best < 0 or key < best_key - 1e-12:
                        best, best_key = c, key
            if best < 0:
                return None
            node = best
        u = self._user_of_node[node]
        return u, candidate[u]


class ReferenceNaiveHdrf(Scheduler):
    """Naive H-DRF as the paper presents it: the whole tree per task (no caches)."""

    name = "naive-hdrf"
    dynamic = False
    tree_class: type[ReferenceTree] = ReferenceTree

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: list[User],
        queues: list[Queue],
        options: PolicyOptions,
    ) -> None:
        tree = self.tree_class(queues, self.dynamic)
        super().__init__(
            cluster,
            users=users,
            queues=queues,
            options=options,
            ranking=HdrfRanking(tree),
            selection=tree,
        )


class ReferenceHdrf(ReferenceNaiveHdrf):
    """Dynamic H-DRF as the paper presents it (Algorithms 2-4, no caches)."""

    name = "hdrf"
    dynamic = True


def _postorder(children: list[list[int]]) -> list[int]:
    order: list[int] = []
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        stack.append((node, True))
        for c in reversed(children[node]):
            stack.append((c, False))
    return order


QUEUE_PATHS = ("a", "a/x", "a/y", "a/y/deep", "b", "b/z", "c")


def _case(
    seed: int, resources: int
) -> tuple[Cluster, list[Job], list[User], list[Queue], list[MachineEvent]]:
    """A random workload on a few-level tree: queues of mixed weights, users (some capped,
    some unnamed, so that leaves appear as jobs arrive), demands with zero components (so
    that leaves block on saturated resources), a constrained class, machines of several
    shapes, and machines leaving and joining."""
    rng = np.random.default_rng(seed)
    names = ("cpu", "mem", "gpu")[:resources]
    shapes = [
        np.array([float(x) for x in rng.choice([4, 8, 16], size=resources)]) for _ in range(3)
    ]
    machines = [
        Machine(f"m{i}", shapes[i % 3], rack=f"r{i // 4}", attributes={"fast": i % 3 == 0})
        for i in range(10)
    ]
    queues = [Queue(p, weight=float(rng.choice([0.5, 1.0, 1.0, 2.0, 3.0]))) for p in QUEUE_PATHS]
    leaves = ("a/x", "a/y", "a/y/deep", "b", "b/z", "c", "d/new")
    users = [
        User(
            f"u{k}",
            np.zeros(resources),
            weight=float(rng.choice([1.0, 1.0, 2.0, 0.5])),
            queue=leaves[int(rng.integers(len(leaves)))],
            max_tasks=float(rng.choice([np.inf, np.inf, 3.0])),
        )
        for k in range(6)
    ]
    demands = [
        [1.0, 1.0, 0.0],
        [2.0, 0.0, 1.0],
        [0.0, 3.0, 0.0],
        [1.0, 2.0, 0.0],
        [3.0, 1.0, 2.0],
    ]
    jobs = []
    for k in range(40):
        u = int(rng.integers(9))
        duration = (
            FixedDuration(float(rng.integers(1, 4)))
            if rng.random() < 0.5
            else ExponentialDuration(4.0)
        )
        jobs.append(
            Job(
                f"j{k}",
                float(k // 3),
                f"u{u}",
                np.array(demands[int(rng.integers(len(demands)))][:resources]),
                int(rng.integers(1, 25)),
                duration,
                queue=leaves[u % len(leaves)],
                weight=float(rng.choice([1.0, 2.0])),
                constraint=Constraint("fast") if rng.random() < 0.25 else None,
                input_replicas=2 if rng.random() < 0.3 else None,
                reduce=ReducePhase(2, 1.0, 2.0) if rng.random() < 0.15 else None,
            )
        )
    events = [
        MachineEvent(7.0, "remove", "m3"),
        MachineEvent(11.0, "add", Machine("m10", shapes[1], rack="r9", attributes={})),
        MachineEvent(15.0, "remove", "m0"),
    ]
    return Cluster.build(names, machines), jobs, users, queues, events


OPTIONS = {
    "plain": SimOptions(),
    "delay": SimOptions(delay=(1.0, 2.0)),
    "preemption": SimOptions(preemption=(2.0, 4.0)),
    "headroom": SimOptions(headroom=True),
}


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("options", sorted(OPTIONS))
def test_cached_hdrf_decides_as_the_full_recomputation(
    dynamic: bool, seed: int, options: str
) -> None:
    cluster, jobs, users, queues, events = _case(seed, 3 if seed % 2 else 2)
    opts = OPTIONS[options]
    fast_cls, ref_cls = (Hdrf, ReferenceHdrf) if dynamic else (NaiveHdrf, ReferenceNaiveHdrf)
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
    assert logs[0].attempts


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("flat", [False, True])
@pytest.mark.parametrize("options", ["plain", "delay"])
def test_roomy_cluster_fast_paths_decide_as_the_full_recomputation(
    dynamic: bool, seed: int, flat: bool, options: str
) -> None:
    """On a cluster with room, most selections have one (leaf, group) pair that can launch,
    launches come in batches, finishes take the fused path and most children of the root
    are stale (:mod:`fairshare.policies.hdrf`): still the reference's decisions, on a tree
    and on a flat one (every user a child of the root)."""
    small, jobs, users, queues, _ = _case(seed, 3 if seed % 2 else 2)
    resources = len(small.resources)
    cluster = Cluster.build(
        small.resources,
        [
            Machine(
                f"m{i}",
                np.full(resources, 24.0 if i % 2 else 12.0),
                rack=f"r{i // 5}",
                attributes={"fast": i % 3 == 0},
            )
            for i in range(24)
        ],
    )
    if flat:
        jobs = [dataclasses.replace(job, queue=ROOT) for job in jobs]
        users = [dataclasses.replace(user, queue=ROOT) for user in users]
        queues = []
    opts = OPTIONS[options]
    fast_cls, ref_cls = (Hdrf, ReferenceHdrf) if dynamic else (NaiveHdrf, ReferenceNaiveHdrf)
    policies = [
        cls(cluster, users=users, queues=queues, options=opts.policy_options())
        for cls in (fast_cls, ref_cls)
    ]
    # The fast paths are on for the policy and off for the reference.
    assert policies[0].placer.batching and policies[0].fused
    assert not policies[1].placer.batching and not policies[1].fused
    logs = [
        simulate(cluster, jobs, policy, seed=seed, users=users, queues=queues, options=opts)
        for policy in policies
    ]
    assert logs[0].attempts == logs[1].attempts
    assert logs[0].attempts
