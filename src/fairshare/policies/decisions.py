r"""The protocol's records: :class:`TaskRef`, the name of a task, and :class:`Launch`, what
``decide`` returns to start one (:mod:`fairshare.policies.protocol`).

Compiled records, not NamedTuples: a policy makes one of each per task it launches, and a
NamedTuple is built through ``tuple.__new__`` (an argument tuple, a call through the generic
protocol, a copy into the subclass) and freed as a tuple subclass, about a tenth of a large
replay's event loop for the two per launch. The records keep what callers read of the
NamedTuples: the fields by name, equality and hashing by value (a record equals the plain
tuple of its fields and hashes as it does, so either finds the other in a dictionary),
ordering (a ``TaskRef`` sorts as its tuple), unpacking, indexing, ``len``, the ``repr``,
and pickling. They are not ``tuple``\ s (``isinstance(ref, tuple)`` is False) and have no
``_replace``.

Examples
--------
>>> ref = TaskRef(0, "map", 3)
>>> ref, ref.task, ref == (0, "map", 3), hash(ref) == hash((0, "map", 3))
(TaskRef(job=0, phase='map', task=3), 3, True, True)
>>> sorted([TaskRef(1, "map", 2), TaskRef(0, "reduce", 0), TaskRef(1, "map", 0)])[:2]
[TaskRef(job=0, phase='reduce', task=0), TaskRef(job=1, phase='map', task=0)]
>>> launch = Launch(ref, "m1", "node")
>>> launch
Launch(task=TaskRef(job=0, phase='map', task=3), machine='m1', locality='node')
>>> task, machine, locality = launch
>>> machine, launch[2], len(launch)
('m1', 'node', 3)
>>> launch == Launch(TaskRef(0, "map", 3), "m1", "node"), launch == (task, "m1", "node")
(True, True)
>>> launch != Launch(TaskRef(0, "map", 3), "m2", "node")
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, final

if TYPE_CHECKING:
    from fairshare.policies.protocol import Locality, Phase

__all__ = ["Launch", "TaskRef"]

_NO_HASH: Final = -1
"""A ``TaskRef``'s hash before it is first asked for (``hash`` never returns -1)."""


@final
class TaskRef:
    """One task of one job, as the driver and the policy name it.

    Attributes
    ----------
    job : int
        The driver's id of the job (``job_submitted``'s ``job_id``).
    key : object
        The job id as the object given, which the ledger's dictionaries find by identity
        (the compiled kernel would box ``job`` anew at each look-up, an allocation above
        256).
    phase : {"map", "reduce", "copy"}
        The task's phase; ``"copy"`` only with copy-compute splitting (FAIR section 5.2).
    task : int
        The task's index in its phase: 0 .. tasks-1 for maps, 0 .. reduce.tasks-1 for
        reducers and their copy parts.

    Examples
    --------
    >>> from fairshare.policies import TaskRef
    >>> TaskRef(3, "reduce", 0)
    TaskRef(job=3, phase='reduce', task=0)
    >>> sorted([TaskRef(1, "map", 2), TaskRef(0, "reduce", 0), TaskRef(1, "map", 0)])[0]
    TaskRef(job=0, phase='reduce', task=0)
    """

    # The hash is the tuple's, computed at the first look-up that needs it (most tasks of
    # a trace replay are never a dictionary's key) and kept.
    __slots__ = ("_hash", "key", "phase", "task")

    def __init__(self, job: Any, phase: Phase, task: int) -> None:  # job: an int
        # Held as the object given (Any: the kernel would unbox an int argument and box it
        # anew here); the placer passes the ledger's own key object (JobState.key).
        self.key: Any = job
        self.phase = phase
        self.task = task
        self._hash = _NO_HASH

    @property
    def job(self) -> int:
        """The driver's id of the job."""
        job: int = self.key
        return job

    def as_tuple(self) -> tuple[int, Phase, int]:
        """The name as the tuple ``(job, phase, task)`` it compares equal to."""
        return (self.key, self.phase, self.task)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TaskRef):
            return self.task == other.task and self.key == other.key and self.phase == other.phase
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash == _NO_HASH:
            self._hash = hash(self.as_tuple())
        return self._hash

    def __lt__(self, other: object) -> bool:
        if isinstance(other, TaskRef):
            return self.as_tuple() < other.as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() < other
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if isinstance(other, TaskRef):
            return self.as_tuple() <= other.as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() <= other
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        if isinstance(other, TaskRef):
            return self.as_tuple() > other.as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() > other
        return NotImplemented

    def __ge__(self, other: object) -> bool:
        if isinstance(other, TaskRef):
            return self.as_tuple() >= other.as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() >= other
        return NotImplemented

    def __len__(self) -> int:
        return 3

    def __iter__(self) -> Iterator[object]:
        return iter(self.as_tuple())

    def __getitem__(self, index: int) -> object:
        return self.as_tuple()[index]

    def __repr__(self) -> str:
        return f"TaskRef(job={self.key!r}, phase={self.phase!r}, task={self.task!r})"

    def __reduce__(self) -> tuple[type[TaskRef], tuple[int, Phase, int]]:
        return (TaskRef, self.as_tuple())


@final
class Launch:
    """A decision: start ``task`` on ``machine`` now.

    Attributes
    ----------
    task : TaskRef
        The task to start.
    machine : str
        The machine's name.
    locality : {"node", "rack", "off_rack"} or None
        Where the task's input block was found (FAIR section 4); None when the task reads
        no block.
    """

    __slots__ = ("locality", "machine", "task")

    def __init__(self, task: TaskRef, machine: str, locality: Locality | None) -> None:
        self.task = task
        self.machine = machine
        self.locality = locality

    def as_tuple(self) -> tuple[TaskRef, str, Locality | None]:
        """The decision as the tuple ``(task, machine, locality)`` it compares equal to."""
        return (self.task, self.machine, self.locality)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Launch):
            return (
                self.machine == other.machine
                and self.locality == other.locality
                and self.task == other.task
            )
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __len__(self) -> int:
        return 3

    def __iter__(self) -> Iterator[object]:
        return iter(self.as_tuple())

    def __getitem__(self, index: int) -> object:
        return self.as_tuple()[index]

    def __repr__(self) -> str:
        return f"Launch(task={self.task!r}, machine={self.machine!r}, locality={self.locality!r})"

    def __reduce__(self) -> tuple[type[Launch], tuple[TaskRef, str, Locality | None]]:
        return (Launch, self.as_tuple())
