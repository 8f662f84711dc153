"""What ``simulate`` and ``compare`` share: their options, the run settings built from them
(the text parsed here, every value checked by :class:`~fairshare.sim.options.SimOptions`
before anything runs), the runs themselves with a progress bar, the
warnings about jobs that can never run, and ``--out``."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, cast

import typer
from rich.console import Console

from fairshare.cli.app import InputError, flag, flags_in
from fairshare.workload.loader import load_scenario
from fairshare.workload.model import Job, Scenario
from fairshare.workload.trace_formats import listed as listed_trace_formats

# Imported by the commands that use them, so that `fairshare solve` does not load them.
if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from fairshare.report.outdir import OutputDir
    from fairshare.runlog import RunLog
    from fairshare.sim.engine import SimOptions
    from fairshare.workload.generators import Workload


DEFAULT_SEED = 0
"""The seed of ``simulate`` and ``compare`` when ``--seed`` is not given."""


RUN_FILES = ("summary.json", "jobs.csv", "timeline.csv", "tasks.parquet", "report.html")


COMPARE_FILES = ("compare.json", "compare.csv", "compare.html")


_SIM_HELP = {
    "seed": f"Seed of durations, input blocks and generated jobs (default {DEFAULT_SEED})",
    "trace": f"Replay a trace instead of the scenario's jobs: {listed_trace_formats()}, e.g. "
    "swim:FB-2009.tsv",
    "delay": "Delay scheduling (FAIR Algorithm 1): wait T1 s for a node-local slot, T2 s more "
    "for a rack-local one",
    "preemption": "Preemption (FAIR section 3.2): kill newest tasks of over-share jobs after "
    "TMIN s below min share or TFAIR s below half the fair share",
    "until": "Stop the simulation at this time (seconds); unfinished jobs are reported as such",
    "rack": "How many times longer a map runs reading its block from another machine of its rack",
    "off_rack": "How many times longer a map runs reading its block from another rack",
    "pool_order": "Order of jobs inside a user or pool: fair or fifo",
    "copy_compute": "Copy-compute splitting (FAIR section 5.2): reducers copy from the job's "
    "first finished map without holding resources; each machine admits 6 reducers, 2 computing",
    "headroom": "Headroom (H-DRF section 5): each machine keeps room for the largest task "
    "waiting for it, which smaller tasks leave free on the resources they take",
    "slowstart": "Reducer slow-start (FAIR section 5.1): launch a job's reducers once this "
    "fraction of its maps finished (default 1, or 0 with --copy-compute-splitting); a job's "
    "reduce.slowstart overrides it",
    "load_scale": "Replay at X times the arrival rate: submit times divided by X",
    "time_scale": "Multiply every task duration (and reduce copy and compute time) by Y",
    "slots": "Slots per machine of the slot scheduler (--policy slots; default: one per CPU)",
    "thrash": "How many times slower tasks run on a machine whose memory is over-committed "
    "(--policy slots)",
    "max_capacity": "The Capacity Scheduler's maximum capacity of a queue, as a fraction of its "
    "parent's (--policy capacity)",
    "backfill": "Backfilling for gangs: easy (EASY: the first waiting gang gets a reservation; "
    "later jobs start now only if they do not delay it)",
}


SeedOption = Annotated[int, typer.Option("--seed", min=0, help=_SIM_HELP["seed"])]


TraceOption = Annotated[
    str | None, typer.Option("--trace", metavar="FORMAT:PATH", help=_SIM_HELP["trace"])
]


DelayOption = Annotated[
    str | None,
    typer.Option("--delay-scheduling", metavar="T1,T2", help=_SIM_HELP["delay"]),
]


PreemptionOption = Annotated[
    str | None,
    typer.Option("--preemption", metavar="TMIN,TFAIR", help=_SIM_HELP["preemption"]),
]


UntilOption = Annotated[
    float | None, typer.Option("--until", metavar="SECONDS", help=_SIM_HELP["until"])
]


RackOption = Annotated[float, typer.Option("--rack-slowdown", help=_SIM_HELP["rack"])]


OffRackOption = Annotated[float, typer.Option("--off-rack-slowdown", help=_SIM_HELP["off_rack"])]


PoolOrderOption = Annotated[str, typer.Option("--pool-order", help=_SIM_HELP["pool_order"])]


CopyComputeOption = Annotated[
    bool, typer.Option("--copy-compute-splitting", help=_SIM_HELP["copy_compute"])
]


HeadroomOption = Annotated[bool, typer.Option("--headroom", help=_SIM_HELP["headroom"])]


SlowstartOption = Annotated[
    float | None,
    typer.Option("--reduce-slowstart", metavar="F", help=_SIM_HELP["slowstart"]),
]


LoadScaleOption = Annotated[
    float, typer.Option("--load-scale", metavar="X", help=_SIM_HELP["load_scale"])
]


TimeScaleOption = Annotated[
    float, typer.Option("--time-scale", metavar="Y", help=_SIM_HELP["time_scale"])
]
SlotsOption = Annotated[int | None, typer.Option("--slots", metavar="N", help=_SIM_HELP["slots"])]


ThrashOption = Annotated[float, typer.Option("--thrash-factor", help=_SIM_HELP["thrash"])]


MaxCapacityOption = Annotated[float, typer.Option("--max-capacity", help=_SIM_HELP["max_capacity"])]


BackfillOption = Annotated[
    str | None, typer.Option("--backfill", metavar="easy", help=_SIM_HELP["backfill"])
]


OutOption = Annotated[
    str, typer.Option("--out", "-o", metavar="DIR", help="Directory to write the results to")
]


ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Write into a non-empty DIR that is not a fairshare output, beside its files "
        "(same-named files are replaced; nothing else is deleted)",
    ),
]


ScenarioArgument = Annotated[
    str, typer.Argument(metavar="SCENARIO", help="YAML or JSON scenario (machines, jobs)")
]


@dataclass(frozen=True)
class RunSettings:
    """What ``simulate`` and ``compare`` share: the scenario, where its jobs come from, the
    seed and the engine options. Built (and every value checked) before anything runs."""

    scenario: Scenario
    trace: tuple[str, Path] | None
    seed: int
    options: SimOptions

    @property
    def source(self) -> str:
        return self.scenario.source


def _pair(text: str | None, option: str, source: str, example: str) -> tuple[float, float] | None:
    """``T1,T2`` as two numbers (their range is :class:`SimOptions`'s to check)."""
    if text is None:
        return None
    from fairshare.sim.options import seconds_pair  # noqa: PLC0415

    values = seconds_pair(text)
    if values is None:
        raise InputError(
            source,
            option,
            f"expected two numbers of seconds separated by a comma, e.g. {example}, got {text!r}",
        )
    return values


def run_settings(
    scenario_path: str | Path,
    *,
    seed: int,
    trace: str | None,
    delay: str | None,
    preemption: str | None,
    until: float | None,
    rack_slowdown: float,
    off_rack_slowdown: float,
    pool_order: str,
    copy_compute_splitting: bool = False,
    headroom: bool = False,
    reduce_slowstart: float | None = None,
    load_scale: float = 1.0,
    time_scale: float = 1.0,
    slots: int | None = None,
    thrash_factor: float = 2.0,
    max_capacity: float = 1.0,
    backfill: str | None = None,
) -> RunSettings:
    from fairshare.sim.options import OptionError, SimOptions  # noqa: PLC0415

    source = str(scenario_path)
    pairs = {"delay": delay, "preemption": preemption}
    try:
        options = SimOptions(
            delay=_pair(delay, "--delay-scheduling", source, "5,10"),
            preemption=_pair(preemption, "--preemption", source, "30,60"),
            # Any text: SimOptions accepts fair or fifo, and names pool_order otherwise.
            pool_order=cast("Literal['fair', 'fifo']", pool_order),
            rack_slowdown=rack_slowdown,
            off_rack_slowdown=off_rack_slowdown,
            until=until,
            copy_compute_splitting=copy_compute_splitting,
            headroom=headroom,
            reduce_slowstart=reduce_slowstart,
            load_scale=load_scale,
            time_scale=time_scale,
            slots=slots,
            thrash_factor=thrash_factor,
            max_capacity=max_capacity,
            # Any text: SimOptions accepts easy, and names backfill otherwise.
            backfill=cast("Literal['easy'] | None", backfill),
        )
    except OptionError as err:
        # A pair is shown as it was typed, not as the numbers read from it; the library names
        # the SimOptions field at fault, the command line its flag.
        text = pairs.get(err.where)
        what = err.what if text is None else f"{err.rule}, got {text!r}"
        raise InputError(source, flag(err.where), flags_in(what)) from None
    parsed_trace = machines_from = None
    if trace is not None:
        # The trace readers are loaded by a run that replays a trace, not by the others.
        from fairshare.workload.traces import (  # noqa: PLC0415
            machines_from_trace,
            parse_trace_argument,
        )

        parsed_trace = parse_trace_argument(trace, "--trace")
        # SPEC section 3: a trace that lists machines gives them unless the scenario has them
        machines_from = machines_from_trace(*parsed_trace, source)
    scenario = load_scenario(scenario_path, machines_from)
    if parsed_trace is None and not scenario.jobs and scenario.workload is None:
        raise InputError(
            source,
            "jobs",
            "nothing to simulate: the scenario has neither 'jobs' nor 'workload'; add one, "
            "or give a trace with --trace FORMAT:PATH",
        )
    return RunSettings(scenario, parsed_trace, seed, options)


def _workload(settings: RunSettings) -> Workload:
    """The jobs of one run, streamed (:func:`fairshare.api.workload_of`)."""
    from fairshare.api import workload_of  # noqa: PLC0415

    return workload_of(settings.scenario, seed=settings.seed, trace=settings.trace)


_WARN_EACH = 5
"""Up to this many jobs that can never run get a warning line each; more get one line."""


def unrunnable_warnings(settings: RunSettings) -> tuple[list[str], frozenset[str]]:
    """The ``warning:`` lines for jobs that can never run on the run's machines (a task larger
    than every machine it may use, or a constraint that matches no machine), found at load
    time, before the run, by :class:`~fairshare.workload.eligibility.TaskFit`: the check
    behind the simulator's slowdown denominator, so the lines and ``summary.json``'s
    ``unrunnable_jobs`` agree. Reading the whole workload here also reports a corrupt trace
    record before anything runs. The lines are printed by :func:`warn`; the names of the
    jobs are returned too, so that the end-of-run warning about stranded jobs leaves them out."""
    from fairshare.api import unrunnable_jobs  # noqa: PLC0415

    until = settings.options.until
    if until is not None:  # the run stops at ``until`` in scaled time
        until *= settings.options.load_scale
    every = unrunnable_jobs(_workload(settings), until)
    count = len(every)
    found = every[:_WARN_EACH]
    source = str(settings.trace[1]) if settings.trace is not None else settings.source
    after = "reported unfinished and counted in summary.json's unrunnable_jobs"
    if count <= _WARN_EACH:
        return [
            f"warning: {source}: job {name!r} can never run: {reason}; it is {after}"
            for name, reason in found
        ], frozenset(name for name, _ in every)
    names = ", ".join(repr(name) for name, _ in found)
    first, reason = found[0]
    return [
        f"warning: {source}: {count} jobs can never run ({names} and {count - len(found)} "
        f"more; {first!r}: {reason}); they are {after}"
    ], frozenset(name for name, _ in every)


def warn(lines: list[str]) -> None:
    """Print ``warning:`` lines on stderr. ``simulate`` and ``compare`` print them once the
    run has been accepted and its files written: a run rejected part-way (a trace record, a
    repeated job name, a reference scheduler's refusal) must leave one ``error:`` line and
    nothing else (SPEC section 4)."""
    console = Console(markup=False, stderr=True, highlight=False, soft_wrap=True)
    for line in lines:
        console.print(line, markup=False)


def validate_policy(name: str, settings: RunSettings, parameter: str = "policy") -> None:
    """:func:`fairshare.api.validate_policy`, its error naming the flag of ``parameter``
    (``--policy``, ``--policies``) or of the option that does not combine with the policy."""
    from fairshare.api import validate_policy as validate  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415

    try:
        validate(name, settings.options, parameter)
    except PolicyError as err:
        raise InputError(settings.source, flag(err.where), flags_in(err.what)) from None


def validate_comparison(names: list[str], reference: str | None, settings: RunSettings) -> None:
    """:func:`fairshare.api.validate_comparison`, its error naming ``--policies`` or
    ``--reference``."""
    from fairshare.api import validate_comparison as validate  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415

    try:
        validate(names, reference)
    except PolicyError as err:
        raise InputError(settings.source, flag(err.where), flags_in(err.what)) from None


class _Progress:
    """A progress bar on stderr for runs longer than a second (none when stderr is not a
    terminal). It counts jobs as the engine submits them, so it follows simulated time."""

    def __init__(self, label: str, total: int | None) -> None:
        self.label = label
        self.total = total
        self.started = time.perf_counter()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.enabled = sys.stderr.isatty()

    def wrap(self, jobs: Iterator[Job]) -> Iterator[Job]:
        for count, job in enumerate(jobs, start=1):
            if self.enabled:
                self._tick(count, job.submit)
            yield job
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=f"{self.label}: finishing running tasks")

    def _tick(self, count: int, submit: float) -> None:
        if self.bar is None:
            if time.perf_counter() - self.started < 1.0:
                return
            # Only a terminal gets a bar: rich.progress is not imported otherwise.
            from rich.progress import (  # noqa: PLC0415
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("jobs, simulated {task.fields[clock]}"),
                TimeElapsedColumn(),
                console=Console(markup=False, stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total, clock="0 s")
        assert self.task is not None
        self.bar.update(self.task, completed=count, clock=f"{submit:,.0f} s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def run_policy(settings: RunSettings, policy_name: str) -> RunLog:
    """Simulate one policy (:func:`fairshare.api.replay`) with a progress bar; input
    problems become :class:`InputError` (exit 2)."""
    from fairshare.api import replay  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415

    scenario = settings.scenario
    workload = _workload(settings)
    counted = settings.trace is None and bool(scenario.jobs)
    progress = _Progress(policy_name, len(scenario.jobs) if counted else None)
    try:
        run = replay(
            scenario,
            workload,
            policy_name,
            seed=settings.seed,
            options=settings.options,
            jobs=progress.wrap(workload.jobs),
        )
    except PolicyError as err:  # includes SimulationError
        raise InputError(settings.source, flag(err.where), flags_in(err.what)) from None
    finally:
        progress.close()
    return run.log


def warn_stranded(source: str, log: RunLog, unrunnable: frozenset[str]) -> None:
    """One ``warning:`` line on stderr for the jobs a run left waiting when no event was
    left (:attr:`RunLog.stranded`): none of the machines they may use will ever take their
    tasks. Jobs that can never run on any machine are left out: the load-time warning
    already named them. Printed after the results are written, so that a failure to write
    them is the only line."""
    jobs, policy = [j for j in log.stranded if j not in unrunnable], log.policy
    if not jobs:
        return
    shown = ", ".join(repr(name[:40]) for name in jobs[:3])
    more = f" and {len(jobs) - 3} more" if len(jobs) > 3 else ""
    Console(markup=False, stderr=True, highlight=False, soft_wrap=True).print(
        f"warning: {source}: {policy}: {len(jobs)} job{'s' if len(jobs) != 1 else ''} never "
        f"finished ({shown}{more}): the run ended with tasks waiting that no machine they "
        "may use had room for",
        markup=False,
    )


@contextmanager
def output_dir(out: str, command: str, files: list[str], force: bool) -> Iterator[OutputDir]:
    """``--out DIR``, checked before the run and staged during it (``report/outdir.py``);
    its problems are input errors (exit 2), environment ones (a full disk) included."""
    from fairshare.report.outdir import OutDirError, OutputDir, Terminated  # noqa: PLC0415

    try:
        with OutputDir(out, command=command, files=files, force=force) as target:
            yield target
    except OutDirError as err:
        raise InputError(err.file, "--out", err.what) from None
    except (KeyboardInterrupt, Terminated) as err:
        # The staging directory is gone by now. Exit 128 + the signal's number, as a shell
        # reports a process the signal ended (typer would turn SIGINT into a silent 130).
        signum = err.signum if isinstance(err, Terminated) else signal.SIGINT
        sys.stderr.write(f"error: interrupted by {signal.Signals(signum).name}\n")
        raise SystemExit(128 + signum) from None
