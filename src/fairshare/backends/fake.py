"""An in-process executor with a virtual clock, for fast and exact tests of the live driver.

Tasks run for the seconds ``duration(spec)`` gives (default one second) and fail when
``failure(spec)`` returns an error text. ``wait(timeout)`` moves the clock to the next finish
(or by ``timeout``) without sleeping, so a test of hours of cluster time takes milliseconds.
Like Ray's own accounting, the fake refuses a launch that does not fit the node's free room,
so a driver or policy that over-commits a node fails the test.

Examples
--------
>>> import numpy as np
>>> from fairshare.backends import FakeExecutor, TaskSpec
>>> from fairshare.cluster import Machine
>>> executor = FakeExecutor(("cpu",), [Machine("n1", np.array([2.0]))],
...                         failure=lambda spec: "exit code 1" if spec.index == 1 else None)
>>> for index in (0, 1):
...     executor.launch(TaskSpec(f"j:{index}:0", "j", index, 0, ("true",), {"cpu": 1.0}), "n1")
>>> executor.wait(5.0)
[Finished(key='j:0:0'), Failed(key='j:1:0', error='exit code 1', lost=False, node=None)]
>>> executor.launch(TaskSpec("j:2:0", "j", 2, 0, ("true",), {"cpu": 1.0}), "n1")
>>> executor.remove_node("n1")
>>> executor.wait(5.0)
[Failed(key='j:2:0', error='node n1 died', lost=True, node='n1')]
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import numpy as np

from fairshare.backends.executor import (
    ExecEvent,
    Executor,
    Failed,
    Finished,
    OutputRef,
    TaskSpec,
)
from fairshare.cluster import Machine
from fairshare.tolerances import FIT


class FakeExecutor(Executor):
    """Nodes and tasks in memory (see the module).

    Parameters
    ----------
    resources : tuple of str
        The resource names, in order.
    machines : list of Machine
        The nodes at the start (:meth:`add_node`, :meth:`remove_node` change them).
    duration : callable, optional
        An attempt's run time in seconds, from its spec (default: one second).
    failure : callable, optional
        An attempt's error text, or None for a success (default: every attempt succeeds).
    output : callable, optional
        An attempt's standard output and error (bytes), kept in memory from its launch for
        :meth:`read_output` (default: none kept).

    Attributes
    ----------
    clock : float
        The virtual clock.
    launched : list of (float, str, TaskSpec)
        Every launch: time, node, spec.
    cancelled : list of str
        The keys of the attempts cancelled while running.
    """

    def __init__(
        self,
        resources: tuple[str, ...],
        machines: list[Machine],
        *,
        duration: Callable[[TaskSpec], float] | None = None,
        failure: Callable[[TaskSpec], str | None] | None = None,
        output: Callable[[TaskSpec], tuple[bytes, bytes]] | None = None,
    ) -> None:
        self.output = output
        self.outputs: dict[str, tuple[bytes, bytes]] = {}
        self.resources = resources
        self.clock = 0.0
        self.duration = duration if duration is not None else (lambda spec: 1.0)
        self.failure = failure if failure is not None else (lambda spec: None)
        self.machines: dict[str, Machine] = {}
        self.free: dict[str, np.ndarray] = {}
        for machine in machines:
            self.add_node(machine)
        # Running attempts: key -> (machine, end, spec); their ends in a heap.
        self.running: dict[str, tuple[str, float, TaskSpec]] = {}
        self._ends: list[tuple[float, int, str]] = []
        self._seq = 0
        self._lost: list[ExecEvent] = []
        self.launched: list[tuple[float, str, TaskSpec]] = []
        """Every launch: (time, machine, spec), for tests to read."""
        self.cancelled: list[str] = []

    def now(self) -> float:
        """The virtual clock.

        Returns
        -------
        float
        """
        return self.clock

    def nodes(self) -> list[Machine]:
        """The nodes alive, in the order they joined.

        Returns
        -------
        list of Machine
        """
        return list(self.machines.values())

    def add_node(self, machine: Machine) -> None:
        """Node ``machine`` joins, all its capacity free.

        Parameters
        ----------
        machine : Machine
            The node.
        """
        self.machines[machine.name] = machine
        self.free[machine.name] = np.array(machine.capacity, dtype=np.float64)

    def remove_node(self, name: str) -> None:
        """Node ``name`` dies: its running attempts are reported lost.

        Parameters
        ----------
        name : str
            The node's name.
        """
        del self.machines[name]
        del self.free[name]
        for key in [k for k, (m, _, _) in self.running.items() if m == name]:
            del self.running[key]
            self._lost.append(Failed(key, f"node {name} died", lost=True, node=name))

    def launch(self, spec: TaskSpec, machine: str) -> None:
        """Start ``spec`` on ``machine`` now, ending ``duration(spec)`` seconds later (a node
        gone reports it lost).

        Parameters
        ----------
        spec : TaskSpec
            The attempt.
        machine : str
            The node's name.

        Raises
        ------
        AssertionError
            The demand does not fit the node's free room (an over-commit).
        """
        if machine not in self.machines:
            self._lost.append(Failed(spec.key, f"node {machine} is gone", lost=True, node=machine))
            return
        demand = np.array([spec.demand.get(r, 0.0) for r in self.resources], dtype=np.float64)
        free = self.free[machine]
        if np.any(free + FIT < demand):
            raise AssertionError(
                f"{spec.key} does not fit on {machine}: demand {demand}, free {free}"
            )
        free -= demand
        seconds = self.duration(spec)
        end = self.clock + seconds
        self.running[spec.key] = (machine, end, spec)
        self._seq += 1
        heapq.heappush(self._ends, (end, self._seq, spec.key))
        self.launched.append((self.clock, machine, spec))
        if self.output is not None:
            self.outputs[spec.key] = self.output(spec)

    def read_output(self, spec: OutputRef, machine: str, offset: int, limit: int) -> bytes | None:
        """What ``output`` gave the attempt at its launch, from ``offset``, at most
        ``limit`` bytes (None: nothing kept).

        Parameters
        ----------
        spec : OutputRef
            The attempt and stream.
        machine : str
            Its node (unused: the fake keeps every output in memory).
        offset, limit : int
            Where to start, and the most bytes.

        Returns
        -------
        bytes or None
        """
        kept = self.outputs.get(spec.key)
        if kept is None:
            return None
        data = kept[0] if spec.stream == "out" else kept[1]
        return data[max(0, offset) : max(0, offset) + max(0, limit)]

    def cancel(self, key: str) -> None:
        """Stop attempt ``key`` now and free its room (nothing if it is not running).

        Parameters
        ----------
        key : str
            The attempt's key.
        """
        held = self.running.pop(key, None)
        if held is not None:
            self._give_back(held)
            self.cancelled.append(key)

    def _give_back(self, held: tuple[str, float, TaskSpec]) -> None:
        """An attempt ended: its demand goes back to its node's free room (if alive)."""
        machine, _, spec = held
        if machine in self.free:
            self.free[machine] += [spec.demand.get(r, 0.0) for r in self.resources]

    def wait(self, timeout: float) -> list[ExecEvent]:
        """Everything that ends at the next end time within ``timeout`` (the clock moves
        there), or nothing (the clock moves by ``timeout``, unless it is infinite). Lost
        attempts are reported first, without moving the clock.

        Parameters
        ----------
        timeout : float
            The longest wait, in virtual seconds.

        Returns
        -------
        list of ExecEvent
        """
        if self._lost:
            lost, self._lost = self._lost, []
            return lost
        ends = self._ends
        while ends and ends[0][2] not in self.running:
            heapq.heappop(ends)
        if not ends or ends[0][0] > self.clock + timeout:
            if math.isfinite(timeout):
                self.clock += timeout
            return []
        at = ends[0][0]
        self.clock = max(self.clock, at)
        out: list[ExecEvent] = []
        while ends and ends[0][0] == at:
            _, _, key = heapq.heappop(ends)
            held = self.running.pop(key, None)
            if held is None:
                continue
            self._give_back(held)
            error = self.failure(held[2])
            out.append(Finished(key) if error is None else Failed(key, error))
        return out

    def close(self) -> None:
        """Nothing to release: the tasks live in this object."""

    def idle(self) -> bool:
        """Whether nothing runs and nothing is left to report.

        Returns
        -------
        bool
        """
        return not self.running and not self._lost
