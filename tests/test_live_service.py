"""The scheduler service's core on the fake executor: the durable store (every state written,
tokens hashed), a restart from the database that loses no job, tenants isolated from each
other, and refused requests that change nothing."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from fairshare.backends import FakeExecutor, LiveDriver
from fairshare.cluster import Cluster, Machine
from fairshare.policies import make_policy
from fairshare.service.core import JobRequest, Limits, LiveService, ServiceError
from fairshare.service.journal import StoreJournal
from fairshare.service.store import Caller, Store, StoreError, hash_token
from fairshare.workload.model import User

RESOURCES = ("cpu", "mem")
USERS = [User("alice", np.array([1.0, 1.0])), User("bob", np.array([1.0, 1.0]))]
ALICE = Caller("alice", admin=False)
BOB = Caller("bob", admin=False)
ADMIN = Caller("admin", admin=True)


def _service(
    db: Path, *, seconds: float = 10.0, limits: Limits | None = None
) -> tuple[LiveService, FakeExecutor]:
    store = Store(db)
    fake = FakeExecutor(
        RESOURCES,
        [Machine(f"n{i}", np.array([2.0, 4.0])) for i in range(2)],
        duration=lambda spec: seconds,
    )
    policy = make_policy("drf", Cluster.build(RESOURCES, fake.nodes()), users=USERS)
    driver = LiveDriver(policy, fake, users=USERS, journal=StoreJournal(store), poll_interval=0)
    return LiveService(store, driver, policy="drf", users=USERS, limits=limits), fake


def _request(name: str = "j", tasks: int = 4, **extra: object) -> JobRequest:
    fields: dict[str, object] = {
        "name": name,
        "tasks": tasks,
        "demand": {"cpu": 1.0},
        "command": ["true"],
    }
    fields.update(extra)
    return JobRequest(**fields)  # type: ignore[arg-type]


def _finish(service: LiveService, fake: FakeExecutor) -> None:
    for _ in range(1000):
        service.driver.step(math.inf)
        if fake.idle() and not service.driver.active():
            return
    raise AssertionError("the jobs did not end")


def test_jobs_and_task_states_are_written_as_they_change(tmp_path: Path) -> None:
    service, fake = _service(tmp_path / "db")
    a = service.submit(ALICE, _request("a", 6))
    row = service.job(ALICE, a)
    assert (row.state, row.tasks["pending"], row.finished) == ("pending", 6, None)
    service.driver.step(0.0)
    row = service.job(ALICE, a)
    assert row.state == "running"
    assert (row.tasks["running"], row.tasks["pending"]) == (4, 2)
    _finish(service, fake)
    row = service.job(ALICE, a)
    assert row.state == "finished" and row.tasks["finished"] == 6 and row.finished is not None


def test_a_restart_replays_every_unfinished_job_and_reruns_only_what_was_running(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db"
    first, fake = _service(db)
    a = first.submit(ALICE, _request("a", 6))
    b = first.submit(BOB, _request("b", 3))
    one = first.submit(BOB, _request("one", 1))
    cancelled = first.submit(ALICE, _request("gone", 2))
    first.cancel(ALICE, cancelled)
    first.driver.step(0.0)
    first.driver.step(10.0)  # the first round finishes; the second is running
    before = {j.id: dict(j.tasks) for j in first.jobs(ADMIN)}
    assert before[a]["finished"] + before[b]["finished"] + before[one]["finished"] == 4
    running = {(s.job, s.index) for key, (_, _, s) in fake.running.items()}
    assert len(running) == 4
    # The service dies here (nothing more is written); a new one opens the same database.
    second, fake2 = _service(db)
    assert second.recover() == 3
    _finish(second, fake2)
    states = {j.id: j.state for j in second.jobs(ADMIN)}
    assert states == {a: "finished", b: "finished", one: "finished", cancelled: "cancelled"}
    rerun = {(s.job, s.index) for _, _, s in fake2.launched}
    finished_before = {
        (str(job), int(idx))
        for job, idx in sqlite3.connect(db).execute(
            "SELECT job, idx FROM tasks WHERE state = 'finished'"
        )
    }
    assert len(finished_before) == 10
    # At least once: what ran at the crash ran again; nothing that had finished did.
    assert running <= rerun
    assert len(rerun) == 10 - 4


def test_tokens_are_stored_hashed(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    token = store.add_token("alice")
    admin = store.add_token("admin", admin=True)
    assert store.caller(token) == ALICE
    assert store.caller(admin) == Caller("admin", admin=True)
    assert store.caller(token + "x") is None
    raw = (tmp_path / "db").read_bytes() + (tmp_path / "db-wal").read_bytes()
    assert token.encode() not in raw
    assert hash_token(token).encode() in raw


def test_a_tenant_cannot_see_or_cancel_another_tenants_job(tmp_path: Path) -> None:
    service, _ = _service(tmp_path / "db")
    a = service.submit(ALICE, _request("a"))
    for call in (service.job, service.cancel):
        with pytest.raises(ServiceError) as err:
            call(BOB, a)
        assert err.value.status == 404
    assert [j.id for j in service.jobs(BOB)] == []
    assert [j.id for j in service.jobs(ALICE)] == [a]
    assert service.job(ALICE, a).state == "pending"
    assert service.job(ADMIN, a).tenant == "alice"


@pytest.mark.parametrize(
    ("request_", "where"),
    [
        (_request(tasks=0), "tasks"),
        (_request(demand={"gpu": 1.0}), "demand.gpu"),
        (_request(demand={"cpu": math.nan}), "demand.cpu"),
        (_request(demand={"cpu": 0.0}), "demand"),
        (_request(command=[]), "command"),
        (_request(command=[""]), "command[0]"),
        (_request(command=["a", "b\0c"]), "command[1]"),
        (_request(constraint="gpu and"), "constraint"),
        (_request(max_retries=-1), "max_retries"),
        (_request(name=""), "name"),
    ],
)
def test_bad_requests_are_refused_and_change_nothing(
    tmp_path: Path, request_: JobRequest, where: str
) -> None:
    service, _ = _service(tmp_path / "db")
    with pytest.raises(ServiceError) as err:
        service.submit(ALICE, request_)
    assert (err.value.status, err.value.where) == (422, where)
    assert service.jobs(ADMIN) == []
    service.driver.step(0.0)
    assert not service.driver.active()


def test_limits_and_roles(tmp_path: Path) -> None:
    service, _ = _service(tmp_path / "db", limits=Limits(max_pending_jobs=2))
    service.submit(ALICE, _request())
    service.submit(ALICE, _request())
    with pytest.raises(ServiceError) as err:
        service.submit(ALICE, _request())
    assert err.value.status == 429
    assert len(service.jobs(ALICE)) == 2
    service.submit(BOB, _request())  # the limit is per tenant
    for caller in (ADMIN, Caller("mallory", admin=False)):
        with pytest.raises(ServiceError) as err:
            service.submit(caller, _request())
        assert err.value.status == 403
    with pytest.raises(ServiceError) as err:
        service.add_tenant(ALICE, "bob")
    assert err.value.status == 403
    token = service.add_tenant(ADMIN, "bob")
    assert service.store.caller(token) == BOB
    with pytest.raises(ServiceError) as err:
        service.add_tenant(ADMIN, "mallory")
    assert (err.value.status, err.value.where) == (422, "name")
    assert service.tenants(ADMIN) == {"bob": 1}
    service.revoke(ADMIN, "bob")
    assert service.store.caller(token) is None


def test_a_job_that_fails_keeps_its_error(tmp_path: Path) -> None:
    service, fake = _service(tmp_path / "db")
    fake.failure = lambda spec: "exit code 2: no such file" if spec.index == 1 else None
    job = service.submit(ALICE, _request("a", 3, max_retries=1))
    _finish(service, fake)
    row = service.job(ALICE, job)
    assert row.state == "failed"
    assert row.error == "task 1 failed 2 times: exit code 2: no such file"
    assert row.tasks["failed"] == 1
    assert row.tasks["finished"] + row.tasks["cancelled"] == 2


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db"
    path.write_text("not sqlite " * 100)
    with pytest.raises(StoreError):
        Store(path)


def test_a_job_cancelled_while_the_driver_launches_keeps_its_tasks_cancelled(
    tmp_path: Path,
) -> None:
    service, fake = _service(tmp_path / "db")
    job = service.submit(ALICE, _request("a", 3))
    # The cancellation is written, but the driver launches before it reads its inbox.
    service.store.cancel_job_counted(job, actor="alice")
    service.driver.step(0.0)
    row = service.job(ALICE, job)
    assert row.state == "cancelled"
    assert row.tasks["cancelled"] == 3 and row.tasks["running"] == 0
    service.driver.cancel(job)
    _finish(service, fake)
    assert sorted(fake.cancelled) == [f"{job}:{i}:0" for i in range(3)]
    assert service.job(ALICE, job).tasks["cancelled"] == 3
