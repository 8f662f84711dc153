"""One allocation type for every solver and policy, so that every check applies to both.

Examples
--------
DRF section 4.1's allocation: A runs 3 tasks of <1 CPU, 4 GB>, B 2 tasks of <3 CPUs, 1 GB>.

>>> import numpy as np
>>> from fairshare.allocation import Allocation
>>> allocation = Allocation("drf", True, np.array([3.0, 2.0]), np.array([2 / 3, 2 / 3]))
>>> allocation.usage(np.array([[1.0, 4.0], [3.0, 1.0]])).tolist()
[9.0, 14.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from fairshare.cluster import FloatArray

IntArray = npt.NDArray[np.int64]
"""An int64 numpy array: user and machine indices."""


@dataclass(frozen=True)
class Placement:
    """Tasks per (user, machine), stored sparsely.

    ``tasks[k]`` tasks of user ``users[k]`` run on machine ``machines[k]``. Pairs are unique
    and hold positive amounts. A large cluster's placement is a few entries per user, not a
    users x machines matrix.

    Parameters
    ----------
    users : IntArray
        The user of each entry (scenario order).
    machines : IntArray
        The machine of each entry (scenario order).
    tasks : FloatArray
        The tasks of each entry (fractional when divisible).
    shape : tuple of (int, int)
        (users, machines) of the dense matrix.

    Examples
    --------
    >>> from fairshare.allocation import Placement
    >>> placement = Placement.from_dense([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> placement.users.tolist(), placement.machines.tolist(), placement.tasks.tolist()
    ([0, 1, 2, 2], [0, 1, 0, 1], [2.0, 1.0, 1.0, 1.0])
    >>> placement.per_user().tolist()
    [2.0, 1.0, 2.0]
    """

    users: IntArray
    machines: IntArray
    tasks: FloatArray
    shape: tuple[int, int]

    @classmethod
    def from_dense(cls, matrix: npt.ArrayLike, tolerance: float = 0.0) -> Placement:
        """The placement of a dense users x machines matrix.

        Parameters
        ----------
        matrix : array_like
            Tasks per (user, machine).
        tolerance : float
            Entries at or below it are left out.

        Returns
        -------
        Placement
        """
        dense = np.asarray(matrix, dtype=np.float64)
        users, machines = np.nonzero(dense > tolerance)
        return cls(
            users.astype(np.int64),
            machines.astype(np.int64),
            dense[users, machines],
            (dense.shape[0], dense.shape[1]),
        )

    def toarray(self) -> FloatArray:
        """The dense users x machines matrix (for small clusters and tests).

        Returns
        -------
        FloatArray
        """
        out = np.zeros(self.shape, dtype=np.float64)
        np.add.at(out, (self.users, self.machines), self.tasks)
        return out

    def per_user(self) -> FloatArray:
        """Tasks placed per user, summed over machines.

        Returns
        -------
        FloatArray
            One entry per user.
        """
        return np.bincount(self.users, weights=self.tasks, minlength=self.shape[0]).astype(
            np.float64
        )

    def machine_usage(self, demands: FloatArray) -> FloatArray:
        """Resources used on each machine.

        Parameters
        ----------
        demands : FloatArray
            The users x resources matrix of per-task demands.

        Returns
        -------
        FloatArray
            The machines x resources matrix of what the placed tasks use.
        """
        out = np.zeros((self.shape[1], demands.shape[1]), dtype=np.float64)
        np.add.at(out, self.machines, self.tasks[:, None] * demands[self.users])
        return out


@dataclass(frozen=True)
class Allocation:
    """Tasks per user, and where they run when the policy places them.

    Users and machines are in scenario order.

    Parameters
    ----------
    policy : str
        The SPEC name of the policy that computed it.
    integral : bool
        Whether it holds whole tasks.
    tasks : FloatArray
        ``tasks[i]`` is user i's task count (fractional when divisible).
    shares : FloatArray
        ``shares[i]`` is the quantity the policy equalises for user i, before weighting
        (dominant share for DRF, task share for TSF, ...).
    placement : Placement, optional
        Which machines run the tasks; None for policies that pool the cluster into one
        machine (DRF, asset fairness, CEEI, H-DRF, max-min).
    warnings : tuple of str
        Notes for the reader (a user whose constraint matches no machine gets nothing).
    extras : Mapping of str to object
        Solver details that are not part of the allocation (the LP solves of the filling
        solvers, which the benchmarks report).
    """

    policy: str
    integral: bool
    tasks: FloatArray
    shares: FloatArray
    placement: Placement | None = None
    warnings: tuple[str, ...] = ()
    extras: Mapping[str, object] = field(default_factory=dict)

    def usage(self, demands: FloatArray) -> FloatArray:
        """Total resources allocated, per resource (pooled over the cluster).

        Parameters
        ----------
        demands : FloatArray
            The users x resources matrix of per-task demands.

        Returns
        -------
        FloatArray
            One entry per resource.
        """
        return np.asarray(self.tasks @ demands, dtype=np.float64)
