"""Run a paper's reproduction target on the sweep machinery and write what it found
(``fairshare reproduce``, SPEC section 7).

A target (:mod:`fairshare.experiments.targets`) is one or more grids; :func:`run_target`
runs every cell of them not yet done in ``DIR/TARGET/sweep`` (a sweep directory,
:mod:`fairshare.experiments.store`, so an interrupted or repeated reproduction runs only
what is missing), merges them with a ``part`` column into its ``results.parquet`` and
``sweep.html``, and writes:

```
DIR/TARGET/result.json   {"target", "paper", "figure", "rows": [{"metric", "paper", "ours",
                          "spread", "verdict", "reason", "neutral", "tolerance", "source"}],
                          "scale", "seeds", "setup": [{"parameter", "value", "why",
                          "verdicts_change"}]}
DIR/TARGET/figure.svg    the figure in the paper's form
DIR/TARGET/report.html   the figure beside every row, the setup, the seeds and scale
DIR/TARGET/sweep/        the sweep's directory: cells/, results.parquet, sweep.html
DIR/TARGET/sensitivity/  with --sensitivity: one reproduction per end of each swept setup
                          parameter (:func:`run_sensitivity`)
```

With ``--sensitivity`` (:func:`run_sensitivity`), ``result.json`` also holds
``"sensitivity": [{"parameter", "value", "verdicts", "changed"}]`` (the verdict of every row
at that value, and the metrics whose verdict differs from the target's own), and each
``setup`` entry's ``verdicts_change`` is what the sweep found.

``seeds`` is the number of seeds run.

Targets that measure the same runs (Choosy Table 1, Figure 8 and Table 2 share section 7.1's
grid) share cells: a cell another target under DIR already ran (the same id in
``DIR/OTHER/sweep/cells``) is copied, not run again.

Examples
--------
>>> import json, tempfile
>>> from pathlib import Path
>>> from fairshare.experiments.reproduce import run_target
>>> from fairshare.experiments.targets import target
>>> with tempfile.TemporaryDirectory() as tmp:
...     done = run_target(target("hdrf-fig9"), tmp, scale=0.05, seeds=(0,), jobs=1)
...     document = json.loads(Path(tmp, "hdrf-fig9", "result.json").read_text())
>>> sorted(document)
['figure', 'paper', 'rows', 'scale', 'seeds', 'setup', 'target']
>>> document["rows"][0]["metric"], document["seeds"]
('CPU share of n1,1 (all leaves active)', 1)
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from fairshare.errors import FairshareError
from fairshare.experiments.aggregate import headline, settings
from fairshare.experiments.cells import Cell, CellFailure
from fairshare.experiments.executors import make_executor
from fairshare.experiments.store import CELLS, SweepDir, SweepDirError
from fairshare.experiments.sweep import SweepProgress, available_cores, merge
from fairshare.experiments.targets.base import Evaluation, Row, Target, judge
from fairshare.report.outdir import STAGING_PREFIX
from fairshare.report.reproduce import render_reproduction
from fairshare.report.sweep import render_sweep
from fairshare.workload import ScenarioError

__all__ = [
    "FIGURE",
    "REPORT",
    "RESULT",
    "SENSITIVITY",
    "SWEEP",
    "TargetResult",
    "TargetUnavailable",
    "check_target_dir",
    "run_sensitivity",
    "run_target",
]

RESULT = "result.json"
"""A target's numbers (SPEC section 7)."""
FIGURE = "figure.svg"
"""A target's figure (SPEC section 7)."""
REPORT = "report.html"
"""A target's page: the figure beside every row, the setup (SPEC section 7)."""
SWEEP = "sweep"
"""A target's sweep directory."""
SENSITIVITY = "sensitivity"
"""A target's sensitivity runs (``--sensitivity``), one directory per swept value."""
_OWN = {RESULT, FIGURE, REPORT, SWEEP, SENSITIVITY}


