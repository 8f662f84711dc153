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

What is cached, so that a decision does not recompute Algorithm 3 over the whole tree (the
paper notes that "the recomputation of the rescaled dominant shares can be simplified when
the set of available resources has not changed"):

- A *view* per distinct ``Y`` (one view for naive H-DRF, whose shares ignore ``Y``) holds
  every node's vector, share and demanding flag as Algorithm 3 computes them for that ``Y``.
  A leaf whose user changed (every change of a user's allocation, pending work or cap goes
  through ``Ledger.touch``) marks its path dirty in every view; a decision recomputes only the
  dirty nodes of its view, bottom-up. The root's vector is never read (the walk compares its
  children), so it is never recomputed.
- Each internal node keeps, per view and per group (constraint class and demand, see
  :mod:`fairshare.policies.state`), a heap of its children that have a leaf with pending
  work in that group, ordered by weighted share (lazy invalidation by a per-node version).
  Per node and group, a count of such leaves prunes children with no task for the machine.
  The walk takes, at each level, the children whose rank is within the tie tolerance of the
  lowest over the groups that fit the machine, and applies the reference tie-break to them.

With priorities (once a job with a priority other than 0 arrived), each node also counts its
leaves per group and priority of their next job there, and the walk prefers, at each level, the
children holding the highest priority in a fitting group, then the order above among them
(:func:`~fairshare.policies.hdrf_views.highest_then_lowest`); the shared scheduler orders
users the same way (the tier of its group heap entries).

A decision then costs O(depth x fitting groups x log fan-out) for the walk, plus, per node
changed since the last decision of the same ``Y``, O(resources) for a leaf and
O(fan-out x resources) for an internal node other than the root: an internal node's vector is
re-summed from its children in their order, so that every share is bit for bit the one the
paper's full recomputation gives, and decisions (ties included) are exactly its decisions.

Work skipped because its answer is known (TSF section VI's macrobenchmark, a cluster with
room, is mostly these cases; ``tests/test_hdrf_online.py`` checks every one against the
full recomputation):

- A child of the root none of whose leaves can launch is *stale* instead of dirty: only the
  root's recomputation (never done) and its own entries in the root's heaps (none count)
  read its values, so they are computed when it counts in a group again.
- A selection in which one (leaf, group) pair alone can launch on the machine returns it
  without Algorithm 3: the walk descends only into children with such a leaf.
- A user keeps the machine for a batch of launches (``Placer._serve``) while no other leaf
  can launch on it; otherwise every task is selected afresh.
- A map task's finish that is the only event at its time takes a fused path
  (``Scheduler.finish_and_decide``), and with no
  leaf able to launch anywhere, no selection at all.

Examples
--------
H-DRF Figure 4a: queues n1 and n2 share a machine of <10 CPUs, 10 GPUs>; leaf n1,1 (under n1)
and n2,1 (under n2) need a CPU per task, n2,2 (under n2) a GPU. Both policies start at
5 / 5 / 10. When a task of n2,1 finishes, naive H-DRF gives its CPU to n1,1 (section 3.3: n2's
share is its GPUs, so n2,1 starves as its tasks finish); dynamic H-DRF gives it back to n2,1
(section 3.4).

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import Job, Queue
>>> cluster = Cluster.build(["cpu", "gpu"], [Machine("m", np.array([10.0, 10.0]))])
>>> jobs = [
...     Job("n1,1", 0.0, "n1,1", np.array([1.0, 0.0]), 100, queue="n1"),
...     Job("n2,1", 0.0, "n2,1", np.array([1.0, 0.0]), 100, queue="n2"),
...     Job("n2,2", 0.0, "n2,2", np.array([0.0, 1.0]), 100, queue="n2"),
... ]
>>> for name in ("naive-hdrf", "hdrf"):
...     policy = make_policy(name, cluster, queues=[Queue("n1"), Queue("n2")])
...     for job_id, job in enumerate(jobs):
...         policy.job_submitted(0.0, job_id, job)
...     first = policy.decide(0.0)
...     running = [user.running for user in policy.users]
...     freed = next(d.task for d in first if d.task.job == 1)
...     [after] = policy.finish_and_decide(1.0, freed)
...     print(name, running, "->", jobs[after.task.job].name)
naive-hdrf [5, 5, 10] -> n1,1
hdrf [5, 5, 10] -> n2,1
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappush
from typing import TYPE_CHECKING, Final

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.drf import dominant_share
from fairshare.policies.filters import Filter
from fairshare.policies.hdrf_views import Tree, View, highest_then_lowest, lowest, update
from fairshare.policies.options import PolicyOptions
from fairshare.policies.ranking import NO_PICK, Pick, Ranking, Selection
from fairshare.policies.records import HeapEntry, JobHeapEntry, JobState, UserState
from fairshare.policies.scheduler import Scheduler
from fairshare.policies.shares import hierarchical_shares
from fairshare.policies.state import fits
from fairshare.tolerances import FIT as EPS
from fairshare.workload.model import ROOT, Queue, User

