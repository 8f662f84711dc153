"""The whole service for tests (``server.serve`` on the fake executor, uvicorn on the test's
main thread, as ``fairshare serve`` runs it): a client function runs on a thread of its own
against its URL, then SIGTERM ends the service; and a self-signed certificate."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fairshare.backends import FakeExecutor
from fairshare.cluster import Cluster, Machine
from fairshare.policies import PolicyOptions
from fairshare.runlog import RunLog
from fairshare.service import server
from fairshare.service.core import Limits
from fairshare.service.store import Store
from fairshare.service.transport import Transport
from fairshare.workload.loader import parse_scenario

RESOURCES = ("cpu", "mem")


@dataclass
class Served:
    """What a client function gets: the service's URL, tokens, the store, the fake
    cluster; ``seen`` keeps what the function found."""

    url: str
    tokens: dict[str, str]
    store: Store
    fake: FakeExecutor
    seen: dict[str, Any] = field(default_factory=dict)


def serve_with(
    tmp_path: Path,
    client: Callable[[Served], None],
    *,
    transport: Transport | None = None,
    limits: Limits | None = None,
    duration: float = 1e9,
    ready: Callable[[str], None] | None = None,
    announce: Callable[[str], None] | None = None,
    signal_at_end: bool = True,
    executor: type[FakeExecutor] = FakeExecutor,
) -> tuple[Served, RunLog]:
    """Run the service with tenants alice and bob (and an administrator) until ``client``
    returns; ``ready(url)`` (default: ``/healthz`` over plain HTTP answers) waits for it;
    ``announce`` gets the service's announcement; ``signal_at_end=False`` leaves the ending
    to the test (no SIGTERM once ``client`` returns); ``executor`` is the fake's class."""
    db = tmp_path / "db"
    store = Store(db)
    tokens = {
        "alice": store.add_token("alice"),
        "bob": store.add_token("bob"),
        "admin": store.add_token("admin", admin=True),
    }
    store.acquire()
    fake = executor(RESOURCES, [Machine("n0", np.array([2.0, 4.0]))], duration=lambda s: duration)
    scenario = parse_scenario(
        {"users": [{"name": "alice", "demand": {"cpu": 1}}, {"name": "bob", "demand": {"cpu": 1}}]},
        "s.yaml",
        lambda: Cluster.build(RESOURCES, fake.nodes()),
    )
    transport = transport if transport is not None else Transport()
    settings = server.ServeSettings(
        scenario=tmp_path / "s.yaml",
        policy="drf",
        db=db,
        ray="fake",
        host="127.0.0.1",
        port=0,
        options=PolicyOptions(),
        limits=limits if limits is not None else Limits(),
        transport=transport,
        poll_interval=0,
    )
    sock = server.listen("127.0.0.1", 0)
    scheme = "https" if transport.tls else "http"
    served = Served(f"{scheme}://127.0.0.1:{sock.getsockname()[1]}", tokens, store, fake)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            (ready or _healthy)(served.url)
            client(served)
        except BaseException as err:
            failures.append(err)
        finally:
            if signal_at_end:
                os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        log = server.serve(settings, fake, scenario, sock, store=store, announce=announce)
    finally:
        thread.join(120)
        sock.close()
    if failures:
        raise failures[0]
    return served, log


def _healthy(url: str) -> None:
    """Wait (up to a minute) for ``/healthz`` to answer over plain HTTP."""
    import httpx  # noqa: PLC0415

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/healthz", timeout=5)
            return
        except httpx.HTTPError:
            time.sleep(0.05)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (openssl), in ``folder``."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs openssl to make a certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key
