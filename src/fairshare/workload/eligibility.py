"""Machine types: machines coalesced by capacity and by which users may use them.

Choosy section 5.1 coalesces machines that have the same capacity and the same set of eligible
users into one variable, so that a solver's cost grows with machine types, not machines. This
module computes those types and the users x types eligibility matrix (the constraint graph of
Choosy section 3 on types), evaluating each distinct constraint once per machine signature.

A machine's signature is its capacity, rack and attributes: every constraint that does not read
``name`` treats two machines with the same signature alike. Users whose constraint reads
``name``, or who give a ``machines`` whitelist, are evaluated machine by machine; their answers
split signatures further.

This is the one eligibility model of fairshare: the exact solvers (through
:func:`machine_types`), the online policies' cluster state
(:class:`fairshare.policies.state.ClusterState`), Choosy's reference schedulers
(:class:`fairshare.sim.reference_state.ReferenceState`) and the simulator's fit checks
(:class:`TaskFit`) all ask :func:`class_key`, :func:`reads_names`, :func:`allows` /
:func:`allowed` and :func:`signature_key` here, and keep only the tables they build from the
answers.

:class:`TaskFit` answers where whole tasks fit: the slots of a job's isolated response (SPEC
section 3's slowdown denominator) and whether a job can ever run.

Examples
--------
Three GPU machines and two CPU machines; user ``c`` may use ``c-0`` only, which splits the
CPU machines into two types.

>>> from fairshare.workload import parse_scenario
>>> from fairshare.workload.eligibility import machine_types
>>> scenario = parse_scenario(
...     {
...         "machines": [
...             {"name": "g", "count": 3, "capacity": {"cpu": 8, "gpu": 2},
...              "attributes": {"gpu": True}},
...             {"name": "c", "count": 2, "capacity": {"cpu": 16, "gpu": 0}},
...         ],
...         "users": [
...             {"name": "a", "demand": {"cpu": 1, "gpu": 1}, "constraint": "gpu"},
...             {"name": "b", "demand": {"cpu": 4}},
...             {"name": "c", "demand": {"cpu": 1}, "machines": ["c-0"]},
...         ],
...     },
...     source="types",
... )
>>> types = machine_types(scenario)
>>> types.machine_type.tolist(), types.count.tolist()
([0, 0, 0, 1, 2], [3, 1, 1])
>>> types.eligible.tolist()
[[True, False, False], [True, True, True], [False, True, False]]
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fairshare.cluster import AttributeValue, BoolArray, FloatArray, Machine, attribute_signature
from fairshare.cluster.constraints import Constraint
from fairshare.workload.hierarchy import IntArray
from fairshare.workload.model import Job, Scenario


@dataclass(frozen=True)
class MachineTypes:
    """The machine types of a scenario and who may use them (Choosy section 5.1).

    Types are numbered in the order of their first machine in the scenario.

    Parameters
    ----------
    machine_type : IntArray
        ``machine_type[j]`` is machine j's type.
    capacity : FloatArray
        ``capacity[t]`` is one machine's capacity of type t (types x resources).
    count : IntArray
        ``count[t]`` is how many machines type t has.
    eligible : BoolArray
        ``eligible[i, t]`` is whether user i may run on type t (users x types).
    """

    machine_type: IntArray
    capacity: FloatArray
    count: IntArray
    eligible: BoolArray

    @property
    def total_capacity(self) -> FloatArray:
        """Each type's capacity summed over its machines (types x resources)."""
        return np.asarray(self.capacity * self.count[:, None], dtype=np.float64)

    def members(self, type_index: int) -> IntArray:
        """The machines of one type.

        Parameters
        ----------
        type_index : int
            A type.

        Returns
        -------
        IntArray
            Their indices, in scenario order.
        """
        return np.flatnonzero(self.machine_type == type_index)


ClassKey = tuple[str | None, frozenset[str] | None]
"""A constraint class: the constraint's text (None: any machine) and the whitelist (None: any
machine). Jobs and users with one key are eligible for the same machines."""


def class_key(constraint: Constraint | None, whitelist: frozenset[str] | None) -> ClassKey:
    """The constraint class of a constraint and a whitelist (Choosy section 5.1: users with
    the same constraint share their eligibility).

    Parameters
    ----------
    constraint : Constraint, optional
        None allows every machine.
    whitelist : frozenset of str, optional
        Machine names; None allows every machine.

    Returns
    -------
    ClassKey
        ``(constraint text, whitelist)``, hashable.

    Examples
    --------
    >>> from fairshare.cluster.constraints import parse_constraint
    >>> class_key(parse_constraint("gpu"), None)
    ('gpu', None)
    """
    return (constraint.source if constraint is not None else None, whitelist)


