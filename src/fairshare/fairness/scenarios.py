"""Random small scenarios for the property search, as SPEC section 1 documents.

Counterexamples must re-run with ``fairshare solve``, so the search works on plain scenario
documents (dicts that serialise to JSON) and parses them with the same loader as the CLI.
All randomness comes from the caller's ``numpy.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

Document = dict[str, Any]


@dataclass(frozen=True)
class ScenarioShape:
    """What kind of random scenario a property needs."""

    max_users: int = 4
    max_resources: int = 3
    max_machines: int = 1
    weights: bool = False
    caps: bool = False
    queues: bool = False


def random_document(rng: np.random.Generator, shape: ScenarioShape) -> Document:
    """A random valid scenario: small integer capacities and demands, so that counterexamples
    are easy to read."""
    m = int(rng.integers(1, shape.max_resources + 1))
    resources = [f"r{k}" for k in range(m)]
    machines = []
    for j in range(int(rng.integers(1, shape.max_machines + 1))):
        capacity = {r: int(rng.integers(1, 13)) for r in resources}
        machines.append({"name": f"m{j}", "capacity": capacity})
    queues: list[dict[str, Any]] = []
    if shape.queues:
        for top in range(int(rng.integers(2, 4))):
            queues.append({"path": f"q{top}", "weight": int(rng.integers(1, 4))})
    users = []
    for i in range(int(rng.integers(2, shape.max_users + 1))):
        demand = {r: int(rng.integers(0, 5)) for r in resources}
        if not any(demand.values()):
            demand[resources[int(rng.integers(0, m))]] = 1
        user: dict[str, Any] = {"name": f"u{i}", "demand": {r: v for r, v in demand.items() if v}}
        if shape.weights and rng.random() < 0.5:
            user["weight"] = int(rng.integers(2, 4))
        if shape.caps and rng.random() < 0.3:
            user["max_tasks"] = int(rng.integers(1, 8))
        if queues:
            user["queue"] = queues[int(rng.integers(0, len(queues)))]["path"]
        users.append(user)
    document: Document = {"resources": resources, "machines": machines, "users": users}
    if queues:
        used = {u["queue"] for u in users}
        document["queues"] = [q for q in queues if q["path"] in used]
    return document
