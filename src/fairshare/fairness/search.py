"""The counterexample search: seeded random scenarios, then greedy shrinking (SPEC section 5).

For ``trials`` rounds, draw a random scenario shaped for the property, and ask the property for
a violation (properties try their own targeted manipulations: misreports, coalitions, users
leaving). The first violation found is shrunk: users, queues, resources and machines are removed
and numbers lowered one step at a time, keeping each change that still violates the property,
until no single change does. The result is a scenario anyone can re-run with
``fairshare solve``.

Examples
--------
Asset fairness breaks sharing incentive (DRF section 5.1), and the search finds it at once:

>>> result = check("asset", "sharing-incentive", seed=0)
>>> result.verdict(), result.trials
('violated', 1)
>>> result.counterexample.explanation
'u1 runs 0.3333 tasks but could run 0.5 with its 0.5 of every resource'
>>> result.counterexample.scenario["users"]
[{'name': 'u0', 'demand': {'r0': 1}}, {'name': 'u1', 'demand': {'r0': 1, 'r1': 1}}]
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairshare.fairness.outcomes import Inconclusive
from fairshare.fairness.properties import property_named
from fairshare.fairness.protocol import FairnessProperty, Violation
from fairshare.fairness.scenarios import Document, domain_of, random_document
from fairshare.solvers import InvalidRequest, SolverFailure
from fairshare.workload.loader import ScenarioError


@dataclass(frozen=True)
class Counterexample:
    """A violation of a property, shrunk to a scenario anyone can re-run.

    Attributes
    ----------
    scenario : Document
        A scenario document that re-runs with ``fairshare solve`` and exhibits the violation.
    explanation : str
        What goes wrong on it, in one sentence.
    searched : Document
        The shrunk scenario the search found it on: the same unless the property derives
        the scenario (as sharing incentive derives partition weights).
    """

    scenario: Document
    explanation: str
    searched: Document


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check`: whether a policy kept a property over the trials.

    Attributes
    ----------
    policy : str
        The solver policy checked.
    property : str
        The property's name (a key of :data:`PROPERTIES`).
    holds : bool
        No violation was found (True, too, when the property does not apply).
    trials : int
        Random scenarios tried: all of them, or up to the first violation.
    seed : int
        The search's seed: the same seed gives the same scenarios and result.
    seconds : float
        The search's wall time.
    counterexample : Counterexample or None
        The shrunk violation, when one was found.
    applicable : bool
        False when the policy's model does not define the property (0 trials).
    inconclusive : int
        Trials a solver or a property's LP could not decide (counted, never taken as
        holding).
    """

    policy: str
    property: str
    holds: bool
    trials: int
    seed: int
    seconds: float
    counterexample: Counterexample | None = None
    applicable: bool = True
    inconclusive: int = 0

    def verdict(self) -> str:
        """The one-word verdict ``fairshare check`` prints.

        Returns
        -------
        str
            ``n/a``, ``holds``, ``violated``, or ``inconclusive`` when no trial was decided.

        Examples
        --------
        >>> check("cmmf", "hierarchical-share-guarantee").verdict()
        'n/a'
        """
        if not self.applicable:
            return "n/a"
        if not self.holds:
            return "violated"
        return "inconclusive" if self.trials and self.inconclusive >= self.trials else "holds"

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``fairshare check --json`` (SPEC section 5).

        Returns
        -------
        dict
            ``policy``, ``property``, ``holds``, ``trials``, ``seed``, ``seconds`` (rounded
            to milliseconds), ``inconclusive`` (or ``applicable: false``), and the
            ``counterexample`` (``scenario`` and ``explanation``) when one was found.

        Examples
        --------
        >>> document = check("drf", "sharing-incentive", trials=20, seed=3).to_dict()
        >>> del document["seconds"]  # the one figure that varies
        >>> document  # doctest: +NORMALIZE_WHITESPACE
        {'policy': 'drf', 'property': 'sharing-incentive', 'holds': True, 'trials': 20,
         'seed': 3, 'inconclusive': 0}
        """
        out: dict[str, Any] = {
            "policy": self.policy,
            "property": self.property,
            "holds": self.holds,
            "trials": self.trials,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
        }
        if self.applicable:
            out["inconclusive"] = self.inconclusive
        if not self.applicable:
            out["applicable"] = False
        if self.counterexample is not None:
            out["counterexample"] = {
                "scenario": self.counterexample.scenario,
                "explanation": self.counterexample.explanation,
            }
        return out


def _violation(
    prop: FairnessProperty, document: Document, policy: str, focus: tuple[str, ...] = ()
) -> Violation | None:
    """The property's violation on ``document``, None, or ``Inconclusive`` when a solver or
    one of the property's LPs failed on it."""
    try:
        return prop.violation(document, policy, focus)
    except (ScenarioError, InvalidRequest):
        # A simplification the loader or the policy rejects is not a counterexample.
        return None
    except SolverFailure as err:
        raise Inconclusive(f"{policy} failed: {err}") from None


