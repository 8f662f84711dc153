"""Every solver policy runs the fairness properties its paper claims for it (few trials, so
this stays fast; `fairshare check --all` runs the full search)."""

from __future__ import annotations

import pytest

from fairshare.fairness import check
from fairshare.solvers import SOLVER_POLICIES

SI, SP, EF, PO = "sharing-incentive", "strategy-proofness", "envy-freeness", "pareto-efficiency"
SMF, SRF = "single-machine-fairness", "single-resource-fairness"
HSG, GSP = "hierarchical-share-guarantee", "group-strategy-proofness"

CLAIMS: dict[str, tuple[str, ...]] = {
    # FAIR Appendix A: weighted max-min on one resource (DRF's one-resource special case).
    "max-min": (SI, SP, EF, PO, SMF, SRF),
    # DRF section 3 (and its reductions, TSF Definitions 5 and 6).
    "drf": (SI, SP, EF, PO, SMF, SRF, GSP),
    # DRF section 5.1: asset fairness is strategy-proof, envy-free and Pareto efficient.
    "asset": (SP, EF, PO),
    # DRF section 5.2: CEEI has sharing incentive, envy-freeness and Pareto efficiency.
    "ceei": (SI, EF, PO),
    # H-DRF sections 2.1 and 4.2.
    "hdrf": (SI, SP, PO, HSG, GSP),
    # H-DRF section 3.2: collapsing is weighted DRF, so it keeps DRF's flat properties.
    "collapsed-drf": (SI, SP, PO),
    # Choosy sections 3 and 4.2; TSF Definition 6 by construction.
    "cmmf": (SI, SP, PO, SMF, SRF),
    # Choosy section 4.1: independent allocation is strategy-proof.
    "independent": (SP, EF, SMF),
    # TSF Theorems 1-7.
    "tsf": (SI, SP, EF, PO, SMF, SRF),
    # TSF Theorems 11-14.
    "drfh": (SP, EF, PO, SMF),
    # TSF Theorems 15-17.
    "cdrf": (SI, PO, SMF),
    # TSF Theorems 8-10.
    "per-machine-drf": (SP, EF, SMF),
}

_FEW = {SP: 4, GSP: 2}


def test_every_solver_policy_has_claims() -> None:
    assert set(CLAIMS) == set(SOLVER_POLICIES)


@pytest.mark.parametrize(
    ("policy", "prop"), [(policy, prop) for policy, props in CLAIMS.items() for prop in props]
)
def test_policy_has_the_properties_its_paper_claims(policy: str, prop: str) -> None:
    result = check(policy, prop, trials=_FEW.get(prop, 10), seed=11)
    assert result.applicable
    assert result.holds, result.counterexample
