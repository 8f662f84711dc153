"""``fairshare bench``: the benchmarks of :mod:`fairshare.bench`, with tables or JSON."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from fairshare.cli.app import (
    InputError,
    JsonOption,
    app,
    dump_json,
    flag,
    flags_in,
    fmt,
    parse_names,
    pct,
)

if TYPE_CHECKING:
    from rich.progress import Progress

bench_app = typer.Typer(
    help="Reproduce the issue benchmarks (online throughput, simulator and solver at the "
    "papers' scales). Timings depend on the machine; the workloads are fixed.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


app.add_typer(bench_app, name="bench")


@bench_app.callback()
def _collector_on() -> None:
    # The benchmarks time the library as its users run it, with the cyclic collector on
    # (the command line pauses it for the other commands: cli.app.main).
    gc.enable()


@contextmanager
def bench_progress() -> Iterator[Progress]:
    """A progress bar on stderr (so ``--json`` output stays clean), only on a terminal.

    Off a terminal the bar is never started: rich before 14.3 writes a blank line on stderr
    when even a disabled bar stops.

    Yields
    ------
    rich.progress.Progress
        The bar, disabled off a terminal (its tasks may be added and updated all the same).
    """
    # Imported here: the other commands never show this bar.
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

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
    gangs: Annotated[
        bool,
        typer.Option(
            "--gangs",
            help="A third of the jobs of 8-64 tasks: each policy timed with them as ordinary "
            "jobs, as gangs, and as gangs with EASY backfilling, side by side",
        ),
    ] = False,
    usage_half_life: Annotated[
        float | None,
        typer.Option(
            "--usage-half-life",
            metavar="SECONDS",
            help="Each policy timed without and with usage over time of this half-life, side "
            "by side (the cost of --usage-half-life)",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Placements per CPU second of the online policies, against a bare heap
    push/pop loop over as many decisions: the run of median CPU time of ``--repeat`` runs per
    policy, and the best rate. Figures are comparable only at the default sizes. With
    ``--gangs`` (or ``--usage-half-life``), each policy's variants run in turn in every round
    (so a slow spell hits them alike), and each rate is also given over its policy's plain
    rate."""
    from fairshare.bench import online  # noqa: PLC0415
    from fairshare.policies import ONLINE_POLICIES, PolicyError  # noqa: PLC0415
    from fairshare.sim.options import OptionError, SimOptions  # noqa: PLC0415

    names = parse_names(policies, "--policies", ONLINE_POLICIES, "online policy")
    if usage_half_life is not None and gangs:
        raise InputError(
            "command line", "--usage-half-life", "does not combine with --gangs (one at a time)"
        )
    try:
        usage = SimOptions(usage_half_life=usage_half_life)
    except OptionError as err:
        raise InputError("command line", "--usage-half-life", flags_in(err.what)) from None
    decisions = jobs * tasks
    figures: list[online.OnlineFigures] = []
    variants = online.VARIANTS if gangs else ("plain", "usage") if usage_half_life else ("",)
    versus = bool(gangs or usage_half_life)
    cases = [(name, variant) for name in names for variant in variants]
    with bench_progress() as progress:
        step = progress.add_task("bare heap loop", total=len(cases) * repeat + 2)
        # The best of as many loops as runs per policy: the yardstick's own noise.
        bare = decisions / max(min(online.heap_loop(decisions) for _ in range(repeat)), 1e-9)
        progress.update(step, advance=1, description="building the workload")
        if gangs:
            workloads = {
                "plain": online.workload(machines, jobs, tasks, gangs=False),
                "gangs": online.workload(machines, jobs, tasks, gangs=True),
            }
            workloads["gangs+easy"] = workloads["gangs"]
        elif usage_half_life is not None:
            workloads = {"plain": online.workload(machines, jobs, tasks)}
            workloads["usage"] = workloads["plain"]
        else:
            workloads = {"": online.workload(machines, jobs, tasks)}
        easy = SimOptions(backfill="easy")
        runs: list[list[online.OnlineRun]] = [[] for _ in cases]
        for _ in range(repeat):
            for i, (name, variant) in enumerate(cases):
                label = f"{name} ({variant})" if variant else name
                progress.update(step, advance=1, description=f"simulating {label}")
                cluster, job_list = workloads[variant]
                options = easy if variant == "gangs+easy" else usage if variant == "usage" else None
                try:
                    runs[i].append(online.run_policy(cluster, job_list, name, options))
                except PolicyError as err:
                    raise InputError("command line", flag(err.where), flags_in(err.what)) from None
        figures = [online.figures_of(done) for done in runs]
        progress.update(step, advance=1)
    plain = {
        name: figure.median.rate
        for (name, variant), figure in zip(cases, figures, strict=True)
        if variant == "plain"
    }
    if as_json:
        dump_json(
            {
                "benchmark": "online",
                "machines": machines,
                "jobs": jobs,
                "tasks": tasks,
                "decisions": decisions,
                "bare_heap_rate": round(bare, 1),
                "repeat": repeat,
                "gangs": gangs,
                "usage_half_life": usage_half_life,
                "policies": [
                    {
                        "policy": figure.median.policy,
                        **(
                            {
                                "variant": variant,
                                "x_plain": round(figure.median.rate / plain[name], 4),
                            }
                            if variant
                            else {}
                        ),
                        "placements": figure.median.placements,
                        "events": figure.median.events,
                        "cpu_seconds": round(figure.median.cpu_seconds, 4),
                        "wall_seconds": round(figure.median.wall_seconds, 4),
                        "rate": round(figure.median.rate, 1),
                        "best_rate": round(figure.best_rate, 1),
                        "x_bare_heap": round(figure.median.rate / bare, 4),
                        "cpu_seconds_runs": [round(run.cpu_seconds, 4) for run in figure.runs],
                    }
                    for (name, variant), figure in zip(cases, figures, strict=True)
                ],
            }
        )
        return
    shape = (
        f"{jobs:,} jobs x {tasks:,} tasks, a third of 8-64 tasks"
        if gangs
        else f"{jobs:,} jobs x {tasks:,} tasks"
    )
    table = Table(
        title=f"online throughput: {machines:,} machines, {shape}",
        title_justify="left",
        caption=f"per CPU s: placements per CPU second, run of median CPU time of {repeat}; "
        f"best: the fastest run; x heap: median over a bare heap push/pop loop "
        f"({bare:,.0f}/s CPU)" + ("; x plain: over the policy's plain variant" if versus else ""),
        caption_justify="left",
    )
    columns = ["policy", "placements", "events", "CPU s", "wall s", "per CPU s", "best", "x heap"]
    if versus:
        columns[1:1] = ["variant"]
        columns.append("x plain")
    for column in columns:
        table.add_column(column, justify="left" if column in ("policy", "variant") else "right")
    for (name, variant), figure in zip(cases, figures, strict=True):
        run = figure.median
        row = [
            run.policy,
            f"{run.placements:,}",
            f"{run.events:,}",
            f"{run.cpu_seconds:.2f}",
            f"{run.wall_seconds:.2f}",
            f"{run.rate:,.0f}",
            f"{figure.best_rate:,.0f}",
            f"{run.rate / bare:.2f}",
        ]
        if versus:
            row[1:1] = [variant]
            row.append(f"{run.rate / plain[name]:.2f}")
        table.add_row(*row)
    Console(markup=False, highlight=False).print(table)


