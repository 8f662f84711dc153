"""One allocation type for every solver and policy, so that every check applies to both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from fairshare.cluster import FloatArray


@dataclass(frozen=True)
class Allocation:
    """Tasks per user, and where they run when the policy places them.

    ``tasks[i]`` is user i's task count (fractional when divisible), ``shares[i]`` the quantity
    the policy equalises for user i before weighting (dominant share for DRF, task share for
    TSF, ...). ``placement`` is a users x machines matrix of tasks, or None for policies that
    pool the cluster into one machine (DRF, asset fairness, CEEI, H-DRF, max-min).
    Users and machines are in scenario order.
    """

    policy: str
    integral: bool
    tasks: FloatArray
    shares: FloatArray
    placement: sparse.csr_array | None = None
    warnings: tuple[str, ...] = ()
    extras: Mapping[str, object] = field(default_factory=dict)

    def usage(self, demands: FloatArray) -> FloatArray:
        """Total resources allocated, per resource (pooled over the cluster)."""
        return np.asarray(self.tasks @ demands, dtype=np.float64)
