"""The ``fairshare`` command line (SPEC sections 2-5).

Input errors never show a traceback: they print one line ``error: FILE: WHERE: WHAT`` on stderr
and exit with code 2 (SPEC section 4). Exit code 1 is reserved for bugs in fairshare.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from fairshare.allocation import Allocation
from fairshare.fairness import PROPERTIES, CheckResult, check
from fairshare.solvers import SOLVER_POLICIES, InvalidRequest, SolverFailure, UnknownPolicy, solve
from fairshare.workload.loader import ScenarioError, load_scenario
from fairshare.workload.model import Scenario

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
    err_console = Console(stderr=True, highlight=False, soft_wrap=True)
    for warning in allocation.warnings:
        err_console.print(f"warning: {source}: {warning}", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(allocation_document(scenario, allocation), indent=2) + "\n")
    else:
        _print_table(scenario, allocation, Console(highlight=False))


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
    seed: Annotated[int, typer.Option("--seed", help="Seed of the scenario generator")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (SPEC section 5)")] = False,
    check_all: Annotated[
        bool, typer.Option("--all", help="Every solver policy against every property")
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="With --all: print a Markdown table")
    ] = False,
) -> None:
    """Search random scenarios for a violation of a fairness property by a policy."""
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
            _print_check(result, Console(highlight=False))
        return
    results = []
    console = Console(stderr=True, highlight=False)
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
    return "yes" if result.holds else f"no ({result.trials})"


def _print_matrix(results: list[CheckResult], policies: list[str], properties: list[str]) -> None:
    table = Table(
        title="fairness properties (yes: no violation found; no (trial): violated)",
        title_justify="left",
    )
    table.add_column("policy")
    for prop in properties:
        table.add_column(prop, justify="center")
    by_key = {(r.policy, r.property): r for r in results}
    for policy in policies:
        table.add_row(policy, *[_cell(by_key[policy, prop]) for prop in properties])
    console = Console(highlight=False)
    console.print(table)
    total = sum(r.seconds for r in results)
    console.print(f"{len(results)} checks in {total:.1f} s", markup=False)


def _markdown_matrix(results: list[CheckResult], policies: list[str], properties: list[str]) -> str:
    by_key = {(r.policy, r.property): r for r in results}
    lines = ["| policy | " + " | ".join(properties) + " |", "| --- |" + " --- |" * len(properties)]
    for policy in policies:
        lines.append(
            f"| {policy} | " + " | ".join(_cell(by_key[policy, prop]) for prop in properties) + " |"
        )
    return "\n".join(lines) + "\n"


@app.command("policies")
def policies_command() -> None:
    """List the solver policies with the paper section each implements."""
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
    Console(highlight=False).print(table)


def _fail(message: str) -> NoReturn:
    sys.stderr.write(message.rstrip("\n").replace("\n", " ") + "\n")
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``fairshare`` console script."""
    command = typer.main.get_command(app)
    try:
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
