"""The HTTP API of the scheduler service (SPEC section 6), a FastAPI application over
:class:`~fairshare.service.core.LiveService`; its OpenAPI schema is at ``/openapi.json``.

Every ``/v1/`` request carries ``Authorization: Bearer TOKEN``. The token is checked before
anything else is read (a missing or unknown token is 401 whatever the body), then the body's
size (413 past the limit, counted as it arrives), then the body as text (422 ``body: ...``
for bytes that are not UTF-8, text that is not JSON, nesting deeper than
:data:`MAX_NESTING`, a number of more than :data:`MAX_DIGITS` digits; 422 with the field path
for a string holding a lone surrogate), then the body's fields (422 with the field path:
unknown fields, wrong types and values out of range alike). The tenant is the token's;
another tenant's job is 404, on read and on cancel. Nothing changes on a refused request.
A database that cannot be read or written now is 503 with one ``error`` line, and
``/healthz`` answers 503 with the reason until a write succeeds again.

Examples
--------
The routes of the API over a service (see :mod:`fairshare.service.core` for one built on the
fake executor):

>>> import numpy as np
>>> from fairshare.backends import FakeExecutor, LiveDriver
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.service.core import LiveService
>>> from fairshare.service.store import Store
>>> from fairshare.workload.model import User
>>> executor = FakeExecutor(("cpu",), [Machine("n1", np.array([4.0]))])
>>> tenants = [User("alice", np.array([1.0]))]
>>> policy = make_policy("drf", Cluster.build(executor.resources, executor.nodes()))
>>> driver = LiveDriver(policy, executor, users=tenants)
>>> app = create_app(LiveService(Store(":memory:"), driver, policy="drf", users=tenants))
>>> for route in app.routes:
...     if route.path.startswith(("/v1/", "/healthz", "/metrics")):
...         print(*sorted(route.methods), route.path)
GET /healthz
POST /v1/jobs
GET /v1/jobs
GET /v1/jobs/{job_id}
GET /v1/jobs/{job_id}/explain
GET /metrics
DELETE /v1/jobs/{job_id}
POST /v1/jobs/{job_id}/cancel
GET /v1/jobs/{job_id}/logs
GET /v1/shares
POST /v1/tenants
GET /v1/tenants
DELETE /v1/tenants/{name}/tokens
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from fairshare.service.core import LOG_CHUNK, JobRequest, LiveService, ServiceError
from fairshare.service.metrics import CONTENT_TYPE, ServiceMetrics
from fairshare.service.store import Caller, JobRow, StoreFault, clean_text

MAX_NESTING = 32
"""The deepest a request body's JSON may nest (a job's body nests 3 levels)."""
MAX_DIGITS = 30
"""The most digits of a whole number in a request body (Python's own bound is 4,300)."""
PAGE_DEFAULT = 100
"""Jobs in a page of ``GET /v1/jobs`` when ``limit`` is not given."""
PAGE_MAX = 1000
"""The largest ``limit`` of ``GET /v1/jobs``."""

Scope = MutableMapping[str, Any]
"""An ASGI connection scope."""
Message = MutableMapping[str, Any]
"""An ASGI message."""
Receive = Callable[[], Awaitable[Message]]
"""An ASGI ``receive`` callable."""
Send = Callable[[Message], Awaitable[None]]
"""An ASGI ``send`` callable."""
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
"""An ASGI application."""


class JobIn(BaseModel):
    """A job: ``tasks`` tasks, each running ``command`` (an argv list, never a shell line)
    with ``FAIRSHARE_TASK_INDEX`` set, holding ``demand`` while it runs."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: StrictStr
    tasks: StrictInt
    demand: dict[StrictStr, float]
    command: list[StrictStr]
    constraint: StrictStr | None = Field(
        default=None, description="placement constraint (SPEC section 1's language)"
    )
    max_retries: StrictInt | None = Field(
        default=None, description="how many times a task may fail and run again (default 3)"
    )
    gang: StrictBool = Field(
        default=False, description="all its tasks start together, in one decision, or none"
    )
    min_tasks: StrictInt | None = Field(
        default=None,
        description="at least this many of its tasks start together (a gang), 1 to tasks",
    )
    priority: StrictInt = Field(
        default=0, description="priority among its tenant's and queue's jobs (higher first)"
    )
    estimate: float | None = Field(
        default=None,
        description="seconds a task is expected to run at most (> 0): what EASY backfilling's "
        "reservations count on; a task running longer is not stopped",
    )


class JobCreated(BaseModel):
    """The id of a job just accepted."""

    id: str


class TaskCounts(BaseModel):
    """A job's tasks per state."""

    pending: int
    running: int
    finished: int
    failed: int
    cancelled: int


class JobOut(BaseModel):
    """A job: its state, its tasks per state, and what was submitted."""

    id: str
    name: str
    state: str = Field(description="pending, running, finished, failed or cancelled")
    tasks: TaskCounts
    submitted: str = Field(description="UTC time, ISO 8601")
    finished: str | None = Field(description="UTC time, ISO 8601 (null until the job ends)")
    error: str | None
    tenant: str
    demand: dict[str, float]
    command: list[str]
    constraint: str | None
    max_retries: int
    min_tasks: int | None = Field(description="a gang's tasks that start together (null: none)")
    priority: int
    estimate: float | None = Field(
        description="seconds a task is expected to run at most (null: not given)"
    )


class JobList(BaseModel):
    """A page of jobs, in submission order (newest last)."""

    jobs: list[JobOut]
    next: str | None = Field(
        default=None, description="the `after` of the next page (null: this is the last)"
    )


class Cancelled(BaseModel):
    """What a cancel did."""

    id: str
    state: str = Field(description="the job's state after: cancelled, or how it had ended")
    cancelled: bool = Field(description="whether this request cancelled it")
    stopped: int = Field(description="its running tasks, stopped")
    dropped: int = Field(description="its pending tasks, dropped")
    message: str = Field(description="one line saying so")


class Reason(BaseModel):
    """One reason a job is not running (SPEC section 8.5), with its further fields."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(
        description="quota, fair-share, gang, reservation, constraint, headroom or priority"
    )
    detail: str


class Ahead(BaseModel):
    """A user the policy serves before the job's, with its share."""

    user: str
    share: float


class Explained(BaseModel):
    """Why a job is not running now (SPEC section 8.5's document, live)."""

    job: str
    name: str
    at: float = Field(description="the service's time, seconds since it started")
    policy: str
    state: str = Field(description="pending, running, finished, failed or cancelled")
    reasons: list[Reason] = Field(description="in the order they bind (empty unless pending)")
    ahead: list[Ahead] = Field(description="who the policy serves first, with their shares")
    estimated_start: float | None = Field(
        description="null: the live service does not know how long tasks run"
    )


class UserShare(BaseModel):
    """A user's running tasks and its share in the policy's unit."""

    running_tasks: int
    share: float


class Shares(BaseModel):
    """The policy and every user's running tasks and share now."""

    policy: str
    users: dict[str, UserShare]


class TenantIn(BaseModel):
    """The tenant a new token is for (a user of the scenario)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: StrictStr


class TenantToken(BaseModel):
    """A new bearer token and its tenant (only its hash is kept)."""

    tenant: str
    token: str


class TenantInfo(BaseModel):
    """How many tokens a tenant has."""

    tokens: int


class TenantList(BaseModel):
    """Tenants with tokens."""

    tenants: dict[str, TenantInfo]


def _time(seconds: float | None) -> str | None:
    """Seconds since the epoch as a UTC ISO 8601 time (milliseconds, ``Z``)."""
    if seconds is None:
        return None
    stamp = datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _job_out(row: JobRow) -> JobOut:
    """A stored job as the API shows it."""
    submitted = _time(row.submitted)
    assert submitted is not None
    return JobOut(
        id=row.id,
        name=row.name,
        state=row.state,
        tasks=TaskCounts(**row.tasks),
        submitted=submitted,
        finished=_time(row.finished),
        error=row.error,
        tenant=row.tenant,
        demand=dict(row.demand),
        command=list(row.command),
        constraint=row.constraint,
        max_retries=row.max_retries,
        min_tasks=row.min_tasks,
        priority=row.priority,
        estimate=row.estimate,
    )


def _whole_number(text: str) -> int:
    """A JSON integer of at most :data:`MAX_DIGITS` digits (``json.loads``' ``parse_int``)."""
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"holds a number of more than {MAX_DIGITS} digits")
    return int(text)


def body_problem(body: bytes) -> tuple[str, str] | None:
    """What is wrong with a request body as text, before its fields are read: the field
    path and what, or None when it is UTF-8 JSON of bounded depth and numbers whose
    strings are all valid text.

    Parameters
    ----------
    body : bytes
        The whole body.

    Returns
    -------
    (str, str) or None

    Examples
    --------
    >>> body_problem(b'{"name": "a"}') is None
    True
    >>> body_problem(b'{"name": "\\xff"}')
    ('body', 'is not valid UTF-8 (byte 10)')
    >>> body_problem(b'{"command": ["\\\\ud800"]}')
    ('command[0]', 'must be valid UTF-8 text: a lone surrogate at character 0')
    >>> body_problem(b"[" * 40 + b"]" * 40)
    ('body', 'nests deeper than 32 levels')
    >>> body_problem(b'{"tasks": ' + b"9" * 40 + b"}")
    ('body', 'holds a number of more than 30 digits')
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        return "body", f"is not valid UTF-8 (byte {err.start})"
    try:
        document = json.loads(text, parse_int=_whole_number)
    except json.JSONDecodeError as err:
        return "body", f"is not JSON ({err.msg} at line {err.lineno} column {err.colno})"
    except RecursionError:
        return "body", f"nests deeper than {MAX_NESTING} levels"
    except ValueError as err:
        return "body", str(err)
    # Depth first, without recursion: (value, path, depth).
    stack: list[tuple[object, str, int]] = [(document, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_NESTING:
            return "body", f"nests deeper than {MAX_NESTING} levels"
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                where = path or "body"
                return where, f"must be valid UTF-8 text: a lone surrogate at character {err.start}"
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{k}]", depth + 1) for k, item in enumerate(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                where = f"{path}.{clean_text(key)}" if path else clean_text(key)
                stack.append((key, where, depth + 1))
                stack.append((item, where, depth + 1))
    return None


def _where(loc: tuple[int | str, ...] | list[int | str]) -> str:
    """A validation error's location as a field path (``command[1]``, ``demand.cpu``)."""
    path = ""
    for part in loc[1:] if loc and loc[0] == "body" else loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "body"


def _problem(
    status: int, where: str, what: str, detail: list[dict[str, object]] | None = None
) -> JSONResponse:
    """A refusal: ``error`` is one line, ``where: what``; a 422 also lists ``detail`` as
    FastAPI's own do (each error's ``loc``, ``msg`` and ``type``)."""
    body: dict[str, object] = {"error": f"{where}: {what}" if where else what}
    if status == 422:
        loc = ["body", *where.replace("[", ".[").split(".")] if where else ["body"]
        body["detail"] = detail or [{"loc": loc, "msg": what, "type": "value_error"}]
    else:
        body["detail"] = what
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


class _Gate:
    """The token check and the body limit, before routing (see the module docstring): an
    ASGI layer, so that neither depends on what the route would parse first."""

    def __init__(self, app: ASGIApp, service: LiveService) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            caller = self._caller(headers.get("authorization"))
        except StoreFault as err:
            self.service.fault("api", str(err))
            await _problem(503, "", f"the service cannot read its database now: {err}")(
                scope, receive, send
            )
            return
        if caller is None:
            await _problem(401, "", "missing or invalid bearer token")(scope, receive, send)
            return
        scope.setdefault("state", {})["caller"] = caller
        limit = self.service.limits.max_body_bytes
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await self._too_large(scope, receive, send, limit)
            return
        # The body is read here, up to the limit, then handed to the app as it came: a
        # route never sees a body past the limit.
        messages: list[Message] = []
        seen = 0
        # A body trickled in (or never sent) holds a connection: it must arrive in time.
        deadline = asyncio.get_running_loop().time() + self.service.limits.body_seconds
        while True:
            try:
                message = await asyncio.wait_for(
                    receive(), max(0.0, deadline - asyncio.get_running_loop().time())
                )
            except TimeoutError:
                seconds = self.service.limits.body_seconds
                await _problem(408, "body", f"did not arrive within {seconds:g} seconds")(
                    scope, receive, send
                )
                return
            messages.append(message)
            if message["type"] != "http.request":
                break
            seen += len(message.get("body", b""))
            if seen > limit:
                await self._too_large(scope, receive, send, limit)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        problem = body_problem(body) if body else None
        if problem is not None:
            await _problem(422, *problem)(scope, receive, send)
            return
        replay = iter(messages)

        async def replayed() -> Message:
            """The messages read so far, then the rest as they come."""
            message = next(replay, None)
            return message if message is not None else await receive()

        await self.app(scope, replayed, send)

    @staticmethod
    async def _too_large(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """Answer 413: the body is past the limit."""
        response = _problem(413, "body", f"is larger than {limit} bytes (the limit)")
        await response(scope, receive, send)

    def _caller(self, header: str | None) -> Caller | None:
        """The owner of the ``Authorization: Bearer`` header's token (None: none known)."""
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.service.store.caller(token.strip())


_bearer = HTTPBearer(auto_error=False, description="a tenant's or an administrator's token")
Token = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


def _caller(request: Request) -> Caller:
    """The caller the gate found for this request."""
    caller: Caller = request.state.caller
    return caller


def create_app(service: LiveService) -> FastAPI:
    """The API over ``service`` (see the module).

    Parameters
    ----------
    service : LiveService
        The requests' checks and the driver they go to.

    Returns
    -------
    FastAPI
        The application, with the token and body-size gate in front of every ``/v1/``
        route; uvicorn serves it (:func:`fairshare.service.server.serve`).
    """
    app = FastAPI(
        title="fairshare scheduler service",
        description="Fair multi-tenant scheduling on a Ray cluster (fairshare SPEC section 6). "
        "Every /v1/ request needs `Authorization: Bearer TOKEN`.",
        version="1",
    )
    exposition = ServiceMetrics(service)

    @app.exception_handler(ServiceError)
    async def refused(request: Request, err: ServiceError) -> JSONResponse:
        """A request the service refused, as its status and one ``error`` line."""
        return _problem(err.status, err.where, err.what)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, err: RequestValidationError) -> JSONResponse:
        """A body that breaks the schema: 422 naming the first field at fault."""
        errors = list(err.errors())
        first = errors[0] if errors else {"loc": ("body",), "msg": "malformed body"}
        where = _where(tuple(first.get("loc", ("body",))))
        detail = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
            for e in errors
        ]
        return _problem(422, where, str(first.get("msg", "invalid")), detail)

    @app.exception_handler(StoreFault)
    async def storage(request: Request, err: StoreFault) -> JSONResponse:
        """A read the database refused now: 503 and one ``error`` line (the service is
        unhealthy until a write succeeds)."""
        service.fault("api", str(err))
        return _problem(503, "", f"the service cannot read its database now: {err}")

    @app.get("/healthz", tags=["service"], response_model=None)
    def healthz() -> dict[str, str] | JSONResponse:
        """Whether the service answers and can write its database (no token needed): 503
        with the reason while writes fail."""
        reason = service.health()
        if reason is not None:
            return JSONResponse(
                {"status": "unhealthy", "policy": service.policy, "error": reason},
                status_code=503,
            )
        return {"status": "ok", "policy": service.policy}

    @app.post("/v1/jobs", status_code=201, tags=["jobs"])
    def submit(job: JobIn, request: Request, _: Token) -> JobCreated:
        """Submit a job of the caller's tenant."""
        request_ = JobRequest(
            name=job.name,
            tasks=job.tasks,
            demand={k: float(v) for k, v in job.demand.items()},
            command=job.command,
            constraint=job.constraint,
            max_retries=job.max_retries,
            gang=job.gang,
            min_tasks=job.min_tasks,
            priority=job.priority,
            estimate=job.estimate,
        )
        return JobCreated(id=service.submit(_caller(request), request_))

    @app.get("/v1/jobs", tags=["jobs"])
    def jobs(
        request: Request,
        _: Token,
        limit: Annotated[int, Query(ge=1, le=PAGE_MAX, description="jobs per page")] = (
            PAGE_DEFAULT
        ),
        after: Annotated[
            str | None, Query(max_length=64, description="the previous page's `next`")
        ] = None,
    ) -> JobList:
        """A page of the caller's jobs, in submission order, newest last (every job for an
        administrator); ``next`` is the ``after`` of the next page."""
        rows, following = service.page(_caller(request), limit=limit, after=after)
        return JobList(jobs=[_job_out(row) for row in rows], next=following)

    @app.get("/v1/jobs/{job_id}", tags=["jobs"])
    def job(job_id: str, request: Request, _: Token) -> JobOut:
        """One of the caller's jobs (another tenant's is 404)."""
        return _job_out(service.job(_caller(request), job_id))

    @app.get("/v1/jobs/{job_id}/explain", tags=["jobs"])
    def explain(job_id: str, request: Request, _: Token) -> Explained:
        """Why one of the caller's jobs is not running now (SPEC section 8.5; another
        tenant's is 404)."""
        return Explained.model_validate(service.explain(_caller(request), job_id))

    @app.get("/metrics", tags=["service"], response_class=Response)
    def metrics() -> Response:
        """The service's state in Prometheus' text format (no token: it holds no secret;
        see :mod:`fairshare.service.metrics`)."""
        return Response(exposition.render(), media_type=CONTENT_TYPE)

    @app.delete("/v1/jobs/{job_id}", status_code=204, tags=["jobs"])
    def cancel(job_id: str, request: Request, _: Token) -> Response:
        """Cancel one of the caller's jobs (another tenant's is 404)."""
        service.cancel(_caller(request), job_id)
        return Response(status_code=204)

    @app.post("/v1/jobs/{job_id}/cancel", tags=["jobs"])
    def cancel_reported(job_id: str, request: Request, _: Token) -> Cancelled:
        """Cancel one of the caller's jobs, as ``DELETE`` does, and say what it did (its
        running tasks stopped, its pending tasks dropped; another tenant's job is 404)."""
        report = service.cancel(_caller(request), job_id)
        return Cancelled(
            id=report.job,
            state=report.state,
            cancelled=report.cancelled,
            stopped=report.stopped,
            dropped=report.dropped,
            message=report.line(),
        )

    @app.get("/v1/jobs/{job_id}/logs", tags=["jobs"], response_class=Response)
    def logs(
        job_id: str,
        request: Request,
        _: Token,
        task: Annotated[int, Query(ge=0, description="the task's index")] = 0,
        attempt: Annotated[
            int | None, Query(ge=0, description="the attempt (0 first; default: the latest)")
        ] = None,
        stream: Annotated[
            str, Query(pattern="^(stdout|stderr)$", description="stdout or stderr")
        ] = "stdout",
        offset: Annotated[int, Query(ge=0, description="the first byte")] = 0,
        limit: Annotated[int, Query(ge=1, le=LOG_CHUNK, description="the most bytes")] = (
            LOG_CHUNK
        ),
    ) -> Response:
        """A task's output as it was captured on its node (each stream cut at 8 MiB there),
        bytes ``offset`` on, as ``application/octet-stream``; the headers
        ``Fairshare-Attempt``, ``Fairshare-Node``, ``Fairshare-Next-Offset`` and
        ``Fairshare-Ended`` (``true`` once the attempt ended: nothing more comes). 404 for
        another tenant's job or a task that has not run; 503 when the output of an attempt
        that ended cannot be read (its node is gone)."""
        chunk = service.logs(
            _caller(request),
            job_id,
            task=task,
            attempt=attempt,
            stream="out" if stream == "stdout" else "err",
            offset=offset,
            limit=limit,
        )
        # Not found while the attempt runs: not written yet (its Ray task has not started).
        if chunk.data is None and chunk.ended:
            return _problem(
                503,
                "",
                f"the output of task {task} (attempt {chunk.attempt}) cannot be read on node "
                f"{chunk.machine} now (the node is gone, or keeps no output)",
            )
        return Response(
            content=chunk.data or b"",
            media_type="application/octet-stream",
            headers={
                "Fairshare-Attempt": str(chunk.attempt),
                "Fairshare-Node": chunk.machine,
                "Fairshare-Next-Offset": str(chunk.next),
                "Fairshare-Ended": "true" if chunk.ended else "false",
            },
        )

    @app.get("/v1/shares", tags=["shares"])
    def shares(request: Request, _: Token) -> Shares:
        """Running tasks and the policy's share of every user now."""
        return Shares(
            policy=service.policy,
            users={
                name: UserShare(running_tasks=running, share=share)
                for name, (running, share) in service.shares().items()
            },
        )

    @app.post("/v1/tenants", status_code=201, tags=["tenants"])
    def add_tenant(tenant: TenantIn, request: Request, _: Token) -> TenantToken:
        """A new token for a tenant (a user of the scenario); administrators only."""
        return TenantToken(
            tenant=tenant.name, token=service.add_tenant(_caller(request), tenant.name)
        )

    @app.get("/v1/tenants", tags=["tenants"])
    def tenants(request: Request, _: Token) -> TenantList:
        """Tenants with tokens; administrators only."""
        return TenantList(
            tenants={
                name: TenantInfo(tokens=n) for name, n in service.tenants(_caller(request)).items()
            }
        )

    @app.delete("/v1/tenants/{name}/tokens", status_code=204, tags=["tenants"])
    def revoke(
        name: str,
        request: Request,
        _: Token,
        admin: Annotated[
            bool, Query(description="revoke the administrator tokens made for `name`")
        ] = False,
    ) -> Response:
        """Revoke every token of a tenant (``admin=true``: every administrator token made
        for that name); administrators only."""
        service.revoke(_caller(request), name, admin=admin)
        return Response(status_code=204)

    app.add_middleware(_Gate, service=service)
    return app
