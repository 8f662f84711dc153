"""Gang admission and EASY backfilling, for every online policy (SPEC section 1's ``gang`` /
``min_tasks``, section 3's ``--backfill easy``).

A *gang* is a job whose first ``min_tasks`` tasks must start together (an MPI or
distributed-training job; Volcano's PodGroup ``minMember``, Kueue's all-or-nothing admission).
The placer (:class:`fairshare.policies.placer.Placer`) keeps a waiting gang out of the
per-machine offers: it holds nothing while it waits. At every decision with news (room freed, a
machine joined or left, a gang arrived), before the machines are offered, the waiting gangs are
tried in the policy's order (:meth:`~fairshare.policies.ranking.Ranking.gang_rank`: the user's
rank, then the job's), each on the free room of that moment, one consistent snapshot:
:func:`gang_plan` finds machines for all its tasks at once, or the gang is passed over and
launches nothing. An admitted gang's tasks launch through the one launch of every path
(:meth:`~fairshare.policies.ledger.Ledger.start_task`); tasks beyond ``min_tasks`` then wait as
any job's do.

The rule that keeps a gang that cannot fit from blocking the others: it is passed over, so
the next gang in the order, and then every other job, may use the room it could not. Without
backfilling a large gang may so wait long on a cluster that smaller work keeps busy (room is
taken as it frees); with EASY backfilling (Lifka 1995, "The ANL/IBM SP scheduling system";
Mu'alem and Feitelson 2001, section 2) the first gang passed over, the *head*, gets a
reservation (:func:`reserve`): the earliest time its tasks fit, counting the running tasks'
expected ends (launch time plus the job's ``estimate``, or its duration as given: see
:func:`expected_seconds`), and the machines it will use then. Later work starts now only
where it does not delay that start (:meth:`Reservation.admits`): it is expected to end by
then, or it fits in the room the reservation leaves over on its machine. A gang that can
never fit the alive machines (larger than the cluster) gets no reservation and blocks
nobody; it is one of the run's ``unrunnable_jobs``.

Examples
--------
Three slots, two busy until t=10: a gang of two waits (nothing of it starts), the
single-task job behind it takes the free slot.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import FixedDuration, Job
>>> cluster = Cluster.build(["slots"], [Machine(f"m{i}", np.array([1.0])) for i in range(3)])
>>> fifo = make_policy("fifo", cluster)
>>> fifo.job_submitted(0.0, 0, Job("a", 0.0, "u", np.array([1.0]), 2, FixedDuration(10.0)))
>>> [d.task.job for d in fifo.decide(0.0)]
[0, 0]
>>> gang = Job("g", 1.0, "v", np.array([1.0]), 2, FixedDuration(5.0), min_tasks=2)
>>> fifo.job_submitted(1.0, 1, gang)
>>> fifo.job_submitted(1.0, 2, Job("s", 1.0, "w", np.array([1.0]), 1, FixedDuration(5.0)))
>>> [d.task.job for d in fifo.decide(1.0)]
[2]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fairshare.policies.records import Demand, Room
from fairshare.policies.state import ClusterState
from fairshare.tolerances import FIT
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    PerTaskDurations,
)

__all__ = [
    "Ending",
    "Reservation",
    "expected_seconds",
    "gain",
    "gang_plan",
    "reserve",
    "tasks_fitting",
    "tasks_on_capacity",
]

Plan = list[tuple[int, int]]
"""Where a gang's tasks go: (machine index, tasks) pairs."""


class Reservation:
    """EASY backfilling's reservation for the head gang: when it is expected to start
    (``start``, the *shadow time*; inf when a running task it waits for has no expected
    end) and, per machine it will use, the room left over there at that time (``extra``)
    that later work may take without delaying it.

    Parameters
    ----------
    job : int
        The head gang's part id.
    start : float
        Its expected start.
    extra : dict of int to list of float
        Per machine of its plan, the expected free room at ``start`` minus what the gang
        takes there.
    """

    __slots__ = ("extra", "job", "start")

    def __init__(self, job: int, start: float, extra: dict[int, list[float]]) -> None:
        self.job = job
        self.start = start
        self.extra = extra

    def allows(self, mi: int, demand: Demand, end: float) -> bool:
        """Whether :meth:`admits` would let one task of ``demand`` expected to end at ``end``
        start on machine ``mi`` now, without counting its room as taken (preemption asks it
        before it kills for the task: rule 9 of :mod:`fairshare.policies.preemption`).

        Parameters
        ----------
        mi : int
            The machine's index.
        demand : Demand
            One task's demand.
        end : float
            When the task is expected to end.

        Returns
        -------
        bool
        """
        extra = self.extra.get(mi)
        if extra is None or (end <= self.start and not math.isinf(self.start)):
            return True
        return tasks_fitting(extra, demand, 1) == 1

    def admits(self, mi: int, demand: Demand, end: float, count: int = 1) -> bool:
        """Whether ``count`` tasks of ``demand`` expected to end at ``end`` may start on
        machine ``mi`` now without delaying the reservation (EASY's two conditions: the
        task ends by the reserved start, or it uses only room the head does not need
        then); if they take such room, it is counted as taken.

        Parameters
        ----------
        mi : int
            The machine's index.
        demand : Demand
            One task's demand.
        end : float
            When the tasks are expected to end.
        count : int
            How many tasks.

        Returns
        -------
        bool
        """
        extra = self.extra.get(mi)
        if extra is None:
            return True
        if end <= self.start and not math.isinf(self.start):
            return True
        if tasks_fitting(extra, demand, count) < count:
            return False
        for r, d in enumerate(demand):
            extra[r] -= d * count
        return True