class TargetUnavailable(FairshareError):
    """A target the model cannot express yet: ``error: command line: TARGET: needs ...``
    (exit 2), never a made-up result."""

    def __init__(self, name: str, needs: str) -> None:
        super().__init__(f"{name}: needs {needs}")
        self.name = name
        self.needs = needs


@dataclass(frozen=True)
class TargetResult:
    """A reproduced target.

    Attributes
    ----------
    target : Target
        The target.
    rows : tuple of Row
        Its rows, as ``result.json`` has them.
    scale : float
        The scale it ran at.
    seeds : tuple of int
        The seeds.
    ran, reused : int
        Cells run now, and done by an earlier run into the same directory.
    seconds : float
        Wall seconds, cells and evaluation.
    out : Path
        ``DIR/TARGET``.
    figure : str
        The figure (an ``<svg>``).
    sensitivity : tuple of SensitivityRun
        The sensitivity sweep's runs (empty without ``--sensitivity``).
    """

    target: Target
    rows: tuple[Row, ...]
    scale: float
    seeds: tuple[int, ...]
    ran: int
    reused: int
    seconds: float
    out: Path
    figure: str = ""
    sensitivity: tuple[SensitivityRun, ...] = ()

    def document(self) -> dict[str, object]:
        """``result.json``'s document."""
        found: dict[str, bool] = {}
        for run in self.sensitivity:
            found[run.parameter] = found.get(run.parameter, False) or bool(run.changed)
        setup = []
        for choice in self.target.setup:
            entry = choice.document()
            if choice.parameter in found:
                entry["verdicts_change"] = found[choice.parameter]
            setup.append(entry)
        document: dict[str, object] = {
            "target": self.target.name,
            "paper": self.target.paper,
            "figure": self.target.figure,
            "rows": [row.document() for row in self.rows],
            "scale": self.scale,
            "seeds": len(self.seeds),
            "setup": setup,
        }
        if self.sensitivity:
            document["sensitivity"] = [run.document() for run in self.sensitivity]
        return document


@dataclass(frozen=True)
class SensitivityRun:
    """The target run with one end of a setup parameter's range (``--sensitivity``).

    Attributes
    ----------
    parameter, value : str
        The setup's parameter and the value swept.
    verdicts : tuple of (str, str)
        Each row's metric and verdict at that value.
    changed : tuple of str
        The metrics whose verdict differs from the target's own run (model checks
        excluded).
    """

    parameter: str
    value: str
    verdicts: tuple[tuple[str, str], ...]
    changed: tuple[str, ...]

    def document(self) -> dict[str, object]:
        """The run as ``result.json``'s ``sensitivity`` holds it."""
        return {
            "parameter": self.parameter,
            "value": self.value,
            "verdicts": dict(self.verdicts),
            "changed": list(self.changed),
        }


def check_target_dir(out: str | Path, name: str) -> Path:
    """``DIR/TARGET``, checked to be new, empty or an earlier reproduction's (it holds
    nothing but ``result.json``, ``figure.svg``, ``report.html`` and ``sweep``).

    Raises
    ------
    SweepDirError
        It holds anything else, or is not a directory.
    """
    where = Path(out) / name
    if where.exists() and not where.is_dir():
        raise SweepDirError(str(where), "is not a directory; choose another --out")
    if where.is_dir():
        other = sorted(
            p.name
            for p in where.iterdir()
            if p.name not in _OWN and not p.name.startswith(STAGING_PREFIX)
        )
        if other:
            raise SweepDirError(
                str(where),
                f"holds {other[0]!r}, which is not a reproduction's; choose a new or empty --out",
            )
    return where


def _write(path: Path, text: str) -> None:
    """Write ``text`` under a hidden name beside ``path``, then rename it into place."""
    hidden = path.with_name(f"{STAGING_PREFIX}{os.getpid()}-{path.name}")
    try:
        hidden.write_text(text, encoding="utf-8")
        os.replace(hidden, path)
    except BaseException:
        hidden.unlink(missing_ok=True)
        raise


