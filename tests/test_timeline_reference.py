"""The allocation timeline (``fairshare.metrics.timeline``) against a direct computation.

The vectorised step functions (sorted events, cumulative sums restarted per user) must give,
for random attempt logs, exactly the rows of the definition in the module's docstring: at
each time an attempt of a user starts or ends, the attempts running on ``[start, finish)``,
their summed demand over the cluster's total, its maximum over resources, kept where the
value changed. The logs mix users, jobs with their own reduce demands, copy parts (which
hold nothing), zero-length and killed attempts, coinciding times, and a resource the
cluster has none of. The attempts are given out of start order and through
``RunLog.attempts``, the path logs made outside the drivers take.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.metrics import timeline
from fairshare.metrics.timeline import SHARE_DECIMALS
from fairshare.runlog import PHASES, JobRecord, RunLog, TaskAttempt

from conftest import scaled_examples

CLUSTER = Cluster.build(
    ("cpu", "mem", "gpu"),
    [
        Machine("m1", np.array([4.0, 8.0, 0.0]), "r1"),
        Machine("m2", np.array([6.0, 4.0, 0.0]), "r2"),
    ],
)
USERS = ("a", "b", "c")
TIMES = st.sampled_from([0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 7.25, 10.0])
"""Few distinct times, so that starts and ends of one user often coincide."""


@st.composite
def logs(draw: st.DrawFn) -> RunLog:
    n_jobs = draw(st.integers(1, 4))
    jobs = []
    for j in range(n_jobs):
        demand = np.array(
            draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=3, max_size=3))
        )
        reduce_demand = (
            np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 3.0]), min_size=3, max_size=3)))
            if draw(st.booleans())
            else None
        )
        user = draw(st.sampled_from(USERS))
        jobs.append(
            JobRecord(f"j{j}", user, "root", 0.0, 4, demand, 1.0, 0.0, 10.0, 10.0, reduce_demand)
        )
    attempts = []
    for k in range(draw(st.integers(0, 14))):
        record = jobs[draw(st.integers(0, n_jobs - 1))]
        start = draw(TIMES)
        finish = start + draw(st.sampled_from([0.0, 0.5, 1.0, 2.5, 3.0]))
        attempts.append(
            TaskAttempt(
                record.job,
                record.user,
                draw(st.sampled_from(PHASES)),
                k,
                0,
                draw(st.sampled_from(["m1", "m2"])),
                start,
                finish,
                killed=draw(st.booleans()),
            )
        )
    return RunLog("drf", 0, CLUSTER, USERS, tuple(jobs), tuple(attempts), len(attempts), 0.0)


def direct(log: RunLog) -> list[tuple[float, str, int, float]]:
    """The timeline's rows by the definition, one user and one event time at a time."""
    by_name = {record.job: record for record in log.jobs}
    total = CLUSTER.total
    rows = []
    for user in log.users:
        mine = [a for a in log.attempts if a.user == user]
        before = (0, 0.0)
        for time in sorted({a.start for a in mine} | {a.finish for a in mine}):
            running = [a for a in mine if a.start <= time < a.finish]
            load = np.zeros(len(total))
            for a in running:
                record = by_name[a.job]
                if a.phase == "map":
                    load += record.demand
                elif a.phase == "reduce":
                    load += record.demand if record.reduce_demand is None else record.reduce_demand
            shares = [load[r] / total[r] for r in range(len(total)) if total[r] > 0]
            share = round(max(shares), SHARE_DECIMALS) if running else 0.0
            value = (len(running), share)
            if value != before:
                rows.append((time, user, *value))
                before = value
    order = {user: i for i, user in enumerate(log.users)}
    return sorted(rows, key=lambda row: (row[0], order[row[1]]))


@settings(max_examples=scaled_examples(300), deadline=None)
@given(logs())
def test_timeline_rows_are_the_definitions(log: RunLog) -> None:
    steps = timeline(log)
    got = [
        (t, steps.users[u], r, s)
        for t, u, r, s in zip(
            steps.time.tolist(),
            steps.user.tolist(),
            steps.running.tolist(),
            steps.share.tolist(),
            strict=True,
        )
    ]
    expected = direct(log)
    assert [row[:3] for row in got] == [row[:3] for row in expected]
    assert np.allclose([row[3] for row in got], [row[3] for row in expected], atol=1e-9)
    # by_user lists the rows in (user, time) order.
    order = steps.by_user
    keys = list(zip(steps.user[order].tolist(), steps.time[order].tolist(), strict=True))
    assert keys == sorted(keys)
