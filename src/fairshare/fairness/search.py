"""The counterexample search: seeded random scenarios, then greedy shrinking (SPEC section 5).

For ``trials`` rounds, draw a random scenario shaped for the property, and ask the property for
a violation (properties try their own targeted manipulations: misreports, coalitions, users
leaving). The first violation found is shrunk: users, queues, resources and machines are removed
and numbers lowered one step at a time, keeping each change that still violates the property,
until no single change does. The result is a scenario anyone can re-run with
``fairshare solve``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fairshare.fairness.properties import PROPERTIES, FairnessProperty
from fairshare.fairness.scenarios import Document, random_document
from fairshare.solvers import InvalidRequest
from fairshare.workload.loader import ScenarioError

HIERARCHICAL_POLICIES = frozenset({"hdrf", "collapsed-drf"})


@dataclass(frozen=True)
class Counterexample:
    scenario: Document
    explanation: str


@dataclass(frozen=True)
class CheckResult:
    policy: str
    property: str
    holds: bool
    trials: int
    seed: int
    seconds: float
    counterexample: Counterexample | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "policy": self.policy,
            "property": self.property,
            "holds": self.holds,
            "trials": self.trials,
            "seed": self.seed,
        }
        if self.counterexample is not None:
            out["counterexample"] = {
                "scenario": self.counterexample.scenario,
                "explanation": self.counterexample.explanation,
            }
        return out


def _violation(prop: FairnessProperty, document: Document, policy: str) -> str | None:
    try:
        return prop.violation(document, policy)
    except (ScenarioError, InvalidRequest):
        return None


def check(
    policy: str, property_name: str, *, trials: int | None = None, seed: int = 0
) -> CheckResult:
    """Search random scenarios for a violation of a property by a solver policy; ``trials``
    defaults to the property's own count, enough to find the papers' counterexamples."""
    prop = PROPERTIES[property_name]
    if trials is None:
        trials = prop.trials
    shape = prop.shape
    if policy in HIERARCHICAL_POLICIES:
        shape = replace(shape, queues=True)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for trial in range(1, trials + 1):
        document = random_document(rng, shape)
        explanation = _violation(prop, document, policy)
        if explanation is not None:
            document, explanation = shrink(prop, document, policy, explanation)
            return CheckResult(
                policy,
                property_name,
                False,
                trial,
                seed,
                time.perf_counter() - start,
                Counterexample(document, explanation),
            )
    return CheckResult(policy, property_name, True, trials, seed, time.perf_counter() - start)


def shrink(
    prop: FairnessProperty, document: Document, policy: str, explanation: str
) -> tuple[Document, str]:
    """Greedily simplify ``document`` while it still violates ``prop``."""
    improved = True
    while improved:
        improved = False
        for candidate in _simpler(document):
            found = _violation(prop, candidate, policy)
            if found is not None:
                document, explanation, improved = candidate, found, True
                break
    return document, explanation


def _simpler(document: Document) -> Iterator[Document]:
    """Every document one simplification away from ``document``, biggest steps first."""
    users = document["users"]
    for i in range(len(users)):
        if len(users) > 1:
            smaller = copy.deepcopy(document)
            del smaller["users"][i]
            yield _drop_unused_queues(smaller)
    for j in range(len(document["machines"])):
        if len(document["machines"]) > 1:
            smaller = copy.deepcopy(document)
            del smaller["machines"][j]
            yield smaller
    for resource in document["resources"]:
        if len(document["resources"]) > 1:
            yield _drop_resource(document, resource)
    for i, user in enumerate(users):
        for key in ("weight", "max_tasks", "queue"):
            if key in user:
                smaller = copy.deepcopy(document)
                del smaller["users"][i][key]
                yield _drop_unused_queues(smaller)
    for k, queue in enumerate(document.get("queues", [])):
        if queue.get("weight", 1) != 1:
            smaller = copy.deepcopy(document)
            smaller["queues"][k]["weight"] = 1
            yield smaller
    for j, machine in enumerate(document["machines"]):
        for resource, value in machine["capacity"].items():
            for lower in {value // 2, value - 1}:
                if 1 <= lower < value:
                    smaller = copy.deepcopy(document)
                    smaller["machines"][j]["capacity"][resource] = lower
                    yield smaller
    for i, user in enumerate(users):
        for resource, value in user["demand"].items():
            for lower in {value // 2, value - 1}:
                if lower < value and (lower >= 1 or len(user["demand"]) > 1):
                    smaller = copy.deepcopy(document)
                    if lower >= 1:
                        smaller["users"][i]["demand"][resource] = lower
                    else:
                        del smaller["users"][i]["demand"][resource]
                    yield smaller


def _drop_unused_queues(document: Document) -> Document:
    if "queues" in document:
        used = {u.get("queue") for u in document["users"]}
        document["queues"] = [q for q in document["queues"] if q["path"] in used]
        if not document["queues"]:
            del document["queues"]
    return document


def _drop_resource(document: Document, resource: str) -> Document:
    smaller = copy.deepcopy(document)
    smaller["resources"] = [r for r in smaller["resources"] if r != resource]
    for machine in smaller["machines"]:
        machine["capacity"].pop(resource, None)
    for user in smaller["users"]:
        user["demand"].pop(resource, None)
    smaller["users"] = [u for u in smaller["users"] if u["demand"]]
    return _drop_unused_queues(smaller)
