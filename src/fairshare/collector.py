"""Pausing Python's cyclic garbage collector while large acyclic data is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off for the block, and back as it was after.

    A pass of the collector walks every container allocated since the last one (a full pass:
    every container alive), so building large data that holds no reference cycles (the
    modules a command imports, a scenario's thousands of machines, a run's events) pays for
    passes that find nothing: 0.1-0.15 CPU s of a ``simulate`` of 10,000 machines outside
    the run, a fifth of the run inside it.

    What the block allocated and still holds joins the oldest generation as it ends, as the
    passes would have promoted it, without a pass over it: the first young pass after the
    block would otherwise walk all of it (0.015 s after a ``simulate``'s command). Cycles
    made in the block are collected by the next full pass.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


@contextmanager
def collecting() -> Iterator[None]:
    """The cyclic collector on for the block (a long-running service's), and back as it was
    after.

    A command runs with the collector paused (:func:`paused`, from ``cli.app.main``): right
    for a command that builds acyclic data and exits, wrong for one that runs for days. A
    service makes reference cycles for ever -- Ray's ``RemoteFunction.options`` defines a new
    class on every call (a class is a cycle: its ``__mro__`` holds it), about 5 KB per task
    launched -- and with the collector off none is ever freed: ``fairshare serve`` on Ray
    grew 11 MB per round of 2,000 jobs (``docs/live.md``, "Load test"), flat with it on.
    """
    was = gc.isenabled()
    # What exists now (the modules, Ray's and the web server's objects, the policy: some
    # 100,000 objects, 0.13 s a full pass on a 2-core machine) stays for the process's life:
    # out of the collector's reach, so that its full passes walk only what the service made
    # since. A cycle among them that becomes garbage later is not freed (a one-off amount).
    gc.freeze()
    gc.enable()
    try:
        yield
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()
