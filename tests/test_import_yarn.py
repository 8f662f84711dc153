"""``fairshare import yarn-fair`` and ``yarn-capacity`` (SPEC section 8.1;
:mod:`fairshare.workload.imports.yarn_fair`, :mod:`~.yarn_capacity`): Hadoop's documented
example files and the expected values of Hadoop's own tests become scenarios that solve,
simulate and sweep; malformed input is one ``error:`` line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fairshare.workload import ScenarioError
from fairshare.workload.imports.yarn_capacity import import_yarn_capacity
from fairshare.workload.imports.yarn_fair import import_yarn_fair, parse_resources

from conftest import assert_rejected, run_fairshare

DATA = Path(__file__).parent / "data" / "yarn"
FAIR_DOC = DATA / "fair-scheduler-doc.xml"
CAPACITY_DOC = DATA / "capacity-scheduler-doc.xml"


def _queues(scenario: dict[str, object]) -> dict[str, dict[str, object]]:
    queues = scenario["queues"]
    assert isinstance(queues, list)
    return {q["path"]: q for q in queues}


def _write(tmp_path: Path, text: str, name: str = "conf.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _machines(tmp_path: Path, mem: int = 10 * 1024, cpu: int = 4) -> Path:
    path = tmp_path / "nodes.yaml"
    path.write_text(f"machines: [{{name: n, capacity: {{mem: {mem}, cpu: {cpu}}}}}]\n")
    return path


# ------------------------------------------------------------------------------ yarn-fair


def test_fair_documented_example() -> None:
    """The example allocation file of Hadoop's ``FairScheduler.md`` ("Allocation file
    format"): ``sample_queue`` weight 2 with a minimum of 10000 MB and a maximum of 90000 MB,
    ``sample_sub_queue`` a minimum of 5000 MB, ``queueMaxResourcesDefault`` 40000 MB for the
    queues without maxResources, ``secondary_group_queue`` a parent of weight 3; under the
    default ``fair`` policy only memory counts ("only the memory is used")."""
    done = import_yarn_fair(FAIR_DOC)
    queues = _queues(done.scenario)
    assert queues["sample_queue"] == {
        "path": "sample_queue",
        "weight": 2.0,
        "quota": {"mem": 10000.0},
        "borrowing_limit": {"mem": 80000.0},
    }
    assert queues["sample_queue/sample_sub_queue"]["quota"] == {"mem": 5000.0}
    assert queues["sample_queue/sample_sub_queue"]["borrowing_limit"] == {"mem": 35000.0}
    assert queues["sample_queue/sample_reservable_queue"]["borrowing_limit"] == {"mem": 40000.0}
    assert queues["secondary_group_queue"]["weight"] == 3.0
    assert [u["name"] for u in done.scenario["users"]] == [
        "root.sample_queue.sample_sub_queue",
        "root.sample_queue.sample_reservable_queue",
        "root.default",
    ]
    # Two placeholder NodeManagers of 8192 MiB hold the 10000 MB minimum.
    assert done.scenario["machines"][0]["count"] == 2
    text = "\n".join(done.warnings)
    for setting in (
        "maxRunningApps",
        "maxAMShare",
        "aclSubmitApps",
        "reservation",
        "queueMaxAMShareDefault",
        "maxChildResources",
        "user[sample_user]",
        "userMaxAppsDefault",
        "queuePlacementPolicy",
        "--policy fair",
    ):
        assert setting in text, setting
    assert all(line.startswith("warning: ") for line in done.warnings)


def test_fair_backwards_compatible_pools(tmp_path: Path) -> None:
    """Hadoop's ``TestAllocationFileLoaderService.testBackwardsCompatibleAllocationFileParsing``:
    ``<pool>`` elements; queueA a minimum of 1024 MB, queueB 2048 MB, queueC and queueD none;
    root's min-share timeout 120 s (``defaultMinSharePreemptionTimeout``) and fair-share
    timeout 300 s (the legacy top-level ``fairSharePreemptionTimeout``); queueE's own 60 s and
    threshold 0.3, the default threshold 0.6."""
    path = _write(
        tmp_path,
        """<?xml version="1.0"?>
