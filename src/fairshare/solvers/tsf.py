"""Multi-resource policies with placement constraints (Wang et al., the TSF paper).

All four place tasks on machines (coalesced into types, Choosy 5.1) and honour constraints,
caps, queue ``max_share`` and minimum shares. Three are weighted max-min fair in a share that is
linear in a user's tasks, ``share_i = tasks_i * share_per_task_i``, and computed by the one
progressive-filling LP engine of :mod:`fairshare.solvers.filling_lp` (TSF section V-B,
Algorithm 1, with the batched freeze test of :mod:`fairshare.solvers.freeze_test`):

- ``tsf``: weighted Task Share Fairness (TSF sections V-A and V-B, Definition 7). The task share
  is ``s_i = n_i / h_i`` (weighted: ``/ w_i``), where ``h_i`` is the number of tasks user i
  could run alone on the whole cluster *without* its constraints: ``sum_m min_r C_mr / d_ir``
  (divisible, not floored; TSF V-B1). In the running example (Fig. 4) h = 14, 7, 7.
- ``cdrf``: constrained Containerized DRF (TSF section IV-B3): the same with ``h'_i``, the tasks
  user i could run monopolising the cluster *with* its constraints (Fig. 2a: 18 and 6, giving
  12 and 4 tasks).
- ``drfh``: DRF in heterogeneous systems (TSF section IV-B2 and Appendix B-B, problem (25)):
  the global dominant share ``n_i * max_r d_ir / total_r`` is equalised over feasible
  placements.

and one is not:

- ``per-machine-drf`` (TSF section IV-B1, Appendix B-A): weighted DRF on every machine
  separately, among the users eligible for it; a user's total is the sum over machines. It is
  the per-machine filling of :mod:`fairshare.solvers.constrained` (with one resource it is
  Choosy's independent allocation), and like it may leave resources idle (TSF Table I).

With ``--integral`` the whole-task allocators are used: TSF section V-D's online rule applied
offline (:mod:`fairshare.solvers.whole_tasks`) and per-machine DRF with whole tasks
(:mod:`fairshare.solvers.per_machine`).

Examples
--------
TSF's running example (Figure 4): m1 and m3 have <9 CPUs, 12 GB>, m2 <3, 4>; u1 runs <1, 2>
tasks on m1 and m2, u2 <3, 1> on m2 only, u3 <1, 4> anywhere. TSF gives task shares 3/7,
1/7 and 3/7 (alone and unconstrained, u1 could run 14 tasks, u2 7, u3 7):

>>> from fairshare.workload import parse_scenario
>>> scenario = parse_scenario(
...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 12}},
...                   {"name": "m2", "capacity": {"cpu": 3, "mem": 4}},
...                   {"name": "m3", "capacity": {"cpu": 9, "mem": 12}}],
...      "users": [{"name": "u1", "demand": {"cpu": 1, "mem": 2}, "machines": ["m1", "m2"]},
...                {"name": "u2", "demand": {"cpu": 3, "mem": 1}, "machines": ["m2"]},
...                {"name": "u3", "demand": {"cpu": 1, "mem": 4}}]},
...     source="tsf-figure-4",
... )
>>> allocation = solve_task_share(scenario, "tsf", integral=False)
>>> allocation.tasks.round(6).tolist()
[6.0, 1.0, 3.0]
>>> allocation.placement.toarray().round(6).tolist()  # users x machines
[[6.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]]
"""

from __future__ import annotations

import numpy as np

from fairshare.allocation import Allocation
from fairshare.cluster import FloatArray
from fairshare.solvers.constrained import per_machine_allocation
from fairshare.solvers.filling_problem import tasks_alone
from fairshare.solvers.machine_pool import QueueCaps
from fairshare.solvers.placed import (
    PlacedInput,
    placed_allocation,
    prepare_placed,
    whole_minimums,
)
from fairshare.solvers.whole_tasks import progressive_whole_tasks
from fairshare.workload.model import Scenario


