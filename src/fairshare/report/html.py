"""Self-contained HTML reports and the writers of a run's and a comparison's output files.

The figures are inlined as SVG (:mod:`fairshare.report.figures`) and the page needs no
network. ``report.html`` leaves out ``wall_seconds``, so the same run log gives a
byte-identical report even when the simulation took a different time.

Examples
--------
>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
...     source="two-jobs",
... )
>>> log = fairshare.simulate(scenario, "fair").log
>>> import tempfile
>>> from pathlib import Path
>>> from fairshare.report import write_outputs
>>> with tempfile.TemporaryDirectory() as tmp:
...     document = write_outputs(log, Path(tmp) / "fair")
...     written = sorted(path.name for path in (Path(tmp) / "fair").iterdir())
>>> written
['jobs.csv', 'report.html', 'summary.json', 'tasks.parquet', 'timeline.csv']
>>> document["mean_response_time"]
29.5
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment, PackageLoader, StrictUndefined

from fairshare.metrics import (
    CHOOSY_BIN_LABELS,
    allocation_rmse,
    clean,
    compare_frame,
    compare_runs,
    dumps_json,
    resolve_reference,
    run_frames,
    summary,
    timeline,
    write_csv,
    write_run_files,
)
from fairshare.metrics.frames import cached
from fairshare.metrics.summary import makespan
from fairshare.metrics.timeline import timeline_view
from fairshare.metrics.totals import run_totals
from fairshare.report import figures
from fairshare.runlog import RunLog

USERS_LISTED = 50
"""Rows of the per-user table; with more users, those with the largest mean share."""

_ENV = Environment(
    loader=PackageLoader("fairshare.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=False,
)
"""The templates of ``report/templates/``, autoescaped; an undefined name is an error."""


def fmt(value: object) -> str:
    """A value for a reader of the report.

    Parameters
    ----------
    value : object
        A number, None, a boolean, a container or text.

    Returns
    -------
    str
        None as an em dash, integers with thousands separators, floats with four significant
        digits (or whole, with separators, from 10,000), booleans in lower case, containers as
        JSON.

    Examples
    --------
    >>> from fairshare.report.html import fmt
    >>> fmt(None), fmt(12345), fmt(2 / 3), fmt(123456.7)
    ('—', '12,345', '0.6667', '123,457')
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 10_000:
            return f"{value:,.0f}"
        return f"{value:.4g}"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def pct(value: object) -> str:
    """A fraction as a percentage with one decimal; None (or anything not a number) as an em dash.

    Parameters
    ----------
    value : object
        A fraction, or None.

    Returns
    -------
    str

    Examples
    --------
    >>> from fairshare.report.html import pct
    >>> pct(0.4567), pct(None)
    ('45.7%', '—')
    """
    return f"{100 * value:.1f}%" if isinstance(value, int | float) else "—"


def _cluster_line(log: RunLog) -> str:
    """The cluster in one line: machines, racks and total capacity per resource."""
    c = log.cluster
    totals = ", ".join(f"{r} {fmt(float(t))}" for r, t in zip(c.resources, c.total, strict=True))
    racks = len({m.rack for m in c.machines if m.rack is not None})
    rack_text = f", {racks} racks" if racks else ""
    return f"{len(c.machines)} machines{rack_text} ({totals})"


