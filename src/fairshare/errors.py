"""The base of every error fairshare raises, and the errors of a policy request.

Every exception the library raises for a problem its caller can fix (a scenario, trace or grid
that breaks its format, an unknown policy, an option out of range, a request a solver cannot
serve, a solver that gave up, a directory that cannot hold results, a service that refuses a
request) is a :class:`FairshareError`, so that one ``except fairshare.FairshareError`` catches
them all (``docs/api.md``, "Errors"). Each subclass says where the problem is and what is
allowed; a library message names a field or a parameter as the Python API spells it
(``until``, ``policy``), and the command line shows its own flag (``--until``) in its place
(SPEC section 4's ``error: FILE: WHERE: WHAT``).

This module is the lowest layer and imports nothing of fairshare's: every other layer may
derive its errors from it. :class:`PolicyError` lives here, not in
:mod:`fairshare.policies.protocol` (which re-exports it), because both the online policies and
the offline solvers raise it (an unknown policy is one error whichever kind was asked for),
and because the policies' modules are compiled by mypyc, whose native classes cannot reliably
derive from a Python exception class of another module.

Examples
--------
>>> import fairshare
>>> for attempt in (
...     lambda: fairshare.parse_scenario({"machines": []}, source="empty.yaml"),
...     lambda: fairshare.validate_policy("lottery"),
...     lambda: fairshare.SimOptions(until=-1),
... ):
...     try:
...         attempt()
...     except fairshare.FairshareError as error:
...         print(type(error).__name__, "|", error.where, "|", error.what[:32])
ScenarioError | machines | machines must list at least one
UnknownPolicy | policy | unknown policy 'lottery'; allowe
OptionError | until | must be a number >= 0, at most 1
"""

from __future__ import annotations

__all__ = ["FairshareError", "PolicyError", "UnknownPolicy"]


class FairshareError(Exception):
    """The base of every error fairshare raises about its input or a request.

    Catching it catches every input, request or environment problem the library reports;
    anything else that escapes fairshare is a bug (the command line exits with code 1 on
    those, and with code 2 on these: SPEC section 4).

    Examples
    --------
    >>> from fairshare.errors import FairshareError, PolicyError
    >>> issubclass(PolicyError, FairshareError)
    True
    """


class PolicyError(FairshareError, ValueError):
    """A request a policy cannot serve: an unknown policy, a resource the cluster lacks, a bad
    option.

    Also a ``ValueError``, as it was before :class:`FairshareError` existed.

    Parameters
    ----------
    where : str
        The field or parameter at fault, as the Python API names it (``policy``,
        ``preemption``, ``jobs[3].name``); the command line shows an option's flag instead.
    what : str
        What is wrong and what is allowed, so that a command line can print SPEC section 4's
        ``error: FILE: WHERE: WHAT``.

    Examples
    --------
    >>> from fairshare.policies import PolicyError
    >>> err = PolicyError("policy", "unknown online policy 'x'")
    >>> err.where, str(err)
    ('policy', "policy: unknown online policy 'x'")
    """

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


class UnknownPolicy(PolicyError):
    """A policy name that no registry holds: not a solver policy for ``solve`` and ``check``,
    not an online policy or reference scheduler for ``simulate`` and ``compare``.

    One error for every entry point, so that ``except PolicyError`` catches an unknown policy
    wherever it was named. ``what`` lists the allowed names.

    Examples
    --------
    >>> from fairshare.errors import PolicyError, UnknownPolicy
    >>> err = UnknownPolicy("policy", "unknown policy 'x'; allowed: drf")
    >>> isinstance(err, PolicyError), str(err)
    (True, "policy: unknown policy 'x'; allowed: drf")
    """
