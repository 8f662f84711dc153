"""Filters: may this task go on this machine now (the Kubernetes scheduling framework's Filter
plugins). The placer (:mod:`fairshare.policies.placer`) holds one ordered list of them, and
both placement and preemption's dry run (:mod:`fairshare.policies.preemption`, the
framework's PostFilter) ask the same objects, so a rule added as a filter is obeyed by both.

Every filter is a small class with one method, :meth:`Filter.admits`, that reads the ledger
and never writes it, and a *stage* that says when placement asks it:

| stage | asked | filters |
| --- | --- | --- |
| ``index`` | never one by one: the placement index (buckets, ``afor``) holds only what it admits | :class:`Eligibility` |
| ``room`` | by the selection, per group, on the machine's free room | :class:`Fit`, :class:`~fairshare.policies.headroom.Headroom` |
| ``pick`` | after a selection: a refused user sits out the rest of the machine's offer | :class:`Quota`, the Capacity Scheduler's maximum capacity |
| ``launch`` | before each launch of a batch: a refusal ends the user's turn | :class:`Reservation`, :class:`DelayScheduling`, :class:`CopyAdmission` |

Preemption's dry run asks the ``index``, ``room`` and ``launch`` filters, on the room the
victims would free (the ``room`` filters) and the machine (the others), before it kills:
nothing is killed for a launch the offer would then refuse. ``pick`` filters judge a user
against everyone's allocation as it stands; preemption applies its own rule on the
allocation after the kills instead (rule 8 of :mod:`fairshare.policies.preemption`: the
launch keeps the starved user's queues within their quotas).

A gang starts all its tasks at once on one snapshot (:mod:`fairshare.policies.gangs`): its
plan takes the machines' room and eligibility into account, and the ``pick`` filters judge
all its tasks together through :meth:`Filter.admits_whole` (a quota or maximum capacity is
obeyed by the whole gang, not task by task).

A filter whose refusal has a consequence (delay scheduling starts a job's wait) says so in
:meth:`Filter.refused`, which placement calls and a dry run does not.

Each filter also says what its refusal means to a user (SPEC section 8.5, ``fairshare
explain``, :mod:`fairshare.policies.explain`): :attr:`Filter.reason`, the kind of reason
(``constraint`` unless a filter declares another), and :meth:`Filter.describe`, one sentence
on why it refuses a task on a machine. The explanation asks the same :meth:`Filter.admits`
placement asks, and only then these two.

Examples
--------
A filter that keeps machine ``m0`` free for an hour; both placement and preemption obey it:

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import Scheduler
>>> from fairshare.policies.filters import Filter
>>> from fairshare.workload.model import Job
>>> class Drained(Filter):
...     stage = "launch"
...     def admits(self, job, mi, free, now):
...         return self.ledger.cluster.names[mi] != "m0" or now >= 3600.0
>>> machines = [Machine(f"m{i}", np.array([2.0])) for i in range(2)]
>>> policy = Scheduler(Cluster.build(["slots"], machines), filters=[Drained()])
>>> policy.job_submitted(0.0, 0, Job("x", 0.0, "a", np.array([1.0]), 4))
>>> [d.machine for d in policy.decide(0.0)]
['m1', 'm1']
>>> [f.name for f in policy.placer.filters]
['eligibility', 'fit', 'drained']
"""  # noqa: E501 (the stages' table is one row per line)

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

from mypy_extensions import mypyc_attr

from fairshare.policies.delay import deadlines, first_unlaunched, may_launch
from fairshare.policies.records import Demand, JobState, Room, part_id, shown_amount
from fairshare.policies.state import fits
from fairshare.tolerances import FIT

if TYPE_CHECKING:
    from fairshare.policies.ledger import Ledger

