"""``fairshare --version``: the build a bug report names.

The first line is ``fairshare X.Y.Z`` (:data:`fairshare.__version__`, the version every output
records as ``fairshare_version``); then the kernel that runs (compiled by mypyc, or the
pure-Python sources and why), the interpreter, and the git commit when fairshare runs from a
git checkout (an editable install). Nothing here starts a process: the commit is read from
``.git`` itself, and left out when it cannot be read.

Examples
--------
>>> from fairshare.cli.version import version_lines
>>> version_lines()[0].startswith("fairshare ")
True
"""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path

__all__ = ["git_commit", "kernel_line", "version_lines"]

_SHA = re.compile(r"[0-9a-f]{40}")
"""A commit's full hexadecimal name (SHA-1)."""

_LARGEST_GIT_FILE = 1 << 20
"""``.git`` files larger than this are not read (``packed-refs`` of a huge repository)."""


def _read(path: Path) -> str | None:
    """The text of a small file, or None if it is missing, large or unreadable."""
    try:
        if path.stat().st_size > _LARGEST_GIT_FILE:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _git_dir(checkout: Path) -> Path | None:
    """The git directory of the work tree ``checkout``: ``.git`` itself, or where a worktree's
    ``.git`` file points (``gitdir: PATH``)."""
    dot_git = checkout / ".git"
    if dot_git.is_dir():
        return dot_git
    text = _read(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    return target if target.is_absolute() else checkout / target


def _resolve(git_dir: Path, ref: str) -> str | None:
    """The commit a ref names: its loose file in the git directory or in the common one
    (``commondir``, a worktree's), else its line in ``packed-refs``."""
    places = [git_dir]
    common = _read(git_dir / "commondir")
    if common is not None:
        shared = Path(common.strip())
        places.append(shared if shared.is_absolute() else git_dir / shared)
    for place in places:
        loose = _read(place / ref)
        if loose is not None and _SHA.fullmatch(loose.strip()):
            return loose.strip()
        packed = _read(place / "packed-refs") or ""
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _SHA.fullmatch(sha):
                return sha
    return None


def git_commit(checkout: Path) -> str | None:
    """The commit checked out in the git work tree ``checkout``, read from its ``.git``
    (``HEAD``: a commit, or a branch resolved through its ref), without running git.

    Parameters
    ----------
    checkout : Path
        The work tree's top directory (the one holding ``.git``).

    Returns
    -------
    str or None
        The commit's 40 hexadecimal digits; None when ``checkout`` is not a git work tree or its
        ``HEAD`` cannot be resolved (a repository layout this reader does not know).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, ".git", "refs", "heads").mkdir(parents=True)
    ...     _ = Path(tmp, ".git", "HEAD").write_text("ref: refs/heads/main\\n")
    ...     _ = Path(tmp, ".git", "refs", "heads", "main").write_text("ab" * 20 + "\\n")
    ...     git_commit(Path(tmp)) == "ab" * 20, git_commit(Path(tmp, "elsewhere"))
    (True, None)
    """
    git_dir = _git_dir(checkout)
    if git_dir is None:
        return None
    head = (_read(git_dir / "HEAD") or "").strip()
    if _SHA.fullmatch(head):
        return head
    if head.startswith("ref:"):
        return _resolve(git_dir, head.removeprefix("ref:").strip())
    return None


def kernel_line() -> str:
    """Which kernel this process runs: ``compiled (mypyc)``, or the pure-Python sources and
    why (:mod:`fairshare.kernel`). It imports the kernel's modules to tell.

    Returns
    -------
    str
    """
    from fairshare import kernel  # noqa: PLC0415

    if kernel.compiled():
        return "kernel: compiled (mypyc)"
    if kernel.pure_python_requested():
        return f"kernel: pure Python ({kernel.PURE_PYTHON_ENV}=1)"
    if kernel.stale_modules():
        return "kernel: pure Python (the compiled kernel is older than its sources)"
    return "kernel: pure Python (not compiled)"


def version_lines() -> list[str]:
    """The lines ``fairshare --version`` prints.

    Returns
    -------
    list of str
        ``fairshare X.Y.Z``, the kernel, the Python version and platform, and ``commit SHA``
        when the package runs from a git checkout.
    """
    import fairshare  # noqa: PLC0415

    package = Path(os.path.abspath(fairshare.__file__)).parent
    lines = [
        f"fairshare {fairshare.__version__}",
        kernel_line(),
        f"Python {platform.python_version()} ({platform.python_implementation()}) on "
        f"{sys.platform} {platform.machine()}",
    ]
    # An editable install runs the checkout's src/fairshare; a wheel's package has no .git.
    commit = git_commit(package.parent.parent) if package.parent.name == "src" else None
    if commit is not None:
        lines.append(f"commit {commit} ({package.parent.parent})")
    return lines
