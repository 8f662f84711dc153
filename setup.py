"""Builds fairshare, compiling the online core with mypyc where a C compiler is available.

Everything else is in pyproject.toml. The modules compiled are ``fairshare.kernel``'s
``KERNEL_MODULES``; if mypyc or the C compiler fails, or ``FAIRSHARE_PURE_PYTHON_BUILD=1`` is
set, the install keeps the pure-Python modules (the same code, slower) and says so.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

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


class OptionalBuildExt(build_ext):
    """Builds the compiled kernel, or, when that fails, leaves the pure-Python modules in
    place: a failed compile must never fail the install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            self._fall_back(error)

    def build_extension(self, ext: object) -> None:
        try:
            super().build_extension(ext)  # type: ignore[arg-type]
        except Exception as error:
            self._fall_back(error)
            raise

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
        sys.stderr.write(
            f"warning: fairshare's compiled kernel was not built ({error}); "
            "the pure-Python modules are installed instead\n"
        )


def compiled_kernel() -> list[object]:
    if os.environ.get("FAIRSHARE_PURE_PYTHON_BUILD", "") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify  # noqa: PLC0415 - optional: a failed import falls back
    except ImportError:
        sys.stderr.write("warning: mypyc is not available; fairshare stays pure Python\n")
        return []
    paths = [str(Path("src", *name.split(".")).with_suffix(".py")) for name in kernel_modules()]
    try:
        return list(
            mypycify(
                # The project's [tool.mypy] loads the pydantic plugin, which the isolated
                # build environment lacks; compiling needs types, not the strict checks.
                ["--config-file", str(ROOT / "kernel-mypy.ini"), *paths],
                opt_level="3",
                group_name="fairshare.kernel_native",
            )
        )
    except (Exception, SystemExit) as error:  # mypyc exits on a type error
        sys.stderr.write(
            f"warning: mypyc could not compile fairshare's kernel ({error}); "
            "fairshare stays pure Python\n"
        )
        return []


if __name__ == "__main__":
    setup(ext_modules=compiled_kernel(), cmdclass={"build_ext": OptionalBuildExt})