def reads_names(constraint: Constraint | None, whitelist: frozenset[str] | None) -> bool:
    """Whether a class's eligibility must be evaluated machine by machine.

    A whitelist, or a constraint that reads ``name``, tells apart machines of one signature
    (:func:`signature_key`); every other class treats a signature's machines alike, so it is
    evaluated once per signature (Choosy section 5.1).

    Parameters
    ----------
    constraint : Constraint, optional
        The class's constraint.
    whitelist : frozenset of str, optional
        The class's machine names.

    Returns
    -------
    bool

    Examples
    --------
    >>> from fairshare.cluster.constraints import parse_constraint
    >>> reads_names(parse_constraint("gpu"), None), reads_names(None, frozenset({"m1"}))
    (False, True)
    """
    return whitelist is not None or (constraint is not None and "name" in constraint.attributes())


def signature_key(machine: Machine) -> tuple[object, ...]:
    """A machine's signature: its capacity, rack and attributes (types told apart).

    Machines of one signature are alike for every class that does not read names
    (:func:`reads_names`): Choosy section 5.1 coalesces them, and the online policies look a
    class's eligibility up per signature.

    Parameters
    ----------
    machine : Machine
        The machine.

    Returns
    -------
    tuple
        A hashable key; equal for machines that differ in name only.
    """
    return (machine.capacity.tobytes(), machine.rack, attribute_signature(machine.attributes))


def allows(
    constraint: Constraint | None, whitelist: frozenset[str] | None, machine: Machine
) -> bool:
    """Whether a class's whitelist and constraint both let its tasks use ``machine`` (the
    constraint graph's edge, Choosy section 3).

    Parameters
    ----------
    constraint : Constraint, optional
        None allows every machine.
    whitelist : frozenset of str, optional
        Machine names; None allows every machine.
    machine : Machine
        The machine.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.cluster import Machine
    >>> from fairshare.cluster.constraints import parse_constraint
    >>> gpu = Machine("g", np.ones(1), attributes={"gpu": True})
    >>> allows(parse_constraint("gpu"), None, gpu), allows(None, frozenset({"c"}), gpu)
    (True, False)
    """
    return (whitelist is None or machine.name in whitelist) and (
        constraint is None or constraint.matches(machine)
    )


def allowed(
    constraint: Constraint | None,
    whitelist: frozenset[str] | None,
    machines: Sequence[Machine],
    codes: AttributeCodes | None = None,
) -> BoolArray:
    """:func:`allows` for each of ``machines`` (one row of the constraint graph, Choosy
    section 3).

    Parameters
    ----------
    constraint : Constraint, optional
        None allows every machine.
    whitelist : frozenset of str, optional
        Machine names; None allows every machine.
    machines : Sequence of Machine
        The machines.
    codes : AttributeCodes, optional
        The attribute codes of exactly ``machines``: a constraint that does not read ``name``
        is then evaluated once per combination of the attributes it reads, not per machine.

    Returns
    -------
    BoolArray
        One entry per machine.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.cluster import Machine
    >>> from fairshare.cluster.constraints import parse_constraint
    >>> machines = [Machine(f"m{i}", np.ones(1), attributes={"gpu": i > 0}) for i in range(3)]
    >>> allowed(parse_constraint("gpu"), frozenset({"m0", "m1"}), machines).tolist()
    [False, True, False]
    """
    if constraint is None:
        ok = np.ones(len(machines), dtype=np.bool_)
    elif codes is None or "name" in constraint.attributes():
        ok = np.asarray(constraint.mask(machines), dtype=np.bool_)
    else:
        ok = codes.mask(constraint)
    if whitelist is not None:
        ok &= np.fromiter((m.name in whitelist for m in machines), dtype=np.bool_, count=len(ok))
    return ok


