"""Exact offline allocations: the fair share of every user under each policy (SPEC section 2)."""

from fairshare.solvers.errors import InvalidRequest, SolverFailure
from fairshare.solvers.registry import SOLVER_POLICIES, SolverPolicy, UnknownPolicy, solve

__all__ = [
    "SOLVER_POLICIES",
    "InvalidRequest",
    "SolverFailure",
    "SolverPolicy",
    "UnknownPolicy",
    "solve",
]
