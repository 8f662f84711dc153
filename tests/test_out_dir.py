"""``--out DIR`` of ``simulate`` and ``compare`` (issue 14, item 4): where results are staged,
what happens to an existing DIR, signals, the umask, and environment errors while writing.

Through the installed executable where a user would see the difference (exit code, stderr,
the files left on disk); in process where a fault must be injected (a cross-device rename, a
full disk)."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import fairshare.report
from fairshare.cli import main

from conftest import (
    EXAMPLES,
    assert_rejected,
    default_signals,
    fairshare_executable,
    run_fairshare,
)

TWO_JOBS = str(EXAMPLES / "sim-two-jobs.yaml")
RUN_FILES = {"summary.json", "jobs.csv", "timeline.csv", "tasks.parquet", "report.html"}
SIMULATE_FILES = RUN_FILES | {"run.json", "scenario.json"}  # each run records its inputs too
MARKER = ".fairshare-output"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``fairshare ARGV`` in process: exit code, stdout, stderr."""
    try:
        main(argv)
        code: object = 0
    except SystemExit as done:
        code = done.code
    captured = capsys.readouterr()
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def hidden(directory: Path) -> list[str]:
    """Hidden entries a run may have left (staging directories, temporary copies)."""
    return sorted(
        p.name for p in directory.iterdir() if p.name.startswith(".") and p.name != MARKER
    )


