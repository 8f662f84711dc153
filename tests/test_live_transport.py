"""What operators expect of the service's HTTP side (SPEC section 6, "Additions (production
use)"; issue 31 item 6), over a real socket with the whole service (``server.serve`` on the
fake executor): HTTPS with a self-signed certificate verified by the client; slow or
half-open connections closed by the header timeout, so that ``/healthz`` stays reachable
under the connection limit; a body that never arrives refused 408; and the client commands'
``--token-file`` and ``--cacert``, with a warning for ``--token``."""

from __future__ import annotations

import json
import socket
import ssl
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from fairshare.service.core import Limits  # noqa: E402
from fairshare.service.transport import (  # noqa: E402
    Transport,
    TransportError,
    check_tls,
    exposure_warning,
)
from live_serving import Served, self_signed, serve_with  # noqa: E402

from conftest import assert_rejected, run_fairshare  # noqa: E402

JOB = {"name": "j", "tasks": 1, "demand": {"cpu": 1}, "command": ["true"]}


def _tls_ready(cert: Path) -> object:
    def ready(url: str) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(
                    f"{url}/healthz", timeout=5, verify=ssl.create_default_context(cafile=cert)
                )
                return
            except httpx.HTTPError:
                time.sleep(0.05)

    return ready


def test_https_with_a_self_signed_certificate(tmp_path: Path) -> None:
    """``--tls-cert``/``--tls-key``: the API answers HTTPS, verified against the
    certificate; plain HTTP on the same port gets no answer; a client that trusts only the
    system's authorities refuses the certificate."""
    cert, key = self_signed(tmp_path)

    def client(served: Served) -> None:
        trusted = ssl.create_default_context(cafile=cert)
        auth = {"Authorization": f"Bearer {served.tokens['alice']}"}
        with httpx.Client(base_url=served.url, verify=trusted, timeout=10) as http:
            served.seen["health"] = http.get("/healthz").json()
            served.seen["post"] = http.post("/v1/jobs", json=JOB, headers=auth).status_code
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{served.url}/healthz", timeout=10)  # system authorities only
        plain = served.url.replace("https://", "http://")
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{plain}/healthz", timeout=10)

    transport = Transport(tls_cert=str(cert), tls_key=str(key))
    served, _ = serve_with(tmp_path, client, transport=transport, ready=_tls_ready(cert))
    assert served.url.startswith("https://")
    assert served.seen["health"] == {"status": "ok", "policy": "drf"}
    assert served.seen["post"] == 201


def test_the_client_commands_take_a_token_file_and_a_cacert(tmp_path: Path) -> None:
    """``fairshare jobs --token-file F --cacert C`` over HTTPS: no token on the command line,
    no warning; ``--token`` works and warns that ``ps`` shows it; without ``--cacert`` the
    self-signed certificate is refused in one ``error:`` line, and so is a token file that
    cannot be read."""
    cert, key = self_signed(tmp_path)
    token_file = tmp_path / "alice.token"
    results: dict[str, object] = {}

    def client(served: Served) -> None:
        token_file.write_text(served.tokens["alice"] + "\n")
        base = ("--server", served.url)
        results["file"] = run_fairshare(
            "jobs", "--json", *base, "--token-file", str(token_file), "--cacert", str(cert)
        )
        results["flag"] = run_fairshare(
            "jobs", "--json", *base, "--token", served.tokens["alice"], "--cacert", str(cert)
        )
        results["untrusted"] = run_fairshare("jobs", *base, "--token-file", str(token_file))
        results["empty"] = run_fairshare(
            "jobs", *base, "--token-file", str(tmp_path / "missing"), "--cacert", str(cert)
        )

    transport = Transport(tls_cert=str(cert), tls_key=str(key))
    serve_with(tmp_path, client, transport=transport, ready=_tls_ready(cert))
    by_file = results["file"]
    assert by_file.returncode == 0, by_file.stderr  # type: ignore[attr-defined]
    assert json.loads(by_file.stdout) == {"jobs": []}  # type: ignore[attr-defined]
    assert by_file.stderr == ""  # type: ignore[attr-defined]
    by_flag = results["flag"]
    assert by_flag.returncode == 0  # type: ignore[attr-defined]
    assert by_flag.stderr.startswith("warning: --token is visible")  # type: ignore[attr-defined]
    line = assert_rejected(results["untrusted"])  # type: ignore[arg-type]
    assert line.startswith("error: https://127.0.0.1:") and "CERTIFICATE_VERIFY_FAILED" in line
    line = assert_rejected(results["empty"])  # type: ignore[arg-type]
    assert line.startswith(f"error: {tmp_path / 'missing'}: --token-file: cannot read it")


