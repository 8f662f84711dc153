"""TSF's evaluation (Wang et al., *Multi-Resource Fair Sharing for Datacenter Jobs with
Placement Constraints*, section VI) as reproduction targets.

- ``tsf-table2``: section VI-A2, Table II and Figure 5: four jobs on 50 nodes (1-25 with
  1 core and 1 GB, 26-50 with 2 cores and 1 GB) with whitelists; with Jobs 1 and 2 active
  TSF gives Job 2 a task share of 1/2 and Job 1 2/3; with Jobs 1, 3 and 4 active, Jobs 3
  and 4 get 1/5 each and Job 1 3/5. Task runtimes vary by up to 20% around Table II's
  means (drawn per seed).
- ``tsf-fig9-11``: section VI-B, Figures 9-11: a constrained Google-like workload
  (Sharma et al.'s attributes, FAIR Table 2 sizes) on two-resource machines under FIFO,
  DRF, CDRF, CMMF on CPU and on memory, and TSF: FIFO's job queueing delay is far the
  longest, TSF speeds up medium and big jobs over the others (about 10%), and has the
  least task queueing delay of the fair policies, CDRF the most.
"""

from __future__ import annotations

import random
from functools import partial

import polars as pl

from fairshare.experiments.probes import TSF_BIN_LABELS, Probe
from fairshare.experiments.targets.base import (
    Claim,
    Evaluation,
    Measured,
    Part,
    Setup,
    Target,
    Variant,
)
from fairshare.experiments.targets.common import (
    bar,
    json_cell,
    measured_bar,
    part,
    ratio_per_seed,
    scaled_count,
)
from fairshare.report.reproduce import grouped_figure

__all__ = ["TARGETS"]

# Table II: start, tasks, cores, runtime, whitelist (node ranges, 1-based), hi.
_TABLE2 = (
    ("job1", 0, 1000, 1.0, 23.2, ((1, 50),), 75),
    ("job2", 10, 150, 0.5, 18.3, ((1, 25),), 100),
    ("job3", 150, 100, 0.5, 21.3, ((1, 10), (26, 35)), 100),
    ("job4", 150, 100, 1.0, 55.6, ((1, 10), (26, 35)), 75),
)
_PHASES = (
    (40.0, "job1", 2 / 3),
    (40.0, "job2", 1 / 2),
    (200.0, "job1", 3 / 5),
    (200.0, "job3", 1 / 5),
    (200.0, "job4", 1 / 5),
)
_PHASE_WORDS = {
    (40.0, "job1"): "'Job 1 is allocated nodes 26-50, each running 2 tasks, and the task share "
    "is 2 x 25/75 = 2/3'",
    (40.0, "job2"): "'This raises its task share to 2x25/100 = 1/2'",
    (200.0, "job1"): "'Job 1, whose task share is stabilized at 2x 30/100 = 3/5'",
    (200.0, "job3"): "'equalizing their task shares to 1/5'",
    (200.0, "job4"): "'equalizing their task shares to 1/5'",
}
"""TSF section VI-A2's words behind each phase's share."""


def _node(i: int) -> str:
    """Table II's node i (1-based) by its machine name."""
    return f"a-{i - 1}" if i <= 25 else f"b-{i - 26}"


def _table2_build(scale: float, seeds: tuple[int, ...]) -> list[Part]:
    """One part per seed: its task runtimes drawn uniformly within 20% of the means."""
    parts = []
    for seed in seeds:
        rng = random.Random(seed)
        jobs = []
        for name, start, tasks, cores, runtime, ranges, _ in _TABLE2:
            jobs.append(
                {
                    "name": name,
                    "submit": start,
                    "demand": {"cpu": cores, "mem": 0.5},
                    "tasks": tasks,
                    "duration": [round(runtime * rng.uniform(0.8, 1.2), 3) for _ in range(tasks)],
                    "machines": [_node(i) for lo, hi in ranges for i in range(lo, hi + 1)],
                }
            )
        scenario = {
            "resources": ["cpu", "mem"],
            "machines": [
                {"name": "a", "count": 25, "capacity": {"cpu": 1, "mem": 1}},
                {"name": "b", "count": 25, "capacity": {"cpu": 2, "mem": 1}},
            ],
            "jobs": jobs,
        }
        parts.append(
            part(
                f"runtimes {seed}",
                "tsf-table2",
                scenario,
                ["tsf"],
                [seed],
                probe=Probe.of("running", times=sorted({t for t, _, _ in _PHASES})),
            )
        )
    return parts