Stage = Literal["index", "room", "pick", "launch"]
"""When placement asks a filter (see the module)."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Filter:
    """May a task of ``job`` go on machine ``mi`` now (see the module).

    Attributes
    ----------
    stage : {"index", "room", "pick", "launch"}
        When placement asks it.
    name : str
        Its name in listings (the class name in kebab case unless set).
    ledger : Ledger
        The state it reads (set by :meth:`bind`).
    """

    stage: ClassVar[Stage] = "launch"
    reason: ClassVar[str] = "constraint"
    """The kind of reason its refusal gives (SPEC section 8.5: ``quota``, ``fair-share``,
    ``gang``, ``reservation``, ``constraint``, ``headroom`` or ``priority``)."""

    @property
    def name(self) -> str:
        """The filter's name: its class name in kebab case."""
        return re.sub(r"(?<!^)(?=[A-Z])", "-", type(self).__name__).lower()

    def bind(self, ledger: Ledger) -> None:
        """Read ``ledger`` from now on.

        Parameters
        ----------
        ledger : Ledger
            The scheduler's state.
        """
        self.ledger = ledger

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Whether the next task of ``job`` may start on machine ``mi``, whose free room is
        ``free`` (the actual one, or the one preemption counts with its victims gone), at
        ``now``. Reads the ledger, never writes it.

        Parameters
        ----------
        job : JobState
            The job part whose next task would start.
        mi : int
            The machine's index.
        free : sequence of float
            The machine's free room.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        return True

    def admits_whole(self, job: JobState, count: int, now: float) -> bool:
        """Whether ``count`` tasks of ``job`` may start together: a gang's admission, which
        places all its tasks at once on one snapshot (:mod:`fairshare.policies.gangs`). The
        placer asks the ``pick`` filters, which judge a user against everyone's allocation,
        so that a gang obeys a quota or a maximum capacity as a whole; the machines' room and
        eligibility are the gang plan's. Reads the ledger, never writes it. By default: yes.

        Parameters
        ----------
        job : JobState
            The waiting gang's part.
        count : int
            How many of its tasks would start.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        return True

    def refused(self, job: JobState, mi: int, now: float) -> None:
        """Placement's consequence of a refusal (a dry run has none): nothing by default.

        Parameters
        ----------
        job : JobState
            The job part refused.
        mi : int
            The machine.
        now : float
            The time of the decision.
        """

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """Why :meth:`admits` refuses the next task of ``job`` on machine ``mi`` (asked only
        after it did), in one sentence for ``fairshare explain``: by default, the filter's
        name.

        Parameters
        ----------
        job : JobState
            The job part refused.
        mi : int
            The machine's index.
        free : sequence of float
            The machine's free room.
        now : float
            The time of the decision.

        Returns
        -------
        str
        """
        return f"the {self.name} filter refuses it"

    def describe_whole(self, job: JobState, count: int, now: float) -> str:
        """Why :meth:`admits_whole` refuses ``count`` tasks of ``job`` at once (asked only
        after it did), in one sentence for ``fairshare explain``: by default, the filter's
        name.

        Parameters
        ----------
        job : JobState
            The waiting gang's part.
        count : int
            How many of its tasks would start together.
        now : float
            The time of the decision.

        Returns
        -------
        str
        """
        return f"the {self.name} filter refuses its {count} tasks at once"


@mypyc_attr(allow_interpreted_subclasses=True)
class RoomFilter(Filter):
    """A filter of the machine's room alone (stage ``room``): whether a task of a demand
    may use the free room; the selection asks :meth:`room` per group, before a job is
    chosen."""

    stage: ClassVar[Stage] = "room"

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """:meth:`room` for the job's demand (see :meth:`Filter.admits`).

        Parameters
        ----------
        job : JobState
            The job part.
        mi : int
            The machine's index.
        free : sequence of float
            The machine's free room.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        return self.room(mi, free, job.demand)

    def room(self, mi: int, free: Room, demand: Demand) -> bool:
        """Whether a task of ``demand`` may use machine ``mi`` whose free room is ``free``.
        A room filter admits at most what fits (:func:`~fairshare.policies.state.fits`): the
        selection ends an offer without asking it when no pending demand fits.

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
        return fits(free, demand)


@mypyc_attr(allow_interpreted_subclasses=True)
class Fit(RoomFilter):
    """The task fits the machine's free room (every resource, within
    :data:`fairshare.tolerances.FIT`). Placement inlines this test on its hot paths when no
    other room filter is in force."""

    reason: ClassVar[str] = "fair-share"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The machine has no room for the task: others' tasks hold it (see
        :meth:`Filter.describe`).

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
        return f"machine {self.ledger.cluster.names[mi]} has no room for its task"


@mypyc_attr(allow_interpreted_subclasses=True)
class RoomChain(RoomFilter):
    """Several room filters in force at once: each must admit, in their order.

    Parameters
    ----------
    filters : sequence of RoomFilter
        The room filters.
    """

    def __init__(self, filters: Sequence[RoomFilter]) -> None:
        self.filters = list(filters)

    def room(self, mi: int, free: Room, demand: Demand) -> bool:
        """Whether every room filter admits (see :meth:`RoomFilter.room`).

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
        return all(f.room(mi, free, demand) for f in self.filters)


