"""What the trace readers share: the error type, streaming line readers and field parsing.

A trace supplies jobs; the scenario supplies what the trace lacks (SPEC section 3).
Readers stream: they yield one :class:`~fairshare.workload.model.Job` at a time, in
submit order, and never hold a whole file in memory. A record that cannot be read is a
:class:`TraceError` naming the file and its line (SPEC section 4:
``error: FILE: line N: WHAT``, exit code 2).

Every number a reader uses is parsed here (:func:`whole_number`, :func:`amount`):
finite, in its documented range, and a value that is not is named as ``field NAME: ...``
with the text cut to a readable length (:func:`shown`). Times are bounded by
:data:`~fairshare.workload.model.MAX_SECONDS` and tasks per job by
:data:`MAX_RECORD_TASKS`, so no trace can overflow the simulator's arithmetic or ask for
more tasks than memory holds.

Examples
--------
>>> from pathlib import Path
>>> from fairshare.workload.traces._common import TraceError, amount
>>> amount("2.5", "run time", Path("log.swf"), 3, maximum=100.0)
2.5
>>> try:
...     amount("1e400", "run time", Path("log.swf"), 3, maximum=100.0)
... except TraceError as error:
...     print(error)
error: log.swf: line 3: field run time: must be a number from 0 to 100, got '1e400'
"""

from __future__ import annotations

import gzip
import io
import math
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import numpy as np

from fairshare.cluster import Cluster, FloatArray
from fairshare.workload.loader import ScenarioError
from fairshare.workload.model import MAX_SECONDS, Job

__all__ = [
    "MAX_RECORD_TASKS",
    "MAX_SECONDS",
    "JobNames",
    "TraceError",
    "TraceJobs",
    "amount",
    "check_readable",
    "first_resource_demand",
    "numbered_lines",
    "shown",
    "some_names",
    "whole_number",
]

MAX_RECORD_TASKS = 1_000_000
"""The most tasks one trace record may become (SWIM's maps or reduces, SWF's processors).
The largest job of the shipped samples has 158,500 maps; a record beyond this is corrupt,
and replaying it would hold one entry per task."""

_SHOWN = 40
"""How many characters of a bad field an error message echoes."""
_DIGITS = 40
"""The longest whole-number field read: more than every bound has, with room for padding."""


class TraceError(ScenarioError):
    """A trace that cannot be replayed: printed as ``error: FILE: line N: WHAT``.

    A subclass of :class:`~fairshare.workload.loader.ScenarioError`, so whatever reports
    scenario errors (one line, exit code 2) reports trace errors too.

    Parameters
    ----------
    file : str or Path
        The trace file (a shard, for a trace of several files).
    line : int or None
        The 1-based line of the record; None for a problem with the file as a whole (the
        WHERE part is then ``file``).
    what : str
        What is wrong and what is allowed.

    Examples
    --------
    >>> from fairshare.workload.traces import TraceError
    >>> print(TraceError("log.swf", 12, "expected 18 fields, got 17"))
    error: log.swf: line 12: expected 18 fields, got 17
    """

    def __init__(self, file: str | Path, line: int | None, what: str) -> None:
        super().__init__(str(file), "file" if line is None else f"line {line}", what)
        self.line = line


class TraceJobs(Iterator[Job]):
    """A trace's jobs, streamed, with the ``warning:`` lines about the records it skipped.

    A reader that skips records a user should hear about (a history's jobs that never ran,
    tenants the scenario lacks) returns one: :func:`fairshare.workload.traces.open_trace`
    hands its :attr:`warnings` to the :class:`~fairshare.workload.generators.Workload`, and
    ``simulate`` prints them with its other warnings once the run is accepted.

    Parameters
    ----------
    jobs : Iterator of Job
        The jobs, in submit order.
    warnings : list of str
        Filled by the reader; complete once ``jobs`` is exhausted.
    """

    def __init__(self, jobs: Iterator[Job], warnings: list[str]) -> None:
        self.jobs = jobs
        self.warnings = warnings

    def __next__(self) -> Job:
        return next(self.jobs)


def some_names(names: Sequence[str], most: int = 5) -> str:
    """The first ``most`` of ``names``, quoted, and how many more: for a warning that counts
    records the scenario cannot place.

    Parameters
    ----------
    names : sequence of str
    most : int

    Returns
    -------
    str

    Examples
    --------
    >>> some_names(["a", "b"]), some_names(list("abcdefg"))
    ("'a', 'b'", "'a', 'b', 'c', 'd', 'e' and 2 more")
    """
    listed = ", ".join(repr(name) for name in names[:most])
    return listed + (f" and {len(names) - most} more" if len(names) > most else "")


def shown(text: str) -> str:
    """``text`` quoted for an error message, cut when long.

    A corrupt trace field may hold megabytes, and an error stays one readable line.

    Parameters
    ----------
    text : str
        A field's text.

    Returns
    -------
    str

    Examples
    --------
    >>> from fairshare.workload.traces._common import shown
    >>> shown("abc")
    "'abc'"
    >>> shown("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100 characters)"
    """
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[:_SHOWN]!r}... ({len(text):,} characters)"


def _field_error(path: Path, line: int, field: str, allowed: str, text: str) -> TraceError:
    """The :class:`TraceError` of a field that is not ``allowed``."""
    return TraceError(path, line, f"field {field}: must be {allowed}, got {shown(text)}")