<allocations>
<pool name="queueA"><minResources>1024mb,0vcores</minResources></pool>
<pool name="queueB"><minResources>2048mb,0vcores</minResources>
<aclAdministerApps>alice,bob admins</aclAdministerApps></pool>
<pool name="queueC"><aclSubmitApps>alice,bob admins</aclSubmitApps></pool>
<pool name="queueD"><maxRunningApps>3</maxRunningApps></pool>
<pool name="queueE"><minSharePreemptionTimeout>60</minSharePreemptionTimeout>
<fairSharePreemptionThreshold>0.3</fairSharePreemptionThreshold></pool>
<queueMaxAppsDefault>15</queueMaxAppsDefault>
<userMaxAppsDefault>5</userMaxAppsDefault>
<user name="user1"><maxRunningApps>10</maxRunningApps></user>
<defaultMinSharePreemptionTimeout>120</defaultMinSharePreemptionTimeout>
<fairSharePreemptionTimeout>300</fairSharePreemptionTimeout>
<defaultFairSharePreemptionThreshold>0.6</defaultFairSharePreemptionThreshold>
</allocations>
""",
    )
    done = import_yarn_fair(path)
    queues = _queues(done.scenario)
    assert queues["queueA"]["quota"] == {"mem": 1024.0}
    assert queues["queueB"]["quota"] == {"mem": 2048.0}
    assert "quota" not in queues["queueC"] and "quota" not in queues["queueD"]
    # Five configured leaves plus YARN's root.default, each one user.
    assert len(done.scenario["users"]) == 6
    text = "\n".join(done.warnings)
    assert "--preemption 120,300" in text
    assert "queue[root.queueE]/minSharePreemptionTimeout: 60 s is not modelled" in text
    assert "queue[root.queueE]/fairSharePreemptionThreshold: 0.3 is not modelled" in text
    assert "defaultFairSharePreemptionThreshold: 0.6 is not modelled" in text
    assert "user[user1]" in text and "queueMaxAppsDefault" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 vcores, 5120 mb", {"mem": 5120, "cpu": 2}),
        ("5120 mb, 2 vcores", {"mem": 5120, "cpu": 2}),
        ("2vcores,5120mb", {"mem": 5120, "cpu": 2}),
        ("5120mb   mb, 2    vcores", {"mem": 5120, "cpu": 2}),
        ("5120 Mb, 2 vCores", {"mem": 5120, "cpu": 2}),
        ("  5120.3 mb, 2.35 vcores  ", {"mem": 5120, "cpu": 2}),
        ("  5120. mb, 2. vcores  ", {"mem": 5120, "cpu": 2}),
        ("50% memory, 50% cpu", {"mem": 5120, "cpu": 2}),
        ("50% Memory, 50% CpU", {"mem": 5120, "cpu": 2}),
        ("50% memory, 100% cpu", {"mem": 5120, "cpu": 4}),
        ("50% memory, 0% cpu", {"mem": 5120, "cpu": 0}),
        ("  50  %  memory,  50  %  cpu  ", {"mem": 5120, "cpu": 2}),
        ("10.9% memory, 50.6% cpu", {"mem": int(1024 * 10 * 0.109), "cpu": 2}),
        ("50%", {"mem": 5120, "cpu": 2}),
        ("vcores=2, memory-mb=5120", {"mem": 5120, "cpu": 2}),
        (" vcores = 2 , memory-mb = 5120 ", {"mem": 5120, "cpu": 2}),
        ("vcores=75%, memory-mb=40%", {"mem": 4096, "cpu": 3}),
        (" vcores = 75 % , memory-mb = 40 % ", {"mem": 4096, "cpu": 3}),
    ],
)
def test_resource_syntaxes(text: str, expected: dict[str, int]) -> None:
    """Hadoop's ``TestFairSchedulerConfiguration.testParseResourceConfigValue``: every syntax,
    percentages of a cluster of 10 GiB and 4 vcores, fractions floored."""
    got = parse_resources(text, "x").resolve({"mem": 10 * 1024.0, "cpu": 4.0})
    assert got == {k: float(v) for k, v in expected.items()}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1024", "missing resource mb"),  # testNoUnits
        ("1024mb", "missing resource vcores"),  # testOnlyMemory
        ("1024vcores", "missing resource mb"),  # testOnlyCPU
        ("1o24vc0res", "missing resource mb"),  # testGibberish
        ("95%, 50% memory", "missing resource cpu"),  # testNoUnitsPercentage
        ("50% cpu, 1024 mb", "missing resource memory"),  # testCpuPercentageMemoryAbsolute
        ("-10% memory, 50% cpu", "must not be negative"),  # testMemoryPercentageNegativeValue
        ("-2 vcores,5120 mb", "invalid value of vcores"),  # testAbsoluteVcoresNegative
        ("2 vcores,-5120 mb", "invalid value of memory"),  # testAbsoluteMemoryNegative
        ("memory-mb=-5120,vcores=2", "non-negative number"),  # ...NewStyleResourceMemoryNegative
        ("vcores=-75%,memory-mb=40%", "non-negative number"),  # ...PercentagesVcoresNegative
    ],
)
def test_resource_syntax_errors(text: str, message: str) -> None:
    """The error cases of Hadoop's ``TestFairSchedulerConfiguration`` (test named beside
    each case): each is refused, naming what is missing or negative."""
    with pytest.raises(ValueError, match=message):
        parse_resources(text, "x")


def test_fair_nested_queues_percentages_and_caps(tmp_path: Path) -> None:
    """A nested tree under ``<queue name="root">`` with DRF: minimum percentages of the
    cluster (``--machines``), a parent's quota raised to cover its children's, maxResources in
    the new syntax capping only the resource it names, weight 0 kept as the smallest weight."""
    path = _write(
        tmp_path,
        """<allocations>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <queue name="root">
    <queue name="eng"><weight>2</weight><minResources>1024 mb, 1 vcores</minResources>
      <queue name="batch"><minResources>25% memory, 50% cpu</minResources></queue>
      <queue name="adhoc"><maxResources>vcores=2</maxResources></queue>
    </queue>
    <queue name="ops"><weight>0</weight></queue>
  </queue>