def _decided(
    prop: FairnessProperty, document: Document, policy: str, focus: tuple[str, ...] = ()
) -> Violation | None:
    """For shrinking: a candidate that cannot be decided is not a simpler counterexample."""
    try:
        return _violation(prop, document, policy, focus)
    except Inconclusive:
        return None


def check(
    policy: str, property_name: str, *, trials: int | None = None, seed: int = 0
) -> CheckResult:
    """Search random scenarios for a violation of a property by a solver policy.

    Each trial draws a random scenario of the property's shape within the policy's domain
    and asks the property for a violation; the first one found is shrunk (:func:`shrink`).
    A property the policy's model does not define is reported not applicable, with 0
    trials.

    Parameters
    ----------
    policy : str
        A name of :data:`fairshare.solvers.SOLVER_POLICIES`.
    property_name : str
        A name of :data:`PROPERTIES` (``sharing-incentive``, ``strategy-proofness``, ...).
    trials : int, optional
        Random scenarios to try; defaults to the property's own count, enough to find the
        papers' counterexamples.
    seed : int
        Seeds the scenarios: the same seed gives the same result.

    Returns
    -------
    CheckResult

    Raises
    ------
    UnknownPolicy
        ``policy`` is not a solver policy (a :class:`~fairshare.errors.PolicyError`, as
        :func:`fairshare.api.simulate` raises for an unknown online policy).
    UnknownProperty
        ``property_name`` is not a property (also a ``KeyError``).

    Examples
    --------
    DRF is strategy-proof (DRF section 4.2); CEEI is not (section 5.2):

    >>> check("drf", "strategy-proofness", trials=10).holds
    True
    >>> ceei = check("ceei", "strategy-proofness", seed=0)
    >>> ceei.holds, ceei.trials
    (False, 17)
    """
    return search(property_named(property_name), policy, trials=trials, seed=seed)


def search(
    prop: FairnessProperty, policy: str, *, trials: int | None = None, seed: int = 0
) -> CheckResult:
    """:func:`check` for a property object (one of :data:`PROPERTIES`, or another instance
    of a property class, such as a quota property checking a given scheduler).

    Parameters
    ----------
    prop : FairnessProperty
        The property.
    policy : str
        A name of :data:`fairshare.solvers.SOLVER_POLICIES`.
    trials : int, optional
        Random scenarios to try (default: the property's own count).
    seed : int
        Seeds the scenarios.

    Returns
    -------
    CheckResult
    """
    property_name = prop.name
    domain = domain_of(policy)
    if not prop.applies(domain):
        return CheckResult(policy, property_name, True, 0, seed, 0.0, applicable=False)
    if trials is None:
        trials = prop.trials
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    inconclusive = 0
    for trial in range(1, trials + 1):
        document = random_document(rng, prop.shape, domain)
        try:
            found = _violation(prop, document, policy)
        except Inconclusive:
            inconclusive += 1
            continue
        if found is not None:
            document, found = shrink(prop, document, policy, found)
            return CheckResult(
                policy,
                property_name,
                False,
                trial,
                seed,
                time.perf_counter() - start,
                Counterexample(found.scenario or document, found.explanation, document),
                inconclusive=inconclusive,
            )
    return CheckResult(
        policy,
        property_name,
        True,
        trials,
        seed,
        time.perf_counter() - start,
        inconclusive=inconclusive,
    )


