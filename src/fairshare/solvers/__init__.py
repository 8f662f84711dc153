"""Exact offline allocations: the fair share of every user under each policy (SPEC section 2).

:func:`solve` computes the allocation of a scenario under a policy of
:data:`SOLVER_POLICIES`, from scratch; every solver returns an
:class:`~fairshare.allocation.Allocation`. The modules, by paper mechanism:

- :mod:`~fairshare.solvers.pooled`: the policies that pool the cluster into one machine
  (FAIR Appendix A, DRF sections 4-5, H-DRF section 3), over the water-filling engine
  (:mod:`~fairshare.solvers.waterfill`, divisible), progressive filling
  (:mod:`~fairshare.solvers.progressive`, whole tasks) and CEEI's market
  (:mod:`~fairshare.solvers.ceei`).
- :mod:`~fairshare.solvers.constrained` and :mod:`~fairshare.solvers.tsf`: the policies that
  place tasks under constraints (Choosy sections 4-5, TSF sections IV-V), over the filling
  LP (:mod:`~fairshare.solvers.filling_lp`) and the whole-task allocators
  (:mod:`~fairshare.solvers.whole_tasks`).

Examples
--------
>>> from fairshare.workload import parse_scenario
>>> scenario = parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 10}}],
...      "users": [{"name": "a"}, {"name": "b", "weight": 4}]},
...     source="two-users",
... )
>>> solve(scenario, "max-min").tasks.round(6).tolist()
[2.0, 8.0]
"""

from fairshare.errors import UnknownPolicy
from fairshare.solvers.errors import InvalidRequest, SolverFailure
from fairshare.solvers.registry import SOLVER_POLICIES, SolverPolicy, solve

__all__ = [
    "SOLVER_POLICIES",
    "InvalidRequest",
    "SolverFailure",
    "SolverPolicy",
    "UnknownPolicy",
    "solve",
]
