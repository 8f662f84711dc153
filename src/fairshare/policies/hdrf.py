"""Hierarchical DRF online: naive H-DRF (H-DRF section 3.3, the Capacity Scheduler's
behaviour, starvation included) and dynamic H-DRF (H-DRF section 3.4, Algorithms 2-4), with
H-DRF section 5's per-server headroom as an option (``PolicyOptions.headroom``).

The tree: queues (scenario ``queues``; a path a job names but the scenario does not is a queue
of weight 1) are internal nodes, users (or jobs) are leaves, children in order of appearance
(the tie-break order). A leaf's consumption vector is its running tasks' demands over the
pooled cluster's totals.

For each task to place on machine ``m`` (Algorithm 2's ``W`` is ``m``'s free room and ``Y`` the
resources it has free):

- naive: an internal node's consumption is the sum of its children's, its share the largest
  component; descend from the root to the child with the lowest weighted share that has a
  task fitting ``m`` (Algorithm 4's walk).
- dynamic: Algorithm 3 first. A leaf is *demanding* (in ``A``) when it has a task to launch
  and uses only resources in ``Y`` (a leaf needing a saturated resource is blocked). At an
  internal node, the demanding children's vectors are rescaled to the lowest weighted
  dominant share among them (rescaling to minimum nodes), blocked children count as they are
  (ignoring blocked nodes), the node's vector is the sum and its share the largest component
  over ``Y`` (saturated resources ignored). Then the same walk.

A decision costs O(tree size x resources): recomputing Algorithm 3 per task, as the paper
presents it.
"""

from __future__ import annotations

from collections.abc import Sequence

from fairshare.cluster import Cluster
from fairshare.policies.base import Scheduler
from fairshare.policies.options import PolicyOptions
from fairshare.policies.state import EPS, UserState
from fairshare.workload.model import ROOT, Queue, User


class NaiveHdrf(Scheduler):
    """Naive H-DRF (section 3.3)."""

    name = "naive-hdrf"
    dynamic = False

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        self._parent: list[int] = [-1]
        self._weight: list[float] = [1.0]
        self._children: list[list[int]] = [[]]
        self._node_of_queue: dict[str, int] = {ROOT: 0}
        self._leaf: list[int] = []
        self._user_of_node: dict[int, int] = {}
        self._queue_weights = {q.path: q.weight for q in queues}
        self._order: list[int] = [0]
        self._skipped: set[tuple[int, int]] = set()
        super().__init__(cluster, users=users, queues=queues, options=options)
        for queue in queues:
            self._queue_node(queue.path)

    # ----------------------------------------------------------------- tree

    def _queue_node(self, path: str) -> int:
        node = self._node_of_queue.get(path)
        if node is None:
            parent = self._queue_node(path.rpartition("/")[0])
            node = self._new_node(parent, self._queue_weights.get(path, 1.0))
            self._node_of_queue[path] = node
        return node

    def _new_node(self, parent: int, weight: float) -> int:
        node = len(self._parent)
        self._parent.append(parent)
        self._weight.append(weight)
        self._children.append([])
        self._children[parent].append(node)
        # Post-order (children before parents) for the bottom-up pass.
        self._order = _postorder(self._children)
        return node

    def on_new_user(self, user: UserState) -> None:
        leaf = self._new_node(self._queue_node(user.queue), user.weight)
        self._leaf.append(leaf)
        self._user_of_node[leaf] = user.idx

    # ----------------------------------------------------------------- selection

    def skip(self, user: int, group: int) -> None:
        self._skipped.add((user, group))

    def _restore_held(self) -> None:
        self._skipped.clear()
        super()._restore_held()

    def select(self, mi: int) -> tuple[int, int] | None:
        cs = self.cluster
        free = cs.free[mi]
        total = cs.total
        resources = range(len(total))
        y = [r for r in resources if free[r] > EPS and total[r] > 0]
        # The group each candidate user would run on mi (first eligible group that fits).
        candidate: dict[int, int] = {}
        for g in cs.groups_for(mi):
            grp = cs.groups[g]
            if not grp.users or not self._fits(free, grp.demand):
                continue
            for u in grp.users:
                if u not in candidate and (u, g) not in self._skipped:
                    user = self.users[u]
                    if user.running < user.cap:
                        candidate[u] = g
        if not candidate:
            return None
        size = len(self._parent)
        vector: list[list[float]] = [[0.0] * len(total) for _ in range(size)]
        share = [0.0] * size
        demanding = [False] * size
        reachable = [False] * size
        for node in self._order:
            leaf_user = self._user_of_node.get(node)
            if leaf_user is not None:
                user = self.users[leaf_user]
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
                low = min((share[c] / self._weight[c] for c in active), default=0.0)
                for c in children:
                    scale = 1.0
                    if demanding[c] and share[c] > 0:
                        scale = low * self._weight[c] / share[c]
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
        while node not in self._user_of_node:
            best = -1
            best_key = 0.0
            for c in self._children[node]:
                if reachable[c]:
                    key = share[c] / self._weight[c]
                    if best < 0 or key < best_key - 1e-12:
                        best, best_key = c, key
            if best < 0:
                return None
            node = best
        u = self._user_of_node[node]
        return u, candidate[u]

    def _demand_of(self, user: UserState) -> tuple[float, ...]:
        """The demand of the user's next task (its oldest group with pending work)."""
        for g in user.job_heaps:
            return self.cluster.groups[g].demand
        return ()


class Hdrf(NaiveHdrf):
    """Dynamic H-DRF (section 3.4, Algorithms 2-4)."""

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
