"""The scheduler service without its HTTP layer: tenants' requests checked and written to the
store, handed to the live driver, and the driver's loop (SPEC section 6).

The HTTP API (:mod:`fairshare.service.app`) is a thin layer over :class:`LiveService`; tests
drive both. A tenant is always the caller's token's tenant, never a field of a request; a job
of another tenant is "not found" to it, on read and on cancel alike.

Examples
--------
A service over an in-memory store and the fake executor: alice's job is written pending,
runs at the driver's next step (three tasks on a node of 4 CPUs: a dominant share of 0.75)
and finishes; a request for a resource the cluster lacks is refused with the field at
fault, and bob cannot see alice's job.

>>> import numpy as np
>>> from fairshare.backends import FakeExecutor, LiveDriver
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.service.core import JobRequest, LiveService, ServiceError
>>> from fairshare.service.journal import StoreJournal
>>> from fairshare.service.store import Store
>>> from fairshare.workload.model import User
>>> store = Store(":memory:")
>>> executor = FakeExecutor(("cpu",), [Machine("n1", np.array([4.0]))],
...                         duration=lambda spec: 2.0)
>>> tenants = [User("alice", np.array([1.0])), User("bob", np.array([1.0]))]
>>> policy = make_policy("drf", Cluster.build(executor.resources, executor.nodes()),
...                      users=tenants)
>>> driver = LiveDriver(policy, executor, users=tenants, journal=StoreJournal(store))
>>> service = LiveService(store, driver, policy="drf", users=tenants)
>>> alice = store.caller(store.add_token("alice"))
>>> job_id = service.submit(alice, JobRequest("train", 3, {"cpu": 1.0}, ["true"]))
>>> service.job(alice, job_id).state
'pending'
>>> driver.step(0.0)
>>> service.job(alice, job_id).tasks["running"], service.shares()["alice"]
(3, (3, 0.75))
>>> while driver.active():
...     driver.step(10.0)
>>> service.job(alice, job_id).state
'finished'
>>> service.submit(alice, JobRequest("x", 1, {"gpu": 1.0}, ["true"]))
Traceback (most recent call last):
...
fairshare.service.core.ServiceError: demand.gpu: unknown resource 'gpu'; resources: cpu
>>> bob = store.caller(store.add_token("bob"))
>>> try:
...     service.job(bob, job_id)
... except ServiceError as err:
...     print(err.status)
404
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from fairshare.backends import DEFAULT_MAX_RETRIES, LiveDriver, LiveJob, OutputRef
from fairshare.cluster.constraint_syntax import ConstraintSyntaxError, parse_tree
from fairshare.cluster.constraints import parse_constraint
from fairshare.errors import FairshareError
from fairshare.service.store import (
    HEARTBEAT_SECONDS,
    Caller,
    JobRow,
    StaleAttempt,
    Store,
    StoreFault,
    clean_text,
)
from fairshare.service.usage_state import restore_usage, save_usage
from fairshare.tolerances import FIT
from fairshare.workload.model import MAX_AMOUNT, MAX_PRIORITY, MAX_SECONDS, User

PROBE_SECONDS = 0.5
"""While the service is unhealthy, how often a write tries the database again."""


EXPLAIN_SECONDS = 10.0
"""The longest ``GET /v1/jobs/{id}/explain`` waits for the driver's thread."""


@dataclass(frozen=True)
class Limits:
    """What one tenant may ask (SPEC section 6's limits), each a named bound.

    Parameters
    ----------
    max_body_bytes : int
        A request body larger than this is refused (413) before it is read whole.
    max_pending_jobs : int
        Jobs not ended (pending or running) per tenant; one more is refused (429).
    max_tasks : int
        Tasks per job.
    max_command_items : int
        Items of a job's argv.
    max_argument_chars : int
        Characters of one argv item.
    max_name_chars : int
        Characters of a job's name.
    max_retries : int
        The largest ``max_retries`` a job may ask.
    max_constraint_chars : int
        Characters of a job's constraint.
    max_constraint_nodes : int
        Nodes of a job's constraint's syntax tree.
    max_demand_keys : int
        Resources a job's demand names.
    body_seconds : float
        A request body must arrive whole within this many seconds of its head (408).
    """

    max_body_bytes: int = 1 << 20
    """A request body larger than this is refused (413) before it is read whole."""
    max_pending_jobs: int = 1000
    """Jobs not ended (pending or running) per tenant; one more is refused (429)."""
    max_tasks: int = 100_000
    """Tasks per job."""
    max_command_items: int = 1024
    """Items of a job's argv."""
    max_argument_chars: int = 16_384
    """Characters of one argv item."""
    max_name_chars: int = 200
    """Characters of a job's name."""
    max_retries: int = 100
    """The largest ``max_retries`` a job may ask."""
    max_constraint_chars: int = 4096
    """Characters of a job's constraint (its parse time is linear in them)."""
    max_constraint_nodes: int = 256
    """Nodes of a job's constraint's syntax tree: what each placement check evaluates."""
    max_demand_keys: int = 64
    """Resources a job's demand names."""
    body_seconds: float = 30.0
    """A request body must arrive whole within this many seconds of its head (408)."""


