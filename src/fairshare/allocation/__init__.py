"""The allocation every solver and online policy returns, and the invariant checks on it."""

from fairshare.allocation.document import allocation_document, printed_allocation
from fairshare.allocation.invariants import check_allocation
from fairshare.allocation.types import Allocation, Placement

__all__ = [
    "Allocation",
    "Placement",
    "allocation_document",
    "check_allocation",
    "printed_allocation",
]