@bench_app.command("end-to-end")
def bench_end_to_end_command(
    policies: Annotated[
        str, typer.Option("--policies", metavar="P1,P2,...", help="Online policies to run")
    ] = "drf,tsf,choosy",
    machines: Annotated[int, typer.Option("--machines", min=1, help="Machines")] = 10_000,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Jobs")] = 1000,
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="Tasks per job")] = 200,
    repeat: Annotated[
        int, typer.Option("--repeat", min=1, help="Runs per policy (medians reported)")
    ] = 3,
    as_json: JsonOption = False,
) -> None:
    """`fairshare simulate` of the online benchmark's workload as a user runs it (a scenario
    file in, every output file written, a fresh process) against the simulation's own time
    inside it (target: at most 1.5x): wall seconds, and CPU seconds, which a busy machine
    does not inflate. Figures are comparable only at the default sizes."""
    from fairshare.bench import end_to_end  # noqa: PLC0415
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415

    names = parse_names(policies, "--policies", ONLINE_POLICIES, "online policy")
    with bench_progress() as progress:
        step = progress.add_task("end to end", total=len(names) * repeat)

        def running(policy: str) -> None:
            """Show which policy's run is being timed."""
            progress.update(step, description=f"fairshare simulate --policy {policy}")

        figures = end_to_end.measure(names, repeat, machines, jobs, tasks, step=running)
        progress.update(step, completed=len(names) * repeat)
    if as_json:
        dump_json(
            {
                "benchmark": "end-to-end",
                "machines": machines,
                "jobs": jobs,
                "tasks": tasks,
                "repeat": repeat,
                "policies": [
                    {
                        "policy": f.policy,
                        "wall_seconds": round(f.wall_seconds, 6),
                        "simulation_seconds": round(f.simulation_seconds, 6),
                        "ratio": round(f.ratio, 4),
                        "cpu_seconds": round(f.cpu_seconds, 6),
                        "simulation_cpu_seconds": round(f.simulation_cpu_seconds, 6),
                        "cpu_ratio": round(f.cpu_ratio, 4),
                        "wall_seconds_runs": [round(r.wall_seconds, 4) for r in f.runs],
                        "cpu_seconds_runs": [round(r.cpu_seconds, 4) for r in f.runs],
                    }
                    for f in figures
                ],
            }
        )
        return
    table = Table(
        title=f"fairshare simulate end to end: {machines:,} machines, {jobs:,} jobs x "
        f"{tasks:,} tasks",
        title_justify="left",
        caption=f"medians of {repeat} runs; end to end: the whole process (start-up, loading, "
        "every output file); simulation: summary.json's wall_seconds and the simulation's CPU "
        "time; ratio: end to end over simulation (target at most 1.5)",
        caption_justify="left",
    )
    for column in (
        "policy",
        "end-to-end s",
        "simulation s",
        "ratio",
        "end-to-end CPU s",
        "simulation CPU s",
        "CPU ratio",
    ):
        table.add_column(column, justify="left" if column == "policy" else "right")
    for f in figures:
        table.add_row(
            f.policy,
            f"{f.wall_seconds:.2f}",
            f"{f.simulation_seconds:.2f}",
            f"{f.ratio:.2f}",
            f"{f.cpu_seconds:.2f}",
            f"{f.simulation_cpu_seconds:.2f}",
            f"{f.cpu_ratio:.2f}",
        )
    # Wide enough for the seven columns unwrapped, whatever the terminal says.
    Console(markup=False, highlight=False, width=max(Console().width, 110)).print(table)


