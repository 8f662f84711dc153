"""The live service's packages are an extra: without Ray, FastAPI, uvicorn and httpx,
``import fairshare`` and every other command work, and the live commands say what to
install (one ``error:`` line, exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_BLOCKED = """
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"ray", "fastapi", "uvicorn", "httpx", "starlette"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Missing())
"""


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCKED + code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )


def test_fairshare_imports_and_simulates_without_the_extra(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parent.parent / "examples"
    done = _run(
        "import fairshare, fairshare.backends, fairshare.service.store\n"
        "from fairshare.cli import main\n"
        f"main(['simulate', {str(examples / 'sim-two-jobs.yaml')!r}, '--policy', 'drf', "
        f"'--out', {str(tmp_path / 'out')!r}])\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out" / "summary.json").exists()


def test_the_live_commands_name_the_extra_they_need(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("users:\n  - {name: alice}\n")
    for argv, needs in (
        ("['serve', 's.yaml', '--policy', 'drf', '--db', 'db']", "serve"),
        ("['jobs', '--token', 't']", "client"),
        ("['bench', 'live']", "bench live"),
    ):
        done = _run(f"from fairshare.cli import main\nmain({argv})\n", tmp_path)
        assert done.returncode == 2, done.stderr[-2000:]
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith(f"error: command line: {needs}: needs the ")
        assert "pip install 'fairshare[ray]'" in lines[0]
