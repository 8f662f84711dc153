"""What a fairness property reports when it fails on a scenario (SPEC section 5): the
sentence, and the scenario that shows it. Its own module so that property modules other than
:mod:`fairshare.fairness.properties` (such as :mod:`fairshare.fairness.quotas`) can return one
without importing the registry that lists them."""

from __future__ import annotations

from dataclasses import dataclass

from fairshare.fairness.scenarios import Document


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
