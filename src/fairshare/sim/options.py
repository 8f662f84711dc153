"""The options of a simulation run (every value checked when they are made), its machine
events, and its error type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from fairshare.cluster import Machine
from fairshare.policies import Kill, PolicyError, PolicyOptions
from fairshare.policies.copy_compute import DEFAULT_MAX_COMPUTING, DEFAULT_MAX_REDUCERS
from fairshare.sim import option_table as table
from fairshare.workload.model import MAX_SECONDS

MAX_SLOWDOWN = 1e6
"""The largest ``rack_slowdown`` / ``off_rack_slowdown`` factor: a task's time times it
stays far inside the float range."""

MAX_SLOTS = 1_000_000
"""The most slots per machine (``--slots``)."""

MAX_SCALE = 1e6
"""The largest ``load_scale`` / ``time_scale`` factor (and 1 / it the smallest): scaled times
of a scenario's bounded times stay finite."""


class Pause(Kill):
    """Stop a running task now and keep its progress: launched again (on any machine), it
    runs only the part it had left. This is the free preemption and migration of Choosy
    section 7.1's offline reference schedulers (a migration is a pause and a launch at the
    same instant). The paused stretch is recorded as an attempt that is not killed; the task
    resumes as the next attempt. A driver that cannot pause may treat it as a :class:`Kill`."""


class SimulationError(PolicyError):
    """A request the simulator cannot run (bad option, unsorted jobs, unknown machine).
    ``where`` and ``what`` form SPEC section 4's error line."""


