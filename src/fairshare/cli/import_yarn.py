"""``fairshare import yarn-fair`` and ``fairshare import yarn-capacity``: Hadoop YARN's Fair
Scheduler allocation file and Capacity Scheduler configuration as scenarios (SPEC section 8.1;
:mod:`fairshare.workload.imports.yarn_fair`, :mod:`fairshare.workload.imports.yarn_capacity`)."""

from __future__ import annotations

from typing import Annotated

import typer

from fairshare.cli.importing import import_app, write_scenario

_OUT = typer.Option("--out", "-o", metavar="SCENARIO", help="Write it here")
_MACHINES = typer.Option(
    "--machines",
    metavar="FILE",
    help="A scenario whose machines to use (YARN's files list no nodes; else placeholder "
    "NodeManagers of 8192 MiB and 8 vcores)",
)


@import_app.command("yarn-fair")
def import_yarn_fair_command(
    path: Annotated[
        str, typer.Argument(metavar="PATH", help="The Fair Scheduler's fair-scheduler.xml")
    ],
    out: Annotated[str | None, _OUT] = None,
    machines: Annotated[str | None, _MACHINES] = None,
) -> None:
    """Convert a Fair Scheduler allocation file into a scenario: nested queues become queues
    (`root.a.b` is `a/b`) with their `weight`, `minResources` as `quota` and `maxResources`
    as its cap, and each leaf queue one user named `root.a.b` (docs/import/yarn-fair.md).
    Simulate it with the `--policy` and `--preemption` the warnings name."""
    from fairshare.workload.imports.yarn_fair import import_yarn_fair  # noqa: PLC0415

    result = import_yarn_fair(path, machines=machines)
    write_scenario(result.scenario, result.warnings, out)


@import_app.command("yarn-capacity")
def import_yarn_capacity_command(
    path: Annotated[
        str, typer.Argument(metavar="PATH", help="The Capacity Scheduler's capacity-scheduler.xml")
    ],
    out: Annotated[str | None, _OUT] = None,
    machines: Annotated[str | None, _MACHINES] = None,
) -> None:
    """Convert a Capacity Scheduler configuration into a scenario for `--policy capacity`:
    `yarn.scheduler.capacity.<path>.queues` become queues, `capacity` their weight and
    quota, `maximum-capacity` their cap, and each leaf queue one user named `root.a.b`
    (docs/import/yarn-capacity.md)."""
    from fairshare.workload.imports.yarn_capacity import import_yarn_capacity  # noqa: PLC0415

    result = import_yarn_capacity(path, machines=machines)
    write_scenario(result.scenario, result.warnings, out)