def tasks_fitting(free: Room, demand: Demand, limit: int) -> int:
    """How many tasks of ``demand`` fit in ``free`` room together, at most ``limit``.

    Parameters
    ----------
    free : sequence of float
        The room.
    demand : Demand
        One task's demand.
    limit : int
        The most to count (a demand of nothing fits without bound).

    Returns
    -------
    int

    Examples
    --------
    >>> tasks_fitting([8.0, 6.0], (2.0, 2.0), 10), tasks_fitting([8.0, 6.0], (0.0, 0.0), 10)
    (3, 10)
    """
    n = limit
    r = 0
    for d in demand:
        if d > 0:
            k = int((free[r] + FIT) // d)
            if k < n:
                if k <= 0:
                    return 0
                n = k
        r += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
    return n


def tasks_on_capacity(cs: ClusterState, cls: int, demand: Demand, need: int) -> int:
    """How many tasks of ``demand`` (at most ``need``) the alive machines of class ``cls``
    hold when nothing runs on them: a gang of ``need`` tasks never fits when fewer. Cached in
    ``cs.capacity_tasks`` until a machine joins or leaves, so that a gang larger than its
    machines costs O(1) per decision, not a scan of every running task's end
    (:func:`reserve`).

    Parameters
    ----------
    cs : ClusterState
        The machines.
    cls : int
        The gang's constraint class.
    demand : Demand
        One task's demand.
    need : int
        The tasks that must start together.

    Returns
    -------
    int
    """
    key = (cls, demand, need)
    held = cs.capacity_tasks.get(key)
    if held is None:
        held = 0
        alive = cs.alive
        for mi in cs.machines_of_class(cls):
            if alive[mi]:
                capacity = list(map(float, cs.machines[mi].capacity.tolist()))
                held += tasks_fitting(capacity, demand, need)
                if held >= need:
                    held = need
                    break
        cs.capacity_tasks[key] = held
    return held


def gang_plan(
    cs: ClusterState,
    cls: int,
    demand: Demand,
    need: int,
    reservation: Reservation | None,
    end: float,
) -> tuple[Plan | None, int]:
    """Machines for ``need`` tasks of ``demand`` (class ``cls``) on the free room now, all at
    once, or None when they do not fit together. Machines come from the cluster's
    free-vector buckets, one fit count per bucket, the eligible machines of a bucket last in
    first out (as a job's offer takes them); with a reservation, a machine of its plan takes
    only what :meth:`Reservation.admits` (tasks expected to end at ``end``). O(F + B): the
    buckets, and the machines of the fitting ones until the tasks are placed.

    Parameters
    ----------
    cs : ClusterState
        The machines and their free room.
    cls : int
        The gang's constraint class.
    demand : Demand
        One task's demand.
    need : int
        The tasks that must start together.
    reservation : Reservation, optional
        The head gang's reservation, which this gang must not delay.
    end : float
        When this gang's tasks are expected to end.

    Returns
    -------
    (list of (int, int) or None, int)
        The (machine, tasks) pairs adding up to ``need``, or None; and, when None, how many
        of its tasks the free room of its machines holds (a reservation aside): until room
        for the others frees up, it cannot fit.
    """
    by_name = cs.by_name[cls]
    ok = cs.machine_ok[cls] if by_name else cs.sig_ok[cls]
    sig = cs.sig
    plan: Plan = []
    left = need
    have = 0
    limited = reservation is not None and not (
        end <= reservation.start and not math.isinf(reservation.start)
    )
    for free, bucket in cs.buckets.items():
        per = tasks_fitting(free.amounts, demand, need)
        if per == 0:
            continue
        for mi in reversed(list(bucket)):
            if not ok[mi if by_name else sig[mi]]:
                continue
            n = min(per, left)
            have += per
            if limited:
                assert reservation is not None
                extra = reservation.extra.get(mi)
                if extra is not None:
                    n = tasks_fitting(extra, demand, n)
            if n > 0:
                plan.append((mi, n))
                left -= n
                if left == 0:
                    return plan, need
    return None, min(have, need)


def gain(freed: Sequence[Demand], demand: Demand) -> int:
    """An upper bound on how many more tasks of ``demand`` the room of the released tasks
    ``freed`` lets any machine hold: each adds at most ``ceil(freed / demand)`` in its most
    generous resource (``floor(a + b) <= floor(a) + ceil(b)``), whatever was free beside it.

    Parameters
    ----------
    freed : sequence of Demand
        The released tasks' demands.
    demand : Demand
        One task's demand.

    Returns
    -------
    int

    Examples
    --------
    >>> gain([(4.0, 1.0), (1.0, 1.0)], (2.0, 2.0))
    3
    """
    total = 0
    for e in freed:
        most = 0
        r = 0
        for d in demand:
            if d > 0:
                k = math.ceil(e[r] / d)
                most = max(most, k)
            r += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
        total += most
    return total


Ending = tuple[float, int, int, Demand]
"""A running task's expected end, launch number (the tie-break), machine and demand: the
entries of the scheduler's list of running tasks by expected end."""


def reserve(
    cs: ClusterState,
    job: int,
    cls: int,
    demand: Demand,
    need: int,
    ends: Sequence[Ending],
    now: float,
) -> Reservation | None:
    """EASY's reservation for head gang ``job``: the earliest time its ``need`` tasks fit
    the eligible alive machines, the running tasks releasing their room at their expected
    ends (``ends``, sorted by end), and its plan then; None when they never fit (the gang is
    larger than what its machines hold: it blocks nobody).

    O(F + B + k): the free room now from the buckets (B the eligible machines with room),
    then the k earliest ends until the gang fits (and those tied with the last).

    Parameters
    ----------
    cs : ClusterState
        The machines and their free room now.
    job : int
        The gang's part id.
    cls : int
        Its constraint class.
    demand : Demand
        One task's demand.
    need : int
        The tasks that must start together.
    ends : sequence of Ending
        Every running task's expected end, launch number, machine and demand, sorted.
    now : float
        The time of the decision (the start, if they fit now).

    Returns
    -------
    Reservation or None
    """
    if tasks_on_capacity(cs, cls, demand, need) < need:
        # It never fits: the scan below would release every running task and find no room
        # for it (the same None, found in O(1)).
        return None
    by_name = cs.by_name[cls]
    ok = cs.machine_ok[cls] if by_name else cs.sig_ok[cls]
    sig = cs.sig
    alive = cs.alive
    counts: dict[int, int] = {}
    count = 0
    for free, bucket in cs.buckets.items():
        per = tasks_fitting(free.amounts, demand, need)
        if per == 0:
            continue
        for mi in bucket:
            if ok[mi if by_name else sig[mi]]:
                counts[mi] = per
                count += per
    # The room of the machines that release tasks, as it will be.
    rooms: dict[int, list[float]] = {}
    start = now
    i = 0
    total = len(ends)
    while i < total and (count < need or ends[i][0] <= start):
        end, _, mi, d = ends[i]
        i += 1
        if not alive[mi] or not ok[mi if by_name else sig[mi]]:
            continue
        room = rooms.get(mi)
        if room is None:
            room = rooms[mi] = list(cs.free[mi])
        r = 0
        for amount in d:
            room[r] += amount
            r += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
        k = tasks_fitting(room, demand, need)
        count += k - counts.get(mi, 0)
        counts[mi] = k
        start = max(start, end)
    if count < need:
        return None
    # The plan takes the machines that free up last first, so that room free now is what the
    # head does not need (EASY's "extra" nodes), for work that starts now and runs long.
    extra: dict[int, list[float]] = {}
    left = need
    for mi in reversed(list(counts)):
        k = counts[mi]
        if k == 0:
            continue
        n = min(k, left)
        copied = rooms.get(mi)
        now_free: Room = cs.free[mi] if copied is None else copied
        extra[mi] = [f - d * n for f, d in zip(now_free, demand, strict=True)]
        left -= n
        if left == 0:
            break
    return Reservation(job, start, extra)


def expected_seconds(job: Job) -> float:
    """How long one of ``job``'s tasks is expected to run: its ``estimate`` (the user's
    requested time, SWF field 9), else its duration as given: a fixed duration, the longest
    of a list, a distribution's mean (a Pareto of ``alpha`` <= 1 has none: inf); inf for a
    live job without an estimate. The policy never reads a simulated task's drawn duration.

    Parameters
    ----------
    job : Job
        The job.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.workload.model import ParetoDuration
    >>> job = Job("j", 0.0, "u", np.array([1.0]), 2, ParetoDuration(3.0, 10.0))
    >>> expected_seconds(job)
    15.0
    """
    if job.estimate is not None:
        return job.estimate
    duration = job.duration
    if isinstance(duration, FixedDuration):
        return duration.seconds
    if isinstance(duration, PerTaskDurations):
        return max(duration.seconds, default=0.0)
    if isinstance(duration, ExponentialDuration):
        return duration.mean
    if isinstance(duration, ParetoDuration):
        if duration.alpha <= 1.0:
            return math.inf
        return duration.minimum * duration.alpha / (duration.alpha - 1.0)
    return math.inf
