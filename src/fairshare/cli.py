"""The ``fairshare`` command line (SPEC sections 2-5).

Input errors never show a traceback: they print one line ``error: FILE: WHERE: WHAT`` on stderr
and exit with code 2 (SPEC section 4). Exit code 1 is reserved for bugs in fairshare.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import numpy as np
import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from fairshare.allocation import Allocation
from fairshare.solvers import SOLVER_POLICIES, InvalidRequest, SolverFailure, UnknownPolicy, solve
from fairshare.workload.loader import ScenarioError, load_scenario
from fairshare.workload.model import MAX_SECONDS, Job, Scenario

# The simulator, its reports (matplotlib, polars) and the fairness search are imported by the
# commands that use them: `fairshare solve` starts in a third of the time without them.
if TYPE_CHECKING:
    from fairshare.fairness import CheckResult
    from fairshare.policies import Policy
    from fairshare.sim.engine import SimOptions
    from fairshare.sim.records import RunLog
    from fairshare.workload.generators import Workload

app = typer.Typer(
    name="fairshare",
    help="Fair multi-resource cluster scheduling: exact fair shares, online schedulers, "
    "simulation and fairness checks.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


class InputError(Exception):
    """Wrong input detected by the command layer: reported as ``error: FILE: WHERE: WHAT``."""

    def __init__(self, file: str, where: str, what: str) -> None:
        super().__init__(f"error: {file}: {where}: {what}")


def _round(value: float, digits: int = 6) -> float:
    rounded = round(float(value), digits)
    return 0.0 if rounded == 0 else rounded


def allocation_document(scenario: Scenario, allocation: Allocation) -> dict[str, object]:
    """The JSON document of SPEC section 2 for ``allocation``."""
    users: dict[str, object] = {}
    placed: list[dict[str, float]] = [{} for _ in scenario.users]
    if allocation.placement is not None:
        p = allocation.placement
        names = scenario.cluster.machine_names
        for user, machine, tasks in sorted(
            zip(p.users.tolist(), p.machines.tolist(), p.tasks, strict=True)
        ):
            if _round(tasks) != 0:
                placed[user][names[machine]] = _round(tasks)
    for i, user in enumerate(scenario.users):
        entry: dict[str, object] = {
            "tasks": _round(allocation.tasks[i]),
            "share": _round(allocation.shares[i]),
        }
        if allocation.placement is not None:
            entry["placement"] = placed[i]
        users[user.name] = entry
    allocated = allocation.tasks @ scenario.demands
    resources = {
        name: {
            "capacity": _round(scenario.cluster.total[r]),
            "allocated": _round(allocated[r]),
        }
        for r, name in enumerate(scenario.cluster.resources)
    }
    return {
        "policy": allocation.policy,
        "integral": allocation.integral,
        "users": users,
        "resources": resources,
        "warnings": list(allocation.warnings),
    }


def _print_table(scenario: Scenario, allocation: Allocation, console: Console) -> None:
    kind = "integral" if allocation.integral else "divisible"
    entry = SOLVER_POLICIES[allocation.policy]
    table = Table(title=f"{allocation.policy} ({kind}) — {entry.summary}", title_justify="left")
    table.add_column("user")
    table.add_column("queue")
    table.add_column("weight", justify="right")
    table.add_column("tasks", justify="right")
    table.add_column("share", justify="right")
    if allocation.placement is not None:
        table.add_column("machines", justify="right")
    machines_used = (
        np.bincount(allocation.placement.users, minlength=len(scenario.users))
        if allocation.placement is not None
        else None
    )
    for i, user in enumerate(scenario.users):
        row = [
            user.name,
            user.queue or "/",
            f"{user.weight:g}",
            f"{allocation.tasks[i]:.4f}".rstrip("0").rstrip("."),
            f"{allocation.shares[i]:.4f}",
        ]
        if machines_used is not None:
            row.append(str(int(machines_used[i])))
        table.add_row(*row)
    console.print(table)
    resources = Table(title="resources", title_justify="left")
    for column in ("resource", "capacity", "allocated", "utilisation"):
        resources.add_column(column, justify="left" if column == "resource" else "right")
    allocated = allocation.tasks @ scenario.demands
    for r, name in enumerate(scenario.cluster.resources):
        total = scenario.cluster.total[r]
        used = f"{100 * allocated[r] / total:.1f}%" if total > 0 else "-"
        resources.add_row(name, f"{total:g}", f"{allocated[r]:.4f}".rstrip("0").rstrip("."), used)
    console.print(resources)


@app.command("solve")
def solve_command(
    scenario_path: Annotated[
        Path, typer.Argument(metavar="SCENARIO", help="YAML or JSON scenario")
    ],
    policy: Annotated[
        str, typer.Option("--policy", "-p", help="Solver policy (see `fairshare policies`)")
    ],
    integral: Annotated[
        bool, typer.Option("--integral", help="Whole tasks, maximal allocation")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the SPEC section 2 JSON document")
    ] = False,
) -> None:
    """Compute the fair allocation of the scenario's users under a policy (offline, exact)."""
    source = str(scenario_path)
    if policy not in SOLVER_POLICIES:
        raise InputError(
            source, "--policy", f"unknown policy {policy!r}; allowed: " + ", ".join(SOLVER_POLICIES)
        )
    scenario = load_scenario(scenario_path)
    if not scenario.users:
        raise InputError(source, "users", "solve needs at least one user; this scenario has none")
    try:
        allocation = solve(scenario, policy, integral=integral)
    except InvalidRequest as err:
        raise InputError(source, err.where, err.what) from None
    except SolverFailure as err:
        raise InputError(source, f"--policy {policy}", f"the solver failed: {err}") from None
    err_console = Console(markup=False, stderr=True, highlight=False, soft_wrap=True)
    for warning in allocation.warnings:
        err_console.print(f"warning: {source}: {warning}", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(allocation_document(scenario, allocation), indent=2) + "\n")
    else:
        _print_table(scenario, allocation, Console(markup=False, highlight=False))