if TYPE_CHECKING:
    from fairshare.policies.filters import RoomFilter
    from fairshare.policies.ledger import Ledger

_NEVER: Final = HeapEntry(-(2**62), -float("inf"), -float("inf"), -1, -1, -1)
"""A batching bound no user's rank is below (see :meth:`TreeSelection.bound`): select again."""


@mypyc_attr(allow_interpreted_subclasses=True)
class TreeSelection(Selection):
    """Algorithm 4's walk over consumption vectors summed up the tree (naive H-DRF, section
    3.3), with Algorithm 3's rescaling of demanding children and blocked children ignored
    when ``dynamic`` (section 3.4); see the module for what is cached.

    Parameters
    ----------
    queues : sequence of Queue
        The queue tree's internal nodes and their weights; a path a job names but the
        scenario does not is a queue of weight 1.
    dynamic : bool
        Whether Algorithm 3 rescales demanding children and ignores blocked ones (dynamic
        H-DRF).
    """

    def __init__(self, queues: Sequence[Queue], dynamic: bool) -> None:
        super().__init__()
        self.dynamic = dynamic
        tree = self._tree = Tree()
        # The tree's arrays, grown in place (hdrf_views.Tree describes them).
        self.parent = tree.parent
        self.weight = tree.weight
        self._children = tree.children
        self._user_at = tree.user_at
        self._count = tree.count
        self._node_of_queue: dict[str, int] = {ROOT: 0}
        self.leaf: list[int] = []
        self._user_of_node: dict[int, int] = {}
        self._queues = tuple(queues)
        self._queue_weights = {q.path: q.weight for q in queues}
        self._skipped: set[tuple[int, int]] = set()
        # Per user: the groups it counts in (above), each with the priority of its next job
        # there (0 until a job with a priority arrives).
        self._member: list[dict[int, int]] = []
        # Whether the tree counts leaves by priority (Tree.tiers): once prioritized.
        self._tiered = False
        self._views: dict[tuple[int, ...] | None, View] = {}
        self._present: list[int] = []

    def bind(self, ledger: Ledger, room: RoomFilter | None) -> None:
        """Read ``ledger``, and test room with ``room`` (None: the plain fit test).

        Parameters
        ----------
        ledger : Ledger
            The scheduler's state.
        room : RoomFilter or None
            The fit test in force (headroom), or None for the plain one.
        """
        self.ledger = ledger
        self.room = room
        # The resources the cluster has (a Y holds only those), as of the last change.
        self._present = [r for r, t in enumerate(ledger.cluster.total) if t > 0]

    def ready(self) -> None:
        """The configured users' leaves exist: the declared queues without one are added."""
        for queue in self._queues:
            self._queue_node(queue.path)

    def depth(self, node: int) -> int:
        """The depth of ``node`` in the tree (the root's is 0).

        Parameters
        ----------
        node : int
            A node of the tree.

        Returns
        -------
        int
        """
        return self._tree.depth[node]

    def _queue_node(self, path: str) -> int:
        """The node of queue ``path``, created with its missing ancestors (weight 1 unless
        the scenario gives one)."""
        node = self._node_of_queue.get(path)
        if node is None:
            parent = self._queue_node(path.rpartition("/")[0])
            node = self._new_node(parent, self._queue_weights.get(path, 1.0))
            self._node_of_queue[path] = node
        return node

    def _new_node(self, parent: int, weight: float) -> int:
        """A new last child of ``parent``, dirty in every view."""
        node = self._tree.add(parent, weight)
        resources = len(self.ledger.cluster.total) if self._views else 0
        for view in self._views.values():
            view.grow(resources)
            self._dirty_path(view, node)
        return node

    def on_new_user(self, user: UserState) -> None:
        """The user's leaf joins the tree under its queue (created when new).

        Parameters
        ----------
        user : UserState
            The new user.
        """
        leaf = self._new_node(self._queue_node(user.queue), user.weight)
        self.leaf.append(leaf)
        self._user_of_node[leaf] = user.idx
        self._user_at[leaf] = user.idx
        self._member.append({})

    def on_cluster_change(self) -> None:
        """The totals moved, and with them every leaf's vector: every view is dropped (the
        ledger then recomputes every share, each touch marking its leaf's path)."""
        self._views.clear()
        self._present = [r for r, t in enumerate(self.ledger.cluster.total) if t > 0]

    # ----------------------------------------------------------------- change tracking

    def touched(self, user: UserState) -> None:
        """The user's allocation, pending work or cap changed: its leaf's path is dirty in
        every view, and its groups are counted again. H-DRF selects from its own tree, so
        the per-group user heaps are not fed (nothing would read them).

        Parameters
        ----------
        user : UserState
            The user (its version moved already).
        """
        leaf = self.leaf[user.idx]
        parent = self.parent
        if user.served:
            self._tree.serve(leaf, user.served)
        if parent[leaf] == 0 and not self._count[leaf]:
            # A child of the root that cannot launch: stale rather than dirty (see
            # hdrf_views.update); if the recount below gives it work, _add makes it dirty.
            for view in self._views.values():
                view.stale[leaf] = None
        else:
            for view in self._views.values():
                dirty = view.dirty
                node = leaf
                while node > 0 and node not in dirty:
                    dirty[node] = None
                    node = parent[node]
        old = self._member[user.idx]
        heaps = user.job_heaps
        if user.running < user.cap and not self._skipped:
            # The common case, without building a dict: the same groups as before (and,
            # with priorities, the same priority of the next job in each).
            if len(heaps) == len(old):
                if self.ledger.prioritized:
                    for g, heap in heaps.items():
                        p = old.get(g)
                        if p is None or p != self._head_priority(heap):
                            break
                    else:
                        return
                else:
                    for g in heaps:
                        if g not in old:
                            break
                    else:
                        return
        elif not heaps and not old:
            return
        self._recount(user)

    def _recount(self, user: UserState) -> None:
        """Count the user's leaf in the groups it may launch in now, and no other, each with
        the priority of the user's next job there (0 until a job with a priority arrives)."""
        u = user.idx
        old = self._member[u]
        new: dict[int, int] = {}
        if user.running < user.cap:
            skipped = self._skipped
            prioritized = self.ledger.prioritized
            for g, heap in user.job_heaps.items():
                if not skipped or (u, g) not in skipped:
                    new[g] = self._head_priority(heap) if prioritized else 0
        if new == old:
            return
        leaf = self.leaf[u]
        tiered = self._tiered
        for g, p in old.items():
            q = new.get(g)
            if q is None:
                self._add(leaf, g, -1)
                if tiered:
                    self._tree.retier(leaf, g, p, None)
            elif q != p and tiered:
                self._tree.retier(leaf, g, p, q)
        for g, q in new.items():
            if g not in old:
                self._add(leaf, g, 1)
                if tiered:
                    self._tree.retier(leaf, g, None, q)
        self._member[u] = new

    def _head_priority(self, heap: list[JobHeapEntry]) -> int:
        """The priority of the job a user launches from next in a group (its job heap)."""
        head = self.ledger.first_pending(heap)
        return 0 if head is None else head.priority

    def _start_tiers(self) -> None:
        """The first job with a priority arrived: count every leaf's groups by priority
        from now on (:attr:`hdrf_views.Tree.tiers`), starting from what the leaves count in."""
        self._tiered = True
        for u, member in enumerate(self._member):
            leaf = self.leaf[u]
            for g, p in member.items():
                self._tree.retier(leaf, g, None, p)

    def _dirty_path(self, view: View, node: int) -> None:
        """Mark ``node`` and its ancestors but the root dirty in ``view``."""
        dirty = view.dirty
        parent = self.parent
        while node > 0 and node not in dirty:
            dirty[node] = None
            node = parent[node]

    def _add(self, leaf: int, g: int, delta: int) -> None:
        """Count (``delta`` 1) or uncount (-1) ``leaf`` in group ``g`` up its path. A node
        that gains its first such leaf needs an entry in its parent's heap for ``g`` (in
        views where it is dirty, its recomputation pushes one; where it is stale, it becomes
        dirty, so that the next decision computes the rank that entry needs)."""
        count = self._count
        parent = self.parent
        node = leaf
        while node >= 0:
            counts = count[node]
            n = counts.get(g, 0) + delta
            if n:
                counts[g] = n
            else:
                del counts[g]
            up = parent[node]
            if n == 1 and delta > 0 and up >= 0:
                for view in self._views.values():
                    if node in view.dirty:
                        continue
                    if node in view.stale:
                        # A child of the root: its path is itself.
                        del view.stale[node]
                        view.dirty[node] = None
                        continue
                    heap = view.heaps[up].setdefault(g, [])
                    heappush(heap, (view.rank[node], node, view.ver[node]))
            node = up

    # ----------------------------------------------------------------- selection

    def skip(self, user: int, group: int) -> None:
        """The user's tasks of ``group`` sit out the rest of this offer (delay scheduling):
        its leaf stops counting in the group until the offer ends.

        Parameters
        ----------
        user : int
            The user's index.
        group : int
            The group.
        """
        self._skipped.add((user, group))
        member = self._member[user]
        p = member.pop(group, None)
        if p is not None:
            self._add(self.leaf[user], group, -1)
            if self._tiered:
                self._tree.retier(self.leaf[user], group, p, None)

    def bound(self, mi: int, u: int) -> HeapEntry | None:
        """Whether ``u`` keeps machine ``mi`` for another task of the batch (see
        ``Placer._serve``): None when no other leaf counts in a group whose task fits
        ``mi``, so that Algorithm 4's walk can only reach ``u``'s leaf again (with the same
        group: the first fitting one it counts in, as the room only shrinks during a batch);
        otherwise a bound no rank is below, so that the next task is selected afresh.

        This is the common case of an arriving job on a cluster with room (TSF section VI's
        macrobenchmark): nobody else waits, and the walk would pick the job's user for each
        of its tasks.

        Parameters
        ----------
        mi : int
            The machine's index.
        u : int
            The batch's user.

        Returns
        -------
        tuple or None
        """
        cs = self.ledger.cluster
        free = cs.free[mi]
        groups = cs.groups
        root = self._count[0]
        member = self._member[u]
        room = self.room
        for grp in cs.afor[mi]:
            g = grp.index
            n = root.get(g, 0)
            if g in member:
                n -= 1
            if n > 0 and (
                fits(free, groups[g].demand)
                if room is None
                else room.room(mi, free, groups[g].demand)
            ):
                return _NEVER
        return None

    def restore_held(self) -> None:
        """The offer is over: skipped users count in their groups again."""
        if self._skipped:
            users = {u for u, _ in self._skipped}
            self._skipped.clear()
            for u in sorted(users):
                self._recount(self.ledger.users[u])

    def select(self, mi: int) -> Pick:
        """Algorithm 2 for one task on machine ``mi``: Algorithm 3 on the nodes changed since
        the last decision with the same ``Y``, then Algorithm 4's walk (see the module).

        When one (leaf, group) pair alone can launch on ``mi``, the walk can reach only that
        leaf whatever the shares (it descends only into children with such a leaf), so the
        pair is the answer without Algorithm 3: the view stays dirty until a decision
        between several leaves needs it. An arriving job on a cluster with room is this case
        (TSF section VI's macrobenchmark).

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        (int, int)
            The user's index and the group of its task to launch, or
            :data:`~fairshare.policies.ranking.NO_PICK` when no leaf's task fits.
        """
        # The root counts, per group, the leaves that can launch in it: none on a cluster
        # where nobody can launch (most finishes of a cluster with room).
        root = self._count[0]
        if not root:
            return NO_PICK
        ledger = self.ledger
        cs = ledger.cluster
        free = cs.free[mi]
        groups = cs.groups
        room = self.room
        fitting: list[int] = []
        for grp in cs.afor[mi]:
            g = grp.index
            if not grp.users:
                continue
            if room is None:
                i = 0
                for d in grp.demand:
                    if free[i] + EPS < d:
                        break
                    i += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
                else:
                    fitting.append(g)
            elif room.room(mi, free, grp.demand):
                fitting.append(g)
        if not fitting:
            return NO_PICK
        pairs = 0
        for g in fitting:
            pairs += root.get(g, 0)
        if pairs == 0:
            return NO_PICK
        if pairs == 1:
            for g in fitting:
                if g in root:
                    members = self._member
                    for u in groups[g].users:
                        if g in members[u]:
                            return u, g
        y: tuple[int, ...] | None = None
        if self.dynamic:
            y = tuple([r for r in self._present if free[r] > EPS])
        view = self._views.get(y)
        if view is None:
            view = self._views[y] = View(y, len(self.parent), len(cs.total))
        if view.dirty:
            update(
                view,
                self._tree,
                ledger.users,
                cs.groups,
                cs.total,
                ledger.resource_usage,
                ledger.now,
            )
        user_at = self._user_at
        node = 0
        if not ledger.prioritized:
            while user_at[node] < 0:
                node = lowest(view, node, fitting, self._count, self._tree.served)
                if node < 0:
                    return NO_PICK
            u = user_at[node]
            member = self._member[u]
            for g in fitting:
                if g in member:
                    return u, g
            raise AssertionError("a counted leaf has a fitting group")
        if not self._tiered:
            self._start_tiers()
        tree = self._tree
        while user_at[node] < 0:
            node = highest_then_lowest(view, node, fitting, tree)
            if node < 0:
                return NO_PICK
        u = user_at[node]
        member = self._member[u]
        pick = -1
        top = 0
        for g in fitting:
            p = member.get(g)
            if p is not None and (pick < 0 or p > top):
                pick, top = g, p
        if pick < 0:
            raise AssertionError("a counted leaf has a fitting group")
        return u, pick


