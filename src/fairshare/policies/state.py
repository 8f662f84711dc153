"""The cluster as every online policy's scheduler sees it: machines with their free capacity,
the constraint classes that decide which machine a task may use, and the placement index
(the jobs', users' and groups' records are :mod:`fairshare.policies.records`').

Indexes that keep a placement decision cheap (O(log n), never a scan of all users or all
machines):

- A *group* is the pair (constraint class, per-task demand). Tasks of one group fit on the same
  machines and are eligible for the same machines, so one fit test and one eligibility lookup
  decide for every user of the group. Machines map to their eligible groups through their
  *signature* (capacity, rack and attributes): classes that do not read ``name`` are evaluated
  once per signature, name-dependent classes (``name`` or a whitelist) once per machine.
- Machines with free room are kept in *buckets* keyed by their free vector
  (``ClusterState.buckets``), one index for the whole cluster: a finish or a launch moves one
  machine between two buckets whatever the number of constraint classes. Machines of one
  bucket are interchangeable for a task that reads no input block and whose class may use
  them, so an arriving job tests one fit per distinct free vector, not one per machine, and
  takes the eligible machines of a fitting bucket last in, first out (the machine that got
  that room most recently first). The number of buckets is the number of distinct free
  vectors: small when tasks come in a few shapes, as many as the machines when every free
  vector differs (fractional demands from traces).

Examples
--------
Two machines of one signature share a bucket until one of them loses room:

>>> import numpy as np
>>> from fairshare.cluster import Machine
>>> cs = ClusterState(["cpu", "mem"], [Machine("m1", np.array([4.0, 8.0])),
...                                    Machine("m2", np.array([4.0, 8.0]))])
>>> cs.buckets
{(4.0, 8.0): {0: None, 1: None}}
>>> cs.free[0][0], cs.free[0][1] = 3.0, 6.0
>>> cs.rebucket(0)
>>> cs.buckets
{(4.0, 8.0): {1: None}, (3.0, 6.0): {0: None}}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from librt.vecs import append, vec
from mypy_extensions import i64

from fairshare.cluster import Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies.records import ClassSignature, Demand, Group, Room, RoomKey
from fairshare.tolerances import FIT as EPS
from fairshare.workload import eligibility
from fairshare.workload.eligibility import AttributeCodes
from fairshare.workload.model import Job


class ClusterState:
    """Machines, their signatures, free capacity and eligibility by constraint class.

    Machines are numbered in the order they joined (a machine that leaves keeps its index,
    dead); the lists below are indexed by that number.

    The placement index is kept once for the whole cluster, never per constraint class, so
    that a finish or a launch costs the same however many classes the workload brings
    (Google-like workloads bring about one per job): ``buckets`` maps each free vector to the
    machines with that room, and a class's eligibility is a table looked up when a placement
    asks (``sig_ok`` per signature, ``machine_ok`` per machine for classes that read
    ``name``). The cost of each operation (M machines, G groups):

    ========================  ==========================================================
    a finish or a launch      O(R) (R resources): one move between buckets (:meth:`rebucket`)
    a machine's offer         O(A + log n) per task: :meth:`select` over the A groups with
                              work that may use it (``afor``), each a heap
    a job's offer (arrival)   O(F + B): one fit test per free vector F, then an eligibility
                              lookup per machine B of the fitting buckets until the job's
                              tasks are placed
    a new class or group      O(M) for its eligibility table; O(P) to list a group in
                              ``afor`` while it has work (P the profiles of its class:
                              machines alike for every class share one list)
    a machine joins           O(G) for a new profile's ``afor`` list, O(classes) for a new
                              signature
    ========================  ==========================================================

    Parameters
    ----------
    resources : sequence of str
        The cluster's resources, in order.
    machines : sequence of Machine
        The machines at the start.

    Attributes
    ----------
    free : list of list of float
        Per machine, its free room.
    total : list of float
        The alive machines' total capacity, per resource.
    buckets : dict
        Free vector to the alive machines with that free vector and room, in the order they
        got it; the free vectors in the order their bucket was last started.
    roomy : dict of int to None
        The alive machines with room, in the order they got it.
    """

    def __init__(self, resources: Sequence[str], machines: Sequence[Machine]) -> None:
        self.resources = tuple(resources)
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.machines: list[Machine] = []
        # Per machine, its free room: a typed array, read and written unboxed in the
        # compiled kernel (a list of float objects made two objects per launch and finish).
        self.free: list[vec[float]] = []
        self.rack: list[str | None] = []
        self.alive: list[bool] = []
        self.sig: list[int] = []
        self._sig_of: dict[tuple[object, ...], int] = {}
        self.sig_machines: list[Machine] = []
        # Alive machines with room: the order delay scheduling re-offers them in.
        self.roomy: dict[int, None] = {}
        # Free vector -> the machines with that free vector and room (every class reads it).
        self.buckets: dict[RoomKey, dict[int, None]] = {}
        # Per machine: the free vector of its bucket while it has room (None: no room, or
        # dead).
        self.free_of: list[RoomKey | None] = []
        # Per machine, the first two amounts of ``free_of`` (0.0 past the last resource;
        # -inf: no room): :meth:`fits_some_bucket` scans them as plain numbers.
        self.room0 = vec[float]()
        self.room1 = vec[float]()
        # Per machine, its bucket while it has room (the dictionary ``buckets`` maps its
        # free vector to).
        self.bucket_of: list[dict[int, None] | None] = []
        # Per machine, its index as one int object, made once: the key it is filed under in
        # the buckets, ``roomy`` and the ledger's ``dirty``. The compiled kernel keeps ints
        # unboxed and would make a new object for each look-up of an index above 256, which
        # the dictionary then compares by value.
        self.keys: list[Any] = []
        self.total = [0.0] * len(self.resources)
        self.classes: list[ClassSignature] = []
        self._class_of: dict[ClassSignature, int] = {}
        self._constraints: list[Constraint | None] = []
        self.by_name: list[bool] = []
        self.groups: list[Group] = []
        self._group_of: dict[tuple[int, Demand], int] = {}
        # How many groups' tasks fit on a machine without room (every demand within 2 EPS):
        # while there is none, an offer ends as soon as its machine is full.
        self.tiny_groups = 0
        # Per machine, the groups that some user has pending work in (and some that had
        # lately) and that may use it, in creation order (by index): a selection picks only
        # from these, and reading the list allocates nothing. The groups themselves, not
        # their indices: a selection reads every one, and an index costs a second list read
        # and an unboxing. Constrained workloads (Choosy section 7.1) leave most groups
        # without work most of the time.
        self.afor: list[list[Group]] = []
        # Machines alike for every class (one signature, and the same answer for every class
        # read by name) share one afor list: a *profile*. A group is listed once per profile
        # of its class, not once per machine (an Alibaba cluster of 4,034 machines has 526
        # signatures; most workloads have no class read by name).
        self.profile: list[int] = []  # per machine
        self.profile_groups: list[list[Group]] = []  # per profile: the afor list it shares
        self.profile_machines: list[list[int]] = []  # per profile, never empty
        self.sig_profiles: list[list[int]] = []  # per signature
        self._name_classes: list[int] = []  # the classes read by name
        # Per class, its profiles once asked (None: to compute, as profiles split).
        self._class_profiles: list[list[int] | None] = []
        # Per group, whether it is in afor of all its machines. A group whose last user runs
        # out of work is only *retiring* (still listed, with the selection count then) and
        # leaves the lists once as many selections as there are machines have passed: a
        # shape that comes back soon (TSF section VI's four shapes) is not re-listed on every
        # machine per job.
        self.listed: list[bool] = []
        # How many groups some user has pending work in: while none, no selection can find
        # anyone (an idle cluster, where every finish only frees room).
        self.active_groups = 0
        # The groups some user has pending work in (their number is active_groups).
        self.active: dict[int, None] = {}
        # Per resource, the least demand of the active groups (None: to compute again, as the
        # active groups changed): room below it in some resource fits no pending task, which
        # ends a machine's offer without a look at any group (a full cluster's usual case).
        self._floor: list[float] | None = None
        self.retiring: dict[int, int] = {}
        self.selects = 0
        self.machines_of_sig: list[list[int]] = []
        self.sigs_of_class: list[list[int]] = []
        # Per class, its machines in index order once asked (machines_of_class), kept as
        # machines join: a group is listed on them whenever it gains work again, and merging
        # the signatures' lists each time was a tenth of an Alibaba replay.
        self.class_machines: list[list[int] | None] = []
        # Per class not read by name: whether each signature matches its constraint, so a
        # placement never evaluates a constraint; computed once per combination of the
        # attributes the constraint reads (Google-like clusters give every machine its own
        # signature, and a new job class would otherwise evaluate every one). Per class read
        # by name: whether each machine matches (``machine_ok``; empty for the others). The
        # answers come from the one eligibility model, fairshare.workload.eligibility.
        self.sig_ok: list[bytearray] = []
        self.machine_ok: list[bytearray] = []
        self._codes: AttributeCodes | None = None
        # (class, demand, need) -> how many such tasks (at most need) the class's alive
        # machines hold when empty (gangs.tasks_on_capacity); cleared when a machine joins or
        # leaves.
        self.capacity_tasks: dict[tuple[int, Demand, int], int] = {}
        for machine in machines:
            self.add_machine(machine)

    # ---------------------------------------------------------------------------- machines

    def add_machine(self, machine: Machine) -> int:
        """Add ``machine`` with all its capacity free, eligible for the classes and groups
        that may use it.

        Parameters
        ----------
        machine : Machine
            The machine; its name may be that of a machine that left.

        Returns
        -------
        int
            Its index.

        Raises
        ------
        ValueError
            An alive machine has that name.
        """
        if machine.name in self.index and self.alive[self.index[machine.name]]:
            raise ValueError(f"machine {machine.name!r} is already in the cluster")
        key = eligibility.signature_key(machine)
        sig = self._sig_of.get(key)
        if sig is None:
            sig = self._sig_of[key] = len(self.sig_machines)
            self.sig_machines.append(machine)
            self._codes = None
            self.machines_of_sig.append([])
            self.sig_profiles.append([])
            for c, constraint in enumerate(self._constraints):
                ok = not self.by_name[c] and eligibility.allows(constraint, None, machine)
                self.sig_ok[c].append(ok)
                if ok:
                    self.sigs_of_class[c].append(sig)
        mi = len(self.names)
        self.capacity_tasks.clear()
        self.names.append(machine.name)
        self.index[machine.name] = mi
        self.machines.append(machine)
        capacity = list(map(float, machine.capacity.tolist()))
        self.free.append(vec[float](capacity))
        self.rack.append(machine.rack)
        self.alive.append(True)
        self.sig.append(sig)
        for r, value in enumerate(capacity):
            self.total[r] += value
        self.machines_of_sig[sig].append(mi)
        for c in range(len(self.classes)):
            self.machine_ok[c].append(self.by_name[c] and self._eligible_machine(c, mi))
            known = self.class_machines[c]
            if known is not None and self.eligible(c, mi):
                known.append(mi)  # the highest index yet: the list stays in order
        self._join_profile(mi)
        self.free_of.append(None)
        self.room0 = append(self.room0, -math.inf)
        self.room1 = append(self.room1, -math.inf)
        self.bucket_of.append(None)
        self.keys.append(mi)
        self.rebucket(mi)
        return mi

    def remove_machine(self, mi: int) -> None:
        """Machine ``mi`` leaves: it has no room and counts no more in the totals (its
        running tasks are the caller's to release first).

        Parameters
        ----------
        mi : int
            The machine's index.
        """
        # A dead machine has no room: the re-bucketing takes it out of its bucket.
        self.capacity_tasks.clear()
        self.free[mi] = vec[float]([0.0] * len(self.resources))
        self.rebucket(mi)
        self.alive[mi] = False
        for r, value in enumerate(self.machines[mi].capacity):
            self.total[r] -= float(value)

    def groups_for(self, mi: int) -> list[int]:
        """The groups whose tasks may use machine ``mi``, in creation order (a scan of every
        group: for checks, not for placements, which read ``afor``).

        Parameters
        ----------
        mi : int
            The machine's index.

        Returns
        -------
        list of int
        """
        return [g for g, grp in enumerate(self.groups) if self.eligible(grp.cls, mi)]

    def machines_of_class(self, cls: int) -> list[int]:
        """The machines (alive or not) that tasks of class ``cls`` may use, in index order.

        Parameters
        ----------
        cls : int
            The constraint class.

        Returns
        -------
        list of int
            Kept for the next call (and extended as machines join): not to be changed.
        """
        known = self.class_machines[cls]
        if known is not None:
            return known
        if self.by_name[cls]:
            ok = self.machine_ok[cls]
            known = [mi for mi in range(len(self.names)) if ok[mi]]
        else:
            known = sorted(
                mi for sig in self.sigs_of_class[cls] for mi in self.machines_of_sig[sig]
            )
        self.class_machines[cls] = known
        return known

    def rebucket(self, mi: int) -> None:
        """Move machine ``mi`` to the bucket of its current free vector (out of them all when
        it has no room left): the one state change every change of a machine's free room
        ends with (a no-op when its free vector did not change). A machine with room is also
        in ``roomy``, in the order it got room. O(R): one bucket left, one joined, whatever
        the number of classes.

        Parameters
        ----------
        mi : int
            The machine's index; its ``free`` has changed.
        """
        old = self.free_of[mi]
        free = self.free[mi]
        if old is not None and old.same(free):
            # Compared amount by amount, unboxed: no key is made for a room that did not
            # change (a machine offered with nothing placed).
            return
        buckets = self.buckets
        bucket_of = self.bucket_of
        key = self.keys[mi]
        for v in free:
            if v > EPS:
                break
        else:
            # No room left: out of its bucket (full before and after: in none already).
            if old is not None:
                left = bucket_of[mi]
                assert left is not None
                del left[key]
                if not left:
                    del buckets[old]
                self.free_of[mi] = None
                self.room0[mi] = -math.inf
                self.room1[mi] = -math.inf
                bucket_of[mi] = None
                self.roomy.pop(key, None)
            return
        # Its bucket is found by machine, and the new one with one look-up: a free vector
        # is a tuple of floats, hashed again at every look-up.
        new = RoomKey(free)
        reused: dict[int, None] | None = None
        if old is None:
            if not self.alive[mi]:
                return
            # Room again: last in roomy.
            self.roomy[key] = None
        else:
            left = bucket_of[mi]
            assert left is not None
            if len(left) == 1:
                # Alone in its bucket (a full cluster's usual case: each machine's room is
                # its own): the bucket leaves, and it is the new one when there is none
                # (the same {mi: None}, last among the buckets), with no dictionary made.
                del buckets[old]
                reused = left
            else:
                del left[key]
        fresh = reused if reused is not None else {key: None}
        joined = buckets.setdefault(new, fresh)
        if joined is not fresh:
            joined[key] = None
        bucket_of[mi] = joined
        self.free_of[mi] = new
        self.room0[mi] = new.first
        self.room1[mi] = new.second

    def bump(self, mi: int) -> None:
        """Move machine ``mi`` to the end of its bucket (and a bucket it is alone in to the end
        of the buckets): where a re-bucketing away from its free vector and back would leave
        it, for a caller that skips the round trip (``Scheduler.finish_and_decide``).

        Parameters
        ----------
        mi : int
            The index of a machine with room.
        """
        free = self.free_of[mi]
        bucket = self.bucket_of[mi]
        assert free is not None and bucket is not None
        buckets = self.buckets
        key = self.keys[mi]
        del bucket[key]
        if not bucket:
            del buckets[free]
            buckets[free] = bucket
        bucket[key] = None

    # --------------------------------------------------------------------- classes, groups

    def class_of(self, job: Job) -> int:
        """The constraint class of ``job`` (its constraint and whitelist), created with its
        eligibility table when new.

        Parameters
        ----------
        job : Job
            The job.

        Returns
        -------
        int
            The class's index.
        """
        key: ClassSignature = eligibility.class_key(job.constraint, job.machines)
        c = self._class_of.get(key)
        if c is None:
            c = self._class_of[key] = len(self.classes)
            self.classes.append(key)
            self.class_machines.append(None)
            self._class_profiles.append(None)
            self._constraints.append(job.constraint)
            by_name = eligibility.reads_names(job.constraint, job.machines)
            self.by_name.append(by_name)
            # Classes read by name are matched machine by machine: no signature stands for them.
            if by_name:
                self.sig_ok.append(bytearray(len(self.sig_machines)))
                per_machine = eligibility.allowed(job.constraint, job.machines, self.machines)
                self.machine_ok.append(bytearray(per_machine.astype(np.uint8).tobytes()))
                self.sigs_of_class.append([])
                self._split_profiles(c)
            else:
                ok = self._matching_sigs(job.constraint)
                self.sig_ok.append(ok)
                self.machine_ok.append(bytearray(len(self.names)))
                self.sigs_of_class.append([s for s in range(len(ok)) if ok[s]])
        return c

    def group_of(self, cls: int, demand: Demand) -> int:
        """The group of tasks of class ``cls`` and ``demand``, created when new.

        Parameters
        ----------
        cls : int
            The constraint class.
        demand : Demand
            The tasks' demand.

        Returns
        -------
        int
            The group's index.
        """
        g = self._group_of.get((cls, demand))
        if g is None:
            g = self._group_of[(cls, demand)] = len(self.groups)
            self.groups.append(Group(g, cls, demand))
            self.listed.append(False)
            if all(d <= 2 * EPS for d in demand):
                self.tiny_groups += 1
        return g

    def group_active(self, g: int, active: bool) -> None:
        """Group ``g`` gained its first user with pending work (``active``: list it in
        ``afor`` of every machine that may run it) or lost its last (it retires).

        Parameters
        ----------
        g : int
            The group.
        active : bool
            Whether it gained its first user with work (else it lost its last).
        """
        floor = self._floor
        if not active:
            self._floor = None  # the least demand may rise: computed again when read
            self.active_groups -= 1
            del self.active[g]
            # No user has work in it: every heap entry is stale. Selections skip a group whose
            # room does not fit (their fit test comes before a look at its heap), so they
            # would no longer drop these.
            self.groups[g].heap.clear()
            self.retiring[g] = self.selects
            return
        self.active_groups += 1
        self.active[g] = None
        if floor is not None:
            # One more group: the least demand per resource falls to its demand where lower.
            i = 0
            for d in self.groups[g].demand:
                floor[i] = min(floor[i], d)
                i += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
        if self.retiring.pop(g, None) is None and not self.listed[g]:
            self._list(g, True)
        # Groups retired for longer than a selection per machine leave the lists. The
        # retiring are in the order they retired (a group active again leaves), so by
        # ``since``: those past the horizon are the first few.
        horizon = self.selects - len(self.names)
        retiring = self.retiring
        while retiring:
            r = next(iter(retiring))
            if retiring[r] >= horizon:
                break
            del retiring[r]
            self._list(r, False)

    def fits_none(self, free: vec[float]) -> bool:
        """Whether ``free`` room is short, in some resource, of every active group's demand
        there (within the fit tolerance): then no pending task fits it. A quick test ahead of
        a selection; False says nothing (a group may still not fit).

        Parameters
        ----------
        free : list of float
            A machine's free room (a list: the compiled kernel reads a list's items
            directly, a sequence's through the generic item look-up).

        Returns
        -------
        bool

        Examples
        --------
        Two active groups, of <1, 4> and <2, 2>: room under one CPU or two of memory fits
        neither; <1, 2> is short of both groups' demands but of no floor.

        >>> from fairshare.cluster import Machine
        >>> from fairshare.workload.model import Job
        >>> cs = ClusterState(["cpu", "mem"], [Machine("m", np.array([4.0, 8.0]))])
        >>> cls = cs.class_of(Job("j", 0.0, "u", np.array([1.0, 4.0]), 1))
        >>> g, h = cs.group_of(cls, (1.0, 4.0)), cs.group_of(cls, (2.0, 2.0))
        >>> cs.group_active(g, True); cs.group_active(h, True)
        >>> cs.fits_none([0.5, 8.0]), cs.fits_none([1.0, 1.0]), cs.fits_none([1.0, 2.0])
        (True, True, False)
        """
        floor = self._floor
        if floor is None:
            floor = [math.inf] * len(self.resources)
            groups = self.groups
            for g in self.active:
                i = 0
                for d in groups[g].demand:
                    floor[i] = min(floor[i], d)
                    i += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
            self._floor = floor
        i = 0
        for d in floor:
            if free[i] + EPS < d:
                return True
            i += 1  # noqa: SIM113
        return False

    def _list(self, g: int, on: bool) -> None:
        """List group ``g`` in (or take it out of) ``afor`` of every machine it may use: once
        per profile of its class (its machines share the list)."""
        lists = self.profile_groups
        grp = self.groups[g]
        index = grp.index
        for p in self._profiles_of_class(grp.cls):
            listed = lists[p]
            if not on:
                # Found by bisection on the plain index (a list's remove() compared every
                # group before it through the generic comparison: with a trace's hundreds of
                # machine profiles, a twentieth of an hour of alibaba-2018).
                at = _group_position(listed, index)
                assert listed[at] is grp, "a listed group is in its profiles' lists"
                del listed[at]
            elif not listed or listed[-1].index < index:
                # A new group (the highest index yet), the usual case: last, with no search.
                listed.append(grp)
            else:
                listed.insert(_group_position(listed, index), grp)
        self.listed[g] = on

    def _profiles_of_class(self, cls: int) -> list[int]:
        """The profiles whose machines class ``cls`` may use (kept until profiles split)."""
        known = self._class_profiles[cls]
        if known is None:
            known = [
                p
                for p, machines in enumerate(self.profile_machines)
                if self.eligible(cls, machines[0])
            ]
            self._class_profiles[cls] = known
        return known

    def _join_profile(self, mi: int) -> None:
        """Put the new machine ``mi`` in the profile of its signature that every class read
        by name treats as it (a new profile, listing the listed groups it may run, if none)."""
        for p in self.sig_profiles[self.sig[mi]]:
            twin = self.profile_machines[p][0]
            if all(self.machine_ok[c][twin] == self.machine_ok[c][mi] for c in self._name_classes):
                break
        else:
            p = len(self.profile_machines)
            self.profile_machines.append([])
            self.profile_groups.append(
                [
                    grp
                    for g, grp in enumerate(self.groups)
                    if self.listed[g] and self.eligible(grp.cls, mi)
                ]
            )
            self.sig_profiles[self.sig[mi]].append(p)
            for c, known in enumerate(self._class_profiles):
                if known is not None and self.eligible(c, mi):
                    known.append(p)
        self.profile.append(p)
        self.profile_machines[p].append(mi)
        self.afor.append(self.profile_groups[p])

    def _split_profiles(self, c: int) -> None:
        """Class ``c``, read by name, is new: each profile with machines on both sides of it
        splits in two (the new one a copy of its list: the two agree on every older class)."""
        ok = self.machine_ok[c]
        for p in range(len(self.profile_machines)):
            machines = self.profile_machines[p]
            taken = [mi for mi in machines if ok[mi]]
            if not taken or len(taken) == len(machines):
                continue
            q = len(self.profile_machines)
            self.profile_machines[p] = [mi for mi in machines if not ok[mi]]
            self.profile_machines.append(taken)
            self.profile_groups.append(list(self.profile_groups[p]))
            self.sig_profiles[self.sig[taken[0]]].append(q)
            for mi in taken:
                self.profile[mi] = q
                self.afor[mi] = self.profile_groups[q]
        self._name_classes.append(c)
        self._class_profiles = [None] * len(self._class_profiles)

    def fits_some_bucket(self, need0: float, need1: float, demand: Demand) -> bool:
        """Whether some bucket's free vector fits a task of ``demand``, whose first two
        amounts are ``need0`` and ``need1`` (``-inf`` past its last resource), by
        :func:`fits_two` and :func:`fits`. Read off the machines' first two amounts, typed
        arrays of plain numbers (``room0``, ``room1``), not the buckets (a dictionary, whose
        iteration walks the holes its churn leaves, and whose keys' floats are objects): a
        quick exact answer for a job that fits nowhere, most arrivals on a full cluster.

        Examples
        --------
        >>> from fairshare.cluster import Machine
        >>> cs = ClusterState(["cpu", "mem"], [Machine("m", np.array([4.0, 8.0]))])
        >>> cs.rebucket(0)
        >>> cs.fits_some_bucket(4.0, 8.0, (4.0, 8.0)), cs.fits_some_bucket(4.5, 1.0, (4.5, 1.0))
        (True, False)
        """
        room0 = self.room0
        room1 = self.room1
        past_two = len(demand) > 2
        mi: i64 = 0
        for free0 in room0:
            if fits_two(free0, room1[mi], need0, need1):
                if not past_two:
                    return True
                free = self.free_of[mi]
                if free is not None and fits(free.amounts, demand):
                    return True
            mi += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
        return False

    def eligible(self, cls: int, mi: int) -> bool:
        """Whether tasks of constraint class ``cls`` may use machine ``mi``.

        Parameters
        ----------
        cls : int
            The constraint class.
        mi : int
            The machine's index.

        Returns
        -------
        bool
        """
        if self.by_name[cls]:
            return bool(self.machine_ok[cls][mi])
        return bool(self.sig_ok[cls][self.sig[mi]])

    def _matching_sigs(self, constraint: Constraint | None) -> bytearray:
        """Which signatures satisfy ``constraint`` (all when None)."""
        if constraint is not None and self._codes is None:
            self._codes = AttributeCodes(self.sig_machines)
        ok = eligibility.allowed(constraint, None, self.sig_machines, self._codes)
        return bytearray(ok.astype(np.uint8).tobytes())

    def _eligible_machine(self, cls: int, mi: int) -> bool:
        """Whether machine ``mi`` passes class ``cls``'s whitelist and constraint, evaluated
        on the machine itself (for classes read by name)."""
        return eligibility.allows(self._constraints[cls], self.classes[cls][1], self.machines[mi])


def _group_position(listed: list[Group], index: int) -> int:
    """Where the group of ``index`` is, or goes, in ``listed`` (a machine profile's groups,
    by index): the first position whose group's index is not below it (``bisect_left`` on
    the plain indices).

    Examples
    --------
    >>> listed = [Group(i, 0, (1.0,)) for i in (2, 5, 9)]
    >>> _group_position(listed, 5), _group_position(listed, 6), _group_position(listed, 1)
    (1, 2, 0)
    """
    lo = 0
    hi = len(listed)
    while lo < hi:
        mid = (lo + hi) >> 1
        if listed[mid].index < index:
            lo = mid + 1
        else:
            hi = mid
    return lo


def fits(free: Room, demand: Demand) -> bool:
    """Whether a task of ``demand`` fits in ``free`` room, within the fit tolerance
    (:data:`fairshare.tolerances.FIT`); :func:`fits_first_two` is its test of the first two
    resources on plain numbers.

    Parameters
    ----------
    free : sequence of float
        A machine's free room.
    demand : Demand
        The task's demand, in the same resource order.

    Returns
    -------
    bool

    Examples
    --------
    >>> fits([3.0, 6.0], (3.0, 6.0)), fits([3.0, 6.0], (3.0, 6.5))
    (True, False)
    """
    # A plain loop: this is the hottest test of the scheduler and all() over a generator
    # costs twice as much for two or three resources.
    i = 0
    for d in demand:
        if free[i] + EPS < d:
            return False
        i += 1  # noqa: SIM113 (enumerate allocates a tuple per step)
    return True


def fits_two(free0: float, free1: float, need0: float, need1: float) -> bool:
    """:func:`fits`'s test of the first two resources on plain numbers: room ``free0`` and
    ``free1`` against amounts ``need0`` and ``need1`` (``-inf`` past a demand's last
    resource). The one place that rule is written for the hot callers, which hold plain
    floats rather than sequences (a generic sequence read costs several times the test).

    Examples
    --------
    >>> fits_two(3.0, 6.0, 3.0, 6.5), fits_two(3.0, 6.5, 3.0, 6.5)
    (False, True)
    >>> fits_two(1.0, 0.0, 1.0, -math.inf)  # a one-resource demand
    True
    """
    return not (free0 + EPS < need0 or free1 + EPS < need1)


def key_fits(key: RoomKey, need0: float, need1: float, demand: Demand) -> bool:
    """:func:`fits` for a bucket's key and a demand whose first two amounts ``need0`` and
    ``need1`` the caller holds as plain numbers: :func:`fits_two` on the key's unboxed
    amounts, then :func:`fits` past two resources. An arriving job's test of the buckets and
    machines.

    Examples
    --------
    >>> from librt.vecs import vec
    >>> key = RoomKey(vec[float]([3.0, 6.0]))
    >>> key_fits(key, 3.0, 6.5, (3.0, 6.5)), key_fits(key, 3.0, 6.0, (3.0, 6.0))
    (False, True)
    >>> key_fits(RoomKey(vec[float]([3.0, 6.5, 1.0])), 3.0, 6.5, (3.0, 6.5, 2.0))  # past two
    False
    """
    width = len(demand)
    if width == 0:
        return True
    return fits_two(key.first, key.second, need0, need1) and (
        width <= 2 or fits(key.amounts, demand)
    )


def fits_first_two(free0: float, free1: float, grp: Group) -> bool:
    """:func:`fits`'s test of the first two resources, on a machine's room in them and a
    group's ``demand0``/``demand1`` (``-inf`` past its last resource): a selection's test
    of most groups on a full cluster, without reading the demand tuple.

    Examples
    --------
    >>> grp = Group(0, 0, (3.0, 6.5))
    >>> fits_first_two(3.0, 6.0, grp), fits_first_two(3.0, 6.5, grp)
    (False, True)
    """
    return fits_two(free0, free1, grp.demand0, grp.demand1)