@bench_app.command("traces")
def bench_traces_command(
    alibaba_2018: Annotated[
        str | None,
        typer.Option(
            "--alibaba-2018",
            metavar="DIR",
            help="The cluster-trace-v2018 directory (sample_tasks.csv, machine_meta.csv)",
        ),
    ] = None,
    alibaba_2017: Annotated[
        str | None,
        typer.Option(
            "--alibaba-2017",
            metavar="DIR",
            help="The cluster-trace-v2017 directory (batch_task.csv, server_event.csv)",
        ),
    ] = None,
    policy: Annotated[str, typer.Option("--policy", help="The online policy")] = "drf",
    repeat: Annotated[
        int, typer.Option("--repeat", min=1, help="Runs per trace (medians reported)")
    ] = 1,
    as_json: JsonOption = False,
) -> None:
    """`fairshare simulate` of the Alibaba traces on an empty scenario, as a user runs it (a
    fresh process, every output file written): tasks, the simulation's rate (tasks over
    summary.json's wall_seconds; target 250,000/s), end-to-end wall time and its ratio to the
    simulation's (target at most 1.5), the same in CPU seconds, the process's peak resident
    memory, and the machine (CPU, cores, Python, compiled kernel or not). At least one trace."""
    from fairshare.bench import traces  # noqa: PLC0415
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415

    names = parse_names(policy, "--policy", ONLINE_POLICIES, "online policy")
    if len(names) != 1:
        raise InputError("command line", "--policy", f"expected one policy, got {policy!r}")
    name = names[0]
    given = {"alibaba-2018": alibaba_2018, "alibaba-2017": alibaba_2017}
    chosen = {trace: Path(path) for trace, path in given.items() if path is not None}
    if not chosen:
        raise InputError(
            "command line",
            "--alibaba-2018",
            "give at least one trace directory (--alibaba-2018 DIR, --alibaba-2017 DIR)",
        )
    for trace, path in chosen.items():
        if not path.is_dir():
            raise InputError("command line", f"--{trace}", f"{path} is not a directory")
    where = traces.machine()
    with bench_progress() as progress:
        step = progress.add_task("traces", total=len(chosen) * repeat)

        def running(trace: str) -> None:
            """Show which trace's run is being timed."""
            progress.update(step, description=f"fairshare simulate --trace {trace}")

        figures = traces.measure(
            {trace: path.resolve() for trace, path in chosen.items()},
            name,
            repeat,
            step=running,
        )
        progress.update(step, completed=len(chosen) * repeat)
    if as_json:
        dump_json(
            {
                "benchmark": "traces",
                "policy": name,
                "repeat": repeat,
                "machine": where,
                "target_rate": traces.TARGET_RATE,
                "target_ratio": traces.TARGET_RATIO,
                "traces": [f.document() for f in figures],
            }
        )
        return
    averages = where["load_average"]
    load = ", ".join(str(x) for x in averages) if isinstance(averages, list) else ""
    table = Table(
        title=f"fairshare simulate --trace, {name}: {where['cpu']}, {where['cores']} cores, "
        f"Python {where['python']}, {where['kernel']} kernel",
        title_justify="left",
        caption=f"medians of {repeat} run(s); tasks/s: over summary.json's wall_seconds "
        "(target 250,000); ratio: end to end over the simulation (target at most 1.5); "
        f"load average before: {load or '-'}",
        caption_justify="left",
    )
    for column in traces.COLUMNS:
        table.add_column(column, justify="left" if column == "trace" else "right")
    for row in traces.rows(figures):
        table.add_row(*row)
    Console(markup=False, highlight=False, width=max(Console().width, 140)).print(table)


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
    with bench_progress() as progress:
        step = progress.add_task("simulating", total=len(runs))
        for run in runs:
            progress.update(step, description=f"{run.case}: {run.policy}")
            result = simulate.run_case_in_child(run.case, run.policy, machines, jobs)
            results.append({"case": run.case, "target_seconds": run.target, **result})
            progress.update(step, advance=1)
    if as_json:
        dump_json({"benchmark": "simulate", "machines": machines, "jobs": jobs, "runs": results})
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


