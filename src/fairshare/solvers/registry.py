"""The solver policies by their SPEC names (section 2), and the one entry point ``solve``.

Examples
--------
>>> SOLVER_POLICIES["tsf"].source
'TSF sections V-A, V-B (Algorithm 1)'
>>> [name for name, entry in SOLVER_POLICIES.items() if not entry.pools_cluster]
['cmmf', 'independent', 'tsf', 'drfh', 'cdrf', 'per-machine-drf']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from fairshare.allocation import Allocation, printed_allocation
from fairshare.allocation.invariants import (
    cap_violations,
    feasibility_violations,
    integrality_violations,
    solver_violations,
)
from fairshare.errors import UnknownPolicy
from fairshare.registry import PolicyInfo, by_name
from fairshare.solvers.constrained import solve_cmmf, solve_independent
from fairshare.solvers.errors import SolverFailure
from fairshare.solvers.filling_model import cold_starts
from fairshare.solvers.pooled import solve_pooled
from fairshare.solvers.tsf import solve_per_machine_drf, solve_task_share
from fairshare.workload.model import Scenario

SolveFunction = Callable[[Scenario, str, bool], Allocation]
"""A solver: ``(scenario, policy name, integral) -> Allocation``."""


@dataclass(frozen=True)
class SolverPolicy(PolicyInfo):
    """A policy ``fairshare solve`` can compute (``fairshare policies`` lists them).

    Parameters
    ----------
    name : str
        The SPEC name (``drf``, ``tsf``, ...).
    summary : str
        What the policy equalises, in one line.
    source : str
        The paper section it implements.
    pools_cluster : bool
        Whether it pools the cluster into one machine (and so gives no placement).
    run : SolveFunction
        The function that computes it.
    """

    pools_cluster: bool
    run: SolveFunction


SOLVER_POLICIES: dict[str, SolverPolicy] = by_name(
    (
        SolverPolicy(
            "max-min",
            "weighted max-min with minimum shares and caps, one resource",
            "FAIR Appendix A, Algorithm 2",
            True,
            solve_pooled,
        ),
        SolverPolicy(
            "drf", "weighted Dominant Resource Fairness", "DRF sections 4.2-4.3", True, solve_pooled
        ),
        SolverPolicy(
            "asset",
            "asset fairness: equal sums of resource shares",
            "DRF section 5.1",
            True,
            solve_pooled,
        ),
        SolverPolicy(
            "ceei",
            "competitive equilibrium from equal incomes",
            "DRF section 5.2",
            True,
            solve_pooled,
        ),
        SolverPolicy(
            "hdrf",
            "static hierarchical DRF over the queues",
            "H-DRF section 3.1",
            True,
            solve_pooled,
        ),
        SolverPolicy(
            "collapsed-drf",
            "weighted DRF with flattened hierarchy weights",
            "H-DRF section 3.2",
            True,
            solve_pooled,
        ),
        SolverPolicy(
            "cmmf",
            "weighted constrained max-min fairness, one resource",
            "Choosy sections 4.2, 5.1 (Algorithm 1)",
            False,
            solve_cmmf,
        ),
        SolverPolicy(
            "independent",
            "each machine split among the users that can use it, one resource",
            "Choosy section 4.1",
            False,
            solve_independent,
        ),
        SolverPolicy(
            "tsf",
            "weighted task share fairness (tasks / tasks alone unconstrained)",
            "TSF sections V-A, V-B (Algorithm 1)",
            False,
            solve_task_share,
        ),
        SolverPolicy(
            "drfh",
            "global dominant share, placed under constraints",
            "TSF section IV-B2",
            False,
            solve_task_share,
        ),
        SolverPolicy(
            "cdrf",
            "constrained CDRF (tasks / tasks alone with constraints)",
            "TSF section IV-B3",
            False,
            solve_task_share,
        ),
        SolverPolicy(
            "per-machine-drf",
            "weighted DRF on each machine among its eligible users",
            "TSF section IV-B1",
            False,
            solve_per_machine_drf,
        ),
    )
)


def solver_policy(policy: str) -> SolverPolicy:
    """The entry of :data:`SOLVER_POLICIES` named ``policy``.

    Parameters
    ----------
    policy : str
        A solver policy's name.

    Returns
    -------
    SolverPolicy

    Raises
    ------
    UnknownPolicy
        ``policy`` is not a solver policy (a :class:`~fairshare.errors.PolicyError` at
        ``policy``, as :func:`fairshare.api.simulate` raises for an unknown online policy);
        the message lists the allowed names.

    Examples
    --------
    >>> solver_policy("drf").pools_cluster
    True
    >>> solver_policy("lottery")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairshare.errors.UnknownPolicy: policy: unknown policy 'lottery'; allowed: max-min, ...
    """
    try:
        return SOLVER_POLICIES[policy]
    except KeyError:
        allowed = ", ".join(SOLVER_POLICIES)
        raise UnknownPolicy("policy", f"unknown policy {policy!r}; allowed: {allowed}") from None


def solve(scenario: Scenario, policy: str, *, integral: bool = False) -> Allocation:
    """The fair allocation of ``scenario``'s users under ``policy``, from scratch (offline).

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.
    policy : str
        A name of :data:`SOLVER_POLICIES`.
    integral : bool
        Whole tasks (a maximal integral allocation) instead of the divisible one.

    Returns
    -------
    Allocation
        Tasks and shares per user in scenario order, the placement for the policies that
        place tasks, and the warnings ``fairshare solve`` prints.

    Raises
    ------
    UnknownPolicy
        ``policy`` is not a solver policy.
    InvalidRequest
        A request the policy cannot serve (several resources for a single-resource policy,
        minimum shares that do not fit).
    SolverFailure
        A numerical solver gave up, or its allocation fails the invariant checks
        (:func:`~fairshare.allocation.invariants.solver_violations`: feasible, caps,
        integral, maximal, non-wasteful) as printed (:func:`~fairshare.allocation.
        printed_allocation`), also when solved again without warm starts.

    Examples
    --------
    DRF section 4.1: A's tasks need <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>, on <9 CPUs, 18 GB>.

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
    ...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
    ...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
    ...     source="drf-section-4.1",
    ... )
    >>> solve(scenario, "drf").tasks.round(6).tolist()
    [3.0, 2.0]
    >>> solve(scenario, "ceei").shares.round(4).tolist()
    [0.9091, 0.5455]
    >>> solve(scenario, "max-min")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairshare.solvers.errors.InvalidRequest: policy: max-min shares a single resource, ...
    """
    entry = solver_policy(policy)
    allocation = entry.run(scenario, policy, integral)
    wrong = solver_violations(scenario, printed_allocation(scenario, allocation))
    if wrong:
        # every LP again without warm starts (the fallback chain from its fresh solve)
        with cold_starts():
            allocation = entry.run(scenario, policy, integral)
        wrong = solver_violations(scenario, printed_allocation(scenario, allocation))
    if not wrong:
        return allocation
    printed = printed_allocation(scenario, allocation)
    broken = (
        feasibility_violations(scenario, printed)
        + cap_violations(scenario, printed)
        + integrality_violations(printed)
    )
    if broken:  # never print what does not fit or breaks a cap
        raise SolverFailure(
            f"the {policy} allocation fails its checks as printed: {broken[0]} (numerical "
            "trouble; please report the scenario)"
        )
    # Feasible but not maximal (or wasteful) as printed: returned, and said so.
    note = f"the allocation is not maximal as printed: {wrong[0]} (numerical trouble)"
    return replace(allocation, warnings=(*allocation.warnings, note))
