"""``fairshare import slurm``: Slurm's associations (``sacctmgr``) and ``slurm.conf`` as a
scenario (SPEC section 8.1; :mod:`fairshare.workload.imports.slurm`)."""

from __future__ import annotations

from typing import Annotated

import typer

from fairshare.cli.importing import import_app, write_scenario


@import_app.command("slurm")
def import_slurm_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH...",
            help="The output of `sacctmgr -P show assoc "
            "format=Cluster,Account,User,Share,ParentName`, and optionally a slurm.conf",
        ),
    ],
    out: Annotated[
        str | None, typer.Option("--out", "-o", metavar="SCENARIO", help="Write it here")
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option("--cluster", help="The cluster to keep when the listing has several"),
    ] = None,
    machines: Annotated[
        str | None,
        typer.Option(
            "--machines",
            metavar="FILE",
            help="A scenario whose machines to use (when no slurm.conf lists nodes)",
        ),
    ] = None,
) -> None:
    """Convert Slurm's association tree into a scenario for `--policy slurm-fairtree`:
    accounts become queues (path from the root account down), user associations users
    (`USER`, or `ACCOUNT/USER` for a user under several accounts), each weighted by its
    `Share`; slurm.conf's `PriorityDecayHalfLife` becomes `usage_half_life` and its nodes the
    machines (else `--machines FILE`, else a placeholder machine to replace)."""
    from fairshare.workload.imports.slurm import import_slurm  # noqa: PLC0415

    result = import_slurm(paths, cluster=cluster, machines=machines)
    write_scenario(result.scenario, result.warnings, out)