class AttributeCodes:
    """The machines' attribute values (and racks) as small integer codes.

    A constraint is then evaluated once per distinct combination of the attributes it reads
    (:meth:`~fairshare.cluster.constraints.Constraint.attributes`)
    rather than once per machine: a Google-like constraint reads one to three boolean
    attributes, at most eight combinations among hundreds of signatures. Values are coded with
    their type, so ``1`` and ``true`` stay apart.

    Parameters
    ----------
    sample : list of Machine
        The machines to code (one per signature, or every machine).
    """

    def __init__(self, sample: list[Machine]) -> None:
        self.sample = sample
        names = sorted({name for machine in sample for name in machine.attributes} | {"rack"})
        self.column = {name: k for k, name in enumerate(names)}
        self.codes = np.zeros((len(sample), len(names)), dtype=np.int64)
        for k, name in enumerate(names):
            seen: dict[tuple[type, object], int] = {}
            for j, machine in enumerate(sample):
                if name == "rack":
                    value: object = machine.rack
                elif name in machine.attributes:
                    value = machine.attributes[name]
                else:
                    continue  # code 0: absent
                self.codes[j, k] = seen.setdefault((type(value), value), len(seen) + 1)
        self.radix = self.codes.max(axis=0, initial=0) + 1

    def mask(self, constraint: Constraint) -> BoolArray:
        """``constraint.mask(sample)``, evaluating one machine per combination of codes.

        Parameters
        ----------
        constraint : Constraint
            The constraint to evaluate.

        Returns
        -------
        BoolArray
            Per machine of the sample, whether it satisfies the constraint.
        """
        read = [self.column[name] for name in constraint.attributes() if name in self.column]
        if not read:
            verdict = constraint.matches(self.sample[0]) if self.sample else False
            return np.full(len(self.sample), verdict, dtype=np.bool_)
        codes = self.codes[:, read]
        radix = self.radix[read]
        if float(np.prod(radix.astype(np.float64))) < 2.0**62:
            # one integer per combination: a 1-d unique is much cheaper than unique rows
            place = np.concatenate(([1], np.cumprod(radix[:-1]))).astype(np.int64)
            _, first, group = np.unique(codes @ place, return_index=True, return_inverse=True)
        else:
            _, first, group = np.unique(codes, axis=0, return_index=True, return_inverse=True)
        verdicts = constraint.mask([self.sample[j] for j in first])
        return np.asarray(verdicts[group.ravel()], dtype=np.bool_)


def _attributes_differ(a: Mapping[str, AttributeValue], b: Mapping[str, AttributeValue]) -> bool:
    """Whether two machines' attributes differ for the constraint language (``true`` and
    ``1`` do; Python's ``==`` says they do not)."""
    return a is not b and (a != b or attribute_signature(a) != attribute_signature(b))


def machine_types(scenario: Scenario) -> MachineTypes:
    """Coalesce ``scenario``'s machines into types (Choosy section 5.1).

    Parameters
    ----------
    scenario : Scenario
        Its machines, and its users' constraints and whitelists.

    Returns
    -------
    MachineTypes
        Types of equal capacity, rack and attributes that the same users may use.
    """
    machines = scenario.cluster.machines
    # The loader expands `count: N` into consecutive machines sharing one capacity array and
    # equal attributes: only a machine that differs from the previous one needs a key, and
    # the comparisons run in C (map over operator functions), not in a Python loop.
    capacities = [machine.capacity for machine in machines]
    racks = [machine.rack for machine in machines]
    attributes = [machine.attributes for machine in machines]
    changed = np.ones(len(machines), dtype=np.bool_)
    if len(machines) > 1:
        changed[1:] = (
            np.fromiter(map(operator.is_not, capacities[1:], capacities[:-1]), np.bool_)
            | np.fromiter(map(operator.ne, racks[1:], racks[:-1]), np.bool_)
            | np.fromiter(map(_attributes_differ, attributes[1:], attributes[:-1]), np.bool_)
        )
    signature_of: dict[tuple[object, ...], int] = {}
    representatives: list[int] = []
    starts = np.flatnonzero(changed)
    run_signature = np.empty(len(starts), dtype=np.int64)
    for run, j in enumerate(starts.tolist()):
        key = signature_key(machines[j])
        found = signature_of.get(key)
        if found is None:
            found = signature_of[key] = len(representatives)
            representatives.append(j)
        run_signature[run] = found
    signature = run_signature[np.cumsum(changed) - 1]

    users = scenario.users
    by_signature = np.ones((len(users), len(representatives)), dtype=np.bool_)
    cache: dict[str, BoolArray] = {}
    sample = [machines[j] for j in representatives]
    codes = AttributeCodes(sample)
    per_machine_users = [i for i, u in enumerate(users) if reads_names(u.constraint, u.machines)]
    for i, user in enumerate(users):
        if user.constraint is not None and not reads_names(user.constraint, user.machines):
            mask = cache.get(user.constraint.source)
            if mask is None:
                mask = cache[user.constraint.source] = allowed(user.constraint, None, sample, codes)
            by_signature[i] = mask

    if not per_machine_users:
        machine_type = signature
        eligible = by_signature
    else:
        patterns = np.ones((len(per_machine_users), len(machines)), dtype=np.bool_)
        for row, i in enumerate(per_machine_users):
            patterns[row] = allowed(users[i].constraint, users[i].machines, machines)
        keys = np.vstack([signature[None, :], patterns]).T
        _, first, machine_type = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        # np.unique sorts keys; renumber types by their first machine to keep scenario order.
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        machine_type = rank[machine_type.ravel()]
        first = first[order]
        eligible = by_signature[:, signature[first]]
        eligible[per_machine_users] = patterns[:, first]
        representatives = list(first)

    capacity = np.asarray(scenario.cluster.capacities[representatives], dtype=np.float64)
    count = np.bincount(machine_type, minlength=len(representatives)).astype(np.int64)
    return MachineTypes(
        machine_type=np.asarray(machine_type, dtype=np.int64),
        capacity=capacity.reshape(len(representatives), len(scenario.cluster.resources)),
        count=count,
        eligible=eligible,
    )


