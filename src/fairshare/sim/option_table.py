"""The simulation options, one row each: the one place their names, defaults and help live.

``fairshare simulate`` and ``fairshare compare`` take the same options (SPEC section 3), a
sweep's grid may vary most of them (SPEC section 7's ``options``), and
:class:`~fairshare.sim.options.SimOptions` holds what they set. Everything else is made from
:data:`OPTIONS`:

- the commands' typer options (``fairshare.cli.runs.simulation_options`` writes them into
  each command's signature), and the run's settings made from their values
  (``fairshare.cli.runs.run_settings``);
- :class:`~fairshare.sim.options.SimOptions`'s defaults (``SimOptions.rack_slowdown``'s is
  ``RACK_SLOWDOWN.default``);
- the sweep's options (:data:`fairshare.experiments.options.OPTIONS`: the rows with
  ``sweepable``);
- the options tables of ``docs/commands.md`` and ``docs/experiments.md``
  (``docs/_ext/option_tables.py`` writes them; ``tests/test_option_table.py`` checks that the
  committed tables are the generated ones).

This module imports nothing of fairshare's: the command line imports it when it starts, and
must not load the simulator to build a command's options (``docs/performance.md``).

Examples
--------
>>> from fairshare.sim.option_table import BY_FIELD, OPTIONS, RACK_SLOWDOWN
>>> RACK_SLOWDOWN.flag, RACK_SLOWDOWN.parameter, RACK_SLOWDOWN.default
('--rack-slowdown', 'rack_slowdown', 1.2)
>>> BY_FIELD["delay"].flag, BY_FIELD["delay"].kind
('--delay-scheduling', 'pair')
>>> [option.name for option in OPTIONS if not option.sweepable]
['seed', 'trace']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Literal, NamedTuple, TypeVar

__all__ = [
    "BACKFILL",
    "BY_FIELD",
    "BY_NAME",
    "COPY_COMPUTE_SPLITTING",
    "DELAY_SCHEDULING",
    "HEADROOM",
    "LOAD_SCALE",
    "MAX_CAPACITY",
    "NOT_OPTIONS",
    "OFF_RACK_SLOWDOWN",
    "OPTIONS",
    "POOL_ORDER",
    "PREEMPTION",
    "RACK_SLOWDOWN",
    "REDUCE_SLOWSTART",
    "SEED",
    "SLOTS",
    "SLOWSTART_ALONE",
    "SLOWSTART_SPLIT",
    "THRASH_FACTOR",
    "TIME_SCALE",
    "TRACE",
    "UNTIL",
    "USAGE_HALF_LIFE",
    "OptionKind",
    "SimOption",
]

OptionKind = Literal["whole", "number", "flag", "choice", "pair", "text"]
"""How an option's value is written: a whole number, a decimal number, a flag (present or
not), one of ``choices``, two numbers of seconds ``T1,T2``, or any text."""

T = TypeVar("T")

SLOWSTART_ALONE = 1.0
"""``reduce_slowstart`` when it is not given and copy-compute splitting is off: reducers
launch after the job's last map (FAIR section 5.1's Hadoop default)."""

SLOWSTART_SPLIT = 0.0
"""``reduce_slowstart`` when it is not given and copy-compute splitting is on: reducers copy
from the first finished map, overlapping the maps (FAIR section 5.2)."""


class SimOption(NamedTuple, Generic[T]):
    """One simulation option (a named tuple: a frozen dataclass would cost the command line
    about 0.4 ms more to make at start-up).

    Parameters
    ----------
    flag : str
        The command line's option (``--rack-slowdown``); without its dashes, its name in a
        sweep's grid and its ``results.parquet`` column.
    kind : OptionKind
        How its value is written.
    default : T
        Its value when it is not given: the command's default and, for a row with a
        ``field``, the :class:`~fairshare.sim.options.SimOptions` field's.
    help : str
        The command's help text (plain text, as ``--help`` prints it).
    field : str or None
        The :class:`~fairshare.sim.options.SimOptions` field it sets; None for the run's own
        settings (the seed, the trace), which :class:`fairshare.cli.runs.RunSettings` holds.
    sweepable : bool
        Whether a sweep's grid may vary it (SPEC section 7's ``options``).
    metavar : str or None
        What ``--help`` shows for the value (None: typer's own, ``<float>``).
    minimum : int or None
        The smallest whole number the command line takes (typer checks it).
    choices : tuple of str
        The values of a ``choice`` (for the docs; :class:`SimOptions` checks them).
    unset : str or None
        What a default of None (or False) means, for the docs' tables (``off``).
    example : str
        A value of a ``pair``, for its error message (``5,10``).
    bounds : str
        The range of a number (of each of a pair's), as the docs' tables state it
        (``> 0, at most 1e6``); :class:`~fairshare.sim.options.SimOptions` checks it
        (``tests/test_option_table.py`` checks that the two agree).
    details : str
        Markdown the docs add to ``help`` (links, what it does not combine with).
    """

    flag: str
    kind: OptionKind
    default: T
    help: str
    field: str | None
    sweepable: bool
    metavar: str | None = None
    minimum: int | None = None
    choices: tuple[str, ...] = ()
    unset: str | None = None
    example: str = ""
    bounds: str = ""
    details: str = ""

    @property
    def name(self) -> str:
        """The flag without ``--``: its name in a grid (``rack-slowdown``)."""
        return self.flag.removeprefix("--")

    @property
    def parameter(self) -> str:
        """The command function's parameter that receives the value (``rack_slowdown``)."""
        return self.name.replace("-", "_")

    @property
    def nullable(self) -> bool:
        """Whether its value may be None (the default of an option that is off or unset)."""
        return self.default is None

    def value_type(self) -> Any:
        """The Python type of the command line's value: ``int``, ``float``, ``bool`` or
        ``str`` (a pair is text the command parses), ``| None`` where it may be None.

        Returns
        -------
        type
        """
        plain: Any = {"whole": int, "number": float, "flag": bool}.get(self.kind, str)
        return plain | None if self.nullable else plain


_SEED = 0
"""The seed of a run when none is given (its help text says it too)."""

SEED: SimOption[int] = SimOption(
    "--seed",
    "whole",
    _SEED,
    f"Seed of durations, input blocks and generated jobs (default {_SEED})",
    field=None,
    sweepable=False,
    minimum=0,
    bounds=">= 0",
    details="a grid's seeds are its own `seeds` field",
)

TRACE: SimOption[None] = SimOption(
    "--trace",
    "text",
    None,
    "Replay a trace instead of the scenario's jobs: swim, google-2011, alibaba-gpu, "
    "alibaba-2017, alibaba-2018, swf, slurm-sacct or kueue-workloads, "
    "e.g. swim:FB-2009.tsv",
    field=None,
    sweepable=False,
    metavar="FORMAT:PATH",
    unset="none",
    details="[Traces](scenarios.md#traces)",
)

DELAY_SCHEDULING: SimOption[None] = SimOption(
    "--delay-scheduling",
    "pair",
    None,
    "Delay scheduling (FAIR Algorithm 1): wait T1 s for a node-local slot, T2 s more for a "
    "rack-local one",
    field="delay",
    sweepable=True,
    metavar="T1,T2",
    unset="off",
    example="5,10",
    bounds="from 0 to 1e15",
)

PREEMPTION: SimOption[None] = SimOption(
    "--preemption",
    "pair",
    None,
    "Preemption (FAIR section 3.2): kill newest tasks of over-share jobs after TMIN s below "
    "min share or TFAIR s below half the fair share",
    field="preemption",
    sweepable=True,
    metavar="TMIN,TFAIR",
    unset="off",
    example="30,60",
    bounds="from 0 to 1e15",
)

UNTIL: SimOption[None] = SimOption(
    "--until",
    "number",
    None,
    "Stop the simulation at this time (seconds); unfinished jobs are reported as such",
    field="until",
    sweepable=True,
    metavar="SECONDS",
    unset="none",
    bounds="from 0 to 1e15",
)

RACK_SLOWDOWN: SimOption[float] = SimOption(
    "--rack-slowdown",
    "number",
    1.2,
    "How many times longer a map runs reading its block from another machine of its rack",
    field="rack_slowdown",
    sweepable=True,
    bounds="> 0, at most 1e6",
)

OFF_RACK_SLOWDOWN: SimOption[float] = SimOption(
    "--off-rack-slowdown",
    "number",
    1.5,
    "How many times longer a map runs reading its block from another rack",
    field="off_rack_slowdown",
    sweepable=True,
    bounds="> 0, at most 1e6",
)

POOL_ORDER: SimOption[Literal["fair", "fifo"]] = SimOption(
    "--pool-order",
    "choice",
    "fair",
    "Order of jobs inside a user or pool: fair or fifo",
    field="pool_order",
    sweepable=True,
    choices=("fair", "fifo"),
)

COPY_COMPUTE_SPLITTING: SimOption[bool] = SimOption(
    "--copy-compute-splitting",
    "flag",
    False,
    # The limits are fairshare.policies.copy_compute's DEFAULT_MAX_REDUCERS and
    # DEFAULT_MAX_COMPUTING, written out: importing that package here would load the
    # policies when the command line starts (tests/test_option_table.py compares them).
    "Copy-compute splitting (FAIR section 5.2): reducers copy from the job's first finished "
    "map without holding resources; each machine admits 6 reducers, 2 computing",
    field="copy_compute_splitting",
    sweepable=True,
)

HEADROOM: SimOption[bool] = SimOption(
    "--headroom",
    "flag",
    False,
    "Headroom (H-DRF section 5): each machine keeps room for the largest task waiting for it, "
    "which smaller tasks leave free on the resources they take",
    field="headroom",
    sweepable=True,
)

REDUCE_SLOWSTART: SimOption[None] = SimOption(
    "--reduce-slowstart",
    "number",
    None,
    "Reducer slow-start (FAIR section 5.1): launch a job's reducers once this fraction of its "
    f"maps finished (default {SLOWSTART_ALONE:g}, or {SLOWSTART_SPLIT:g} with "
    "--copy-compute-splitting); a job's reduce.slowstart overrides it",
    field="reduce_slowstart",
    sweepable=True,
    metavar="F",
    unset=f"{SLOWSTART_ALONE:g}, or {SLOWSTART_SPLIT:g} with `--copy-compute-splitting`",
    bounds="from 0 to 1",
    details="not with the reference schedulers",
)

LOAD_SCALE: SimOption[float] = SimOption(
    "--load-scale",
    "number",
    1.0,
    "Replay at X times the arrival rate: submit times divided by X",
    field="load_scale",
    sweepable=True,
    metavar="X",
    bounds="from 1e-6 to 1e6",
    details="closed-loop think times are divided too",
)

TIME_SCALE: SimOption[float] = SimOption(
    "--time-scale",
    "number",
    1.0,
    "Multiply every task duration (and reduce copy and compute time) by Y",
    field="time_scale",
    sweepable=True,
    metavar="Y",
    bounds="from 1e-6 to 1e6",
    details="event times are not scaled",
)

SLOTS: SimOption[None] = SimOption(
    "--slots",
    "whole",
    None,
    "Slots per machine of the slot scheduler (--policy slots; default: one per CPU)",
    field="slots",
    sweepable=True,
    metavar="N",
    unset="one per CPU",
    bounds="from 1 to 1000000",
    details="a task takes one slot whatever its demand",
)

THRASH_FACTOR: SimOption[float] = SimOption(
    "--thrash-factor",
    "number",
    2.0,
    "How many times slower tasks run on a machine whose memory is over-committed (--policy slots)",
    field="thrash_factor",
    sweepable=True,
    bounds=">= 1, at most 1e6",
    details="[the over-commit model](policies/comparators.md#over-commit)",
)

MAX_CAPACITY: SimOption[float] = SimOption(
    "--max-capacity",
    "number",
    1.0,
    "The Capacity Scheduler's maximum capacity of a queue, as a fraction of its parent's "
    "(--policy capacity)",
    field="max_capacity",
    sweepable=True,
    bounds="in (0, 1]",
)

BACKFILL: SimOption[None] = SimOption(
    "--backfill",
    "choice",
    None,
    "Backfilling for gangs: easy (EASY: the first waiting gang gets a reservation; later jobs "
    "start now only if they do not delay it)",
    field="backfill",
    sweepable=True,
    metavar="easy",
    choices=("easy",),
    unset="off",
    details="EASY is Lifka 1995's (Mu'alem and Feitelson 2001): the reservation is at the "
    "earliest time "
    "the gang's tasks fit by the running tasks' expected ends (a job's `estimate`, SWF's "
    "requested time, else its duration as given) ([gangs](policies/gangs.md)); not with "
    "`--copy-compute-splitting`",
)

USAGE_HALF_LIFE: SimOption[None] = SimOption(
    "--usage-half-life",
    "number",
    None,
    "Fairness over time: a user's standing adds its past usage, decayed with this "
    "half-life in seconds, to what it holds now; overrides the scenario's "
    "usage_half_life (docs: usage-over-time.md)",
    field="usage_half_life",
    sweepable=True,
    metavar="SECONDS",
    unset="the scenario's `usage_half_life`, else off",
    bounds="> 0, at most 1e15",
    details="[usage over time](usage-over-time.md)",
)

OPTIONS: tuple[SimOption[Any], ...] = (
    SEED,
    TRACE,
    DELAY_SCHEDULING,
    PREEMPTION,
    UNTIL,
    RACK_SLOWDOWN,
    OFF_RACK_SLOWDOWN,
    POOL_ORDER,
    COPY_COMPUTE_SPLITTING,
    HEADROOM,
    REDUCE_SLOWSTART,
    LOAD_SCALE,
    TIME_SCALE,
    SLOTS,
    THRASH_FACTOR,
    MAX_CAPACITY,
    BACKFILL,
    USAGE_HALF_LIFE,
)
"""Every simulation option, in the order ``--help`` and the docs list them."""

BY_NAME: Mapping[str, SimOption[Any]] = {option.name: option for option in OPTIONS}
"""The options by name (the flag without ``--``)."""

BY_FIELD: Mapping[str, SimOption[Any]] = {
    option.field: option for option in OPTIONS if option.field is not None
}
"""The options that set a :class:`~fairshare.sim.options.SimOptions` field, by field."""

NOT_OPTIONS: Mapping[str, str] = {
    "job_delays": "each job's own delay-scheduling waits, from the scenario's jobs",
    "max_reducers": "copy-compute splitting's reducers per machine, set through the Python API",
    "max_computing": "copy-compute splitting's computing reducers per machine, set through "
    "the Python API",
}
"""The :class:`~fairshare.sim.options.SimOptions` fields no option sets, and where they come
from instead."""
