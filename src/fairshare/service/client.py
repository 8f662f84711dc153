"""A Python client of the scheduler service's HTTP API (SPEC section 6), over httpx (the
``[client]`` extra, also in ``[ray]``).

>>> client = Client("http://127.0.0.1:8765", token)          # doctest: +SKIP
>>> job = client.submit("train", 4, {"cpu": 1}, ["python", "train.py"])  # doctest: +SKIP
>>> client.job(job)["state"]                                  # doctest: +SKIP
'running'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DEFAULT_SERVER", "Client", "ClientError"]

DEFAULT_SERVER = "http://127.0.0.1:8765"
"""Where the client commands look for the service by default (``fairshare serve``'s)."""


class ClientError(Exception):
    """A request the service refused (``status`` its HTTP status, ``message`` its one-line
    reason), or a service that could not be reached (``status`` 0)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Client:
    """The API of the service at ``server`` with bearer ``token``."""

    def __init__(self, server: str, token: str, *, timeout: float = 30.0) -> None:
        import httpx  # noqa: PLC0415

        self.server = server.rstrip("/")
        self._httpx = httpx
        self._http = httpx.Client(
            base_url=self.server,
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, body: object = None) -> Any:
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
    ) -> str:
        """Submit a job; its id."""
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
        return str(self._call("POST", "/v1/jobs", body)["id"])

    def jobs(self) -> list[dict[str, Any]]:
        jobs: list[dict[str, Any]] = self._call("GET", "/v1/jobs")["jobs"]
        return jobs

    def job(self, job_id: str) -> dict[str, Any]:
        job: dict[str, Any] = self._call("GET", f"/v1/jobs/{job_id}")
        return job

    def cancel(self, job_id: str) -> None:
        self._call("DELETE", f"/v1/jobs/{job_id}")

    def shares(self) -> dict[str, Any]:
        shares: dict[str, Any] = self._call("GET", "/v1/shares")
        return shares

    def add_tenant(self, name: str) -> str:
        """A new token for tenant ``name`` (needs an administrator token)."""
        return str(self._call("POST", "/v1/tenants", {"name": name})["token"])
