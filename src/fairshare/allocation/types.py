"""One allocation type for every solver and policy, so that every check applies to both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from fairshare.cluster import FloatArray

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Placement:
    """Tasks per (user, machine), stored sparsely: ``tasks[k]`` of user ``users[k]`` run on
    machine ``machines[k]``. Pairs are unique and hold positive amounts."""

    users: IntArray
    machines: IntArray
    tasks: FloatArray
    shape: tuple[int, int]

    @classmethod
    def from_dense(cls, matrix: npt.ArrayLike, tolerance: float = 0.0) -> Placement:
        dense = np.asarray(matrix, dtype=np.float64)
        users, machines = np.nonzero(dense > tolerance)
        return cls(
            users.astype(np.int64),
            machines.astype(np.int64),
            dense[users, machines],
            (dense.shape[0], dense.shape[1]),
        )

    def toarray(self) -> FloatArray:
        """The dense users x machines matrix (for small clusters and tests)."""
        out = np.zeros(self.shape, dtype=np.float64)
        np.add.at(out, (self.users, self.machines), self.tasks)
        return out

    def per_user(self) -> FloatArray:
        return np.bincount(self.users, weights=self.tasks, minlength=self.shape[0]).astype(
            np.float64
        )

    def machine_usage(self, demands: FloatArray) -> FloatArray:
        """Resources used on each machine (machines x resources)."""
        out = np.zeros((self.shape[1], demands.shape[1]), dtype=np.float64)
        np.add.at(out, self.machines, self.tasks[:, None] * demands[self.users])
        return out


@dataclass(frozen=True)
class Allocation:
    """Tasks per user, and where they run when the policy places them.

    ``tasks[i]`` is user i's task count (fractional when divisible), ``shares[i]`` the quantity
    the policy equalises for user i before weighting (dominant share for DRF, task share for
    TSF, ...). ``placement`` says which machines run them, or is None for policies that pool
    the cluster into one machine (DRF, asset fairness, CEEI, H-DRF, max-min).
    Users and machines are in scenario order.
    """

    policy: str
    integral: bool
    tasks: FloatArray
    shares: FloatArray
    placement: Placement | None = None
    warnings: tuple[str, ...] = ()
    extras: Mapping[str, object] = field(default_factory=dict)

    def usage(self, demands: FloatArray) -> FloatArray:
        """Total resources allocated, per resource (pooled over the cluster)."""
        return np.asarray(self.tasks @ demands, dtype=np.float64)
