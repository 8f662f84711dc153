"""The fairness properties of the papers, as checks on one scenario document.

Each property's ``violation(document, policy)`` returns ``None`` when the property holds on that
scenario, or one sentence explaining the violation. The search (``fairshare.fairness.search``)
feeds them random scenarios and shrinks what they find.

Definitions (tasks are Leontief: a user values only whole bundles of its demand vector):

- sharing incentive (DRF section 3): each user runs at least the tasks it could run with its
  weighted share w_i / sum(w) of every resource (capped by its own demand);
- strategy-proofness (DRF section 3, TSF Definition 2): no user runs more (true) tasks by
  misreporting its demand vector;
- envy-freeness (TSF Definition 3): user i could not run more than n_i * w_j / w_i tasks with
  user j's allocation;
- Pareto efficiency (DRF section 3, TSF Definition 4): no user can get more tasks without
  another getting fewer (for divisible pooled allocations: every user is capped or needs a
  saturated resource);
- single-machine fairness (TSF Definition 5): on one machine the allocation is DRF's;
- single-resource fairness (TSF Definition 6): with one resource it is CMMF's (max-min on one
  resource while CMMF is not available);
- hierarchical share guarantee (H-DRF section 2.1): every queue and user gets at least its
  guaranteed dominant share, the product of w / sum(w of siblings) along its path;
- group strategy-proofness (H-DRF section 4.2): no coalition of users can misreport so that all
  are weakly better off and one strictly;
- population monotonicity (H-DRF section 4.3): no user's allocation drops when another leaves.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np

from fairshare.allocation import Allocation
from fairshare.allocation.invariants import waste_violations
from fairshare.cluster import FloatArray
from fairshare.fairness.scenarios import Document, ScenarioShape
from fairshare.solvers import SOLVER_POLICIES, solve
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import Scenario

TOLERANCE = 1e-7


def allocate(document: Document, policy: str) -> tuple[Scenario, Allocation]:
    scenario = parse_scenario(document, "<counterexample>")
    return scenario, solve(scenario, policy)


def _better(new: float, old: float) -> bool:
    return new > old + TOLERANCE * max(1.0, abs(old))


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _vector(demand: dict[str, Any]) -> str:
    return "<" + ", ".join(f"{k} {v:g}" for k, v in demand.items()) + ">"


def useful_tasks(true_demand: FloatArray, resources: FloatArray, cap: float = np.inf) -> float:
    """Tasks of ``true_demand`` that ``resources`` can run (Leontief), at most ``cap``."""
    needed = true_demand > 0
    return float(min(cap, float(np.min(resources[needed] / true_demand[needed]))))


class FairnessProperty(Protocol):
    """A property of the papers, checkable on one scenario under one policy."""

    @property
    def name(self) -> str: ...

    @property
    def shape(self) -> ScenarioShape: ...

    @property
    def trials(self) -> int:
        """Default number of random scenarios to search."""
        ...

    def violation(self, document: Document, policy: str) -> str | None: ...


class SharingIncentive:
    name = "sharing-incentive"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        scenario, allocation = allocate(document, policy)
        weights = scenario.weights
        total = scenario.cluster.total
        for i, user in enumerate(scenario.users):
            fraction = weights[i] / weights.sum()
            entitled = useful_tasks(user.demand, fraction * total, user.cap)
            if _better(entitled, float(allocation.tasks[i])):
                return (
                    f"{user.name} runs {_fmt(allocation.tasks[i])} tasks but could run "
                    f"{_fmt(entitled)} with its {_fmt(fraction)} of every resource"
                )
        return None


def _misreports(demand: dict[str, Any], resources: list[str]) -> Iterator[dict[str, Any]]:
    """Targeted lies about a demand vector: inflate or deflate one resource, claim an unneeded
    one, scale everything."""
    for r in resources:
        value = demand.get(r, 0)
        options = [value * 2, value * 3, value + 1] if value else [1, 2]
        if value > 1:
            options.append(value - 1)
        for option in options:
            yield {**demand, r: option}
    yield {k: v * 2 for k, v in demand.items()}


class StrategyProofness:
    name = "strategy-proofness"
    shape = ScenarioShape(weights=True)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        scenario, truthful = allocate(document, policy)
        resources = list(scenario.cluster.resources)
        for i, user in enumerate(scenario.users):
            honest = float(truthful.tasks[i])
            raw = document["users"][i]
            for claimed in _misreports(raw["demand"], resources):
                lying = copy.deepcopy(document)
                lying["users"][i]["demand"] = claimed
                lie_scenario, lie = allocate(lying, policy)
                got = lie.tasks[i] * lie_scenario.users[i].demand
                real = useful_tasks(user.demand, got, user.cap)
                if _better(real, honest):
                    return (
                        f"{user.name} runs {_fmt(real)} tasks instead of {_fmt(honest)} by "
                        f"claiming demand {_vector(claimed)} instead of {_vector(raw['demand'])}"
                    )
        return None


class EnvyFreeness:
    name = "envy-freeness"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        scenario, allocation = allocate(document, policy)
        weights = scenario.weights
        for i, j in itertools.permutations(range(len(scenario.users)), 2):
            other = allocation.tasks[j] * scenario.users[j].demand
            swapped = useful_tasks(scenario.users[i].demand, other)
            deserved = min(scenario.users[i].cap, swapped * weights[i] / weights[j])
            if _better(deserved, float(allocation.tasks[i])):
                return (
                    f"{scenario.users[i].name} runs {_fmt(allocation.tasks[i])} tasks but would "
                    f"run {_fmt(swapped)} with {scenario.users[j].name}'s allocation"
                    + (
                        ""
                        if weights[i] == weights[j]
                        else f" (weights {weights[i]:g}:{weights[j]:g})"
                    )
                )
        return None


class ParetoEfficiency:
    name = "pareto-efficiency"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        scenario, allocation = allocate(document, policy)
        wasted = waste_violations(scenario, allocation)
        if wasted:
            return wasted[0].replace("user ", "", 1) + ", so it could run more at no one's cost"
        return None


class SingleMachineFairness:
    name = "single-machine-fairness"
    shape = ScenarioShape(weights=True, caps=True, max_machines=1)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        if len(document["machines"]) != 1:
            return None
        scenario, allocation = allocate(document, policy)
        _, reference = allocate(document, "drf")
        return _differs(scenario, allocation, reference, "DRF on this single machine")


class SingleResourceFairness:
    name = "single-resource-fairness"
    shape = ScenarioShape(weights=True, caps=True, max_resources=1, max_machines=3)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        if len(document["resources"]) != 1:
            return None
        scenario, allocation = allocate(document, policy)
        reference_policy = "cmmf" if "cmmf" in SOLVER_POLICIES else "max-min"
        _, reference = allocate(document, reference_policy)
        return _differs(scenario, allocation, reference, f"{reference_policy} on this resource")


def _differs(
    scenario: Scenario, allocation: Allocation, reference: Allocation, what: str
) -> str | None:
    for i, user in enumerate(scenario.users):
        if abs(allocation.tasks[i] - reference.tasks[i]) > TOLERANCE * max(1.0, reference.tasks[i]):
            return (
                f"{user.name} runs {_fmt(allocation.tasks[i])} tasks where {what} gives "
                f"{_fmt(reference.tasks[i])}"
            )
    return None


def _dominant_shares_per_node(scenario: Scenario, allocation: Allocation) -> FloatArray:
    tree = build_hierarchy(scenario)
    usage = tree.ancestors @ (allocation.tasks[:, None] * scenario.demands)
    total = scenario.cluster.total
    return np.asarray((usage / np.where(total > 0, total, 1.0)).max(axis=1), dtype=np.float64)


class HierarchicalShareGuarantee:
    name = "hierarchical-share-guarantee"
    shape = ScenarioShape(queues=True, max_users=5)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        scenario, allocation = allocate(document, policy)
        tree = build_hierarchy(scenario)
        shares = _dominant_shares_per_node(scenario, allocation)
        guarantee = np.ones(tree.size)
        for node in range(1, tree.size):
            parent = int(tree.parent[node])
            siblings = tree.children[parent]
            guarantee[node] = (
                guarantee[parent] * tree.weight[node] / sum(tree.weight[s] for s in siblings)
            )
        for node in range(1, tree.size):
            if _better(float(guarantee[node]), float(shares[node])):
                kind = "user" if tree.user_of[node] >= 0 else "queue"
                return (
                    f"{kind} {tree.names[node]} gets a dominant share of {_fmt(shares[node])} "
                    f"but is guaranteed {_fmt(guarantee[node])}"
                )
        return None


class GroupStrategyProofness:
    name = "group-strategy-proofness"
    shape = ScenarioShape(queues=True, max_users=4, max_resources=2)
    trials = 60

    def violation(self, document: Document, policy: str) -> str | None:
        scenario, truthful = allocate(document, policy)
        resources = list(scenario.cluster.resources)
        users = scenario.users
        for i, j in itertools.combinations(range(len(users)), 2):
            lies_i = [None, *_misreports(document["users"][i]["demand"], resources)]
            lies_j = [None, *_misreports(document["users"][j]["demand"], resources)]
            for claim_i, claim_j in itertools.product(lies_i, lies_j):
                if claim_i is None and claim_j is None:
                    continue
                lying = copy.deepcopy(document)
                for k, claim in ((i, claim_i), (j, claim_j)):
                    if claim is not None:
                        lying["users"][k]["demand"] = claim
                lie_scenario, lie = allocate(lying, policy)
                gains = []
                for k in (i, j):
                    got = lie.tasks[k] * lie_scenario.users[k].demand
                    gains.append((useful_tasks(users[k].demand, got, users[k].cap), k))
                weakly = all(not _better(float(truthful.tasks[k]), real) for real, k in gains)
                strictly = any(_better(real, float(truthful.tasks[k])) for real, k in gains)
                if weakly and strictly:
                    parts = [
                        f"{users[k].name} runs {_fmt(real)} instead of {_fmt(truthful.tasks[k])}"
                        for real, k in gains
                    ]
                    claims = [
                        f"{users[k].name} claims {_vector(c)}"
                        for k, c in ((i, claim_i), (j, claim_j))
                        if c is not None
                    ]
                    return " and ".join(parts) + " when " + " and ".join(claims)
        return None


class PopulationMonotonicity:
    name = "population-monotonicity"
    shape = ScenarioShape(queues=True, max_users=4)
    trials = 300

    def violation(self, document: Document, policy: str) -> str | None:
        scenario, before = allocate(document, policy)
        names = [u.name for u in scenario.users]
        for leaving in range(len(names)):
            smaller = copy.deepcopy(document)
            del smaller["users"][leaving]
            used = {u.get("queue") for u in smaller["users"]}
            if "queues" in smaller:
                smaller["queues"] = [q for q in smaller["queues"] if q["path"] in used]
            _, after = allocate(smaller, policy)
            for k, name in enumerate(n for n in names if n != names[leaving]):
                old = float(before.tasks[names.index(name)])
                if _better(old, float(after.tasks[k])):
                    return (
                        f"when {names[leaving]} leaves, {name} drops from {_fmt(old)} to "
                        f"{_fmt(after.tasks[k])} tasks"
                    )
        return None


_ALL: tuple[FairnessProperty, ...] = (
    SharingIncentive(),
    StrategyProofness(),
    EnvyFreeness(),
    ParetoEfficiency(),
    SingleMachineFairness(),
    SingleResourceFairness(),
    HierarchicalShareGuarantee(),
    GroupStrategyProofness(),
    PopulationMonotonicity(),
)
PROPERTIES: dict[str, FairnessProperty] = {p.name: p for p in _ALL}
