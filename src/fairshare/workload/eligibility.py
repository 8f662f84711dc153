"""Machine types: machines coalesced by capacity and by which users may use them.

Choosy section 5.1 coalesces machines that have the same capacity and the same set of eligible
users into one variable, so that a solver's cost grows with machine types, not machines. This
module computes those types and the users x types eligibility matrix (the constraint graph of
Choosy section 3 on types), evaluating each distinct constraint once per machine signature.

A machine's signature is its capacity, rack and attributes: every constraint that does not read
``name`` treats two machines with the same signature alike. Users whose constraint reads
``name``, or who give a ``machines`` whitelist, are evaluated machine by machine; their answers
split signatures further.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairshare.cluster import BoolArray, FloatArray
from fairshare.workload.hierarchy import IntArray
from fairshare.workload.model import Scenario, User


@dataclass(frozen=True)
class MachineTypes:
    """``machine_type[j]`` is machine j's type; ``capacity[t]`` one machine's capacity of type
    t; ``count[t]`` how many machines it has; ``eligible[i, t]`` whether user i may run on it.
    Types are numbered in the order of their first machine in the scenario."""

    machine_type: IntArray
    capacity: FloatArray
    count: IntArray
    eligible: BoolArray

    @property
    def total_capacity(self) -> FloatArray:
        """Each type's capacity summed over its machines (types x resources)."""
        return np.asarray(self.capacity * self.count[:, None], dtype=np.float64)

    def members(self, type_index: int) -> IntArray:
        return np.flatnonzero(self.machine_type == type_index)


def _by_machine(user: User) -> bool:
    return user.machines is not None or (
        user.constraint is not None and "name" in user.constraint.attributes()
    )


def machine_types(scenario: Scenario) -> MachineTypes:
    """Coalesce ``scenario``'s machines into types (Choosy section 5.1)."""
    machines = scenario.cluster.machines
    signature_of: dict[tuple[object, ...], int] = {}
    signature = np.empty(len(machines), dtype=np.int64)
    representatives: list[int] = []
    for j, machine in enumerate(machines):
        key = (
            machine.capacity.tobytes(),
            machine.rack,
            tuple(sorted(machine.attributes.items(), key=lambda item: item[0])),
        )
        index = signature_of.get(key)
        if index is None:
            index = signature_of[key] = len(representatives)
            representatives.append(j)
        signature[j] = index

    users = scenario.users
    by_signature = np.ones((len(users), len(representatives)), dtype=np.bool_)
    cache: dict[str, BoolArray] = {}
    sample = [machines[j] for j in representatives]
    per_machine_users = [i for i, u in enumerate(users) if _by_machine(u)]
    for i, user in enumerate(users):
        if user.constraint is not None and not _by_machine(user):
            mask = cache.get(user.constraint.source)
            if mask is None:
                mask = cache[user.constraint.source] = user.constraint.mask(sample)
            by_signature[i] = mask

    if not per_machine_users:
        machine_type = signature
        eligible = by_signature
    else:
        names = [m.name for m in machines]
        patterns = np.ones((len(per_machine_users), len(machines)), dtype=np.bool_)
        for row, i in enumerate(per_machine_users):
            user = users[i]
            if user.constraint is not None:
                patterns[row] = user.constraint.mask(machines)
            if user.machines is not None:
                patterns[row] &= np.fromiter((n in user.machines for n in names), dtype=np.bool_)
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
