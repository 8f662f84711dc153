"""``fairshare whatif`` (SPEC section 8.4): the same jobs under two configurations, who waits
longer. The library's :func:`fairshare.api.whatif`, its files written by
:mod:`fairshare.report.whatif` through ``--out`` (:func:`fairshare.cli.runs.output_dir`)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from fairshare.cli.app import InputError, app, flag, flags_in, fmt, pct
from fairshare.cli.names import ONLINE_POLICY_NAMES, listed
from fairshare.cli.runs import (
    INPUT_FILES,
    RUN_FILES,
    ForceOption,
    OutOption,
    RunSettings,
    _Progress,
    output_dir,
    run_settings,
    simulation_options,
    unrunnable_lines,
    warn,
    warn_stranded,
    write_run_inputs,
)

if TYPE_CHECKING:
    from fairshare.api import WhatIf
    from fairshare.workload.model import Job, Scenario

BeforeArgument = Annotated[
    str, typer.Argument(metavar="BEFORE", help="The current configuration (scenario file)")
]
AfterArgument = Annotated[
    str,
    typer.Argument(
        metavar="AFTER", help="The changed configuration (may be BEFORE itself, with two policies)"
    ),
]
PolicyOption = Annotated[
    str | None,
    typer.Option(
        "--policy", "-p", help="Online policy of both runs: " + listed(ONLINE_POLICY_NAMES)
    ),
]
BeforePolicyOption = Annotated[
    str | None,
    typer.Option("--before-policy", metavar="P1", help="Policy of the BEFORE run, instead"),
]
AfterPolicyOption = Annotated[
    str | None,
    typer.Option("--after-policy", metavar="P2", help="Policy of the AFTER run, instead"),
]
SeedsOption = Annotated[
    int,
    typer.Option(
        "--seeds",
        min=1,
        metavar="N",
        help="Run seeds SEED .. SEED+N-1 and report means and 95% intervals",
    ),
]


def load_after(settings: RunSettings, after_path: str) -> Scenario:
    """AFTER, loaded as BEFORE was: a trace that lists machines gives them unless the scenario
    has them (SPEC section 3); the same file is loaded once."""
    from fairshare.workload.loader import load_scenario  # noqa: PLC0415

    if Path(after_path) == Path(settings.source):
        return settings.scenario
    machines_from = None
    if settings.trace is not None:
        from fairshare.workload.traces import machines_from_trace  # noqa: PLC0415

        machines_from = machines_from_trace(*settings.trace, after_path)
    return load_scenario(after_path, machines_from)


def run_whatif(
    settings: RunSettings,
    after: Scenario,
    policies: tuple[str | None, str | None, str | None],
    seeds: int,
    where: WhereRuns | None = None,
) -> WhatIf:
    """:func:`fairshare.api.whatif` with a progress bar per run, or on a sweep's executor
    (``where``); its input problems become :class:`InputError` (exit 2) naming the flag."""
    from fairshare.api import whatif  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415

    policy, before_policy, after_policy = policies
    arguments: dict[str, Any] = {
        "policy": policy,
        "before_policy": before_policy,
        "after_policy": after_policy,
        "seed": settings.seed,
        "seeds": seeds,
        "trace": settings.trace,
        "options": settings.options,
    }
    if where is not None and where.executor is not None:
        from fairshare.experiments import ExecutorError  # noqa: PLC0415
        from fairshare.experiments.whatif_runs import whatif_on  # noqa: PLC0415

        place = (
            f"on Ray at {where.ray_address}"
            if where.ray_address
            else "on a local Ray instance"
            if where.executor == "ray"
            else "in worker processes"
        )
        sys.stderr.write(f"making {2 * seeds} runs {place}\n")
        try:
            return whatif_on(
                where.executor,
                jobs=where.jobs,
                ray_address=where.ray_address,
                before=settings.scenario,
                after=after,
                **arguments,
            )
        except ExecutorError as err:
            raise InputError("command line", flag(err.where), flags_in(err.what)) from None
        except PolicyError as err:
            raise InputError(settings.source, flag(err.where), flags_in(err.what)) from None

    counted = settings.trace is None and bool(settings.scenario.jobs)
    horizon = max(job.submit for job in settings.scenario.jobs) or None if counted else None
    bars: list[_Progress] = []

    def observe(label: str, seed: int, jobs: Iterator[Job]) -> Iterator[Job]:
        bar = _Progress(f"{label} (seed {seed})", horizon, None, by_jobs=True)
        bars.append(bar)
        try:
            yield from bar.wrap(jobs)
        finally:
            bar.close()

    try:
        return whatif(settings.scenario, after, observe=observe, **arguments)
    except PolicyError as err:  # includes SimulationError
        raise InputError(settings.source, flag(err.where), flags_in(err.what)) from None
    finally:
        for bar in bars:
            bar.close()


JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="With --executor: runs at a time (default: every core; on Ray, the cluster's CPUs)",
    ),
]
ExecutorOption = Annotated[
    str | None,
    typer.Option(
        "--executor",
        metavar="local|ray",
        help="Make the runs in worker processes on this machine or as tasks on Ray, as a "
        "sweep does (default: one after the other in this process)",
    ),
]
RayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="ADDRESS",
        help="The Ray cluster for --executor ray (default: a local Ray instance)",
    ),
]


@dataclasses.dataclass(frozen=True)
class WhereRuns:
    """Where ``whatif`` makes its runs: ``executor`` None for this process, one after the
    other (with a progress bar per run), else a sweep's executor (``--executor``)."""

    executor: str | None = None
    jobs: int | None = None
    ray_address: str | None = None


