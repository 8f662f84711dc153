"""A previous service's task attempts that still run, stopped before any task runs again
(one service per database: at least once, never twice at the same time).

A service's run is named by its lease's owner id (:meth:`fairshare.service.store.Store.acquire`),
which every task it launches carries in its environment as ``FAIRSHARE_SERVICE``, beside
``FAIRSHARE_JOB_ID``, ``FAIRSHARE_TASK_INDEX`` and ``FAIRSHARE_ATTEMPT``; the database records
which run launched each attempt. After a crash, the restarted service finds on this host
(local mode: the tasks ran here) every process whose environment names an attempt the
database still says runs, launched by a previous run, and kills it (its process group when it
leads one) before the attempt is made pending again. On a remote cluster the attempts ended
with the Ray driver that launched them (the service's connection), so there is nothing to
stop.

Examples
--------
No process on this host is a stale attempt of a run that never existed:

>>> from fairshare.service.store import StaleAttempt
>>> stop_stale_processes([StaleAttempt("j1", 0, 0, "0123456789abcdef", None)])
[]
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

from fairshare.service.store import StaleAttempt

PROC = Path("/proc")
"""Where the system lists its processes (Linux)."""
_NAMES = (b"FAIRSHARE_SERVICE", b"FAIRSHARE_JOB_ID", b"FAIRSHARE_TASK_INDEX", b"FAIRSHARE_ATTEMPT")


def _identity(pid: int) -> tuple[str, str, int, int] | None:
    """The attempt a process runs, from its environment (None: not a task's, or gone)."""
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    found: dict[bytes, bytes] = {}
    for item in raw.split(b"\0"):
        name, _, value = item.partition(b"=")
        if name in _NAMES:
            found[name] = value
    if len(found) != len(_NAMES):
        return None
    try:
        return (
            found[b"FAIRSHARE_SERVICE"].decode(),
            found[b"FAIRSHARE_JOB_ID"].decode(),
            int(found[b"FAIRSHARE_TASK_INDEX"]),
            int(found[b"FAIRSHARE_ATTEMPT"]),
        )
    except ValueError:
        return None


def _ours(pid: int) -> bool:
    """Whether this process may stop ``pid``: it runs as this user (or this is root)."""
    if os.geteuid() == 0:
        return True
    try:
        return (PROC / str(pid)).stat().st_uid == os.geteuid()
    except OSError:
        return False


def stop_stale_processes(attempts: Sequence[StaleAttempt], *, wait: float = 10.0) -> list[int]:
    """Kill the processes on this host that run one of ``attempts`` (launched by a previous
    service run: the database's record), and wait for them to be gone.

    Parameters
    ----------
    attempts : sequence of StaleAttempt
        What the database says still runs (:meth:`~fairshare.service.store.Store.stale`).
    wait : float
        The longest wait for the killed processes to end, in seconds.

    Returns
    -------
    list of int
        The process ids killed, in increasing order.
    """
    wanted = {(a.owner, a.job, a.index, a.attempt) for a in attempts if a.owner}
    if not wanted or not PROC.is_dir():
        return []
    me = os.getpid()
    killed: list[int] = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        pid = int(entry.name)
        if _identity(pid) not in wanted or not _ours(pid):
            continue
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            continue  # it ended meanwhile
        killed.append(pid)
    deadline = time.monotonic() + wait
    for pid in killed:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.02)
    return sorted(killed)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, killed and not yet reaped, does not)."""
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
