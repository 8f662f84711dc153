"""The live driver's journal in the service's database (SPEC section 6): every task state
change the driver makes is a statement of the open transaction, committed before the matching
executor call (:class:`~fairshare.backends.Journal`), so that a service killed at any moment
recovers from the database (:meth:`fairshare.service.store.Store.recover`).

Examples
--------
>>> from fairshare.backends import LiveJob
>>> from fairshare.service.store import Store
>>> store = Store(":memory:")
>>> store.add_job(LiveJob("j1", "alice", "train", 1, {"cpu": 1.0}, ("true",)))
True
>>> journal = StoreJournal(store)
>>> journal.task_launched("j1", 0, 0, "n1")
>>> journal.commit()
>>> dict(store.job("j1").tasks)["running"]
1
"""

from __future__ import annotations

import time

from fairshare.backends import Journal
from fairshare.backends.driver import JobEnd
from fairshare.service.store import Store


class StoreJournal(Journal):
    """The driver's writes into the store (on the driver's thread): each state change is
    a statement kept in order until :meth:`commit` writes them all in one transaction,
    which the driver calls before every executor call and after every step. A task changes
    state only from the state the change expects (a launch from pending, an end from
    running), so that a job a tenant cancelled meanwhile keeps its tasks cancelled.

    A commit that fails (disk full, a read-only file: :class:`StoreFault`) keeps every
    statement and raises: the driver makes none of the executor calls it covered, and the
    next commit writes them all again, in order, so the database never lags what the
    cluster was told.

    The methods are :class:`~fairshare.backends.Journal`'s.

    Parameters
    ----------
    store : Store
        The database, used through the driver's thread's connection.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.statements: list[tuple[str, tuple[object, ...]]] = []

    @property
    def pending(self) -> bool:
        """Whether some statement waits for :meth:`commit`."""
        return bool(self.statements)

    def _run(self, sql: str, args: tuple[object, ...]) -> None:
        """One statement of the next commit."""
        self.statements.append((sql, args))

    def task_launched(self, job: str, index: int, attempt: int, machine: str) -> None:
        """The task runs (from pending) on ``machine``, launched by the lease's owner; its
        attempts are counted in the database (committed before the attempt starts, so the
        count is durable); its job runs.

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        attempt : int
            The attempt's number (0 first).
        machine : str
            The node.
        """
        self._run(
            "UPDATE tasks SET state = 'running', attempts = max(attempts, ?) + 1, "
            "machine = ?, owner = ? WHERE job = ? AND idx = ? AND state = 'pending'",
            (attempt, machine, self.store.owner, job, index),
        )
        self._run("UPDATE jobs SET state = 'running' WHERE id = ? AND state = 'pending'", (job,))
        # Each attempt's node, kept: its output is read there (``fairshare logs``).
        self._run(
            "INSERT OR REPLACE INTO attempts (job, idx, attempt, machine) VALUES (?, ?, ?, ?)",
            (job, index, attempt, machine),
        )

    def task_finished(self, job: str, index: int) -> None:
        """The task finished (from running).

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        """
        self._run(
            "UPDATE tasks SET state = 'finished' WHERE job = ? AND idx = ? AND state = 'running'",
            (job, index),
        )

    def task_pending(
        self, job: str, index: int, *, failures: int, error: str | None = None
    ) -> None:
        """The task is pending again (from running), its failures and last error kept.

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        failures : int
            Its failures so far.
        error : str, optional
            Why it stopped.
        """
        self._run(
            "UPDATE tasks SET state = 'pending', failures = ?, error = ?, machine = NULL "
            "WHERE job = ? AND idx = ? AND state = 'running'",
            (failures, error, job, index),
        )

    def task_failed(self, job: str, index: int, *, failures: int, error: str) -> None:
        """The task failed for good (from running).

        Parameters
        ----------
        job : str
            The job's id.
        index : int
            The task.
        failures : int
            Its failures.
        error : str
            The last failure's error.
        """
        self._run(
            "UPDATE tasks SET state = 'failed', failures = ?, error = ? "
            "WHERE job = ? AND idx = ? AND state = 'running'",
            (failures, error, job, index),
        )

    def job_ended(self, job: str, state: JobEnd, error: str | None = None) -> None:
        """The job ended (if it had not); its tasks not finished are cancelled unless it
        finished.

        Parameters
        ----------
        job : str
            The job's id.
        state : {"finished", "failed", "cancelled"}
            How it ended.
        error : str, optional
            Why it failed.
        """
        if state != "finished":
            self._run(
                "UPDATE tasks SET state = 'cancelled' WHERE job = ? "
                "AND state IN ('pending', 'running')",
                (job,),
            )
        self._run(
            "UPDATE jobs SET state = ?, error = ?, finished = ? "
            "WHERE id = ? AND state IN ('pending', 'running')",
            (state, error, time.time(), job),
        )

    def commit(self) -> None:
        """Write the statements since the last commit, in one transaction (nothing when
        there are none).

        Raises
        ------
        StoreFault
            The database cannot be written now; the statements are kept for the next
            commit.
        """
        if not self.statements:
            return
        with self.store.transaction() as conn:
            for sql, args in self.statements:
                conn.execute(sql, args)
        self.statements = []
