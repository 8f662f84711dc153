"""The input and output of progressive filling over machine types (Choosy section 5.1, TSF
section V-B), and the two quantities every placed policy derives from a user's demand.

A :class:`FillingProblem` states one divisible constrained max-min problem on machine types
(machines coalesced as in Choosy section 5.1 by :mod:`fairshare.workload.eligibility`);
:func:`fairshare.solvers.filling_lp.progressive_filling` solves it and returns a
:class:`FillingResult`. :func:`hosts` and :func:`tasks_alone` are the per-(user, type) facts
the engine and the policies (TSF's ``h_i``, CDRF's ``M_i``) build on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairshare.allocation.types import IntArray
from fairshare.cluster import BoolArray, FloatArray


@dataclass(frozen=True)
class FillingProblem:
    """A progressive-filling instance over machine types (Choosy section 5.1).

    User i's share is ``share_per_task[i] * tasks_i``; the engine maximises, leximin, the
    weighted level ``share_i / weights[i]``.

    Parameters
    ----------
    capacity : FloatArray
        types x resources: one machine of each type.
    count : FloatArray
        The number of machines of each type.
    usable : BoolArray
        users x types: whether user i may run on type t (the engine also drops the pairs
        whose machines lack a resource the user demands).
    demands : FloatArray
        users x resources, per task.
    share_per_task : FloatArray
        Per user (> 0): what one task adds to the share the policy equalises.
    weights : FloatArray
        Per user (> 0): the share is divided by it.
    caps : FloatArray
        Per user, the most tasks it may hold (may be infinite).
    initial : FloatArray
        Per user, the minimum tasks (at most ``caps``); filling starts from them.
    group_members : tuple of IntArray
        The users of each capped queue.
    group_caps : FloatArray
        The most tasks each group of ``group_members`` holds in total.
    """

    capacity: FloatArray
    count: FloatArray
    usable: BoolArray
    demands: FloatArray
    share_per_task: FloatArray
    weights: FloatArray
    caps: FloatArray
    initial: FloatArray
    group_members: tuple[IntArray, ...] = ()
    group_caps: FloatArray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class FillingResult:
    """The leximin allocation of a :class:`FillingProblem` and how it was reached.

    Parameters
    ----------
    tasks : FloatArray
        Tasks per user.
    pair_user, pair_type, pair_tasks : IntArray, IntArray, FloatArray
        The tasks per (user, type) as sparse triples (no zero entries).
    level : FloatArray
        Per user, the weighted share at which it froze.
    rounds : tuple of (float, IntArray)
        Per round of Algorithm 1 (or group of users frozen at their caps): the level and the
        users frozen there.
    lp_solves : int
        The number of LPs solved.
    """

    tasks: FloatArray
    pair_user: IntArray
    pair_type: IntArray
    pair_tasks: FloatArray
    level: FloatArray
    rounds: tuple[tuple[float, IntArray], ...]
    lp_solves: int

    def per_type(self, types: int) -> FloatArray:
        """The dense users x types matrix of tasks (for small problems and tests).

        Parameters
        ----------
        types : int
            The number of machine types (columns).

        Returns
        -------
        FloatArray
            users x types.
        """
        out = np.zeros((len(self.tasks), types), dtype=np.float64)
        np.add.at(out, (self.pair_user, self.pair_type), self.pair_tasks)
        return out


def hosts(capacity: FloatArray, demands: FloatArray) -> BoolArray:
    """Where a user's tasks can run at all: every resource it demands is on the machine.

    Parameters
    ----------
    capacity : FloatArray
        types x resources, one machine of each type.
    demands : FloatArray
        users x resources, per task.

    Returns
    -------
    BoolArray
        users x types: True where a machine of the type has every resource the user demands.

    Examples
    --------
    >>> capacity = np.array([[4.0, 0.0], [4.0, 2.0]])  # the second type has a GPU
    >>> hosts(capacity, np.array([[1.0, 0.0], [1.0, 1.0]])).tolist()
    [[True, True], [False, True]]
    """
    missing = (demands > 0).astype(np.float64) @ (capacity <= 0).astype(np.float64).T
    return np.asarray(missing == 0, dtype=np.bool_)


def tasks_alone(capacity: FloatArray, count: FloatArray, demands: FloatArray) -> FloatArray:
    """The divisible tasks a user could run alone on all machines of a type (TSF section V-B's
    ``h_i``, summed per type).

    Parameters
    ----------
    capacity : FloatArray
        types x resources, one machine of each type.
    count : FloatArray
        The number of machines of each type.
    demands : FloatArray
        users x resources, per task.

    Returns
    -------
    FloatArray
        users x types: ``count_t * min_r capacity_tr / demand_ir`` over the resources the
        user demands; 0 where a demanded resource is missing.

    Examples
    --------
    >>> capacity = np.array([[8.0, 16.0], [4.0, 0.0]])
    >>> tasks_alone(capacity, np.array([2.0, 3.0]), np.array([[1.0, 4.0]])).tolist()
    [[8.0, 0.0]]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = capacity[None, :, :] / demands[:, None, :]
    ratio = np.where(demands[:, None, :] > 0, ratio, np.inf)
    per_machine = ratio.min(axis=2)
    per_machine = np.where(np.isfinite(per_machine), per_machine, 0.0)
    return np.asarray(per_machine * count[None, :], dtype=np.float64)
