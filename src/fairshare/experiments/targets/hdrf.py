"""H-DRF's evaluation (Bhattacharya et al., SoCC 2013, section 5) as reproduction targets.

- ``hdrf-fig9``: section 5.1, Figures 8-9: dynamic H-DRF's shares on the weighted
  hierarchy n1 (weight 4: n1,1 CPU tasks, n1,2 GPU tasks) and n2 (weight 1: two CPU leaves),
  49 servers of 16 GB, 4 CPUs and 4 GPUs, one 2,000-task job per leaf. With all leaves
  active the paper reports n1,1's CPU share 0.8, n2,1's and n2,2's 0.1 each, and n1,2's
  GPU share 1.0 (it alone wants GPUs).
- ``hdrf-fig11``: section 5.2, Figures 10-11: naive H-DRF (the Pareto-efficient Capacity
  Scheduler, "now exactly the naive H-DRF technique in section 3.3", with a headroom of the
  largest task on each server) against dynamic H-DRF on Figure 10's hierarchy (n1: n1,1 and
  n1,2; n2: n2,1 to n2,3; n3: n3,1; all weights 1), 50 servers of 6 GB, 4 CPUs and 1 GPU,
  100 jobs of Table 1's sizes; tasks of 1 GB (1.5 GB for a job whose trace counterpart is
  memory-dominant) and one CPU, or one GPU for n1,2; the ten large jobs (500+ tasks) go to
  n1,1, n1,2 and n3,1, the others to n2's leaves; each leaf runs its jobs one after the
  other, the next submitted when the previous one finishes (closed loop). The paper: n1,2's
  GPUs raise n1's dominant share to 1.0, so every CPU a task of n1,1 frees goes to n2 or
  n3; n1,1's median throughput drops to one task, it gets its fair share only once n1,2's
  jobs are done, and H-DRF finishes its jobs 413% faster, an improvement being "how much
  earlier the same job completed in H-DRF ... as a percentage of the job duration time in
  the other scheduler" (over 100% when a job starts much earlier under H-DRF, footnote 8).
- ``hdrf-fig12-13``: section 5.3, H-DRF against the hierarchical slot scheduler
  (``slots``: a fixed number of slots per server, a task in each whatever its demand, the
  simulator slowing the tasks of a server whose memory is over-committed). Figure 12
  (section 5.3.1, prototype): section 5.2's schedule and hierarchy (n3's weight 2) on 50
  servers of 6 GB, 4 CPUs and 4 GPUs, against 4, 5 and 6 slots per server; the paper's
  schedule ends at 1379 s under H-DRF and 1446, 1514 and 1732 s under 4, 5 and 6 slots.
  Figure 13 (section 5.3.2, the Facebook trace on 1,200 servers of 32 GB and 16 CPUs, 200
  of them with 16 GPUs, tasks of up to 9 GB and 3 CPUs): against 10, 12 and 14 slots,
  H-DRF improves response times by 44-83%; without the trace, a Poisson stream of Table 1's
  job sizes with such demands stands in for it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import partial

import polars as pl

from fairshare.experiments.probes import Probe
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

_FIG9_SERVERS = 49
_FIG9_TASKS = 2000
_FIG9_DURATION = 20.0
_FIG9_AT = 5 * _FIG9_DURATION
_FIG9_LEAVES = (
    ("n1,1", "n1", {"mem": 1, "cpu": 1}, "cpu", 0.8),
    ("n1,2", "n1", {"mem": 1, "gpu": 1}, "gpu", 1.0),
    ("n2,1", "n2", {"mem": 1, "cpu": 1}, "cpu", 0.1),
    ("n2,2", "n2", {"mem": 1, "cpu": 1}, "cpu", 0.1),
)


def _fig9_build(scale: float, seeds: tuple[int, ...]) -> list[Part]:
    """Figure 8's hierarchy, one long job per leaf, all submitted at 0; the probe counts
    each leaf's running tasks at 100 s, when all four are active."""
    servers = scaled_count(_FIG9_SERVERS, scale, 2)
    tasks = scaled_count(_FIG9_TASKS, scale, 200)
    scenario = {
        "resources": ["mem", "cpu", "gpu"],
        "machines": [{"name": "s", "count": servers, "capacity": {"mem": 16, "cpu": 4, "gpu": 4}}],
        "queues": [{"path": "n1", "weight": 4}, {"path": "n2", "weight": 1}],
        "users": [
            {"name": name, "queue": queue, "demand": demand}
            for name, queue, demand, _, _ in _FIG9_LEAVES
        ],
        "jobs": [
            {
                "name": f"job-{name}",
                "submit": 0,
                "user": name,
                "demand": demand,
                "tasks": tasks,
                "duration": _FIG9_DURATION,
            }
            for name, _, demand, _, _ in _FIG9_LEAVES
        ],
    }
    return [
        part(
            "figure 8",
            "hdrf-fig9",
            scenario,
            ["hdrf"],
            seeds,
            probe=Probe.of("running", times=[_FIG9_AT]),
        )
    ]