def _bound(value: float) -> str:
    """A bound for a message: integers with thousands separators, floats short."""
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def whole_number(
    text: str, field: str, path: Path, line: int, *, maximum: int, note: str = ""
) -> int:
    """The whole number in ``text``, from 0 to ``maximum``.

    A field longer than 40 characters is rejected unread, so thousands of digits cost
    nothing (and never reach a float conversion, which overflowed).

    Parameters
    ----------
    text : str
        The field's text.
    field : str
        The field's name, for the error.
    path : Path
        The trace file, for the error.
    line : int
        The record's line, for the error.
    maximum : int
        The largest value allowed.
    note : str
        Appended to the error's "allowed" part (what the bound means).

    Returns
    -------
    int

    Raises
    ------
    TraceError
        ``field FIELD: must be a whole number from 0 to MAXIMUM, got TEXT``.
    """
    if len(text) <= _DIGITS:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if 0 <= value <= maximum:
            return value
    allowed = f"a whole number from 0 to {_bound(maximum)}{note}"
    raise _field_error(path, line, field, allowed, text)


def amount(
    text: str,
    field: str,
    path: Path,
    line: int,
    *,
    maximum: float,
    smallest: float = 0.0,
    missing: float | None = None,
    note: str = "",
) -> float:
    """The number in ``text``: 0, or from ``smallest`` to ``maximum``.

    Parameters
    ----------
    text : str
        The field's text.
    field : str
        The field's name, for the error.
    path : Path
        The trace file, for the error.
    line : int
        The record's line, for the error.
    maximum : float
        The largest value allowed.
    smallest : float
        The smallest value above 0 allowed.
    missing : float, optional
        A value that stands for "missing" (SWF's -1), accepted and returned as it is.
    note : str
        Appended to the error's "allowed" part (a unit).

    Returns
    -------
    float
        The value (``-0.0`` as ``0.0``), or ``missing``.

    Raises
    ------
    TraceError
        ``field FIELD: must be ..., got TEXT`` for anything else (NaN, infinities included).
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if value == missing:
        return value
    # `not <=` also rejects nan; inf and a long digit string (float gives inf) are above.
    if not 0 <= value <= maximum or 0 < value < smallest:
        low = f"0 or from {smallest:g}" if smallest else "from 0"
        allowed = f"a number {low} to {_bound(maximum)}{note}"
        if missing is not None:
            allowed += f", or {missing:g} (missing)"
        raise _field_error(path, line, field, allowed, text)
    return value + 0.0  # -0.0 as 0.0


class JobNames:
    """The job names a reader has yielded, each with its line, to reject a repeat where it is.

    The error names the second occurrence's line of the trace, not the scenario. The
    simulator keeps every job's record anyway, so one entry per job adds little.

    Parameters
    ----------
    path : Path
        The trace file, for the error.
    what : str
        What the name is called in the trace (``job number (field 1)``), for the error.
    """

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self.lines: dict[str, int] = {}

    def add(self, name: str, line: int) -> None:
        """Remember ``name`` at ``line``.

        Parameters
        ----------
        name : str
            A job's name.
        line : int
            The line of its record.

        Raises
        ------
        TraceError
            At ``line``, if the name was seen on another line.
        """
        first = self.lines.setdefault(name, line)
        if first != line:
            raise TraceError(
                self.path,
                line,
                f"{self.what} {shown(name)} repeats (first at line {first}); job ids must be "
                "unique",
            )


def _open_text(path: Path) -> IO[str]:
    """Open a text file for streaming, decompressing ``.gz`` on the fly."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


def check_readable(path: Path, what: str = "trace file") -> None:
    """Fail now, before any simulation output exists, if ``path`` is not a readable file.

    Parameters
    ----------
    path : Path
        The trace file (read compressed when it ends in ``.gz``).
    what : str
        What the file should be, for the error.

    Raises
    ------
    TraceError
        No such file, not a file, unreadable, corrupt compressed data or not UTF-8.
    """
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
    """The lines of a trace file, read lazily.

    Decompression and decoding problems become a :class:`TraceError` at the line where the
    reader stopped, so a truncated ``.gz`` names where it broke.

    Parameters
    ----------
    path : Path
        The file (read compressed when it ends in ``.gz``).

    Yields
    ------
    tuple of (int, str)
        The 1-based line number and the line's text without its newline.

    Raises
    ------
    TraceError
        The file stops being readable.
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
    """One unit of the cluster's first resource (a slot, a processor).

    The per-task demand given to jobs from traces that record no resource requests.
    Read-only, so every job can share the one array.

    Parameters
    ----------
    cluster : Cluster
        The cluster the trace is replayed on.

    Returns
    -------
    FloatArray
    """
    demand = np.zeros(len(cluster.resources), dtype=np.float64)
    demand[0] = 1.0
    demand.setflags(write=False)
    return demand


def resource_positions(cluster: Cluster, aliases: Mapping[str, tuple[str, ...]]) -> dict[str, int]:
    """Where each trace quantity goes in the cluster's resource order.

    Parameters
    ----------
    cluster : Cluster
        The cluster the trace is replayed on.
    aliases : Mapping of str to tuple of str
        Per trace quantity (``mem``), the resource names it may have in a scenario (``mem``,
        ``memory``), in order of preference.

    Returns
    -------
    dict of str to int
        The index of each quantity's resource; quantities without one are left out.
    """
    positions: dict[str, int] = {}
    for quantity, names in aliases.items():
        for name in names:
            if name in cluster.resources:
                positions[quantity] = cluster.resources.index(name)
                break
    return positions
