"""The scheduler's records of its jobs and users: a job's sides (:class:`JobState`, keyed by
:func:`part_id`), a user's or pool's running tasks and share (:class:`UserState`), and the
tasks of one constraint class and demand (:class:`Group`) and a user's entry in a group's heap
(:class:`HeapEntry`), with the types that name them, and what preemption remembers between
decisions (:class:`PreemptionState`: FAIR section 3.2's starvation timers,
:class:`StarvationTimers`).

The records hold what the policies read and :mod:`fairshare.policies.ledger` changes (one
function per change); the machines and the placement index they are matched against are
:mod:`fairshare.policies.state`'s.

Examples
--------
A job's reduce side gets its own part id and the reduce phase's tasks:

>>> import numpy as np
>>> from fairshare.workload.model import FixedDuration, Job, ReducePhase
>>> job = Job("j", 0.0, "alice", np.array([1.0]), 3, FixedDuration(1.0),
...           reduce=ReducePhase(tasks=2, copy=1.0, compute=1.0))
>>> maps = JobState(7, job, user=0, group=0, demand=(1.0,))
>>> reduces = JobState(7, job, user=0, group=0, demand=(1.0,), phase="reduce")
>>> (maps.part_id, maps.pending), (reduces.part_id, reduces.reduces)
((7, 3), (-15, 2))
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Any, Final, final

from librt.vecs import vec
from mypy_extensions import i64

from fairshare.policies.protocol import Phase, TaskRef
from fairshare.workload.model import ROOT, Job

ClassSignature = tuple[str | None, frozenset[str] | None]
"""A constraint class: a job's constraint source and machine whitelist (None: none)."""

Demand = tuple[float, ...]
"""A task's demand vector as plain floats, in the cluster's resource order."""

Room = vec[float] | Sequence[float]
"""A machine's free room, in the cluster's resource order: its live vector in the
:class:`~fairshare.policies.state.ClusterState` (a typed array, read and written unboxed by
the compiled kernel), or a copy a caller works on (a list), or a bucket key's amounts (a
tuple: :attr:`RoomKey.amounts`)."""


@final
class RoomKey:
    """A bucket's key in the cluster's placement index (:class:`~fairshare.policies.state.
    ClusterState`'s ``buckets``): a machine's free vector, its first two amounts unboxed
    (``first``, ``second``; the rest, past two resources, in ``rest``) and its hash computed
    once from them (:func:`room_digest`). A tuple of floats was hashed again at every
    look-up, two per move between buckets (each amount through the float hash), and made two
    float objects per move: together about a twentieth of a saturated replay. Compares equal
    to a key of the same amounts and prints as their tuple (``amounts``).

    Parameters
    ----------
    free : vec of float
        The free vector, read once.

    Examples
    --------
    >>> from librt.vecs import vec
    >>> key = RoomKey(vec[float]([4.0, 8.0]))
    >>> key, key == RoomKey(vec[float]([4.0, 8.0])), key.amounts, key.second
    ((4.0, 8.0), True, (4.0, 8.0), 8.0)
    >>> RoomKey(vec[float]([0.0, 1.5])) == RoomKey(vec[float]([-0.0, 1.5]))
    True
    >>> RoomKey(vec[float]([1.0, 2.0, 3.0])).amounts, RoomKey(vec[float]([1.0])).amounts
    ((1.0, 2.0, 3.0), (1.0,))
    """

    __slots__ = ("digest", "first", "rest", "second", "width")

    def __init__(self, free: vec[float]) -> None:
        width = len(free)
        self.width = width
        self.first = free[0] if width > 0 else 0.0
        self.second = free[1] if width > 1 else 0.0
        self.rest: tuple[float, ...] = tuple(free[2:]) if width > 2 else ()
        self.digest = room_digest(self.first, self.second, self.rest)

    @property
    def amounts(self) -> tuple[float, ...]:
        """The free vector as a tuple."""
        return (self.first, self.second, *self.rest)[: self.width]

    def same(self, free: vec[float]) -> bool:
        """Whether live room ``free`` is this key's free vector (no key made to say so)."""
        width = self.width
        if len(free) != width:
            return False
        if width > 0 and free[0] != self.first:
            return False
        if width > 1 and free[1] != self.second:
            return False
        rest = self.rest
        # A loop, not all() of a generator (a generator object per call in the compiled kernel).
        for r in range(2, width):  # noqa: SIM110
            if free[r] != rest[r - 2]:
                return False
        return True

    def __hash__(self) -> int:
        return self.digest

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RoomKey):
            return (
                self.digest == other.digest
                and self.first == other.first
                and self.second == other.second
                and self.width == other.width
                and self.rest == other.rest
            )
        return NotImplemented

    def __repr__(self) -> str:
        return repr(self.amounts)


