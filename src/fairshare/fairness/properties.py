"""The fairness properties of the papers, as checks on one scenario document.

Each property's ``violation(document, policy)`` returns ``None`` when the property holds on that
scenario, or a :class:`Violation`: one sentence explaining it, and the scenario that exhibits it
when that is not the document searched (sharing incentive sets the weights its partitions entitle).
The search (``fairshare.fairness.search``) feeds them random scenarios and shrinks what they find.

Tasks are Leontief and divisible: a user values only whole bundles of its demand vector, and on
each machine it may use (its constraint), so a bundle of resources is worth
``sum over usable machines m of min_r bundle_mr / d_ir`` tasks to user i (TSF section III).
Pooled policies see the cluster as one machine (DRF section 4).

- sharing incentive: DRF section 3 for pooled policies (each user is entitled to its weighted
  share ``w_i / sum(w)`` of every resource; under a hierarchy, the product of the weight
  fractions along its path, H-DRF section 2.1). With placement: TSF Definition 1 with arbitrary
  dedicated partitions (an equal split of every machine, and every split of whole machines where a
  user can use what it contributes, Choosy section 3.1's constrained sharing incentive); the
  weights are those the partitions entitle, ``w_i = k_i / h_i`` (TSF Theorem 1, Choosy's ``k_i``
  with one resource), or ``k_i / M_i`` for constrained CDRF (TSF Theorem 15);
- strategy-proofness (DRF section 3, Choosy section 3.2, TSF Definition 2): no user runs more
  true tasks by misreporting its demand vector and/or its constraint (a superset or a subset
  of its machines), with weights given a priori (TSF Theorem 2);
- envy-freeness (TSF Definition 3): ``n_i >= (w_i / w_j) n_{i<->j}``;
- Pareto efficiency (DRF section 3, TSF Definition 4): no user can run more tasks, by any
  feasible re-placement, with no other user running fewer (a linear program);
- single-machine fairness (TSF Definition 5): on one machine the allocation is DRF's;
- single-resource fairness (TSF Definition 6): with one resource it is CMMF's;
- hierarchical share guarantee (H-DRF section 2.1): every queue and user gets at least its
  guaranteed dominant share, the product of ``w / sum(w of siblings)`` along its path;
- group strategy-proofness (H-DRF section 4.2): no group of one or two users can misreport so
  that all are weakly better off and one strictly;
- population monotonicity (H-DRF section 4.3): no user's allocation drops when another leaves.

Properties that a policy's model does not define are not applicable (``applies``): the
hierarchical share guarantee for flat policies, and the TSF paper's reductions to DRF and CMMF
for hierarchical ones.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy.optimize import linprog

from fairshare.allocation import Allocation
from fairshare.cluster import BoolArray, FloatArray
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape, domain_of
from fairshare.solvers import solve
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import Scenario

TOLERANCE = 1e-7
_CACHE_LIMIT = 50_000
_cache: dict[tuple[str, str], tuple[Scenario, Allocation]] = {}


class Inconclusive(Exception):
    """A trial that cannot be decided: one of the linear programs a property solves to judge
    an allocation failed (infeasible by rounding, or numerical trouble). It is neither a
    violation nor evidence that the property holds; the search counts it apart."""


def _lp_optimum(solution: Any, what: str) -> float:
    """The optimum of a maximisation solved as ``linprog`` of its negation, or
    ``Inconclusive`` when the LP failed (never 0: a failed LP is not "no gain")."""
    if solution.status != 0:
        raise Inconclusive(f"the {what} LP failed: {solution.message}")
    return float(-solution.fun)


@dataclass(frozen=True)
class Violation:
    """One sentence with the concrete numbers, and the scenario exhibiting the violation when
    it differs from the document searched."""

    explanation: str
    scenario: Document | None = None
    focus: tuple[str, ...] = ()
    """The users whose manipulation (or departure) shows it: shrinking re-checks only them,
    which keeps it fast without changing what it can find on them."""


def allocate(document: Document, policy: str) -> tuple[Scenario, Allocation]:
    """Parse and solve ``document`` exactly as ``fairshare solve`` does (memoised: shrinking
    and the manipulations revisit the same scenarios many times)."""
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
    column for pooled ones."""

    scenario: Scenario
    allocation: Allocation
    eligible: BoolArray
    capacity: FloatArray
    tasks_on: FloatArray

    def bundle(self, user: int) -> FloatArray:
        """The resources user ``user`` holds on each column (columns x resources)."""
        demand = self.scenario.demands[user]
        return np.asarray(self.tasks_on[user][:, None] * demand[None, :], dtype=np.float64)


