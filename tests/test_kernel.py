"""The compiled kernel (``fairshare.kernel``): the modules mypyc compiles exist, the switch to
the pure-Python sources loads them, and, where the kernel is compiled, the pure-Python kernel
makes the compiled kernel's decisions (the committed fingerprints of
``tests/golden/decision_fingerprints.txt``): CI's only run of the pure-Python fingerprints.

Under the ``ci`` and ``nightly`` profiles every line is run (323 simulations, about 90 s of
CPU); under ``dev``, a user's ``python -m pytest -n auto``, an eighth of them chosen so that
every policy and every mechanism is run at least twice (:func:`pure_python_sample`)."""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fairshare import kernel
from fairshare.policies import ONLINE_POLICIES

from conftest import hypothesis_profile

SOURCE_ROOT = Path(kernel.__file__).parent.parent
"""The directory holding the imported ``fairshare``: ``src/`` of an editable install, the
environment's site-packages where CI installs the built wheel."""
SETUP = Path(__file__).resolve().parents[1] / "setup.py"
"""The checkout's ``setup.py``, whichever copy of the package is installed."""
GOLDEN = Path(__file__).parent / "golden" / "decision_fingerprints.txt"
SAMPLE_STRIDE = 8
"""Under the ``dev`` profile, one (policy, mechanism) fingerprint in this many runs on the
pure-Python kernel."""


def pure_python_sample(policy: str, mechanisms: list[str], profile: str) -> list[str]:
    """The mechanisms whose fingerprint ``policy`` runs on the pure-Python kernel: all of them
    under ``ci`` and ``nightly``; under ``dev`` every :data:`SAMPLE_STRIDE`-th one, starting at
    an offset that turns with the policy's place in the sorted policies, so that the sample
    covers each policy and each mechanism (the compiled run checks every line regardless).

    >>> pure_python_sample("drf", ["a", "b", "c", "d", "e"], "ci")
    ['a', 'b', 'c', 'd', 'e']
    """
    if profile != "dev":
        return list(mechanisms)
    offset = sorted(ONLINE_POLICIES).index(policy) % SAMPLE_STRIDE
    return [m for k, m in enumerate(mechanisms) if k % SAMPLE_STRIDE == offset]


def _python(code: str, *, pure: bool) -> str:
    env = dict(os.environ)
    env.pop(kernel.PURE_PYTHON_ENV, None)
    if pure:
        env[kernel.PURE_PYTHON_ENV] = "1"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_kernel_module_has_its_python_source() -> None:
    for name in kernel.KERNEL_MODULES:
        assert SOURCE_ROOT.joinpath(*name.split(".")).with_suffix(".py").is_file(), name


def test_setup_compiles_exactly_the_kernel_modules() -> None:
    code = f"import runpy; ns = runpy.run_path({str(SETUP)!r}); print(ns['kernel_modules']())"
    assert _python(code, pure=False).strip() == str(list(kernel.KERNEL_MODULES))


def test_the_switch_loads_every_kernel_module_from_its_source() -> None:
    code = (
        "import importlib, json; from fairshare import kernel; "
        "print(json.dumps([kernel.compiled(), "
        "[importlib.import_module(m).__file__ for m in kernel.KERNEL_MODULES]]))"
    )
    compiled, files = json.loads(_python(code, pure=True))
    assert compiled is False
    assert all(file.endswith(".py") for file in files), files


@pytest.mark.skipif(
    not kernel.compiled(),
    reason="the kernel runs from its sources here, so tests/test_decision_fingerprints.py "
    "checks the pure-Python kernel's decisions itself",
)
@pytest.mark.parametrize("policy", sorted(ONLINE_POLICIES))
def test_the_pure_python_kernel_makes_the_committed_decisions(policy: str) -> None:
    """Where the kernel is compiled (CI installs the built wheel), the pure-Python fallback
    must make the same decisions: the fingerprint lines of ``policy`` (all of them in CI,
    :func:`pure_python_sample`), in a process with ``FAIRSHARE_PURE_PYTHON=1``. One test per
    policy, so that pytest-xdist spreads them."""
    every = {
        line.split()[1]: line
        for line in GOLDEN.read_text().splitlines()
        if line.strip() and line.split()[0] == policy
    }
    chosen = pure_python_sample(policy, list(every), hypothesis_profile(os.environ))
    expected = {name: every[name] for name in chosen}
    code = (
        "import json; from fairshare import kernel; "
        "from fairshare.bench.fingerprint import configs, fingerprint; "
        "print(json.dumps([kernel.compiled(), "
        f"{{c[0]: fingerprint({policy!r}, c) for c in configs() if c[0] in {chosen!r}}}]))"
    )
    compiled, lines = json.loads(_python(code, pure=True))
    assert compiled is False
    assert lines == expected


