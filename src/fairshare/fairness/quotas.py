"""The reclaim bound of queue quotas as a checkable property (issue 18; the bound is stated in
:mod:`fairshare.policies.quota` and ``docs/policies/hdrf.md``, "The bound").

``quota-restored``: with ``--preemption TMIN,TFAIR``, a queue below its nominal quota with a
pending task that fits within its quota gets a task placed within ``TMIN`` seconds of the
decision that first found it waiting, provided one machine frees room for the task once the
borrowed tasks on it are gone. The search draws scenarios where that proviso holds by
construction (:func:`~fairshare.fairness.scenarios.quota_document`: one task shape, machines
and quotas holding whole numbers of tasks), simulates the online policy of the checked
policy's name, and reads from the run, per queue with a quota, every stretch of time during
which it had pending tasks and room for one more within its quota. A stretch longer than
``TMIN`` is a violation. Fair-share preemption is kept out of the way (``TFAIR`` far beyond
any run), so only the quota reclaim (preemption rule 6) can end a stretch early.

Only policies with an online counterpart of the same name are checked (``drf``, ``hdrf``,
``collapsed-drf``, ``tsf``, ``drfh``, ``cdrf``); for the others the property is not
applicable.

Examples
--------
Queue ``b`` (quota 2 of the machine's 4 slots) arrives at t=1 while ``a`` borrows all four:
DRF's online scheduler reclaims two at 1 + TMIN.

>>> document = {
...     "machines": [{"name": "m", "capacity": {"slots": 4}}],
...     "queues": [{"path": "a", "quota": {"slots": 2}}, {"path": "b", "quota": {"slots": 2}}],
...     "jobs": [
...         {"name": "x", "submit": 0, "queue": "a", "user": "ua", "tasks": 8, "duration": 50},
...         {"name": "y", "submit": 1, "queue": "b", "user": "ub", "tasks": 2, "duration": 50},
...     ],
... }
>>> QuotaRestored().violation(document, "drf") is None
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from fairshare.cluster import Cluster
from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape
from fairshare.policies.protocol import Policy
from fairshare.runlog import RunLog
from fairshare.sim.engine import simulate
from fairshare.sim.options import SimOptions
from fairshare.workload.loader import parse_scenario
from fairshare.workload.model import Queue, Scenario

T_MIN = 10.0
"""The reclaim timeout the property runs with (``--preemption 10,...``)."""
T_FAIR = 1e7
"""Fair-share preemption's timeout, beyond any run the search draws: it never fires."""

PolicyFactory = Callable[..., Policy]
"""Builds an online policy as :func:`fairshare.policies.make_policy` does, without its name:
``factory(cluster, users=..., queues=..., options=...)``."""


