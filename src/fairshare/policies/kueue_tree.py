"""Kueue's quota tree: ClusterQueues and Cohorts, their subtree quotas, what each may still
use, and the weighted dominant resource share (DRS) Kueue's fair sharing orders them by.

The scenario's queues are read as Kueue reads its objects (kubernetes-sigs/kueue
``pkg/cache/scheduler/resource_node.go`` and ``fair_sharing.go``):

- a queue with no child queue is a *ClusterQueue* (its users are its LocalQueues); a queue
  with children is a *Cohort*; a top-level queue has no parent (a ClusterQueue there has no
  cohort and cannot borrow);
- a ClusterQueue's ``quota`` is its ``nominalQuota`` (``inf`` where the quota does not govern a
  resource: never limits, never borrows); a Cohort's own quota (Kueue's Cohort
  ``resourceGroups``) is its scenario ``quota`` less the quotas of its children, since the
  scenario's quotas nest (a parent's covers its children's: :mod:`fairshare.policies.quota`)
  and Kueue's Cohort quota comes on top of its children's;
- ``borrowing_limit`` and ``lending_limit`` are Kueue's ``borrowingLimit`` and
  ``lendingLimit`` (``inf``: none);
- ``SubtreeQuota`` = own quota + each child's (subtree quota - local quota), where a node's
  *local quota* is what its lending limit keeps from its parent, ``max(0, subtree -
  lendingLimit)``; a Cohort's usage is its children's usage above their local quotas
  (``accumulateFromChild``);
- :meth:`KueueTree.available` is Kueue's ``available``: the local quota left plus what the
  parent still has, capped by the borrowing limit;
- :meth:`KueueTree.drs` is ``dominantResourceShare``: per resource (flavors of one resource
  summed: ``cpu@a`` and ``cpu@b`` are both ``cpu``), the usage above the subtree quota over
  what the parent's subtree could lend this node (``potentialAvailable`` of the parent), in
  per mille; the largest over resources, divided by the node's weight. A weight of
  :data:`~fairshare.workload.model.MIN_WEIGHT` (what ``fairshare import kueue`` maps Kueue's
  weight 0 to) is Kueue's weight 0: a node that borrows then has an infinite share.

Examples
--------
Kueue's ``TestDominantResourceShare`` case "usage above nominal": a ClusterQueue with
nominal <2 CPUs, 5 GPUs> beside a lender of <8, 5> uses <3, 7>: it borrows 1 CPU and 2 GPUs
of the 10 and 10 its cohort could lend it, so its share is 2 * 1000 / 10 = 200 per mille.

>>> import math
>>> from fairshare.workload.model import Queue
>>> tree = KueueTree(
...     [
...         Queue("test-cohort", quota=(10.0, 10.0)),
...         Queue("test-cohort/cq", quota=(2.0, 5.0)),
...         Queue("test-cohort/lending-cq", quota=(8.0, 5.0)),
...     ],
...     ("cpu", "gpu"),
... )
>>> usage = tree.usage({tree.index["test-cohort/cq"]: [3.0, 7.0]})
>>> tree.drs(tree.index["test-cohort/cq"], usage).per_mille
200
>>> tree.drs(tree.index["test-cohort"], usage).per_mille
0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fairshare.tolerances import FIT
from fairshare.workload.model import MIN_WEIGHT, Queue

Rows = list[list[float]]
"""Per node of the tree, an amount per resource."""


@dataclass(frozen=True)
class Drs:
    """A node's dominant resource share (Kueue's ``DRS``).

    Attributes
    ----------
    ratio : float
        The unweighted share in per mille (0 when the node borrows nothing).
    weight : float
        The node's fair-sharing weight (0: Kueue's zero weight).
    borrowing : tuple of int
        The resources (indices) on which the node uses more than its subtree quota.
    """

    ratio: float
    weight: float
    borrowing: tuple[int, ...]

    @property
    def zero_weight_borrows(self) -> bool:
        """Whether the node borrows with weight 0 (Kueue's ``zeroWeightBorrows``)."""
        return self.weight == 0 and self.ratio != 0

    @property
    def weighted(self) -> float:
        """The weighted share in per mille (``PreciseWeightedShare``; inf for a zero weight
        that borrows)."""
        if self.ratio == 0:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    @property
    def per_mille(self) -> int | float:
        """The share Kueue reports as ``status.fairSharing.weightedShare``: the weighted
        share rounded up to an integer (``roundedWeightedShare``); inf for a zero weight
        that borrows (Kueue reports ``math.MaxInt``)."""
        value = self.weighted
        return value if math.isinf(value) else math.ceil(value - 1e-9)

    def key(self) -> tuple[int, float]:
        """A sort key ordering shares as Kueue's ``CompareDRS`` does (lower goes first):
        zero weights that borrow last, among themselves by the unweighted ratio."""
        if self.zero_weight_borrows:
            return (1, self.ratio)
        return (0, self.weighted)


class KueueTree:
    """ClusterQueues and Cohorts from the scenario's queues (see the module).

    Parameters
    ----------
    queues : sequence of Queue
        The scenario's queues, parents before children.
    resources : sequence of str
        The cluster's resource names (``NAME@FLAVOR`` counts as ``NAME`` in shares).

    Attributes
    ----------
    paths : list of str
        The nodes' queue paths, in scenario order (a node's number is its index).
    index : dict of str to int
        A node's number by path.
    parent : list of int
        Each node's parent (-1: none).
    children : list of list of int
        Each node's children.
    is_cq : list of bool
        Whether a node is a ClusterQueue (no child queue).
    weight : list of float
        Each node's fair-sharing weight (0 for Kueue's zero weight).
    subtree, local, borrow, potential : list of list of float
        Per node and resource: the subtree quota, the local quota, the borrowing limit and
        the potential available amount (``potentialAvailable``).
    """

    def __init__(self, queues: Sequence[Queue], resources: Sequence[str]) -> None:
        size = len(resources)
        self.resources = size
        bases: dict[str, list[int]] = {}
        for r, name in enumerate(resources):
            bases.setdefault(name.partition("@")[0], []).append(r)
        self.bases = list(bases.values())
        self.paths = [q.path for q in queues]
        self.index = {p: i for i, p in enumerate(self.paths)}
        self.parent = [self.index.get(q.parent, -1) for q in queues]
        self.children: list[list[int]] = [[] for _ in queues]
        for i, p in enumerate(self.parent):
            if p >= 0:
                self.children[p].append(i)
        self.is_cq = [not c for c in self.children]
        inf = math.inf
        self.weight = [0.0 if q.weight <= MIN_WEIGHT else q.weight for q in queues]
        self.borrow = [list(q.borrowing_limit or (inf,) * size) for q in queues]
        lend = [list(q.lending_limit or (inf,) * size) for q in queues]
        own: Rows = []
        for i, q in enumerate(queues):
            if self.is_cq[i]:
                own.append(list(q.quota) if q.quota is not None else [inf] * size)
                continue
            row = [0.0] * size
            if q.quota is not None:
                # The quotas of the nearest queues with a quota below (the scenario's nest).
                below = [0.0] * size
                stack = list(self.children[i])
                while stack:
                    c = stack.pop()
                    quota = queues[c].quota
                    if quota is None:
                        stack.extend(self.children[c])
                        continue
                    for r, amount in enumerate(quota):
                        if math.isfinite(amount):
                            below[r] += amount
                for r, amount in enumerate(q.quota):
                    if math.isfinite(amount):
                        row[r] = max(0.0, amount - below[r])
            own.append(row)
        self.subtree: Rows = [list(row) for row in own]
        self.local: Rows = [[0.0] * size for _ in queues]
        for i in self.postorder():
            for c in self.children[i]:
                for r in range(size):
                    self.subtree[i][r] += self.subtree[c][r] - self.local[c][r]
            for r in range(size):
                if math.isfinite(lend[i][r]):
                    self.local[i][r] = max(0.0, self.subtree[i][r] - lend[i][r])
        self.potential: Rows = [[0.0] * size for _ in queues]
        for i in self.preorder():
            p = self.parent[i]
            for r in range(size):
                if p < 0:
                    self.potential[i][r] = self.subtree[i][r]
                    continue
                avail = self.local[i][r] + self.potential[p][r]
                if math.isfinite(self.borrow[i][r]):
                    avail = min(avail, self.subtree[i][r] + self.borrow[i][r])
                self.potential[i][r] = avail
        # What each node's parent could lend it, per resource name (flavors summed).
        self.lendable: Rows = []
        for i in range(len(queues)):
            p = self.parent[i]
            self.lendable.append(
                [sum(self.potential[p][r] for r in rs) if p >= 0 else 0.0 for rs in self.bases]
            )

    def preorder(self) -> list[int]:
        """The nodes, every parent before its children.

        Returns
        -------
        list of int
        """
        out: list[int] = []
        stack = [i for i in reversed(range(len(self.paths))) if self.parent[i] < 0]
        while stack:
            i = stack.pop()
            out.append(i)
            stack.extend(reversed(self.children[i]))
        return out

    def postorder(self) -> list[int]:
        """The nodes, every child before its parent.

        Returns
        -------
        list of int
        """
        return list(reversed(self.preorder()))

    def path_up(self, node: int) -> list[int]:
        """The node and its ancestors, lowest first.

        Parameters
        ----------
        node : int

        Returns
        -------
        list of int
        """
        out = []
        while node >= 0:
            out.append(node)
            node = self.parent[node]
        return out

    def root(self, node: int) -> int:
        """The top of the node's tree.

        Parameters
        ----------
        node : int

        Returns
        -------
        int
        """
        while self.parent[node] >= 0:
            node = self.parent[node]
        return node

    def usage(self, cq_usage: Mapping[int, Sequence[float]]) -> Rows:
        """Every node's usage from its ClusterQueues' (``accumulateFromChild``: a Cohort
        holds its children's usage above their local quotas).

        Parameters
        ----------
        cq_usage : mapping of int to sequence of float
            Per ClusterQueue with usage, what its admitted work holds.

        Returns
        -------
        list of list of float
        """
        size = self.resources
        rows: Rows = [[0.0] * size for _ in self.paths]
        for i, amounts in cq_usage.items():
            rows[i] = list(amounts)
        for i in self.postorder():
            p = self.parent[i]
            if p < 0:
                continue
            row, up, lq = rows[i], rows[p], self.local[i]
            for r in range(size):
                extra = row[r] - lq[r]
                if extra > 0:
                    up[r] += extra
        return rows

    def add(self, rows: Rows, node: int, amounts: Sequence[float], sign: float = 1.0) -> None:
        """Add (``sign`` -1: remove) ``amounts`` to ClusterQueue ``node``'s usage in ``rows``,
        carrying the part above each local quota up (``addUsage`` / ``removeUsage``).

        Parameters
        ----------
        rows : list of list of float
            :meth:`usage`, changed in place.
        node : int
            A ClusterQueue.
        amounts : sequence of float
            Per resource.
        sign : float
            1 to add, -1 to remove.
        """
        delta = [sign * a for a in amounts]
        while node >= 0:
            row, lq = rows[node], self.local[node]
            p = self.parent[node]
            nxt = [0.0] * len(delta)
            for r, d in enumerate(delta):
                before = max(0.0, row[r] - lq[r])
                row[r] += d
                nxt[r] = max(0.0, row[r] - lq[r]) - before
            if not any(nxt):
                return
            delta = nxt
            node = p

    def available(self, rows: Rows, node: int, r: int) -> float:
        """What ClusterQueue or Cohort ``node`` may still use of resource ``r`` (Kueue's
        ``available``).

        Parameters
        ----------
        rows : list of list of float
            :meth:`usage`.
        node : int
        r : int

        Returns
        -------
        float
        """
        p = self.parent[node]
        if p < 0:
            return self.subtree[node][r] - rows[node][r]
        up = self.available(rows, p, r)
        lq = self.local[node][r]
        limit = self.borrow[node][r]
        if math.isfinite(limit):
            stored = self.subtree[node][r] - lq
            used = max(0.0, rows[node][r] - lq)
            up = min(stored - used + limit, up)
        return max(0.0, lq - rows[node][r]) + up

    def fits(self, rows: Rows, node: int, request: Sequence[float]) -> bool:
        """Whether ``request`` fits what ClusterQueue ``node`` may still use, in every
        resource it asks for (``workloadFits``).

        Parameters
        ----------
        rows : list of list of float
            :meth:`usage`.
        node : int
        request : sequence of float

        Returns
        -------
        bool
        """
        for r, v in enumerate(request):
            if (
                v > 0
                and math.isfinite(self.subtree[node][r])
                and v > self.available(rows, node, r) + FIT
            ):
                return False
        return True

    def borrows_with(self, rows: Rows, node: int, request: Sequence[float]) -> bool:
        """Whether ClusterQueue ``node`` would use more than its nominal quota with
        ``request`` added (the assignment ``Borrows``).

        Parameters
        ----------
        rows : list of list of float
        node : int
        request : sequence of float

        Returns
        -------
        bool
        """
        row, cap = rows[node], self.subtree[node]
        return any(v > 0 and row[r] + v > cap[r] + FIT for r, v in enumerate(request))

    def drs(self, node: int, rows: Rows) -> Drs:
        """The node's dominant resource share (Kueue's ``dominantResourceShare``; see the
        module).

        Parameters
        ----------
        node : int
        rows : list of list of float
            :meth:`usage` (with a workload added, for the share after its admission).

        Returns
        -------
        Drs
        """
        weight = self.weight[node]
        if self.parent[node] < 0:
            return Drs(0.0, weight, ())
        row, cap = rows[node], self.subtree[node]
        borrowing = tuple(r for r in range(self.resources) if row[r] > cap[r] + FIT)
        if not borrowing:
            return Drs(0.0, weight, ())
        ratio = 0.0
        lendable = self.lendable[node]
        for b, rs in enumerate(self.bases):
            borrowed = sum(max(0.0, row[r] - cap[r]) for r in rs)
            if borrowed > FIT and lendable[b] > 0:
                ratio = max(ratio, borrowed * 1000.0 / lendable[b])
        return Drs(ratio, weight, borrowing)
