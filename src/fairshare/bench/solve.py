"""``fairshare solve`` at scale: in process and end to end (process start, loading,
validation, solving, printing the JSON).

- ``hierarchy`` (``benchmarks/solve_scale.py``): 1,000 users in ten organisations of ten
  teams (a 3-level hierarchy), 3 resources, 100 heterogeneous machines; drf, hdrf,
  collapsed-drf, asset and ceei, divisible and integral, in process; drf and hdrf end to end.
- ``cmmf`` and ``tsf`` (``benchmarks/constrained_scale.py``, constrained scales):
  5,000 users on 100,000 machines in 100 types, one resource, Google-like constraints (21
  boolean machine attributes, about 1.8 required per constrained user, after Sharma et al. as
  Choosy section 7 uses them); and 1,000 users on 100 types of 10 machines with 3 resources.

Each case's scenario is written to a file (YAML for ``hierarchy``, JSON with ``count`` for
the others, as the scripts did) and timed by :func:`time_in_process` (median of the solve
alone) and :func:`time_end_to_end` (median wall time of ``python -m fairshare solve --json``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from fairshare.allocation import Allocation
from fairshare.solvers import solve
from fairshare.workload.eligibility import machine_types
from fairshare.workload.loader import load_scenario
from fairshare.workload.model import Scenario

ATTRIBUTES = 21


def hierarchy_scenario(users: int = 1000, seed: int = 1) -> dict[str, object]:
    """Ten organisations of ten teams, users spread evenly; 100 heterogeneous machines."""
    rng = np.random.default_rng(seed)
    queues: list[dict[str, object]] = []
    for org in range(10):
        queues.append({"path": f"org{org}", "weight": int(rng.integers(1, 5))})
        for team in range(10):
            queues.append({"path": f"org{org}/team{team}", "weight": int(rng.integers(1, 5))})
    user_list = []
    for i in range(users):
        demand = {
            "cpu": int(rng.integers(1, 9)),
            "mem": int(rng.integers(1, 33)),
            "gpu": int(rng.integers(0, 2)) * int(rng.integers(0, 2)),
        }
        entry: dict[str, object] = {
            "name": f"u{i}",
            "queue": f"org{i % 10}/team{(i // 10) % 10}",
            "demand": demand,
            "weight": int(rng.integers(1, 4)),
        }
        if rng.random() < 0.5:
            entry["max_tasks"] = int(rng.integers(1, 200))
        user_list.append(entry)
    machines = [
        {"name": "cpu", "count": 60, "capacity": {"cpu": 64, "mem": 256, "gpu": 0}},
        {"name": "mem", "count": 30, "capacity": {"cpu": 32, "mem": 1024, "gpu": 0}},
        {"name": "gpu", "count": 10, "capacity": {"cpu": 32, "mem": 512, "gpu": 8}},
    ]
    return {
        "resources": ["cpu", "mem", "gpu"],
        "machines": machines,
        "queues": queues,
        "users": user_list,
    }


def google_like(
    users: int, types: int, per_type: int, resources: int, seed: int = 1
) -> dict[str, object]:
    """Machine types with 21 boolean attributes of skewed prevalence; each user requires 1-3
    of them (mean about 1.8), rarer attributes more often, as constrained jobs tend to ask for
    special hardware."""
    rng = np.random.default_rng(seed)
    prevalence = np.linspace(0.05, 0.95, ATTRIBUTES)
    names = ["cpu", "mem", "gpu"][:resources]
    machines = []
    for t in range(types):
        attributes = {f"a{k}": bool(rng.random() < prevalence[k]) for k in range(ATTRIBUTES)}
        capacity = {"cpu": int(rng.choice([8, 16, 32, 64]))}
        if resources > 1:
            capacity["mem"] = int(capacity["cpu"] * rng.choice([2, 4, 8]))
        if resources > 2:
            capacity["gpu"] = int(rng.choice([0, 0, 4, 8]))
        machines.append(
            {"name": f"t{t}", "count": per_type, "capacity": capacity, "attributes": attributes}
        )
    pick = (1 - prevalence) / (1 - prevalence).sum()
    user_list = []
    for i in range(users):
        demand = {"cpu": int(rng.integers(1, 5))} if resources > 1 else {"cpu": 1}
        if resources > 1:
            demand["mem"] = int(rng.integers(1, 17))
        if resources > 2:
            demand["gpu"] = int(rng.random() < 0.2)
        entry: dict[str, object] = {
            "name": f"u{i}",
            "demand": demand,
            "weight": int(rng.integers(1, 4)),
        }
        if rng.random() < 0.6:  # 60% constrained, 1-3 attributes each: about 1.8 on average
            count = int(rng.choice([1, 2, 3], p=[0.35, 0.45, 0.2]))
            chosen = rng.choice(ATTRIBUTES, size=count, replace=False, p=pick)
            entry["constraint"] = " and ".join(f"a{k}" for k in sorted(chosen))
        if rng.random() < 0.3:
            entry["max_tasks"] = int(rng.integers(1, 500))
        user_list.append(entry)
    return {"resources": names, "machines": machines, "users": user_list}


@dataclass(frozen=True)
class SolveCase:
    """A scenario and what is timed on it: ``in_process`` (policy, integral) pairs and the
    policies run end to end, each ``repeat`` times by default (the scripts' defaults).
    ``build(users)`` makes the scenario; ``users`` defaults to the case's own size (other
    sizes are not comparable with the recorded figures)."""

    name: str
    users: int
    repeat: int
    build: Callable[[int], dict[str, object]]
    suffix: str
    in_process: tuple[tuple[str, bool], ...]
    end_to_end: tuple[str, ...]


_HIERARCHY_POLICIES = ("drf", "hdrf", "collapsed-drf", "asset", "ceei")

CASES: dict[str, SolveCase] = {
    "hierarchy": SolveCase(
        "hierarchy",
        1000,
        5,
        hierarchy_scenario,
        ".yaml",
        tuple((p, integral) for p in _HIERARCHY_POLICIES for integral in (False, True)),
        ("drf", "hdrf"),
    ),
    "cmmf": SolveCase(
        "cmmf",
        5000,
        3,
        lambda users: google_like(users, 100, 1000, resources=1),
        ".json",
        (("cmmf", False),),
        ("cmmf",),
    ),
    "tsf": SolveCase(
        "tsf",
        1000,
        3,
        lambda users: google_like(users, 100, 10, resources=3),
        ".json",
        (("tsf", False),),
        ("tsf",),
    ),
}


@dataclass(frozen=True)
class Prepared:
    """A case's scenario on disk and loaded, with what loading and coalescing took."""

    case: SolveCase
    path: Path
    scenario: Scenario
    load_seconds: float
    types_seconds: float
    machine_types: int
    narrow_users: float
    """Fraction of users able to use under 20% of the machines (their constraints)."""


