"""The Ray executor: every launch is one Ray task pinned to the chosen node, carrying its
demand as Ray resources, so Ray's own accounting agrees with the policy's (the ``[ray]``
extra; this module is imported only by the commands that use it).

- **Nodes are machines.** A Ray node's resources give its capacity: ``cpu`` is Ray's
  ``CPU``, ``gpu`` its ``GPU``, ``mem`` its ``memory`` in GiB, and any other name the custom
  resource of that name. Its labels (``ray start --labels "rack=r1,gpu=true"``) are its
  attributes for placement constraints, ``rack`` its rack; ``true``/``false`` become
  booleans and numbers numbers. Its name is its node id.
- **A launch** is ``run_command`` (:mod:`fairshare.backends.ray_task`) with
  ``NodeAffinitySchedulingStrategy(node, soft=False)`` and ``num_cpus``, ``num_gpus``,
  ``memory`` and custom ``resources`` from the task's demand; Ray's own retries are off
  (the driver retries failures, up to the job's limit).
- **A cancel** is ``ray.cancel(force=True)``: the worker is killed, and the command with it;
  then a Ray task of no CPU pinned to the attempt's node
  (:func:`~fairshare.backends.ray_task.stop_attempt`) kills what the command started, which
  the worker's death leaves running.
- **Node loss**: an attempt that ends with ``NodeDiedError``, ``TaskUnschedulableError`` or
  a dead raylet is reported lost, and its node is left out of :meth:`RayExecutor.nodes`
  at once (the early signal), before Ray's own node list says so.

Examples
--------
A node as ``ray.nodes()`` lists it, and a task's demand as Ray options (no Ray needed):

>>> node = {"NodeID": "abc", "Alive": True,
...         "Resources": {"CPU": 8.0, "memory": 16 * 2**30, "GPU": 1.0, "fpga": 2.0,
...                       "node:10.0.0.1": 1.0},
...         "Labels": {"rack": "r1", "ssd": "true"}}
>>> resources = node_resources([node])
>>> resources
('cpu', 'mem', 'gpu', 'fpga')
>>> machine = node_machine(node, resources)
>>> machine.name, machine.capacity.tolist(), machine.rack, machine.attributes
('abc', [8.0, 16.0, 1.0, 2.0], 'r1', {'ssd': True})
>>> ray_options({"cpu": 2, "mem": 1.5, "fpga": 1, "gpu": 0})
{'num_cpus': 2, 'max_retries': 0, 'memory': 1610612736, 'resources': {'fpga': 1}}
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from fairshare.backends import ray_task
from fairshare.backends.executor import (
    ExecEvent,
    Executor,
    Failed,
    Finished,
    OutputRef,
    TaskSpec,
)
from fairshare.cluster import Machine
from fairshare.cluster.model import AttributeValue

RAY_RESOURCES: dict[str, tuple[str, float]] = {
    "cpu": ("CPU", 1.0),
    "gpu": ("GPU", 1.0),
    "mem": ("memory", float(2**30)),
}
"""A scenario resource -> (Ray's resource, Ray units per scenario unit); other names are
Ray custom resources of the same name."""

READ_SECONDS = 30.0
"""How long a read of a task's output on its node may take (``fairshare logs``)."""

_NOT_RESOURCES = ("memory", "object_store_memory", "CPU", "GPU")


def ray_resource(name: str) -> tuple[str, float]:
    """Ray's name for a scenario resource and its units per scenario unit.

    Parameters
    ----------
    name : str
        A scenario resource (``cpu``, ``gpu``, ``mem`` in GiB, or a custom name).

    Returns
    -------
    (str, float)
        Ray's resource and how many of its units one scenario unit is.

    Examples
    --------
    >>> ray_resource("mem"), ray_resource("fpga")
    (('memory', 1073741824.0), ('fpga', 1.0))
    """
    return RAY_RESOURCES.get(name, (name, 1.0))


def node_resources(nodes: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The resources of a cluster whose scenario names none: ``cpu`` and ``mem``, ``gpu``
    when a node has one, then the custom resources the nodes have (not Ray's own
    ``node:...`` and ``accelerator_type:...`` markers).

    Parameters
    ----------
    nodes : sequence of mapping
        Entries of ``ray.nodes()``.

    Returns
    -------
    tuple of str
        The scenario resources, in order.
    """
    names: dict[str, None] = {"cpu": None, "mem": None}
    for node in nodes:
        resources = node.get("Resources") or {}
        if resources.get("GPU"):
            names["gpu"] = None
    for node in nodes:
        for key in node.get("Resources") or {}:
            if key in _NOT_RESOURCES or ":" in key:
                continue
            names[key] = None
    return tuple(names)


def _attribute(text: str) -> AttributeValue:
    """A node label's value as a constraint attribute: a boolean, a number, or the text."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number):
        return int(number) if number.is_integer() and "." not in text else number
    return text


def node_machine(node: Mapping[str, Any], resources: Sequence[str]) -> Machine:
    """A Ray node (an entry of ``ray.nodes()``) as a machine over ``resources``.

    Parameters
    ----------
    node : mapping
        The node: ``NodeID``, ``Resources``, ``Labels``.
    resources : sequence of str
        The scenario resources, in order.

    Returns
    -------
    Machine
        Named by the node id, its capacity in scenario units, ``rack`` from its label of
        that name, its other labels (not Ray's ``ray.io/`` ones) as attributes.
    """
    import numpy as np  # noqa: PLC0415

    have = node.get("Resources") or {}
    capacity = []
    for name in resources:
        key, unit = ray_resource(name)
        capacity.append(float(have.get(key, 0.0)) / unit)
    labels: Mapping[str, str] = node.get("Labels") or {}
    attributes = {
        k: _attribute(v) for k, v in labels.items() if not k.startswith("ray.io/") and k != "rack"
    }
    return Machine(
        str(node["NodeID"]),
        np.array(capacity, dtype=np.float64),
        rack=labels.get("rack"),
        attributes=attributes,
    )


def ray_options(demand: Mapping[str, float]) -> dict[str, Any]:
    """The Ray task options that hold ``demand`` (by scenario resource name).

    Parameters
    ----------
    demand : mapping of str to float
        What the task holds, by scenario resource name.

    Returns
    -------
    dict
        ``num_cpus``, ``num_gpus``, ``memory`` (bytes) and custom ``resources``, with
        Ray's own retries off (``max_retries`` 0).
    """
    options: dict[str, Any] = {"num_cpus": 0, "max_retries": 0}
    custom: dict[str, float] = {}
    for name, amount in demand.items():
        if amount <= 0:
            continue
        key, unit = ray_resource(name)
        if key == "CPU":
            options["num_cpus"] = amount
        elif key == "GPU":
            options["num_gpus"] = amount
        elif key == "memory":
            options["memory"] = math.ceil(amount * unit)
        else:
            custom[key] = amount
    if custom:
        options["resources"] = custom
    return options


_LOST_ERRORS = (
    "NodeDiedError",
    "TaskUnschedulableError",
    "LocalRayletDiedError",
    "ObjectLostError",
    "OwnerDiedError",
    "WorkerCrashedError",
)
"""Ray errors that say where a task ran is gone, not that the task failed."""


def _signal_handlers() -> dict[int, Any]:
    """SIGINT's and SIGTERM's handlers now (none off the main thread, where none can be
    set)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}


def private_ray_auth(private_dir: str) -> str:
    """Turn on Ray's token authentication (Ray 2.52 and later: ``RAY_AUTH_MODE=token``;
    https://docs.ray.io/en/latest/ray-security/token-auth.html, "Token sources and
    precedence") for the local instance this process starts, its token a new random one in
    ``PRIVATE_DIR/ray-auth-token`` (mode 0600, ``RAY_AUTH_TOKEN_PATH``) rather than the
    user's ``~/.ray/auth_token``, which may be readable by others: only this process and
    the Ray processes it starts (which inherit the two variables) can join the instance.
    Set in this process's environment before ``ray.init``. A ``RAY_AUTH_TOKEN`` the
    operator set takes precedence, as Ray documents.

    Parameters
    ----------
    private_dir : str
        A directory only this process's user can enter.

    Returns
    -------
    str
        The token file's path.
    """
    import secrets  # noqa: PLC0415

    path = os.path.join(private_dir, "ray-auth-token")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as token:
        token.write(secrets.token_hex(32))
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN_PATH"] = path
    # Ray read its configuration when it was imported: read again (as Ray's own
    # ``_enable_token_auth`` does), and the token with it.
    import importlib  # noqa: PLC0415

    raylet: Any = importlib.import_module("ray._raylet")
    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()
    return path


CONNECT_SECONDS = 5.0
"""How long a Ray address may take to accept a connection: ``ray.init`` itself retries an
address where nothing listens for ever, printing a warning every few seconds."""


def unanswered(address: str) -> str | None:
    """Why nothing answers at a Ray address, or None when something does.

    Parameters
    ----------
    address : str
        ``HOST:PORT`` (the head's GCS address); other forms (``ray://...``, ``auto``) are left
        to Ray, and give None.

    Returns
    -------
    str or None
        The reason a connection within :data:`CONNECT_SECONDS` failed.

    Examples
    --------
    >>> unanswered("ray://head:10001") is None
    True
    >>> unanswered("127.0.0.1:1")
    'Connection refused'
    """
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "/" in address:
        return None
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as err:
        return err.strerror or str(err)
    return None


class RayExecutor(Executor):
    """Tasks on a Ray cluster: the one at ``address``, or a local instance started here
    (``address`` None, with ``num_cpus`` CPUs: all the machine's by default). ``resources``
    None takes them from the nodes (:func:`node_resources`).

    Parameters
    ----------
    address : str or None
        A Ray cluster's address (``ray://...`` or ``HOST:PORT``), or None for a local
        instance. A process already connected to Ray keeps that connection.
    resources : sequence of str, optional
        The scenario resources (default: :func:`node_resources` of the nodes).
    num_cpus : int, optional
        CPUs of the local instance (default: all the machine's).
    sandbox : mapping, optional
        How every task is sandboxed (:func:`fairshare.backends.ray_task.run_command`'s
        ``sandbox``, less the task's ``tenant`` and ``key``, which each launch adds). None:
        no sandbox (a benchmark's trivial tasks).
    private_dir : str, optional
        A directory only this process's user can enter (mode 0700): a local instance
        started here keeps its sessions, logs and sockets there (Ray's ``_temp_dir``), and
        its authentication token (:func:`private_ray_auth`), out of tasks' reach.
    """

    def __init__(
        self,
        address: str | None,
        resources: Sequence[str] | None = None,
        *,
        num_cpus: int | None = None,
        sandbox: Mapping[str, Any] | None = None,
        private_dir: str | None = None,
    ) -> None:
        import ray  # noqa: PLC0415

        # Any: mypy must pass with and without Ray installed.
        self._ray: Any = ray
        self._sandbox = dict(sandbox) if sandbox is not None else None
        self._own = not self._ray.is_initialized()
        if self._own:
            options: dict[str, Any] = {
                "include_dashboard": False,
                "logging_level": "WARNING",
                "log_to_driver": False,
                "namespace": "fairshare",
            }
            if address is not None:
                reason = unanswered(address)
                if reason is not None:
                    raise ConnectionError(f"no Ray cluster answers at {address}: {reason}")
                options["address"] = address
            else:
                if num_cpus is not None:
                    options["num_cpus"] = num_cpus
                if private_dir is not None:
                    # A new instance of its own ("local": never one found on the host), its
                    # files in the private directory, its token there too.
                    options["address"] = "local"
                    # Ray makes its temporary directory mode 0777: one level down.
                    options["_temp_dir"] = os.path.join(private_dir, "ray")
                    private_ray_auth(private_dir)
            # Ray's driver would exit at once on SIGTERM: the process's own handlers stay
            # (the service stops on it in order, and writes its files).
            handlers = _signal_handlers()
            try:
                self._ray.init(**options)
            finally:
                for signum, handler in handlers.items():
                    signal.signal(signum, handler)
        self._ray.cloudpickle.register_pickle_by_value(sys.modules[ray_task.__name__])
        self._remote = self._ray.remote(ray_task.run_command)
        self._reader = self._ray.remote(ray_task.read_output)
        self.resources = (
            tuple(resources) if resources is not None else node_resources(self._alive())
        )
        # Running attempts: object ref -> (key, node); key -> ref.
        self._refs: dict[Any, tuple[str, str]] = {}
        self._keys: dict[str, Any] = {}
        # Running attempts' variables (what stop_attempt looks for), and the stop tasks sent.
        self._envs: dict[str, dict[str, str]] = {}
        self._stops: list[Any] = []
        self._stopper = self._ray.remote(ray_task.stop_attempt)
        self._lost: list[ExecEvent] = []
        # Nodes whose tasks died with them, left out of nodes() from then on.
        self._dead: set[str] = set()

    def now(self) -> float:
        """The monotonic clock.

        Returns
        -------
        float
        """
        return time.monotonic()

    def _alive(self) -> list[dict[str, Any]]:
        """The entries of ``ray.nodes()`` that are alive."""
        return [n for n in self._ray.nodes() if n.get("Alive")]

    def nodes(self) -> list[Machine]:
        """The alive nodes as machines, less those whose tasks died with them.

        Returns
        -------
        list of Machine
        """
        return [
            node_machine(n, self.resources) for n in self._alive() if n["NodeID"] not in self._dead
        ]

    def launch(self, spec: TaskSpec, machine: str) -> None:
        """Submit ``spec``'s command as a Ray task pinned to node ``machine``
        (``soft=False``), holding its demand; a refusal by Ray is reported as a failure.

        Parameters
        ----------
        spec : TaskSpec
            The attempt.
        machine : str
            The node's id.
        """
        from ray.util.scheduling_strategies import (  # noqa: PLC0415
            NodeAffinitySchedulingStrategy,
        )

        options = ray_options(spec.demand)
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(machine, soft=False)
        env = {
            "FAIRSHARE_TASK_INDEX": str(spec.index),
            "FAIRSHARE_JOB_ID": spec.job,
            "FAIRSHARE_ATTEMPT": str(spec.attempt),
        }
        if self.service:
            env["FAIRSHARE_SERVICE"] = self.service
        sandbox = (
            None
            if self._sandbox is None
            else {**self._sandbox, "tenant": spec.tenant, "key": spec.key}
        )
        memory = spec.demand.get("mem", 0.0)
        if sandbox is not None and sandbox.get("limit_memory") and memory > 0:
            # Enforced in the task (RLIMIT_AS): Ray's memory resource only schedules.
            sandbox["memory"] = int(memory * RAY_RESOURCES["mem"][1])
        try:
            ref = self._remote.options(**options).remote(list(spec.command), env, sandbox)
        except ValueError as err:
            # Ray refuses the options (a fractional amount above 1 of a custom resource).
            self._lost.append(Failed(spec.key, f"Ray refused the task: {err}"))
            return
        self._refs[ref] = (spec.key, machine)
        self._keys[spec.key] = ref
        self._envs[spec.key] = env

    def read_output(self, spec: OutputRef, machine: str, offset: int, limit: int) -> bytes | None:
        """Read an attempt's output file on the node that ran it: a Ray task of no CPU
        pinned there (``NodeAffinitySchedulingStrategy(machine, soft=False)``) running
        :func:`~fairshare.backends.ray_task.read_output` (None without a sandbox, whose
        tasks keep no files, or when the node is gone or does not answer in
        :data:`READ_SECONDS`).

        Parameters
        ----------
        spec : OutputRef
            The attempt and stream.
        machine : str
            Its node's id.
        offset, limit : int
            Where to start, and the most bytes.

        Returns
        -------
        bytes or None
        """
        if self._sandbox is None:
            return None
        from ray.util.scheduling_strategies import (  # noqa: PLC0415
            NodeAffinitySchedulingStrategy,
        )

        ray = self._ray
        ref = self._reader.options(
            num_cpus=0,
            max_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(machine, soft=False),
        ).remote(self._sandbox, spec.tenant, spec.key, spec.stream, offset, limit)
        try:
            data = ray.get(ref, timeout=READ_SECONDS)
        except (ray.exceptions.RayError, TimeoutError):
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
            return None
        return data if isinstance(data, bytes) else None

    def cancel(self, key: str) -> None:
        """Force-cancel attempt ``key``: its worker and command are killed, then what the
        command started (a Ray task pinned to its node runs
        :func:`~fairshare.backends.ray_task.stop_attempt`; not waited for).

        Parameters
        ----------
        key : str
            The attempt's key.
        """
        ref = self._keys.pop(key, None)
        if ref is None:
            return
        _, node = self._refs.pop(ref)
        env = self._envs.pop(key)
        try:
            self._ray.cancel(ref, force=True)
        except self._ray.exceptions.RayError:
            return  # the task ended, or its node went, meanwhile
        self._stop(env, node)

    def _stop(self, env: dict[str, str], node: str) -> None:
        """Send a stop task for the attempt of ``env`` to ``node``; forget those ended."""
        from ray.util.scheduling_strategies import (  # noqa: PLC0415
            NodeAffinitySchedulingStrategy,
        )

        if self._stops:
            _, self._stops = self._ray.wait(
                self._stops, num_returns=len(self._stops), timeout=0, fetch_local=False
            )
        try:
            self._stops.append(
                self._stopper.options(
                    num_cpus=0,
                    max_retries=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                ).remote(env)
            )
        except self._ray.exceptions.RayError:
            return  # the node is gone, and its processes with it

    def wait(self, timeout: float) -> list[ExecEvent]:
        """The attempts that ended, waiting up to ``timeout`` seconds for the first.

        Parameters
        ----------
        timeout : float
            The longest wait, in seconds.

        Returns
        -------
        list of ExecEvent
        """
        if self._lost:
            lost, self._lost = self._lost, []
            return lost
        refs = list(self._refs)
        if not refs:
            time.sleep(min(timeout, 0.05))
            return []
        ray = self._ray
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout, fetch_local=False)
        if not ready:
            return []
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0, fetch_local=False)
        out: list[ExecEvent] = []
        for ref in ready:
            key, node = self._refs.pop(ref)
            del self._keys[key]
            del self._envs[key]
            out.append(self._outcome(ref, key, node))
        return out

    def _outcome(self, ref: Any, key: str, node: str) -> ExecEvent:
        """What an ended Ray task means: finished, failed, or lost with its node."""
        ray = self._ray
        try:
            code, tail = ray.get(ref)
        except ray.exceptions.RayTaskError as err:
            return Failed(key, f"the task raised: {str(err).strip().splitlines()[-1]}")
        except ray.exceptions.RayError as err:
            kind = type(err).__name__
            if kind in _LOST_ERRORS:
                if kind != "WorkerCrashedError":
                    self._dead.add(node)
                return Failed(key, f"{kind}: {str(err).strip()[:200]}", lost=True, node=node)
            return Failed(key, f"{kind}: {str(err).strip()[:500]}")
        if code == 0:
            return Finished(key)
        return Failed(key, f"exit code {code}" + (f": {tail}" if tail else ""))

    def close(self) -> None:
        """Cancel the running attempts, and shut down a Ray instance started here."""
        for key in list(self._keys):
            self.cancel(key)
        if self._stops:
            # The stop tasks sent finish before a local instance's workers go.
            self._ray.wait(self._stops, num_returns=len(self._stops), timeout=30, fetch_local=False)
            self._stops = []
        if self._own:
            self._ray.shutdown()
