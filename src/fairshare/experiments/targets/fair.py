"""FAIR's evaluation (Zaharia et al., *Job Scheduling for Multi-User MapReduce Clusters*,
sections 5.3 and 6) as reproduction targets, in the order ``--list`` prints them: the
locality experiments of section 6.2 (:mod:`.fair_locality`: ``fair-table3``,
``fair-fig13-14``, ``fair-fig15``, section 6.2.3's ``fair-s623``) and the response times of
sections 6.1, 5.3, 6.2.5 and 6.2.6 (:mod:`.fair_response`: ``fair-fig10-11``,
``fair-fig8-9``, ``fair-s625``, ``fair-s626``).
"""

from __future__ import annotations

from fairshare.experiments.targets.base import Target
from fairshare.experiments.targets.fair_locality import FIG13_14, FIG15, S623, TABLE3
from fairshare.experiments.targets.fair_response import FIG8_9, FIG10_11, S625, S626

__all__ = ["TARGETS"]

TARGETS: tuple[Target, ...] = (TABLE3, FIG13_14, FIG10_11, FIG8_9, FIG15, S623, S625, S626)
"""FAIR's targets."""
