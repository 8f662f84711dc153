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

Examples
--------
The ``hierarchy`` case shrunk to 20 users (figures of other sizes are not comparable with
the recorded ones):

>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as directory:
...     prepared = prepare(CASES["hierarchy"], Path(directory), users=20)
...     seconds, allocation = time_in_process(prepared.scenario, "hdrf", False, repeat=1)
>>> prepared.path.name, prepared.machine_types, len(allocation.tasks)
('hierarchy.yaml', 3, 20)
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
"""Boolean machine attributes of the constrained scales (Sharma et al.'s Google traces)."""


def hierarchy_scenario(users: int = 1000, seed: int = 1) -> dict[str, object]:
    """The ``hierarchy`` case's scenario document: ten organisations of ten teams (random
    weights), users spread evenly with three-resource demands, half of them capped; 100
    machines of three shapes (CPU, memory and GPU heavy).

    Parameters
    ----------
    users : int
        Users, spread over the 100 teams.
    seed : int
        Seeds weights, demands and caps.

    Returns
    -------
    dict
        A scenario document (SPEC section 1).

    Examples
    --------
    >>> document = hierarchy_scenario(users=20)
    >>> len(document["queues"]), document["users"][0]["queue"]
    (110, 'org0/team0')
    """
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
    """A scenario document of Google-like constraints (Choosy section 7, after Sharma et al.).

    Machine types with 21 boolean attributes of skewed prevalence; 60% of the users require
    1-3 of them (mean about 1.8), rarer attributes more often, as constrained jobs tend to
    ask for special hardware.

    Parameters
    ----------
    users : int
        Users, with random weights, 30% of them capped.
    types : int
        Machine types (entries with a ``count``).
    per_type : int
        Machines of each type.
    resources : int
        1 (``cpu``), 2 (and ``mem``) or 3 (and ``gpu``).
    seed : int
        Seeds every draw.

    Returns
    -------
    dict
        A scenario document (SPEC section 1).

    Examples
    --------
    >>> document = google_like(3, 2, 5, resources=2)
    >>> [(m["name"], m["count"], m["capacity"]) for m in document["machines"]]
    [('t0', 5, {'cpu': 8, 'mem': 16}), ('t1', 5, {'cpu': 64, 'mem': 128})]
    >>> document["users"][0]
    {'name': 'u0', 'demand': {'cpu': 2, 'mem': 14}, 'weight': 2, 'constraint': 'a1 and a12'}
    """
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
    """A scenario and what is timed on it.

    Attributes
    ----------
    name : str
        The case's name (``hierarchy``, ``cmmf``, ``tsf``), also its file's.
    users : int
        The case's own size (other sizes are not comparable with the recorded figures).
    repeat : int
        Runs of each timing by default (the scripts' defaults).
    build : callable
        ``build(users)`` makes the scenario document.
    suffix : str
        The file's suffix, ``.yaml`` or ``.json``.
    in_process : tuple of (str, bool)
        The (policy, integral) pairs timed in process.
    end_to_end : tuple of str
        The policies timed end to end.
    """

    name: str
    users: int
    repeat: int
    build: Callable[[int], dict[str, object]]
    suffix: str
    in_process: tuple[tuple[str, bool], ...]
    end_to_end: tuple[str, ...]


_HIERARCHY_POLICIES = ("drf", "hdrf", "collapsed-drf", "asset", "ceei")
"""The pooled policies the ``hierarchy`` case times, divisible and integral."""

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
"""The cases by name; ``fairshare bench solve`` runs them in this order (``--only`` picks)."""


@dataclass(frozen=True)
class Prepared:
    """A case's scenario on disk and loaded, with what loading and coalescing took.

    Attributes
    ----------
    case : SolveCase
        The case.
    path : Path
        The scenario file.
    scenario : Scenario
        The loaded scenario.
    load_seconds, types_seconds : float
        Wall seconds of loading the file and of coalescing machine types (Choosy 5.1).
    machine_types : int
        Machine types after coalescing.
    narrow_users : float
        Fraction of users able to use under 20% of the machines (their constraints).
    """

    case: SolveCase
    path: Path
    scenario: Scenario
    load_seconds: float
    types_seconds: float
    machine_types: int
    narrow_users: float


def prepare(case: SolveCase, directory: Path, users: int | None = None) -> Prepared:
    """Write ``case``'s scenario in ``directory``, load it and coalesce its machine types.

    Parameters
    ----------
    case : SolveCase
        The case.
    directory : Path
        Where the scenario file is written (``NAME.yaml`` or ``NAME.json``).
    users : int, optional
        Users (default: the case's own size).

    Returns
    -------
    Prepared
    """
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
    """Time :func:`fairshare.solvers.solve` in this process.

    Parameters
    ----------
    scenario : Scenario
        The loaded scenario.
    policy : str
        A solver policy.
    integral : bool
        Whole tasks instead of the divisible allocation.
    repeat : int
        Runs (at least 1).

    Returns
    -------
    (float, Allocation)
        The median wall seconds of the runs, and the last run's allocation.
    """
    runs = []
    allocation: Allocation | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        allocation = solve(scenario, policy, integral=integral)
        runs.append(time.perf_counter() - start)
    assert allocation is not None, "repeat must be at least 1"
    return statistics.median(runs), allocation


def time_end_to_end(path: Path, policy: str, repeat: int) -> float:
    """Time ``python -m fairshare solve PATH --policy P --json`` in fresh interpreters.

    Its output, and the warnings about users no machine can serve, go to /dev/null.

    Parameters
    ----------
    path : Path
        The scenario file.
    policy : str
        A solver policy.
    repeat : int
        Runs.

    Returns
    -------
    float
        The median wall seconds.

    Raises
    ------
    subprocess.CalledProcessError
        The command failed.
    """
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
