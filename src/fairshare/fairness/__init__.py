"""The fairness property checker: search for violations of the papers' properties by a policy,
and shrink them to minimal counterexamples (SPEC section 5)."""

from fairshare.fairness.outcomes import Inconclusive
from fairshare.fairness.properties import PROPERTIES, FairnessProperty
from fairshare.fairness.search import CheckResult, Counterexample, check
from fairshare.fairness.violation import Violation

__all__ = [
    "PROPERTIES",
    "CheckResult",
    "Counterexample",
    "FairnessProperty",
    "Inconclusive",
    "Violation",
    "check",
]
