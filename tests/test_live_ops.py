"""What operators expect of the live service (SPEC section 6, "Additions (production use)";
issue 31 item 6), over HTTP: ``GET /metrics`` parsed by ``prometheus_client``'s own parser,
holding no secret; ``GET /v1/jobs/{id}/explain`` and ``fairshare explain ID --server``
(SPEC section 8.5's document for a live job; another tenant's job 404); administrator tokens
revocable, through the API and ``fairshare tenant revoke --admin``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("prometheus_client")

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from fairshare.backends import FakeExecutor, LiveDriver
from fairshare.cluster import Cluster, Machine
from fairshare.policies import make_policy
from fairshare.service.app import create_app
from fairshare.service.core import LiveService
from fairshare.service.journal import StoreJournal
from fairshare.service.store import Store
from fairshare.workload.model import User
from live_serving import Served, serve_with

from conftest import assert_rejected, run_fairshare

RESOURCES = ("cpu", "mem")
USERS = [User("alice", np.array([1.0, 1.0])), User("bob", np.array([1.0, 1.0]))]


def _job(name: str, tasks: int, cpu: float = 1.0) -> dict[str, object]:
    return {"name": name, "tasks": tasks, "demand": {"cpu": cpu}, "command": ["true"]}


class _Api:
    """The API over the fake executor (2 CPUs); tasks run ``duration`` s of the fake's
    clock."""

    def __init__(self, db: Path, duration: float = 10.0) -> None:
        self.store = Store(db)
        self.fake = FakeExecutor(
            RESOURCES, [Machine("n0", np.array([2.0, 4.0]))], duration=lambda s: duration
        )
        policy = make_policy("drf", Cluster.build(RESOURCES, self.fake.nodes()), users=USERS)
        driver = LiveDriver(
            policy, self.fake, users=USERS, journal=StoreJournal(self.store), poll_interval=0
        )
        self.service = LiveService(self.store, driver, policy="drf", users=USERS)
        self.client = TestClient(create_app(self.service))
        self.tokens = {
            "alice": self.store.add_token("alice"),
            "bob": self.store.add_token("bob"),
            "admin": self.store.add_token("root", admin=True),
        }

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def submit(self, who: str, job: dict[str, object]) -> str:
        answer = self.client.post("/v1/jobs", json=job, headers=self.auth(who))
        assert answer.status_code == 201, answer.text
        return str(answer.json()["id"])

    def step(self) -> None:
        self.service.driver.step(0.0)

    def metrics(self) -> dict[str, list[tuple[dict[str, str], float]]]:
        """The families of ``/metrics`` by name: each sample's labels (its name's suffix
        as ``sample``) and value."""
        answer = self.client.get("/metrics")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
        self.text = answer.text
        return {
            family.name: [
                ({**s.labels, **({"sample": s.name} if s.name != family.name else {})}, s.value)
                for s in family.samples
            ]
            for family in text_string_to_metric_families(answer.text)
        }


@pytest.fixture
def api(tmp_path: Path) -> Iterator[_Api]:
    made = _Api(tmp_path / "db")
    with made.client:
        yield made


def test_metrics_are_prometheus_text_with_no_secret(api: _Api) -> None:
    """Alice runs two tasks (2 CPUs: a dominant share of 1.0) while bob's job waits;
    after alice's tasks end bob's starts: the gauges, the wait histogram (bob waited the
    10 s of alice's tasks) and the decisions counter say so, and no token, hash, command
    or job name appears."""
    api.submit("alice", _job("secret-alice-job", 2))
    api.step()
    api.submit("bob", _job("bob-job", 1))
    api.step()
    seen = api.metrics()
    assert seen["fairshare_running_tasks"] == [
        ({"tenant": "alice"}, 2.0),
        ({"tenant": "bob"}, 0.0),
    ]
    assert seen["fairshare_pending_jobs"] == [
        ({"tenant": "alice"}, 0.0),
        ({"tenant": "bob"}, 1.0),
    ]
    assert seen["fairshare_share"] == [({"tenant": "alice"}, 1.0), ({"tenant": "bob"}, 0.0)]
    assert seen["fairshare_decisions"] == [({"sample": "fairshare_decisions_total"}, 2.0)]
    counts = {
        labels["tenant"]: value
        for labels, value in seen["fairshare_job_wait_seconds"]
        if labels["sample"] == "fairshare_job_wait_seconds_count"
    }
    assert counts == {"alice": 1.0, "bob": 0.0}
    for secret in (*api.tokens.values(), "secret-alice-job", "true"):
        assert secret not in api.text
    api.service.driver.step(10.0)  # the fake's clock reaches the end of alice's tasks
    seen = api.metrics()
    assert seen["fairshare_running_tasks"] == [
        ({"tenant": "alice"}, 0.0),
        ({"tenant": "bob"}, 1.0),
    ]
    assert seen["fairshare_decisions"] == [({"sample": "fairshare_decisions_total"}, 3.0)]
    counts = {
        labels["tenant"]: value
        for labels, value in seen["fairshare_job_wait_seconds"]
        if labels.get("le") == "+Inf"
    }
    assert counts == {"alice": 1.0, "bob": 1.0}
    under = {
        (labels["tenant"], labels["le"]): value
        for labels, value in seen["fairshare_job_wait_seconds"]
        if "le" in labels
    }
    # alice started at once, bob after alice's 10 s tasks.
    assert under[("alice", "0.1")] == 1.0
    assert under[("bob", "5.0")] == 0.0 and under[("bob", "10.0")] == 1.0
    assert (
        api.client.get("/metrics", headers={"Authorization": "Bearer nonsense"}).status_code == 200
    )


def test_explain_a_live_job_and_another_tenants_is_404(tmp_path: Path) -> None:
    """Bob's job waits for the room alice's two tasks hold: its document is SPEC section
    8.5's (state pending, a fair-share reason naming alice's running tasks); a running job
    is ``running`` with no reasons; alice asking about bob's job gets 404, as for any
    other read. The driver's loop runs on its own thread, as in ``serve``."""
    api = _Api(tmp_path / "db", duration=1e9)
    api.store.acquire()
    first = api.submit("alice", _job("a", 2))
    stop = threading.Event()
    loop = threading.Thread(target=api.service.run, args=(stop, 0.01), daemon=True)
    loop.start()
    try:
        for _ in range(3000):
            if api.service.driver.running() == 2:
                break
            stop.wait(0.01)
        waiting = api.submit("bob", _job("b", 1))
        doc = api.client.get(f"/v1/jobs/{waiting}/explain", headers=api.auth("bob"))
        running = api.client.get(f"/v1/jobs/{first}/explain", headers=api.auth("alice"))
        other = api.client.get(f"/v1/jobs/{waiting}/explain", headers=api.auth("alice"))
    finally:
        stop.set()
        loop.join(30)
        api.store.release()
    assert doc.status_code == 200, doc.text
    why = doc.json()
    assert (why["job"], why["name"], why["policy"], why["state"]) == (
        waiting,
        "b",
        "drf",
        "pending",
    )
    assert [r["kind"] for r in why["reasons"]] == ["fair-share"]
    assert why["reasons"][0]["detail"].endswith("running tasks: alice 2")
    assert why["ahead"] == []  # alice has nothing pending: nobody is served first
    assert why["estimated_start"] is None
    assert running.json()["state"] == "running" and running.json()["reasons"] == []
    assert other.status_code == 404
    assert other.json()["error"] == f"no job '{waiting}'"


