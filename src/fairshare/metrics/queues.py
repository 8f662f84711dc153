"""Per-queue resource use over time (``queues.csv``): what the running tasks of the users
below each queue hold, per resource, the quantity a queue's nominal quota, borrowing limit
and lending limit bound (:mod:`fairshare.policies.quota`).

A queue's use counts every job of its own and of the queues below it (H-DRF section 2.1's
tree). One row per (time, queue) at which the queue's use changed: it holds from that time
until the queue's next row. Copy parts of split reducers hold nothing (FAIR section 5.2).

Examples
--------
>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"cpu": 4}}],
...      "queues": [{"path": "a", "quota": {"cpu": 2}}, {"path": "a/x"}],
...      "jobs": [{"name": "j", "submit": 0, "tasks": 3, "duration": 10, "queue": "a/x"}]},
...     source="one-queue",
... )
>>> frame = queue_usage(fairshare.simulate(scenario, "drf").log)
>>> frame.rows()
[(0.0, 'a', 3, 3.0), (0.0, 'a/x', 3, 3.0), (10.0, 'a', 0, 0.0), (10.0, 'a/x', 0, 0.0)]
"""

from __future__ import annotations

import polars as pl

from fairshare.runlog import RunLog

__all__ = ["queue_usage"]


def queue_usage(log: RunLog) -> pl.DataFrame:
    """Per queue, its use of every resource over time (see the module).

    Parameters
    ----------
    log : RunLog
        A run.

    Returns
    -------
    polars.DataFrame
        Columns ``time``, ``queue``, ``running_tasks`` (of the users below it) and one per
        resource (the cluster's order), sorted by time then queue; empty when no job or
        user is in a queue.
    """
    resources = list(log.cluster.resources)
    records = {record.job: record for record in log.jobs}
    changes: dict[float, dict[str, list[float]]] = {}
    queues: dict[str, None] = {}
    for attempt in log.attempts:
        if attempt.phase == "copy":
            continue
        record = records[attempt.job]
        queue = record.queue or log.user_queues.get(record.user, "")
        if not queue:
            continue
        demand = record.demand
        if attempt.phase == "reduce" and record.reduce_demand is not None:
            demand = record.reduce_demand
        parts = queue.split("/")
        for depth in range(1, len(parts) + 1):
            path = "/".join(parts[:depth])
            queues[path] = None
            for t, sign in ((attempt.start, 1.0), (attempt.finish, -1.0)):
                row = changes.setdefault(t, {}).setdefault(path, [0.0] * (len(resources) + 1))
                for r, d in enumerate(demand.tolist()):
                    row[r] += sign * d
                row[-1] += sign
    used = {path: [0.0] * (len(resources) + 1) for path in queues}
    times: list[float] = []
    names: list[str] = []
    columns: list[list[float]] = [[] for _ in range(len(resources) + 1)]
    for t in sorted(changes):
        for path in sorted(changes[t]):
            row = used[path]
            for r, delta in enumerate(changes[t][path]):
                # Exact zero when every task has stopped: no drift from the sums.
                row[r] += delta
                if abs(row[r]) < 1e-9:
                    row[r] = 0.0
            times.append(t)
            names.append(path)
            for r in range(len(resources) + 1):
                columns[r].append(row[r])
    data: dict[str, object] = {
        "time": times,
        "queue": names,
        "running_tasks": [round(n) for n in columns[-1]],
    }
    for r, resource in enumerate(resources):
        data[resource] = columns[r]
    schema: dict[str, type[pl.DataType]] = {
        "time": pl.Float64,
        "queue": pl.Utf8,
        "running_tasks": pl.Int64,
    }
    schema.update(dict.fromkeys(resources, pl.Float64))
    return pl.DataFrame(data, schema=schema)
