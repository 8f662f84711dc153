"""The fairness properties of the papers, by name (:data:`PROPERTIES`), as checks on one
scenario document.

Each property follows :class:`~fairshare.fairness.protocol.FairnessProperty`: its
``violation(document, policy)`` returns ``None`` when the property holds on that scenario, or a
:class:`~fairshare.fairness.protocol.Violation`: one sentence explaining it, and the scenario that
exhibits it when that is not the document searched (sharing incentive sets the weights its
partitions entitle). The search (``fairshare.fairness.search``) feeds them random scenarios and
shrinks what they find. How a property sees an allocation (Leontief divisible tasks, columns,
entitlements) is :mod:`fairshare.fairness.outcomes`; the lies of the strategy-proofness
properties are :mod:`fairshare.fairness.manipulations`.

- sharing incentive (:mod:`~fairshare.fairness.sharing`): DRF section 3 for pooled policies (each
  user is entitled to its weighted share ``w_i / sum(w)`` of every resource; under a hierarchy,
  the product of the weight fractions along its path, H-DRF section 2.1). With placement: TSF
  Definition 1 with arbitrary dedicated partitions (an equal split of every machine, and every
  split of whole machines where a user can use what it contributes, Choosy section 3.1's
  constrained sharing incentive); the weights are those the partitions entitle,
  ``w_i = k_i / h_i`` (TSF Theorem 1, Choosy's ``k_i`` with one resource), or ``k_i / M_i`` for
  constrained CDRF (TSF Theorem 15);
- strategy-proofness (:mod:`~fairshare.fairness.truthfulness`; DRF section 3, Choosy section
  3.2, TSF Definition 2): no user runs more true tasks by misreporting its demand vector and/or
  its constraint (a superset or a subset of its machines), with weights given a priori (TSF
  Theorem 2);
- envy-freeness (:mod:`~fairshare.fairness.efficiency`; TSF Definition 3):
  ``n_i >= (w_i / w_j) n_{i<->j}``;
- Pareto efficiency (:mod:`~fairshare.fairness.efficiency`; DRF section 3, TSF Definition 4): no
  user can run more tasks, by any feasible re-placement, with no other user running fewer (a
  linear program);
- single-machine fairness (:mod:`~fairshare.fairness.reductions`; TSF Definition 5): on one
  machine the allocation is DRF's;
- single-resource fairness (:mod:`~fairshare.fairness.reductions`; TSF Definition 6): with one
  resource it is CMMF's;
- hierarchical share guarantee (:mod:`~fairshare.fairness.sharing`; H-DRF section 2.1): every
  queue and user gets at least its guaranteed dominant share, the product of
  ``w / sum(w of siblings)`` along its path;
- group strategy-proofness (:mod:`~fairshare.fairness.truthfulness`; H-DRF section 4.2): no
  group of one or two users can misreport so that all are weakly better off and one strictly;
- population monotonicity (:mod:`~fairshare.fairness.monotonicity`; H-DRF section 4.3): no
  user's allocation drops when another leaves;
- quota restored (:mod:`~fairshare.fairness.quotas`; beyond the papers): in a simulated run, a
  queue below its quota with pending work gets a task within the reclaim bound;
- gang progress (:mod:`~fairshare.fairness.gangs`; beyond the papers): in a simulated run with
  EASY backfilling, the head gang starts by its reservation and every gang that fits starts.

Properties that a policy's model does not define are not applicable (``applies``): the
hierarchical share guarantee for flat policies, the TSF paper's reductions to DRF and CMMF
for hierarchical ones, and quota-restored and gang-progress for policies without an online
scheduler.

Examples
--------
>>> list(PROPERTIES)[:3]
['sharing-incentive', 'strategy-proofness', 'envy-freeness']
>>> PROPERTIES["single-machine-fairness"].shape.max_machines
1
"""

from __future__ import annotations

from fairshare.errors import FairshareError
from fairshare.fairness.efficiency import EnvyFreeness, ParetoEfficiency
from fairshare.fairness.gangs import GangProgress
from fairshare.fairness.monotonicity import PopulationMonotonicity
from fairshare.fairness.protocol import FairnessProperty
from fairshare.fairness.quotas import QuotaRestored
from fairshare.fairness.reductions import SingleMachineFairness, SingleResourceFairness
from fairshare.fairness.sharing import HierarchicalShareGuarantee, SharingIncentive
from fairshare.fairness.truthfulness import GroupStrategyProofness, StrategyProofness

_ALL: tuple[FairnessProperty, ...] = (
    SharingIncentive(),
    StrategyProofness(),
    EnvyFreeness(),
    ParetoEfficiency(),
    SingleMachineFairness(),
    SingleResourceFairness(),
    HierarchicalShareGuarantee(),
    GroupStrategyProofness(),
    PopulationMonotonicity(),
    QuotaRestored(),
    GangProgress(),
)
PROPERTIES: dict[str, FairnessProperty] = {p.name: p for p in _ALL}
"""Every property by name, in the order ``fairshare check --all`` lists them."""


class UnknownProperty(FairshareError, KeyError):
    """A property name that is not in :data:`PROPERTIES` (what :func:`~fairshare.check`
    raises for it). Also a ``KeyError``, as the lookup raised before.

    Parameters
    ----------
    where : str
        The parameter at fault (``property_name``).
    what : str
        What is wrong, listing the allowed names.

    Examples
    --------
    >>> error = property_named("fairness")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairshare.fairness.properties.UnknownProperty: property_name: unknown property 'fairness'; ...
    """

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what

    def __str__(self) -> str:
        # KeyError's own shows its argument quoted, as a key; this is a sentence.
        return f"{self.where}: {self.what}"


def property_named(name: str) -> FairnessProperty:
    """The property of :data:`PROPERTIES` named ``name``.

    Parameters
    ----------
    name : str
        A property's name (``sharing-incentive``, ...).

    Returns
    -------
    FairnessProperty

    Raises
    ------
    UnknownProperty
        ``name`` is not a property; the message lists the allowed names.

    Examples
    --------
    >>> property_named("envy-freeness").name
    'envy-freeness'
    """
    try:
        return PROPERTIES[name]
    except KeyError:
        raise UnknownProperty(
            "property_name", f"unknown property {name!r}; allowed: {', '.join(PROPERTIES)}"
        ) from None
