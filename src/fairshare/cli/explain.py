"""``fairshare explain JOB --run DIR [--at T] [--json]`` (SPEC section 8.5): why a job of a
recorded simulation is not running at time T; without ``--run``, ``fairshare explain ID
--server URL`` (or ``FAIRSHARE_SERVER``) asks the live service about its job ID now
(``GET /v1/jobs/{id}/explain``, :func:`fairshare.cli.live.explain_live`).

The run's inputs are those ``simulate`` recorded in DIR (``run.json``, ``scenario.json``;
:func:`fairshare.cli.runs.write_run_inputs`). They run again, deterministically, with the
jobs submitted after T left out: up to T the run is the recorded one, and at T (after every
event at or before T and its decision round) the engine lets the explanation read the
policy (:func:`fairshare.sim.engine.simulate`'s ``at``) through
:func:`fairshare.policies.explain.explain`, the function the live service calls with its
own scheduler. The same run then goes on without new arrivals, and the job's first start in
it is ``estimated_start`` (null when it never starts): one run, no longer than the recorded
one.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fairshare.cli.app import InputError, app, flag, flags_in

if TYPE_CHECKING:
    from fairshare.policies import Policy


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            str(path.parent),
            "--run",
            f"holds no {path.name}: give the --out DIR of `fairshare simulate`, which records "
            f"{what} there",
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise InputError(str(path), "--run", f"unreadable: {err}") from None
    if not isinstance(document, dict):
        raise InputError(str(path), "--run", "expected a JSON object")
    return document


def _job_row(run_dir: Path, job: str) -> dict[str, str]:
    """The job's row of ``jobs.csv`` (exit 2 naming where the job names are)."""
    path = run_dir / "jobs.csv"
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if row.get("job") == job:
                    return row
    except FileNotFoundError:
        raise InputError(
            str(run_dir), "--run", "holds no jobs.csv: not a `fairshare simulate` output"
        ) from None
    raise InputError(
        str(path),
        "JOB",
        f"no job named {job!r} in this run; its jobs are the column 'job' of {path}",
    )


def _number(text: str | None) -> float | None:
    return None if text is None or text == "" else float(text)


@app.command("explain")
def explain_command(
    job: Annotated[
        str,
        typer.Argument(metavar="JOB", help="The job's name (jobs.csv's job), or a live job's id"),
    ],
    run: Annotated[
        str | None,
        typer.Option("--run", metavar="DIR", help="The --out DIR of a `fairshare simulate` run"),
    ] = None,
    at: Annotated[
        float | None,
        typer.Option(
            "--at", metavar="T", help="Simulated time in seconds (default: the job's submit)"
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the JSON document (see docs/explain.md)")
    ] = False,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            metavar="URL",
            help="The live service: explain job ID there now (default: $FAIRSHARE_SERVER)",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option("--token", metavar="TOKEN", help="Bearer token (visible in ps)"),
    ] = None,
    token_file: Annotated[
        str | None,
        typer.Option("--token-file", metavar="FILE", help="Read the bearer token from FILE"),
    ] = None,
    cacert: Annotated[
        str | None,
        typer.Option("--cacert", metavar="FILE", help="Trust the service's TLS certificate"),
    ] = None,
) -> None:
    """Why JOB is not running at time T of a simulated run (--run DIR), or why live job ID
    is not running now (--server URL, or $FAIRSHARE_SERVER, without --run): the reasons in
    the order they bind, who the policy serves first with their shares, and (simulated)
    when it would start if no new job arrived."""
    if run is None:
        if server is None and not os.environ.get("FAIRSHARE_SERVER"):
            raise InputError(
                "command line",
                "--run",
                "missing: give --run DIR (a simulated run) or --server URL (the live service)",
            )
        if at is not None:
            raise InputError("command line", "--at", "only for a simulated run (--run DIR)")
        from fairshare.cli.live import explain_live  # noqa: PLC0415

        live = explain_live(job, server, token, token_file, cacert)
        typer.echo(json.dumps(live) if as_json else _text(live))
        return
    run_dir = Path(run)
    inputs = _read_json(run_dir / "run.json", "the run's inputs (run.json)")
    row = _job_row(run_dir, job)
    submit = _number(row.get("submit"))
    assert submit is not None
    when = submit if at is None else at
    if not math.isfinite(when) or when < 0:
        raise InputError("command line", "--at", f"expected seconds >= 0, got {at!r}")
    document = explain_run(run_dir, inputs, job, when)
    if as_json:
        typer.echo(json.dumps(document))
        return
    typer.echo(_text(document))


