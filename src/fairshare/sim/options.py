"""The options of a simulation run, its machine events, and its error type."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from fairshare.cluster import Machine
from fairshare.policies import Kill, PolicyError, PolicyOptions
from fairshare.policies.copy_compute import DEFAULT_MAX_COMPUTING, DEFAULT_MAX_REDUCERS


class Pause(Kill):
    """Stop a running task now and keep its progress: launched again (on any machine), it
    runs only the part it had left. This is the free preemption and migration of Choosy
    section 7.1's offline reference schedulers (a migration is a pause and a launch at the
    same instant). The paused stretch is recorded as an attempt that is not killed; the task
    resumes as the next attempt. A driver that cannot pause may treat it as a :class:`Kill`."""


class SimulationError(PolicyError):
    """A request the simulator cannot run (bad option, unsorted jobs, unknown machine).
    ``where`` and ``what`` form SPEC section 4's error line."""


@dataclass(frozen=True)
class SimOptions:
    """Options of a run. ``delay``, ``job_delays``, ``preemption``, ``pool_order`` and
    ``headroom`` are the policy mechanisms of :class:`fairshare.policies.PolicyOptions`;
    ``until`` stops the run at that time (None: when no event is left); tasks still running
    then are recorded as attempts that end at ``until`` with ``truncated=True``.

    ``copy_compute_splitting`` turns on FAIR section 5.2's copy-compute splitting (SPEC
    section 3's ``--copy-compute-splitting``) with, per machine, at most ``max_reducers``
    reducers and ``max_computing`` compute parts (and copy parts per job), the paper's
    example of 6 and 2 by default (:mod:`fairshare.policies.copy_compute`).
    ``reduce_slowstart`` is the fraction of a job's maps that must finish before its
    reducers launch (Hadoop's ``mapred.reduce.slowstart.completed.maps``); None means 1.0
    (after the last map) without splitting and 0.0 (after the first map: copying overlaps
    the maps) with it."""

    delay: tuple[float, float] | None = None
    job_delays: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    preemption: tuple[float, float] | None = None
    pool_order: Literal["fair", "fifo"] = "fair"
    headroom: bool = False
    rack_slowdown: float = 1.2
    off_rack_slowdown: float = 1.5
    until: float | None = None
    copy_compute_splitting: bool = False
    max_reducers: int = DEFAULT_MAX_REDUCERS
    max_computing: int = DEFAULT_MAX_COMPUTING
    reduce_slowstart: float | None = None

    @property
    def slowstart(self) -> float:
        """``reduce_slowstart`` with its default filled in."""
        if self.reduce_slowstart is not None:
            return self.reduce_slowstart
        return 0.0 if self.copy_compute_splitting else 1.0

    def policy_options(self) -> PolicyOptions:
        return PolicyOptions(
            delay=self.delay,
            job_delays=self.job_delays,
            preemption=self.preemption,
            pool_order=self.pool_order,
            headroom=self.headroom,
            reduce_slowstart=self.slowstart,
            copy_compute=(
                (self.max_reducers, self.max_computing) if self.copy_compute_splitting else None
            ),
        )

    def record(self) -> dict[str, object]:
        return {
            "delay": self.delay,
            "preemption": self.preemption,
            "pool_order": self.pool_order,
            "headroom": self.headroom,
            "rack_slowdown": self.rack_slowdown,
            "off_rack_slowdown": self.off_rack_slowdown,
            "copy_compute_splitting": self.copy_compute_splitting,
            "max_reducers": self.max_reducers,
            "max_computing": self.max_computing,
            "reduce_slowstart": self.slowstart,
        }


@dataclass(frozen=True)
class MachineEvent:
    """A machine joins (``machine`` a :class:`Machine`) or leaves (``machine`` its name)."""

    time: float
    kind: Literal["add", "remove"]
    machine: Machine | str


@dataclass(frozen=True)
class JobEvent:
    """What the live world does to jobs, replayed: at ``time`` job ``job`` (its name) is
    cancelled by its tenant (``kind`` ``"cancel"``: its pending tasks are dropped and its
    running ones killed), or the running attempt of its map task ``task`` fails (``"fail"``:
    recorded as a killed attempt, the task runs again later). An event for a job that is not
    running then (not yet submitted, finished or cancelled) or a task that is not running
    changes nothing."""

    time: float
    kind: Literal["cancel", "fail"]
    job: str
    task: int = 0


def check_options(opts: SimOptions) -> None:
    """Raise :class:`SimulationError` for options a run cannot take."""
    for where, pair in (("--delay-scheduling", opts.delay), ("--preemption", opts.preemption)):
        if pair is not None and (
            len(pair) != 2 or any(not math.isfinite(x) or x < 0 for x in pair)
        ):
            raise SimulationError(where, f"expected two finite numbers >= 0, got {pair}")
    for where, value in (
        ("rack_slowdown", opts.rack_slowdown),
        ("off_rack_slowdown", opts.off_rack_slowdown),
    ):
        if not math.isfinite(value) or value <= 0:
            raise SimulationError(where, f"must be a finite number > 0, got {value}")
    if opts.reduce_slowstart is not None and not 0.0 <= opts.reduce_slowstart <= 1.0:
        raise SimulationError(
            "reduce_slowstart", f"must be a fraction in [0, 1], got {opts.reduce_slowstart}"
        )
    if opts.copy_compute_splitting and not 1 <= opts.max_computing <= opts.max_reducers:
        raise SimulationError(
            "--copy-compute-splitting",
            "max_computing and max_reducers must satisfy 1 <= max_computing <= max_reducers, "
            f"got {opts.max_computing} and {opts.max_reducers}",
        )