def task_share_per_task(data: PlacedInput, demands: FloatArray, constrained: bool) -> FloatArray:
    """``1 / h_i``: the task share of one task, TSF's or constrained CDRF's.

    Parameters
    ----------
    data : PlacedInput
        The scenario's machine types and which users may use them.
    demands : FloatArray
        Users x resources: one task's demand.
    constrained : bool
        False: ``h_i``, the tasks user i could run alone on every machine (TSF V-B1).
        True: ``h'_i``, alone on the machines it may use (CDRF, TSF IV-B3).

    Returns
    -------
    FloatArray
        ``1 / h_i`` per user; 0 for users that can run nowhere (they receive nothing
        anyway).

    Examples
    --------
    TSF Figure 2a: two machines of <18 CPUs, 18 GB>; u1 runs <1, 2> tasks anywhere, u2
    <1, 3> tasks on m2 only. Alone, u1 could run 18 tasks; u2 12 without its constraint, 6
    with it. (``prepare_placed`` is the filling LP's, which this module imports.)

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 18, "mem": 18}},
    ...                   {"name": "m2", "capacity": {"cpu": 18, "mem": 18}}],
    ...      "users": [{"name": "u1", "demand": {"cpu": 1, "mem": 2}},
    ...                {"name": "u2", "demand": {"cpu": 1, "mem": 3}, "machines": ["m2"]}]},
    ...     source="tsf-figure-2a",
    ... )
    >>> data = prepare_placed(scenario)
    >>> (1 / task_share_per_task(data, scenario.demands, False)).round(6).tolist()
    [18.0, 12.0]
    >>> (1 / task_share_per_task(data, scenario.demands, True)).round(6).tolist()
    [18.0, 6.0]
    """
    alone = tasks_alone(data.types.capacity, data.types.count.astype(np.float64), demands)
    if constrained:
        alone = np.where(data.usable, alone, 0.0)
    h = alone.sum(axis=1)
    return np.asarray(np.where(h > 0, 1.0 / np.where(h > 0, h, 1.0), 0.0), dtype=np.float64)


def dominant_share_per_task(scenario: Scenario) -> FloatArray:
    """DRFH's share of one task: its dominant share of the whole cluster (TSF IV-B2).

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.

    Returns
    -------
    FloatArray
        Per user, the largest of its task's shares of each resource's cluster total (0 for
        resources the cluster has none of).

    Examples
    --------
    TSF Figure 2a (totals <36 CPUs, 36 GB>): memory is dominant for both users.

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 18, "mem": 18}},
    ...                   {"name": "m2", "capacity": {"cpu": 18, "mem": 18}}],
    ...      "users": [{"name": "u1", "demand": {"cpu": 1, "mem": 2}},
    ...                {"name": "u2", "demand": {"cpu": 1, "mem": 3}, "machines": ["m2"]}]},
    ...     source="tsf-figure-2a",
    ... )
    >>> (dominant_share_per_task(scenario) * 36).round(6).tolist()
    [2.0, 3.0]
    """
    total = scenario.cluster.total
    ratio = np.where(total > 0, scenario.demands / np.where(total > 0, total, 1.0), 0.0)
    return np.asarray(ratio.max(axis=1), dtype=np.float64)


