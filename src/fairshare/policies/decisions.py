"""The launch decision: :class:`Launch`, what ``decide`` returns to start a task
(:mod:`fairshare.policies.protocol`).

A compiled record, not a NamedTuple: a policy makes one per task it launches, and a
NamedTuple is built through ``tuple.__new__`` (an argument tuple, a call through the generic
protocol, a copy into the subclass) and freed as a tuple subclass, about a tenth of a large
replay's event loop for the two per launch (``Launch`` and its ``TaskRef``). The record keeps
what callers read of the NamedTuple: the fields by name, equality and hashing by value (a
``Launch`` equals the tuple ``(task, machine, locality)``, as the NamedTuple did), unpacking,
indexing, ``len``, its ``repr``, and pickling. It is not a ``tuple`` (``isinstance(launch,
tuple)`` is False) and has no ``_replace``.

Examples
--------
>>> from fairshare.policies.protocol import TaskRef
>>> launch = Launch(TaskRef(0, "map", 3), "m1", "node")
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
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from fairshare.policies.protocol import Locality, TaskRef

__all__ = ["Launch"]


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
