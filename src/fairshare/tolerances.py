"""The numeric tolerances of the online core, in one place.

Each is a slack for floating-point sums, never a modelling choice: changing one moves
decisions (``tests/test_decision_fingerprints.py`` would say so).

Examples
--------
Three tasks of 0.1 CPU fill a machine of 0.3 CPUs only with the fit slack:

>>> from fairshare.tolerances import FIT
>>> free = 0.3 - 0.1 - 0.1
>>> free >= 0.1, free + FIT >= 0.1
(False, True)
"""

from __future__ import annotations

from typing import Final

# Final: the compiled kernel inlines each value where it is read (a plain module constant
# is a dictionary look-up at every use).

FIT: Final = 1e-9
"""Slack in fit tests (``free + FIT >= demand``), so that capacities summed from fractional
demands still fit; also the smallest free amount that counts as room."""

TIE: Final = 1e-12
"""Two weighted shares that differ by no more than this are tied (H-DRF's walk: first in
order wins), so that rounding in rescaled sums never breaks a tie of the exact values."""

WATER: Final = 1e-12
"""Water-filling's stopping slack (FAIR Appendix A's slot allocation): slots or demand left
below this count as none."""

WAIT_DELTA: Final = 1e-6
"""Seconds: a change of a tenant's p95 wait within this is no change (``fairshare whatif``
counts a tenant worse or better beyond it; :mod:`fairshare.metrics.whatif`). Reports only:
no decision reads it."""
