"""FIFO: jobs in submission order, each taking every machine it can use (FAIR section 2's
Hadoop default, the baseline of FAIR section 6 and TSF section VI-B)."""

from __future__ import annotations

from collections.abc import Sequence

from mypy_extensions import mypyc_attr

from fairshare.policies.base import Scheduler
from fairshare.policies.preemption import priority_shares
from fairshare.policies.state import UserState


@mypyc_attr(allow_interpreted_subclasses=True)
class Fifo(Scheduler):
    """The key of a user in a group is the id (submission order) of its oldest job there, so
    the oldest job that can use a machine gets it; a younger job only fills what the older
    ones cannot use."""

    name = "fifo"

    def user_rank(self, user: UserState, group: int) -> float:
        return float(self.head_job(user, group).id)

    def preemption_shares(self, demands: Sequence[float], capacity: float) -> list[float]:
        """FIFO owes no fair share, only priority: a user's share is what FIFO would give it
        from scratch, users served in the order of their oldest unfinished job (so preemption
        under FIFO lets an older job take back room from younger ones, never the reverse)."""
        oldest: dict[int, int] = {}
        for job in self.jobs.values():
            if job.pending > 0 or job.running > 0:
                first = oldest.get(job.user)
                if first is None or job.id < first:
                    oldest[job.user] = job.id
        order = sorted(range(len(self.users)), key=lambda i: (oldest.get(i, len(self.jobs)), i))
        return priority_shares(demands, order, capacity)