@app.command("check")
def check_command(
    policy: Annotated[
        str | None, typer.Option("--policy", "-p", help="Solver policy to check")
    ] = None,
    property_name: Annotated[
        str | None, typer.Option("--property", help="Property to search a violation of")
    ] = None,
    trials: Annotated[
        int | None, typer.Option("--trials", min=1, help="Random scenarios to try")
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the scenario generator (>= 0)")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (SPEC section 5)")] = False,
    check_all: Annotated[
        bool, typer.Option("--all", help="Every solver policy against every property")
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="With --all: print a Markdown table")
    ] = False,
) -> None:
    """Search random scenarios for a violation of a fairness property by a policy."""
    from fairshare.fairness import PROPERTIES, check  # noqa: PLC0415

    policies = list(SOLVER_POLICIES)
    if check_all:
        chosen_policies = [policy] if policy else policies
        chosen_properties = [property_name] if property_name else list(PROPERTIES)
    else:
        if policy is None or property_name is None:
            raise InputError(
                "command line", "fairshare check", "give --policy and --property, or --all"
            )
        chosen_policies, chosen_properties = [policy], [property_name]
    for name in chosen_policies:
        if name not in SOLVER_POLICIES:
            raise InputError(
                "command line",
                "--policy",
                f"unknown policy {name!r}; allowed: " + ", ".join(policies),
            )
    for name in chosen_properties:
        if name not in PROPERTIES:
            raise InputError(
                "command line",
                "--property",
                f"unknown property {name!r}; allowed: " + ", ".join(PROPERTIES),
            )
    if not check_all:
        result = check(chosen_policies[0], chosen_properties[0], trials=trials, seed=seed)
        if as_json:
            sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
        else:
            _print_check(result, Console(markup=False, highlight=False))
        return
    results = []
    console = Console(markup=False, stderr=True, highlight=False)
    with console.status("checking") as status:
        for name in chosen_policies:
            for prop in chosen_properties:
                status.update(f"checking {name} for {prop}")
                results.append(check(name, prop, trials=trials, seed=seed))
    if as_json:
        sys.stdout.write(json.dumps([r.to_json() for r in results], indent=2) + "\n")
    elif markdown:
        sys.stdout.write(_markdown_matrix(results, chosen_policies, chosen_properties))
    else:
        _print_matrix(results, chosen_policies, chosen_properties)


def _print_check(result: CheckResult, console: Console) -> None:
    if not result.applicable:
        console.print(
            f"{result.property} does not apply to {result.policy} (n/a): the papers define it "
            "for another kind of policy",
            markup=False,
        )
        return
    verdict = "holds" if result.holds else "is violated"
    console.print(
        f"{result.property} {verdict} for {result.policy} "
        f"({result.trials} trials, seed {result.seed}, {result.seconds:.2f} s)",
        markup=False,
    )
    if result.counterexample is not None:
        console.print(result.counterexample.explanation, markup=False)
        console.print("counterexample (re-run with fairshare solve):", markup=False)
        console.print_json(json.dumps(result.counterexample.scenario))


def _cell(result: CheckResult) -> str:
    if not result.applicable:
        return "n/a"
    if result.holds:
        return "yes"
    return f"no (trial {result.trials}, {result.seconds:.1f} s)"


def _legend(results: list[CheckResult]) -> str:
    total = sum(r.seconds for r in results)
    return (
        f"{len(results)} checks in {total:.1f} s (default trials, seed {results[0].seed}); "
        "yes: no violation found; no: violated, found at that trial; n/a: not defined for "
        "the policy"
    )


def _violations(results: list[CheckResult]) -> list[str]:
    return [
        f"{r.policy} / {r.property}: {r.counterexample.explanation}"
        for r in results
        if r.counterexample is not None
    ]


def _print_matrix(results: list[CheckResult], policies: list[str], properties: list[str]) -> None:
    table = Table(title="fairness properties by policy", title_justify="left")
    table.add_column("policy")
    for prop in properties:
        table.add_column(prop, justify="center")
    by_key = {(r.policy, r.property): r for r in results}
    for policy in policies:
        table.add_row(policy, *[_cell(by_key[policy, prop]) for prop in properties])
    console = Console(markup=False, highlight=False)
    console.print(table)
    console.print(_legend(results), markup=False)
    for line in _violations(results):
        console.print(f"- {line}", markup=False)


