"""``fairshare check`` (SPEC section 5): one property of one policy, or the matrix of all."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from fairshare import __version__
from fairshare.cli.app import InputError, app, flag, flags_in
from fairshare.cli.names import PROPERTY_NAMES, SOLVER_POLICY_NAMES, listed
from fairshare.cli.runs import simulation_options
from fairshare.sim.option_table import TRACE, USAGE_HALF_LIFE

# Imported by the command that uses them, so that `fairshare simulate` does not load them.
if TYPE_CHECKING:
    from fairshare.api import ChangeCheck
    from fairshare.fairness import CheckResult


@app.command("check")
@simulation_options(TRACE, USAGE_HALF_LIFE, before="as_json")
def check_command(
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy",
            "-p",
            help=f"Solver policy to check: {listed(SOLVER_POLICY_NAMES)} (with --before/--after: "
            "the online policy of both runs)",
        ),
    ] = None,
    property_name: Annotated[
        str | None,
        typer.Option(
            "--property",
            help=f"Property to search a violation of: {listed(PROPERTY_NAMES)}",
        ),
    ] = None,
    trials: Annotated[
        int | None, typer.Option("--trials", min=1, help="Random scenarios to try")
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the scenario generator (>= 0)")
    ] = 0,
    before: Annotated[
        str | None,
        typer.Option(
            "--before", metavar="BEFORE", help="Gate a configuration change: the current scenario"
        ),
    ] = None,
    after: Annotated[
        str | None,
        typer.Option("--after", metavar="AFTER", help="Gate a configuration change: the new one"),
    ] = None,
    max_wait_increase: Annotated[
        float,
        typer.Option(
            "--max-wait-increase",
            metavar="F",
            help="With --before/--after: fail when a tenant's p95 wait grows by more than "
            "this fraction",
        ),
    ] = 0.2,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (see docs/commands.md#check)")
    ] = False,
    check_all: Annotated[
        bool, typer.Option("--all", help="Every solver policy against every property")
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="With --all: print a Markdown table")
    ] = False,
    fail_on_violation: Annotated[
        bool,
        typer.Option(
            "--fail-on-violation",
            help="Exit 1 when a violation is found, for scripts (by default check exits 0 "
            "whether or not the property holds)",
        ),
    ] = False,
    **options: Any,
) -> None:
    """Search random scenarios for a violation of a fairness property by a policy; or, with
    --before and --after, gate a configuration change: exit 1 when a property that held
    fails, or a tenant's p95 wait grows by more than --max-wait-increase. See
    docs/commands.md#check."""
    if before is not None or after is not None:
        _gate(before, after, policy, seed, max_wait_increase, as_json, options)
        return
    for option in (TRACE, USAGE_HALF_LIFE):
        if options[option.parameter] is not None:
            raise InputError(
                "command line", option.flag, "applies to the gate: give --before and --after"
            )
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
            sys.stdout.write(json.dumps(_versioned(result.to_dict()), indent=2) + "\n")
        else:
            _print_check(result, Console(markup=False, highlight=False))
        _exit_on_violation([result], fail_on_violation)
        return
    results = []
    pairs = [(name, prop) for name in chosen_policies for prop in chosen_properties]
    with _progress(len(pairs)) as advance:
        for name, prop in pairs:
            advance(f"{name} / {prop}")
            results.append(check(name, prop, trials=trials, seed=seed))
    if as_json:
        documents = [_versioned(r.to_dict()) for r in results]
        sys.stdout.write(json.dumps(documents, indent=2) + "\n")
    elif markdown:
        sys.stdout.write(_markdown_matrix(results, chosen_policies, chosen_properties))
    else:
        _print_matrix(results, chosen_policies, chosen_properties)
    _exit_on_violation(results, fail_on_violation)


def _versioned(document: dict[str, Any]) -> dict[str, Any]:
    """A check's JSON document with ``fairshare_version``, the build that checked."""
    return {**document, "fairshare_version": __version__}


def _exit_on_violation(results: list[CheckResult], fail_on_violation: bool) -> None:
    """``--fail-on-violation``: exit 1 (after the results are printed) when a check found a
    violation."""
    if fail_on_violation and any(r.counterexample is not None for r in results):
        raise typer.Exit(1)


