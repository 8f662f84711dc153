"""``fairshare serve``: the scheduler service's process. It is the only process that talks to
Ray: the HTTP API (uvicorn, on the main thread) writes tenants' requests to the store and
hands them to the live driver, whose loop runs on its own thread and alone calls the
executor. SIGINT or SIGTERM stops the API, then the driver; the run's records are returned
for ``--out``.

Examples
--------
The tenants of a scenario file, and the scenario over a (fake) cluster's nodes:

>>> import tempfile
>>> import numpy as np
>>> from fairshare.backends import FakeExecutor
>>> from fairshare.cluster import Machine
>>> folder = tempfile.TemporaryDirectory()
>>> path = Path(folder.name, "tenants.yaml")
>>> _ = path.write_text(
...     "queues:\\n  - {path: prod, weight: 2}\\n"
...     "users:\\n  - {name: alice}\\n  - {name: bob, queue: prod}\\n"
... )
>>> scenario_users(path)
['alice', 'bob']
>>> executor = FakeExecutor(("cpu", "mem"), [Machine("n1", np.array([4.0, 8.0]))])
>>> scenario = load_live_scenario(path, executor)
>>> scenario.cluster.resources, [(u.name, u.queue) for u in scenario.users]
(('cpu', 'mem'), [('alice', ''), ('bob', 'prod')])
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from fairshare.backends import Executor, LiveDriver
from fairshare.cluster import Cluster
from fairshare.collector import collecting
from fairshare.policies import PolicyOptions, make_policy
from fairshare.runlog import RunLog
from fairshare.service.core import Limits, LiveService
from fairshare.service.journal import StoreJournal
from fairshare.service.stale import stop_stale_processes
from fairshare.service.store import Store, StoreFault
from fairshare.service.transport import Transport, http_protocol, uvicorn_options
from fairshare.workload.loader import parse_scenario, read_scenario_file
from fairshare.workload.model import Scenario


@dataclass(frozen=True)
class ServeSettings:
    """What ``fairshare serve`` was asked (checked by the command line).

    Parameters
    ----------
    scenario : Path
        The tenants' scenario file.
    policy : str
        The online policy's name.
    db : Path
        The SQLite database (created when new, resumed when not).
    ray : str or None
        The Ray cluster's address, or None for a local instance.
    host : str
        The address the API listens on.
    port : int
        Its port.
    options : PolicyOptions
        The policy's mechanisms.
    limits : Limits
        What one tenant may ask.
    poll_interval : float
        How often the nodes are listed, in seconds.
    transport : Transport
        TLS, the header timeout and the connection limit
        (:mod:`fairshare.service.transport`).
    """

    scenario: Path
    policy: str
    db: Path
    ray: str | None
    host: str
    port: int
    options: PolicyOptions
    limits: Limits
    poll_interval: float = 1.0
    transport: Transport = field(default_factory=Transport)


def listen(host: str, port: int) -> socket.socket:
    """The API's listening socket (bound before anything else starts, so that a port in
    use is an input error, not a half-started service).

    Parameters
    ----------
    host : str
        An IPv4 or IPv6 address (or a host name).
    port : int
        The port (0: any free one).

    Returns
    -------
    socket.socket
        The bound, listening socket.

    Raises
    ------
    OSError
        The address cannot be bound (a port in use).

    Examples
    --------
    >>> sock = listen("127.0.0.1", 0)
    >>> sock.getsockname()[0]
    '127.0.0.1'
    >>> sock.close()
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