def test_fairshare_explain_id_asks_the_live_service(tmp_path: Path) -> None:
    """``fairshare explain ID --server URL --token-file F [--json]`` prints the live
    document; another tenant's id is one ``error:`` line (404); without ``--run`` and
    without a server it says what to give."""
    results: dict[str, object] = {}

    def client(served: Served) -> None:
        import httpx  # noqa: PLC0415

        alice = {"Authorization": f"Bearer {served.tokens['alice']}"}
        bob = {"Authorization": f"Bearer {served.tokens['bob']}"}
        httpx.post(f"{served.url}/v1/jobs", json=_job("big", 2), headers=alice, timeout=30)
        waiting = httpx.post(
            f"{served.url}/v1/jobs", json=_job("small", 1), headers=bob, timeout=30
        ).json()["id"]
        for who in ("alice", "bob"):
            (tmp_path / who).write_text(served.tokens[who] + "\n")
        base = ("--server", served.url)
        results["id"] = waiting
        results["json"] = run_fairshare(
            "explain", waiting, *base, "--token-file", str(tmp_path / "bob"), "--json"
        )
        results["text"] = run_fairshare(
            "explain", waiting, *base, "--token-file", str(tmp_path / "bob")
        )
        results["other"] = run_fairshare(
            "explain", waiting, *base, "--token-file", str(tmp_path / "alice")
        )

    serve_with(tmp_path, client)
    done = results["json"]
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    doc = json.loads(done.stdout)  # type: ignore[attr-defined]
    assert (doc["job"], doc["name"], doc["state"]) == (results["id"], "small", "pending")
    assert set(doc) >= {"job", "state", "reasons", "ahead", "estimated_start"}
    text = results["text"].stdout  # type: ignore[attr-defined]
    assert text.startswith(f"{results['id']} (small, drf, live): pending\n")
    line = assert_rejected(results["other"])  # type: ignore[arg-type]
    assert line.endswith(f"HTTP 404: no job '{results['id']}'")
    line = assert_rejected(run_fairshare("explain", "x"))
    assert line.startswith("error: command line: --run: missing: give --run DIR")