def simulate_drf(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_fairshare("simulate", TWO_JOBS, "--policy", "drf", "--out", str(out), *extra)


def tree(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()}


def marker(directory: Path) -> dict[str, Any]:
    document = json.loads((directory / MARKER).read_text())
    assert isinstance(document, dict)
    return document


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------- staging and devices


def _record_staging(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The directories ``write_outputs`` is given: where a run stages its results."""
    made: list[Path] = []
    real_write_outputs = fairshare.report.write_outputs

    def recording(log: Any, out_dir: Path) -> dict[str, object]:
        made.append(out_dir)
        return real_write_outputs(log, out_dir)

    monkeypatch.setattr(fairshare.report, "write_outputs", recording)
    return made


def test_out_staging_directory_is_a_sibling_of_the_destination(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _record_staging(monkeypatch)
    out = tmp_path / "runs" / "out"
    out.parent.mkdir()
    assert run(["simulate", TWO_JOBS, "--policy", "drf", "--out", str(out)], capsys)[0] == 0
    assert run(["simulate", TWO_JOBS, "--policy", "fifo", "--out", str(out)], capsys)[0] == 0
    # A new DIR whose parents are still to be made: staged in the nearest existing ancestor,
    # on the same file system as the DIR that will be created there.
    deep = tmp_path / "a" / "b" / "out"
    assert run(["simulate", TWO_JOBS, "--policy", "drf", "--out", str(deep)], capsys)[0] == 0
    assert [p.parent for p in made] == [out.parent, out.parent, tmp_path]
    assert all(p.name.startswith(".fairshare-staging-") and not p.exists() for p in made)
    assert hidden(out.parent) == [] and hidden(tmp_path) == [] and tree(deep) >= RUN_FILES


def test_out_on_a_mount_point_is_staged_inside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mounted volume as DIR: its parent is on another file system, so staging goes inside
    DIR (on the volume), and the results still appear only when complete."""
    out = tmp_path / "volume"
    out.mkdir()
    made = _record_staging(monkeypatch)
    real_ismount = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == out.resolve() or real_ismount(p))
    assert run(["simulate", TWO_JOBS, "--policy", "drf", "--out", str(out)], capsys)[0] == 0
    assert [p.parent for p in made] == [out]
    assert tree(out) == SIMULATE_FILES | {MARKER} and hidden(out) == []


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mount small tmpfs volumes under ``tmp_path`` (a real other file system); skips where
    mounting is not allowed (not root, no CAP_SYS_ADMIN)."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"volume{len(mounted)}"
        point.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0 or os.stat(point).st_dev == os.stat(tmp_path).st_dev:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
        mounted.append(point)
        return point

    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    try:
        yield mount
    finally:
        for point in mounted:
            subprocess.run(["umount", str(point)], capture_output=True, check=False)


def test_out_on_a_mounted_volume_through_the_executable(
    tmpfs: Callable[[str], Path], tmp_path: Path
) -> None:
    """DIR is itself a mount point: the results cross no device, twice in a row."""
    volume = tmpfs("8m")
    first = run_fairshare("compare", TWO_JOBS, "--policies", "drf,fifo", "--out", str(volume))
    assert first.returncode == 0, first.stderr[-2000:]
    second = run_fairshare("compare", TWO_JOBS, "--policies", "drf,fair", "--out", str(volume))
    assert second.returncode == 0, second.stderr[-2000:]
    assert tree(volume) == {MARKER, "compare.json", "compare.csv", "compare.html"} | {
        f"{p}/{f}" for p in ("drf", "fair") for f in SIMULATE_FILES
    }
    assert hidden(volume) == [] and hidden(tmp_path) == []


def test_out_on_a_full_volume_is_one_error_line(
    tmpfs: Callable[[str], Path], tmp_path: Path
) -> None:
    """A real ENOSPC: report.html (40 KB, its figures drawn as plain SVG) does not fit in
    32 KiB beside the other files."""
    out = tmpfs("32k") / "run"
    line = assert_rejected(simulate_drf(out))
    assert line == f"error: {out}: --out: cannot write the results (No space left on device)"
    assert list(out.parent.iterdir()) == [] and hidden(tmp_path) == []


def test_out_existing_directory_in_a_read_only_parent_is_staged_inside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--out .`` in a home directory: DIR is writable, its parent is not."""
    out = tmp_path / "out"
    out.mkdir()
    made = _record_staging(monkeypatch)
    real_mkdir = os.mkdir

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).parent == tmp_path:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    assert run(["simulate", TWO_JOBS, "--policy", "drf", "--out", str(out)], capsys)[0] == 0
    assert [p.parent for p in made] == [out]
    assert tree(out) == SIMULATE_FILES | {MARKER} and hidden(out) == []
    # A new DIR there cannot be made at all: one line, before the run.
    code, _, err = run(
        ["simulate", TWO_JOBS, "--policy", "drf", "--out", str(tmp_path / "new")], capsys
    )
    assert code == 2
    assert (
        one_error_line(err)
        == f"error: {tmp_path / 'new'}: --out: cannot write there (Permission denied)"
    )


def _cross_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Renames between two different top-level entries of ``tmp_path`` fail with EXDEV, as
    between a staging directory and a DIR on another file system."""
    real_replace, real_rename = os.replace, os.rename

    def top(path: object) -> str:
        relative = Path(str(path)).absolute().relative_to(tmp_path)
        return relative.parts[0]

    def check(src: object, dst: object) -> None:
        if top(src) != top(dst):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(src), None, str(dst))

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        check(src, dst)
        real_replace(src, dst, **kwargs)

    def rename(src: Any, dst: Any, **kwargs: Any) -> None:
        check(src, dst)
        real_rename(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "rename", rename)


def test_out_cross_device_rename_keeps_the_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _cross_device(tmp_path, monkeypatch)
    out = tmp_path / "out"
    code, _, err = run(["simulate", TWO_JOBS, "--policy", "drf", "--out", str(out)], capsys)
    assert code == 0, err
    assert tree(out) == SIMULATE_FILES | {MARKER}
    assert json.loads((out / "summary.json").read_text())["policy"] == "drf"
    argv = ["compare", TWO_JOBS, "--policies", "drf,fifo", "--out", str(out)]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert tree(out) == {MARKER, "compare.json", "compare.csv", "compare.html"} | {
        f"{p}/{f}" for p in ("drf", "fifo") for f in SIMULATE_FILES
    }
    assert set(marker(out)["files"]) == tree(out) - {MARKER}
    assert hidden(tmp_path) == [] and hidden(out) == []