@bench_app.command("scaling")
def bench_scaling_command(
    policies: Annotated[
        str, typer.Option("--policies", metavar="P1,P2,...", help="Online policies to run")
    ] = "drf,tsf,choosy,hdrf,fair",
    sizes: Annotated[
        str, typer.Option("--sizes", metavar="N1,N2,...", help="Jobs per run")
    ] = "200,800,2000,4500",
    machines: Annotated[int, typer.Option("--machines", min=1, help="Machines")] = 1000,
    arrival: Annotated[
        float,
        typer.Option(
            "--arrival", min=0.001, help="Mean seconds between jobs (0.25 saturates the cluster)"
        ),
    ] = 12.0,
    as_json: JsonOption = False,
) -> None:
    """Simulated tasks per CPU second as the workload grows from 200 to 4,500 jobs (TSF
    section VI's scale) on 1,000 machines: constrained jobs (Google-like, about a class per
    job) for drf, tsf and choosy, in queues for hdrf, in ClusterQueues for kueue, with input
    data and delay scheduling for fair. The ratio of the smallest run's rate to the largest's
    is 1.0 when the cost per task does not grow with the work (target: at most 1.5)."""
    from fairshare.bench import scaling  # noqa: PLC0415
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415

    names = parse_names(policies, "--policies", ONLINE_POLICIES, "online policy")
    counts = parse_sizes(sizes)
    by_policy: dict[str, list[scaling.ScalingRun]] = {name: [] for name in names}
    with bench_progress() as progress:
        step = progress.add_task("scaling", total=len(names) * len(counts))
        for name in names:
            for count in counts:
                progress.update(step, description=f"{name}: {count:,} jobs")
                by_policy[name].append(scaling.run_point_in_child(name, count, machines, arrival))
                progress.update(step, advance=1)
    if as_json:
        dump_json(
            {
                "benchmark": "scaling",
                "machines": machines,
                "arrival": arrival,
                "policies": [
                    {
                        "policy": name,
                        "runs": [scaling.as_dict(run) for run in runs],
                        "ratio": round(scaling.ratio(runs), 3),
                    }
                    for name, runs in by_policy.items()
                ],
            }
        )
        return
    table = Table(
        title=f"throughput as the work grows: {machines:,} machines, a job every {arrival:g} s",
        title_justify="left",
        caption="tasks per CPU second of the simulation at each size (--json: tasks and CPU "
        "seconds); ratio: the smallest run's rate over the largest's (target: at most 1.5)",
        caption_justify="left",
    )
    table.add_column("policy")
    for count in counts:
        table.add_column(f"{count:,} jobs", justify="right")
    table.add_column("ratio", justify="right")
    for name, runs in by_policy.items():
        table.add_row(
            name,
            *(f"{run.rate:,.0f}" for run in runs),
            f"{scaling.ratio(runs):.2f}",
        )
    Console(markup=False, highlight=False).print(table)