def test_admin_tokens_are_revocable_over_the_api(api: _Api) -> None:
    """``DELETE /v1/tenants/NAME/tokens?admin=true`` revokes the administrator tokens made
    for NAME: the next request with one is 401; without ``admin`` only a tenant's tokens
    go (an administrator's name is no tenant: 404)."""
    second = api.store.add_token("ops", admin=True)
    ops = {"Authorization": f"Bearer {second}"}
    assert api.client.get("/v1/tenants", headers=ops).status_code == 200
    answer = api.client.delete("/v1/tenants/ops/tokens", headers=api.auth("admin"))
    assert answer.status_code == 404 and answer.json()["error"] == "no tenant 'ops' with tokens"
    answer = api.client.delete("/v1/tenants/ops/tokens?admin=true", headers=api.auth("admin"))
    assert answer.status_code == 204
    assert api.client.get("/v1/tenants", headers=ops).status_code == 401
    assert api.client.get("/v1/tenants", headers=api.auth("admin")).status_code == 200
    answer = api.client.delete("/v1/tenants/root/tokens?admin=true", headers=api.auth("bob"))
    assert answer.status_code == 403
    answer = api.client.delete("/v1/tenants/root/tokens?admin=true", headers=api.auth("admin"))
    assert answer.status_code == 204
    assert api.client.get("/v1/tenants", headers=api.auth("admin")).status_code == 401


def test_tenant_revoke_on_the_command_line(tmp_path: Path) -> None:
    """``fairshare tenant revoke NAME --db PATH [--admin]``: the tokens stop working (a
    leaked administrator token included); a name without tokens is one ``error:`` line."""
    db = tmp_path / "db"
    store = Store(db)
    admin = store.add_token("root", admin=True)
    tenant = store.add_token("alice")
    done = run_fairshare("tenant", "revoke", "root", "--db", str(db))
    line = assert_rejected(done)
    assert line == f"error: {db}: NAME: no tenant 'root' with tokens"
    assert store.caller(admin) is not None
    done = run_fairshare("tenant", "revoke", "root", "--admin", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "revoked 1 token of administrator root\n"
    assert store.caller(admin) is None and store.caller(tenant) is not None
    done = run_fairshare("tenant", "revoke", "alice", "--db", str(db))
    assert done.stdout == "revoked 1 token of tenant alice\n"
    assert store.caller(tenant) is None


def test_a_sigterm_right_after_the_announcement_stops_the_service(tmp_path: Path) -> None:
    """A supervisor signals as soon as it has read the announcement; the signal used to
    arrive before uvicorn's own handlers were in place and was only noted, so the service
    ran on (a restarted service stopped at once never ended). Now it ends, with its lease
    released."""
    import signal  # noqa: PLC0415

    lines: list[str] = []

    def announce(line: str) -> None:
        lines.append(line)
        signal.raise_signal(signal.SIGTERM)  # in the main thread, before uvicorn starts

    _, log = serve_with(
        tmp_path,
        lambda served: None,
        ready=lambda url: None,
        announce=announce,
        signal_at_end=False,
    )
    assert len(lines) == 1 and lines[0].startswith("fairshare serve: drf on 1 node, http://")
    assert log.policy == "drf"
    again = Store(tmp_path / "db")
    again.acquire()  # the first service's lease was released
    again.release()
    again.close()
