r"""Slurm's accounting history: the output of ``sacct -P`` (SPEC section 8.2).

Input: ``sacct -P`` (``--parsable2``: fields separated by ``|``, no trailing ``|``; ``-p``,
which ends every line with ``|``, is read too) with its header line, for example ``sacct -a
-P -X -S 2024-03-01 -E 2024-03-08 --format=JobID,User,Account,Submit,Start,End,AllocTRES,
NNodes,State,Timelimit``. The header names the columns, in any order; other columns are
ignored. Required: ``JobID``, ``User``, ``Account``, ``Submit``, ``Start``, ``End``,
``State``, and ``AllocTRES`` or ``NCPUS``; ``NNodes`` and ``Timelimit`` are read when present.
``sacct -P --noheader`` cannot be read: without the header the columns are unknown.

Records (``sacct``'s man page, "JOB STATE CODES"):

- Job steps (``123.batch``, ``123.extern``, ``123.0``; any ``JobID`` with a ``.``) are parts
  of their job's allocation and are skipped. Array tasks (``123_4``) and the components of a
  heterogeneous job (``123+0``, ``123+1``) are separate jobs, named by their ``JobID``
  (components are not held to start together).
- A record with a ``Start`` and an ``End`` ran for ``End - Start`` seconds, its recorded run
  time, whatever its ``State``: ``COMPLETED``, ``FAILED``, ``TIMEOUT``, ``OUT_OF_MEMORY``,
  ``NODE_FAIL``, ``PREEMPTED``, ``BOOT_FAIL``, ``DEADLINE``, and ``CANCELLED by UID`` once
  started (it ran until cancelled). The job is replayed with that duration.
- Skipped, and counted in one ``warning:`` line: a ``CANCELLED`` (or other) record without a
  ``Start`` (``Unknown`` or ``None``: it never ran); ``PENDING``; ``RUNNING``, ``SUSPENDED``,
  ``RESIZING`` (no ``End``: the run time is not known yet, and replaying the time limit
  instead would invent one); ``REQUEUED`` (``sacct -D``'s earlier runs of a requeued job,
  whose final record follows) and ``REVOKED`` (a federated job that ran on another cluster).
- Any other ``State`` is an error naming the states allowed.

A job becomes one task per node (``NNodes``, 1 when absent), each demanding the job's
allocation divided by its nodes, and a job of several nodes is a gang (``min_tasks`` =
``NNodes``: Slurm starts an allocation's nodes together). The demand: ``AllocTRES``'s
``cpu``, ``mem`` and ``gres/gpu`` (typed GPUs ``gres/gpu:a100=2`` summed when the untyped
count is absent), else ``NCPUS`` CPUs, as the resources ``cpu``, ``mem`` (MiB, Slurm's
``M``; ``K``, ``G``, ``T``, ``P`` suffixes converted) and ``gpu``: the names and units
``fairshare import slurm`` gives a ``slurm.conf``'s nodes. A quantity the scenario has no
resource for is left out of the demand (one warning names it). ``Timelimit`` is the job's
``estimate`` (``UNLIMITED``, ``Partition_Limit`` and empty: none).

Tenant: each job's ``User`` in its ``Account``, named as ``fairshare import slurm`` names
users: ``ACCOUNT/USER`` when the scenario has a user of that name (a user under several
accounts), else ``USER`` when it has that one. A tenant the scenario lacks keeps the importer's
rule applied to the history (``USER``, or ``ACCOUNT/USER`` for a user seen under several
accounts) and becomes a user of its own at the root; one warning counts such jobs.

Times: ``Submit``, ``Start`` and ``End`` are Slurm's local times ``YYYY-MM-DDTHH:MM:SS``
(``Unknown``/``None`` when unset); a job is submitted at its ``Submit`` in seconds after the
history's first ``Submit``. Local times carry no zone, so a daylight-saving change inside the
history shifts the records across it by its hour.

Order: ``sacct`` lists jobs by ``JobID``, not by submission (array tasks, requeued jobs), so
the reader reads the whole file first (one small record per job, at most
:data:`MAX_SACCT_JOBS`) and replays the jobs sorted by submit time, ties in file order.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> cluster = Cluster.build(["cpu", "mem"], [Machine("n1", np.array([32.0, 65536.0]))])
>>> history = (
...     "JobID|User|Account|Submit|Start|End|AllocTRES|NNodes|State|Timelimit\n"
...     "7|alice|physics|2024-03-01T08:00:00|2024-03-01T08:00:10|2024-03-01T09:00:10|"
...     "billing=8,cpu=8,mem=16G,node=2|2|COMPLETED|02:00:00\n"
...     "7.batch||physics|2024-03-01T08:00:10|2024-03-01T08:00:10|2024-03-01T09:00:10|"
...     "cpu=4,mem=8G,node=1|1|COMPLETED|\n"
...     "8|bob|bio|2024-03-01T08:05:00|Unknown|2024-03-01T08:06:00||1|CANCELLED by 1001|"
...     "1:00:00\n"
... )
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "sacct.txt"
...     _ = path.write_text(history)
...     jobs = read_sacct(path, cluster, ["alice", "bob"])
...     read = [(j.name, j.user, j.submit, j.tasks, j.demand.tolist(), j.duration.seconds,
...              j.min_tasks, j.estimate) for j in jobs]
>>> read
[('7', 'alice', 0.0, 2, [4.0, 8192.0], 3600.0, 2, 7200.0)]
>>> print(jobs.warnings[0])  # doctest: +ELLIPSIS
warning: ...sacct.txt: 1 job record skipped: 1 never started (cancelled before it ran)...
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from fairshare.cluster import Cluster, FloatArray
from fairshare.workload.model import MAX_AMOUNT, MIN_SECONDS, FixedDuration, Job
from fairshare.workload.traces._common import (
    MAX_RECORD_TASKS,
    MAX_SECONDS,
    TraceError,
    TraceJobs,
    amount,
    check_readable,
    numbered_lines,
    shown,
    some_names,
    whole_number,
)

__all__ = ["MAX_SACCT_JOBS", "REQUIRED", "read_sacct"]

MAX_SACCT_JOBS = 5_000_000
"""The most jobs one history may hold: the reader keeps one small record per job to replay
them in submit order (about 200 bytes each, 1 GB at the limit)."""

REQUIRED = ("JobID", "User", "Account", "Submit", "Start", "End", "State")
"""The columns every history needs, besides ``AllocTRES`` or ``NCPUS``."""

_RAN = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "CANCELLED",
    }
)
"""States of a finished job: it ran from ``Start`` to ``End`` if it has a ``Start``."""
_UNFINISHED = frozenset({"RUNNING", "SUSPENDED", "RESIZING", "REQUEUE_HOLD", "SIGNALING"})
_SKIPPED = frozenset({"PENDING", "REQUEUED", "REQUEUE_FED", "REVOKED", "SPECIAL_EXIT"})
_STATES = ", ".join(sorted(_RAN | _UNFINISHED | _SKIPPED))
_UNSET = frozenset({"", "Unknown", "None"})
_NO_LIMIT = frozenset({"", "UNLIMITED", "INFINITE", "Partition_Limit", "NONE"})
_MEM_MIB = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
_EPOCH = datetime(1970, 1, 1)  # Slurm's times are local and carry no zone
_REASONS = {
    "never": "never started (cancelled before it ran)",
    "pending": "pending (never ran)",
    "running": "still running (run time unknown)",
    "requeued": "requeued or revoked (superseded by a later record, or run elsewhere)",
}


@dataclass(frozen=True)
class _Record:
    """A kept job, small until it is replayed."""

    submit: float
    line: int
    name: str
    account: str
    user: str
    tasks: int
    demand: FloatArray
    duration: float
    estimate: float | None


def _time(text: str, column: str, path: Path, line: int) -> float | None:
    """A Slurm time ``YYYY-MM-DDTHH:MM:SS`` in seconds since 1970 (local), None if unset."""
    if text in _UNSET:
        return None
    try:
        if len(text) != 19 or text[10] != "T":
            raise ValueError(text)
        return (datetime.fromisoformat(text) - _EPOCH).total_seconds()
    except ValueError:
        raise TraceError(
            path,
            line,
            f"field {column}: must be a time YYYY-MM-DDTHH:MM:SS, Unknown or None, "
            f"got {shown(text)}",
        ) from None


def _tres(text: str, path: Path, line: int) -> dict[str, float]:
    """``AllocTRES`` (``cpu=8,mem=16G,node=2,billing=8,gres/gpu=2``) as cpu, mem (MiB), gpu."""
    out: dict[str, float] = {}
    typed_gpus = 0.0
    for item in text.split(","):
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq:
            raise TraceError(
                path, line, f"field AllocTRES: expected NAME=VALUE items, got {shown(item)}"
            )
        if key == "cpu":
            out["cpu"] = amount(value, "AllocTRES cpu", path, line, maximum=MAX_AMOUNT)
        elif key == "mem":
            scale = _MEM_MIB.get(value[-1:], 0.0)
            number = value[:-1] if scale else value
            scale = scale or 1.0  # a bare number is MiB, Slurm's unit for memory
            out["mem"] = (
                amount(number, "AllocTRES mem", path, line, maximum=MAX_AMOUNT / scale) * scale
            )
        elif key == "gres/gpu":
            out["gpu"] = amount(value, "AllocTRES gres/gpu", path, line, maximum=MAX_AMOUNT)
        elif key.startswith("gres/gpu:"):
            typed_gpus += amount(value, f"AllocTRES {key}", path, line, maximum=MAX_AMOUNT)
    if "gpu" not in out and typed_gpus:
        out["gpu"] = typed_gpus
    return out


class _Reader:
    """One pass over a history: the header's columns, then each record kept or counted."""

    def __init__(self, path: Path, cluster: Cluster) -> None:
        self.path = path
        self.cluster = cluster
        self.positions: dict[str, int] = {
            r: cluster.resources.index(r) for r in ("cpu", "mem", "gpu") if r in cluster.resources
        }
        self.skipped = dict.fromkeys(_REASONS, 0)
        self.dropped: dict[str, int] = {}  # quantity the cluster lacks -> jobs
        self.demands: dict[tuple[float, ...], FloatArray] = {}  # one array per distinct demand
        self.records: list[_Record] = []
        self.columns: dict[str, int] = {}
        self.width = 0
        self.trailing = False

    def header(self, line: int, text: str) -> None:
        self.trailing = text.endswith("|")
        names = (text[:-1] if self.trailing else text).split("|")
        self.width = len(names)
        self.columns = {name.strip(): k for k, name in enumerate(names)}
        missing = [c for c in REQUIRED if c not in self.columns]
        if "AllocTRES" not in self.columns and "NCPUS" not in self.columns:
            missing.append("AllocTRES or NCPUS")
        if missing:
            raise TraceError(
                self.path,
                line,
                f"the header lacks column(s) {', '.join(missing)} (sacct -P "
                f"--format={','.join(REQUIRED)},AllocTRES,NNodes,Timelimit; a header line is "
                f"required: sacct --noheader cannot be read), got {shown(text)}",
            )

    def record(self, line: int, text: str) -> None:
        path = self.path
        fields = (text[:-1] if self.trailing and text.endswith("|") else text).split("|")
        if len(fields) != self.width:
            raise TraceError(
                path, line, f"expected {self.width} fields separated by '|', got {len(fields)}"
            )
        col = self.columns
        job_id = fields[col["JobID"]]
        if not job_id:
            raise TraceError(path, line, "field JobID: is empty")
        if "." in job_id:
            return  # a step (123.batch, 123.extern, 123.0): part of its job's allocation
        state_text = fields[col["State"]]
        state = state_text.split(" ", 1)[0]  # "CANCELLED by 1001"
        submit = _time(fields[col["Submit"]], "Submit", path, line)
        start = _time(fields[col["Start"]], "Start", path, line)
        end = _time(fields[col["End"]], "End", path, line)
        if state in _SKIPPED:
            self.skipped["pending" if state == "PENDING" else "requeued"] += 1
            return
        if state in _UNFINISHED:
            self.skipped["running"] += 1
            return
        if state not in _RAN:
            raise TraceError(
                path, line, f"field State: must be one of {_STATES}, got {shown(state_text)}"
            )
        if start is None:
            self.skipped["never"] += 1
            return
        if end is None:
            self.skipped["running"] += 1
            return
        if submit is None:
            raise TraceError(path, line, "field Submit: a job that ran must have a Submit time")
        if end < start or start < submit:
            raise TraceError(
                path,
                line,
                "fields Submit, Start, End: must be in that order, got "
                f"{fields[col['Submit']]}, {fields[col['Start']]}, {fields[col['End']]}",
            )
        user = fields[col["User"]]
        account = fields[col["Account"]]
        if not user:
            raise TraceError(path, line, f"field User: job {shown(job_id)} names no user")
        nodes = 1
        if "NNodes" in col and fields[col["NNodes"]]:
            nodes = whole_number(
                fields[col["NNodes"]], "NNodes", path, line, maximum=MAX_RECORD_TASKS
            )
            nodes = max(nodes, 1)
        quantities = _tres(fields[col["AllocTRES"]], path, line) if "AllocTRES" in col else {}
        if "cpu" not in quantities and "NCPUS" in col and fields[col["NCPUS"]]:
            quantities["cpu"] = whole_number(
                fields[col["NCPUS"]], "NCPUS", path, line, maximum=MAX_RECORD_TASKS
            )
        limit = None
        if "Timelimit" in col:
            limit = self.limit(fields[col["Timelimit"]], line)
        self.keep(
            _Record(
                submit,
                line,
                job_id,
                account,
                user,
                nodes,
                self.demand(quantities, nodes, job_id, line),
                min(end - start, MAX_SECONDS),
                limit,
            )
        )

    def limit(self, text: str, line: int) -> float | None:
        """``Timelimit`` in seconds (Slurm's time format), None for no limit."""
        from fairshare.workload.imports.slurm import slurm_seconds  # noqa: PLC0415

        if text in _NO_LIMIT:
            return None
        seconds = slurm_seconds(text)
        if seconds is None:
            raise TraceError(
                self.path,
                line,
                "field Timelimit: must be a Slurm time (minutes, hh:mm:ss, days-hh:mm:ss) or "
                f"UNLIMITED, got {shown(text)}",
            )
        return float(seconds) if seconds >= MIN_SECONDS else None

    def demand(
        self, quantities: dict[str, float], nodes: int, job_id: str, line: int
    ) -> FloatArray:
        """The per-node demand vector in the cluster's resource order (shared when equal)."""
        vector = [0.0] * len(self.cluster.resources)
        for quantity, value in quantities.items():
            if value <= 0:
                continue
            at = self.positions.get(quantity)
            if at is None:
                self.dropped[quantity] = self.dropped.get(quantity, 0) + 1
                continue
            vector[at] = value / nodes
        if not any(vector):
            raise TraceError(
                self.path,
                line,
                f"job {shown(job_id)} allocates none of the scenario's resources "
                f"({', '.join(self.cluster.resources)}); AllocTRES or NCPUS must give cpu",
            )
        key = tuple(vector)
        found = self.demands.get(key)
        if found is None:
            found = np.array(vector, dtype=np.float64)
            found.setflags(write=False)
            self.demands[key] = found
        return found

    def keep(self, record: _Record) -> None:
        if len(self.records) >= MAX_SACCT_JOBS:
            raise TraceError(
                self.path,
                record.line,
                f"more than {MAX_SACCT_JOBS:,} jobs; split the history (sacct -S/-E)",
            )
        self.records.append(record)