class OptionError(SimulationError):
    """An option out of its range. ``where`` names it as :class:`SimOptions` does (its field:
    ``preemption``, ``until``; the command line shows its flag, ``--preemption``, instead);
    ``what`` is ``rule`` (what is allowed) and the value given, so that a caller holding the
    value's text (the command line) can show that instead. A rule that names another option
    names its field too (``copy_compute_splitting``).

    Examples
    --------
    >>> from fairshare.sim.options import OptionError, SimOptions
    >>> try:
    ...     SimOptions(until=-1)
    ... except OptionError as error:
    ...     print(error.where, "|", error.what)
    until | must be a number >= 0, at most 1e+15, got -1
    """

    def __init__(self, where: str, rule: str, given: str) -> None:
        super().__init__(where, f"{rule}, got {given}")
        self.rule = rule


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
    the maps) with it; a job's own ``reduce.slowstart`` overrides it.

    ``load_scale`` and ``time_scale`` rescale the workload before it runs
    (:func:`fairshare.workload.scaling.scale_jobs`): submit times (and closed-loop think
    times) are divided by ``load_scale`` (X times the arrival rate), task durations and
    reduce times multiplied by ``time_scale``. Event times are not scaled.

    ``slots`` (slots per machine) and ``max_capacity`` (a queue's maximum capacity as a
    fraction of its parent's) are the ``slots`` and ``capacity`` policies' settings.
    ``thrash_factor`` is how many times slower every task on a machine runs while the
    memory its tasks demand exceeds the machine's (only a policy that over-commits, the
    slot scheduler, lets that happen; :mod:`fairshare.sim.overcommit`).

    ``backfill`` ``"easy"`` turns on EASY backfilling for waiting gangs (SPEC section 3's
    ``--backfill easy``, :mod:`fairshare.policies.gangs`).

    ``usage_half_life`` (seconds) makes every policy count past usage, decayed with that
    half-life (SPEC section 8.3, :mod:`fairshare.policies.usage`); None: the scenario's
    ``usage_half_life``, else the papers' instantaneous fairness."""

    delay: tuple[float, float] | None = table.DELAY_SCHEDULING.default
    job_delays: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    preemption: tuple[float, float] | None = table.PREEMPTION.default
    pool_order: Literal["fair", "fifo"] = table.POOL_ORDER.default
    headroom: bool = table.HEADROOM.default
    rack_slowdown: float = table.RACK_SLOWDOWN.default
    off_rack_slowdown: float = table.OFF_RACK_SLOWDOWN.default
    until: float | None = table.UNTIL.default
    copy_compute_splitting: bool = table.COPY_COMPUTE_SPLITTING.default
    max_reducers: int = DEFAULT_MAX_REDUCERS
    max_computing: int = DEFAULT_MAX_COMPUTING
    reduce_slowstart: float | None = table.REDUCE_SLOWSTART.default
    load_scale: float = table.LOAD_SCALE.default
    time_scale: float = table.TIME_SCALE.default
    slots: int | None = table.SLOTS.default
    thrash_factor: float = table.THRASH_FACTOR.default
    max_capacity: float = table.MAX_CAPACITY.default
    backfill: Literal["easy"] | None = table.BACKFILL.default
    usage_half_life: float | None = table.USAGE_HALF_LIFE.default

    def __post_init__(self) -> None:
        """Every value in its range (SPEC section 3's option values), or
        :class:`OptionError`: checked once, here, so the engine and the command line trust
        them."""
        _check_times("delay", self.delay)
        _check_times("preemption", self.preemption)
        for job, waits in self.job_delays.items():
            _check_times(f"job_delays[{job!r}]", waits)
        if self.pool_order not in ("fair", "fifo"):
            raise OptionError("pool_order", "expected fair or fifo", repr(self.pool_order))
        _check_factor("until", self.until, maximum=MAX_SECONDS, zero=True)
        _check_factor("rack_slowdown", self.rack_slowdown, maximum=MAX_SLOWDOWN)
        _check_factor("off_rack_slowdown", self.off_rack_slowdown, maximum=MAX_SLOWDOWN)
        if self.reduce_slowstart is not None and not 0.0 <= self.reduce_slowstart <= 1.0:
            raise OptionError(
                "reduce_slowstart", "must be a fraction in [0, 1]", str(self.reduce_slowstart)
            )
        for where, factor in (("load_scale", self.load_scale), ("time_scale", self.time_scale)):
            if not 1 / MAX_SCALE <= factor <= MAX_SCALE:  # also nan and inf
                raise OptionError(
                    where,
                    f"must be a number from {1 / MAX_SCALE:g} to {MAX_SCALE:g}",
                    f"{factor:g}",
                )
        if self.slots is not None and not 1 <= self.slots <= MAX_SLOTS:
            raise OptionError(
                "slots", f"must be a whole number from 1 to {MAX_SLOTS}", str(self.slots)
            )
        _check_factor("thrash_factor", self.thrash_factor, maximum=MAX_SLOWDOWN)
        if self.thrash_factor < 1.0:
            raise OptionError("thrash_factor", "must be a number >= 1", f"{self.thrash_factor:g}")
        if not 0.0 < self.max_capacity <= 1.0:
            raise OptionError(
                "max_capacity", "must be a fraction in (0, 1]", f"{self.max_capacity:g}"
            )
        _check_factor("usage_half_life", self.usage_half_life, maximum=MAX_SECONDS)
        if self.backfill not in (None, "easy"):
            raise OptionError("backfill", "expected easy", repr(self.backfill))
        if self.backfill is not None and self.copy_compute_splitting:
            raise OptionError(
                "backfill",
                "EASY backfilling does not combine with copy_compute_splitting (compute "
                "parts are admitted by their machines, not by the reservation)",
                self.backfill,
            )
        if self.copy_compute_splitting and not 1 <= self.max_computing <= self.max_reducers:
            raise OptionError(
                "max_computing",
                "max_computing and max_reducers must satisfy 1 <= max_computing <= max_reducers",
                f"{self.max_computing} and {self.max_reducers}",
            )

    @property
    def slowstart(self) -> float:
        """``reduce_slowstart`` with its default filled in."""
        if self.reduce_slowstart is not None:
            return self.reduce_slowstart
        return table.SLOWSTART_SPLIT if self.copy_compute_splitting else table.SLOWSTART_ALONE

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
            slots=self.slots,
            max_capacity=self.max_capacity,
            backfill=self.backfill,
            usage_half_life=self.usage_half_life,
        )

    def record(self) -> dict[str, object]:
        # The comparators' settings are recorded only when set, so that the records (and
        # summary.json) of runs that do not use them stay as they were.
        extra: dict[str, object] = {}
        if self.slots is not None:
            extra["slots"] = self.slots
        if self.thrash_factor != table.THRASH_FACTOR.default:
            extra["thrash_factor"] = self.thrash_factor
        if self.max_capacity != table.MAX_CAPACITY.default:
            extra["max_capacity"] = self.max_capacity
        if self.usage_half_life is not None:
            extra["usage_half_life"] = self.usage_half_life
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
            "load_scale": self.load_scale,
            "time_scale": self.time_scale,
            "backfill": self.backfill,
            **extra,
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
    recorded as a killed attempt, the task runs again later), or, with ``"cancel_user"``,
    ``job`` names a user that leaves (Choosy section 7's sudden leave): every job of the user
    running then is cancelled and the user submits nothing afterwards. An event for a job
    that is not running then (not yet submitted, finished or cancelled) or a task that is not
    running changes nothing."""

    time: float
    kind: Literal["cancel", "fail", "cancel_user"]
    job: str
    task: int = 0


def seconds_pair(text: str) -> tuple[float, float] | None:
    """``T1,T2`` (delay scheduling's and preemption's times) as two numbers.

    The one reading of the pair for the command line and the sweep grids; the range of each
    number is :class:`SimOptions`'s to check.

    Parameters
    ----------
    text : str
        Two numbers separated by a comma.

    Returns
    -------
    tuple of float or None
        None when ``text`` is not two comma-separated numbers.

    Examples
    --------
    >>> seconds_pair("5,10"), seconds_pair("5"), seconds_pair("a,b")
    ((5.0, 10.0), None, None)
    """
    parts = text.split(",")
    if len(parts) != 2:
        return None
    try:
        return float(parts[0]), float(parts[1])
    except ValueError:
        return None


def _check_times(where: str, pair: tuple[float, float] | None) -> None:
    """``(T1, T2)``: two numbers of seconds from 0 to ``MAX_SECONDS``."""
    if pair is None:
        return
    if len(pair) != 2:
        raise OptionError(where, "expected two numbers of seconds", str(pair))
    for value in pair:
        if not 0 <= value <= MAX_SECONDS:  # also nan and inf
            raise OptionError(
                where, f"times must be numbers of seconds from 0 to {MAX_SECONDS:g}", str(pair)
            )


def _check_factor(where: str, value: float | None, *, maximum: float, zero: bool = False) -> None:
    """A number > 0 (>= 0 with ``zero``) and at most ``maximum``; None is no value."""
    if value is None:
        return
    if not 0 <= value <= maximum or (value == 0 and not zero):  # also nan and inf
        bound = ">= 0" if zero else "> 0"
        raise OptionError(where, f"must be a number {bound}, at most {maximum:g}", f"{value:g}")