@pytest.mark.parametrize(("source_age", "stale"), [(10.0, False), (-10.0, True), (-1.0, False)])
def test_a_compiled_module_older_than_its_source_is_stale(
    tmp_path: Path, source_age: float, stale: bool
) -> None:
    """``source_age`` seconds before the extension was built, the source was last written
    (negative: after; within two seconds counts as the same moment of an install)."""
    package = tmp_path / "fairshare" / "policies"
    package.mkdir(parents=True)
    source = package / "ledger.py"
    built = (
        tmp_path / "fairshare" / (kernel.NATIVE_LIBRARY + importlib.machinery.EXTENSION_SUFFIXES[0])
    )
    source.write_text("")
    built.write_bytes(b"")
    os.utime(built, (1_000_000.0, 1_000_000.0))
    os.utime(source, (1_000_000.0 - source_age, 1_000_000.0 - source_age))
    expected = ["fairshare.policies.ledger"] if stale else []
    assert kernel.stale_modules(str(tmp_path)) == expected


def test_a_stale_kernel_runs_the_sources_and_says_so_once(tmp_path: Path) -> None:
    """A copy of the package with a fake extension older than its source: ``fairshare``
    loads the source and prints one line naming the module."""
    root = tmp_path / "src"
    shutil.copytree(
        SOURCE_ROOT / "fairshare",
        root / "fairshare",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"),
    )
    ledger = root / "fairshare" / "policies" / "ledger.py"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for fake in (
        ledger.with_name("ledger" + suffix),
        root / "fairshare" / (kernel.NATIVE_LIBRARY + suffix),
    ):
        fake.write_bytes(b"not an extension")
        os.utime(fake, (1_000_000.0, 1_000_000.0))
    env = {k: v for k, v in os.environ.items() if k != kernel.PURE_PYTHON_ENV}
    env["PYTHONPATH"] = str(root)
    done = subprocess.run(
        [sys.executable, "-c", "import fairshare.policies.ledger as m; print(m.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(ledger)
    assert done.stderr.count("\n") == 1
    assert kernel.KERNEL_MODULES[0] in done.stderr  # every copied source is newer


def test_setup_names_the_native_library_as_the_kernel_does() -> None:
    assert f'group_name="fairshare.{kernel.NATIVE_LIBRARY.removesuffix("__mypyc")}"' in (
        SETUP.read_text()
    )


@pytest.mark.parametrize(
    ("argv", "pure_build", "expected_line"),
    [
        (["egg_info"], False, ""),
        (["dist_info", "--output-dir", "x"], False, ""),
        (["build_ext"], True, "FAIRSHARE_PURE_PYTHON_BUILD is set"),
    ],
)
def test_setup_runs_mypyc_only_to_build_and_says_when_it_skips(
    argv: list[str], pure_build: bool, expected_line: str
) -> None:
    """pip runs setup.py for its metadata (egg_info, dist_info) before it builds: those runs
    get no extension (mypyc is not run), and a build with FAIRSHARE_PURE_PYTHON_BUILD=1 says
    on stderr that the core stays pure Python."""
    env = {k: v for k, v in os.environ.items() if k != "FAIRSHARE_PURE_PYTHON_BUILD"}
    if pure_build:
        env["FAIRSHARE_PURE_PYTHON_BUILD"] = "1"
    code = (
        f"import runpy, sys; sys.argv = ['setup.py', *{argv!r}]; "
        f"ns = runpy.run_path({str(SETUP)!r}); print(len(ns['compiled_kernel']()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=SETUP.parent,
        start_new_session=True,  # no controlling terminal: setup.py's line goes to stderr only
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
    if expected_line:
        assert expected_line in done.stderr
    else:
        assert done.stderr == ""


def test_the_dev_sample_covers_every_policy_and_mechanism() -> None:
    """An eighth of the lines, yet no policy and no mechanism left out of the pure-Python run:
    each policy at least twice, each mechanism at least twice."""
    mechanisms = sorted({line.split()[1] for line in GOLDEN.read_text().splitlines() if line})
    samples = {p: pure_python_sample(p, mechanisms, "dev") for p in ONLINE_POLICIES}
    assert all(samples.values())
    assert {m for chosen in samples.values() for m in chosen} == set(mechanisms)
    assert all(len(chosen) >= 2 for chosen in samples.values())
    runs = [m for chosen in samples.values() for m in chosen]
    assert min(runs.count(m) for m in mechanisms) >= 2
    # at most an eighth of each policy's lines, rounded up
    assert all(len(c) <= -(-len(mechanisms) // SAMPLE_STRIDE) for c in samples.values())
    assert pure_python_sample("drf", mechanisms, "nightly") == mechanisms
