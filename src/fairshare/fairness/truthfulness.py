"""Truthfulness: strategy-proofness (DRF section 3, Choosy section 3.2, TSF Definition 2) and
group strategy-proofness (H-DRF section 4.2).

No user runs more true tasks by misreporting its demand vector and/or its constraint (a superset
or a subset of its machines), with weights given a priori (TSF Theorem 2); no group of one or two
users can misreport so that all are weakly better off and one strictly. The lies tried are
:func:`~fairshare.fairness.manipulations.lies_of`, and a liar's true tasks are
:func:`~fairshare.fairness.manipulations.true_tasks`.

Examples
--------
DRF section 4.1's users: under CEEI, B gains by claiming a smaller CPU demand (CEEI is not
strategy-proof, DRF section 5.3); under DRF no lie pays:

>>> document = {
...     "resources": ["cpu", "mem"],
...     "machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
...     "users": [
...         {"name": "A", "demand": {"cpu": 1, "mem": 4}},
...         {"name": "B", "demand": {"cpu": 3, "mem": 1}},
...     ],
... }
>>> StrategyProofness().violation(document, "ceei").explanation
'B runs 1.714 tasks instead of 1.636 by claiming demand <cpu 2, mem 1> instead of <cpu 3, mem 1>'
>>> StrategyProofness().violation(document, "drf") is None
True
"""

from __future__ import annotations

import itertools

from fairshare.fairness.manipulations import FIXED_PLACEMENT, lies_of, true_tasks, with_lies
from fairshare.fairness.outcomes import better, fmt, outcome, tasks_phrase
from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape, domain_of


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
            The users to try (see
            :meth:`~fairshare.fairness.protocol.FairnessProperty.violation`); empty: all.

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
            The users to try (see
            :meth:`~fairshare.fairness.protocol.FairnessProperty.violation`); empty: all.

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
