"""Converters from production schedulers' configurations to scenarios (SPEC section 8.1,
``fairshare import FORMAT PATH...``): pure functions that read the files and return a scenario
mapping (the structure of SPEC section 1) and the warnings for what the model does not cover.

- :mod:`fairshare.workload.imports.kueue`: Kueue's ResourceFlavors, ClusterQueues, Cohorts,
  LocalQueues and Configuration.
- :mod:`fairshare.workload.imports.slurm`: ``sacctmgr`` associations and ``slurm.conf``.
"""
