"""The misreports a strategic user tries, and what it really gets from one: the manipulations
of strategy-proofness (DRF section 3, Choosy section 3.2, TSF Definition 2) and group
strategy-proofness (H-DRF section 4.2).

A user lies about its demand vector (DRF section 3's examples of gaming: inflate or deflate
one resource, claim an unneeded one, scale everything) or, under placement, about its
constraint (a superset or a subset of its machines, TSF Fig. 2b): :func:`lies_of`. What it
gains is judged with its true demand on its true machines (:func:`true_tasks`), with the
placement of its task count most favourable to it where placements are not unique.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog

from fairshare.cluster import BoolArray, FloatArray
from fairshare.fairness.outcomes import Outcome, lp_optimum, runnable
from fairshare.fairness.scenarios import Document

FIXED_PLACEMENT = frozenset({"per-machine-drf", "independent"})
"""Placed policies whose placement is part of the policy (each machine divided on its own):
a liar is judged on the policy's own placement, not the most favourable one."""


@dataclass(frozen=True)
class Lie:
    """One misreport.

    Parameters
    ----------
    fields : dict of str to Any
        The user's fields as claimed (None: the field is dropped, e.g. ``machines`` to claim
        every machine).
    description : str
        How the explanation sentence says it ("claiming demand <cpu 2> instead of <cpu 1>").
    """

    fields: dict[str, Any]
    description: str


def lies_of(document: Document, i: int, placed: bool) -> list[Lie]:
    """The lies user ``i`` tries: about its demand vector and, with ``placed``, about its
    constraint.

    Parameters
    ----------
    document : Document
        The scenario document.
    i : int
        The user's index.
    placed : bool
        Whether the policy places tasks on machines (constraints matter).

    Returns
    -------
    list of Lie
        Demand lies first, the broad ones (everything scaled, constraints) last.

    Examples
    --------
    >>> document = {
    ...     "resources": ["cpu", "mem"],
    ...     "machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
    ...     "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}}],
    ... }
    >>> for lie in lies_of(document, 0, placed=False)[:3]:
    ...     print(lie.description)
    claiming demand <cpu 2, mem 4> instead of <cpu 1, mem 4>
    claiming demand <cpu 2, mem 4> instead of <cpu 1, mem 4>
    claiming demand <mem 4> instead of <cpu 1, mem 4>
    """
    user = document["users"][i]
    lies = list(_demand_lies(user["demand"], list(document["resources"])))
    if placed:
        lies.extend(_constraint_lies(user, [m["name"] for m in document["machines"]]))
    return lies


def with_lies(document: Document, lies: dict[int, Lie]) -> Document:
    """``document`` with each user of ``lies`` claiming its lie.

    Parameters
    ----------
    document : Document
        The true scenario document (not modified).
    lies : dict of int to Lie
        The liars by index.

    Returns
    -------
    Document
        A copy with the claimed fields.
    """
    lying = copy.deepcopy(document)
    for i, lie in lies.items():
        for key, value in lie.fields.items():
            if value is None:
                lying["users"][i].pop(key, None)
            else:
                lying["users"][i][key] = value
    return lying


def true_tasks(truth: Outcome, lie: Outcome, i: int, best: bool) -> float:
    """Tasks user i really runs with what it was given for its claims: on its true machines,
    with its true demand.

    With ``best``, the placement of the lie's task counts is the one most favourable to user
    i (divisible placements are not unique, and TSF Fig. 2b assumes the liar's tasks land
    where they can run: a linear program); otherwise the policy's own placement.

    Parameters
    ----------
    truth : Outcome
        The allocation of the true scenario (the user's true demand, cap and machines).
    lie : Outcome
        The allocation of the scenario with the lie.
    i : int
        The liar's index.
    best : bool
        Judge on the most favourable placement.

    Returns
    -------
    float
        Tasks, at most the user's cap.

    Raises
    ------
    Inconclusive
        The placement LP failed.
    """
    user = truth.scenario.users[i]
    direct = runnable(user.demand, truth.eligible[i], lie.bundle(i), user.cap)
    if not best:
        return direct
    return max(direct, min(user.cap, _best_placed_tasks(lie, i, user.demand, truth.eligible[i])))