@mypyc_attr(allow_interpreted_subclasses=True)
class HdrfRanking(Ranking):
    """H-DRF's shares: a task's dominant share of the cluster (the unit preemption measures
    fair shares in; placement walks the tree's vectors and never reads it), and fair shares
    by the queue tree.

    Parameters
    ----------
    tree : TreeSelection
        The selection whose tree the fair shares follow.
    """

    def __init__(self, tree: TreeSelection) -> None:
        super().__init__()
        self.tree = tree
        self.tracks_allocation = True
        self.cluster_dependent = True
        # With a usage half-life, a leaf's vector adds its decayed mean of each resource.
        self.tracks_resource_usage = True

    def share_per_task(self, job: JobState) -> float:
        """A task's dominant share of the cluster.

        Parameters
        ----------
        job : JobState
            The job part.

        Returns
        -------
        float
        """
        return dominant_share(job.demand, self.ledger.cluster.total)

    def preemption_shares(self, demands: Sequence[float], capacity: float) -> list[float]:
        """Fair shares by the queue tree, not by flat user weights: hierarchical max-min of
        the dominant share all users hold (H-DRF section 2's hierarchical share guarantee:
        a queue's share is split among its children by weight, a child that wants less
        leaving the rest to its siblings).

        Parameters
        ----------
        demands : sequence of float
            Per user, the dominant share it holds plus that of its pending tasks.
        capacity : float
            The dominant share all users hold now.

        Returns
        -------
        list of float
            Per user, its share by
            :func:`~fairshare.policies.shares.hierarchical_shares`.
        """
        tree = self.tree
        return hierarchical_shares(tree.parent, tree.weight, tree.leaf, demands, capacity)