_FIG9_WORDS = {
    "n1,2": "H-DRF section 5.1: 'instead of n1,2 receiving a 0.8 share of the GPUs in the "
    "cluster (its dominant resource), it receives a share of 1.0'",
    **dict.fromkeys(
        ("n1,1", "n2,1", "n2,2"),
        "H-DRF section 5.1: 'n1,1 gets 0.8 share of the CPUs (its dominant resource), while "
        "n2,1 and n2,2 receive a share of 0.1 each'",
    ),
}
"""The paper's words behind each leaf's share."""
_FIG9_TOLERANCE = 0.05
"""Half the last digit the paper prints (0.8, 0.1, 1.0), under half of each share's effect:
with n1 and n2 weighted equally n2,1 and n2,2 would get 0.25 and n1,1 0.5, and n1,2 would
get 0.8 of the GPUs ('instead of n1,2 receiving a 0.8 share')."""


def _fig9_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """Each leaf's share of its dominant resource at 100 s."""
    measured = []
    for name, _, _, resource, paper in _FIG9_LEAVES:

        def share(row: dict[str, object], name: str = name) -> float | None:
            """The leaf's running tasks over the cluster's units of its resource."""
            running = json_cell(row.get("running_at"))
            if not isinstance(running, dict) or name not in running:
                return None
            units = float(str(row["machines"])) * 4
            return float(running[name][0]) / units

        measured.append(
            Measured(
                Claim(
                    f"{resource.upper()} share of {name} (all leaves active)",
                    paper,
                    _FIG9_TOLERANCE,
                    source=_FIG9_WORDS[name] + " (tolerance: half the printed digit)",
                ),
                ratio_per_seed(frame, seeds, share),
            )
        )
    figure = grouped_figure(
        "H-DRF Figure 9: dominant shares with all leaves active",
        "share of the dominant resource",
        [name for name, *_ in _FIG9_LEAVES],
        [("H-DRF (ours)", [measured_bar(m) for m in measured])],
    )
    return Evaluation(tuple(measured), figure)


# Section 5.2: Table 1's job sizes (tasks) for a 100-job schedule; the 500+ bin capped at
# 3,000 as the facebook-2010 generator caps it.
_TABLE1_BINS = ((74, 1, 19), (10, 20, 149), (6, 150, 499), (10, 500, 3000))
_FIG11_LEAVES = ("n1,1", "n1,2", "n2,1", "n2,2", "n2,3", "n3,1")
_FIG11_SERVERS = 50
_FIG11_DURATION = 10.0
_FIG11_LENGTHS: object = {"exponential": {"mean": _FIG11_DURATION}}
"""Figure 11's task lengths, pre-registered (issue 33, item 4): exponential, mean 10 s,
as first drawn before any verdict was seen; section 5.2 gives none."""
_FIG11_MEMORY = 2 / 3
"""The share of Figure 11's CPU jobs whose tasks take 1.5 GB: section 5.3's "a majority of
which use 1.5 GB memory", read as two thirds (swept over 0.51-1)."""
# Figure 11's starving leaf, and the GPU leaf whose jobs the starvation lasts for.
_FIG11_STARVED = "n1,1"
_FIG11_GPU_LEAF = "n1,2"


