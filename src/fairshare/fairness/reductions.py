"""The TSF paper's reductions: single-machine fairness (TSF Definition 5: on one machine the
allocation is DRF's) and single-resource fairness (TSF Definition 6: with one resource it is
CMMF's).

Both are defined for flat policies only: the reductions have no queue tree.

Examples
--------
On DRF section 4.1's machine, asset fairness gives A 2.52 tasks where DRF gives 3:

>>> document = {
...     "resources": ["cpu", "mem"],
...     "machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
...     "users": [
...         {"name": "A", "demand": {"cpu": 1, "mem": 4}},
...         {"name": "B", "demand": {"cpu": 3, "mem": 1}},
...     ],
... }
>>> SingleMachineFairness().violation(document, "asset").explanation
'A runs 2.52 tasks where DRF on this single machine gives 3'
>>> SingleMachineFairness().violation(document, "tsf") is None
True
"""

from __future__ import annotations

from fairshare.allocation import Allocation
from fairshare.fairness.outcomes import TOLERANCE, allocate, fmt, tasks_phrase
from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape
from fairshare.workload.model import Scenario


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
