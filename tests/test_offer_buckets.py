"""A job's offer copies the cluster's free-vector buckets lazily (``Placer._offer_job``):
none before the first its task fits (those are passed on the dictionary itself), the next
``placer.FIRST_BUCKETS``, then, for a job they do not place whole, the rest as they
were before its offers moved machines between buckets. The launches must be those of a copy
of every bucket up front (the previous code): lowering the constant to 1 makes nearly every
job of these runs take the second copy, after offers that emptied, made and filled buckets.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.policies import placer
from fairshare.sim.engine import simulate
from fairshare.workload.model import FixedDuration, Job

from conftest import scaled_examples


@contextmanager
def _first_buckets(count: int) -> Iterator[None]:
    saved = placer.FIRST_BUCKETS
    placer.FIRST_BUCKETS = count
    try:
        yield
    finally:
        placer.FIRST_BUCKETS = saved


def _launches(
    cluster: Cluster, jobs: list[Job], policy: str, first: int
) -> list[tuple[str, int, str, float, float]]:
    with _first_buckets(first):
        log = simulate(cluster, jobs, policy, seed=0)
    return [(a.job, a.task, a.machine, a.start, a.finish) for a in log.attempts]


@settings(max_examples=scaled_examples(40), deadline=None)
@given(
    st.lists(st.integers(2, 12), min_size=3, max_size=30),
    st.lists(
        st.tuples(
            st.integers(0, 3),  # user
            st.integers(1, 6),  # cpu per task (the leading buckets may not fit it)
            st.integers(1, 40),  # tasks
            st.integers(0, 20),  # submit
            st.integers(1, 9),  # duration
        ),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(["drf", "fair", "tsf", "fifo"]),
)
def test_lazy_bucket_copies_place_as_the_whole_copy(
    sizes: list[int], specs: list[tuple[int, int, int, int, int]], policy: str
) -> None:
    """Machines of distinct sizes (one bucket each at first), jobs of up to 40 tasks that
    spread over many of them: the same attempts with one bucket copied first as with all."""
    cluster = Cluster.build(
        ["cpu", "mem"],
        [Machine(f"m{i}", np.array([float(c), float(c + i)])) for i, c in enumerate(sizes)],
    )
    jobs = [
        Job(f"j{k}", float(t), f"u{u}", np.array([float(c), 1.0]), n, FixedDuration(float(d)))
        for k, (u, c, n, t, d) in enumerate(sorted(specs, key=lambda x: x[3]))
    ]
    whole = _launches(cluster, jobs, policy, 10**9)
    assert len(whole) == sum(job.tasks for job in jobs if job.demand[0] <= max(sizes))
    assert _launches(cluster, jobs, policy, 1) == whole
    assert _launches(cluster, jobs, policy, 2) == whole


def test_a_job_spread_over_every_bucket() -> None:
    """Ten machines of 1 to 10 CPUs and one job of 55 one-CPU tasks: it fills every machine,
    taking the second copy after the first bucket, in the buckets' order."""
    cluster = Cluster.build(
        ["cpu", "mem"], [Machine(f"m{i}", np.array([float(i + 1), 64.0])) for i in range(10)]
    )
    jobs = [Job("j", 0.0, "u", np.array([1.0, 1.0]), 55, FixedDuration(5.0))]
    whole = _launches(cluster, jobs, "drf", 10**9)
    assert sorted(m for _, _, m, _, _ in whole) == sorted(
        f"m{i}" for i in range(10) for _ in range(i + 1)
    )
    assert _launches(cluster, jobs, "drf", 1) == whole


def test_a_job_that_fits_none_of_the_first_buckets() -> None:
    """Ten machines of 1 to 10 CPUs (one bucket each, in that order) and a job of seven
    five-CPU tasks: the first four buckets are passed uncopied, and the tasks go to the
    machines of 5 to 10 CPUs in the buckets' order, one each and a second on m9 (10 CPUs),
    the same with one bucket copied at a time as with all."""
    cluster = Cluster.build(
        ["cpu", "mem"], [Machine(f"m{i}", np.array([float(i + 1), 64.0])) for i in range(10)]
    )
    jobs = [Job("j", 0.0, "u", np.array([5.0, 1.0]), 7, FixedDuration(5.0))]
    whole = _launches(cluster, jobs, "drf", 10**9)
    assert [m for _, _, m, _, _ in whole] == ["m4", "m5", "m6", "m7", "m8", "m9", "m9"]
    assert _launches(cluster, jobs, "drf", 1) == whole
    # A job that fits no bucket is offered nothing.
    wide = [Job("w", 0.0, "u", np.array([11.0, 1.0]), 2, FixedDuration(5.0))]
    assert _launches(cluster, wide, "drf", 1) == []