def _fig11_jobs(
    seed: int, scale: float, duration: object, memory: float = _FIG11_MEMORY
) -> list[dict[str, object]]:
    """Section 5.2's schedule for one seed: Table 1's sizes, large jobs (500+ tasks) split
    over n1,1, n1,2 and n3,1, the others over n2's leaves; 1.5 GB tasks for a share
    ``memory`` of the CPU jobs, else 1 GB; one CPU, or one GPU for n1,2; each task
    runs for ``duration`` (a scenario's duration field). Each leaf submits its first job at
    0 and each next one as soon as the previous one finishes ("each leaf node runs its next
    job as soon as the previous one finishes": a closed loop, ``after`` with no think
    time)."""
    rng = random.Random(seed)
    sizes: list[int] = []
    for count, low, high in _TABLE1_BINS:
        sizes.extend(
            max(1, round(rng.randint(low, high) * (scale if low >= 20 else 1.0)))
            for _ in range(scaled_count(count, scale))
        )
    rng.shuffle(sizes)
    large = [s for s in sizes if s >= 500 * scale and s >= 20]
    small = [s for s in sizes if s not in large]
    jobs: list[dict[str, object]] = []
    last: dict[str, str] = {}
    for prefix, sizes_of, leaves in (
        ("large", large, ("n1,1", "n1,2", "n3,1")),
        ("small", small, ("n2,1", "n2,2", "n2,3")),
    ):
        for k, size in enumerate(sizes_of):
            leaf = leaves[k % 3]
            job = _job(f"{prefix}-{k}", leaf, size, rng, duration, memory)
            if leaf in last:
                del job["submit"]
                job["after"] = last[leaf]
            last[leaf] = str(job["name"])
            jobs.append(job)
    return jobs


def _job(
    name: str, leaf: str, size: int, rng: random.Random, duration: object, memory: float
) -> dict[str, object]:
    """One job of section 5.2's schedule (1.5 GB tasks with probability ``memory``)."""
    mem = 1.5 if rng.random() < memory else 1.0
    demand = {"mem": 1.0, "gpu": 1} if leaf == _FIG11_GPU_LEAF else {"mem": mem, "cpu": 1}
    return {
        "name": name,
        "submit": 0,
        "user": leaf,
        "demand": demand,
        "tasks": size,
        "duration": duration,
    }


def _fig11_build(
    scale: float,
    seeds: tuple[int, ...],
    duration: object = _FIG11_LENGTHS,
    memory: float = _FIG11_MEMORY,
) -> list[Part]:
    """One part per seed (its own drawn schedule): naive against dynamic H-DRF, both with
    headroom for the largest task (section 5.2). Task lengths are ``duration``: the
    pre-registered exponential lengths of mean 10 s (:data:`_FIG11_LENGTHS`; one constant
    length, adopted once after exponential ones missed the paper's median, is a value of
    the sensitivity sweep, not the target's choice); ``memory`` is the share of 1.5 GB
    jobs. The probe keeps each leaf's job spans and its median running tasks while n1,2's
    jobs run."""
    servers = scaled_count(_FIG11_SERVERS, scale, 4)
    parts = []
    for seed in seeds:
        scenario = {
            "resources": ["mem", "cpu", "gpu"],
            "machines": [
                {"name": "s", "count": servers, "capacity": {"mem": 6, "cpu": 4, "gpu": 1}}
            ],
            "queues": [{"path": "n1"}, {"path": "n2"}, {"path": "n3"}],
            "users": [
                {
                    "name": leaf,
                    "queue": leaf.split(",")[0],
                    "demand": {"mem": 1, "gpu": 1} if leaf == "n1,2" else {"mem": 1, "cpu": 1},
                }
                for leaf in _FIG11_LEAVES
            ],
            "jobs": _fig11_jobs(seed, scale, duration, memory),
        }
        parts.append(
            part(
                f"schedule {seed}",
                "hdrf-fig11",
                scenario,
                ["naive-hdrf", "hdrf"],
                [seed],
                options={"headroom": [True]},
                probe=Probe.of("jobs", users=list(_FIG11_LEAVES), during=_FIG11_GPU_LEAF),
            )
        )
    return parts


def _improvements(naive: dict[str, object], hdrf: dict[str, object], leaf: str) -> float | None:
    """Section 5.2's improvement in job response time, averaged over ``leaf``'s jobs: per
    job, how much earlier it finished under H-DRF than under naive H-DRF, as a percentage
    of its response time (submission to finish) under naive H-DRF. Jobs of a closed loop
    are submitted when the previous one finishes, so a job that starts much earlier under
    H-DRF gains more than 100% (the paper's footnote 8)."""
    mine = json_cell(naive.get("job_spans"))
    theirs = json_cell(hdrf.get("job_spans"))
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return None
    finished = {
        str(name): finish
        for name, _, finish in theirs.get(leaf, [])
        if isinstance(finish, int | float)
    }
    gains = []
    for name, submit, finish in mine.get(leaf, []):
        other = finished.get(str(name))
        if not isinstance(finish, int | float) or other is None or finish <= submit:
            continue
        gains.append(100.0 * (finish - other) / (finish - submit))
    return sum(gains) / len(gains) if gains else None