@contextmanager
def _progress(total: int) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr for ``check --all`` (a minute or more with the defaults):
    checks done of ``total``, the one running and the time so far. Yields the function to
    call as each check starts; the bar is removed when the checks end, and a stderr that is
    not a terminal gets nothing (rich draws only on a terminal)."""
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    bar = Progress(
        TextColumn("checking {task.fields[check]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(markup=False, stderr=True, highlight=False),
        transient=True,
    )
    task = bar.add_task("check", total=total, check="")
    started = [0]

    def advance(label: str) -> None:
        bar.update(task, completed=started[0], check=label)
        started[0] += 1

    with bar:
        yield advance


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


def _gate(
    before: str | None,
    after: str | None,
    policy: str | None,
    seed: int,
    max_wait_increase: float,
    as_json: bool,
    options: dict[str, Any],
) -> None:
    """``check --before BEFORE --after AFTER`` (SPEC section 8.4): exit 1 when the change
    fails the gate (:func:`fairshare.api.check_change`), 0 when it passes."""
    from fairshare.api import check_change  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415
    from fairshare.sim.options import OptionError, SimOptions  # noqa: PLC0415

    if before is None or after is None:
        missing = "--after" if after is None else "--before"
        raise InputError("command line", missing, "the gate needs both --before and --after")
    if policy is None:
        raise InputError(before, "--policy", "name the online policy of both runs")
    try:
        sim_options = SimOptions(usage_half_life=options[USAGE_HALF_LIFE.parameter])
    except OptionError as err:
        raise InputError(before, USAGE_HALF_LIFE.flag, flags_in(err.what)) from None
    trace = options[TRACE.parameter]
    if trace is not None:
        from fairshare.workload.traces import parse_trace_argument  # noqa: PLC0415

        trace = parse_trace_argument(trace, "--trace")
    try:
        result = check_change(
            before,
            after,
            policy=policy,
            trace=trace,
            seed=seed,
            options=sim_options,
            max_wait_increase=max_wait_increase,
        )
    except PolicyError as err:
        raise InputError(before, flag(err.where), flags_in(err.what)) from None
    for line in result.whatif.warnings:  # the trace's skipped records, on stderr
        sys.stderr.write(line + "\n")
    if as_json:
        from fairshare.metrics import dumps_json  # noqa: PLC0415

        sys.stdout.write(dumps_json(_versioned(result.to_dict())))
    else:
        _print_gate(result)
    if not result.passed:
        raise typer.Exit(1)


def _print_gate(result: ChangeCheck) -> None:
    """One line per failure (``FAIL wait USER: ...``, ``FAIL property PROP: ...`` with its
    counterexample), then one line per property and the verdict."""
    console = Console(markup=False, highlight=False, soft_wrap=True)
    for failure in result.failures:
        if failure["kind"] == "wait":
            console.print(f"FAIL wait {failure['user']}: {failure['detail']}", markup=False)
            continue
        who = f" ({failure['user']})" if failure["user"] else ""
        console.print(
            f"FAIL property {failure['property']}{who}: {failure['detail']}", markup=False
        )
        counterexample = failure["counterexample"]
        if isinstance(counterexample, dict):
            console.print(
                "minimal counterexample (re-run with fairshare solve --policy "
                f"{counterexample['solver']}): {counterexample['explanation']}",
                markup=False,
            )
            console.print_json(json.dumps(counterexample["scenario"]))
    for prop in result.properties:
        console.print(
            f"property {prop['property']} under {prop['solver']}: {prop['before']} before, "
            f"{prop['after']} after",
            markup=False,
        )
    worse = sum(1 for t in result.tenants if isinstance(t["growth"], float) and t["growth"] > 0)
    verdict = "passed" if result.passed else f"FAILED ({len(result.failures)} failures)"
    console.print(
        f"gate {verdict}: {result.whatif.before} -> {result.whatif.after} under {result.policy}, "
        f"{len(result.tenants)} tenants, {worse} wait longer at p95, at most "
        f"{100 * result.max_wait_increase:g}% allowed",
        markup=False,
    )