def check_text(where: str, text: str) -> None:
    """Refuse (422) a string that is not valid UTF-8 text: one holding a lone UTF-16
    surrogate (JSON's ``"\\ud800"``), which no database row or JSON answer can carry.

    Parameters
    ----------
    where : str
        The field path, for the refusal.
    text : str
        The field's value.

    Raises
    ------
    ServiceError
        422 naming ``where``.

    Examples
    --------
    >>> check_text("name", "train")
    >>> try:
    ...     check_text("command[0]", "a\\udc80")
    ... except ServiceError as err:
    ...     print(err.status, err)
    422 command[0]: must be valid UTF-8 text: a lone surrogate at character 1
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ServiceError(
            422, where, f"must be valid UTF-8 text: a lone surrogate at character {err.start}"
        ) from None


def _tree_nodes(node: object) -> int:
    """How many nodes a constraint's syntax tree has (its compile and evaluation cost)."""
    count = 0
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif hasattr(item, "__dataclass_fields__"):
            count += 1
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
    return count


class ServiceError(FairshareError):
    """A request refused.

    Parameters
    ----------
    status : int
        Its HTTP status (403, 404, 422, 429).
    where : str
        The field path at fault (``demand.gpu``, ``command[0]``), or ``""``.
    what : str
        What is wrong and what is allowed.
    """

    def __init__(self, status: int, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}" if where else what)
        self.status = status
        self.where = where
        self.what = what


LOG_CHUNK = 1 << 20
"""The most bytes of a task's output one ``GET /v1/jobs/{id}/logs`` returns."""


@dataclass(frozen=True)
class CancelReport:
    """What a cancel did.

    Parameters
    ----------
    job : str
        The job's id.
    state : str
        Its state after (``cancelled``, or how it had ended).
    cancelled : bool
        Whether this request cancelled it (False: it had ended already).
    stopped : int
        Its running tasks, stopped.
    dropped : int
        Its pending tasks, dropped.
    """

    job: str
    state: str
    cancelled: bool
    stopped: int
    dropped: int

    def line(self) -> str:
        """The one line ``fairshare cancel`` prints.

        Returns
        -------
        str

        Examples
        --------
        >>> CancelReport("j1", "cancelled", True, 3, 1).line()
        'cancelled j1: 3 running tasks stopped, 1 pending task dropped'
        >>> CancelReport("j1", "finished", False, 0, 0).line()
        'j1 had already ended (finished): nothing to cancel'
        """
        if not self.cancelled:
            return f"{self.job} had already ended ({self.state}): nothing to cancel"
        return (
            f"cancelled {self.job}: {self.stopped} running task{'' if self.stopped == 1 else 's'}"
            f" stopped, {self.dropped} pending task{'' if self.dropped == 1 else 's'} dropped"
        )


@dataclass(frozen=True)
class LogChunk:
    """Part of a task attempt's output.

    Parameters
    ----------
    attempt : int
        The attempt read (0 first).
    machine : str
        The node that ran it.
    data : bytes or None
        The bytes read; None: the output cannot be read (its node is gone, or the
        executor keeps none).
    next : int
        The offset of the next read.
    ended : bool
        Whether the attempt has ended (nothing more will be written).
    """

    attempt: int
    machine: str
    data: bytes | None
    next: int
    ended: bool


