"""Delay scheduling (FAIR Algorithm 1) edge cases in the engine."""

from __future__ import annotations

import numpy as np

from fairshare.cluster.constraints import Constraint
from fairshare.sim.engine import SimOptions, simulate
from fairshare.workload.model import FixedDuration, Job

from strategies import mixed_cluster


def test_a_task_whose_block_is_out_of_reach_runs_off_rack_after_t1_plus_t2() -> None:
    """The second task's only replica sits on m3, in rack r1, which the job's constraint
    excludes: no node- or rack-local slot will ever come. The job waits T1 + T2 = 3 s from
    its first skip (t = 0) and then runs it off-rack, although the wake-up at t = 1 (T1)
    passed with nothing to launch. Found by the preemption property test: the job never
    finished, because a deadline already past was the only wake-up left."""
    job = Job(
        "j0",
        0.0,
        "u0",
        np.array([1.0, 1.0]),
        2,
        FixedDuration(1.0),
        constraint=Constraint("rack == 'r0'"),
        input_replicas=2,
        # Rack-aware placement always puts a replica in a second rack; this case needs both
        # of the block's draws in r1, which uniform placement gives with this seed.
        replica_placement="uniform",
    )
    log = simulate(
        mixed_cluster(4),
        [job],
        "drf",
        seed=1,
        options=SimOptions(delay=(1.0, 2.0)),
    )
    runs = [(a.task, a.machine, a.start, a.finish, a.locality) for a in log.attempts]
    assert runs == [(0, "m2", 0.0, 1.0, "node"), (1, "m0", 3.0, 4.5, "off_rack")]
    assert log.jobs[0].finish == 4.5
