"""``fairshare import kueue`` as a library (:mod:`fairshare.workload.imports.kueue`): the
mapping of SPEC section 8.1, the nesting of Cohort quotas, flavors, weights, and every
malformed input as one located error."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairshare.policies import make_policy
from fairshare.policies.kueue import KueueRanking
from fairshare.workload import ScenarioError, parse_scenario
from fairshare.workload.imports.kueue import convert, parse_duration, parse_quantity
from fairshare.workload.model import MIN_WEIGHT

DATA = Path(__file__).resolve().parent / "data" / "kueue"

_CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  {cohort}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: {flavor}
      resources:
      - {{name: cpu, nominalQuota: "{cpu}"{cpu_extra}}}
      - {{name: memory, nominalQuota: {mem}}}
"""


def _cq(
    name: str,
    cpu: str = "4",
    cohort: str = "",
    flavor: str = "default",
    mem: str = "8Gi",
    cpu_extra: str = "",
) -> str:
    return _CQ.format(
        name=name,
        cohort=f"cohortName: {cohort}" if cohort else "",
        flavor=flavor,
        cpu=cpu,
        mem=mem,
        cpu_extra=cpu_extra,
    )


def _docs(*parts: str) -> str:
    return "\n---\n".join(parts)


def test_quantities_and_durations_read_as_kubernetes_writes_them() -> None:
    assert parse_quantity("250m") == 0.25
    assert parse_quantity("36Gi") == 36 * 2**30
    assert parse_quantity("1.5k") == 1500.0
    assert parse_duration("168h") == 168 * 3600.0
    assert parse_duration("1h30m10s") == 5410.0
    for bad in ("-1", "4 cores", True, "1e400"):
        with pytest.raises(ValueError):
            parse_quantity(bad)
    for bad in ("", "1d", "0s", "h"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_a_cohorts_own_quota_comes_on_top_of_its_childrens() -> None:
    """Kueue's Cohort ``resourceGroups`` are quota the cohort holds for its subtree beside
    its children's; the scenario's quotas nest, so the cohort's queue quota is the sum, and
    the kueue policy reads back the cohort's own part (its tree's subtree quota, 3 + 4 + 5)."""
    cohort = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "5"}]
