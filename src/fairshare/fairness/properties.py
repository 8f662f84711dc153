"""The fairness properties of the papers, as checks on one scenario document.

Each property's ``violation(document, policy)`` returns ``None`` when the property holds on that
scenario, or a :class:`Violation`: one sentence explaining it, and the scenario that exhibits it
when that is not the document searched (sharing incentive sets the weights its partitions entitle).
The search (``fairshare.fairness.search``) feeds them random scenarios and shrinks what they find.
How a property sees an allocation (Leontief divisible tasks, columns, entitlements) is
:mod:`fairshare.fairness.outcomes`; the lies of the strategy-proofness properties are
:mod:`fairshare.fairness.manipulations`.

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
- population monotonicity (H-DRF section 4.3): no user's allocation drops when another leaves;
- quota restored (issue 18, beyond the papers): in a simulated run, a queue below its quota
  with pending work gets a task within the reclaim bound (:mod:`fairshare.fairness.quotas`).

Properties that a policy's model does not define are not applicable (``applies``): the
hierarchical share guarantee for flat policies, the TSF paper's reductions to DRF and CMMF
for hierarchical ones, and quota-restored for policies without an online scheduler.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Protocol

import numpy as np
from scipy.optimize import linprog

from fairshare.allocation import Allocation
from fairshare.cluster import FloatArray
from fairshare.fairness.manipulations import FIXED_PLACEMENT, lies_of, true_tasks, with_lies
from fairshare.fairness.outcomes import (
    TOLERANCE,
    Outcome,
    allocate,
    better,
    entitlement_weights,
    fmt,
    leaf_guarantees,
    lp_optimum,
    outcome,
    runnable,
    tasks_alone,
    tasks_phrase,
)
from fairshare.fairness.quotas import QuotaRestored
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape, domain_of
from fairshare.fairness.violation import Violation
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import Scenario


class FairnessProperty(Protocol):
    """A property of the papers, checkable on one scenario under one policy (the values of
    :data:`PROPERTIES`).

    Examples
    --------
    Asset fairness lacks sharing incentive (DRF section 5.1), DRF has it (DRF section 3):

    >>> document = {
    ...     "resources": ["cpu", "mem"],
    ...     "machines": [{"name": "m1", "capacity": {"cpu": 30, "mem": 30}}],
    ...     "users": [
    ...         {"name": "A", "demand": {"cpu": 1, "mem": 3}},
    ...         {"name": "B", "demand": {"cpu": 1, "mem": 1}},
    ...     ],
    ... }
    >>> sharing_incentive = PROPERTIES["sharing-incentive"]
    >>> sharing_incentive.violation(document, "asset").explanation
    'B runs 12 tasks but could run 15 with its 0.5 of every resource'
    >>> sharing_incentive.violation(document, "drf") is None
    True
    """

    @property
    def name(self) -> str:
        """The property's name (``fairshare check --property``)."""
        ...

    @property
    def shape(self) -> ScenarioShape:
        """The random scenarios the search draws for it (before a policy's domain narrows
        them)."""
        ...

    @property
    def trials(self) -> int:
        """Default number of random scenarios to search."""
        ...

    def applies(self, domain: Domain) -> bool:
        """Whether the property is defined for the policies of ``domain``.

        Parameters
        ----------
        domain : Domain
            A policy's domain (pooled, single resource, hierarchical).

        Returns
        -------
        bool
            False where a policy's model does not define it (the hierarchical share
            guarantee for flat policies, TSF's reductions to DRF and CMMF for hierarchical
            ones): the property is not applicable.
        """
        ...

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Check the property on one scenario.

        Parameters
        ----------
        document : Document
            The scenario document.
        policy : str
            A solver policy's name.
        focus : tuple of str
            Only manipulations by (or departures of) these users are tried; empty: all.

        Returns
        -------
        Violation or None
            None if the property holds on ``document``.

        Raises
        ------
        Inconclusive
            A linear program the property needs failed.
        ScenarioError, InvalidRequest, SolverFailure
            The policy cannot solve the scenario (or one of its manipulations).
        """
        ...


class SharingIncentive:
    """Sharing incentive: every user runs at least what its entitled part of the cluster would
    run alone.

    Pooled policies: DRF section 3, the weighted share ``w_i / sum(w)`` of every resource
    (under a hierarchy, the product of weight fractions along the user's path, H-DRF section
    2.1). Placed policies: TSF Definition 1 with dedicated partitions (an equal split of every
    machine, and every split of whole machines where a user can use what it contributes,
    Choosy section 3.1), weighted as the partitions entitle (TSF Theorem 1; Theorem 15 for
    constrained CDRF).
    """

    name = "sharing-incentive"
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
        """Check sharing incentive on one scenario under ``policy``.

        Violated when some user runs fewer tasks than its entitled part would run alone (pooled: its
        weighted share of every resource; placed: its dedicated partitions, whose weights the
        returned violation's scenario carries).

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
            if better(entitled, float(allocation.tasks[i])):
                return Violation(
                    f"{user.name} runs {tasks_phrase(allocation.tasks[i])} but could run "
                    f"{fmt(entitled)} with its {fmt(fraction)} of every resource"
                )
        return None

    def _partitions(self, scenario: Scenario) -> Iterator[tuple[str, list[str], FloatArray]]:
        """Dedicated partitions: what each user contributes, and the tasks ``k_i`` it runs there."""
        alone = tasks_alone(scenario)
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
        alone = tasks_alone(scenario)
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
                if better(float(k[i]), float(allocation.tasks[i])):
                    where = f"on {partitions[i]}" if partitions else f"in {kind}"
                    return Violation(
                        f"{user.name} runs {tasks_phrase(allocation.tasks[i])} but could run "
                        f"{fmt(k[i])} alone {where}, its dedicated partition, with every weight "
                        f"set to k_i/{rule} (partition tasks / {rule})",
                        witness,
                    )
        return None


class StrategyProofness:
    """Strategy-proofness (DRF section 3, Choosy section 3.2, TSF Definition 2): no user runs
    more true tasks by misreporting its demand vector and/or its constraint, with weights
    given a priori (TSF Theorem 2). The lies are :func:`~fairshare.fairness.manipulations.lies_of`.
    """

    name = "strategy-proofness"
    shape = ScenarioShape(weights=True, caps=True)
    trials = 30

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
        """Check strategy-proofness on one scenario under ``policy``.

        Violated when some user runs more true tasks by one of its lies (``focus``: only those users
        lie).

        Parameters
        ----------
        document : Document
            The scenario document.
        policy : str
            A solver policy's name.
        focus : tuple of str
            The users to try (see :meth:`FairnessProperty.violation`); empty: all.

        Returns
        -------
        Violation or None
            None if the property holds on ``document``.
        """
        truth = outcome(document, policy)
        placed = not domain_of(policy).pooled
        best = placed and policy not in FIXED_PLACEMENT
        for i, user in enumerate(truth.scenario.users):
            if focus and user.name not in focus:
                continue
            honest = float(truth.allocation.tasks[i])
            for lie in lies_of(document, i, placed):
                lying = outcome(with_lies(document, {i: lie}), policy)
                real = true_tasks(truth, lying, i, best)
                if better(real, honest):
                    return Violation(
                        f"{user.name} runs {tasks_phrase(real)} instead of {fmt(honest)} by "
                        f"{lie.description}",
                        focus=(user.name,),
                    )
        return None


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


def _differs(
    scenario: Scenario, allocation: Allocation, reference: Allocation, what: str
) -> Violation | None:
    """The first user whose tasks differ from ``reference``'s beyond the tolerance, as a
    violation naming ``what`` the reference is (None: they agree)."""
    for i, user in enumerate(scenario.users):
        if abs(allocation.tasks[i] - reference.tasks[i]) > TOLERANCE * max(1.0, reference.tasks[i]):
            return Violation(
                f"{user.name} runs {tasks_phrase(allocation.tasks[i])} where {what} gives "
                f"{fmt(reference.tasks[i])}"
            )
    return None


class SingleMachineFairness:
    """Single-machine fairness (TSF Definition 5): on one machine the allocation is DRF's."""

    name = "single-machine-fairness"
    shape = ScenarioShape(weights=True, caps=True, max_machines=1, constraints=False)
    trials = 60

    def applies(self, domain: Domain) -> bool:
        """Defined for flat policies: TSF's reduction to DRF has no queue tree.

        Parameters
        ----------
        domain : Domain
            A policy's domain.

        Returns
        -------
        bool
            Whether ``domain`` is not hierarchical.
        """
        return not domain.hierarchical

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Check single-machine fairness on one scenario under ``policy``.

        On a one-machine scenario, violated when the allocation differs from DRF's (a scenario of
        several machines holds trivially).

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
        if len(document["machines"]) != 1:
            return None
        scenario, allocation = allocate(document, policy)
        _, reference = allocate(document, "drf")
        return _differs(scenario, allocation, reference, "DRF on this single machine")


