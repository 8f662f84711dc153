"""The trace formats' registry (:mod:`fairshare.workload.trace_formats`): a format is one
reader and one :class:`TraceFormat` entry, and everything that lists or reads formats (the
command line's ``--trace``, its errors, ``machines_from_trace``, the docs) goes through it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import fairshare
from fairshare.cli import main
from fairshare.cli.runs import refresh_trace_help
from fairshare.cluster import Cluster, Machine
from fairshare.workload.model import FixedDuration, Job
from fairshare.workload.trace_formats import TRACE_FORMATS, TraceFormat, listed
from fairshare.workload.traces import TraceError, parse_trace_argument

DOCS = Path(__file__).resolve().parent.parent / "docs"


def read_toy(path: Path, cluster: Cluster) -> Iterator[Job]:
    """A toy format: one job per line, ``NAME SUBMIT TASKS SECONDS``, tasks of one unit of the
    first resource."""
    if not path.is_file():
        raise TraceError(path, "file", "no such toy trace")
    demand = np.zeros(len(cluster.resources))
    demand[0] = 1.0
    for line in path.read_text().splitlines():
        name, submit, tasks, seconds = line.split()
        yield Job(name, float(submit), name, demand, int(tasks), FixedDuration(float(seconds)))


def toy_machines(path: Path) -> Cluster | str:
    """The machines of a toy trace: the names in ``PATH.machines``, one slot each."""
    listed_beside = path.with_suffix(".machines")
    if not listed_beside.is_file():
        return f"no {listed_beside.name} beside the toy trace"
    names = listed_beside.read_text().split()
    return Cluster.build(["slot"], [Machine(name, np.array([1.0])) for name in names])


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A registered ``toy`` format (gone after the test) and a trace of it: two jobs, and two
    one-slot machines listed beside it."""
    entry = TraceFormat(
        "toy", "a toy list of jobs", read_toy, "tests/test_trace_formats.py", toy_machines
    )
    monkeypatch.setitem(TRACE_FORMATS, "toy", entry)
    refresh_trace_help()
    trace = tmp_path / "jobs.toy"
    trace.write_text("a 0 2 5\nb 1 1 3\n")
    (tmp_path / "jobs.machines").write_text("n0 n1\n")
    yield trace
    monkeypatch.undo()
    refresh_trace_help()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    captured = capsys.readouterr()
    code = stop.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def test_a_registered_format_is_read_through_trace(toy: Path, tmp_path: Path) -> None:
    """The API's ``trace="toy:PATH"`` replays the toy trace: a and b share two slots."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("machines: [{name: m, count: 2, capacity: {slot: 1}}]\n")
    run_ = fairshare.simulate(cluster, "fifo", trace=f"toy:{toy}")
    finishes = {job.job: job.finish for job in run_.log.jobs}
    # a's two tasks take both slots for 5 s; b, submitted at 1, waits for one of them.
    assert finishes == {"a": 5.0, "b": 8.0}


def test_a_registered_format_brings_its_machines_to_the_command_line(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fairshare simulate SCENARIO --trace toy:PATH`` on a scenario without machines takes
    them from the format's machines reader (``machines_from_trace``), and says why when the
    trace lists none."""
    scenario = tmp_path / "users.yaml"
    scenario.write_text("resources: [slot]\nusers: []\n")
    out = tmp_path / "out"
    argv = ["simulate", str(scenario), "--policy", "fifo", "--trace", f"toy:{toy}"]
    code, _, err = run([*argv, "--out", str(out)], capsys)
    assert (code, err) == (0, "")
    summary = json.loads((out / "summary.json").read_text())
    # The two machines of jobs.machines, as in the API's run: b waits for a's first slot.
    assert (summary["machines"], summary["finished_jobs"], summary["makespan"]) == (2, 2, 8.0)
    (tmp_path / "jobs.machines").unlink()
    code, _, err = run([*argv, "--out", str(tmp_path / "none")], capsys)
    assert code == 2
    assert err == (
        f"error: {scenario}: machines: missing required field 'machines': no jobs.machines "
        "beside the toy trace; list the machines in the scenario\n"
    )


def test_errors_list_the_registered_formats(toy: Path) -> None:
    with pytest.raises(fairshare.ScenarioError) as unknown:
        parse_trace_argument("nope:x")
    assert unknown.value.what == (
        "unknown trace format 'nope'; allowed: swim, google-2011, alibaba-gpu, alibaba-2017, "
        "alibaba-2018, swf, slurm-sacct, kueue-workloads, toy"
    )
    assert listed() == (
        "swim, google-2011, alibaba-gpu, alibaba-2017, alibaba-2018, swf, slurm-sacct, "
        "kueue-workloads or toy"
    )
    assert parse_trace_argument(f"toy:{toy}") == ("toy", toy)


def test_the_help_and_the_docs_list_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    """``--trace``'s help reads the registry; each format's doc section has a row for it, and
    the command reference names it."""
    code, out, _ = run(["simulate", "--help"], capsys)
    assert code == 0
    assert listed() in " ".join(re.sub(r"[│\s]+", " ", out).split())
    commands = (DOCS / "commands.md").read_text()
    (trace_line,) = [line for line in commands.splitlines() if "`--trace FORMAT:PATH`" in line]
    for entry in TRACE_FORMATS.values():
        assert entry.name in trace_line, entry.name
        page, _, anchor = entry.doc.partition("#")
        text = (DOCS / page).read_text()
        headings = {
            re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, re.M)
        }
        assert anchor in headings, entry.doc
        assert re.search(rf"^\| `{re.escape(entry.name)}` \|", text, re.M), entry.name
