"""Run options are checked once, by ``SimOptions`` when they are made (SPEC section 3's
option values), naming the field at fault (``until``): the command line only parses their
text and reports the error, naming the option's flag (``--until``), as one ``error:`` line
with exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fairshare.cli import main
from fairshare.sim.options import MAX_SLOWDOWN, OptionError, SimOptions
from fairshare.workload.model import MAX_SECONDS

TWO_JOBS = str(Path(__file__).resolve().parents[1] / "examples" / "sim-two-jobs.yaml")


@pytest.mark.parametrize(
    ("options", "where", "what"),
    [
        ({"delay": (-1.0, 5.0)}, "delay",
         "times must be numbers of seconds from 0 to 1e+15, got (-1.0, 5.0)"),
        ({"preemption": (5.0, float("inf"))}, "preemption",
         "times must be numbers of seconds from 0 to 1e+15, got (5.0, inf)"),
        ({"preemption": (5.0,)}, "preemption", "expected two numbers of seconds, got (5.0,)"),
        ({"job_delays": {"a": (1.0, float("nan"))}}, "job_delays['a']",
         "times must be numbers of seconds from 0 to 1e+15, got (1.0, nan)"),
        ({"until": -1.0}, "until", "must be a number >= 0, at most 1e+15, got -1"),
        ({"until": 2e15}, "until", "must be a number >= 0, at most 1e+15, got 2e+15"),
        ({"rack_slowdown": 0.0}, "rack_slowdown", "must be a number > 0, at most 1e+06, got 0"),
        ({"off_rack_slowdown": float("nan")}, "off_rack_slowdown",
         "must be a number > 0, at most 1e+06, got nan"),
        ({"pool_order": "lifo"}, "pool_order", "expected fair or fifo, got 'lifo'"),
        ({"reduce_slowstart": -0.5}, "reduce_slowstart",
         "must be a fraction in [0, 1], got -0.5"),
        ({"copy_compute_splitting": True, "max_reducers": 2, "max_computing": 3},
         "max_computing",
         "max_computing and max_reducers must satisfy 1 <= max_computing <= max_reducers, "
         "got 3 and 2"),
    ],
)  # fmt: skip
def test_options_out_of_range_are_refused_when_made(
    options: dict[str, Any], where: str, what: str
) -> None:
    with pytest.raises(OptionError) as info:
        SimOptions(**options)
    assert (info.value.where, info.value.what) == (where, what)


def test_options_at_their_bounds_are_accepted() -> None:
    options = SimOptions(
        delay=(0.0, MAX_SECONDS),
        preemption=(MAX_SECONDS, 0.0),
        until=0.0,
        rack_slowdown=MAX_SLOWDOWN,
        off_rack_slowdown=1e-300,
        pool_order="fifo",
        reduce_slowstart=1.0,
        copy_compute_splitting=True,
        max_reducers=1,
        max_computing=1,
    )
    assert options.until == 0.0 and options.rack_slowdown == MAX_SLOWDOWN


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--preemption", "5,-0"], None),
        (["--preemption", "5,-1"],
         "--preemption: times must be numbers of seconds from 0 to 1e+15, got '5,-1'"),
        (["--delay-scheduling", " 1e16 ,2"],
         "--delay-scheduling: times must be numbers of seconds from 0 to 1e+15, "
         "got ' 1e16 ,2'"),
        (["--delay-scheduling", "1;2"],
         "--delay-scheduling: expected two numbers of seconds separated by a comma, e.g. "
         "5,10, got '1;2'"),
        (["--pool-order", "lifo"], "--pool-order: expected fair or fifo, got 'lifo'"),
        (["--until", "nan"], "--until: must be a number >= 0, at most 1e+15, got nan"),
        (["--rack-slowdown", "0"], "--rack-slowdown: must be a number > 0, at most 1e+06, got 0"),
    ],
)  # fmt: skip
def test_the_command_line_reports_the_options_error(
    argv: list[str],
    line: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["simulate", TWO_JOBS, "--policy", "fair", *argv, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    if line is None:
        assert stop.value.code in (0, None), err
        return
    assert stop.value.code == 2
    assert err == f"error: {TWO_JOBS}: {line}\n"
    assert not (tmp_path / "o").exists()
