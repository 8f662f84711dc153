"""What ``simulate`` and ``compare`` share: their options (the simulation options made from
the one table of them, :data:`fairshare.sim.option_table.OPTIONS`, by
:func:`simulation_options`), the run settings built from them (the text parsed here, every
value checked by :class:`~fairshare.sim.options.SimOptions` before anything runs), the runs
themselves with a progress bar, the warnings about jobs that can never run, and ``--out``."""

from __future__ import annotations

import functools
import inspect
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from fairshare.cli.app import InputError, flag, flags_in
from fairshare.sim.option_table import BY_FIELD, BY_NAME, OPTIONS, SEED, TRACE, SimOption
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


RUN_FILES = ("summary.json", "jobs.csv", "timeline.csv", "tasks.parquet", "report.html")


COMPARE_FILES = ("compare.json", "compare.csv", "compare.html")


INPUT_FILES = ("run.json", "scenario.json")
"""What ``simulate`` records of its inputs beside its results, so that ``fairshare explain``
can run them again (:func:`write_run_inputs`)."""

RUN_INPUTS_FORMAT = 1
"""The version of ``run.json``'s layout."""


def write_run_inputs(
    settings: RunSettings,
    policy: str,
    values: Mapping[str, Any],
    directory: Path,
    jobs_from: str | None = None,
) -> None:
    """Record what a run needs to be run again, in ``directory``: ``scenario.json`` (the
    scenario file as read, as JSON, so the run does not depend on the file staying as it
    was) and ``run.json``: the policy, the seed, the simulation options by their parameter
    names (as the command received them) and the trace, referenced by format, absolute path,
    size and modification time (a trace can be gigabytes: it is not copied). No clock is
    read: the same run writes the same bytes.

    Parameters
    ----------
    settings : RunSettings
        The run's settings.
    policy : str
        The policy's name.
    values : mapping
        Each simulation option's value by its parameter name.
    directory : Path
        Where to write (the output directory's staging directory).
    jobs_from : str, optional
        A scenario file whose ``jobs`` and ``workload`` the run replayed instead of its own
        (``whatif``'s AFTER replays BEFORE's jobs): they are written into ``scenario.json``.
    """
    import json  # noqa: PLC0415

    from fairshare.workload.loader import read_scenario_file  # noqa: PLC0415

    document = {} if settings.from_trace_only else read_scenario_file(settings.source)
    if jobs_from is not None and isinstance(document, dict):
        replayed = read_scenario_file(jobs_from)
        for key in ("jobs", "workload"):
            document.pop(key, None)
            if isinstance(replayed, dict) and key in replayed:
                document[key] = replayed[key]
    (directory / "scenario.json").write_text(
        json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    trace: dict[str, object] | None = None
    if settings.trace is not None:
        fmt, path = settings.trace
        stat = path.stat()
        trace = {
            "format": fmt,
            "path": str(path.resolve()),
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
        }
    options = {
        option.parameter: values[option.parameter]
        for option in OPTIONS
        if option is not TRACE and option.parameter in values
    }
    run = {
        "format": RUN_INPUTS_FORMAT,
        "policy": policy,
        "seed": settings.seed,
        "scenario": "scenario.json",
        "trace": trace,
        "options": options,
    }
    (directory / "run.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")


def trace_help() -> str:
    """``--trace``'s help: the formats registered now (a test compares it with the table's).

    Returns
    -------
    str
    """
    return (
        f"Replay a trace instead of the scenario's jobs: {listed_trace_formats()}, e.g. "
        "swim:FB-2009.tsv"
    )


@functools.cache
def _parameter(option: SimOption[Any]) -> inspect.Parameter:
    """One row of :data:`fairshare.sim.option_table.OPTIONS` as a command's parameter: its
    value's plain type (``cli.coercion`` converts those without pydantic) and its typer
    option, made once (the commands share it: typer copies what it changes)."""
    # The trace formats are those registered (fairshare.workload.trace_formats).
    text = trace_help() if option is TRACE else option.help
    info = typer.Option(option.flag, metavar=option.metavar, min=option.minimum, help=text)
    return inspect.Parameter(
        option.parameter,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=option.default,
        annotation=Annotated[option.value_type(), info],
    )


Command = Callable[..., None]
"""A command function, as typer registers it."""


class _WithOptions:
    """A command function whose signature, as typer reads it, has simulation options.

    typer makes a command's options from ``inspect.signature`` of its function, with the
    annotations evaluated. The signature is made when typer first asks for it: the command
    line builds only the invoked command (:func:`fairshare.cli.app.command_tree`), so the
    others never evaluate their annotations (``from __future__ import annotations`` leaves
    them as text)."""

    def __init__(self, command: Command, options: tuple[SimOption[Any], ...], before: str | None):
        functools.update_wrapper(
            self, command, assigned=("__module__", "__name__", "__qualname__", "__doc__")
        )
        self._command = command
        self._options = options
        self._before = before

    def __call__(self, **values: Any) -> None:
        self._command(**values)

    @functools.cached_property
    def __signature__(self) -> inspect.Signature:
        own = [
            parameter
            for parameter in inspect.signature(self._command, eval_str=True).parameters.values()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        names = [parameter.name for parameter in own]
        at = len(own) if self._before is None else names.index(self._before)
        added = [_parameter(option) for option in self._options]
        return inspect.Signature([*own[:at], *added, *own[at:]], return_annotation=None)

    def __getattr__(self, name: str) -> Any:
        # typing.get_type_hints (typer calls it) reads __annotations__: the signature's.
        if name == "__annotations__":
            parameters = self.__signature__.parameters.values()
            return {parameter.name: parameter.annotation for parameter in parameters}
        raise AttributeError(name)


def simulation_options(
    *options: SimOption[Any], before: str | None = None
) -> Callable[[Command], Command]:
    """Give a command simulation options of :data:`fairshare.sim.option_table.OPTIONS`.

    typer makes a command's options from its function's signature. The decorated function
    declares its own parameters and ``**options``; the command typer sees has its own
    parameters with the table's inserted before the one named ``before`` (after the last
    without it), so ``--help`` lists them there, and the function receives their values in
    ``options``, by :attr:`~fairshare.sim.option_table.SimOption.parameter`
    (:func:`run_settings` reads them).

    Parameters
    ----------
    *options : SimOption
        The options to add, in the table's order (none: every one, as ``simulate`` and
        ``compare`` take them).
    before : str or None
        The parameter of the function the options go before (``force``).

    Returns
    -------
    callable
        The decorator.
    """

    def wrap(command: Command) -> Command:
        wrapped = _WithOptions(command, options or OPTIONS, before)
        _WITH_OPTIONS.append(wrapped)
        return wrapped

    return wrap


_WITH_OPTIONS: list[_WithOptions] = []
"""Every command :func:`simulation_options` made (:func:`refresh_trace_help` remakes them)."""


def refresh_trace_help() -> None:
    """Make the commands' options afresh on their next use: a trace format was registered or
    removed at run time (:data:`fairshare.workload.trace_formats.TRACE_FORMATS`), and
    ``--trace``'s help lists the formats registered when the options were made."""
    _parameter.cache_clear()
    for wrapped in _WITH_OPTIONS:
        vars(wrapped).pop("__signature__", None)


OutOption = Annotated[
    str, typer.Option("--out", "-o", metavar="DIR", help="Directory to write the results to")
]


QuietOption = Annotated[bool, typer.Option("--quiet", help="Show no progress bar on stderr.")]
ProgressOption = Annotated[
    bool,
    typer.Option(
        "--progress",
        help="Show the progress bar on stderr even when it is not a terminal (runs longer "
        "than 2 s; by default only a terminal gets one).",
    ),
]


def progress_shown(quiet: bool, progress: bool) -> bool | None:
    """``run_policy``'s ``show`` from ``--quiet`` and ``--progress`` (``--quiet`` wins)."""
    return False if quiet else (True if progress else None)


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


OptionalScenarioArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="SCENARIO",
        help="YAML or JSON scenario (machines, users, jobs); optional with a --trace that "
        "lists its machines (alibaba-gpu:PODS beside its node list)",
        show_default=False,
    ),
]
"""``simulate`` and ``compare``'s scenario, which a trace with its own machines replaces."""


