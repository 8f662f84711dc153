"""Random small scenarios for the property search, as SPEC section 1 documents.

Counterexamples must re-run with ``fairshare solve``, so the search works on plain scenario
documents (dicts that serialise to JSON) and parses them with the same loader as the CLI.
All randomness comes from the caller's ``numpy.random.Generator``.

What a scenario may contain depends on the policy's *domain*: pooled policies (DRF section 4,
asset fairness, CEEI, H-DRF, max-min) model the cluster as one machine and have no placement
constraints (DRF section 3); single-resource policies (FAIR's max-min, Choosy's CMMF and
independent allocation) share one resource; hierarchical ones (H-DRF) get queues; the placed
policies of the TSF paper (section IV) get several machines and whitelist constraints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fairshare.solvers import SOLVER_POLICIES

Document = dict[str, Any]

SINGLE_RESOURCE_POLICIES = frozenset({"max-min", "cmmf", "independent"})
HIERARCHICAL_POLICIES = frozenset({"hdrf", "collapsed-drf"})


@dataclass(frozen=True)
class Domain:
    """The scenarios a policy is defined on."""

    pooled: bool
    single_resource: bool
    hierarchical: bool


def domain_of(policy: str) -> Domain:
    return Domain(
        pooled=SOLVER_POLICIES[policy].pools_cluster,
        single_resource=policy in SINGLE_RESOURCE_POLICIES,
        hierarchical=policy in HIERARCHICAL_POLICIES,
    )


@dataclass(frozen=True)
class ScenarioShape:
    """What kind of random scenario a property needs (before the policy's domain narrows it)."""

    max_users: int = 3
    max_resources: int = 2
    max_machines: int = 3
    weights: bool = False
    caps: bool = False
    constraints: bool = True
    max_value: int = 6


def shape_for(shape: ScenarioShape, domain: Domain) -> ScenarioShape:
    """``shape`` narrowed to the scenarios ``domain``'s policies are defined on."""
    if domain.pooled:
        shape = replace(shape, max_machines=1, constraints=False)
    if domain.single_resource:
        shape = replace(shape, max_resources=1)
    return shape


def random_document(rng: np.random.Generator, shape: ScenarioShape, domain: Domain) -> Document:
    """A random valid scenario: small integer capacities and demands, so that counterexamples
    are easy to read. Constraints are whitelists (``machines:``), the form a constraint takes
    in the constraint graph of Choosy section 3."""
    shape = shape_for(shape, domain)
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