_DIGEST_SCALE: Final = 1073741824.0
"""2**30: amounts below :data:`_DIGEST_LIMIT` scaled by it and truncated are integers below
2**52 (exact in a float, and in an ``i64``)."""
_DIGEST_LIMIT: Final = 4194304.0
"""2**22: larger amounts (and inf, nan) are hashed as floats."""
_DIGEST_MASK: Final = 0xFFFFFFFFFF
"""40 bits of the running digest are kept before each step, so that it stays in an ``i64``."""


def _digest_part(v: float) -> i64:
    """One amount's part of a digest: scaled by 2**30 and truncated (equal for 0.0 and -0.0),
    or its float hash when large, infinite or nan."""
    return i64(v * _DIGEST_SCALE) if -_DIGEST_LIMIT < v < _DIGEST_LIMIT else i64(hash(v))


def room_digest(first: float, second: float, rest: tuple[float, ...]) -> int:
    """The hash of a free vector for its :class:`RoomKey`: equal amounts (``0.0`` and
    ``-0.0`` too) give equal digests. Each amount's part (:func:`_digest_part`) mixed as
    CPython mixes a tuple's items; an integer function of plain numbers, where a tuple's
    hash made each float's. Distinct vectors may share a digest (amounts within 2**-30 of
    each other): the dictionary then compares their amounts.
    """
    digest: i64 = (0x345678 * 1000003) ^ _digest_part(first)
    digest = ((digest & _DIGEST_MASK) * 1000003) ^ _digest_part(second)
    for v in rest:
        digest = ((digest & _DIGEST_MASK) * 1000003) ^ _digest_part(v)
    return int(digest)


