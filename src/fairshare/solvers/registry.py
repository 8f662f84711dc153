"""The solver policies by their SPEC names (section 2), and the one entry point ``solve``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fairshare.allocation import Allocation
from fairshare.registry import PolicyInfo, by_name
from fairshare.solvers.constrained import solve_cmmf, solve_independent
from fairshare.solvers.pooled import solve_pooled
from fairshare.solvers.tsf import solve_per_machine_drf, solve_task_share
from fairshare.workload.model import Scenario

SolveFunction = Callable[[Scenario, str, bool], Allocation]


@dataclass(frozen=True)
class SolverPolicy(PolicyInfo):
    """A policy ``fairshare solve`` can compute: its SPEC name, what it equalises, the paper
    section it implements, whether it pools the cluster (and so gives no placement), and
    the function that computes it."""

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


class UnknownPolicy(ValueError):
    """A policy name that is not in :data:`SOLVER_POLICIES`."""


def solve(scenario: Scenario, policy: str, *, integral: bool = False) -> Allocation:
    """The fair allocation of ``scenario``'s users under ``policy``, from scratch (offline)."""
    try:
        entry = SOLVER_POLICIES[policy]
    except KeyError:
        allowed = ", ".join(SOLVER_POLICIES)
        raise UnknownPolicy(f"unknown policy {policy!r}; allowed: {allowed}") from None
    return entry.run(scenario, policy, integral)
