"""Converters from production schedulers' configurations to scenarios (SPEC section 8.1,
``fairshare import FORMAT PATH...``): pure functions that read the files and return a scenario
mapping (the structure of SPEC section 1) and the warnings for what the model does not cover.

- :mod:`fairshare.workload.imports.kueue`: Kueue's ResourceFlavors, ClusterQueues, Cohorts,
  LocalQueues and Configuration.
- :mod:`fairshare.workload.imports.slurm`: ``sacctmgr`` associations and ``slurm.conf``.
- :mod:`fairshare.workload.imports.yarn_fair`, :mod:`fairshare.workload.imports.yarn_capacity`:
  YARN's ``fair-scheduler.xml`` and ``capacity-scheduler.xml`` (XML read by
  :mod:`fairshare.workload.imports.xml_reading` alone).

Every importer returns an :class:`ImportResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ImportResult"]


@dataclass(frozen=True)
class ImportResult:
    """A converted configuration: what every importer returns.

    Attributes
    ----------
    scenario : dict
        The scenario mapping (SPEC section 1), ready to be written as YAML.
    warnings : list of str
        One ``warning: FILE: WHERE: WHAT`` line per setting the model does not cover.
    """

    scenario: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