def prepare(case: SolveCase, directory: Path, users: int | None = None) -> Prepared:
    """Write ``case``'s scenario in ``directory``, load it and coalesce its machine types."""
    path = directory / f"{case.name}{case.suffix}"
    document = case.build(users if users is not None else case.users)
    if case.suffix == ".yaml":
        path.write_text(yaml.safe_dump(document, sort_keys=False))
    else:
        path.write_text(json.dumps(document))
    start = time.perf_counter()
    scenario = load_scenario(path)
    loading = time.perf_counter() - start
    start = time.perf_counter()
    types = machine_types(scenario)
    coalescing = time.perf_counter() - start
    eligible = (types.eligible * types.count).sum(axis=1) / types.count.sum()
    narrow = float(np.mean(eligible < 0.2)) if len(eligible) else 0.0
    return Prepared(case, path, scenario, loading, coalescing, int(types.capacity.shape[0]), narrow)


def time_in_process(
    scenario: Scenario, policy: str, integral: bool, repeat: int
) -> tuple[float, Allocation]:
    """Median wall seconds of ``solve`` over ``repeat`` runs, and the last allocation."""
    runs = []
    allocation: Allocation | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        allocation = solve(scenario, policy, integral=integral)
        runs.append(time.perf_counter() - start)
    assert allocation is not None, "repeat must be at least 1"
    return statistics.median(runs), allocation


def time_end_to_end(path: Path, policy: str, repeat: int) -> float:
    """Median wall seconds of ``python -m fairshare solve PATH --policy P --json`` (its
    output and warnings about users no machine can serve go to /dev/null)."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "fairshare", "solve", str(path), "--policy", policy, "--json"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)
