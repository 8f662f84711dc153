"""``fairshare solve`` (SPEC section 2) and ``fairshare policies``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from fairshare import __version__
from fairshare.cli.app import InputError, app, flag, flags_in
from fairshare.cli.names import SOLVER_HELP

# The solvers (HiGHS, SciPy) are imported by the commands that use them, so that `fairshare
# simulate` does not load them.
if TYPE_CHECKING:
    from fairshare.allocation import Allocation
    from fairshare.workload.model import Scenario


def _print_table(scenario: Scenario, allocation: Allocation, console: Console) -> None:
    """The allocation as two tables: per user, then per resource with its utilisation."""
    import numpy as np  # noqa: PLC0415

    from fairshare.solvers import SOLVER_POLICIES  # noqa: PLC0415

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
    scenario_path: Annotated[str, typer.Argument(metavar="SCENARIO", help="YAML or JSON scenario")],
    policy: Annotated[str, typer.Option("--policy", "-p", help=SOLVER_HELP)],
    integral: Annotated[
        bool, typer.Option("--integral", help="Whole tasks, maximal allocation")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the JSON document (see docs/commands.md#solve)")
    ] = False,
) -> None:
    """Compute the fair allocation of the scenario's users under a policy (offline, exact)."""
    from fairshare.allocation.document import allocation_document  # noqa: PLC0415
    from fairshare.solvers import (  # noqa: PLC0415
        SOLVER_POLICIES,
        InvalidRequest,
        SolverFailure,
        solve,
    )
    from fairshare.workload.loader import load_scenario  # noqa: PLC0415

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
        raise InputError(source, flag(err.where), flags_in(err.what)) from None
    except SolverFailure as err:
        raise InputError(source, f"policy {policy}", f"the solver failed: {err}") from None
    err_console = Console(markup=False, stderr=True, highlight=False, soft_wrap=True)
    for warning in allocation.warnings:
        err_console.print(f"warning: {source}: {warning}", markup=False)
    if as_json:
        # which build computed it, as Solution.to_dict says
        document = {**allocation_document(scenario, allocation), "fairshare_version": __version__}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        _print_table(scenario, allocation, Console(markup=False, highlight=False))


@app.command("policies")
def policies_command() -> None:
    """List the solver, online and reference policies with the paper section each implements."""
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415
    from fairshare.solvers import SOLVER_POLICIES  # noqa: PLC0415

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
