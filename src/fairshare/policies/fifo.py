"""FIFO: jobs in submission order, each taking every machine it can use (FAIR section 2's
Hadoop default, the baseline of FAIR section 6 and TSF section VI-B)."""

from __future__ import annotations

from fairshare.policies.base import Scheduler
from fairshare.policies.state import UserState


class Fifo(Scheduler):
    """The key of a user in a group is the id (submission order) of its oldest job there, so
    the oldest job that can use a machine gets it; a younger job only fills what the older
    ones cannot use."""

    name = "fifo"

    def user_key(self, user: UserState, group: int) -> float:
        return float(self._head_job(user, group).id)
