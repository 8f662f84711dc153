"""A Python client of the scheduler service's HTTP API (SPEC section 6), over httpx (the
``[client]`` extra, also in ``[ray]``).

Examples
--------
Against a running service (``fairshare serve``; the token from ``fairshare tenant add``):

>>> client = Client("http://127.0.0.1:8765", token)          # doctest: +SKIP
>>> job = client.submit("train", 4, {"cpu": 1}, ["python", "train.py"])  # doctest: +SKIP
>>> client.job(job)["state"]                                  # doctest: +SKIP
'running'

A refusal keeps the service's status and its one-line reason:

>>> err = ClientError(404, "no job 'x'")
>>> err.status, str(err)
(404, "no job 'x'")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fairshare.errors import FairshareError

__all__ = ["DEFAULT_SERVER", "Client", "ClientError"]

DEFAULT_SERVER = "http://127.0.0.1:8765"
"""Where the client commands look for the service by default (``fairshare serve``'s)."""


class ClientError(FairshareError):
    """A request the service refused, or a service that could not be reached.

    Parameters
    ----------
    status : int
        The HTTP status of the refusal (401, 404, 413, 422, 429, ...), or 0 when the
        service could not be reached.
    message : str
        The reason, on one line (the service's ``error``).
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Client:
    """The API of the service at ``server`` with bearer ``token``; a context manager that
    closes its connections.

    Parameters
    ----------
    server : str
        The service's base URL (:data:`DEFAULT_SERVER` is ``fairshare serve``'s).
    token : str
        A tenant's (or an administrator's) bearer token.
    timeout : float
        Seconds to wait for an answer.
    cacert : str, optional
        A PEM file of the authorities (or the self-signed certificate) an ``https://``
        service's certificate is verified against (default: the system's).

    Raises
    ------
    ImportError
        httpx (the ``[client]`` extra) is not installed.
    OSError, ssl.SSLError
        ``cacert`` cannot be read as PEM certificates.

    Notes
    -----
    Every method raises :class:`ClientError` for a refused request or an unreachable
    service.
    """

    def __init__(
        self, server: str, token: str, *, timeout: float = 30.0, cacert: str | None = None
    ) -> None:
        import ssl  # noqa: PLC0415

        import httpx  # noqa: PLC0415

        self.server = server.rstrip("/")
        self._httpx = httpx
        verify: ssl.SSLContext | bool = True
        if cacert is not None:
            verify = ssl.create_default_context(cafile=cacert)
        self._http = httpx.Client(
            base_url=self.server,
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            verify=verify,
        )

    def close(self) -> None:
        """Close the client's connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: object = None) -> Any:
        """One request: its JSON answer (None for an empty one), or :class:`ClientError`."""
        try:
            answer = self._http.request(method, path, json=body)
        except self._httpx.HTTPError as err:
            raise ClientError(0, f"cannot reach {self.server} ({err})") from None
        if answer.status_code >= 400:
            try:
                doc = answer.json()
                message = str(doc.get("error") or doc.get("detail"))
            except ValueError:
                message = answer.text.strip()[:200] or answer.reason_phrase
            raise ClientError(answer.status_code, message)
        if answer.status_code == 204 or not answer.content:
            return None
        return answer.json()

    def submit(
        self,
        name: str,
        tasks: int,
        demand: Mapping[str, float],
        command: Sequence[str],
        *,
        constraint: str | None = None,
        max_retries: int | None = None,
        min_tasks: int | None = None,
        priority: int | None = None,
        estimate: float | None = None,
    ) -> str:
        """Submit a job of the token's tenant.

        Parameters
        ----------
        name : str
            The job's name.
        tasks : int
            How many tasks.
        demand : mapping of str to float
            What each task holds, by resource name.
        command : sequence of str
            The argv each task runs (``FAIRSHARE_TASK_INDEX`` tells it which).
        constraint : str, optional
            A placement constraint (SPEC section 1's language).
        max_retries : int, optional
            How many times a task may fail and run again (the service's default: 3).
        min_tasks : int, optional
            A gang: at least this many of its tasks start together (``tasks``: all).
        priority : int, optional
            Its priority among the tenant's and queue's jobs (the service's default: 0).
        estimate : float, optional
            Seconds one of its tasks is expected to run at most (EASY backfilling's
            reservations count on it; a task running longer is not stopped).

        Returns
        -------
        str
            The job's id.
        """
        body: dict[str, object] = {
            "name": name,
            "tasks": tasks,
            "demand": dict(demand),
            "command": list(command),
        }
        if constraint is not None:
            body["constraint"] = constraint
        if max_retries is not None:
            body["max_retries"] = max_retries
        if min_tasks is not None:
            body["min_tasks"] = min_tasks
        if priority is not None:
            body["priority"] = priority
        if estimate is not None:
            body["estimate"] = estimate
        return str(self._call("POST", "/v1/jobs", body)["id"])

    def jobs(self) -> list[dict[str, Any]]:
        """The tenant's jobs in submission order (every job for an administrator).

        Returns
        -------
        list of dict
            Each job as the API shows it (``GET /v1/jobs``).
        """
        jobs: list[dict[str, Any]] = []
        path = "/v1/jobs?limit=1000"
        while True:
            page = self._call("GET", path)
            jobs += page["jobs"]
            following = page.get("next")
            if not following:
                return jobs
            path = f"/v1/jobs?limit=1000&after={following}"

    def job(self, job_id: str) -> dict[str, Any]:
        """One of the tenant's jobs.

        Parameters
        ----------
        job_id : str
            The job's id.

        Returns
        -------
        dict
            ``id``, ``state``, ``tasks`` per state, times, ``error`` and what was submitted.
        """
        job: dict[str, Any] = self._call("GET", f"/v1/jobs/{job_id}")
        return job

    def explain(self, job_id: str) -> dict[str, Any]:
        """Why one of the tenant's jobs is not running now (SPEC section 8.5).

        Parameters
        ----------
        job_id : str
            The job's id.

        Returns
        -------
        dict
            ``job``, ``state``, ``reasons``, ``ahead``, ``estimated_start``, ...
        """
        why: dict[str, Any] = self._call("GET", f"/v1/jobs/{job_id}/explain")
        return why

    def cancel(self, job_id: str) -> None:
        """Cancel one of the tenant's jobs (a job already ended is left as it is).

        Parameters
        ----------
        job_id : str
            The job's id.
        """
        self._call("DELETE", f"/v1/jobs/{job_id}")

    def cancel_reported(self, job_id: str) -> dict[str, Any]:
        """Cancel one of the tenant's jobs and say what was done.

        Parameters
        ----------
        job_id : str
            The job's id.

        Returns
        -------
        dict
            ``id``, ``state``, ``cancelled``, ``stopped`` (running tasks), ``dropped``
            (pending tasks) and ``message`` (one line).
        """
        report: dict[str, Any] = self._call("POST", f"/v1/jobs/{job_id}/cancel")
        return report

    def logs(
        self,
        job_id: str,
        *,
        task: int = 0,
        attempt: int | None = None,
        stream: str = "stdout",
        offset: int = 0,
    ) -> tuple[bytes, dict[str, str]]:
        """Part of a task's output, from ``offset``.

        Parameters
        ----------
        job_id : str
            The job's id.
        task : int
            The task's index.
        attempt : int, optional
            The attempt (default: the latest).
        stream : {"stdout", "stderr"}
            Which output.
        offset : int
            The first byte.

        Returns
        -------
        (bytes, dict of str to str)
            The bytes, and ``attempt``, ``node``, ``next`` (the next offset) and ``ended``
            (``"true"`` once nothing more comes).
        """
        params: dict[str, Any] = {"task": task, "stream": stream, "offset": offset}
        if attempt is not None:
            params["attempt"] = attempt
        try:
            answer = self._http.get(f"/v1/jobs/{job_id}/logs", params=params)
        except self._httpx.HTTPError as err:
            raise ClientError(0, f"cannot reach {self.server} ({err})") from None
        if answer.status_code >= 400:
            try:
                message = str(answer.json().get("error"))
            except ValueError:
                message = answer.text.strip()[:200] or answer.reason_phrase
            raise ClientError(answer.status_code, message)
        head = answer.headers
        return answer.content, {
            "attempt": head.get("fairshare-attempt", ""),
            "node": head.get("fairshare-node", ""),
            "next": head.get("fairshare-next-offset", str(offset + len(answer.content))),
            "ended": head.get("fairshare-ended", "true"),
        }

    def shares(self) -> dict[str, Any]:
        """The policy and every user's running tasks and share now.

        Returns
        -------
        dict
            ``policy``, and ``users``: per user, ``running_tasks`` and ``share``.
        """
        shares: dict[str, Any] = self._call("GET", "/v1/shares")
        return shares

    def add_tenant(self, name: str) -> str:
        """A new token for tenant ``name`` (needs an administrator token).

        Parameters
        ----------
        name : str
            A user of the service's scenario.

        Returns
        -------
        str
            The new bearer token.
        """
        return str(self._call("POST", "/v1/tenants", {"name": name})["token"])