def outcome(document: Document, policy: str) -> Outcome:
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
    """Tasks of ``demand`` that ``bundle`` (columns x resources) runs on the usable columns."""
    needed = demand > 0
    per_column = np.min(bundle[:, needed] / demand[needed], axis=1)
    return float(min(cap, float(per_column[eligible].sum())))


def _better(new: float, old: float) -> bool:
    return new > old + TOLERANCE * max(1.0, abs(old))


def _fmt(value: float) -> str:
    return f"{float(value):.4g}"


def _tasks(value: float) -> str:
    """``1 task``, ``0.6667 tasks``: a count of tasks for an explanation sentence."""
    text = _fmt(value)
    return f"{text} task" if text == "1" else f"{text} tasks"


def _vector(demand: dict[str, Any]) -> str:
    return "<" + ", ".join(f"{k} {v:g}" for k, v in demand.items()) + ">"


def _leaf_guarantees(scenario: Scenario) -> tuple[FloatArray, FloatArray]:
    """Per tree node and per user: the product of ``w / sum(w of siblings)`` along the path
    from the root (H-DRF section 2.1)."""
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
    """The weights that fix what a user is entitled to: flat weights, or under a hierarchy
    the product of weight fractions along the user's path (H-DRF section 2.1)."""
    if domain_of(policy).hierarchical:
        return _leaf_guarantees(scenario)[1]
    return scenario.weights


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

    def applies(self, domain: Domain) -> bool: ...

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """None if the property holds on ``document``; with ``focus``, only manipulations
        by (or departures of) those users are tried."""
        ...


def _tasks_alone(scenario: Scenario) -> FloatArray:
    """users x machines: the tasks a user could run alone on each machine, ignoring its
    constraint (the terms of TSF's h_i, section V-A)."""
    demands = scenario.demands
    capacity = scenario.cluster.capacities
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(
            demands[:, None, :] > 0, capacity[None, :, :] / demands[:, None, :], np.inf
        )
    return np.asarray(ratio.min(axis=2), dtype=np.float64)


class SharingIncentive:
    name = "sharing-incentive"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 60

    def applies(self, domain: Domain) -> bool:
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        if domain_of(policy).pooled:
            return self._weighted_share(document, policy)
        return self._dedicated_partitions(document, policy)

    def _weighted_share(self, document: Document, policy: str) -> Violation | None:
        """DRF section 3: user i runs at least what ``w_i / sum(w)`` of every resource runs."""
        scenario, allocation = allocate(document, policy)
        weights = entitlement_weights(scenario, policy)
        total = scenario.cluster.total[None, :]
        everywhere = np.ones(1, dtype=np.bool_)
        for i, user in enumerate(scenario.users):
            fraction = float(weights[i] / weights.sum())
            entitled = runnable(user.demand, everywhere, fraction * total, user.cap)
            if _better(entitled, float(allocation.tasks[i])):
                return Violation(
                    f"{user.name} runs {_tasks(allocation.tasks[i])} but could run "
                    f"{_fmt(entitled)} with its {_fmt(fraction)} of every resource"
                )
        return None

    def _partitions(self, scenario: Scenario) -> Iterator[tuple[str, list[str], FloatArray]]:
        """Dedicated partitions: what each user contributes, and the tasks ``k_i`` it runs there."""
        alone = _tasks_alone(scenario)
        eligible = scenario.eligibility()
        caps = scenario.caps
        n, machines = alone.shape
        usable = np.where(eligible, alone, 0.0)
        yield "an equal split of every machine", [], np.minimum(caps, usable.sum(axis=1) / n)
        names = scenario.cluster.machine_names
        for owners in itertools.product(range(n), repeat=machines):
            owned = np.zeros((n, machines), dtype=np.bool_)
            owned[list(owners), range(machines)] = True
            # Choosy 3.1: each user contributes machines and can use what it contributes.
            if not owned.any(axis=1).all() or (owned & ~eligible).any():
                continue
            k = np.minimum(caps, np.where(owned, alone, 0.0).sum(axis=1))
            partitions = [",".join(names[m] for m in np.flatnonzero(owned[i])) for i in range(n)]
            yield "whole machines", partitions, k

    def _dedicated_partitions(self, document: Document, policy: str) -> Violation | None:
        """TSF Definition 1 with the weights of Theorem 1 (Theorem 15 for constrained CDRF)."""
        scenario = parse_scenario(copy.deepcopy(document), "<counterexample>")
        alone = _tasks_alone(scenario)
        if policy == "cdrf":
            per_task, rule = np.where(scenario.eligibility(), alone, 0.0).sum(axis=1), "M_i"
        else:
            per_task, rule = alone.sum(axis=1), "h_i"
        users = scenario.users
        for kind, partitions, k in self._partitions(scenario):
            if not (k > 0).all():
                continue
            weights = k / per_task
            weights = weights / weights.min()
            witness = copy.deepcopy(document)
            for i, raw in enumerate(witness["users"]):
                raw.pop("weight", None)
                if abs(weights[i] - 1.0) > 1e-12:
                    raw["weight"] = float(weights[i])
            _, allocation = allocate(witness, policy)
            for i, user in enumerate(users):
                if _better(float(k[i]), float(allocation.tasks[i])):
                    where = f"on {partitions[i]}" if partitions else f"in {kind}"
                    return Violation(
                        f"{user.name} runs {_tasks(allocation.tasks[i])} but could run "
                        f"{_fmt(k[i])} alone {where}, its dedicated partition, with every weight "
                        f"set to k_i/{rule} (partition tasks / {rule})",
                        witness,
                    )
        return None