def _median(row: dict[str, object], leaf: str) -> float | None:
    """A leaf's median running tasks while n1,2's jobs run (the ``jobs`` probe)."""
    medians = json_cell(row.get("running_median"))
    if not isinstance(medians, dict):
        return None
    value = medians.get(leaf)
    return float(value) if isinstance(value, int | float) else None


def _fig11_evaluate(frame: pl.DataFrame, seeds: Sequence[int]) -> Evaluation:
    """Figure 11b's improvement for n1,1 (section 5.2's definition, :func:`_improvements`)
    and Figure 11a's throughput: n1,1's median running tasks while n1,2's jobs run, under
    naive H-DRF (the paper: one task) and H-DRF's margin over it."""

    def rows(policy: str) -> list[dict[str, object] | None]:
        out: list[dict[str, object] | None] = []
        for seed in seeds:
            found = frame.filter((pl.col("policy") == policy) & (pl.col("seed") == seed))
            out.append(found.to_dicts()[0] if found.height else None)
        return out

    naive, hdrf = rows("naive-hdrf"), rows("hdrf")
    gains = tuple(
        _improvements(a, b, _FIG11_STARVED) if a is not None and b is not None else None
        for a, b in zip(naive, hdrf, strict=True)
    )

    def medians(policy_rows: list[dict[str, object] | None], leaf: str) -> list[float | None]:
        return [None if row is None else _median(row, leaf) for row in policy_rows]

    naive_median = medians(naive, _FIG11_STARVED)
    hdrf_median = medians(hdrf, _FIG11_STARVED)
    margin = tuple(
        b - a if a is not None and b is not None else None
        for a, b in zip(naive_median, hdrf_median, strict=True)
    )
    measured = (
        Measured(
            Claim(
                "n1,1's jobs: H-DRF's improvement in response time over naive H-DRF, %",
                413.0,
                tolerance=150.0,
                neutral=0.0,
                source="H-DRF section 5.2: 'n1,1 only achieves its fair share once all jobs of "
                "n1,2 finish, resulting in H-DRF finishing jobs 413% faster'",
            ),
            gains,
        ),
        Measured(
            Claim(
                "n1,1's median running tasks under naive H-DRF while n1,2's jobs run",
                1.0,
                tolerance=2.0,
                source="H-DRF section 5.2: 'its median throughput in Pareto-Efficient-C.S drops "
                "to just 1 task'",
            ),
            tuple(naive_median),
        ),
        Measured(
            Claim(
                "n1,1's median running tasks while n1,2's jobs run, H-DRF minus naive H-DRF",
                None,
                neutral=0.0,
                direction=">",
                source="H-DRF section 5.2: 'The starvation of n1,1 gets so dire that its median "
                "throughput in Pareto-Efficient-C.S drops to just 1 task'",
            ),
            margin,
        ),
    )
    series = [
        (label, [bar(medians(policy_rows, leaf)) for leaf in _FIG11_LEAVES])
        for label, policy_rows in (("naive H-DRF", naive), ("H-DRF", hdrf))
    ]
    figure = grouped_figure(
        "H-DRF Figure 11a: median running tasks per leaf while n1,2's jobs run",
        "median running tasks",
        _FIG11_LEAVES,
        series,
    )
    return Evaluation(measured, figure)


# Section 5.3.1: the prototype's servers and slot counts, the makespans the paper reports.
_FIG12_SLOTS = ((4, 1446.0), (5, 1514.0), (6, 1732.0))
_FIG12_HDRF = 1379.0
# Section 5.3.2: the simulated cluster (200 of 1,200 servers have GPUs), the slot counts and
# the paper's range of improvements (44-83%: its middle, with half the range as tolerance).
_FIG13_SERVERS = 1200
_FIG13_GPU_SERVERS = 200
_FIG13_SLOTS = (10, 12, 14)
_FIG13_GAIN = (44.0 + 83.0) / 2
_FIG13_TOLERANCE = (83.0 - 44.0) / 2
_FIG13_DURATION = 60.0


