"""The output directory of ``fairshare sweep`` (``--out DIR``): a file per cell as it
finishes, so that an interrupted sweep goes on where it stopped, then the merged results.

```
DIR/.fairshare-output        the marker: command "sweep", the version, what fairshare wrote
DIR/cells/ID.parquet         one row per finished cell (its results, not its parameters)
DIR/results.parquet          every cell of the grid, in the grid's order
DIR/sweep.html               means over seeds with confidence intervals
```

A cell's file is named by its cell id (:func:`fairshare.experiments.grid_model.cell_id`: a hash
of the scenario's content, the policy, the seed, every option and fairshare's version), so a
sweep run again into DIR runs only the cells whose file is missing (or unreadable), whatever
grid wrote the others; the files of cells the grid no longer has stay, unused. A cell's file
holds the run's results only; the parameter columns come from the grid each time the results
are merged. Every file is written beside its place under a hidden name and renamed into it,
so a killed sweep leaves whole files or none.

DIR may be missing, empty, or an earlier sweep's (its marker says ``sweep``); anything else
is refused before the sweep starts, and nothing is written until the grid is accepted.
The marker lists ``cells`` (the directory: every file in it is the sweep's), so another
command's ``--out`` into DIR (:mod:`fairshare.report.outdir`) never deletes a user's file.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from fairshare.experiments.store import SweepDir
>>> with tempfile.TemporaryDirectory() as tmp:
...     out = SweepDir(f"{tmp}/sweep")
...     out.open()
...     out.write_cell("c1", {"makespan": 20.0, "users": "{}"})
...     found = out.read_cells(["c1", "c2"])
...     listed = sorted(p.name for p in Path(tmp, "sweep").iterdir())
>>> list(found), found["c1"]["makespan"].to_list(), listed
(['c1'], [20.0], ['.fairshare-output', 'cells'])
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

import polars as pl

from fairshare import __version__
from fairshare.errors import FairshareError
from fairshare.report.outdir import MARKER, STAGING_PREFIX

__all__ = ["CELLS", "COMMAND", "REPORT", "RESULTS", "SweepDir", "SweepDirError"]

COMMAND = "sweep"
"""The command the marker names."""
CELLS = "cells"
"""The directory of the cells' files."""
RESULTS = "results.parquet"
"""The merged results (SPEC section 7)."""
REPORT = "sweep.html"
"""The report (SPEC section 7)."""
_MARKER_LIMIT = 1 << 20


class SweepDirError(FairshareError):
    """DIR cannot hold the sweep, or a file cannot be written there: ``error: FILE: --out:
    WHAT`` with exit code 2 (the user must fix it).

    Parameters
    ----------
    file : str
        The path at fault.
    what : str
        What is wrong and what to do.
    """

    def __init__(self, file: str, what: str) -> None:
        super().__init__(f"{file}: {what}")
        self.file = file
        self.what = what


def _reason(err: OSError) -> str:
    """The reason an ``OSError`` gives, for a message."""
    return err.strerror or str(err)