@dataclass(frozen=True)
class _Lie:
    fields: dict[str, Any]
    description: str


def _demand_lies(demand: dict[str, Any], resources: list[str]) -> Iterator[_Lie]:
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
            yield _Lie(
                {"demand": claimed},
                f"claiming demand {_vector(claimed)} instead of {_vector(demand)}",
            )
    scaled = {k: v * 2 for k, v in demand.items()}
    yield _Lie(
        {"demand": scaled}, f"claiming demand {_vector(scaled)} instead of {_vector(demand)}"
    )


def _constraint_lies(user: dict[str, Any], machines: list[str]) -> Iterator[_Lie]:
    """Constraint supersets and subsets (TSF Definition 2, Fig. 2b)."""
    if len(machines) < 2:
        return
    truth = list(user.get("machines", machines))
    for name in machines:
        if name not in truth:
            claimed = [m for m in machines if m in truth or m == name]
            yield _Lie({"machines": claimed}, f"claiming it can run on {name}")
    if "machines" in user and len(truth) < len(machines) - 1:
        yield _Lie({"machines": None}, "claiming it can run on every machine")
    if len(truth) > 1:
        for name in truth:
            yield _Lie(
                {"machines": [m for m in truth if m != name]},
                f"claiming it cannot run on {name}",
            )


def _lies(document: Document, i: int, placed: bool) -> list[_Lie]:
    user = document["users"][i]
    lies = list(_demand_lies(user["demand"], list(document["resources"])))
    if placed:
        lies.extend(_constraint_lies(user, [m["name"] for m in document["machines"]]))
    return lies


def _with_lies(document: Document, lies: dict[int, _Lie]) -> Document:
    lying = copy.deepcopy(document)
    for i, lie in lies.items():
        for key, value in lie.fields.items():
            if value is None:
                lying["users"][i].pop(key, None)
            else:
                lying["users"][i][key] = value
    return lying


_FIXED_PLACEMENT = frozenset({"per-machine-drf", "independent"})


def _true_tasks(truth: Outcome, lie: Outcome, i: int, best: bool) -> float:
    """Tasks user i really runs with what it was given for its claims: on its true machines,
    with its true demand. With ``best``, the placement of the lie's task counts is the one
    most favourable to user i (divisible placements are not unique, and TSF Fig. 2b assumes
    the liar's tasks land where they can run); otherwise the policy's own placement."""
    user = truth.scenario.users[i]
    direct = runnable(user.demand, truth.eligible[i], lie.bundle(i), user.cap)
    if not best:
        return direct
    return max(direct, min(user.cap, _best_placed_tasks(lie, i, user.demand, truth.eligible[i])))


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
    return _lp_optimum(solution, "best placement")


