"""The executor: what the live driver needs from a cluster that runs tasks.

A live backend is a driver (:mod:`fairshare.backends.driver`) over an executor. The executor
knows nothing of fairness: it lists the nodes (as :class:`~fairshare.cluster.Machine`), starts a
task on the node it is told, cancels one, and reports what ended. Two implementations: Ray
(:mod:`fairshare.backends.ray_cluster`), and an in-process fake with a virtual clock for tests
(:mod:`fairshare.backends.fake`).

Contract:

- ``launch(spec, machine)`` starts one attempt of one task on ``machine`` (a name from
  ``nodes()``), holding ``spec.demand`` there. It never blocks on the task.
- ``wait(timeout)`` returns what ended since the last call (:class:`Finished`,
  :class:`Failed`), waiting up to ``timeout`` seconds for something to end; an empty list
  when nothing did.
- ``cancel(key)`` stops a running attempt at once (a forced cancel): no event is reported
  for it afterwards, finished or failed.
- ``nodes()`` lists the nodes alive now. A node that died is reported by ``nodes()`` no
  longer, and its running attempts end as :class:`Failed` with ``lost`` set.
- ``now()`` is the executor's clock in seconds (non-decreasing): the driver's time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from fairshare.cluster import Machine


@dataclass(frozen=True)
class TaskSpec:
    """One attempt of one task: ``key`` names the attempt (unique for the executor's
    lifetime), ``job`` and ``index`` the task (``FAIRSHARE_TASK_INDEX`` is ``index``),
    ``command`` the argv it runs and ``demand`` what it holds, by resource name."""

    key: str
    job: str
    index: int
    attempt: int
    command: tuple[str, ...]
    demand: Mapping[str, float] = field(default_factory=dict)


class Finished(NamedTuple):
    """Attempt ``key`` ended successfully."""

    key: str


class Failed(NamedTuple):
    """Attempt ``key`` ended without finishing: ``error`` says why. ``lost`` is set when its
    node died or can no longer take it (not the task's fault: it does not count as a
    retry); ``node`` names that node when known."""

    key: str
    error: str
    lost: bool = False
    node: str | None = None


ExecEvent = Finished | Failed


class Executor(ABC):
    """A cluster that runs tasks (see the module for the contract)."""

    resources: tuple[str, ...]
    """The resource names of ``nodes()``' capacities and of task demands, in order."""

    @abstractmethod
    def now(self) -> float: ...

    @abstractmethod
    def nodes(self) -> list[Machine]: ...

    @abstractmethod
    def launch(self, spec: TaskSpec, machine: str) -> None: ...

    @abstractmethod
    def cancel(self, key: str) -> None: ...

    @abstractmethod
    def wait(self, timeout: float) -> list[ExecEvent]: ...

    @abstractmethod
    def close(self) -> None:
        """Release what the executor holds (a Ray connection, a local Ray instance)."""
