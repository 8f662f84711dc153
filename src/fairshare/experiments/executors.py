"""Where a sweep's cells run: in this process, in worker processes on this machine's cores,
or as tasks on a Ray cluster. Each runs the same function on the same cells
(:func:`fairshare.experiments.cells.attempt`) and hands back each cell's outcome as it
finishes, in whatever order they finish; the sweep writes them down and orders the rows by
the grid, so the results do not depend on the executor.

- :class:`InProcess`: one cell after the other (``--jobs 1``).
- :class:`LocalPool`: a ``concurrent.futures.ProcessPoolExecutor`` of ``jobs`` workers,
  started by a fork server that has imported fairshare once (a worker costs a fork, not an
  interpreter start). The workers ignore SIGINT: Ctrl-C in a terminal reaches the whole
  process group, and it is the sweep's to stop them (:meth:`LocalPool.close` ends them).
- :class:`RayCells`: one Ray task per cell (one CPU each) on the cluster at ``address``, or
  on a local Ray instance started here with ``jobs`` CPUs. The nodes need fairshare installed
  (the same version: the rows say which ran). ``ray.init`` keeps the process's SIGINT and
  SIGTERM handlers (Ray's driver would exit at once on SIGTERM).

Examples
--------
>>> from fairshare.experiments import parse_grid
>>> from fairshare.experiments.executors import InProcess
>>> grid = parse_grid(
...     {"machines": [{"name": "m", "capacity": {"slots": 2}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 4, "duration": 10}],
...      "policies": ["fifo", "drf"], "seeds": [0]},
...     source="tiny",
... )
>>> with InProcess() as executor:
...     rows = [row for _, row in executor.run(grid.cells())]
>>> [(row["policy"], row["makespan"]) for row in rows]
[('fifo', 20.0), ('drf', 20.0)]
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from types import TracebackType
from typing import Any, TypeVar, cast

from fairshare.errors import FairshareError
from fairshare.experiments import cells as cells_module
from fairshare.experiments.cells import Cell, CellFailure, attempt

__all__ = ["CellExecutor", "ExecutorError", "InProcess", "LocalPool", "RayCells", "make_executor"]

Outcome = dict[str, object] | CellFailure
"""A cell's row, or the input problem its run found."""

Item = TypeVar("Item")
Result = TypeVar("Result")

_DONE = object()
"""The end of the items (an item may be None)."""


class ExecutorError(FairshareError):
    """The executor cannot start: Ray is not installed, or no cluster answers at the
    address. The command line reports ``error: command line: WHERE: WHAT`` (exit 2).

    Parameters
    ----------
    where : str
        The parameter of :func:`~fairshare.experiments.run_sweep` at fault (``executor``,
        ``ray_address``; the command line shows ``--executor``, ``--ray``).
    what : str
        What is wrong and what to do.
    """

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what