def shrink(
    prop: FairnessProperty, document: Document, policy: str, found: Violation
) -> tuple[Document, Violation]:
    """Greedily simplify ``document`` while it still violates ``prop``.

    The result is a local minimum, where no single simplification (dropping a user, a
    machine, a resource or a field; lowering a number) still violates the property by the
    same users' manipulation (``Violation.focus``). A simplification that cannot be decided
    is not taken.

    Parameters
    ----------
    prop : FairnessProperty
        The property.
    document : Document
        The scenario the violation was found on.
    policy : str
        The solver policy.
    found : Violation
        The violation found on ``document``.

    Returns
    -------
    (Document, Violation)
        The simplest scenario reached, and its violation.
    """
    improved = True
    while improved:
        improved = False
        for candidate in _simpler(document):
            again = _decided(prop, candidate, policy, found.focus)
            if again is not None:
                document, found, improved = candidate, again, True
                break
    return document, found


def _simpler(document: Document) -> Iterator[Document]:
    """Every document one simplification away from ``document``, biggest steps first."""
    if "jobs" in document:
        if any("gang" in job or "min_tasks" in job for job in document["jobs"]):
            yield from _simpler_gang_run(document)
        else:
            yield from _simpler_run(document)
        return
    users = document["users"]
    for i in range(len(users)):
        if len(users) > 1:
            smaller = copy.deepcopy(document)
            del smaller["users"][i]
            yield _drop_unused_queues(smaller)
    for j in range(len(document["machines"])):
        if len(document["machines"]) > 1:
            without = _drop_machine(document, j)
            if without is not None:
                yield without
    for resource in document["resources"]:
        if len(document["resources"]) > 1:
            yield _drop_resource(document, resource)
    for i, user in enumerate(users):
        for key in ("machines", "weight", "max_tasks", "queue"):
            if key in user:
                smaller = copy.deepcopy(document)
                del smaller["users"][i][key]
                yield _drop_unused_queues(smaller)
    for i, user in enumerate(users):
        for name in user.get("machines", []) if len(user.get("machines", [])) > 1 else []:
            smaller = copy.deepcopy(document)
            smaller["users"][i]["machines"].remove(name)
            yield smaller
        for key in ("weight", "max_tasks"):
            value = user.get(key)
            if isinstance(value, int) and value > 1:
                smaller = copy.deepcopy(document)
                smaller["users"][i][key] = value - 1
                yield smaller
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


def _drop_machine(document: Document, j: int) -> Document | None:
    """``document`` without machine ``j``; None when a user's whitelist would be left empty
    (that user would change meaning, not shrink)."""
    smaller = copy.deepcopy(document)
    name = smaller["machines"].pop(j)["name"]
    for user in smaller["users"]:
        if "machines" in user and name in user["machines"]:
            user["machines"] = [m for m in user["machines"] if m != name]
            if not user["machines"]:
                return None
    return smaller


def _drop_unused_queues(document: Document) -> Document:
    """``document`` (changed in place) without the queues no user names any more, so that
    a shrunk scenario lists only what its users need."""
    if "queues" in document:
        used = {u.get("queue") for u in document["users"]}
        document["queues"] = [q for q in document["queues"] if q["path"] in used]
        if not document["queues"]:
            del document["queues"]
    return document