def _markdown_matrix(results: list[CheckResult], policies: list[str], properties: list[str]) -> str:
    by_key = {(r.policy, r.property): r for r in results}
    lines = ["| policy | " + " | ".join(properties) + " |", "| --- |" + " --- |" * len(properties)]
    for policy in policies:
        lines.append(
            f"| {policy} | " + " | ".join(_cell(by_key[policy, prop]) for prop in properties) + " |"
        )
    lines += ["", _legend(results), ""]
    lines += [f"- {line}" for line in _violations(results)]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ simulate


DEFAULT_SEED = 0
"""The seed of ``simulate`` and ``compare`` when ``--seed`` is not given."""

_RUN_FILES = ("summary.json", "jobs.csv", "timeline.csv", "tasks.parquet", "report.html")


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
    """``T1,T2`` as two finite numbers of seconds >= 0 (SPEC section 3 option values)."""
    if text is None:
        return None
    parts = text.split(",")
    values: list[float] = []
    for part in parts:
        try:
            values.append(float(part))
        except ValueError:
            values = []
            break
    if len(parts) != 2 or len(values) != 2:
        raise InputError(
            source,
            option,
            f"expected two numbers of seconds separated by a comma, e.g. {example}, got {text!r}",
        )
    for value in values:
        if not 0 <= value <= MAX_SECONDS:  # also nan and inf
            raise InputError(
                source,
                option,
                f"times must be numbers of seconds from 0 to {MAX_SECONDS:g}, got {text!r}",
            )
    return values[0], values[1]


MAX_SLOWDOWN = 1e6
"""The largest ``--rack-slowdown`` / ``--off-rack-slowdown`` factor: a task's time times it
stays far inside the float range."""


def _positive(
    value: float | None, option: str, source: str, *, maximum: float, zero: bool = False
) -> None:
    if value is None:
        return
    if not 0 <= value <= maximum or (value == 0 and not zero):
        bound = ">= 0" if zero else "> 0"
        raise InputError(
            source, option, f"must be a number {bound}, at most {maximum:g}, got {value:g}"
        )


def _settings(
    scenario_path: Path,
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
) -> RunSettings:
    from fairshare.sim.engine import SimOptions  # noqa: PLC0415
    from fairshare.workload.traces import parse_trace_argument  # noqa: PLC0415

    source = str(scenario_path)
    delay_pair = _pair(delay, "--delay-scheduling", source, "5,10")
    preemption_pair = _pair(preemption, "--preemption", source, "30,60")
    _positive(until, "--until", source, maximum=MAX_SECONDS, zero=True)
    _positive(rack_slowdown, "--rack-slowdown", source, maximum=MAX_SLOWDOWN)
    _positive(off_rack_slowdown, "--off-rack-slowdown", source, maximum=MAX_SLOWDOWN)
    if pool_order not in ("fair", "fifo"):
        raise InputError(source, "--pool-order", f"expected fair or fifo, got {pool_order!r}")
    parsed_trace = parse_trace_argument(trace) if trace is not None else None
    scenario = load_scenario(scenario_path)
    if parsed_trace is None and not scenario.jobs and scenario.workload is None:
        raise InputError(
            source,
            "jobs",
            "nothing to simulate: the scenario has neither 'jobs' nor 'workload'; add one, "
            "or give a trace with --trace FORMAT:PATH",
        )
    options = SimOptions(
        delay=delay_pair,
        preemption=preemption_pair,
        pool_order="fifo" if pool_order == "fifo" else "fair",
        rack_slowdown=rack_slowdown,
        off_rack_slowdown=off_rack_slowdown,
        until=until,
        copy_compute_splitting=copy_compute_splitting,
    )
    return RunSettings(scenario, parsed_trace, seed, options)


def _workload(settings: RunSettings) -> Workload:
    """The jobs of one run, streamed: the trace, else the scenario's jobs (in submit order),
    else its generator on a child generator of the seed (so every policy of a comparison
    replays the same jobs)."""
    from fairshare.workload.generators import Workload, generate  # noqa: PLC0415
    from fairshare.workload.traces import open_trace  # noqa: PLC0415

    scenario = settings.scenario
    if settings.trace is not None:
        fmt, path = settings.trace
        return open_trace(fmt, path, scenario.cluster)
    if scenario.jobs:
        ordered = sorted(scenario.jobs, key=lambda job: job.submit)
        return Workload(iter(ordered), scenario.cluster)
    assert scenario.workload is not None
    rng = np.random.default_rng(settings.seed).spawn(1)[0]
    return generate(
        scenario.workload,
        scenario.cluster,
        rng,
        queues=[q.path for q in scenario.queues],
        source=scenario.source,
    )