@app.command("whatif")
@simulation_options(before="force")
def whatif_command(
    before_path: BeforeArgument,
    after_path: AfterArgument,
    out: OutOption,
    policy: PolicyOption = None,
    before_policy: BeforePolicyOption = None,
    after_policy: AfterPolicyOption = None,
    seeds: SeedsOption = 1,
    jobs: JobsOption = None,
    executor: ExecutorOption = None,
    ray_address: RayOption = None,
    force: ForceOption = False,
    **options: Any,
) -> None:
    """Replay the same jobs (the trace's, else BEFORE's) under two configurations and write
    tenants.csv (who loses most first), summary.json, report.html, and each run's own files
    in DIR/before/ and DIR/after/."""
    from fairshare.api import whatif_policies  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415
    from fairshare.report.whatif import WHATIF_FILES  # noqa: PLC0415

    if executor is not None and executor not in ("local", "ray"):
        raise InputError("command line", "--executor", f"expected local or ray, got {executor!r}")
    if ray_address is not None and executor != "ray":
        raise InputError("command line", "--ray", "is the cluster of --executor ray; add it")
    if jobs is not None and executor is None:
        raise InputError("command line", "--jobs", "needs --executor local or ray")
    where = WhereRuns(executor, jobs, ray_address)
    settings = run_settings(before_path, options)
    try:
        whatif_policies(policy, before_policy, after_policy)
    except PolicyError as err:
        raise InputError(settings.source, flag(err.where), flags_in(err.what)) from None
    after = load_after(settings, after_path)
    files = [
        *WHATIF_FILES,
        *(f"{run}/{file}" for run in ("before", "after") for file in (*RUN_FILES, *INPUT_FILES)),
    ]
    with output_dir(out, "whatif", files, force) as target:
        result = run_whatif(settings, after, (policy, before_policy, after_policy), seeds, where)

        def write(path: Path) -> dict[str, object]:
            doc = result.write(path)
            old, new = result.pairs[0]
            # Each run's inputs, so that `fairshare explain JOB --run DIR/after` works; AFTER
            # replayed BEFORE's jobs (unless a trace gave them): its scenario.json has them.
            write_run_inputs(settings, old.policy, options, path / "before")
            after_settings = dataclasses.replace(settings, scenario=after)
            jobs_from = settings.source if settings.trace is None else None
            write_run_inputs(after_settings, new.policy, options, path / "after", jobs_from)
            return doc

        doc = target.commit(write)
    warn([*result.warnings, *unrunnable_lines(list(result.unrunnable), settings)])
    unrunnable = frozenset(name for name, _ in result.unrunnable)
    for old, new in result.pairs[:1]:
        warn_stranded(settings.source, old.log, unrunnable)
        warn_stranded(after.source, new.log, unrunnable)
    _print_whatif(result, doc, out)


def _print_whatif(result: WhatIf, doc: dict[str, object], out: str) -> None:
    """The headline and the first rows of the tenants table."""
    frame = result.tenants_frame()
    policies = doc["policies"]
    assert isinstance(policies, dict)
    console = Console(markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"{doc['tenants_worse']} of {frame.height} tenants wait longer at p95, "
        f"{doc['tenants_better']} less ({result.before} under {policies['before']} → "
        f"{result.after} under {policies['after']})",
        markup=False,
    )
    table = Table(title_justify="left")
    shown = frame.head(10)
    # Tenant names are what a reader looks for: never cut (the numbers wrap first).
    longest = max((len(name) for name in shown["user"].to_list()), default=6)
    table.add_column("tenant", justify="left", no_wrap=True, min_width=min(longest, 40))
    for name in (
        "jobs",
        "p95 wait\nbefore",
        "p95 wait\nafter",
        "Δ p95\nwait",
        "share\nbefore",
        "share\nafter",
    ):
        table.add_column(name, justify="right", no_wrap=True)
    for row in shown.iter_rows(named=True):
        table.add_row(
            row["user"],
            fmt(row["jobs"]),
            _seconds(row["wait_p95_before"]),
            _seconds(row["wait_p95_after"]),
            _seconds(row["delta_wait_p95"]),
            pct(row["share_before"]),
            pct(row["share_after"]),
        )
    console.print(table)
    if frame.height > 10:
        console.print(f"... {frame.height - 10} more tenants in tenants.csv", markup=False)
    console.print(
        f"wrote {out}: tenants.csv, summary.json, report.html, before/, after/", markup=False
    )


def _seconds(value: float) -> str:
    """A wait for the summary table: whole seconds from 10 s up (the files keep every digit)."""
    return f"{value:,.0f} s" if abs(value) >= 10 else fmt(value, " s")
