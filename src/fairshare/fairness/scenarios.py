"""Random small scenarios for the property search, as SPEC section 1 documents.

Counterexamples must re-run with ``fairshare solve``, so the search works on plain scenario
documents (dicts that serialise to JSON) and parses them with the same loader as the CLI.
All randomness comes from the caller's ``numpy.random.Generator``.

What a scenario may contain depends on the policy's *domain*: pooled policies (DRF section 4,
asset fairness, CEEI, H-DRF, max-min) model the cluster as one machine and have no placement
constraints (DRF section 3); single-resource policies (FAIR's max-min, Choosy's CMMF and
independent allocation) share one resource; hierarchical ones (H-DRF) get queues; the placed
policies of the TSF paper (section IV) get several machines and whitelist constraints.

Examples
--------
>>> import numpy as np
>>> document = random_document(np.random.default_rng(0), ScenarioShape(), domain_of("drf"))
>>> document["machines"]
[{'name': 'm0', 'capacity': {'r0': 8, 'r1': 7}}]
>>> document["users"]
[{'name': 'u0', 'demand': {'r0': 1}}, {'name': 'u1', 'demand': {'r0': 1}}]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fairshare.policies import ONLINE_POLICIES
from fairshare.solvers.registry import solver_policy

Document = dict[str, Any]
"""A scenario document as SPEC section 1 gives it (what ``json.load`` of a file returns)."""

SINGLE_RESOURCE_POLICIES = frozenset({"max-min", "cmmf", "independent"})
"""The solver policies defined on one resource."""
HIERARCHICAL_POLICIES = frozenset({"hdrf", "collapsed-drf"})
"""The solver policies that read the queue hierarchy."""


@dataclass(frozen=True)
class Domain:
    """The scenarios a policy is defined on.

    Attributes
    ----------
    pooled : bool
        The policy pools the cluster into one machine (no placement, no constraints).
    single_resource : bool
        The policy shares one resource.
    hierarchical : bool
        The policy reads the queue hierarchy.
    online : bool
        An online policy of the same name exists (``simulate --policy``): properties of
        simulated runs, such as queue quotas, are checked on it.
    """

    pooled: bool
    single_resource: bool
    hierarchical: bool
    online: bool = False


def domain_of(policy: str) -> Domain:
    """The domain of a solver policy.

    Parameters
    ----------
    policy : str
        A name of :data:`fairshare.solvers.SOLVER_POLICIES` (otherwise
        :class:`~fairshare.errors.UnknownPolicy`).

    Returns
    -------
    Domain

    Examples
    --------
    >>> domain_of("cmmf")
    Domain(pooled=False, single_resource=True, hierarchical=False, online=False)
    """
    return Domain(
        pooled=solver_policy(policy).pools_cluster,
        single_resource=policy in SINGLE_RESOURCE_POLICIES,
        hierarchical=policy in HIERARCHICAL_POLICIES,
        online=policy in ONLINE_POLICIES,
    )


@dataclass(frozen=True)
class ScenarioShape:
    """What kind of random scenario a property needs (before the policy's domain narrows it).

    Attributes
    ----------
    max_users, max_resources, max_machines : int
        The most users (at least 2 are drawn), resources and machines.
    weights : bool
        Whether users may have weights (2 or 3).
    caps : bool
        Whether users may have ``max_tasks``.
    constraints : bool
        Whether users may have whitelists (``machines:``).
    max_value : int
        Demands are below it and capacities at most twice it.
    quotas : bool
        A scenario for simulation instead (:func:`quota_document`): queues with quotas
        and jobs of one demand.
    gangs : bool
        A scenario for simulation instead (:func:`gang_document`): jobs with gangs among
        them, on several machines.
    """

    max_users: int = 3
    max_resources: int = 2
    max_machines: int = 3
    weights: bool = False
    caps: bool = False
    constraints: bool = True
    max_value: int = 6
    quotas: bool = False
    gangs: bool = False


def shape_for(shape: ScenarioShape, domain: Domain) -> ScenarioShape:
    """``shape`` narrowed to the scenarios ``domain``'s policies are defined on.

    Parameters
    ----------
    shape : ScenarioShape
        The property's shape.
    domain : Domain
        The policy's domain.

    Returns
    -------
    ScenarioShape
        One machine and no constraints for a pooled policy, one resource for a
        single-resource policy.

    Examples
    --------
    >>> narrowed = shape_for(ScenarioShape(), domain_of("drf"))
    >>> narrowed.max_machines, narrowed.constraints
    (1, False)
    """
    if domain.pooled:
        shape = replace(shape, max_machines=1, constraints=False)
    if domain.single_resource:
        shape = replace(shape, max_resources=1)
    return shape


def random_document(rng: np.random.Generator, shape: ScenarioShape, domain: Domain) -> Document:
    """A random valid scenario: small integer capacities and demands, so that counterexamples
    are easy to read. Constraints are whitelists (``machines:``), the form a constraint takes
    in the constraint graph of Choosy section 3.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of every draw.
    shape : ScenarioShape
        The property's shape (narrowed here to ``domain``).
    domain : Domain
        The policy's domain: queues for a hierarchical policy.

    Returns
    -------
    Document
        A scenario document that ``parse_scenario`` accepts.

    Examples
    --------
    >>> import numpy as np
    >>> document = random_document(np.random.default_rng(0), ScenarioShape(), domain_of("tsf"))
    >>> [machine["capacity"] for machine in document["machines"]]
    [{'r0': 7, 'r1': 4}, {'r0': 4, 'r1': 1}]
    >>> document["users"][1]
    {'name': 'u1', 'demand': {'r0': 4, 'r1': 3}}
    """
    if shape.gangs:
        # Simulated online runs place tasks on machines, pooled policies' included.
        return gang_document(rng, shape)
    shape = shape_for(shape, domain)
    if shape.quotas:
        return quota_document(rng, shape)
    m = int(rng.integers(1, shape.max_resources + 1))
    resources = [f"r{k}" for k in range(m)]
    machines = []
    for j in range(int(rng.integers(1, shape.max_machines + 1))):
        capacity = {r: int(rng.integers(1, 2 * shape.max_value + 1)) for r in resources}
        machines.append({"name": f"m{j}", "capacity": capacity})
    queues: list[dict[str, Any]] = []
    if domain.hierarchical:
        for top in range(int(rng.integers(2, 4))):
            queues.append({"path": f"q{top}", "weight": int(rng.integers(1, 4))})
    users = []
    for i in range(int(rng.integers(2, shape.max_users + 1))):
        demand = {r: int(rng.integers(0, shape.max_value)) for r in resources}
        if not any(demand.values()):
            demand[resources[int(rng.integers(0, m))]] = 1
        user: dict[str, Any] = {"name": f"u{i}", "demand": {r: v for r, v in demand.items() if v}}
        if shape.weights and rng.random() < 0.4:
            user["weight"] = int(rng.integers(2, 4))
        if shape.caps and rng.random() < 0.3:
            user["max_tasks"] = int(rng.integers(1, 8))
        if shape.constraints and len(machines) > 1 and rng.random() < 0.6:
            size = int(rng.integers(1, len(machines)))
            chosen = sorted(rng.choice(len(machines), size=size, replace=False).tolist())
            user["machines"] = [machines[k]["name"] for k in chosen]
        if queues:
            user["queue"] = queues[int(rng.integers(0, len(queues)))]["path"]
        users.append(user)
    document: Document = {"resources": resources, "machines": machines, "users": users}
    if queues:
        used = {u["queue"] for u in users}
        document["queues"] = [q for q in queues if q["path"] in used]
    return document


def quota_document(rng: np.random.Generator, shape: ScenarioShape) -> Document:
    """A random scenario for simulation with queue quotas, borrowing and lending: every job's
    tasks have one demand vector, every machine holds a whole number of such tasks with
    nothing left over, and every quota and limit is a whole number of tasks, so that a
    queue below its quota can always be given a task by killing a borrowed one (the
    precondition of the reclaim bound, :mod:`fairshare.policies.quota`).

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of every draw.
    shape : ScenarioShape
        Its ``max_resources`` and ``max_machines`` bound the draw.

    Returns
    -------
    Document
        A scenario document with ``queues`` (two or three, at the top, with quotas) and
        ``jobs`` (some in no queue: all they use is borrowed), no ``users``.

    Examples
    --------
    >>> import numpy as np
    >>> document = quota_document(np.random.default_rng(1), ScenarioShape(quotas=True))
    >>> [m["capacity"] for m in document["machines"]], document["jobs"][0]["demand"]
    ([{'r0': 8}, {'r0': 2}, {'r0': 2}], {'r0': 2})
    >>> [q["quota"] for q in document["queues"]]
    [{'r0': 6}, {'r0': 2}, {'r0': 4}]
    """
    m = int(rng.integers(1, shape.max_resources + 1))
    resources = [f"r{k}" for k in range(m)]
    demand = {r: int(rng.integers(1, 4)) for r in resources}
    machines = []
    slots = 0
    for j in range(int(rng.integers(1, shape.max_machines + 1))):
        k = int(rng.integers(1, 5))
        slots += k
        machines.append({"name": f"m{j}", "capacity": {r: k * d for r, d in demand.items()}})
    queues: list[dict[str, Any]] = []
    left = slots
    count = int(rng.integers(2, 4))
    for i in range(count):
        # Quotas near an even split of the slots, adding up to at most all of them.
        n = min(left, int(rng.integers(0, slots // count + 2)))
        left -= n
        queue: dict[str, Any] = {"path": f"q{i}", "quota": {r: n * d for r, d in demand.items()}}
        if rng.random() < 0.3:
            b = int(rng.integers(0, slots + 1))
            queue["borrowing_limit"] = {r: b * d for r, d in demand.items()}
        if n and rng.random() < 0.3:
            lend = int(rng.integers(0, n + 1))
            queue["lending_limit"] = {r: lend * d for r, d in demand.items()}
        queues.append(queue)
    jobs = []
    submits = sorted(int(t) for t in rng.integers(0, 30, size=int(rng.integers(2, 6))))
    for k, submit in enumerate(submits):
        job: dict[str, Any] = {
            "name": f"j{k}",
            "submit": submit,
            "demand": dict(demand),
            "tasks": int(rng.integers(1, 2 * slots + 1)),
            "duration": int(rng.integers(5, 60)),
        }
        if rng.random() < 0.85:
            path = queues[int(rng.integers(0, len(queues)))]["path"]
            job["queue"] = path
            job["user"] = f"u-{path}"
        jobs.append(job)
    return {"resources": resources, "machines": machines, "queues": queues, "jobs": jobs}


def gang_document(rng: np.random.Generator, shape: ScenarioShape) -> Document:
    """A random scenario for simulation with gangs: jobs of two to eight tasks at most, half
    of them gangs (``gang: true``, or ``min_tasks`` of some of their tasks), some with a
    whitelist of machines, every task running exactly its job's fixed duration, so that EASY
    backfilling's reservations are exact (the precondition of its guarantee,
    :mod:`fairshare.policies.gangs`).

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of every draw.
    shape : ScenarioShape
        Its ``max_resources``, ``max_machines`` and ``max_users`` bound the draw.

    Returns
    -------
    Document
        A scenario document with ``jobs``, no ``users``.

    Examples
    --------
    >>> import numpy as np
    >>> document = gang_document(np.random.default_rng(4), ScenarioShape(gangs=True))
    >>> [m["capacity"] for m in document["machines"]]
    [{'r0': 8, 'r1': 5}, {'r0': 8, 'r1': 8}, {'r0': 8, 'r1': 2}]
    >>> [(j["tasks"], j.get("gang", False), j.get("min_tasks")) for j in document["jobs"]]
    [(4, False, None), (4, False, None), (5, False, None), (2, True, None), (3, False, 3)]
    """
    m = int(rng.integers(1, shape.max_resources + 1))
    resources = [f"r{k}" for k in range(m)]
    machines = []
    for j in range(int(rng.integers(1, shape.max_machines + 1))):
        machines.append(
            {"name": f"m{j}", "capacity": {r: int(rng.integers(2, 9)) for r in resources}}
        )
    jobs = []
    submits = sorted(int(t) for t in rng.integers(0, 20, size=int(rng.integers(2, 9))))
    for k, submit in enumerate(submits):
        tasks = int(rng.integers(1, 7))
        job: dict[str, Any] = {
            "name": f"j{k}",
            "submit": submit,
            "user": f"u{int(rng.integers(0, shape.max_users))}",
            "demand": {r: int(rng.integers(1, 3)) for r in resources},
            "tasks": tasks,
            "duration": int(rng.integers(1, 20)),
        }
        kind = rng.random()
        if kind < 0.3:
            job["gang"] = True
        elif kind < 0.5:
            job["min_tasks"] = int(rng.integers(1, tasks + 1))
        if len(machines) > 1 and rng.random() < 0.2:
            size = int(rng.integers(1, len(machines)))
            chosen = sorted(rng.choice(len(machines), size=size, replace=False).tolist())
            job["machines"] = [machines[c]["name"] for c in chosen]
        jobs.append(job)
    return {"resources": resources, "machines": machines, "jobs": jobs}
