"""Fingerprints of the simulator's decisions: every refactor and optimisation must keep them.

Every online policy runs under a matrix of mechanisms (none, delay scheduling with input blocks,
preemption, copy-compute splitting with reducers, machine events with ``until``, headroom, FIFO
pool order, gangs, EASY backfilling, gangs preempted whole, job priorities, queue quotas with
borrowing and lending, and their reclaim by preemption) on small generated workloads
(:func:`configs`), optionally with small random tie-heavy workloads (:func:`random_configs`).
One line per run gives the configuration, the number of task attempts and a SHA-256 of the run's
attempts, job records and event count (:func:`fingerprint`).

The fingerprint hashes a canonical text of each record (floats as their exact hexadecimal
form, numbers converted to Python types), not ``repr``, so that it does not depend on the
NumPy version's scalar repr or on how the record classes are written. The 266 lines of the
fixed matrix are committed in ``tests/golden/decision_fingerprints.txt`` and compared by
``tests/test_decision_fingerprints.py``; ``benchmarks/decision_fingerprint.py`` prints or
checks them by hand.

Examples
--------
>>> policy, name, attempts, digest = fingerprint("fifo", random_configs(1)[0]).split()
>>> policy, name, len(digest)
('fifo', 'random0', 16)
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from fairshare.cluster import Cluster, Machine
from fairshare.cluster.constraints import Constraint
from fairshare.policies import ONLINE_POLICIES
from fairshare.runlog import RunLog
from fairshare.sim.engine import MachineEvent, SimOptions, simulate
from fairshare.workload.generators import generate
from fairshare.workload.model import (
    ExponentialDuration,
    FixedDuration,
    Job,
    Queue,
    User,
    WorkloadSpec,
)


def _cluster(machines: int) -> Cluster:
    """``machines`` two-resource machines of two shapes, ten to a rack, every fourth with an
    ``ssd``: heterogeneous enough for every policy's placement to matter."""
    return Cluster.build(
        ("cpu", "mem"),
        [
            Machine(
                f"m{i}",
                np.array([8.0, 16.0] if i % 3 else [16.0, 8.0]),
                rack=f"r{i // 10}",
                attributes={"ssd": i % 4 == 0},
            )
            for i in range(machines)
        ],
    )


QUEUES = (
    Queue("a", weight=1.0),
    Queue("b", weight=2.0),
    Queue("a/x", weight=1.0),
    Queue("a/y", weight=1.0),
)
"""The queue tree of the ``queues`` configuration (H-DRF's hierarchy, two levels)."""

_INF = math.inf
QUOTA_QUEUES = (
    # a and b share the root cohort; a's quota splits between a/x and a/y. b lends only 20
    # of each resource and a may borrow 60 more than its quota, so lending limits, borrowing
    # limits and (with preemption) reclaim all bind on the 30-machine cluster (320 CPUs,
    # 400 GB).
    Queue("a", weight=1.0, quota=(120.0, 150.0), borrowing_limit=(60.0, 60.0)),
    Queue("b", weight=2.0, quota=(120.0, 150.0), lending_limit=(20.0, 20.0)),
    Queue("a/x", weight=1.0, quota=(60.0, 75.0), borrowing_limit=(_INF, _INF)),
    Queue("a/y", weight=1.0, quota=(60.0, 75.0), lending_limit=(0.0, 0.0)),
)
"""The queue tree of the quota configurations: nominal quotas with borrowing and lending
limits (Kueue's cohorts; :mod:`fairshare.policies.quota`)."""

QUEUE_TREES: dict[str, tuple[Queue, ...]] = {
    "queues": QUEUES,
    "quotas": QUOTA_QUEUES,
    "quota-reclaim": QUOTA_QUEUES,
}
"""The configurations that run on a queue tree (with no configured users: each job's user
joins in its queue), and their trees."""