def coalesce(eligible: BoolArray, capacity: FloatArray, digits: int = 9) -> MachineTypes:
    """Coalesce machines by who may use them and their capacity (Choosy section 5.1), from an
    eligibility table a caller already has.

    :func:`machine_types` coalesces a scenario's machines by signature and keeps apart machines
    that differ in attributes no user asks about; this groups only what a solver can tell
    apart: the same users eligible (``eligible``'s column) and the same capacity, rounded to
    ``digits`` decimals. The reference schedulers use it on the machines and units of one
    decision.

    Parameters
    ----------
    eligible : BoolArray
        ``eligible[i, j]`` is whether user i may use machine j (users x machines).
    capacity : FloatArray
        One row per machine (machines x resources).
    digits : int
        Decimals capacities are compared at.

    Returns
    -------
    MachineTypes
        Types numbered in the order of their first machine (so a solver's tie-breaks, in type
        order, follow machine order as they would uncoalesced); each type's capacity is its
        first machine's.

    Examples
    --------
    >>> import numpy as np
    >>> types = coalesce(
    ...     np.array([[True, True, False], [True, True, True]]), np.array([[2.0], [2.0], [2.0]])
    ... )
    >>> types.machine_type.tolist(), types.count.tolist(), types.eligible.tolist()
    ([0, 0, 1], [2, 1], [[True, False], [True, True]])
    """
    n_machines = len(capacity)
    keys = np.concatenate(
        (
            np.packbits(eligible, axis=0).T,
            np.ascontiguousarray(np.round(capacity, digits)).view(np.uint8).reshape(n_machines, -1),
        ),
        axis=1,
    )
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(first))
    machine_type = rank[inverse.reshape(-1)]
    firsts = first[order]
    return MachineTypes(
        machine_type=machine_type,
        capacity=np.asarray(capacity[firsts], dtype=np.float64),
        count=np.bincount(machine_type, minlength=len(firsts)).astype(np.int64),
        eligible=np.asarray(eligible[:, firsts], dtype=np.bool_),
    )


MATCHES_NO_MACHINE = "its constraint matches no machine"
"""Why a user or job whose constraint and whitelist allow no machine gets nothing: the one
wording of ``solve``'s warning and of ``simulate``'s.
"""


