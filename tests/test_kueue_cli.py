"""``fairshare import kueue`` and ``simulate --policy kueue`` through the installed executable,
as an operator runs them (SPEC sections 8.1 and 8.3), and their bad input: exit 2, one line."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from conftest import assert_rejected, run_fairshare

DATA = Path(__file__).resolve().parent / "data" / "kueue"


def test_import_then_simulate_replays_kueues_flat_cohort_with_preemption(tmp_path: Path) -> None:
    """kubernetes-sigs/kueue fair_sharing_test.go, "Preemption is enabled" / "Admits
    workloads respecting fair share", end to end: import the ClusterQueues, add the
    workloads as jobs of the LocalQueues, simulate for 30 s: 5 of a's workloads are
    preempted (4 by b, 1 by c)."""
    out = tmp_path / "kueue.yaml"
    done = run_fairshare("import", "kueue", str(DATA / "flat_preemption.yaml"), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""
    scenario = yaml.safe_load(out.read_text())
    jobs = [
        {
            "name": f"a{i}",
            "user": "core/a",
            "submit": 0,
            "duration": 100,
            "demand": {"cpu": 1},
            "tasks": 1,
        }
        for i in range(10)
    ]
    jobs += [
        {
            "name": f"b{i}",
            "user": "core/b",
            "submit": 10,
            "duration": 100,
            "demand": {"cpu": 1},
            "tasks": 1,
        }
        for i in range(5)
    ]
    jobs.append(
        {
            "name": "c0",
            "user": "core/c",
            "submit": 20,
            "duration": 100,
            "demand": {"cpu": 1},
            "tasks": 1,
        }
    )
    scenario["jobs"] = jobs
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(scenario))
    run = run_fairshare(
        "simulate",
        str(tmp_path / "run.yaml"),
        "--policy",
        "kueue",
        "--until",
        "30",
        "--out",
        str(tmp_path / "out"),
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["preempted_tasks"] == 5
    assert summary["jobs"] == 16


def test_import_prints_yaml_and_warnings_apart(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(
        (DATA / "admission_fair_sharing.yaml").read_text()
        + "\n---\nkind: ResourceFlavor\nmetadata: {name: gpu}\nspec: {nodeLabels: {a: b}}\n"
    )
    done = run_fairshare("import", "kueue", str(path))
    assert done.returncode == 0, done.stderr
    scenario = yaml.safe_load(done.stdout)
    assert [q["path"] for q in scenario["queues"]] == ["cq1"]
    assert [u["name"] for u in scenario["users"]] == ["core/lq-a", "core/lq-b", "core/lq-c"]
    warnings = done.stderr.splitlines()
    assert warnings and all(line.startswith("warning: ") for line in warnings)
    assert any("spec.nodeLabels" in line for line in warnings)


def test_bad_kueue_input_is_one_error_line(tmp_path: Path) -> None:
    cycle = tmp_path / "cycle.yaml"
    cycle.write_text(
        "kind: Cohort\nmetadata: {name: x}\nspec: {parentName: y}\n---\n"
        "kind: Cohort\nmetadata: {name: y}\nspec: {parentName: x}\n"
    )
    line = assert_rejected(run_fairshare("import", "kueue", str(cycle)))
    assert line.startswith(f"error: {cycle}: document 1 (Cohort 'x') spec.parentName: ")
    missing = tmp_path / "missing.yaml"
    line = assert_rejected(run_fairshare("import", "kueue", str(missing)))
    assert line.startswith(f"error: {missing}: file: cannot read")
    lq = tmp_path / "lq.yaml"
    lq.write_text("kind: LocalQueue\nmetadata: {name: lq}\nspec: {clusterQueue: nope}\n")
    line = assert_rejected(run_fairshare("import", "kueue", str(lq), "-o", str(tmp_path / "o")))
    assert "spec.clusterQueue" in line
    assert not (tmp_path / "o").exists()


def test_a_bad_preemption_setting_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "machines: [{name: m, capacity: {cpu: 4}}]\n"
        "queues: [{path: q, quota: {cpu: 4}, preemption: {reclaim_within_cohort: often}}]\n"
        "jobs: [{name: j, user: u, queue: q, duration: 1, tasks: 1}]\n"
    )
    line = assert_rejected(
        run_fairshare("simulate", str(path), "--policy", "kueue", "--out", str(tmp_path / "out"))
    )
    assert line == (
        f"error: {path}: queues[0].preemption.reclaim_within_cohort: reclaim_within_cohort must "
        "be one of never, lower_priority, any, got 'often'"
    )
