"""Builds fairshare, compiling the online core with mypyc where a C compiler is available.

Everything else is in pyproject.toml. The modules compiled are ``fairshare.kernel``'s
``KERNEL_MODULES``; if mypyc or the C compiler fails, or ``FAIRSHARE_PURE_PYTHON_BUILD=1`` is
set, the install keeps the pure-Python modules (the same code, slower) and says so.

The compile is most of an install's time, so it is made cheap (docs/performance.md, "The
compiled kernel", has the measurements): mypyc writes one C file per module
(``multi_file``), which gcc compiles in about half the CPU time of the single 13 MB file, and
on every core at once; mypyc runs only for the commands that build (not for the metadata
that pip asks for first); and a line on the terminal says what is compiled and how to skip it.
"""

from __future__ import annotations

import ast
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

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


class OptionalBuildExt(build_ext):
    """Builds the compiled kernel, or, when that fails, leaves the pure-Python modules in
    place: a failed compile must never fail the install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            self._fall_back(error)

    def build_extension(self, ext: Any) -> None:
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
    setup(ext_modules=compiled_kernel(), cmdclass={"build_ext": OptionalBuildExt})
