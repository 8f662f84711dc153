"""The scheduling tree: queues as internal nodes, users as leaves (H-DRF section 2.1).

Node 0 is the root. Children appear in scenario order (queues in declaration order, then
users), which is also the documented tie-break order of every solver that walks the
tree.

Examples
--------
H-DRF section 3.2: two queues of equal weight, ``n1`` with one user and ``n2`` with two.

>>> from fairshare.workload import parse_scenario
>>> from fairshare.workload.hierarchy import build_hierarchy
>>> scenario = parse_scenario(
...     {
...         "machines": [{"name": "cluster", "capacity": {"cpu": 10, "gpu": 10}}],
...         "queues": [{"path": "n1"}, {"path": "n2"}],
...         "users": [
...             {"name": "n1-1", "queue": "n1", "demand": {"cpu": 1, "gpu": 1}},
...             {"name": "n2-1", "queue": "n2", "demand": {"cpu": 1}},
...             {"name": "n2-2", "queue": "n2", "demand": {"gpu": 1}},
...         ],
...     },
...     source="hdrf-section-3.2",
... )
>>> tree = build_hierarchy(scenario)
>>> tree.names, tree.parent.tolist()
(('', 'n1', 'n2', 'n1-1', 'n2-1', 'n2-2'), [-1, 0, 0, 1, 2, 2])
>>> tree.collapsed_weights().tolist()
[0.5, 0.25, 0.25]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fairshare.cluster import FloatArray
from fairshare.workload.model import ROOT, Scenario

IntArray = npt.NDArray[np.int64]
"""An int64 numpy array: node and user indices."""


@dataclass(frozen=True)
class TreeSum:
    """Which users are below which node: a sparse nodes x users 0/1 matrix.

    The matrix has a 1 where the node is the user's leaf or one of its ancestors, stored as
    (node, user) pairs. ``tree_sum @ per_user`` aggregates a per-user vector (or users x k
    matrix) up the tree: each node gets the sum over the users below it.

    Parameters
    ----------
    nodes : IntArray
        The node of each pair.
    users : IntArray
        The user of each pair.
    size : int
        The number of nodes.
    """

    nodes: IntArray
    users: IntArray
    size: int

    def __matmul__(self, values: npt.ArrayLike) -> FloatArray:
        """Each node's sum of ``values`` over the users below it.

        Parameters
        ----------
        values : array_like
            A per-user vector, or a users x k matrix.

        Returns
        -------
        FloatArray
            A per-node vector, or a nodes x k matrix.

        Examples
        --------
        >>> from fairshare.workload import parse_scenario
        >>> from fairshare.workload.hierarchy import build_hierarchy
        >>> scenario = parse_scenario(
        ...     {
        ...         "machines": [{"name": "m", "capacity": {"slots": 8}}],
        ...         "queues": [{"path": "q"}],
        ...         "users": [
        ...             {"name": "a", "queue": "q"},
        ...             {"name": "b", "queue": "q"},
        ...             {"name": "c"},
        ...         ],
        ...     },
        ...     source="tree",
        ... )
        >>> tree = build_hierarchy(scenario)
        >>> tree.names
        ('', 'q', 'a', 'b', 'c')
        >>> (tree.ancestors @ [1.0, 2.0, 4.0]).tolist()
        [7.0, 3.0, 1.0, 2.0, 4.0]
        """
        array = np.asarray(values, dtype=np.float64)
        if array.ndim == 1:
            summed = np.bincount(self.nodes, weights=array[self.users], minlength=self.size)
            return summed.astype(np.float64, copy=False)
        out = np.empty((self.size, array.shape[1]), dtype=np.float64)
        picked = array[self.users]
        for column in range(array.shape[1]):
            out[:, column] = np.bincount(self.nodes, weights=picked[:, column], minlength=self.size)
        return out

    def users_below(self, nodes: npt.ArrayLike, user_count: int) -> npt.NDArray[np.bool_]:
        """Which users are in the subtree of any of ``nodes``.

        Parameters
        ----------
        nodes : array_like
            Node indices.
        user_count : int
            The number of users.

        Returns
        -------
        BoolArray
            A per-user mask.
        """
        below = np.zeros(user_count, dtype=np.bool_)
        below[self.users[np.isin(self.nodes, nodes)]] = True
        return below

    def users_per_node(self) -> IntArray:
        """How many users each node has below it (itself included, for a leaf).

        Returns
        -------
        IntArray
            A per-node count.
        """
        return np.bincount(self.nodes, minlength=self.size).astype(np.int64)


@dataclass(frozen=True)
class Hierarchy:
    """A weighted tree over the scenario's queues and users (H-DRF section 2.1).

    Build one with :func:`build_hierarchy`.

    Parameters
    ----------
    names : tuple of str
        Each node's name: ``ROOT`` (the empty string), queue paths, then user names.
    parent : IntArray
        Each node's parent; -1 for the root.
    depth : IntArray
        Each node's depth; 0 for the root.
    weight : FloatArray
        Each node's weight (1 for the root).
    max_tasks : FloatArray
        Each node's cap in tasks: a queue's ``max_share``, a user's
        :attr:`~fairshare.workload.model.User.cap`; ``inf`` for none.
    leaf_node : IntArray
        The node of each user.
    user_of : IntArray
        The user of each node; -1 for internal nodes.
    children : tuple of tuple of int
        Each node's children, in scenario order.
    ancestors : TreeSum
        The nodes x users matrix with a 1 where the node is the user's leaf or one of its
        ancestors, so that ``ancestors @ per_user_vector`` aggregates any quantity up the tree
        in one product.
    """

    names: tuple[str, ...]
    parent: IntArray
    depth: IntArray
    weight: FloatArray
    max_tasks: FloatArray
    leaf_node: IntArray
    user_of: IntArray
    children: tuple[tuple[int, ...], ...]
    ancestors: TreeSum

    @property
    def size(self) -> int:
        """The number of nodes, root included."""
        return len(self.names)

    @property
    def is_flat(self) -> bool:
        """Whether every user hangs directly below the root (plain DRF)."""
        return bool(np.all(self.depth[self.leaf_node] == 1))

    def path_to_root(self, node: int) -> list[int]:
        """The node and its ancestors, root last.

        Parameters
        ----------
        node : int
            A node index.

        Returns
        -------
        list of int
        """
        path = []
        while node >= 0:
            path.append(node)
            node = int(self.parent[node])
        return path

    def capped_queues(self) -> tuple[tuple[IntArray, ...], FloatArray]:
        """The queues with a ``max_share``: the users below each, and its cap in tasks.

        What every solver keeps its queues within (one list, whatever tree the policy
        shares by: a flat policy such as DRF still honours its queues' caps).

        Returns
        -------
        tuple of (tuple of IntArray, FloatArray)
            Per capped queue, its users (ascending; a user may be under several: nested
            queues), and each queue's ``max_share`` in tasks.

        Examples
        --------
        >>> from fairshare.workload import parse_scenario
        >>> scenario = parse_scenario(
        ...     {"machines": [{"name": "m", "capacity": {"slots": 8}}],
        ...      "queues": [{"path": "q", "max_share": 2.5}, {"path": "r"}],
        ...      "users": [{"name": "a", "queue": "q"}, {"name": "b", "queue": "r"},
        ...                {"name": "c", "queue": "q"}]},
        ...     source="tree",
        ... )
        >>> members, limits = build_hierarchy(scenario).capped_queues()
        >>> [m.tolist() for m in members], limits.tolist()
        ([[0, 2]], [2.5])
        """
        members: list[IntArray] = []
        limits: list[float] = []
        pairs = self.ancestors
        for node in range(1, self.size):
            if self.user_of[node] < 0 and np.isfinite(self.max_tasks[node]):
                members.append(np.sort(pairs.users[pairs.nodes == node]).astype(np.int64))
                limits.append(float(self.max_tasks[node]))
        return tuple(members), np.array(limits, dtype=np.float64)

    def collapsed_weights(self) -> FloatArray:
        """Each user's weight in the flattened hierarchy (H-DRF section 3.2).

        The product, along the user's path, of each node's weight over the summed weights of it
        and its siblings. Empty queues (no user below them) demand nothing and are left out of
        the sums.

        Returns
        -------
        FloatArray
            One weight per user, in scenario order; they sum to 1.
        """
        has_user = self.ancestors.users_per_node() > 0
        out = np.ones(len(self.leaf_node), dtype=np.float64)
        # Per parent, its children's summed weight (once per parent, not per leaf below it).
        totals: dict[int, float] = {}
        for user, leaf in enumerate(self.leaf_node):
            factor = 1.0
            for node in self.path_to_root(int(leaf))[:-1]:
                up = int(self.parent[node])
                total = totals.get(up)
                if total is None:
                    siblings = self.children[up]
                    total = totals[up] = sum(self.weight[s] for s in siblings if has_user[s])
                factor *= self.weight[node] / total
            out[user] = factor
        return out


def build_hierarchy(scenario: Scenario, *, flat: bool = False) -> Hierarchy:
    """The scheduling tree of ``scenario`` (H-DRF section 2.1).

    Parameters
    ----------
    scenario : Scenario
        Its queues become internal nodes and its users leaves.
    flat : bool
        Hang every user below the root, ignoring the queues (plain DRF).

    Returns
    -------
    Hierarchy

    Examples
    --------
    >>> from fairshare.workload import parse_scenario
    >>> from fairshare.workload.hierarchy import build_hierarchy
    >>> scenario = parse_scenario(
    ...     {
    ...         "machines": [{"name": "m", "capacity": {"slots": 8}}],
    ...         "queues": [{"path": "q", "weight": 3}],
    ...         "users": [{"name": "a", "queue": "q"}, {"name": "b"}],
    ...     },
    ...     source="tree",
    ... )
    >>> build_hierarchy(scenario).collapsed_weights().tolist()
    [0.75, 0.25]
    >>> build_hierarchy(scenario, flat=True).is_flat
    True
    """
    names: list[str] = [ROOT]
    parent: list[int] = [-1]
    weight: list[float] = [1.0]
    max_tasks: list[float] = [math.inf]
    index = {ROOT: 0}
    if not flat:
        for queue in scenario.queues:
            index[queue.path] = len(names)
            names.append(queue.path)
            parent.append(-2)
            weight.append(queue.weight)
            max_tasks.append(queue.max_share)
        for queue in scenario.queues:
            parent[index[queue.path]] = index[queue.parent]
    leaf_node = []
    for user in scenario.users:
        leaf_node.append(len(names))
        names.append(user.name)
        parent.append(0 if flat else index[user.queue])
        weight.append(user.weight)
        max_tasks.append(user.cap)
    size = len(names)
    children: list[list[int]] = [[] for _ in range(size)]
    for node in range(1, size):
        children[parent[node]].append(node)
    depth = [0] * size
    for node in _preorder(children):
        if node:
            depth[node] = depth[parent[node]] + 1
    rows, cols = [], []
    for user_index, leaf in enumerate(leaf_node):
        node = leaf
        while node >= 0:
            rows.append(node)
            cols.append(user_index)
            node = parent[node]
    ancestors = TreeSum(
        nodes=np.array(rows, dtype=np.int64), users=np.array(cols, dtype=np.int64), size=size
    )
    user_of = np.full(size, -1, dtype=np.int64)
    user_of[np.array(leaf_node, dtype=np.int64)] = np.arange(len(leaf_node))
    return Hierarchy(
        names=tuple(names),
        parent=np.array(parent, dtype=np.int64),
        depth=np.array(depth, dtype=np.int64),
        weight=np.array(weight, dtype=np.float64),
        max_tasks=np.array(max_tasks, dtype=np.float64),
        leaf_node=np.array(leaf_node, dtype=np.int64),
        user_of=user_of,
        children=tuple(tuple(c) for c in children),
        ancestors=ancestors,
    )


def _preorder(children: list[list[int]]) -> list[int]:
    """The nodes in depth-first order from the root, children in scenario order."""
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(children[node]))
    return order
