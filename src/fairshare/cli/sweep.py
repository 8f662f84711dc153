"""``fairshare sweep GRID --out DIR [--jobs N] [--executor local|ray] [--ray ADDRESS]``
(SPEC section 7): every cell of a grid of policies, seeds, options and scenario parameters,
on this machine's cores or a Ray cluster, resumable, merged into ``results.parquet`` and
``sweep.html`` (:mod:`fairshare.experiments`)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from fairshare.cli.app import InputError, app, flag, flags_in
from fairshare.cli.runs import OutOption

# Imported by the command, so that other commands do not load the experiments (polars).
if TYPE_CHECKING:
    from fairshare.experiments import SweepResult
    from fairshare.experiments.cells import Cell


class _Interrupted(BaseException):
    """SIGTERM or SIGHUP during the sweep (SIGINT is ``KeyboardInterrupt``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP stop the sweep as SIGINT does, so that its workers are ended and
    the cells done are reported; a signal the parent ignores (nohup) stays ignored."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        """Stop the sweep where it is."""
        raise _Interrupted(signum)

    saved = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:
            saved[signum] = signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


class _Progress:
    """Cells done, elapsed time and the time left, on stderr when it is a terminal."""

    def __init__(self) -> None:
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.cells = 0
        self.todo = 0

    def start(self, cells: int, todo: int) -> None:
        """Show the bar for the ``todo`` cells to run, if stderr is a terminal."""
        self.cells, self.todo = cells, todo
        if not todo or not sys.stderr.isatty():
            return
        before = cells - todo
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("cells"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(markup=False, stderr=True),
            transient=True,
        )
        self.bar.start()
        label = f"sweep ({before} of {cells} done before)" if before else "sweep"
        self.task = self.bar.add_task(label, total=todo)

    def finished(self, cell: Cell) -> None:
        """One more cell done."""
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task)

    def close(self) -> None:
        """Take the bar off the terminal."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _print_result(result: SweepResult, executor: str) -> None:
    """The means over seeds per setting, what ran, and what was written (stdout)."""
    from fairshare.experiments.aggregate import settings  # noqa: PLC0415
    from fairshare.report.html import fmt  # noqa: PLC0415

    frame, grid = result.results, result.grid
    shown = [
        (column, label)
        for column, label in (
            ("mean_response_time", "mean response (s)"),
            ("mean_slowdown", "mean slowdown"),
            ("makespan", "makespan (s)"),
            ("locality_node", "node-local"),
        )
        if column in frame.columns and frame[column].drop_nulls().len() > 0
    ]
    by = [name for name, _ in grid.columns() if name not in ("scenario", "seed")]
    table = Table(
        title=f"means over seeds, ± half of the 95% interval ({grid.source})",
        title_justify="left",
    )
    table.add_column("policy and settings")
    table.add_column("seeds", justify="right")
    for _, label in shown:
        table.add_column(label, justify="right")
    found = settings(frame, by, [column for column, _ in shown])
    for setting in found:
        cells = []
        for column, _ in shown:
            interval = setting.stats[column]
            value = fmt(interval.mean)
            cells.append(value if interval.low is None else f"{value} ± {fmt(interval.half_width)}")
        seeds = max((i.n for i in setting.stats.values()), default=0)
        table.add_row(setting.label, str(seeds), *cells)
    # Wide enough for every row unwrapped, whatever the terminal says.
    width = max((len(g.label) for g in found), default=0) + 16 + 24 * len(shown)
    console = Console(
        markup=False, highlight=False, width=max(width, Console().width), soft_wrap=True
    )
    console.print(table)
    if result.ran:
        before = f"; {result.reused} were done before" if result.reused else ""
        ran = f"ran {result.ran} cells in {result.seconds:.1f} s {executor}{before}"
    else:
        ran = f"nothing to run: all {result.reused} cells were done before"
    console.print(ran, markup=False)
    console.print(
        f"wrote {result.out}: results.parquet ({frame.height} cells), sweep.html", markup=False
    )


@app.command("sweep")
def sweep_command(
    grid_path: Annotated[
        Path,
        typer.Argument(
            metavar="GRID",
            help="YAML or JSON grid: a scenario, policies, seeds, options and parameters",
        ),
    ],
    out: OutOption,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Cells at a time (default: every core; with --executor ray, the cluster's CPUs)",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor", metavar="local|ray", help="Run the cells on this machine or on Ray"
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="The Ray cluster for --executor ray (default: a local Ray instance)",
        ),
    ] = None,
) -> None:
    """Run every cell of a grid (policies x seeds x options x scenario parameters) and write
    DIR/results.parquet and DIR/sweep.html; run again into DIR, only the cells not yet done
    run."""
    from fairshare.experiments import (  # noqa: PLC0415
        ExecutorError,
        SweepDirError,
        load_grid,
        run_sweep,
    )
    from fairshare.experiments.sweep import EXECUTORS, available_cores  # noqa: PLC0415

    if executor not in EXECUTORS:
        raise InputError("command line", "--executor", f"expected local or ray, got {executor!r}")
    if ray_address is not None and executor != "ray":
        raise InputError("command line", "--ray", "is the cluster of --executor ray; add it")
    grid = load_grid(grid_path)
    progress = _Progress()
    if executor == "ray":
        where = f"on Ray at {ray_address}" if ray_address else "on a local Ray instance"
    else:
        workers = jobs or available_cores()
        where = f"in {workers} worker processes" if workers > 1 else "in this process"
    try:
        with _signals_interrupt():
            result = run_sweep(
                grid,
                out,
                jobs=jobs,
                executor=executor,
                ray_address=ray_address,
                progress=progress,
            )
    except SweepDirError as err:
        raise InputError(err.file, "--out", err.what) from None
    except ExecutorError as err:
        raise InputError("command line", flag(err.where), flags_in(err.what)) from None
    except (KeyboardInterrupt, _Interrupted) as err:
        progress.close()
        signum = err.signum if isinstance(err, _Interrupted) else signal.SIGINT
        ids = {cell.id for cell in grid.cells()}
        kept = Path(out) / "cells"
        done = sum((kept / f"{cell}.parquet").is_file() for cell in ids)
        sys.stderr.write(
            f"error: interrupted by {signal.Signals(signum).name}: {done} of {len(ids)} "
            f"cells are done, kept in {kept}; run the same command again to run the rest\n"
        )
        raise SystemExit(128 + signum) from None
    finally:
        progress.close()
    _print_result(result, where)
    errors = Console(markup=False, stderr=True, highlight=False, soft_wrap=True)
    for line in result.warnings():
        errors.print(line, markup=False)
