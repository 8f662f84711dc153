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
"""

from __future__ import annotations

import numpy as np

from fairshare.allocation import Allocation
from fairshare.cluster import FloatArray
from fairshare.solvers.constrained import per_machine_allocation
from fairshare.solvers.filling_problem import tasks_alone
from fairshare.solvers.placed import (
    PlacedInput,
    placed_allocation,
    prepare_placed,
    whole_minimums,
)
from fairshare.solvers.whole_tasks import progressive_whole_tasks
from fairshare.workload.model import Scenario


def task_share_per_task(data: PlacedInput, demands: FloatArray, constrained: bool) -> FloatArray:
    """``1 / h_i``: TSF's share of one task (``constrained=False``: h_i over every machine,
    TSF V-B1) or constrained CDRF's (``True``: h'_i over the machines user i may use). Users
    that can run nowhere get 0 (they receive nothing anyway)."""
    alone = tasks_alone(data.types.capacity, data.types.count.astype(np.float64), demands)
    if constrained:
        alone = np.where(data.usable, alone, 0.0)
    h = alone.sum(axis=1)
    return np.asarray(np.where(h > 0, 1.0 / np.where(h > 0, h, 1.0), 0.0), dtype=np.float64)


def dominant_share_per_task(scenario: Scenario) -> FloatArray:
    """DRFH's share of one task: its dominant share of the whole cluster."""
    total = scenario.cluster.total
    ratio = np.where(total > 0, scenario.demands / np.where(total > 0, total, 1.0), 0.0)
    return np.asarray(ratio.max(axis=1), dtype=np.float64)


def solve_task_share(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """``tsf``, ``cdrf`` or ``drfh``: weighted max-min fair placed allocation of the share each
    defines (see the module docstring)."""
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
        )
    else:
        placement, lp_solves = data.fill(scenario, share_per_task)
    shares = placement.per_user() * share_per_task
    return placed_allocation(policy, integral, placement, shares, data.warnings, lp_solves)


def solve_per_machine_drf(scenario: Scenario, policy: str, integral: bool) -> Allocation:
    """Per-machine DRF (TSF IV-B1): weighted DRF on each machine among its eligible users."""
    data = prepare_placed(scenario)
    capacity = data.types.capacity
    demands = scenario.demands
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(demands[:, None, :] > 0, demands[:, None, :] / capacity[None, :, :], 0.0)
    dominant = ratio.max(axis=2)  # users x types: dominant share of one machine per task
    dominant = np.where(data.usable, dominant, np.inf)
    return per_machine_allocation(scenario, policy, integral, data, dominant)
