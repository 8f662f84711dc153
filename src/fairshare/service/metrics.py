"""``GET /metrics``: the service's state in Prometheus' text exposition format (SPEC section 6,
"Additions (production use)"), through ``prometheus_client`` (the ``[ray]`` extra) and a
registry of the service's own (never the process-wide default one, so that two services in
one process, as in the tests, never mix).

What is exposed, and nothing else (no token, no hash, no command, no job name):

- ``fairshare_running_tasks{tenant}``: tasks running now (gauge);
- ``fairshare_pending_jobs{tenant}``: jobs none of whose tasks has started (gauge);
- ``fairshare_share{tenant}``: the tenant's share in the policy's unit (gauge);
- ``fairshare_job_wait_seconds{tenant}``: from the service receiving a job (or resuming
  it) to its first task's launch (histogram);
- ``fairshare_decisions_total``: launches and kills the policy decided (counter).

The gauges are read when scraped (the driver's last published shares, one query of the
database); the histogram is fed by the driver's thread at each job's first launch.

Examples
--------
>>> import numpy as np
>>> from prometheus_client.parser import text_string_to_metric_families
>>> from fairshare.backends import FakeExecutor, LiveDriver, LiveJob
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import make_policy
>>> from fairshare.service.core import LiveService
>>> from fairshare.service.store import Store
>>> from fairshare.workload.model import User
>>> executor = FakeExecutor(("cpu",), [Machine("n1", np.array([4.0]))])
>>> tenants = [User("alice", np.array([1.0]))]
>>> policy = make_policy("drf", Cluster.build(executor.resources, executor.nodes()))
>>> driver = LiveDriver(policy, executor, users=tenants)
>>> service = LiveService(Store(":memory:"), driver, policy="drf", users=tenants)
>>> metrics = ServiceMetrics(service)
>>> driver.submit(LiveJob("j1", "alice", "train", 3, {"cpu": 1.0}, ("true",)))
>>> driver.step(0.0)
>>> families = {f.name: f for f in text_string_to_metric_families(metrics.render().decode())}
>>> [(s.labels, s.value) for s in families["fairshare_running_tasks"].samples]
[({'tenant': 'alice'}, 3.0)]
>>> families["fairshare_decisions"].samples[0].value
3.0
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from fairshare.service.core import LiveService

__all__ = ["CONTENT_TYPE", "WAIT_BUCKETS", "ServiceMetrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The exposition format's media type (Prometheus' text format 0.0.4)."""

WAIT_BUCKETS = (0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)
"""Upper bounds of ``fairshare_job_wait_seconds``' buckets (+Inf is added): a tenth of a
second to a day."""


class _State(Collector):  # type: ignore[misc, unused-ignore]
    """The gauges and the decisions counter, read from the service when scraped."""

    def __init__(self, service: LiveService) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        shares = self.service.shares()
        pending = self.service.store.pending_jobs()
        tenants = sorted(self.service.users)
        running = GaugeMetricFamily(
            "fairshare_running_tasks", "Tasks running now, per tenant.", labels=["tenant"]
        )
        waiting = GaugeMetricFamily(
            "fairshare_pending_jobs",
            "Jobs none of whose tasks has started, per tenant.",
            labels=["tenant"],
        )
        share = GaugeMetricFamily(
            "fairshare_share", "Each tenant's share in the policy's unit.", labels=["tenant"]
        )
        for tenant in tenants:
            count, value = shares.get(tenant, (0, 0.0))
            running.add_metric([tenant], count)
            waiting.add_metric([tenant], pending.get(tenant, 0))
            share.add_metric([tenant], value)
        decisions = CounterMetricFamily(
            "fairshare_decisions", "Launches and kills the policy decided.", labels=[]
        )
        decisions.add_metric([], self.service.driver.decisions)
        yield from (running, waiting, share, decisions)


class ServiceMetrics:
    """The service's metrics in a registry of its own (see the module); it hooks the
    driver's first launches to observe each job's wait.

    Parameters
    ----------
    service : LiveService
        The service.
    """

    def __init__(self, service: LiveService) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.wait = Histogram(
            "fairshare_job_wait_seconds",
            "Seconds from the service receiving a job to its first task's launch.",
            ["tenant"],
            buckets=WAIT_BUCKETS,
            registry=self.registry,
        )
        for tenant in sorted(service.users):
            self.wait.labels(tenant)  # every tenant's series exists from the start
        self.registry.register(_State(service))
        service.driver.on_first_start = self.observe

    def observe(self, tenant: str, seconds: float) -> None:
        """One job's wait (the driver's hook).

        Parameters
        ----------
        tenant : str
            Its tenant.
        seconds : float
            Its wait.
        """
        self.wait.labels(tenant).observe(max(0.0, seconds))

    def render(self) -> bytes:
        """The exposition text (:data:`CONTENT_TYPE`).

        Returns
        -------
        bytes
        """
        return generate_latest(self.registry)
