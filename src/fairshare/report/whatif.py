"""The output files of ``fairshare whatif`` (SPEC section 8.4): ``tenants.csv``,
``summary.json``, ``report.html``, and the first seed's two runs' own files in ``before/``
and ``after/`` (SPEC section 3's, to explain a tenant's row).

The page an operator reads at a glance: the headline (how many tenants wait longer, the
worst one and by how much), each tenant's p95 wait before and after as bars, shares over
time in both runs on one time axis, preempted capacity-seconds per tenant, and the table.

Examples
--------
>>> import fairshare, tempfile
>>> from pathlib import Path
>>> def scenario(wa, wb):
...     return fairshare.parse_scenario(
...         {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...          "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
...          "jobs": [{"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4,
...                    "duration": 10} for k in range(6) for u in "ab"]},
...         source=f"a{wa}-b{wb}")
>>> result = fairshare.whatif(scenario(1, 3), scenario(3, 1), policy="drf")
>>> with tempfile.TemporaryDirectory() as tmp:
...     doc = result.write(tmp)
...     first = (Path(tmp) / "tenants.csv").read_text().splitlines()[:2]
>>> doc["tenants_worse"], doc["tenants_better"], doc["worst"]["user"]
(1, 1, 'b')
>>> first[1].split(",")[0], first[1].split(",")[-3]
('b', '50.000000')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from fairshare import __version__
from fairshare.metrics import clean, run_frames, timeline, write_csv
from fairshare.metrics.intervals import CONFIDENCE, mean_interval
from fairshare.metrics.summary import makespan
from fairshare.metrics.whatif import (
    TENANT_COLUMNS,
    tenant_verdicts,
    tenants_frame,
    tenants_over_seeds,
)
from fairshare.report.figures import (
    PALETTE,
    TOP_USERS,
    _axes,
    _empty,
    _padded,
    allocation_figure,
    top_users,
)
from fairshare.report.html import _ENV, fmt, pct, write_outputs
from fairshare.report.scales import Scale, Tick
from fairshare.report.svg import Figure, LegendEntry, legend_width
from fairshare.runlog import RunLog
from fairshare.tolerances import WAIT_DELTA

__all__ = ["WHATIF_FILES", "render_whatif", "write_whatif"]

WHATIF_FILES = ("tenants.csv", "summary.json", "report.html")
"""The files of ``fairshare whatif``'s DIR, besides each run's in ``before/`` and ``after/``."""

BARS_SHOWN = 25
"""Tenants in the bar figures: the first rows of the table (who loses most, then who
gains most at the bottom of the table are cut; the table lists :data:`ROWS_LISTED`)."""

ROWS_LISTED = 200
"""Rows of the page's table; ``tenants.csv`` has every tenant."""

BEFORE_COLOR, AFTER_COLOR = PALETTE[0], PALETTE[1]


def _bars_figure(rows: Sequence[tuple[str, float | None, float | None]], xlabel: str) -> str:
    """Horizontal bars, two per tenant (before above after), the first row on top: names
    of any length stay legible on the left."""
    fig = Figure(9.0, 0.8 + 0.32 * max(len(rows), 2))
    values = [v for _, a, b in rows for v in (a, b) if v is not None]
    if not values:
        return _empty(fig, "no value in either run")
    hi = max(*values, 0.0)
    hi = hi if hi > 0 else 1.0
    entries = [LegendEntry("before", BEFORE_COLOR), LegendEntry("after", AFTER_COLOR)]
    room = legend_width(entries) + 0.01 * fig.width
    top, bottom = _padded(-0.45, len(rows) - 1 + 0.45)
    ax, xticks, yticks = _axes(
        fig,
        Scale(0.0, hi * 1.05),
        Scale(bottom, top),  # the first row on top
        yticks=[Tick(float(k), _short(name)) for k, (name, _, _) in enumerate(rows)],
        xlabel=xlabel,
        right=room,
    )
    for k, (_, old, new) in enumerate(rows):
        if old is not None:
            ax.rect(0.0, old, k - 0.38, k, BEFORE_COLOR)
        if new is not None:
            ax.rect(0.0, new, k, k + 0.38, AFTER_COLOR)
    fig.frame(ax, xticks=xticks, yticks=yticks, xlabel=xlabel)
    fig.legend(entries, ax.left + ax.width + 0.01 * ax.width, ax.top)
    return fig.to_svg()


def _short(name: str, limit: int = 28) -> str:
    """A tenant's name as a tick label: long ones cut in the middle."""
    return name if len(name) <= limit else f"{name[: limit // 2 - 1]}…{name[-(limit // 2) :]}"


