"""The live service on a real Ray cluster (``ray.cluster_utils.Cluster``: a head without CPUs
and two nodes with custom resources and labels), marked ``ray``: run by ``python -m pytest``
wherever the ``[ray]`` extra is installed (``-m "not ray"`` leaves them out).

Two tenants with DRF get the split the exact solver predicts (within one task); H-DRF with
queues likewise; a constrained tenant lands only on matching nodes; a node removed mid-run
loses no task; the service killed with SIGKILL mid-run and restarted finishes every job;
tenant A cannot see or cancel tenant B's jobs; bad tokens, bodies, sizes and fields are 4xx
and change nothing; ``--out`` writes the run's files on SIGTERM.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from ray.cluster_utils import Cluster as RayCluster  # noqa: E402

import fairshare  # noqa: E402
from fairshare.backends import Journal, LiveDriver, LiveJob  # noqa: E402
from fairshare.backends.ray_cluster import RayExecutor  # noqa: E402
from fairshare.cluster import Cluster  # noqa: E402
from fairshare.cluster.constraints import Constraint  # noqa: E402
from fairshare.policies import make_policy  # noqa: E402
from fairshare.service.store import Store  # noqa: E402
from fairshare.workload.loader import parse_scenario  # noqa: E402
from fairshare.workload.model import Queue, User  # noqa: E402

pytestmark = pytest.mark.ray

NODE = {"x": 3.0, "y": 2.0}
"""Each worker node's custom resources (Ray's CPUs are not used by the tasks)."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    made = RayCluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    made.add_node(num_cpus=2, resources=NODE, labels={"rack": "r1", "gpu": "true"})
    made.add_node(num_cpus=2, resources=NODE, labels={"rack": "r2"})
    made.wait_for_nodes()
    try:
        yield made
    finally:
        if ray.is_initialized():
            ray.shutdown()
        made.shutdown()


@pytest.fixture(scope="module")
def executor(cluster: RayCluster) -> Iterator[RayExecutor]:
    made = RayExecutor(cluster.address, ("x", "y"))
    yield made
    made.close()


def _driver(
    executor: RayExecutor,
    policy: str,
    users: list[User],
    queues: tuple[Queue, ...] = (),
) -> LiveDriver:
    sched = make_policy(
        policy, Cluster.build(executor.resources, executor.nodes()), users=users, queues=queues
    )
    return LiveDriver(sched, executor, users=users, poll_interval=0.2)


def _job(job_id: str, tenant: str, tasks: int, demand: dict[str, float], *argv: str) -> LiveJob:
    return LiveJob(job_id, tenant, job_id, tasks, demand, argv or ("sleep", "60"))


def _settle(driver: LiveDriver, steps: int = 40) -> dict[str, tuple[int, float]]:
    """Steps until a round launches nothing more (the cluster is full); the shares then."""
    last = -1
    for _ in range(steps):
        driver.step(0.1)
        if driver.running() == last:
            break
        last = driver.running()
    return driver.shares()


