"""SPEC section 5's properties evaluated on one given configuration, for the regression gate
``fairshare check --before BEFORE --after AFTER`` (SPEC section 8.4).

The checker (:mod:`fairshare.fairness.search`) searches random scenarios; a gate asks about
the operator's own: each property is evaluated on BEFORE's and on AFTER's users, queues and
machines under the offline solver that is the online policy's paper counterpart
(:data:`SOLVER_FOR`); a property that holds before and fails after is shrunk with the
checker's shrinker (:func:`~fairshare.fairness.search.shrink`) to a minimal counterexample.

What is checked (``docs/whatif.md``, "What the gate checks"):

- the properties of :data:`GATE_PROPERTIES` that the counterpart solver's model defines
  (the hierarchical share guarantee only for the hierarchical solvers); the others
  (strategy-proofness, population monotonicity, ...) are properties of a policy, not of a
  configuration, and are what ``check --policy --property`` is for;
- the users are the scenario's ``users``; users that only jobs name (``jobs[].user``, or the
  job itself) are added with their first job's per-task demand, weight and queue, and as
  many tasks as their jobs have (``max_tasks``): every tenant backlogged with its own work;
- online policies without an offline model map to the closest solver: ``kueue``,
  ``kueue-classical``, ``slurm-fairtree`` and ``capacity`` to ``hdrf`` (weighted dominant
  shares down a tree of weighted queues, what Kueue's fair sharing and Fair Tree rank by),
  ``fair`` and ``slots`` to ``max-min`` (FAIR Appendix A), ``choosy`` to ``tsf``; ``fifo``
  has none and no property is checked.

Examples
--------
>>> document = {"machines": [{"name": "m", "capacity": {"cpu": 4}}],
...             "users": [{"name": "a", "weight": 3}, {"name": "b", "weight": 1}],
...             "jobs": [{"name": "j", "user": "a", "submit": 0, "tasks": 8, "duration": 1}]}
>>> tenants_document(document)["users"]
[{'name': 'a', 'weight': 3}, {'name': 'b', 'weight': 1}]
>>> [(c.property, c.verdict) for c in evaluate(document, "drf")]
[('sharing-incentive', 'holds'), ('envy-freeness', 'holds'), ('pareto-efficiency', 'holds')]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairshare.fairness.outcomes import Inconclusive
from fairshare.fairness.properties import PROPERTIES
from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, domain_of
from fairshare.fairness.search import _violation, shrink
from fairshare.solvers import InvalidRequest, SolverFailure
from fairshare.workload import ScenarioError

__all__ = [
    "GATE_PROPERTIES",
    "SOLVER_FOR",
    "PropertyVerdict",
    "evaluate",
    "minimal_counterexample",
    "tenants_document",
]

GATE_PROPERTIES: tuple[str, ...] = (
    "sharing-incentive",
    "envy-freeness",
    "pareto-efficiency",
    "hierarchical-share-guarantee",
)
"""The properties a gate evaluates on a configuration (module docstring)."""

SOLVER_FOR: dict[str, str | None] = {
    "fifo": None,
    "fair": "max-min",
    "slots": "max-min",
    "drf": "drf",
    "hdrf": "hdrf",
    "naive-hdrf": "hdrf",
    "collapsed-drf": "collapsed-drf",
    "choosy": "tsf",
    "tsf": "tsf",
    "cdrf": "cdrf",
    "drfh": "drfh",
    "cmmf-cpu": "cmmf",
    "cmmf-mem": "cmmf",
    "capacity": "hdrf",
    "kueue": "hdrf",
    "kueue-classical": "hdrf",
    "slurm-fairtree": "hdrf",
}
"""Each online policy's offline counterpart (module docstring); None: none."""

_USER_FIELDS = ("name", "demand", "weight", "queue", "constraint", "machines")


@dataclass(frozen=True)
class PropertyVerdict:
    """One property on one configuration.

    Attributes
    ----------
    property : str
        The property's name.
    solver : str
        The solver policy it was evaluated under.
    verdict : str
        ``holds``, ``violated``, or ``undecided`` (the solver or an LP failed, or the solver
        does not take the scenario, e.g. a single-resource solver on several resources).
    violation : Violation or None
        What fails, when violated.
    """

    property: str
    solver: str
    verdict: str
    violation: Violation | None = None


