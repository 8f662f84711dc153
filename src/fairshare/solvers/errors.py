"""Errors a solver raises for a request it cannot satisfy (SPEC section 4: exit code 2)."""

from __future__ import annotations


class InvalidRequest(ValueError):
    """A valid scenario asks for something the policy cannot give: minimum shares that exceed
    the cluster, or several resources for a single-resource policy. ``where`` is a field path
    and ``what`` says what is wrong and what is allowed."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


class SolverFailure(RuntimeError):
    """A numerical solver gave up (infeasible, unbounded, or numerical trouble)."""
