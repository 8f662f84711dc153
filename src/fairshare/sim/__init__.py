"""Deterministic trace-driven simulation: the event engine and the run records it writes.

:func:`simulate` replays jobs on a cluster under an online policy and returns a
:class:`RunLog` (every task attempt and job record); :class:`SimOptions` holds the
mechanisms (delay scheduling, preemption, copy-compute splitting, ``until``).
:mod:`fairshare.sim.reference` holds the offline comparators of Choosy section 7.
:mod:`fairshare.sim.option_table` lists the options of a run as the command line, the sweeps
and the docs name them.

The names are loaded on first use: the command line imports
:mod:`fairshare.sim.option_table` when it starts, and importing this package must not load
the engine and the policies then (``tests/test_bench.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairshare.runlog import JobRecord, RunLog, TaskAttempt
    from fairshare.sim.engine import JobEvent, MachineEvent, SimOptions, SimulationError, simulate

__all__ = [
    "JobEvent",
    "JobRecord",
    "MachineEvent",
    "RunLog",
    "SimOptions",
    "SimulationError",
    "TaskAttempt",
    "simulate",
]

_FROM_RUNLOG = frozenset({"JobRecord", "RunLog", "TaskAttempt"})
"""The names this package re-exports from :mod:`fairshare.runlog`; the rest are the
engine's."""


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = "fairshare.runlog" if name in _FROM_RUNLOG else "fairshare.sim.engine"
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fairshare.sim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
