"""The error every scenario or trace problem becomes, and how input values are shown in it.

A problem is reported as one line, ``error: FILE: WHERE: WHAT`` (SPEC section 4), with the
input value cut to a readable length and on one line.

Examples
--------
>>> from fairshare.workload.errors import ScenarioError, got
>>> print(ScenarioError("cluster.yaml", "machines[0].capacity.cpu", f"must be >= 0, {got(-1)}"))
error: cluster.yaml: machines[0].capacity.cpu: must be >= 0, got -1
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from fairshare.errors import FairshareError

__all__ = ["FieldError", "ScenarioError", "got", "invalid", "listing", "shown_value"]


_LIST_LIMIT = 10
"""How many known names an "unknown name" message lists."""


class ScenarioError(FairshareError):
    """A scenario that breaks SPEC section 1: printed as ``error: FILE: WHERE: WHAT``.

    The command line prints ``str(error)`` and exits with code 2.

    Parameters
    ----------
    file : str
        The input's name (a path, or the ``source`` given to ``parse_scenario``).
    where : str
        A field path (``machines[3].capacity.cpu``), ``line N`` for syntax errors, ``file``
        when the file cannot be read or is empty, ``top level`` when it is not a mapping.
    what : str
        What is wrong and what is allowed, on one line.

    Examples
    --------
    >>> from fairshare.workload import ScenarioError, parse_scenario
    >>> try:
    ...     parse_scenario({"machines": []}, source="empty.yaml")
    ... except ScenarioError as error:
    ...     print(error.where, "|", error.what)
    machines | machines must list at least one machine
    """

    def __init__(self, file: str, where: str, what: str) -> None:
        super().__init__(file, where, what)
        self.file = file
        self.where = where
        self.what = what

    def __str__(self) -> str:
        return f"error: {self.file}: {self.where}: {self.what}"


# --------------------------------------------------------------------------------------------
# Describing values in messages


def shown_value(value: object) -> str:
    """A short, one-line rendering of an input value for an error message.

    Parameters
    ----------
    value : object
        A value read from the input.

    Returns
    -------
    str
        YAML's spelling of scalars (``null``, ``true``), whole floats without ``.0``, strings
        quoted and cut at 60 characters, containers as ``a mapping`` or ``a list``.

    Examples
    --------
    >>> from fairshare.workload.errors import shown_value
    >>> shown_value(None), shown_value(True), shown_value(3.0), shown_value([1, 2])
    ('null', 'true', '3', 'a list')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:56] + "...'"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def got(value: object) -> str:
    """``got VALUE``, with a hint when a number was written as a string.

    Parameters
    ----------
    value : object
        The value the input has.

    Returns
    -------
    str

    Examples
    --------
    >>> from fairshare.workload.errors import got
    >>> got(-1)
    'got -1'
    >>> got("12")
    "got '12' (a string; write numbers without quotes)"
    """
    text = f"got {shown_value(value)}"
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return text
        if "e" in value.lower() and "." not in value:
            return text + " (a string: YAML reads exponents only with a dot, as in 1.0e+3)"
        return text + " (a string; write numbers without quotes)"
    return text


def listing(names: Iterable[str], limit: int = _LIST_LIMIT) -> str:
    """Names for an "unknown name" message: ``a, b, c``, at most ``limit`` and a count of the rest.

    Parameters
    ----------
    names : Iterable of str
        The known names, in the order to list them.
    limit : int
        How many names to show.

    Returns
    -------
    str

    Examples
    --------
    >>> from fairshare.workload.errors import listing
    >>> listing(["a", "b", "c", "d"], limit=2)
    'a, b and 2 more'
    """
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


class FieldError(FairshareError):
    """A problem with one value of a scenario's structure (:mod:`fairshare.workload.schema`,
    :mod:`fairshare.workload.field_checks`): ``message`` says what is wrong, ``loc`` is the
    path from the value its validator was given down to the problem. Each enclosing record,
    list or mapping puts its own step in front as the error passes through it, so a valid
    file never builds a path. ``of_key``: the problem is a mapping's key (the last step), not
    its value."""

    def __init__(self, message: str, at: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc: list[str | int] = [at] if isinstance(at, str | int) else []
        self.of_key = False

    def within(self, step: object) -> FieldError:
        """The same error one level up: ``step`` (a field name, list index or mapping key)
        goes in front of the path, as pydantic (which checked the structure before) wrote
        it, so that the messages stay as they were: a key that is neither a string nor a
        64-bit integer as its text, ``true`` as 1."""
        if not isinstance(step, str):
            step = int(step) if isinstance(step, int) and -(2**63) <= step < 2**63 else str(step)
        self.loc.insert(0, step)
        return self


def invalid(message: str, at: object = None) -> FieldError:
    """A validation error carrying our own message; ``at`` extends the location by one step
    (for errors raised by a record about one of its fields or entries)."""
    return FieldError(message, at)
