"""A clone is self-contained: the trace samples the tests and the documentation use are in the
repository (``data/samples/``, each with its source and licence), no test, page or CI script
reads files beside the repository, the user pages cite pages a user has (not the development
contract's section numbers), and every command of the README runs on a bare clone."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from fairshare.workload.traces import TRACE_FORMATS

from conftest import SAMPLE_DATA, fairshare_executable

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))

SAMPLES = {
    "swim": SAMPLE_DATA / "swim" / "FB-2009_samples_24_times_1hr_0.tsv",
    "google-2011": SAMPLE_DATA / "google-2011" / "job_events",
    "alibaba-gpu": SAMPLE_DATA / "alibaba-gpu" / "openb_pod_list_default.csv",
    "alibaba-2017": SAMPLE_DATA / "alibaba-2017",
    "alibaba-2018": SAMPLE_DATA / "alibaba-2018",
    "swf": SAMPLE_DATA / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz",
    "slurm-sacct": ROOT / "examples" / "whatif" / "slurm" / "sacct.txt",
    "kueue-workloads": ROOT / "examples" / "whatif" / "kueue" / "workloads.yaml",
}
"""A sample of every trace format: the public traces' in ``data/samples/``, the accounting
formats' (a cluster's own records) in ``examples/whatif/``."""
SAMPLE_BYTES = 200_000
"""The largest a sample file may be: the samples keep a clone small."""

_FENCE = re.compile(r"^```(\w*)\s*$")
_REPO_PATH = re.compile(r"^(examples|data|tests|benchmarks|docs)/")


def _blocks(path: Path, languages: tuple[str, ...]) -> list[tuple[int, list[str]]]:
    """The fenced code blocks of ``path`` in ``languages``: (first line number, lines), a line
    continued with a backslash joined to the next."""
    blocks: list[tuple[int, list[str]]] = []
    fenced = False
    kept: list[str] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fence = _FENCE.match(line)
        if fence and not fenced:
            fenced = True
            kept = [] if fence.group(1) in languages else None
            if kept is not None:
                blocks.append((number, kept))
        elif line.startswith("```") and fenced:
            fenced = False
            kept = None
        elif kept is not None:
            if kept and kept[-1].endswith("\\"):
                kept[-1] = kept[-1][:-1].rstrip() + " " + line.strip()
            else:
                kept.append(line)
    return blocks


def _commands(path: Path) -> list[tuple[int, list[str]]]:
    """The ``fairshare`` and ``python`` command lines of ``path``'s bash and console blocks,
    split as the shell would (comments dropped), by the block's line number."""
    found = []
    for number, lines in _blocks(path, ("bash", "console", "sh")):
        for line in lines:
            for part in (line[2:] if line.startswith("$ ") else line).split("&&"):
                text = part.strip()
                if text.startswith(("fairshare ", "python ")):
                    found.append((number, shlex.split(text, comments=True)))
    return found


def _inputs(words: list[str]) -> list[str]:
    """The repository paths a command's words name: a ``FORMAT:PATH`` trace's path, and any
    word under ``examples/``, ``data/``, ``tests/``, ``benchmarks/`` or ``docs/``."""
    paths = []
    for word in words:
        fmt, colon, rest = word.partition(":")
        named = rest if colon and fmt in TRACE_FORMATS else word
        if _REPO_PATH.match(named):
            paths.append(named)
    return paths


def test_every_trace_format_has_a_small_sample_with_its_source_and_licence() -> None:
    assert sorted(SAMPLES) == sorted(TRACE_FORMATS)
    assert all(path.exists() for path in SAMPLES.values()), SAMPLES
    folders = sorted(p.name for p in SAMPLE_DATA.iterdir() if p.is_dir())
    assert folders == ["alibaba-2017", "alibaba-2018", "alibaba-gpu", "google-2011", "swf", "swim"]
    for folder in folders:
        source = (SAMPLE_DATA / folder / "SOURCE.md").read_text(encoding="utf-8")
        assert "Licence:" in source and "https://" in source and "How cut" in source, folder
    files = [
        p
        for p in SAMPLE_DATA.rglob("*")
        if p.is_file() and p.name not in ("SOURCE.md", "LICENSE", "README.md", "make_samples.py")
    ]
    assert len(files) == 15
    assert max(p.stat().st_size for p in files) <= SAMPLE_BYTES
    assert sum(p.stat().st_size for p in files) < 650_000


