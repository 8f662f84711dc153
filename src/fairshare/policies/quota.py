"""Nominal quotas with lending and borrowing over the queue tree (Kueue's cohorts, YuniKorn's
guaranteed and max resources), on top of H-DRF's hierarchy (H-DRF section 2.1: queues are
the tree's internal nodes; a queue's users are the leaves below it).

A queue's ``quota`` is its nominal share in resource units. What a queue uses is the demand of
the running tasks of every user below it. Per governed resource (one its quota names):

- *Borrowing*: a queue may use more than its quota, up to ``quota + borrowing_limit`` (Kueue's
  ``borrowingLimit``; YuniKorn's ``max`` is ``quota + borrowing_limit``). A launch that would
  take one of the queues above its user past that ceiling is not made
  (:meth:`QuotaTree.admits`).
- *Lending*: a queue lends at most ``lending_limit`` of its idle quota: the rest of its idle
  quota, ``max(0, quota - lending_limit - used)``, is held back from its *siblings* (the
  queues with quotas that share its nearest ancestor with a quota; the root for the top
  ones). A launch that borrows (takes a queue above its quota) is not made when the cluster's
  free room left after it would not cover what its siblings hold back.
- *Idle quota only*: a launch that borrows is not made while a sibling with pending work is
  below its quota in a resource the launch needs: quota a queue is waiting to use is not
  idle (Kueue admits the workloads that fit within their nominal quota first). Work that
  cannot run anywhere still counts as waiting, so such a queue's quota stays unlent.
- *Reclaiming*: a queue below its quota with pending work whose next task fits within the
  quotas of every queue above its user takes it back by preemption
  (:mod:`fairshare.policies.preemption`), killing tasks of *borrowing* queues only.

The reclaim bound (a queue below its quota with pending work gets a task within ``Tmin`` when
a machine frees room for it once the borrowed tasks on it are gone) is the property
``quota-restored`` of ``fairshare check`` (:mod:`fairshare.fairness.quotas`).

Quotas nest: the loader checks that the quotas of the queues below one ancestor with a quota
add up to at most its quota, and those at the top to at most the cluster's capacity, so that
every queue can be given its whole quota at once. A user in no queue with a quota has no
nominal share: all it uses is borrowed.

Examples
--------
Queue ``a`` has 4 CPUs of quota and may borrow 2 more; ``b`` has 4 and lends none of them.
With ``b`` idle, ``a`` may not go past its quota (the 4 idle CPUs of ``b`` are held back):

>>> import math
>>> from fairshare.workload.model import Queue
>>> inf = math.inf
>>> tree = QuotaTree(
...     [
...         Queue("a", quota=(4.0,), borrowing_limit=(2.0,), lending_limit=(inf,)),
...         Queue("b", quota=(4.0,), borrowing_limit=(inf,), lending_limit=(0.0,)),
...     ],
...     1,
... )
>>> used = [[4.0], [0.0]]
>>> tree.admits(used, tree.chain("a"), (1.0,), [4.0], [0, 0])
False
>>> tree.within(used, tree.chain("b"), (1.0,))
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fairshare.policies.records import Demand, UserState
from fairshare.tolerances import FIT
from fairshare.workload.model import Queue


class QuotaTree:
    """The queues with a quota, their limits, and the tests a launch and a kill must pass.

    Parameters
    ----------
    queues : sequence of Queue
        The scenario's queues (those without ``quota`` take no part).
    resources : int
        How many resources the cluster has.

    Attributes
    ----------
    paths : list of str
        The queues with a quota, in declaration order (their index is their number here).
    quota, ceiling, keep : list of list of float
        Per such queue and resource: the quota (``inf`` where not governed), the most it may
        use (quota + borrowing limit) and what of its quota it never lends.
    up : list of int
        Per such queue, its nearest ancestor with a quota (-1: none).
    """

    def __init__(self, queues: Sequence[Queue], resources: int) -> None:
        self.resources = resources
        self.paths: list[str] = []
        self.quota: list[list[float]] = []
        self.ceiling: list[list[float]] = []
        self.keep: list[list[float]] = []
        self.up: list[int] = []
        index: dict[str, int] = {}
        for q in queues:
            if q.quota is None:
                continue
            borrow = q.borrowing_limit or (math.inf,) * resources
            lend = q.lending_limit or (math.inf,) * resources
            index[q.path] = len(self.paths)
            self.paths.append(q.path)
            self.quota.append(list(q.quota))
            self.ceiling.append([a + b for a, b in zip(q.quota, borrow, strict=True)])
            self.keep.append(
                [
                    0.0 if math.isinf(a) or math.isinf(b) else max(0.0, a - b)
                    for a, b in zip(q.quota, lend, strict=True)
                ]
            )
            above = q.parent
            while above and above not in index:
                above = above.rpartition("/")[0]
            self.up.append(index[above] if above else -1)
        self._index = index
        self._chains: dict[str, list[int]] = {}

    def chain(self, path: str) -> list[int]:
        """The queues with a quota at or above queue ``path``, lowest first.

        Parameters
        ----------
        path : str
            A queue's path (``""``: the root).

        Returns
        -------
        list of int
            Their numbers.
        """
        known = self._chains.get(path)
        if known is not None:
            return known
        out: list[int] = []
        node = path
        while node:
            i = self._index.get(node)
            if i is not None:
                out.append(i)
            node = node.rpartition("/")[0]
        self._chains[path] = out
        return out

    def usage(self, users: Sequence[UserState]) -> list[list[float]]:
        """Per queue with a quota, what the running tasks of the users below it hold.

        Parameters
        ----------
        users : sequence of UserState
            The users, with their allocations kept (``Ledger.track``).

        Returns
        -------
        list of list of float
            Per queue and resource.
        """
        used = [[0.0] * self.resources for _ in self.paths]
        for user in users:
            if not user.running:
                continue
            for a in self.chain(user.queue):
                row = used[a]
                for r, x in enumerate(user.alloc):
                    row[r] += x
        return used

    def pending(self, users: Sequence[UserState]) -> list[int]:
        """Per queue with a quota, the pending tasks of the users below it.

        Parameters
        ----------
        users : sequence of UserState
            The users.

        Returns
        -------
        list of int
        """
        out = [0] * len(self.paths)
        for user in users:
            if user.pending:
                for a in self.chain(user.queue):
                    out[a] += user.pending
        return out

    def within(self, used: list[list[float]], chain: list[int], demand: Demand) -> bool:
        """Whether one more task of ``demand`` keeps every queue of ``chain`` within its
        quota (it borrows nothing).

        Parameters
        ----------
        used : list of list of float
            :meth:`usage`.
        chain : list of int
            The task's user's :meth:`chain`.
        demand : Demand
            The task's demand.

        Returns
        -------
        bool
        """
        for a in chain:
            row = used[a]
            cap = self.quota[a]
            for r, d in enumerate(demand):
                if d > 0 and row[r] + d > cap[r] + FIT:
                    return False
        return True

    def admits(
        self,
        used: list[list[float]],
        chain: list[int],
        demand: Demand,
        free_total: Sequence[float],
        pending: Sequence[int],
    ) -> bool:
        """Whether a launch of one task of ``demand`` by a user below ``chain`` respects the
        borrowing limits of its queues and the lending limits of their siblings (see the
        module).

        Parameters
        ----------
        used : list of list of float
            :meth:`usage`.
        chain : list of int
            The task's user's :meth:`chain`.
        demand : Demand
            The task's demand.
        free_total : sequence of float
            The cluster's free room, per resource, before the launch.
        pending : sequence of int
            :meth:`pending`.

        Returns
        -------
        bool
        """
        # The scopes in which the launch borrows: below each queue of the chain it exceeds,
        # and (for a user under no quota, or a chain whose top exceeds) at the root.
        borrows_at: list[int] = []
        for a in chain:
            row = used[a]
            top = self.ceiling[a]
            cap = self.quota[a]
            over = False
            for r, d in enumerate(demand):
                if d > 0:
                    if row[r] + d > top[r] + FIT:
                        return False
                    if row[r] + d > cap[r] + FIT:
                        over = True
            if over:
                borrows_at.append(self.up[a])
        if not chain:
            borrows_at.append(-1)
        if not borrows_at:
            return True
        held = [0.0] * self.resources
        for s, parent in enumerate(self.up):
            if parent in borrows_at and s not in chain:
                keep = self.keep[s]
                row = used[s]
                cap = self.quota[s]
                for r in range(self.resources):
                    if keep[r] > row[r]:
                        held[r] += keep[r] - row[r]
                    if pending[s] and demand[r] > 0 and row[r] < cap[r] - FIT < math.inf:
                        return False
        # The room left after the launch covers what the siblings hold back.
        return all(not (d > 0 and free_total[r] - d < held[r] - FIT) for r, d in enumerate(demand))

    def borrowed(
        self,
        used: list[list[float]],
        victim: list[int],
        beneficiary: list[int],
        demand: Demand,
    ) -> bool | None:
        """Whether a running task of ``demand`` of a user below ``victim`` is borrowed as
        seen from a user below ``beneficiary``: None when no quota separates the two users
        (the same queues with quotas above both); True when the victim's queue that
        separates them (its highest with a quota that is not the beneficiary's) uses,
        without the task, at least its quota in some governed resource the task holds, or
        when the victim has no quota of its own there (all it uses is borrowed).

        Parameters
        ----------
        used : list of list of float
            :meth:`usage`, less the tasks already chosen as victims.
        victim, beneficiary : list of int
            The two users' :meth:`chain`.
        demand : Demand
            The task's demand.

        Returns
        -------
        bool or None
        """
        own = [a for a in victim if a not in beneficiary]
        if not own:
            if all(a in victim for a in beneficiary):
                return None
            return True
        s = own[-1]
        row = used[s]
        cap = self.quota[s]
        for r, d in enumerate(demand):
            if d > 0 and not math.isinf(cap[r]) and row[r] - d >= cap[r] - FIT:
                return True
        return False
