r"""Alibaba cluster traces v2017 and v2018: batch tasks and the machines they ran on.

Both traces record batch *tasks*: a task of a job runs ``instance_num`` identical instances,
each asking for ``plan_cpu`` (in 1/100 core: 100 is one core) and ``plan_mem`` (memory
normalised as the trace normalises the machines' memory). One task becomes one
:class:`~fairshare.workload.model.Job` of ``instance_num`` tasks (a task group with a count,
not one object per instance); the trace's job, which has no user column, is its user (so a
policy shares among the trace's jobs). Demand per instance: ``cpu`` = plan_cpu / 100 cores,
``mem`` = plan_mem as given.

**cluster-trace-v2017** (``alibaba-2017``: the directory, or its ``batch_task.csv``; the
official headerless file or the copy with a header line). Columns: ``create_timestamp``,
``modify_timestamp`` (the task's last state change: its end for a finished task), ``job_id``,
``task_id``, ``instance_num``, ``status``, ``plan_cpu``, ``plan_mem``. The task is submitted
at its creation and each instance runs ``modify - create`` seconds: the trace gives no start
time, so the duration includes any wait in the original cluster (an upper bound on the run
time). Kept: tasks that ended, ``Terminated`` or ``Failed`` (a failed task held its machines
until it failed). Dropped, counted in a ``warning:`` line: ``Waiting`` and ``Running`` tasks
(unfinished: no end time), rows without ``plan_cpu`` or ``plan_mem`` (the trace leaves them
empty for tasks that never got resources), tasks created before the trace began (negative
timestamps) and tasks whose end is before their creation. The table is not in creation
order: it is read once in chunks into columns of numbers (eight per row, no object per row),
then replayed in creation order (ties in file order). Machines: ``server_event.csv`` beside
it, one per ``add`` event, resources ``cpu`` (cores) and ``mem`` (normalised); the
``softerror`` events record no recovery, so they are not replayed as failures, and the trace
has no racks.

**cluster-trace-v2018** (``alibaba-2018``: the directory, or its task table). The task table
is the hour of ``batch_task`` that the ``spar`` generator ships (``sample_tasks.csv``, no
header): ``arrival`` (the job's arrival, seconds from the start of the hour), ``job_name``,
``task_name``, ``duration`` (seconds from the task's start to its end: each instance runs that
long), ``plan_cpu``, ``plan_mem`` (a machine has 100), ``instance_num``; rows in arrival order,
a job's rows together (the official eight-day table, nine columns, is refused). Task names
carry the DAG: ``M2_1`` / ``R5_3_4`` / ``J7_5_6`` are task 2 after task 1, task 5 after tasks
3 and 4 (letter, task number, ``_``-separated numbers of the
tasks it needs); any other name (``task_<id>``) is a task without dependencies. A task with
dependencies is submitted when every instance of the tasks it names has finished
(:attr:`~fairshare.workload.model.Job.after_all`); the reader yields each job's tasks in
dependency order. Nothing is dropped. Machines: ``machine_meta.csv`` beside it, one per
``machine_id`` with its first row's ``cpu_num`` (cores) and ``mem_size`` (100), rack
``failure_domain_1`` and attributes ``failure_domain_1``, ``failure_domain_2`` (numbers). Which
hour of the eight days the task table is is not recorded, so every machine of the table is in
the cluster from the start and its later rows (another failure domain, a status) are not
replayed.

Bad records are errors naming the line and the field: a number that is not one or out of
bounds, a DAG naming a task its job lacks, a cycle, a task number repeated in a job, a job
whose rows are not together, arrivals going backwards, a machine without capacities.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from fairshare.workload.traces.alibaba_batch import machines_2018, read_alibaba_2018
>>> tasks = (
...     "0,j_1,M1,10,100,0.5,2\n"
...     "0,j_1,R3_1_2,5,50,0.3,1\n"
...     "0,j_1,M2,20,100,0.5,3\n"
...     "4,j_2,task_x,7,700,1.0,1\n"
... )
>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = (Path(tmp) / "sample_tasks.csv").write_text(tasks)
...     _ = (Path(tmp) / "machine_meta.csv").write_text("m_1,0,7,3,96,100,USING\n")
...     cluster = machines_2018(Path(tmp))
...     jobs = list(read_alibaba_2018(Path(tmp), cluster))
>>> cluster.resources, cluster.capacities.tolist(), cluster.machines[0].rack
(('cpu', 'mem'), [[96.0, 100.0]], '7')
>>> [(job.name, job.user, job.tasks, job.demand.tolist(), job.after_all) for job in jobs]
... # doctest: +NORMALIZE_WHITESPACE
[('j_1/M1', 'j_1', 2, [1.0, 0.5], ()), ('j_1/M2', 'j_1', 3, [1.0, 0.5], ()),
 ('j_1/R3_1_2', 'j_1', 1, [0.5, 0.3], ('j_1/M1', 'j_1/M2')),
 ('j_2/task_x', 'j_2', 1, [7.0, 1.0], ())]
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fairshare.cluster import Cluster, FloatArray, Machine
from fairshare.workload.model import MAX_AMOUNT, MIN_AMOUNT, FixedDuration, Job
from fairshare.workload.traces._common import (
    MAX_RECORD_TASKS,
    MAX_SECONDS,
    TraceError,
    TraceJobs,
    amount,
    check_readable,
    numbered_lines,
    resource_positions,
    shown,
    whole_number,
)

__all__ = [
    "RESOURCES",
    "machines_2017",
    "machines_2018",
    "read_alibaba_2017",
    "read_alibaba_2018",
]

RESOURCES = ("cpu", "mem")
"""The resources of a cluster built from a machine table: cores, normalised memory."""
_ALIASES = {"cpu": ("cpu",), "mem": ("mem", "memory")}
_CPU_UNITS = 100.0
"""plan_cpu units per core."""
_TASKS_2017 = "batch_task.csv"
_MACHINES_2017 = "server_event.csv"
_TASKS_2018 = ("sample_tasks.csv",)
_OFFICIAL_2018_WIDTH = 9
"""The official ``batch_task`` table's columns (not read: it is neither sorted nor grouped)."""
_MACHINES_2018 = "machine_meta.csv"
_KEPT_2017 = ("Terminated", "Failed")
_UNFINISHED_2017 = ("Waiting", "Running")
_DAG_NAME = re.compile(r"[A-Za-z]+(\d+)((?:_\d+)*)")
_DAG_START = re.compile(r"[A-Za-z]+\d")
_MAX_TASK_NUMBER = 10**9