@mypyc_attr(allow_interpreted_subclasses=True)
class Eligibility(Filter):
    """The machine passes the job's constraint and whitelist (its constraint class, Choosy
    section 5.1, from the one eligibility model of :mod:`fairshare.workload.eligibility`).
    Placement never asks it one task at a time: the placement index lists for each machine
    only the groups whose class may use it."""

    reason: ClassVar[str] = "constraint"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """Machine ``mi`` fails the job's constraint or whitelist (see
        :meth:`Filter.describe`).

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
        spec = job.job
        rules = []
        if spec.constraint is not None:
            rules.append(f"constraint {str(spec.constraint)!r}")
        if spec.machines is not None:
            rules.append(f"machine list ({len(spec.machines)} machines)")
        what = " and ".join(rules) if rules else "placement rules"
        return f"machine {self.ledger.cluster.names[mi]} fails its {what}"

    stage: ClassVar[Stage] = "index"

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Whether the job's class may use machine ``mi`` (see :meth:`Filter.admits`).

        Parameters
        ----------
        job : JobState
            The job part.
        mi : int
            The machine's index.
        free : sequence of float
            Unused.
        now : float
            Unused.

        Returns
        -------
        bool
        """
        cs = self.ledger.cluster
        return cs.eligible(cs.groups[job.group].cls, mi)