def solve_task_share(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """``tsf``, ``cdrf`` or ``drfh``: the weighted max-min fair placed allocation of the
    share each defines (module docstring), by the filling LP (TSF section V-B, Algorithm 1)
    or, with ``integral``, by whole-task progressive filling.

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.
    policy : str
        ``tsf``, ``cdrf`` or ``drfh``.
    integral : bool
        Whole tasks instead of the divisible allocation.

    Returns
    -------
    Allocation
        Tasks, shares and the placement per machine.

    Raises
    ------
    InvalidRequest
        Minimum shares that do not fit.
    SolverFailure
        HiGHS could not solve a filling LP.

    Examples
    --------
    TSF Figure 2a (see :func:`task_share_per_task`): TSF gives u1 9 tasks and u2 6, half
    of what each could run alone on the whole cluster; constrained CDRF gives 12 and 4, two
    thirds of what each could run alone on its machines.

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 18, "mem": 18}},
    ...                   {"name": "m2", "capacity": {"cpu": 18, "mem": 18}}],
    ...      "users": [{"name": "u1", "demand": {"cpu": 1, "mem": 2}},
    ...                {"name": "u2", "demand": {"cpu": 1, "mem": 3}, "machines": ["m2"]}]},
    ...     source="tsf-figure-2a",
    ... )
    >>> solve_task_share(scenario, "tsf", integral=False).tasks.round(6).tolist()
    [9.0, 6.0]
    >>> cdrf = solve_task_share(scenario, "cdrf", integral=True)
    >>> cdrf.tasks.tolist(), cdrf.placement.toarray().tolist()
    ([12.0, 4.0], [[9.0, 3.0], [0.0, 4.0]])
    """
    data = prepare_placed(scenario)
    demands = scenario.demands
    if policy == "drfh":
        share_per_task = dominant_share_per_task(scenario)
    else:
        share_per_task = task_share_per_task(data, demands, constrained=policy == "cdrf")
    lp_solves = None
    if integral:
        placement = progressive_whole_tasks(
            data.types,
            demands,
            share_per_task,
            scenario.weights,
            data.caps,
            whole_minimums(data.initial),
            QueueCaps(data.group_members, data.group_caps, len(scenario.users)),
        )
    else:
        placement, lp_solves = data.fill(scenario, share_per_task)
    shares = placement.per_user() * share_per_task
    return placed_allocation(policy, integral, placement, shares, data.warnings, lp_solves)


def solve_per_machine_drf(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """Per-machine DRF (TSF IV-B1): weighted DRF on each machine among its eligible users.

    The per-machine filling of :func:`fairshare.solvers.constrained.per_machine_filling`
    with each user's dominant share of one machine of each type; like independent
    allocation it may leave resources idle (TSF Table I).

    Parameters
    ----------
    scenario : Scenario
        The validated scenario.
    policy : str
        ``per-machine-drf``.
    integral : bool
        Whole tasks, machine by machine (minimum shares are then ignored, with a warning).

    Returns
    -------
    Allocation
        Tasks, the placement, and as shares the sum over machines of the user's dominant
        share of each.

    Raises
    ------
    InvalidRequest
        Minimum shares that do not fit.
    SolverFailure
        The per-machine filling found no next event or exhausted its budget.

    Examples
    --------
    TSF Figure 2a (see :func:`task_share_per_task`): u1 has m1 to itself; on m2 the two
    users get equal dominant (memory) shares of the machine, 4.5 and 3 tasks.

    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 18, "mem": 18}},
    ...                   {"name": "m2", "capacity": {"cpu": 18, "mem": 18}}],
    ...      "users": [{"name": "u1", "demand": {"cpu": 1, "mem": 2}},
    ...                {"name": "u2", "demand": {"cpu": 1, "mem": 3}, "machines": ["m2"]}]},
    ...     source="tsf-figure-2a",
    ... )
    >>> drf = solve_per_machine_drf(scenario, "per-machine-drf", integral=False)
    >>> drf.placement.toarray().round(6).tolist()  # users x machines
    [[9.0, 4.5], [0.0, 3.0]]
    """
    data = prepare_placed(scenario)
    capacity = data.types.capacity
    demands = scenario.demands
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(demands[:, None, :] > 0, demands[:, None, :] / capacity[None, :, :], 0.0)
    dominant = ratio.max(axis=2)  # users x types: dominant share of one machine per task
    dominant = np.where(data.usable, dominant, np.inf)
    return per_machine_allocation(scenario, policy, integral, data, dominant)
