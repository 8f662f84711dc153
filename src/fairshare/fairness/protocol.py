"""What a fairness property is: the :class:`FairnessProperty` protocol every property follows,
and the :class:`Violation` it reports.

A property's ``violation(document, policy)`` returns ``None`` when the property holds on that
scenario, or a :class:`Violation`: one sentence explaining it, and the scenario that exhibits it
when that is not the document searched (sharing incentive sets the weights its partitions
entitle). The properties themselves, with the papers' sections they check, are listed in
:mod:`fairshare.fairness.properties`.

Examples
--------
>>> violation = Violation("B runs 12 tasks but could run 15 with its 0.5 of every resource")
>>> violation.scenario is None, violation.focus
(True, ())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fairshare.fairness.scenarios import Document, Domain, ScenarioShape


@dataclass(frozen=True)
class Violation:
    """A property violated on one scenario: one sentence with the concrete numbers, and the
    scenario exhibiting it when that differs from the document searched.

    Parameters
    ----------
    explanation : str
        The sentence, e.g. ``B runs 12 tasks but could run 15 with its 0.5 of every
        resource``.
    scenario : Document or None
        The scenario that exhibits it (sharing incentive sets the weights its partitions
        entitle), or None for the document searched.
    focus : tuple of str
        The users whose manipulation (or departure) shows it.
    """

    explanation: str
    scenario: Document | None = None
    focus: tuple[str, ...] = ()
    """The users whose manipulation (or departure) shows it: shrinking re-checks only them,
    which keeps it fast without changing what it can find on them."""


class FairnessProperty(Protocol):
    """A property of the papers, checkable on one scenario under one policy (the values of
    :data:`~fairshare.fairness.properties.PROPERTIES`).

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
    >>> from fairshare.fairness.properties import PROPERTIES
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
