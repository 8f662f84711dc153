"""Batched launches (several tasks of one user on one machine without re-selecting) make
exactly the decisions of selecting before every task, for every share-ordered policy."""

from __future__ import annotations

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import ONLINE_POLICIES, make_policy
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload.model import ExponentialDuration, Job, ReducePhase

from conftest import WHOLE_JOB_POLICIES


def _case(seed: int) -> tuple[Cluster, list[Job]]:
    rng = np.random.default_rng(seed)
    machines = [
        Machine(
            f"m{i}",
            np.array([float(rng.choice([4, 8, 16])), float(rng.choice([8, 16]))]),
            rack=f"r{i // 4}",
            attributes={"fast": i % 3 == 0},
        )
        for i in range(12)
    ]
    shapes = [[1.0, 1.0], [2.0, 1.0], [1.0, 4.0]]
    jobs = [
        Job(
            f"j{k}",
            float(k // 2),
            f"u{int(rng.integers(0, 5))}",
            np.array(shapes[int(rng.integers(0, 3))]),
            int(rng.integers(1, 30)),
            ExponentialDuration(6.0),
            constraint=Constraint("fast") if rng.random() < 0.3 else None,
            input_replicas=2 if rng.random() < 0.3 else None,
            reduce=ReducePhase(2, 1.0, 2.0) if rng.random() < 0.2 else None,
        )
        for k in range(30)
    ]
    return Cluster.build(["cpu", "mem"], machines), jobs


@pytest.mark.parametrize("policy", sorted(set(ONLINE_POLICIES) - WHOLE_JOB_POLICIES))
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("delay", [None, (1.0, 2.0)])
def test_batched_launches_equal_one_selection_per_task(
    policy: str, seed: int, delay: tuple[float, float] | None
) -> None:
    cluster, jobs = _case(seed)
    options = SimOptions(delay=delay)
    batched = make_policy(policy, cluster, options=options.policy_options())
    single = make_policy(policy, cluster, options=options.policy_options())
    single.placer.batching = False
    a = simulate(cluster, jobs, batched, seed=seed, options=options)
    b = simulate(cluster, jobs, single, seed=seed, options=options)
    assert a.attempts == b.attempts
    # A policy that starts jobs whole never runs a job larger than its machines.
    ran = [j for j in jobs if not (policy in WHOLE_JOB_POLICIES and j.name in a.stranded)]
    assert len(a.attempts) == sum(j.tasks + (2 if j.reduce else 0) for j in ran)
