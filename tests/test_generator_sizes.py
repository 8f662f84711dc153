"""The workload generators' ``sizes`` parameter: job-size bins drawn instead of the
generator's own (TSF section VI-B's Google hour for ``tsf-fig9-11``, issue 33 item 5)."""

from __future__ import annotations

import numpy as np
import pytest

from fairshare.workload import ScenarioError, parse_scenario
from fairshare.workload.generators import generate


def _jobs(generator: str, sizes: object, jobs: int = 2000, seed: int = 3) -> list[int]:
    """The task counts of ``jobs`` jobs drawn with ``sizes``."""
    scenario = parse_scenario(
        {
            "resources": ["cpu", "mem"],
            "machines": [{"name": "m", "count": 20, "capacity": {"cpu": 32, "mem": 32}}],
            "workload": {"generator": generator, "jobs": jobs, "sizes": sizes},
        },
        source="sizes.yaml",
    )
    drawn = generate(
        scenario.workload, scenario.cluster, np.random.default_rng(seed), source="sizes.yaml"
    ).jobs
    return [job.tasks for job in drawn]


@pytest.mark.parametrize("generator", ["google-constraints", "facebook-2009", "facebook-2010"])
def test_sizes_are_drawn_from_the_given_bins(generator: str) -> None:
    sizes = [
        {"low": 1, "high": 1, "fraction": 0.6},
        {"low": 2, "high": 10, "fraction": 0.3},
        {"low": 40, "high": 50, "fraction": 0.1},
    ]
    tasks = _jobs(generator, sizes)
    assert all(t == 1 or 2 <= t <= 10 or 40 <= t <= 50 for t in tasks)
    single = sum(1 for t in tasks if t == 1) / len(tasks)
    # 2,000 draws: the binomial standard deviation is about 0.011.
    assert abs(single - 0.6) < 0.05
    assert abs(sum(1 for t in tasks if t >= 40) / len(tasks) - 0.1) < 0.03
    assert tasks == _jobs(generator, sizes)


def test_tsf_google_sizes_give_the_papers_mean_and_single_task_share() -> None:
    """TSF section VI-B: 'over 60% of jobs have only one task', '180k tasks across 4,500
    jobs' (a mean of 40)."""
    from fairshare.experiments.targets.tsf import _GOOGLE_SIZES  # noqa: PLC0415

    low_high = [(b["low"], b["high"], b["fraction"]) for b in _GOOGLE_SIZES]
    mean = sum(f * (lo + hi) / 2 for lo, hi, f in low_high)
    assert 38 <= mean <= 42
    assert sum(f for lo, hi, f in low_high if hi == 1) > 0.6
    assert max(hi for _, hi, _ in low_high) == 20_000


@pytest.mark.parametrize(
    ("sizes", "where"),
    [
        ([], "workload.sizes"),
        ([{"low": 1, "high": 2}], "workload.sizes[0]"),
        ([{"low": 5, "high": 2, "fraction": 1}], "workload.sizes[0].high"),
        ([{"low": 0, "high": 2, "fraction": 1}], "workload.sizes[0].low"),
        ([{"low": 1, "high": 2.5, "fraction": 1}], "workload.sizes[0].high"),
        ([{"low": 1, "high": 2, "fraction": 0}], "workload.sizes[0].fraction"),
    ],
)
def test_bad_sizes_name_the_field(sizes: object, where: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        _jobs("google-constraints", sizes, jobs=3)
    assert f"sizes.yaml: {where}:" in str(raised.value)


def test_zipf_takes_no_sizes() -> None:
    with pytest.raises(ScenarioError, match=r"workload\.sizes: unknown parameter"):
        _jobs("zipf", [{"low": 1, "high": 1, "fraction": 1}], jobs=3)