def _table2_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """Each job's task share (running tasks over hi) in the two phases."""
    times = sorted({t for t, _, _ in _PHASES})
    hi = {name: h for name, *_, h in _TABLE2}
    measured = []
    for t, job, paper in _PHASES:

        def share(row: dict[str, object], t: float = t, job: str = job) -> float | None:
            running = json_cell(row.get("running_at"))
            if not isinstance(running, dict) or job not in running:
                return None
            return float(running[job][times.index(t)]) / hi[job]

        measured.append(
            Measured(
                Claim(
                    f"task share of {job} at {t:g} s",
                    round(paper, 4),
                    round(1 / hi[job], 4),
                    source=f"TSF section VI-A2: {_PHASE_WORDS[t, job]} (exact fractions of "
                    f"task counts; tolerance: one task of the job's hi, 1/{hi[job]})",
                ),
                ratio_per_seed(frame, seeds, share),
            )
        )
    figure = grouped_figure(
        "TSF Figure 5: task shares in the two phases of Table II's jobs",
        "task share",
        [f"{job} at {t:g} s" for t, job, _ in _PHASES],
        [("TSF (ours)", [measured_bar(m) for m in measured])],
    )
    return Evaluation(tuple(measured), figure)


_POLICIES = ("fifo", "drf", "cdrf", "cmmf-cpu", "cmmf-mem", "tsf")
_ALTERNATIVES = ("drf", "cdrf", "cmmf-cpu", "cmmf-mem")
_MACHINES, _JOBS = 1000, 4500
_GOOGLE_SIZES = (
    {"low": 1, "high": 1, "fraction": 0.61},
    {"low": 2, "high": 10, "fraction": 0.25},
    {"low": 11, "high": 100, "fraction": 0.10},
    {"low": 101, "high": 500, "fraction": 0.038},
    {"low": 501, "high": 20_000, "fraction": 0.002},
)
"""Section VI-B's Google hour as its text gives it: 'over 60% of jobs have only one task'
(61%), 'dominated by mice (<= 10 tasks)' (86%), Figure 10's bins (11-100, 101-500, > 500),
'the biggest job consists of 20k tasks', '180k tasks across 4,500 jobs' (a mean of 40; these
bins give 39.6). The split among 2-10, 11-100 and 101-500 tasks is ours (Figure 8b's CDF did
not survive text extraction)."""


_GOOGLE_LENGTH = 240.0
"""Mean task length (exponential), from section VI-B's 'heavily loading the simulated
cluster': the length at which the offered load equals the capacity. The demand mix averages
<2 CPUs, 1.5 GB>, so a pair of machines (<32, 16> and <16, 32>) holds about 24 tasks, 1,000
machines about 12,000; 180k tasks an hour offer 50 x L concurrent tasks: L = 240 s."""