def _shared_cells(out: Path, name: str, ids: Sequence[str]) -> dict[str, Path]:
    """The cells of ``ids`` another target's sweep under ``out`` has done, with their files
    (the first target in name order that has each)."""
    found: dict[str, Path] = {}
    if not ids or not out.is_dir():
        return found
    for other in sorted(out.iterdir()):
        cells = other / SWEEP / CELLS
        if other.name == name or not cells.is_dir():
            continue
        for cell_id in ids:
            path = cells / f"{cell_id}.parquet"
            if cell_id not in found and path.is_file():
                found[cell_id] = path
    return found


def _setting(label: str, seeds: Sequence[int]) -> str:
    """A part's label without its seed: a target that draws one schedule per seed has one
    part per seed (``schedule 3``), and its settings are the same across them."""
    if len(seeds) != 1:
        return label
    return re.sub(rf"\s*\b{seeds[0]}\b", "", label, count=1).strip() or label


def _report(
    target: Target, frame: pl.DataFrame, columns: Sequence[str], seeds: Sequence[int]
) -> str:
    """``sweep.html`` of the target's merged parts: means over seeds per setting (a part
    without its seed), policy and option."""
    metrics = headline(frame)
    by = ["policy", "setting", *(c for c in columns if c not in ("scenario", "policy", "seed"))]
    by = [c for c in dict.fromkeys(by) if c in frame.columns]
    facts = [
        ("target", f"{target.paper} {target.figure}: {target.description}"),
        ("parts", ", ".join(dict.fromkeys(frame["setting"].to_list()))),
        ("seeds", f"{len(seeds)}"),
        ("cells", f"{frame.height:,}"),
    ]
    return render_sweep(target.name, facts, settings(frame, by, [m for m, _ in metrics]), metrics)


def run_target(
    target: Target,
    out: str | Path,
    *,
    scale: float | None = None,
    seeds: Sequence[int] | None = None,
    jobs: int | None = None,
    progress: SweepProgress | None = None,
) -> TargetResult:
    """Run ``target`` and write ``DIR/TARGET`` (module docstring).

    Parameters
    ----------
    target : Target
        The target.
    out : str or Path
        DIR.
    scale : float, optional
        The experiment's size as a fraction of the paper's (default: the target's).
    seeds : Sequence of int, optional
        The seeds (default: the target's count, from 0).
    jobs : int, optional
        Worker processes (1: in this process; default: every core).
    progress : SweepProgress, optional
        Told the plan and each finished cell.

    Returns
    -------
    TargetResult

    Raises
    ------
    TargetUnavailable
        The model cannot express the target yet.
    SweepDirError
        ``DIR/TARGET`` cannot be used or written.
    ScenarioError
        A cell's run found an input problem.
    """
    if not target.runnable or target.build is None or target.evaluate is None:
        raise TargetUnavailable(target.name, target.needs or "a definition")
    chosen_scale = target.default_scale if scale is None else scale
    chosen_seeds = tuple(seeds) if seeds is not None else tuple(range(target.default_seeds))
    where = check_target_dir(out, target.name)
    started = time.perf_counter()
    parts = target.build(chosen_scale, chosen_seeds)
    store = SweepDir(str(where / SWEEP))
    cells: list[Cell] = [cell for part in parts for cell in part.grid.cells()]
    unique = {cell.id: cell for cell in reversed(cells)}
    done = store.read_cells(cell.id for cell in cells)
    shared = _shared_cells(Path(out), target.name, [c for c in unique if c not in done])
    if shared:
        store.open()
        for cell_id, source in shared.items():
            store.adopt_cell(cell_id, source)
        done.update(store.read_cells(shared))
    todo = [cell for cell in cells if cell.id not in done and unique[cell.id] is cell]
    if progress is not None:
        progress.start(len(cells), len(todo))
    store.open()
    if todo:
        workers = jobs or min(available_cores(), len(todo))
        with make_executor("local", workers, None, True) as runner:
            for cell, outcome in runner.run(todo):
                if isinstance(outcome, CellFailure):
                    raise ScenarioError(outcome.file, outcome.where, outcome.what)
                names = {name for name, _ in cell.parameters}
                store.write_cell(cell.id, {k: v for k, v in outcome.items() if k not in names})
                if progress is not None:
                    progress.finished(cell)
    found = {**done, **store.read_cells(cell.id for cell in todo)}
    frames = []
    columns: list[str] = []
    for part in parts:
        merged = merge(part.grid, part.grid.cells(), found)
        frames.append(
            merged.with_columns(
                pl.lit(part.label).alias("part"),
                pl.lit(_setting(part.label, part.grid.seeds)).alias("setting"),
            )
        )
        columns.extend(name for name, _ in part.grid.columns())
    frame = pl.concat(frames, how="diagonal_relaxed")
    store.publish(
        frame.drop("setting"),
        _report(target, frame, list(dict.fromkeys(columns)), chosen_seeds),
    )
    frame = frame.drop("setting")
    evaluation: Evaluation = target.evaluate(frame, chosen_seeds)
    rows = tuple(judge(m.claim, m.values) for m in evaluation.measured)
    result = TargetResult(
        target,
        rows,
        chosen_scale,
        chosen_seeds,
        len(todo),
        len(cells) - len(todo),
        time.perf_counter() - started,
        where,
        evaluation.figure,
    )
    _publish(result)
    return result


