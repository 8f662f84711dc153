"""The live benchmark: fairshare's driver against bare Ray on the same trivial tasks, with the
same pinning, side by side in one run (``fairshare bench live``,
``benchmarks/live_throughput.py``).

The cluster is a local ``ray.cluster_utils.Cluster``: a head without CPUs and ``nodes`` nodes
of ``cpus`` CPUs, each with ``slots`` units of a custom resource ``slot``. Every task runs
``true`` through the Ray executor's task function (:mod:`fairshare.backends.ray_task`) and
holds one slot:

- **bare Ray**: all tasks submitted at once, pinned round-robin to the nodes with
  ``NodeAffinitySchedulingStrategy(soft=False)``, then ``ray.get``;
- **fairshare**: the same tasks as two tenants' jobs under DRF through
  :class:`~fairshare.backends.LiveDriver` and the Ray executor, every state change written
  to the service's SQLite store first, as ``fairshare serve`` does (``journal=False``: none).

Rounds alternate (bare, fairshare, bare, ...) so that both see the same machine; the figures
are medians. Besides tasks per second: the scheduling latency (from the executor handing
finishes over to the next launch: events, the policy, records, the database commit), the
driver's own time per task (everything outside the executor's calls), and within that the
policy's own calls (``decide`` and the events).
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairshare.backends import Executor, LiveDriver, LiveJob
from fairshare.backends.executor import ExecEvent, TaskSpec
from fairshare.cluster import Cluster, Machine

if TYPE_CHECKING:
    from fairshare.policies import Decision, Scheduler, TaskRef
    from fairshare.workload.model import Job, User


class _Timed(Executor):
    """An executor that counts the seconds spent in each of its calls."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.resources = inner.resources
        self.seconds: dict[str, float] = {"wait": 0.0, "launch": 0.0, "nodes": 0.0}
        # Seconds from a wait that returned finishes to the next launch (the scheduling
        # latency the issue names: a finish in, the next task out).
        self.latencies: list[float] = []
        self._finished_at: float | None = None

    def _time(self, name: str, call: Callable[[], Any]) -> Any:
        """``call()``, its seconds added to those of ``name``."""
        started = time.perf_counter()
        try:
            return call()
        finally:
            self.seconds[name] += time.perf_counter() - started

    def now(self) -> float:
        """The inner executor's clock."""
        return self.inner.now()

    def nodes(self) -> list[Machine]:
        """The inner executor's nodes, timed."""
        nodes: list[Machine] = self._time("nodes", self.inner.nodes)
        return nodes

    def launch(self, spec: TaskSpec, machine: str) -> None:
        """The inner launch, timed; the first after finishes closes a latency."""
        if self._finished_at is not None:
            self.latencies.append(time.perf_counter() - self._finished_at)
            self._finished_at = None
        self._time("launch", lambda: self.inner.launch(spec, machine))

    def cancel(self, key: str) -> None:
        """The inner cancel."""
        self.inner.cancel(key)

    def wait(self, timeout: float) -> list[ExecEvent]:
        """The inner wait, timed; finishes handed over open a latency."""
        events: list[ExecEvent] = self._time("wait", lambda: self.inner.wait(timeout))
        if events and self._finished_at is None:
            self._finished_at = time.perf_counter()
        return events

    def close(self) -> None:
        """The inner close."""
        self.inner.close()


def _timed_drf(cluster: Cluster, users: Sequence[User], seconds: list[float]) -> Scheduler:
    """DRF counting the seconds of its protocol calls in ``seconds[0]`` (a subclass: the
    compiled policies' methods cannot be replaced on an instance)."""
    from fairshare.policies.drf import Drf  # noqa: PLC0415

    class TimedDrf(Drf):
        def decide(self, now: float) -> list[Decision]:
            started = time.perf_counter()
            try:
                return super().decide(now)
            finally:
                seconds[0] += time.perf_counter() - started

        def task_finished(self, now: float, task: TaskRef) -> None:
            started = time.perf_counter()
            try:
                super().task_finished(now, task)
            finally:
                seconds[0] += time.perf_counter() - started

        def job_submitted(
            self,
            now: float,
            job_id: int,
            job: Job,
            blocks: Sequence[Sequence[str]] | None = None,
        ) -> None:
            started = time.perf_counter()
            try:
                super().job_submitted(now, job_id, job, blocks)
            finally:
                seconds[0] += time.perf_counter() - started

        def machine_added(self, now: float, machine: Machine) -> None:
            started = time.perf_counter()
            try:
                super().machine_added(now, machine)
            finally:
                seconds[0] += time.perf_counter() - started

    return TimedDrf(cluster, users=users)


def _bare(ray: Any, remote: Any, node_ids: list[str], tasks: int) -> float:
    """Bare Ray's side of one round: its seconds for ``tasks`` pinned tasks."""
    from ray.util.scheduling_strategies import (  # noqa: PLC0415
        NodeAffinitySchedulingStrategy,
    )

    started = time.perf_counter()
    refs = [
        remote.options(
            num_cpus=0,
            resources={"slot": 1},
            max_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_ids[k % len(node_ids)], False),
        ).remote(["true"], {"FAIRSHARE_TASK_INDEX": str(k)})
        for k in range(tasks)
    ]
    codes = [code for code, _ in ray.get(refs)]
    elapsed = time.perf_counter() - started
    assert codes == [0] * tasks, "every bare task ran"
    return elapsed