def test_out_cross_device_copy_failure_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _cross_device(tmp_path, monkeypatch)

    def full(src: Any, dst: Any, **kwargs: Any) -> None:
        Path(dst).write_bytes(b"partial")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))

    monkeypatch.setattr(shutil, "copyfile", full)
    out = tmp_path / "out"
    code, stdout, err = run(["simulate", TWO_JOBS, "--policy", "drf", "--out", str(out)], capsys)
    assert (code, stdout) == (2, "")
    assert one_error_line(err) == (
        f"error: {out}: --out: cannot write the results (No space left on device)"
    )
    assert hidden(tmp_path) == [] and (not out.exists() or hidden(out) == [])


# ------------------------------------------------------------------------ the DIR's name


@pytest.mark.parametrize("name", ["", " ", "\t "])
def test_out_empty_or_blank_is_an_input_error(name: str, tmp_path: Path) -> None:
    done = run_fairshare("simulate", TWO_JOBS, "--policy", "drf", "--out", name, cwd=tmp_path)
    line = assert_rejected(done)
    assert line == f"error: command line: --out: must name a directory, got {name!r}"
    assert list(tmp_path.iterdir()) == []


def test_out_dangling_symlink_is_one_error_line(tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "gone")
    line = assert_rejected(simulate_drf(link))
    assert line.startswith(f"error: {link}: --out: is a dangling symbolic link")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and link.is_symlink()


def test_out_symlink_to_a_directory_writes_there(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "real")
    done = simulate_drf(link)
    assert done.returncode == 0, done.stderr[-2000:]
    assert link.is_symlink() and tree(tmp_path / "real") == SIMULATE_FILES | {MARKER}


def test_out_name_too_long_is_one_error_line(tmp_path: Path) -> None:
    out = tmp_path / ("x" * 300)
    line = assert_rejected(simulate_drf(out))
    assert line.endswith("--out: cannot use this path (File name too long)")
    assert list(tmp_path.iterdir()) == []


def test_out_below_a_regular_file_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("mine")
    out = tmp_path / "f" / "out"
    line = assert_rejected(simulate_drf(out))
    assert line == f"error: {out}: --out: cannot use this path (Not a directory)"
    assert (tmp_path / "f").read_text() == "mine"


# ------------------------------------------------------------------------ an existing DIR