class JobState:
    """One side of a job as the scheduler sees it (FAIR section 5: maps, then reduces).

    A MapReduce job is split into states of one demand vector each, so that shares count
    what actually runs: the *map side* (``part_id`` = the job id, ``phase`` ``"map"``), the
    *reduce side* (``part_id`` = :func:`part_id` of ``"reduce"``; its demand is the reduce
    phase's own, :class:`fairshare.workload.model.ReducePhase`) and, with copy-compute
    splitting (FAIR section 5.2), the *copy side* (``part_id`` = :func:`part_id` of
    ``"copy"``, no demand). ``id`` is always the driver's job id (task names, FIFO order).

    Parameters
    ----------
    job_id : int
        The driver's id of the job.
    job : Job
        The job.
    user : int
        Its user's index.
    group : int
        Its group (constraint class and demand) in the
        :class:`~fairshare.policies.state.ClusterState`.
    demand : Demand
        One task's demand: a map's, or for a reduce side the reduce phase's (a copy side's
        is zero).
    phase : {"map", "reduce", "copy"}
        The side.

    Attributes
    ----------
    pending, running, finished : int
        The side's tasks waiting to launch, running, and finished.
    share_per_task : float
        What one running task adds to its user's share (the policy's
        ``share_per_task``).
    where : vec of i64
        A map side's machine index per map task, -1 while the task does not run; empty for
        other sides (their running tasks are in their user's ``tasks``).
    requeue : deque of TaskRef
        Killed, lost or failed tasks waiting to run again, launched before new ones.
    priority : int
        The job's priority (higher first among its user's jobs, and its user's tier).
    key : object
        The job id as one int object, made once: the key of a map side in the ledger's
        ``jobs`` and the ``job`` of its TaskRefs, so that a finish's look-up finds the key by
        identity (the compiled kernel keeps ints unboxed and would make a new object above
        256 for every TaskRef, which the dictionary then compares by value).
    gang : int
        While the side is a gang waiting for admission, how many of its tasks must start
        together (:mod:`fairshare.policies.gangs`); 0 otherwise.
    expected : float
        Seconds one of its tasks is expected to run, for EASY backfilling's reservations
        (inf: unknown, or backfilling off).
    """

    __slots__ = (
        "allowed_locality",
        "blocks",
        "by_machine",
        "by_rack",
        "demand",
        "expected",
        "finished",
        "gang",
        "group",
        "id",
        "job",
        "key",
        "launched",
        "maps",
        "maps_done",
        "next_map",
        "next_reduce",
        "part_id",
        "pending",
        "phase",
        "priority",
        "reduce_after",
        "reduces",
        "requeue",
        "running",
        "share_per_task",
        "short",
        "skip_since",
        "user",
        "version",
        "waits",
        "where",
    )

    def __init__(
        self,
        job_id: int,
        job: Job,
        user: int,
        group: int,
        demand: Demand,
        phase: Phase = "map",
    ) -> None:
        self.id = job_id
        self.part_id = job_id if phase == "map" else part_id(job_id, phase)
        self.key: Any = self.part_id
        self.phase = phase
        self.job = job
        self.user = user
        self.group = group
        self.demand = demand
        self.priority = job.priority
        # A map side runs the maps and a reduce or copy side the reducers (each one kind).
        self.maps = job.tasks if phase == "map" else 0
        self.reduces = job.reduce.tasks if job.reduce is not None and phase != "map" else 0
        self.next_map = 0
        self.next_reduce = 0
        self.maps_done = 0
        # How many maps must finish before the reducers may launch (set by the scheduler:
        # reduce_slowstart, FAIR section 5.1; -1: the job has no reducers).
        self.reduce_after = -1
        self.finished = 0
        self.pending = self.maps
        self.running = 0
        self.requeue: deque[TaskRef] = deque()
        # A map side's running tasks: the machine index per map task, -1 while it does not
        # run (a slot per task costs a launch and a finish less than a dict entry, on the
        # simulator's hottest path; a typed array's, no int object made per launch and read
        # cold at the finish). A reduce or copy side's are in its user's ``tasks``.
        self.where = vec[i64]([-1] * self.maps) if phase == "map" else vec[i64]()
        self.share_per_task = 0.0
        self.version = 0
        # Data locality (only for jobs that read input blocks).
        self.blocks: list[tuple[int, ...]] | None = None
        self.launched: bytearray | None = None
        self.by_machine: dict[int, list[int]] = {}
        self.by_rack: dict[str | None, list[int]] = {}
        # Delay scheduling (FAIR Algorithm 1): the allowed locality (an index of
        # delay.LOCALITY_ORDER), time first skipped, waits.
        self.allowed_locality = 0
        self.skip_since: float | None = None
        self.waits: tuple[float, float] | None = None
        # Gang scheduling: the tasks that must start together while the gang waits (0: not a
        # waiting gang), and the seconds a task is expected to run (EASY backfilling's
        # reservations; inf: unknown, or backfilling off).
        self.gang = 0
        self.expected = math.inf
        # How many of its tasks a waiting gang lacked room for at its last try, less what
        # the room released since may hold (it is not tried again while that is > 0).
        self.short = 0


def part_id(job_id: int, phase: Phase) -> int:
    """The part id of a job's ``reduce`` or ``copy`` side among the scheduler's job states
    (negative, so it never meets a job id; a map side's is the job id).

    Parameters
    ----------
    job_id : int
        The driver's id of the job.
    phase : {"reduce", "copy"}
        The side.

    Returns
    -------
    int
        The side's key in ``Ledger.jobs``.

    Examples
    --------
    >>> part_id(7, "reduce"), part_id(7, "copy")
    (-15, -16)
    """
    return -2 * job_id - (1 if phase == "reduce" else 2)