def _fairshare(
    executor: Executor, tasks: int, round_: int, journal: Path | None
) -> dict[str, float]:
    """fairshare's side of one round: two tenants' jobs under DRF through the live driver
    (and the store at ``journal``); its seconds and per-task figures."""
    import numpy as np  # noqa: PLC0415

    from fairshare.service.journal import StoreJournal  # noqa: PLC0415
    from fairshare.service.store import Store  # noqa: PLC0415
    from fairshare.workload.model import User  # noqa: PLC0415

    timed = _Timed(executor)
    users = [User(name, np.array([1.0])) for name in ("a", "b")]
    policy_seconds = [0.0]
    policy = _timed_drf(Cluster.build(timed.resources, timed.nodes()), users, policy_seconds)
    store = Store(journal) if journal is not None else None
    driver = LiveDriver(
        policy,
        timed,
        users=users,
        journal=StoreJournal(store) if store is not None else None,
        poll_interval=1.0,
    )
    half = tasks // 2
    started = time.perf_counter()
    for name, count in (("a", half), ("b", tasks - half)):
        job = LiveJob(f"{name}{round_}", name, name, count, {"slot": 1.0}, ("true",))
        if store is not None:
            store.add_job(job)
        driver.submit(job)
    while driver.active():
        driver.step(0.05)
    elapsed = time.perf_counter() - started
    if store is not None:
        store.close()
    log = driver.log("drf", elapsed)
    finished = sum(1 for a in log.attempts if not a.killed and not a.truncated)
    assert finished == tasks, "every fairshare task ran"
    own = elapsed - timed.seconds["wait"] - timed.seconds["launch"] - timed.seconds["nodes"]
    return {
        "seconds": elapsed,
        "overhead": own / tasks,
        "policy": policy_seconds[0] / tasks,
        "launch": timed.seconds["launch"] / tasks,
        "latency": statistics.median(timed.latencies) if timed.latencies else math.nan,
    }


def run_live(
    *,
    tasks: int = 400,
    nodes: int = 2,
    cpus: int = 1,
    slots: int = 2,
    rounds: int = 3,
    journal: bool = True,
) -> dict[str, object]:
    """Both sides, ``rounds`` times each, alternating; medians (see the module).

    Starts a local Ray cluster for the run and shuts it down after (the ``[ray]`` extra).

    Parameters
    ----------
    tasks : int
        Tasks per round and side.
    nodes : int
        Ray nodes (besides a head without CPUs).
    cpus : int
        CPUs per node.
    slots : int
        Tasks at a time per node (units of the custom resource ``slot``).
    rounds : int
        Rounds of each side.
    journal : bool
        Write every state change to the service's store, as ``fairshare serve`` does.

    Returns
    -------
    dict
        The sizes, both sides' tasks per second and their ratio, and fairshare's
        milliseconds per task: its overhead, the policy's part, the launch call, and the
        finish-to-launch latency (medians).

    Examples
    --------
    >>> from fairshare.bench.live import run_live
    >>> figures = run_live(tasks=40, rounds=1)  # doctest: +SKIP
    >>> sorted(figures)[:3]  # doctest: +SKIP
    ['bare_ray_tasks_per_second', 'fairshare_tasks_per_second', 'finish_to_launch_ms']
    """
    import ray  # noqa: PLC0415
    from ray.cluster_utils import Cluster as RayCluster  # noqa: PLC0415

    from fairshare.backends import ray_task  # noqa: PLC0415
    from fairshare.backends.ray_cluster import RayExecutor  # noqa: PLC0415

    cluster: Any = RayCluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    scratch = tempfile.TemporaryDirectory(prefix="fairshare-bench-live-")
    db = Path(scratch.name) / "db" if journal else None
    try:
        for _ in range(nodes):
            cluster.add_node(num_cpus=cpus, resources={"slot": slots})
        cluster.wait_for_nodes()
        executor = RayExecutor(cluster.address, ("slot",))
        try:
            node_ids = [m.name for m in executor.nodes() if m.capacity[0] > 0]
            remote = ray.remote(ray_task.run_command)
            # Warm both paths (workers started, functions exported) before timing.
            _bare(ray, remote, node_ids, 2 * nodes * slots)
            _fairshare(executor, 2 * nodes * slots, -1, db)
            bare: list[float] = []
            ours: list[dict[str, float]] = []
            for k in range(rounds):
                bare.append(_bare(ray, remote, node_ids, tasks))
                ours.append(_fairshare(executor, tasks, k, db))
        finally:
            executor.close()
            if ray.is_initialized():
                ray.shutdown()
    finally:
        cluster.shutdown()
        scratch.cleanup()
    bare_rate = tasks / statistics.median(bare)
    our_rate = tasks / statistics.median(o["seconds"] for o in ours)
    return {
        "tasks": tasks,
        "nodes": nodes,
        "slots_per_node": slots,
        "rounds": rounds,
        "journal": journal,
        "bare_ray_tasks_per_second": bare_rate,
        "fairshare_tasks_per_second": our_rate,
        "ratio": our_rate / bare_rate,
        "overhead_ms_per_task": 1000 * statistics.median(o["overhead"] for o in ours),
        "policy_ms_per_task": 1000 * statistics.median(o["policy"] for o in ours),
        "launch_ms_per_task": 1000 * statistics.median(o["launch"] for o in ours),
        "finish_to_launch_ms": 1000 * statistics.median(o["latency"] for o in ours),
    }