@dataclass(frozen=True)
class RunSettings:
    """What ``simulate`` and ``compare`` share: the scenario, where its jobs come from, the
    seed and the engine options. Built (and every value checked) before anything runs."""

    scenario: Scenario
    trace: tuple[str, Path] | None
    seed: int
    options: SimOptions
    from_trace_only: bool = False
    """No scenario file was given: the trace gave the machines (and the users)."""

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


def run_settings(scenario_path: str | Path | None, values: Mapping[str, Any]) -> RunSettings:
    """The settings of a run from the values of the simulation options, every value checked
    before anything runs (SPEC section 4: a bad one is an ``error:`` line naming its option).

    Parameters
    ----------
    scenario_path : str or Path or None
        The scenario; None when ``--trace`` gives the machines (an empty scenario, named
        after the trace).
    values : mapping
        Each option of :data:`fairshare.sim.option_table.OPTIONS` by its parameter name
        (``rack_slowdown``), as the command received it.

    Returns
    -------
    RunSettings

    Raises
    ------
    InputError
        A value out of its range, a pair that is not two numbers, or a scenario with nothing
        to simulate.
    """
    from fairshare.sim.options import OptionError, SimOptions  # noqa: PLC0415

    if scenario_path is None and values[TRACE.parameter] is None:
        raise InputError(
            "command line",
            "SCENARIO",
            "give a scenario file, or a trace that lists its machines "
            "(--trace alibaba-gpu:PODS, its node list beside it)",
        )
    source = "command line" if scenario_path is None else str(scenario_path)
    fields: dict[str, Any] = {}
    for option in OPTIONS:
        if option.field is not None:
            value = values[option.parameter]
            if option.kind == "pair":
                value = _pair(value, option.flag, source, option.example)
            # Any text of a choice: SimOptions names the values it takes, and the option.
            fields[option.field] = value
    try:
        options = SimOptions(**fields)
    except OptionError as err:
        # The option named by its field or by its flag, shown as the command line spells it.
        named = BY_FIELD.get(err.where) or BY_NAME.get(err.where.removeprefix("--"))
        spelt = flag(err.where) if named is None else named.flag
        # A pair is shown as it was typed, not as the numbers read from it.
        what = err.what
        if named is not None and named.kind == "pair":
            what = f"{err.rule}, got {values[named.parameter]!r}"
        raise InputError(source, spelt, flags_in(what)) from None
    seed: int = values[SEED.parameter]
    trace: str | None = values[TRACE.parameter]
    parsed_trace = machines_from = None
    if trace is not None:
        # The trace readers are loaded by a run that replays a trace, not by the others.
        from fairshare.workload.traces import (  # noqa: PLC0415
            machines_from_trace,
            parse_trace_argument,
        )

        parsed_trace = parse_trace_argument(trace, "--trace")
        if scenario_path is None:  # the trace is the scenario: its errors name it
            source = str(parsed_trace[1])
        # SPEC section 3: a trace that lists machines gives them unless the scenario has them
        machines_from = machines_from_trace(*parsed_trace, source)
    if scenario_path is None:
        from fairshare.workload.loader import parse_scenario  # noqa: PLC0415

        scenario = parse_scenario({}, source, machines_from)
    else:
        scenario = load_scenario(scenario_path, machines_from)
    if parsed_trace is None and not scenario.jobs and scenario.workload is None:
        raise InputError(
            source,
            "jobs",
            "nothing to simulate: the scenario has neither 'jobs' nor 'workload'; add one, "
            "or give a trace with --trace FORMAT:PATH",
        )
    return RunSettings(scenario, parsed_trace, seed, options, from_trace_only=scenario_path is None)


