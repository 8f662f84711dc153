"""A Ray address where nothing listens is one error line at once (``ray.init`` itself would
retry it for ever), for ``fairshare serve --ray`` and ``fairshare sweep --ray``."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fairshare.backends.ray_cluster import unanswered

pytest.importorskip("ray")
pytest.importorskip("fastapi")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_closed_port_is_unanswered_and_other_forms_are_left_to_ray() -> None:
    port = _closed_port()
    assert unanswered(f"127.0.0.1:{port}") == "Connection refused"
    assert unanswered("ray://127.0.0.1:10001") is None
    assert unanswered("auto") is None


def test_serve_with_a_dead_ray_address_is_one_error_line(tmp_path: Path) -> None:
    port = _closed_port()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairshare",
            "serve",
            str(EXAMPLES / "live" / "tenants.yaml"),
            "--policy",
            "drf",
            "--db",
            str(tmp_path / "fairshare.db"),
            "--ray",
            f"127.0.0.1:{port}",
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in lines[0]
    assert "--ray" in lines[0]