class QuotaRestored:
    """A queue below its quota with pending work gets a task within ``TMIN`` (the reclaim
    bound of :mod:`fairshare.policies.quota`).

    Parameters
    ----------
    factory : callable, optional
        Builds the policy to simulate (``factory(cluster, users=, queues=, options=)``);
        default: the online policy named as the checked one. A test passes a deliberately
        broken scheduler here.
    """

    name = "quota-restored"
    shape = ScenarioShape(quotas=True)
    trials = 40

    def __init__(self, factory: PolicyFactory | None = None) -> None:
        self.factory = factory

    def applies(self, domain: Domain) -> bool:
        """Defined for the policies that also run online (``simulate --policy``).

        Parameters
        ----------
        domain : Domain
            The policy's domain.

        Returns
        -------
        bool
        """
        return domain.online

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Simulate ``document`` under the online ``policy`` with ``--preemption 10,1e7``
        and look for a queue waiting below its quota for longer than ``TMIN``.

        Parameters
        ----------
        document : Document
            A scenario with ``jobs`` and ``queues``; one outside the bound's proviso (tasks
            of several shapes, machines or quotas that are not whole numbers of tasks,
            nested quotas) has no violation.
        policy : str
            An online policy's name.
        focus : tuple of str
            Unused: no user misreports.

        Returns
        -------
        Violation or None
        """
        scenario = parse_scenario(document, source="quota-restored")
        demand = _one_shape(scenario)
        if demand is None:
            return None
        quotas = _quotas_in_tasks(scenario.queues, demand)
        if quotas is None or not _machines_hold_whole_tasks(scenario.cluster, demand):
            return None
        options = SimOptions(preemption=(T_MIN, T_FAIR))
        chosen: str | Policy = policy
        if self.factory is not None:
            chosen = self.factory(
                scenario.cluster,
                users=scenario.users,
                queues=scenario.queues,
                options=options.policy_options(),
            )
        log = simulate(
            scenario.cluster,
            sorted(scenario.jobs, key=lambda job: job.submit),
            chosen,
            seed=0,
            users=scenario.users,
            queues=scenario.queues,
            options=options,
        )
        for path, quota in quotas.items():
            longest = _longest_wait(log, path, quota)
            if longest is not None:
                start, end, used, pending = longest
                return Violation(
                    f"queue {path} waits below its quota of {_tasks(quota)} (running "
                    f"{used}, {pending} pending) from t={start:g} to t={end:g}, "
                    f"{end - start:g} s, longer than TMIN = {T_MIN:g} s (fairshare simulate "
                    f"--policy {policy} --preemption {T_MIN:g},{T_FAIR:.0f})"
                )
        return None


def _tasks(n: int) -> str:
    """``1 task``, ``3 tasks``."""
    return f"{n} task" if n == 1 else f"{n} tasks"


def _one_shape(scenario: Scenario) -> tuple[float, ...] | None:
    """The demand every job's tasks share; None when they differ, or a job has a
    constraint (the bound's proviso: a freed machine fits any waiting task)."""
    shape: tuple[float, ...] | None = None
    for job in scenario.jobs:
        demand = tuple(float(x) for x in job.demand)
        if job.constraint is not None or job.reduce is not None or job.priority:
            return None
        if shape is None:
            shape = demand
        elif demand != shape:
            return None
    if shape is None or not any(d > 0 for d in shape):
        return None
    return shape


def _whole(values: Sequence[float], demand: tuple[float, ...]) -> float | None:
    """``values`` as a number of tasks of ``demand`` (the same whole number for every
    resource the tasks use; ``inf`` where it governs none of them); None otherwise."""
    counts = {
        values[r] / d if not math.isinf(values[r]) else math.inf
        for r, d in enumerate(demand)
        if d > 0
    }
    if len(counts) != 1:
        return None
    (n,) = counts
    if math.isinf(n):
        return n
    return float(round(n)) if abs(n - round(n)) < 1e-9 else None


def _quotas_in_tasks(queues: Sequence[Queue], demand: tuple[float, ...]) -> dict[str, int] | None:
    """Per queue with a quota, the quota in tasks; None when a quota or limit is not a whole
    number of tasks, governs only some of the resources the tasks use, or is nested under
    another quota (the reclaim is then bounded by the ancestors' quotas too)."""
    out: dict[str, int] = {}
    for q in queues:
        if q.quota is None:
            continue
        if "/" in q.path:
            return None
        n = _whole(q.quota, demand)
        if n is None or math.isinf(n):
            return None
        for limit in (q.borrowing_limit, q.lending_limit):
            if limit is not None and _whole(limit, demand) is None:
                return None
        out[q.path] = int(n)
    return out


def _machines_hold_whole_tasks(cluster: Cluster, demand: tuple[float, ...]) -> bool:
    """Whether every machine holds a whole number of tasks with nothing left over."""
    return all(_whole([float(x) for x in m.capacity], demand) is not None for m in cluster.machines)


def _longest_wait(log: RunLog, path: str, quota: int) -> tuple[float, float, int, int] | None:
    """The first stretch of time longer than ``T_MIN`` during which queue ``path`` had
    pending tasks and ran fewer than ``quota``: (start, end, running and pending at its
    start); None when there is none."""
    jobs = {j.job for j in log.jobs if j.queue == path}
    if not jobs:
        return None
    # Per time, the change of (pending, running): arrivals, starts, ends, kills (requeued).
    changes: dict[float, list[int]] = {}

    def move(t: float, pending: int, running: int) -> None:
        row = changes.setdefault(t, [0, 0])
        row[0] += pending
        row[1] += running

    for j in log.jobs:
        if j.job in jobs:
            move(j.submit, j.tasks, 0)
    for a in log.attempts:
        if a.job in jobs:
            move(a.start, -1, 1)
            move(a.finish, 1 if a.killed else 0, -1)
    pending = running = 0
    since: tuple[float, int, int] | None = None
    for t in sorted(changes):
        dp, dr = changes[t]
        pending += dp
        running += dr
        waiting = pending > 0 and running < quota
        if waiting and since is None:
            since = (t, running, pending)
        elif not waiting and since is not None:
            if t - since[0] > T_MIN + 1e-9:
                return since[0], t, since[1], since[2]
            since = None
    return None