def _workload(settings: RunSettings) -> Workload:
    """The jobs of one run, streamed (:func:`fairshare.api.workload_of`)."""
    from fairshare.api import workload_of  # noqa: PLC0415

    return workload_of(settings.scenario, seed=settings.seed, trace=settings.trace)


_WARN_EACH = 5
"""Up to this many jobs that can never run get a warning line each; more get one line."""


class LoadCheck:
    """The load-time warnings of a run, found while its (first) run reads the jobs: jobs
    that can never run on the run's machines (a task larger than every machine it may use,
    or a constraint that matches no machine, :func:`fairshare.api.screen_unrunnable`: the
    check behind the simulator's slowdown denominator, so the lines and ``summary.json``'s
    ``unrunnable_jobs`` agree), the trace's skipped records, and a run that simulates
    nothing. The trace is read once: a corrupt record ends the run with its ``error:`` line
    where the run reaches it, and nothing is written, since the outputs are staged. The
    lines are printed by :func:`warn` after the run (:meth:`lines`); the names of the jobs
    that can never run (:meth:`names`) are left out of the end-of-run warning about
    stranded jobs."""

    def __init__(self, settings: RunSettings) -> None:
        self.settings = settings
        self.found: list[tuple[str, str]] = []
        self.first: Job | None = None
        self.workload: Workload | None = None

    def jobs(self, workload: Workload) -> Iterator[Job]:
        """``workload``'s jobs, checked as the run reads them."""
        from fairshare.api import screen_unrunnable  # noqa: PLC0415

        until = self.settings.options.until
        if until is not None:  # the run stops at ``until`` in scaled time
            until *= self.settings.options.load_scale
        self.workload = workload
        # The first job is noted as the run reads it, not read ahead: a reader that sorts
        # its table before its first job (alibaba-2017) does so on the run's clock.
        for job in screen_unrunnable(workload, self.found, until):
            if self.first is None:
                self.first = job
            yield job

    def lines(self) -> list[str]:
        """The ``warning:`` lines, the trace's skipped records first (known once it is
        read)."""
        skipped = self.workload.warnings if self.workload is not None else ()
        return [
            *skipped,
            *unrunnable_lines(self.found, self.settings),
            *_empty_run(self.settings, self.first),
        ]

    def names(self) -> frozenset[str]:
        """The names of the jobs that can never run."""
        return frozenset(name for name, _ in self.found)


