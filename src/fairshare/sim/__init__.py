"""Deterministic trace-driven simulation: the event engine and the run records it writes.

:func:`simulate` replays jobs on a cluster under an online policy and returns a
:class:`RunLog` (every task attempt and job record); :class:`SimOptions` holds the
mechanisms (delay scheduling, preemption, copy-compute splitting, ``until``).
:mod:`fairshare.sim.reference` holds the offline comparators of Choosy section 7.
"""

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