</allocations>""",
    )
    done = import_yarn_fair(path, machines=_machines(tmp_path))
    queues = _queues(done.scenario)
    assert queues["eng/batch"]["quota"] == {"mem": 2560.0, "cpu": 2.0}
    # eng's own 1024 MB, 1 vcore is raised to its child's 2560 MB, 2 vcores.
    assert queues["eng"]["quota"] == {"mem": 2560.0, "cpu": 2.0}
    assert queues["eng/adhoc"]["quota"] == {"cpu": 0.0}
    assert queues["eng/adhoc"]["borrowing_limit"] == {"cpu": 2.0}
    assert queues["ops"]["weight"] == pytest.approx(1e-9)
    assert [u["name"] for u in done.scenario["users"]] == [
        "root.eng.batch",
        "root.eng.adhoc",
        "root.ops",
        "root.default",
    ]
    assert done.scenario["machines"] == [{"name": "n", "capacity": {"mem": 10240, "cpu": 4}}]
    assert any("raised to theirs" in w for w in done.warnings)
    assert any("--policy drf" in w for w in done.warnings)


def test_fair_minimums_above_the_cluster_are_scaled(tmp_path: Path) -> None:
    """Minimum shares adding up beyond the cluster cannot all be met (YARN's fair shares then
    fall short too): every quota of the resource is scaled to fit, with a warning."""
    path = _write(
        tmp_path,
        "<allocations><queue name='a'><minResources>8192 mb, 1 vcores</minResources></queue>"
        "<queue name='b'><minResources>8192 mb, 1 vcores</minResources></queue></allocations>",
    )
    done = import_yarn_fair(path, machines=_machines(tmp_path, mem=8192))
    queues = _queues(done.scenario)
    assert queues["a"]["quota"] == {"mem": 4096.0} == queues["b"]["quota"]
    assert any("scaled by 0.5" in w for w in done.warnings)


@pytest.mark.parametrize(
    ("body", "where", "what"),
    [
        ("<queue name='a'><weight>heavy</weight></queue>", "allocations/queue[root.a]/weight",
         "must be a number"),
        ("<queue name='a'><queue name='b'><minResources>1024</minResources></queue></queue>",
         "allocations/queue[root.a.b]/minResources", "missing resource mb"),
        ("<queue name='a'/><queue name='a'/>", "allocations/queue[root.a]", "defined twice"),
        ("<queue name='a'><queue name='x'/><pool name='x'/></queue>",
         "allocations/queue[root.a.x]", "defined twice"),
        ("<queue name='a.b'/>", "allocations/queue[a.b]", "must not contain '.'"),
        ("<queue name='a'><schedulingPolicy>lottery</schedulingPolicy></queue>",
         "allocations/queue[root.a]/schedulingPolicy", "must be one of fair, drf, fifo"),
        ("<queue name='a'><fairSharePreemptionThreshold>2</fairSharePreemptionThreshold></queue>",
         "allocations/queue[root.a]/fairSharePreemptionThreshold", "from 0 to 1"),
    ],
)  # fmt: skip
def test_fair_malformed_names_the_element(tmp_path: Path, body: str, where: str, what: str) -> None:
    path = _write(tmp_path, f"<allocations>{body}</allocations>")
    with pytest.raises(ScenarioError) as caught:
        import_yarn_fair(path)
    assert caught.value.where == where
    assert what in caught.value.what


# -------------------------------------------------------------------------- yarn-capacity


def test_capacity_documented_nested_example() -> None:
    """The queue tree of Hadoop's ``CapacityScheduler.md`` ("Setting up queues": ``root.a``
    with ``a1, a2``, ``root.b`` with ``b1, b2, b3``, ``root.c``), with capacities 50/30/20,
    40/60, 50/25/25 and ``a``'s maximum-capacity 80: weights are the percentages, quotas the
    absolute capacities of the placeholder NodeManager (8192 MiB, 8 vcores), caps the
    absolute maximum capacities (a child's maximum is of its parent's maximum)."""
    done = import_yarn_capacity(CAPACITY_DOC)
    queues = _queues(done.scenario)
    assert list(queues) == ["a", "a/a1", "a/a2", "b", "b/b1", "b/b2", "b/b3", "c"]
    assert queues["a"]["weight"] == 50.0
    assert queues["a"]["quota"] == {"mem": 4096.0, "cpu": 4.0}
    assert queues["a"]["borrowing_limit"] == {"mem": 2457.6, "cpu": 2.4}  # 80 % - 50 %
    assert queues["a/a1"]["quota"] == {"mem": 1638.4, "cpu": 1.6}  # 40 % of 50 %
    assert queues["a/a1"]["borrowing_limit"] == {"mem": 4915.2, "cpu": 4.8}  # 80 % - 20 %
    assert queues["b/b2"] == {"path": "b/b2", "weight": 25.0, "quota": {"mem": 614.4, "cpu": 0.6}}
    assert queues["c"]["weight"] == 20.0 and "borrowing_limit" not in queues["c"]
    assert [u["name"] for u in done.scenario["users"]] == [
        "root.a.a1", "root.a.a2", "root.b.b1", "root.b.b2", "root.b.b3", "root.c",
    ]  # fmt: skip
    text = "\n".join(done.warnings)
    for setting in (
        "root.b.b1.user-limit-factor",
        "root.c.minimum-user-limit-percent",
        "root.b.b3.state]: STOPPED",
        "root.a.a2.ordering-policy]: fair",
        "root.a.a1.maximum-applications",
        "capacity.maximum-am-resource-percent",
        "--policy capacity",
    ):
        assert setting in text, setting
    assert "root.c.state" not in text  # RUNNING is what the scenario models


def _capacity_xml(props: dict[str, str]) -> str:
    rows = "".join(
        f"<property><name>yarn.scheduler.capacity.{k}</name><value>{v}</value></property>"
        for k, v in props.items()
    )
    return f"<configuration>{rows}</configuration>"


def test_capacity_weight_mode(tmp_path: Path) -> None:
    """Weights (``Nw``), from Hadoop's ``TestRMWebServicesCapacitySchedDynamicConfigWeightMode``
    (root: default 4w, test1 16w, test2 12w; test1: 2w, 2w, 12w): the parent's capacity is
    split in proportion to the weights ("Configuring Resource Allocation")."""
    path = _write(
        tmp_path,
        _capacity_xml(
            {
                "root.queues": "default, test1, test2",
                "root.test1.queues": "test1_1, test1_2, test1_3",
                "root.default.capacity": "4w",
                "root.test1.capacity": "16w",
                "root.test2.capacity": "12w",
                "root.test1.test1_1.capacity": "2w",
                "root.test1.test1_2.capacity": "2w",
                "root.test1.test1_3.capacity": "12w",
            }
        ),
    )
    done = import_yarn_capacity(path, machines=_machines(tmp_path, mem=32 * 1024, cpu=32))
    queues = _queues(done.scenario)
    assert queues["test1"]["weight"] == 16.0
    assert queues["test1"]["quota"] == {"mem": 16384.0, "cpu": 16.0}  # 16 / 32
    assert queues["test1/test1_3"]["quota"] == {"mem": 12288.0, "cpu": 12.0}  # 12/16 of it
    assert queues["default"]["quota"] == {"mem": 4096.0, "cpu": 4.0}


def test_capacity_absolute_resources(tmp_path: Path) -> None:
    """Absolute resources (``[memory=10240,vcores=12]``, "Configuring Resource Allocation"):
    the quota is the amount, the maximum the cap; placeholder nodes hold the top queues."""
    path = _write(
        tmp_path,
        _capacity_xml(
            {
                "root.queues": "a,b",
                "root.a.capacity": "[memory=10240,vcores=12]",
                "root.a.maximum-capacity": "[memory=12288,vcores=16]",
                "root.b.capacity": "[memory=6144,vcores=4]",
            }
        ),
    )
    done = import_yarn_capacity(path)
    queues = _queues(done.scenario)
    assert done.scenario["machines"][0]["count"] == 2  # 16384 MiB, 16 vcores
    assert queues["a"]["quota"] == {"mem": 10240.0, "cpu": 12.0}
    assert queues["a"]["borrowing_limit"] == {"mem": 2048.0, "cpu": 4.0}
    assert queues["b"]["quota"] == {"mem": 6144.0, "cpu": 4.0}


@pytest.mark.parametrize(
    ("props", "where", "what"),
    [
        ({"root.queues": "a,b", "root.a.capacity": "60", "root.b.capacity": "30"},
         "configuration/property[yarn.scheduler.capacity.root.queues]", "add up to 90, not 100"),
        ({"root.queues": "a,b", "root.a.queues": "x,y", "root.a.capacity": "50",
          "root.b.capacity": "50", "root.a.x.capacity": "50", "root.a.y.capacity": "40"},
         "configuration/property[yarn.scheduler.capacity.root.a.queues]", "root.a add up to 90"),
        ({"root.queues": "a,a", "root.a.capacity": "100"},
         "configuration/property[yarn.scheduler.capacity.root.queues]", "listed twice"),
        ({"root.queues": "a", "root.a.capacity": "lots"},
         "configuration/property[yarn.scheduler.capacity.root.a.capacity]",
         "expected a percentage"),
        ({"root.queues": "a,b", "root.a.capacity": "50", "root.b.capacity": "1w"},
         "configuration/property[yarn.scheduler.capacity.root.a.capacity]", "mix"),
        ({"root.queues": "a,b", "root.a.capacity": "60", "root.b.capacity": "40",
          "root.a.maximum-capacity": "50"},
         "configuration/property[yarn.scheduler.capacity.root.a.maximum-capacity]",
         "less than the capacity"),
        ({"root.a.capacity": "100"},
         "configuration/property[yarn.scheduler.capacity.root.queues]", "missing"),
    ],
)  # fmt: skip
def test_capacity_malformed_names_the_property(
    tmp_path: Path, props: dict[str, str], where: str, what: str
) -> None:
    """YARN refuses these configurations (``ParentQueue``'s "Illegal capacity" sum check,
    ``checkMaxCapacity``); so does the import, naming the property."""
    path = _write(tmp_path, _capacity_xml(props))
    with pytest.raises(ScenarioError) as caught:
        import_yarn_capacity(path)
    assert caught.value.where == where
    assert what in caught.value.what


def test_capacity_flexible_mode_skips_the_sum(tmp_path: Path) -> None:
    """With ``legacy-queue-mode.enabled`` false, percentages need not add up to 100."""
    path = _write(
        tmp_path,
        _capacity_xml(
            {
                "legacy-queue-mode.enabled": "false",
                "root.queues": "a,b",
                "root.a.capacity": "30",
                "root.b.capacity": "20",
            }
        ),
    )
    assert _queues(import_yarn_capacity(path).scenario)["b"]["weight"] == 20.0


# ---------------------------------------------------------------------------- round trip


def _with_jobs(path: Path, users: list[str], demand: dict[str, float]) -> None:
    scenario = yaml.safe_load(path.read_text())
    scenario["jobs"] = [
        {"name": f"j{i}", "submit": i, "user": user, "tasks": 3, "duration": 20,
         "demand": demand}
        for i, user in enumerate(users)
    ]  # fmt: skip
    path.write_text(yaml.safe_dump(scenario))


@pytest.mark.parametrize(
    ("fmt", "source", "policy", "users"),
    [
        ("yarn-fair", FAIR_DOC, "fair",
         ["root.sample_queue.sample_sub_queue", "root.default",
          "root.sample_queue.sample_reservable_queue"]),
        ("yarn-capacity", CAPACITY_DOC, "capacity", ["root.a.a1", "root.b.b2", "root.c"]),
    ],
)  # fmt: skip
def test_import_solve_simulate_sweep(
    tmp_path: Path, fmt: str, source: Path, policy: str, users: list[str]
) -> None:
    """End to end with the installed ``fairshare``: the imported scenario solves with DRF,
    simulates under its policy (every job finishes) and sweeps a tiny grid."""
    out = tmp_path / "imported.yaml"
    done = run_fairshare("import", fmt, str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert all(line.startswith("warning: ") for line in done.stderr.splitlines())
    solved = run_fairshare("solve", str(out), "--policy", "drf", "--json")
    assert solved.returncode == 0, solved.stderr
    assert set(yaml.safe_load(solved.stdout)["users"]) >= set(users)
    _with_jobs(out, users, {"mem": 1024, "cpu": 1})
    run = run_fairshare("simulate", str(out), "--policy", policy, "--out", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    rows = (tmp_path / "run" / "jobs.csv").read_text().splitlines()
    assert len(rows) == 1 + len(users)
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"scenario: {out.name}\npolicies: [{policy}, drf]\nseeds: 1\n")
    swept = run_fairshare("sweep", str(grid), "--out", str(tmp_path / "sweep"), "--jobs", "1")
    assert swept.returncode == 0, swept.stderr
    assert (tmp_path / "sweep" / "results.parquet").is_file()


def test_stdout_and_machines_through_the_executable(tmp_path: Path) -> None:
    """Without ``-o`` the scenario is YAML on stdout; ``--machines`` gives the nodes."""
    done = run_fairshare(
        "import", "yarn-capacity", str(CAPACITY_DOC), "--machines", str(_machines(tmp_path))
    )
    assert done.returncode == 0, done.stderr
    scenario = yaml.safe_load(done.stdout)
    assert scenario["machines"] == [{"name": "n", "capacity": {"mem": 10240, "cpu": 4}}]
    assert _queues(scenario)["c"]["quota"] == {"mem": 2048.0, "cpu": 0.8}
    assert "placeholder" not in done.stderr


@pytest.mark.parametrize("fmt", ["yarn-fair", "yarn-capacity"])
def test_malformed_through_the_executable_is_one_line(tmp_path: Path, fmt: str) -> None:
    path = _write(tmp_path, "<allocations><queue name='a'><weight>x</weight></queue>")
    line = assert_rejected(run_fairshare("import", fmt, str(path)))
    assert line.startswith(f"error: {path}: line ")
    assert "not well-formed XML" in line


def test_machines_without_a_resource_drop_its_amounts(tmp_path: Path) -> None:
    """A machines file naming only ``mem``: vcores amounts have nowhere to go; dropped with
    one warning, the users' demand is memory alone."""
    nodes = tmp_path / "mem-only.yaml"
    nodes.write_text("machines: [{name: n, count: 2, capacity: {mem: 8192}}]\n")
    path = _write(
        tmp_path,
        "<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
        "<queue name='a'><minResources>2048 mb, 2 vcores</minResources></queue></allocations>",
    )
    done = import_yarn_fair(path, machines=nodes)
    assert _queues(done.scenario)["a"]["quota"] == {"mem": 2048.0}
    assert done.scenario["users"][0]["demand"] == {"mem": 1024.0}
    assert sum("resource 'cpu' is not in the cluster's resources" in w for w in done.warnings) == 1
