"""The ``fairshare`` command line (SPEC sections 2-7): one module per command group.

- :mod:`fairshare.cli.app`: the application, error reporting (SPEC section 4) and ``main``.
- :mod:`fairshare.cli.solve`: ``solve`` and ``policies``.
- :mod:`fairshare.cli.check`: ``check``.
- :mod:`fairshare.cli.runs` and :mod:`fairshare.cli.simulate`: ``simulate`` and ``compare``.
- :mod:`fairshare.cli.bench`: ``bench``.
- :mod:`fairshare.cli.sweep`: ``sweep`` (SPEC section 7).
- :mod:`fairshare.cli.live`: ``serve``, ``tenant add``, ``submit``, ``jobs``, ``cancel``,
  ``shares`` (the live service, SPEC section 6).

Every command is a thin layer over the library: it validates its options, calls the API
(:mod:`fairshare.api`) and prints a table or JSON.
"""

from fairshare.cli import bench, check, live, simulate, solve, sweep
from fairshare.cli.app import app, main

__all__ = ["app", "main"]

# The command modules register their commands on ``app`` when imported.
_COMMANDS = (bench, check, live, simulate, solve, sweep)