def _empty_run(settings: RunSettings, first: Job | None) -> list[str]:
    """A ``warning:`` line when the run will simulate nothing: no jobs at all, or ``--until``
    ends before the first job arrives (``first``, the workload's first job, or None), which
    would otherwise end quietly with "jobs finished 0 of 0"."""
    source = str(settings.trace[1]) if settings.trace is not None else settings.source
    if first is None:
        where = "the trace" if settings.trace is not None else "the scenario's jobs and workload"
        return [f"warning: {source}: no jobs to simulate ({where} gave none)"]
    until, scale = settings.options.until, settings.options.load_scale
    if until is None or first.submit <= until * scale:
        return []
    return [
        f"warning: {source}: --until {until:,.6g} s ends before the first job arrives (at "
        f"{first.submit / scale:,.6g} s): no job was simulated"
    ]


def unrunnable_lines(every: list[tuple[str, str]], settings: RunSettings) -> list[str]:
    """The ``warning:`` lines of :class:`LoadCheck` for the jobs found (name and
    reason each, :func:`fairshare.api.unrunnable_jobs`)."""
    count = len(every)
    found = every[:_WARN_EACH]
    source = str(settings.trace[1]) if settings.trace is not None else settings.source
    after = "reported unfinished and counted in summary.json's unrunnable_jobs"
    if count <= _WARN_EACH:
        return [
            f"warning: {source}: job {name!r} can never run: {reason}; it is {after}"
            for name, reason in found
        ]
    names = ", ".join(repr(name) for name, _ in found)
    first, reason = found[0]
    return [
        f"warning: {source}: {count} jobs can never run ({names} and {count - len(found)} "
        f"more; {first!r}: {reason}); they are {after}"
    ]


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
    """A progress bar on stderr for runs longer than :data:`PROGRESS_AFTER` seconds: the
    simulated time against the horizon (``--until``, else the last submission when the jobs
    are known), the time left at the rate so far, the tasks launched and their rate.

    Shown when stderr is a terminal, or when ``--progress`` asks; never with ``--quiet``.
    It is drawn from the engine's ``progress`` calls and the jobs it reads, on stderr only:
    the output files do not change.
    """

    def __init__(
        self, label: str, horizon: float | None, show: bool | None, *, by_jobs: bool = False
    ) -> None:
        self.label = label
        self.horizon = horizon
        self.started = time.perf_counter()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.enabled = sys.stderr.isatty() if show is None else show
        self.unit = "jobs" if by_jobs else "tasks"

    def wrap(self, jobs: Iterator[Job]) -> Iterator[Job]:
        """The jobs, counted as the engine reads them when the bar counts jobs (runs whose
        engine calls are not at hand: ``whatif``'s cells)."""
        if not self.enabled or self.unit != "jobs":
            yield from jobs
            return
        for count, job in enumerate(jobs, start=1):
            self.tick(job.submit, count)
            yield job

    def tick(self, now: float, done: int) -> None:
        """Simulated time ``now``, ``done`` tasks launched (or jobs read)."""
        if not self.enabled:
            return
        wall = time.perf_counter() - self.started
        if self.bar is None:
            if wall < PROGRESS_AFTER:
                return
            # Only a shown bar imports rich.progress.
            from rich.progress import (  # noqa: PLC0415
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("simulated {task.fields[clock]}"),
                TextColumn(f"{{task.fields[done]}} {self.unit} ({{task.fields[rate]}}/s)"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(markup=False, stderr=True, force_terminal=self.enabled),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(
                self.label, total=self.horizon, clock="0 s", done="0", rate="0"
            )
        assert self.task is not None
        horizon = self.horizon
        clock = f"{now:,.0f} s" if horizon is None else f"{now:,.0f} / {horizon:,.0f} s"
        self.bar.update(
            self.task,
            completed=min(now, horizon) if horizon is not None else now,
            clock=clock,
            done=f"{done:,}",
            rate=f"{done / wall:,.0f}",
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


PROGRESS_AFTER = 2.0
"""Seconds of wall time before a run shows its progress bar (shorter runs show none)."""


def run_policy(
    settings: RunSettings,
    policy_name: str,
    show: bool | None = None,
    check: LoadCheck | None = None,
) -> RunLog:
    """Simulate one policy (:func:`fairshare.api.replay`) with a progress bar (``show``:
    None for a bar only on a terminal, False never, True always), its jobs read through
    ``check`` when given (:class:`LoadCheck`); input problems become :class:`InputError`
    (exit 2)."""
    from fairshare.api import replay  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415

    scenario = settings.scenario
    workload = _workload(settings)
    jobs = check.jobs(workload) if check is not None else workload.jobs
    horizon = settings.options.until
    scaled = settings.options.load_scale != 1.0 or settings.options.time_scale != 1.0
    if horizon is None and settings.trace is None and scenario.jobs and not scaled:
        horizon = max(job.submit for job in scenario.jobs) or None
    progress = _Progress(policy_name, horizon, show)
    try:
        run = replay(
            scenario,
            workload,
            policy_name,
            seed=settings.seed,
            options=settings.options,
            jobs=progress.wrap(jobs),
            progress=progress.tick if progress.enabled else None,
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
