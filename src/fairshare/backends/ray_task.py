"""What a Ray worker runs for one task: the tenant's argv, never a shell line and never
anything unpickled from a tenant. This module imports only the standard library, and the Ray
executor ships it to the workers by value, so that nodes need Ray but not fairshare.

The sandbox (``docs/live.md``, "Trust model"; the service passes one for every task): the
command runs

- as another OS user than the worker's: one per tenant (``PREFIX`` + the tenant's
  :func:`tenant_slug`, made on the node when missing and the worker runs as root), or one
  user for all tenants, or -- only when the operator said so -- the worker's own user; its
  supplementary groups dropped, and ``PR_SET_NO_NEW_PRIVS`` set, so that a set-user-ID
  program gives it nothing;
- with a scrubbed environment (:func:`task_environment`): a fixed ``PATH``, ``HOME`` its
  directory, ``LANG``, and the ``FAIRSHARE_*`` variables -- never the worker's variables
  (``RAY_*``, the service's secrets);
- in its tenant's directory (:func:`tenant_directory`: ``ROOT/SLUG``, mode 0700, owned by the
  task's user; ``ROOT`` owned by the worker's user and writable by no one else), with its
  standard output and error captured to ``logs/JOB.INDEX.ATTEMPT.{out,err}`` there, each cut
  at :data:`OUTPUT_CAP` bytes (not Ray's worker log, which other tenants' tasks share); a
  file left empty is removed when the task ends;
- in a session of its own (``setsid``): it cannot signal the worker's process group, and
  what it leaves running in its session is killed when it ends; when it is cancelled (the
  worker killed) :func:`stop_attempt` kills every process that carries its attempt's
  ``FAIRSHARE_*`` variables, in its session or not;
- with ``network: none``, in a network namespace of its own with no interface up (the
  worker must be root).

Examples
--------
A tenant's name as an OS user, and the environment a task sees:

>>> tenant_user("fairshare-t-", "alice")
'fairshare-t-alice'
>>> tenant_user("fairshare-t-", "Team/Alice")
'fairshare-t-team-alice-e34a36ee'
>>> env = task_environment({"FAIRSHARE_TASK_INDEX": "3", "RAY_ADDRESS": "10.0.0.1:6379"},
...                        "/srv/tasks/alice")
>>> sorted(env.items())  # doctest: +NORMALIZE_WHITESPACE
[('FAIRSHARE_TASK_INDEX', '3'), ('HOME', '/srv/tasks/alice'), ('LANG', 'C.UTF-8'),
 ('PATH', '/usr/local/bin:/usr/bin:/bin')]
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import os
import pwd
import re
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

STDERR_TAIL = 2000
"""How much of a failed command's standard error its job keeps (characters, the end)."""

OUTPUT_CAP = 8 << 20
"""Bytes of a task's standard output, and of its standard error, kept in its files; the
rest is read and dropped (one line in the file says so)."""

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
"""A task's ``PATH``: the system's directories, none of the worker's."""

SANDBOX_FAILED = 126
"""The exit code of a task whose sandbox could not be set up (its error says why)."""

_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}\Z")
_UNSAFE = re.compile(r"[^a-z0-9_-]+")
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNET = 0x40000000


class _SandboxError(Exception):
    """A task's sandbox cannot be set up on this node (the task fails with the reason).

    Not a :class:`~fairshare.errors.FairshareError`: this module runs on Ray's workers,
    which need only the standard library."""


class Account(NamedTuple):
    """The OS user a task runs as: its name, user and group ids."""

    name: str
    uid: int
    gid: int


