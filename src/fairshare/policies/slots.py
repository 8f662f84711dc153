"""The slot-based fair scheduler: the comparator of DRF section 7 and H-DRF section 5.3
(Hadoop's fair scheduler and Mesos' slot mode).

Every machine is split into a fixed number of slots (``PolicyOptions.slots`` per machine;
by default one slot per unit of the machine's ``cpu``, else of its ``slots`` resource, else
of its first resource, and at least one). A task takes one slot whatever its demand, and
slots are shared max-min fairly: users by running tasks over weight, and, with a queue
hierarchy, siblings by the tasks their subtrees run ("equalizing the number of tasks
allocated to any pair of sibling nodes", H-DRF section 5.3). That is naive H-DRF (section
3.3) over the one resource ``slots``, which on a single resource is hierarchical max-min.

The scheduler never looks at a task's demand, so the tasks on a machine may demand more than
it has: this is the over-commit the papers measure ("assigning a task to a slot without
enforcing that the task's resource requirements be lesser than the slot size, can lead to
under or over-subscription of server resources", H-DRF section 5.3; DRF section 2's Figure 2).
The simulator models what over-commit costs (:attr:`Slots.overcommits`; see
:mod:`fairshare.sim.overcommit`). Queue quotas (in resource units, which slots do not have)
are ignored; weights, user caps and queue ``max_share`` (in tasks) apply. A slot does not
make a resource a machine lacks: a job whose tasks demand a resource some machines have none
of (GPUs on part of the cluster) may use only the machines that have it, as they were when
it arrived.

Examples
--------
Two machines of <4 CPUs, 6 GB> with 5 slots each, users A (<1 CPU, 1.5 GB> tasks) and B
(<1 CPU, 1 GB>): each gets 5 slots, and the CPUs and memory of a machine may be
over-committed (5 tasks on 4 CPUs).

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import PolicyOptions, make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(
...     ["cpu", "mem"], [Machine(f"s{i}", np.array([4.0, 6.0])) for i in range(2)]
... )
>>> slots = make_policy("slots", cluster, options=PolicyOptions(slots=5))
>>> slots.job_submitted(0.0, 0, Job("a", 0.0, "A", np.array([1.0, 1.5]), 20))
>>> slots.job_submitted(0.0, 1, Job("b", 0.0, "B", np.array([1.0, 1.0]), 20))
>>> launched = slots.decide(0.0)
>>> [user.running for user in slots.users], slots.cluster.resources
([5, 5], ('slots',))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster, Machine
from fairshare.policies.hdrf import hierarchical
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import TaskRef
from fairshare.policies.scheduler import Scheduler
from fairshare.workload.model import Job, Queue, User

__all__ = ["SLOT_RESOURCE", "Slots", "slot_count"]

SLOT_RESOURCE = "slots"
"""The one resource the slot scheduler allocates."""

_ONE = np.ones(1)
"""A task's demand in slots (read-only)."""
_ONE.setflags(write=False)


def slot_count(resources: Sequence[str], machine: Machine, slots: int | None) -> int:
    """The slots of ``machine``: ``slots`` when given, else one per unit of its ``cpu``
    (else ``slots``, else first) resource, rounded down, at least one.

    Parameters
    ----------
    resources : sequence of str
        The cluster's resource names, in the order of ``machine.capacity``.
    machine : Machine
        The machine.
    slots : int, optional
        Slots per machine (``PolicyOptions.slots``).

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.cluster import Machine
    >>> m = Machine("m", np.array([16.0, 4.5]))
    >>> slot_count(["mem", "cpu"], m, None), slot_count(["mem", "cpu"], m, 6)
    (4, 6)
    """
    if slots is not None:
        return slots
    names = list(resources)
    r = names.index("cpu") if "cpu" in names else names.index("slots") if "slots" in names else 0
    units = float(machine.capacity[r]) if names else 1.0
    return max(1, math.floor(units + 1e-9))


@mypyc_attr(allow_interpreted_subclasses=True)
class Slots(Scheduler):
    """Hierarchical max-min fairness on slots (module docstring).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start (their capacities give their slot counts).
    users : sequence of User
        The configured users (weights, caps, queues), in scenario order (the order of ties).
    queues : sequence of Queue
        The queue hierarchy; siblings share by running tasks (quotas ignored).
    options : PolicyOptions, optional
        ``slots`` per machine, and the mechanisms every policy has (delay scheduling,
        preemption, reducer slow-start, copy-compute splitting).

    Attributes
    ----------
    overcommits : bool
        True: the tasks it places on a machine may demand more than the machine has, so
        a driver that models contention (the simulator) slows them down.
    """

    name = "slots"
    overcommits: ClassVar[bool] = True

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        self._slots = options.slots if options is not None else None
        self._real_resources = cluster.resources
        # The machines' real capacities, by name: which resources each has.
        self._has: dict[str, tuple[bool, ...]] = {
            m.name: tuple(c > 0 for c in m.capacity.tolist()) for m in cluster.machines
        }
        ranking, selection = hierarchical(queues, dynamic=False)
        super().__init__(
            Cluster.build([SLOT_RESOURCE], [self._slot_machine(m) for m in cluster.machines]),
            users=[dataclasses.replace(u, demand=_ONE) for u in users],
            queues=[
                dataclasses.replace(q, quota=None, borrowing_limit=None, lending_limit=None)
                for q in queues
            ],
            options=options,
            ranking=ranking,
            selection=selection,
        )

    def _slot_machine(self, machine: Machine) -> Machine:
        """``machine`` with its slot count as its only capacity."""
        count = float(slot_count(self._real_resources, machine, self._slots))
        return dataclasses.replace(machine, capacity=np.array([count]))

    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        """A job arrives; each of its tasks (maps and reducers) asks for one slot.

        Parameters
        ----------
        now : float
            The time of the arrival.
        job_id : int
            The driver's id for the job.
        job : Job
            The job (its demand is the driver's business: slots ignore it).
        blocks : sequence of sequence of str, optional
            Per map task, the machines holding its input block.
        """
        reduce = job.reduce
        if reduce is not None and reduce.demand is not None:
            reduce = dataclasses.replace(reduce, demand=_ONE)
        wants = [r for r, d in enumerate(job.demand.tolist()) if d > 0]
        if job.reduce is not None and job.reduce.demand is not None:
            wants += [r for r, d in enumerate(job.reduce.demand.tolist()) if d > 0]
        machines = job.machines
        if any(not all(has[r] for r in wants) for has in self._has.values()):
            able = frozenset(n for n, has in self._has.items() if all(has[r] for r in wants))
            machines = able if machines is None else machines & able
        slotted = dataclasses.replace(job, demand=_ONE, reduce=reduce, machines=machines)
        super().job_submitted(now, job_id, slotted, blocks)

    def machine_added(self, now: float, machine: Machine) -> None:
        """A machine joins with its slots.

        Parameters
        ----------
        now : float
            The time it joins.
        machine : Machine
            The machine (its capacities give its slot count).
        """
        self._has[machine.name] = tuple(c > 0 for c in machine.capacity.tolist())
        super().machine_added(now, self._slot_machine(machine))

    def machine_removed(self, now: float, name: str) -> list[TaskRef]:
        """A machine leaves; its tasks are lost and pending again.

        Parameters
        ----------
        now : float
            The time it leaves.
        name : str
            Its name.

        Returns
        -------
        list of TaskRef
            The tasks that ran on it.
        """
        self._has.pop(name, None)
        return super().machine_removed(now, name)
