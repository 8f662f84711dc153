"""What a simulated or live run leaves behind: the contract between the drivers (the event
engine ``fairshare.sim``, the live driver ``fairshare.backends``) and the layers that read runs
(``fairshare.metrics``, ``fairshare.report``, the ``simulate``, ``compare`` and ``serve``
commands). It sits below both drivers, so that a live run writes the same files as a
simulation.

A run is recorded as plain rows, one per task attempt and one per job, so that metrics are
pure functions of the log and every output file (SPEC section 3) can be derived from it.
Times are seconds from the start of the run. Rows are in a deterministic order: task
attempts by (start, job order, phase, task, attempt), jobs in submission order.

Examples
--------
A log as the simulator writes it (:func:`fairshare.sim.simulate`):

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.sim import simulate
>>> from fairshare.workload.model import FixedDuration, Job
>>> cluster = Cluster.build(["slots"], [Machine("m", np.array([2.0]))])
>>> job = Job("a", 0.0, "alice", np.array([1.0]), 3, FixedDuration(10.0))
>>> log = simulate(cluster, [job], "fifo", seed=0)
>>> [(a.task, a.machine, a.start, a.finish) for a in log.attempts]
[(0, 'm', 0.0, 10.0), (1, 'm', 0.0, 10.0), (2, 'm', 10.0, 20.0)]
>>> record = log.jobs[0]
>>> record.finish - record.submit, record.isolated_response
(20.0, 20.0)
"""

from __future__ import annotations

import heapq
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from fairshare.allocation.types import IntArray
from fairshare.cluster import BoolArray, Cluster, FloatArray

Locality = Literal["node", "rack", "off_rack"]
"""Where a map task read its input block from: its own machine, its rack, or another rack
(FAIR section 4)."""
Phase = Literal["map", "reduce", "copy"]
"""A task's phase: a map task, a reducer, or a reducer's copy part (copy-compute splitting,
FAIR section 5.2)."""


