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
>>> store.cancel_job_counted("j1", actor="alice"), store.job("j1").state
((True, 0, 1), 'cancelled')
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
import socket
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

SCHEMA_VERSION = 4
"""The version of the database's tables this fairshare reads and writes (2: jobs gained
``min_tasks`` and ``priority``; 3: ``estimate``; 4: the ``lease`` and each task attempt's
``owner``; an older database is upgraded in place when opened, one version at a time)."""

_UPGRADES = {
    1: (
        "ALTER TABLE jobs ADD COLUMN min_tasks INTEGER",
        "ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0",
    ),
    2: ("ALTER TABLE jobs ADD COLUMN estimate REAL",),
    3: ("ALTER TABLE tasks ADD COLUMN owner TEXT",),
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
    owner TEXT,
    PRIMARY KEY (job, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS actions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    job TEXT NOT NULL,
    idx INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    machine TEXT NOT NULL,
    PRIMARY KEY (job, idx, attempt)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started REAL NOT NULL,
    heartbeat REAL NOT NULL
);
"""

CACHE_KIB = 256
"""SQLite's page cache per connection, in KiB."""

JOB_STATES = ("pending", "running", "finished", "failed", "cancelled")
"""A job's states: pending until its first launch, running, then one of :data:`ENDED`."""
ENDED = ("finished", "failed", "cancelled")
"""The states of a job that ended (it changes no more)."""
TASK_COUNTS = ("pending", "running", "finished", "failed", "cancelled")
"""A task's states, the keys of :attr:`JobRow.tasks`."""


class StoreError(FairshareError):
    """The database cannot be used (unreadable, not fairshare's, a newer schema)."""


class StoreFault(StoreError):
    """A read or write of the database failed now (disk full, a read-only file, an I/O
    error, a lock held too long): an event the service reports (503, ``/healthz``) and
    retries, never a crash."""


class LeaseHeld(StoreError):
    """Another service holds the database's lease (one service per database)."""


LEASE_STALE_SECONDS = 30.0
"""A lease whose heartbeat is older than this is a dead service's (the holder beats every
:data:`HEARTBEAT_SECONDS`)."""
HEARTBEAT_SECONDS = 5.0
"""How often the service holding the lease writes its heartbeat."""

_FAULTS = (sqlite3.OperationalError, sqlite3.DataError, sqlite3.InternalError)
"""sqlite3's errors of the moment (``database or disk is full``, ``attempt to write a
readonly database``, ``disk I/O error``, ``database is locked``); a bare
``sqlite3.DatabaseError`` (a malformed file) is one too, its subclasses that name a bug
(integrity, programming) are not."""


def _text(raw: bytes) -> str:
    """A stored text as a string (bytes that are not UTF-8 as U+FFFD)."""
    return raw.decode("utf-8", "replace")


def _upgrade(conn: sqlite3.Connection, statement: str) -> None:
    """One statement of a schema upgrade; a column that is there already is kept."""
    try:
        conn.execute(statement)
    except sqlite3.OperationalError as err:
        if "duplicate column name" not in str(err):
            raise


def _fault(err: sqlite3.Error) -> bool:
    """Whether ``err`` is a storage fault (see :data:`_FAULTS`), not a bug."""
    return isinstance(err, _FAULTS) or type(err) is sqlite3.DatabaseError


@contextmanager
def _faults(what: str) -> Iterator[None]:
    """Turn a storage fault met while doing ``what`` into a :class:`StoreFault`."""
    try:
        yield
    except sqlite3.Error as err:
        if not _fault(err):
            raise
        raise StoreFault(f"cannot {what} the database ({err})") from None


@dataclass(frozen=True)
class Lease:
    """The service that holds (or held) a database: one at a time.

    Parameters
    ----------
    owner : str
        A random id of that service's run (what its tasks' rows and environments carry).
    pid : int
        Its process id.
    host : str
        Its host name.
    started, heartbeat : float
        When it took the lease and last said it was alive (seconds since the epoch).
    """

    owner: str
    pid: int
    host: str
    started: float
    heartbeat: float

    def describe(self, now: float) -> str:
        """Who holds it, for a refusal: pid, host and the age of its heartbeat."""
        return (
            f"pid {self.pid} on {self.host}, heartbeat {max(0.0, now - self.heartbeat):.0f} s ago"
        )


@dataclass(frozen=True)
class StaleAttempt:
    """A task attempt a previous service recorded running (see :meth:`Store.stale`).

    Parameters
    ----------
    job : str
        The job's id.
    index : int
        The task.
    attempt : int
        The attempt's number (0 first: ``FAIRSHARE_ATTEMPT``).
    owner : str or None
        The service run that launched it (``FAIRSHARE_SERVICE``).
    machine : str or None
        The node it ran on.
    """

    job: str
    index: int
    attempt: int
    owner: str | None
    machine: str | None


def create_private(path: Path) -> None:
    """Create ``path`` empty, readable and writable by its owner only (0600), unless it
    exists; SQLite gives the database's ``-wal`` and ``-shm`` files the same mode.

    Parameters
    ----------
    path : Path
        The file.
    """
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return


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
        self.owner: str | None = None
        """The lease's owner id once :meth:`acquire` took it (None: no lease held)."""
        self._lock: int | None = None
        try:
            if str(path) != ":memory:":
                create_private(self.path)
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
                        _upgrade(conn, statement)
                    version += 1
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(version),))
                    conn.commit()
                if version != SCHEMA_VERSION:
                    raise StoreError(
                        f"schema version {row[0]}; this fairshare reads {SCHEMA_VERSION}"
                    )
        except sqlite3.DatabaseError as err:
            self.close()
            raise StoreError(f"cannot use it as a fairshare database ({err})") from None
        except (OSError, ValueError) as err:
            self.close()
            raise StoreError(f"cannot open it ({err})") from None

    def check(self) -> None:
        """Read the whole file once (SQLite's ``PRAGMA quick_check``): a database with
        damaged pages is refused at start, not met by a request later.

        Raises
        ------
        StoreError
            The file is damaged.
        """
        try:
            rows = self.connection().execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as err:
            raise StoreError(f"is damaged ({err})") from None
        problems = [str(r[0]) for r in rows if r[0] != "ok"]
        if problems:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise StoreError(f"is damaged: {problems[0]}{more}")

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (WAL, foreign writers waited for up to 30 s).

        Returns
        -------
        sqlite3.Connection
        """
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level="DEFERRED")
            # Text that is not UTF-8 (a row damaged, or written by another program) reads
            # with U+FFFD in place of the bad bytes: one row never makes a listing fail.
            conn.text_factory = _text
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                # Each thread of the API's pool has a connection: SQLite's default page
                # cache (2 MiB each) made the service's memory grow with the database up
                # to 80 MiB (the load test, docs/live.md); the OS caches the file anyway.
                conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            except sqlite3.Error:
                conn.close()
                raise
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection (the next call opens another)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database and empty it (``PRAGMA
        wal_checkpoint(TRUNCATE)``): a clean shutdown leaves one file's worth of state.

        Raises
        ------
        StoreFault
            The database cannot be written (the log stays; SQLite replays it next time).
        """
        with _faults("checkpoint"):
            self.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    @contextmanager
    def transaction(self, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        """A transaction on this thread's connection: committed when the block ends, rolled
        back when it raises. ``immediate`` takes the write lock at once (``BEGIN
        IMMEDIATE``), so that what the block reads (a count against a limit) cannot change
        before it writes.

        Parameters
        ----------
        immediate : bool
            Begin with the write lock.

        Yields
        ------
        sqlite3.Connection

        Raises
        ------
        StoreFault
            The database cannot be written now (nothing of the block is kept).
        """
        with _faults("write"):
            conn = self.connection()
            if immediate and not conn.in_transaction:
                conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            try:
                conn.commit()
            except BaseException:
                conn.rollback()
                raise

    # ------------------------------------------------------------------ the lease

    def lease(self) -> Lease | None:
        """The lease as written: the service that holds the database, or held it last.

        Returns
        -------
        Lease or None
            None when no service ever held it (or the last one released it).
        """
        with _faults("read"):
            row = (
                self.connection()
                .execute("SELECT owner, pid, host, started, heartbeat FROM lease WHERE id = 1")
                .fetchone()
            )
        if row is None:
            return None
        return Lease(str(row[0]), int(row[1]), str(row[2]), float(row[3]), float(row[4]))

    def acquire(self, *, stale_after: float = LEASE_STALE_SECONDS) -> Lease | None:
        """Take the database for this process: an exclusive OS lock on ``PATH.lock``
        (``flock``; released by the system when the process dies, SIGKILL included), then
        the lease row, written in a transaction with this process's id, host and a
        heartbeat. A lease row another host beat less than ``stale_after`` seconds ago
        refuses too (a lock a network file system does not share).

        Parameters
        ----------
        stale_after : float
            The age past which another host's heartbeat is a dead service's.

        Returns
        -------
        Lease or None
            The previous holder's lease (a service that died or stopped), whose task
            attempts may still run; None when there was none.

        Raises
        ------
        LeaseHeld
            Another service holds the database (the message names its pid and host).
        """
        lock = Path(f"{self.path}.lock")
        create_private(lock)
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            holder = self.lease()
            who = holder.describe(time.time()) if holder is not None else "unknown holder"
            raise LeaseHeld(
                f"is in use by another fairshare serve ({who}); one service per database"
            ) from None
        try:
            with self.transaction(immediate=True) as conn:
                previous = self.lease()
                now = time.time()
                host = socket.gethostname()
                if (
                    previous is not None
                    and previous.host != host
                    and now - previous.heartbeat < stale_after
                ):
                    raise LeaseHeld(
                        f"is in use by another fairshare serve ({previous.describe(now)}); "
                        "one service per database"
                    )
                owner = secrets.token_hex(8)
                conn.execute(
                    "INSERT OR REPLACE INTO lease (id, owner, pid, host, started, heartbeat) "
                    "VALUES (1, ?, ?, ?, ?, ?)",
                    (owner, os.getpid(), host, now, now),
                )
                self._act(conn, f"pid {os.getpid()} on {host}", "take lease", owner)
        except BaseException:
            os.close(fd)
            raise
        self._lock = fd
        self.owner = owner
        return previous

    def heartbeat(self) -> None:
        """Write that the lease's holder is alive (now); without a lease, a probe write.

        Raises
        ------
        LeaseHeld
            The lease is no longer this process's (it was taken over).
        StoreFault
            The database cannot be written now.
        """
        if str(self.path) == ":memory:":
            return  # each thread's own database: nothing shared to probe
        with self.transaction() as conn:
            if self.owner is None:
                # No lease (a service in a test): the write still probes the database.
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('heartbeat', ?)",
                    (str(time.time()),),
                )
                return
            changed = conn.execute(
                "UPDATE lease SET heartbeat = ? WHERE id = 1 AND owner = ?",
                (time.time(), self.owner),
            ).rowcount
        if not changed:
            raise LeaseHeld("the lease was taken by another service")

    def release(self) -> None:
        """Give the lease up (a clean shutdown): its row is removed and the lock freed. A
        failed write leaves the row, which the lock's release makes stale for this host."""
        if self._lock is None:
            return
        try:
            with self.transaction() as conn:
                conn.execute("DELETE FROM lease WHERE id = 1 AND owner = ?", (self.owner,))
        except StoreFault:
            pass  # the lock below is what a next service on this host needs
        finally:
            os.close(self._lock)
            self._lock = None

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

    def revoke(self, tenant: str, *, actor: str, admin: bool = False) -> int:
        """Revoke every token of ``tenant`` (with ``admin``, every administrator's token
        made for that name instead).

        Parameters
        ----------
        tenant : str
            The tenant (or the administrator's name).
        actor : str
            Who asks, for the audit trail.
        admin : bool
            Revoke administrator tokens, not a tenant's.

        Returns
        -------
        int
            How many tokens there were.
        """
        with self.transaction() as conn:
            count = conn.execute(
                "DELETE FROM tokens WHERE tenant = ? AND admin = ?", (tenant, int(admin))
            ).rowcount
            self._act(conn, actor, "revoke admin tokens" if admin else "revoke tokens", tenant)
        return int(count)

    def pending_jobs(self) -> dict[str, int]:
        """Jobs none of whose tasks has started yet, per tenant (``GET /metrics``), in one
        query.

        Returns
        -------
        dict of str to int
            By tenant name, tenants with such jobs only.
        """
        with _faults("read"):
            rows = self.connection().execute(
                "SELECT tenant, count(*) FROM jobs WHERE state = 'pending' GROUP BY tenant"
            )
            return {str(t): int(n) for t, n in rows}

    def tenants(self) -> dict[str, int]:
        """Tenants with tokens, and how many each has.

        Returns
        -------
        dict of str to int
            By tenant name, in name order.
        """
        with _faults("read"):
            rows = self.connection().execute(
                "SELECT tenant, count(*) FROM tokens WHERE admin = 0 "
                "GROUP BY tenant ORDER BY tenant"
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
        with _faults("read"):
            row = (
                self.connection()
                .execute("SELECT tenant, admin FROM tokens WHERE hash = ?", (hash_token(token),))
                .fetchone()
            )
        return None if row is None else Caller(str(row[0]), bool(row[1]))

    # ------------------------------------------------------------------ jobs

    def add_job(self, job: LiveJob, *, limit: int | None = None) -> bool:
        """Write a new job and its tasks (pending); False when its tenant already has
        ``limit`` jobs not ended (nothing written). The count and the write are one
        transaction that holds the write lock from its start (``BEGIN IMMEDIATE``): however
        many submissions race, a tenant never has more than ``limit``.

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

        Raises
        ------
        StoreFault
            The database cannot be written now.
        """
        with self.transaction(immediate=True) as conn:
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

    def cancel_job_counted(self, job_id: str, *, actor: str) -> tuple[bool, int, int]:
        """Mark a job not ended cancelled (its tasks not finished too), telling what it did:
        whether the job changed (False: it had ended already), and how many of
        its tasks were running (to be stopped) and pending (dropped) when it was cancelled,
        counted in the same transaction.

        Parameters
        ----------
        job_id : str
            The job's id.
        actor : str
            Who asks, for the audit trail.

        Returns
        -------
        (bool, int, int)
            Changed, running tasks stopped, pending tasks dropped.
        """
        with self.transaction(immediate=True) as conn:
            counts = dict(
                conn.execute(
                    "SELECT state, count(*) FROM tasks WHERE job = ? "
                    "AND state IN ('pending', 'running') GROUP BY state",
                    (job_id,),
                ).fetchall()
            )
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
        if not changed:
            return False, 0, 0
        return True, int(counts.get("running", 0)), int(counts.get("pending", 0))

    def attempt(self, job_id: str, index: int, attempt: int | None) -> tuple[int, str, str] | None:
        """Where an attempt of a task ran: its number, its node, and the task's state now
        (the attempts' nodes are written as they launch, so a task's output can be read
        on the node that ran it).

        Parameters
        ----------
        job_id : str
            The job's id.
        index : int
            The task.
        attempt : int, optional
            The attempt's number (0 first); None: the latest.

        Returns
        -------
        (int, str, str) or None
            The attempt, its node and the task's state; None when it never launched.
        """
        query = "SELECT a.attempt, a.machine, t.state FROM attempts AS a JOIN tasks AS t " + (
            "ON t.job = a.job AND t.idx = a.idx WHERE a.job = ? AND a.idx = ?"
        )
        args: tuple[object, ...] = (job_id, index)
        if attempt is not None:
            query += " AND a.attempt = ?"
            args += (attempt,)
        query += " ORDER BY a.attempt DESC LIMIT 1"
        with _faults("read"):
            row = self.connection().execute(query, args).fetchone()
        if row is None:
            return None
        return int(row[0]), clean_text(row[1]), clean_text(row[2])

    def meta(self, key: str) -> str | None:
        """A value the service keeps between runs (``usage``: the decayed usage).

        Parameters
        ----------
        key : str
            Its name.

        Returns
        -------
        str or None
        """
        with _faults("read"):
            row = (
                self.connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            )
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` between runs (see :meth:`meta`).

        Parameters
        ----------
        key : str
            Its name (never ``schema``).
        value : str
            The value.
        """
        assert key != "schema"
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def unended(self) -> int:
        """How many jobs have not ended (pending or running): those a restart resumes.

        Returns
        -------
        int
        """
        with _faults("read"):
            row = (
                self.connection()
                .execute("SELECT count(*) FROM jobs WHERE state IN ('pending', 'running')")
                .fetchone()
            )
        return int(row[0])

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
        with _faults("read"):
            row = self.connection().execute(_JOB_QUERY.format(where="j.id = ?"), (job_id,))
            found = row.fetchone()
        return None if found is None else _job_row(found)

    def jobs(
        self, tenant: str | None, *, limit: int | None = None, after: str | None = None
    ) -> list[JobRow]:
        """A tenant's jobs (every job for None), in submission order, with their tasks
        counted by state, in one query.

        Parameters
        ----------
        tenant : str or None
            The tenant, or None for every job.
        limit : int, optional
            At most this many (None: all).
        after : str, optional
            Only the jobs submitted after this job (a page's ``next``); an unknown id, or
            another tenant's, gives none.

        Returns
        -------
        list of JobRow
        """
        where: list[str] = []
        args: list[object] = []
        if tenant is not None:
            where.append("j.tenant = ?")
            args.append(tenant)
        if after is not None:
            mark = "(SELECT seq FROM jobs WHERE id = ?" + (
                " AND tenant = ?)" if tenant is not None else ")"
            )
            where.append(f"j.seq > coalesce({mark}, 9223372036854775807)")
            args += [after] if tenant is None else [after, tenant]
        query = _JOB_QUERY.format(where=" AND ".join(where) or "1")
        if limit is not None:
            query += " LIMIT ?"
            args.append(limit)
        with _faults("read"):
            rows = self.connection().execute(query, args).fetchall()
        return [_job_row(row) for row in rows]

    def stale(self) -> list[StaleAttempt]:
        """The task attempts written running of jobs not ended: after a restart, those a
        previous service launched, which may still run (stop them before
        :meth:`recover` makes them pending again).

        Returns
        -------
        list of StaleAttempt
        """
        with _faults("read"):
            rows = (
                self.connection()
                .execute(
                    "SELECT t.job, t.idx, t.attempts, t.owner, t.machine FROM tasks AS t "
                    "JOIN jobs AS j ON j.id = t.job WHERE t.state = 'running' "
                    "AND j.state IN ('pending', 'running') ORDER BY j.seq, t.idx"
                )
                .fetchall()
            )
        return [
            StaleAttempt(str(job), int(idx), max(0, int(attempts) - 1), owner, machine)
            for job, idx, attempts, owner, machine in rows
        ]

    def cancel_tenant_jobs(self, tenants: Sequence[str], *, actor: str) -> dict[str, int]:
        """Cancel every job not ended of every tenant but ``tenants`` (a restart with a
        scenario that no longer lists some).

        Parameters
        ----------
        tenants : sequence of str
            The tenants that stay.
        actor : str
            Who asks, for the audit trail.

        Returns
        -------
        dict of str to int
            Per tenant left out, how many of its jobs were cancelled (in name order).
        """
        with self.transaction(immediate=True) as conn:
            rows = conn.execute(
                "SELECT id, tenant FROM jobs WHERE state IN ('pending', 'running') ORDER BY seq"
            ).fetchall()
            keep = set(tenants)
            gone: dict[str, int] = {}
            now = time.time()
            for job_id, tenant in rows:
                if tenant in keep:
                    continue
                gone[str(tenant)] = gone.get(str(tenant), 0) + 1
                conn.execute(
                    "UPDATE jobs SET state = 'cancelled', finished = ?, error = ? WHERE id = ?",
                    (now, "its tenant is not in the service's scenario", job_id),
                )
                conn.execute(
                    "UPDATE tasks SET state = 'cancelled' "
                    "WHERE job = ? AND state IN ('pending', 'running')",
                    (job_id,),
                )
                self._act(conn, actor, "cancel (tenant not in the scenario)", str(job_id))
        return dict(sorted(gone.items()))

    def recover(self) -> list[LiveJob]:
        """The jobs not ended, in submission order, for the driver to replay: tasks that were
        running are pending again (at least once: they run again, after :meth:`stale`'s
        attempts were stopped), each with its attempts so far (the next attempt's number
        follows them: attempt numbers are durable).

        Returns
        -------
        list of LiveJob
            Each with its finished tasks (``done``), failures and attempts so far.
        """
        with self.transaction(immediate=True) as conn:
            conn.execute(
                "UPDATE tasks SET state = 'pending', machine = NULL, owner = NULL "
                "WHERE state = 'running' "
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
                attempts: dict[int, int] = {}
                for idx, state, failed, tried in conn.execute(
                    "SELECT idx, state, failures, attempts FROM tasks WHERE job = ?", (job_id,)
                ):
                    if state == "finished":
                        done.add(int(idx))
                    if failed:
                        failures[int(idx)] = int(failed)
                    if tried:
                        attempts[int(idx)] = int(tried)
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
                        attempts,
                    )
                )
        return jobs


_JOB_QUERY = (
    "SELECT j.id, j.tenant, j.name, j.state, j.submitted, j.finished, j.error, j.demand, "
    "j.command, j.constraint_text, j.max_retries, j.min_tasks, j.priority, j.estimate, "
    + ", ".join(f"count(CASE WHEN t.state = '{state}' THEN 1 END)" for state in TASK_COUNTS)
    + " FROM jobs AS j LEFT JOIN tasks AS t ON t.job = j.id WHERE {where} "
    "GROUP BY j.seq ORDER BY j.seq"
)
"""Jobs with their tasks counted by state, one query (``{where}``: the filter)."""


_SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate code point: never valid alone in UTF-8."""


def clean_text(text: object) -> str:
    """``text`` as a string that any JSON encoder takes: a lone surrogate (which a
    database written by an older fairshare may hold) becomes U+FFFD, so that one stored
    field never makes a listing fail.

    Parameters
    ----------
    text : object
        A stored value (a string, or anything else a damaged row holds).

    Returns
    -------
    str

    Examples
    --------
    >>> clean_text("ok"), clean_text("a\\ud800b")
    ('ok', 'a\ufffdb')
    """
    value = text if isinstance(text, str) else str(text)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", value)
    return value


def _stored_json(text: object, default: Any) -> Any:
    """A JSON column's value, ``default`` when the stored text is not JSON."""
    try:
        return json.loads(str(text))
    except (ValueError, RecursionError):
        return default


def _job_row(row: Sequence[Any]) -> JobRow:
    """A row of :data:`_JOB_QUERY` as a :class:`JobRow`, every text made safe to show."""
    demand = _stored_json(row[7], {})
    command = _stored_json(row[8], [])
    return JobRow(
        id=clean_text(row[0]),
        tenant=clean_text(row[1]),
        name=clean_text(row[2]),
        state=clean_text(row[3]),
        tasks=dict(zip(TASK_COUNTS, (int(n) for n in row[14:]), strict=True)),
        submitted=float(row[4]),
        finished=None if row[5] is None else float(row[5]),
        error=None if row[6] is None else clean_text(row[6]),
        demand={
            clean_text(k): float(v)
            for k, v in (demand.items() if isinstance(demand, dict) else ())
            if isinstance(v, int | float)
        },
        command=tuple(clean_text(a) for a in (command if isinstance(command, list) else ())),
        constraint=None if row[9] is None else clean_text(row[9]),
        max_retries=int(row[10]),
        min_tasks=None if row[11] is None else int(row[11]),
        priority=int(row[12]),
        estimate=None if row[13] is None else float(row[13]),
    )
