"""A what-if's runs on a sweep's executors (SPEC section 8.4, ``fairshare whatif --executor
local|ray``): :func:`fairshare.api.whatif` builds every run of every seed as a picklable
:class:`~fairshare.api.ReplayRequest`, and :func:`executor_runner` makes them where the
sweep's cells run (:mod:`fairshare.experiments.executors`: worker processes on this machine's
cores, or one Ray task per run on a Ray cluster), the results put back in request order, so
the outcome does not depend on where the runs were made.

Examples
--------
>>> import fairshare
>>> from fairshare.experiments.executors import InProcess
>>> from fairshare.experiments.whatif_runs import executor_runner
>>> def scenario(wa, wb):
...     return fairshare.parse_scenario(
...         {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...          "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
...          "jobs": [{"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4,
...                    "duration": 10} for k in range(6) for u in "ab"]},
...         source=f"a{wa}-b{wb}")
>>> with InProcess() as executor:
...     result = fairshare.whatif(scenario(1, 3), scenario(3, 1), policy="drf",
...                               runner=executor_runner(executor))
>>> result.tenants_frame().row(0, named=True)["user"]
'b'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fairshare.api import ReplayRequest, ReplayRunner, run_replay, whatif
from fairshare.experiments.executors import CellExecutor, make_executor

if TYPE_CHECKING:
    from fairshare.api import Run, WhatIf

__all__ = ["executor_runner", "whatif_on"]


def executor_runner(executor: CellExecutor) -> ReplayRunner:
    """A :data:`~fairshare.api.ReplayRunner` that makes the runs on ``executor``.

    Parameters
    ----------
    executor : CellExecutor
        In this process, a pool of worker processes, or a Ray cluster.

    Returns
    -------
    callable
        Given the requests, their runs in the same order.
    """

    def runner(requests: Sequence[ReplayRequest]) -> list[Run]:
        position = {id(request): k for k, request in enumerate(requests)}
        runs: list[Run | None] = [None] * len(requests)
        for request, run in executor.map(list(requests), run_replay):
            runs[position[id(request)]] = run
        assert all(run is not None for run in runs), "every request was made"
        return [run for run in runs if run is not None]

    return runner


def whatif_on(
    executor: str,
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    **arguments: Any,
) -> WhatIf:
    """:func:`fairshare.api.whatif` with its runs made on the executor ``--executor`` names.

    Parameters
    ----------
    executor : {"local", "ray"}
        ``local``: ``jobs`` worker processes (this process for one); ``ray``: one Ray task
        per run on the cluster at ``ray_address`` (a local Ray instance when None).
    jobs : int, optional
        Runs at a time (default: every core; on Ray, the cluster's CPUs).
    ray_address : str, optional
        The Ray cluster's address.
    **arguments
        :func:`fairshare.api.whatif`'s arguments (``before``, ``after``, ``policy``, ...).

    Returns
    -------
    WhatIf

    Raises
    ------
    ExecutorError
        Ray is not installed, or no cluster answers at ``ray_address``.
    """
    from fairshare.experiments.sweep import available_cores  # noqa: PLC0415

    workers = jobs if jobs is not None else available_cores()
    with make_executor(executor, workers, ray_address, jobs is not None) as cells:
        return whatif(runner=executor_runner(cells), **arguments)