@dataclass(frozen=True, slots=True)
class TaskAttempt:
    """One run of one task on one machine, from launch to finish or kill.

    A row of ``tasks.parquet`` (SPEC section 3).

    Attributes
    ----------
    job, user : str
        The task's job and the job's user (or pool).
    phase : {"map", "reduce", "copy"}
        ``map``, ``reduce`` or, with copy-compute splitting (FAIR section 5.2), ``copy``: a
        reducer is then recorded as its copy part (``copy``, which holds no resource) and
        its compute part (``reduce``, the reduce demand), so busy time counts only the
        compute part's resources. Without splitting, a ``reduce`` attempt is the whole
        reducer, copy and compute, and holds its demand from launch (launched before the
        job's maps finished, it holds it while it waits for them: FAIR section 5.1's slot
        hoarding).
    task : int
        The task's index within its phase.
    attempt : int
        0 for the first run of the task, one more for each run after a kill or a pause.
    machine : str
        The machine it ran on.
    start, finish : float
        Seconds from the start of the run.
    killed : bool
        Killed by preemption or a machine's removal: ``finish`` is the kill time, and the
        task runs again later as attempt + 1.
    locality : {"node", "rack", "off_rack"} or None
        Where the task read its input block from; None for tasks that read none.
    truncated : bool
        Still running when the run stopped at its ``until`` time: ``finish`` is that time,
        so that busy time up to the end of the run is counted.
    """

    job: str
    user: str
    phase: Phase
    task: int
    attempt: int
    machine: str
    start: float
    finish: float
    killed: bool = False
    locality: Locality | None = None
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job of the run: a row of ``jobs.csv`` (SPEC section 3).

    Attributes
    ----------
    job, user, queue : str
        The job's name, its user (or pool) and its queue.
    submit : float
        When it was submitted.
    tasks : int
        All its tasks, map and reduce (a split reducer once).
    demand : FloatArray
        The per-task demand vector in the cluster's resource order.
    weight : float
        The job's weight.
    first_start, finish : float or None
        When its first task started and its last finished; None for a job that never
        started or never finished before the run ended.
    isolated_response : float
        The job's response time alone on the empty cluster (the denominator of slowdown,
        SPEC section 3); ``inf`` for a job that can never run, since no machine it may use
        holds one of its tasks (:class:`fairshare.workload.eligibility.TaskFit`).
    reduce_demand : FloatArray or None
        A reducer's demand when it differs from ``demand`` (None: ``demand``).
    """

    job: str
    user: str
    queue: str
    submit: float
    tasks: int
    demand: FloatArray
    weight: float
    first_start: float | None
    finish: float | None
    isolated_response: float
    reduce_demand: FloatArray | None = None

    @classmethod
    def of(
        cls,
        job: str,
        user: str,
        queue: str,
        submit: float,
        tasks: int,
        demand: FloatArray,
        weight: float,
        first_start: float | None,
        finish: float | None,
        isolated_response: float,
        reduce_demand: FloatArray | None,
    ) -> JobRecord:
        """``JobRecord(...)`` of these fields, without the frozen ``__init__``'s call per
        field: each is set through its slot (a driver makes one per job, tens of thousands in
        a trace replay: about 1.1 microseconds, not 3.0).

        Examples
        --------
        >>> import numpy as np
        >>> demand = np.array([1.0])
        >>> made = JobRecord.of("j", "u", "q", 0.0, 2, demand, 1.0, 1.0, 5.0, 4.0, None)
        >>> made == JobRecord("j", "u", "q", 0.0, 2, demand, 1.0, 1.0, 5.0, 4.0)
        True
        """
        record = object.__new__(cls)
        _SET_JOB(record, job)
        _SET_USER(record, user)
        _SET_QUEUE(record, queue)
        _SET_SUBMIT(record, submit)
        _SET_TASKS(record, tasks)
        _SET_DEMAND(record, demand)
        _SET_WEIGHT(record, weight)
        _SET_FIRST_START(record, first_start)
        _SET_FINISH(record, finish)
        _SET_ISOLATED_RESPONSE(record, isolated_response)
        _SET_REDUCE_DEMAND(record, reduce_demand)
        return record


# JobRecord's slots' setters, for JobRecord.of (a frozen class refuses setattr, not its slots).
(
    _SET_JOB,
    _SET_USER,
    _SET_QUEUE,
    _SET_SUBMIT,
    _SET_TASKS,
    _SET_DEMAND,
    _SET_WEIGHT,
    _SET_FIRST_START,
    _SET_FINISH,
    _SET_ISOLATED_RESPONSE,
    _SET_REDUCE_DEMAND,
) = (JobRecord.__dict__[name].__set__ for name in JobRecord.__slots__)


ROW_FIELDS: Final = 8
"""A driver records attempts flat, ``ROW_FIELDS`` list items per attempt: (start, job
order, phase, task, attempt, machine, finish, locality), where the job order indexes
``RunLog.jobs`` (the job's name and user are its record's). Eight items appended to one list
cost a simulation much less than a tuple per attempt: no object per attempt to build, keep
and have the cyclic collector walk, which at 200,000 tasks is a measurable share of a run.
The item offsets follow."""
ROW_START, ROW_ORDER, ROW_PHASE, ROW_TASK, ROW_ATTEMPT, ROW_MACHINE, ROW_FINISH, ROW_LOCALITY = (
    range(ROW_FIELDS)
)


PHASES: tuple[Phase, ...] = ("map", "reduce", "copy")
"""The phases; a phase column holds indices into this tuple."""
LOCALITIES: tuple[Locality, ...] = ("node", "rack", "off_rack")
"""The locality levels; a locality column holds indices into this tuple, -1 for an attempt
that read no input data."""
NO_LOCALITY = -1
"""The locality code of an attempt that read no input data."""

_PHASE_CODE: dict[str, int] = {phase: code for code, phase in enumerate(PHASES)}
_LOCALITY_CODE: dict[str | None, int] = {
    None: NO_LOCALITY,
    **{level: code for code, level in enumerate(LOCALITIES)},
}
_PHASE_SORT_RANK = np.argsort(np.argsort(np.array(PHASES)))
"""Each phase code's rank in the alphabetical order of the phase names, which the attempts
were always sorted by (a copy part before the map before the reduce of one time, job and
task index)."""


class RowColumns(NamedTuple):
    """Attempts as a driver records them, one array per field in launch order (unsorted),
    names coded as in :class:`AttemptRows`: what :meth:`AttemptRows.from_columns_open`
    sorts into a table. The simulator appends each launch to typed arrays of these fields
    and hands them over as numpy arrays (:meth:`fairshare.sim.run_state.RunState.spill`).
    """

    start: FloatArray
    order: IntArray
    phase: IntArray
    task: IntArray
    attempt: IntArray
    machine: IntArray
    machine_names: tuple[str, ...]
    finish: FloatArray
    locality: IntArray


class AttemptRows(NamedTuple):
    """A run's attempts as columns, one numpy array per field (a table of attempts).

    The columns are in the log's attempt order (by start, job order, phase name, task,
    attempt; the five are unique per attempt), one entry per attempt. Names repeat across
    attempts, so they are stored once and indexed: ``phase`` indexes :data:`PHASES`,
    ``locality`` :data:`LOCALITIES` (-1: no input data), ``machine`` the row's own
    ``machine_names``; ``order`` indexes ``RunLog.jobs``. The other fields are those of
    :class:`TaskAttempt`.

    Attributes
    ----------
    start, finish : FloatArray
        Per attempt, its start and finish.
    order, task, attempt : IntArray
        Per attempt, its job's index in ``RunLog.jobs``, its task and attempt numbers.
    phase, locality, machine : IntArray
        Per attempt, the index of its phase, locality and machine name (see above).
    machine_names : tuple of str
        The machines the attempts ran on, in order of first use.
    killed, truncated : BoolArray
        Per attempt, whether it was killed, or cut at the end of the run.
    """

    start: FloatArray
    order: IntArray
    phase: IntArray
    task: IntArray
    attempt: IntArray
    machine: IntArray
    machine_names: tuple[str, ...]
    finish: FloatArray
    killed: BoolArray
    locality: IntArray
    truncated: BoolArray

    @classmethod
    def from_flat(
        cls, flat: list[Any], killed: Iterable[int], truncated: Iterable[int]
    ) -> AttemptRows:
        """The columns of a driver's flat attempt list, sorted.

        A driver appends attempts as they start, so they are sorted but for attempts that
        started at one time: a vectorised pass over neighbours finds out, and only an
        unsorted log pays for the sort. Each column is converted from the list once, here,
        so that the metrics and output files read arrays.

        Parameters
        ----------
        flat : list
            :data:`ROW_FIELDS` items per attempt (see there).
        killed, truncated : iterable of int
            The offsets in ``flat`` of the attempts that were killed, or truncated.

        Returns
        -------
        AttemptRows

        Examples
        --------
        Two attempts started at one time, recorded out of order (job 1 before job 0); the
        attempt at offset 8 was killed:

        >>> flat = [5.0, 1, "map", 0, 0, "m1", 9.0, None, 5.0, 0, "map", 0, 0, "m2", 8.0, "node"]
        >>> rows = AttemptRows.from_flat(flat, killed=[8], truncated=[])
        >>> rows.order.tolist(), rows.names("machine"), rows.killed.tolist()
        ([0, 1], ['m2', 'm1'], [True, False])
        """
        return cls._sorted_from_flat(flat, killed, truncated)[1]

    @classmethod
    def from_columns_open(
        cls,
        columns: RowColumns,
        killed: Sequence[int],
        truncated: Sequence[int],
        now: float,
    ) -> tuple[AttemptRows, IntArray, IntArray]:
        """The sorted table of attempts held as columns in launch order (a driver's typed
        arrays, :class:`RowColumns`; ``killed`` and ``truncated`` given by row), as
        :meth:`from_flat` sorts a flat list, and the attempts that may still be running at
        ``now`` (those ending then or later): their rows in launch order, ascending, and
        where each is in the table. Found on the columns, all at once, with no item converted
        one by one.

        Examples
        --------
        Job 1's attempt launched before job 0's at one time; the first was killed:

        >>> columns = RowColumns(
        ...     start=np.array([5.0, 5.0]), order=np.array([1, 0]), phase=np.array([0, 0]),
        ...     task=np.array([0, 0]), attempt=np.array([0, 0]), machine=np.array([0, 1]),
        ...     machine_names=("m1", "m2"), finish=np.array([9.0, 4.0]),
        ...     locality=np.array([-1, -1]))
        >>> table, flat_rows, table_rows = AttemptRows.from_columns_open(columns, [0], [], 6.0)
        >>> table.order.tolist(), table.names("machine"), table.killed.tolist()
        ([0, 1], ['m2', 'm1'], [False, True])
        >>> flat_rows.tolist(), table_rows.tolist()
        ([0], [1])
        """
        return _open_rows(*cls._sorted_columns(columns, killed, truncated), now)

    @classmethod
    def from_columns(
        cls, columns: RowColumns, killed: Sequence[int], truncated: Sequence[int]
    ) -> AttemptRows:
        """:meth:`from_columns_open`'s table alone."""
        return cls._sorted_columns(columns, killed, truncated)[1]

    @classmethod
    def _sorted_columns(
        cls, columns: RowColumns, killed: Sequence[int], truncated: Sequence[int]
    ) -> tuple[IntArray | None, AttemptRows]:
        """The table of ``columns`` and the permutation that sorted it (None: none did)."""
        n = len(columns.start)
        uniform = {
            offset
            for offset, column in (
                (ROW_ORDER, columns.order),
                (ROW_PHASE, columns.phase),
                (ROW_TASK, columns.task),
                (ROW_ATTEMPT, columns.attempt),
                (ROW_LOCALITY, columns.locality),
            )
            if n and column[0] == column[-1] and bool(np.all(column == column[0]))
        }
        return cls._sorted(
            columns,
            _flags_at(n, killed),
            _flags_at(n, truncated),
            uniform,
            bool(killed),
            bool(truncated),
        )

    @classmethod
    def _sorted_from_flat(
        cls, flat: list[Any], killed: Iterable[int], truncated: Iterable[int]
    ) -> tuple[IntArray | None, AttemptRows]:
        """:meth:`from_flat`'s table and the permutation that sorted it (None: none did)."""
        n = len(flat) // ROW_FIELDS

        # A column of one value all along (every attempt a map task's first, without input
        # data: a trace replay's usual piece) is filled, not converted item by item; the
        # test is a scan that compares by identity first, a tenth of a conversion. Not for
        # times: -0.0 equals 0.0. Such a column is neither a sort key (a stable sort by a
        # constant changes nothing) nor permuted (it is its own permutation).
        uniform: set[int] = set()

        def numbers(offset: int, dtype: type[np.generic]) -> npt.NDArray[Any]:
            items = flat[offset::ROW_FIELDS]
            # The last item first: a column that varies (a job's order, a task's number)
            # mostly differs there, and is then not scanned twice.
            if dtype is np.int64 and n and items[-1] == items[0] and items.count(items[0]) == n:
                uniform.add(offset)
                return np.full(n, items[0], dtype=dtype)
            return np.fromiter(items, dtype=dtype, count=n)

        def codes(offset: int, lookup: Callable[[Any], int]) -> IntArray:
            items = flat[offset::ROW_FIELDS]
            if n and items[-1] == items[0] and items.count(items[0]) == n:
                uniform.add(offset)
                return np.full(n, lookup(items[0]), dtype=np.int64)
            return np.fromiter(map(lookup, items), dtype=np.int64, count=n)

        machines = flat[ROW_MACHINE::ROW_FIELDS]
        machine_index = {name: i for i, name in enumerate(dict.fromkeys(machines))}
        columns = RowColumns(
            start=numbers(ROW_START, np.float64),
            order=numbers(ROW_ORDER, np.int64),
            phase=codes(ROW_PHASE, _PHASE_CODE.__getitem__),
            task=numbers(ROW_TASK, np.int64),
            attempt=numbers(ROW_ATTEMPT, np.int64),
            machine=np.fromiter(map(machine_index.__getitem__, machines), dtype=np.int64, count=n),
            machine_names=tuple(machine_index),
            finish=numbers(ROW_FINISH, np.float64),
            locality=codes(ROW_LOCALITY, _LOCALITY_CODE.__getitem__),
        )
        killed = list(killed)
        truncated = list(truncated)
        return cls._sorted(
            columns,
            _flags(n, killed),
            _flags(n, truncated),
            uniform,
            bool(killed),
            bool(truncated),
        )

    @classmethod
    def _sorted(
        cls,
        columns: RowColumns,
        was_killed: BoolArray,
        cut: BoolArray,
        uniform: set[int],
        killed: bool,
        truncated: bool,
    ) -> tuple[IntArray | None, AttemptRows]:
        """The table of ``columns`` (in launch order) and the permutation that sorted it
        (None: none did); ``uniform`` names the row offsets of columns of one value all along
        (neither sort keys nor permuted), ``killed`` and ``truncated`` whether any flag is
        set."""
        # Generic arrays: a sort permutes the float and the integer columns alike.
        start: npt.NDArray[Any] = columns.start
        order: npt.NDArray[Any] = columns.order
        phase: npt.NDArray[Any] = columns.phase
        task: npt.NDArray[Any] = columns.task
        attempt: npt.NDArray[Any] = columns.attempt
        machine: npt.NDArray[Any] = columns.machine
        finish: npt.NDArray[Any] = columns.finish
        locality: npt.NDArray[Any] = columns.locality
        keys = tuple(
            key
            for offset, key in (
                (ROW_START, start),
                (ROW_ORDER, order),
                (ROW_PHASE, _PHASE_SORT_RANK[phase]),
                (ROW_TASK, task),
                (ROW_ATTEMPT, attempt),
            )
            if offset not in uniform
        )
        by: IntArray | None = None
        if keys and not _ascending(keys):
            by = _lexicographic_order(keys)
            start, order, task, finish, machine = (
                c if offset in uniform else c[by]
                for offset, c in (
                    (ROW_START, start),
                    (ROW_ORDER, order),
                    (ROW_TASK, task),
                    (ROW_FINISH, finish),
                    (ROW_MACHINE, machine),
                )
            )
            phase, attempt, locality = (
                c if offset in uniform else c[by]
                for offset, c in (
                    (ROW_PHASE, phase),
                    (ROW_ATTEMPT, attempt),
                    (ROW_LOCALITY, locality),
                )
            )
            if killed:
                was_killed = was_killed[by]
            if truncated:
                cut = cut[by]
        out = (start, order, phase, task, attempt, machine, finish, was_killed, locality, cut)
        for column in out:
            column.flags.writeable = False  # a log is immutable; its readers share these
        return by, cls(
            start,
            order,
            phase,
            task,
            attempt,
            machine,
            columns.machine_names,
            finish,
            was_killed,
            locality,
            cut,
        )

    @classmethod
    def concat(cls, pieces: Sequence[AttemptRows]) -> AttemptRows:
        """The columns of consecutive pieces of one log, as one table.

        A driver that hands its attempts over in pieces (the simulator spills the closed
        attempts of its flat list as the run goes, :class:`fairshare.sim.run_state.RunState`)
        cuts them where the start time changes, so each piece sorted on its own and the
        pieces in order are the log's order. Machine names keep their order of first use.

        Parameters
        ----------
        pieces : sequence of AttemptRows
            In run order; each sorted (:meth:`from_flat`).

        Returns
        -------
        AttemptRows

        Examples
        --------
        >>> a = AttemptRows.from_flat([0.0, 0, "map", 0, 0, "m2", 5.0, None], [], [])
        >>> b = AttemptRows.from_flat(
        ...     [1.0, 0, "map", 1, 0, "m1", 6.0, None, 1.0, 0, "map", 2, 0, "m2", 7.0, None],
        ...     [8], [])
        >>> rows = AttemptRows.concat([a, b])
        >>> rows.names("machine"), rows.task.tolist(), rows.killed.tolist()
        (['m2', 'm1', 'm2'], [0, 1, 2], [False, False, True])
        """
        if len(pieces) == 1:
            return pieces[0]
        if not pieces:
            return cls.from_flat([], (), ())
        machine_index: dict[str, int] = {}
        for piece in pieces:
            for name in piece.machine_names:
                machine_index.setdefault(name, len(machine_index))
        machines = []
        for piece in pieces:
            remap = np.fromiter(
                (machine_index[name] for name in piece.machine_names),
                dtype=np.int64,
                count=len(piece.machine_names),
            )
            machines.append(remap[piece.machine])

        def joined(column: Callable[[AttemptRows], npt.NDArray[Any]]) -> npt.NDArray[Any]:
            out = np.concatenate([column(piece) for piece in pieces])
            out.flags.writeable = False
            return out

        machine = np.concatenate(machines)
        machine.flags.writeable = False
        return cls(
            joined(lambda p: p.start),
            joined(lambda p: p.order),
            joined(lambda p: p.phase),
            joined(lambda p: p.task),
            joined(lambda p: p.attempt),
            machine,
            tuple(machine_index),
            joined(lambda p: p.finish),
            joined(lambda p: p.killed),
            joined(lambda p: p.locality),
            joined(lambda p: p.truncated),
        )

    def slice(self, lo: int, hi: int) -> AttemptRows:
        """The rows ``lo:hi`` (views of the columns)."""
        return AttemptRows(
            self.start[lo:hi],
            self.order[lo:hi],
            self.phase[lo:hi],
            self.task[lo:hi],
            self.attempt[lo:hi],
            self.machine[lo:hi],
            self.machine_names,
            self.finish[lo:hi],
            self.killed[lo:hi],
            self.locality[lo:hi],
            self.truncated[lo:hi],
        )

    def names(self, column: Literal["phase", "machine", "locality"]) -> list[Any]:
        """A coded column as its names, one per attempt (None: no input data).

        Parameters
        ----------
        column : {"phase", "machine", "locality"}
            The column.

        Returns
        -------
        list
        """
        if column == "phase":
            return [PHASES[code] for code in self.phase.tolist()]
        if column == "machine":
            names = self.machine_names
            return [names[code] for code in self.machine.tolist()]
        return [None if code < 0 else LOCALITIES[code] for code in self.locality.tolist()]