def test_half_open_connections_do_not_make_the_service_unreachable(tmp_path: Path) -> None:
    """200 connections each send part of a request head, then nothing (the issue: 1,100
    such connections exhausted the descriptors). Past the connection limit (50) a request
    is refused 503, but the header timeout closes the slow ones and ``/healthz`` answers
    again; the slow connections find themselves closed by the service."""

    def client(served: Served) -> None:
        port = int(served.url.rsplit(":", 1)[1])
        slow = []
        for _ in range(200):
            conn = socket.create_connection(("127.0.0.1", port), timeout=10)
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow.append(conn)
        answers = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                answer = httpx.get(f"{served.url}/healthz", timeout=10)
            except httpx.HTTPError:
                time.sleep(0.1)
                continue
            answers.append(answer.status_code)
            if answer.status_code == 200:
                break
            time.sleep(0.1)
        served.seen["answers"] = answers
        closed = 0
        for conn in slow:
            try:
                closed += conn.recv(1024) == b""
            except OSError:
                closed += 1
            conn.close()
        served.seen["closed"] = closed

    transport = Transport(header_seconds=0.5, max_connections=50)
    served, _ = serve_with(tmp_path, client, transport=transport)
    assert served.seen["answers"][-1] == 200
    assert set(served.seen["answers"]) <= {200, 503}
    assert served.seen["closed"] == 200


def test_a_body_that_never_arrives_is_408(tmp_path: Path) -> None:
    """A request whose head promises a body that never comes is refused 408 with one
    ``error`` line once ``body_seconds`` have passed; nothing is stored."""

    def client(served: Served) -> None:
        port = int(served.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(
                b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer " + served.tokens["alice"].encode() + b"\r\n"
                b'Content-Length: 100\r\n\r\n{"name": '
            )
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                answer += chunk
        served.seen["answer"] = answer.decode()

    served, _ = serve_with(tmp_path, client, limits=Limits(body_seconds=0.5))
    head, _, body = served.seen["answer"].partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 408 ")
    assert '"error":"body: did not arrive within 0.5 seconds"' in body
    assert served.store.jobs(None) == []


def test_the_tls_files_are_checked_and_an_exposed_host_warned() -> None:
    """A certificate without its key, or a file that is not one, is refused before
    anything starts; a non-loopback ``--host`` without TLS gets one ``warning:`` line."""
    with pytest.raises(TransportError) as err:
        check_tls("cert.pem", None)
    assert (err.value.where, err.value.what) == (
        "tls_key",
        "missing: tls_cert needs it (HTTPS needs both)",
    )
    with pytest.raises(TransportError) as err:
        check_tls("/nonexistent/cert.pem", "/nonexistent/key.pem")
    assert err.value.where == "tls_cert" and "no such file" in err.value.what
    assert exposure_warning("::1", tls=False) is None
    assert exposure_warning("127.0.0.2", tls=False) is None
    for host in ("0.0.0.0", "10.1.2.3", "::", "example.org"):
        line = exposure_warning(host, tls=False)
        assert line is not None and line.startswith(f"warning: --host {host} is not a loopback")
        assert exposure_warning(host, tls=True) is None


def test_serve_refuses_tls_files_that_do_not_load(tmp_path: Path) -> None:
    """``fairshare serve`` with a certificate and no key, a missing file, or a file that
    is not PEM: one ``error:`` line naming the file and the flag, exit 2, before Ray (or
    anything else) starts."""
    (tmp_path / "s.yaml").write_text("users:\n  - {name: alice}\n")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    serve = ("serve", str(tmp_path / "s.yaml"), "--policy", "drf", "--db", str(tmp_path / "db"))
    line = assert_rejected(run_fairshare(*serve, "--tls-cert", str(garbage)))
    assert line == (f"error: {garbage}: --tls-key: missing: --tls-cert needs it (HTTPS needs both)")
    line = assert_rejected(
        run_fairshare(*serve, "--tls-cert", str(garbage), "--tls-key", str(tmp_path / "no.pem"))
    )
    assert line == f"error: {tmp_path / 'no.pem'}: --tls-key: no such file: {tmp_path / 'no.pem'}"
    line = assert_rejected(
        run_fairshare(*serve, "--tls-cert", str(garbage), "--tls-key", str(garbage))
    )
    assert line.startswith(f"error: {garbage}: --tls-cert: {garbage} and {garbage} do not load")
    assert not (tmp_path / "db").exists()
