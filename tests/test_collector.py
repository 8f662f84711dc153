"""The cyclic collector is paused while a command runs and while scenarios are loaded
(``fairshare.collector.paused``), and is back as it was after; the benchmarks time the
library with it on, as its users run it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import fairshare.bench.online
import fairshare.workload.builder
from fairshare.cli import main
from fairshare.collector import paused

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_paused_restores_the_state_it_found() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_command_runs_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    build = fairshare.workload.builder._Builder.build

    def watched(self: fairshare.workload.builder._Builder) -> object:
        seen.append(gc.isenabled())
        return build(self)

    monkeypatch.setattr(fairshare.workload.builder._Builder, "build", watched)
    scenario = str(EXAMPLES / "sim-two-jobs.yaml")
    with pytest.raises(SystemExit) as stop:
        main(["simulate", scenario, "--policy", "drf", "--out", str(tmp_path / "o")])
    assert stop.value.code in (0, None)
    assert seen == [False]
    assert gc.isenabled()
    with pytest.raises(SystemExit):
        main(["simulate", scenario, "--policy", "nope", "--out", str(tmp_path / "p")])
    assert gc.isenabled()


def test_the_benchmarks_run_with_the_collector_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    run_policy = fairshare.bench.online.run_policy

    def watched(*args: object) -> object:
        seen.append(gc.isenabled())
        return run_policy(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(fairshare.bench.online, "run_policy", watched)
    argv = ["bench", "online", "--machines", "20", "--jobs", "4", "--tasks", "2", "--repeat", "1"]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--policies", "drf", "--json"])
    assert stop.value.code in (0, None)
    assert seen == [True]
    assert gc.isenabled()
