"""``fairshare import slurm`` (SPEC section 8.1, :mod:`fairshare.workload.imports.slurm`): a
realistic ``sacctmgr -P show assoc`` listing and ``slurm.conf`` (``tests/data/slurm/``) become
a scenario that ``simulate --policy slurm-fairtree`` runs; malformed input is one ``error:``
line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fairshare.workload import ScenarioError
from fairshare.workload.imports.slurm import (
    PLACEHOLDER,
    ZERO_SHARE_WEIGHT,
    expand_hostlist,
    import_slurm,
    slurm_seconds,
)

from conftest import assert_rejected, run_fairshare

DATA = Path(__file__).parent / "data" / "slurm"
LISTING = DATA / "sacctmgr_assoc.txt"
CONF = DATA / "slurm.conf"


def test_realistic_listing_becomes_queues_and_users() -> None:
    """The association tree of ``sacctmgr_assoc.txt``: accounts under ``root`` become queues
    with their path, ``theory`` (``Share=parent``) hands carol up to ``science/physics``,
    alice (under two accounts) becomes ``physics/alice`` and ``biology/alice``, an empty
    ``Share`` is 1, ``Share=0`` the smallest weight, erin's ``Share=parent`` her account's."""
    result = import_slurm([LISTING])
    scenario = result.scenario
    assert scenario["machines"] == [PLACEHOLDER]
    assert scenario["queues"] == [
        {"path": "science", "weight": 100},
        {"path": "engineering", "weight": 50},
        {"path": "guests", "weight": ZERO_SHARE_WEIGHT},
        {"path": "science/physics", "weight": 60},
        {"path": "science/biology", "weight": 40},
    ]
    assert scenario["users"] == [
        {"name": "root", "weight": 1},
        {"name": "physics/alice", "queue": "science/physics", "weight": 1},
        {"name": "bob", "queue": "science/physics", "weight": 2},
        {"name": "carol", "queue": "science/physics", "weight": 1},
        {"name": "dave", "queue": "science/biology", "weight": 1},
        {"name": "biology/alice", "queue": "science/biology", "weight": 1},
        {"name": "erin", "queue": "engineering", "weight": 50},
        {"name": "frank", "queue": "engineering", "weight": 3},
        {"name": "guest1", "queue": "guests", "weight": 1},
    ]
    assert "usage_half_life" not in scenario
    warned = "\n".join(result.warnings)
    assert "account 'theory' has Share=parent" in warned
    assert "account 'guests' has Share=0" in warned
    assert "user 'erin' has Share=parent" in warned
    assert "placeholder machine" in warned
    assert all(line.startswith(f"warning: {LISTING}: ") for line in result.warnings)


def test_slurm_conf_gives_half_life_and_machines() -> None:
    """``PriorityDecayHalfLife=14-0`` is 14 days; the ``NodeName`` lines (a ``DEFAULT`` line,
    host lists, ``Sockets x CoresPerSocket``, ``CPUs``, ``RealMemory``, ``Gres=gpu:a100:4``)
    are the machines; ``PriorityWeightAge`` and node ``Features`` are warnings."""
    result = import_slurm([CONF, LISTING])
    scenario = result.scenario
    assert scenario["usage_half_life"] == 14 * 86400
    assert scenario["resources"] == ["cpu", "mem", "gpu"]
    machines = scenario["machines"]
    assert isinstance(machines, list)
    assert [m["name"] for m in machines] == ["cn001", "cn002", "cn003", "cn004", "gpu01", "gpu02"]
    assert machines[0]["capacity"] == {"cpu": 32, "mem": 191000}
    assert machines[4]["capacity"] == {"cpu": 48, "mem": 384000, "gpu": 4}
    users = scenario["users"]
    assert isinstance(users, list)
    assert all(u["demand"] == {"cpu": 1} for u in users)  # several resources: a demand each
    warned = "\n".join(result.warnings)
    assert f"warning: {CONF}: line 10: PriorityWeightAge: 1000 is not modelled" in warned
    assert "Features" in warned and "placeholder" not in warned


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("7-0", 604800),  # slurm.conf's default, "7-0 (7 days)"
        ("90", 5400),  # minutes
        ("90:30", 5430),  # minutes:seconds
        ("1:30:00", 5400),  # hours:minutes:seconds
        ("2-12", 216000),  # days-hours
        ("2-12:30", 217800),  # days-hours:minutes
        ("1-00:00:01", 86401),  # days-hours:minutes:seconds
        ("0", 0),
        ("UNLIMITED", -1),
        ("INFINITE", -1),
        ("-1", -1),
        ("1-2-3", None),
        ("1:2:3:4", None),
        ("7d", None),
        ("", None),
    ],
)
def test_slurm_time_format(text: str, seconds: int | None) -> None:
    """Slurm's time strings as ``src/common/parse_time.c``'s ``time_str2secs`` reads them
    (SchedMD/slurm; its formats: "min, min:sec, hr:min:sec, days-hr:min:sec, days-hr")."""
    assert slurm_seconds(text) == seconds


def test_half_life_rounds_up_to_minutes_and_zero_means_no_decay(tmp_path: Path) -> None:
    """``read_config.c`` reads ``PriorityDecayHalfLife`` with ``time_str2mins`` (rounded up to
    whole minutes); 0 is no decay: a warning, and no ``usage_half_life``."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("PriorityDecayHalfLife=0:30\n")
    assert import_slurm([LISTING, conf]).scenario["usage_half_life"] == 60
    conf.write_text("PriorityDecayHalfLife=0\nPriorityCalcPeriod=10\n")
    result = import_slurm([LISTING, conf])
    assert "usage_half_life" not in result.scenario
    warned = "\n".join(result.warnings)
    assert "line 1: PriorityDecayHalfLife: 0 means no decay" in warned
    assert "line 2: PriorityCalcPeriod: 10 is not modelled" in warned


