"""Mechanisms that combine with any policy, and their settings (SPEC section 3 options)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class PolicyOptions:
    """Settings of the mechanisms every policy supports.

    - ``delay``: delay scheduling waits ``(T1, T2)`` in seconds (FAIR Algorithm 1), or None.
    - ``job_delays``: per-job ``(T1, T2)`` by job name, overriding ``delay`` (IO-rate biasing,
      FAIR section 4.3.2: CPU-bound jobs get shorter waits).
    - ``preemption``: ``(Tmin, Tfair)`` timeouts (FAIR section 3.2), or None.
    - ``pool_order``: ``fair`` or ``fifo`` order of jobs inside a pool (user).
    - ``headroom``: keep, on every machine, room for the largest task waiting for it, which
      smaller tasks may not take (H-DRF section 5; the rules are
      :meth:`fairshare.policies.base.Scheduler.headroom`'s).
    - ``reduce_slowstart``: the fraction of a job's maps that must have finished before its
      reducers may launch (Hadoop's ``mapred.reduce.slowstart.completed.maps``; FAIR section
      5.1: Hadoop launches reducers "as soon as its first few maps finish"). At least one map
      must have finished (0 means: the first map). 1.0, the default, launches reducers after
      the last map.
    - ``copy_compute``: copy-compute splitting with Compute Phase Admission Control, FAIR
      section 5.2, as ``(max_reducers, max_computing)`` per machine, or None (see
      :mod:`fairshare.policies.copy_compute`).
    """

    delay: tuple[float, float] | None = None
    job_delays: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    preemption: tuple[float, float] | None = None
    pool_order: Literal["fair", "fifo"] = "fair"
    headroom: bool = False
    reduce_slowstart: float = 1.0
    copy_compute: tuple[int, int] | None = None
