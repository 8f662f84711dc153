"""H-DRF section 5's per-server headroom, for every online policy (``PolicyOptions.headroom``):
which tasks may use a machine's room (:meth:`Headroom.may_place`), and when room held back
for tasks that stopped waiting is free again.

Examples
--------
On a server of <6 GB, 4 CPUs, 1 GPU>, a GPU task <1 GB, 0, 1 GPU> waits beside CPU tasks of
<1.5 GB, 1 CPU>: the headroom is the GPU task's (dominant share 1), and CPU tasks may use only
the 5 GB beside it (three of them) while it waits.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import PolicyOptions, make_policy
>>> from fairshare.workload.model import Job
>>> server = Machine("s0", np.array([6.0, 4.0, 1.0]))
>>> cluster = Cluster.build(["mem", "cpu", "gpu"], [server])
>>> policy = make_policy("hdrf", cluster, options=PolicyOptions(headroom=True))
>>> policy.headroom(0) is None  # nobody waits
True
>>> policy.job_submitted(0.0, 0, Job("cpu", 0.0, "a", np.array([1.5, 1.0, 0.0]), 8))
>>> policy.job_submitted(0.0, 1, Job("gpu", 0.0, "b", np.array([1.0, 0.0, 1.0]), 1))
>>> policy.headroom(0)
((1.0, 0.0, 1.0), 1.0)
>>> sorted(d.task.job for d in policy.decide(0.0))
[0, 0, 0, 1]
>>> policy.headroom(0)  # the GPU task runs: the CPU tasks' own headroom
((1.5, 1.0, 0.0), 0.25)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from mypy_extensions import mypyc_attr

from fairshare.policies.filters import RoomFilter
from fairshare.policies.records import Demand, JobState, Room
from fairshare.policies.state import fits
from fairshare.tolerances import FIT

if TYPE_CHECKING:
    from fairshare.policies.ledger import Ledger


@mypyc_attr(allow_interpreted_subclasses=True)
class Headroom(RoomFilter):
    """The headroom kept on each machine and the fit test that respects it: the room filter
    in force with ``PolicyOptions.headroom`` (see the module)."""

    reason: ClassVar[str] = "headroom"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The task fits but would eat the machine's headroom, or does not fit (see
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
        name = self.ledger.cluster.names[mi]
        if not fits(free, job.demand):
            return f"machine {name} has no room for its task"
        return f"machine {name} keeps its free room as headroom for larger tasks (H-DRF section 5)"

    def __init__(self) -> None:
        # Each machine's capacity as floats, per capacity each group's size (None: it never
        # fits), and the groups whose tasks the headroom was last kept for (when one drops
        # out, room it held back may be used: its machines are offered again).
        self._capacity: dict[int, Demand] = {}
        self._group_sizes: dict[Demand, dict[int, tuple[float, float] | None]] = {}
        self._kept_for: frozenset[int] = frozenset()

    def bind(self, ledger: Ledger) -> None:
        """Read ``ledger`` from now on.

        Parameters
        ----------
        ledger : Ledger
            The scheduler's state.
        """
        self.ledger = ledger

    def room(self, mi: int, free: Room, demand: Demand) -> bool:
        """:meth:`may_place` (see :meth:`RoomFilter.room`).

        Parameters
        ----------
        mi : int
            The machine's index.
        free : sequence of float
            Its free room.
        demand : Demand
            The task's demand.

        Returns
        -------
        bool
        """
        return self.may_place(mi, free, demand)

    def may_place(self, mi: int, free: Room, demand: Demand) -> bool:
        """Whether a task of ``demand`` may launch on machine ``mi`` whose free room is
        ``free``: it fits, and it leaves the machine's headroom free on every resource it
        takes, unless it may use it (:meth:`headroom`).

        Parameters
        ----------
        mi : int
            The machine's index.
        free : sequence of float
            Its free room (the actual one, or one a caller counts with tasks removed).
        demand : Demand
            The task's demand.

        Returns
        -------
        bool
        """
        if not fits(free, demand):
            return False
        room = self.headroom(mi)
        if room is None:
            return True
        kept, size = room
        capacity = self._capacity[mi]
        if _size(demand, capacity) >= size - FIT:
            return True  # as large as the task the headroom is kept for
        if not fits(kept, demand):
            # It needs more of some resource than the headroom holds: if it never fits
            # beside the headroom, it may use it (held back, it would starve).
            for c, h, d in zip(capacity, kept, demand, strict=True):
                if c - h + FIT < d:
                    return True
        # Only the resources the task takes: its launch leaves the others' free room as it
        # was, so they cannot hold it back (a CPU task beside a busy GPU).
        for f, d, h in zip(free, demand, kept, strict=True):
            if d > 0.0 and f - d + FIT < h:
                return False
        return True

    def headroom(self, mi: int) -> tuple[Demand, float] | None:
        """H-DRF section 5's headroom on machine ``mi`` (None: none is kept), and its size.

        The paper keeps, on each server, "a headroom equal to the size of the largest task",
        so that "a task with large resource demands does not get starved out by tasks with
        smaller demands" (section 5.2). Here the headroom is the demand of the largest task
        that waits for ``mi``: a pending task of a user below its cap, allowed on ``mi`` and
        fitting its capacity (so a task no machine can hold reserves nothing). A task's
        size on ``mi`` is its dominant share of ``mi``'s capacity; ties go to the larger
        sum of shares, then to the group seen first. The headroom follows the waiting
        tasks: when the largest ones stop waiting, it shrinks to the next largest, and
        nothing is kept while nobody waits.

        Who may use it (:meth:`may_place`): a task as large as the headroom's (the tasks it
        is kept for), and a task that needs more of some resource than the headroom holds
        and never fits beside it on ``mi`` (held back, it would starve for as long as the
        large tasks wait; it is a large task too, and the policy's order decides between
        them). Any other task leaves the headroom free on every resource it takes: a task
        within the headroom is what would starve the large one, taking each bit of room as
        it frees. A resource it does not take does not hold it back, however little of it is
        free: its launch leaves that room as it was. So a CPU task may start beside a busy
        GPU while GPU tasks wait, as the Pareto-efficient scheduler of section 5.2 went on
        "scheduling tasks if there exists leaf nodes that do not demand the saturated
        resources". The room on the resources it takes is kept even while the large task
        cannot start for want of another (the GPU): when that frees, the large task fits at
        once, instead of finding the room taken and the freed resource going to a task
        needing less of the kept room (a smaller GPU task), again and again. So a large task
        never waits for room that smaller tasks keep taking, and a task that fits an idle
        machine always starts: beside the headroom, in it, or once the larger tasks stopped
        waiting (they fit the idle machine, so they do not wait for ever): the headroom
        never strands a job.

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        (Demand, float) or None
            The demand of the largest task waiting for the machine and its size there, or
            None when nobody waits.
        """
        capacity = self._capacity.get(mi)
        if capacity is None:
            capacity = self._capacity[mi] = tuple(
                map(float, self.ledger.cluster.machines[mi].capacity.tolist())
            )
        # Per capacity, each group's (size, sum of shares), None if it never fits.
        sizes = self._group_sizes.get(capacity)
        if sizes is None:
            sizes = self._group_sizes[capacity] = {}
        cs = self.ledger.cluster
        users = self.ledger.users
        best: Demand | None = None
        best_size = (FIT, 0.0)
        for grp in cs.afor[mi]:
            g = grp.index
            if not grp.users:
                continue
            if g in sizes:
                size = sizes[g]
            else:
                demand = grp.demand
                size = sizes[g] = (
                    (_size(demand, capacity), sum(_shares(demand, capacity)))
                    if fits(capacity, demand)
                    else None
                )
            if size is None or not size > best_size:
                continue
            for u in grp.users:
                if users[u].running < users[u].cap:
                    best = grp.demand
                    best_size = size
                    break
        if best is None:
            return None
        return best, best_size[0]

    def released(self) -> bool:
        """Whether a group the headroom was kept for no longer waits (its last task
        launched, or its users reached their caps) since the last call: then the room held
        back for it is free to use, and the placer offers every machine with room again.

        Returns
        -------
        bool
        """
        cs = self.ledger.cluster
        groups = cs.groups
        users = self.ledger.users
        waiting = frozenset(
            g for g in cs.active if any(users[u].running < users[u].cap for u in groups[g].users)
        )
        released = not self._kept_for <= waiting
        self._kept_for = waiting
        return released


def _shares(demand: Demand, capacity: Demand) -> list[float]:
    """A task's share of each resource of a machine (resources it lacks count 0)."""
    return [d / c if c > 0 else 0.0 for d, c in zip(demand, capacity, strict=True)]


def _size(demand: Demand, capacity: Demand) -> float:
    """A task's size on a machine: its dominant share of the machine's capacity (DRF)."""
    return max(_shares(demand, capacity), default=0.0)
