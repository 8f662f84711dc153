"""The installed ``fairshare`` executable, run as a user runs it: a process of its own.

In-process tests (``main([...])`` with Python's streams redirected) cannot see what a native
library writes on file descriptor 1, nor what an interpreter prints at exit. Here every
``--json`` command's stdout must parse as one JSON document, for every policy (each once as a
process; the whole matrix in process with the descriptors captured), and every rejected input
must give exit code 2 and exactly one ``error:`` line (SPEC section 4).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fairshare.solvers import SOLVER_POLICIES

from conftest import EXAMPLES, assert_rejected, run_fairshare

SINGLE_RESOURCE = EXAMPLES / "choosy-figure-1.yaml"
MULTI_RESOURCE = EXAMPLES / "tsf-figure-2a.yaml"
ONE_RESOURCE_ONLY = {"max-min", "cmmf", "independent"}


def strict_json(text: str) -> object:
    """Parse one JSON document; ``NaN`` and ``Infinity`` are not JSON."""

    def refuse(token: str) -> object:
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def run_all(commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return list(pool.map(lambda argv: run_fairshare(*argv), commands))


def solve_matrix() -> list[list[str]]:
    """``solve --json`` of every policy on each scenario it takes, divisible and integral."""
    commands = []
    for integral in (False, True):
        for policy in SOLVER_POLICIES:
            for scenario in (SINGLE_RESOURCE, MULTI_RESOURCE):
                if policy in ONE_RESOURCE_ONLY and scenario is MULTI_RESOURCE:
                    continue
                argv = ["solve", str(scenario), "--policy", policy, "--json"]
                commands.append(argv + (["--integral"] if integral else []))
    return commands


def assert_pure_solve_json(argv: list[str], code: int, stdout: str, stderr: str) -> None:
    assert code == 0, (argv, stderr)
    doc = strict_json(stdout)
    assert isinstance(doc, dict)
    assert doc["policy"] == argv[3] and doc["integral"] is ("--integral" in argv)
    assert set(doc["users"]) and all(u["tasks"] >= 0 for u in doc["users"].values())
    assert "Running HiGHS" not in stdout + stderr


def test_solve_json_is_pure_json_for_every_policy_through_the_executable() -> None:
    """Each policy once as a process of its own (what it prints at exit included): on the
    richest scenario it takes, divisible and integral in turn; the whole matrix is checked
    in process below, with the native writes on descriptors 1 and 2 captured."""
    chosen: dict[str, list[str]] = {}
    for argv in solve_matrix():
        chosen[argv[3]] = argv  # the last: the multi-resource scenario where there is one
    commands = [
        argv if k % 2 else [a for a in argv if a != "--integral"]
        for k, argv in enumerate(chosen.values())
    ]
    assert any("--integral" in argv for argv in commands)
    for argv, done in zip(commands, run_all(commands), strict=True):
        assert_pure_solve_json(argv, done.returncode, done.stdout, done.stderr)


def test_solve_json_is_pure_json_for_every_policy_and_scenario(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """``main`` in process with file descriptors 1 and 2 captured (``capfd``), so a native
    library's write there (HiGHS's log) is seen as the executable's user would see it."""
    from fairshare.cli import main  # noqa: PLC0415

    for argv in solve_matrix():
        try:
            main(argv)
        except SystemExit as done:
            code = int(done.code or 0)
        captured = capfd.readouterr()
        assert_pure_solve_json(argv, code, captured.out, captured.err)


def test_solve_json_values_through_the_executable() -> None:
    done = run_fairshare("solve", str(MULTI_RESOURCE), "--policy", "tsf", "--json")
    assert done.returncode == 0 and done.stderr == ""
    doc = strict_json(done.stdout)
    assert isinstance(doc, dict)
    assert {name: round(u["tasks"], 6) for name, u in doc["users"].items()} == {
        "u1": 9.0,
        "u2": 6.0,
    }  # TSF Fig. 2a


def test_check_json_markdown_and_bench_json_are_clean() -> None:
    commands = [
        ["check", "--policy", "tsf", "--property", "sharing-incentive", "--trials", "3", "--json"],
        ["check", "--policy", "cdrf", "--property", "strategy-proofness", "--json"],
        ["check", "--all", "--policy", "cmmf", "--trials", "2", "--json"],
        ["check", "--all", "--policy", "per-machine-drf", "--trials", "2", "--markdown"],
        ["bench", "online", "--machines", "10", "--jobs", "3", "--tasks", "2", "--json"],
        ["bench", "solve", "--only", "tsf", "--users", "6", "--repeat", "1", "--json"],
    ]
    one, cdrf, table, markdown, online, bench_solve = run_all(commands)
    for done in (one, cdrf, table, online, bench_solve):
        assert done.returncode == 0, done.stderr
        strict_json(done.stdout)
    first = strict_json(one.stdout)
    assert isinstance(first, dict) and first["policy"] == "tsf" and first["holds"] is True
    violated = strict_json(cdrf.stdout)
    assert isinstance(violated, dict) and violated["holds"] is False
    cells = strict_json(table.stdout)
    assert isinstance(cells, list) and {c["policy"] for c in cells} == {"cmmf"}
    assert markdown.returncode == 0
    assert markdown.stdout.startswith("| policy | sharing-incentive |"), markdown.stdout[:200]
    rows = [line for line in markdown.stdout.splitlines() if line.startswith("| per-machine")]
    assert len(rows) == 1
    assert strict_json(online.stdout)["benchmark"] == "online"  # type: ignore[index]
    assert strict_json(bench_solve.stdout)["benchmark"] == "solve"  # type: ignore[index]