@dataclass(frozen=True)
class JobRequest:
    """A submission as the API received it (types already checked, values not yet).

    Parameters
    ----------
    name : str
        The job's name.
    tasks : int
        How many tasks.
    demand : mapping of str to float
        What each task holds, by resource name.
    command : sequence of str
        The argv each task runs.
    constraint : str, optional
        A placement constraint (SPEC section 1's language).
    max_retries : int, optional
        How many times a task may fail and run again (default
        :data:`~fairshare.backends.DEFAULT_MAX_RETRIES`).
    gang : bool
        All its tasks start together or none does (``min_tasks`` = ``tasks``).
    min_tasks : int, optional
        At least this many of its tasks start together (a gang); with ``gang``, equal to
        ``tasks``.
    priority : int
        Its priority among its tenant's jobs and its queue's (higher first; default 0).
    estimate : float, optional
        Seconds one of its tasks is expected to run at most, which EASY backfilling's
        reservations count on (a task running longer is not stopped).
    """

    name: str
    tasks: int
    demand: Mapping[str, float]
    command: Sequence[str]
    constraint: str | None = None
    max_retries: int | None = None
    gang: bool = False
    min_tasks: int | None = None
    priority: int = 0
    estimate: float | None = None


class LiveService:
    """Tenants' requests over ``store`` and ``driver`` (see the module).

    Parameters
    ----------
    store : Store
        The durable state.
    driver : LiveDriver
        The live driver jobs are handed to (its journal writes into ``store``).
    policy : str
        The policy's name, as the API reports it.
    users : sequence of User
        The scenario's users: the only tenants that may submit.
    limits : Limits, optional
        What one tenant may ask (default: :class:`Limits`' defaults).
    """

    def __init__(
        self,
        store: Store,
        driver: LiveDriver,
        *,
        policy: str,
        users: Sequence[User],
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.driver = driver
        self.policy = policy
        self.users = {u.name: u for u in users}
        self.limits = limits if limits is not None else Limits()
        self.resources = driver.resources
        self.started = time.time()
        self._faults: dict[str, str] = {}
        self._faults_lock = threading.Lock()

    # ------------------------------------------------------------------ requests

    def submit(self, caller: Caller, request: JobRequest) -> str:
        """Check, write, then hand over a job.

        Parameters
        ----------
        caller : Caller
            The token's owner: the job's tenant.
        request : JobRequest
            The submission.

        Returns
        -------
        str
            The new job's id.

        Raises
        ------
        ServiceError
            403 for an administrator or a tenant that is not a user of the scenario, 422
            for a field out of its limits, 429 past the tenant's jobs not ended.
        """
        if caller.admin:
            raise ServiceError(403, "", "an administrator token cannot submit jobs")
        if caller.tenant not in self.users:
            raise ServiceError(
                403, "", f"tenant {caller.tenant!r} is not a user of the service's scenario"
            )
        job = self._job(caller.tenant, request)
        with self._writing():
            added = self.store.add_job(job, limit=self.limits.max_pending_jobs)
        if not added:
            raise ServiceError(
                429,
                "",
                f"tenant {caller.tenant!r} already has {self.limits.max_pending_jobs} jobs "
                "pending or running (the limit); wait for some to end or cancel some",
            )
        self.driver.submit(job)
        return job.id

    def _job(self, tenant: str, request: JobRequest) -> LiveJob:
        """The live job of a request, every field checked against the limits (422)."""
        limits = self.limits
        name = request.name
        check_text("name", name)
        if not 1 <= len(name) <= limits.max_name_chars:
            raise ServiceError(
                422, "name", f"must be 1 to {limits.max_name_chars} characters, got {len(name)}"
            )
        if not 1 <= request.tasks <= limits.max_tasks:
            raise ServiceError(
                422, "tasks", f"must be from 1 to {limits.max_tasks}, got {request.tasks}"
            )
        demand: dict[str, float] = {}
        if len(request.demand) > limits.max_demand_keys:
            raise ServiceError(
                422,
                "demand",
                f"names at most {limits.max_demand_keys} resources, got {len(request.demand)}",
            )
        for resource, amount in request.demand.items():
            where = f"demand.{clean_text(resource)}"
            check_text(where, resource)
            if resource not in self.resources:
                raise ServiceError(
                    422,
                    where,
                    f"unknown resource {resource!r}; resources: {', '.join(self.resources)}",
                )
            if not (math.isfinite(amount) and 0 <= amount <= MAX_AMOUNT):
                raise ServiceError(
                    422, where, f"must be a number from 0 to {MAX_AMOUNT:g}, got {amount}"
                )
            demand[resource] = float(amount)
        if not any(v > 0 for v in demand.values()):
            raise ServiceError(422, "demand", "a task must demand some resource (an amount > 0)")
        self._fits_some_node(demand)
        command = tuple(request.command)
        if not 1 <= len(command) <= limits.max_command_items:
            raise ServiceError(
                422,
                "command",
                f"must be an argv list of 1 to {limits.max_command_items} strings, "
                f"got {len(command)}",
            )
        for k, arg in enumerate(command):
            check_text(f"command[{k}]", arg)
            if len(arg) > limits.max_argument_chars or "\0" in arg:
                raise ServiceError(
                    422,
                    f"command[{k}]",
                    f"must be at most {limits.max_argument_chars} characters, without NUL",
                )
        if not command[0]:
            raise ServiceError(422, "command[0]", "the program must not be empty")
        constraint = request.constraint
        if constraint is not None:
            check_text("constraint", constraint)
            if len(constraint) > limits.max_constraint_chars:
                raise ServiceError(
                    422,
                    "constraint",
                    f"must be at most {limits.max_constraint_chars} characters, "
                    f"got {len(constraint)}",
                )
            try:
                nodes = _tree_nodes(parse_tree(constraint))
                if nodes > limits.max_constraint_nodes:
                    raise ServiceError(
                        422,
                        "constraint",
                        f"must have at most {limits.max_constraint_nodes} terms (attributes, "
                        f"values, operators), got {nodes}",
                    )
                parse_constraint(constraint)
            except ConstraintSyntaxError as err:
                raise ServiceError(422, "constraint", str(err)) from None
        retries = DEFAULT_MAX_RETRIES if request.max_retries is None else request.max_retries
        if not 0 <= retries <= limits.max_retries:
            raise ServiceError(
                422, "max_retries", f"must be from 0 to {limits.max_retries}, got {retries}"
            )
        min_tasks = request.min_tasks
        if min_tasks is not None and not 1 <= min_tasks <= request.tasks:
            raise ServiceError(
                422,
                "min_tasks",
                f"must be from 1 to the job's tasks ({request.tasks}), got {min_tasks}: at "
                "least min_tasks of its tasks start together",
            )
        if request.gang:
            if min_tasks is not None and min_tasks != request.tasks:
                raise ServiceError(
                    422,
                    "min_tasks",
                    f"a gang starts all its {request.tasks} tasks together: give gang or "
                    f"min_tasks, or both equal to tasks; got min_tasks {min_tasks}",
                )
            min_tasks = request.tasks
        if not -MAX_PRIORITY <= request.priority <= MAX_PRIORITY:
            raise ServiceError(
                422,
                "priority",
                f"must be a whole number from {-MAX_PRIORITY} to {MAX_PRIORITY}, got "
                f"{request.priority}",
            )
        estimate = request.estimate
        if estimate is not None and not (math.isfinite(estimate) and 0 < estimate <= MAX_SECONDS):
            raise ServiceError(
                422,
                "estimate",
                f"must be a number of seconds > 0 and at most {MAX_SECONDS:g}, got {estimate}",
            )
        return LiveJob(
            secrets.token_hex(8),
            tenant,
            name,
            request.tasks,
            demand,
            command,
            constraint,
            retries,
            min_tasks=min_tasks,
            priority=request.priority,
            estimate=None if estimate is None else float(estimate),
        )

    def _fits_some_node(self, demand: Mapping[str, float]) -> None:
        """Refuse (422) a demand no node alive can hold: a task runs on one node, so it
        would wait forever. The resource named is one no node has enough of (with the
        largest node's amount), else the demand as a whole. A cluster with no node yet
        takes every job (nodes may still join)."""
        capacities = self.driver.capacities()
        if not capacities:
            return
        wanted = [(r, demand.get(r, 0.0), k) for k, r in enumerate(self.resources)]
        for resource, amount, k in wanted:
            largest = max(float(c[k]) for c in capacities)
            if amount > largest + FIT:
                raise ServiceError(
                    422,
                    f"demand.{resource}",
                    f"{amount:g} is more than any node has: the largest has {largest:g} "
                    f"(a task runs on one node; {len(capacities)} node"
                    f"{'' if len(capacities) == 1 else 's'} now)",
                )
        if not any(all(amount <= c[k] + FIT for _, amount, k in wanted) for c in capacities):
            asked = ", ".join(f"{r} {a:g}" for r, a, _ in wanted if a > 0)
            raise ServiceError(
                422, "demand", f"no node has {asked} together (a task runs on one node)"
            )

    def _mine(self, caller: Caller, job_id: str) -> JobRow:
        """The job, if the caller may see it (its tenant's, or any for an administrator)."""
        row = self.store.job(job_id)
        if row is None or not (caller.admin or row.tenant == caller.tenant):
            raise ServiceError(404, "", f"no job {job_id!r}")
        return row

    def job(self, caller: Caller, job_id: str) -> JobRow:
        """One of the caller's jobs.

        Parameters
        ----------
        caller : Caller
            The token's owner.
        job_id : str
            The job's id.

        Returns
        -------
        JobRow

        Raises
        ------
        ServiceError
            404: no such job, or another tenant's.
        """
        return self._mine(caller, job_id)

    def jobs(self, caller: Caller) -> list[JobRow]:
        """The caller's jobs in submission order (every job for an administrator).

        Parameters
        ----------
        caller : Caller
            The token's owner.

        Returns
        -------
        list of JobRow
        """
        return self.store.jobs(None if caller.admin else caller.tenant)

    def page(
        self, caller: Caller, *, limit: int | None = None, after: str | None = None
    ) -> tuple[list[JobRow], str | None]:
        """A page of the caller's jobs in submission order (every job for an
        administrator), in one query.

        Parameters
        ----------
        caller : Caller
            The token's owner.
        limit : int, optional
            At most this many (None: all).
        after : str, optional
            Only the jobs after this one (the previous page's ``next``).

        Returns
        -------
        (list of JobRow, str or None)
            The page, and the ``after`` of the next page (None: this is the last).
        """
        tenant = None if caller.admin else caller.tenant
        rows = self.store.jobs(tenant, limit=None if limit is None else limit + 1, after=after)
        if limit is not None and len(rows) > limit:
            return rows[:limit], rows[limit - 1].id
        return rows, None

    def cancel(self, caller: Caller, job_id: str) -> CancelReport:
        """Cancel a job of the caller's (written first); cancelling an ended job changes
        nothing.

        Parameters
        ----------
        caller : Caller
            The token's owner.
        job_id : str
            The job's id.

        Returns
        -------
        CancelReport
            What it did.

        Raises
        ------
        ServiceError
            404: no such job, or another tenant's.
        """
        self._mine(caller, job_id)
        with self._writing():
            cancelled, stopped, dropped = self.store.cancel_job_counted(job_id, actor=caller.tenant)
        if cancelled:
            self.driver.cancel(job_id)
        row = self._mine(caller, job_id)
        return CancelReport(job_id, row.state, cancelled, stopped, dropped)

    def logs(
        self,
        caller: Caller,
        job_id: str,
        *,
        task: int = 0,
        attempt: int | None = None,
        stream: str = "out",
        offset: int = 0,
        limit: int = LOG_CHUNK,
    ) -> LogChunk:
        """Part of a task's output (``fairshare logs``), read on the node that ran the
        attempt (:meth:`~fairshare.backends.Executor.read_output`).

        Parameters
        ----------
        caller : Caller
            The token's owner.
        job_id : str
            The job's id.
        task : int
            The task's index.
        attempt : int, optional
            The attempt (0 first; None: the latest).
        stream : {"out", "err"}
            Standard output or error.
        offset : int
            The first byte.
        limit : int
            The most bytes (at most :data:`LOG_CHUNK`).

        Returns
        -------
        LogChunk

        Raises
        ------
        ServiceError
            404: no such job (or another tenant's), or the attempt never launched; 422: a
            task index out of the job.
        """
        row = self._mine(caller, job_id)
        total = sum(row.tasks.values())
        if not 0 <= task < total:
            raise ServiceError(
                422, "task", f"must be a task index from 0 to {total - 1}, got {task}"
            )
        found = self.store.attempt(job_id, task, attempt)
        if found is None:
            which = "any attempt" if attempt is None else f"attempt {attempt}"
            raise ServiceError(404, "", f"task {task} of job {job_id!r} has not run {which} yet")
        number, machine, state = found
        key = f"{job_id}:{task}:{number}"
        data = self.driver.executor.read_output(
            OutputRef(row.tenant, key, stream), machine, offset, min(limit, LOG_CHUNK)
        )
        ended = state != "running" or (attempt is not None and self._later(job_id, task, number))
        return LogChunk(number, machine, data, offset + len(data or b""), ended)

    def _later(self, job_id: str, task: int, attempt: int) -> bool:
        """Whether the task has an attempt after ``attempt`` (which therefore ended)."""
        latest = self.store.attempt(job_id, task, None)
        return latest is not None and latest[0] > attempt

    def explain(self, caller: Caller, job_id: str) -> dict[str, object]:
        """Why one of the caller's jobs is not running now: SPEC section 8.5's document,
        the policy asked on the driver's thread (:meth:`LiveDriver.explain`).

        Parameters
        ----------
        caller : Caller
            The token's owner.
        job_id : str
            The job's id.

        Returns
        -------
        dict
            ``job``, ``name``, ``at`` (the driver's time), ``policy``, ``state``,
            ``reasons``, ``ahead``, ``estimated_start`` (null: the live service does not
            know how long tasks run, so it does not simulate ahead).

        Raises
        ------
        ServiceError
            404: no such job, or another tenant's; 503: the scheduler did not answer.
        """
        row = self._mine(caller, job_id)
        why: dict[str, object] | None = None
        if row.state in ("pending", "running"):
            try:
                why = self.driver.explain(job_id, EXPLAIN_SECONDS)
            except TimeoutError as err:
                raise ServiceError(503, "", str(err)) from None
        if why is None:
            # Ended (the policy holds nothing of it), or not yet handed to the policy.
            why = {"state": row.state, "reasons": [], "ahead": []}
        return {
            "job": row.id,
            "name": row.name,
            "at": self.driver.now(),
            "policy": self.policy,
            **why,
            "estimated_start": None,
        }

    def shares(self) -> dict[str, tuple[int, float]]:
        """Per user: running tasks and the policy's share, as of the driver's last step.

        Returns
        -------
        dict of str to (int, float)
        """
        return self.driver.shares()

    # ------------------------------------------------------------------ tenants (admin)

    def add_tenant(self, caller: Caller, name: str) -> str:
        """A new token for tenant ``name`` (administrators only).

        Parameters
        ----------
        caller : Caller
            An administrator.
        name : str
            A user of the scenario.

        Returns
        -------
        str
            The bearer token (only its hash is kept).

        Raises
        ------
        ServiceError
            403 for a caller that is no administrator, 422 for a name that is no user.
        """
        self._admin(caller)
        if name not in self.users:
            raise ServiceError(
                422,
                "name",
                f"{name!r} is not a user of the scenario; users: {', '.join(self.users)}",
            )
        with self._writing():
            return self.store.add_token(name, actor=caller.tenant)

    def tenants(self, caller: Caller) -> dict[str, int]:
        """Tenants with tokens and how many each has (administrators only).

        Parameters
        ----------
        caller : Caller
            An administrator.

        Returns
        -------
        dict of str to int

        Raises
        ------
        ServiceError
            403 for a caller that is no administrator.
        """
        self._admin(caller)
        return self.store.tenants()

    def revoke(self, caller: Caller, name: str, *, admin: bool = False) -> None:
        """Revoke every token of tenant ``name``, or with ``admin`` every administrator
        token made for ``name`` (the caller's own included: it stops working at once);
        administrators only.

        Parameters
        ----------
        caller : Caller
            An administrator.
        name : str
            The tenant (or the administrator's name).
        admin : bool
            Revoke administrator tokens, not a tenant's.

        Raises
        ------
        ServiceError
            403 for a caller that is no administrator, 404 for a name without tokens.
        """
        self._admin(caller)
        with self._writing():
            revoked = self.store.revoke(name, actor=caller.tenant, admin=admin)
        if not revoked:
            what = "administrator" if admin else "tenant"
            raise ServiceError(404, "", f"no {what} {name!r} with tokens")

    @staticmethod
    def _admin(caller: Caller) -> None:
        """Refuse (403) a caller that is no administrator."""
        if not caller.admin:
            raise ServiceError(403, "", "this needs an administrator token")

    # ------------------------------------------------------------------ health

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write of a request: a storage fault is refused 503 (nothing changed) and makes
        the service unhealthy until a write succeeds again."""
        try:
            yield
        except StoreFault as err:
            self.fault("api", str(err))
            raise ServiceError(
                503, "", f"the service cannot write its database now: {err}; try again later"
            ) from None
        self.healed("api")

    def fault(self, source: str, reason: str) -> None:
        """Note that ``source`` (``api``, ``scheduler``) met a storage fault.

        Parameters
        ----------
        source : str
            Who met it.
        reason : str
            What failed (one line).
        """
        with self._faults_lock:
            self._faults[source] = reason.splitlines()[0] if reason else source

    def healed(self, source: str | None = None) -> None:
        """Forget ``source``'s fault (None: every fault: a write just succeeded).

        Parameters
        ----------
        source : str, optional
            Who wrote successfully.
        """
        with self._faults_lock:
            if source is None:
                self._faults.clear()
            else:
                self._faults.pop(source, None)

    def health(self) -> str | None:
        """Why the service is unhealthy (its storage faults, one line), None when it is
        healthy.

        Returns
        -------
        str or None
        """
        with self._faults_lock:
            if not self._faults:
                return None
            return "; ".join(f"{source}: {why}" for source, why in sorted(self._faults.items()))

    # ------------------------------------------------------------------ the driver

    def recover(
        self,
        *,
        stop_stale: Callable[[Sequence[StaleAttempt]], object] | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> int:
        """Replay the store's jobs not ended into the driver (after a restart). First the
        task attempts the database says run (a previous service's) are handed to
        ``stop_stale``, which stops those that still run, before any runs again; then the
        jobs of tenants the scenario no longer lists are cancelled, one ``warning:`` line
        per tenant.

        Parameters
        ----------
        stop_stale : callable, optional
            Stops a previous service's attempts that still run (None: nothing to stop, as
            on a cluster where they died with the service).
        warn : callable, optional
            Called with each warning line.

        Returns
        -------
        int
            How many jobs were replayed.
        """
        stale = self.store.stale()
        if stale and stop_stale is not None:
            stop_stale(stale)
        gone = self.store.cancel_tenant_jobs(list(self.users), actor="service start")
        for tenant, count in gone.items():
            if warn is not None:
                warn(
                    f"warning: {self.store.path}: tenant {clean_text(tenant)!r} is not a user "
                    f"of the scenario: its {count} unfinished job{'s' if count > 1 else ''} "
                    f"{'are' if count > 1 else 'is'} cancelled"
                )
        # Usage over time goes on from where it was, decayed by the time the service was down.
        restore_usage(self.store, self.driver.policy, self.driver.now())
        jobs = self.store.recover()
        for job in jobs:
            self.driver.submit(job)
        return len(jobs)

    def save_usage(self) -> None:
        """Write the policy's decayed usage to the database (on the driver's thread, or
        after it stopped), so that a restart goes on from it."""
        save_usage(self.store, self.driver.policy, self.driver.now())

    def run(self, stop: threading.Event, tick: float = 0.05, *, max_backoff: float = 5.0) -> None:
        """The driver's loop until ``stop`` is set (on the driver's thread: the only one
        that talks to the executor), beating the lease's heartbeat. A storage fault is an
        event: the service is unhealthy, the driver keeps its state (its journal keeps the
        writes not made, and no executor call they cover is made) and the step is tried
        again after a backoff (doubling, up to ``max_backoff`` seconds); a write that
        succeeds makes it healthy again.

        Parameters
        ----------
        stop : threading.Event
            Set to end the loop.
        tick : float
            The longest wait of one step for tasks to end, in seconds.
        max_backoff : float
            The longest wait between tries while the database cannot be written.
        """
        backoff = 0.0
        beat = -math.inf
        while not stop.is_set():
            probed = False
            try:
                now = time.monotonic()
                # A write: the lease's heartbeat, and while unhealthy the probe that tells
                # when the database takes writes again.
                if now - beat >= (PROBE_SECONDS if self.health() else HEARTBEAT_SECONDS):
                    self.store.heartbeat()
                    self.save_usage()
                    beat = now
                    probed = True
                self.driver.step(tick)
            except StoreFault as err:
                self.fault("scheduler", str(err))
                backoff = min(max(2 * backoff, 0.05), max_backoff)
                stop.wait(backoff)
                continue
            backoff = 0.0
            if probed:
                self.healed()