def _check_policy(name: str, settings: RunSettings, option: str = "--policy") -> None:
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415

    if name not in ONLINE_POLICIES and name not in REFERENCE_POLICIES:
        raise InputError(
            settings.source,
            option,
            f"unknown policy {name!r}; allowed: {', '.join(ONLINE_POLICIES)} "
            f"(reference schedulers: {', '.join(REFERENCE_POLICIES)})",
        )
    if name in REFERENCE_POLICIES:
        opts = settings.options
        for given, flag in (
            (opts.delay, "--delay-scheduling"),
            (opts.preemption, "--preemption"),
        ):
            if given is not None:
                raise InputError(
                    settings.source,
                    flag,
                    f"does not combine with the reference scheduler {name!r}, which places "
                    "tasks by the exact offline allocation",
                )
        if opts.copy_compute_splitting:
            raise InputError(
                settings.source,
                "--copy-compute-splitting",
                f"does not combine with the reference scheduler {name!r}, which places "
                "tasks by the exact offline allocation",
            )


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


def _run(settings: RunSettings, policy_name: str) -> RunLog:
    """Simulate one policy; input problems become :class:`InputError` (exit 2)."""
    from fairshare.policies import PolicyError  # noqa: PLC0415
    from fairshare.sim.engine import simulate  # noqa: PLC0415
    from fairshare.sim.reference import REFERENCE_POLICIES, make_reference  # noqa: PLC0415

    scenario = settings.scenario
    workload = _workload(settings)
    cluster = workload.cluster
    progress = _Progress(policy_name, len(scenario.jobs) if settings.trace is None else None)
    if settings.trace is not None or not scenario.jobs:
        progress.total = None
    policy: str | Policy = policy_name
    try:
        if policy_name in REFERENCE_POLICIES:
            policy = make_reference(
                policy_name, cluster, users=scenario.users, queues=scenario.queues
            )
        return simulate(
            cluster,
            progress.wrap(workload.jobs),
            policy,
            seed=settings.seed,
            users=scenario.users,
            queues=scenario.queues,
            options=settings.options,
        )
    except PolicyError as err:  # includes SimulationError
        raise InputError(settings.source, err.where, err.what) from None
    finally:
        progress.close()


