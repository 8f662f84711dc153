"""Mechanisms that combine with any policy, and their settings (SPEC section 3 options):
delay scheduling, preemption, the order of jobs in a pool, headroom, reducer slow-start and
copy-compute splitting, given to :func:`fairshare.policies.make_policy` as one
:class:`PolicyOptions`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class PolicyOptions:
    """Settings of the mechanisms every policy supports (the defaults turn them all off).

    Parameters
    ----------
    delay : (float, float), optional
        Delay scheduling's waits ``(T1, T2)`` in seconds (FAIR Algorithm 1,
        :mod:`fairshare.policies.delay`), or None for none.
    job_delays : mapping of str to (float, float)
        Per-job ``(T1, T2)`` by job name, overriding ``delay`` (IO-rate biasing, FAIR section
        4.3.2: CPU-bound jobs get shorter waits).
    preemption : (float, float), optional
        The ``(Tmin, Tfair)`` timeouts in seconds (FAIR section 3.2,
        :mod:`fairshare.policies.preemption`), or None for no preemption.
    pool_order : {"fair", "fifo"}
        The order of jobs inside a pool (user) under ``fair``: fewest running tasks per
        weight first, or oldest first.
    headroom : bool
        Keep, on every machine, room for the largest task waiting for it, which smaller tasks
        may not take (H-DRF section 5; the rules are
        :meth:`fairshare.policies.headroom.Headroom.headroom`'s).
    reduce_slowstart : float
        The fraction of a job's maps that must have finished before its reducers may launch
        (Hadoop's ``mapred.reduce.slowstart.completed.maps``; FAIR section 5.1: Hadoop
        launches reducers "as soon as its first few maps finish"). At least one map must have
        finished (0 means: the first map). 1.0, the default, launches reducers after the last
        map.
    copy_compute : (int, int), optional
        Copy-compute splitting with Compute Phase Admission Control (FAIR section 5.2) as
        ``(max_reducers, max_computing)`` per machine, or None (see
        :mod:`fairshare.policies.copy_compute`).
    slots : int, optional
        Slots per machine of the slot scheduler (``slots``, :mod:`fairshare.policies.slots`);
        None: one per unit of the machine's ``cpu`` (else ``slots``, else first) resource.
    max_capacity : float
        The Capacity Scheduler's maximum capacity of every queue, as a fraction of its
        parent's (Hadoop's ``maximum-capacity``; ``capacity``,
        :mod:`fairshare.policies.capacity`); 1.0 lets a queue grow into all idle capacity.
    backfill : {"easy"}, optional
        EASY backfilling (Lifka 1995; Mu'alem and Feitelson 2001): the first waiting gang in
        the policy's order gets a reservation, and later work starts only where it does not
        delay it (:mod:`fairshare.policies.gangs`); None: waiting gangs are only passed over.
    backfill_interval : float
        Seconds a head gang's EASY reservation is kept before it is computed again (the
        head unchanged and no machine joined or left); 0, the default, computes it at every
        decision with news. Slurm's backfill scheduler runs every ``bf_interval`` (30 s by
        default), which ``slurm-fairtree`` adopts: a kept reservation is never optimistic
        (tasks that ended early only free room it does not count), so the head still starts
        by its reserved time.
    usage_half_life : float, optional
        Seconds after which past usage counts half (SPEC section 8.3,
        :mod:`fairshare.policies.usage`): a user's standing adds its decayed past share to
        what it holds now; None: the papers' instantaneous fairness.

    Examples
    --------
    >>> from fairshare.policies import PolicyOptions
    >>> options = PolicyOptions(delay=(5.0, 5.0), preemption=(10.0, 30.0))
    >>> options.delay, options.pool_order, options.headroom
    ((5.0, 5.0), 'fair', False)
    """

    delay: tuple[float, float] | None = None
    job_delays: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    preemption: tuple[float, float] | None = None
    pool_order: Literal["fair", "fifo"] = "fair"
    headroom: bool = False
    reduce_slowstart: float = 1.0
    copy_compute: tuple[int, int] | None = None
    slots: int | None = None
    max_capacity: float = 1.0
    backfill: Literal["easy"] | None = None
    backfill_interval: float = 0.0
    usage_half_life: float | None = None
