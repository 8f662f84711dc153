"""``fairshare import FORMAT PATH... [-o SCENARIO]`` (SPEC section 8.1): a production
scheduler's configuration as a scenario every command accepts, printed as YAML or written to
``-o``; each setting the model does not cover is one ``warning:`` line on stderr."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from fairshare.cli.app import InputError, app

import_app = typer.Typer(
    help="Convert a production scheduler's configuration into a scenario (SPEC section 8.1).",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(import_app, name="import")


@import_app.command("kueue")
def import_kueue(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH...",
            help="YAML or JSON of Kueue's ResourceFlavors, ClusterQueues, Cohorts, LocalQueues "
            "and Configuration (kubectl get ... -o yaml lists too)",
        ),
    ],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", metavar="SCENARIO", help="Write the scenario here"),
    ] = None,
    keep_flavors: Annotated[
        bool,
        typer.Option(
            "--keep-flavors", help="Keep each flavor of a resource apart, as resource NAME@FLAVOR"
        ),
    ] = False,
) -> None:
    """Convert Kueue's objects into a scenario: Cohorts and ClusterQueues become queues
    (path ``COHORT/.../CQ``) with their quotas, limits, weights and preemption settings,
    LocalQueues users ``NAMESPACE/NAME``, and each ResourceFlavor one machine holding its
    quota (docs/policies/kueue.md). Simulate it with ``--policy kueue`` after adding jobs
    whose ``user`` is a LocalQueue."""
    import yaml  # noqa: PLC0415

    from fairshare.workload.imports.kueue import read_kueue  # noqa: PLC0415

    done = read_kueue(paths, keep_flavors=keep_flavors)
    text = yaml.safe_dump(done.scenario, sort_keys=False, default_flow_style=None, width=100)
    for line in done.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(output, "file", f"cannot write ({err.strerror or err})") from None