def hierarchical(queues: Sequence[Queue], dynamic: bool) -> tuple[HdrfRanking, TreeSelection]:
    """H-DRF's ranking and selection over ``queues`` (naive, or ``dynamic``).

    Parameters
    ----------
    queues : sequence of Queue
        The queue tree.
    dynamic : bool
        Dynamic H-DRF (Algorithm 3's rescaling) rather than naive.

    Returns
    -------
    (HdrfRanking, TreeSelection)
    """
    selection = TreeSelection(queues, dynamic)
    return HdrfRanking(selection), selection


@mypyc_attr(allow_interpreted_subclasses=True)
class NaiveHdrf(Scheduler):
    """Naive H-DRF (section 3.3): Algorithm 4's walk over consumption vectors summed up the
    tree, without rescaling (the Capacity Scheduler's behaviour).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (weights, caps, queues): leaves, in scenario order (the order
        of ties).
    queues : sequence of Queue
        The queue tree's internal nodes and their weights; a path a job names but the
        scenario does not is a queue of weight 1.
    options : PolicyOptions, optional
        Delay scheduling, preemption, headroom (H-DRF section 5), reducer slow-start,
        copy-compute splitting.
    filters : sequence of Filter
        Filters of a policy built on it (the Capacity Scheduler's maximum capacity).
    """

    name = "naive-hdrf"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
        filters: Sequence[Filter] = (),
    ) -> None:
        ranking, selection = hierarchical(queues, self.dynamic())
        super().__init__(
            cluster,
            users=users,
            queues=queues,
            options=options,
            ranking=ranking,
            selection=selection,
            filters=filters,
        )

    def dynamic(self) -> bool:
        """Whether this is dynamic H-DRF (Algorithm 3's rescaling): no.

        Returns
        -------
        bool
        """
        return False


@mypyc_attr(allow_interpreted_subclasses=True)
class Hdrf(NaiveHdrf):
    """Dynamic H-DRF (section 3.4, Algorithms 2-4): rescaling to minimum nodes and ignoring
    blocked nodes; constructed as :class:`NaiveHdrf`."""

    name = "hdrf"

    def dynamic(self) -> bool:
        """Whether this is dynamic H-DRF (Algorithm 3's rescaling): yes.

        Returns
        -------
        bool
        """
        return True
