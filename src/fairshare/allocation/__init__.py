"""The allocation every solver and online policy returns, and the invariant checks on it."""

from fairshare.allocation.invariants import check_allocation
from fairshare.allocation.types import Allocation

__all__ = ["Allocation", "check_allocation"]
