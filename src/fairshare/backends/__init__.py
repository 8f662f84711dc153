"""Live backends: the online policies run real tasks on a real cluster.

:class:`LiveDriver` feeds a policy (:mod:`fairshare.policies.protocol`) from an
:class:`Executor`'s events and applies its decisions there; :class:`FakeExecutor` is an
in-process executor with a virtual clock (tests), and ``fairshare.backends.ray_cluster`` the
Ray executor (the ``[ray]`` extra; imported only where used, so that ``import fairshare``
never needs Ray).
"""

from fairshare.backends.driver import DEFAULT_MAX_RETRIES, Journal, LiveDriver, LiveJob
from fairshare.backends.executor import ExecEvent, Executor, Failed, Finished, TaskSpec
from fairshare.backends.fake import FakeExecutor

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "ExecEvent",
    "Executor",
    "Failed",
    "FakeExecutor",
    "Finished",
    "Journal",
    "LiveDriver",
    "LiveJob",
    "TaskSpec",
]