def read_sacct(path: Path, cluster: Cluster, users: Sequence[str] = ()) -> TraceJobs:
    r"""The jobs of a ``sacct -P`` history, in submit order, on ``cluster``.

    Parameters
    ----------
    path : Path
        The history (``.gz`` read compressed).
    cluster : Cluster
        The machines the jobs are replayed on (resources ``cpu``, ``mem`` in MiB, ``gpu``).
    users : sequence of str
        The scenario's user names (``USER`` or ``ACCOUNT/USER``, as ``fairshare import
        slurm`` names them).

    Returns
    -------
    TraceJobs
        One job per record that ran (module docstring); its ``warnings`` count the records
        skipped, once read.

    Raises
    ------
    TraceError
        Now, for an unreadable file or a header without the required columns; at the first
        job, for a record with the wrong number of fields, a time, state, amount, node count
        or time limit that cannot be read, times out of order, a repeated ``JobID``, or a job
        allocating none of the scenario's resources.
    """
    check_readable(path, "sacct -P history")
    reader = _Reader(path, cluster)
    lines = numbered_lines(path)
    for line, text in lines:
        if text.strip():
            reader.header(line, text)
            break
    else:
        raise TraceError(path, None, "is empty; expected sacct -P's header line and records")
    warnings: list[str] = []
    return TraceJobs(_replay(reader, lines, set(users), warnings), warnings)