JobHeapEntry = tuple[int, float, int, int, JobState]
"""An entry of a user's job heap (:attr:`UserState.job_heaps`): (-priority, job rank, part
id, version, the part)."""


class UserState:
    """A user (or FAIR pool): its running tasks in launch order, share and allocation
    (``alloc``, per resource: kept only by a policy whose ``tracks_allocation`` is set).

    Weight, divisor, cap, minimum share and queue start at their defaults; the scheduler
    sets them from the configured :class:`~fairshare.workload.model.User` or the first job.

    Parameters
    ----------
    idx : int
        The user's index: its order among the scheduler's users (ties go to the lower).
    name : str
        The user's name.
    resources : int
        How many resources the cluster has (the length of ``alloc``).

    Attributes
    ----------
    share : float
        The sum of its running tasks' ``share_per_task``: what the policy equalises.
    running, pending : int
        Its running and pending tasks.
    version : int
        Moves at every change of rank, so that older heap entries go stale.
    job_heaps : dict of int to list
        Per group, the heap of its jobs with pending tasks there: (-priority, job rank, part
        id, version, the part), the part last so that it is never compared (part ids are
        unique) and is read without a look-up by id (stale entries dropped when they
        surface).
    groups : list of int
        The groups of ``job_heaps``, in its order: what a refresh of the user's entries
        walks (a list walks in a fraction of a dictionary's time).
    served : int
        When it was last served: the ledger's count of launches at its last launch (0
        before its first). Of users with equal ranks and equally old pending work, the one
        served least recently goes first, then the lower index (the fair tie rule:
        :meth:`~fairshare.policies.ledger.Ledger.pending_since`).
    waiting : list of (float, int, JobState)
        A heap of (submit time, part id, the part) of its job parts with pending tasks
        (stale entries dropped when they surface), for the submit time of its oldest pending
        task.
    """

    __slots__ = (
        "alloc",
        "cap",
        "divisor",
        "groups",
        "idx",
        "job_heaps",
        "min_share",
        "name",
        "pending",
        "queue",
        "running",
        "served",
        "share",
        "tasks",
        "version",
        "waiting",
        "weight",
    )

    def __init__(self, idx: int, name: str, resources: int) -> None:
        self.idx = idx
        self.name = name
        self.weight = 1.0
        # What the share-ordered rank divides the share by: the weight, unless the policy
        # weighs users otherwise (collapsed-drf's flattened weights).
        self.divisor = 1.0
        self.cap = float("inf")
        self.min_share = 0.0
        self.queue = ROOT
        self.running = 0
        self.pending = 0
        self.share = 0.0
        self.version = 0
        self.served = 0
        self.waiting: list[tuple[float, int, JobState]] = []
        self.alloc = [0.0] * resources
        # group -> heap of (-priority, job rank, part id, job version) of jobs with pending
        # tasks there: higher priority first, then the policy's job order.
        self.job_heaps: dict[int, list[JobHeapEntry]] = {}
        self.groups: list[int] = []
        # running reducer (or copy or compute part) -> machine index; running map tasks are
        # in their job's ``JobState.where``. The scheduler's launch numbers, which preemption
        # reads to kill the newest first, are kept beside them only then.
        self.tasks: dict[TaskRef, int] = {}


