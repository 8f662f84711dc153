"""The allocation every solver and online policy returns, and the invariant checks on it."""

from fairshare.allocation.invariants import check_allocation
from fairshare.allocation.types import Allocation, Placement

__all__ = ["Allocation", "Placement", "check_allocation"]
