"""No starvation of a waiting gang under EASY backfilling, as a checkable property (issue 18;
the rules are :mod:`fairshare.policies.gangs` and ``docs/policies/gangs.md``).

``gang-progress``: simulate the online policy of the checked policy's name with
``--backfill easy`` on a scenario of jobs, some of them gangs, whose tasks run exactly as long
as the policy expects (fixed durations: every reservation is exact), and read every decision's
head gang and reservation (Lifka 1995; Mu'alem and Feitelson 2001, section 2: backfilled work
never delays the head's reserved start). Three things must hold:

- while one gang stays the head and no other gang starts, its reserved start never moves
  later (under a fair-share order a gang ranked before it may start first, or become the
  head: that ends the stretch, and the next stretch has a reservation of its own);
- a head that starts at the end of such a stretch starts no later than the stretch's first
  reservation;
- every gang whose ``min_tasks`` fit the machines it may use starts before the run ends.

Only policies with an online counterpart of the same name are checked (``drf``, ``hdrf``,
``collapsed-drf``, ``tsf``, ``drfh``, ``cdrf``); for the others the property is not
applicable.

Examples
--------
One slot of four busy until t=100; the gang of four gets its reservation for t=100, and the
500-second job behind it waits instead of delaying it:

>>> document = {
...     "machines": [{"name": "m", "count": 4, "capacity": {"slots": 1}}],
...     "jobs": [
...         {"name": "long", "submit": 0, "user": "a", "tasks": 1, "duration": 100},
...         {"name": "gang", "submit": 1, "user": "b", "tasks": 4, "duration": 10,
...          "gang": True},
...         {"name": "late", "submit": 3, "user": "d", "tasks": 1, "duration": 500},
...     ],
... }
>>> GangProgress().violation(document, "drf") is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape
from fairshare.policies import ONLINE_POLICIES, Decision, Scheduler
from fairshare.sim.engine import simulate
from fairshare.sim.options import SimOptions
from fairshare.workload.loader import parse_scenario

SchedulerClass = type[Scheduler]
"""An online policy's class, built as :func:`fairshare.policies.make_policy` builds it:
``cls(cluster, users=..., queues=..., options=...)``."""


@dataclass(frozen=True)
class _Seen:
    """One decision: its time, the head gang (part id, None: no reservation), its reserved
    start, and the gangs the decision started."""

    now: float
    head: int | None
    start: float
    admitted: frozenset[int]


class GangProgress:
    """No waiting gang starves under EASY backfilling: the head's reservation is kept, and
    every gang that fits its machines starts.

    Parameters
    ----------
    factory : callable, optional
        The online policy's class to simulate (``cls(cluster, users=, queues=, options=)``;
        it is subclassed to read each decision's head and reservation); default: the class
        of the online policy named as the checked one. A test passes a deliberately broken
        scheduler here.
    """

    name = "gang-progress"
    shape = ScenarioShape(gangs=True)
    trials = 100

    def __init__(self, factory: SchedulerClass | None = None) -> None:
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
        """Simulate ``document`` under the online ``policy`` with ``--backfill easy`` and
        look for a head gang whose reservation slipped, or a gang that fits and never starts.

        Parameters
        ----------
        document : Document
            A scenario with ``jobs``; one whose jobs' durations are not fixed (a reservation
            would then be an estimate) has no violation.
        policy : str
            An online policy's name.
        focus : tuple of str
            Unused: no user misreports.

        Returns
        -------
        Violation or None
        """
        scenario = parse_scenario(document, source="gang-progress")
        if any(not isinstance(j.get("duration"), int | float) for j in document["jobs"]):
            return None
        jobs = sorted(scenario.jobs, key=lambda job: job.submit)
        names = [job.name for job in jobs]
        options = SimOptions(backfill="easy")
        base = self.factory if self.factory is not None else ONLINE_POLICIES[policy].cls
        seen: list[_Seen] = []
        recording = _recording(base, seen)
        sched = recording(
            scenario.cluster,
            users=scenario.users,
            queues=scenario.queues,
            options=options.policy_options(),
        )
        log = simulate(
            scenario.cluster,
            jobs,
            sched,
            seed=0,
            users=scenario.users,
            queues=scenario.queues,
            options=options,
        )
        command = f"(fairshare simulate --policy {policy} --backfill easy)"
        records = {r.job: r for r in log.jobs}
        gangs = {name for name, job in zip(names, jobs, strict=True) if job.min_tasks is not None}
        found = _slipped(seen, names)
        if found is not None:
            return Violation(f"{found} {command}")
        for name in names:
            record = records[name]
            if (
                name in gangs
                and record.first_start is None
                and math.isfinite(record.isolated_response)
            ):
                return Violation(
                    f"gang {name} fits its machines but never starts, submitted at "
                    f"t={record.submit:g} {command}"
                )
        return None


def _recording(base: SchedulerClass, seen: list[_Seen]) -> SchedulerClass:
    """``base`` subclassed to append each decision's head, reservation and admitted gangs to
    ``seen`` (a subclass: the compiled kernel's instances cannot be patched)."""

    def decide(self: Any, now: float) -> list[Decision]:
        waiting = frozenset(self.gangs)
        out: list[Decision] = base.decide(self, now)
        res = self.reservation
        seen.append(
            _Seen(
                now,
                None if res is None else int(res.job),
                math.inf if res is None else float(res.start),
                waiting - frozenset(self.gangs),
            )
        )
        return out

    recording: SchedulerClass = type(f"Recording{base.__name__}", (base,), {"decide": decide})
    return recording


def _slipped(seen: list[_Seen], names: list[str]) -> str | None:
    """The first head whose reservation moved later, or that started after it, within a
    stretch of decisions where it stayed the head and no other gang started; None if
    none did."""
    head: int | None = None
    first = latest = math.inf
    since = 0.0
    for decision in seen:
        if head is not None and head in decision.admitted:
            if decision.now > first + 1e-9:
                return (
                    f"gang {names[head]}, the head since t={since:g} with a reservation for "
                    f"t={first:g}, starts at t={decision.now:g}"
                )
            head = None
        elif head is not None and (decision.head != head or decision.admitted):
            head = None
        elif head is not None and decision.start > latest + 1e-9:
            return (
                f"gang {names[head]}'s reservation, for t={latest:g} while it is the head "
                f"and no gang starts, moves to t={decision.start:g} at t={decision.now:g}"
            )
        if head is None and decision.head is not None:
            head, first, since = decision.head, decision.start, decision.now
        if head is not None:
            latest = decision.start
    return None
