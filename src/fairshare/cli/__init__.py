"""The ``fairshare`` command line (SPEC sections 2-7): one module per command group.

- :mod:`fairshare.cli.app`: the application, error reporting (SPEC section 4) and ``main``.
- :mod:`fairshare.cli.solve`: ``solve`` and ``policies``.
- :mod:`fairshare.cli.check`: ``check``.
- :mod:`fairshare.cli.runs` and :mod:`fairshare.cli.simulate`: ``simulate`` and ``compare``.
- :mod:`fairshare.cli.bench`: ``bench``.
- :mod:`fairshare.cli.sweep`: ``sweep`` (SPEC section 7).
- :mod:`fairshare.cli.reproduce`: ``reproduce`` (SPEC section 7).
- :mod:`fairshare.cli.importing`: ``import`` (SPEC section 8.1), one module per format:
  :mod:`fairshare.cli.import_kueue` (``import kueue``), :mod:`fairshare.cli.import_slurm`
  (``import slurm``), :mod:`fairshare.cli.import_yarn` (``import yarn-fair``,
  ``import yarn-capacity``).
- :mod:`fairshare.cli.explain`: ``explain`` (SPEC section 8.5).
- :mod:`fairshare.cli.whatif`: ``whatif`` (SPEC section 8.4).
- :mod:`fairshare.cli.live`: ``serve``, ``tenant add``, ``submit``, ``jobs``, ``cancel``,
  ``shares`` (the live service, SPEC section 6).

Every command is a thin layer over the library: it validates its options, calls the API
(:mod:`fairshare.api`) and prints a table or JSON. A command function's docstring is its
``--help`` text, and its options are documented by their own ``help``.

Examples
--------
``fairshare solve`` run in process on DRF section 4.1's scenario (:func:`main` ends with
``SystemExit``, 0 on success, 2 on bad input with one ``error:`` line on stderr):

>>> import contextlib, io, json, tempfile
>>> from pathlib import Path
>>> from fairshare.cli import main
>>> folder = tempfile.TemporaryDirectory()
>>> path = Path(folder.name, "drf.yaml")
>>> _ = path.write_text(
...     "machines:\\n  - {name: m1, capacity: {cpu: 9, mem: 18}}\\n"
...     "users:\\n  - {name: A, demand: {cpu: 1, mem: 4}}\\n"
...     "  - {name: B, demand: {cpu: 3, mem: 1}}\\n"
... )
>>> out = io.StringIO()
>>> with contextlib.redirect_stdout(out):
...     try:
...         main(["solve", str(path), "--policy", "drf", "--json"])
...     except SystemExit as done:
...         code = done.code
>>> code, json.loads(out.getvalue())["users"]["A"]
(0, {'tasks': 3.0, 'share': 0.6666666666666666})
>>> err = io.StringIO()
>>> with contextlib.redirect_stderr(err):
...     try:
...         main(["solve", str(path), "--policy", "lottery"])
...     except SystemExit as done:
...         code = done.code
>>> code, err.getvalue().split(": ")[2]
(2, '--policy')
>>> folder.cleanup()
"""

import os

# numpy's OpenBLAS starts a worker thread per core when numpy is imported, and idle workers
# spin: 0.05 CPU s of every command's start on two cores, and more after each BLAS call
# (docs/performance.md, "How to measure"). The commands' matrices are small: one thread
# unless the user sets one.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from fairshare.collector import paused

# Importing the commands' modules (typer, rich, numpy, the scenario loader) allocates about
# 100,000 objects and no garbage: the collector waits until they are loaded.
with paused():
    from fairshare.cli import (
        bench,
        check,
        explain,
        import_kueue,
        import_slurm,
        import_yarn,
        importing,
        live,
        reproduce,
        simulate,
        solve,
        sweep,
        whatif,
    )
    from fairshare.cli.app import app, main

__all__ = ["app", "main"]

# The command modules register their commands on ``app`` when imported.
_COMMANDS = (
    bench,
    check,
    explain,
    importing,
    import_kueue,
    import_slurm,
    import_yarn,
    live,
    reproduce,
    simulate,
    solve,
    sweep,
    whatif,
)
