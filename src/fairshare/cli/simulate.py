"""``fairshare simulate`` and ``fairshare compare`` (SPEC section 3)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from fairshare.cli.app import InputError, app, fmt, pct
from fairshare.cli.names import ONLINE_HELP, ONLINE_POLICY_NAMES, REFERENCE_POLICY_NAMES, listed
from fairshare.cli.runs import (
    COMPARE_FILES,
    INPUT_FILES,
    RUN_FILES,
    ForceOption,
    LoadCheck,
    OptionalScenarioArgument,
    OutOption,
    ProgressOption,
    QuietOption,
    RunSettings,
    output_dir,
    progress_shown,
    run_policy,
    run_settings,
    simulation_options,
    validate_comparison,
    validate_policy,
    warn,
    warn_stranded,
    write_run_inputs,
)

# Imported by the commands that use them, so that `fairshare solve` does not load them.
if TYPE_CHECKING:
    from fairshare.runlog import RunLog


def _summary_rows(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The headline numbers of a ``summary.json`` document, for people."""
    locality = doc.get("locality") or {}
    utilization = doc.get("utilization") or {}
    rows = [
        ("policy", str(doc["policy"])),
        ("seed", fmt(doc["seed"])),
        ("jobs finished", f"{fmt(doc.get('finished_jobs'))} of {fmt(doc['jobs'])}"),
        ("jobs that can never run", fmt(doc.get("unrunnable_jobs"))),
        ("tasks", fmt(doc["tasks"])),
        ("makespan", fmt(doc["makespan"], " s")),
        ("mean response time", fmt(doc["mean_response_time"], " s")),
        ("p50 response time", fmt(doc["p50_response_time"], " s")),
        ("p95 response time", fmt(doc["p95_response_time"], " s")),
        ("mean slowdown", fmt(doc["mean_slowdown"])),
        ("mean bounded slowdown", fmt(doc.get("mean_bounded_slowdown"))),
        (
            "Jain index slowdown / share",
            f"{fmt(doc.get('jain_slowdown'))} / {fmt(doc.get('jain_share'))}",
        ),
        (
            "locality node / rack / off-rack",
            " / ".join(pct(locality.get(k)) for k in ("node", "rack", "off_rack")),
        ),
    ]
    rows.extend((f"utilization {name}", pct(value)) for name, value in utilization.items())
    rows.extend(
        [
            ("preempted tasks", fmt(doc["preempted_tasks"])),
            ("events", fmt(doc["events"])),
        ]
    )
    return rows


@app.command("simulate")
@simulation_options(before="force")
def simulate_command(
    policy: Annotated[str, typer.Option("--policy", "-p", help=ONLINE_HELP)],
    out: OutOption,
    scenario_path: OptionalScenarioArgument = None,
    force: ForceOption = False,
    quiet: QuietOption = False,
    progress: ProgressOption = False,
    **options: Any,
) -> None:
    """Replay the scenario's jobs (or workload, or a trace) under an online policy and write
    summary.json, jobs.csv, timeline.csv, tasks.parquet and report.html to DIR, with the
    run's inputs (run.json, scenario.json) for `fairshare explain`."""
    from fairshare.report import write_outputs  # noqa: PLC0415

    settings = run_settings(scenario_path, options)
    validate_policy(policy, settings)
    with output_dir(out, "simulate", [*RUN_FILES, *INPUT_FILES], force) as target:
        check = LoadCheck(settings)
        log = run_policy(settings, policy, progress_shown(quiet, progress), check)

        def write(path: Path) -> dict[str, object]:
            doc = write_outputs(log, path)
            write_run_inputs(settings, policy, options, path)
            return doc

        doc = target.commit(write)
    warn(check.lines())
    warn_stranded(settings.source, log, check.names())
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
    # queues.csv is written only when jobs name queues (fairshare.metrics.tables).
    queues_csv = ["queues.csv"] if Path(out, "queues.csv").is_file() else []
    written = [*RUN_FILES, *queues_csv, *INPUT_FILES]
    console.print(f"wrote {out}: {', '.join(written)}", markup=False)


@app.command("compare")
@simulation_options(before="force")
def compare_command(
    policies: Annotated[
        str,
        typer.Option(
            "--policies",
            metavar="P1,P2,...",
            help="Policies to run on the same workload, each as --policy takes it: "
            + listed((*ONLINE_POLICY_NAMES, *REFERENCE_POLICY_NAMES)),
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
    scenario_path: OptionalScenarioArgument = None,
    force: ForceOption = False,
    quiet: QuietOption = False,
    progress: ProgressOption = False,
    **options: Any,
) -> None:
    """Run several policies on the same jobs (same seed: same jobs and durations) and write
    compare.json, compare.csv, compare.html and each run's files in DIR/POLICY/, with its
    inputs for `fairshare explain JOB --run DIR/POLICY`."""
    from fairshare.report import write_compare, write_outputs  # noqa: PLC0415

    settings = run_settings(scenario_path, options)
    names = [p.strip() for p in policies.split(",")]
    if not policies.strip() or any(not n for n in names):
        raise InputError(
            settings.source, "--policies", f"expected a comma-separated list, got {policies!r}"
        )
    for name in names:
        validate_policy(name, settings, "policies")
    validate_comparison(names, reference, settings)
    run_files = (*RUN_FILES, *INPUT_FILES)
    files = [*COMPARE_FILES, *(f"{name}/{file}" for name in names for file in run_files)]
    with output_dir(out, "compare", files, force) as target:
        check = LoadCheck(settings)  # the first run reads the jobs through it
        show = progress_shown(quiet, progress)
        logs = [
            run_policy(settings, name, show, check if i == 0 else None)
            for i, name in enumerate(names)
        ]

        def write(path: Path) -> list[dict[str, object]]:
            docs = [write_outputs(log, path / name) for name, log in zip(names, logs, strict=True)]
            for name in names:  # each run's inputs, for `fairshare explain JOB --run DIR/P`
                write_run_inputs(settings, name, options, path / name)
            write_compare(logs, path, reference if reference is not None else 0)
            return docs

        docs = target.commit(write)
    warn(check.lines())
    for log in logs:
        warn_stranded(settings.source, log, check.names())
    _print_compare(settings, names, docs, logs, reference or names[0], out)


def _print_compare(
    settings: RunSettings,
    names: list[str],
    docs: list[dict[str, object]],
    logs: list[RunLog],
    reference: str,
    out: str,
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
        f"wrote {out}: {', '.join(COMPARE_FILES)} and {', '.join(n + '/' for n in names)}",
        markup=False,
    )
