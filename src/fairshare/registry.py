"""The one shape of fairshare's policy registries.

The offline solver policies (:data:`fairshare.solvers.SOLVER_POLICIES`), the online policies
(:data:`fairshare.policies.ONLINE_POLICIES`) and Choosy's reference schedulers
(:data:`fairshare.sim.reference.REFERENCE_POLICIES`) each map a SPEC name to a
:class:`PolicyInfo` (what the policy equalises and the paper section it implements) extended
with what runs it; ``fairshare policies`` prints all three from these fields. The trace
formats (:data:`fairshare.workload.trace_formats.TRACE_FORMATS`) are a registry of the same
kind, built by the same :func:`by_name`.

Examples
--------
>>> from fairshare.registry import PolicyInfo, by_name
>>> registry = by_name(
...     [PolicyInfo("drf", "equalises dominant shares", "DRF section 4"),
...      PolicyInfo("fifo", "jobs in submission order", "FAIR section 2")]
... )
>>> list(registry), registry["drf"].source
(['drf', 'fifo'], 'DRF section 4')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

__all__ = ["PolicyInfo", "by_name"]


@dataclass(frozen=True)
class PolicyInfo:
    """A policy's SPEC name, a one-line summary of what it does, and its paper section.

    Parameters
    ----------
    name : str
        The SPEC name (``--policy NAME``).
    summary : str
        What the policy does, on one line.
    source : str
        The paper section it implements.
    """

    name: str
    summary: str
    source: str


class Named(Protocol):
    """What a registry entry needs: its name (the key it is found by)."""

    @property
    def name(self) -> str:
        """The entry's name."""
        ...


Info = TypeVar("Info", bound=Named)
"""A registry entry: :class:`PolicyInfo` or a subclass of it, or another record with a name
(the trace formats' :class:`~fairshare.workload.trace_formats.TraceFormat`)."""


def by_name(entries: Iterable[Info]) -> dict[str, Info]:
    """The registry of ``entries`` by name, in the order given.

    That order is the order ``fairshare policies`` (or ``--trace``'s help) lists them in.

    Parameters
    ----------
    entries : Iterable of Info
        The registry's entries.

    Returns
    -------
    dict of str to Info

    Raises
    ------
    ValueError
        A name is registered twice (a programming error).
    """
    registry: dict[str, Info] = {}
    for entry in entries:
        if entry.name in registry:
            raise ValueError(f"{entry.name!r} is registered twice")
        registry[entry.name] = entry
    return registry
