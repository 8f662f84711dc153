"""The shares a user is owed: sharing incentive (DRF section 3, TSF Definition 1, Choosy
section 3.1) and the hierarchical share guarantee (H-DRF section 2.1).

Sharing incentive compares each user with what its entitled part of the cluster would run alone:
for pooled policies its weighted share ``w_i / sum(w)`` of every resource (under a hierarchy, the
product of the weight fractions along its path, H-DRF section 2.1); with placement, TSF
Definition 1 with arbitrary dedicated partitions (an equal split of every machine, and every split
of whole machines where a user can use what it contributes, Choosy section 3.1's constrained
sharing incentive), weighted as the partitions entitle, ``w_i = k_i / h_i`` (TSF Theorem 1,
Choosy's ``k_i`` with one resource), or ``k_i / M_i`` for constrained CDRF (TSF Theorem 15). The
hierarchical share guarantee compares every queue and user with its guaranteed dominant share.

Examples
--------
Asset fairness gives B a dominant share of 0.4 where its weight guarantees it 0.5 (DRF section
5.1's example); DRF gives every user its guarantee:

>>> document = {
...     "resources": ["cpu", "mem"],
...     "machines": [{"name": "m1", "capacity": {"cpu": 30, "mem": 30}}],
...     "users": [
...         {"name": "A", "demand": {"cpu": 1, "mem": 3}},
...         {"name": "B", "demand": {"cpu": 1, "mem": 1}},
...     ],
... }
>>> guarantee = HierarchicalShareGuarantee()
>>> guarantee.violation(document, "asset").explanation
'user B gets a dominant share of 0.4 but is guaranteed 0.5'
>>> guarantee.violation(document, "drf") is None
True
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator

import numpy as np

from fairshare.cluster import FloatArray
from fairshare.fairness.outcomes import (
    allocate,
    better,
    entitlement_weights,
    fmt,
    leaf_guarantees,
    runnable,
    tasks_alone,
    tasks_phrase,
)
from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape, domain_of
from fairshare.workload.hierarchy import build_hierarchy
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import Scenario


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