class TaskFit:
    """Where whole tasks fit on a set of machines.

    The machines a constraint and whitelist allow, and how many tasks of a demand those
    machines hold at once (the slots of the isolated response, SPEC section 3's slowdown
    denominator). A job none of whose tasks fits on any machine it may use can never run:
    :meth:`never_runs` says why. The simulator asks it for slots and ``simulate`` asks it before
    the run, so both answer the same question the same way. Answers are cached per
    (constraint, whitelist, demand): traces repeat a few of them across thousands of jobs.

    Parameters
    ----------
    machines : Sequence of Machine
        The machines tasks may be placed on.
    resources : Sequence of str
        The cluster's resources, in the order of the demand vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.cluster import Machine
    >>> from fairshare.workload.eligibility import TaskFit
    >>> fit = TaskFit(
    ...     [Machine("g", np.array([8.0, 2.0]), attributes={"gpu": True}),
    ...      Machine("c", np.array([16.0, 0.0]))],
    ...     ["cpu", "gpu"],
    ... )
    >>> fit.slots(None, None, np.array([4.0, 0.0]))  # 2 on g, 4 on c
    6
    """

    def __init__(self, machines: Sequence[Machine], resources: Sequence[str]) -> None:
        self.machines = list(machines)
        self.resources = tuple(resources)
        self.codes = AttributeCodes(self.machines)
        self.capacity = np.array([m.capacity for m in self.machines], dtype=np.float64).reshape(
            len(self.machines), len(self.resources)
        )
        self._allowed: dict[ClassKey, BoolArray] = {}
        self._slots: dict[tuple[object, ...], int] = {}

    def allowed(self, constraint: Constraint | None, whitelist: frozenset[str] | None) -> BoolArray:
        """Which machines the constraint and the whitelist both allow.

        Parameters
        ----------
        constraint : Constraint, optional
            None allows every machine.
        whitelist : frozenset of str, optional
            Machine names; None allows every machine.

        Returns
        -------
        BoolArray
            One entry per machine.
        """
        key = class_key(constraint, whitelist)
        ok = self._allowed.get(key)
        if ok is None:
            ok = self._allowed[key] = allowed(constraint, whitelist, self.machines, self.codes)
        return ok

    def slots(
        self, constraint: Constraint | None, whitelist: frozenset[str] | None, demand: FloatArray
    ) -> int:
        """How many whole tasks of ``demand`` the allowed machines hold together.

        Parameters
        ----------
        constraint : Constraint, optional
            The tasks' constraint.
        whitelist : frozenset of str, optional
            The tasks' machine whitelist.
        demand : FloatArray
            One task's demand vector.

        Returns
        -------
        int
            0 when none fits anywhere; a demand of nothing fits once on every allowed machine,
            without bound (``2**30``).
        """
        key = (constraint.source if constraint is not None else None, whitelist, demand.tobytes())
        slots = self._slots.get(key)
        if slots is None:
            capacity = self.capacity[self.allowed(constraint, whitelist)]
            used = demand > 0
            if not used.any():
                slots = 0 if len(capacity) == 0 else 1 << 30
            else:
                # 1e-9: a machine of capacity 0.3 holds three tasks of 0.1 despite rounding
                per = np.floor((capacity[:, used] + 1e-9) / demand[used]).min(axis=1)
                slots = int(per.sum())
            self._slots[key] = slots
        return slots

    def never_runs(self, job: Job) -> str | None:
        """Why ``job`` can never run on these machines, if it cannot.

        Parameters
        ----------
        job : Job
            The job; its map and reduce demands are checked.

        Returns
        -------
        str or None
            The reason (its constraint matches no machine, no machine it may use holds one of
            its map or reduce tasks, or, for a gang, those machines together hold fewer than
            its ``min_tasks``), or None when it can run.

        Examples
        --------
        >>> import numpy as np
        >>> from fairshare.cluster import Machine
        >>> from fairshare.workload.eligibility import TaskFit
        >>> from fairshare.workload.model import FixedDuration, Job
        >>> fit = TaskFit([Machine("m", np.array([8.0, 2.0]))], ["cpu", "gpu"])
        >>> job = Job("j", 0.0, "u", np.array([1.0, 3.0]), tasks=2, duration=FixedDuration(10.0))
        >>> fit.never_runs(job)
        'its task demand (cpu 1, gpu 3) fits on no machine'
        """
        demands = [job.demand] if job.tasks else []
        if job.reduce is not None and job.reduce.tasks:
            demands.append(job.demand if job.reduce.demand is None else job.reduce.demand)
        if not demands:
            return None
        constrained = job.constraint is not None or job.machines is not None
        if constrained and not self.allowed(job.constraint, job.machines).any():
            return MATCHES_NO_MACHINE
        if job.min_tasks is not None and job.tasks:
            slots = self.slots(job.constraint, job.machines, job.demand)
            if 0 < slots < job.min_tasks:
                where = "its constraint allows" if constrained else "it may use"
                return (
                    f"its gang of {job.min_tasks} tasks never fits at once: the machines "
                    f"{where} hold {slots} of its tasks"
                )
        for demand in demands:
            if self.slots(job.constraint, job.machines, demand) == 0:
                wanted = ", ".join(
                    f"{name} {amount:g}"
                    for name, amount in zip(self.resources, demand.tolist(), strict=True)
                    if amount > 0
                )
                if constrained:
                    return f"its task demand ({wanted}) fits on no machine its constraint allows"
                return f"its task demand ({wanted}) fits on no machine"
        return None
