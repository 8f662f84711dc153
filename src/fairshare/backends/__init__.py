"""Live backends: the online policies run real tasks on a real cluster.

:class:`LiveDriver` feeds a policy (:mod:`fairshare.policies.protocol`) from an
:class:`Executor`'s events and applies its decisions there; :class:`FakeExecutor` is an
in-process executor with a virtual clock (tests), and ``fairshare.backends.ray_cluster`` the
Ray executor (the ``[ray]`` extra; imported only where used, so that ``import fairshare``
never needs Ray).

Examples
--------
DRF section 4.1's two tenants on one node of <9 CPUs, 18 GB>, run on the fake executor (tasks
of 10 s): the first step launches three of A's tasks and two of B's, as the simulator
would.

>>> import numpy as np
>>> from fairshare.backends import FakeExecutor, LiveDriver, LiveJob
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.workload.model import User
>>> executor = FakeExecutor(("cpu", "mem"), [Machine("n1", np.array([9.0, 18.0]))],
...                         duration=lambda spec: 10.0)
>>> policy = make_policy("drf", Cluster.build(executor.resources, executor.nodes()))
>>> tenants = [User("A", np.array([1.0, 4.0])), User("B", np.array([3.0, 1.0]))]
>>> driver = LiveDriver(policy, executor, users=tenants)
>>> driver.submit(LiveJob("a", "A", "a", 6, {"cpu": 1, "mem": 4}, ("true",)))
>>> driver.submit(LiveJob("b", "B", "b", 4, {"cpu": 3, "mem": 1}, ("true",)))
>>> driver.step(0.0)
>>> {tenant: running for tenant, (running, _) in driver.shares().items()}
{'A': 3, 'B': 2}
>>> while driver.active():
...     driver.step(60.0)
>>> [(record.job, record.finish) for record in driver.log("drf", 0.0).jobs]
[('a', 20.0), ('b', 20.0)]
"""

from fairshare.backends.driver import DEFAULT_MAX_RETRIES, Journal, LiveDriver, LiveJob
from fairshare.backends.executor import (
    ExecEvent,
    Executor,
    Failed,
    Finished,
    OutputRef,
    TaskSpec,
)
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
    "OutputRef",
    "TaskSpec",
]
