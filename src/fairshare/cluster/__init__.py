"""The cluster layer: resources, machines and the placement-constraint language."""

from fairshare.cluster.model import (
    AttributeValue,
    BoolArray,
    Cluster,
    FloatArray,
    Machine,
    attribute_signature,
)

__all__ = ["AttributeValue", "BoolArray", "Cluster", "FloatArray", "Machine", "attribute_signature"]