class StrategyProofness:
    name = "strategy-proofness"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 30

    def applies(self, domain: Domain) -> bool:
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        truth = outcome(document, policy)
        placed = not domain_of(policy).pooled
        best = placed and policy not in _FIXED_PLACEMENT
        for i, user in enumerate(truth.scenario.users):
            if focus and user.name not in focus:
                continue
            honest = float(truth.allocation.tasks[i])
            for lie in _lies(document, i, placed):
                lying = outcome(_with_lies(document, {i: lie}), policy)
                real = _true_tasks(truth, lying, i, best)
                if _better(real, honest):
                    return Violation(
                        f"{user.name} runs {_tasks(real)} instead of {_fmt(honest)} by "
                        f"{lie.description}",
                        focus=(user.name,),
                    )
        return None


class EnvyFreeness:
    name = "envy-freeness"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 80

    def applies(self, domain: Domain) -> bool:
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        result = outcome(document, policy)
        users = result.scenario.users
        weights = entitlement_weights(result.scenario, policy)
        for i, j in itertools.permutations(range(len(users)), 2):
            swapped = runnable(users[i].demand, result.eligible[i], result.bundle(j))
            deserved = min(users[i].cap, swapped * weights[i] / weights[j])
            own = float(result.allocation.tasks[i])
            if _better(deserved, own):
                scale = "" if weights[i] == weights[j] else f" (weights {_fmt(weights[i])}:"
                scale += "" if weights[i] == weights[j] else f"{_fmt(weights[j])})"
                return Violation(
                    f"{users[i].name} runs {_tasks(own)} but would run {_fmt(swapped)} "
                    f"with {users[j].name}'s allocation{scale}"
                )
        return None


def most_tasks(result: Outcome, user: int | None) -> float:
    """The most tasks ``user`` (or, for None, all users together) can run by any feasible
    re-placement in which no user runs fewer tasks than now (TSF Definition 4's test)."""
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
    return _lp_optimum(solution, "re-placement")


class ParetoEfficiency:
    name = "pareto-efficiency"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 60

    def applies(self, domain: Domain) -> bool:
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        result = outcome(document, policy)
        tasks = result.allocation.tasks
        if not _better(most_tasks(result, None), float(tasks.sum()) + 1e-6):
            return None
        for i, user in enumerate(result.scenario.users):
            best = most_tasks(result, i)
            if _better(best, float(tasks[i])):
                return Violation(
                    f"{user.name} runs {_tasks(tasks[i])} but could run {_fmt(best)} "
                    f"with no other user running fewer"
                )
        return None


def _differs(
    scenario: Scenario, allocation: Allocation, reference: Allocation, what: str
) -> Violation | None:
    for i, user in enumerate(scenario.users):
        if abs(allocation.tasks[i] - reference.tasks[i]) > TOLERANCE * max(1.0, reference.tasks[i]):
            return Violation(
                f"{user.name} runs {_tasks(allocation.tasks[i])} where {what} gives "
                f"{_fmt(reference.tasks[i])}"
            )
    return None


class SingleMachineFairness:
    name = "single-machine-fairness"
    shape = ScenarioShape(weights=True, caps=True, max_machines=1, constraints=False)
    trials = 60

    def applies(self, domain: Domain) -> bool:
        return not domain.hierarchical

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        if len(document["machines"]) != 1:
            return None
        scenario, allocation = allocate(document, policy)
        _, reference = allocate(document, "drf")
        return _differs(scenario, allocation, reference, "DRF on this single machine")


class SingleResourceFairness:
    name = "single-resource-fairness"
    shape = ScenarioShape(weights=True, caps=True, max_resources=1, max_users=4)
    trials = 60

    def applies(self, domain: Domain) -> bool:
        return not domain.hierarchical

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        if len(document["resources"]) != 1:
            return None
        scenario, allocation = allocate(document, policy)
        _, reference = allocate(document, "cmmf")
        return _differs(scenario, allocation, reference, "CMMF on this resource")


