"""Integral progressive filling: whole tasks, one at a time (DRF Algorithm 1, H-DRF Algorithm 1).

Starting at the root, the walk picks the child with the lowest weighted share that still has a
task in its subtree that fits in the free resources, down to a user, who gets one more task.
Unlike DRF's Algorithm 1, which stops at the first task that does not fit, a user whose next
task does not fit is set aside and the others continue, so the result is maximal: no user can
be given one more task. Ties go to the node that comes first in scenario order.

Internal nodes take the dominant share of their subtree's summed allocation (static H-DRF);
a flat tree makes this plain weighted DRF (or asset fairness / max-min, by the leaves' share
per task).
"""

from __future__ import annotations

import heapq

import numpy as np

from fairshare.cluster import FloatArray
from fairshare.solvers.waterfill import WaterfillProblem

_FIT_TOL = 1e-9


def progressive_fill(problem: WaterfillProblem, start: FloatArray | None = None) -> FloatArray:
    """The integral allocation (tasks per user) of ``problem``, starting from ``start`` (whole
    tasks; default: the floor of the problem's initial allocation)."""
    tree = problem.tree
    demands = problem.demands
    capacity = problem.capacity
    inv_capacity = np.where(capacity > 0, 1.0 / np.where(capacity > 0, capacity, 1.0), 0.0)
    x = np.floor(problem.initial + _FIT_TOL) if start is None else start.copy()
    node_tasks = np.asarray(tree.ancestors @ x, dtype=np.float64)
    usage = np.asarray(tree.ancestors @ (x[:, None] * demands), dtype=np.float64)
    free = capacity - usage[0]
    slack = _FIT_TOL * np.maximum(1.0, capacity)
    weight = tree.weight
    parent = tree.parent
    user_of = tree.user_of

    def level(node: int) -> float:
        user = int(user_of[node])
        if user >= 0:
            share = float(x[user] * problem.share_per_task[user])
        else:
            share = float((usage[node] * inv_capacity).max())
        return round(share / float(weight[node]), 12)

    version = np.zeros(tree.size, dtype=np.int64)
    dead = np.zeros(tree.size, dtype=np.bool_)
    heaps: list[list[tuple[float, int, int]]] = [[] for _ in range(tree.size)]
    for node in range(1, tree.size):
        heaps[int(parent[node])].append((level(node), node, 0))
    for heap in heaps:
        heapq.heapify(heap)
    for node in range(tree.size - 1, -1, -1):
        if user_of[node] < 0 and not heaps[node]:
            dead[node] = True

    node = 0
    while True:
        if user_of[node] < 0:
            heap = heaps[node]
            while heap and (dead[heap[0][1]] or heap[0][2] != version[heap[0][1]]):
                heapq.heappop(heap)
            if not heap or node_tasks[node] + 1 > tree.max_tasks[node] + _FIT_TOL:
                dead[node] = True
                if node == 0:
                    return x
                node = int(parent[node])
                continue
            node = heap[0][1]
            continue
        user = int(user_of[node])
        demand = demands[user]
        if x[user] + 1 > tree.max_tasks[node] + _FIT_TOL or np.any(demand > free + slack):
            dead[node] = True
            node = int(parent[node])
            continue
        x[user] += 1
        free -= demand
        path = tree.path_to_root(node)
        for member in path:
            node_tasks[member] += 1
            usage[member] += demand
        for member in path[:-1]:
            version[member] += 1
            heapq.heappush(
                heaps[int(parent[member])], (level(member), member, int(version[member]))
            )
        node = 0
