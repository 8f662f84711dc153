"""The ``fairshare`` command line (SPEC sections 2-5): one module per command group.

- :mod:`fairshare.cli.app`: the application, error reporting (SPEC section 4) and ``main``.
- :mod:`fairshare.cli.solve`: ``solve`` and ``policies``.
- :mod:`fairshare.cli.check`: ``check``.
- :mod:`fairshare.cli.runs` and :mod:`fairshare.cli.simulate`: ``simulate`` and ``compare``.
- :mod:`fairshare.cli.bench`: ``bench``.

Every command is a thin layer over the library: it validates its options, calls the API
(:mod:`fairshare.api`) and prints a table or JSON.
"""

import os

# numpy's OpenBLAS starts a worker thread per core when numpy is imported, and idle workers
# spin: 0.05 CPU s of every command's start on two cores, and more after each BLAS call
# (DEVELOPERS.md). The commands' matrices are small: one thread unless the user sets one.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from fairshare.collector import paused

# Importing the commands' modules (typer, rich, numpy, the scenario loader) allocates about
# 100,000 objects and no garbage: the collector waits until they are loaded.
with paused():
    from fairshare.cli import bench, check, simulate, solve
    from fairshare.cli.app import app, main

__all__ = ["app", "main"]

# The command modules register their commands on ``app`` when imported.
_COMMANDS = (bench, check, simulate, solve)