"""
    done = convert([("k.yaml", _docs(cohort, _cq("a", "3", "org"), _cq("b", "4", "org")))])
    queues = {q["path"]: q for q in done.scenario["queues"]}
    assert queues["org"]["quota"]["cpu"] == 12.0
    assert queues["org/a"]["quota"]["cpu"] == 3.0
    assert done.scenario["machines"] == [
        {"name": "default", "capacity": {"cpu": 12.0, "memory": 16 * 2**30}}
    ]
    scenario = parse_scenario(done.scenario, source="k.yaml")
    policy = make_policy("kueue", scenario.cluster, queues=scenario.queues)
    ranking = policy.ranking
    assert isinstance(ranking, KueueRanking)
    tree = ranking.tree
    assert tree.subtree[tree.index["org"]][0] == 12.0
    assert tree.potential[tree.index["org/a"]][0] == 12.0


def test_flavors_are_summed_or_kept_apart() -> None:
    text = _docs(_cq("a", "3", flavor="spot"), _cq("b", "2", flavor="on-demand"))
    summed = convert([("k.yaml", text)])
    assert summed.scenario["resources"] == ["cpu", "memory"]
    kept = convert([("k.yaml", text)], keep_flavors=True)
    assert kept.scenario["resources"] == [
        "cpu@spot",
        "memory@spot",
        "cpu@on-demand",
        "memory@on-demand",
    ]
    assert kept.scenario["machines"][0] == {
        "name": "spot",
        "capacity": {"cpu@spot": 3.0, "memory@spot": 8 * 2**30},
    }
    parse_scenario(kept.scenario, source="k.yaml")


def test_limits_weights_and_preemption_are_mapped() -> None:
    cq = _cq("a", "4", "org", cpu_extra=', borrowingLimit: "2", lendingLimit: "1"').replace(
        "spec:\n",
        'spec:\n  fairSharing: {weight: "0"}\n'
        "  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerOrNewerEqualPriority,"
        " borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}}\n",
    )
    lq = (
        "kind: LocalQueue\nmetadata: {name: lq}\n"
        "spec: {clusterQueue: a, fairSharing: {weight: '2'}}"
    )
    done = convert([("k.yaml", _docs(cq, _cq("b", "4", "org"), lq))])
    a = next(q for q in done.scenario["queues"] if q["path"] == "org/a")
    assert a["borrowing_limit"] == {"cpu": 2.0}
    assert a["lending_limit"] == {"cpu": 1.0}
    assert a["weight"] == MIN_WEIGHT
    assert a["preemption"] == {
        "reclaim_within_cohort": "any",
        "within_cluster_queue": "lower_or_newer_equal_priority",
        "borrow_within_cohort": {"policy": "lower_priority", "max_priority_threshold": 100},
    }
    assert done.scenario["users"] == [
        {"name": "lq", "queue": "org/a", "demand": {"cpu": 1.0}, "weight": 2.0}
    ]
    assert any("weight 0" in w for w in done.warnings)
    scenario = parse_scenario(done.scenario, source="k.yaml")
    assert scenario.queues[1].preemption.borrow_within_cohort == "lower_priority"


def test_settings_the_model_does_not_cover_are_warnings() -> None:
    cq = _cq("a").replace("spec:\n", "spec:\n  queueingStrategy: StrictFIFO\n")
    flavor = "kind: ResourceFlavor\nmetadata: {name: default}\nspec: {nodeLabels: {pool: a}}"
    done = convert([("k.yaml", _docs(flavor, cq, "kind: Workload\nmetadata: {name: w}"))])
    assert len(done.warnings) == 3
    assert any("spec.queueingStrategy" in w for w in done.warnings)
    assert any("spec.nodeLabels" in w for w in done.warnings)
    assert any("'Workload' is not read" in w for w in done.warnings)


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (
            _docs(
                "kind: Cohort\nmetadata: {name: x}\nspec: {parentName: y}",
                "kind: Cohort\nmetadata: {name: y}\nspec: {parentName: x}",
            ),
            "document 1 (Cohort 'x') spec.parentName",
            "cycle: x -> y -> x",
        ),
        (
            _docs("kind: Cohort\nmetadata: {name: org}", _cq("a", cohort="orgg")),
            "document 2 (ClusterQueue 'a') spec.cohortName",
            "no Cohort defines",
        ),
        (
            _docs(_cq("a"), "kind: LocalQueue\nmetadata: {name: lq}\nspec: {clusterQueue: b}"),
            "document 2 (LocalQueue 'lq') spec.clusterQueue",
            "do not define",
        ),
        (
            _cq("a").replace("spec:\n", "spec:\n  preemption: {reclaimWithinCohort: Sometimes}\n"),
            "document 1 (ClusterQueue 'a') spec.preemption.reclaimWithinCohort",
            "must be one of Never, LowerPriority, Any",
        ),
        (
            _cq("a", cpu="four"),
            "document 1 (ClusterQueue 'a') "
            "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
            "quantity",
        ),
        ("kind: ClusterQueue\nspec: {}", "document 1.metadata.name", "needs a name"),
        ("[1, 2", "line 1", "invalid JSON"),
        ("a: [1", "line 2", "invalid YAML"),
        ("kind: List\nitems: 3", "document 1.items", "list of items"),
    ],
)
def test_malformed_input_is_one_located_error(text: str, where: str, what: str) -> None:
    with pytest.raises(ScenarioError) as err:
        convert([("bad.yaml", text)])
    assert err.value.file == "bad.yaml"
    assert err.value.where == where
    assert what in err.value.what
    assert "\n" not in str(err.value)


def test_every_fixture_imports_into_a_valid_scenario() -> None:
    for path in sorted(DATA.glob("*.yaml")):
        done = convert([(str(path), path.read_text())])
        scenario = parse_scenario(done.scenario, source=str(path))
        assert scenario.queues and scenario.users