def explain_run(run_dir: Path, inputs: dict[str, Any], job: str, at: float) -> dict[str, Any]:
    """SPEC section 8.5's document for ``job`` at time ``at`` of the run recorded in
    ``run_dir`` (see the module).

    Parameters
    ----------
    run_dir : Path
        A ``simulate`` output directory.
    inputs : dict
        Its ``run.json``.
    job : str
        The job's name.
    at : float
        The simulated time.

    Returns
    -------
    dict
        ``job``, ``at``, ``state``, ``reasons``, ``ahead``, ``estimated_start``.
    """
    from fairshare.api import replay, workload_of  # noqa: PLC0415
    from fairshare.cli.runs import RUN_INPUTS_FORMAT, run_settings  # noqa: PLC0415
    from fairshare.policies import PolicyError  # noqa: PLC0415
    from fairshare.policies.explain import explain  # noqa: PLC0415
    from fairshare.policies.registry import ONLINE_POLICIES  # noqa: PLC0415
    from fairshare.policies.scheduler import Scheduler  # noqa: PLC0415
    from fairshare.sim.option_table import OPTIONS, TRACE  # noqa: PLC0415

    where = str(run_dir / "run.json")
    if inputs.get("format") != RUN_INPUTS_FORMAT:
        raise InputError(where, "format", f"expected {RUN_INPUTS_FORMAT}; re-run simulate")
    policy = inputs.get("policy")
    if not isinstance(policy, str) or policy not in ONLINE_POLICIES:
        raise InputError(where, "policy", f"explain needs an online policy's run, not {policy!r}")
    values = {o.parameter: o.default for o in OPTIONS}
    recorded = inputs.get("options")
    if isinstance(recorded, dict):
        values.update({k: v for k, v in recorded.items() if k in values})
    values[TRACE.parameter] = None
    trace = inputs.get("trace")
    if isinstance(trace, dict):
        path = Path(str(trace.get("path")))
        try:
            stat = path.stat()
        except OSError:
            raise InputError(where, "trace.path", f"the run's trace {path} is gone") from None
        if stat.st_size != trace.get("size") or stat.st_mtime_ns != trace.get("mtime_ns"):
            raise InputError(
                where, "trace", f"the run's trace {path} changed since the run; re-run simulate"
            )
        values[TRACE.parameter] = f"{trace.get('format')}:{path}"
    settings = run_settings(run_dir / str(inputs.get("scenario", "scenario.json")), values)
    workload = workload_of(settings.scenario, seed=settings.seed, trace=settings.trace)
    load = settings.options.load_scale
    # Jobs submitted after T are left out (the engine divides submit times by the load).
    jobs = (j for j in workload.jobs if j.submit / load <= at)
    seen: dict[str, Any] = {}

    def look(live: Policy) -> None:
        assert isinstance(live, Scheduler)
        ids = [p.id for p in live.ledger.jobs.values() if p.job.name == job]
        seen["why"] = explain(live, ids[0]) if ids else None

    try:
        log = replay(
            settings.scenario,
            workload,
            policy,
            seed=settings.seed,
            options=settings.options,
            jobs=jobs,
            at=(at, look),
        ).log
    except PolicyError as err:
        raise InputError(where, flag(err.where), flags_in(err.what)) from None
    record = next((r for r in log.jobs if r.job == job), None)
    why = seen.get("why")
    reasons: list[Any] = []
    ahead: list[Any] = []
    if record is None or record.submit > at:
        state = "not-submitted"
    elif why is None:
        finished = record.finish is not None and record.finish <= at
        state = "finished" if finished else "running"
    else:
        doc = why.document()
        state, reasons, ahead = doc["state"], doc["reasons"], doc["ahead"]
    estimate: float | None = None
    if state in ("pending", "not-submitted") and record is not None:
        estimate = record.first_start
        if estimate is not None and estimate < at:
            # Started before T and stopped since (preempted, its machine gone): its next
            # start after T.
            later = [a.start for a in log.attempts if a.job == job and a.start >= at]
            estimate = min(later) if later else None
    return {
        "job": job,
        "at": at,
        "policy": policy,
        "state": state,
        "reasons": reasons,
        "ahead": ahead,
        "estimated_start": estimate,
    }


def _text(document: dict[str, Any]) -> str:
    """The document for people: the state, one line per reason, who is ahead, the
    estimate (a live job's: none)."""
    live = "name" in document
    head = f"{document['job']} at t={document['at']:g} ({document['policy']})"
    if live:
        head = f"{document['job']} ({document['name']}, {document['policy']}, live)"
    lines = [f"{head}: {document['state']}"]
    for reason in document["reasons"]:
        lines.append(f"  {reason['kind']}: {reason['detail']}")
    if document["ahead"]:
        ahead = ", ".join(f"{a['user']} ({a['share']:.4g})" for a in document["ahead"])
        lines.append(f"  ahead (served first, with their shares): {ahead}")
    start = document["estimated_start"]
    if document["state"] in ("pending", "not-submitted") and not live:
        lines.append(
            "  estimated start: never (no machine will take it)"
            if start is None
            else f"  estimated start: t={start:g} if no new job arrives"
        )
    return "\n".join(lines)


__all__ = ["explain_command", "explain_run"]
