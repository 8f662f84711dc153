"""H-DRF's cached views (H-DRF sections 3.3-3.4, Algorithms 3 and 4): the queue tree's arrays,
Algorithm 3's per-``Y`` results, their recomputation of changed nodes, and the choice at one
level of Algorithm 4's walk. The scheduler that keeps them up to date as its users change, and
walks them to select, is :mod:`fairshare.policies.hdrf` (whose docstring describes what is
cached and why every decision stays the paper's).

Examples
--------
One queue (node 1) over two leaves (nodes 2 and 3) whose users hold 2 and 1 of 4 CPUs, both
with work in group 0: naive H-DRF's view (``y`` None) ranks them by their shares, and the walk
descends to the lower one.

>>> from fairshare.policies.records import UserState
>>> tree = Tree()
>>> [tree.add(parent, 1.0) for parent in (0, 1, 1)]
[1, 2, 3]
>>> users = []
>>> for idx, held in enumerate((2.0, 1.0)):
...     user = UserState(idx, f"u{idx}", 1)
...     user.alloc = [held]
...     users.append(user)
>>> tree.user_at[2:] = [0, 1]
>>> tree.count[1:] = [{0: 2}, {0: 1}, {0: 1}]
>>> view = View(None, 4, 1)
>>> update(view, tree, users, [], [4.0])
>>> view.share[1:]
[0.75, 0.5, 0.25]
>>> lowest(view, 0, [0], tree.count, tree.served), lowest(view, 1, [0], tree.count, tree.served)
(1, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING

from fairshare.policies.records import Group, UserState
from fairshare.tolerances import FIT as EPS
from fairshare.tolerances import TIE

if TYPE_CHECKING:
    from fairshare.policies.usage import DecayedUsage

Entry = tuple[float, int, int]
"""A child's heap entry: (weighted share, child node, the child's version in the view)."""


class Tree:
    """The H-DRF tree as arrays indexed by node (0: the root): queues are internal nodes,
    users leaves, each node numbered when it appears, so that node numbers are also the
    children's order (the tie-break order).

    Attributes
    ----------
    parent, depth : list of int
        Per node, its parent (-1 for the root) and depth.
    weight : list of float
        Per node, its weight.
    children : list of list of int
        Per node, its children in order.
    user_at : list of int
        Per node, the index of a leaf's user, -1 for a queue.
    count : list of dict of int to int
        Per node, per group: the leaves below with a task of the group they may launch
        (pending work, under the cap, not set aside for the current offer).
    tiers : list of dict of int to dict of int to int
        Per node, per group, per priority: how many of those leaves have that priority as
        their next job's in the group (kept only once a job with a priority arrived).
    served : list of int
        Per node, the ledger's launch count at the last launch of a leaf below it (0:
        none yet): siblings whose ranks tie go to the one served least recently, then to
        the first in children's order (the fair tie rule, :func:`tie_order`).
    """

    __slots__ = (
        "children",
        "count",
        "depth",
        "parent",
        "served",
        "tiers",
        "user_at",
        "weight",
    )

    def __init__(self) -> None:
        self.parent: list[int] = [-1]
        self.weight: list[float] = [1.0]
        self.children: list[list[int]] = [[]]
        self.depth: list[int] = [0]
        self.user_at: list[int] = [-1]
        self.count: list[dict[int, int]] = [{}]
        self.tiers: list[dict[int, dict[int, int]]] = [{}]
        self.served: list[int] = [0]

    def add(self, parent: int, weight: float) -> int:
        """A new last child of ``parent`` (a queue until ``user_at`` says otherwise).

        Parameters
        ----------
        parent : int
            The parent node.
        weight : float
            The new node's weight.

        Returns
        -------
        int
            The new node.
        """
        node = len(self.parent)
        self.parent.append(parent)
        self.weight.append(weight)
        self.children.append([])
        self.children[parent].append(node)
        self.depth.append(self.depth[parent] + 1)
        self.user_at.append(-1)
        self.count.append({})
        self.tiers.append({})
        self.served.append(0)
        return node

    def serve(self, leaf: int, stamp: int) -> None:
        """A launch of ``leaf``'s user numbered ``stamp`` (``UserState.served``): the
        leaf and its ancestors were served then.

        Parameters
        ----------
        leaf : int
            The leaf.
        stamp : int
            The ledger's launch count at the launch.
        """
        served = self.served
        parent = self.parent
        node = leaf
        while node > 0 and served[node] < stamp:
            served[node] = stamp
            node = parent[node]

    def retier(self, leaf: int, g: int, old: int | None, new: int | None) -> None:
        """Move ``leaf``'s count in group ``g`` from priority ``old`` to ``new`` up its path
        (None: it did not, or does not, count in the group).

        Parameters
        ----------
        leaf : int
            The leaf.
        g : int
            The group.
        old, new : int or None
            The priority of the leaf's next job in ``g`` before and after.
        """
        tiers = self.tiers
        parent = self.parent
        node = leaf
        while node >= 0:
            per_group = tiers[node]
            here = per_group.get(g)
            if here is None:
                here = per_group[g] = {}
            if old is not None:
                n = here[old] - 1
                if n:
                    here[old] = n
                else:
                    del here[old]
            if new is not None:
                here[new] = here.get(new, 0) + 1
            if not here:
                del per_group[g]
            node = parent[node]


class View:
    """Algorithm 3's result for one set ``Y`` of free resources (``y`` None: naive H-DRF).

    Per node: its vector, share, rank (share over weight), whether it is demanding, a version
    that invalidates its older heap entries, and (internal nodes) per group the heap of its
    children's entries. ``dirty`` holds the nodes to recompute; a dirty node's ancestors (but
    the root) are dirty too. ``stale`` holds children of the root left out of date because
    no leaf below them could launch (nothing reads their values until one can: see
    :func:`update`)."""

    __slots__ = (
        "demanding",
        "dirty",
        "heaps",
        "rank",
        "share",
        "stale",
        "vec",
        "ver",
        "y",
        "yset",
    )

    def __init__(self, y: tuple[int, ...] | None, size: int, resources: int) -> None:
        self.y = y
        self.yset = frozenset(y) if y is not None else frozenset()
        self.vec: list[list[float]] = [[0.0] * resources for _ in range(size)]
        self.share = [0.0] * size
        self.rank = [0.0] * size
        self.demanding = [False] * size
        self.ver = [0] * size
        self.heaps: list[dict[int, list[Entry]]] = [{} for _ in range(size)]
        self.dirty: dict[int, None] = dict.fromkeys(range(1, size))
        self.stale: dict[int, None] = {}

    def grow(self, resources: int) -> None:
        """Room for one more node (a queue or a leaf that appeared), dirty by the caller."""
        self.vec.append([0.0] * resources)
        self.share.append(0.0)
        self.rank.append(0.0)
        self.demanding.append(False)
        self.ver.append(0)
        self.heaps.append({})


def tie_order(children: list[int], served: list[int]) -> list[int]:
    """``children`` in the order ties between their ranks go (the fair tie rule): the
    one served least recently first, then children's order.

    Parameters
    ----------
    children : list of int
        Sibling nodes.
    served : list of int
        :attr:`Tree.served`.

    Returns
    -------
    list of int
    """
    return sorted(children, key=lambda c: (served[c], c))


def lowest(
    view: View, node: int, fitting: list[int], count: list[dict[int, int]], served: list[int]
) -> int:
    """The child of ``node`` that the paper's walk picks: among the children with a
    leaf that can launch in a fitting group, the lowest weighted share, ties (within
    ``TIE``, compared one by one in :func:`tie_order` as the full scan does) to the first.

    Entries are taken in rank order until the next rank is more than ``TIE`` above
    every rank taken: the scan would let each taken child displace any later one and no later
    one displace a taken one, so the scan over the taken children alone decides.

    Parameters
    ----------
    view : View
        The view of the machine's ``Y``, up to date (:func:`update`).
    node : int
        An internal node.
    fitting : list of int
        The groups whose task fits the machine.
    count : list of dict of int to int
        :attr:`Tree.count`.
    served : list of int
        :attr:`Tree.served`.

    Returns
    -------
    int
        The child, or -1 when no child has a leaf that can launch in a fitting group.
    """
    heaps = view.heaps[node]
    ver = view.ver
    live: list[tuple[list[Entry], int]] = []
    for g in fitting:
        heap = heaps.get(g)
        if not heap:
            continue
        while heap:
            top = heap[0]
            if top[2] == ver[top[1]] and g in count[top[1]]:
                break
            heappop(heap)
        if heap:
            live.append((heap, g))
    if not live:
        return -1
    if len(live) == 1:
        # One group fits: its top wins outright when the top's two heap children, and
        # so every other entry, are more than the tolerance above it.
        heap = live[0][0]
        top = heap[0]
        size = len(heap)
        if (size < 2 or top[0] < heap[1][0] - TIE) and (size < 3 or top[0] < heap[2][0] - TIE):
            return top[1]
    taken: dict[int, float] = {}
    popped: list[tuple[list[Entry], Entry]] = []
    highest = 0.0
    while True:
        best: Entry | None = None
        source: tuple[list[Entry], int] | None = None
        for item in live:
            heap = item[0]
            if heap and (best is None or heap[0] < best):
                best = heap[0]
                source = item
        if best is None or source is None:
            break
        if taken and highest < best[0] - TIE:
            break
        heap, g = source
        heappop(heap)
        popped.append((heap, best))
        if best[1] not in taken:
            taken[best[1]] = best[0]
            highest = best[0]
        while heap:
            top = heap[0]
            if top[2] == ver[top[1]] and g in count[top[1]]:
                break
            heappop(heap)
    for heap, entry in popped:
        heappush(heap, entry)
    if len(taken) == 1:
        return next(iter(taken))
    chosen = -1
    chosen_rank = 0.0
    for child in tie_order(list(taken), served):
        rank = taken[child]
        if chosen < 0 or rank < chosen_rank - TIE:
            chosen, chosen_rank = child, rank
    return chosen


def highest_then_lowest(view: View, node: int, fitting: list[int], tree: Tree) -> int:
    """The child of ``node`` the walk picks when jobs have priorities: among the children
    holding the highest-priority work below ``node`` in a group that fits the machine, the
    one :func:`lowest` would pick (the lowest weighted share, ties to the first in children's
    order). Where every such leaf below ``node`` has the same priority, that is
    :func:`lowest` itself; otherwise the children are scanned as the paper's full scan does.

    Parameters
    ----------
    view : View
        The view of the machine's ``Y``, up to date (:func:`update`).
    node : int
        An internal node.
    fitting : list of int
        The groups whose task fits the machine.
    tree : Tree
        The tree, its :attr:`Tree.tiers` kept.

    Returns
    -------
    int
        The child, or -1 when no child has a leaf that can launch in a fitting group.
    """
    tiers = tree.tiers
    here = tiers[node]
    top = 0
    seen = False
    mixed = False
    for g in fitting:
        counted = here.get(g)
        if counted is None:
            continue
        for p in counted:
            if not seen:
                top = p
                seen = True
            elif p != top:
                mixed = True
                top = max(top, p)
    if not seen:
        return -1
    if not mixed:
        return lowest(view, node, fitting, tree.count, tree.served)
    rank = view.rank
    chosen = -1
    chosen_rank = 0.0
    for child in tie_order(tree.children[node], tree.served):
        below = tiers[child]
        for g in fitting:
            counted = below.get(g)
            if counted is not None and top in counted:
                break
        else:
            continue
        r = rank[child]
        if chosen < 0 or r < chosen_rank - TIE:
            chosen, chosen_rank = child, r
    return chosen


def update(
    view: View,
    tree: Tree,
    users: list[UserState],
    groups: list[Group],
    total: Sequence[float],
    usage: DecayedUsage | None = None,
    now: float = 0.0,
) -> None:
    """Recompute the view's dirty nodes, children before parents, each exactly as the
    full pass of Algorithm 3 (naive: plain sums) would, and queue their new ranks in
    their parents' heaps.

    A child of the root with no leaf that can launch is left stale instead: its values
    are read only by the root's recomputation (which never happens, see the module) and
    by its entries in the root's heaps (it has none that count), so they are computed
    when it counts again (``NaiveHdrf._add``). On a cluster with room, most finishes are of
    users with nothing left to launch (TSF section VI's macrobenchmark).

    Parameters
    ----------
    view : View
        The view to bring up to date.
    tree : Tree
        The tree.
    users : list of UserState
        The users (the leaves' allocations, pending work and caps).
    groups : list of Group
        The cluster's groups (a leaf's next task's demand).
    total : sequence of float
        The cluster's totals per resource.
    usage : DecayedUsage, optional
        With a usage half-life, each user's decayed use of every resource: a leaf's vector
        is what it holds plus its decayed mean (SPEC section 8.3), evaluated at ``now``.
    now : float
        The time of the decision.
    """
    dirty = view.dirty
    depth = tree.depth
    nodes = sorted(dirty, key=depth.__getitem__, reverse=True) if len(dirty) > 1 else dirty
    resources = range(len(total))
    user_at = tree.user_at
    children = tree.children
    weight = tree.weight
    parent = tree.parent
    count = tree.count
    vec = view.vec
    share = view.share
    demanding = view.demanding
    y = view.y
    yset = view.yset
    stale = view.stale
    for node in list(nodes):
        if parent[node] == 0:
            if not count[node]:
                stale[node] = None
                continue
            if stale:
                stale.pop(node, None)
        u = user_at[node]
        if u >= 0:
            user = users[u]
            alloc = user.alloc
            v = [alloc[r] / total[r] if total[r] > 0 else 0.0 for r in resources]
            if usage is not None:
                past = usage.average(u, now)
                v = [v[r] + past[r] for r in resources]
            if y is not None:
                flag = user.pending > 0 and user.running < user.cap
                if flag:
                    # Demanding: the next task (of the user's oldest group) needs only
                    # resources in Y.
                    for g in user.job_heaps:
                        for r, d in enumerate(groups[g].demand):
                            if d > EPS and r not in yset:
                                flag = False
                                break
                        break
                demanding[node] = flag
                s = 0.0
                first = True
                for r in y:
                    if first or v[r] > s:
                        s = v[r]
                        first = False
            else:
                s = max(v, default=0.0)
        else:
            kids = children[node]
            v = [0.0] * len(total)
            if not kids:
                s = 0.0
                demanding[node] = False
            elif y is not None:
                active = [c for c in kids if demanding[c]]
                demanding[node] = bool(active)
                low = min([share[c] / weight[c] for c in active]) if active else 0.0
                for c in kids:
                    vc = vec[c]
                    if demanding[c] and share[c] > 0:
                        scale = low * weight[c] / share[c]
                        for r in resources:
                            v[r] += vc[r] * scale
                    else:
                        # Scale 1: x * 1.0 is x, so the sum is bit for bit the same.
                        for r in resources:
                            v[r] += vc[r]
                s = max([v[r] for r in y]) if y else 0.0
            else:
                for c in kids:
                    vc = vec[c]
                    for r in resources:
                        v[r] += vc[r]
                s = max(v, default=0.0)
        vec[node] = v
        share[node] = s
        rank = s / weight[node]
        view.rank[node] = rank
        version = view.ver[node] + 1
        view.ver[node] = version
        heaps = view.heaps[parent[node]]
        for g in count[node]:
            heap = heaps.get(g)
            if heap is None:
                heap = heaps[g] = []
            heappush(heap, (rank, node, version))
            if len(heap) > 64 + 4 * len(children[parent[node]]):
                compact(view, heap, g, count)
    dirty.clear()


def compact(view: View, heap: list[Entry], g: int, count: list[dict[int, int]]) -> None:
    """Drop the stale entries that lazy invalidation left below the top of ``heap`` (a
    node's heap for group ``g`` in ``view``; ``count`` is :attr:`Tree.count`)."""
    ver = view.ver
    seen: set[int] = set()
    kept: list[Entry] = []
    for entry in heap:
        node = entry[1]
        if entry[2] == ver[node] and g in count[node] and node not in seen:
            seen.add(node)
            kept.append(entry)
    heap[:] = kept
    heapify(heap)