def _fig12_parts(scale: float, seeds: tuple[int, ...], memory: float = _FIG11_MEMORY) -> list[Part]:
    """Per seed: section 5.2's schedule under H-DRF (headroom for the largest task, as the
    prototype keeps) and under the slot scheduler with 4, 5 and 6 slots per server. The
    schedule is Figure 11's ('the same job schedule and node hierarchy as the previous
    section'): exponential task lengths (mean 10 s) and 1.5 GB tasks for a share ``memory``
    of the CPU jobs, two thirds by default (section 5.3.1's small jobs, 'a majority of which
    use 1.5 GB memory for each of their tasks'). On these servers (6 GB, 4 CPUs, 4
    GPUs) every task, <1 or 1.5 GB, 1 CPU> or <1 GB, 1 GPU>, has a dominant share of 1/4,
    as large as the headroom's: the headroom holds nothing back, and without it H-DRF's
    tasks start and end at the same times (on other machines of the same shape)."""
    servers = scaled_count(_FIG11_SERVERS, scale, 4)
    parts = []
    for seed in seeds:
        scenario = {
            "resources": ["mem", "cpu", "gpu"],
            "machines": [
                {"name": "s", "count": servers, "capacity": {"mem": 6, "cpu": 4, "gpu": 4}}
            ],
            "queues": [{"path": "n1"}, {"path": "n2"}, {"path": "n3", "weight": 2}],
            "users": [
                {
                    "name": leaf,
                    "queue": leaf.split(",")[0],
                    "demand": {"mem": 1, "gpu": 1} if leaf == "n1,2" else {"mem": 1, "cpu": 1},
                }
                for leaf in _FIG11_LEAVES
            ],
            "jobs": _fig11_jobs(seed, scale, _FIG11_LENGTHS, memory),
        }
        parts.append(
            part(
                f"fig12 {seed} hdrf",
                "hdrf-fig12-13",
                scenario,
                ["hdrf"],
                [seed],
                options={"headroom": [True]},
            )
        )
        parts.append(
            part(
                f"fig12 {seed} slots",
                "hdrf-fig12-13",
                scenario,
                ["slots"],
                [seed],
                options={"slots": [k for k, _ in _FIG12_SLOTS]},
            )
        )
    return parts


def _fig13_jobs(seed: int, scale: float, servers: int) -> list[dict[str, object]]:
    """Section 5.3.2's stand-in for the trace: Table 1's job sizes (large jobs' tasks x
    ``scale``), Poisson arrivals that offer the cluster about its CPUs' worth of work, each
    job's tasks of 1-9 GB and 1-3 CPUs (n1,2's: 1-9 GB and a GPU), large jobs to n1,1, n1,2
    and n3,1, the others to n2's leaves; a leaf runs its jobs first in, first out."""
    rng = random.Random(seed)
    count = scaled_count(400, scale * 20, 20)
    weights = [c for c, _, _ in _TABLE1_BINS]
    jobs: list[dict[str, object]] = []
    cpus = servers * 16
    mean_work = 0.0
    drawn = []
    for k in range(count):
        _, low, high = rng.choices(_TABLE1_BINS, weights)[0]
        size = max(1, round(rng.randint(low, high) * (scale * 20 if low >= 20 else 1.0)))
        large = low >= 500
        leaf = (
            rng.choice(("n1,1", "n1,2", "n3,1")) if large else rng.choice(("n2,1", "n2,2", "n2,3"))
        )
        mem = float(rng.randint(1, 9))
        demand = (
            {"mem": mem, "gpu": 1} if leaf == "n1,2" else {"mem": mem, "cpu": rng.randint(1, 3)}
        )
        drawn.append((k, size, leaf, demand))
        mean_work += size * _FIG13_DURATION / count
    gap = mean_work / cpus * 1.5
    now = 0.0
    for k, size, leaf, demand in drawn:
        jobs.append(
            {
                "name": f"job-{k}",
                "submit": round(now, 3),
                "user": leaf,
                "demand": demand,
                "tasks": size,
                "duration": {"exponential": {"mean": _FIG13_DURATION}},
            }
        )
        now += rng.expovariate(1.0 / gap)
    return jobs


