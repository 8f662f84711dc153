"""``fairshare serve``: the scheduler service's process. It is the only process that talks to
Ray: the HTTP API (uvicorn, on the main thread) writes tenants' requests to the store and
hands them to the live driver, whose loop runs on its own thread and alone calls the
executor. SIGINT or SIGTERM stops the API, then the driver; the run's records are returned
for ``--out``.
"""

from __future__ import annotations

import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fairshare.backends import Executor, LiveDriver
from fairshare.cluster import Cluster
from fairshare.policies import PolicyOptions, make_policy
from fairshare.runlog import RunLog
from fairshare.service.core import Limits, LiveService
from fairshare.service.store import Store, StoreJournal
from fairshare.workload.loader import parse_scenario, read_scenario_file
from fairshare.workload.model import Scenario


@dataclass(frozen=True)
class ServeSettings:
    """What ``fairshare serve`` was asked (checked by the command line)."""

    scenario: Path
    policy: str
    db: Path
    ray: str | None
    host: str
    port: int
    options: PolicyOptions
    limits: Limits
    poll_interval: float = 1.0


def listen(host: str, port: int) -> socket.socket:
    """The API's listening socket (bound before anything else starts, so that a port in
    use is an input error, not a half-started service)."""
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


def load_live_scenario(path: Path, executor: Executor) -> Scenario:
    """The scenario's tenants over the cluster's nodes (SPEC section 6): its machines are
    ignored, but a scenario that lists them names the resources; one that does not takes
    them from the nodes (:func:`fairshare.backends.ray_cluster.node_resources`) and may omit
    its users' ``demand``, which live jobs carry themselves."""
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
    """The names of a scenario's users, as written (for ``tenant add --scenario``)."""
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
) -> RunLog:
    """Run the service until SIGINT or SIGTERM; the run's records."""
    import uvicorn  # noqa: PLC0415

    from fairshare.service.app import create_app  # noqa: PLC0415

    started = time.perf_counter()
    store = Store(settings.db)
    users = list(scenario.users)
    policy = make_policy(
        settings.policy,
        Cluster.build(executor.resources, executor.nodes()),
        users=users,
        queues=scenario.queues,
        options=settings.options,
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
    resumed = service.recover()
    config = uvicorn.Config(
        create_app(service), log_level="warning", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)
    stop = threading.Event()
    failure: list[BaseException] = []

    def loop() -> None:
        try:
            service.run(stop)
        except BaseException as err:
            failure.append(err)
            server.should_exit = True
            raise

    thread = threading.Thread(target=loop, name="fairshare-driver", daemon=True)
    thread.start()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in str(host) else host
    if announce is not None:
        announce(
            f"fairshare serve: {settings.policy} on {len(driver.machines)} "
            f"node{'' if len(driver.machines) == 1 else 's'}, "
            f"http://{shown}:{port} (database {settings.db}; {resumed} jobs resumed)"
        )
    # uvicorn stops on SIGINT or SIGTERM, then raises the signal again with the handlers it
    # found in place (the default ones would end the process): these only note it, so that
    # the run's records are still returned.
    stopping: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: stopping.append(signum))
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        server.run(sockets=[sock])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        stop.set()
        thread.join()
        store.close()
    if failure:
        raise failure[0]
    return driver.log(settings.policy, time.perf_counter() - started)


def announce_on_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
