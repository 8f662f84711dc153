"""The output directory of ``fairshare simulate`` and ``fairshare compare`` (``--out DIR``).

A run writes its files into a hidden staging directory on DIR's file system and moves them
into place only once every file is written, so a rejected input (even a corrupt trace record
found mid-run), a full disk or a signal leaves DIR as it was (SPEC section 4: nothing is
written to ``--out`` when the input is rejected).

- The staging directory is a sibling of DIR (in its parent, or in the nearest existing ancestor
  when the parents are still to be created), so publishing a new DIR is one atomic rename.
  When DIR exists and is a mount point (a mounted volume), staging goes inside DIR instead,
  on the volume; likewise when DIR's parent is not writable (``--out .`` in a home
  directory). Should a rename still cross a device (a bind mount), the file is copied beside
  its destination and renamed there: the results are never lost to ``EXDEV``.
- Every DIR fairshare writes holds a marker, ``.fairshare-output`` (JSON: the command, the
  fairshare version, the files written). An existing DIR is used when it is empty or holds a
  marker: what the marker lists is replaced and whatever it listed that the new run does not
  write is deleted, so no stale result of an earlier run stays. Anything else in DIR is the
  user's and is never deleted. A non-empty DIR without a marker is refused unless ``force``:
  then the outputs are written beside the files there, replacing same-named files (a
  directory in an output's way is still refused).
- New directories get the mode the umask gives (not ``mkdtemp``'s 0700).
- While the staging directory exists, SIGINT, SIGTERM and SIGHUP raise :class:`Terminated`,
  so the staging directory is removed on the way out and nothing is published (the CLI exits
  with 128 + the signal's number); during the final moves and the clean-up a signal is
  noted and acted on once they are done.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from fairshare.report.outdir import OutDirError, OutputDir, read_marker
>>> with tempfile.TemporaryDirectory() as tmp:
...     out = OutputDir(f"{tmp}/run", command="simulate", files=["summary.json"], force=False)
...     with out:
...         _ = out.commit(lambda staging: (staging / "summary.json").write_text("{}"))
...     print(read_marker(Path(tmp) / "run"), sorted(p.name for p in Path(tmp, "run").iterdir()))
('summary.json',) ['.fairshare-output', 'summary.json']

A directory of the user's is refused:

>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = Path(tmp, "notes.txt").write_text("mine")
...     try:
...         OutputDir(tmp, command="simulate", files=["summary.json"], force=False)
...     except OutDirError as error:
...         print(error.what.split(";")[0])
is not empty and holds no .fairshare-output (not a fairshare output)
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import shutil
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath
from types import FrameType, TracebackType
from typing import Any, TypeVar

# Loaded before any handler is installed, never lazily under one: numpy.random's Cython
# modules swallow an exception raised while they are set up (the signal then waited for the
# end of the run) or turn it into ImportError (a traceback and exit 1 instead of 128 + the
# signal's number). A run draws from it first after the staging directory is made.
import numpy.random  # noqa: F401

from fairshare import __version__
from fairshare.errors import FairshareError

MARKER = ".fairshare-output"
"""The file naming what fairshare wrote in an output directory."""
STAGING_PREFIX = ".fairshare-staging-"
"""Hidden directories (and cross-device temporary files) that exist only during a run."""
_MARKER_LIMIT = 1 << 20
_DEFAULT_HANDLERS: dict[int, object] = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGTERM: signal.SIG_DFL,
    signal.SIGHUP: signal.SIG_DFL,
}
"""The signals that remove the staging directory, with the handler each has by default."""
_NOT_WRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
"""The errnos of a directory the staging directory cannot be made in."""
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

T = TypeVar("T")


class OutDirError(FairshareError):
    """DIR cannot be used, or the results cannot be written there.

    An input or environment problem the user must fix: the CLI reports
    ``error: FILE: --out: WHAT`` with exit 2.

    Parameters
    ----------
    file : str
        The path at fault (DIR, a file in it, or ``command line``).
    what : str
        What is wrong and what to do.
    """

    def __init__(self, file: str, what: str) -> None:
        super().__init__(f"{file}: {what}")
        self.file = file
        self.what = what


class Terminated(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived while results were staged.

    A ``BaseException``, like ``KeyboardInterrupt``, so that no ``except Exception`` on the way
    swallows it; the CLI exits with 128 + the signal's number.

    Parameters
    ----------
    signum : int
        The signal's number.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _reason(err: OSError) -> str:
    """The reason an ``OSError`` gives, for a message."""
    return err.strerror or str(err)


def _lstat(path: Path) -> os.stat_result | None:
    """``os.lstat``, or None when nothing is there; any other failure is the user's to fix."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise OutDirError(str(path), f"cannot use this path ({_reason(err)})") from None