@dataclass
class Stopped:
    """What a service's shutdown did, for the one line ``serve`` prints last.

    Attributes
    ----------
    jobs_left : int or None
        Jobs not ended, left in the database for the next start (None: it could not be
        read).
    tasks_stopped : int
        Task attempts that were running and are stopped (they run again on restart).
    """

    jobs_left: int | None = None
    tasks_stopped: int = 0

    def line(self, files: list[str]) -> str:
        """The shutdown's line.

        Parameters
        ----------
        files : list of str
            The files written (``--out``).

        Returns
        -------
        str

        Examples
        --------
        >>> Stopped(3, 2).line(["out/summary.json"])
        'fairshare serve: stopped: 3 jobs left pending or running (resumed on restart), 2 running tasks stopped, wrote out/summary.json'
        >>> Stopped(0, 0).line([])
        'fairshare serve: stopped: 0 jobs left pending or running (resumed on restart), 0 running tasks stopped, no files written'
        """  # noqa: E501
        left = "unknown (database unreadable)" if self.jobs_left is None else self.jobs_left
        return (
            f"fairshare serve: stopped: {left} job{'' if self.jobs_left == 1 else 's'} left "
            f"pending or running (resumed on restart), {self.tasks_stopped} running "
            f"task{'' if self.tasks_stopped == 1 else 's'} stopped, "
            + (f"wrote {', '.join(files)}" if files else "no files written")
        )


def load_live_scenario(path: Path, executor: Executor) -> Scenario:
    """The scenario's tenants over the cluster's nodes (SPEC section 6): its machines are
    ignored, but a scenario that lists them names the resources; one that does not takes
    them from the nodes (:func:`fairshare.backends.ray_cluster.node_resources`) and may omit
    its users' ``demand``, which live jobs carry themselves.

    Parameters
    ----------
    path : Path
        The scenario file.
    executor : Executor
        The cluster; its ``resources`` become the scenario's.

    Returns
    -------
    Scenario
        Its users and queues over the executor's nodes.

    Raises
    ------
    ScenarioError
        The file breaks the scenario format.
    """
    data = read_scenario_file(path)
    if isinstance(data, dict) and data.get("machines") is None:
        named = data.get("resources")
        first = named[0] if isinstance(named, list) and named else executor.resources[0]
        for user in data.get("users") or ():
            if isinstance(user, dict) and "demand" not in user:
                user["demand"] = {first: 1}
    scenario = parse_scenario(
        data, str(path), lambda: Cluster.build(executor.resources, executor.nodes())
    )
    executor.resources = scenario.cluster.resources
    return scenario


def scenario_users(path: Path) -> list[str]:
    """The names of a scenario's users, as written (for ``tenant add --scenario``).

    Parameters
    ----------
    path : Path
        The scenario file.

    Returns
    -------
    list of str

    Raises
    ------
    ScenarioError
        The file cannot be read as YAML or JSON.
    """
    data = read_scenario_file(path)
    users = data.get("users") if isinstance(data, dict) else None
    return [str(u["name"]) for u in users or () if isinstance(u, dict) and "name" in u]