def _gangs(jobs: list[Job]) -> list[Job]:
    """Every third job a gang of at most 12 tasks (those start together or not at all); every
    other gang with an estimate of 30 s, so EASY's reservations count on requested times as
    well as on durations."""
    return [
        replace(
            job,
            min_tasks=min(job.tasks, 12),
            estimate=30.0 if i % 6 == 0 else None,
        )
        if i % 3 == 0
        else job
        for i, job in enumerate(jobs)
    ]


def _priorities(jobs: list[Job]) -> list[Job]:
    """Job priorities -1, 0 and 1 in turn: users' orders and jobs' orders by priority tier."""
    return [replace(job, priority=i % 3 - 1) for i, job in enumerate(jobs)]


def _jobs(spec: WorkloadSpec, cluster: Cluster, seed: int) -> tuple[list[Job], Cluster]:
    """The jobs ``spec`` generates on ``cluster`` (in a list: a run reads them once, a
    fingerprint must see the same ones every time) and the generator's cluster."""
    workload = generate(spec, cluster, np.random.default_rng(seed), queues=[q.path for q in QUEUES])
    return list(workload.jobs), workload.cluster


Config = tuple[str, Callable[[], tuple[list[Job], Cluster]], SimOptions, list[MachineEvent]]
"""A configuration: its name, a function making its jobs and cluster, the run's options and
its machine events."""


def configs() -> list[Config]:
    """The fixed matrix: nineteen mechanisms on small generated workloads (seed 3).

    Returns
    -------
    list of Config
        ``plain``, ``zipf``, ``google``, ``queues``, ``delay``, ``preempt``, ``reduce``,
        ``slowstart``, ``ccs``, ``events``, ``headroom``, ``headroom-sparse`` (tasks that
        take one resource), ``fifo-pools``, then the mechanisms of gangs and quotas:
        ``gangs`` (every third job a gang), ``backfill`` (with EASY backfilling),
        ``gang-preempt`` (gangs under preemption, preempted whole), ``priority`` (job
        priorities -1, 0, 1), ``quotas`` (nominal quotas with borrowing and lending limits)
        and ``quota-reclaim`` (quotas with preemption: reclaim).

    Examples
    --------
    >>> [name for name, _, _, _ in configs()][:4]
    ['plain', 'zipf', 'google', 'queues']
    """
    demands = [{"cpu": 1, "mem": 2}, {"cpu": 2, "mem": 1}, {"cpu": 1, "mem": 4}]
    base = {"jobs": 60, "arrival": 2.0, "users": 7, "demand": demands, "duration": 20.0}
    plain = WorkloadSpec("facebook-2009", {**base, "reduce": False})
    # Tasks that take one resource only: the headroom is kept on the resources a task takes.
    sparse = WorkloadSpec(
        "facebook-2009",
        {**base, "reduce": False, "demand": [{"cpu": 1}, {"mem": 4}, {"cpu": 3, "mem": 2}]},
    )
    blocks = WorkloadSpec("facebook-2009", {**base, "reduce": False, "replicas": 3})
    reduces = WorkloadSpec("facebook-2009", {**base, "reduce": {"copy": 5.0, "compute": 10.0}})
    zipf = WorkloadSpec("zipf", {**base, "reduce": False, "s": 1.2})
    google = WorkloadSpec("google-constraints", {"jobs": 60, "arrival": 2.0, "users": 7})
    queued = WorkloadSpec(
        "facebook-2009",
        {**base, "reduce": False, "queues": ["a/x", "a/y", "b"]},
    )
    quota_jobs = WorkloadSpec(
        "facebook-2009",
        {**base, "reduce": False, "queues": ["a/x", "a/y", "b"]},
    )
    events = [
        MachineEvent(30.0, "remove", "m3"),
        MachineEvent(45.0, "add", Machine("extra", np.array([8.0, 8.0]), rack="r0")),
        MachineEvent(60.0, "remove", "m7"),
    ]
    out: list[Config] = []
    same: Callable[[list[Job]], list[Job]] = list
    for name, spec, opts, evs, shape in (
        ("plain", plain, SimOptions(), [], same),
        ("zipf", zipf, SimOptions(), [], same),
        ("google", google, SimOptions(), [], same),
        ("queues", queued, SimOptions(), [], same),
        ("delay", blocks, SimOptions(delay=(3.0, 6.0)), [], same),
        ("preempt", plain, SimOptions(preemption=(5.0, 15.0)), [], same),
        ("reduce", reduces, SimOptions(), [], same),
        ("slowstart", reduces, SimOptions(reduce_slowstart=0.5), [], same),
        ("ccs", reduces, SimOptions(copy_compute_splitting=True), [], same),
        ("events", plain, SimOptions(until=150.0), events, same),
        ("headroom", plain, SimOptions(headroom=True), [], same),
        ("headroom-sparse", sparse, SimOptions(headroom=True), [], same),
        ("fifo-pools", plain, SimOptions(pool_order="fifo"), [], same),
        ("gangs", plain, SimOptions(), [], _gangs),
        ("backfill", plain, SimOptions(backfill="easy"), [], _gangs),
        ("gang-preempt", plain, SimOptions(preemption=(5.0, 15.0)), [], _gangs),
        ("priority", plain, SimOptions(), [], _priorities),
        ("quotas", quota_jobs, SimOptions(), [], same),
        ("quota-reclaim", quota_jobs, SimOptions(preemption=(5.0, 15.0)), [], same),
    ):
        machines = 30 if name != "google" else 40

        def make(
            spec: WorkloadSpec = spec,
            machines: int = machines,
            shape: Callable[[list[Job]], list[Job]] = shape,
        ) -> tuple[list[Job], Cluster]:
            jobs, cluster = _jobs(spec, _cluster(machines), seed=3)
            return shape(jobs), cluster

        out.append((name, make, opts, evs))
    return out