def parse_sizes(text: str) -> list[int]:
    """The ``--sizes`` list: positive whole numbers of jobs, comma-separated.

    Parameters
    ----------
    text : str
        As given.

    Returns
    -------
    list of int

    Raises
    ------
    InputError
        An empty list or an item that is not a positive whole number.

    Examples
    --------
    >>> parse_sizes("200, 4500")
    [200, 4500]
    """
    items = [item.strip() for item in text.split(",")]
    if not items or any(not item.isdigit() or int(item) < 1 for item in items):
        raise InputError(
            "command line",
            "--sizes",
            f"must be positive whole numbers of jobs separated by commas, got {text!r}",
        )
    return [int(item) for item in items]


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
    import tempfile  # noqa: PLC0415

    from fairshare.allocation.document import exact  # noqa: PLC0415
    from fairshare.bench import solve  # noqa: PLC0415

    chosen = (
        parse_names(only, "--only", solve.CASES, "benchmark case") if only else list(solve.CASES)
    )
    cases = [solve.CASES[name] for name in chosen]
    documents: list[dict[str, Any]] = []
    total = sum(1 + len(c.in_process) + len(c.end_to_end) for c in cases)
    with tempfile.TemporaryDirectory() as tmp, bench_progress() as progress:
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
                        "tasks": exact(float(allocation.tasks.sum())),
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
        dump_json({"benchmark": "solve", "cases": documents})
        return
    console = Console(markup=False, highlight=False)
    for doc in documents:
        table = Table(
            title=f"{doc['case']}: {doc['users']:,} users, {doc['queues']:,} queues, "
            f"{doc['machines']:,} machines ({doc['machine_types']:,} types)",
            title_justify="left",
            caption=f"medians of {doc['repeat']} runs; load {doc['load_seconds']:.2f} s, "
            f"machine types {doc['machine_types_seconds']:.2f} s; "
            f"{pct(doc['narrow_users'])} of users can use under 20% of the machines",
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
                fmt(row["lp_solves"]),
            )
        for row in doc["end_to_end"]:
            table.add_row(
                "end to end", row["policy"], "json", f"{row['median_seconds']:.3f} s", "-"
            )
        console.print(table)
