"""Hypothesis strategies for random scenarios, built directly as domain objects."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.workload.model import Queue, Scenario, User

RESOURCES = ("cpu", "mem", "gpu")


@st.composite
def pooled_scenarios(
    draw: st.DrawFn,
    *,
    max_users: int = 6,
    queues: bool = False,
    caps: bool = True,
    min_shares: bool = False,
) -> Scenario:
    """A random cluster with 1-3 resources and users with integer demand vectors."""
    m = draw(st.integers(1, 3))
    resources = RESOURCES[:m]
    machine_count = draw(st.integers(1, 3))
    machines = [
        Machine(f"m{j}", np.array([draw(st.integers(4, 40)) for _ in resources], dtype=float))
        for j in range(machine_count)
    ]
    cluster = Cluster.build(resources, machines)
    queue_list: list[Queue] = []
    if queues:
        for top in range(draw(st.integers(1, 3))):
            queue_list.append(Queue(f"q{top}", weight=float(draw(st.integers(1, 4)))))
            for sub in range(draw(st.integers(0, 2))):
                queue_list.append(Queue(f"q{top}/s{sub}", weight=float(draw(st.integers(1, 4)))))
    users = []
    for i in range(draw(st.integers(1, max_users))):
        demand = np.array([draw(st.integers(0, 5)) for _ in resources], dtype=float)
        if not demand.any():
            demand[draw(st.integers(0, m - 1))] = 1.0
        queue = draw(st.sampled_from([""] + [q.path for q in queue_list]))
        max_tasks = float(draw(st.integers(0, 30))) if caps and draw(st.booleans()) else np.inf
        min_share = float(draw(st.integers(0, 3))) if min_shares and draw(st.booleans()) else 0.0
        users.append(
            User(
                f"u{i}",
                demand,
                weight=float(draw(st.integers(1, 4))),
                queue=queue,
                max_tasks=max_tasks,
                min_share=min_share,
            )
        )
    scenario = Scenario("<hypothesis>", cluster, tuple(queue_list), tuple(users))
    if min_shares:
        needed = scenario.min_shares @ scenario.demands
        if np.any(needed > cluster.total):
            scenario = Scenario(
                "<hypothesis>",
                cluster,
                tuple(queue_list),
                tuple(User(u.name, u.demand, u.weight, u.queue, u.max_tasks) for u in users),
            )
    return scenario


def mixed_cluster(n: int) -> Cluster:
    """``n`` machines alternating <8 cpu, 8 mem> and <4, 8>, three to a rack, every third one
    ``fast``: the small heterogeneous cluster of the engine, delay and preemption tests."""
    machines = [
        Machine(
            f"m{i}",
            np.array([4.0 if i % 2 else 8.0, 8.0]),
            rack=f"r{i // 3}",
            attributes={"fast": i % 3 == 0},
        )
        for i in range(n)
    ]
    return Cluster.build(["cpu", "mem"], machines)