def _fig13_parts(scale: float, seeds: tuple[int, ...]) -> list[Part]:
    """Per seed: the stand-in trace under H-DRF and under 10, 12 and 14 slots per server."""
    servers = scaled_count(_FIG13_SERVERS, scale, 12)
    gpus = max(1, round(servers * _FIG13_GPU_SERVERS / _FIG13_SERVERS))
    parts = []
    for seed in seeds:
        scenario = {
            "resources": ["mem", "cpu", "gpu"],
            "machines": [
                {"name": "g", "count": gpus, "capacity": {"mem": 32, "cpu": 16, "gpu": 16}},
                {
                    "name": "s",
                    "count": servers - gpus,
                    "capacity": {"mem": 32, "cpu": 16, "gpu": 0},
                },
            ],
            "queues": [{"path": "n1"}, {"path": "n2"}, {"path": "n3"}],
            "users": [
                {"name": leaf, "queue": leaf.split(",")[0], "demand": {"mem": 1, "cpu": 1}}
                for leaf in _FIG11_LEAVES
            ],
            "jobs": _fig13_jobs(seed, scale, servers),
        }
        parts.append(
            part(
                f"fig13 {seed} hdrf",
                "hdrf-fig12-13",
                scenario,
                ["hdrf"],
                [seed],
                options={"headroom": [True]},
            )
        )
        parts.append(
            part(
                f"fig13 {seed} slots",
                "hdrf-fig12-13",
                scenario,
                ["slots"],
                [seed],
                options={"slots": list(_FIG13_SLOTS)},
            )
        )
    return parts


_FIG12_ZOOM = 10.0
"""Figure 12 runs at ten times the target's scale, at most the paper's size: its 50 servers
and 100 jobs cost a tenth of Figure 13's 1,200 servers, and at the target's default 0.1 (5
servers, 10 jobs) its intervals were too wide to decide (issue 33)."""


def _fig12_scale(scale: float) -> float:
    """Figure 12's scale when the target runs at ``scale`` (:data:`_FIG12_ZOOM`)."""
    return min(1.0, scale * _FIG12_ZOOM)


def _fig12_13_build(
    scale: float, seeds: tuple[int, ...], memory: float = _FIG11_MEMORY
) -> list[Part]:
    """Figure 12's parts (at :func:`_fig12_scale`, 1.5 GB tasks for a share ``memory`` of
    the CPU jobs) and Figure 13's."""
    return _fig12_parts(_fig12_scale(scale), seeds, memory) + _fig13_parts(scale, seeds)


