"""``fairshare bench traces`` through the installed executable, on the Alibaba samples of
``data/samples/`` (a few thousand instances each): the JSON document's fields, the figures
that the runs determine (tasks, machines, rates and ratios from their parts), and the
command's rejections (no trace, a trace that is not a directory, two policies)."""

from __future__ import annotations

import json

import pytest

from fairshare.bench import traces

from conftest import SAMPLE_DATA, assert_rejected, run_fairshare

ALIBABA_2018 = SAMPLE_DATA / "alibaba-2018"
ALIBABA_2017 = SAMPLE_DATA / "alibaba-2017"


def test_both_samples_through_the_executable() -> None:
    done = run_fairshare(
        "bench",
        "traces",
        "--alibaba-2018",
        str(ALIBABA_2018),
        "--alibaba-2017",
        str(ALIBABA_2017),
        "--json",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)
    assert doc["benchmark"] == "traces" and doc["policy"] == "drf" and doc["repeat"] == 1
    assert doc["target_rate"] == 250_000.0 and doc["target_ratio"] == 1.5
    machine = doc["machine"]
    assert set(machine) == {"cpu", "cores", "python", "platform", "kernel", "load_average"}
    assert machine["cores"] >= 1 and machine["kernel"] in ("compiled", "pure Python")
    assert machine["python"].count(".") == 2
    by_trace = {t["trace"]: t for t in doc["traces"]}
    assert list(by_trace) == ["alibaba-2018", "alibaba-2017"]
    # The samples' sizes (data/samples/*/SOURCE.md): every instance one task.
    assert (by_trace["alibaba-2018"]["tasks"], by_trace["alibaba-2018"]["machines"]) == (
        4_231,
        142,
    )
    assert (by_trace["alibaba-2017"]["tasks"], by_trace["alibaba-2017"]["machines"]) == (
        120_371,
        400,
    )
    for trace in doc["traces"]:
        assert trace["path"] == str((SAMPLE_DATA / trace["trace"]).resolve())
        assert trace["policy"] == "drf" and len(trace["runs"]) == 1
        run = trace["runs"][0]
        assert trace["simulation_seconds"] == run["simulation_seconds"] > 0
        assert trace["wall_seconds"] == run["wall_seconds"] > run["simulation_seconds"]
        assert trace["cpu_seconds"] == run["cpu_seconds"] > run["simulation_cpu_seconds"] > 0
        assert trace["rate"] == pytest.approx(
            trace["tasks"] / trace["simulation_seconds"], rel=1e-3
        )
        assert trace["ratio"] == pytest.approx(
            trace["wall_seconds"] / trace["simulation_seconds"], rel=1e-3
        )
        assert trace["cpu_rate"] == pytest.approx(
            trace["tasks"] / trace["simulation_cpu_seconds"], rel=1e-3
        )
        # The child's own peak (wait4), at least the interpreter with numpy and polars.
        assert trace["peak_rss_bytes"] == run["peak_rss_bytes"] > 30 * 2**20


def test_table_names_the_trace_and_the_machine() -> None:
    done = run_fairshare("bench", "traces", "--alibaba-2018", str(ALIBABA_2018))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "alibaba-2018" in done.stdout and "4,231" in done.stdout
    assert "alibaba-2017" not in done.stdout
    assert "cores" in done.stdout and "kernel" in done.stdout and "peak RSS" in done.stdout


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "error: command line: --alibaba-2018: give at least one trace directory"),
        (
            ["--alibaba-2017", "no-such-directory"],
            "error: command line: --alibaba-2017: no-such-directory is not a directory",
        ),
        (
            ["--alibaba-2018", str(ALIBABA_2018), "--policy", "drf,tsf"],
            "error: command line: --policy: expected one policy",
        ),
    ],
)
def test_rejections(argv: list[str], expected: str) -> None:
    line = assert_rejected(run_fairshare("bench", "traces", *argv))
    assert line.startswith(expected), line


def test_figures_from_runs() -> None:
    slow = traces.TraceRun(1_000, 5, 2.0, 3.0, 1.0, 2.0, 100)
    fast = traces.TraceRun(1_000, 5, 1.0, 2.0, 0.5, 1.0, 300)
    middle = traces.TraceRun(1_000, 5, 1.5, 2.5, 0.8, 1.2, 200)
    f = traces.TraceFigures("alibaba-2017", "DIR", "tsf", (slow, fast, middle))
    assert (f.simulation_seconds, f.wall_seconds, f.cpu_seconds) == (1.5, 2.5, 1.2)
    assert f.rate == pytest.approx(1_000 / 1.5) and f.cpu_rate == pytest.approx(1_000 / 0.8)
    assert f.ratio == pytest.approx(2.5 / 1.5) and f.cpu_ratio == pytest.approx(1.2 / 0.8)
    assert f.peak_rss_bytes == 300
    doc = f.document()
    assert [r["peak_rss_bytes"] for r in doc["runs"]] == [100, 300, 200]
    assert doc["tasks"] == 1_000 and doc["machines"] == 5