def _headline(frame: pl.DataFrame, worse: int, better: int) -> str:
    """One sentence: how many tenants wait longer, the worst and by how much."""
    n = frame.height
    if worse == 0:
        return f"No tenant waits longer at the 95th percentile ({n} tenants; {better} wait less)."
    row = frame.row(0, named=True)
    old, new, delta = row["wait_p95_before"], row["wait_p95_after"], row["delta_wait_p95"]
    growth = f", {100 * delta / old:+.0f}%" if old and old > WAIT_DELTA else ""
    return (
        f"{worse} of {n} tenants wait longer at the 95th percentile; {better} wait less. "
        f"Worst: {row['user']}, p95 wait {fmt(old)} s → {fmt(new)} s "
        f"(+{fmt(delta)} s{growth})."
    )


def _table(frame: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The page's table, narrow enough to read without scrolling: the tenant, the change of
    its p95 wait first, then each statistic as ``before → after`` in one cell (every column
    of ``tenants.csv`` is shown)."""
    several = "delta_wait_p95_low" in frame.columns
    columns = ["tenant", "jobs", "Δ p95 wait (s)"]
    columns += ["95% interval of Δ"] if several else []
    columns += ["p95 wait (s)", "mean wait (s)", "mean slowdown", "share", "preempted (cap·s)"]
    rows = []
    for row in frame.head(ROWS_LISTED).iter_rows(named=True):

        def pair(name: str, shown: Callable[[object], str] = fmt) -> str:
            return f"{shown(row[f'{name}_before'])} → {shown(row[f'{name}_after'])}"  # noqa: B023

        cells = [row["user"], fmt(row["jobs"]), fmt(row["delta_wait_p95"])]
        if several:
            cells.append(f"{fmt(row['delta_wait_p95_low'])} … {fmt(row['delta_wait_p95_high'])}")
        cells += [
            pair("wait_p95"),
            pair("wait_mean"),
            pair("slowdown_mean"),
            pair("share", pct),
            pair("preempted"),
        ]
        rows.append(cells)
    return columns, rows


def render_whatif(
    pairs: Sequence[tuple[RunLog, RunLog]],
    frame: pl.DataFrame,
    doc: Mapping[str, Any],
) -> str:
    """The ``report.html`` text of a what-if.

    Parameters
    ----------
    pairs : sequence of (RunLog, RunLog)
        Per seed, the runs before and after; the figures of shares show the first seed's.
    frame : polars.DataFrame
        The tenants table (``tenants.csv``).
    doc : Mapping
        The ``summary.json`` document.

    Returns
    -------
    str
        A self-contained HTML page.
    """
    old, new = pairs[0]
    horizon = max(makespan(run_frames(old)), makespan(run_frames(new)))
    shown = frame.head(BARS_SHOWN)
    p95 = [
        (r["user"], r["wait_p95_before"], r["wait_p95_after"]) for r in shown.iter_rows(named=True)
    ]
    preempted_rows = frame.filter(
        (pl.col("preempted_before").fill_null(0) > 0) | (pl.col("preempted_after").fill_null(0) > 0)
    )
    preempted = [
        (r["user"], r["preempted_before"], r["preempted_after"])
        for r in preempted_rows.head(BARS_SHOWN).iter_rows(named=True)
    ]
    columns, rows = _table(frame)
    seeds = doc["seeds"]
    # One list of users for both share charts, so a tenant has one colour in both: the
    # before run's top users, then the after run's that are not among them.
    old_tl, new_tl = timeline(old), timeline(new)
    layers = [old_tl.users[i] for i in top_users(old_tl, horizon)]
    layers += [
        name for name in (new_tl.users[i] for i in top_users(new_tl, horizon)) if name not in shown
    ][: max(TOP_USERS - len(layers), 0)]
    return _ENV.get_template("whatif.html.j2").render(
        headline=_headline(frame, int(doc["tenants_worse"]), int(doc["tenants_better"])),
        facts=[
            ("before", f"{doc['scenarios']['before']} under {doc['policies']['before']}"),
            ("after", f"{doc['scenarios']['after']} under {doc['policies']['after']}"),
            ("jobs", fmt(doc["before"]["jobs"])),
            ("seed" if len(seeds) == 1 else "seeds", ", ".join(str(s) for s in seeds)),
            (
                "p95 wait over all jobs",
                f"{fmt(doc['before']['p95_queueing_delay'])} s → "
                f"{fmt(doc['after']['p95_queueing_delay'])} s",
            ),
            ("makespan", f"{fmt(doc['before']['makespan'])} s → {fmt(doc['after']['makespan'])} s"),
        ],
        p95_figure=_bars_figure(p95, "p95 wait (s)"),
        bars_hidden=max(frame.height - BARS_SHOWN, 0),
        before_figure=allocation_figure(old_tl, horizon, title="before", users=layers),
        after_figure=allocation_figure(new_tl, horizon, title="after", users=layers),
        preempted_figure=_bars_figure(preempted, "preempted capacity-seconds") if preempted else "",
        columns=columns,
        rows=rows,
        rows_hidden=max(frame.height - ROWS_LISTED, 0),
        several=len(seeds) > 1,
        confidence=f"{100 * CONFIDENCE:g}%",
    )


def write_whatif(
    pairs: Sequence[tuple[RunLog, RunLog]],
    out_dir: Path,
    before: str,
    after: str,
    frames: tuple[Sequence[pl.DataFrame], pl.DataFrame] | None = None,
) -> dict[str, object]:
    """Write a what-if's files into ``out_dir`` (module docstring).

    Parameters
    ----------
    pairs : sequence of (RunLog, RunLog)
        Per seed, in seed order, the run before and the run after.
    out_dir : Path
        The directory (created if missing; files of the same names are replaced).
    before, after : str
        The configurations' sources, recorded in ``summary.json``.
    frames : (sequence of polars.DataFrame, polars.DataFrame), optional
        The tenants table of each seed and of all, when the caller has them.

    Returns
    -------
    dict of str to object
        The ``summary.json`` document: ``before`` and ``after`` (the first seed's runs'
        SPEC section 3 summaries), ``tenants_worse``, ``tenants_better``, ``worst``,
        ``policies``, ``scenarios``, ``seeds``, and with several seeds ``per_seed`` and
        ``tenants`` (each tenant's ``delta_wait_p95`` mean and interval over the seeds).

    Raises
    ------
    OSError
        A file cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    old, new = pairs[0]
    old_doc = write_outputs(old, out_dir / "before")
    new_doc = write_outputs(new, out_dir / "after")
    if frames is None:
        per_seed = [tenants_frame(a, b) for a, b in pairs]
        frames = per_seed, per_seed[0] if len(per_seed) == 1 else tenants_over_seeds(per_seed)
    seed_frames, frame = frames
    worse, better = tenant_verdicts(frame)
    first = frame.row(0, named=True) if frame.height else None
    doc: dict[str, object] = {
        "before": old_doc,
        "after": new_doc,
        "tenants_worse": worse,
        "tenants_better": better,
        "worst": (
            {c: first[c] for c in ("user", *TENANT_COLUMNS[2:])}
            if first is not None and worse
            else None
        ),
        "policies": {"before": old.policy, "after": new.policy},
        "scenarios": {"before": before, "after": after},
        "fairshare_version": __version__,
        "seeds": [a.seed for a, _ in pairs],
        "wait_delta_tolerance": WAIT_DELTA,
    }
    if len(pairs) > 1:
        doc["per_seed"] = [
            {
                "seed": a.seed,
                **dict(zip(("tenants_worse", "tenants_better"), tenant_verdicts(f), strict=True)),
            }
            for (a, _), f in zip(pairs, seed_frames, strict=True)
        ]
        per_user: dict[str, list[float | None]] = {}
        for f in seed_frames:
            for user, delta in zip(f["user"].to_list(), f["delta_wait_p95"].to_list(), strict=True):
                per_user.setdefault(user, []).append(delta)
        doc["tenants"] = {
            user: {
                "delta_wait_p95": {
                    "mean": (i := mean_interval(values)).mean,
                    "low": i.low,
                    "high": i.high,
                    "seeds": i.n,
                }
            }
            for user, values in sorted(per_user.items())
        }
    # The runs' summaries are clean already (write_outputs): only the rest is cleaned, and
    # the text is dumps_json's without cleaning them again (a large run's per-user tables).
    cleaned = {k: v if k in ("before", "after") else clean(v) for k, v in doc.items()}
    write_csv(frame, out_dir / "tenants.csv")
    text = json.dumps(cleaned, sort_keys=True, indent=2, allow_nan=False) + "\n"
    (out_dir / "summary.json").write_text(text, encoding="utf-8")
    (out_dir / "report.html").write_text(render_whatif(pairs, frame, cleaned), encoding="utf-8")
    return cleaned
