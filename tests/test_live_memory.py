"""The live driver's memory is bounded however many jobs have ended (issue 31 item 6): an
ended job's record and attempts leave memory for the driver's spill file, and the run's
log still has every job and attempt, killed ones marked, in order."""

from __future__ import annotations

import gc
import math
import tracemalloc

import numpy as np

from fairshare.backends import FakeExecutor, LiveDriver, LiveJob
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