def _marker(directory: Path) -> dict[str, object] | None:
    """The marker's document, if DIR holds a marker fairshare can read."""
    try:
        with open(directory / MARKER, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            raw = handle.read(_MARKER_LIMIT + 1)
        document = json.loads(raw) if len(raw) <= _MARKER_LIMIT else None
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


class SweepDir:
    """``--out DIR`` of a sweep: checked when made (nothing written), then used.

    Parameters
    ----------
    text : str
        DIR, as the user wrote it.

    Raises
    ------
    SweepDirError
        DIR is a file, a dangling link, unreadable, or a non-empty directory that is not a
        sweep's output.
    """

    def __init__(self, text: str) -> None:
        if not text.strip():
            raise SweepDirError("command line", f"must name a directory, got {text!r}")
        self.out = Path(text)
        self.cells = self.out / CELLS
        self.previous: list[str] = []
        try:
            found = os.stat(self.out)
        except FileNotFoundError:
            if os.path.islink(self.out):
                raise SweepDirError(str(self.out), "is a dangling symbolic link") from None
            return
        except OSError as err:
            raise SweepDirError(str(self.out), f"cannot use this path ({_reason(err)})") from None
        if not stat.S_ISDIR(found.st_mode):
            raise SweepDirError(str(self.out), "exists and is not a directory")
        try:
            entries = [e for e in os.listdir(self.out) if not e.startswith(STAGING_PREFIX)]
        except OSError as err:
            raise SweepDirError(str(self.out), f"cannot read it ({_reason(err)})") from None
        if not entries:
            return
        marker = _marker(self.out) if MARKER in entries else None
        if marker is None:
            raise SweepDirError(
                str(self.out),
                f"is not empty and holds no {MARKER} of a sweep; choose a new or empty "
                "directory, or an earlier sweep's to go on with it",
            )
        if marker.get("command") != COMMAND:
            raise SweepDirError(
                str(self.out),
                f"holds the output of `fairshare {marker.get('command')}`, not of a sweep; "
                "choose a new or empty directory",
            )
        files = marker.get("files")
        self.previous = [f for f in files if isinstance(f, str)] if isinstance(files, list) else []
        for name in (CELLS, RESULTS, REPORT):
            path = self.out / name
            wanted = stat.S_ISDIR if name == CELLS else stat.S_ISREG
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            except OSError as err:
                raise SweepDirError(str(path), f"cannot use it ({_reason(err)})") from None
            if not wanted(mode):
                kind = "a directory" if name == CELLS else "a file"
                raise SweepDirError(
                    str(path), f"is in the way: fairshare writes {kind} there; move it"
                )

    def open(self) -> None:
        """Create DIR and its ``cells`` directory and write the marker; remove the hidden
        files of a sweep that was killed while writing."""
        try:
            self.cells.mkdir(parents=True, exist_ok=True)
            for entry in os.listdir(self.cells):
                if entry.startswith(STAGING_PREFIX):
                    (self.cells / entry).unlink(missing_ok=True)
            files = sorted({*self.previous, CELLS, RESULTS, REPORT})
            document = {"command": COMMAND, "version": __version__, "files": files}
            self._write(
                MARKER, lambda handle: handle.write(json.dumps(document, indent=2).encode() + b"\n")
            )
        except OSError as err:
            raise SweepDirError(str(self.out), f"cannot write there ({_reason(err)})") from None

    def _write(self, relative: str, write: Callable[[BinaryIO], object]) -> None:
        """Write ``relative`` under a hidden name beside it, then rename it into place."""
        target = self.out / relative
        hidden = target.with_name(f"{STAGING_PREFIX}{os.getpid()}-{target.name}")
        try:
            with open(hidden, "wb") as handle:
                write(handle)
            os.replace(hidden, target)
        except BaseException:
            hidden.unlink(missing_ok=True)
            raise

    def read_cells(self, ids: Iterable[str]) -> dict[str, pl.DataFrame]:
        """The files of the cells ``ids`` that are there and readable (one row each), by
        cell id."""
        found: dict[str, pl.DataFrame] = {}
        for cell in ids:
            path = self.cells / f"{cell}.parquet"
            if cell in found or not path.is_file():
                continue
            try:
                frame = pl.read_parquet(path)
            except Exception:  # an unreadable file: its cell runs again
                continue
            if frame.height == 1:
                found[cell] = frame
        return found

    def adopt_cell(self, cell: str, source: Path) -> None:
        """Copy the file of cell ``cell`` from another sweep's ``cells`` directory
        (``source``) into this one: the same cell id is the same run, so a reproduction
        whose targets share cells runs each once.

        Raises
        ------
        SweepDirError
            It cannot be written.
        """
        try:
            self._write(f"{CELLS}/{cell}.parquet", lambda handle: handle.write(source.read_bytes()))
        except OSError as err:
            raise SweepDirError(
                str(self.cells), f"cannot write the results ({_reason(err)})"
            ) from None

    def write_cell(self, cell: str, result: dict[str, object]) -> None:
        """Write the results of cell ``cell`` (its id) as ``cells/ID.parquet``.

        Raises
        ------
        SweepDirError
            It cannot be written (no space left, a file-size limit).
        """
        frame = pl.DataFrame([result], infer_schema_length=None)
        try:
            self._write(f"{CELLS}/{cell}.parquet", frame.write_parquet)
        except OSError as err:
            raise SweepDirError(
                str(self.cells), f"cannot write the results ({_reason(err)})"
            ) from None

    def publish(self, results: pl.DataFrame, report: str) -> None:
        """Write ``results.parquet`` and ``sweep.html``.

        Raises
        ------
        SweepDirError
            They cannot be written.
        """
        try:
            self._write(RESULTS, results.write_parquet)
            self._write(REPORT, lambda handle: handle.write(report.encode("utf-8")))
        except OSError as err:
            raise SweepDirError(
                str(self.out), f"cannot write the results ({_reason(err)})"
            ) from None
