"""Hadoop's Capacity Scheduler as H-DRF section 5.2 ran it (``C.S-Current``, Hadoop
2.0.2-alpha with multi-resource scheduling): the comparator that is not Pareto-efficient.

- Queues have capacities: a queue's (and a user's) capacity is its weight's fraction of its
  siblings' weights (Hadoop's ``capacity`` percentages, which add up to 100 among siblings).
  A machine goes to the child most under-served for its capacity, its dominant share over
  its weight, from the root down: naive H-DRF's walk (section 3.3: "C.S-Current uses the
  naive H-DRF technique and tries to equalize the dominant share allocation between every
  pair of sibling nodes").
- Users are the leaf queues (the leaves n1,1 ... n3,1 of H-DRF's Figure 10); a leaf runs its
  jobs first in, first out (submission order; priorities first).
- A queue may use idle capacity of others up to its maximum capacity:
  ``PolicyOptions.max_capacity`` of its parent's maximum (Hadoop's ``maximum-capacity``;
  1.0, the default, is all of it), the root's being the whole cluster. A node whose
  dominant share of the cluster has reached its maximum takes no task, and a task that would
  take it past its maximum is not launched (Hadoop's ``assignToQueue``). A queue's
  ``max_share`` (tasks) and a user's cap apply as under every policy.
- Not Pareto-efficient: the root's dominant share reaches its maximum, 1, as soon as one
  resource of the cluster is fully used, and then nothing is launched, not even a task that
  does not use that resource ("it stops allocating tasks to nodes as soon as any of the
  cluster resources is fully utilized", section 5.2: the GPU leaf n1,2 stays pinned near its
  CPU sibling's share while GPUs sit idle).

Examples
--------
Section 5.2 in miniature: queue n1 holds n1,1 (CPU tasks) and n1,2 (GPU tasks), queue n2 one
CPU leaf; 4 CPUs and 4 GPUs. Once the CPUs are full the Capacity Scheduler launches no GPU
task: n1,2 keeps the share of its sibling and 3 GPUs idle; H-DRF gives it all 4.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job, Queue
>>> cluster = Cluster.build(["cpu", "gpu"], [Machine("m", np.array([4.0, 4.0]))])
>>> jobs = [
...     Job("a", 0.0, "n1,1", np.array([1.0, 0.0]), 10, queue="n1"),
...     Job("b", 0.0, "n1,2", np.array([0.0, 1.0]), 10, queue="n1"),
...     Job("c", 0.0, "n2,1", np.array([1.0, 0.0]), 10, queue="n2"),
... ]
>>> for name in ("capacity", "hdrf"):
...     policy = make_policy(name, cluster, queues=[Queue("n1"), Queue("n2")])
...     for job_id, job in enumerate(jobs):
...         policy.job_submitted(0.0, job_id, job)
...     launched = policy.decide(0.0)
...     print(name, [user.running for user in policy.users])
capacity [2, 1, 2]
hdrf [2, 4, 2]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.filters import Filter, Stage
from fairshare.policies.hdrf import NaiveHdrf, TreeSelection
from fairshare.policies.options import PolicyOptions
from fairshare.policies.records import JobState, Room
from fairshare.tolerances import FIT as EPS
from fairshare.workload.model import Queue, User

__all__ = ["Capacity", "MaxCapacity"]


@mypyc_attr(allow_interpreted_subclasses=True)
class MaxCapacity(Filter):
    """Hadoop's ``maximum-capacity``: a task may go to a user only while every node from its
    leaf to the root is below its maximum capacity and stays within it with the task (a
    ``pick`` filter: a refused user sits out the rest of the machine's offer, as Hadoop goes
    on to the next queue).

    Parameters
    ----------
    fraction : float
        Each node's maximum as a fraction of its parent's (``PolicyOptions.max_capacity``).
    """

    reason: ClassVar[str] = "quota"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The queue at its maximum capacity (see
        :meth:`~fairshare.policies.filters.Filter.describe`).

        Parameters
        ----------
        job : JobState
        mi : int
        free : sequence of float
        now : float

        Returns
        -------
        str
        """
        return (
            f"a queue above its user is at its maximum capacity ({self.fraction:g} of its parent's)"
        )

    stage: ClassVar[Stage] = "pick"

    def __init__(self, fraction: float) -> None:
        self.fraction = fraction

    def absolute_max(self, node: int) -> float:
        """The node's maximum capacity as a dominant share of the cluster: the root's is 1,
        every other node's ``max_capacity`` times its parent's.

        Parameters
        ----------
        node : int
            A node of the tree (0 is the root).

        Returns
        -------
        float
        """
        return self.fraction ** self._tree().depth(node)

    def _tree(self) -> TreeSelection:
        """The queue tree the maximum capacities follow."""
        selection = self.ledger.selection
        assert isinstance(selection, TreeSelection)
        return selection

    def _used(self, tree: TreeSelection) -> list[list[float]]:
        """Per node, the resources its users run on, over the cluster's totals."""
        total = self.ledger.cluster.total
        size = len(total)
        parent = tree.parent
        used = [[0.0] * size for _ in parent]
        for user in self.ledger.users:
            if user.running == 0:
                continue
            node = tree.leaf[user.idx]
            alloc = user.alloc
            while node >= 0:
                row = used[node]
                for r in range(size):
                    if total[r] > 0:
                        row[r] += alloc[r] / total[r]
                node = parent[node]
        return used

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Whether a task of ``job`` may go to its user: every node from its leaf to the root
        is below its maximum capacity and stays within it with the task.

        Parameters
        ----------
        job : JobState
            The job part (its user and group's demand).
        mi : int
            Unused: capacities pool the cluster.
        free : sequence of float
            Unused.
        now : float
            Unused.

        Returns
        -------
        bool
        """
        return self.admits_whole(job, 1, now)

    def admits_whole(self, job: JobState, count: int, now: float) -> bool:
        """Whether ``count`` tasks of ``job`` may start together (a gang): every node from
        its user's leaf to the root is below its maximum capacity and stays within it with
        all of them (see :meth:`Filter.admits_whole`).

        Parameters
        ----------
        job : JobState
            The job part (its user and group's demand).
        count : int
            How many of its tasks would start.
        now : float
            Unused.

        Returns
        -------
        bool
        """
        ledger = self.ledger
        tree = self._tree()
        total = ledger.cluster.total
        demand = [d * count for d in ledger.cluster.groups[job.group].demand]
        used = self._used(tree)
        node = tree.leaf[job.user]
        while node >= 0:
            limit = self.absolute_max(node)
            row = used[node]
            current = max(row, default=0.0)
            after = max(
                (row[r] + d / total[r] for r, d in enumerate(demand) if total[r] > 0),
                default=0.0,
            )
            if current >= limit - EPS or after > limit + EPS:
                return False
            node = tree.parent[node]
        return True


@mypyc_attr(allow_interpreted_subclasses=True)
class Capacity(NaiveHdrf):
    """The Capacity Scheduler (module docstring): naive H-DRF's order, FIFO inside a leaf,
    every node held to its maximum capacity (:class:`MaxCapacity`).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (the leaf queues: weights give their capacities, caps), in
        scenario order (the order of ties).
    queues : sequence of Queue
        The queue tree (weights give capacities among siblings).
    options : PolicyOptions, optional
        ``max_capacity``, and the mechanisms every policy has (delay scheduling, preemption,
        headroom, reducer slow-start, copy-compute splitting).
    """

    name = "capacity"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        fraction = options.max_capacity if options is not None else 1.0
        super().__init__(
            cluster, users=users, queues=queues, options=options, filters=[MaxCapacity(fraction)]
        )
