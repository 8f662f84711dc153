"""A batch of finishes released in one call (``Ledger.release``, as ``tasks_finished_at`` and
the engine's held finishes release them) leaves the policy as releasing them one call at a
time does. The batch moves a machine to its free-vector bucket once per run of consecutive
releases on it, and refreshes a user's heap entries once per run of its consecutive
releases; the buckets (and their order), the machines with room (in the order they got it),
the machines marked for offers and every later decision must still be those of a move and a
refresh per release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.policies import Launch, TaskRef, make_policy
from fairshare.workload.model import Job

from conftest import scaled_examples

_SHAPES = [(1.0, 1.0), (2.0, 1.0), (1.0, 3.0), (0.5, 2.0)]
_CAPACITIES = [(4.0, 4.0), (6.0, 8.0), (3.0, 6.0)]


def _started(
    policy: str, machines: list[int], jobs: list[tuple[int, int, int]]
) -> tuple[Any, list[TaskRef]]:
    """A policy after one decision round on the jobs, and the tasks it launched."""
    cluster = Cluster.build(
        ["cpu", "mem"],
        [Machine(f"m{i}", np.array(_CAPACITIES[c])) for i, c in enumerate(machines)],
    )
    scheduler = make_policy(policy, cluster)
    for j, (user, shape, tasks) in enumerate(jobs):
        demand = np.array(_SHAPES[shape])
        scheduler.job_submitted(0.0, j, Job(f"j{j}", 0.0, f"u{user}", demand, tasks))
    launched = [d.task for d in scheduler.decide(0.0) if isinstance(d, Launch)]
    return scheduler, launched


def _state(scheduler: Any) -> tuple[object, ...]:
    """What the releases change and later offers read."""
    ledger = scheduler.ledger
    cs = ledger.cluster
    return (
        [(free, list(bucket)) for free, bucket in cs.buckets.items()],
        list(cs.roomy),
        list(ledger.dirty),
        [list(row) for row in cs.free],
    )


@settings(max_examples=scaled_examples(60), deadline=None)
@given(
    policy=st.sampled_from(["drf", "fair", "tsf", "fifo"]),
    machines=st.lists(st.integers(0, len(_CAPACITIES) - 1), min_size=1, max_size=4),
    jobs=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, len(_SHAPES) - 1), st.integers(1, 6)),
        min_size=1,
        max_size=8,
    ),
    picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=30),
    by_machine=st.booleans(),
)
def test_a_batch_releases_as_one_release_at_a_time(
    policy: str,
    machines: list[int],
    jobs: list[tuple[int, int, int]],
    picks: list[int],
    by_machine: bool,
) -> None:
    batched, launched = _started(policy, machines, jobs)
    single, launched_again = _started(policy, machines, jobs)
    assert launched == launched_again
    if not launched:
        return
    # Distinct running tasks, in a drawn order or grouped by machine (runs of releases on
    # one machine, of one user, as the instances of a trace's task end).
    tasks = list(dict.fromkeys(launched[p % len(launched)] for p in picks))
    if by_machine:
        where = batched.ledger.machine_of
        tasks.sort(key=lambda ref: (where(ref), ref))
    assert _state(batched) == _state(single)
    batched.tasks_finished_at(1.0, tasks)
    for ref in tasks:
        single.task_finished(1.0, ref)
    assert _state(batched) == _state(single)
    assert batched.decide(1.0) == single.decide(1.0)
    assert _state(batched) == _state(single)


def test_runs_on_one_machine_end_in_the_bucket_of_the_last_release() -> None:
    """Three users' tasks on two machines, released machine by machine: the buckets, their
    order and the next decision are those of one release at a time."""
    jobs = [(0, 0, 4), (1, 1, 3), (2, 3, 2)]
    batched, launched = _started("drf", [1, 1], jobs)
    single, _ = _started("drf", [1, 1], jobs)
    where = batched.ledger.machine_of
    tasks = sorted(launched, key=lambda ref: (where(ref), ref))
    assert len({where(ref) for ref in tasks}) == 2
    batched.tasks_finished_at(1.0, tasks)
    for ref in tasks:
        single.task_finished(1.0, ref)
    assert _state(batched) == _state(single)
    assert batched.decide(1.0) == single.decide(1.0)
