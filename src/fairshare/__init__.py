"""fairshare: fair multi-resource cluster scheduling.

Exact offline solvers, online schedulers, a trace-driven simulator and a fairness property
checker for the policies of five papers: the FAIR scheduler, Dominant Resource Fairness (DRF),
Hierarchical DRF (H-DRF), Constrained Max-Min Fairness with Choosy, and Task Share Fairness (TSF).

The public entry points for library users:

- :func:`fairshare.workload.load_scenario` reads and validates a scenario file (SPEC section 1).
- :func:`fairshare.solvers.solve` computes the fair allocation of a scenario under a policy.
- :mod:`fairshare.allocation` holds the allocation type every solver returns and the invariant
  checks (feasibility, constraints, caps, maximality) that apply to all of them.
"""

__version__ = "0.1.0"
