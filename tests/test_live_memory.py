"""The live driver's memory is bounded however many jobs have ended (issue 31 item 6): an
ended job's record and attempts leave memory for the driver's spill file, and the run's
log still has every job and attempt, killed ones marked, in order."""

from __future__ import annotations

import gc
import math
import time
import tracemalloc
import weakref
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from fairshare.backends import FakeExecutor, LiveDriver, LiveJob, TaskSpec
from fairshare.cluster import Cluster, Machine
from fairshare.policies import make_policy
from fairshare.workload.model import User

RESOURCES = ("cpu", "mem")
TENANTS = [User(f"t{i}", np.array([1.0, 1.0])) for i in range(4)]


def _driver(seconds: float = 1.0) -> tuple[LiveDriver, FakeExecutor]:
    fake = FakeExecutor(
        RESOURCES, [Machine("n0", np.array([4.0, 8.0]))], duration=lambda s: seconds
    )
    policy = make_policy("drf", Cluster.build(RESOURCES, fake.nodes()), users=TENANTS)
    return LiveDriver(policy, fake, users=TENANTS, poll_interval=0.0), fake


def _round(driver: LiveDriver, fake: FakeExecutor, first: int, jobs: int) -> None:
    for n in range(first, first + jobs):
        job = LiveJob(f"j{n}", f"t{n % 4}", "x", 1, {"cpu": 1.0}, ("true",))
        driver.submit(job)
    while True:
        driver.step(math.inf)
        if not driver.active():
            break
    fake.launched.clear()  # the fake's own history of launches, not the driver's


def test_ended_jobs_leave_the_drivers_memory() -> None:
    """Before: about 600 bytes per ended job stayed in the driver (its records, flat
    attempts, durations, ids); now a round of 600 jobs after two others of the same size
    leaves (next to) nothing behind (the tables' sizes follow the jobs in flight, not those
    ended)."""
    tracemalloc.start()
    try:
        driver, fake = _driver()
        _round(driver, fake, 0, 600)
        _round(driver, fake, 600, 600)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        _round(driver, fake, 1200, 600)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20 * 600, f"{grown} bytes kept for 600 ended jobs"
    log = driver.log("drf", 0.0)
    assert len(log.jobs) == 1800
    assert [j.job for j in log.jobs[:3]] == ["j0", "j1", "j2"]
    assert all(j.finish is not None for j in log.jobs)
    assert len(log.attempts) == 1800


def test_the_log_keeps_ended_and_running_jobs_attempts() -> None:
    """A cancelled job's attempts (killed), a finished job's, and a running job's
    (truncated at the log's time) all come back from the spill and memory."""
    driver, _ = _driver(seconds=10.0)
    driver.submit(LiveJob("a", "t0", "a", 4, {"cpu": 1.0}, ("true",)))
    driver.step(1.0)
    driver.cancel("a")
    driver.submit(LiveJob("b", "t1", "b", 4, {"cpu": 1.0}, ("true",)))
    driver.step(0.0)
    driver.step(math.inf)  # b's four tasks, started at 1, finish at 11
    driver.submit(LiveJob("c", "t2", "c", 2, {"cpu": 1.0}, ("true",)))
    driver.step(0.0)
    log = driver.log("drf", 0.0)
    assert [(j.job, j.first_start, j.finish) for j in log.jobs] == [
        ("a", 0.0, None),
        ("b", 1.0, 11.0),
        ("c", 11.0, None),
    ]
    by_job = {
        name: [(a.killed, a.truncated, a.finish) for a in log.attempts if a.job == name]
        for name in "abc"
    }
    assert by_job["a"] == [(True, False, 1.0)] * 4
    assert by_job["b"] == [(False, False, 11.0)] * 4
    assert by_job["c"] == [(False, True, 11.0)] * 2


class _CyclicFake(FakeExecutor):
    """A fake executor whose every launch leaves a reference cycle behind, as Ray's
    ``RemoteFunction.options`` does (it defines a class per call); the classes are watched
    through weak references."""

    made: ClassVar[list[weakref.ref[type]]] = []

    def launch(self, spec: TaskSpec, machine: str) -> None:
        wrapper = type("FuncWrapper", (), {"remote": lambda self: None})
        _CyclicFake.made.append(weakref.ref(wrapper))
        super().launch(spec, machine)


def test_the_service_frees_the_cycles_of_its_launches(tmp_path: Path) -> None:
    """``fairshare serve`` ran with the cyclic collector paused (``cli.app.main`` pauses it
    for every command), so the class Ray defines per launch was never freed: the service's
    RSS grew 5.5 KB per job on Ray (200 to 244 MB over five rounds of 2,000 jobs). Now the
    service turns the collector on while it runs: with it off before (as the command leaves
    it), 300 jobs over HTTP leave few of their launches' classes alive, and the collector is
    off again after."""
    pytest.importorskip("httpx")
    import httpx  # noqa: PLC0415

    from live_serving import Served, serve_with  # noqa: PLC0415

    _CyclicFake.made.clear()

    def post(served: Served) -> None:
        auth = {"Authorization": f"Bearer {served.tokens['alice']}"}
        body = {"name": "j", "tasks": 1, "demand": {"cpu": 1}, "command": ["true"]}
        with httpx.Client(base_url=served.url, timeout=30) as http:
            for _ in range(300):
                assert http.post("/v1/jobs", json=body, headers=auth).status_code == 201
            while served.store.unended():
                time.sleep(0.05)

    was = gc.isenabled()
    gc.disable()
    try:
        serve_with(tmp_path, post, duration=0.0, executor=_CyclicFake)
        off_after = not gc.isenabled()
        # Counted before the collector is on again (its next pass would free them all).
        alive = sum(1 for ref in _CyclicFake.made if ref() is not None)
    finally:
        if was:
            gc.enable()
    assert len(_CyclicFake.made) == 300
    assert alive < 100, f"{alive} of 300 launches' cycles still alive"
    assert off_after
