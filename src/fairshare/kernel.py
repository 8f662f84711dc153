"""The compiled kernel: the online core built to C by mypyc, and the switch back to its
pure-Python sources.

The online schedulers and the simulator's event loop (the modules in
:data:`KERNEL_MODULES`) are ordinary, typed Python. ``pip install`` compiles them with mypyc
when a C compiler is available (``setup.py``), which runs the same code about a third faster;
where the build cannot compile, the install keeps the pure-Python modules and nothing else
changes. There is one source for both: the compiled and the interpreted kernel make the same
decisions, which the decision fingerprints check in CI for both.

Compiled modules keep no docstrings at run time (the documentation site and the doctests read
the sources; :func:`source_module` gives a module's).

Setting the environment variable ``FAIRSHARE_PURE_PYTHON=1`` before ``fairshare`` is first
imported loads the kernel from its ``.py`` sources even where it is compiled (to debug, to
profile line by line, or to test the fallback). A compiled module older than its source (a
source edited since the last build) would run the old code: ``fairshare`` then loads the
sources instead and says so once on stderr (rebuild with ``pip install -e .``).

Examples
--------
>>> from fairshare import kernel
>>> "fairshare.policies.ledger" in kernel.KERNEL_MODULES
True
>>> isinstance(kernel.compiled(), bool)
True
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = [
    "KERNEL_MODULES",
    "NATIVE_LIBRARY",
    "PURE_PYTHON_ENV",
    "compiled",
    "pure_python_requested",
    "source_module",
    "stale_modules",
    "use_pure_python",
]

KERNEL_MODULES = (
    "fairshare.policies.decisions",
    "fairshare.policies.records",
    "fairshare.policies.state",
    "fairshare.policies.copy_compute",
    "fairshare.policies.shares",
    "fairshare.policies.quota",
    "fairshare.policies.gangs",
    "fairshare.policies.delay",
    "fairshare.policies.ranking",
    "fairshare.policies.ledger",
    "fairshare.policies.filters",
    "fairshare.policies.headroom",
    "fairshare.policies.selection",
    "fairshare.policies.placer",
    "fairshare.policies.preemption",
    "fairshare.policies.scheduler",
    "fairshare.policies.fifo",
    "fairshare.policies.fair",
    "fairshare.policies.drf",
    "fairshare.policies.choosy",
    "fairshare.policies.tsf",
    "fairshare.policies.hdrf_views",
    "fairshare.policies.hdrf",
    "fairshare.policies.slots",
    "fairshare.policies.capacity",
    "fairshare.sim.events",
    "fairshare.sim.run_state",
    "fairshare.sim.engine",
)
"""The modules mypyc compiles (``setup.py`` reads this tuple): the policies' state and state
changes, every online policy, and the simulator's event queue, run state and loop."""

NATIVE_LIBRARY = "kernel_native__mypyc"
"""The shared library holding the compiled code of every kernel module (``setup.py`` names
its group ``fairshare.kernel_native``)."""

PURE_PYTHON_ENV = "FAIRSHARE_PURE_PYTHON"
"""The environment variable that, set to ``1``, loads the kernel from its Python sources."""


def pure_python_requested() -> bool:
    """Whether :data:`PURE_PYTHON_ENV` asks for the pure-Python kernel.

    Returns
    -------
    bool
        True when the variable is set to anything but ``""`` or ``"0"``.
    """
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def stale_modules(root: str | None = None) -> list[str]:
    """The kernel modules edited since the kernel was compiled.

    The compiled code of every module is in one shared library, ``fairshare/`` +
    :data:`NATIVE_LIBRARY` (the module files beside the sources only load it), so a source
    newer than that library has changes the compiled kernel lacks.

    Parameters
    ----------
    root : str, optional
        The directory holding the ``fairshare`` package; by default this one's.

    Returns
    -------
    list of str
        Module names, in :data:`KERNEL_MODULES` order; empty where nothing is compiled.
    """
    if root is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    built = None
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        try:
            built = os.stat(os.path.join(root, "fairshare", NATIVE_LIBRARY + suffix)).st_mtime
            break
        except OSError:
            continue
    if built is None:
        return []
    stale = []
    for name in KERNEL_MODULES:
        try:
            source = os.stat(os.path.join(root, *name.split(".")) + ".py").st_mtime
        except OSError:
            continue
        # Installers write a wheel's files in no particular order within a moment.
        if source > built + _MTIME_SLACK_SECONDS:
            stale.append(name)
    return stale


_MTIME_SLACK_SECONDS = 2.0


def compiled() -> bool:
    """Whether the kernel running in this process is the compiled one.

    Returns
    -------
    bool
        True when every module of :data:`KERNEL_MODULES` is loaded from a compiled extension
        (it imports them).
    """
    for name in KERNEL_MODULES:
        module = importlib.import_module(name)
        if not isinstance(module.__spec__, ModuleSpec) or not isinstance(
            module.__spec__.loader, importlib.machinery.ExtensionFileLoader
        ):
            return False
    return True


def source_module(name: str) -> ModuleType:
    """Module ``name`` as its Python source runs it, for its docstrings.

    A compiled module keeps no docstrings (``help()`` shows none): this executes the ``.py``
    source beside it as a separate module object, not put in ``sys.modules``. A module that
    is not compiled is returned as imported.

    Parameters
    ----------
    name : str
        A module of the fairshare package.

    Returns
    -------
    types.ModuleType
        The module with its docstrings.

    Examples
    --------
    >>> from fairshare import kernel
    >>> kernel.source_module("fairshare.policies.ledger").Ledger.__doc__.split(" (")[0]
    'The state every online policy keeps and its state changes'
    """
    module = importlib.import_module(name)
    spec = module.__spec__
    if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        return module
    parent, _, leaf = name.rpartition(".")
    # Not the spec's origin: a compiled module's may name the shared library of them all.
    source = os.path.join(importlib.import_module(parent).__path__[0], leaf + ".py")
    copy_spec = importlib.util.spec_from_file_location(name, source)
    assert copy_spec is not None and copy_spec.loader is not None
    copy = importlib.util.module_from_spec(copy_spec)
    copy_spec.loader.exec_module(copy)
    return copy


class _SourceFinder:
    """Finds the kernel's modules as their ``.py`` sources, before the path finder would find
    the compiled extension beside them (extensions come first in its search order)."""

    @classmethod
    def find_spec(
        cls,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """The source spec of kernel module ``fullname`` (None for any other module: the
        next finder looks)."""
        if fullname not in KERNEL_MODULES or path is None:
            return None
        leaf = fullname.rpartition(".")[2]
        for directory in path:
            source = os.path.join(directory, leaf + ".py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def use_pure_python() -> None:
    """Loads the kernel from its ``.py`` sources from now on.

    ``fairshare`` calls it on import when :func:`pure_python_requested`; a kernel module
    imported before the call stays as it was loaded.
    """
    if _SourceFinder not in sys.meta_path:
        sys.meta_path.insert(0, _SourceFinder)
