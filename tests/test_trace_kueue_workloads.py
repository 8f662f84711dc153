"""``--trace kueue-workloads:FILE``: Kueue's Workloads as a history
(:mod:`fairshare.workload.traces.kueue_workloads`, docs/scenarios.md#kueue-workloads).

Workloads are written as Kueue's docs show them (site/content/en/docs/concepts/workload.md's
manifest: ``spec.queueName``, ``spec.podSets[].count`` and ``template.spec.containers[]
.resources.requests``) with the status conditions of apis/kueue/v1beta2/workload_types.go
(``QuotaReserved``, ``Admitted``, ``Finished`` with reason ``Succeeded``/``Failed``, set by
pkg/workload/finish/finish.go's ``setFinishedCondition`` with status ``True``).
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from fairshare.cluster import Cluster, Machine
from fairshare.workload.errors import ScenarioError
from fairshare.workload.traces.kueue_workloads import read_kueue_workloads

from conftest import EXAMPLES, assert_rejected, run_fairshare

CLUSTER = Cluster.build(
    ["cpu", "memory", "nvidia.com/gpu"], [Machine("a100", np.array([512.0, 2.0**42, 64.0]))]
)


def condition(kind: str, at: str, status: str = "True", reason: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason or kind, "lastTransitionTime": at}


def workload(
    name: str,
    *,
    namespace: str = "team-a",
    queue: str = "user-queue",
    created: str = "2024-05-01T10:00:00Z",
    conditions: list[dict[str, str]] | None = None,
    pod_sets: list[dict[str, Any]] | None = None,
    priority: int | None = None,
) -> dict[str, Any]:
    if conditions is None:
        conditions = [
            condition("QuotaReserved", "2024-05-01T10:00:30Z"),
            condition("Admitted", "2024-05-01T10:00:30Z"),
            condition("Finished", "2024-05-01T10:10:30Z", reason="Succeeded"),
        ]
    if pod_sets is None:
        pod_sets = [pod_set("main", 3, {"cpu": "500m", "memory": "2Gi"})]
    spec: dict[str, Any] = {"active": True, "queueName": queue, "podSets": pod_sets}
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
        "spec": spec,
        "status": {"conditions": conditions},
    }


def pod_set(name: str, count: int, requests: dict[str, str], **extra: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "registry.k8s.io/e2e-test-images/agnhost:latest"}
    container["resources"] = {"requests": requests}
    return {
        "name": name,
        "count": count,
        "template": {"spec": {"containers": [container], **extra}},
    }


def read(
    tmp_path: Path, *items: dict[str, Any], users: tuple[str, ...] = (), as_json: bool = False
):
    listing = {"apiVersion": "v1", "kind": "List", "items": list(items)}
    path = tmp_path / ("w.json" if as_json else "w.yaml")
    path.write_text(json.dumps(listing) if as_json else yaml.safe_dump(listing))
    jobs = read_kueue_workloads(path, CLUSTER, users)
    return list(jobs), jobs.warnings


@pytest.mark.parametrize("as_json", [False, True], ids=["yaml", "json"])
def test_a_finished_workload_is_a_gang_from_admission_to_finish(
    tmp_path: Path, as_json: bool
) -> None:
    """Kueue admits a Workload whole: 3 pods of 500m CPU and 2Gi start together, run from
    Admitted (10:00:30) to Finished (10:10:30); the tenant is the LocalQueue's user."""
    (job,), warnings = read(tmp_path, workload("job-a", priority=100), as_json=as_json)
    assert (job.name, job.user, job.tasks, job.min_tasks, job.priority) == (
        "team-a/job-a", "team-a/user-queue", 3, 3, 100,
    )  # fmt: skip
    assert job.demand.tolist() == [0.5, 2.0 * 2**30, 0.0]
    assert job.duration.seconds == 600.0
    assert warnings == []


