"""Copy-compute splitting with Compute Phase Admission Control, CPAC (FAIR section 5.2).

A reducer is two tasks on one machine: a *copy* part, which fetches map outputs (network IO,
no resource of the demand vector: it holds a reducer slot, not CPU), and a *compute* part,
which applies the reduce function with the reduce phase's demand. The scheduler's policy
chooses which job's copy part a machine runs, like any task; this module is the machine's
admission control, FAIR's two limits per slave:

- ``max_reducers`` reducers (copying, waiting to compute or computing) at a time;
- ``max_computing`` compute parts at a time, and each job at most ``max_computing`` copy
  parts ("each job can also only have maxComputing reduces performing copies on each
  node"), or fewer when fewer of its compute parts fit on the machine at all (the paper sets
  maxComputing to the node's reduce slots; here the capacity decides where it is smaller).

A reducer that has finished copying asks its machine for permission to compute; the machine
admits waiting reducers in the order they asked, each when a compute slot is free and its
demand fits in the machine's free room (FAIR's "the slave limits the number of reducers
computing at any time"). The paper's defaults, for a dual-core machine with two reduce slots
in unmodified Hadoop, are 6 reducers of which 2 compute (``DEFAULT_MAX_REDUCERS``,
``DEFAULT_MAX_COMPUTING``).

Examples
--------
One machine admitting 3 reducers, 1 of them computing: a job copies on it at most one
reducer at a time (``max_computing``), and a reducer done copying waits for the compute
slot.

>>> from fairshare.policies import TaskRef
>>> cpac = CopyComputeAdmission(max_reducers=3, max_computing=1)
>>> cpac.may_copy(0, 0, compute_slots=2)
True
>>> cpac.copy_started(0, 0)
>>> cpac.may_copy(0, 0, compute_slots=2), cpac.may_copy(1, 0, compute_slots=2)
(False, True)
>>> cpac.copy_stopped(0, 0, finished=True)
>>> cpac.wait(TaskRef(0, "reduce", 0), 0)
>>> cpac.may_compute(0)
True
>>> cpac.compute_started(0)
>>> cpac.may_compute(0), cpac.reducers
(False, {0: 1})
"""

from __future__ import annotations

from collections import deque

from fairshare.policies.protocol import TaskRef

DEFAULT_MAX_REDUCERS = 6
"""FAIR section 5.2's example: a dual-core machine "might allow 6 simultaneous reducers"."""
DEFAULT_MAX_COMPUTING = 2
"""... "but only let 2 of them to be computing at each time" (its reduce slots)."""