class HeapEntry:
    """A user's entry in a group's heap (:class:`Group`): ``(tier, rank, since, served, user,
    version)``, compared field by field as that tuple would be (``<`` only: the heap's
    order). The priority tier (minus the priority of the user's next job in the group, 0
    without priorities), the policy's rank, the fair tie rule's pending since and served
    (the user whose oldest pending task was submitted first, then the user served least
    recently, then the lower index: :meth:`Ledger.pending_since
    <fairshare.policies.ledger.Ledger.pending_since>`), the user's index and its version
    when the entry was made (an older version is stale).

    A compiled record, not a tuple: the compiled kernel reads its fields as C fields and a
    heap compares two in one native call, where a tuple's floats and large integers were
    objects made at each push and compared through the generic tuple comparison.

    Examples
    --------
    >>> HeapEntry(0, 0.5, 1.0, 2, 3, 4) < HeapEntry(0, 0.5, 1.0, 2, 3, 5)
    True
    >>> HeapEntry(0, 0.5, 1.0, 2, 3, 4) < HeapEntry(-1, 0.9, 1.0, 2, 3, 4)
    False
    >>> HeapEntry(0, 0.5, 1.0, 2, 3, 4).key()
    (0, 0.5, 1.0, 2, 3, 4)
    """

    __slots__ = ("rank", "served", "since", "tier", "user", "version")

    def __init__(
        self, tier: int, rank: float, since: float, served: int, user: int, version: int
    ) -> None:
        self.tier = tier
        self.rank = rank
        self.since = since
        self.served = served
        self.user = user
        self.version = version

    def __lt__(self, other: HeapEntry) -> bool:
        return entry_before(self, other)

    def key(self) -> tuple[int, float, float, int, int, int]:
        """The entry as the tuple it orders as."""
        return (self.tier, self.rank, self.since, self.served, self.user, self.version)

    def __repr__(self) -> str:
        return f"HeapEntry{self.key()!r}"


def entry_before(a: HeapEntry, b: HeapEntry) -> bool:
    """Whether entry ``a`` comes before ``b``: the order of the tuple ``a.key() < b.key()``,
    field by field (equal floats compare equal: -0.0 == 0.0), the heaps' order
    (``HeapEntry.__lt__``) and, as a native call, the selection's.

    Parameters
    ----------
    a, b : HeapEntry
        Two heap entries.

    Returns
    -------
    bool

    Examples
    --------
    >>> entry_before(HeapEntry(0, 0.5, 1.0, 2, 3, 4), HeapEntry(0, 0.5, 1.0, 2, 3, 5))
    True
    >>> entry_before(HeapEntry(0, 0.5, 1.0, 2, 3, 4), HeapEntry(-1, 0.9, 1.0, 2, 3, 4))
    False
    """
    if a.tier != b.tier:
        return a.tier < b.tier
    if a.rank != b.rank:
        return a.rank < b.rank
    if a.since != b.since:
        return a.since < b.since
    if a.served != b.served:
        return a.served < b.served
    if a.user != b.user:
        return a.user < b.user
    return a.version < b.version


class Group:
    """Tasks with one constraint class and one demand vector (the placement index's unit: see
    :mod:`fairshare.policies.state`).

    ``heap`` holds (tier, rank, pending since, served, user index, user version) entries
    (:class:`HeapEntry`) with lazy invalidation: an entry is
    stale when the user's version moved on (a push over the user's own top replaces it). The
    tier is minus the priority of the user's next job in the group (0 without priorities):
    higher priorities first, then the policy's rank, then the fair tie rule (the oldest
    pending task first, then the user served least recently).

    ``demand0`` and ``demand1`` are the demand's first two amounts (``-inf`` past the last
    resource), plain fields for a selection's fit test of those resources (the one most
    groups fail on a full cluster) without reading the demand tuple.

    ``top_tier`` and ``top_rank`` are a lower bound on the heap top's (tier, rank) while the
    heap is not empty, kept as plain fields so that a selection can pass a group that
    cannot win without reading its top (:class:`~fairshare.policies.selection.HeapSelection`:
    a push lowers them, a pop leaves them below the new top).

    ``key`` is the index as one int object, made once: the key of the group in its users'
    ``job_heaps``, so that a look-up finds it by identity (the compiled kernel keeps ints
    unboxed, and a new box of an index above 256 was compared by value).

    Parameters
    ----------
    index : int
        Its index among the cluster's groups (``ClusterState.groups``).
    cls : int
        The constraint class.
    demand : Demand
        The tasks' demand.
    """

    __slots__ = (
        "cls",
        "demand",
        "demand0",
        "demand1",
        "heap",
        "index",
        "key",
        "top_rank",
        "top_tier",
        "users",
    )

    def __init__(self, index: int, cls: int, demand: Demand) -> None:
        self.index = index
        self.key: Any = index
        self.cls = cls
        self.demand = demand
        self.heap: list[HeapEntry] = []
        self.users: dict[int, None] = {}
        self.top_tier = 0
        self.top_rank = 0.0
        self.demand0 = demand[0] if len(demand) > 0 else -math.inf
        self.demand1 = demand[1] if len(demand) > 1 else -math.inf