def tenants_document(document: Document) -> Document:
    """The scenario document the properties are evaluated on: the machines, resources and
    queues of ``document`` and its users, with the tenants only its jobs name added (module
    docstring).

    Parameters
    ----------
    document : Document
        A scenario file's contents.

    Returns
    -------
    Document
    """
    out: dict[str, Any] = {
        key: document[key] for key in ("resources", "machines", "queues") if key in document
    }
    if "resources" not in out:
        # SPEC section 1's default, spelt out: the shrinker drops resources by name.
        names: dict[str, None] = {}
        for machine in out.get("machines") or []:
            if isinstance(machine, dict) and isinstance(machine.get("capacity"), dict):
                names.update(dict.fromkeys(str(k) for k in machine["capacity"]))
        out["resources"] = list(names)
    users: list[dict[str, Any]] = [dict(u) for u in document.get("users") or []]
    known = {u.get("name"): u for u in users}
    tasks: dict[str, int] = {}
    for job in document.get("jobs") or []:
        if not isinstance(job, dict):
            continue
        name = str(job.get("user", job.get("name")))
        count = job.get("tasks", 1)
        tasks[name] = tasks.get(name, 0) + (count if isinstance(count, int) else 1)
        user = known.get(name)
        if user is None:
            # Backlogged with its own work: max_tasks is set below, once its jobs are counted.
            user = {"name": name, **{k: job[k] for k in _USER_FIELDS[1:] if k in job}}
            user["max_tasks"] = 0
            known[name] = user
            users.append(user)
        elif "demand" not in user and "demand" in job:
            user["demand"] = job["demand"]
    for user in users:
        if "max_tasks" in user and user["max_tasks"] == 0:
            user["max_tasks"] = max(tasks.get(str(user["name"]), 1), 1)
    out["users"] = users
    return out


def evaluate(document: Document, policy: str) -> list[PropertyVerdict]:
    """Evaluate :data:`GATE_PROPERTIES` on a configuration under ``policy``'s counterpart.

    Parameters
    ----------
    document : Document
        A scenario file's contents (:func:`tenants_document` is applied).
    policy : str
        An online policy (a key of :data:`SOLVER_FOR`) or a solver policy.

    Returns
    -------
    list of PropertyVerdict
        One per property the solver's model defines; empty for a policy without one.
    """
    solver = SOLVER_FOR.get(policy, policy)
    if solver is None:
        return []
    tenants = tenants_document(document)
    domain = domain_of(solver)
    found: list[PropertyVerdict] = []
    for name in GATE_PROPERTIES:
        prop = PROPERTIES[name]
        if not prop.applies(domain):
            continue
        try:
            violation = prop.violation(tenants, solver)
        except (Inconclusive, SolverFailure, ScenarioError, InvalidRequest):
            found.append(PropertyVerdict(name, solver, "undecided"))
            continue
        verdict = "holds" if violation is None else "violated"
        found.append(PropertyVerdict(name, solver, verdict, violation))
    return found


def minimal_counterexample(
    document: Document, verdict: PropertyVerdict
) -> tuple[Document, Violation] | None:
    """Shrink a violated configuration to a minimal counterexample of the same property
    (:func:`~fairshare.fairness.search.shrink`).

    Parameters
    ----------
    document : Document
        The configuration (a scenario file's contents).
    verdict : PropertyVerdict
        Its violated property.

    Returns
    -------
    (Document, Violation) or None
        The shrunk scenario (the one the violation exhibits, when the property derives its
        own) and its violation; None when the verdict is no violation.
    """
    if verdict.violation is None:
        return None
    prop = PROPERTIES[verdict.property]
    tenants = tenants_document(document)
    try:
        again = _violation(prop, tenants, verdict.solver)
    except Inconclusive:
        again = None
    if again is None:
        return tenants, verdict.violation
    shrunk, violation = shrink(prop, tenants, verdict.solver, again)
    return violation.scenario or shrunk, violation
