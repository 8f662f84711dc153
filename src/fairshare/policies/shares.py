"""The fair shares preemption protects (FAIR section 3.2): a user is fair-starved while it runs
fewer tasks than half its fair share for ``Tfair``, and min-starved below its minimum share
for ``Tmin``.
Three ways to compute the shares, one per kind of policy: FAIR's weighted water-filling with
minimum shares (:func:`fair_shares`), the same over H-DRF's queue tree
(:func:`hierarchical_shares`), and FIFO's by submission order (:func:`priority_shares`).
:mod:`fairshare.policies.preemption` decides the kills.

Examples
--------
Ten slots, three users wanting 2, 6 and 6 tasks with equal weights: the first gets its 2, the
others split the 8 left:

>>> fair_shares([2.0, 6.0, 6.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], 10.0)
[2.0, 4.0, 4.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fairshare.tolerances import WATER


def fair_shares(
    demands: Sequence[float], mins: Sequence[float], weights: Sequence[float], slots: float
) -> list[float]:
    """FAIR's slot allocation (Appendix A, Algorithm 2), weighted: pools whose demand is below
    their minimum share get their demand, the others their minimum share, and the rest is
    poured evenly (in proportion to weight) into the pools with the least water until demands
    are met or slots run out. Minimum shares are scaled down when they exceed ``slots``.

    Parameters
    ----------
    demands : sequence of float
        Each pool's demand.
    mins : sequence of float
        Each pool's minimum share.
    weights : sequence of float
        Each pool's weight (positive).
    slots : float
        What there is to share.

    Returns
    -------
    list of float
        Each pool's fair share.

    Examples
    --------
    Ten slots, the third pool with a minimum share of 5: it gets 5, the second its demand of
    2, and the first the rest.

    >>> fair_shares([8.0, 2.0, 8.0], [0.0, 0.0, 5.0], [1.0, 1.0, 1.0], 10.0)
    [3.0, 2.0, 5.0]
    >>> fair_shares([10.0, 10.0], [0.0, 0.0], [2.0, 1.0], 9.0)
    [6.0, 3.0]
    """
    n = len(demands)
    share = [0.0] * n
    base = [min(d, m) for d, m in zip(demands, mins, strict=True)]
    total_min = sum(base)
    scale = 1.0 if total_min <= slots or total_min == 0 else slots / total_min
    for i in range(n):
        share[i] = base[i] * scale
    left = slots - sum(share)
    active = [i for i in range(n) if share[i] < demands[i]]
    # Water-filling on the weighted level share/weight: raise the lowest level first.
    while active and left > WATER:
        levels = sorted(active, key=lambda i: (share[i] / weights[i], i))
        low = share[levels[0]] / weights[levels[0]]
        at_low = [i for i in levels if share[i] / weights[i] <= low + WATER]
        above = [share[i] / weights[i] for i in levels if share[i] / weights[i] > low + WATER]
        next_level = min(above) if above else math.inf
        room = min((demands[i] - share[i]) / weights[i] for i in at_low)
        wsum = sum(weights[i] for i in at_low)
        step = min(left / wsum, room, next_level - low)
        for i in at_low:
            share[i] += step * weights[i]
        left -= step * wsum
        active = [i for i in active if share[i] < demands[i] - WATER]
    return share


def hierarchical_shares(
    parent: Sequence[int],
    weights: Sequence[float],
    leaves: Sequence[int],
    demands: Sequence[float],
    slots: float,
) -> list[float]:
    """Hierarchical max-min of ``slots`` (H-DRF section 2's fair share, on the policy's one
    share unit): the root's ``slots`` are water-filled among its children in proportion to
    their ``weights`` (:func:`fair_shares`, no minimum shares), a child demanding the sum of
    its leaves' ``demands``; what a node gets is water-filled among its own children the same
    way, down to the leaves. ``parent[node]`` is each node's parent (node 0, the root, has
    -1; parents come before their children), ``leaves[i]`` the node of user ``i``.

    Parameters
    ----------
    parent : sequence of int
        Each node's parent, -1 for the root (node 0).
    weights : sequence of float
        Each node's weight.
    leaves : sequence of int
        Each user's leaf node.
    demands : sequence of float
        Each user's demand.
    slots : float
        What there is to share.

    Returns
    -------
    list of float
        Each user's share.

    Examples
    --------
    Two queues under the root; user 0 alone in the first, users 1 and 2 in the second:

    >>> hierarchical_shares([-1, 0, 0, 1, 2, 2], [1.0] * 6, [3, 4, 5], [1.0, 1.0, 1.0], 1.2)
    [0.6, 0.3, 0.3]
    """
    nodes = len(parent)
    wanted = [0.0] * nodes
    for user, leaf in enumerate(leaves):
        wanted[leaf] += demands[user]
    for node in range(nodes - 1, 0, -1):
        wanted[parent[node]] += wanted[node]
    children: list[list[int]] = [[] for _ in range(nodes)]
    for node in range(1, nodes):
        children[parent[node]].append(node)
    got = [0.0] * nodes
    got[0] = min(slots, wanted[0])
    for node in range(nodes):
        kids = children[node]
        if kids:
            split = fair_shares(
                [wanted[k] for k in kids],
                [0.0] * len(kids),
                [weights[k] for k in kids],
                got[node],
            )
            for k, amount in zip(kids, split, strict=True):
                got[k] = amount
    return [got[leaf] for leaf in leaves]


def priority_shares(demands: Sequence[float], order: Sequence[int], slots: float) -> list[float]:
    """FIFO's allocation from scratch (FAIR section 2): ``slots`` go to the users in ``order``,
    each taking its whole demand before the next gets anything.

    Parameters
    ----------
    demands : sequence of float
        Each user's demand.
    order : sequence of int
        The users in priority order (FIFO: by their oldest unfinished job).
    slots : float
        What there is to share.

    Returns
    -------
    list of float
        Each user's share.

    Examples
    --------
    >>> priority_shares([3.0, 5.0, 4.0], [1, 0, 2], 6.0)
    [1.0, 5.0, 0.0]
    """
    share = [0.0] * len(demands)
    left = slots
    for i in order:
        share[i] = max(0.0, min(demands[i], left))
        left -= share[i]
    return share