def test_nothing_reads_files_beside_the_repository() -> None:
    """A user has only the repository: no test reads trace data beside it (the samples are
    ``data/samples/``), and no page, CI script or example points at ``../shared``."""
    tests = [p for p in sorted((ROOT / "tests").glob("*.py")) if p.name != Path(__file__).name]
    others = [README, *PAGES, *sorted((ROOT / ".ci").iterdir())]
    others += sorted((ROOT / "examples").rglob("*.yaml"))
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path, beside in [(p, re.compile(r'shared/data|"shared"')) for p in tests]
        + [(p, re.compile(r"\.\./shared|SPEC\.md")) for p in others]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if beside.search(line)
    ]
    assert offenders == []


def test_user_pages_cite_pages_not_spec_sections() -> None:
    """The README and ``docs/`` (the generated option table of ``docs/commands.md``, which
    is the options' help text, included) link to the documentation pages, not to sections
    of a specification a user does not have."""
    offenders = []
    for path in [README, *PAGES]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if re.search(r"\bSPEC\b", line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert offenders == []


def test_every_documented_command_names_files_the_repository_has() -> None:
    """Every input path of the ``fairshare`` and ``python`` commands of the README's and the
    docs' bash and console blocks exists in the repository (outputs and files an earlier
    command writes are not under its folders)."""
    checked = 0
    missing = []
    for path in [README, *PAGES]:
        for number, words in _commands(path):
            for relative in _inputs(words):
                checked += 1
                if not (ROOT / relative).exists():
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {relative}")
    assert missing == []
    assert checked >= 25  # the pages' commands were found


def _readme_blocks_to_run() -> list[tuple[int, str]]:
    """The README's bash blocks made only of ``echo`` and quick ``fairshare`` commands (solve,
    simulate, compare, import, whatif, explain): the others install packages, start a service
    or run minutes-long sweeps and benchmarks, and their input paths are checked above."""
    quick = ("solve", "simulate", "compare", "import", "whatif", "explain")
    runnable = []
    for number, lines in _blocks(README, ("bash",)):
        commands = [line for line in lines if line.strip()]
        if all(
            line.split()[0] == "echo" or line.split()[:2] in (["fairshare", q] for q in quick)
            for line in commands
        ):
            runnable.append((number, "\n".join(commands)))
    return runnable


README_RUNS = _readme_blocks_to_run()


@pytest.mark.parametrize(
    ("line", "script"), README_RUNS, ids=[f"README.md:{line}" for line, _ in README_RUNS]
)
def test_readme_block_runs_on_a_bare_clone(line: int, script: str, tmp_path: Path) -> None:
    """The block runs as written, with the installed executable, in a directory that holds
    only the repository's ``examples/`` and ``data/`` (as a clone's root does): exit 0 and
    nothing on stderr but warnings."""
    for name in ("examples", "data"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {
        **os.environ,
        "PATH": f"{Path(fairshare_executable()).parent}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (line, done.stderr[-2000:])
    assert all(row.startswith("warning: ") for row in done.stderr.splitlines()), done.stderr


def test_the_readme_blocks_run_include_the_trace_examples() -> None:
    scripts = [script for _, script in README_RUNS]
    assert len(scripts) >= 5
    assert any("--trace alibaba-gpu:data/samples/" in script for script in scripts)
    assert any("--trace kueue-workloads:" in script for script in scripts)


def test_the_cut_script_gives_the_committed_samples_again(tmp_path: Path) -> None:
    """``data/samples/make_samples.py --check`` on the samples laid out as the full data sets
    are: each cut is a prefix (or a subset) of its input, so cutting a sample again gives it
    byte for byte (gzip without a name or a time), and the script reads that layout."""
    layout = {
        "swim": "swim-facebook",
        "swf": "pwa-swf",
        "google-2011": "google-clusterdata-2011",
        "alibaba-gpu": "alibaba-gpu-v2023",
        "alibaba-2017": "alibaba-v2017-batch",
        "alibaba-2018": "alibaba-v2018-batch",
    }
    for folder, full in layout.items():
        shutil.copytree(SAMPLE_DATA / folder, tmp_path / full)
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLE_DATA / "make_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--data", str(tmp_path), "--check"]) == 0
    # and a changed sample is noticed
    (tmp_path / "swim-facebook" / "FB-2009_samples_24_times_1hr_1.tsv").write_text(
        "job0\t0\t0\t1\t0\t0\n"
    )
    assert module.main(["--data", str(tmp_path), "--check"]) == 1
    assert module.main(["--data", str(tmp_path / "absent")]) == 2