def test_hostlists() -> None:
    assert expand_hostlist("node[01-03,07]") == ["node01", "node02", "node03", "node07"]
    assert expand_hostlist("a,b[1-2]") == ["a", "b1", "b2"]
    assert expand_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]
    for bad in ("node[1-", "node[a-b]", "node[3-1]", ""):
        with pytest.raises(ValueError, match=r"."):
            expand_hostlist(bad)


def test_several_clusters_keep_the_first_or_the_one_asked(tmp_path: Path) -> None:
    listing = tmp_path / "assoc.txt"
    listing.write_text(
        "Cluster|Account|User|Share|ParentName\n"
        "east|root||1|\neast|a||2|root\neast|a|u||\n"
        "west|root||1|\nwest|b||3|root\nwest|b|v||\n"
    )
    first = import_slurm([listing])
    assert first.scenario["queues"] == [{"path": "a", "weight": 2}]
    assert "'east' is kept, 'west' dropped" in "\n".join(first.warnings)
    west = import_slurm([listing], cluster="west")
    assert west.scenario["users"] == [{"name": "v", "queue": "b", "weight": 1}]
    with pytest.raises(ScenarioError, match="unknown cluster 'north'"):
        import_slurm([listing], cluster="north")


def test_machines_from_a_scenario(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("machines: [{name: n, count: 3, capacity: {cpu: 8, mem: 32}}]\n")
    result = import_slurm([LISTING], machines=nodes)
    assert result.scenario["machines"] == [
        {"name": "n", "count": 3, "capacity": {"cpu": 8, "mem": 32}}
    ]
    assert "placeholder" not in "\n".join(result.warnings)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "assoc.txt"
    path.write_text(text)
    return path


HEADER = "Cluster|Account|User|Share|ParentName\n"


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("Cluster|Account|User|Shares\nc|root||1\n", "line 1: header", "expected the columns"),
        (HEADER + "c|root||1|\nc|a||x|root\n", "line 3: Share", "expected a whole number >= 0"),
        (HEADER + "c|root||1|\nc|a||-3|root\n", "line 3: Share", "'parent' or nothing"),
        (HEADER + "c|root||1|\nc|a||1|nope\n", "line 3: ParentName", "unknown account 'nope'"),
        (HEADER + "c|root||1|\nc|a||1|b\nc|b||1|a\n", "line 3: ParentName", "cycle (a -> b -> a)"),
        (HEADER + "c|root||1|\nc|root|u|1|\nc|x|v|1|\n", "line 4: Account", "unknown account 'x'"),
        (HEADER + "c|root||1|\nc|a||1\n", "line 3", "expected 5 fields"),
        (HEADER + "c|root||1|\nc|top||1|\n", "line 3: ParentName", "only the root account"),
        (HEADER + "c|a||1|root\n", "file", "no root account"),
        (HEADER + "c|root||1|\nc|a/b||1|root\n", "line 3: Account", "'/' is not allowed"),
        ("", "file", "is empty"),
    ],
)
def test_malformed_listing_names_file_line_and_field(
    tmp_path: Path, text: str, where: str, what: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        import_slurm([path])
    assert caught.value.file == str(path)
    assert caught.value.where == where
    assert what in caught.value.what


def test_malformed_slurm_conf(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nPriorityDecayHalfLife=7days\n")
    with pytest.raises(ScenarioError) as caught:
        import_slurm([LISTING, conf])
    assert str(caught.value).startswith(f"error: {conf}: line 2: PriorityDecayHalfLife: expected")
    conf.write_text("NodeName=n[1-2 CPUs=4\n")
    with pytest.raises(ScenarioError, match="line 1: NodeName"):
        import_slurm([LISTING, conf])


def test_import_then_simulate_through_the_executable(tmp_path: Path) -> None:
    """End to end with the installed ``fairshare``: import the listing with a machines file,
    add jobs, and ``simulate --policy slurm-fairtree`` runs every job."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("machines: [{name: n, count: 2, capacity: {cpu: 4}}]\n")
    out = tmp_path / "hpc.yaml"
    done = run_fairshare("import", "slurm", str(LISTING), "--machines", str(nodes), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert all(line.startswith("warning: ") for line in done.stderr.splitlines())
    scenario = yaml.safe_load(out.read_text())
    scenario["jobs"] = [
        {"name": f"j{i}", "submit": i, "user": user, "tasks": 2, "duration": 50}
        for i, user in enumerate(["bob", "carol", "frank", "physics/alice", "guest1", "dave"])
    ]
    out.write_text(yaml.safe_dump(scenario))
    run = run_fairshare(
        "simulate", str(out), "--policy", "slurm-fairtree", "--out", str(tmp_path / "run")
    )
    assert run.returncode == 0, run.stderr
    jobs = (tmp_path / "run" / "jobs.csv").read_text().splitlines()
    assert len(jobs) == 7
    # With slurm.conf: its nodes and its half-life (14 days) run as they are.
    conf_out = tmp_path / "conf.yaml"
    done = run_fairshare("import", "slurm", str(LISTING), str(CONF), "-o", str(conf_out))
    assert done.returncode == 0, done.stderr
    with_conf = yaml.safe_load(conf_out.read_text())
    assert with_conf["usage_half_life"] == 1209600
    with_conf["jobs"] = [
        {"name": "g", "submit": 0, "user": "frank", "tasks": 4, "duration": 30,
         "demand": {"cpu": 16, "mem": 1000}}
    ]  # fmt: skip
    conf_out.write_text(yaml.safe_dump(with_conf))
    run = run_fairshare(
        "simulate", str(conf_out), "--policy", "slurm-fairtree", "--out", str(tmp_path / "run2")
    )
    assert run.returncode == 0, run.stderr
    assert len((tmp_path / "run2" / "jobs.csv").read_text().splitlines()) == 2
    stdout = run_fairshare("import", "slurm", str(LISTING))
    assert stdout.returncode == 0
    assert yaml.safe_load(stdout.stdout)["queues"][0] == {"path": "science", "weight": 100}


def test_json_output_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o FILE.json`` writes JSON; the warnings go to stderr."""
    import json  # noqa: PLC0415

    from fairshare.cli import main  # noqa: PLC0415

    out = tmp_path / "hpc.json"
    with pytest.raises(SystemExit) as done:
        main(["import", "slurm", str(LISTING), str(CONF), "-o", str(out)])
    assert done.value.code == 0
    written = json.loads(out.read_text())
    assert written["usage_half_life"] == 1209600
    assert written["queues"][0] == {"path": "science", "weight": 100}
    captured = capsys.readouterr()
    assert captured.out == ""
    assert all(line.startswith("warning: ") for line in captured.err.splitlines())


@pytest.mark.parametrize(
    "content",
    [
        "Cluster|Account|User|Share|ParentName\nc|root||1|\nc|a||abc|root\n",
        "Cluster|Account|Shares\n",
    ],
)
def test_bad_input_through_the_executable_is_one_line(tmp_path: Path, content: str) -> None:
    path = _write(tmp_path, content)
    line = assert_rejected(run_fairshare("import", "slurm", str(path)))
    assert line.startswith(f"error: {path}: line ")


def test_missing_file_through_the_executable(tmp_path: Path) -> None:
    line = assert_rejected(run_fairshare("import", "slurm", str(tmp_path / "none.txt")))
    assert line == f"error: {tmp_path / 'none.txt'}: file: cannot read (No such file or directory)"