def serve(
    settings: ServeSettings,
    executor: Executor,
    scenario: Scenario,
    sock: socket.socket,
    *,
    announce: Callable[[str], None] | None = None,
    store: Store | None = None,
    warn: Callable[[str], None] | None = None,
    stopped: Stopped | None = None,
) -> RunLog:
    """Run the service until SIGINT or SIGTERM: the database's lease is taken (one service
    per database), a previous service's attempts still running here are stopped (local
    mode), jobs not ended in the database are resumed, the driver's loop runs on its own
    thread and the API (uvicorn) on this one. Storage faults do not stop it (see
    :meth:`~fairshare.service.core.LiveService.run`); on shutdown the write-ahead log is
    checkpointed and the lease released, and the run's records are returned whatever the
    database's state.

    Parameters
    ----------
    settings : ServeSettings
        The policy, database, limits and poll interval.
    executor : Executor
        The cluster.
    scenario : Scenario
        The tenants (:func:`load_live_scenario`).
    sock : socket.socket
        The API's listening socket (:func:`listen`).
    announce : callable, optional
        Called with one line once the service is up (its policy, nodes, address).
    store : Store, optional
        The database, its lease taken (:meth:`Store.acquire`) by the caller; None: opened
        and taken here.
    warn : callable, optional
        Called with each ``warning:`` line of the start (tenants left out of the scenario).
    stopped : Stopped, optional
        Filled in on shutdown with what the service left (for its last line).

    Returns
    -------
    RunLog
        The run's records, for ``--out``.

    Raises
    ------
    StoreError
        The database cannot be used, or another service holds it (``LeaseHeld``).
    """
    import uvicorn  # noqa: PLC0415

    from fairshare.service.app import create_app  # noqa: PLC0415

    started = time.perf_counter()
    if store is None:
        store = Store(settings.db)
        store.check()
        store.acquire()
    executor.service = store.owner or ""
    users = list(scenario.users)
    options = settings.options
    if options.usage_half_life is None and scenario.usage_half_life is not None:
        options = replace(options, usage_half_life=scenario.usage_half_life)
    policy = make_policy(
        settings.policy,
        Cluster.build(executor.resources, executor.nodes()),
        users=users,
        queues=scenario.queues,
        options=options,
    )
    driver = LiveDriver(
        policy,
        executor,
        users=users,
        journal=StoreJournal(store),
        poll_interval=settings.poll_interval,
    )
    service = LiveService(
        store, driver, policy=settings.policy, users=users, limits=settings.limits
    )
    # Local mode: the previous service's tasks ran on this host and may still run there.
    resumed = service.recover(
        stop_stale=stop_stale_processes if settings.ray is None else None, warn=warn
    )
    transport = settings.transport
    config = uvicorn.Config(
        create_app(service),
        log_level="warning",
        lifespan="off",
        access_log=False,
        http=http_protocol(transport.header_seconds),
        **uvicorn_options(transport),
    )
    server = uvicorn.Server(config)
    stop = threading.Event()
    failure: list[BaseException] = []

    def loop() -> None:
        """The driver's thread: its failure stops the API too. The cyclic collector is on
        while it runs (the process's, API included): a command runs with it paused, and a
        service left so never frees the cycles Ray makes per launch
        (:func:`fairshare.collector.collecting`)."""
        try:
            with collecting():
                service.run(stop)
        except BaseException as err:
            failure.append(err)
            server.should_exit = True
            raise

    thread = threading.Thread(target=loop, name="fairshare-driver", daemon=True)
    thread.start()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in str(host) else host
    # uvicorn stops on SIGINT or SIGTERM, then raises the signal again with the handlers it
    # found in place (the default ones would end the process): these note it, so that the
    # run's records are still returned, and stop uvicorn, so that a signal that arrives
    # before uvicorn has put its own handlers in place (right after the announcement below,
    # which is what a supervisor waits for) is not lost: that left the service running.
    stopping: list[int] = []

    def note(signum: int, frame: object) -> None:
        stopping.append(signum)
        server.should_exit = True

    previous = {signum: signal.signal(signum, note) for signum in (signal.SIGINT, signal.SIGTERM)}
    if announce is not None:
        announce(
            f"fairshare serve: {settings.policy} on {len(driver.machines)} "
            f"node{'' if len(driver.machines) == 1 else 's'}, "
            f"{'https' if transport.tls else 'http'}://{shown}:{port} "
            f"(database {settings.db}; {resumed} jobs resumed)"
        )
    try:
        server.run(sockets=[sock])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        stop.set()
        thread.join()
        tasks_stopped = driver.running()
        jobs_left: int | None = None
        with contextlib.suppress(StoreFault):
            service.save_usage()
        with contextlib.suppress(StoreFault):
            jobs_left = store.unended()
        _close(store)
        if stopped is not None:
            stopped.jobs_left = jobs_left
            stopped.tasks_stopped = tasks_stopped
    if failure:
        raise failure[0]
    return driver.log(settings.policy, time.perf_counter() - started)


def _close(store: Store) -> None:
    """A clean shutdown's end: the write-ahead log emptied into the database and the lease
    released; a database that cannot be written keeps its log (SQLite replays it)."""
    with contextlib.suppress(StoreFault):
        store.checkpoint()
    store.release()
    store.close()


def announce_on_stderr(line: str) -> None:
    """Write ``line`` on standard error at once (``fairshare serve``'s announcement).

    Parameters
    ----------
    line : str
        The line, without its newline.
    """
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
