"""The workload layer: the validated scenario (users, queues, jobs) and where jobs come from.

:func:`load_scenario` and :func:`parse_scenario` validate a scenario (SPEC section 1) at the
edge and build the trusted :class:`Scenario`; a problem is one :class:`ScenarioError`.
The submodules hold the queue hierarchy (:mod:`.hierarchy`), machine types
(:mod:`.eligibility`), the workload generators (:mod:`.generators`) and the trace readers
(:mod:`.traces`).

Examples
--------
>>> from fairshare.workload import parse_scenario
>>> scenario = parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}], "users": [{"name": "a"}]},
...     source="inline",
... )
>>> scenario.cluster.resources, [user.name for user in scenario.users]
(('slots',), ['a'])
"""

from fairshare.workload.loader import ScenarioError, load_scenario, parse_scenario
from fairshare.workload.model import Job, Queue, Scenario, User

__all__ = ["Job", "Queue", "Scenario", "ScenarioError", "User", "load_scenario", "parse_scenario"]