def _headline(s: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The summary's headline figures as (label, value) rows."""
    return [
        ("jobs finished", f"{fmt(s['finished_jobs'])} of {fmt(s['jobs'])}"),
        ("makespan (s)", fmt(s["makespan"])),
        ("mean response time (s)", fmt(s["mean_response_time"])),
        (
            "p50 / p95 response time (s)",
            f"{fmt(s['p50_response_time'])} / {fmt(s['p95_response_time'])}",
        ),
        ("mean slowdown", fmt(s["mean_slowdown"])),
        ("p50 / p95 slowdown", f"{fmt(s['p50_slowdown'])} / {fmt(s['p95_slowdown'])}"),
        ("mean queueing delay (s)", fmt(s["mean_queueing_delay"])),
        ("p95 queueing delay (s)", fmt(s["p95_queueing_delay"])),
        ("preempted task attempts", fmt(s["preempted_tasks"])),
        ("wasted task-seconds", fmt(s["wasted_task_seconds"])),
    ]


def _bin_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The size bin table's rows, formatted."""
    out = []
    for b in rows:
        loc = b["locality"]
        out.append(
            {
                "maps": str(b["maps"]),
                "jobs": fmt(b["jobs"]),
                "finished_jobs": fmt(b["finished_jobs"]),
                "mean_slowdown": fmt(b["mean_slowdown"]),
                "p50_slowdown": fmt(b["p50_slowdown"]),
                "mean_response_time": fmt(b["mean_response_time"]),
                "mean_queueing_delay": fmt(b["mean_queueing_delay"]),
                "node": pct(loc["node"]),
                "rack": pct(loc["rack"]),
                "off_rack": pct(loc["off_rack"]),
            }
        )
    return out


def _locality_rows(label: str, s: Mapping[str, Any]) -> list[tuple[str, dict[str, object]]]:
    """The locality figure's bars: all jobs, then each bin with tasks that read input."""
    rows: list[tuple[str, dict[str, object]]] = []
    if s["locality_tasks"]:
        rows.append((label, dict(s["locality"])))
    for b in s["size_bins"]:
        if b["locality_tasks"]:
            rows.append((f"{b['maps']} maps", dict(b["locality"])))
    return rows


def render_run(log: RunLog, summary_doc: Mapping[str, Any] | None = None) -> str:
    """The ``report.html`` text of one run.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).
    summary_doc : Mapping, optional
        Its :func:`~fairshare.metrics.summary` document, when the caller already has it.

    Returns
    -------
    str
        A self-contained HTML page: headline figures, the allocation, CDF, slowdown and
        locality figures, the size bins and the top users.
    """
    f = run_totals(log)
    s: Mapping[str, Any] = summary(log) if summary_doc is None else summary_doc
    span = makespan(f)
    # The timeline as write_run_files followed it (or one more pass over the attempts).
    view = cached(
        log,
        f"timeline_view/{figures.GRID_POINTS}",
        lambda lg: timeline_view(lg, span, figures.GRID_POINTS),
    )
    n_top = len(figures.top_by_area(view.integrals))
    active = int(np.count_nonzero(view.integrals > 0))
    fig = {
        "allocation": figures.allocation_figure_of(view, span),
        "cdf": figures.cdf_figure([(log.policy, f.response)], [(log.policy, f.queueing_delay)]),
        "slowdown": figures.bins_figure(
            [(log.policy, s["size_bins"])], "mean_slowdown", "mean slowdown"
        ),
        "locality": "",
    }
    loc_rows = _locality_rows("all jobs", s)
    if loc_rows:
        fig["locality"] = figures.locality_figure(loc_rows)
    position = {name: i for i, name in enumerate(f.users)}
    users = sorted(
        s["users"].items(),
        key=lambda kv: (-(kv[1]["mean_share"] or 0.0), position[kv[0]]),
    )
    listed = users[:USERS_LISTED]
    return _ENV.get_template("run.html.j2").render(
        s=s,
        cluster=_cluster_line(log),
        headline=_headline(s),
        options=[(k, fmt(v)) for k, v in sorted(s["options"].items())],
        utilization=[(k, pct(v)) for k, v in s["utilization"].items()],
        locality=[
            ("node-local", pct(s["locality"]["node"])),
            ("rack-local", pct(s["locality"]["rack"])),
            ("off-rack", pct(s["locality"]["off_rack"])),
            ("tasks with input data", fmt(s["locality_tasks"])),
        ],
        figures=fig,
        grid_points=figures.GRID_POINTS,
        top_n=n_top,
        others=max(active - n_top, 0),
        bins=_bin_rows(s["size_bins"]),
        users=[
            {
                "name": name,
                "jobs": fmt(u["jobs"]),
                "finished_jobs": fmt(u["finished_jobs"]),
                "mean_response_time": fmt(u["mean_response_time"]),
                "mean_slowdown": fmt(u["mean_slowdown"]),
                "mean_share": pct(u["mean_share"]),
                "task_seconds": fmt(u["task_seconds"]),
            }
            for name, u in listed
        ],
        users_hidden=len(users) - len(listed),
    )


def write_outputs(log: RunLog, out_dir: Path) -> dict[str, object]:
    """Write every output file of one run into ``out_dir`` (SPEC section 3).

    ``summary.json``, ``jobs.csv``, ``timeline.csv``, ``tasks.parquet`` and ``report.html``.

    Parameters
    ----------
    log : RunLog
        A simulated run (:attr:`fairshare.api.Run.log`).
    out_dir : Path
        The directory (created if missing; files of the same names are replaced).

    Returns
    -------
    dict of str to object
        The summary document.

    Raises
    ------
    OSError
        A file cannot be written.
    """

    def page(doc: dict[str, object]) -> None:
        (out_dir / "report.html").write_text(render_run(log, doc), encoding="utf-8")

    return write_run_files(log, out_dir, alongside=page, grid_points=figures.GRID_POINTS)


def _relative_rows(doc: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """Choosy Table 1's rows: per bin, each run's mean (std) relative slowdown and count."""
    rows = []
    for b, label in enumerate(CHOOSY_BIN_LABELS):
        cells = []
        for run in doc["runs"]:
            r = run["slowdown_vs_reference"][b]
            if r["jobs"]:
                cells.append(f"{r['mean_slowdown']:.2f} ({r['std_slowdown']:.2f}) n={r['jobs']}")
            else:
                cells.append("—")
        rows.append((label, cells))
    return rows


def _compare_table(doc: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The comparison table's rows: per statistic, one formatted cell per run."""
    runs = doc["runs"]
    s = [r["summary"] for r in runs]
    rm = [r["rmse_vs_reference"] for r in runs]
    table: list[tuple[str, list[str]]] = [
        ("policy", [str(x["policy"]) for x in s]),
        ("seed", [fmt(x["seed"]) for x in s]),
        ("jobs finished", [f"{fmt(x['finished_jobs'])} of {fmt(x['jobs'])}" for x in s]),
        ("makespan (s)", [fmt(x["makespan"]) for x in s]),
        ("mean response time (s)", [fmt(x["mean_response_time"]) for x in s]),
        ("p50 response time (s)", [fmt(x["p50_response_time"]) for x in s]),
        ("p95 response time (s)", [fmt(x["p95_response_time"]) for x in s]),
        ("mean slowdown", [fmt(x["mean_slowdown"]) for x in s]),
        ("p95 slowdown", [fmt(x["p95_slowdown"]) for x in s]),
        ("mean queueing delay (s)", [fmt(x["mean_queueing_delay"]) for x in s]),
        ("node-local tasks", [pct(x["locality"]["node"]) for x in s]),
        ("rack-local tasks", [pct(x["locality"]["rack"]) for x in s]),
        ("off-rack tasks", [pct(x["locality"]["off_rack"]) for x in s]),
        ("preempted task attempts", [fmt(x["preempted_tasks"]) for x in s]),
    ]
    resources: list[str] = []
    for x in s:
        resources.extend(r for r in x["utilization"] if r not in resources)
    table.extend((f"utilization {r}", [pct(x["utilization"].get(r)) for x in s]) for r in resources)
    table.extend(
        [
            ("mean allocation RMSE", [pct(x["mean"]) for x in rm]),
            ("p95 allocation RMSE", [pct(x["p95"]) for x in rm]),
            ("max allocation RMSE", [pct(x["max"]) for x in rm]),
        ]
    )
    return table


def render_compare(logs: Sequence[RunLog], reference: int | str = 0) -> str:
    """The ``compare.html`` text for runs of one workload under different policies.

    Parameters
    ----------
    logs : Sequence of RunLog
        The runs, of the same jobs.
    reference : int or str
        The run the others are compared against: an index, a run label or a policy name.

    Returns
    -------
    str
        A self-contained HTML page: the comparison table, Choosy Table 1, the RMSE, CDF,
        slowdown and locality figures, and each run's allocation on one time axis.

    Raises
    ------
    ValueError
        No run is the reference (the message names the runs).

    Examples
    --------
    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> fifo = fairshare.simulate(scenario, "fifo").log
    >>> fair = fairshare.simulate(scenario, "fair").log
    >>> from fairshare.report import render_compare
    >>> render_compare([fifo, fair], reference="fifo").startswith("<!DOCTYPE html>")
    True
    """
    index = resolve_reference(logs, reference)
    return _render_compare(logs, compare_runs(logs, index), index)


def _render_compare(logs: Sequence[RunLog], doc: Mapping[str, Any], reference: int) -> str:
    """:func:`render_compare` of a compare document already computed."""
    labels = [str(r["label"]) for r in doc["runs"]]
    frames = [run_frames(log) for log in logs]
    rmse_series = []
    for k, log in enumerate(logs):
        if k == reference:
            continue
        x, y = allocation_rmse(log, logs[reference]).cdf()
        rmse_series.append((k, labels[k], x, y))
    loc_rows = [
        (label, dict(run["summary"]["locality"]))
        for label, run in zip(labels, doc["runs"], strict=True)
        if run["summary"]["locality_tasks"]
    ]
    fig = {
        "rmse": figures.rmse_figure(rmse_series, labels[reference]),
        "cdf": figures.cdf_figure(
            [(lab, f.response) for lab, f in zip(labels, frames, strict=True)],
            [(lab, f.queueing_delay) for lab, f in zip(labels, frames, strict=True)],
        ),
        "slowdown": figures.bins_figure(
            [
                (lab, run["summary"]["size_bins"])
                for lab, run in zip(labels, doc["runs"], strict=True)
            ],
            "mean_slowdown",
            "mean slowdown",
        ),
        "locality": figures.locality_figure(loc_rows) if loc_rows else "",
    }
    # One time axis for all runs, so their allocation figures line up.
    horizon = max(makespan(f) for f in frames)
    allocations = [
        (lab, figures.allocation_figure(timeline(log), horizon, title=lab))
        for lab, log in zip(labels, logs, strict=True)
    ]
    return _ENV.get_template("compare.html.j2").render(
        labels=labels,
        reference=labels[reference],
        table=_compare_table(doc),
        relative=_relative_rows(doc),
        figures=fig,
        allocations=allocations,
    )


def write_compare(
    logs: Sequence[RunLog], out_dir: Path, reference: int | str = 0
) -> dict[str, object]:
    """Write ``compare.json``, ``compare.csv`` and ``compare.html`` for runs of one workload.

    Nothing is written when the reference does not resolve. ``wall_seconds`` is left out of the
    files, so the comparison of the same logs is byte-identical.

    Parameters
    ----------
    logs : Sequence of RunLog
        The runs, of the same jobs.
    out_dir : Path
        The directory (created if missing; files of the same names are replaced).
    reference : int or str
        The run the others are compared against: an index, a run label or a policy name.

    Returns
    -------
    dict of str to object
        The :func:`~fairshare.metrics.compare_runs` document.

    Raises
    ------
    ValueError
        No run is the reference (the message names the runs).
    OSError
        A file cannot be written.

    Examples
    --------
    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> fifo = fairshare.simulate(scenario, "fifo").log
    >>> fair = fairshare.simulate(scenario, "fair").log
    >>> import tempfile
    >>> from pathlib import Path
    >>> from fairshare.report import write_compare
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     document = write_compare([fifo, fair], Path(tmp), reference="fifo")
    ...     written = sorted(path.name for path in Path(tmp).iterdir())
    >>> written, document["reference"]
    (['compare.csv', 'compare.html', 'compare.json'], 'fifo')
    """
    reference = resolve_reference(logs, reference)
    doc = compare_runs(logs, reference)
    out_dir.mkdir(parents=True, exist_ok=True)
    # wall_seconds is a property of the simulation, not of the comparison: left out so the
    # comparison of the same logs is byte-identical.
    stable = clean(doc)
    assert isinstance(stable, dict)
    for run in stable["runs"]:
        run["summary"].pop("wall_seconds", None)
    (out_dir / "compare.json").write_text(dumps_json(stable), encoding="utf-8")
    write_csv(compare_frame(stable), out_dir / "compare.csv")
    (out_dir / "compare.html").write_text(
        _render_compare(logs, stable, reference), encoding="utf-8"
    )
    return doc