@mypyc_attr(allow_interpreted_subclasses=True)
class Quota(Filter):
    """The queues' quotas let the job's user launch one more task
    (:meth:`fairshare.policies.quota.QuotaTree.admits`: its queues' borrowing limits and
    their siblings' lending limits, on the pooled free room). A refused user sits out the
    rest of the machine's offer."""

    reason: ClassVar[str] = "quota"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The queue whose quota refuses: the first of the user's queues (lowest first) that
        one more task would take past its quota plus borrowing limit, or past its quota
        when its siblings do not lend (see :meth:`Filter.describe`).

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
        return self.describe_whole(job, 1, now)

    def describe_whole(self, job: JobState, count: int, now: float) -> str:
        """The queue whose quota refuses ``count`` tasks at once: the first of the user's
        queues (lowest first) they would take past its quota plus borrowing limit, or past
        its quota when its siblings do not lend (see :meth:`Filter.describe_whole`).

        Parameters
        ----------
        job : JobState
        count : int
        now : float

        Returns
        -------
        str
        """
        ledger = self.ledger
        quotas = ledger.quotas
        assert quotas is not None
        names = ledger.cluster.resources
        used = quotas.usage(ledger.users)
        demand = [d * count for d in ledger.cluster.groups[job.group].demand]
        chain = quotas.chain(ledger.users[job.user].queue)
        for limit, what in ((quotas.ceiling, "quota plus borrowing limit"), (quotas.quota, "")):
            for a in chain:
                for r, d in enumerate(demand):
                    if d > 0 and used[a][r] + d > limit[a][r] + FIT:
                        path, name = quotas.paths[a], names[r]
                        have = f"{shown_amount(used[a][r])} of {shown_amount(limit[a][r])} {name}"
                        gang = (
                            f"; the gang's {count} tasks need {shown_amount(d)} {name} at once"
                            if count > 1
                            else ""
                        )
                        if what:
                            return f"queue {path} uses {have}, its {what}{gang}"
                        return (
                            f"queue {path} uses {have}, its quota, and what its siblings "
                            f"may lend is held back for them{gang}"
                        )
        return "the queues' lending limits hold back the room it would borrow"

    stage: ClassVar[Stage] = "pick"

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Whether the quotas admit one more task of ``job``'s group for its user (see
        :meth:`Filter.admits`).

        Parameters
        ----------
        job : JobState
            The job part.
        mi : int
            Unused: quotas pool the cluster.
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
        """Whether the quotas admit ``count`` more tasks of ``job``'s group for its user at
        once, as one launch of ``count`` times the task's demand (a gang's admission; see
        :meth:`Filter.admits_whole`).

        Parameters
        ----------
        job : JobState
            The job part.
        count : int
            How many of its tasks would start.
        now : float
            Unused.

        Returns
        -------
        bool
        """
        ledger = self.ledger
        quotas = ledger.quotas
        assert quotas is not None
        users = ledger.users
        pooled = list(ledger.cluster.total)
        for user in users:
            if user.running:
                for r, x in enumerate(user.alloc):
                    pooled[r] -= x
        demand = ledger.cluster.groups[job.group].demand
        return quotas.admits(
            quotas.usage(users),
            quotas.chain(users[job.user].queue),
            demand if count == 1 else tuple(d * count for d in demand),
            pooled,
            quotas.pending(users),
        )


@mypyc_attr(allow_interpreted_subclasses=True)
class Reservation(Filter):
    """EASY backfilling (Lifka 1995): a task may start on a machine the head gang's
    reservation counts on only if it ends by the reserved start or uses only room the gang
    leaves over (:meth:`fairshare.policies.gangs.Reservation.allows`). The room a launch
    takes there is counted by the placer (:meth:`take`)."""

    reason: ClassVar[str] = "reservation"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The machine's room is held for the head gang's reserved start (see
        :meth:`Filter.describe`).

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
        ledger = self.ledger
        reservation = ledger.reservation
        name = ledger.cluster.names[mi]
        if reservation is None:
            return f"machine {name} is reserved"
        head = ledger.jobs.get(reservation.job)
        who = f"job {head.job.name!r}" if head is not None else "the head job"
        return (
            f"machine {name} is reserved for {who} (EASY backfilling) from "
            f"t={shown_amount(reservation.start)}, and its task would not end by then"
        )

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Whether a task of ``job`` on ``mi`` leaves the head gang's reserved start as it
        is (see :meth:`Filter.admits`).

        Parameters
        ----------
        job : JobState
            The job part.
        mi : int
            The machine's index.
        free : sequence of float
            Unused.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        ledger = self.ledger
        reserved = ledger.reserved
        if reserved is None or mi not in reserved:
            return True
        reservation = ledger.reservation
        assert reservation is not None
        return reservation.allows(mi, job.demand, now + job.expected)

    def take(self, job: JobState, mi: int, now: float) -> None:
        """A task of ``job`` admitted by :meth:`admits` started on ``mi``: the room it takes
        from what the head gang leaves over there is counted.

        Parameters
        ----------
        job : JobState
            The job part.
        mi : int
            The machine's index.
        now : float
            The time of the decision.
        """
        ledger = self.ledger
        reserved = ledger.reserved
        if reserved is not None and mi in reserved:
            reservation = ledger.reservation
            assert reservation is not None
            reservation.admits(mi, job.demand, now + job.expected)


