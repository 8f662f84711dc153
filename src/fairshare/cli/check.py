"""``fairshare check`` (SPEC section 5): one property of one policy, or the matrix of all."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from fairshare.cli.app import InputError, app

# Imported by the command that uses them, so that `fairshare simulate` does not load them.
if TYPE_CHECKING:
    from fairshare.fairness import CheckResult


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
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the scenario generator (>= 0)")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (SPEC section 5)")] = False,
    check_all: Annotated[
        bool, typer.Option("--all", help="Every solver policy against every property")
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="With --all: print a Markdown table")
    ] = False,
) -> None:
    """Search random scenarios for a violation of a fairness property by a policy."""
    from fairshare.fairness import PROPERTIES, check  # noqa: PLC0415
    from fairshare.solvers import SOLVER_POLICIES  # noqa: PLC0415

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
            sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        else:
            _print_check(result, Console(markup=False, highlight=False))
        return
    results = []
    console = Console(markup=False, stderr=True, highlight=False)
    with console.status("checking") as status:
        for name in chosen_policies:
            for prop in chosen_properties:
                status.update(f"checking {name} for {prop}")
                results.append(check(name, prop, trials=trials, seed=seed))
    if as_json:
        sys.stdout.write(json.dumps([r.to_dict() for r in results], indent=2) + "\n")
    elif markdown:
        sys.stdout.write(_markdown_matrix(results, chosen_policies, chosen_properties))
    else:
        _print_matrix(results, chosen_policies, chosen_properties)


def _print_check(result: CheckResult, console: Console) -> None:
    """One check's verdict, its trials and seed, and a counterexample to re-run with ``solve``."""
    if not result.applicable:
        console.print(
            f"{result.property} does not apply to {result.policy} (n/a): the papers define it "
            "for another kind of policy",
            markup=False,
        )
        return
    verdict = {"holds": "holds", "violated": "is violated", "inconclusive": "is undecided"}[
        result.verdict()
    ]
    console.print(
        f"{result.property} {verdict} for {result.policy} "
        f"({result.trials} trials{_inconclusive_note(result)}, seed {result.seed}, "
        f"{result.seconds:.2f} s)",
        markup=False,
    )
    if result.counterexample is not None:
        console.print(result.counterexample.explanation, markup=False)
        # A scenario of jobs is a simulated run's (quota-restored), the others solve's.
        command = "simulate" if "jobs" in result.counterexample.scenario else "solve"
        console.print(f"counterexample (re-run with fairshare {command}):", markup=False)
        console.print_json(json.dumps(result.counterexample.scenario))


def _inconclusive_note(result: CheckResult) -> str:
    """``, 3 inconclusive``: trials whose solver or LP failed (never counted as holding)."""
    return f", {result.inconclusive} inconclusive" if result.inconclusive else ""


def _cell(result: CheckResult) -> str:
    """A check's cell of the ``--all`` matrix."""
    if not result.applicable:
        return "n/a"
    if result.verdict() == "inconclusive":
        return f"inconclusive ({result.inconclusive} of {result.trials})"
    if result.holds:
        return f"yes ({result.inconclusive} inconclusive)" if result.inconclusive else "yes"
    return f"no (trial {result.trials}, {result.seconds:.1f} s)"


def _legend(results: list[CheckResult]) -> str:
    """The line under the matrix: the checks' count and time, and what each cell means."""
    total = sum(r.seconds for r in results)
    return (
        f"{len(results)} checks in {total:.1f} s (default trials, seed {results[0].seed}); "
        "yes: no violation found; no: violated, found at that trial; n/a: not defined for "
        "the policy; inconclusive: trials a solver or LP could not decide (not counted as yes)"
    )


def _violations(results: list[CheckResult]) -> list[str]:
    """One line per violation found: policy, property and the counterexample's explanation."""
    return [
        f"{r.policy} / {r.property}: {r.counterexample.explanation}"
        for r in results
        if r.counterexample is not None
    ]


def _print_matrix(results: list[CheckResult], policies: list[str], properties: list[str]) -> None:
    """The ``--all`` matrix as a table, its legend and the violations found."""
    table = Table(title="fairness properties by policy", title_justify="left")
    table.add_column("policy")
    for prop in properties:
        table.add_column(prop, justify="center")
    by_key = {(r.policy, r.property): r for r in results}
    for policy in policies:
        table.add_row(policy, *[_cell(by_key[policy, prop]) for prop in properties])
    console = Console(markup=False, highlight=False)
    console.print(table)
    console.print(_legend(results), markup=False)
    for line in _violations(results):
        console.print(f"- {line}", markup=False)


def _markdown_matrix(results: list[CheckResult], policies: list[str], properties: list[str]) -> str:
    """The ``--all`` matrix as a Markdown table (``--markdown``, for the docs), legend and
    violations after it."""
    by_key = {(r.policy, r.property): r for r in results}
    lines = ["| policy | " + " | ".join(properties) + " |", "| --- |" + " --- |" * len(properties)]
    for policy in policies:
        lines.append(
            f"| {policy} | " + " | ".join(_cell(by_key[policy, prop]) for prop in properties) + " |"
        )
    lines += ["", _legend(results), ""]
    lines += [f"- {line}" for line in _violations(results)]
    return "\n".join(lines) + "\n"
