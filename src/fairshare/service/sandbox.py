"""What ``fairshare serve`` sets up so that tenants' commands never run with its privileges
(``docs/live.md``, "Trust model"): the tasks' sandbox chosen from the command line, and the
service's own files (database, tokens) kept from the tasks' users.

The sandbox itself is applied on each node by :mod:`fairshare.backends.ray_task`; here it is
only chosen and checked: per-tenant OS users (``--task-user-prefix``, the default when the
service may switch users), one task user for every tenant (``--task-user``), or the
service's own user, which needs the operator's explicit ``--insecure-same-user``.

Examples
--------
Run as root, with no option: one OS user per tenant.

>>> choice = choose_sandbox(None, None, False, None, local=True, switch=True, uid=0)
>>> choice.settings, choice.warning
({'mode': 'tenant', 'prefix': 'fairshare-t-', 'create_users': True, 'root': None}, None)

Run by an unprivileged user with no option: refused, saying what to set up.

>>> choose_sandbox(None, None, False, None, local=True, switch=False, uid=1000)
Traceback (most recent call last):
...
fairshare.service.sandbox.SandboxRefused: ...
"""

from __future__ import annotations

import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairshare.backends.ray_task import can_switch_users, valid_user_name
from fairshare.errors import FairshareError

DEFAULT_PREFIX = "fairshare-t-"
"""The per-tenant task users' prefix when ``serve`` chooses (``fairshare-t-alice``)."""

NETWORKS = ("host", "none")
"""``--task-network``'s values."""

MAX_PREFIX = 12
"""The longest ``--task-user-prefix`` (a user name has at most 32 characters, and a tenant's
part up to 20)."""


class SandboxRefused(FairshareError):
    """``serve`` cannot keep tasks from its privileges as asked (an input error: the option
    ``where`` and what to set up).

    Parameters
    ----------
    where : str
        The option at fault.
    what : str
        What is wrong and what to do.
    """

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


@dataclass(frozen=True)
class SandboxChoice:
    """The tasks' sandbox (:func:`fairshare.backends.ray_task.run_command`'s ``sandbox``)
    and the warning to print before the service starts, if any.

    Parameters
    ----------
    settings : dict
        ``mode`` (``tenant``, ``user``, ``same``), ``prefix`` or ``user``, ``create_users``,
        ``root`` (the tenants' directories on each node; None: the node's default).
    warning : str or None
        One ``warning:`` line (``--insecure-same-user``).
    """

    settings: dict[str, Any]
    warning: str | None = None


