"""The scheduler service without its HTTP layer: tenants' requests checked and written to the
store, handed to the live driver, and the driver's loop (SPEC section 6).

The HTTP API (:mod:`fairshare.service.app`) is a thin layer over :class:`LiveService`; tests
drive both. A tenant is always the caller's token's tenant, never a field of a request; a job
of another tenant is "not found" to it, on read and on cancel alike.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fairshare.backends import DEFAULT_MAX_RETRIES, LiveDriver, LiveJob
from fairshare.cluster.constraint_syntax import ConstraintSyntaxError
from fairshare.cluster.constraints import parse_constraint
from fairshare.service.store import Caller, JobRow, Store
from fairshare.workload.model import MAX_AMOUNT, User


@dataclass(frozen=True)
class Limits:
    """What one tenant may ask (SPEC section 6's limits), each a named bound."""

    max_body_bytes: int = 1 << 20
    """A request body larger than this is refused (413) before it is read whole."""
    max_pending_jobs: int = 1000
    """Jobs not ended (pending or running) per tenant; one more is refused (429)."""
    max_tasks: int = 100_000
    """Tasks per job."""
    max_command_items: int = 1024
    max_argument_chars: int = 16_384
    max_name_chars: int = 200
    max_retries: int = 100


class ServiceError(Exception):
    """A request refused: ``status`` is its HTTP status, ``where`` the field path (or
    ``""``) and ``what`` what is wrong and what is allowed."""

    def __init__(self, status: int, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}" if where else what)
        self.status = status
        self.where = where
        self.what = what


@dataclass(frozen=True)
class JobRequest:
    """A submission as the API received it (types already checked)."""

    name: str
    tasks: int
    demand: Mapping[str, float]
    command: Sequence[str]
    constraint: str | None = None
    max_retries: int | None = None


class LiveService:
    """Tenants' requests over ``store`` and ``driver`` (see the module). ``users`` are the
    scenario's users, the only tenants that may submit."""

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

    # ------------------------------------------------------------------ requests

    def submit(self, caller: Caller, request: JobRequest) -> str:
        """Check, write, then hand over a job; its id."""
        if caller.admin:
            raise ServiceError(403, "", "an administrator token cannot submit jobs")
        if caller.tenant not in self.users:
            raise ServiceError(
                403, "", f"tenant {caller.tenant!r} is not a user of the service's scenario"
            )
        job = self._job(caller.tenant, request)
        if not self.store.add_job(job, limit=self.limits.max_pending_jobs):
            raise ServiceError(
                429,
                "",
                f"tenant {caller.tenant!r} already has {self.limits.max_pending_jobs} jobs "
                "pending or running (the limit); wait for some to end or cancel some",
            )
        self.driver.submit(job)
        return job.id

    def _job(self, tenant: str, request: JobRequest) -> LiveJob:
        limits = self.limits
        name = request.name
        if not 1 <= len(name) <= limits.max_name_chars:
            raise ServiceError(
                422, "name", f"must be 1 to {limits.max_name_chars} characters, got {len(name)}"
            )
        if not 1 <= request.tasks <= limits.max_tasks:
            raise ServiceError(
                422, "tasks", f"must be from 1 to {limits.max_tasks}, got {request.tasks}"
            )
        demand: dict[str, float] = {}
        for resource, amount in request.demand.items():
            where = f"demand.{resource}"
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
        command = tuple(request.command)
        if not 1 <= len(command) <= limits.max_command_items:
            raise ServiceError(
                422,
                "command",
                f"must be an argv list of 1 to {limits.max_command_items} strings, "
                f"got {len(command)}",
            )
        for k, arg in enumerate(command):
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
            try:
                parse_constraint(constraint)
            except ConstraintSyntaxError as err:
                raise ServiceError(422, "constraint", str(err)) from None
        retries = DEFAULT_MAX_RETRIES if request.max_retries is None else request.max_retries
        if not 0 <= retries <= limits.max_retries:
            raise ServiceError(
                422, "max_retries", f"must be from 0 to {limits.max_retries}, got {retries}"
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
        )

    def _mine(self, caller: Caller, job_id: str) -> JobRow:
        row = self.store.job(job_id)
        if row is None or not (caller.admin or row.tenant == caller.tenant):
            raise ServiceError(404, "", f"no job {job_id!r}")
        return row

    def job(self, caller: Caller, job_id: str) -> JobRow:
        return self._mine(caller, job_id)

    def jobs(self, caller: Caller) -> list[JobRow]:
        return self.store.jobs(None if caller.admin else caller.tenant)

    def cancel(self, caller: Caller, job_id: str) -> None:
        """Cancel a job of the caller's (written first); cancelling an ended job changes
        nothing."""
        self._mine(caller, job_id)
        if self.store.cancel_job(job_id, actor=caller.tenant):
            self.driver.cancel(job_id)

    def shares(self) -> dict[str, tuple[int, float]]:
        return self.driver.shares()

    # ------------------------------------------------------------------ tenants (admin)

    def add_tenant(self, caller: Caller, name: str) -> str:
        self._admin(caller)
        if name not in self.users:
            raise ServiceError(
                422,
                "name",
                f"{name!r} is not a user of the scenario; users: {', '.join(self.users)}",
            )
        return self.store.add_token(name, actor=caller.tenant)

    def tenants(self, caller: Caller) -> dict[str, int]:
        self._admin(caller)
        return self.store.tenants()

    def revoke(self, caller: Caller, name: str) -> None:
        self._admin(caller)
        if not self.store.revoke(name, actor=caller.tenant):
            raise ServiceError(404, "", f"no tenant {name!r} with tokens")

    @staticmethod
    def _admin(caller: Caller) -> None:
        if not caller.admin:
            raise ServiceError(403, "", "this needs an administrator token")

    # ------------------------------------------------------------------ the driver

    def recover(self) -> int:
        """Replay the store's jobs not ended into the driver; how many."""
        jobs = self.store.recover()
        for job in jobs:
            self.driver.submit(job)
        return len(jobs)

    def run(self, stop: threading.Event, tick: float = 0.05) -> None:
        """The driver's loop until ``stop`` is set (on the driver's thread: the only one
        that talks to the executor)."""
        while not stop.is_set():
            self.driver.step(tick)
