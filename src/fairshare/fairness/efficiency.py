"""Envy-freeness (TSF Definition 3) and Pareto efficiency (DRF section 3, TSF Definition 4): an
allocation compared with the others of the same cluster.

Envy-freeness: no user would run more with another user's allocation, weighted,
``n_i >= (w_i / w_j) n_{i<->j}``. Pareto efficiency: no user can run more tasks, by any feasible
re-placement, with no other user running fewer, a linear program (:func:`most_tasks`).

Examples
--------
DRF section 4.1's allocation (A runs 3 tasks, B 2) is envy-free and Pareto efficient:

>>> document = {
...     "resources": ["cpu", "mem"],
...     "machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
...     "users": [
...         {"name": "A", "demand": {"cpu": 1, "mem": 4}},
...         {"name": "B", "demand": {"cpu": 3, "mem": 1}},
...     ],
... }
>>> EnvyFreeness().violation(document, "drf") is None
True
>>> ParetoEfficiency().violation(document, "drf") is None
True
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import linprog

from fairshare.cluster import FloatArray
from fairshare.fairness.outcomes import (
    Outcome,
    better,
    entitlement_weights,
    fmt,
    lp_optimum,
    outcome,
    runnable,
    tasks_phrase,
)
from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape


class EnvyFreeness:
    """Envy-freeness (TSF Definition 3): no user would run more with another's allocation,
    weighted: ``n_i >= (w_i / w_j) n_{i<->j}``."""

    name = "envy-freeness"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 80

    def applies(self, domain: Domain) -> bool:
        """Defined for every policy.

        Parameters
        ----------
        domain : Domain
            A policy's domain.

        Returns
        -------
        bool
            Always True.
        """
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Check envy-freeness on one scenario under ``policy``.

        Violated when some user would run more, weighted, with another user's allocation.

        Parameters
        ----------
        document : Document
            The scenario document.
        policy : str
            A solver policy's name.
        focus : tuple of str
            Unused: the property checks every user.

        Returns
        -------
        Violation or None
            None if the property holds on ``document``.
        """
        result = outcome(document, policy)
        users = result.scenario.users
        weights = entitlement_weights(result.scenario, policy)
        for i, j in itertools.permutations(range(len(users)), 2):
            swapped = runnable(users[i].demand, result.eligible[i], result.bundle(j))
            deserved = min(users[i].cap, swapped * weights[i] / weights[j])
            own = float(result.allocation.tasks[i])
            if better(deserved, own):
                scale = "" if weights[i] == weights[j] else f" (weights {fmt(weights[i])}:"
                scale += "" if weights[i] == weights[j] else f"{fmt(weights[j])})"
                return Violation(
                    f"{users[i].name} runs {tasks_phrase(own)} but would run {fmt(swapped)} "
                    f"with {users[j].name}'s allocation{scale}"
                )
        return None


def most_tasks(result: Outcome, user: int | None) -> float:
    """The most tasks ``user`` (or, for None, all users together) can run by any feasible
    re-placement in which no user runs fewer tasks than now (TSF Definition 4's test).

    Parameters
    ----------
    result : Outcome
        The allocation, per column.
    user : int or None
        The user to maximise, or None for the total.

    Returns
    -------
    float
        The optimum of the linear program.

    Raises
    ------
    Inconclusive
        The linear program failed.
    """
    scenario = result.scenario
    demands = scenario.demands
    pairs = np.argwhere(result.eligible)
    n, columns = result.eligible.shape
    resources = demands.shape[1]
    rows: list[FloatArray] = []
    bounds: list[float] = []
    for c in range(columns):
        for r in range(resources):
            row = np.zeros(len(pairs))
            on = pairs[:, 1] == c
            row[on] = demands[pairs[on, 0], r]
            rows.append(row)
            bounds.append(float(result.capacity[c, r]))
    for i in range(n):
        mine = (pairs[:, 0] == i).astype(np.float64)
        now = float(result.allocation.tasks[i])
        rows.append(-mine)
        # Only rounding slack: a looser bound would add up to a phantom gain across users.
        bounds.append(-(now - 1e-9 * max(1.0, now)))
        if np.isfinite(scenario.users[i].cap):
            rows.append(mine)
            bounds.append(float(scenario.users[i].cap))
    objective = -np.ones(len(pairs)) if user is None else -(pairs[:, 0] == user).astype(float)
    solution = linprog(objective, A_ub=np.array(rows), b_ub=np.array(bounds), method="highs")
    return lp_optimum(solution, "re-placement")


class ParetoEfficiency:
    """Pareto efficiency (DRF section 3, TSF Definition 4): no user can run more tasks, by any
    feasible re-placement, with no other user running fewer (:func:`most_tasks`)."""

    name = "pareto-efficiency"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 60

    def applies(self, domain: Domain) -> bool:
        """Defined for every policy.

        Parameters
        ----------
        domain : Domain
            A policy's domain.

        Returns
        -------
        bool
            Always True.
        """
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Check Pareto efficiency on one scenario under ``policy``.

        Violated when some user could run more by a re-placement in which no other user runs fewer
        (linear programs).

        Parameters
        ----------
        document : Document
            The scenario document.
        policy : str
            A solver policy's name.
        focus : tuple of str
            Unused: the property checks every user.

        Returns
        -------
        Violation or None
            None if the property holds on ``document``.
        """
        result = outcome(document, policy)
        tasks = result.allocation.tasks
        if not better(most_tasks(result, None), float(tasks.sum()) + 1e-6):
            return None
        for i, user in enumerate(result.scenario.users):
            best = most_tasks(result, i)
            if better(best, float(tasks[i])):
                return Violation(
                    f"{user.name} runs {tasks_phrase(tasks[i])} but could run {fmt(best)} "
                    f"with no other user running fewer"
                )
        return None