class SingleResourceFairness:
    """Single-resource fairness (TSF Definition 6): with one resource the allocation is
    CMMF's."""

    name = "single-resource-fairness"
    shape = ScenarioShape(weights=True, caps=True, max_resources=1, max_users=4)
    trials = 60

    def applies(self, domain: Domain) -> bool:
        """Defined for flat policies: TSF's reduction to CMMF has no queue tree.

        Parameters
        ----------
        domain : Domain
            A policy's domain.

        Returns
        -------
        bool
            Whether ``domain`` is not hierarchical.
        """
        return not domain.hierarchical

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Check single-resource fairness on one scenario under ``policy``.

        On a one-resource scenario, violated when the allocation differs from CMMF's (a scenario of
        several resources holds trivially).

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
        if len(document["resources"]) != 1:
            return None
        scenario, allocation = allocate(document, policy)
        _, reference = allocate(document, "cmmf")
        return _differs(scenario, allocation, reference, "CMMF on this resource")


class HierarchicalShareGuarantee:
    """The hierarchical share guarantee (H-DRF section 2.1): every queue and user gets at least
    its guaranteed dominant share, the product of ``w / sum(w of siblings)`` along its path, or
    what its users want when that is less."""

    name = "hierarchical-share-guarantee"
    shape = ScenarioShape(max_users=5)
    trials = 100

    def applies(self, domain: Domain) -> bool:
        """Defined for the hierarchical policies only.

        Parameters
        ----------
        domain : Domain
            A policy's domain.

        Returns
        -------
        bool
            Whether ``domain`` is hierarchical.
        """
        return domain.hierarchical

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Check the hierarchical share guarantee on one scenario under ``policy``.

        Violated when some queue or user gets a dominant share below its guarantee (or below what
        its users want, when that is less).

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
        scenario, allocation = allocate(document, policy)
        tree = build_hierarchy(scenario)
        usage = tree.ancestors @ (allocation.tasks[:, None] * scenario.demands)
        total = scenario.cluster.total
        shares = (usage / np.where(total > 0, total, 1.0)).max(axis=1)
        guarantee, _ = leaf_guarantees(scenario)
        # A node whose users are all capped below their guarantee is owed only what they want.
        demands = scenario.demands
        capped = np.where(np.isfinite(scenario.caps), scenario.caps, 1e300)
        wanted = tree.ancestors @ (capped[:, None] * demands)
        wanted_share = (wanted / np.where(total > 0, total, 1.0)).max(axis=1)
        for node in range(1, tree.size):
            owed = min(float(guarantee[node]), float(wanted_share[node]))
            if better(owed, float(shares[node])):
                kind = "user" if tree.user_of[node] >= 0 else "queue"
                return Violation(
                    f"{kind} {tree.names[node]} gets a dominant share of {fmt(shares[node])} "
                    f"but is guaranteed {fmt(guarantee[node])}"
                )
        return None


