"""``fairshare whatif`` (SPEC section 8.4): the same jobs under two configurations, who waits
longer. The library's :func:`fairshare.api.whatif`, its files written by
:mod:`fairshare.report.whatif` through ``--out`` (:func:`fairshare.cli.runs.output_dir`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from fairshare.cli.app import InputError, app, flag, flags_in, fmt, pct
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
    typer.Option("--policy", "-p", help="Online policy of both runs (see `fairshare policies`)"),
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
) -> WhatIf:
    """:func:`fairshare.api.whatif` with a progress bar per run; its input problems become
    :class:`InputError` (exit 2) naming the flag."""
    from fairshare.api import whatif  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415

    counted = settings.trace is None and bool(settings.scenario.jobs)
    total = len(settings.scenario.jobs) if counted else None
    bars: list[_Progress] = []

    def observe(label: str, seed: int, jobs: Iterator[Job]) -> Iterator[Job]:
        bar = _Progress(f"{label} (seed {seed})", total)
        bars.append(bar)
        try:
            yield from bar.wrap(jobs)
        finally:
            bar.close()

    policy, before_policy, after_policy = policies
    try:
        return whatif(
            settings.scenario,
            after,
            policy=policy,
            before_policy=before_policy,
            after_policy=after_policy,
            seed=settings.seed,
            seeds=seeds,
            trace=settings.trace,
            options=settings.options,
            observe=observe,
        )
    except PolicyError as err:  # includes SimulationError
        raise InputError(settings.source, flag(err.where), flags_in(err.what)) from None
    finally:
        for bar in bars:
            bar.close()


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
    force: ForceOption = False,
    **options: Any,
) -> None:
    """Replay the same jobs (the trace's, else BEFORE's) under two configurations and write
    tenants.csv (who loses most first), summary.json, report.html, and each run's own files
    in DIR/before/ and DIR/after/."""
    from fairshare.api import whatif_policies  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415
    from fairshare.report.whatif import WHATIF_FILES  # noqa: PLC0415

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
        result = run_whatif(settings, after, (policy, before_policy, after_policy), seeds)

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