def test_simulate_writes_json_summary_through_the_executable(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_fairshare(
        "simulate", str(EXAMPLES / "sim-two-jobs.yaml"), "--policy", "drf", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    summary = strict_json((out / "summary.json").read_text())
    assert isinstance(summary, dict) and summary["policy"] == "drf" and summary["jobs"] == 2


def test_native_writes_on_descriptor_one_go_to_stderr() -> None:
    """A library writing below Python during a command cannot corrupt the command's stdout."""
    code = (
        "import os, sys\n"
        "from fairshare.cli.app import stdout_kept_for_output\n"
        "with stdout_kept_for_output():\n"
        "    os.write(1, b'native banner\\n')\n"
        "    print('{\"ok\": true}')\n"
        "print('after')\n"
        "os.write(1, b'restored\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"ok": true}\nafter\nrestored\n'
    assert done.stderr == "native banner\n"


BAD_SCENARIOS = {
    "not-yaml.yaml": "machines: [\n",
    "no-machines.yaml": "users: [{name: u, demand: {cpu: 1}}]\n",
    "negative.yaml": "machines: [{name: m, capacity: {cpu: -1}}]\n",
    "unknown-resource.yaml": (
        "machines: [{name: m, capacity: {cpu: 1}}]\nusers: [{name: u, demand: {gpu: 1}}]\n"
    ),
    "duplicate.yaml": (
        "machines: [{name: m, capacity: {cpu: 1}}, {name: m, capacity: {cpu: 1}}]\n"
        "users: [{name: u, demand: {cpu: 1}}]\n"
    ),
    "bad-constraint.yaml": (
        "machines: [{name: m, capacity: {cpu: 1}}]\n"
        "users: [{name: u, demand: {cpu: 1}, constraint: 'gpu and'}]\n"
    ),
    "binary.yaml": "\x00\x01\x02",
}


def test_every_rejected_input_is_one_error_line(tmp_path: Path) -> None:
    for name, text in BAD_SCENARIOS.items():
        (tmp_path / name).write_text(text)
    good = str(SINGLE_RESOURCE)
    commands = [
        ["solve", str(tmp_path / name), "--policy", "drf", "--json"] for name in BAD_SCENARIOS
    ]
    commands += [
        ["solve", str(tmp_path / "missing.yaml"), "--policy", "drf"],
        ["solve", good, "--policy", "nope", "--json"],
        ["solve", good],
        ["solve", good, "--policy", "drf", "--bogus"],
        ["check", "--policy", "drf", "--property", "nope", "--json"],
        ["check", "--policy", "drf", "--property", "strategy-proofness", "--trials", "0"],
        ["check", "--json"],
        ["simulate", good, "--policy", "nope", "--out", str(tmp_path / "a")],
        ["simulate", good, "--policy", "drf", "--out", str(tmp_path / "b"), "--trace", "x:y"],
        ["simulate", good, "--policy", "fair", "--delay-scheduling", "5", "--out", "c"],
        ["compare", good, "--policies", "drf,nope", "--out", str(tmp_path / "d")],
        ["bench", "online", "--policies", "nope", "--json"],
        ["nope"],
    ]
    for argv, done in zip(commands, run_all(commands), strict=True):
        line = assert_rejected(done)
        assert "Traceback" not in line, argv
    assert not any((tmp_path / d).exists() for d in "abcd")


def test_a_five_thousand_digit_number_is_an_input_error(tmp_path: Path) -> None:
    digits = "9" * 5000
    yaml_file = tmp_path / "big.yaml"
    yaml_file.write_text(f"machines: [{{name: m, capacity: {{cpu: {digits}}}}}]\n")
    json_file = tmp_path / "big.json"
    json_file.write_text(f'{{"machines": [{{"name": "m", "capacity": {{"cpu": {digits}}}}}]}}')
    for path in (yaml_file, json_file):
        line = assert_rejected(run_fairshare("solve", str(path), "--policy", "drf", "--json"))
        assert line == (
            f"error: {path}: file: a number has thousands of digits; numbers must be finite "
            "floats (below 1e308)"
        )


def simulate_trace(tmp_path: Path, fmt: str, trace: Path) -> subprocess.CompletedProcess[str]:
    """``fairshare simulate`` of a trace on four two-cpu machines, into ``tmp_path/out``."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text("machines: [{name: m, count: 4, capacity: {cpu: 2}}]\n")
    return run_fairshare(
        "simulate", str(scenario), "--policy", "drf", "--trace", f"{fmt}:{trace}",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip


def test_a_huge_trace_field_is_cut_in_the_error_line(tmp_path: Path) -> None:
    trace = tmp_path / "t.tsv"
    trace.write_text("job0\t49\t10\t740773\t0\t627471\njob1\t" + "z" * 200_000 + "\t9\t1\t1\t1\n")
    line = assert_rejected(simulate_trace(tmp_path, "swim", trace))
    assert len(line) < 400 and "z" * 20 in line
    assert not (tmp_path / "out").exists()


def test_a_bit_flipped_gzip_trace_is_an_input_error(tmp_path: Path) -> None:
    rows = "".join(
        f"{i + 1} {100 * i} 5 {60 + i} 1 -1 -1 1 120 -1 1 1 1 1 1 -1 -1 -1\n" for i in range(40)
    )
    packed = bytearray(gzip.compress(rows.encode(), mtime=0))
    packed[12] ^= 0x10
    trace = tmp_path / "t.swf.gz"
    trace.write_bytes(bytes(packed))
    line = assert_rejected(simulate_trace(tmp_path, "swf", trace))
    assert line.startswith(f"error: {trace}: line 1: cannot read")
    assert not (tmp_path / "out").exists()


def test_a_job_without_input_before_one_with_input_writes_typed_frames(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "machines:\n  - {name: m, count: 4, capacity: {cpu: 2}, rack: r1}\n"
        "jobs:\n"
        "  - {name: a, submit: 0, demand: {cpu: 1}, tasks: 2, duration: 5}\n"
        "  - {name: b, submit: 1, demand: {cpu: 1}, tasks: 2, duration: 5,"
        " input: {replicas: 2}}\n"
    )
    simulate = run_fairshare("simulate", str(scenario), "--policy", "drf", "--out", "run",
                             cwd=tmp_path)  # fmt: skip
    assert simulate.returncode == 0, simulate.stderr[-2000:]
    compare = run_fairshare(
        "compare", str(scenario), "--policies", "fifo,drf", "--out", "cmp", cwd=tmp_path
    )
    assert compare.returncode == 0, compare.stderr[-2000:]
    import polars as pl  # noqa: PLC0415

    for path in (tmp_path / "run", tmp_path / "cmp" / "drf"):
        tasks = pl.read_parquet(path / "tasks.parquet")
        assert tasks.schema["locality"] == pl.String and tasks.schema["job"] == pl.String
        by_job = {r["job"]: r["locality"] for r in tasks.to_dicts()}
        assert by_job["a"] is None and by_job["b"] in {"node", "rack", "off_rack"}


@pytest.mark.parametrize("policy", ["drf", "max-min", "hdrf", "asset", "ceei", "collapsed-drf"])
def test_zero_capacity_with_the_demand_omitted_gives_nothing(policy: str, tmp_path: Path) -> None:
    scenario = tmp_path / "zero.yaml"
    scenario.write_text("machines: [{name: m, capacity: {cpu: 0}}]\nusers: [{name: u}]\n")
    done = run_fairshare("solve", str(scenario), "--policy", policy, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    doc = strict_json(done.stdout)
    assert isinstance(doc, dict) and doc["users"]["u"]["tasks"] == 0.0
    assert done.stderr.startswith("warning: ") and "zero capacity" in done.stderr


def test_names_with_rich_markup_are_printed_as_they_are(tmp_path: Path) -> None:
    (tmp_path / "a[").mkdir()
    scenario = tmp_path / "a[" / "bold]s.yaml"  # the path reads ".../a[/bold]s.yaml"
    scenario.write_text(
        "machines: [{name: m, capacity: {cpu: 2}}]\nusers: [{name: '[/bold]'}, {name: '[red]x'}]\n"
    )
    done = run_fairshare("solve", str(scenario), "--policy", "drf")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[/bold]" in done.stdout and "[red]x" in done.stdout
    simulated = tmp_path / "a[" / "bold]jobs.yaml"
    simulated.write_text(
        "machines: [{name: m, capacity: {cpu: 2}}]\n"
        "jobs: [{name: '[/bold]', submit: 0, tasks: 2, duration: 3}]\n"
    )
    run = run_fairshare("simulate", str(simulated), "--policy", "fifo", "--out", "o", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "a[/bold]jobs.yaml" in run.stdout.replace("\n", "")


def test_a_negative_check_seed_is_a_usage_error() -> None:
    line = assert_rejected(
        run_fairshare("check", "--policy", "drf", "--property", "envy-freeness", "--seed", "-5")
    )
    assert "--seed" in line


def test_a_tiny_pareto_shape_is_an_input_error(tmp_path: Path) -> None:
    scenario = tmp_path / "pareto.yaml"
    scenario.write_text(
        "machines: [{name: m, capacity: {cpu: 2}}]\n"
        "jobs: [{name: a, submit: 0, tasks: 2, duration: {pareto: {alpha: 1.0e-300, min: 10}}}]\n"
    )
    line = assert_rejected(
        run_fairshare("simulate", str(scenario), "--policy", "fifo", "--out", str(tmp_path / "o"))
    )
    assert line.startswith(f"error: {scenario}: jobs[0].duration.pareto.alpha: alpha must be >=")
    assert not (tmp_path / "o").exists()