def _demand_lies(demand: dict[str, Any], resources: list[str]) -> Iterator[Lie]:
    """Targeted lies about a demand vector: inflate or deflate one resource, claim an unneeded
    one, scale everything (DRF section 3's examples of gaming)."""
    for r in resources:
        value = demand.get(r, 0)
        options = [value * 2, value + 1] if value else [1, 2]
        if value > 1:
            options.append(value - 1)
        if value and len(demand) > 1:
            options.append(0)
        for option in options:
            claimed = {k: v for k, v in {**demand, r: option}.items() if v}
            yield Lie(
                {"demand": claimed},
                f"claiming demand {_vector(claimed)} instead of {_vector(demand)}",
            )
    scaled = {k: v * 2 for k, v in demand.items()}
    yield Lie({"demand": scaled}, f"claiming demand {_vector(scaled)} instead of {_vector(demand)}")


def _constraint_lies(user: dict[str, Any], machines: list[str]) -> Iterator[Lie]:
    """Constraint supersets and subsets (TSF Definition 2, Fig. 2b)."""
    if len(machines) < 2:
        return
    truth = list(user.get("machines", machines))
    for name in machines:
        if name not in truth:
            claimed = [m for m in machines if m in truth or m == name]
            yield Lie({"machines": claimed}, f"claiming it can run on {name}")
    if "machines" in user and len(truth) < len(machines) - 1:
        yield Lie({"machines": None}, "claiming it can run on every machine")
    if len(truth) > 1:
        for name in truth:
            yield Lie(
                {"machines": [m for m in truth if m != name]},
                f"claiming it cannot run on {name}",
            )


def _best_placed_tasks(lie: Outcome, i: int, demand: FloatArray, eligible: BoolArray) -> float:
    """The most true tasks user i can run over every feasible placement that gives each user
    its task count in ``lie`` on machines it claimed (a linear program)."""
    claimed = lie.scenario.demands
    tasks = lie.allocation.tasks
    pairs = np.argwhere(lie.eligible)
    mine = np.flatnonzero((pairs[:, 0] == i) & eligible[pairs[:, 1]])
    needed = np.flatnonzero(demand > 0)
    size = len(pairs) + len(mine)
    rows: list[FloatArray] = []
    bounds: list[float] = []
    for c in range(lie.capacity.shape[0]):
        for r in range(claimed.shape[1]):
            row = np.zeros(size)
            on = np.flatnonzero(pairs[:, 1] == c)
            row[on] = claimed[pairs[on, 0], r]
            rows.append(row)
            bounds.append(float(lie.capacity[c, r]))
    for j in range(len(tasks)):
        row = np.zeros(size)
        row[np.flatnonzero(pairs[:, 0] == j)] = 1.0
        rows.append(row)
        bounds.append(float(tasks[j]))
        rows.append(-row)
        bounds.append(-float(tasks[j]) * (1 - 1e-9))
    for k, pair in enumerate(mine):
        for resource in needed.tolist():
            row = np.zeros(size)
            row[len(pairs) + k] = demand[resource]
            row[pair] = -claimed[i, resource]
            rows.append(row)
            bounds.append(0.0)
    objective = np.zeros(size)
    objective[len(pairs) :] = -1.0
    solution = linprog(objective, A_ub=np.array(rows), b_ub=np.array(bounds), method="highs")
    return lp_optimum(solution, "best placement")


def _vector(demand: dict[str, Any]) -> str:
    """A demand as a lie's description shows it: ``<cpu 1, mem 2>``."""
    return "<" + ", ".join(f"{k} {v:g}" for k, v in demand.items()) + ">"