def choose_sandbox(
    task_user: str | None,
    prefix: str | None,
    insecure_same_user: bool,
    task_dir: str | None,
    *,
    local: bool,
    network: str = "host",
    switch: bool | None = None,
    uid: int | None = None,
) -> SandboxChoice:
    """The sandbox ``serve``'s options ask for, checked.

    Parameters
    ----------
    task_user : str or None
        ``--task-user``: every tenant's tasks run as this user.
    prefix : str or None
        ``--task-user-prefix``: tenant T's tasks run as PREFIX + T (made when missing).
    insecure_same_user : bool
        ``--insecure-same-user``: tasks run as the service's user (a warning).
    task_dir : str or None
        ``--task-dir``: the tenants' directories on each node.
    local : bool
        The Ray instance is started here (its workers are this process's user: what this
        process may do, they may).
    network : str
        ``--task-network``: ``host`` (the node's network) or ``none`` (a network namespace
        of the task's own, with no interface up; the workers must run as root).
    switch : bool, optional
        Whether this process may switch users (default: :func:`can_switch_users`).
    uid : int, optional
        This process's user id (default: its effective one).

    Returns
    -------
    SandboxChoice

    Raises
    ------
    SandboxRefused
        Options that contradict each other, an invalid or missing user, or no way to switch
        users without ``--insecure-same-user``.
    """
    switch = can_switch_users() if switch is None else switch
    uid = os.geteuid() if uid is None else uid
    if network not in NETWORKS:
        raise SandboxRefused(
            "--task-network", f"expected one of {', '.join(NETWORKS)}, got {network!r}"
        )
    if network == "none" and local and uid != 0:
        raise SandboxRefused(
            "--task-network",
            "none needs the Ray workers to run as root (a network namespace per task)",
        )
    extra = {"network": "none"} if network == "none" else {}
    if task_dir is not None and not os.path.isabs(task_dir):
        raise SandboxRefused("--task-dir", f"must be an absolute path, got {task_dir!r}")
    given = [
        name
        for name, value in (
            ("--task-user", task_user),
            ("--task-user-prefix", prefix),
            ("--insecure-same-user", insecure_same_user or None),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise SandboxRefused(
            given[1],
            f"give one of --task-user, --task-user-prefix and "
            f"--insecure-same-user, not {' and '.join(given)}",
        )
    if insecure_same_user:
        return SandboxChoice(
            {"mode": "same", "root": task_dir, **extra},
            f"warning: --insecure-same-user: tenants' commands run as uid {uid}, with the "
            "service's privileges (they can read and write its database and tokens, and "
            "signal it): use it only when every tenant is trusted",
        )
    if local and not switch:
        raise SandboxRefused(
            given[0] if given else "--task-user",
            f"tenants' commands must not run as the service's user (uid {uid}), and this "
            "process cannot run them as another (it lacks CAP_SETUID and CAP_SETGID): run "
            "serve as root, or give it those two capabilities (systemd: "
            "AmbientCapabilities=CAP_SETUID CAP_SETGID), with --task-user USER or "
            "--task-user-prefix PREFIX; or pass --insecure-same-user to accept that tasks "
            "run with the service's privileges",
        )
    if task_user is not None:
        if not valid_user_name(task_user):
            raise SandboxRefused("--task-user", f"not a valid user name: {task_user!r}")
        if local:
            _check_local_user(task_user, uid)
        return SandboxChoice({"mode": "user", "user": task_user, "root": task_dir, **extra})
    chosen = DEFAULT_PREFIX if prefix is None else prefix
    if not valid_user_name(chosen) or len(chosen) > MAX_PREFIX:
        raise SandboxRefused(
            "--task-user-prefix",
            f"expected at most {MAX_PREFIX} characters of a-z, 0-9, _ and -, starting with a "
            f"letter or _; got {chosen!r}",
        )
    return SandboxChoice(
        {"mode": "tenant", "prefix": chosen, "create_users": True, "root": task_dir, **extra}
    )


def _check_local_user(name: str, uid: int) -> None:
    """``--task-user`` on this node: it exists, and is neither root nor the service."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise SandboxRefused(
            "--task-user", f"no user {name!r} on this machine: create it (useradd --system {name})"
        ) from None
    if entry.pw_uid in (0, uid):
        raise SandboxRefused(
            "--task-user", f"{name!r} is root or the service's own user: tasks need another"
        )


def private_file(path: Path) -> None:
    """Make ``path`` readable and writable by its owner alone (mode 0600), when it exists
    and this process owns it (a database, its WAL, a token file).

    Parameters
    ----------
    path : Path
        The file.

    Raises
    ------
    OSError
        It cannot be changed.
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077:
        path.chmod(0o600)


def private_database(db: Path) -> str | None:
    """Keep the service's database from tasks' users: it and SQLite's files beside it
    (``-wal``, ``-shm``, ``-journal``, which SQLite creates with the database's mode) 0600;
    refused in a directory that every user may write without the sticky bit (a task could
    replace the file); a warning when other users may list its directory (they see the
    files' names and sizes, not their contents).

    Parameters
    ----------
    db : Path
        The database.

    Returns
    -------
    str or None
        One ``warning:`` line, or None.

    Raises
    ------
    SandboxRefused
        Its directory is writable by everyone.
    OSError
        A file's mode cannot be changed.
    """
    folder = db.resolve().parent
    mode = folder.stat().st_mode
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        raise SandboxRefused(
            "--db",
            f"its directory {folder} is writable by every user (mode {mode & 0o7777:o}): a "
            "task could replace the database; keep it in a directory of its own (mode 0700)",
        )
    for suffix in ("", "-wal", "-shm", "-journal"):
        private_file(db.with_name(db.name + suffix))
    if mode & 0o077 and not mode & stat.S_ISVTX and folder.stat().st_uid == os.geteuid():
        return (
            f"warning: {folder}: the database's directory is open to other users (mode "
            f"{mode & 0o7777:o}; the database itself is 0600): chmod 700 {folder}, or keep "
            "it in a directory of its own"
        )
    return None