class CellExecutor:
    """Runs cells and yields ``(cell, outcome)`` as each finishes; a context manager that
    releases its workers (all of them, at once, when the sweep is interrupted)."""

    name = "executor"

    def run(self, cells: Sequence[Cell]) -> Iterator[tuple[Cell, Outcome]]:
        """Run ``cells``; yield each with its outcome as it finishes, in any order."""
        return self.map(cells, attempt)

    def map(
        self, items: Sequence[Item], work: Callable[[Item], Result]
    ) -> Iterator[tuple[Item, Result]]:
        """Call ``work`` on each of ``items`` where this executor runs things (``work`` a
        module-level function, its items picklable: the pool and Ray pickle them); yield
        each item with its result as it finishes, in any order. A sweep's cells are
        :func:`~fairshare.experiments.cells.attempt` on each cell (:meth:`run`); a what-if's
        runs are :func:`fairshare.api.run_replay` on each request."""
        raise NotImplementedError

    def close(self, interrupted: bool = False) -> None:
        """Release the workers; ``interrupted`` ends running cells instead of waiting."""

    def __enter__(self) -> CellExecutor:
        """The executor itself."""
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Close it; an exception on the way (an interrupt) ends the running cells."""
        self.close(interrupted=kind is not None)


class InProcess(CellExecutor):
    """Each cell in this process, one after the other."""

    name = "in-process"

    def map(
        self, items: Sequence[Item], work: Callable[[Item], Result]
    ) -> Iterator[tuple[Item, Result]]:
        """Each item in turn."""
        for item in items:
            yield item, work(item)


def _quiet_worker() -> None:
    """A worker process leaves SIGINT to the sweep (which ends it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class LocalPool(CellExecutor):
    """Cells in ``jobs`` worker processes of this machine."""

    name = "local"

    def __init__(self, jobs: int) -> None:
        """A pool of ``jobs`` workers (started when the first cells are submitted)."""
        context = multiprocessing.get_context("forkserver")
        # The fork server imports what every cell needs once (the simulator, the metrics and
        # polars): each worker forked from it starts with them loaded.
        context.set_forkserver_preload([cells_module.__name__, "fairshare.metrics"])
        self.jobs = jobs
        self._pool = ProcessPoolExecutor(
            max_workers=jobs, mp_context=context, initializer=_quiet_worker
        )
        self._workers: list[Any] = []

    def map(
        self, items: Sequence[Item], work: Callable[[Item], Result]
    ) -> Iterator[tuple[Item, Result]]:
        """The items on the workers, two per worker submitted at any time."""
        # A few items queued per worker, not the whole grid: a worker never waits for its
        # next one, and an interrupted sweep cancels the rest without draining a queue.
        queued = iter(items)
        running: dict[Future[Result], Item] = {}

        def submit() -> None:
            """Hand the next item to the pool, if one is left."""
            item = next(queued, _DONE)
            if item is not _DONE:
                task = cast("Item", item)
                running[self._pool.submit(work, task)] = task

        for _ in range(2 * self.jobs):
            submit()
        self._workers = multiprocessing.active_children()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                item = running.pop(future)
                submit()
                yield item, future.result()

    def close(self, interrupted: bool = False) -> None:
        """Shut the pool down; ``interrupted`` drops the queued cells and ends the workers."""
        if not interrupted:
            self._pool.shutdown(wait=True)
            return
        self._pool.shutdown(wait=False, cancel_futures=True)
        for worker in self._workers or multiprocessing.active_children():
            worker.terminate()
        for worker in self._workers:
            worker.join(timeout=5)


def _signal_handlers() -> dict[int, Any]:
    """SIGINT's and SIGTERM's handlers now (none off the main thread, where none can be
    set)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}


def _check_answers(address: str) -> None:
    """Raise :class:`ExecutorError` unless something accepts a connection at ``address``
    (``HOST:PORT``, the head's GCS address; other forms, such as ``ray://`` or ``auto``, are
    left to Ray)."""
    from fairshare.backends.ray_cluster import unanswered  # noqa: PLC0415 - the ray extra's

    reason = unanswered(address)
    if reason is not None:
        raise ExecutorError(
            "ray_address",
            f"no Ray cluster answers at {address} ({reason}); start one with "
            "`ray start --head`, or leave ray_address out for a local Ray instance",
        )


class RayCells(CellExecutor):
    """Each cell as a Ray task (one CPU) on the cluster at ``address``, or on a local Ray
    instance with ``jobs`` CPUs (all the machine's when None)."""

    name = "ray"

    def __init__(self, address: str | None, jobs: int | None) -> None:
        """Join the cluster at ``address`` (checked to answer first), or start a local Ray
        instance with ``jobs`` CPUs."""
        try:
            import ray  # noqa: PLC0415
        except ImportError:
            raise ExecutorError(
                "executor", "ray needs the [ray] extra: pip install 'fairshare[ray]'"
            ) from None

        # Any: mypy must pass with and without Ray installed.
        self._ray: Any = ray
        self._own = not ray.is_initialized()
        if self._own and address is not None:
            _check_answers(address)
        if self._own:
            options: dict[str, Any] = {
                "include_dashboard": False,
                "logging_level": "WARNING",
                "log_to_driver": False,
                "namespace": "fairshare-sweep",
            }
            if address is not None:
                options["address"] = address
            elif jobs is not None:
                options["num_cpus"] = jobs
            handlers = _signal_handlers()
            try:
                ray.init(**options)
            except Exception as err:  # Ray raises many kinds; all mean the same
                first = str(err).strip().splitlines()[0] if str(err).strip() else ""
                where = f"the cluster at {address}" if address else "a local Ray instance"
                raise ExecutorError(
                    "ray_address", f"cannot start or reach {where} ({type(err).__name__}: {first})"
                ) from None
            finally:
                for signum, handler in handlers.items():
                    signal.signal(signum, handler)
        self.jobs = jobs
        self._remotes: dict[Callable[..., Any], Any] = {}
        self._refs: dict[Any, Any] = {}

    def map(
        self, items: Sequence[Item], work: Callable[[Item], Result]
    ) -> Iterator[tuple[Item, Result]]:
        """The items as Ray tasks (one CPU each), a bounded number in flight."""
        ray = self._ray
        remote = self._remotes.get(work)
        if remote is None:
            remote = self._remotes[work] = ray.remote(num_cpus=1, max_retries=1)(work)
        # At most `jobs` cells in flight when given (a share of a larger cluster), else as
        # many as the cluster has CPUs for, and a few more so that no CPU waits for the
        # driver's next submission.
        limit = self.jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        queued = iter(items)

        def submit() -> None:
            """Submit the next item as a Ray task, if one is left."""
            if (item := next(queued, _DONE)) is not _DONE:
                self._refs[remote.remote(item)] = item

        for _ in range(limit if self.jobs else 2 * limit):
            submit()
        while self._refs:
            done, _ = ray.wait(list(self._refs), num_returns=1)
            for ref in done:
                item = self._refs.pop(ref)
                outcome = ray.get(ref)
                submit()
                yield item, outcome

    def close(self, interrupted: bool = False) -> None:
        """Cancel the cells in flight; stop the local Ray instance if this started it."""
        for ref in list(self._refs):
            self._ray.cancel(ref, force=True)
        self._refs.clear()
        if self._own and self._ray.is_initialized():
            self._ray.shutdown()


def make_executor(kind: str, jobs: int, address: str | None, jobs_given: bool) -> CellExecutor:
    """The executor ``--executor KIND`` names: ``local`` (in this process for one job,
    else a pool of ``jobs`` workers) or ``ray``."""
    if kind == "ray":
        return RayCells(address, jobs if jobs_given else None)
    if jobs == 1:
        return InProcess()
    return LocalPool(jobs)
