"""An imported configuration serves (issue 29, SPEC sections 6 and 8.1): the scenario that
``fairshare import kueue|slurm|yarn-fair|yarn-capacity`` writes is the live service's tenant
file as it is, under the policy of the scheduler it came from (``fair`` for YARN's Fair
Scheduler, ``capacity`` for its Capacity Scheduler). Tenants named as the importers name them
(``NAMESPACE/NAME`` for a Kueue LocalQueue, ``ACCOUNT/USER`` for a Slurm user under several
accounts, ``root.a.a1`` for a YARN leaf queue) get tokens, submit, and their jobs run; the
in-process fake executor stands in for Ray (the Ray tier runs the same service on a real
cluster)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fairshare.backends import FakeExecutor, LiveDriver
from fairshare.cluster import Cluster, Machine
from fairshare.policies import make_policy
from fairshare.service.core import JobRequest, LiveService
from fairshare.service.journal import StoreJournal
from fairshare.service.server import load_live_scenario
from fairshare.service.store import Caller, Store

DATA = Path(__file__).parent / "data"
ADMIN = Caller("admin", admin=True)


def _imported(tmp_path: Path, fmt: str, *paths: Path) -> Path:
    """The scenario ``fairshare import FMT PATHS -o FILE`` writes, through the executable."""
    out = tmp_path / f"{fmt}.yaml"
    done = subprocess.run(
        ["fairshare", "import", fmt, *map(str, paths), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def _serve(
    scenario_path: Path, policy: str, resources: tuple[str, ...], nodes: list[Machine]
) -> tuple[LiveService, FakeExecutor]:
    """The service over fake nodes with the imported scenario's tenants and queues."""
    fake = FakeExecutor(resources, nodes, duration=lambda spec: 5.0)
    scenario = load_live_scenario(scenario_path, fake)
    users = list(scenario.users)
    policy_object = make_policy(
        policy, Cluster.build(fake.resources, fake.nodes()), users=users, queues=scenario.queues
    )
    store = Store(scenario_path.with_suffix(".db"))
    driver = LiveDriver(
        policy_object, fake, users=users, journal=StoreJournal(store), poll_interval=0
    )
    return LiveService(store, driver, policy=policy, users=users), fake


def _run_to_end(service: LiveService, fake: FakeExecutor) -> None:
    for _ in range(1000):
        service.driver.step(math.inf)
        if fake.idle() and not service.driver.active():
            return
    raise AssertionError("the jobs did not end")


@pytest.mark.parametrize(
    ("fmt", "files", "policy", "node", "tenants"),
    [
        (
            "kueue",
            ("kueue/flat_no_preemption.yaml",),
            "kueue",
            {"cpu": 8.0},
            ("core/a", "core/b", "core/shared"),
        ),
        (
            "slurm",
            ("slurm/sacctmgr_assoc.txt", "slurm/slurm.conf"),
            "slurm-fairtree",
            {"cpu": 8.0, "mem": 64_000.0, "gpu": 2.0},
            ("physics/alice", "biology/alice", "bob", "frank"),
        ),
        (
            "yarn-fair",
            ("yarn/fair-scheduler-doc.xml",),
            "fair",
            {"mem": 64_000.0, "cpu": 8.0},
            ("root.sample_queue.sample_sub_queue", "root.default"),
        ),
        (
            "yarn-capacity",
            ("yarn/capacity-scheduler-doc.xml",),
            "capacity",
            {"mem": 64_000.0, "cpu": 8.0},
            ("root.a.a1", "root.c"),
        ),
    ],
)
def test_an_imported_scenario_serves_its_tenants_under_its_schedulers_policy(
    tmp_path: Path,
    fmt: str,
    files: tuple[str, ...],
    policy: str,
    node: dict[str, float],
    tenants: tuple[str, ...],
) -> None:
    """Every tenant the importer names gets a token and runs two jobs of two tasks; the
    store ends with every job finished and every task run once."""
    scenario = _imported(tmp_path, fmt, *(DATA / name for name in files))
    resources = tuple(node)
    nodes = [Machine(f"n{i}", np.array(list(node.values()))) for i in range(2)]
    service, fake = _serve(scenario, policy, resources, nodes)
    demand = {"cpu": 1.0, "mem": 1024.0} if "mem" in node else {"cpu": 1.0}
    for tenant in tenants:
        assert service.add_tenant(ADMIN, tenant)
        caller = Caller(tenant, admin=False)
        for k in range(2):
            request = JobRequest(name=f"{tenant}-{k}", tasks=2, demand=demand, command=("true",))
            service.submit(caller, request)
    _run_to_end(service, fake)
    rows = service.jobs(ADMIN)
    assert sorted({row.tenant for row in rows}) == sorted(tenants)
    assert len(rows) == 2 * len(tenants)
    assert {row.state for row in rows} == {"finished"}
    assert all(row.tasks.get("finished") == 2 for row in rows)
