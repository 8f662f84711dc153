"""The service's durable state: one SQLite database (WAL) holding every tenant token, job and
task state (SPEC section 6).

What is written, and when:

- a tenant token, by ``fairshare tenant add`` or the admin API: only its SHA-256 hash;
- a job, with one row per task (pending), when the HTTP API accepts it, before the driver
  sees it; a cancellation, before the driver stops anything;
- every task state change, by the live driver through
  :class:`~fairshare.service.journal.StoreJournal`, committed
  before the matching executor call (a launch, a cancel).

Recovery (:meth:`Store.recover`): a service killed at any moment (SIGKILL included) and
started again replays every job not ended into the policy; its tasks that were running are
pending again and run once more. Delivery is therefore *at least once*: a task that was
running when the service died may run twice. Committed transactions survive the death of
the process (WAL with ``synchronous=NORMAL``); a power loss may lose the last ones.

Each thread uses its own connection (:meth:`Store.connection`); SQLite serialises writers,
and every transaction is short (the driver commits before it waits for tasks).

Examples
--------
A job written, its service killed while a task ran, and the job recovered: the running task
is pending again (at least once).

>>> from fairshare.backends import LiveJob
>>> from fairshare.service.journal import StoreJournal
>>> store = Store(":memory:")
>>> token = store.add_token("alice")
>>> store.caller(token), store.caller("fs_guess")
(Caller(tenant='alice', admin=False), None)
>>> store.add_job(LiveJob("j1", "alice", "train", 2, {"cpu": 1.0}, ("true",)))
True
>>> journal = StoreJournal(store)
>>> journal.task_launched("j1", 0, 0, "n1")
>>> journal.task_launched("j1", 1, 0, "n1")
>>> journal.task_finished("j1", 0)
>>> journal.commit()
>>> store.job("j1").state, dict(store.job("j1").tasks)["running"]
('running', 1)
>>> [(job.id, job.done) for job in store.recover()]
[('j1', frozenset({0}))]
>>> store.cancel_job("j1", actor="alice"), store.job("j1").state
(True, 'cancelled')
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairshare.backends import LiveJob
from fairshare.errors import FairshareError

SCHEMA_VERSION = 3
"""The version of the database's tables this fairshare reads and writes (2: jobs gained
``min_tasks`` and ``priority``; 3: ``estimate``; an older database is upgraded in place when
opened, one version at a time)."""

_UPGRADES = {
    1: (
        "ALTER TABLE jobs ADD COLUMN min_tasks INTEGER",
        "ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0",
    ),
    2: ("ALTER TABLE jobs ADD COLUMN estimate REAL",),
}
"""Per older schema version, the statements that bring it to the next one."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    admin INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    tasks INTEGER NOT NULL,
    demand TEXT NOT NULL,
    command TEXT NOT NULL,
    constraint_text TEXT,
    max_retries INTEGER NOT NULL,
    min_tasks INTEGER,
    priority INTEGER NOT NULL DEFAULT 0,
    estimate REAL,
    state TEXT NOT NULL,
    error TEXT,
    submitted REAL NOT NULL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs (tenant, seq);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, seq);
