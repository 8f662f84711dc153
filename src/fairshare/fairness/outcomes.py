"""How the fairness properties see an allocation: a scenario document solved exactly as
``fairshare solve`` does, its allocation per column, the tasks a bundle of resources runs, and
the weights that fix what a user is entitled to.

Tasks are Leontief and divisible: a user values only whole bundles of its demand vector, and on
each machine it may use (its constraint), so a bundle of resources is worth
``sum over usable machines m of min_r bundle_mr / d_ir`` tasks to user i (TSF section III;
:func:`runnable`). Pooled policies see the cluster as one machine (DRF section 4), one column
of an :class:`Outcome`.

A property's linear programs (:mod:`fairshare.fairness.properties`,
:mod:`fairshare.fairness.manipulations`) read their optimum through :func:`lp_optimum`: a
failed LP makes the trial :class:`Inconclusive`, never "no gain".
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairshare.allocation import Allocation
from fairshare.cluster import BoolArray, FloatArray
from fairshare.errors import FairshareError
from fairshare.fairness.scenarios import Document, domain_of
from fairshare.solvers import solve
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import Scenario

TOLERANCE = 1e-7
"""Relative margin by which a quantity must exceed another to count as more (:func:`better`)."""
_CACHE_LIMIT = 50_000
_cache: dict[tuple[str, str], tuple[Scenario, Allocation]] = {}


class Inconclusive(FairshareError):
    """A trial that cannot be decided: one of the linear programs a property solves to judge
    an allocation failed (infeasible by rounding, or numerical trouble). It is neither a
    violation nor evidence that the property holds; the search counts it apart."""


def lp_optimum(solution: Any, what: str) -> float:
    """The optimum of a maximisation solved as ``linprog`` of its negation.

    Parameters
    ----------
    solution : scipy.optimize.OptimizeResult
        What ``linprog`` returned.
    what : str
        The LP's name, for the message.

    Returns
    -------
    float
        The maximum (never 0 for a failed LP: a failed LP is not "no gain").

    Raises
    ------
    Inconclusive
        The LP failed.
    """
    if solution.status != 0:
        raise Inconclusive(f"the {what} LP failed: {solution.message}")
    return float(-solution.fun)


def allocate(document: Document, policy: str) -> tuple[Scenario, Allocation]:
    """Parse and solve ``document`` exactly as ``fairshare solve`` does (memoised: shrinking
    and the manipulations revisit the same scenarios many times).

    Parameters
    ----------
    document : Document
        A scenario document (SPEC section 1).
    policy : str
        A solver policy's name.

    Returns
    -------
    tuple of (Scenario, Allocation)

    Raises
    ------
    ScenarioError, InvalidRequest, SolverFailure
        As ``fairshare solve`` would.
    """
    key = (policy, json.dumps(document, sort_keys=True))
    hit = _cache.get(key)
    if hit is None:
        scenario = parse_scenario(copy.deepcopy(document), "<counterexample>")
        hit = (scenario, solve(scenario, policy))
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[key] = hit
    return hit


@dataclass(frozen=True)
class Outcome:
    """An allocation seen per column: machines for placed policies, the whole cluster as one
    column for pooled ones (built by :func:`outcome`).

    Parameters
    ----------
    scenario : Scenario
        The parsed scenario.
    allocation : Allocation
        The policy's allocation.
    eligible : BoolArray
        users x columns: where each user may run.
    capacity : FloatArray
        columns x resources.
    tasks_on : FloatArray
        users x columns: the tasks each user runs there.
    """

    scenario: Scenario
    allocation: Allocation
    eligible: BoolArray
    capacity: FloatArray
    tasks_on: FloatArray

    def bundle(self, user: int) -> FloatArray:
        """The resources user ``user`` holds on each column.

        Parameters
        ----------
        user : int
            The user's index.

        Returns
        -------
        FloatArray
            columns x resources.
        """
        demand = self.scenario.demands[user]
        return np.asarray(self.tasks_on[user][:, None] * demand[None, :], dtype=np.float64)


def outcome(document: Document, policy: str) -> Outcome:
    """The allocation of ``document`` under ``policy``, per column (:func:`allocate`).

    Parameters
    ----------
    document : Document
        A scenario document.
    policy : str
        A solver policy's name.

    Returns
    -------
    Outcome
        Per machine for a placed policy, the whole cluster as one column for a pooled one.

    Raises
    ------
    ScenarioError, InvalidRequest, SolverFailure
        As ``fairshare solve`` would.

    Examples
    --------
    DRF section 4.1: A (<1 CPU, 4 GB>) runs 3 tasks, B (<3 CPUs, 1 GB>) 2; B's bundle,
    <6 CPUs, 2 GB>, would run half a task of A's.

    >>> document = {
    ...     "resources": ["cpu", "mem"],
    ...     "machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
    ...     "users": [
    ...         {"name": "A", "demand": {"cpu": 1, "mem": 4}},
    ...         {"name": "B", "demand": {"cpu": 3, "mem": 1}},
    ...     ],
    ... }
    >>> result = outcome(document, "drf")
    >>> result.allocation.tasks.tolist()
    [3.0, 2.0]
    >>> runnable(result.scenario.demands[0], result.eligible[0], result.bundle(1))
    0.5
    """
    scenario, allocation = allocate(document, policy)
    n = len(scenario.users)
    if allocation.placement is None:
        return Outcome(
            scenario,
            allocation,
            np.ones((n, 1), dtype=np.bool_),
            scenario.cluster.total[None, :],
            allocation.tasks[:, None],
        )
    return Outcome(
        scenario,
        allocation,
        scenario.eligibility(),
        scenario.cluster.capacities,
        allocation.placement.toarray(),
    )


def runnable(
    demand: FloatArray, eligible: BoolArray, bundle: FloatArray, cap: float = np.inf
) -> float:
    """Tasks of ``demand`` that ``bundle`` runs on the usable columns (TSF section III).

    Parameters
    ----------
    demand : FloatArray
        Per resource, one task.
    eligible : BoolArray
        Per column, whether the user may run there.
    bundle : FloatArray
        columns x resources.
    cap : float
        The most tasks the user wants.

    Returns
    -------
    float
        ``min(cap, sum over usable columns of min_r bundle_r / demand_r)``.
    """
    needed = demand > 0
    per_column = np.min(bundle[:, needed] / demand[needed], axis=1)
    return float(min(cap, float(per_column[eligible].sum())))


def better(new: float, old: float) -> bool:
    """Whether ``new`` exceeds ``old`` by more than the relative :data:`TOLERANCE`.

    Parameters
    ----------
    new, old : float
        Two counts of tasks (or shares).

    Returns
    -------
    bool

    Examples
    --------
    >>> better(3.0, 2.0), better(2.0 + 1e-12, 2.0)
    (True, False)
    """
    return new > old + TOLERANCE * max(1.0, abs(old))


def fmt(value: float) -> str:
    """A number for an explanation sentence (four significant digits).

    Parameters
    ----------
    value : float
        The number.

    Returns
    -------
    str

    Examples
    --------
    >>> fmt(2 / 3), fmt(15.0)
    ('0.6667', '15')
    """
    return f"{float(value):.4g}"


def tasks_phrase(value: float) -> str:
    """``1 task``, ``0.6667 tasks``: a count of tasks for an explanation sentence.

    Parameters
    ----------
    value : float
        The count.

    Returns
    -------
    str

    Examples
    --------
    >>> tasks_phrase(1.0), tasks_phrase(2 / 3)
    ('1 task', '0.6667 tasks')
    """
    text = fmt(value)
    return f"{text} task" if text == "1" else f"{text} tasks"


def leaf_guarantees(scenario: Scenario) -> tuple[FloatArray, FloatArray]:
    """The guaranteed dominant shares of a queue tree (H-DRF section 2.1).

    Parameters
    ----------
    scenario : Scenario
        The scenario (its queues and users).

    Returns
    -------
    tuple of (FloatArray, FloatArray)
        Per tree node and per user: the product of ``w / sum(w of siblings)`` along the path
        from the root.
    """
    tree = build_hierarchy(scenario)
    guarantee = np.ones(tree.size)
    for node in range(1, tree.size):
        parent = int(tree.parent[node])
        siblings = tree.children[parent]
        guarantee[node] = (
            guarantee[parent] * tree.weight[node] / sum(tree.weight[s] for s in siblings)
        )
    return guarantee, np.asarray(guarantee[tree.leaf_node], dtype=np.float64)


def entitlement_weights(scenario: Scenario, policy: str) -> FloatArray:
    """The weights that fix what a user is entitled to.

    Parameters
    ----------
    scenario : Scenario
        The scenario.
    policy : str
        A solver policy's name.

    Returns
    -------
    FloatArray
        Per user: its weight, or for a hierarchical policy the product of weight fractions
        along its path (H-DRF section 2.1).
    """
    if domain_of(policy).hierarchical:
        return leaf_guarantees(scenario)[1]
    return scenario.weights


def tasks_alone(scenario: Scenario) -> FloatArray:
    """The tasks a user could run alone on each machine, ignoring its constraint (the terms of
    TSF's ``h_i``, section V-A).

    Parameters
    ----------
    scenario : Scenario
        The scenario.

    Returns
    -------
    FloatArray
        users x machines, divisible tasks.
    """
    demands = scenario.demands
    capacity = scenario.cluster.capacities
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(
            demands[:, None, :] > 0, capacity[None, :, :] / demands[:, None, :], np.inf
        )
    return np.asarray(ratio.min(axis=2), dtype=np.float64)
