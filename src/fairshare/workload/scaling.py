"""Load and time scaling of a workload (``simulate --load-scale X --time-scale Y``).

Replaying a trace at another load is how the papers' experiments vary utilisation without
another trace: X times the arrival rate divides every submit time by X (the jobs, their
sizes and their order are unchanged), and Y times the durations multiplies every task's
(and every reducer's copy and compute) seconds by Y. A closed-loop job's think time is part
of its submitter's inter-arrival time, so it is divided by X too.

Examples
--------
>>> import numpy as np
>>> from fairshare.workload.model import FixedDuration, Job
>>> from fairshare.workload.scaling import scale_jobs
>>> jobs = [Job("a", 10.0, "u", np.array([1.0]), 2, FixedDuration(4.0))]
>>> [(j.submit, j.duration) for j in scale_jobs(jobs, load=2.0, time=3.0)]
[(5.0, FixedDuration(seconds=12.0))]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from fairshare.workload.model import (
    Duration,
    ExponentialDuration,
    FixedDuration,
    Job,
    ParetoDuration,
    PerTaskDurations,
)

__all__ = ["scale_duration", "scale_jobs"]


def scale_duration(duration: Duration, factor: float) -> Duration:
    """``duration`` with every task's seconds multiplied by ``factor``.

    A distribution is scaled by its scale parameter (Pareto's minimum, the exponential's
    mean), which multiplies every draw by ``factor``: a scaled run draws the same random
    numbers as the unscaled one.

    Parameters
    ----------
    duration : Duration
        A job's task durations.
    factor : float
        The time scale.

    Returns
    -------
    Duration
        The same kind of duration.

    Examples
    --------
    >>> from fairshare.workload.model import ParetoDuration
    >>> scale_duration(ParetoDuration(alpha=1.9, minimum=10.0), 0.5)
    ParetoDuration(alpha=1.9, minimum=5.0)
    """
    if isinstance(duration, FixedDuration):
        return FixedDuration(duration.seconds * factor)
    if isinstance(duration, PerTaskDurations):
        return PerTaskDurations(tuple(s * factor for s in duration.seconds))
    if isinstance(duration, ParetoDuration):
        return ParetoDuration(duration.alpha, duration.minimum * factor)
    assert isinstance(duration, ExponentialDuration)
    return ExponentialDuration(duration.mean * factor)


def scale_jobs(jobs: Iterable[Job], *, load: float = 1.0, time: float = 1.0) -> Iterator[Job]:
    """The jobs of ``jobs`` at ``load`` times the arrival rate and ``time`` times the
    durations, lazily (a trace larger than memory streams through).

    Parameters
    ----------
    jobs : iterable of Job
        The jobs, in submit order (the order is kept).
    load : float
        Divides submit times and closed-loop think times.
    time : float
        Multiplies task durations and reducers' copy and compute seconds.

    Yields
    ------
    Job
        Each job, scaled; the same object when both factors are 1.
    """
    for job in jobs:
        if load == 1.0 and time == 1.0:
            yield job
            continue
        reduce = job.reduce
        if reduce is not None and time != 1.0:
            reduce = replace(reduce, copy=reduce.copy * time, compute=reduce.compute * time)
        yield replace(
            job,
            submit=job.submit / load,
            think=job.think / load,
            duration=(
                scale_duration(job.duration, time)
                if job.duration is not None and time != 1.0
                else job.duration
            ),
            reduce=reduce,
        )
