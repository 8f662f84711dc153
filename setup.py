"""Builds fairshare, compiling the online core with mypyc where a C compiler is available.

Everything else is in pyproject.toml. The modules compiled are ``fairshare.kernel``'s
``KERNEL_MODULES``; if mypyc or the C compiler fails, or ``FAIRSHARE_PURE_PYTHON_BUILD=1`` is
set, the install keeps the pure-Python modules (the same code, slower) and says so.

The compile is most of an install's time, so it is made cheap (docs/performance.md, "The
compiled kernel", has the measurements): mypyc writes one C file per module
(``multi_file``), which gcc compiles in about half the CPU time of the single 13 MB file, and
on every core at once; mypyc runs only for the commands that build (not for the metadata
that pip asks for first); a line on the terminal says what is compiled and how to skip it;
and a build is kept in a cache (``~/.cache/fairshare/kernel/KEY``, :func:`kernel_cache`), so an
install of the same sources with the same interpreter, mypy and compiler settings (a second
``pip install -e``, another virtual environment) copies the compiled kernel instead of
compiling it again.

An editable install also byte-compiles the package's sources in place
(:class:`EditableBuildPy`): pip does so for what a regular install copies, but an editable
install imports ``src/`` where nothing compiles them, and with ``PYTHONDONTWRITEBYTECODE`` set
every ``fairshare`` command compiled its modules again (0.1 CPU s of a 0.4 s ``simulate``).
"""

from __future__ import annotations

import ast
import compileall
import hashlib
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
SOURCES = ROOT / "src"


def kernel_modules() -> list[str]:
    """``KERNEL_MODULES`` read from src/fairshare/kernel.py without importing the package."""
    tree = ast.parse((SOURCES / "fairshare" / "kernel.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "KERNEL_MODULES"
        ):
            return list(ast.literal_eval(node.value))
    raise SystemExit("setup.py: KERNEL_MODULES not found in src/fairshare/kernel.py")


BUILD_COMMANDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "install", "develop"}
"""The setup commands that compile; pip's metadata steps (``egg_info``, ``dist_info``) and
``sdist`` run setup.py too, and need no compiled kernel (mypyc takes 10 CPU seconds)."""


def cores() -> int:
    """The cores this process may run on: gcc compiles that many C files at once."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def tell(message: str) -> None:
    """Writes ``message`` to stderr and, since pip hides a build's output unless run with
    ``-v``, also to the terminal pip runs in, if there is one."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    if sys.stderr.isatty():
        return
    try:
        with open("/dev/tty", "w", encoding="utf-8") as terminal:
            terminal.write("\n" + message + "\n")
    except OSError:  # no terminal (CI, a pipe): stderr is where it is seen
        pass


CACHE_ENV = "FAIRSHARE_KERNEL_CACHE"
"""A directory for the build cache, or ``0`` for none (CI sets it: CI must compile)."""
MANIFEST = "manifest.json"
"""The file of a cache entry that lists its extensions, written last: an entry without it is
incomplete (a build interrupted while storing) and is never used."""


def kernel_cache() -> Path | None:
    """The build cache's directory: ``$FAIRSHARE_KERNEL_CACHE``, none when that is ``0``,
    else ``$XDG_CACHE_HOME/fairshare/kernel`` (``~/.cache/fairshare/kernel``)."""
    chosen = os.environ.get(CACHE_ENV, "")
    if chosen == "0":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fairshare" / "kernel"


