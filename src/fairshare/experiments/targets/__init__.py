"""The papers' evaluation figures and tables as reproduction targets (``fairshare
reproduce``, SPEC section 7), one module per paper: :mod:`.fair`, :mod:`.hdrf`,
:mod:`.choosy`, :mod:`.tsf`. Each target (:class:`~.base.Target`) defines, in one place and
citing the paper's section, its workload and policies (grids run on the sweep machinery),
its metrics beside the paper's numbers with the tolerance for ``reproduced``
(:class:`~.base.Claim`), and its figure. A target the model cannot express yet is listed
with what it needs and never runs.

Examples
--------
>>> from fairshare.experiments.targets import TARGETS, target
>>> target("fair-table3").paper, all(t.runnable for t in TARGETS)
('FAIR', True)
>>> len({t.name for t in TARGETS}) == len(TARGETS)
True
"""

from __future__ import annotations

from fairshare.experiments.targets import choosy, fair, hdrf, tsf
from fairshare.experiments.targets.base import Target

__all__ = ["TARGETS", "target", "target_names"]

TARGETS: tuple[Target, ...] = (*fair.TARGETS, *hdrf.TARGETS, *choosy.TARGETS, *tsf.TARGETS)
"""Every target, in the order ``--list`` prints them."""

_BY_NAME = {t.name: t for t in TARGETS}


def target_names() -> list[str]:
    """The targets' names, in order."""
    return [t.name for t in TARGETS]


def target(name: str) -> Target:
    """The target called ``name``.

    Raises
    ------
    KeyError
        No target has that name.
    """
    return _BY_NAME[name]
