"""Usage over time (SPEC section 8.3): decayed usage kept lazily, and ``usage_half_life``
changing every share-based online policy's decisions as documented (``docs/usage-over-
time.md``): a user that used the cluster recently yields to one that did not."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairshare
from fairshare.cli import main
from fairshare.errors import PolicyError
from fairshare.policies import ONLINE_POLICIES
from fairshare.policies.usage import DecayedUsage
from fairshare.sim.engine import SimOptions

from conftest import WHOLE_JOB_POLICIES, scaled_examples

# ------------------------------------------------------------------ the decayed integral


def test_a_constant_share_held_for_one_half_life() -> None:
    """Share 0.5 for one half-life h: U = 0.5 * h / ln 2 * (1 - 1/2); its decayed mean is
    0.25, and it halves every half-life once the share is gone."""
    usage = DecayedUsage(60.0)
    a = usage.add_account()
    usage.set_rate(a, 0.0, (0.5,))
    assert usage.usage(a, 60.0)[0] == pytest.approx(0.5 * 60 / math.log(2) / 2)
    assert usage.mean(a, 60.0) == pytest.approx(0.25)
    usage.set_rate(a, 60.0, (0.0,))
    assert usage.mean(a, 120.0) == pytest.approx(0.125)
    assert usage.mean(a, 180.0) == pytest.approx(0.0625)


def test_a_share_held_for_ever_averages_to_itself() -> None:
    """The decayed mean of a constant share tends to the share (same unit as a share)."""
    usage = DecayedUsage(10.0, width=2)
    a = usage.add_account()
    usage.set_rate(a, 0.0, (0.3, 0.7))
    assert usage.average(a, 1000.0) == pytest.approx([0.3, 0.7])


@pytest.mark.parametrize("half_life", [0.0, -1.0, math.inf, math.nan])
def test_a_half_life_must_be_positive_and_finite(half_life: float) -> None:
    with pytest.raises(PolicyError, match="usage_half_life"):
        DecayedUsage(half_life)


@given(
    changes=st.lists(st.tuples(st.floats(0.0, 50.0), st.floats(0.0, 1.0)), min_size=1, max_size=12),
    half_life=st.sampled_from([1.0, 7.5, 60.0, 3600.0]),
    probe=st.floats(0.0, 100.0),
)
@settings(max_examples=scaled_examples(150), deadline=None)
def test_lazy_decay_equals_the_integral_step_by_step(
    changes: list[tuple[float, float]], half_life: float, probe: float
) -> None:
    """Whatever the times of the changes, the lazily kept usage is the exact integral of
    the piecewise-constant rate with the decay kernel, computed interval by interval."""
    usage = DecayedUsage(half_life)
    a = usage.add_account()
    t = 0.0
    steps: list[tuple[float, float]] = []
    for gap, rate in changes:
        t += gap
        usage.set_rate(a, t, (rate,))
        steps.append((t, rate))
    end = t + probe
    decay = math.log(2.0) / half_life
    expected = 0.0
    for (start, rate), (stop, _) in zip(steps, [*steps[1:], (end, 0.0)], strict=True):
        # integral over [start, stop] of rate * exp(-decay * (end - s)) ds
        expected += rate * (math.exp(-decay * (end - stop)) - math.exp(-decay * (end - start)))
    expected /= decay
    assert usage.usage(a, end)[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_state_and_restore_keep_the_usage() -> None:
    """What a durable store keeps brings the same usage back (a restarted service)."""
    usage = DecayedUsage(30.0)
    a = usage.add_account()
    usage.set_rate(a, 5.0, (0.4,))
    usage.set_rate(a, 20.0, (0.1,))
    value, rate, stamp = usage.state(a)
    again = DecayedUsage(30.0)
    b = again.add_account()
    again.restore(b, value, rate, stamp)
    assert again.usage(b, 77.0) == usage.usage(a, 77.0)


# ------------------------------------------------------------------ the policies' decisions

SHARE_POLICIES = sorted(set(ONLINE_POLICIES) - {"fifo"} - WHOLE_JOB_POLICIES)
"""The policies that rank by share, task by task (those that start jobs whole wait for 4 free
CPUs for a2 and b2: ``tests/test_slurm_fairtree.py`` tests slurm-fairtree's usage)."""

DEMAND = {"cpu": 1, "mem": 1}
RECENT_USER = {
    "machines": [{"name": "m", "capacity": {"cpu": 4, "mem": 4}}],
    "users": [{"name": "a", "demand": DEMAND}, {"name": "b", "demand": DEMAND}],
    "jobs": [
        {"name": "a1", "submit": 0, "user": "a", "demand": DEMAND, "tasks": 3, "duration": 100},
        {"name": "b1", "submit": 0, "user": "b", "demand": DEMAND, "tasks": 1, "duration": 300},
        {"name": "a2", "submit": 100, "user": "a", "demand": DEMAND, "tasks": 4, "duration": 100},
        {"name": "b2", "submit": 100, "user": "b", "demand": DEMAND, "tasks": 4, "duration": 100},
    ],
}
"""a holds 3 of 4 CPUs and b 1 for 100 s; at 100 a's tasks end and both submit 4 more, for
the 3 free CPUs."""


def _started_at_100(policy: str, half_life: float | None) -> tuple[int, int]:
    scenario = fairshare.parse_scenario(RECENT_USER, source="recent user")
    run = fairshare.simulate(scenario, policy, options=SimOptions(usage_half_life=half_life))
    started = [a.job for a in run.log.attempts if a.start == 100.0]
    return started.count("a2"), started.count("b2")


@pytest.mark.parametrize("policy", SHARE_POLICIES)
def test_a_user_that_used_the_cluster_recently_yields(policy: str) -> None:
    """Without a half-life a holds nothing at 100 and b one CPU: a gets 2 of the 3 free
    CPUs. With a half-life of 50 s a's standing counts its recent 3/4 of the cluster (a
    decayed mean of 0.75 * (1 - 2**-2) = 0.5625) against b's 1/4 held now plus 0.1875:
    b gets 2 of them."""
    assert _started_at_100(policy, None) == (2, 1)
    assert _started_at_100(policy, 50.0) == (1, 2)


def test_fifo_orders_by_arrival_whatever_the_usage() -> None:
    """FIFO has no shares: usage over time does not move it (the docs say so)."""
    assert _started_at_100("fifo", None) == _started_at_100("fifo", 50.0) == (3, 0)


def test_the_scenario_sets_the_half_life_and_the_option_overrides_it() -> None:
    data: dict[str, Any] = {**RECENT_USER, "usage_half_life": 50.0}
    scenario = fairshare.parse_scenario(data, source="with half-life")
    run = fairshare.simulate(scenario, "drf")
    started = [a.job for a in run.log.attempts if a.start == 100.0]
    assert (started.count("a2"), started.count("b2")) == (1, 2)
    # A half-life so long that 100 s of usage is nearly nothing against what is held now.
    run = fairshare.simulate(scenario, "drf", options=SimOptions(usage_half_life=1e9))
    started = [a.job for a in run.log.attempts if a.start == 100.0]
    assert (started.count("a2"), started.count("b2")) == (2, 1)


def test_the_run_records_its_half_life(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(RECENT_USER))
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(
            [
                "simulate",
                str(scenario),
                "--policy",
                "drf",
                "--usage-half-life",
                "50",
                "--out",
                str(out),
            ]
        )
    assert done.value.code in (0, None)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["options"]["usage_half_life"] == 50.0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "usage_half_life must be a number of seconds > 0"),
        (-5, "usage_half_life must be a number of seconds > 0"),
        ("1h", "usage_half_life must be a number of seconds > 0"),
        (True, "usage_half_life must be a number of seconds > 0"),
    ],
)
def test_a_bad_half_life_in_the_scenario_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object, message: str
) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({**RECENT_USER, "usage_half_life": value}))
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["simulate", str(scenario), "--policy", "drf", "--out", str(out)])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"error: {scenario}: usage_half_life: {message}")
    assert not out.exists()


@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf"])
def test_a_bad_half_life_option_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(RECENT_USER))
    with pytest.raises(SystemExit) as done:
        main(
            [
                "simulate",
                str(scenario),
                "--policy",
                "drf",
                f"--usage-half-life={value}",
                "--out",
                str(tmp_path / "out"),
            ]
        )
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--usage-half-life" in err[0]
