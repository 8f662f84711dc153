"""Errors a solver raises for a request it cannot satisfy (SPEC section 4: exit code 2)."""

from __future__ import annotations

from fairshare.errors import FairshareError


class InvalidRequest(FairshareError, ValueError):
    """A valid scenario asks for something the policy cannot give.

    For example minimum shares that exceed the cluster, or several resources for a
    single-resource policy. The command line prints it as SPEC section 4's one ``error:``
    line and exits with code 2.

    Parameters
    ----------
    where : str
        The field path (``users[*].min_share``) or parameter (``policy``) at fault; the
        command line shows a parameter's flag (``--policy``) instead.
    what : str
        What is wrong, and what is allowed.

    Examples
    --------
    >>> error = InvalidRequest("policy", "max-min shares a single resource")
    >>> str(error)
    'policy: max-min shares a single resource'
    """

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


class SolverFailure(FairshareError, RuntimeError):
    """A numerical solver gave up: an LP that HiGHS reports infeasible, unbounded or in
    numerical trouble, or an event loop that exhausted its budget.

    ``fairshare solve`` reports it as one ``error:`` line; the property checker counts the
    trial as inconclusive, never as a counterexample (SPEC section 5).
    """
