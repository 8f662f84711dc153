"""The workload layer: the validated scenario (users, queues, jobs), its loader and the queue
hierarchy."""

from fairshare.workload.loader import ScenarioError, load_scenario, parse_scenario
from fairshare.workload.model import Job, Queue, Scenario, User

__all__ = ["Job", "Queue", "Scenario", "ScenarioError", "User", "load_scenario", "parse_scenario"]