def _google_build(
    scale: float,
    seeds: tuple[int, ...],
    sizes: object = _GOOGLE_SIZES,
    length: float = _GOOGLE_LENGTH,
) -> list[Part]:
    """Section VI-B at ``scale``: machines alternating <32 CPUs, 16 GB> and <16, 32> with
    Google-like attributes, constrained jobs of four demand shapes arriving over an hour;
    each policy's run beside TSF's (the ``versus`` probe)."""
    machines = scaled_count(_MACHINES, scale, 20)
    scenario = {
        "resources": ["cpu", "mem"],
        "machines": [
            {"name": "x", "count": machines // 2, "capacity": {"cpu": 32, "mem": 16}},
            {"name": "y", "count": machines - machines // 2, "capacity": {"cpu": 16, "mem": 32}},
        ],
        "workload": {
            "generator": "google-constraints",
            "jobs": scaled_count(_JOBS, scale, 20),
            "arrival": 3600 / scaled_count(_JOBS, scale, 20),
            "duration": {"exponential": {"mean": length}},
            **({"sizes": [dict(b) for b in sizes]} if isinstance(sizes, tuple) else {}),
            "demand": [
                {"cpu": 1, "mem": 2},
                {"cpu": 2, "mem": 1},
                {"cpu": 1, "mem": 1},
                {"cpu": 4, "mem": 2},
            ],
        },
    }
    return [
        part(
            "section VI-B",
            "tsf-fig9-11",
            scenario,
            list(_POLICIES),
            seeds,
            probe=Probe.of("versus", policy="tsf"),
        )
    ]


def _num(value: object) -> float | None:
    """A number, else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _google_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """Queueing delays, TSF's per-job speedup per bin, and per-task comparisons."""

    def column(policy: str, name: str) -> tuple[float | None, ...]:
        return ratio_per_seed(frame, seeds, lambda r: _num(r.get(name)), policy=policy)

    def job_bin(policy: str, b: int) -> tuple[float | None, ...]:
        def value(row: dict[str, object]) -> float | None:
            bins = json_cell(row.get("versus_job_bins"))
            return _num(bins[b].get("mean")) if isinstance(bins, list) else None

        return ratio_per_seed(frame, seeds, value, policy=policy)

    fifo_delay = column("fifo", "mean_queueing_delay")
    fair_delay = [column(p, "mean_queueing_delay") for p in (*_ALTERNATIVES, "tsf")]
    best_fair = tuple(
        min((x for v in fair_delay if (x := v[k]) is not None), default=None)
        for k in range(len(seeds))
    )
    measured = [
        Measured(
            Claim(
                "mean job queueing delay, FIFO over the best fair policy",
                None,
                neutral=1.0,
                direction=">",
                source="TSF section VI-B2: 'FIFO suffers from job starvation with intolerably "
                "long queueing delay; fair sharing avoids this problem'",
            ),
            tuple(
                a / b if a is not None and b else None
                for a, b in zip(fifo_delay, best_fair, strict=True)
            ),
        )
    ]
    for b in (1, 2):
        for policy in _ALTERNATIVES:
            measured.append(
                Measured(
                    Claim(
                        f"TSF's completion-time gain over {policy}, jobs of "
                        f"{TSF_BIN_LABELS[b]} tasks",
                        0.10,
                        0.05,
                        0.0,
                        source="TSF section VI-B2: 'For medium and big jobs, the speedup is "
                        "almost certain, and is on average of 10% faster'",
                    ),
                    job_bin(policy, b),
                )
            )
    for policy in _ALTERNATIVES:
        measured.append(
            Measured(
                Claim(
                    f"fraction of tasks waiting longer under {policy} than TSF, above our 0.5",
                    None,
                    neutral=0.5,
                    direction=">",
                    source="TSF section VI-B3: 'failing to address constraints efficiently "
                    "results in 60% of tasks with longer queueing delays than TSF'",
                ),
                column(policy, "versus_task_later"),
            )
        )
    cdrf_worst: list[float | None] = []
    for k in range(len(seeds)):
        later = {p: column(p, "versus_task_later")[k] for p in _ALTERNATIVES}
        if any(v is None for v in later.values()):
            cdrf_worst.append(None)
            continue
        others = max(v for p, v in later.items() if p != "cdrf" and v is not None)
        cdrf = later["cdrf"]
        cdrf_worst.append(cdrf - others if cdrf is not None else None)
    measured.append(
        Measured(
            Claim(
                "CDRF delays the most tasks (its fraction minus the next)",
                None,
                neutral=0.0,
                direction=">",
                source="TSF section VI-B3: 'We see in Fig. 11b that CDRF performs the worst'",
            ),
            tuple(cdrf_worst),
        )
    )
    figure = grouped_figure(
        "TSF Figure 10: TSF's job completion-time gain over the alternatives",
        "mean of (alternative - TSF) / alternative",
        list(TSF_BIN_LABELS),
        [(policy, [bar(job_bin(policy, b)) for b in range(4)]) for policy in _ALTERNATIVES],
    )
    return Evaluation(tuple(measured), figure)


TARGETS = (
    Target(
        name="tsf-table2",
        typical_seconds=4,
        paper="TSF",
        figure="Table II, Fig 5",
        description="TSF's task shares for Table II's four constrained jobs on 50 nodes",
        section="section VI-A2",
        default_scale=1.0,
        default_seeds=5,
        setup=(
            Setup(
                "task runtimes",
                "uniform within 20% of Table II's means, drawn per seed",
                "Table II gives means only",
            ),
        ),
        build=_table2_build,
        evaluate=_table2_evaluate,
        scaled=lambda s: "the paper's size (the experiment is small; --scale does not change it)",
    ),
    Target(
        name="tsf-fig9-11",
        typical_seconds=5,
        paper="TSF",
        figure="Figs 9-11",
        description="queueing delay and completion-time speedup of TSF vs FIFO, DRF, CDRF, CMMF",
        section="section VI-B",
        default_scale=0.05,
        default_seeds=3,
        setup=(
            Setup(
                "scale",
                "0.05 with 3 seeds: 50 of 1,000 machines, 225 of 4,500 jobs over the hour",
                "keeps the default run short; at 0.25 (about 100 s on 2 cores) every row is "
                "still inconclusive but one, so the larger scale does not decide either",
            ),
            Setup(
                "job sizes",
                "Google-like: 61% one task, 25% 2-10, 10% 11-100, 3.8% 101-500, 0.2% "
                "501-20,000 (a mean of 39.6 tasks)",
                "section VI-B: 'over 60% of jobs have only one task', mice (<= 10 tasks) "
                "dominate, 180k tasks across 4,500 jobs, the biggest 20k tasks; the split "
                "between the middle bins is ours (Figure 8b is not in the text)",
                verdicts_change=True,
                sweep=(
                    Variant(
                        "FAIR's Table 2 sizes (about 2% single-task jobs, 216 tasks a job)",
                        partial(_google_build, sizes=None),
                    ),
                ),
            ),
            Setup(
                "task length",
                "exponential, mean 240 s",
                "the paper gives none but says the workload is 'heavily loading the simulated "
                "cluster': 240 s makes the offered load equal the capacity (computed, not "
                "tuned). Chosen when the job sizes became the paper's: with the earlier 30 s "
                "the Google-like sizes load the cluster to about a tenth",
                verdicts_change=True,
                sweep=(
                    Variant("exponential, mean 30 s", partial(_google_build, length=30.0)),
                    Variant("exponential, mean 480 s", partial(_google_build, length=480.0)),
                ),
            ),
        ),
        build=_google_build,
        evaluate=_google_evaluate,
        scaled=lambda s: (
            f"{scaled_count(_MACHINES, s, 20)} of 1,000 machines, "
            f"{scaled_count(_JOBS, s, 20):,} of 4,500 jobs over the same hour"
        ),
    ),
)
"""TSF's targets."""
