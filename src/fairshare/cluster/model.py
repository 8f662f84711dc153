"""Resources, machines and the cluster they form (SPEC section 1, ``resources`` and ``machines``).

Everything here is already validated: the scenario loader (:mod:`fairshare.workload`) checks
input at the edge and builds these objects, and the layers above trust them. The pooled
cluster (:attr:`Cluster.total`) is the one big machine that DRF (DRF section 4), asset
fairness, CEEI and H-DRF allocate.

Examples
--------
>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> cluster = Cluster.build(
...     ["cpu", "mem"],
...     [Machine("m1", np.array([4.0, 8.0]), rack="r1"), Machine("m2", np.array([2.0, 4.0]))],
... )
>>> cluster.total.tolist(), cluster.machine_names
([6.0, 12.0], ('m1', 'm2'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
"""A float64 numpy array: capacities, demands, task counts and shares."""
BoolArray = npt.NDArray[np.bool_]
"""A boolean numpy array: masks of machines, users or machine types."""
AttributeValue = str | int | float | bool
"""The value of a machine attribute read by placement constraints: a string, a number or a
boolean (SPEC section 1, ``machines[].attributes``).
"""


def attribute_signature(
    attributes: Mapping[str, AttributeValue],
) -> tuple[tuple[str, str, object], ...]:
    """A hashable key of a machine's attributes that tells values of different types apart.

    Python finds ``True == 1 == 1.0``; the constraint language does not (``gpu == 1`` rejects a
    machine whose ``gpu`` is ``true``), so two machines may share a signature only when their
    attributes agree in type and value. Machine types (Choosy section 5.1) group machines by it.

    Parameters
    ----------
    attributes : Mapping of str to AttributeValue
        A machine's attributes.

    Returns
    -------
    tuple of (str, str, object)
        ``(name, type name, value)`` per attribute, sorted by name.

    Examples
    --------
    >>> from fairshare.cluster import attribute_signature
    >>> attribute_signature({"gpu": True, "cores": 8})
    (('cores', 'int', 8), ('gpu', 'bool', True))
    >>> attribute_signature({"gpu": True}) == attribute_signature({"gpu": 1})
    False
    """
    return tuple(sorted((name, type(value).__name__, value) for name, value in attributes.items()))


@dataclass(frozen=True)
class Machine:
    """One machine: its capacity per resource, its rack and the attributes constraints read.

    Parameters
    ----------
    name : str
        The machine's unique name (``name`` in a constraint).
    capacity : FloatArray
        Capacity per resource, in the cluster's resource order.
    rack : str, optional
        The rack (``rack`` in a constraint; delay scheduling's rack locality, FAIR section 4).
        None when the scenario gives none.
    attributes : Mapping of str to AttributeValue
        The attributes placement constraints read (SPEC section 1).

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.cluster import Machine
    >>> Machine("gpu-1", np.array([16.0, 64.0, 4.0]), rack="r1", attributes={"gpu": True}).rack
    'r1'
    """

    name: str
    capacity: FloatArray
    rack: str | None = None
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Cluster:
    """A set of machines over named resource dimensions.

    Build one with :meth:`build`, which derives the matrices from the machines.

    Parameters
    ----------
    resources : tuple of str
        The resource names, in the order of every capacity and demand vector.
    machines : tuple of Machine
        The machines, in scenario order.
    capacities : FloatArray
        The machines x resources matrix of capacities (read-only).
    total : FloatArray
        The column sums of ``capacities``: the pooled cluster that DRF, asset fairness, CEEI
        and H-DRF allocate, treating the cluster as one big machine as the DRF and H-DRF papers
        do (read-only).
    """

    resources: tuple[str, ...]
    machines: tuple[Machine, ...]
    capacities: FloatArray
    total: FloatArray

    @classmethod
    def build(cls, resources: Sequence[str], machines: Sequence[Machine]) -> Cluster:
        """The cluster of ``machines`` over ``resources``, with its capacity matrix and totals.

        Parameters
        ----------
        resources : Sequence of str
            The resource names, in the order of the machines' capacity vectors.
        machines : Sequence of Machine
            The machines, in scenario order.

        Returns
        -------
        Cluster
            ``capacities`` and ``total`` are computed here and made read-only.

        Examples
        --------
        >>> import numpy as np
        >>> from fairshare.cluster import Cluster, Machine
        >>> machines = [Machine("a", np.array([2.0])), Machine("b", np.array([3.0]))]
        >>> cluster = Cluster.build(["slots"], machines)
        >>> cluster.capacities.tolist(), cluster.total.tolist()
        ([[2.0], [3.0]], [5.0])
        """
        capacities = np.array([m.capacity for m in machines], dtype=np.float64).reshape(
            len(machines), len(resources)
        )
        capacities.setflags(write=False)
        total = capacities.sum(axis=0)
        total.setflags(write=False)
        return cls(tuple(resources), tuple(machines), capacities, total)

    @property
    def machine_names(self) -> tuple[str, ...]:
        """The machines' names, in scenario order."""
        return tuple(m.name for m in self.machines)

    def resource_index(self, name: str) -> int:
        """The position of resource ``name`` in every capacity and demand vector.

        Parameters
        ----------
        name : str
            A resource name of the cluster.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            The cluster has no resource of that name.
        """
        return self.resources.index(name)
