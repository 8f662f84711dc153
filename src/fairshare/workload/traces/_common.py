"""What the trace readers share: the error type, streaming line readers and demand mapping.

A trace supplies jobs; the scenario supplies what the trace lacks (SPEC section 3). Readers
stream: they yield one :class:`~fairshare.workload.model.Job` at a time, in submit order, and
never hold a whole file in memory. A record that cannot be read is a :class:`TraceError`
naming the file and its line (SPEC section 4: ``error: FILE: line N: WHAT``, exit code 2).
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

import numpy as np

from fairshare.cluster import Cluster, FloatArray
from fairshare.workload.loader import ScenarioError

__all__ = [
    "TraceError",
    "check_readable",
    "first_resource_demand",
    "numbered_lines",
]


class TraceError(ScenarioError):
    """A trace that cannot be replayed: printed as ``error: FILE: line N: WHAT``.

    A subclass of :class:`~fairshare.workload.loader.ScenarioError`, so whatever reports
    scenario errors (one line, exit code 2) reports trace errors too. ``line`` is the 1-based
    line of the record in ``file`` (``None`` for a problem with the file as a whole: the
    WHERE part is then ``file``).
    """

    def __init__(self, file: str | Path, line: int | None, what: str) -> None:
        super().__init__(str(file), "file" if line is None else f"line {line}", what)
        self.line = line


def _open_text(path: Path) -> IO[str]:
    """Open a text file for streaming, decompressing ``.gz`` on the fly."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


def check_readable(path: Path, what: str = "trace file") -> None:
    """Fail now (before any simulation output exists) if ``path`` is not a readable file."""
    if not path.exists():
        raise TraceError(path, None, f"no such {what}")
    if not path.is_file():
        raise TraceError(path, None, f"is not a file (expected a {what})")
    try:
        with _open_text(path) as handle:
            handle.read(1)
    except OSError as err:  # includes gzip.BadGzipFile
        raise TraceError(path, None, f"cannot read ({err.strerror or err})") from None
    except (EOFError, zlib.error) as err:
        raise TraceError(path, 1, f"cannot read (corrupt compressed data: {err})") from None
    except UnicodeDecodeError:
        raise TraceError(path, 1, "cannot read (not UTF-8 text)") from None


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text without the newline)`` for each line, read lazily.

    Decompression and decoding problems become a :class:`TraceError` at the line where the
    reader stopped, so a truncated ``.gz`` names where it broke.
    """
    number = 0
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                yield number, line.rstrip("\r\n")
    except UnicodeDecodeError:
        raise TraceError(path, number + 1, "not UTF-8 text") from None
    except (OSError, EOFError, zlib.error) as err:
        raise TraceError(path, number + 1, f"cannot read further ({err})") from None


def first_resource_demand(cluster: Cluster) -> FloatArray:
    """One unit of the cluster's first resource (a slot, a processor): the per-task demand
    given to jobs from traces that do not record resource requests. Read-only, so every job
    can share the one array."""
    demand = np.zeros(len(cluster.resources), dtype=np.float64)
    demand[0] = 1.0
    demand.setflags(write=False)
    return demand


def resource_positions(cluster: Cluster, aliases: Mapping[str, tuple[str, ...]]) -> dict[str, int]:
    """Where each trace quantity goes in the cluster's resource order: ``aliases`` maps a
    quantity (``mem``) to the resource names it may have in a scenario (``mem``,
    ``memory``); quantities without a matching resource are left out."""
    positions: dict[str, int] = {}
    for quantity, names in aliases.items():
        for name in names:
            if name in cluster.resources:
                positions[quantity] = cluster.resources.index(name)
                break
    return positions