def test_quantities_limits_init_containers_overhead_and_gpus(tmp_path: Path) -> None:
    """Kubernetes' effective pod request: containers summed (limits where no request), at
    least each init container, plus overhead; ``nvidia.com/gpu`` kept by name."""
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1.5", "nvidia.com/gpu": "1"}}},
            {"name": "b", "resources": {"limits": {"cpu": "500m", "memory": "1e3"}}},
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4", "memory": "1Ki"}}}],
        "overhead": {"cpu": "250m"},
    }
    item = workload("w", pod_sets=[{"name": "main", "count": 1, "template": {"spec": spec}}])
    (job,), _ = read(tmp_path, item)
    assert job.demand.tolist() == [4.25, 1024.0, 1.0]


def test_several_pod_sets_give_each_task_the_mean_pod(tmp_path: Path) -> None:
    """A driver of 1 CPU and 4 workers of 2 CPUs and 1 GPU: 5 tasks of 1.8 CPU and 0.8 GPU,
    the total (9 CPUs, 4 GPUs) exact."""
    item = workload(
        "w",
        pod_sets=[
            pod_set("driver", 1, {"cpu": "1"}),
            pod_set("workers", 4, {"cpu": "2", "nvidia.com/gpu": "1"}),
        ],
    )
    (job,), _ = read(tmp_path, item)
    assert job.tasks == 5 and job.min_tasks == 5
    assert job.demand.tolist() == pytest.approx([1.8, 0.0, 0.8])


def test_unfinished_and_never_admitted_workloads_are_skipped_and_counted(tmp_path: Path) -> None:
    """Pending (QuotaReserved False), running (Admitted, no Finished), evicted (Evicted True,
    Admitted False) and finished-without-admission (Finished OwnerNotFound) are skipped."""
    pending = workload(
        "p", conditions=[condition("QuotaReserved", "2024-05-01T10:00:00Z", "False", "Pending")]
    )
    running = workload("r", conditions=[condition("Admitted", "2024-05-01T10:00:30Z")])
    evicted = workload(
        "e",
        conditions=[
            condition("Admitted", "2024-05-01T10:05:00Z", "False", "Preempted"),
            condition("Evicted", "2024-05-01T10:05:00Z", reason="Preempted"),
        ],
    )
    orphan = workload(
        "o", conditions=[condition("Finished", "2024-05-01T10:01:00Z", reason="OwnerNotFound")]
    )
    jobs, warnings = read(tmp_path, workload("done"), pending, running, evicted, orphan)
    assert [j.name for j in jobs] == ["team-a/done"]
    assert warnings == [
        f"warning: {tmp_path / 'w.yaml'}: 4 Workload(s) skipped: 3 not finished (pending, "
        "running, evicted or deactivated: run time unknown), 1 finished without an admission "
        "(never ran); only finished, admitted Workloads are replayed"
    ]


def test_order_times_and_unknown_local_queues(tmp_path: Path) -> None:
    late = workload("late", created="2024-05-01T10:00:00Z")
    early = workload(
        "early",
        namespace="team-b",
        created="2024-05-01T09:59:00+00:00",
        conditions=[
            condition("QuotaReserved", "2024-05-01T09:59:10Z"),
            condition("Finished", "2024-05-01T10:00:10Z", reason="Failed"),
        ],
    )
    jobs, warnings = read(tmp_path, late, early, users=("team-a/user-queue",))
    assert [(j.name, j.submit, j.duration.seconds) for j in jobs] == [
        ("team-b/early", 0.0, 60.0),
        ("team-a/late", 60.0, 600.0),
    ]
    assert warnings[-1].endswith(
        "1 Workload(s) of 1 LocalQueue(s) the scenario lacks ('team-b/user-queue'): each is a "
        "user of its own at the root"
    )