def _fig12_13_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """Figure 12: each slot count's makespan over H-DRF's (the paper's 1446, 1514 and 1732
    s over 1379 s) and H-DRF's improvement in mean response time; Figure 13: H-DRF's
    improvement over 10, 12 and 14 slots (44-83%). An improvement is section 5.2's: how
    much earlier H-DRF finishes, as a percentage of the slot scheduler's time, here of the
    mean response time."""

    def stat(figure: str, column: str, slots: int | None) -> tuple[float | None, ...]:
        out: list[float | None] = []
        for seed in seeds:
            policy = "hdrf" if slots is None else "slots"
            rows = frame.filter(
                (pl.col("part") == f"{figure} {seed} {policy}") & (pl.col("seed") == seed)
            )
            if slots is not None:
                rows = rows.filter(pl.col("slots") == slots)
            values = rows[column].to_list()
            value = values[0] if values else None
            out.append(float(value) if isinstance(value, int | float) else None)
        return tuple(out)

    def ratio(a: Sequence[float | None], b: Sequence[float | None]) -> tuple[float | None, ...]:
        return tuple(
            x / y if x is not None and y is not None and y > 0 else None
            for x, y in zip(a, b, strict=True)
        )

    def gain(
        slot: Sequence[float | None], hdrf: Sequence[float | None]
    ) -> tuple[float | None, ...]:
        return tuple(
            100.0 * (x - y) / x if x is not None and y is not None and x > 0 else None
            for x, y in zip(slot, hdrf, strict=True)
        )

    measured: list[Measured] = []
    hdrf_span = stat("fig12", "makespan", None)
    hdrf_rt = stat("fig12", "mean_response_time", None)
    fig12_gains = []
    for slots, paper in _FIG12_SLOTS:
        measured.append(
            Measured(
                Claim(
                    f"Fig 12: {slots}-slot makespan over H-DRF's",
                    round(paper / _FIG12_HDRF, 4),
                    # Never wider than half the effect (issue 33): 0.1 accepted H-DRF slower.
                    tolerance=round(min(0.1, (paper / _FIG12_HDRF - 1) / 2), 4),
                    neutral=1.0,
                    source="H-DRF section 5.3.1: 'The job schedule completes execution in 1379, "
                    "1446, 1514 and 1732 seconds for H-DRF, 4-slot, 5-slot and 6-slot "
                    f"scheduling respectively' ({paper:.0f} / 1379)",
                ),
                ratio(stat("fig12", "makespan", slots), hdrf_span),
            )
        )
        improvement = gain(stat("fig12", "mean_response_time", slots), hdrf_rt)
        fig12_gains.append(improvement)
        measured.append(
            Measured(
                Claim(
                    f"Fig 12: H-DRF's mean response time improvement over {slots} slots, %",
                    None,
                    neutral=0.0,
                    direction=">",
                    source="H-DRF section 5.3.1: 'Figure 12 shows the percentage improvement in "
                    "job response times obtained by H-DRF over slot scheduling' (no number in "
                    "the text)",
                ),
                improvement,
            )
        )
    hdrf13 = stat("fig13", "mean_response_time", None)
    fig13_gains = []
    for slots in _FIG13_SLOTS:
        improvement = gain(stat("fig13", "mean_response_time", slots), hdrf13)
        fig13_gains.append(improvement)
        measured.append(
            Measured(
                Claim(
                    f"Fig 13: H-DRF's mean response time improvement over {slots} slots, %",
                    _FIG13_GAIN,
                    tolerance=_FIG13_TOLERANCE,
                    neutral=0.0,
                    source="H-DRF section 5.3.2: 'H-DRF improved the response times over "
                    "hierarchical slot scheduling by 44-83%' (63.5: the middle of the range "
                    "over 10, 12 and 14 slots)",
                ),
                improvement,
            )
        )
    figure = grouped_figure(
        "H-DRF Figures 12-13: mean response time improvement over slot schedulers",
        "improvement, % of the slot scheduler's",
        [f"Fig 12, {k} slots" for k, _ in _FIG12_SLOTS]
        + [f"Fig 13, {k} slots" for k in _FIG13_SLOTS],
        [
            (
                "H-DRF (ours)",
                [bar(g) for g in fig12_gains] + [bar(g, _FIG13_GAIN) for g in fig13_gains],
            )
        ],
    )
    return Evaluation(tuple(measured), figure)