class HierarchicalShareGuarantee:
    name = "hierarchical-share-guarantee"
    shape = ScenarioShape(max_users=5)
    trials = 100

    def applies(self, domain: Domain) -> bool:
        return domain.hierarchical

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        scenario, allocation = allocate(document, policy)
        tree = build_hierarchy(scenario)
        usage = tree.ancestors @ (allocation.tasks[:, None] * scenario.demands)
        total = scenario.cluster.total
        shares = (usage / np.where(total > 0, total, 1.0)).max(axis=1)
        guarantee, _ = _leaf_guarantees(scenario)
        # A node whose users are all capped below their guarantee is owed only what they want.
        demands = scenario.demands
        capped = np.where(np.isfinite(scenario.caps), scenario.caps, 1e300)
        wanted = tree.ancestors @ (capped[:, None] * demands)
        wanted_share = (wanted / np.where(total > 0, total, 1.0)).max(axis=1)
        for node in range(1, tree.size):
            owed = min(float(guarantee[node]), float(wanted_share[node]))
            if _better(owed, float(shares[node])):
                kind = "user" if tree.user_of[node] >= 0 else "queue"
                return Violation(
                    f"{kind} {tree.names[node]} gets a dominant share of {_fmt(shares[node])} "
                    f"but is guaranteed {_fmt(guarantee[node])}"
                )
        return None


_PAIR_LIES = 5


class GroupStrategyProofness:
    name = "group-strategy-proofness"
    shape = ScenarioShape(weights=True, max_users=3)
    trials = 15

    def applies(self, domain: Domain) -> bool:
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        truth = outcome(document, policy)
        placed = not domain_of(policy).pooled
        users = truth.scenario.users
        everyone = range(len(users))
        groups = [(i,) for i in everyone] + list(itertools.combinations(everyone, 2))
        names = tuple(u.name for u in users)
        if focus:
            groups = [g for g in groups if tuple(names[k] for k in g) == focus]
        for group in groups:
            # Pairs try the broad lies (scaled demands, constraints) of each member, since
            # the single liars already cover every lie; the product would be quadratic.
            keep = slice(None) if len(group) == 1 else slice(-_PAIR_LIES, None)
            options = [[None, *_lies(document, k, placed)[keep]] for k in group]
            for choice in itertools.product(*options):
                lies = {k: lie for k, lie in zip(group, choice, strict=True) if lie is not None}
                if len(lies) == 0:
                    continue
                lie = outcome(_with_lies(document, lies), policy)
                # A single liar gets its most favourable placement, as in strategy-proofness;
                # a pair is judged on the policy's placement, which one LP cannot optimise
                # for both members at once.
                best = placed and len(group) == 1 and policy not in _FIXED_PLACEMENT
                gains = {k: _true_tasks(truth, lie, k, best) for k in group}
                before = {k: float(truth.allocation.tasks[k]) for k in group}
                weakly = all(not _better(before[k], gains[k]) for k in group)
                strictly = any(_better(gains[k], before[k]) for k in group)
                if weakly and strictly:
                    outcomes = " and ".join(
                        f"{users[k].name} runs {_tasks(gains[k])} instead of {_fmt(before[k])}"
                        for k in group
                    )
                    claims = " and ".join(
                        f"{users[k].name} lies by {lies[k].description}" for k in lies
                    )
                    return Violation(
                        f"{outcomes} when {claims}", focus=tuple(names[k] for k in group)
                    )
        return None


class PopulationMonotonicity:
    name = "population-monotonicity"
    shape = ScenarioShape(weights=True, caps=True, max_users=4)
    trials = 80

    def applies(self, domain: Domain) -> bool:
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        scenario, before = allocate(document, policy)
        names = [u.name for u in scenario.users]
        for leaving in range(len(names)):
            if focus and names[leaving] not in focus:
                continue
            smaller = copy.deepcopy(document)
            del smaller["users"][leaving]
            if "queues" in smaller:
                used = {u.get("queue") for u in smaller["users"]}
                smaller["queues"] = [q for q in smaller["queues"] if q["path"] in used]
            _, after = allocate(smaller, policy)
            for k, name in enumerate(n for n in names if n != names[leaving]):
                old = float(before.tasks[names.index(name)])
                if _better(old, float(after.tasks[k])):
                    return Violation(
                        f"when {names[leaving]} leaves, {name} drops from {_fmt(old)} to "
                        f"{_tasks(after.tasks[k])}",
                        focus=(names[leaving],),
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