@pytest.mark.parametrize(
    ("item", "where", "what"),
    [
        (
            workload("w", pod_sets=[pod_set("m", 1, {"cpu": "lots"})]),
            "spec.podSets[0].template.spec.containers[0].resources.requests.cpu",
            "must be a quantity",
        ),
        (
            workload("w", pod_sets=[pod_set("m", -1, {"cpu": "1"})]),
            "spec.podSets[0].count",
            "must be a whole number",
        ),
        (workload("w", created="yesterday"), "metadata.creationTimestamp", "must be a time"),
        (workload("w", queue=""), "spec.queueName", "must name a LocalQueue"),
        (workload("w", priority=10**12), "spec.priority", "must be a whole number"),
        (
            workload("w", pod_sets=[pod_set("m", 1, {"ephemeral-storage": "1Gi"})]),
            "spec.podSets",
            "requests none of the scenario's resources",
        ),
        (
            workload("w", created="2024-05-01T11:00:00Z"),
            "status.conditions",
            "must be in that order",
        ),
    ],
)
def test_malformed_workloads_name_the_field(
    tmp_path: Path, item: dict[str, Any], where: str, what: str
) -> None:
    with pytest.raises(ScenarioError) as caught:
        read(tmp_path, item)
    assert caught.value.where.endswith(where), caught.value.where
    assert what in caught.value.what


def test_a_malformed_workload_is_one_error_line_through_the_executable(tmp_path: Path) -> None:
    trace = tmp_path / "w.yaml"
    trace.write_text(yaml.safe_dump({"kind": "List", "items": [workload("w", created="soon")]}))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "machines: [{name: m, capacity: {cpu: 8, memory: 1e12}}]\n".replace("1e12", "1.0e+12")
    )
    done = run_fairshare(
        "simulate", str(scenario), "--policy", "drf", "--trace", f"kueue-workloads:{trace}",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    line = assert_rejected(done)
    assert line.startswith(
        f"error: {trace}: document 1.items[0] (Workload 'team-a/w').metadata.creationTimestamp: "
        "must be a time"
    )


def per_user(jobs_csv: Path) -> Counter[str]:
    with jobs_csv.open() as handle:
        return Counter(record["user"] for record in csv.DictReader(handle))


def p95_waits(jobs_csv: Path) -> dict[str, float]:
    waits: dict[str, list[float]] = {}
    with jobs_csv.open() as handle:
        for record in csv.DictReader(handle):
            waits.setdefault(record["user"], []).append(float(record["queueing_delay"]))
    return {u: sorted(v)[max(0, math.ceil(0.95 * len(v)) - 1)] for u, v in waits.items()}


def test_import_kueue_then_simulate_lands_workloads_in_local_queues_and_the_change_hurts_team_a(
    tmp_path: Path,
) -> None:
    """The shipped example: every finished Workload lands in its LocalQueue's user, and moving
    20 GPUs of quota from team-a to team-b (config-after.yaml) grows team-a's p95 wait."""
    here = EXAMPLES / "whatif" / "kueue"
    history = yaml.safe_load((here / "workloads.yaml").read_text())["items"]
    expected = Counter(
        f"{w['metadata']['namespace']}/{w['spec']['queueName']}"
        for w in history
        if any(c["type"] == "Finished" and c["status"] == "True" for c in w["status"]["conditions"])
    )
    waits = {}
    for config in ("config.yaml", "config-after.yaml"):
        scenario = tmp_path / f"{config}.scenario.yaml"
        out = tmp_path / f"{config}.out"
        assert (
            run_fairshare("import", "kueue", str(here / config), "-o", str(scenario)).returncode
            == 0
        )
        done = run_fairshare(
            "simulate", str(scenario), "--policy", "kueue",
            "--trace", f"kueue-workloads:{here / 'workloads.yaml'}", "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Workload(s) skipped" in done.stderr
        assert per_user(out / "jobs.csv") == expected
        waits[config] = p95_waits(out / "jobs.csv")
    assert (
        waits["config-after.yaml"]["team-a/user-queue"]
        > waits["config.yaml"]["team-a/user-queue"] + 1000
    )


def test_the_examples_are_regenerated_byte_for_byte(tmp_path: Path) -> None:
    """examples/whatif/make_histories.py writes the shipped files (fixed seed)."""
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location(
        "make_histories", EXAMPLES / "whatif" / "make_histories.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = tmp_path
    module.main()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            shipped = EXAMPLES / "whatif" / path.relative_to(tmp_path)
            assert path.read_bytes() == shipped.read_bytes(), shipped
            assert shipped.stat().st_size < 200_000
