"""Sharma et al.'s model of Google's placement constraints, as Choosy section 7.1 and TSF
section VI use it: 21 boolean machine attributes ``a0`` ... ``a20``, 4 machine classes, a
frequency for each class meeting each attribute, and jobs requiring each attribute with its own
probability (1.8 attributes per job on average). The ``google-constraints`` generator
(:mod:`fairshare.workload.generators`) draws its jobs' constraints from it.

Examples
--------
A job's constraint is the conjunction of the attributes it requires, redrawn until some machine
meets them all:

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> plain = Cluster.build(["slots"], [Machine(f"m{i}", np.array([1.0])) for i in range(50)])
>>> rng = np.random.default_rng(3)
>>> has = attribute_matrix(constraint_cluster(plain, rng))
>>> has.shape
(50, 21)
>>> constraint = draw_constraint(has, rng, {})
>>> constraint is None or all(name.startswith("a") for name in constraint.attributes())
True
"""

from __future__ import annotations

import numpy as np

from fairshare.cluster import AttributeValue, BoolArray, Cluster, Machine
from fairshare.cluster.constraints import Constraint, parse_constraint

__all__ = [
    "ATTRIBUTES",
    "ATTRIBUTE_FREQUENCY",
    "CLASS_SHARES",
    "REQUIRE_PROBABILITY",
    "attribute_matrix",
    "constraint_cluster",
    "draw_constraint",
    "has_attributes",
]

ATTRIBUTES = tuple(f"a{k}" for k in range(21))
"""The 21 machine attributes of the Sharma et al. constraint model (Choosy section 7.1)."""

CLASS_SHARES = (0.4, 0.3, 0.2, 0.1)
"""Fractions of machines in each of the 4 machine classes (TSF section VI: 4 classes)."""

_CLASS_RICHNESS = (0.8, 1.0, 1.2, 1.4)
"""How much more often than average each class meets an attribute: newer, better-equipped
classes meet the rarer constraints more often, so attributes are correlated as in a real
fleet."""

ATTRIBUTE_FREQUENCY = (
    1.0, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.55, 0.5, 0.45, 0.4,
    0.35, 0.3, 0.27, 0.24, 0.2, 0.16, 0.13, 0.11, 0.09, 0.075,
)  # fmt: skip
"""Overall fraction of machines meeting each attribute: "from 100% for one constraint to
7-8%" (Choosy section 7.1)."""

REQUIRE_PROBABILITY = (0.1,) + (1.34 / 14,) * 14 + (0.06,) * 6
"""Probability that a job requires each attribute: 1.8 on average (Choosy section 7.1).
Calibrated so that the average job can use about 38% of the machines, 40% of jobs under 20%
and 30% under 10%, the statistics Choosy reports."""

_CLASS_ATTRIBUTE = np.array(ATTRIBUTE_FREQUENCY)[np.newaxis, :] ** (
    1.0 / np.array(_CLASS_RICHNESS)[:, np.newaxis]
)
"""Per class and attribute, the probability that a machine of the class meets it: the
overall frequency raised to 1 / richness, so an attribute every machine has stays universal
and richer classes meet the rare ones more often."""

_REDRAWS = 1000
"""How many times a job's attributes are redrawn before it is left without a constraint."""


def has_attributes(machine: Machine) -> bool:
    """Whether ``machine`` carries all 21 attributes of the constraint model."""
    return all(name in machine.attributes for name in ATTRIBUTES)


def constraint_cluster(cluster: Cluster, rng: np.random.Generator) -> Cluster:
    """``cluster`` with every machine carrying the 21 attributes of the constraint model.

    The model is Sharma et al.'s, as Choosy section 7.1 uses it. The cluster is kept as it
    is when every machine has them already; otherwise each machine gets a class
    (``machine_class``: ``c0`` ... ``c3``, by :data:`CLASS_SHARES`) and each attribute with
    its class's frequency. Attributes a machine already has are kept.

    Parameters
    ----------
    cluster : Cluster
        The scenario's cluster.
    rng : numpy.random.Generator
        The source of the draws.

    Returns
    -------
    Cluster
        The same machines, names, capacities and racks, with the attributes.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.workload.constraint_model import ATTRIBUTES, constraint_cluster
    >>> plain = Cluster.build(["slots"], [Machine("m", np.array([4.0]))])
    >>> attributes = constraint_cluster(plain, np.random.default_rng(0)).machines[0].attributes
    >>> all(name in attributes for name in ATTRIBUTES), attributes["a0"]
    (True, True)
    """
    if all(has_attributes(m) for m in cluster.machines):
        return cluster
    count = len(cluster.machines)
    classes = rng.choice(len(CLASS_SHARES), size=count, p=np.array(CLASS_SHARES))
    has = rng.random((count, len(ATTRIBUTES))) < _CLASS_ATTRIBUTE[classes]
    machines = []
    for i, machine in enumerate(cluster.machines):
        attributes: dict[str, AttributeValue] = {"machine_class": f"c{classes[i]}"}
        attributes.update({name: bool(has[i, k]) for k, name in enumerate(ATTRIBUTES)})
        attributes.update(machine.attributes)
        machines.append(Machine(machine.name, machine.capacity, machine.rack, attributes))
    return Cluster.build(cluster.resources, machines)


def attribute_matrix(cluster: Cluster) -> BoolArray:
    """Machines x attributes: True where the machine meets the attribute (is truthy, the
    meaning of a bare attribute in a constraint)."""
    return np.array(
        [[bool(m.attributes.get(name)) for name in ATTRIBUTES] for m in cluster.machines],
        dtype=np.bool_,
    ).reshape(len(cluster.machines), len(ATTRIBUTES))


def draw_constraint(
    has: BoolArray, rng: np.random.Generator, cache: dict[tuple[int, ...], Constraint]
) -> Constraint | None:
    """A job's constraint: attributes drawn with :data:`REQUIRE_PROBABILITY`, redrawn until
    some machine meets them all; None for a job that requires none.
    """
    probabilities = np.array(REQUIRE_PROBABILITY)
    for _ in range(_REDRAWS):
        required = np.flatnonzero(rng.random(len(ATTRIBUTES)) < probabilities)
        if required.size == 0:
            return None
        if has[:, required].all(axis=1).any():
            key = tuple(int(k) for k in required)
            if key not in cache:
                cache[key] = parse_constraint(" and ".join(ATTRIBUTES[k] for k in key))
            return cache[key]
    return None  # no machine meets any drawn set: the cluster is tiny; leave the job free