def _replay(
    reader: _Reader, lines: Iterator[tuple[int, str]], users: set[str], warnings: list[str]
) -> Iterator[Job]:
    """Read every record, then yield the jobs in submit order and fill ``warnings``."""
    path = reader.path
    for line, text in lines:
        if text.strip():
            reader.record(line, text)
    records = reader.records
    seen: dict[str, int] = {}
    accounts: dict[str, set[str]] = {}
    for record in records:
        first = seen.setdefault(record.name, record.line)
        if first != record.line:
            raise TraceError(
                path,
                record.line,
                f"JobID {shown(record.name)} repeats (first at line {first}); job ids must be "
                "unique (sacct -D lists a requeued job's earlier runs as REQUEUED)",
            )
        accounts.setdefault(record.user, set()).add(record.account)
    records.sort(key=lambda r: (r.submit, r.line))
    origin = records[0].submit if records else 0.0
    tenants: dict[tuple[str, str], str] = {}
    unknown: dict[str, int] = {}
    for record in records:
        key = (record.account, record.user)
        tenant = tenants.get(key)
        if tenant is None:
            qualified = f"{record.account}/{record.user}"
            if qualified in users:
                tenant = qualified
            elif record.user in users:
                tenant = record.user
            else:
                tenant = record.user if len(accounts[record.user]) == 1 else qualified
            tenants[key] = tenant
        if users and tenant not in users:
            unknown[tenant] = unknown.get(tenant, 0) + 1
        yield Job(
            name=record.name,
            submit=record.submit - origin,
            user=tenant,
            demand=record.demand,
            tasks=record.tasks,
            duration=FixedDuration(record.duration),
            min_tasks=record.tasks if record.tasks > 1 else None,
            estimate=record.estimate,
        )
    warnings.extend(_warnings(path, reader, unknown))


def _warnings(path: Path, reader: _Reader, unknown: dict[str, int]) -> list[str]:
    """The summary lines: records skipped, quantities left out, tenants the scenario lacks."""
    out: list[str] = []
    total = sum(reader.skipped.values())
    if total:
        parts = [f"{n} {_REASONS[why]}" for why, n in reader.skipped.items() if n]
        out.append(
            f"warning: {path}: {total} job record{'s' if total > 1 else ''} skipped: "
            f"{', '.join(parts)}; only jobs with a Start and an End are replayed"
        )
    for quantity, count in reader.dropped.items():
        out.append(
            f"warning: {path}: AllocTRES: {count} jobs allocate {quantity}, which the scenario "
            f"has no resource for (resources: {', '.join(reader.cluster.resources)}); their "
            f"{quantity} is left out"
        )
    if unknown:
        jobs = sum(unknown.values())
        names = some_names(list(unknown))
        out.append(
            f"warning: {path}: {jobs} jobs of {len(unknown)} user(s) the scenario lacks "
            f"({names}): each is a user of its own at the root"
        )
    return out
