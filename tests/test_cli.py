"""`fairshare solve` as a user runs it: golden JSON, the table, and SPEC section 4 errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from fairshare.cli import main

from golden_cases import CASES, EXAMPLES, golden_path, render


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    captured = capsys.readouterr()
    code = stop.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def _assert_same_document(got: object, want: object, where: str = "") -> None:
    """``got`` and ``want`` (parsed JSON) have the same structure, keys in the same order,
    the same strings, booleans and integers, and floats equal within 1e-12 (relative, or
    absolute near zero): an iterative solver's last bits follow the linear-algebra library's
    release (numpy 2.4.6's moved CEEI's shares on DRF section 4.1 by one unit in the last
    place), while any real change moves them by far more."""
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (where, got, want)
    elif isinstance(want, dict) and isinstance(got, dict):
        assert list(got) == list(want), where
        for key in want:
            _assert_same_document(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            _assert_same_document(a, b, f"{where}[{i}]")
    else:
        assert type(got) is type(want) and got == want, (where, got, want)


@pytest.mark.parametrize(("example", "policy", "integral"), CASES)
def test_json_matches_golden_file(example: str, policy: str, integral: bool) -> None:
    got = render(example, policy, integral)
    want = golden_path(example, policy, integral).read_text()
    _assert_same_document(json.loads(got), json.loads(want))
    # The layout too: two-space indents, one trailing newline.
    assert got == json.dumps(json.loads(got), indent=2) + "\n"


def test_the_golden_comparison_tells_a_real_change() -> None:
    """A last-place difference passes; a change in the tenth digit, a missing key, a string
    or a float standing for an integer fails."""
    _assert_same_document({"a": [0.9090909090909091]}, {"a": [0.9090909090909092]})
    for got in ({"a": [0.909090909]}, {"b": [0.9090909090909092]}, {"a": ["x"]}, {"a": [1]}):
        with pytest.raises(AssertionError):
            _assert_same_document(got, {"a": [0.9090909090909092]})


def test_json_document_has_the_spec_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["solve", str(EXAMPLES / "drf-section-4.1.yaml"), "--policy", "drf", "--json"], capsys
    )
    assert code == 0 and err == ""
    document = json.loads(out)
    assert document["policy"] == "drf" and document["integral"] is False
    assert document["users"]["A"] == {"tasks": 3.0, "share": 2 / 3}  # exact, never rounded
    assert document["users"]["B"] == {"tasks": 2.0, "share": 2 / 3}
    assert document["resources"] == {
        "cpu": {"capacity": 9.0, "allocated": 9.0},
        "mem": {"capacity": 18.0, "allocated": 14.0},
    }


def test_table_output_names_every_user_and_resource(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["solve", str(EXAMPLES / "hdrf-figure-4.yaml"), "--policy", "hdrf"], capsys)
    assert code == 0
    for text in ("n1-1", "n2-1", "n2-2", "cpu", "gpu", "100.0%"):
        assert text in out


def test_policies_command_lists_every_solver_and_online_policy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fairshare.policies import ONLINE_POLICIES  # noqa: PLC0415
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415
    from fairshare.solvers import SOLVER_POLICIES  # noqa: PLC0415

    code, out, _ = run(["policies"], capsys)
    assert code == 0
    cells = {line.split("│")[1].strip() for line in out.splitlines() if line.count("│") > 2}
    listed = cells - {""}  # a row wrapped in a narrow terminal continues with an empty cell
    assert listed == set(SOLVER_POLICIES) | set(ONLINE_POLICIES) | set(REFERENCE_POLICIES)


def write(tmp_path: Path, text: str, name: str = "scenario.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


GOOD = """
machines:
  - {name: m1, capacity: {cpu: 4, mem: 8}}
users:
  - {name: u1, demand: {cpu: 1, mem: 1}}
