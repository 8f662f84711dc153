"""The JSON document of an allocation (SPEC section 2).

It is shared by ``fairshare solve --json`` and the Python API's
:meth:`fairshare.api.Solution.to_dict`.
"""

from __future__ import annotations

from fairshare.allocation.types import Allocation
from fairshare.workload.model import Scenario

DECIMALS = 6
"""Digits after the decimal point of every number in the document."""


def rounded(value: float, digits: int = DECIMALS) -> float:
    """``value`` rounded to ``digits`` decimals, with ``-0.0`` written as ``0.0``.

    Parameters
    ----------
    value : float
        A number of the document.
    digits : int
        Decimals kept.

    Returns
    -------
    float

    Examples
    --------
    >>> from fairshare.allocation.document import rounded
    >>> rounded(2 / 3), rounded(-1e-9)
    (0.666667, 0.0)
    """
    result = round(float(value), digits)
    return 0.0 if result == 0 else result


def allocation_document(scenario: Scenario, allocation: Allocation) -> dict[str, object]:
    """The SPEC section 2 document of ``allocation`` of ``scenario``'s users.

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of (names of users, machines and resources).
    allocation : Allocation
        Its users and machines in scenario order.

    Returns
    -------
    dict of str to object
        ``policy``, ``integral``, ``users`` (per user name: ``tasks``, ``share`` and, for
        policies that place tasks, ``placement``: tasks per machine name, machines with none
        left out), ``resources`` (per resource: ``capacity`` and ``allocated``) and
        ``warnings``; numbers rounded to 6 decimals.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.allocation import Allocation, allocation_document
    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
    ...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
    ...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
    ...     source="drf-section-4.1",
    ... )
    >>> allocation = Allocation("drf", True, np.array([3.0, 2.0]), np.array([2 / 3, 2 / 3]))
    >>> document = allocation_document(scenario, allocation)
    >>> document["users"]
    {'A': {'tasks': 3.0, 'share': 0.666667}, 'B': {'tasks': 2.0, 'share': 0.666667}}
    >>> document["resources"]["mem"]
    {'capacity': 18.0, 'allocated': 14.0}
    """
    users: dict[str, object] = {}
    placed: list[dict[str, float]] = [{} for _ in scenario.users]
    if allocation.placement is not None:
        p = allocation.placement
        names = scenario.cluster.machine_names
        for user, machine, tasks in sorted(
            zip(p.users.tolist(), p.machines.tolist(), p.tasks, strict=True)
        ):
            if rounded(tasks) != 0:
                placed[user][names[machine]] = rounded(tasks)
    for i, user in enumerate(scenario.users):
        entry: dict[str, object] = {
            "tasks": rounded(allocation.tasks[i]),
            "share": rounded(allocation.shares[i]),
        }
        if allocation.placement is not None:
            entry["placement"] = placed[i]
        users[user.name] = entry
    allocated = allocation.tasks @ scenario.demands
    resources = {
        name: {
            "capacity": rounded(scenario.cluster.total[r]),
            "allocated": rounded(allocated[r]),
        }
        for r, name in enumerate(scenario.cluster.resources)
    }
    return {
        "policy": allocation.policy,
        "integral": allocation.integral,
        "users": users,
        "resources": resources,
        "warnings": list(allocation.warnings),
    }
