"""The one shape of fairshare's policy registries: the offline solver policies
(:data:`fairshare.solvers.SOLVER_POLICIES`), the online policies
(:data:`fairshare.policies.ONLINE_POLICIES`) and Choosy's reference schedulers
(:data:`fairshare.sim.reference.REFERENCE_POLICIES`). Each maps a SPEC name to a
:class:`PolicyInfo` (what the policy equalises and the paper section it implements) extended
with what runs it; ``fairshare policies`` prints all three from these fields."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["PolicyInfo", "by_name"]


@dataclass(frozen=True)
class PolicyInfo:
    """A policy's SPEC name, a one-line summary of what it does, and its paper section."""

    name: str
    summary: str
    source: str


Info = TypeVar("Info", bound=PolicyInfo)


def by_name(entries: Iterable[Info]) -> dict[str, Info]:
    """The registry of ``entries`` by name, in the order given (the order ``fairshare
    policies`` lists them); a repeated name is a programming error."""
    registry: dict[str, Info] = {}
    for entry in entries:
        if entry.name in registry:
            raise ValueError(f"policy {entry.name!r} is registered twice")
        registry[entry.name] = entry
    return registry
