"""What a Ray worker runs for one task: the tenant's argv, never a shell line and never
anything unpickled from a tenant. This module imports only the standard library, and the Ray
executor ships it to the workers by value, so that nodes need Ray but not fairshare."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import tempfile

STDERR_TAIL = 2000
"""How much of a failed command's standard error its job keeps (characters, the end)."""


def _die_with_worker() -> None:
    """In the child, before exec: die when the worker dies (Linux ``PR_SET_PDEATHSIG``), so
    a forced cancel, which kills the worker, kills the command too."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return


def run_command(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``argv`` with ``env`` added to the worker's environment; its exit code and the
    end of its standard error (standard output goes to the worker's log).

    Parameters
    ----------
    argv : list of str
        The command and its arguments.
    env : dict of str to str
        Variables added to the environment (``FAIRSHARE_TASK_INDEX``, ...).

    Returns
    -------
    (int, str)
        The exit code (127: the command could not be run) and the last
        :data:`STDERR_TAIL` characters of its standard error.

    Examples
    --------
    >>> run_command(["true"], {})
    (0, '')
    >>> run_command(["sh", "-c", "echo task $FAIRSHARE_TASK_INDEX >&2; exit 3"],
    ...             {"FAIRSHARE_TASK_INDEX": "4"})
    (3, 'task 4')
    """
    with tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(
                argv,
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
                stderr=err,
                preexec_fn=_die_with_worker,  # noqa: PLW1509 (only prctl, async-signal-safe)
            )
        except OSError as error:
            return 127, f"cannot run {argv[0]!r}: {error.strerror or error}"
        code = process.wait()
        err.seek(max(0, err.tell() - STDERR_TAIL))
        tail = err.read().decode("utf-8", errors="replace").strip()
    return code, tail