def _publish(result: TargetResult) -> None:
    """Write ``result.json``, ``figure.svg`` and ``report.html`` of ``result``."""
    target, where = result.target, result.out
    try:
        _write(where / RESULT, json.dumps(result.document(), indent=2) + "\n")
        _write(where / FIGURE, result.figure + "\n")
        _write(
            where / REPORT,
            render_reproduction(
                result.document(),
                description=target.description,
                section=target.section,
                scaled=target.scaled(result.scale),
                figure=result.figure,
                note=target.note,
            ),
        )
    except OSError as err:
        raise SweepDirError(
            str(where), f"cannot write the result ({err.strerror or err})"
        ) from None


def _slug(text: str) -> str:
    """A directory name for a swept value (``rack-slowdown-1.2``)."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-").lower() or "value"


def run_sensitivity(
    result: TargetResult,
    *,
    jobs: int | None = None,
    progress: SweepProgress | None = None,
) -> TargetResult:
    """Run ``result``'s target once per swept value of each of its setup parameters
    (:attr:`~.targets.base.Setup.sweep`, the ends of the plausible range; issue 33 item
    4), at the same scale and seeds, into ``DIR/TARGET/sensitivity/PARAMETER-k/``, and
    rewrite ``result.json`` and ``report.html`` with what changed.

    Parameters
    ----------
    result : TargetResult
        The target's own run (:func:`run_target`).
    jobs : int, optional
        Worker processes.
    progress : SweepProgress, optional
        Told each variant's plan and cells.

    Returns
    -------
    TargetResult
        ``result`` with its :attr:`~TargetResult.sensitivity`.
    """
    own = {row.metric: row.verdict for row in result.rows if row.kind != "model-check"}
    runs: list[SensitivityRun] = []
    for choice in result.target.setup:
        for k, variant in enumerate(choice.sweep):
            varied = dataclasses.replace(result.target, build=variant.build, setup=())
            where = result.out / SENSITIVITY / f"{_slug(choice.parameter)}-{k}"
            done = run_target(
                varied,
                where,
                scale=result.scale,
                seeds=result.seeds,
                jobs=jobs,
                progress=progress,
            )
            verdicts = tuple((row.metric, row.verdict) for row in done.rows)
            changed = tuple(m for m, v in verdicts if m in own and own[m] != v)
            runs.append(SensitivityRun(choice.parameter, variant.value, verdicts, changed))
    swept = dataclasses.replace(result, sensitivity=tuple(runs))
    _publish(swept)
    return swept
