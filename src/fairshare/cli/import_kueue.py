"""``fairshare import kueue``: Kueue's ResourceFlavors, ClusterQueues, Cohorts, LocalQueues and
Configuration as a scenario (SPEC section 8.1; :mod:`fairshare.workload.imports.kueue`)."""

from __future__ import annotations

from typing import Annotated

import typer

from fairshare.cli.importing import import_app, write_scenario


@import_app.command("kueue")
def import_kueue_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH...",
            help="YAML or JSON of Kueue's ResourceFlavors, ClusterQueues, Cohorts, LocalQueues "
            "and Configuration (kubectl get ... -o yaml lists too)",
        ),
    ],
    out: Annotated[
        str | None, typer.Option("--out", "-o", metavar="SCENARIO", help="Write it here")
    ] = None,
    keep_flavors: Annotated[
        bool,
        typer.Option(
            "--keep-flavors", help="Keep each flavor of a resource apart, as resource NAME@FLAVOR"
        ),
    ] = False,
) -> None:
    """Convert Kueue's objects into a scenario: Cohorts and ClusterQueues become queues
    (path `COHORT/.../CQ`) with their quotas, limits, weights and preemption settings,
    LocalQueues users `NAMESPACE/NAME`, and each ResourceFlavor one machine holding its
    quota (docs/import/kueue.md). Simulate it with `--policy kueue` after adding jobs
    whose `user` is a LocalQueue."""
    from fairshare.workload.imports.kueue import read_kueue  # noqa: PLC0415

    done = read_kueue(paths, keep_flavors=keep_flavors)
    write_scenario(done.scenario, [f"warning: {line}" for line in done.warnings], out)