def test_out_existing_empty_directory_is_used(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir(mode=0o750)
    done = simulate_drf(out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert tree(out) == SIMULATE_FILES | {MARKER}
    assert stat.S_IMODE(out.stat().st_mode) == 0o750  # the user's directory, kept as it was
    assert marker(out) == {"command": "simulate", "version": fairshare.__version__,
                           "files": sorted(SIMULATE_FILES)}  # fmt: skip


def test_out_second_compare_leaves_no_stale_results_of_the_first(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_fairshare("compare", TWO_JOBS, "--policies", "drf,fifo", "--out", str(out))
    assert first.returncode == 0, first.stderr[-2000:]
    (out / "notes.txt").write_text("mine")
    (out / "fifo" / "notes.txt").write_text("mine too")
    second = run_fairshare("compare", TWO_JOBS, "--policies", "drf,fair", "--out", str(out))
    assert second.returncode == 0, second.stderr[-2000:]
    expected = {"compare.json", "compare.csv", "compare.html"} | {
        f"{p}/{f}" for p in ("drf", "fair") for f in SIMULATE_FILES
    }
    assert tree(out) == expected | {MARKER, "notes.txt", "fifo/notes.txt"}
    assert set(marker(out)["files"]) == expected and marker(out)["command"] == "compare"
    assert [r["label"] for r in json.loads((out / "compare.json").read_text())["runs"]] == [
        "drf",
        "fair",
    ]
    # simulate into the same DIR: the comparison's files go, the user's stay.
    third = run_fairshare("simulate", TWO_JOBS, "--policy", "fifo", "--out", str(out))
    assert third.returncode == 0, third.stderr[-2000:]
    assert tree(out) == SIMULATE_FILES | {MARKER, "notes.txt", "fifo/notes.txt"}
    assert not (out / "drf").exists() and not (out / "fair").exists()


def test_out_existing_directory_of_the_user_is_refused_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("mine")
    line = assert_rejected(simulate_drf(out))
    assert line.startswith(f"error: {out}: --out: is not empty and holds no {MARKER}")
    assert "--force" in line
    assert tree(out) == {"summary.json"} and hidden(tmp_path) == []


def test_out_force_writes_beside_the_users_files_and_deletes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "drf").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    (out / "drf" / "summary.json").write_text("old")
    (out / "drf" / "plot.png").write_text("mine too")
    argv = ["compare", TWO_JOBS, "--policies", "drf,fifo", "--out", str(out), "--force"]
    done = run_fairshare(*argv)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "drf" / "plot.png").read_text() == "mine too"
    assert json.loads((out / "drf" / "summary.json").read_text())["policy"] == "drf"
    assert "drf/plot.png" not in marker(out)["files"] and "notes.txt" not in marker(out)["files"]
    # Now a fairshare output: the next run needs no --force and cleans only its own files.
    again = simulate_drf(out)
    assert again.returncode == 0, again.stderr[-2000:]
    assert tree(out) == SIMULATE_FILES | {MARKER, "notes.txt", "drf/plot.png"}


def test_out_force_never_deletes_a_directory_in_an_outputs_way(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "summary.json").mkdir(parents=True)
    (out / "summary.json" / "mine.txt").write_text("mine")
    done = simulate_drf(out, "--force")
    line = assert_rejected(done)
    assert line.startswith(f"error: {out / 'summary.json'}: --out: is a directory where")
    assert tree(out) == {"summary.json/mine.txt"} and hidden(tmp_path) == []


def test_out_previous_output_with_a_users_same_named_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert simulate_drf(out).returncode == 0
    (out / "compare.csv").write_text("mine")
    done = run_fairshare("compare", TWO_JOBS, "--policies", "drf,fifo", "--out", str(out))
    line = assert_rejected(done)
    assert line.startswith(f"error: {out / 'compare.csv'}: --out: exists and was not written")
    assert (out / "compare.csv").read_text() == "mine" and tree(out) >= RUN_FILES


def test_out_marker_naming_files_outside_the_directory_is_not_trusted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (out / MARKER).write_text(json.dumps({"command": "simulate", "files": ["../victim.txt"]}))
    line = assert_rejected(simulate_drf(out))
    assert line.startswith(f"error: {out / MARKER}: --out: is not a marker fairshare can read")
    forced = simulate_drf(out, "--force")
    assert forced.returncode == 0, forced.stderr[-2000:]
    assert victim.read_text() == "mine" and tree(out) == SIMULATE_FILES | {MARKER}


def test_out_stale_results_behind_a_users_symlink_are_not_deleted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_fairshare("compare", TWO_JOBS, "--policies", "drf,fifo", "--out", str(out))
    assert first.returncode == 0, first.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    (out / "fifo").rename(elsewhere)
    (out / "fifo").symlink_to(elsewhere)
    second = run_fairshare("compare", TWO_JOBS, "--policies", "drf,fair", "--out", str(out))
    assert second.returncode == 0, second.stderr[-2000:]
    assert tree(elsewhere) == SIMULATE_FILES and (out / "fifo").is_symlink()
    assert not any(f.startswith("fifo/") for f in marker(out)["files"])


def test_out_staging_left_by_a_killed_run_does_not_make_dir_foreign(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / ".fairshare-staging-abc123").mkdir(parents=True)
    done = simulate_drf(out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert tree(out) == SIMULATE_FILES | {MARKER}


def test_out_existing_regular_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("mine")
    line = assert_rejected(simulate_drf(out))
    assert line == f"error: {out}: --out: exists and is not a directory"
    assert out.read_text() == "mine"


def test_out_previous_output_is_untouched_when_the_input_is_rejected(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert simulate_drf(out).returncode == 0
    before = {name: (out / name).read_bytes() for name in tree(out)}
    bad = tmp_path / "bad.yaml"
    bad.write_text("machines: [{name: m, capacity: {cpu: 2}}]\njobs: [{name: a, tasks: -1}]\n")
    assert_rejected(run_fairshare("simulate", str(bad), "--policy", "drf", "--out", str(out)))
    assert_rejected(run_fairshare("simulate", TWO_JOBS, "--policy", "nope", "--out", str(out)))
    assert {name: (out / name).read_bytes() for name in tree(out)} == before
    assert hidden(tmp_path) == []


# ------------------------------------------------------------------------ modes and signals


def _run_with(preexec: Callable[[], object], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [fairshare_executable(), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=preexec,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o755), (0o077, 0o700), (0o002, 0o775)])
def test_out_new_directories_respect_the_umask(umask: int, mode: int, tmp_path: Path) -> None:
    out = tmp_path / "parent" / "out"
    args = ["compare", TWO_JOBS, "--policies", "drf,fifo", "--out", str(out)]
    done = _run_with(lambda: os.umask(umask), *args)
    assert done.returncode == 0, done.stderr[-2000:]
    for directory in (out.parent, out, out / "drf"):
        assert stat.S_IMODE(directory.stat().st_mode) == mode, directory
    assert stat.S_IMODE((out / "compare.json").stat().st_mode) == mode & 0o666
    assert stat.S_IMODE((out / MARKER).stat().st_mode) == mode & 0o666


def _slow_scenario(tmp_path: Path) -> Path:
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(
        "machines: [{name: m, count: 50, capacity: {cpu: 8, mem: 32}, rack: r1}]\n"
        "workload: {generator: facebook-2009, jobs: 5000}\n"
    )
    return scenario


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_out_signal_during_the_run_removes_the_staging_directory(
    signum: int, code: int, tmp_path: Path
) -> None:
    scenario = _slow_scenario(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    out = runs / "out"
    process = subprocess.Popen(
        [fairshare_executable(), "simulate", str(scenario), "--policy", "drf", "--out", str(out)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,  # noqa: PLW1509 (it only resets dispositions)
    )
    try:
        # Wait (bounded by a count, not a clock) for the run to start staging.
        for _ in range(60_000):
            if hidden(runs) or process.poll() is not None:
                break
            time.sleep(0.005)
        assert hidden(runs) and process.poll() is None, "the run never started staging"
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == code, stderr[-2000:]
    assert stdout == "" and "Traceback" not in stderr
    assert stderr.splitlines()[-1] == f"error: interrupted by {signal.Signals(signum).name}"
    assert list(runs.iterdir()) == []


# ------------------------------------------------------------------------ environment errors


@pytest.mark.parametrize("limit", [3000, 20_000])
def test_out_file_size_limit_is_one_error_line(limit: int, tmp_path: Path) -> None:
    """EFBIG (``ulimit -f``): 3000 bytes stops at tasks.parquet (written by polars), 20000 at
    report.html. SIGXFSZ is ignored so that the write fails instead of killing the process."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "out"
    done = _run_with(limited, "simulate", TWO_JOBS, "--policy", "drf", "--out", str(out))
    line = assert_rejected(done)
    assert line == f"error: {out}: --out: cannot write the results (File too large)"
    assert list(tmp_path.iterdir()) == []


def test_out_disk_full_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(log: object, out_dir: Path) -> dict[str, object]:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "summary.json").write_text("{}")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out_dir / "jobs.csv"))

    monkeypatch.setattr(fairshare.report, "write_outputs", full_disk)
    for argv in (
        ["simulate", TWO_JOBS, "--policy", "drf"],
        ["compare", TWO_JOBS, "--policies", "drf,fifo"],
    ):
        out = tmp_path / "out"
        code, stdout, err = run([*argv, "--out", str(out)], capsys)
        assert (code, stdout) == (2, "")
        assert one_error_line(err) == (
            f"error: {out}: --out: cannot write the results (No space left on device)"
        )
        assert list(tmp_path.iterdir()) == []