"""

BAD_INPUTS = {
    "broken-yaml": ("machines: [\n  - {name: m1\n", "line "),
    "unknown-field": (GOOD.replace("capacity:", "capacty:"), "machines[0].capacty"),
    "negative": (GOOD.replace("cpu: 4", "cpu: -4"), "machines[0].capacity.cpu"),
    "nan": (GOOD.replace("cpu: 4", "cpu: .nan"), "machines[0].capacity.cpu"),
    "infinite": (GOOD.replace("cpu: 4", "cpu: .inf"), "machines[0].capacity.cpu"),
    "duplicate-name": (
        GOOD + "  - {name: u1, demand: {cpu: 1}}\n",
        "users[1].name",
    ),
    "unknown-resource": (GOOD.replace("demand: {cpu: 1, mem: 1}", "demand: {gpu: 1}"), "users[0]"),
    "unknown-queue": (GOOD.replace("mem: 1}}", "mem: 1}, queue: ads}"), "users[0].queue"),
    "zero-weight": (GOOD.replace("mem: 1}}", "mem: 1}, weight: 0}"), "users[0].weight"),
    "code-in-constraint": (
        GOOD.replace("mem: 1}}", "mem: 1}, constraint: \"__import__('os').system('ls')\"}"),
        "users[0].constraint",
    ),
    "missing-machines": ("users:\n  - {name: u1, demand: {cpu: 1}}\n", "machines"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, where = BAD_INPUTS[case]
    path = write(tmp_path, text)
    code, out, err = run(["solve", path, "--policy", "drf"], capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: {path}: {where}"), err
    assert "Traceback" not in err


def test_unknown_policy_lists_the_allowed_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD)
    code, _, err = run(["solve", path, "--policy", "fair-ish"], capsys)
    assert code == 2
    assert err == (
        f"error: {path}: --policy: unknown policy 'fair-ish'; allowed: max-min, drf, asset, "
        "ceei, hdrf, collapsed-drf, cmmf, independent, tsf, drfh, cdrf, per-machine-drf\n"
    )


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    code, _, err = run(["solve", missing, "--policy", "drf"], capsys)
    assert code == 2
    assert err.startswith(f"error: {missing}: file: cannot read")


def test_missing_option_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["solve", str(EXAMPLES / "quickstart.yaml")], capsys)
    assert code == 2
    assert err.startswith("error: command line: fairshare solve: Missing option '--policy'")
    assert err.count("\n") == 1


def test_max_min_refuses_several_resources(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["solve", str(EXAMPLES / "quickstart.yaml"), "--policy", "max-min"], capsys)
    assert code == 2
    assert "--policy: max-min shares a single resource" in err
    assert "use drf" in err


def test_infeasible_minimum_shares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(
        tmp_path,
        GOOD + "  - {name: u2, demand: {cpu: 1}, min_share: 3}\n"
        "  - {name: u3, demand: {cpu: 1}, min_share: 2}\n",
    )
    code, _, err = run(["solve", path, "--policy", "drf"], capsys)
    assert code == 2
    assert err.startswith(f"error: {path}: users[*].min_share: the minimum shares need 5 cpu")


def test_constraint_matching_no_machine_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD + "  - {name: u2, demand: {cpu: 1}, constraint: gpu}\n")
    code, out, err = run(["solve", path, "--policy", "drf", "--json"], capsys)
    assert code == 0
    assert json.loads(out)["users"]["u2"]["tasks"] == 0.0
    assert "warning:" in err and "'u2': its constraint matches no machine" in err


def test_console_script_end_to_end_has_no_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("cpu: 4", "cpu: -4"))
    result = subprocess.run(
        [sys.executable, "-m", "fairshare", "solve", path, "--policy", "drf"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {path}: machines[0].capacity.cpu: ")
    assert "Traceback" not in result.stderr
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairshare",
            "solve",
            str(EXAMPLES / "quickstart.yaml"),
            "-p",
            "drf",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0 and "dev-notebooks" in ok.stdout


_LOADED_BY = """
import sys
from fairshare.cli import main
try:
    main(sys.argv[1:])
except SystemExit as stop:
    assert stop.code in (0, None), stop.code
prefixes = ("fairshare.solvers", "fairshare.fairness", "fairshare.bench")
libraries = ("highspy", "scipy", "matplotlib")
print(sorted({m.split(".")[0] if m.startswith(libraries) else m
              for m in sys.modules if m.startswith(prefixes + libraries)}))
"""


def test_simulate_loads_no_solver_fairness_search_benchmark_or_matplotlib(tmp_path: Path) -> None:
    # A simulate used to load the solvers (HiGHS, SciPy) only to catch their UnknownPolicy,
    # and again to name the reference schedulers, and matplotlib for the report's figures.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _LOADED_BY,
            "simulate",
            str(EXAMPLES / "sim-two-jobs.yaml"),
            "--policy",
            "drf",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "[]"


def test_unknown_solver_policy_is_still_an_input_error(tmp_path: Path) -> None:
    # UnknownPolicy is caught only once the solvers are loaded: through the API's solve.
    from fairshare.cli.app import _input_errors  # noqa: PLC0415
    from fairshare.solvers import UnknownPolicy  # noqa: PLC0415

    assert UnknownPolicy in _input_errors()
