"""The HTTP API (SPEC section 6) over the fake executor, through a real HTTP client: tokens,
tenants isolated, refused requests (bad tokens, bad bodies, oversized bodies, unknown
fields) answered with a clear 4xx and changing nothing, and the OpenAPI schema."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from fairshare.backends import FakeExecutor, LiveDriver
from fairshare.cluster import Cluster, Machine
from fairshare.policies import make_policy
from fairshare.service.app import create_app
from fairshare.service.core import Limits, LiveService
from fairshare.service.journal import StoreJournal
from fairshare.service.store import Store
from fairshare.workload.model import User

RESOURCES = ("cpu", "mem")
USERS = [User("alice", np.array([1.0, 1.0])), User("bob", np.array([1.0, 1.0]))]
JOB = {"name": "j", "tasks": 3, "demand": {"cpu": 1}, "command": ["echo", "hi"]}


class _Api:
    def __init__(self, db: Path) -> None:
        store = Store(db)
        self.fake = FakeExecutor(
            RESOURCES, [Machine("n0", np.array([2.0, 4.0]))], duration=lambda s: 5.0
        )
        policy = make_policy("drf", Cluster.build(RESOURCES, self.fake.nodes()), users=USERS)
        driver = LiveDriver(
            policy, self.fake, users=USERS, journal=StoreJournal(store), poll_interval=0
        )
        self.service = LiveService(
            store, driver, policy="drf", users=USERS, limits=Limits(max_body_bytes=4096)
        )
        self.client = TestClient(create_app(self.service))
        self.alice = {"Authorization": f"Bearer {store.add_token('alice')}"}
        self.bob = {"Authorization": f"Bearer {store.add_token('bob')}"}
        self.admin = {"Authorization": f"Bearer {store.add_token('admin', admin=True)}"}

    def step(self) -> None:
        self.service.driver.step(0.0)

    def all_jobs(self) -> int:
        return len(self.service.store.jobs(None))


@pytest.fixture
def api(tmp_path: Path) -> Iterator[_Api]:
    made = _Api(tmp_path / "db")
    with made.client:
        yield made


def test_health_needs_no_token(api: _Api) -> None:
    answer = api.client.get("/healthz")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "policy": "drf"}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer fs_not-a-token"},
        {"Authorization": "Basic YWxpY2U6eA=="},
        {"Authorization": "Bearer "},
    ],
)
def test_a_missing_or_wrong_token_is_401_whatever_the_body(
    api: _Api, headers: dict[str, str]
) -> None:
    for method, path, body in (
        ("POST", "/v1/jobs", JOB),
        ("POST", "/v1/jobs", {"bad": 1}),
        ("GET", "/v1/jobs", None),
        ("GET", "/v1/shares", None),
        ("DELETE", "/v1/jobs/abc", None),
        ("POST", "/v1/tenants", {"name": "bob"}),
    ):
        answer = api.client.request(method, path, json=body, headers=headers)
        assert answer.status_code == 401, (method, path)
        assert answer.headers["www-authenticate"] == "Bearer"
        assert answer.json()["error"] == "missing or invalid bearer token"
    assert api.all_jobs() == 0


def test_submit_read_list_and_cancel(api: _Api) -> None:
    answer = api.client.post("/v1/jobs", json=JOB, headers=api.alice)
    assert answer.status_code == 201
    job_id = answer.json()["id"]
    assert list(answer.json()) == ["id"]
    api.step()
    got = api.client.get(f"/v1/jobs/{job_id}", headers=api.alice).json()
    assert got["id"] == job_id and got["name"] == "j" and got["state"] == "running"
    assert got["tasks"] == {"pending": 1, "running": 2, "finished": 0, "failed": 0, "cancelled": 0}
    assert got["submitted"].endswith("Z") and got["finished"] is None
    assert got["command"] == ["echo", "hi"] and got["demand"] == {"cpu": 1.0}
    listed = api.client.get("/v1/jobs", headers=api.alice).json()
    assert [j["id"] for j in listed["jobs"]] == [job_id]
    shares = api.client.get("/v1/shares", headers=api.bob).json()
    assert shares == {
        "policy": "drf",
        "users": {
            "alice": {"running_tasks": 2, "share": 1.0},
            "bob": {"running_tasks": 0, "share": 0.0},
        },
    }
    assert api.client.delete(f"/v1/jobs/{job_id}", headers=api.alice).status_code == 204
    got = api.client.get(f"/v1/jobs/{job_id}", headers=api.alice).json()
    assert got["state"] == "cancelled" and got["finished"] is not None
    api.step()
    assert sorted(api.fake.cancelled) == [f"{job_id}:0:0", f"{job_id}:1:0"]
    # Cancelling again changes nothing.
    assert api.client.delete(f"/v1/jobs/{job_id}", headers=api.alice).status_code == 204


def test_another_tenants_job_is_404_on_read_and_on_cancel(api: _Api) -> None:
    job_id = api.client.post("/v1/jobs", json=JOB, headers=api.alice).json()["id"]
    assert api.client.get(f"/v1/jobs/{job_id}", headers=api.bob).status_code == 404
    assert api.client.delete(f"/v1/jobs/{job_id}", headers=api.bob).status_code == 404
    assert api.client.get("/v1/jobs", headers=api.bob).json() == {"jobs": [], "next": None}
    assert api.client.get(f"/v1/jobs/{job_id}", headers=api.alice).json()["state"] == "pending"
    assert api.client.get("/v1/jobs/nope", headers=api.alice).status_code == 404
    assert api.client.get(f"/v1/jobs/{job_id}", headers=api.admin).status_code == 200


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({**JOB, "tenant": "bob"}, "tenant"),
        ({**JOB, "tasks": "3"}, "tasks"),
        ({**JOB, "tasks": 2.5}, "tasks"),
        ({**JOB, "tasks": 0}, "tasks"),
        ({**JOB, "command": "echo hi"}, "command"),
        ({**JOB, "command": ["echo", 3]}, "command[1]"),
        ({**JOB, "demand": {"gpu": 1}}, "demand.gpu"),
        ({**JOB, "demand": {"cpu": "1"}}, "demand.cpu"),
        ({**JOB, "constraint": "rack =="}, "constraint"),
        ({k: v for k, v in JOB.items() if k != "command"}, "command"),
        ([1, 2], "body"),
    ],
)
def test_a_malformed_body_is_422_with_the_field_path(api: _Api, body: object, where: str) -> None:
    answer = api.client.post("/v1/jobs", json=body, headers=api.alice)
    assert answer.status_code == 422
    doc = answer.json()
    assert doc["error"].startswith(f"{where}: "), doc
    assert doc["detail"]
    assert api.all_jobs() == 0


def test_not_json_is_422(api: _Api) -> None:
    answer = api.client.post(
        "/v1/jobs",
        content=b"{not json",
        headers={**api.alice, "Content-Type": "application/json"},
    )
    assert answer.status_code == 422
    assert api.all_jobs() == 0


def test_an_oversized_body_is_413_declared_or_streamed(api: _Api) -> None:
    big = {**JOB, "command": ["x" * 5000]}
    answer = api.client.post("/v1/jobs", json=big, headers=api.alice)
    assert answer.status_code == 413
    assert answer.json()["error"] == "body: is larger than 4096 bytes (the limit)"

    def chunks() -> Iterator[bytes]:
        yield b'{"name": "j", "tasks": 1, "demand": {"cpu": 1}, "command": ["'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"]}'

    answer = api.client.post(
        "/v1/jobs", content=chunks(), headers={**api.alice, "Content-Type": "application/json"}
    )
    assert answer.status_code == 413
    assert api.all_jobs() == 0


def test_the_pending_jobs_limit_is_429(api: _Api) -> None:
    api.service.limits = Limits(max_pending_jobs=1)
    assert api.client.post("/v1/jobs", json=JOB, headers=api.alice).status_code == 201
    answer = api.client.post("/v1/jobs", json=JOB, headers=api.alice)
    assert answer.status_code == 429
    assert "limit" in answer.json()["error"]
    assert api.all_jobs() == 1


def test_the_admin_token_manages_tenants(api: _Api) -> None:
    assert api.client.post("/v1/jobs", json=JOB, headers=api.admin).status_code == 403
    assert api.client.get("/v1/tenants", headers=api.alice).status_code == 403
    answer = api.client.post("/v1/tenants", json={"name": "bob"}, headers=api.admin)
    assert answer.status_code == 201
    token = answer.json()["token"]
    assert (
        api.client.get("/v1/jobs", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    )
    assert api.client.get("/v1/tenants", headers=api.admin).json() == {
        "tenants": {"alice": {"tokens": 1}, "bob": {"tokens": 2}}
    }
    unknown = api.client.post("/v1/tenants", json={"name": "mallory"}, headers=api.admin)
    assert unknown.status_code == 422 and unknown.json()["error"].startswith("name: ")
    assert api.client.delete("/v1/tenants/bob/tokens", headers=api.admin).status_code == 204
    assert (
        api.client.get("/v1/jobs", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    )
    assert api.client.get("/v1/jobs", headers=api.bob).status_code == 401


def test_the_openapi_schema_is_published(api: _Api) -> None:
    schema = api.client.get("/openapi.json").json()
    assert {"/v1/jobs", "/v1/jobs/{job_id}", "/v1/shares", "/healthz"} <= set(schema["paths"])
    assert set(schema["paths"]["/v1/jobs"]) == {"get", "post"}
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    job_in = schema["components"]["schemas"]["JobIn"]
    assert job_in["additionalProperties"] is False
    assert set(job_in["required"]) == {"name", "tasks", "demand", "command"}


def test_a_job_runs_to_the_end_through_the_api(api: _Api) -> None:
    job_id = api.client.post("/v1/jobs", json=JOB, headers=api.alice).json()["id"]
    for _ in range(10):
        api.service.driver.step(math.inf)
    got = api.client.get(f"/v1/jobs/{job_id}", headers=api.alice).json()
    assert got["state"] == "finished"
    assert got["tasks"]["finished"] == 3
