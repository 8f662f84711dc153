"""Converters of production schedulers' configurations into scenarios (SPEC section 8.1's
``fairshare import FORMAT PATH...``): pure functions from files to a scenario mapping (the
structure of SPEC section 1) and the warnings about settings the model does not cover.

- :mod:`fairshare.workload.imports.kueue`: Kueue's ResourceFlavors, ClusterQueues, Cohorts,
  LocalQueues and Configuration.
"""