def _safe_relative(entry: object) -> str | None:
    """A marker entry, if it names a path inside the directory (never ``..`` or absolute)."""
    if not isinstance(entry, str) or not entry or "\0" in entry or "\\" in entry:
        return None
    path = PurePosixPath(entry)
    if path.is_absolute() or str(path) != entry or any(p in ("", ".", "..") for p in path.parts):
        return None
    if entry == MARKER or path.parts[0].startswith(STAGING_PREFIX):
        return None
    return entry


def read_marker(directory: Path) -> tuple[str, ...] | None:
    """The files a previous run listed in ``directory``'s marker.

    Parameters
    ----------
    directory : Path
        An output directory.

    Returns
    -------
    tuple of str or None
        The relative paths listed; None if there is no marker fairshare wrote (missing,
        unreadable, too large, not a regular file, or naming paths outside the directory).
    """
    try:
        with open(directory / MARKER, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            raw = handle.read(_MARKER_LIMIT + 1)
        document = json.loads(raw) if len(raw) <= _MARKER_LIMIT else None
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        return None
    files = [_safe_relative(entry) for entry in document["files"]]
    return None if any(f is None for f in files) else tuple(f for f in files if f is not None)


def _marker_text(command: str, files: Iterable[str]) -> str:
    """The marker's JSON text: the command, the version, the sorted files."""
    document = {"command": command, "version": __version__, "files": sorted(set(files))}
    return json.dumps(document, indent=2) + "\n"


def _ancestors(relative: str) -> list[str]:
    """``a/b/c`` -> ``["a", "a/b"]``."""
    parts = PurePosixPath(relative).parts
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _in_the_way(out: Path, files: Sequence[str], previous: Sequence[str], force: bool) -> None:
    """Refuse before anything moves if an output would replace what fairshare did not write:
    a directory where a file goes, a file where a directory goes, or (without ``force``) a
    same-named file the marker does not list."""
    ours = set(previous) | {MARKER}
    for relative in files:
        for ancestor in _ancestors(relative):
            found = _lstat(out / ancestor)
            if found is not None and not stat.S_ISDIR(found.st_mode) and ancestor not in ours:
                raise OutDirError(
                    str(out / ancestor),
                    "is in the way of fairshare's output directory and fairshare deletes "
                    "nothing it did not write; move it or choose another --out",
                )
        found = _lstat(out / relative)
        if found is None:
            continue
        if stat.S_ISDIR(found.st_mode):
            raise OutDirError(
                str(out / relative),
                "is a directory where fairshare writes a file, and fairshare deletes nothing it "
                "did not write; move it or choose another --out",
            )
        if relative not in ours and not force:
            raise OutDirError(
                str(out / relative),
                "exists and was not written by fairshare; move it, or pass --force to overwrite it",
            )


def _real_directories(out: Path, relative: str) -> bool:
    """Whether every directory on the way to ``relative`` is a directory inside ``out`` (not
    a symbolic link a user put there, through which a delete would reach another place)."""
    for ancestor in _ancestors(relative):
        found = _lstat(out / ancestor)
        if found is None or not stat.S_ISDIR(found.st_mode):
            return False
    return True


def _move(source: Path, target: Path) -> None:
    """Move one file into place atomically, copying beside the target first when the rename
    would cross a device (a bind mount can, even on one file system)."""
    try:
        os.replace(source, target)
    except OSError as err:
        if err.errno != errno.EXDEV:
            raise
        beside = target.with_name(STAGING_PREFIX + target.name)
        try:
            shutil.copyfile(source, beside)
            os.replace(beside, target)
        except BaseException:
            beside.unlink(missing_ok=True)
            raise


class OutputDir:
    """The ``--out DIR`` of one command: checked when made, staged while used, then published.

    Made before any work, so a DIR that cannot be used is refused first; used as a context
    manager, which creates the staging directory and removes whatever is left of it on the
    way out; :meth:`commit` writes into the staging directory and publishes.

    Parameters
    ----------
    text : str
        DIR, as the user wrote it.
    command : str
        The command writing it (``simulate``, ``compare``), recorded in the marker.
    files : Sequence of str
        The paths, relative to DIR, the command will write: checked against what is in DIR
        now, and again against what was really written before publishing.
    force : bool
        Write beside the files of a non-empty DIR without a marker (``--force``).

    Raises
    ------
    OutDirError
        DIR cannot be used: not a directory, a dangling link, unreadable, not empty and not
        fairshare's (without ``force``), or a path in an output's way.
    """

    def __init__(self, text: str, *, command: str, files: Sequence[str], force: bool) -> None:
        if not text.strip():
            raise OutDirError("command line", f"must name a directory, got {text!r}")
        self.out = Path(text)
        self.command = command
        self.force = force
        self.previous: tuple[str, ...] = ()
        self.staging: Path | None = None
        self._handlers: dict[int, _Handler] = {}
        self._signalled: int | None = None
        self._deferring = 0
        target = self._existing_directory()
        self.exists = target is not None
        if target is None:
            self._anchor = self._nearest_existing_ancestor()
            return
        self._anchor = self.out.absolute().parent
        anchor = os.stat(self._anchor)
        if os.path.ismount(self.out.resolve()) or anchor.st_dev != target.st_dev:
            self._anchor = self.out
        self._check_existing(files)

    def _existing_directory(self) -> os.stat_result | None:
        """DIR's status if it exists (through a symbolic link); an error if it is not a
        directory.
        """
        found = _lstat(self.out)
        if found is None:
            return None
        if stat.S_ISLNK(found.st_mode):
            try:
                found = os.stat(self.out)
            except FileNotFoundError:
                raise OutDirError(
                    str(self.out),
                    f"is a dangling symbolic link (to {os.readlink(self.out)!r}); remove it or "
                    "point it at a directory",
                ) from None
            except OSError as err:
                raise OutDirError(str(self.out), f"cannot use this path ({_reason(err)})") from None
        if not stat.S_ISDIR(found.st_mode):
            raise OutDirError(str(self.out), "exists and is not a directory")
        return found

    def _nearest_existing_ancestor(self) -> Path:
        """The closest ancestor of DIR that exists (where a new DIR is staged)."""
        anchor = self.out.absolute().parent
        while _lstat(anchor) is None:
            anchor = anchor.parent
        return anchor

    def _check_existing(self, files: Sequence[str]) -> None:
        """Refuse an existing DIR that is not empty and not fairshare's (unless ``force``)."""
        try:
            entries = os.listdir(self.out)
        except OSError as err:
            raise OutDirError(str(self.out), f"cannot read it ({_reason(err)})") from None
        # A staging directory left by a run that was killed (SIGKILL) is not the user's data.
        entries = [e for e in entries if not e.startswith(STAGING_PREFIX)]
        if not entries:
            return
        if MARKER in entries:
            previous = read_marker(self.out)
            if previous is None and not self.force:
                raise OutDirError(
                    str(self.out / MARKER),
                    "is not a marker fairshare can read; remove it, or pass --force to "
                    "write beside the files there",
                )
            self.previous = previous or ()
        elif not self.force:
            raise OutDirError(
                str(self.out),
                f"is not empty and holds no {MARKER} (not a fairshare output); choose a new "
                "or empty directory, or pass --force to write beside the files there",
            )
        _in_the_way(self.out, files, self.previous, self.force)

    def __enter__(self) -> OutputDir:
        if threading.current_thread() is threading.main_thread():
            for signum, default in _DEFAULT_HANDLERS.items():
                # A signal the parent ignores (nohup, a background job) stays ignored.
                if signal.getsignal(signum) is default:
                    self._handlers[signum] = signal.signal(signum, self._on_signal)
        try:
            self._make_staging()
        except BaseException as err:
            self.__exit__(type(err), err, err.__traceback__)
            if isinstance(err, OSError):
                raise OutDirError(str(self.out), f"cannot write there ({_reason(err)})") from None
            raise
        return self

    def _make_staging(self) -> None:
        """Create the staging directory with ``os.mkdir``, so it gets the umask's mode (not
        ``mkdtemp``'s 0700), and record it before any signal can be handled. An existing DIR
        whose parent is not writable (``--out .`` in a home directory) is staged inside."""
        anchors = [self._anchor]
        if self.exists and self._anchor != self.out:
            anchors.append(self.out)
        for anchor in anchors:
            try:
                with self._signals_deferred():
                    self.staging = self._new_directory(anchor)
                return
            except OSError as err:
                if anchor is anchors[-1] or err.errno not in _NOT_WRITABLE:
                    raise

    @staticmethod
    def _new_directory(anchor: Path) -> Path:
        """A fresh staging directory in ``anchor``, named by the process and a counter."""
        for attempt in itertools.count():
            candidate = anchor / f"{STAGING_PREFIX}{os.getpid()}-{attempt}"
            try:
                os.mkdir(candidate)
            except FileExistsError:
                continue
            return candidate
        raise AssertionError("unreachable")

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """The handler of the staging signals: raise :class:`Terminated` unless deferred."""
        # Raised wherever the interpreter happens to be, except in a deferred section. Some
        # third-party code swallows exceptions (Cython's module set-up, lazily importing
        # numpy.random, does): the flag makes commit() and __exit__ raise it again, so a
        # signal is never lost.
        self._signalled = signum
        if not self._deferring:
            raise Terminated(signum)

    @contextmanager
    def _signals_deferred(self) -> Iterator[None]:
        """A section a signal must not cut in two (a directory made but not yet recorded,
        files half moved): a signal is only noted, and raised when the section ends. (Masking
        it with ``pthread_sigmask`` would not do: another thread, such as a BLAS worker,
        takes the signal and the interpreter runs the handler in the main thread anyway.)"""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
        if not self._deferring and self._signalled is not None:
            raise Terminated(self._signalled)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._deferring += 1  # from here on a signal is only noted
        self.discard()
        self._restore_handlers()
        if kind is None and self._signalled is not None:
            raise Terminated(self._signalled)

    def _restore_handlers(self) -> None:
        """Put back the signal handlers :meth:`__enter__` replaced."""
        for signum, handler in self._handlers.items():
            signal.signal(signum, handler)
        self._handlers.clear()

    def discard(self) -> None:
        """Remove the staging directory and what is left in it."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None

    def commit(self, write: Callable[[Path], T]) -> T:
        """Run ``write`` on the staging directory, then publish what it wrote to DIR.

        Parameters
        ----------
        write : callable
            Writes the outputs into the directory it is given and returns a result.

        Returns
        -------
        T
            What ``write`` returned.

        Raises
        ------
        OutDirError
            Writing or publishing failed (a full disk, a file-size limit).
        Terminated
            A signal arrived while staging; nothing was published.
        RuntimeError
            Called outside the ``with`` block.
        """
        staging = self.staging
        if staging is None:
            raise RuntimeError("OutputDir.commit outside its with block")
        try:
            result = write(staging)
            files = sorted(
                str(path.relative_to(staging).as_posix())
                for path in staging.rglob("*")
                if path.is_file()
            )
            if self._signalled is not None:
                raise Terminated(self._signalled)
            with self._signals_deferred():
                self._publish(staging, files)
        except OSError as err:
            raise OutDirError(str(self.out), f"cannot write the results ({_reason(err)})") from None
        return result

    def _publish(self, staging: Path, files: list[str]) -> None:
        """Move the staged files to DIR: one rename for a new DIR, file by file into an
        existing one.
        """
        if not self.exists:
            (staging / MARKER).write_text(_marker_text(self.command, files), encoding="utf-8")
            self.out.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(staging, self.out)
            except OSError as err:
                if err.errno != errno.EXDEV:
                    raise
                os.mkdir(self.out)
            else:
                self.staging = None
                return
        self._replace(staging, files)

    def _replace(self, staging: Path, files: list[str]) -> None:
        """Publish into an existing DIR. The marker lists the union of the old and new files
        until the end, so whatever point a crash stops at, the next run knows what is
        fairshare's."""
        _in_the_way(self.out, files, self.previous, self.force)
        stale = sorted(set(self.previous) - set(files))
        self._write_marker(staging, [*self.previous, *files])
        for relative in stale:
            path = self.out / relative
            found = _lstat(path) if _real_directories(self.out, relative) else None
            if found is not None and not stat.S_ISDIR(found.st_mode):
                path.unlink()
        for relative in files:
            for ancestor in _ancestors(relative):
                path = self.out / ancestor
                found = _lstat(path)
                if found is not None and not stat.S_ISDIR(found.st_mode):
                    path.unlink()  # a stale file of the marker's (checked above)
                    found = None
                if found is None:
                    os.mkdir(path)
            _move(staging / relative, self.out / relative)
        # Directories that held only stale results go too; rmdir never removes a user's file.
        emptied = {a for relative in stale for a in _ancestors(relative)}
        for directory in sorted(emptied, key=lambda a: -len(PurePosixPath(a).parts)):
            with suppress(OSError):
                os.rmdir(self.out / directory)
        self._write_marker(staging, files)
        self.previous = tuple(files)

    def _write_marker(self, staging: Path, files: Iterable[str]) -> None:
        """Replace DIR's marker, listing ``files``, atomically."""
        draft = staging / MARKER
        draft.write_text(_marker_text(self.command, files), encoding="utf-8")
        _move(draft, self.out / MARKER)


__all__ = ["MARKER", "STAGING_PREFIX", "OutDirError", "OutputDir", "Terminated", "read_marker"]