@mypyc_attr(allow_interpreted_subclasses=True)
class DelayScheduling(Filter):
    """Delay scheduling (FAIR Algorithm 1): a job that reads input launches a map on a
    machine without its block only once it has waited long enough for that locality
    (:func:`fairshare.policies.delay.may_launch`). A refusal starts the job's wait and asks
    the driver to wake the policy when its allowed locality widens."""

    reason: ClassVar[str] = "constraint"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The job waits for a machine that holds its input (see :meth:`Filter.describe`).

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
        return f"delay scheduling: it waits for a data-local machine rather than {name}"

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Whether delay scheduling lets ``job`` launch on machine ``mi`` now: the test of
        :func:`fairshare.policies.delay.pick_map` without its side effects (see
        :meth:`Filter.admits`).

        Parameters
        ----------
        job : JobState
            The job part.
        mi : int
            The machine's index.
        free : sequence of float
            Unused.
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        if (
            job.requeue
            or job.blocks is None
            or job.waits is None
            or job.maps_done >= job.maps
            # Any locality is allowed already (may_launch would say so for every task).
            or job.allowed_locality == 2
        ):
            return True
        launched = job.launched
        assert launched is not None
        # Launched tasks are dropped from the candidate lists as they are met (the index
        # pick_map keeps; no decision reads them), so that a refused job reads each once.
        if first_unlaunched(job.by_machine.get(mi), launched) is not None:
            return True
        rack = self.ledger.cluster.rack
        rack_local = first_unlaunched(job.by_rack.get(rack[mi]), launched) is not None
        return may_launch(job, "rack" if rack_local else "off_rack", now)

    def refused(self, job: JobState, mi: int, now: float) -> None:
        """The job skips this offer: its wait starts (if it had not), and the driver wakes
        the policy when its allowed locality next widens.

        Parameters
        ----------
        job : JobState
            The job part refused.
        mi : int
            The machine.
        now : float
            The time of the decision.
        """
        if job.skip_since is None:
            job.skip_since = now
        # A locality whose deadline has passed already applies; the driver needs the next
        # one, or it never wakes the job again.
        for t in deadlines(job):
            if t > now:
                self.ledger.wake_at(t)


@mypyc_attr(allow_interpreted_subclasses=True)
class CopyAdmission(Filter):
    """Copy-compute splitting's admission control (FAIR section 5.2): a machine admits a
    job's copy part while it holds fewer than ``max_reducers`` reducers and fewer of the
    job's copy parts than ``max_computing`` (or than the job's compute parts that fit its
    capacity)."""

    reason: ClassVar[str] = "constraint"

    def describe(self, job: JobState, mi: int, free: Room, now: float) -> str:
        """The machine holds as many reducers as it admits (see :meth:`Filter.describe`).

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
        return f"machine {name} admits no more reducers (copy-compute splitting)"

    def __init__(self) -> None:
        # Per (machine, compute demand): how many compute parts fit the machine's capacity.
        self._compute_slots: dict[tuple[int, Demand], int] = {}

    def admits(self, job: JobState, mi: int, free: Room, now: float) -> bool:
        """Whether machine ``mi`` admits one more copy part of ``job`` (any other part:
        yes; see :meth:`Filter.admits`).

        Parameters
        ----------
        job : JobState
            The job part.
        mi : int
            The machine's index.
        free : sequence of float
            Unused (a copy part takes no room).
        now : float
            Unused.

        Returns
        -------
        bool
        """
        if job.phase != "copy":
            return True
        ledger = self.ledger
        cpac = ledger.copy_compute
        assert cpac is not None
        compute = ledger.jobs[part_id(job.id, "reduce")].demand
        slots = self._compute_slots.get((mi, compute))
        if slots is None:
            capacity = ledger.cluster.machines[mi].capacity
            slots = min(
                (
                    int((float(c) + FIT) // d)
                    for c, d in zip(capacity, compute, strict=True)
                    if d > 0
                ),
                default=cpac.max_computing,
            )
            self._compute_slots[(mi, compute)] = slots
        return cpac.may_copy(job.id, mi, slots)