def _drop_resource(document: Document, resource: str) -> Document:
    """``document`` without ``resource``; users left with no demand go too."""
    smaller = copy.deepcopy(document)
    smaller["resources"] = [r for r in smaller["resources"] if r != resource]
    for machine in smaller["machines"]:
        machine["capacity"].pop(resource, None)
    for user in smaller["users"]:
        user["demand"].pop(resource, None)
    smaller["users"] = [u for u in smaller["users"] if u["demand"]]
    return _drop_unused_queues(smaller)


def _simpler_run(document: Document) -> Iterator[Document]:
    """For a scenario of jobs on tasks of one shape (:func:`~fairshare.fairness.scenarios.
    quota_document`): every document one simplification away that keeps machines, quotas
    and limits whole numbers of tasks, biggest steps first: a job, a queue, a machine or a
    resource fewer; every task of one unit of each resource; a limit fewer; one task fewer
    in a quota or a machine; fewer tasks, shorter tasks, earlier submissions."""
    jobs = document["jobs"]
    shape: dict[str, int] = jobs[0]["demand"]
    for i in range(len(jobs)):
        if len(jobs) > 1:
            smaller = copy.deepcopy(document)
            del smaller["jobs"][i]
            yield smaller
    for k, queue in enumerate(document.get("queues", [])):
        smaller = copy.deepcopy(document)
        del smaller["queues"][k]
        for job in smaller["jobs"]:
            if job.get("queue") == queue["path"]:
                del job["queue"]
        yield smaller
    for j in range(len(document["machines"])):
        if len(document["machines"]) > 1:
            smaller = copy.deepcopy(document)
            del smaller["machines"][j]
            yield smaller
    for resource in document["resources"]:
        if len(document["resources"]) > 1:
            yield _drop_run_resource(document, resource)
    if any(d != 1 for d in shape.values()):
        yield _rescaled(document, dict.fromkeys(shape, 1))
    for k, queue in enumerate(document.get("queues", [])):
        for key in ("borrowing_limit", "lending_limit"):
            if key in queue:
                smaller = copy.deepcopy(document)
                del smaller["queues"][k][key]
                yield smaller
    for k, queue in enumerate(document.get("queues", [])):
        quota = queue.get("quota", {})
        if quota and all(quota.get(r, 0) >= d for r, d in shape.items()):
            smaller = copy.deepcopy(document)
            smaller["queues"][k]["quota"] = {r: v - shape[r] for r, v in quota.items()}
            yield smaller
    for j, machine in enumerate(document["machines"]):
        capacity = machine["capacity"]
        if all(capacity.get(r, 0) >= 2 * d for r, d in shape.items()):
            smaller = copy.deepcopy(document)
            smaller["machines"][j]["capacity"] = {
                r: v - shape.get(r, 0) for r, v in capacity.items()
            }
            yield smaller
    for i, job in enumerate(jobs):
        for key, least in (("tasks", 1), ("duration", 1), ("submit", 0)):
            value = job[key]
            for lower in sorted({least, value // 2, value - 1}):
                if least <= lower < value:
                    smaller = copy.deepcopy(document)
                    smaller["jobs"][i][key] = lower
                    yield smaller


def _drop_run_resource(document: Document, resource: str) -> Document:
    """A scenario of jobs without ``resource``: in machines, demands, quotas and limits."""
    smaller = copy.deepcopy(document)
    smaller["resources"] = [r for r in smaller["resources"] if r != resource]
    for machine in smaller["machines"]:
        machine["capacity"].pop(resource, None)
    for job in smaller["jobs"]:
        job["demand"].pop(resource, None)
    for queue in smaller.get("queues", []):
        for key in ("quota", "borrowing_limit", "lending_limit"):
            if key in queue:
                queue[key].pop(resource, None)
    return smaller


def _rescaled(document: Document, shape: dict[str, int]) -> Document:
    """A scenario of jobs whose tasks take ``shape``: machines, quotas and limits keep their
    numbers of tasks (the old shape divides them)."""
    old: dict[str, int] = document["jobs"][0]["demand"]
    smaller = copy.deepcopy(document)
    for job in smaller["jobs"]:
        job["demand"] = dict(shape)

    def tasks(values: dict[str, int]) -> dict[str, int]:
        return {r: v // old[r] * shape[r] if r in old else v for r, v in values.items()}

    for machine in smaller["machines"]:
        machine["capacity"] = tasks(machine["capacity"])
    for queue in smaller.get("queues", []):
        for key in ("quota", "borrowing_limit", "lending_limit"):
            if key in queue:
                queue[key] = tasks(queue[key])
    return smaller


def _simpler_gang_run(document: Document) -> Iterator[Document]:
    """For a scenario of jobs with gangs (:func:`~fairshare.fairness.scenarios.gang_document`):
    every document one simplification away, biggest steps first: a job, a machine or a
    resource fewer; a job without its whitelist, a machine fewer in it, or no longer a gang;
    a smaller ``min_tasks``, capacity or demand; fewer tasks, shorter tasks, earlier
    submissions (all of them at once first, so that the first is at 0)."""
    jobs = document["jobs"]
    first = min(job["submit"] for job in jobs)
    if first > 0:
        smaller = copy.deepcopy(document)
        for job in smaller["jobs"]:
            job["submit"] -= first
        yield smaller
    for i in range(len(jobs)):
        if len(jobs) > 1:
            smaller = copy.deepcopy(document)
            del smaller["jobs"][i]
            yield smaller
    for j, machine in enumerate(document["machines"]):
        if len(document["machines"]) > 1:
            smaller = copy.deepcopy(document)
            del smaller["machines"][j]
            for job in smaller["jobs"]:
                if machine["name"] in job.get("machines", []):
                    job["machines"].remove(machine["name"])
            if all(job.get("machines", True) for job in smaller["jobs"]):
                yield smaller
    for resource in document["resources"]:
        if len(document["resources"]) > 1:
            smaller = _drop_run_resource(document, resource)
            if all(job["demand"] for job in smaller["jobs"]):
                yield smaller
    for i, job in enumerate(jobs):
        for key in ("machines", "gang", "min_tasks"):
            if key in job:
                smaller = copy.deepcopy(document)
                del smaller["jobs"][i][key]
                yield smaller
        for name in job.get("machines", []) if len(job.get("machines", [])) > 1 else []:
            smaller = copy.deepcopy(document)
            smaller["jobs"][i]["machines"].remove(name)
            yield smaller
    for i, job in enumerate(jobs):
        for lower in sorted({1, job.get("min_tasks", 1) // 2, job.get("min_tasks", 1) - 1}):
            if 1 <= lower < job.get("min_tasks", 1):
                smaller = copy.deepcopy(document)
                smaller["jobs"][i]["min_tasks"] = lower
                yield smaller
    for j, machine in enumerate(document["machines"]):
        for resource, value in machine["capacity"].items():
            for lower in sorted({1, value // 2, value - 1}):
                if 1 <= lower < value:
                    smaller = copy.deepcopy(document)
                    smaller["machines"][j]["capacity"][resource] = lower
                    yield smaller
    for i, job in enumerate(jobs):
        for resource, value in job["demand"].items():
            if value > 1:
                smaller = copy.deepcopy(document)
                smaller["jobs"][i]["demand"][resource] = value - 1
                yield smaller
    for i, job in enumerate(jobs):
        # A gang keeps at most as many tasks as its min_tasks asks for.
        floor = job.get("min_tasks", 1)
        for key, least in (("tasks", floor), ("duration", 1), ("submit", 0)):
            value = job[key]
            for lower in sorted({least, value // 2, value - 1}):
                if least <= lower < value:
                    smaller = copy.deepcopy(document)
                    smaller["jobs"][i][key] = lower
                    yield smaller
