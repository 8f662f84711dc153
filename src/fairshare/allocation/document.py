"""The JSON document of an allocation (SPEC section 2).

It is shared by ``fairshare solve --json`` and the Python API's
:meth:`fairshare.api.Solution.to_dict`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from fairshare.allocation.types import Allocation, Placement
from fairshare.cluster import FloatArray
from fairshare.workload.model import Scenario


def exact(value: float) -> float:
    """``value`` as the document holds it: the float itself, which JSON writes as its shortest
    round-trip representation (Python's ``repr``), with ``-0.0`` written as ``0.0``.

    Never rounded: a 3e-7-task allocation prints 3e-7 (not 0.0), and a task count rounded up
    to some decimals times a large demand would print a placement over a machine's capacity.
    Tables for people round; the JSON does not.

    Parameters
    ----------
    value : float
        A number of the document.

    Returns
    -------
    float

    Examples
    --------
    >>> from fairshare.allocation.document import exact
    >>> exact(2 / 3), exact(3e-7), exact(-0.0)
    (0.6666666666666666, 3e-07, 0.0)
    """
    result = float(value)
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
        ``warnings``; numbers exact (:func:`exact`).

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
    >>> document["users"]["A"], document["users"]["B"]["tasks"]
    ({'tasks': 3.0, 'share': 0.6666666666666666}, 2.0)
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
            if tasks != 0:
                placed[user][names[machine]] = exact(tasks)
    for i, user in enumerate(scenario.users):
        entry: dict[str, object] = {
            "tasks": exact(allocation.tasks[i]),
            "share": exact(allocation.shares[i]),
        }
        if allocation.placement is not None:
            entry["placement"] = placed[i]
        users[user.name] = entry
    allocated = allocation.tasks @ scenario.demands
    resources = {
        name: {
            "capacity": exact(scenario.cluster.total[r]),
            "allocated": exact(allocated[r]),
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


def printed_allocation(scenario: Scenario, allocation: Allocation) -> Allocation:
    """``allocation`` as its JSON document prints it: what reading the document's JSON text
    back gives, so that the invariant checks see the numbers a reader gets.

    Parameters
    ----------
    scenario : Scenario
        The scenario the allocation is of.
    allocation : Allocation
        The allocation.

    Returns
    -------
    Allocation
        Tasks, shares and placement read back from the printed document (warnings and
        extras kept).

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.allocation import Allocation
    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 1}}],
    ...      "users": [{"name": "A", "demand": {"cpu": 1e-7}}]},
    ...     source="tiny",
    ... )
    >>> allocation = Allocation("drf", False, np.array([3e-7]), np.array([3e-14]))
    >>> printed_allocation(scenario, allocation).tasks.tolist()
    [3e-07]
    """
    # The document holds each float itself (``exact``), and JSON writes a float as its
    # shortest round-trip repr, so reading it back gives the same float: the document as
    # read is the allocation with -0.0 as 0.0 and zero placements left out, computed here
    # without writing the text (tests/test_lp_fallback.py compares both ways).
    tasks = _exact_array(allocation.tasks)
    shares = _exact_array(allocation.shares)
    placement = allocation.placement
    if placement is not None:
        keep = placement.tasks != 0
        placement = Placement(
            placement.users[keep],
            placement.machines[keep],
            _exact_array(placement.tasks[keep]),
            placement.shape,
        )
    return replace(allocation, tasks=tasks, shares=shares, placement=placement)


def _exact_array(values: FloatArray) -> FloatArray:
    """:func:`exact` of every element."""
    out = np.asarray(values, dtype=np.float64)
    return np.where(out == 0, 0.0, out)