def tenant_slug(tenant: str) -> str:
    """A tenant's name as a file and user name: lower case letters, digits, ``_`` and ``-``;
    a name that had to change (or was long) ends with 8 hex digits of its SHA-256, so two
    tenants never share one.

    Parameters
    ----------
    tenant : str
        The tenant's name (a scenario user).

    Returns
    -------
    str
        At most 20 characters.

    Examples
    --------
    >>> tenant_slug("bob"), tenant_slug("Bob"), tenant_slug("a" * 30)[-9:]
    ('bob', 'bob-cd9fb1e1', '-3a54fc0c')
    """
    slug = _UNSAFE.sub("-", tenant.lower()).strip("-") or "t"
    if slug == tenant and len(slug) <= 20:
        return slug
    digest = hashlib.sha256(tenant.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug[:11]}-{digest}"


def tenant_user(prefix: str, tenant: str) -> str:
    """The OS user of a tenant's tasks under ``--task-user-prefix PREFIX``.

    Parameters
    ----------
    prefix : str
        The prefix (at most 12 characters, a valid user name's start).
    tenant : str
        The tenant's name.

    Returns
    -------
    str
        ``prefix + tenant_slug(tenant)`` (at most 32 characters: a valid Linux user name).
    """
    return prefix + tenant_slug(tenant)


def valid_user_name(name: str) -> bool:
    """Whether ``name`` is a portable Linux user name (what ``useradd`` accepts).

    Parameters
    ----------
    name : str

    Returns
    -------
    bool

    Examples
    --------
    >>> valid_user_name("fairshare-t-"), valid_user_name("0day"), valid_user_name("a b")
    (True, False, False)
    """
    return _NAME.match(name) is not None


def task_environment(passed: Mapping[str, str], home: str) -> dict[str, str]:
    """The whole environment of a sandboxed task: ``PATH`` (:data:`SAFE_PATH`), ``HOME``,
    ``LANG`` and what fairshare (or the tenant) passed -- nothing of the worker's, and no
    ``RAY_*`` variable even if passed (a Ray address or token).

    Parameters
    ----------
    passed : mapping of str to str
        The task's own variables (``FAIRSHARE_TASK_INDEX``, ...).
    home : str
        Its directory.

    Returns
    -------
    dict of str to str
    """
    env = {"PATH": SAFE_PATH, "LANG": "C.UTF-8"}
    env.update((k, v) for k, v in passed.items() if not k.upper().startswith("RAY_"))
    env["HOME"] = home
    return env


def task_root(sandbox: Mapping[str, Any]) -> str:
    """The directory holding the tenants' directories on this node: the sandbox's ``root``,
    else ``fairshare-tasks-UID`` in the system's temporary directory (UID the worker's)."""
    root = sandbox.get("root")
    if root:
        return str(root)
    return os.path.join(tempfile.gettempdir(), f"fairshare-tasks-{os.getuid()}")


def _private_root(root: str) -> None:
    """Make ``root`` (mode 0711), or check it: a directory owned by this process's user that
    no one else can write, so that no task can swap a tenant's directory in it."""
    try:
        os.makedirs(root, mode=0o711, exist_ok=True)
        info = os.lstat(root)
    except OSError as err:
        raise _SandboxError(f"cannot make the task directory {root}: {err.strerror}") from None
    if not os.path.isdir(root) or os.path.islink(root):
        raise _SandboxError(f"the task directory {root} is not a directory")
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise _SandboxError(
            f"the task directory {root} must be owned by uid {os.geteuid()} and writable by "
            f"it alone (it is uid {info.st_uid}, mode {info.st_mode & 0o7777:o})"
        )


