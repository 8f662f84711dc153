"""Preemption with the Tmin / Tfair timeouts (FAIR section 3.2) and FAIR's slot allocation
(Appendix A, Algorithm 2) that defines the fair shares it protects.

Rules, all deterministic:

- A user (pool) is *min-starved* while it runs fewer than ``min(min_share, demand)`` tasks,
  and *fair-starved* while it runs fewer than half its fair share; the timer starts when the
  condition is first seen and clears when it stops holding.
- After ``Tmin`` seconds min-starved, the user may take back up to its minimum share; after
  ``Tfair`` fair-starved, up to (the floor of) its fair share.
- Victims are over-scheduled users (running more than the ceiling of their fair share). The
  most recently launched of their tasks go first, never taking a user below the ceiling of its
  fair share, and only tasks on machines the starved user may use.

Why it does not flap: a victim keeps at least the ceiling of its fair share, so it is never
starved itself and never takes the slot back by preemption; fair shares are recomputed from
demands only, so a kill does not change who is owed what.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def fair_shares(
    demands: Sequence[float], mins: Sequence[float], weights: Sequence[float], slots: float
) -> list[float]:
    """FAIR's slot allocation (Appendix A, Algorithm 2), weighted: pools whose demand is below
    their minimum share get their demand, the others their minimum share, and the rest is
    poured evenly (in proportion to weight) into the pools with the least water until demands
    are met or slots run out. Minimum shares are scaled down when they exceed ``slots``."""
    n = len(demands)
    share = [0.0] * n
    base = [min(d, m) for d, m in zip(demands, mins, strict=True)]
    total_min = sum(base)
    scale = 1.0 if total_min <= slots or total_min == 0 else slots / total_min
    for i in range(n):
        share[i] = base[i] * scale
    left = slots - sum(share)
    active = [i for i in range(n) if share[i] < demands[i]]
    # Water-filling on the weighted level share/weight: raise the lowest level first.
    while active and left > 1e-12:
        levels = sorted(active, key=lambda i: (share[i] / weights[i], i))
        low = share[levels[0]] / weights[levels[0]]
        at_low = [i for i in levels if share[i] / weights[i] <= low + 1e-12]
        above = [share[i] / weights[i] for i in levels if share[i] / weights[i] > low + 1e-12]
        next_level = min(above) if above else math.inf
        room = min((demands[i] - share[i]) / weights[i] for i in at_low)
        wsum = sum(weights[i] for i in at_low)
        step = min(left / wsum, room, next_level - low)
        for i in at_low:
            share[i] += step * weights[i]
        left -= step * wsum
        active = [i for i in active if share[i] < demands[i] - 1e-12]
    return share


class StarvationTimers:
    """When each user started being min-starved and fair-starved (None when it is not)."""

    def __init__(self) -> None:
        self.min_since: dict[int, float] = {}
        self.fair_since: dict[int, float] = {}

    def update(self, user: int, now: float, min_starved: bool, fair_starved: bool) -> None:
        if min_starved:
            self.min_since.setdefault(user, now)
        else:
            self.min_since.pop(user, None)
        if fair_starved:
            self.fair_since.setdefault(user, now)
        else:
            self.fair_since.pop(user, None)

    def deadlines(self, t_min: float, t_fair: float) -> list[float]:
        return [t + t_min for t in self.min_since.values()] + [
            t + t_fair for t in self.fair_since.values()
        ]
