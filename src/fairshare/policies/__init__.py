"""Online schedulers: events in, decisions out (see :mod:`fairshare.policies.protocol`)."""

from fairshare.policies.base import Scheduler
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import (
    Decision,
    Kill,
    Launch,
    Policy,
    PolicyError,
    TaskRef,
)
from fairshare.policies.registry import ONLINE_POLICIES, make_policy

__all__ = [
    "ONLINE_POLICIES",
    "Decision",
    "Kill",
    "Launch",
    "Policy",
    "PolicyError",
    "PolicyOptions",
    "Scheduler",
    "TaskRef",
    "make_policy",
]