def random_configs(count: int) -> list[Config]:
    """Small tie-heavy random workloads: a few jobs on 2 to 8 machines, submit times and
    durations from short lists (so that events coincide), random constraints, input
    blocks, machine removals, delay scheduling, preemption and pool order.

    Parameters
    ----------
    count : int
        Configurations, ``random0`` to ``random{count - 1}``, each from its own seed.

    Returns
    -------
    list of Config

    Examples
    --------
    >>> name, make, options, events = random_configs(2)[1]
    >>> jobs, cluster = make()
    >>> name, len(cluster.machines), options.delay
    ('random1', 3, (1.0, 2.0))
    """
    out: list[Config] = []
    for number in range(count):
        rnd = random.Random(number)
        machines = rnd.randint(2, 8)
        jobs = []
        at = 0.0
        for k in range(rnd.randint(1, 14)):
            at += rnd.choice([0.0, 0.5, 3.0, 1.7])
            seconds = rnd.choice([1.0, 2.5, 7.0])
            duration = (
                FixedDuration(seconds) if rnd.random() < 0.5 else ExponentialDuration(seconds)
            )
            jobs.append(
                Job(
                    f"j{k}",
                    at,
                    f"user{rnd.randint(0, 3)}",
                    np.array([rnd.choice([1.0, 2.0, 3.0]), rnd.choice([1.0, 4.0])]),
                    rnd.randint(1, 16),
                    duration,
                    constraint=rnd.choice([None, Constraint("ssd"), Constraint("rack == 'r0'")]),
                    input_replicas=rnd.choice([None, None, 2]),
                )
            )
        events = (
            [MachineEvent(rnd.choice([1.0, 4.0]), "remove", "m1")] if rnd.random() < 0.3 else []
        )
        opts = SimOptions(
            delay=rnd.choice([None, None, (1.0, 2.0)]),
            preemption=rnd.choice([None, None, (2.0, 4.0)]),
            pool_order=rnd.choice(["fair", "fifo"]),
        )

        def make(jobs: list[Job] = jobs, machines: int = machines) -> tuple[list[Job], Cluster]:
            return jobs, _cluster(machines)

        out.append((f"random{number}", make, opts, events))
    return out