CREATE TABLE IF NOT EXISTS tasks (
    job TEXT NOT NULL,
    idx INTEGER NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    machine TEXT,
    error TEXT,
    PRIMARY KEY (job, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS actions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL
);
"""

JOB_STATES = ("pending", "running", "finished", "failed", "cancelled")
"""A job's states: pending until its first launch, running, then one of :data:`ENDED`."""
ENDED = ("finished", "failed", "cancelled")
"""The states of a job that ended (it changes no more)."""
TASK_COUNTS = ("pending", "running", "finished", "failed", "cancelled")
"""A task's states, the keys of :attr:`JobRow.tasks`."""


class StoreError(FairshareError):
    """The database cannot be used (unreadable, not fairshare's, a newer schema)."""


def hash_token(token: str) -> str:
    """The stored form of a bearer token (tokens are 256 random bits: a plain hash is as
    strong as a slow one here, and a lookup by hash never compares secrets).

    Parameters
    ----------
    token : str
        The bearer token.

    Returns
    -------
    str
        Its SHA-256, in hexadecimal.

    Examples
    --------
    >>> hash_token("fs_example")[:16]
    'f5e23b244f728daf'
    """
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A new bearer token: ``fs_`` and 256 random bits.

    Returns
    -------
    str
    """
    return "fs_" + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Caller:
    """Who a token belongs to.

    Parameters
    ----------
    tenant : str
        The tenant (for an administrator's token, the name it was made for).
    admin : bool
        Whether it is an administrator's token.
    """

    tenant: str
    admin: bool


@dataclass(frozen=True)
class JobRow:
    """A job as the API shows it.

    Parameters
    ----------
    id, tenant, name : str
        The job's id, its tenant and the name it was given.
    state : str
        One of :data:`JOB_STATES`.
    tasks : mapping of str to int
        Its tasks per state (the keys of :data:`TASK_COUNTS`).
    submitted : float
        When it was accepted (seconds since the epoch).
    finished : float or None
        When it ended (None until then).
    error : str or None
        Why it failed.
    demand : mapping of str to float
        What each task holds, by resource name.
    command : tuple of str
        The argv each task runs.
    constraint : str or None
        Its placement constraint.
    max_retries : int
        How many times a task may fail and run again.
    min_tasks : int or None
        A gang's tasks that start together (None: not a gang).
    priority : int
        Its priority (higher first).
    estimate : float or None
        Seconds a task is expected to run at most (None: not given).
    """

    id: str
    tenant: str
    name: str
    state: str
    tasks: Mapping[str, int]
    submitted: float
    finished: float | None
    error: str | None
    demand: Mapping[str, float]
    command: tuple[str, ...]
    constraint: str | None
    max_retries: int
    min_tasks: int | None = None
    priority: int = 0
    estimate: float | None = None


class Store:
    """The database at ``path`` (created with its schema when new).

    Parameters
    ----------
    path : str or Path
        The SQLite file (``":memory:"``: a database of this thread's connection only).

    Raises
    ------
    StoreError
        The file is not a fairshare database, or one of another schema version.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        try:
            conn = self.connection()
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
                conn.commit()
            else:
                version = int(row[0])
                while version in _UPGRADES:
                    for statement in _UPGRADES[version]:
                        conn.execute(statement)
                    version += 1
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(version),))
                    conn.commit()
                if version != SCHEMA_VERSION:
                    raise StoreError(
                        f"schema version {row[0]}; this fairshare reads {SCHEMA_VERSION}"
                    )
        except sqlite3.DatabaseError as err:
            raise StoreError(f"cannot use it as a fairshare database ({err})") from None

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (WAL, foreign writers waited for up to 30 s).

        Returns
        -------
        sqlite3.Connection
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level="DEFERRED")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection (the next call opens another)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A transaction on this thread's connection: committed when the block ends, rolled
        back when it raises.

        Yields
        ------
        sqlite3.Connection
        """
        conn = self.connection()
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    def _act(self, conn: sqlite3.Connection, actor: str, action: str, subject: str) -> None:
        """Write who did what to whom in the actions table (the audit trail)."""
        conn.execute(
            "INSERT INTO actions (at, actor, action, subject) VALUES (?, ?, ?, ?)",
            (time.time(), actor, action, subject),
        )

    # ------------------------------------------------------------------ tokens

    def add_token(self, tenant: str, *, admin: bool = False, actor: str = "command line") -> str:
        """A new bearer token for ``tenant`` (an administrator's with ``admin``); only its
        hash is kept.

        Parameters
        ----------
        tenant : str
            The tenant.
        admin : bool
            Make an administrator's token.
        actor : str
            Who asks, for the audit trail.

        Returns
        -------
        str
            The token.
        """
        token = new_token()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO tokens (hash, tenant, admin, created) VALUES (?, ?, ?, ?)",
                (hash_token(token), tenant, int(admin), time.time()),
            )
            self._act(conn, actor, "add admin token" if admin else "add token", tenant)
        return token

    def revoke(self, tenant: str, *, actor: str) -> int:
        """Revoke every token of ``tenant`` (not administrators').

        Parameters
        ----------
        tenant : str
            The tenant.
        actor : str
            Who asks, for the audit trail.

        Returns
        -------
        int
            How many tokens there were.
        """
        with self.transaction() as conn:
            count = conn.execute(
                "DELETE FROM tokens WHERE tenant = ? AND admin = 0", (tenant,)
            ).rowcount
            self._act(conn, actor, "revoke tokens", tenant)
        return int(count)

    def tenants(self) -> dict[str, int]:
        """Tenants with tokens, and how many each has.

        Returns
        -------
        dict of str to int
            By tenant name, in name order.
        """
        rows = self.connection().execute(
            "SELECT tenant, count(*) FROM tokens WHERE admin = 0 GROUP BY tenant ORDER BY tenant"
        )
        return {str(t): int(n) for t, n in rows}

    def caller(self, token: str) -> Caller | None:
        """Who ``token`` belongs to.

        Parameters
        ----------
        token : str
            A bearer token.

        Returns
        -------
        Caller or None
            None for an unknown (or revoked) token.
        """
        row = (
            self.connection()
            .execute("SELECT tenant, admin FROM tokens WHERE hash = ?", (hash_token(token),))
            .fetchone()
        )
        return None if row is None else Caller(str(row[0]), bool(row[1]))

    # ------------------------------------------------------------------ jobs

    def add_job(self, job: LiveJob, *, limit: int | None = None) -> bool:
        """Write a new job and its tasks (pending); False when its tenant already has
        ``limit`` jobs not ended (nothing written).

        Parameters
        ----------
        job : LiveJob
            The job.
        limit : int, optional
            The most jobs not ended its tenant may have (None: no limit).

        Returns
        -------
        bool
            Whether it was written.
        """
        with self.transaction() as conn:
            if limit is not None:
                (waiting,) = conn.execute(
                    "SELECT count(*) FROM jobs "
                    "WHERE tenant = ? AND state IN ('pending', 'running')",
                    (job.tenant,),
                ).fetchone()
                if waiting >= limit:
                    return False
            conn.execute(
                "INSERT INTO jobs (id, tenant, name, tasks, demand, command, constraint_text, "
                "max_retries, min_tasks, priority, estimate, state, submitted) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
                (
                    job.id,
                    job.tenant,
                    job.name,
                    job.tasks,
                    json.dumps(dict(job.demand)),
                    json.dumps(list(job.command)),
                    job.constraint,
                    job.max_retries,
                    job.min_tasks,
                    job.priority,
                    job.estimate,
                    time.time(),
                ),
            )
            conn.executemany(
                "INSERT INTO tasks (job, idx, state) VALUES (?, ?, 'pending')",
                ((job.id, i) for i in range(job.tasks)),
            )
            self._act(conn, job.tenant, "submit", job.id)
        return True

    def cancel_job(self, job_id: str, *, actor: str) -> bool:
        """Mark a job not ended cancelled (its tasks not finished too); False when it had
        ended already.

        Parameters
        ----------
        job_id : str
            The job's id.
        actor : str
            Who asks, for the audit trail.

        Returns
        -------
        bool
            Whether it changed.
        """
        with self.transaction() as conn:
            changed = conn.execute(
                "UPDATE jobs SET state = 'cancelled', finished = ? "
                "WHERE id = ? AND state IN ('pending', 'running')",
                (time.time(), job_id),
            ).rowcount
            if changed:
                conn.execute(
                    "UPDATE tasks SET state = 'cancelled' "
                    "WHERE job = ? AND state IN ('pending', 'running')",
                    (job_id,),
                )
                self._act(conn, actor, "cancel", job_id)
        return bool(changed)

    def job(self, job_id: str) -> JobRow | None:
        """One job.

        Parameters
        ----------
        job_id : str
            The job's id.

        Returns
        -------
        JobRow or None
            None for an unknown id.
        """
        conn = self.connection()
        row = conn.execute(_JOB_COLUMNS + " WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else self._job_row(conn, row)

    def jobs(self, tenant: str | None) -> list[JobRow]:
        """A tenant's jobs (every job for None), in submission order.

        Parameters
        ----------
        tenant : str or None
            The tenant, or None for every job.

        Returns
        -------
        list of JobRow
        """
        conn = self.connection()
        if tenant is None:
            rows = conn.execute(_JOB_COLUMNS + " ORDER BY seq").fetchall()
        else:
            query = _JOB_COLUMNS + " WHERE tenant = ? ORDER BY seq"
            rows = conn.execute(query, (tenant,)).fetchall()
        return [self._job_row(conn, row) for row in rows]

    @staticmethod
    def _job_row(conn: sqlite3.Connection, row: Sequence[Any]) -> JobRow:
        """A row of the jobs table as a :class:`JobRow`, its tasks counted by state."""
        counts = dict.fromkeys(TASK_COUNTS, 0)
        for state, n in conn.execute(
            "SELECT state, count(*) FROM tasks WHERE job = ? GROUP BY state", (row[0],)
        ):
            counts[str(state)] = int(n)
        return JobRow(
            id=row[0],
            tenant=row[1],
            name=row[2],
            state=row[3],
            tasks=counts,
            submitted=row[4],
            finished=row[5],
            error=row[6],
            demand=json.loads(row[7]),
            command=tuple(json.loads(row[8])),
            constraint=row[9],
            max_retries=row[10],
            min_tasks=row[11],
            priority=row[12],
            estimate=row[13],
        )

    def recover(self) -> list[LiveJob]:
        """The jobs not ended, in submission order, for the driver to replay: tasks that were
        running are pending again (at least once: they run again).

        Returns
        -------
        list of LiveJob
            Each with its finished tasks (``done``) and failures so far.
        """
        with self.transaction() as conn:
            conn.execute(
                "UPDATE tasks SET state = 'pending', machine = NULL WHERE state = 'running' "
                "AND job IN (SELECT id FROM jobs WHERE state IN ('pending', 'running'))"
            )
            rows = conn.execute(
                "SELECT id, tenant, name, tasks, demand, command, constraint_text, max_retries, "
                "min_tasks, priority, estimate FROM jobs WHERE state IN ('pending', 'running') "
                "ORDER BY seq"
            ).fetchall()
            jobs: list[LiveJob] = []
            for row in rows:
                job_id, tenant, name, tasks, demand, command, constraint, retries = row[:8]
                min_tasks, priority, estimate = row[8], row[9], row[10]
                done: set[int] = set()
                failures: dict[int, int] = {}
                for idx, state, failed in conn.execute(
                    "SELECT idx, state, failures FROM tasks WHERE job = ?", (job_id,)
                ):
                    if state == "finished":
                        done.add(int(idx))
                    if failed:
                        failures[int(idx)] = int(failed)
                jobs.append(
                    LiveJob(
                        job_id,
                        tenant,
                        name,
                        int(tasks),
                        json.loads(demand),
                        tuple(json.loads(command)),
                        constraint,
                        int(retries),
                        frozenset(done),
                        failures,
                        None if min_tasks is None else int(min_tasks),
                        int(priority),
                        None if estimate is None else float(estimate),
                    )
                )
        return jobs


_JOB_COLUMNS = (
    "SELECT id, tenant, name, state, submitted, finished, error, demand, command, "
    "constraint_text, max_retries, min_tasks, priority, estimate FROM jobs"
)
