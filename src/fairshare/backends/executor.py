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

Examples
--------
The in-process fake (:class:`~fairshare.backends.fake.FakeExecutor`) follows the contract
with a virtual clock:

>>> import numpy as np
>>> from fairshare.backends import FakeExecutor, TaskSpec
>>> from fairshare.cluster import Machine
>>> executor = FakeExecutor(("cpu",), [Machine("n1", np.array([2.0]))],
...                         duration=lambda spec: 5.0)
>>> executor.launch(TaskSpec("j:0:0", "j", 0, 0, ("true",), {"cpu": 1.0}), "n1")
>>> executor.wait(1.0), executor.now()
([], 1.0)
>>> executor.wait(10.0), executor.now()
([Finished(key='j:0:0')], 5.0)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from fairshare.cluster import Machine


@dataclass(frozen=True)
class TaskSpec:
    """One attempt of one task, as the driver hands it to the executor.

    Parameters
    ----------
    key : str
        Names the attempt, unique for the executor's lifetime (the driver's is
        ``JOB:INDEX:ATTEMPT``).
    job : str
        The job's id (``FAIRSHARE_JOB_ID`` in the command's environment).
    index : int
        The task's index in its job (``FAIRSHARE_TASK_INDEX``).
    attempt : int
        0 for the task's first attempt, one more for each after (``FAIRSHARE_ATTEMPT``).
    command : tuple of str
        The argv it runs (never a shell line).
    demand : mapping of str to float
        What it holds while it runs, by resource name.
    tenant : str
        The tenant it runs for (its sandbox's user and directory:
        :mod:`~fairshare.backends.ray_task`).
    """

    key: str
    job: str
    index: int
    attempt: int
    command: tuple[str, ...]
    demand: Mapping[str, float] = field(default_factory=dict)
    tenant: str = ""


class OutputRef(NamedTuple):
    """Which output of which attempt (:meth:`Executor.read_output`).

    Attributes
    ----------
    tenant : str
        The attempt's tenant (its directory).
    key : str
        The attempt's :attr:`TaskSpec.key`.
    stream : str
        ``"out"`` (standard output) or ``"err"`` (standard error).
    """

    tenant: str
    key: str
    stream: str


class Finished(NamedTuple):
    """Attempt ``key`` ended successfully.

    Attributes
    ----------
    key : str
        The attempt's :attr:`TaskSpec.key`.
    """

    key: str


class Failed(NamedTuple):
    """Attempt ``key`` ended without finishing.

    Attributes
    ----------
    key : str
        The attempt's :attr:`TaskSpec.key`.
    error : str
        Why (an exit code and the end of its standard error, a Ray error).
    lost : bool
        Its node died or can no longer take it: not the task's fault, so it does not count
        as a retry.
    node : str or None
        The node that was lost, when known.
    """

    key: str
    error: str
    lost: bool = False
    node: str | None = None


ExecEvent = Finished | Failed
"""What :meth:`Executor.wait` reports of an attempt that ended."""


class Executor(ABC):
    """A cluster that runs tasks (see the module for the contract).

    Attributes
    ----------
    resources : tuple of str
        The resource names of the nodes' capacities and of task demands, in order.
    """

    resources: tuple[str, ...]
    """The resource names of ``nodes()``' capacities and of task demands, in order."""
    service: str = ""
    """The run of the service that launches (its lease's owner id), which each task's
    environment carries as ``FAIRSHARE_SERVICE`` so that a restarted service can find its
    predecessor's tasks (:mod:`fairshare.service.stale`); empty: none."""

    @abstractmethod
    def now(self) -> float:
        """The executor's clock.

        Returns
        -------
        float
            Seconds, non-decreasing (the driver's time is this minus its start).
        """

    @abstractmethod
    def nodes(self) -> list[Machine]:
        """The nodes alive now.

        Returns
        -------
        list of Machine
            Each node as a machine: its name, capacity over :attr:`resources`, rack and
            attributes.
        """

    @abstractmethod
    def launch(self, spec: TaskSpec, machine: str) -> None:
        """Start one attempt on ``machine``, holding ``spec.demand`` there; never blocks on
        the task. A node gone meanwhile reports the attempt :class:`Failed` and lost.

        Parameters
        ----------
        spec : TaskSpec
            The attempt.
        machine : str
            A node's name, from :meth:`nodes`.
        """

    @abstractmethod
    def cancel(self, key: str) -> None:
        """Stop a running attempt at once (forced): nothing is reported of it afterwards.
        An attempt that already ended is left as it is.

        Parameters
        ----------
        key : str
            The attempt's :attr:`TaskSpec.key`.
        """

    @abstractmethod
    def wait(self, timeout: float) -> list[ExecEvent]:
        """What ended since the last call, waiting up to ``timeout`` seconds for something
        to end.

        Parameters
        ----------
        timeout : float
            The longest wait, in seconds (may be infinite).

        Returns
        -------
        list of ExecEvent
            :class:`Finished` and :class:`Failed` attempts; empty when nothing ended.
        """

    def read_output(self, spec: OutputRef, machine: str, offset: int, limit: int) -> bytes | None:
        """Up to ``limit`` bytes from ``offset`` of an attempt's standard output or error,
        read on ``machine``, the node that ran it (``fairshare logs``). Unlike the other
        methods, any thread may call it: it reads, and never changes what runs.

        Parameters
        ----------
        spec : OutputRef
            The attempt's tenant, key, and which stream.
        machine : str
            The node that ran it.
        offset, limit : int
            Where to start, and the most bytes.

        Returns
        -------
        bytes or None
            None: this executor keeps no output, or none is found (the node is gone).
        """
        return None

    @abstractmethod
    def close(self) -> None:
        """Release what the executor holds (a Ray connection, a local Ray instance)."""