def _open_rows(
    by: IntArray | None, table: AttemptRows, now: float
) -> tuple[AttemptRows, IntArray, IntArray]:
    """``table`` (sorted by permutation ``by``, None: none) and its attempts that may still
    run at ``now`` (ending then or later): their rows in launch order, ascending, and where
    each is in the table."""
    table_rows = np.flatnonzero(table.finish >= now)
    if by is None:
        return table, table_rows, table_rows
    launch_rows = by[table_rows]
    ascending = np.argsort(launch_rows, kind="stable")
    return table, launch_rows[ascending], table_rows[ascending]


def _flags_at(n: int, rows: Iterable[int]) -> BoolArray:
    """A column of ``n`` flags, set at these rows."""
    flags = np.zeros(n, dtype=np.bool_)
    flags[np.fromiter(rows, dtype=np.int64)] = True
    return flags


def _flags(n: int, offsets: Iterable[int]) -> BoolArray:
    """A column of ``n`` flags, set at the attempts of these flat-list offsets."""
    flags = np.zeros(n, dtype=np.bool_)
    flags[np.fromiter(offsets, dtype=np.int64) // ROW_FIELDS] = True
    return flags


def _ascending(keys: tuple[npt.NDArray[Any], ...]) -> bool:
    """Whether the rows are in ascending order of the key columns (lexicographic, first
    column first): each row's key against the next's, all at once."""
    if keys[0].size < 2:
        return True
    undecided = np.ones(keys[0].size - 1, dtype=np.bool_)
    for column in keys:
        step = column[1:] - column[:-1] if column.dtype.kind == "f" else np.diff(column)
        if np.any(undecided & (step < 0)):
            return False
        undecided &= step == 0
        if not undecided.any():
            return True
    return True


def _lexicographic_order(keys: tuple[npt.NDArray[Any], ...]) -> IntArray:
    """The stable permutation that sorts the rows by the key columns (first column first):
    ``np.lexsort``'s, found with one stable sort of one integer key where the columns pack
    into 62 bits (a float column must then be the first and already ascending, as a log's
    start times are: its rank is the count of changes before each row), else by
    ``np.lexsort``. A spilled piece of 65,536 attempts launched at a few thousand times
    sorts in under a millisecond this way, against about 12 ms for ``np.lexsort`` (which
    sorts once per column, indirectly).

    Examples
    --------
    >>> start = np.array([1.0, 1.0, 2.0, 2.0, 2.0])
    >>> order = np.array([7, 3, 5, 5, 4])
    >>> task = np.array([0, 0, 2, 1, 9])
    >>> _lexicographic_order((start, order, task)).tolist()
    [1, 0, 4, 3, 2]
    """
    n = keys[0].size
    packed = np.zeros(n, dtype=np.int64)
    bits = 0
    for k, key in enumerate(keys):
        column = key
        if key.dtype.kind == "f":
            if k > 0 or not np.all(key[1:] >= key[:-1]):
                return np.lexsort(keys[::-1])
            column = np.zeros(n, dtype=np.int64)
            np.cumsum(key[1:] != key[:-1], out=column[1:])
        low = int(column.min())
        width = (int(column.max()) - low).bit_length()
        bits += width
        if bits > 62:
            return np.lexsort(keys[::-1])
        packed <<= width
        packed |= column - low
    return np.argsort(packed, kind="stable")


_SPILLED_COLUMNS: tuple[tuple[str, type[np.generic]], ...] = (
    ("start", np.float64),
    ("order", np.int64),
    ("phase", np.int64),
    ("task", np.int64),
    ("attempt", np.int64),
    ("machine", np.int64),
    ("finish", np.float64),
    ("killed", np.bool_),
    ("locality", np.int64),
    ("truncated", np.bool_),
)
"""The columns of :class:`AttemptRows` a piece writes to its spill file, in file order, and
their types."""


class AttemptSpill:
    """Consecutive pieces of one log's attempt columns, kept in an anonymous temporary file
    rather than in memory until the end of the run.

    A driver that spills its closed attempts as the run goes (the simulator,
    :meth:`fairshare.sim.run_state.RunState.spill`) appends each piece here: its columns go
    to the file as raw bytes (the file is private to the run and deleted when closed, so it
    needs no format of its own; writing it costs a copy, no encoding), its machine codes
    first renumbered into the log's one list of machine names (order of first use), and only
    each piece's place in the file stays in memory. :meth:`finish` ends the file and hands
    it over as :class:`SpilledRows`, which the metrics read a range of rows at a time;
    :meth:`rows` reads the whole table back instead (:meth:`AttemptRows.concat`'s). The file
    is in the temporary directory (``TMPDIR``).

    Examples
    --------
    >>> spill = AttemptSpill()
    >>> spill.append(AttemptRows.from_flat([0.0, 0, "map", 0, 0, "m2", 5.0, None], [], []))
    >>> last = AttemptRows.from_flat(
    ...     [1.0, 0, "map", 1, 0, "m1", 6.0, None, 1.0, 0, "map", 2, 0, "m2", 7.0, None],
    ...     [8], [])
    >>> rows = spill.rows(last)
    >>> rows.names("machine"), rows.task.tolist(), rows.killed.tolist()
    (['m2', 'm1', 'm2'], [0, 1, 2], [False, False, True])
    """

    def __init__(self) -> None:
        self.file: IO[bytes] | None = None
        self.pieces: list[tuple[int, int]] = []
        """Per piece appended, its first byte in the file and its attempts."""
        self.size = 0
        """The bytes written."""
        self.spilled = 0
        """The attempts in the file."""
        self.machine_index: dict[str, int] = {}
        """The machine names of the pieces, in order of first use: the file's codes."""
        self.patches: dict[int, list[Any]] = {}
        """Attempts written while they ran and changed since, by their row in the table:
        [finish, killed, truncated] (:meth:`patch`)."""

    def append(self, piece: AttemptRows) -> None:
        """Write ``piece`` (the log's next attempts, sorted: :meth:`AttemptRows.from_flat`)
        to the file.

        Raises
        ------
        OSError
            The temporary file cannot be created or written.
        """
        n = len(piece.start)
        if n == 0:
            return
        if self.file is None:
            # Open across the run's spills and then by the log's SpilledRows, closed when it
            # is read whole or collected: the file is anonymous, nothing is left on disk.
            self.file = tempfile.TemporaryFile(prefix="fairshare-attempts-")  # noqa: SIM115
        index = self.machine_index
        remap = np.fromiter(
            (index.setdefault(name, len(index)) for name in piece.machine_names),
            dtype=np.int64,
            count=len(piece.machine_names),
        )
        self._write_patches()
        self.file.seek(self.size)
        for name, _ in _SPILLED_COLUMNS:
            column = remap[piece.machine] if name == "machine" else getattr(piece, name)
            self.file.write(column.tobytes())
        self.pieces.append((self.size, n))
        self.size += n * _SPILLED_BYTES
        self.spilled += n

    def patch(self, row: int, finish: float, *, killed: bool, truncated: bool) -> None:
        """The attempt at ``row`` of the table (already written) ends at ``finish``, and was
        killed or truncated if so (a driver spills attempts that still run: their end is
        written when known)."""
        known = self.patches.get(row)
        if known is None:
            self.patches[row] = [finish, killed, truncated]
        else:
            known[0] = finish
            known[1] = known[1] or killed
            known[2] = known[2] or truncated

    def finish(self, last: AttemptRows) -> SpilledRows | AttemptRows:
        """The pieces written, then ``last``, as the log's table: ``last`` itself when
        nothing was spilled, else the file (``last`` appended, the patches written over
        their rows) as :class:`SpilledRows`. The spill is empty afterwards.

        Raises
        ------
        OSError
            The temporary file cannot be written.
        """
        if self.file is None:
            return last
        self.append(last)
        self._write_patches()
        file = self.file
        file.flush()
        out = SpilledRows(file, self.pieces, tuple(self.machine_index))
        self.file = None
        self.pieces = []
        self.size = self.spilled = 0
        self.machine_index = {}
        self.patches = {}
        return out

    def patch_many(
        self, rows: IntArray, finish: FloatArray, *, killed: bool, truncated: bool
    ) -> None:
        """:meth:`patch` for many rows at once (a run's end truncating every attempt still
        running), without a call per row from the compiled kernel."""
        patch = self.patch
        for row, end in zip(rows.tolist(), finish.tolist(), strict=True):
            patch(row, end, killed=killed, truncated=truncated)

    def _write_patches(self) -> None:
        """Write the patches over their rows in the file and forget them: the patches held
        are those since the last piece (the attempts running then and ended since), not
        every one of the run (a long run's attempts mostly end after they were spilled).

        Per piece patched, each column's span from its first to its last patched row is
        read, changed and written back: one read and one write a column, not a seek and a
        write per row (a run cut at ``until`` patches every attempt still running)."""
        if not self.patches or self.file is None:
            return
        file = self.file
        starts = np.cumsum([0, *(n for _, n in self.pieces)])
        ordered = sorted(self.patches.items())
        rows = np.fromiter((row for row, _ in ordered), dtype=np.int64, count=len(ordered))
        finish = np.fromiter((p[0] for _, p in ordered), dtype=np.float64, count=len(ordered))
        flags = {
            name: np.fromiter((bool(p[k]) for _, p in ordered), dtype=np.bool_, count=len(ordered))
            for k, name in ((1, "killed"), (2, "truncated"))
        }
        piece_of = np.searchsorted(starts, rows, side="right") - 1
        # The patches of each piece are a run of the sorted rows.
        bounds = np.flatnonzero(np.diff(piece_of)) + 1
        for lo_patch, hi_patch in zip(
            [0, *bounds.tolist()], [*bounds.tolist(), len(ordered)], strict=True
        ):
            p = int(piece_of[lo_patch])
            offset, n = self.pieces[p]
            at = rows[lo_patch:hi_patch] - int(starts[p])
            lo, hi = int(at[0]), int(at[-1]) + 1
            column = offset + n * _COLUMN_OFFSET["finish"]
            file.seek(column + 8 * lo)
            span = np.frombuffer(file.read(8 * (hi - lo)), dtype=np.float64).copy()
            span[at - lo] = finish[lo_patch:hi_patch]
            file.seek(column + 8 * lo)
            file.write(span.tobytes())
            # A flag once set stays set (patch's rule); a flag set in the piece stays too.
            for name, flag in flags.items():
                set_here = flag[lo_patch:hi_patch]
                if not set_here.any():
                    continue
                column = offset + n * _COLUMN_OFFSET[name]
                file.seek(column + lo)
                marks = np.frombuffer(file.read(hi - lo), dtype=np.bool_).copy()
                marks[(at - lo)[set_here]] = True
                file.seek(column + lo)
                file.write(marks.tobytes())
        self.patches = {}

    def rows(self, last: AttemptRows) -> AttemptRows:
        """The pieces written, then ``last``, as one table (:meth:`AttemptRows.concat`'s
        columns); the file is closed.

        Raises
        ------
        OSError
            The temporary file cannot be read back.
        """
        table = self.finish(last)
        if isinstance(table, AttemptRows):
            return table
        try:
            return table.read(0, len(table))
        finally:
            table.close()


class SpilledRows:
    """A log's attempt table in its spill file (:meth:`AttemptSpill.finish`), read a range of
    rows at a time, so that a long run's metrics and files hold a chunk of its attempts
    rather than all of them (issue 32).

    The rows are the log's (:class:`AttemptRows`' order); the file stays open (anonymous:
    it goes when closed, or when this object is collected).

    Parameters
    ----------
    file : binary file
        The spill file, every piece written and patched.
    pieces : list of (int, int)
        Per piece, its first byte and its attempts, in row order.
    machine_names : tuple of str
        The names the file's machine codes index.
    """

    def __init__(
        self, file: IO[bytes], pieces: list[tuple[int, int]], machine_names: tuple[str, ...]
    ) -> None:
        self.file = file
        self.pieces = pieces
        self.machine_names = machine_names
        self.starts = np.array([0, *np.cumsum([n for _, n in pieces]).tolist()], dtype=np.int64)
        self.lock = threading.Lock()

    def __len__(self) -> int:
        """The number of attempts."""
        return int(self.starts[-1])

    def read(self, lo: int, hi: int) -> AttemptRows:
        """The rows ``lo:hi`` as columns (``machine`` indexing :attr:`machine_names`).

        Raises
        ------
        OSError
            The file cannot be read.
        """
        hi = min(hi, len(self))
        lo = min(lo, hi)
        out = {name: np.empty(hi - lo, dtype=dtype) for name, dtype in _SPILLED_COLUMNS}
        first = max(int(np.searchsorted(self.starts, lo, side="right")) - 1, 0)
        file = self.file
        with self.lock:  # the writers' threads read chunks at once: one seek and read each
            self._read(file, first, lo, hi, out)
        for column in out.values():
            column.flags.writeable = False
        return AttemptRows(
            out["start"],
            out["order"],
            out["phase"],
            out["task"],
            out["attempt"],
            out["machine"],
            self.machine_names,
            out["finish"],
            out["killed"],
            out["locality"],
            out["truncated"],
        )

    def _read(
        self, file: IO[bytes], first: int, lo: int, hi: int, out: dict[str, npt.NDArray[Any]]
    ) -> None:
        """Fill ``out`` with the rows ``lo:hi``, from piece ``first`` on."""
        for p in range(first, len(self.pieces)):
            begin = int(self.starts[p])
            if begin >= hi:
                break
            offset, n = self.pieces[p]
            a, b = max(lo, begin) - begin, min(hi, begin + n) - begin
            for name, dtype in _SPILLED_COLUMNS:
                size = np.dtype(dtype).itemsize
                file.seek(offset + n * _COLUMN_OFFSET[name] + a * size)
                _read_into(file, out[name][begin + a - lo : begin + b - lo])

    def close(self) -> None:
        """Close (and so delete) the file."""
        self.file.close()


_COLUMN_OFFSET: dict[str, int] = {}
"""Per spilled column, the bytes per attempt of the columns before it in a piece."""
_SPILLED_BYTES = 0
"""The bytes per attempt of a piece."""
for _name, _dtype in _SPILLED_COLUMNS:
    _COLUMN_OFFSET[_name] = _SPILLED_BYTES
    _SPILLED_BYTES += np.dtype(_dtype).itemsize


def attempt_chunks(rows: AttemptRows | SpilledRows, size: int) -> Iterator[tuple[int, AttemptRows]]:
    """The rows of a table ``size`` at a time, each with the index of its first row: slices
    of the columns in memory, or reads of the spill file (one chunk's columns at a time).

    Examples
    --------
    >>> rows = AttemptRows.from_flat(
    ...     [1.0, 0, "map", 1, 0, "m1", 6.0, None, 1.0, 0, "map", 2, 0, "m2", 7.0, None],
    ...     [], [])
    >>> [(lo, piece.task.tolist()) for lo, piece in attempt_chunks(rows, 1)]
    [(0, [1]), (1, [2])]
    """
    n = len(rows) if isinstance(rows, SpilledRows) else len(rows.start)
    for lo in range(0, n, size):
        hi = min(n, lo + size)
        if isinstance(rows, SpilledRows):
            yield lo, rows.read(lo, hi)
        else:
            yield lo, rows.slice(lo, hi)


def _read_into(file: IO[bytes], column: npt.NDArray[Any]) -> None:
    """Fill ``column`` (contiguous) with the file's next bytes."""
    view = column.data.cast("B")
    done = 0
    while done < len(view):
        got = file.readinto(view[done:])  # type: ignore[attr-defined]
        if not got:
            raise OSError("the attempts' spill file ended early")
        done += got


class AttemptColumns(NamedTuple):
    """A log's attempts as columns, in ``RunLog.attempts`` order: :class:`AttemptRows`
    and, for a log whose attempts were given one by one, each attempt's user.

    Attributes
    ----------
    rows : AttemptRows
        The columns.
    user : list of str or None
        Per attempt, its user; None when every attempt's user is its job's (a driver's log:
        no column of names to build and read back).
    """

    rows: AttemptRows
    user: list[str] | None


@dataclass(frozen=True)
class RunLog:
    """Everything a run produced: the input of every metric and output file (SPEC section 3).

    A log made by :meth:`from_rows` (the simulator's) builds ``attempts`` on first read: at
    the papers' scales (Choosy section 7.1's 84,000 attempts, TSF section VI's 180,000) a
    frozen :class:`TaskAttempt` per attempt costs a sixth of the run, and the metrics and
    output files read :meth:`attempt_columns` instead, which never builds them.

    Attributes
    ----------
    policy : str
        The policy's name.
    seed : int
        The run's seed.
    cluster : Cluster
        The cluster at the start of the run.
    users : tuple of str
        The users (or pools) in scenario order, the order ties and outputs follow (users
        named only by jobs come after the scenario's).
    jobs : tuple of JobRecord
        One record per job, in submission order.
    attempts : tuple of TaskAttempt
        Every task attempt, by (start, job order, phase, task, attempt).
    events : int
        The events the engine processed.
    wall_seconds : float
        The run's wall time (the one figure that differs between identical runs).
    options : dict
        The run's options as ``summary.json`` records them (``SimOptions.record``).
    stranded : tuple of str
        The jobs that had not finished when no event was left (a run not stopped by
        ``until``): tasks that no machine they may use will ever take.
    shares : dict
        The policy's shares at the end (``{"queues": {path: share}, "users": {name:
        share}}``, SPEC section 8.3); empty for a policy that reports none.
    queue_shares : tuple of (float, str, float)
        Each queue's share as the policy computed it, sampled after decision rounds (at most
        once per simulated second, and at the end): a row (time, queue, share) whenever it
        changed (the ``queue_share`` of ``timeline.csv``).
    user_queues : dict of str to str
        The queue of each user in one (configured, else its jobs'), for per-queue tables.
    """

    policy: str
    seed: int
    cluster: Cluster
    users: tuple[str, ...]
    jobs: tuple[JobRecord, ...]
    attempts: tuple[TaskAttempt, ...]
    events: int
    wall_seconds: float
    options: dict[str, object] = field(default_factory=dict)
    stranded: tuple[str, ...] = ()
    shares: dict[str, dict[str, float]] = field(default_factory=dict)
    queue_shares: tuple[tuple[float, str, float], ...] = ()
    user_queues: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_rows(
        cls,
        *,
        policy: str,
        seed: int,
        cluster: Cluster,
        users: tuple[str, ...],
        jobs: tuple[JobRecord, ...],
        rows: AttemptRows | SpilledRows,
        events: int,
        wall_seconds: float,
        options: dict[str, object],
        stranded: tuple[str, ...] = (),
        shares: dict[str, dict[str, float]] | None = None,
        queue_shares: tuple[tuple[float, str, float], ...] = (),
        user_queues: dict[str, str] | None = None,
    ) -> RunLog:
        """A log whose attempts are ``rows``, built from them when first read.

        Parameters
        ----------
        rows : AttemptRows or SpilledRows
            The attempts, whose ``order`` indexes ``jobs``: in memory, or in the driver's
            spill file (read back whole only if :meth:`attempt_columns` is asked for;
            :meth:`attempt_table` hands it over as it is).
        policy, seed, cluster, users, jobs, events, wall_seconds, options, stranded
            As the attributes of the same names (``jobs`` in job order).

        Returns
        -------
        RunLog
        """
        log = cls.__new__(cls)
        put = object.__setattr__
        put(log, "policy", policy)
        put(log, "seed", seed)
        put(log, "cluster", cluster)
        put(log, "users", users)
        put(log, "jobs", jobs)
        put(log, "events", events)
        put(log, "wall_seconds", wall_seconds)
        put(log, "options", options)
        put(log, "stranded", stranded)
        put(log, "shares", shares if shares is not None else {})
        put(log, "queue_shares", queue_shares)
        put(log, "user_queues", user_queues if user_queues is not None else {})
        put(log, "_rows", rows)
        return log

    def __getattr__(self, name: str) -> object:
        # Reached only for an attribute the instance lacks: a from_rows log's attempts.
        if name != "attempts" or "_rows" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        rows = self._read_rows()
        jobs = self.jobs
        attempts = tuple(
            [
                TaskAttempt(
                    jobs[o].job,
                    jobs[o].user,
                    phase,
                    task,
                    attempt,
                    machine,
                    start,
                    finish,
                    killed,
                    locality,
                    truncated,
                )
                for (
                    start,
                    o,
                    phase,
                    task,
                    attempt,
                    machine,
                    finish,
                    killed,
                    locality,
                    truncated,
                ) in zip(
                    rows.start.tolist(),
                    rows.order.tolist(),
                    rows.names("phase"),
                    rows.task.tolist(),
                    rows.attempt.tolist(),
                    rows.names("machine"),
                    rows.finish.tolist(),
                    rows.killed.tolist(),
                    rows.names("locality"),
                    rows.truncated.tolist(),
                    strict=True,
                )
            ]
        )
        object.__setattr__(self, "attempts", attempts)
        return attempts

    def _read_rows(self) -> AttemptRows:
        """A from_rows log's table in memory: its spill file read back whole (once) if the
        driver left it there."""
        rows: AttemptRows | SpilledRows = self.__dict__["_rows"]
        if isinstance(rows, SpilledRows):
            # The file is left to close when its last reader lets it go (a writer thread
            # may be reading a chunk of it now).
            table = rows.read(0, len(rows))
            object.__setattr__(self, "_rows", table)
            return table
        return rows

    def attempt_table(self) -> AttemptRows | SpilledRows | None:
        """A driver's table of attempts as it holds it, columns in memory or its spill file
        (read it with :func:`attempt_chunks`); None for a log made of :class:`TaskAttempt`
        objects (:meth:`attempt_columns` converts those)."""
        if "attempts" in self.__dict__:
            return None
        table: AttemptRows | SpilledRows | None = self.__dict__.get("_rows")
        return table

    @property
    def attempt_count(self) -> int:
        """The number of task attempts, ``len(attempts)``, without building them."""
        rows = self.attempt_table()
        if rows is None:
            return len(self.attempts)
        return len(rows) if isinstance(rows, SpilledRows) else len(rows.start)

    def attempt_columns(self) -> AttemptColumns:
        """The attempts as columns: the driver's rows when the log has them (no
        :class:`TaskAttempt` is built), else made from :attr:`attempts`.

        Returns
        -------
        AttemptColumns

        Raises
        ------
        KeyError
            An attempt of a job the log does not list.
        """
        if self.attempt_table() is not None:
            return AttemptColumns(self._read_rows(), None)
        atts = self.attempts
        index = {record.job: k for k, record in enumerate(self.jobs)}
        machine_index = {name: i for i, name in enumerate(dict.fromkeys(a.machine for a in atts))}
        n = len(atts)

        def column(values: Iterable[Any], dtype: type[np.generic]) -> npt.NDArray[Any]:
            return np.fromiter(values, dtype=dtype, count=n)

        return AttemptColumns(
            AttemptRows(
                start=column((a.start for a in atts), np.float64),
                order=column((index[a.job] for a in atts), np.int64),
                phase=column((_PHASE_CODE[a.phase] for a in atts), np.int64),
                task=column((a.task for a in atts), np.int64),
                attempt=column((a.attempt for a in atts), np.int64),
                machine=column((machine_index[a.machine] for a in atts), np.int64),
                machine_names=tuple(machine_index),
                finish=column((a.finish for a in atts), np.float64),
                killed=column((a.killed for a in atts), np.bool_),
                locality=column((_LOCALITY_CODE[a.locality] for a in atts), np.int64),
                truncated=column((a.truncated for a in atts), np.bool_),
            ),
            [a.user for a in atts],
        )

    @property
    def preempted_tasks(self) -> int:
        """The task attempts that were killed (preemption, a machine's removal)."""
        return int(self.attempt_columns().rows.killed.sum())


def greedy_end(seconds: Sequence[float], slots: int, start: float) -> float:
    """When tasks of ``seconds`` (in order, each on the earliest free of ``slots``) all
    finish, from ``start``: a job's response time alone on the empty cluster (the slowdown's
    denominator, SPEC section 3), for simulated durations and for measured ones alike.

    Parameters
    ----------
    seconds : sequence of float
        The tasks' durations, in the order they start.
    slots : int
        How many of them run at a time (positive).
    start : float
        When the first starts.

    Returns
    -------
    float
        When the last finishes.

    Examples
    --------
    >>> greedy_end([10.0, 10.0, 10.0], 2, 5.0)
    25.0
    >>> greedy_end([4.0, 1.0], 4, 0.0)
    4.0
    """
    if len(seconds) <= slots:
        return start + max(seconds, default=0.0)
    heap = [start] * slots
    end = start
    for s in seconds:
        t = heapq.heappop(heap) + s
        end = max(end, t)
        heapq.heappush(heap, t)
    return end


def uniform_end(seconds: float, tasks: int, slots: int, start: float) -> float:
    """:func:`greedy_end` of ``tasks`` tasks of ``seconds`` each, in one step per round of
    ``slots`` tasks, not per task (a trace task's instances all take the same time): the
    same sums in the same order, so the same float.

    Examples
    --------
    >>> uniform_end(10.0, 3, 2, 5.0), greedy_end([10.0] * 3, 2, 5.0)
    (25.0, 25.0)
    >>> uniform_end(0.1, 7, 2, 0.3) == greedy_end([0.1] * 7, 2, 0.3)
    True
    """
    if tasks == 0:
        return start + 0.0
    end = start
    for _ in range(-(-tasks // slots)):
        end += seconds
    return end