def _fields(path: Path, line: int, text: str, width: int) -> list[str]:
    """The comma-separated fields of a record that must have ``width`` of them."""
    fields = text.split(",")
    if len(fields) != width:
        raise TraceError(path, line, f"expected {width} comma-separated fields, got {len(fields)}")
    return [field.strip() for field in fields]


def _records(path: Path, width: int, number: int = 0) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` of each non-blank record, a header line (field ``number``, a number
    in every record, is not one) skipped."""
    for line, text in numbered_lines(path):
        if not text.strip():
            continue
        fields = _fields(path, line, text, width)
        if line == 1 and not _numeric(fields[number]):
            continue
        yield line, fields


def _numeric(text: str) -> bool:
    """Whether ``text`` reads as a number (to tell a header line from a record)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _resource(text: str, field: str, path: Path, line: int, scale: float = 1.0) -> float:
    """A resource amount in the trace's unit (``scale`` of them per cluster unit): 0 or, once
    scaled, from ``MIN_AMOUNT`` to ``MAX_AMOUNT``."""
    return (
        amount(text, field, path, line, maximum=MAX_AMOUNT * scale, smallest=MIN_AMOUNT * scale)
        / scale
    )


def _file_in(path: Path, names: tuple[str, ...], what: str) -> Path:
    """``path`` itself, or for a directory the first of ``names`` in it."""
    if path.is_dir():
        for name in names:
            if (path / name).is_file():
                return path / name
        raise TraceError(path, None, f"holds no {what} (looked for {' and '.join(names)})")
    check_readable(path, what)
    return path


def _beside(path: Path, name: str) -> Path:
    """The machine table ``name`` in the trace's directory (``path`` or its parent)."""
    return (path if path.is_dir() else path.parent) / name


def _cluster(machines: list[Machine], path: Path) -> Cluster:
    if not machines:
        raise TraceError(path, None, "lists no machines")
    return Cluster.build(RESOURCES, machines)


def _capacity(cpu: float, mem: float, path: Path, line: int) -> FloatArray:
    if cpu <= 0 or mem <= 0:
        raise TraceError(
            path, line, f"a machine needs a CPU and a memory capacity above 0, got {cpu:g}, {mem:g}"
        )
    capacity = np.array([cpu, mem], dtype=np.float64)
    capacity.setflags(write=False)
    return capacity


def machines_2017(path: Path) -> Cluster | str:
    r"""The machines of ``server_event.csv`` beside a v2017 batch task table.

    Parameters
    ----------
    path : Path
        The trace's directory or its ``batch_task.csv``.

    Returns
    -------
    Cluster or str
        One machine per ``add`` event (resources ``cpu``, ``mem``), or why there are none.

    Raises
    ------
    TraceError
        A record with the wrong number of fields, an ``add`` without capacities, a machine
        added twice.
    """
    table = _beside(path, _MACHINES_2017)
    if not table.is_file():
        return f"no {_MACHINES_2017} beside the task table (looked in {table.parent})"
    check_readable(table, "Alibaba v2017 server_event.csv")
    machines: list[Machine] = []
    seen: dict[str, int] = {}
    for line, fields in _records(table, 7):
        if fields[2] != "add":
            continue
        name = fields[1]
        if not name:
            raise TraceError(table, line, "field machine_id: is empty")
        if name in seen:
            raise TraceError(
                table, line, f"machine {shown(name)} is added again (first at line {seen[name]})"
            )
        seen[name] = line
        cpu = _resource(fields[4], "cpu capacity", table, line)
        mem = _resource(fields[5], "memory capacity", table, line)
        machines.append(Machine(name, _capacity(cpu, mem, table, line)))
    return _cluster(machines, table)


def machines_2018(path: Path) -> Cluster | str:
    r"""The machines of ``machine_meta.csv`` beside a v2018 task table.

    Parameters
    ----------
    path : Path
        The trace's directory or its task table.

    Returns
    -------
    Cluster or str
        One machine per ``machine_id``, from its first row (module docstring), or why there
        are none.

    Raises
    ------
    TraceError
        A record with the wrong number of fields, a machine without capacities.
    """
    table = _beside(path, _MACHINES_2018)
    if not table.is_file():
        return f"no {_MACHINES_2018} beside the task table (looked in {table.parent})"
    check_readable(table, "Alibaba v2018 machine_meta.csv")
    machines: list[Machine] = []
    seen: set[str] = set()
    for line, fields in _records(table, 7, number=1):
        name = fields[0]
        if not name:
            raise TraceError(table, line, "field machine_id: is empty")
        if name in seen:
            continue
        seen.add(name)
        cpu = _resource(fields[4], "cpu_num", table, line)
        mem = _resource(fields[5], "mem_size", table, line)
        domains = {
            "failure_domain_1": whole_number(
                fields[2], "failure_domain_1", table, line, maximum=_MAX_TASK_NUMBER
            ),
            "failure_domain_2": whole_number(
                fields[3], "failure_domain_2", table, line, maximum=_MAX_TASK_NUMBER
            ),
        }
        machines.append(
            Machine(
                name,
                _capacity(cpu, mem, table, line),
                str(domains["failure_domain_1"]),
                domains,
            )
        )
    return _cluster(machines, table)


class _Demand:
    """Per-instance demand vectors in the cluster's resource order, one shared array per
    distinct (cpu, mem) (the traces have few)."""

    def __init__(self, cluster: Cluster, path: Path) -> None:
        self.positions = resource_positions(cluster, _ALIASES)
        self.width = len(cluster.resources)
        self.resources = cluster.resources
        self.path = path
        self.known: dict[tuple[float, float], FloatArray] = {}

    def of(self, cpu: float, mem: float, line: int) -> FloatArray:
        demand = self.known.get((cpu, mem))
        if demand is not None:
            return demand
        vector: FloatArray = np.zeros(self.width, dtype=np.float64)
        for quantity, value in (("cpu", cpu), ("mem", mem)):
            if value <= 0:
                continue
            if quantity not in self.positions:
                raise TraceError(
                    self.path,
                    line,
                    f"the task demands {quantity} but the cluster has no resource named "
                    f"{' or '.join(map(repr, _ALIASES[quantity]))} "
                    f"(resources: {', '.join(self.resources)})",
                )
            vector[self.positions[quantity]] = value
        if not vector.any():
            raise TraceError(self.path, line, "field plan_cpu: the task demands no cpu or memory")
        vector.setflags(write=False)
        self.known[(cpu, mem)] = vector
        return vector


def _seconds(text: str, field: str, path: Path, line: int, smallest: float) -> float:
    """A timestamp or duration: a number from ``smallest`` to ``MAX_SECONDS``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not smallest <= value <= MAX_SECONDS:
        raise TraceError(
            path,
            line,
            f"field {field}: must be a number of seconds from {smallest:g} to "
            f"{MAX_SECONDS:g}, got {shown(text)}",
        )
    return value + 0.0


def read_alibaba_2017(path: Path, cluster: Cluster) -> Iterator[Job]:
    r"""Stream the finished tasks of a v2017 batch task table as jobs, in creation order.

    Parameters
    ----------
    path : Path
        The trace's directory or its ``batch_task.csv``.
    cluster : Cluster
        The machines the tasks are replayed on.

    Returns
    -------
    Iterator of Job
        One job of ``instance_num`` tasks per kept task (module docstring), with the
        ``warning:`` lines of what was dropped (:class:`TraceJobs`).

    Raises
    ------
    TraceError
        A record with the wrong number of fields, a field that is not a number within its
        bound, an unknown status, a demand for a resource ``cluster`` lacks.
    """
    table = _file_in(path, (_TASKS_2017,), "Alibaba v2017 batch_task.csv")
    warnings: list[str] = []
    return TraceJobs(_stream_2017(table, cluster, warnings), warnings)


def _stream_2017(path: Path, cluster: Cluster, warnings: list[str]) -> Iterator[Job]:
    """Read the table into columns of numbers, then yield its kept tasks in creation order."""
    demand = _Demand(cluster, path)
    create, end, cpu, mem = array("d"), array("d"), array("d"), array("d")
    job, task, count, lines = array("q"), array("q"), array("q"), array("q")
    dropped = {
        "unfinished": 0,
        "without demand": 0,
        "created before the trace": 0,
        "ending early": 0,
    }
    for line, fields in _records(path, 8):
        status = fields[5]
        if status not in _KEPT_2017 and status not in _UNFINISHED_2017:
            allowed = ", ".join(_KEPT_2017 + _UNFINISHED_2017)
            raise TraceError(
                path, line, f"field status: must be one of {allowed}, got {shown(status)}"
            )
        job_id = whole_number(fields[2], "job_id", path, line, maximum=2**62)
        task_id = whole_number(fields[3], "task_id", path, line, maximum=2**62)
        instances = whole_number(fields[4], "instance_num", path, line, maximum=MAX_RECORD_TASKS)
        created = _seconds(fields[0], "create_timestamp", path, line, -MAX_SECONDS)
        modified = _seconds(fields[1], "modify_timestamp", path, line, -MAX_SECONDS)
        if status in _UNFINISHED_2017:
            dropped["unfinished"] += 1
            continue
        if not fields[6] or not fields[7]:
            dropped["without demand"] += 1
            continue
        cores = _resource(fields[6], "plan_cpu", path, line, _CPU_UNITS)
        memory = _resource(fields[7], "plan_mem", path, line)
        demand.of(cores, memory, line)  # checked now, at its line
        if created < 0:
            dropped["created before the trace"] += 1
            continue
        if modified < created:
            dropped["ending early"] += 1
            continue
        create.append(created)
        end.append(modified)
        cpu.append(cores)
        mem.append(memory)
        job.append(job_id)
        task.append(task_id)
        count.append(instances)
        lines.append(line)
    notes = {
        "unfinished": "Waiting or Running (no end time)",
        "without demand": "without plan_cpu or plan_mem",
        "created before the trace": "created before the trace began",
        "ending early": "ending before their creation",
    }
    skipped = [f"{n:,} {notes[why]}" for why, n in dropped.items() if n]
    if skipped:
        warnings.append(f"warning: {path}: skipped tasks: {'; '.join(skipped)}")
    starts = np.frombuffer(create, dtype=np.float64)
    order = np.argsort(starts, kind="stable")
    for i in order.tolist():
        yield Job.of_task(
            f"{job[i]}/{task[i]}",
            create[i],
            str(job[i]),
            demand.of(cpu[i], mem[i], lines[i]),
            count[i],
            FixedDuration(end[i] - create[i]),
        )


def read_alibaba_2018(path: Path, cluster: Cluster) -> Iterator[Job]:
    r"""Stream the tasks of a v2018 task table as jobs, each job's in dependency order.

    Parameters
    ----------
    path : Path
        The trace's directory or its task table (``sample_tasks.csv``).
    cluster : Cluster
        The machines the tasks are replayed on.

    Returns
    -------
    Iterator of Job
        One job of ``instance_num`` tasks per task, a dependent one with ``after_all``
        (module docstring), read lazily, one trace job at a time.

    Raises
    ------
    TraceError
        While iterating: a record with the wrong number of fields, a field that is not a
        number within its bound, a task name naming a task its job lacks, a cycle, a repeated
        task number, a job's rows apart, arrivals going backwards.
    """
    table = _file_in(path, _TASKS_2018, "Alibaba v2018 task table (sample_tasks.csv)")
    return _stream_2018(table, cluster)


@dataclass
class _Task:
    """A v2018 task row, held while its job's rows are read (its :class:`Job` is made once
    the tasks it needs are known: :meth:`job`)."""

    line: int
    name: str
    number: int | None
    needs: tuple[int, ...]
    user: str
    submit: float
    demand: FloatArray
    instances: int
    seconds: float

    def job(self, after_all: tuple[str, ...] = ()) -> Job:
        """The task as a job, after the jobs ``after_all`` names."""
        return Job.of_task(
            f"{self.user}/{self.name}",
            self.submit,
            self.user,
            self.demand,
            self.instances,
            FixedDuration(self.seconds),
            after_all,
        )


def _stream_2018(path: Path, cluster: Cluster) -> Iterator[Job]:
    """Group the rows by job and yield each job's tasks in dependency order."""
    demand = _Demand(cluster, path)
    seen: dict[str, int] = {}
    current = ""
    tasks: list[_Task] = []
    last = -math.inf
    for line, fields in _lines_2018(path):
        name, task_name = fields[1], fields[2]
        if not name:
            raise TraceError(path, line, "field job_name: is empty")
        if name != current:
            if tasks:
                yield from _in_order(path, tasks)
                tasks = []
            if name in seen:
                raise TraceError(
                    path,
                    line,
                    f"field job_name: job {shown(name)} has rows apart (first at line "
                    f"{seen[name]}); a job's rows must be together",
                )
            seen[name] = line
            current = name
        arrival = _seconds(fields[0], "arrival", path, line, 0.0)
        if arrival < last:
            raise TraceError(
                path,
                line,
                f"field arrival: {arrival:g} is before the previous row's ({last:g}); the "
                "table must be in arrival order",
            )
        last = arrival
        seconds = _seconds(fields[3], "duration", path, line, 0.0)
        cores = _resource(fields[4], "plan_cpu", path, line, _CPU_UNITS)
        memory = _resource(fields[5], "plan_mem", path, line)
        instances = whole_number(fields[6], "instance_num", path, line, maximum=MAX_RECORD_TASKS)
        number, needs = _dag(task_name, path, line)
        vector = demand.of(cores, memory, line)
        tasks.append(
            _Task(line, task_name, number, needs, name, arrival, vector, instances, seconds)
        )
    if tasks:
        yield from _in_order(path, tasks)


def _lines_2018(path: Path) -> Iterator[tuple[int, list[str]]]:
    """The task table's records; the official nine-column ``batch_task`` table is refused
    with what is read instead."""
    for line, text in numbered_lines(path):
        if not text.strip():
            continue
        if text.count(",") + 1 == _OFFICIAL_2018_WIDTH:
            raise TraceError(
                path,
                line,
                "has the official batch_task table's 9 columns; alibaba-2018 reads the 7-column "
                "hour of the spar generator (arrival, job_name, task_name, duration, plan_cpu, "
                "plan_mem, instance_num), sorted by arrival with each job's rows together",
            )
        yield line, _fields(path, line, text, 7)


def _dag(task_name: str, path: Path, line: int) -> tuple[int | None, tuple[int, ...]]:
    """The task number and the numbers of the tasks it needs, of a DAG name (``R5_3_4``);
    ``(None, ())`` for a name without DAG (``task_<id>``)."""
    if not task_name:
        raise TraceError(path, line, "field task_name: is empty")
    found = _DAG_NAME.fullmatch(task_name)
    if found is None:
        if _DAG_START.match(task_name) and not task_name.startswith("task_"):
            raise TraceError(
                path,
                line,
                "field task_name: a DAG task name is a letter, the task's number and the "
                f"numbers of the tasks it needs after '_' (R5_3_4), got {shown(task_name)}",
            )
        return None, ()
    if len(task_name) > 200:
        raise TraceError(path, line, f"field task_name: too long, got {shown(task_name)}")
    number = int(found[1])
    needs = tuple(dict.fromkeys(int(part) for part in found[2].split("_")[1:]))
    return number, needs


def _in_order(path: Path, tasks: list[_Task]) -> Iterator[Job]:
    """One job's tasks, each after the tasks it needs (otherwise in file order), the
    dependent ones with ``after_all``; a DAG naming a missing task or with a cycle is an
    error."""
    if len(tasks) == 1 and not tasks[0].needs:
        # A job of one task that needs none (most of the table's): nothing to order.
        yield tasks[0].job()
        return
    numbered: dict[int, _Task] = {}
    for task in tasks:
        if task.number is None:
            continue
        first = numbered.setdefault(task.number, task)
        if first is not task:
            raise TraceError(
                path,
                task.line,
                f"field task_name: task number {task.number} repeats in job "
                f"{shown(task.user)} (first at line {first.line})",
            )
    for task in tasks:
        for need in task.needs:
            if need not in numbered:
                raise TraceError(
                    path,
                    task.line,
                    f"field task_name: {shown(task.name)} needs task {need}, which job "
                    f"{shown(task.user)} does not have",
                )
    done: set[int] = set()
    left = list(tasks)
    while left:
        ready = [t for t in left if all(need in done for need in t.needs)]
        if not ready:
            cycle = min(left, key=lambda t: t.line)
            raise TraceError(
                path,
                cycle.line,
                f"field task_name: {shown(cycle.name)} is in a dependency cycle of job "
                f"{shown(cycle.user)}",
            )
        for task in ready:
            if task.number is not None:
                done.add(task.number)
            user = task.user
            yield task.job(tuple(f"{user}/{numbered[need].name}" for need in task.needs))
        ready_ids = {id(t) for t in ready}
        left = [t for t in left if id(t) not in ready_ids]