class StarvationTimers:
    """When each user started being min-starved and fair-starved (rule 1), below its queues'
    quotas (rule 6) or waiting above lower priorities (rule 7); absent when it is not.

    Attributes
    ----------
    min_since, fair_since, quota_since, priority_since : dict of int to float
        Per starved user's index, when it was first seen min-starved (fair-starved, below
        quota, waiting above lower priorities).
    """

    def __init__(self) -> None:
        self.min_since: dict[int, float] = {}
        self.fair_since: dict[int, float] = {}
        self.quota_since: dict[int, float] = {}
        self.priority_since: dict[int, float] = {}

    def update(self, user: int, now: float, min_starved: bool, fair_starved: bool) -> None:
        """Start or clear ``user``'s timers from what is seen at ``now``.

        Parameters
        ----------
        user : int
            The user's index.
        now : float
            The time of the decision.
        min_starved, fair_starved : bool
            Whether the user is min-starved, fair-starved now.
        """
        if min_starved:
            self.min_since.setdefault(user, now)
        else:
            self.min_since.pop(user, None)
        if fair_starved:
            self.fair_since.setdefault(user, now)
        else:
            self.fair_since.pop(user, None)

    def deadlines(self, t_min: float, t_fair: float) -> list[float]:
        """When the running timers expire.

        Parameters
        ----------
        t_min, t_fair : float
            The timeouts ``Tmin`` and ``Tfair``.

        Returns
        -------
        list of float
            The expiry of every running timer (the policy wakes then).
        """
        return (
            [t + t_min for t in self.min_since.values()]
            + [t + t_fair for t in self.fair_since.values()]
            + [t + t_min for t in self.quota_since.values()]
            + [t + t_min for t in self.priority_since.values()]
        )


class PreemptionState:
    """What preemption remembers between decisions: the starvation timers, the tasks launched
    for a starved user (protected while it stays below its fair share, rule 5) and when each
    (victim, beneficiary) pair last saw a kill (rule 5).

    Attributes
    ----------
    timers : StarvationTimers
        The starvation timers.
    protected : dict of TaskRef to int
        Tasks launched for a starved user, and that user.
    lost_at : dict of (int, int) to float
        Per (victim, beneficiary) users, the time of the last kill.
    kills : int
        Kills so far.
    reclaims, priority_kills : int
        Of those, the kills for a queue below its quota (rule 6) and for a higher priority
        (rule 7).
    """

    def __init__(self) -> None:
        self.timers = StarvationTimers()
        self.protected: dict[TaskRef, int] = {}
        self.lost_at: dict[tuple[int, int], float] = {}
        self.kills = 0
        self.reclaims = 0
        self.priority_kills = 0


def shown_amount(value: float) -> str:
    """An amount of a resource or a time, for people (``fairshare explain``): an integral
    value in full (``274877906944``, not ``2.74878e+11``), any other to 6 significant digits.

    Parameters
    ----------
    value : float

    Returns
    -------
    str

    Examples
    --------
    >>> shown_amount(274877906944.0), shown_amount(0.5), shown_amount(32.0)
    ('274877906944', '0.5', '32')
    """
    if float(value).is_integer() and abs(value) < 1e18:
        return str(int(value))
    return f"{value:.6g}"