class CopyComputeAdmission:
    """Per-machine reducer counts and the queue of reducers waiting to compute.

    Machines are named by their index in the scheduler's cluster state.

    Parameters
    ----------
    max_reducers : int
        Reducers a machine holds at a time (copying, waiting to compute or computing).
    max_computing : int
        Compute parts a machine runs at a time, and copy parts of one job on it.

    Attributes
    ----------
    reducers, computing : dict of int to int
        Per machine, its reducers and its compute parts (absent: none).
    waiting : dict of int to deque of TaskRef
        Per machine, the reducers done copying there, in the order they asked to compute.
    """

    __slots__ = ("computing", "copying", "max_computing", "max_reducers", "reducers", "waiting")

    def __init__(self, max_reducers: int, max_computing: int) -> None:
        self.max_reducers = max_reducers
        self.max_computing = max_computing
        self.reducers: dict[int, int] = {}
        self.computing: dict[int, int] = {}
        # (job id, machine) -> copy parts of the job running there.
        self.copying: dict[tuple[int, int], int] = {}
        # machine -> reducers done copying, in the order they asked to compute.
        self.waiting: dict[int, deque[TaskRef]] = {}

    def may_copy(self, job: int, mi: int, compute_slots: int) -> bool:
        """Whether machine ``mi`` admits one more copy part of ``job``; ``compute_slots`` is
        how many of the job's compute parts fit on the machine's capacity.

        Parameters
        ----------
        job : int
            The job's id.
        mi : int
            The machine.
        compute_slots : int
            How many of the job's compute parts fit on the machine's capacity.

        Returns
        -------
        bool
        """
        if self.reducers.get(mi, 0) >= self.max_reducers:
            return False
        return self.copying.get((job, mi), 0) < min(self.max_computing, compute_slots)

    def copy_started(self, job: int, mi: int) -> None:
        """A copy part of ``job`` started on machine ``mi``: a reducer holds a slot there.

        Parameters
        ----------
        job : int
            The job's id.
        mi : int
            The machine.
        """
        self.reducers[mi] = self.reducers.get(mi, 0) + 1
        self.copying[(job, mi)] = self.copying.get((job, mi), 0) + 1

    def copy_stopped(self, job: int, mi: int, *, finished: bool) -> None:
        """A copy part ended: finished (the reducer now waits to compute, keeping its
        reducer slot) or lost (killed, or its machine left: the reducer is gone).

        Parameters
        ----------
        job : int
            The job's id.
        mi : int
            The machine.
        finished : bool
            Whether it finished (else it was lost).
        """
        left = self.copying[(job, mi)] - 1
        if left:
            self.copying[(job, mi)] = left
        else:
            del self.copying[(job, mi)]
        if not finished:
            self._drop(mi)

    def wait(self, ref: TaskRef, mi: int) -> None:
        """Reducer ``ref`` (its compute part) asks machine ``mi`` for permission to compute.

        Parameters
        ----------
        ref : TaskRef
            The compute part (phase ``"reduce"``).
        mi : int
            The machine it copied to.
        """
        self.waiting.setdefault(mi, deque()).append(ref)

    def may_compute(self, mi: int) -> bool:
        """Whether machine ``mi`` has a compute slot free.

        Parameters
        ----------
        mi : int
            The machine.

        Returns
        -------
        bool
        """
        return self.computing.get(mi, 0) < self.max_computing

    def compute_started(self, mi: int) -> None:
        """A compute part started on machine ``mi``.

        Parameters
        ----------
        mi : int
            The machine.
        """
        self.computing[mi] = self.computing.get(mi, 0) + 1

    def compute_stopped(self, mi: int) -> None:
        """A compute part finished or was lost: its reducer leaves the machine.

        Parameters
        ----------
        mi : int
            The machine.
        """
        left = self.computing[mi] - 1
        if left:
            self.computing[mi] = left
        else:
            del self.computing[mi]
        self._drop(mi)

    def forget_machine(self, mi: int) -> list[TaskRef]:
        """Machine ``mi`` left: the reducers waiting there to compute (their copied data is
        gone with it); the caller re-queues them, with the running parts it lost.

        Parameters
        ----------
        mi : int
            The machine.

        Returns
        -------
        list of TaskRef
            The compute parts that waited there, in the order they asked.
        """
        lost = list(self.waiting.pop(mi, ()))
        self.reducers.pop(mi, None)
        self.computing.pop(mi, None)
        for key in [k for k in self.copying if k[1] == mi]:
            del self.copying[key]
        return lost

    def forget_job(self, job: int) -> None:
        """Job ``job`` left (cancelled): its reducers waiting to compute leave their
        machines (their running parts were stopped one by one before).

        Parameters
        ----------
        job : int
            The job's id.
        """
        for mi in list(self.waiting):
            queue = self.waiting[mi]
            kept = deque(ref for ref in queue if ref.job != job)
            for _ in range(len(queue) - len(kept)):
                self._drop(mi)
            if kept:
                self.waiting[mi] = kept
            else:
                del self.waiting[mi]

    def _drop(self, mi: int) -> None:
        """A reducer leaves machine ``mi``: its slot is free."""
        left = self.reducers[mi] - 1
        if left:
            self.reducers[mi] = left
        else:
            del self.reducers[mi]