TARGETS = (
    Target(
        name="hdrf-fig9",
        typical_seconds=4,
        paper="H-DRF",
        figure="Fig 9",
        description="dynamic H-DRF's shares on Figure 8's weighted hierarchy (4:1), GPU leaf",
        section="section 5.1",
        default_scale=1.0,
        default_seeds=3,
        setup=(
            Setup(
                "task length",
                "20 s, constant",
                "the paper gives none; shares are read at 100 s, with every leaf active",
            ),
        ),
        build=_fig9_build,
        evaluate=_fig9_evaluate,
        scaled=lambda s: (
            f"{scaled_count(_FIG9_SERVERS, s, 2)} of 49 servers, "
            f"{scaled_count(_FIG9_TASKS, s, 200)} of 2,000 tasks per job"
        ),
    ),
    Target(
        name="hdrf-fig11",
        typical_seconds=10,
        paper="H-DRF",
        figure="Fig 11",
        description="naive H-DRF starves n1,1 on Figure 10's hierarchy; dynamic H-DRF does not",
        section="section 5.2",
        default_scale=1.0,
        default_seeds=5,
        setup=(
            Setup(
                "task length",
                "exponential, mean 10 s (pre-registered)",
                "section 5.2 gives none; exponential lengths were the first choice, before any "
                "verdict was seen. A constant 10 s, adopted once after exponential lengths "
                "missed the paper's median of 1 running task, is swept, not chosen",
                True,
                sweep=(
                    Variant("10 s, constant", partial(_fig11_build, duration=_FIG11_DURATION)),
                    Variant(
                        "Pareto, alpha 1.9, mean 10 s",
                        partial(
                            _fig11_build,
                            duration={"pareto": {"alpha": 1.9, "min": round(10 * 0.9 / 1.9, 4)}},
                        ),
                    ),
                ),
            ),
            Setup(
                "memory per task",
                "1.5 GB for two thirds of the CPU jobs (drawn per job), else 1 GB",
                "the paper: 'a majority of which use 1.5 GB memory' (section 5.3); two "
                "thirds is one reading of 'a majority', swept over 0.51-1",
                verdicts_change=True,
                sweep=(
                    Variant("1.5 GB for 51% of the jobs", partial(_fig11_build, memory=0.51)),
                    Variant("1.5 GB for every CPU job", partial(_fig11_build, memory=1.0)),
                ),
            ),
            Setup(
                "job sizes",
                "Table 1's bins, drawn per seed; the ten 500+ task jobs to n1,1, n1,2 and n3,1",
                "the paper's schedule is not published",
            ),
        ),
        build=_fig11_build,
        evaluate=_fig11_evaluate,
        scaled=lambda s: (
            f"{scaled_count(_FIG11_SERVERS, s, 4)} of 50 servers, "
            f"{sum(scaled_count(c, s) for c, _, _ in _TABLE1_BINS)} of 100 jobs, large jobs' "
            f"tasks x {s:g}"
        ),
        note="with the pre-registered setup (exponential task lengths, 1.5 GB for two "
        "thirds of the CPU jobs) the seeds disagree: in some n1,1 starves under naive H-DRF "
        "as the paper says, in others the stragglers of n1,2's large jobs leave CPUs idle "
        "that n1,1 takes, so its median running tasks is far above the paper's 1 and its "
        "gain under H-DRF ranges from none to about 90%, never the paper's 413%. One "
        "constant task length (the earlier, post-hoc setup) with a third of the jobs at "
        "1.5 GB gave a median of 1-2 and a 62% gain; the sensitivity sweep shows which "
        "verdicts move with the task-length law and the memory mix",
    ),
    Target(
        name="hdrf-fig12-13",
        typical_seconds=700,
        paper="H-DRF",
        figure="Figs 12-13",
        description="H-DRF against hierarchical slot schedulers (4-14 slots, memory thrashing)",
        section="section 5.3",
        default_scale=0.1,
        default_seeds=5,
        setup=(
            Setup(
                "scale",
                "0.1 with 5 seeds: Fig 12 at ten times the scale, the paper's 50 servers and "
                "100 jobs; Fig 13 on 120 of 1,200 servers",
                "Fig 13 at the paper's size takes too long on 2 cores; Fig 12 at 0.1 (5 "
                "servers, 10 jobs, 2 seeds) had intervals too wide to decide (issue 33), and "
                "at its full size with 3 seeds so had its 4- and 5-slot rows (each seed draws "
                "its own schedule: 5 slots took 1.39-1.88x H-DRF's time)",
            ),
            Setup(
                "Fig 12 memory per task",
                "1.5 GB for two thirds of the CPU jobs (drawn per job), else 1 GB; "
                "exponential lengths, mean 10 s",
                "section 5.3.1 runs 'the same job schedule ... as the previous section' and "
                "says its small jobs are 'a majority of which use 1.5 GB memory for each of "
                "their tasks': two thirds, hdrf-fig11's reading, swept over 0.51-1 (no "
                "verdict moves at 5 seeds; Fig 13's runs do not depend on it)",
                verdicts_change=False,
                sweep=(
                    Variant("1.5 GB for 51% of the jobs", partial(_fig12_13_build, memory=0.51)),
                    Variant("1.5 GB for every CPU job", partial(_fig12_13_build, memory=1.0)),
                ),
            ),
            Setup(
                "Fig 13 workload",
                "a Poisson stream of Table 1's job sizes",
                "the Facebook trace is not published",
            ),
            Setup(
                "memory over-commit",
                "a slot scheduler's server over its memory slows its tasks in proportion",
                "the paper's slot schedulers thrash; it gives no model of the slowdown",
            ),
        ),
        build=_fig12_13_build,
        evaluate=_fig12_13_evaluate,
        scaled=lambda s: (
            f"Fig 12: {scaled_count(_FIG11_SERVERS, _fig12_scale(s), 4)} of 50 servers, "
            f"{sum(scaled_count(c, _fig12_scale(s)) for c, _, _ in _TABLE1_BINS)} of 100 jobs, "
            f"large jobs' tasks x {_fig12_scale(s):g}; "
            f"Fig 13: {scaled_count(_FIG13_SERVERS, s, 12)} of 1,200 servers, "
            "a Poisson stream of Table 1's job sizes instead of the Facebook trace"
        ),
    ),
)
"""H-DRF's targets."""
