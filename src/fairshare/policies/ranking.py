"""The two strategies a policy is made of, besides its filters: the order of work
(:class:`Ranking`, the Kubernetes scheduling framework's QueueSort) and the choice of the
(user, group) a machine serves next (:class:`Selection`).

A policy is a :class:`Ranking` (what it equalises: DRF's dominant share, TSF's task share,
FAIR's pools, FIFO's submission order, ...) plus, for H-DRF and the Capacity Scheduler, its
own :class:`Selection` (the walk down the queue tree); every other policy selects from the
per-group user heaps of :class:`~fairshare.policies.selection.HeapSelection`. Both are bound to
the :class:`~fairshare.policies.ledger.Ledger` they read; neither writes the ledger's state:
the ledger calls them when something they read changed (a user's rank, a new user, the
cluster's totals) and applies what they return.

Examples
--------
A ranking that orders users by the memory their tasks hold, on the base scheduler: b's small
tasks go first until the shares meet.

>>> import numpy as np
>>> from collections import Counter
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import Scheduler
>>> from fairshare.policies.ranking import Ranking
>>> from fairshare.policies.records import JobState
>>> from fairshare.workload.model import Job
>>> class MemoryShare(Ranking):
...     def share_per_task(self, job: JobState) -> float:
...         return job.demand[1] / self.ledger.cluster.total[1]
>>> cluster = Cluster.build(["cpu", "mem"], [Machine("m", np.array([6.0, 12.0]))])
>>> policy = Scheduler(cluster, ranking=MemoryShare())
>>> policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0, 4.0]), 10))
>>> policy.job_submitted(0.0, 1, Job("y", 0.0, "b", np.array([1.0, 1.0]), 10))
>>> sorted(Counter(d.task.job for d in policy.decide(0.0)).items())
[(0, 2), (1, 4)]
>>> [round(user.share, 3) for user in policy.users]
[0.667, 0.333]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from mypy_extensions import mypyc_attr

from fairshare.policies.records import HeapEntry, JobState, UserState
from fairshare.policies.shares import fair_shares

if TYPE_CHECKING:
    from fairshare.policies.filters import RoomFilter
    from fairshare.policies.ledger import Ledger

Pick = tuple[int, int]
"""A selection: (user index, group). Never None, so that the compiled kernel returns it as
two plain numbers, with no tuple made: :data:`NO_PICK` says nobody."""

NO_PICK: Final = (-1, -1)
"""The selection that found nobody whose next task fits (its user index is negative)."""


def rank_before(tier: int, rank: float, since: float, served: int, b: HeapEntry) -> bool:
    """Whether a user's ``(tier, rank, pending since, served)`` comes before entry ``b``'s
    first four fields (field by field, as
    :func:`~fairshare.policies.records.entry_before` compares): a batch's test
    that its user stays first (equal keys end the batch).

    Examples
    --------
    >>> rank_before(0, 0.5, 1.0, 2, HeapEntry(0, 0.5, 1.0, 3, 0, 0))
    True
    >>> rank_before(0, 0.5, 1.0, 2, HeapEntry(0, 0.5, 1.0, 2, 9, 9))
    False
    """
    if tier != b.tier:
        return tier < b.tier
    if rank != b.rank:
        return rank < b.rank
    if since != b.since:
        return since < b.since
    return served < b.served


@mypyc_attr(allow_interpreted_subclasses=True)
class Ranking:
    """The order of users, of a user's jobs and of waiting gangs, and the fair shares
    preemption protects (the strategy every policy supplies; see the module).

    The base orders users by running tasks over weight, a max-min of tasks, and jobs by
    submission. A subclass overrides what its policy equalises and says so in the
    attributes below, which the scheduler reads once, when it is built.

    Attributes
    ----------
    ledger : Ledger
        The state it reads (set by :meth:`bind`).
    by_share : bool
        Whether :meth:`user_rank` is ``user.share / user.divisor`` whatever the group (then
        one heap entry serves all of a user's groups and a batch compares shares inline); a
        subclass that overrides :meth:`user_rank` sets it False.
    reorder_jobs : bool
        Whether a job's place among its user's jobs moves as it runs tasks (FAIR's fair order
        inside a pool); submission order never moves.
    tracks_allocation : bool
        Whether the ledger keeps each user's running demand per resource
        (``UserState.alloc``): only for a ranking or selection that reads it (H-DRF's
        vectors); the others read the scalar share.
    cluster_dependent : bool
        Whether a task's share depends on the cluster's totals, so that every share and rank
        is recomputed when a machine joins or leaves.
    tracks_resource_usage : bool
        Whether the ledger keeps each user's decayed use of every resource
        (``Ledger.resource_usage``, :mod:`fairshare.policies.usage`): for a ranking over
        usage per resource (Kueue's admission fair sharing, Slurm's Fair Tree).
    default_half_life : float or None
        The half-life of that usage when the run sets none (Slurm's
        ``PriorityDecayHalfLife`` defaults to 7 days); None: kept only with one.
    """

    def __init__(self) -> None:
        self.by_share = True
        self.reorder_jobs = False
        self.tracks_allocation = False
        self.cluster_dependent = False
        self.tracks_resource_usage = False
        self.default_half_life: float | None = None

    def bind(self, ledger: Ledger) -> None:
        """Read ``ledger`` from now on (the scheduler binds every strategy before the first
        user is created).

        Parameters
        ----------
        ledger : Ledger
            The scheduler's state.
        """
        self.ledger = ledger

    def share_per_task(self, job: JobState) -> float:
        """How much one running task of ``job`` adds to its user's share: the policy's unit
        of share (the base's: one task).

        Parameters
        ----------
        job : JobState
            The job part (its demand and group are set).

        Returns
        -------
        float
        """
        return 1.0

    def user_rank(self, user: UserState, group: int) -> float:
        """The quantity the policy equalises (lower goes first): weighted share by default,
        with a usage half-life its :meth:`standing` (share plus decayed mean share) over the
        weight.

        Parameters
        ----------
        user : UserState
            The user.
        group : int
            The group its next task would come from.

        Returns
        -------
        float
            The user's rank; ties go by the fair tie rule (see
            :class:`~fairshare.policies.records.HeapEntry`).
        """
        usage = self.ledger.usage
        if usage is None:
            return user.share / user.divisor
        return (user.share + usage.mean(user.idx, self.ledger.now)) / user.divisor

    def on_submit(self, job: JobState) -> None:
        """A job arrived (its map side; the ledger calls it before the job is activated):
        a ranking whose order depends on the arrivals before it records what it needs.

        Parameters
        ----------
        job : JobState
            The job's map side.
        """

    def job_rank(self, job: JobState) -> float:
        """The order of a user's jobs (lower goes first): FIFO, by submission.

        Parameters
        ----------
        job : JobState
            The job part.

        Returns
        -------
        float
        """
        return float(job.id)

    def gang_rank(self, job: JobState) -> tuple[float, float, int, int, float, int]:
        """The order in which waiting gangs are tried (lowest first): their user's rank
        (:meth:`user_rank` in the gang's group), then the fair tie rule (the gang's own
        submission, as it is its user's oldest waiting work, then its user served least
        recently, then the lower index), :meth:`job_rank`, then submission order.

        Parameters
        ----------
        job : JobState
            A waiting gang's map side.

        Returns
        -------
        tuple of (float, float, int, int, float, int)
        """
        user = self.ledger.users[job.user]
        return (
            self.user_rank(user, job.group),
            job.job.submit,
            user.served,
            user.idx,
            self.job_rank(job),
            job.id,
        )

    def divisor(self, user: UserState) -> float:
        """What the base rank divides a user's share by: its weight.

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
        """
        return user.weight

    def on_new_user(self, user: UserState) -> bool:
        """A user (or pool) first appears, last in the ledger's ``users``.

        Parameters
        ----------
        user : UserState
            The new user.

        Returns
        -------
        bool
            Whether every user's :meth:`divisor` changed (the ledger then sets them all and
            recomputes every rank); the base's never do.
        """
        return False

    def on_cluster_change(self) -> None:
        """A machine joined or left; a ranking that caches what depends on the machines
        drops it (the ledger then recomputes every share when :attr:`cluster_dependent`)."""

    # ------------------------------------------------------------------ reported shares

    def standing(self, user: UserState) -> float:
        """The user's share as the policy weighs it now, before weighting: what it holds
        (``user.share``) plus, with a usage half-life, the decayed mean of what it held
        (:mod:`fairshare.policies.usage`; both in the policy's share unit).

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
        """
        ledger = self.ledger
        usage = ledger.usage
        if usage is None:
            return user.share
        return user.share + usage.mean(user.idx, ledger.now)

    def queue_shares(self) -> dict[str, float]:
        """Each queue's share as the policy computes it now (:meth:`reported_shares`'s
        first part; a ranking that can skip the users overrides it: the run samples it).

        Returns
        -------
        dict of str to float
        """
        return self.reported_shares()[0]

    def reported_shares(self) -> tuple[dict[str, float], dict[str, float]]:
        """Each queue's and each user's share as the policy computes it now (SPEC section
        8.3's ``shares`` in ``summary.json``, ``queue_share`` in ``timeline.csv``).

        The base reports every user's :meth:`standing` and, for each declared queue, the
        sum of the standings of the users below it (a policy that ranks queues by another
        measure, such as H-DRF's dominant share of the queue or Kueue's weighted share,
        reports that).

        Returns
        -------
        (dict of str to float, dict of str to float)
            Shares by queue path, and by user name.
        """
        ledger = self.ledger
        users = {u.name: self.standing(u) for u in ledger.users}
        queues = {q.path: 0.0 for q in ledger.queues}
        for u in ledger.users:
            path = u.queue
            while path:
                if path in queues:
                    queues[path] += users[u.name]
                path = path.rpartition("/")[0]
        return queues, users

    # ------------------------------------------------------------------ preemption's shares

    def preemption_weight(self, user: UserState) -> float:
        """The weight the policy divides a user's share by, for its fair share.

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
            Its weight (``collapsed-drf``: its flattened weight).
        """
        return user.weight

    def preemption_min_share(self, user: UserState) -> float:
        """The user's minimum share in share units: none, unless the policy places by it.

        Parameters
        ----------
        user : UserState
            The user.

        Returns
        -------
        float
            0 (FAIR: the pool's ``min_share``, in slots).
        """
        return 0.0

    def preemption_shares(self, demands: Sequence[float], capacity: float) -> list[float]:
        """Every user's fair share, in the policy's share unit, of ``capacity`` given its
        ``demands``: FAIR's Appendix A water-filling with the policy's weights and minimum
        shares (see :mod:`fairshare.policies.preemption`).

        Parameters
        ----------
        demands : sequence of float
            Per user, the share it holds plus that of its pending tasks (up to its cap).
        capacity : float
            The share all users hold now.

        Returns
        -------
        list of float
            Per user, its fair share.
        """
        users = self.ledger.users
        return fair_shares(
            demands,
            [self.preemption_min_share(u) for u in users],
            [self.preemption_weight(u) for u in users],
            capacity,
        )


@mypyc_attr(allow_interpreted_subclasses=True)
class Selection:
    """Which (user, group) a machine serves next, and what it keeps to answer fast (the
    interface the ledger and the placer call; see the module).

    Attributes
    ----------
    batchable : bool
        Whether a user may keep a machine for a batch of launches while :meth:`bound` says
        it stays first (the decisions are those of one selection per task).
    solo_offers : bool
        Whether an arriving job whose user alone has work may be served without a
        selection (the answer of the heap selection, not of a tree walk).
    idle_touches : bool
        Whether :meth:`touched` must hear of users without pending work too.
    """

    def __init__(self) -> None:
        self.batchable = True
        self.solo_offers = False
        self.idle_touches = True

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

    def ready(self) -> None:
        """The configured users exist; the selection may build what follows them."""

    def touched(self, user: UserState) -> None:
        """The user's rank, pending work or cap changed (its version moved already).

        Parameters
        ----------
        user : UserState
            The user.
        """
        raise NotImplementedError

    def select(self, mi: int) -> Pick:
        """The (user, group) to serve next on machine ``mi``.

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        (int, int)
            The user's index and the group, or :data:`NO_PICK` when no user's next task
            fits.
        """
        raise NotImplementedError

    def skip(self, user: int, group: int) -> None:
        """Set (user, group) aside for the rest of this machine's offer.

        Parameters
        ----------
        user : int
            The user's index.
        group : int
            The group its skipped task belongs to.
        """
        raise NotImplementedError

    def restore_held(self) -> None:
        """The offer is over: what :meth:`skip` set aside comes back."""
        raise NotImplementedError

    def bound(self, mi: int, u: int) -> HeapEntry | None:
        """A lower bound on every other user's entry on ``mi`` (None: none bounds ``u``'s
        batch).

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
        raise NotImplementedError

    def on_new_user(self, user: UserState) -> None:
        """A user first appears (before the ranking hears of it).

        Parameters
        ----------
        user : UserState
            The new user.
        """

    def on_cluster_change(self) -> None:
        """A machine joined or left (before the ledger recomputes the shares)."""
