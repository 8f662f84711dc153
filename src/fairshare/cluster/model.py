"""Resources, machines and the cluster they form (SPEC section 1, ``resources`` and ``machines``).

Everything here is already validated: the scenario loader (``fairshare.workload``) checks
input at the edge and builds these objects, and the layers above trust them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
AttributeValue = str | int | float | bool


def attribute_signature(
    attributes: Mapping[str, AttributeValue],
) -> tuple[tuple[str, str, object], ...]:
    """``attributes`` as a hashable key that tells values of different types apart: Python
    finds ``True == 1 == 1.0``, the constraint language does not (``gpu == 1`` rejects a
    machine whose ``gpu`` is ``true``), so two machines may share a signature only when
    their attributes agree in type and value. Sorted by name."""
    return tuple(sorted((name, type(value).__name__, value) for name, value in attributes.items()))


@dataclass(frozen=True)
class Machine:
    """One machine: its capacity per resource (in the cluster's resource order), rack and
    attributes used by placement constraints."""

    name: str
    capacity: FloatArray
    rack: str | None = None
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Cluster:
    """A set of machines over named resource dimensions.

    ``capacities`` is the machines x resources matrix; ``total`` its column sums, the pooled
    cluster that DRF, asset fairness, CEEI and H-DRF allocate (they treat the cluster as one
    big machine, as in the DRF and H-DRF papers).
    """

    resources: tuple[str, ...]
    machines: tuple[Machine, ...]
    capacities: FloatArray
    total: FloatArray

    @classmethod
    def build(cls, resources: Sequence[str], machines: Sequence[Machine]) -> Cluster:
        capacities = np.array([m.capacity for m in machines], dtype=np.float64).reshape(
            len(machines), len(resources)
        )
        capacities.setflags(write=False)
        total = capacities.sum(axis=0)
        total.setflags(write=False)
        return cls(tuple(resources), tuple(machines), capacities, total)

    @property
    def machine_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.machines)

    def resource_index(self, name: str) -> int:
        return self.resources.index(name)