def build_key() -> str:
    """What decides the compiled code: every source of the package (mypyc reads the types of
    the modules the kernel imports, not only the kernel's), this file, the mypy settings and
    version, the interpreter, the platform and the compiler's settings."""
    digest = hashlib.sha256()
    import mypy.version  # noqa: PLC0415 - only where mypyc is available

    files = [*sorted(SOURCES.rglob("*.py")), Path(__file__).resolve(), ROOT / "kernel-mypy.ini"]
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    for part in (
        mypy.version.__version__,
        sys.version,
        sysconfig.get_platform(),
        str(sysconfig.get_config_var("EXT_SUFFIX")),
        *(os.environ.get(name, "") for name in ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS")),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:32]


class CachedKernel:
    """The cache entry of one build key: the built extensions' files, by extension name."""

    def __init__(self, root: Path, key: str) -> None:
        self.entry = root / key

    def names(self) -> list[str] | None:
        """The extensions of a complete entry, or None when there is none."""
        try:
            listed = json.loads((self.entry / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(listed, dict) or not all(
            (self.entry / str(name)).is_file() for name in listed.values()
        ):
            return None
        return sorted(listed)

    def restore(self, name: str, target: str) -> None:
        """Copies extension ``name``'s file to ``target`` with a new modification time (a
        compiled module older than its source is not loaded: ``fairshare.kernel``)."""
        listed = json.loads((self.entry / MANIFEST).read_text(encoding="utf-8"))
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.entry / listed[name], target)

    def store(self, built: dict[str, str]) -> None:
        """Keeps the files ``built`` (extension name: file), written to a temporary directory
        and renamed into place, so that two installs at once never see half an entry."""
        self.entry.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=self.entry.parent))
        listed = {}
        for name, path in built.items():
            listed[name] = Path(path).name
            shutil.copyfile(path, staging / listed[name])
        (staging / MANIFEST).write_text(json.dumps(listed, sort_keys=True), encoding="utf-8")
        try:
            staging.rename(self.entry)
        except OSError:  # another install stored the same key first
            shutil.rmtree(staging, ignore_errors=True)


CACHE: CachedKernel | None = None
"""The cache entry of this build (None: no cache), set by :func:`compiled_kernel`."""
RESTORING = False
"""True when :func:`compiled_kernel` found the kernel in the cache: the extensions are copied
from it, not compiled."""


class OptionalBuildExt(build_ext):
    """Builds the compiled kernel, or, when that fails, leaves the pure-Python modules in
    place: a failed compile must never fail the install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            self._fall_back(error)
            return
        if CACHE is not None and not RESTORING and self.extensions:
            try:
                CACHE.store({e.name: self.get_ext_fullpath(e.name) for e in self.extensions})
            except OSError as error:  # a full or read-only cache costs the next install only
                tell(f"fairshare: the compiled kernel was not cached ({error})")

    def build_extension(self, ext: Any) -> None:
        if RESTORING and CACHE is not None:
            CACHE.restore(ext.name, self.get_ext_fullpath(ext.name))
            return
        jobs = cores()
        compile_one = self.compiler.compile

        def compile_all(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
            # distutils compiles an extension's files one after the other; the kernel's are
            # independent, so they are compiled on every core, largest first.
            order = sorted(sources, key=lambda source: -Path(source).stat().st_size)
            with ThreadPoolExecutor(jobs) as pool:
                objects = pool.map(lambda source: compile_one([source], *args, **kwargs), order)
                done = dict(zip(order, objects, strict=True))
            return [obj for source in sources for obj in done[source]]

        self.compiler.compile = compile_all  # type: ignore[method-assign]
        try:
            super().build_extension(ext)
        except Exception as error:
            self._fall_back(error)
            raise
        finally:
            self.compiler.compile = compile_one  # type: ignore[method-assign]

    def _fall_back(self, error: BaseException) -> None:
        # A half-built kernel (the shared library without its modules, or the reverse)
        # would not import: remove what was built and keep the sources.
        for extension in self.extensions:
            for built in (
                Path(self.get_ext_fullpath(extension.name)),
                SOURCES.joinpath(self.get_ext_filename(extension.name)),
            ):
                built.unlink(missing_ok=True)
        self.extensions = []
        tell(
            f"warning: fairshare's compiled kernel was not built ({error}); "
            "the pure-Python modules are installed instead"
        )


class EditableBuildPy(build_py):
    """``build_py`` that, in an editable install, byte-compiles ``src/fairshare`` where it is
    imported from, as pip does for the files of a regular install. Python reads a ``.pyc``
    whatever ``PYTHONDONTWRITEBYTECODE`` says (it only stops the writing), and recompiles in
    memory a source edited since (the ``.pyc`` records its source's time and size)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            try:
                compileall.compile_dir(str(SOURCES / "fairshare"), quiet=1, workers=cores())
            except OSError as error:  # a read-only tree costs every command's start, no more
                tell(f"fairshare: the sources were not byte-compiled ({error})")


def compiled_kernel() -> list[object]:
    if not BUILD_COMMANDS.intersection(sys.argv[1:]):
        return []
    if os.environ.get("FAIRSHARE_PURE_PYTHON_BUILD", "") not in ("", "0"):
        tell("fairshare: FAIRSHARE_PURE_PYTHON_BUILD is set: the online core stays pure Python")
        return []
    try:
        from mypyc.build import mypycify  # noqa: PLC0415 - optional: a failed import falls back
    except ImportError:
        tell("warning: mypyc is not available; fairshare stays pure Python")
        return []
    global CACHE, RESTORING  # noqa: PLW0603 - read by OptionalBuildExt, one build a process
    root = kernel_cache()
    CACHE = None if root is None else CachedKernel(root, build_key())
    cached = None if CACHE is None else CACHE.names()
    if CACHE is not None and cached is not None:
        RESTORING = True
        tell(
            f"fairshare: the online core's compiled kernel is in the cache ({CACHE.entry}): "
            f"copied, not compiled ({CACHE_ENV}=0 compiles it anew)"
        )
        return [Extension(name, sources=[]) for name in cached]
    paths = [str(Path("src", *name.split(".")).with_suffix(".py")) for name in kernel_modules()]
    tell(
        f"fairshare: compiling its online core ({len(paths)} modules) to C with mypyc, about "
        f"a minute of CPU on {cores()} core(s); FAIRSHARE_PURE_PYTHON_BUILD=1 skips it "
        "(the same code, pure Python, 1.1-1.3 x slower)"
    )
    try:
        extensions = mypycify(
            # The project's [tool.mypy] loads the pydantic plugin, which the isolated
            # build environment lacks; compiling needs types, not the strict checks.
            ["--config-file", str(ROOT / "kernel-mypy.ini"), *paths],
            opt_level="3",
            # One C file per module: gcc compiles them in half the CPU time of one file
            # of them all, and on every core (OptionalBuildExt).
            multi_file=True,
            group_name="fairshare.kernel_native",
        )
    except (Exception, SystemExit) as error:  # mypyc exits on a type error
        tell(
            f"warning: mypyc could not compile fairshare's kernel ({error}); "
            "fairshare stays pure Python"
        )
        return []
    for extension in extensions:
        # The modules' C files (in build/) include the group's header, which mypyc writes
        # under the group's package (build/fairshare/) without saying where.
        extension.include_dirs.append(str(Path("build", "fairshare")))
    return list(extensions)


if __name__ == "__main__":
    setup(
        ext_modules=compiled_kernel(),
        cmdclass={"build_ext": OptionalBuildExt, "build_py": EditableBuildPy},
    )
