"""The names ``--help`` lists as an option's valid values, without loading what they name.

The registries (:data:`fairshare.solvers.SOLVER_POLICIES`,
:data:`fairshare.policies.ONLINE_POLICIES`, :data:`fairshare.sim.reference.REFERENCE_POLICIES`,
:data:`fairshare.fairness.PROPERTIES`) load the solvers, the online core and the property
checker: 0.1-0.8 s that ``fairshare --help`` should not pay. Their names are written here
and ``tests/test_cli_help.py`` checks that they are the registries' own, in order.

Examples
--------
>>> "drf" in SOLVER_POLICY_NAMES and "fair" in ONLINE_POLICY_NAMES
True
>>> listed(("a", "b", "c"))
'a, b or c'
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ONLINE_HELP",
    "ONLINE_POLICY_NAMES",
    "PROPERTY_NAMES",
    "REFERENCE_POLICY_NAMES",
    "SOLVER_HELP",
    "SOLVER_POLICY_NAMES",
    "listed",
]

SOLVER_POLICY_NAMES = (
    "max-min",
    "drf",
    "asset",
    "ceei",
    "hdrf",
    "collapsed-drf",
    "cmmf",
    "independent",
    "tsf",
    "drfh",
    "cdrf",
    "per-machine-drf",
)
"""``solve`` and ``check``'s policies (:data:`fairshare.solvers.SOLVER_POLICIES`)."""

ONLINE_POLICY_NAMES = (
    "fifo",
    "fair",
    "drf",
    "hdrf",
    "naive-hdrf",
    "collapsed-drf",
    "choosy",
    "tsf",
    "cdrf",
    "drfh",
    "cmmf-cpu",
    "cmmf-mem",
    "slots",
    "capacity",
    "slurm-fairtree",
    "kueue",
    "kueue-classical",
)
"""The online policies (:data:`fairshare.policies.ONLINE_POLICIES`)."""

REFERENCE_POLICY_NAMES = (
    "offline-restricted",
    "offline-migration",
    "offline-preemption",
    "periodic-offline",
)
"""Choosy's reference schedulers (:data:`fairshare.sim.reference.REFERENCE_POLICIES`)."""

PROPERTY_NAMES = (
    "sharing-incentive",
    "strategy-proofness",
    "envy-freeness",
    "pareto-efficiency",
    "single-machine-fairness",
    "single-resource-fairness",
    "hierarchical-share-guarantee",
    "group-strategy-proofness",
    "population-monotonicity",
    "quota-restored",
    "gang-progress",
)
"""``check``'s properties (:data:`fairshare.fairness.PROPERTIES`)."""


def listed(names: Sequence[str]) -> str:
    """``a, b or c``: names as a help text lists them.

    Parameters
    ----------
    names : sequence of str
        At least one name.

    Returns
    -------
    str
    """
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


ONLINE_HELP = (
    f"Online policy: {listed(ONLINE_POLICY_NAMES)}; or a reference scheduler: "
    f"{listed(REFERENCE_POLICY_NAMES)} (see `fairshare policies`)"
)
"""The help of an option naming an online policy (``simulate --policy``)."""

SOLVER_HELP = f"Solver policy: {listed(SOLVER_POLICY_NAMES)} (see `fairshare policies`)"
"""The help of ``solve --policy``."""