def _add_user(name: str, home: str, root: str) -> None:
    """Create the system user ``name`` (no login, no home made, its own group), one creation
    at a time on this node (``ROOT/.users.lock``); another process may have made it."""
    useradd = shutil.which("useradd", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if useradd is None:
        raise _SandboxError(f"no user {name} on this node, and no useradd to make it")
    with open(os.path.join(root, ".users.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for _ in range(50):
            try:
                pwd.getpwnam(name)
                return
            except KeyError:
                pass
            made = subprocess.run(
                [
                    useradd,
                    "--system",
                    "--user-group",
                    "--no-create-home",
                    "--home-dir",
                    home,
                    "--shell",
                    "/usr/sbin/nologin",
                    name,
                ],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                check=False,
            )
            if made.returncode in (0, 9):  # 9: the name exists (made meanwhile)
                return
            if made.returncode != 10:  # 10: /etc/passwd locked by another useradd
                raise _SandboxError(
                    f"cannot create the task user {name}: {made.stderr.strip()[:200]}"
                )
            time.sleep(0.1)
    raise _SandboxError(f"cannot create the task user {name}: /etc/passwd stays locked")


def task_account(sandbox: Mapping[str, Any], tenant: str, root: str) -> Account:
    """The OS user a tenant's task runs as on this node (made when the sandbox says so).

    Parameters
    ----------
    sandbox : mapping
        ``mode``: ``"tenant"`` (``prefix`` + :func:`tenant_slug`), ``"user"`` (``user``
        for every tenant) or ``"same"`` (the worker's own user); ``create_users``.
    tenant : str
        The task's tenant.
    root : str
        The tenants' directories (:func:`task_root`).

    Returns
    -------
    Account

    Raises
    ------
    _SandboxError
        The user does not exist and cannot be made, or the worker cannot switch to it.
    """
    mode = sandbox.get("mode", "same")
    if mode == "same":
        me = pwd.getpwuid(os.geteuid())
        return Account(me.pw_name, me.pw_uid, me.pw_gid)
    name = str(sandbox["user"]) if mode == "user" else tenant_user(sandbox["prefix"], tenant)
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        if mode != "tenant" or not sandbox.get("create_users") or os.geteuid() != 0:
            raise _SandboxError(
                f"no user {name} on this node: create it (useradd --system {name}) on every "
                "node, or run the Ray workers as root so that fairshare makes it"
            ) from None
        _add_user(name, os.path.join(root, tenant_slug(tenant)), root)
        entry = pwd.getpwnam(name)
    if entry.pw_uid == 0 or entry.pw_uid == os.geteuid():
        raise _SandboxError(f"the task user {name} must not be root or the worker's own user")
    if not can_switch_users():
        raise _SandboxError(
            f"this Ray worker (uid {os.geteuid()}) cannot run tasks as {name}: run the Ray "
            "workers as root or with CAP_SETUID and CAP_SETGID"
        )
    return Account(name, entry.pw_uid, entry.pw_gid)


def can_switch_users() -> bool:
    """Whether this process may run children as another user: ``CAP_SETUID`` and
    ``CAP_SETGID`` in its effective capabilities (Linux's ``/proc/self/status``; root
    without them cannot either), or, where the system does not say, root.

    Returns
    -------
    bool
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    bits = int(line.split()[1], 16)
                    return bool(bits & (1 << 6)) and bool(bits & (1 << 7))
    except (OSError, ValueError, IndexError):
        pass
    return os.geteuid() == 0


def tenant_directory(root: str, tenant: str, account: Account) -> str:
    """The tenant's directory on this node, ``ROOT/SLUG``: made (mode 0700, owned by
    ``account``) or checked (a directory, not a link, owned by ``account``; its mode set
    back to 0700).

    Parameters
    ----------
    root : str
        The tenants' directories (checked by :func:`_private_root`).
    tenant : str
        The tenant.
    account : Account
        Its task user.

    Returns
    -------
    str
        The directory's path.

    Raises
    ------
    _SandboxError
        It exists and belongs to another user, or cannot be made.
    """
    _private_root(root)
    path = os.path.join(root, tenant_slug(tenant))
    try:
        os.mkdir(path, 0o700)
        if os.geteuid() != account.uid:
            os.chown(path, account.uid, account.gid)
    except FileExistsError:
        pass
    except OSError as err:
        raise _SandboxError(f"cannot make {path}: {err.strerror}") from None
    info = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or info.st_uid != account.uid:
        raise _SandboxError(f"{path} is not a directory owned by {account.name}")
    if info.st_mode & 0o777 != 0o700:
        os.chmod(path, 0o700)
    return path


def _log_files(directory: str, key: str, account: Account) -> tuple[int, int]:
    """Open ``logs/KEY.out`` and ``.err`` in the tenant's directory for writing, never
    following a link the task may have left there (``O_NOFOLLOW``, ``O_EXCL``)."""
    name = output_name(key)
    top = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir("logs", 0o700, dir_fd=top)
        logs = os.open("logs", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
    finally:
        os.close(top)
    try:
        info = os.fstat(logs)
        if info.st_uid == os.geteuid() and info.st_uid != account.uid:
            os.fchown(logs, account.uid, account.gid)
        elif info.st_uid != account.uid:
            raise _SandboxError(f"{directory}/logs is not owned by {account.name}")
        descriptors: list[int] = []
        try:
            _open_logs(logs, name, directory, account, descriptors)
        except BaseException:
            for fd in descriptors:
                os.close(fd)
            raise
        return descriptors[0], descriptors[1]
    finally:
        os.close(logs)


def _open_logs(
    logs: int, name: str, directory: str, account: Account, descriptors: list[int]
) -> None:
    """Open ``NAME.out`` and ``NAME.err`` in the directory ``logs`` (a descriptor), each new
    (a file or link left there is removed first), into ``descriptors``."""
    for suffix in ("out", "err"):
        for _ in range(2):
            try:
                fd = os.open(
                    f"{name}.{suffix}",
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                    0o600,
                    dir_fd=logs,
                )
                break
            except FileExistsError:  # a retried attempt's old file, or a task's trap
                os.unlink(f"{name}.{suffix}", dir_fd=logs)
        else:
            raise _SandboxError(f"{name}.{suffix} in {directory}/logs keeps coming back")
        descriptors.append(fd)
        if os.geteuid() != account.uid:
            os.fchown(fd, account.uid, account.gid)


def output_name(key: str) -> str:
    """The file name (less ``.out``/``.err``) of attempt ``key``'s output in its tenant's
    ``logs`` directory: ``JOB.INDEX.ATTEMPT`` for the driver's ``JOB:INDEX:ATTEMPT``.

    Parameters
    ----------
    key : str
        The attempt's key.

    Returns
    -------
    str

    Examples
    --------
    >>> output_name("0123abcd:4:1")
    '0123abcd.4.1'
    """
    return re.sub(r"[^A-Za-z0-9_.-]", ".", key) or "task"


def read_output(
    sandbox: Mapping[str, Any], tenant: str, key: str, stream: str, offset: int, limit: int
) -> bytes | None:
    """Up to ``limit`` bytes from ``offset`` of attempt ``key``'s standard output
    (``stream`` ``"out"``) or error (``"err"``) on this node (what ``fairshare logs`` reads,
    in a Ray task pinned to the node that ran the attempt). The task's user owns its
    directory, so every step is opened without following a link (``O_NOFOLLOW``) and the
    file must be a regular file owned by the tenant directory's owner: a tenant cannot
    make this read another tenant's file or the service's.

    Parameters
    ----------
    sandbox : mapping
        The tasks' sandbox (its ``root``: :func:`task_root`).
    tenant : str
        The attempt's tenant.
    key : str
        The attempt's key.
    stream : {"out", "err"}
        Which file.
    offset, limit : int
        Where to start, and the most bytes to return.

    Returns
    -------
    bytes or None
        Empty: no such file in the tenant's ``logs`` (an attempt that wrote nothing there,
        or has not started); None: no such directory on this node, or not one to read.

    Examples
    --------
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(root, "bob", "logs"))
    >>> with open(os.path.join(root, "bob", "logs", "j.0.0.out"), "wb") as file:
    ...     _ = file.write(b"hello\\n")
    >>> read_output({"root": root}, "bob", "j:0:0", "out", 1, 3)
    b'ell'
    >>> read_output({"root": root}, "bob", "j:0:1", "out", 0, 3)
    b''
    >>> read_output({"root": root}, "carol", "j:0:0", "out", 0, 3) is None
    True
    """
    if stream not in ("out", "err"):
        raise ValueError(f"stream must be out or err, not {stream!r}")
    descriptors: list[int] = []
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        top = os.open(task_root(sandbox), flags | os.O_DIRECTORY)
        descriptors.append(top)
        home = os.open(tenant_slug(tenant), flags | os.O_DIRECTORY, dir_fd=top)
        descriptors.append(home)
        owner = os.fstat(home).st_uid
        logs = os.open("logs", flags | os.O_DIRECTORY, dir_fd=home)
        descriptors.append(logs)
        try:
            fd = os.open(f"{output_name(key)}.{stream}", flags, dir_fd=logs)
        except FileNotFoundError:
            return b""  # an empty output leaves no file (see _drop_empty)
        descriptors.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != owner or info.st_nlink != 1:
            return None
        return os.pread(fd, max(0, limit), max(0, offset))
    except OSError:
        return None
    finally:
        for fd in descriptors:
            os.close(fd)


MIN_MEMORY_LIMIT = 64 << 20
"""The smallest address-space cap a task gets (bytes): below it no program starts."""


def task_memory_limit(sandbox: Mapping[str, Any] | None) -> int | None:
    """The address-space cap (``RLIMIT_AS``, bytes) of a sandboxed task: its ``memory``
    (the demand's ``mem``), at least :data:`MIN_MEMORY_LIMIT`; None without one.

    Parameters
    ----------
    sandbox : mapping or None
        The task's sandbox.

    Returns
    -------
    int or None

    Examples
    --------
    >>> task_memory_limit({"memory": 2 << 30}), task_memory_limit({"memory": 1})
    (2147483648, 67108864)
    >>> task_memory_limit({}) is None, task_memory_limit(None) is None
    (True, True)
    """
    if sandbox is None or not sandbox.get("memory"):
        return None
    return max(MIN_MEMORY_LIMIT, int(sandbox["memory"]))


def popen_arguments(
    argv: list[str],
    env: Mapping[str, str],
    account: Account | None,
    directory: str | None,
    *,
    no_network: bool = False,
) -> dict[str, Any]:
    """The keyword arguments of :class:`subprocess.Popen` for a sandboxed task (or, with
    ``account`` None, for an unsandboxed one: the worker's environment plus ``env``).

    Parameters
    ----------
    argv : list of str
        The command (checked by Popen itself).
    env : mapping of str to str
        The task's own variables.
    account : Account or None
        Its user; None: no sandbox.
    directory : str or None
        Its tenant's directory (its cwd and ``HOME``).
    no_network : bool
        It gets a network namespace of its own, and its user is switched after that, by
        the child itself (not by Popen).

    Returns
    -------
    dict
        ``env``, ``cwd``, ``user``, ``group``, ``extra_groups``, ``start_new_session``,
        ``umask`` (0077: what it writes is its own).

    Examples
    --------
    >>> kwargs = popen_arguments(["true"], {"FAIRSHARE_JOB_ID": "j"},
    ...                          Account("fairshare-t-bob", 990, 990), "/srv/t/bob")
    >>> {k: kwargs[k] for k in ("cwd", "user", "group", "extra_groups", "umask")}
    {'cwd': '/srv/t/bob', 'user': 990, 'group': 990, 'extra_groups': [], 'umask': 63}
    >>> kwargs["start_new_session"], sorted(kwargs["env"])
    (True, ['FAIRSHARE_JOB_ID', 'HOME', 'LANG', 'PATH'])
    """
    if account is None:
        return {"env": {**os.environ, **env}, "start_new_session": True}
    home = directory or "/"
    kwargs: dict[str, Any] = {
        "env": task_environment(env, home),
        "cwd": home,
        "start_new_session": True,
        "umask": 0o077,
    }
    if account.uid != os.geteuid() and not no_network:
        kwargs.update(user=account.uid, group=account.gid, extra_groups=[])
    return kwargs


def _libc() -> Any:
    """The C library, loaded in the worker (a forked child only calls into it)."""
    return ctypes.CDLL(None, use_errno=True)


def _child_setup(
    libc: Any, account: Account | None, no_network: bool, memory: int | None = None
) -> Any:
    """What the child runs before exec: with ``no_network``, a network namespace of its own
    (``unshare(CLONE_NEWNET)``: no interface up, not even loopback) and then its user
    switched here (as root; Popen would switch it first, and the unshare would be refused);
    then, in every case, die when the worker dies (``PR_SET_PDEATHSIG``, so a forced cancel,
    which kills the worker, kills the command too) and gain no privilege from a set-user-ID
    program (``PR_SET_NO_NEW_PRIVS``); with ``memory``, its address space capped at that
    many bytes (``RLIMIT_AS``: an allocation past it fails). Raises in the child: Popen
    then fails."""
    # Built here, in the parent: the child only makes system calls.
    limit = (ctypes.c_ulong * 2)(memory, memory) if memory is not None else None

    def setup() -> None:
        if no_network:
            assert account is not None
            for call, args in (
                (libc.unshare, (_CLONE_NEWNET,)),
                (libc.setgroups, (0, None)),
                (libc.setresgid, (account.gid,) * 3),
                (libc.setresuid, (account.uid,) * 3),
            ):
                if call(*args) != 0:
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        if limit is not None and libc.setrlimit(resource.RLIMIT_AS, ctypes.byref(limit)) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)

    return setup


class _Capture:
    """A task's two pipes read into its files (each cut at :data:`OUTPUT_CAP`) and the end
    of its standard error kept for its job's error."""

    def __init__(self, out: int | None, err: int | None) -> None:
        self.files = {1: out, 2: err}
        self.written = {1: 0, 2: 0}
        self.tail = b""

    def take(self, stream: int, data: bytes) -> None:
        if stream == 2:
            self.tail = (self.tail + data)[-4 * STDERR_TAIL :]
        fd = self.files[stream]
        if fd is None:
            return
        room = OUTPUT_CAP - self.written[stream]
        if room > 0:
            chunk = data[:room]
            os.write(fd, chunk)
            self.written[stream] += len(chunk)
            if len(data) > room:
                os.write(fd, f"\n[fairshare: output cut at {OUTPUT_CAP} bytes]\n".encode())
                self.written[stream] = OUTPUT_CAP + 1

    def close(self) -> None:
        for fd in self.files.values():
            if fd is not None:
                os.close(fd)


def _drop_empty(directory: str, key: str, capture: _Capture) -> None:
    """Remove the attempt's output files it wrote nothing to: two files per attempt, most of
    them empty, filled a node's inodes and directories (20,000 files per 10,000 jobs);
    :func:`read_output` reads a missing one as empty. Opened without following a link,
    as :func:`_log_files` made them."""
    empty = [s for s, n in (("out", capture.written[1]), ("err", capture.written[2])) if n == 0]
    if not empty:
        return
    with contextlib.suppress(OSError):
        top = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            logs = os.open("logs", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
        finally:
            os.close(top)
        try:
            for suffix in empty:
                with contextlib.suppress(OSError):
                    os.unlink(f"{output_name(key)}.{suffix}", dir_fd=logs)
        finally:
            os.close(logs)


def _ended(pid: int) -> bool:
    """Whether child ``pid`` has exited, without reaping it (its id stays its own, so that
    its process group can still be killed safely)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _pump(process: subprocess.Popen[bytes], capture: _Capture) -> int:
    """Read the task's pipes until it ends (then what is left in them); kill what it left
    running in its session; its exit code."""
    streams = {1: process.stdout, 2: process.stderr}
    with selectors.DefaultSelector() as selector:
        for number, stream in streams.items():
            if stream is not None:
                selector.register(stream, selectors.EVENT_READ, number)
        ended = False
        while selector.get_map():
            for key, _ in selector.select(timeout=0.0 if ended else 0.5):
                data = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
                if data:
                    capture.take(key.data, data)
                else:
                    selector.unregister(key.fileobj)
            if ended:
                break
            ended = _ended(process.pid)
    if not ended:
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
    # Its own session: what it started and left behind goes with it (the leader, not yet
    # reaped, keeps the group's id from being reused meanwhile).
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    for stream in streams.values():
        if stream is not None:
            stream.close()
    return process.wait()


def run_command(
    argv: list[str], env: dict[str, str], sandbox: Mapping[str, Any] | None = None
) -> tuple[int, str]:
    """Run ``argv``: in the sandbox that ``sandbox`` describes (see the module), or, with
    None, with ``env`` added to the worker's environment (a benchmark's bare tasks); its exit
    code and the end of its standard error.

    Parameters
    ----------
    argv : list of str
        The command and its arguments.
    env : dict of str to str
        The task's own variables (``FAIRSHARE_TASK_INDEX``, ...).
    sandbox : mapping, optional
        ``mode``, ``user``/``prefix``, ``create_users``, ``root`` (:func:`task_account`,
        :func:`task_root`), ``network`` (``"none"``: a network namespace of its own), and
        the task's ``tenant``, ``key`` (its files' name) and ``memory`` (bytes of address
        space it may map: :func:`task_memory_limit`).

    Returns
    -------
    (int, str)
        The exit code (127: the command could not be run; 126: its sandbox could not be
        set up) and the last :data:`STDERR_TAIL` characters of its standard error.

    Examples
    --------
    >>> run_command(["true"], {})
    (0, '')
    >>> run_command(["sh", "-c", "echo task $FAIRSHARE_TASK_INDEX >&2; exit 3"],
    ...             {"FAIRSHARE_TASK_INDEX": "4"})
    (3, 'task 4')
    """
    account: Account | None = None
    directory: str | None = None
    out = err = None
    no_network = sandbox is not None and sandbox.get("network") == "none"
    memory = task_memory_limit(sandbox)
    if sandbox is not None:
        tenant = str(sandbox.get("tenant", ""))
        try:
            if no_network and os.geteuid() != 0:
                raise _SandboxError(
                    "a task without network (--task-network none) needs the Ray workers to "
                    "run as root"
                )
            root = task_root(sandbox)
            _private_root(root)
            account = task_account(sandbox, tenant, root)
            directory = tenant_directory(root, tenant, account)
            out, err = _log_files(directory, str(sandbox.get("key", "task")), account)
        except _SandboxError as error:
            return SANDBOX_FAILED, f"sandbox: {error}"
        except OSError as error:
            return SANDBOX_FAILED, f"sandbox: {error.strerror or error}"
    capture = _Capture(out, err)
    try:
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if sandbox is not None else None,
                stderr=subprocess.PIPE,
                # Only system calls through a library loaded here (async-signal-safe).
                preexec_fn=_child_setup(_libc(), account, no_network, memory),  # noqa: PLW1509
                **popen_arguments(argv, env, account, directory, no_network=no_network),
            )
        except OSError as error:
            return 127, f"cannot run {argv[0]!r}: {error.strerror or error}"
        code = _pump(process, capture)
    finally:
        capture.close()
        if directory is not None:
            _drop_empty(directory, str(sandbox.get("key", "task")) if sandbox else "", capture)
    tail = capture.tail.decode("utf-8", errors="replace")[-STDERR_TAIL:].strip()
    if memory is not None and code != 0 and out_of_memory(code, tail):
        tail = memory_reason(memory) + (f": {tail}" if tail else "")
    return code, tail


_NO_MEMORY = re.compile(
    r"MemoryError|Cannot allocate memory|bad_alloc|out of memory|ENOMEM|memory exhausted",
    re.IGNORECASE,
)


def out_of_memory(code: int, tail: str) -> bool:
    """Whether a capped task's failure looks like its cap (``RLIMIT_AS`` makes an allocation
    fail, not the process die): what a program prints when an allocation fails (Python's
    ``MemoryError``, C's ``Cannot allocate memory``, C++'s ``std::bad_alloc``, ...), or a
    death by a signal (a program that does not check ``malloc`` crashes).

    Parameters
    ----------
    code : int
        The exit code (negative: the signal that ended it).
    tail : str
        The end of its standard error.

    Returns
    -------
    bool

    Examples
    --------
    >>> out_of_memory(1, "MemoryError"), out_of_memory(-11, ""), out_of_memory(1, "no such file")
    (True, True, False)
    """
    return code < 0 or _NO_MEMORY.search(tail) is not None


def memory_reason(memory: int) -> str:
    """The reason a job's error starts with when its task failed at its memory cap.

    Parameters
    ----------
    memory : int
        The cap, in bytes.

    Returns
    -------
    str

    Examples
    --------
    >>> memory_reason(256 << 20)
    'out of memory: the task may map at most 256 MiB (its demand mem, RLIMIT_AS)'
    """
    cap = f"{memory / 2**20:g} MiB"
    return f"out of memory: the task may map at most {cap} (its demand mem, RLIMIT_AS)"


ATTEMPT_VARIABLES = (
    "FAIRSHARE_SERVICE",
    "FAIRSHARE_JOB_ID",
    "FAIRSHARE_TASK_INDEX",
    "FAIRSHARE_ATTEMPT",
)
"""The variables that name a task's attempt in its environment (and its children's)."""


def _attempt_processes(wanted: Mapping[bytes, bytes]) -> list[int]:
    """The processes of this node whose environment holds every ``wanted`` variable with
    its value (``/proc/PID/environ``: the environment they started with)."""
    me = os.getpid()
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                raw = environ.read()
        except OSError:
            continue  # ended, or not ours to read
        have = dict(item.partition(b"=")[::2] for item in raw.split(b"\0") if item)
        if all(have.get(key) == value for key, value in wanted.items()):
            found.append(int(name))
    return found


def stop_attempt(env: Mapping[str, str], settle: float = 1.0, wait: float = 10.0) -> int:
    """Kill (``SIGKILL``) every process on this node that runs attempt ``env`` names: its
    command and all it started, whether they stayed in the command's session or left it
    (``setsid``, a daemon's double fork), found by the attempt's variables
    (:data:`ATTEMPT_VARIABLES`), which every child inherits. What the executor runs, on
    the attempt's node, after a forced cancel: that kills the Ray worker, and the
    command's leader with it (``PR_SET_PDEATHSIG``), but not the leader's children, which
    Ray never knew (``sh -c 'sleep 100 & sleep 100'`` left its first ``sleep`` running).

    Looks again until no such process has been seen for ``settle`` seconds (the cancel may
    reach the worker after this starts), at most ``wait`` seconds. Needs to read the
    tasks' ``/proc/PID/environ`` and signal them: a worker running as root, or as the
    tasks' own user (``--insecure-same-user``). A process that replaced its environment
    (``env -i``) and left the session is not found.

    Parameters
    ----------
    env : mapping of str to str
        The attempt's variables (those of :data:`ATTEMPT_VARIABLES` it has).
    settle, wait : float
        Seconds.

    Returns
    -------
    int
        How many processes were killed.

    Examples
    --------
    >>> stop_attempt({"FAIRSHARE_JOB_ID": "no-such-job", "FAIRSHARE_TASK_INDEX": "0",
    ...               "FAIRSHARE_ATTEMPT": "0"}, settle=0.0, wait=0.0)
    0
    """
    wanted = {key.encode(): str(env[key]).encode() for key in ATTEMPT_VARIABLES if key in env}
    if b"FAIRSHARE_JOB_ID" not in wanted:
        return 0
    killed = 0
    start = last = time.monotonic()
    while True:
        now = time.monotonic()
        for pid in _attempt_processes(wanted):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
            last = now
        if now - last >= settle or now - start >= wait:
            return killed
        time.sleep(0.05)