def _finish(driver: LiveDriver, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while driver.active() and time.monotonic() < deadline:
        driver.step(0.1)


def _cancel_all(driver: LiveDriver, *job_ids: str) -> None:
    for job_id in job_ids:
        driver.cancel(job_id)
    driver.step(0.0)


def _solve(
    users: list[dict[str, Any]], policy: str, queues: list[dict[str, Any]] = ()
) -> dict[str, float]:  # type: ignore[assignment]
    machines = [{"name": f"n{i}", "capacity": dict(NODE)} for i in range(2)]
    scenario = {"machines": machines, "users": users, "queues": list(queues)}
    return fairshare.solve(parse_scenario(scenario, "test"), policy, integral=True).tasks_by_user()


def test_two_tenants_with_drf_get_the_exact_solvers_split(executor: RayExecutor) -> None:
    demands = {"a": {"x": 1.0, "y": 0.25}, "b": {"x": 0.5, "y": 1.0}}
    users = [User(name, np.array([d["x"], d["y"]])) for name, d in demands.items()]
    driver = _driver(executor, "drf", users)
    driver.submit(_job("ja", "a", 20, demands["a"]))
    driver.submit(_job("jb", "b", 20, demands["b"]))
    shares = _settle(driver)
    predicted = _solve([{"name": n, "demand": d} for n, d in demands.items()], "drf")
    # Ray's own accounting agrees with the policy's: what it holds is what was launched.
    held = {r: sum(shares[n][0] * d[r] for n, d in demands.items()) for r in ("x", "y")}

    def ray_holds() -> dict[str, float]:
        free = ray.available_resources()
        return {r: 2 * NODE[r] - free.get(r, 0.0) for r in ("x", "y")}

    _wait(lambda: ray_holds() == pytest.approx(held), seconds=30)
    assert ray_holds() == pytest.approx(held)
    _cancel_all(driver, "ja", "jb")
    for name in demands:
        assert abs(shares[name][0] - predicted[name]) <= 1, (shares, predicted)
    assert shares["a"][0] + shares["b"][0] >= 5
    assert driver.running() == 0


def test_hdrf_with_queues_gets_the_exact_solvers_split(executor: RayExecutor) -> None:
    demand = {"x": 1.0, "y": 0.25}
    queues = (Queue("q1", weight=2.0), Queue("q2", weight=1.0))
    specs = [("a1", "q1"), ("a2", "q1"), ("b", "q2")]
    users = [User(name, np.array([1.0, 0.25]), queue=queue) for name, queue in specs]
    driver = _driver(executor, "hdrf", users, queues)
    for name, _ in specs:
        driver.submit(_job(f"j{name}", name, 20, demand))
    shares = _settle(driver)
    predicted = _solve(
        [{"name": n, "demand": demand, "queue": q} for n, q in specs],
        "hdrf",
        [{"path": "q1", "weight": 2}, {"path": "q2", "weight": 1}],
    )
    _cancel_all(driver, *(f"j{name}" for name, _ in specs))
    for name, _ in specs:
        assert abs(shares[name][0] - predicted[name]) <= 1, (shares, predicted)
    q1 = shares["a1"][0] + shares["a2"][0]
    assert q1 > shares["b"][0]


def test_a_constrained_tenant_lands_only_on_matching_nodes(executor: RayExecutor) -> None:
    users = [
        User("gpu-user", np.array([1.0, 0.0]), constraint=Constraint("gpu")),
        User("r2-user", np.array([1.0, 0.0])),
    ]
    driver = _driver(executor, "drf", users)
    driver.submit(_job("g", "gpu-user", 4, {"x": 1.0}, "true"))
    driver.submit(LiveJob("r", "r2-user", "r", 4, {"x": 1.0}, ("true",), constraint="rack == 'r2'"))
    _finish(driver)
    assert not driver.active()
    nodes = {m.name: m for m in executor.nodes()}
    log = driver.log("drf", 0.0)
    placed = {(a.job, nodes[a.machine].rack) for a in log.attempts}
    assert placed == {("g", "r1"), ("r", "r2")}
    assert all(j.finish is not None for j in log.jobs)


def test_a_node_removed_mid_run_loses_no_task(cluster: RayCluster, executor: RayExecutor) -> None:
    extra = cluster.add_node(num_cpus=1, resources=NODE, labels={"rack": "r3"})
    cluster.wait_for_nodes()
    users = [User("a", np.array([1.0, 0.0]))]
    driver = _driver(executor, "drf", users)
    driver.step(0.0)
    r3 = [m.name for m in executor.nodes() if m.rack == "r3"]
    assert len(r3) == 1 and r3[0] in driver.machines
    job = LiveJob(
        "j",
        "a",
        "j",
        6,
        {"x": 1.0},
        ("sleep", "2"),
        constraint="rack in ['r1', 'r3']",
        max_retries=0,
    )
    driver.submit(job)
    _settle(driver, steps=10)
    log = driver.log("drf", 0.0)
    assert {a.machine for a in log.attempts} >= {r3[0]}
    cluster.remove_node(extra)
    _finish(driver)
    assert not driver.active()
    log = driver.log("drf", 0.0)
    done = sorted(a.task for a in log.attempts if not a.killed and not a.truncated)
    assert done == list(range(6))
    lost = [a for a in log.attempts if a.killed]
    assert lost and all(a.machine == r3[0] for a in lost)
    assert log.jobs[0].finish is not None
    assert r3[0] not in driver.machines


class _Ends(Journal):
    def __init__(self) -> None:
        self.ended: list[tuple[str, str, str | None]] = []

    def job_ended(self, job: str, state: str, error: str | None = None) -> None:  # type: ignore[override]
        self.ended.append((job, state, error))


def test_a_failing_command_is_retried_then_fails_its_job_with_its_error(
    executor: RayExecutor,
) -> None:
    users = [User("a", np.array([1.0, 0.0]))]
    sched = make_policy("drf", Cluster.build(executor.resources, executor.nodes()), users=users)
    journal = _Ends()
    driver = LiveDriver(sched, executor, users=users, journal=journal, poll_interval=0.2)
    command = ("sh", "-c", 'echo "no input for $FAIRSHARE_TASK_INDEX" >&2; exit 3')
    driver.submit(LiveJob("bad", "a", "bad", 1, {"x": 1.0}, command, max_retries=1))
    driver.submit(LiveJob("good", "a", "good", 2, {"x": 1.0}, ("true",)))
    _finish(driver)
    assert sorted(journal.ended) == [
        ("bad", "failed", "task 0 failed 2 times: exit code 3: no input for 0"),
        ("good", "finished", None),
    ]
    attempts = [(a.job, a.attempt, a.killed) for a in driver.log("drf", 0.0).attempts]
    assert sorted(x for x in attempts if x[0] == "bad") == [("bad", 0, True), ("bad", 1, True)]


# ---------------------------------------------------------------------- the service process

SCENARIO = """
users:
  - {name: alice, weight: 1}
  - {name: bob, weight: 1}
"""


class _Service:
    """``fairshare serve`` in a subprocess on the test cluster."""

    def __init__(self, root: Path, address: str, *extra: str) -> None:
        self.log = (root / "serve.log").open("a")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fairshare",
                "serve",
                str(root / "scenario.yaml"),
                "--policy",
                "drf",
                "--db",
                str(root / "db"),
                "--ray",
                address,
                "--port",
                "0",
                # Tasks run as users of their own where the workers may switch (root).
                *(() if os.geteuid() == 0 else ("--insecure-same-user",)),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stderr is not None
        self.url = ""
        for line in self.process.stderr:
            self.log.write(line)
            found = re.search(r"(http://[\d.]+:\d+)", line)
            if line.startswith("fairshare serve:") and found:
                self.url = found.group(1)
                break
        assert self.url, (root / "serve.log").read_text()

    def stop(self, signum: int) -> int:
        self.process.send_signal(signum)
        assert self.process.stderr is not None
        rest = self.process.stderr.read()
        self.log.write(rest)
        self.log.close()
        return self.process.wait(timeout=60)


def _wait(check: Any, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not check():
        time.sleep(0.2)


def test_the_service_killed_mid_run_resumes_every_job_and_keeps_tenants_apart(
    cluster: RayCluster, tmp_path: Path
) -> None:
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    store = Store(tmp_path / "db")
    tokens = {name: store.add_token(name) for name in ("alice", "bob")}
    store.close()
    auth = {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}
    service = _Service(tmp_path, cluster.address)
    http = httpx.Client(base_url=service.url, timeout=30)
    body = {"name": "a", "tasks": 8, "demand": {"x": 1}, "command": ["sleep", "2"]}
    a = http.post("/v1/jobs", json=body, headers=auth["alice"]).json()["id"]
    b_body = {**body, "name": "b", "tasks": 4, "demand": {"y": 1}}
    b = http.post("/v1/jobs", json=b_body, headers=auth["bob"]).json()["id"]
    # Tenants apart: bob can neither read nor cancel alice's job.
    assert http.get(f"/v1/jobs/{a}", headers=auth["bob"]).status_code == 404
    assert http.delete(f"/v1/jobs/{a}", headers=auth["bob"]).status_code == 404
    assert [j["id"] for j in http.get("/v1/jobs", headers=auth["bob"]).json()["jobs"]] == [b]
    # Refused requests change nothing.
    refused = [
        http.post("/v1/jobs", json=body, headers={"Authorization": "Bearer nope"}),
        http.post("/v1/jobs", json={**body, "user": "bob"}, headers=auth["alice"]),
        http.post("/v1/jobs", json={**body, "tasks": "8"}, headers=auth["alice"]),
        http.post("/v1/jobs", json={**body, "command": ["x" * (1 << 21)]}, headers=auth["alice"]),
    ]
    assert [r.status_code for r in refused] == [401, 422, 422, 413]
    assert len(http.get("/v1/jobs", headers=auth["alice"]).json()["jobs"]) == 1

    def progressed() -> bool:
        job = http.get(f"/v1/jobs/{a}", headers=auth["alice"]).json()
        return job["tasks"]["finished"] >= 1 and job["tasks"]["running"] >= 1

    _wait(progressed)
    before = http.get(f"/v1/jobs/{a}", headers=auth["alice"]).json()["tasks"]
    assert before["finished"] >= 1 and before["running"] >= 1
    service.stop(signal.SIGKILL)
    http.close()

    again = _Service(tmp_path, cluster.address, "--out", str(tmp_path / "out"))
    http = httpx.Client(base_url=again.url, timeout=30)

    def ended() -> bool:
        states = {
            j["state"]
            for name in ("alice", "bob")
            for j in http.get("/v1/jobs", headers=auth[name]).json()["jobs"]
        }
        return states == {"finished"}

    _wait(ended)
    jobs = {
        j["id"]: j
        for name in ("alice", "bob")
        for j in http.get("/v1/jobs", headers=auth[name]).json()["jobs"]
    }
    assert {k: (j["state"], j["tasks"]["finished"]) for k, j in jobs.items()} == {
        a: ("finished", 8),
        b: ("finished", 4),
    }
    shares = http.get("/v1/shares", headers=auth["bob"]).json()
    assert shares["policy"] == "drf" and set(shares["users"]) == {"alice", "bob"}
    http.close()
    assert again.stop(signal.SIGTERM) == 0
    # The restarted service's files hold the jobs it ran: those unfinished at the kill
    # (alice's surely: it had tasks running; bob's unless it had finished by then).
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["policy"] == "drf"
    rows = (tmp_path / "out" / "jobs.csv").read_text().splitlines()
    assert rows[0].startswith("job,user,submit,first_start,finish")
    ran = {r.split(",")[0] for r in rows[1:]}
    assert a in ran and ran <= {a, b}
    assert summary["jobs"] == len(ran)
    assert {"timeline.csv", "tasks.parquet", "report.html"} <= {
        p.name for p in (tmp_path / "out").iterdir()
    }