class _Staging:
    """A temporary directory beside ``--out``, published over it only on success, so a
    rejected input (even a corrupt trace record found mid-run) writes nothing there."""

    def __init__(self, out: Path, source: str) -> None:
        self.out = out
        if out.exists() and not out.is_dir():
            raise InputError(str(out), "--out", "exists and is not a directory")
        anchor = out.absolute().parent
        while not anchor.exists():
            anchor = anchor.parent
        try:
            self.path = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=anchor))
        except OSError as err:
            raise InputError(
                str(out), "--out", f"cannot write there ({err.strerror or err})"
            ) from None

    def publish(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        if not self.out.exists():
            os.replace(self.path, self.out)
            return
        _merge(self.path, self.out)
        shutil.rmtree(self.path, ignore_errors=True)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _merge(src: Path, dst: Path) -> None:
    """Move ``src``'s files into the existing directory ``dst``, replacing same-named ones."""
    for entry in sorted(src.iterdir()):
        target = dst / entry.name
        if entry.is_dir():
            if target.exists() and not target.is_dir():
                target.unlink()
            if target.is_dir():
                _merge(entry, target)
            else:
                os.replace(entry, target)
        else:
            if target.is_dir():
                shutil.rmtree(target)
            os.replace(entry, target)


def _fmt(value: object, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}{unit}" if abs(value) >= 100 else f"{value:.4g}{unit}"
    return str(value)


def _pct(value: object) -> str:
    return "-" if not isinstance(value, int | float) else f"{100 * value:.1f}%"


def _summary_rows(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The headline numbers of a ``summary.json`` document, for people."""
    locality = doc.get("locality") or {}
    utilization = doc.get("utilization") or {}
    rows = [
        ("policy", str(doc["policy"])),
        ("seed", _fmt(doc["seed"])),
        ("jobs finished", f"{_fmt(doc.get('finished_jobs'))} of {_fmt(doc['jobs'])}"),
        ("tasks", _fmt(doc["tasks"])),
        ("makespan", _fmt(doc["makespan"], " s")),
        ("mean response time", _fmt(doc["mean_response_time"], " s")),
        ("p50 response time", _fmt(doc["p50_response_time"], " s")),
        ("p95 response time", _fmt(doc["p95_response_time"], " s")),
        ("mean slowdown", _fmt(doc["mean_slowdown"])),
        (
            "locality node / rack / off-rack",
            " / ".join(_pct(locality.get(k)) for k in ("node", "rack", "off_rack")),
        ),
    ]
    rows.extend((f"utilization {name}", _pct(value)) for name, value in utilization.items())
    rows.extend(
        [
            ("preempted tasks", _fmt(doc["preempted_tasks"])),
            ("events", _fmt(doc["events"])),
        ]
    )
    return rows


_SIM_HELP = {
    "seed": f"Seed of durations, input blocks and generated jobs (default {DEFAULT_SEED})",
    "trace": "Replay a trace instead of the scenario's jobs: swim, google-2011, alibaba-gpu or "
    "swf, e.g. swim:FB-2009.tsv",
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
OutOption = Annotated[
    Path, typer.Option("--out", "-o", metavar="DIR", help="Directory to write the results to")
]
ScenarioArgument = Annotated[
    Path, typer.Argument(metavar="SCENARIO", help="YAML or JSON scenario (machines, jobs)")
]


@app.command("simulate")
def simulate_command(
    scenario_path: ScenarioArgument,
    policy: Annotated[
        str, typer.Option("--policy", "-p", help="Online policy (see `fairshare policies`)")
    ],
    out: OutOption,
    seed: SeedOption = DEFAULT_SEED,
    trace: TraceOption = None,
    delay_scheduling: DelayOption = None,
    preemption: PreemptionOption = None,
    until: UntilOption = None,
    rack_slowdown: RackOption = 1.2,
    off_rack_slowdown: OffRackOption = 1.5,
    pool_order: PoolOrderOption = "fair",
    copy_compute_splitting: CopyComputeOption = False,
) -> None:
    """Replay the scenario's jobs (or workload, or a trace) under an online policy and write
    summary.json, jobs.csv, timeline.csv, tasks.parquet and report.html to DIR."""
    from fairshare.report import write_outputs  # noqa: PLC0415

    settings = _settings(
        scenario_path,
        seed=seed,
        trace=trace,
        delay=delay_scheduling,
        preemption=preemption,
        until=until,
        rack_slowdown=rack_slowdown,
        off_rack_slowdown=off_rack_slowdown,
        pool_order=pool_order,
        copy_compute_splitting=copy_compute_splitting,
    )
    _check_policy(policy, settings)
    staging = _Staging(out, settings.source)
    try:
        log = _run(settings, policy)
        doc = write_outputs(log, staging.path)
        staging.publish()
    finally:
        staging.discard()
    console = Console(markup=False, highlight=False)
    table = Table(title=f"simulated {policy} on {settings.source}", title_justify="left")
    table.add_column("")
    table.add_column("", justify="right")
    for label, value in _summary_rows(doc):
        table.add_row(label, value)
    table.add_row("wall time", f"{log.wall_seconds:.2f} s")
    table.show_header = False
    console.print(table)
    console.soft_wrap = True
    console.print(f"wrote {out}: {', '.join(_RUN_FILES)}", markup=False)


@app.command("compare")
def compare_command(
    scenario_path: ScenarioArgument,
    policies: Annotated[
        str,
        typer.Option(
            "--policies", metavar="P1,P2,...", help="Policies to run on the same workload"
        ),
    ],
    out: OutOption,
    reference: Annotated[
        str | None,
        typer.Option(
            "--reference",
            metavar="P",
            help="Policy the others are compared against (default: the first)",
        ),
    ] = None,
    seed: SeedOption = DEFAULT_SEED,
    trace: TraceOption = None,
    delay_scheduling: DelayOption = None,
    preemption: PreemptionOption = None,
    until: UntilOption = None,
    rack_slowdown: RackOption = 1.2,
    off_rack_slowdown: OffRackOption = 1.5,
    pool_order: PoolOrderOption = "fair",
    copy_compute_splitting: CopyComputeOption = False,
) -> None:
    """Run several policies on the same jobs (same seed: same jobs and durations) and write
    compare.json, compare.csv, compare.html and each run's files in DIR/POLICY/."""
    from fairshare.report import write_compare, write_outputs  # noqa: PLC0415

    settings = _settings(
        scenario_path,
        seed=seed,
        trace=trace,
        delay=delay_scheduling,
        preemption=preemption,
        until=until,
        rack_slowdown=rack_slowdown,
        off_rack_slowdown=off_rack_slowdown,
        pool_order=pool_order,
        copy_compute_splitting=copy_compute_splitting,
    )
    names = [p.strip() for p in policies.split(",")]
    if not policies.strip() or any(not n for n in names):
        raise InputError(
            settings.source, "--policies", f"expected a comma-separated list, got {policies!r}"
        )
    for name in names:
        _check_policy(name, settings, "--policies")
        if names.count(name) > 1:
            raise InputError(settings.source, "--policies", f"policy {name!r} is listed twice")
    if reference is not None and reference not in names:
        raise InputError(
            settings.source,
            "--reference",
            f"{reference!r} is not one of the compared policies: {', '.join(names)}",
        )
    staging = _Staging(out, settings.source)
    try:
        logs: list[RunLog] = []
        docs: list[dict[str, object]] = []
        for name in names:
            log = _run(settings, name)
            docs.append(write_outputs(log, staging.path / name))
            logs.append(log)
        write_compare(logs, staging.path, reference if reference is not None else 0)
        staging.publish()
    finally:
        staging.discard()
    _print_compare(settings, names, docs, logs, reference or names[0], out)


def _print_compare(
    settings: RunSettings,
    names: list[str],
    docs: list[dict[str, object]],
    logs: list[RunLog],
    reference: str,
    out: Path,
) -> None:
    table = Table(
        title=f"{len(names)} policies on {settings.source} (seed {settings.seed}, "
        f"reference {reference})",
        title_justify="left",
    )
    table.add_column("")
    for name in names:
        table.add_column(name, justify="right")
    rows = [_summary_rows(doc) for doc in docs]
    labels: list[str] = []
    for per_run in rows:
        labels.extend(label for label, _ in per_run if label not in labels and label != "policy")
    for label in labels:
        cells = [dict(per_run).get(label, "-") for per_run in rows]
        table.add_row(label, *cells)
    table.add_row("wall time", *[f"{log.wall_seconds:.2f} s" for log in logs])
    # Wide enough for every column unwrapped, whatever the terminal says.
    width = 36 + sum(max(len(n), 12) + 3 for n in names)
    console = Console(
        markup=False, highlight=False, width=max(width, Console().width), soft_wrap=True
    )
    console.print(table)
    console.print(
        f"wrote {out}: compare.json, compare.csv, compare.html and "
        f"{', '.join(n + '/' for n in names)}",
        markup=False,
    )


@app.command("policies")
def policies_command() -> None:
    """List the solver, online and reference policies with the paper section each implements."""
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415

    console = Console(markup=False, highlight=False)
    table = Table(title="solver policies (fairshare solve --policy)", title_justify="left")
    for column in ("policy", "what it equalises", "paper", "placement"):
        table.add_column(column)
    for entry in SOLVER_POLICIES.values():
        table.add_row(
            entry.name,
            entry.summary,
            entry.source,
            "pooled cluster" if entry.pools_cluster else "per machine",
        )
    console.print(table)
    online = Table(
        title="online policies (fairshare simulate / compare --policy)", title_justify="left"
    )
    for column in ("policy", "what it does", "paper"):
        online.add_column(column)
    for policy in ONLINE_POLICIES.values():
        online.add_row(policy.name, policy.summary, policy.source)
    for reference in REFERENCE_POLICIES.values():
        online.add_row(reference.name, reference.summary + " (reference)", reference.source)
    console.print(online)


# ------------------------------------------------------------------------------ bench

bench_app = typer.Typer(
    help="Reproduce the issue benchmarks (online throughput, simulator and solver at the "
    "papers' scales). Timings depend on the machine; the workloads are fixed.",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document")]


def _names(text: str, option: str, allowed: Collection[str], kind: str) -> list[str]:
    """A comma-separated list of policy names, each one of ``allowed``."""
    names = [name.strip() for name in text.split(",")]
    if not text.strip() or any(not name for name in names):
        raise InputError("command line", option, f"expected a comma-separated list, got {text!r}")
    for name in names:
        if name not in allowed:
            raise InputError(
                "command line",
                option,
                f"unknown {kind} {name!r}; allowed: {', '.join(allowed)}",
            )
    return names


@contextmanager
def _bench_progress() -> Iterator[Progress]:
    """A progress bar on stderr (so ``--json`` output stays clean), only on a terminal.

    Off a terminal the bar is never started: rich before 14.3 writes a blank line on stderr
    when even a disabled bar stops.
    """
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(markup=False, stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),
    )
    if progress.disable:
        yield progress
        return
    with progress:
        yield progress


def _dump(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


@bench_app.command("online")
def bench_online_command(
    policies: Annotated[
        str, typer.Option("--policies", metavar="P1,P2,...", help="Online policies to time")
    ] = "drf,tsf,choosy",
    machines: Annotated[int, typer.Option("--machines", min=1, help="Machines")] = 10_000,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Jobs")] = 1000,
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="Tasks per job")] = 200,
    repeat: Annotated[
        int, typer.Option("--repeat", min=1, help="Runs per policy (median and best reported)")
    ] = 3,
    as_json: JsonOption = False,
) -> None:
    """Placements per CPU second of the online policies (issue 4), against a bare heap
    push/pop loop over as many decisions: the run of median CPU time of ``--repeat`` runs per
    policy, and the best rate. Figures are comparable only at the default sizes."""
    from fairshare.bench import online  # noqa: PLC0415
    from fairshare.policies import ONLINE_POLICIES, PolicyError  # noqa: PLC0415

    names = _names(policies, "--policies", ONLINE_POLICIES, "online policy")
    decisions = jobs * tasks
    figures: list[online.OnlineFigures] = []
    with _bench_progress() as progress:
        step = progress.add_task("bare heap loop", total=len(names) * repeat + 2)
        # The best of as many loops as runs per policy: the yardstick's own noise.
        bare = decisions / max(min(online.heap_loop(decisions) for _ in range(repeat)), 1e-9)
        progress.update(step, advance=1, description="building the workload")
        cluster, job_list = online.workload(machines, jobs, tasks)
        runs: list[list[online.OnlineRun]] = [[] for _ in names]
        for _ in range(repeat):
            for i, name in enumerate(names):
                progress.update(step, advance=1, description=f"simulating {name}")
                try:
                    runs[i].append(online.run_policy(cluster, job_list, name))
                except PolicyError as err:
                    raise InputError("command line", err.where, err.what) from None
        figures = [online.figures_of(done) for done in runs]
        progress.update(step, advance=1)
    if as_json:
        _dump(
            {
                "benchmark": "online",
                "machines": machines,
                "jobs": jobs,
                "tasks": tasks,
                "decisions": decisions,
                "bare_heap_rate": round(bare, 1),
                "repeat": repeat,
                "policies": [
                    {
                        "policy": figure.median.policy,
                        "placements": figure.median.placements,
                        "events": figure.median.events,
                        "cpu_seconds": round(figure.median.cpu_seconds, 4),
                        "wall_seconds": round(figure.median.wall_seconds, 4),
                        "rate": round(figure.median.rate, 1),
                        "best_rate": round(figure.best_rate, 1),
                        "x_bare_heap": round(figure.median.rate / bare, 4),
                        "cpu_seconds_runs": [round(run.cpu_seconds, 4) for run in figure.runs],
                    }
                    for figure in figures
                ],
            }
        )
        return
    table = Table(
        title=f"online throughput: {machines:,} machines, {jobs:,} jobs x {tasks:,} tasks",
        title_justify="left",
        caption=f"per CPU s: placements per CPU second, run of median CPU time of {repeat}; "
        f"best: the fastest run; x heap: median over a bare heap push/pop loop "
        f"({bare:,.0f}/s CPU)",
        caption_justify="left",
    )
    for column in (
        "policy",
        "placements",
        "events",
        "CPU s",
        "wall s",
        "per CPU s",
        "best",
        "x heap",
    ):
        table.add_column(column, justify="left" if column == "policy" else "right")
    for figure in figures:
        run = figure.median
        table.add_row(
            run.policy,
            f"{run.placements:,}",
            f"{run.events:,}",
            f"{run.cpu_seconds:.2f}",
            f"{run.wall_seconds:.2f}",
            f"{run.rate:,.0f}",
            f"{figure.best_rate:,.0f}",
            f"{run.rate / bare:.2f}",
        )
    Console(markup=False, highlight=False).print(table)


@bench_app.command("simulate")
def bench_simulate_command(
    only: Annotated[
        str | None,
        typer.Option("--only", metavar="CASE", help="choosy, offline or tsf (default: all)"),
    ] = None,
    policies: Annotated[
        str | None,
        typer.Option(
            "--policies",
            metavar="P1,P2,...",
            help="Policies for the tsf case (default: every online policy), or with "
            "--only offline the reference schedulers (default: offline-restricted)",
        ),
    ] = None,
    machines: Annotated[
        int | None,
        typer.Option("--machines", min=1, help="Shrink the cluster (default: the paper's 1,000)"),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", min=1, help="Shrink the workload (default: the paper's)"),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """The simulator at the papers' macrobenchmark scales (Choosy section 7.1, TSF section
    VI): seconds of each run against its target and the peak memory of its own process."""
    from fairshare.bench import simulate  # noqa: PLC0415

    if only is not None and only not in simulate.CASES:
        raise InputError(
            "command line",
            "--only",
            f"unknown benchmark case {only!r}; allowed: {', '.join(simulate.CASES)}",
        )
    try:
        runs = simulate.plan(only, policies.split(",") if policies is not None else None)
    except ValueError as err:
        raise InputError("command line", "--policies", str(err)) from None
    results: list[dict[str, object]] = []
    with _bench_progress() as progress:
        step = progress.add_task("simulating", total=len(runs))
        for run in runs:
            progress.update(step, description=f"{run.case}: {run.policy}")
            result = simulate.run_case_in_child(run.case, run.policy, machines, jobs)
            results.append({"case": run.case, "target_seconds": run.target, **result})
            progress.update(step, advance=1)
    if as_json:
        _dump({"benchmark": "simulate", "machines": machines, "jobs": jobs, "runs": results})
        return
    sizes = "" if machines is None and jobs is None else " (shrunk: not comparable)"
    table = Table(title=f"simulator at the papers' scales{sizes}", title_justify="left")
    for column in ("case", "policy", "jobs", "attempts", "seconds", "target", "peak MiB"):
        table.add_column(column, justify="left" if column in ("case", "policy") else "right")
    for r in results:
        table.add_row(
            str(r["case"]),
            str(r["policy"]),
            f"{r['jobs']:,}",
            f"{r['task_attempts']:,}",
            f"{r['seconds']}",
            f"< {r['target_seconds']}",
            f"{r['peak_rss_mib']}",
        )
    Console(markup=False, highlight=False).print(table)


@bench_app.command("solve")
def bench_solve_command(
    only: Annotated[
        str | None,
        typer.Option("--only", metavar="C1,C2", help="Cases: hierarchy, cmmf, tsf (default: all)"),
    ] = None,
    users: Annotated[
        int | None,
        typer.Option("--users", min=1, help="Users (default: the case's 1,000 or 5,000)"),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option("--repeat", min=1, help="Runs per median (default: 5 hierarchy, 3 others)"),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """`fairshare solve` on a 1,000-user 3-level hierarchy and the constraint issue's CMMF
    (5,000 users, 100,000 machines) and TSF scales: median seconds in process and end to end."""
    from fairshare.bench import solve  # noqa: PLC0415

    chosen = _names(only, "--only", solve.CASES, "benchmark case") if only else list(solve.CASES)
    cases = [solve.CASES[name] for name in chosen]
    documents: list[dict[str, Any]] = []
    total = sum(1 + len(c.in_process) + len(c.end_to_end) for c in cases)
    with tempfile.TemporaryDirectory() as tmp, _bench_progress() as progress:
        step = progress.add_task("solving", total=total)
        for case in cases:
            times = repeat if repeat is not None else case.repeat
            progress.update(step, description=f"{case.name}: writing and loading")
            prepared = solve.prepare(case, Path(tmp), users)
            progress.update(step, advance=1)
            scenario = prepared.scenario
            in_process = []
            for policy, integral in case.in_process:
                progress.update(step, description=f"{case.name}: solve {policy} in process")
                seconds, allocation = solve.time_in_process(scenario, policy, integral, times)
                in_process.append(
                    {
                        "policy": policy,
                        "integral": integral,
                        "median_seconds": round(seconds, 4),
                        "tasks": _round(float(allocation.tasks.sum()), 4),
                        "lp_solves": allocation.extras.get("lp_solves"),
                    }
                )
                progress.update(step, advance=1)
            end_to_end = []
            for policy in case.end_to_end:
                progress.update(step, description=f"{case.name}: fairshare solve {policy}")
                seconds = solve.time_end_to_end(prepared.path, policy, times)
                end_to_end.append({"policy": policy, "median_seconds": round(seconds, 4)})
                progress.update(step, advance=1)
            documents.append(
                {
                    "case": case.name,
                    "users": len(scenario.users),
                    "queues": len(scenario.queues),
                    "machines": len(scenario.cluster.machines),
                    "machine_types": prepared.machine_types,
                    "narrow_users": round(prepared.narrow_users, 4),
                    "load_seconds": round(prepared.load_seconds, 4),
                    "machine_types_seconds": round(prepared.types_seconds, 4),
                    "repeat": times,
                    "in_process": in_process,
                    "end_to_end": end_to_end,
                }
            )
    if as_json:
        _dump({"benchmark": "solve", "cases": documents})
        return
    console = Console(markup=False, highlight=False)
    for doc in documents:
        table = Table(
            title=f"{doc['case']}: {doc['users']:,} users, {doc['queues']:,} queues, "
            f"{doc['machines']:,} machines ({doc['machine_types']:,} types)",
            title_justify="left",
            caption=f"medians of {doc['repeat']} runs; load {doc['load_seconds']:.2f} s, "
            f"machine types {doc['machine_types_seconds']:.2f} s; "
            f"{_pct(doc['narrow_users'])} of users can use under 20% of the machines",
            caption_justify="left",
        )
        for column in ("run", "policy", "kind", "median", "LP solves"):
            table.add_column(
                column, justify="right" if column in ("median", "LP solves") else "left"
            )
        for row in doc["in_process"]:
            table.add_row(
                "in process",
                row["policy"],
                "integral" if row["integral"] else "divisible",
                f"{1000 * row['median_seconds']:.1f} ms",
                _fmt(row["lp_solves"]),
            )
        for row in doc["end_to_end"]:
            table.add_row(
                "end to end", row["policy"], "json", f"{row['median_seconds']:.3f} s", "-"
            )
        console.print(table)


_LONGEST_WORD = 120
"""An echoed input value longer than this is cut: an error stays one readable line even when a
trace field holds megabytes."""
_LONGEST_LINE = 1500


def _fail(message: str) -> NoReturn:
    words = message.replace("\n", " ").split(" ")
    shown = [w if len(w) <= _LONGEST_WORD else w[:_LONGEST_WORD] + "..." for w in words]
    line = " ".join(shown).rstrip()
    if len(line) > _LONGEST_LINE:
        line = line[:_LONGEST_LINE] + "..."
    sys.stderr.write(line + "\n")
    raise SystemExit(2)


@contextmanager
def _stdout_kept_for_output() -> Iterator[None]:
    """Keep the process's standard output for what fairshare itself prints.

    Native libraries (HiGHS, BLAS) may write to file descriptor 1 directly, below Python, which
    would corrupt a ``--json`` document. For the command's duration descriptor 1 points at
    standard error, and ``sys.stdout`` writes to a duplicate of the original descriptor. Only
    the process's own stdout is redirected (not a stream a caller or a test substituted).
    """
    stream: TextIO = sys.stdout
    try:
        redirect = stream is sys.__stdout__ and stream.fileno() == 1
    except (AttributeError, OSError, ValueError):
        redirect = False
    if not redirect:
        yield
        return
    stream.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    output = io.TextIOWrapper(
        io.FileIO(saved, "w", closefd=False),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=bool(getattr(stream, "line_buffering", False)),
    )
    sys.stdout = output
    try:
        yield
    finally:
        try:
            output.flush()
        finally:
            sys.stdout = stream
            output.close()
            os.dup2(saved, 1)
            os.close(saved)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``fairshare`` console script."""
    command = typer.main.get_command(app)
    try:
        with _stdout_kept_for_output():
            code = command.main(args=argv, prog_name="fairshare", standalone_mode=False)
    except (InputError, ScenarioError, UnknownPolicy) as err:
        _fail(str(err) if str(err).startswith("error:") else f"error: {err}")
    except typer.Abort:
        _fail("error: command line: aborted")
    except typer.TyperException as err:
        # Typer's usage errors (missing or malformed options and arguments).
        context = getattr(err, "ctx", None)
        where = context.command_path if context is not None else "fairshare"
        message = getattr(err, "format_message", err.__str__)()
        _fail(f"error: command line: {where}: {message}")
    except BrokenPipeError:
        sys.stderr.close()
        raise SystemExit(0) from None
    raise SystemExit(code if isinstance(code, int) else 0)


__all__ = ["allocation_document", "app", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