def _canonical(value: object) -> str:
    """A record field as text that no NumPy version or class layout changes: floats as
    their exact hexadecimal form, numbers as Python's."""
    exact = _BY_TYPE.get(type(value))
    if exact is not None:
        return exact(value)
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return float(value).hex()
    if isinstance(value, np.ndarray):
        return "[" + ",".join(_canonical(v) for v in value.tolist()) + "]"
    raise TypeError(f"no canonical text for {type(value).__name__}")


_BY_TYPE: dict[type, Callable[[Any], str]] = {
    str: repr,
    bool: repr,
    type(None): repr,
    int: str,
    float: float.hex,
    np.float64: lambda value: float(value).hex(),
    np.int64: lambda value: str(int(value)),
}
""":func:`_canonical` of the record fields' usual types, found by their exact type (a run has
millions of fields: the chain of ``isinstance`` tests was half of a fingerprint's time); the
chain stays for the rest, and gives the same text for these."""


def _record_lines(log: RunLog) -> Iterator[str]:
    """The canonical lines of a run: one per attempt, one per job, and the event count."""
    for a in log.attempts:
        fields = (a.job, a.user, a.phase, a.task, a.attempt, a.machine, a.start, a.finish)
        flags = (a.killed, a.locality, a.truncated)
        yield "A " + " ".join(map(_canonical, (*fields, *flags)))
    for j in log.jobs:
        fields2 = (j.job, j.user, j.queue, j.submit, j.tasks, j.demand, j.weight)
        times = (j.first_start, j.finish, j.isolated_response, j.reduce_demand)
        yield "J " + " ".join(map(_canonical, (*fields2, *times)))
    yield f"E {log.events}"


def fingerprint(policy: str, config: Config) -> str:
    """Run ``policy`` on ``config`` (seed 5, seven users with weights and minimum shares)
    and digest the run.

    Parameters
    ----------
    policy : str
        An online policy.
    config : Config
        A configuration of :func:`configs` or :func:`random_configs`.

    Returns
    -------
    str
        One line: policy, configuration name, task attempts, and the first 16 hexadecimal
        digits of the SHA-256 of the run's canonical records.
    """
    name, make, opts, events = config
    jobs, cluster = make()
    # Weights and (FAIR) minimum shares, so pools and preemption have something to read.
    users = [
        User(
            f"user{i}",
            np.array([1.0, 2.0]),
            weight=1.0 + (i % 3),
            min_share=4.0 if i < 2 else 0.0,
        )
        for i in range(7)
    ]
    queues = QUEUE_TREES.get(name, ())
    if queues:
        users = []
    log = simulate(
        cluster,
        jobs,
        policy,
        seed=5,
        users=users,
        queues=queues,
        options=opts,
        machine_events=events,
    )
    digest = hashlib.sha256()
    for line in _record_lines(log):
        digest.update(line.encode())
        digest.update(b"\n")
    return f"{policy:>14} {name:<10} {len(log.attempts):>6} {digest.hexdigest()[:16]}"


def fingerprints(policies: list[str] | None = None, random_count: int = 0) -> Iterator[str]:
    """The fingerprint lines of policies over the fixed matrix and random workloads.

    Parameters
    ----------
    policies : list of str, optional
        The online policies (default: every one), in this order.
    random_count : int
        Random workloads (:func:`random_configs`) after the fixed matrix.

    Yields
    ------
    str
        One line per (policy, configuration), policy by policy.
    """
    matrix = configs() + random_configs(random_count)
    for policy in policies if policies is not None else list(ONLINE_POLICIES):
        for config in matrix:
            yield fingerprint(policy, config)
