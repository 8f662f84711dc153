"""The input limits of a scenario, checked by the loader before any work (SPEC section 4).

A scenario is untrusted input: a few hundred bytes can describe a billion machines or tasks,
or a YAML alias bomb that expands to gigabytes. Each limit below is far above what the
papers' experiments and the repository's benchmarks use (``fairshare bench online``: 200,000
tasks on 10,000 machines; Choosy section 7.1's 300 generated jobs on 1,000 machines), and
breaking one is an input error (exit 2) that names the field and the limit. README.md
("Limits") lists them.

Examples
--------
>>> from fairshare.workload import ScenarioError, parse_scenario
>>> from fairshare.workload.limits import MAX_MACHINES
>>> try:
...     parse_scenario(
...         {"machines": [{"name": "m", "count": MAX_MACHINES + 1, "capacity": {"cpu": 1}}]},
...         source="huge.yaml",
...     )
... except ScenarioError as error:
...     print(error.where)
machines[0].count
"""

from __future__ import annotations

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_GENERATED_JOBS",
    "MAX_JOB_TASKS",
    "MAX_MACHINES",
    "MAX_NESTING",
    "MAX_REPLICAS",
    "MAX_REPLICA_COPIES",
    "MAX_SCENARIO_BYTES",
    "MAX_TASKS",
]

MAX_SCENARIO_BYTES = 64 * 2**20
"""The largest scenario file read (64 MiB); a scenario of 200,000 jobs is about 20 MiB."""

MAX_NESTING = 100
"""The deepest nesting of mappings and lists in a scenario file (SPEC's own scenarios nest
six levels). Deeper input is refused before it is built, so neither YAML's nor JSON's
recursive readers can exhaust the stack."""

MAX_ALIAS_NODES = 1_000_000
"""YAML aliases may repeat at most this many nodes in all (each alias counts the nodes of
what it names, aliases inside included): a "billion laughs" file of 700 bytes names 10^9."""

MAX_MACHINES = 1_000_000
"""Machines in a scenario, summed over the ``count`` of every entry."""

MAX_TASKS = 100_000_000
"""Tasks in a scenario's jobs, map and reduce tasks summed over all jobs; for a ``workload``
generator, the tasks of the jobs it draws (counted as it draws them). A run's memory no
longer grows with its tasks (its attempts go to a temporary file, about 66 bytes each, and
the outputs are written from it a chunk at a time: issue 32), so this bounds that file (some
6.6 GB at the limit) and the run's time rather than memory."""

MAX_JOB_TASKS = 10_000_000
"""Tasks of one job, map and reduce: the simulator holds an entry per task of a job while the
job runs (its tasks' durations and running entries, some 40 bytes a task)."""

MAX_GENERATED_JOBS = 1_000_000
"""A ``workload`` generator's ``jobs``."""

MAX_REPLICAS = 100
"""``input.replicas`` of a job (and a generator's ``replicas``): machines holding one block
(HDFS's default is 3)."""

MAX_REPLICA_COPIES = 30_000_000
"""Input block locations in all: map tasks times ``replicas``, summed over the jobs (the
simulator draws each one); 10,000,000 tasks with 3 replicas each fit."""