_PAIR_LIES = 5
"""How many of each member's broadest lies a pair of liars tries together."""


class GroupStrategyProofness:
    """Group strategy-proofness (H-DRF section 4.2): no group of one or two users can misreport
    so that all are weakly better off and one strictly."""

    name = "group-strategy-proofness"
    shape = ScenarioShape(weights=True, max_users=3)
    trials = 15

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
        """Check group strategy-proofness on one scenario under ``policy``.

        Violated when one user, or two together, can lie so that all run weakly more true tasks and
        one strictly more (``focus``: only that group).

        Parameters
        ----------
        document : Document
            The scenario document.
        policy : str
            A solver policy's name.
        focus : tuple of str
            The users to try (see :meth:`FairnessProperty.violation`); empty: all.

        Returns
        -------
        Violation or None
            None if the property holds on ``document``.
        """
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
            options = [[None, *lies_of(document, k, placed)[keep]] for k in group]
            for choice in itertools.product(*options):
                lies = {k: lie for k, lie in zip(group, choice, strict=True) if lie is not None}
                if len(lies) == 0:
                    continue
                lie = outcome(with_lies(document, lies), policy)
                # A single liar gets its most favourable placement, as in strategy-proofness;
                # a pair is judged on the policy's placement, which one LP cannot optimise
                # for both members at once.
                best = placed and len(group) == 1 and policy not in FIXED_PLACEMENT
                gains = {k: true_tasks(truth, lie, k, best) for k in group}
                before = {k: float(truth.allocation.tasks[k]) for k in group}
                weakly = all(not better(before[k], gains[k]) for k in group)
                strictly = any(better(gains[k], before[k]) for k in group)
                if weakly and strictly:
                    outcomes = " and ".join(
                        f"{users[k].name} runs {tasks_phrase(gains[k])} instead of {fmt(before[k])}"
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
    """Population monotonicity (H-DRF section 4.3): no user's allocation drops when another
    leaves."""

    name = "population-monotonicity"
    shape = ScenarioShape(weights=True, caps=True, max_users=4)
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
        """Check population monotonicity on one scenario under ``policy``.

        Violated when some user runs fewer tasks when another leaves (``focus``: only those users
        leave).

        Parameters
        ----------
        document : Document
            The scenario document.
        policy : str
            A solver policy's name.
        focus : tuple of str
            The users to try (see :meth:`FairnessProperty.violation`); empty: all.

        Returns
        -------
        Violation or None
            None if the property holds on ``document``.
        """
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
                if better(old, float(after.tasks[k])):
                    return Violation(
                        f"when {names[leaving]} leaves, {name} drops from {fmt(old)} to "
                        f"{tasks_phrase(after.tasks[k])}",
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
    QuotaRestored(),
)
PROPERTIES: dict[str, FairnessProperty] = {p.name: p for p in _ALL}
"""Every property by name, in the order ``fairshare check --all`` lists them."""
