"""The fairness property checker: search for violations of the papers' properties by a policy,
and shrink them to minimal counterexamples (SPEC section 5)."""

from fairshare.fairness.outcomes import Inconclusive
from fairshare.fairness.properties import PROPERTIES, UnknownProperty
from fairshare.fairness.protocol import FairnessProperty, Violation
from fairshare.fairness.search import CheckResult, Counterexample, check

__all__ = [
    "PROPERTIES",
    "CheckResult",
    "Counterexample",
    "FairnessProperty",
    "Inconclusive",
    "UnknownProperty",
    "Violation",
    "check",
]
