"""FAIR's locality experiments (Zaharia et al., *Job Scheduling for Multi-User MapReduce
Clusters*, section 6.2) as reproduction targets, listed by :mod:`.fair`.

- ``fair-table3``: section 6.2.1, Table 3 and Figure 12: map-only scan jobs of 3, 10 and
  100 maps on the small private cluster (100 nodes of 6 slots in 4 racks, blocks on 3
  nodes), fair sharing with and without delay scheduling (T1 = T2 = 15 s): node and rack
  locality, and the throughput gain of delay scheduling (1.2x, 1.7x, 1.3x).
- ``fair-fig13-14``: section 6.2.2, Figures 13-14 (sticky slots): 5 to 50 concurrent scan
  jobs on 100 nodes of 4 slots; delay scheduling (T1 = 10 s) brings node locality from
  90-27% to 99-100% and throughput up by 1.1x, 1.6x and 2x for 10, 20 and 50 jobs. Every
  job scans the one 180-GB data set (1,440 blocks of 128 MB, a shared input file), so a
  job's sticky slots hold about 3 x (its nodes / 100) of its blocks: section 4.1's
  Figure 5 arithmetic that gives 90% for 5 jobs and 27% for 50. Map times vary
  (exponential, mean 10 s): with equal times every slot frees at the same instant each
  wave and no slot stays with its job. A non-local map runs 2x as long
  (``--rack-slowdown 2``; EC2 is one rack), the scans' cost of a remote read that section
  6.2.1's own numbers give (10-map jobs: 1.7x faster from 37% to 99% node locality).
- ``fair-fig15``: section 6.2.4, Figure 15 (IO-rate biasing): 20 closed-loop workers on
  EC2's 100 nodes of 4 map slots submit 16-map jobs on one hot 2-GB file (3 replicas) for
  10 minutes, ten of them IO-bound scans (9 s maps), ten compute jobs (36 s maps); jobs
  completed under fair sharing without delay scheduling, with untuned delay scheduling
  (T1 = 10 s for all) and with IO-rate biasing (T1 = 10 s for scans, 0 for compute jobs).
  The paper: biasing beats no delay by 8% (scans) and 10% (compute jobs), untuned delay by
  15% and 44%.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import partial

import polars as pl

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
    divided,
    json_cell,
    locality,
    measured_bar,
    number,
    part,
    ratio_per_seed,
    scaled_count,
    with_fixed,
)
from fairshare.report.reproduce import grouped_figure

__all__ = ["FIG13_14", "FIG15", "S623", "TABLE3"]


# ---- Table 3 / Figure 12 -------------------------------------------------------------------

_T3_SIZES = (3, 10, 100)
_T3_NODE = {3: (0.02, 0.75), 10: (0.37, 0.99), 100: (0.84, 0.94)}
_T3_RACK = {3: (0.50, 0.96), 10: (0.98, 1.00), 100: (0.99, 0.99)}
_T3_GAIN = {3: 1.2, 10: 1.7, 100: 1.3}
_T3_TASKS = 36_000
"""Map tasks per run at scale 1: 600 slots busy for about ten minutes with 10-s scans."""
_T3_DURATION = 10.0
_PARETO_10 = {"pareto": {"alpha": 1.9, "min": round(10 * 0.9 / 1.9, 4)}}
"""Pareto map lengths of mean 10 s (alpha 1.9, Choosy section 6.2's heavy tail): the
long-tailed end of the sensitivity sweeps' task lengths."""


def _locality_tolerance(standard: float, delayed: float) -> float:
    """A locality row's tolerance (issue 33, item 3): 0.1, but never more than half the
    effect the claim is about (the gap between the standard scheduler's locality and
    delay scheduling's), nor less than the printed precision (whole percents, 0.005)."""
    return round(max(0.005, min(0.1, abs(delayed - standard) / 2)), 4)


_GAIN_PRECISION = 0.05
"""A gain printed with one decimal (``1.2x``) is known to half its last digit."""


def _t3_build(scale: float, seeds: tuple[int, ...], duration: object = _T3_DURATION) -> list[Part]:
    """One part per job size: jobs arriving evenly over ~80% of the work's span, so the
    cluster stays full; fair sharing with and without delay scheduling. ``duration`` is
    each map's length (a number or a distribution; the sensitivity sweep varies it)."""
    parts = []
    tasks = scaled_count(_T3_TASKS, scale, 600)
    span = tasks * _T3_DURATION / 600
    for size in _T3_SIZES:
        jobs = max(2, tasks // size)
        gap = 0.8 * span / jobs
        scenario = {
            "machines": [
                {"name": f"r{r}-n", "count": 25, "capacity": {"slots": 6}, "rack": f"r{r}"}
                for r in range(4)
            ],
            "jobs": [
                {
                    "name": f"scan-{k}",
                    "submit": round(k * gap, 3),
                    "tasks": size,
                    "duration": duration,
                    "input": {"replicas": 3},
                }
                for k in range(jobs)
            ],
        }
        parts.append(
            part(
                f"{size} maps",
                "fair-table3",
                scenario,
                ["fair"],
                seeds,
                options={"delay-scheduling": [None, "15,15"]},
            )
        )
    return parts


def _t3_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """Node and rack-or-better locality per size and setting; makespan ratio."""
    measured: list[Measured] = []
    node_bars: dict[str, list[Measured]] = {"standard": [], "delay": []}
    for size in _T3_SIZES:
        label = f"{size} maps"
        for k, (delay, name) in enumerate(((None, "standard"), ("15,15", "delay"))):
            node = ratio_per_seed(
                frame,
                seeds,
                lambda r: locality(r, "node"),
                part=label,
                delay__scheduling=delay,
            )
            rack = ratio_per_seed(
                frame,
                seeds,
                lambda r: locality(r, "node", "rack"),
                part=label,
                delay__scheduling=delay,
            )
            shown = "delay scheduling" if delay else "standard scheduler"
            cell = (
                f"FAIR Table 3, row '{size} maps', column 'Node/Rack Locality with "
                f"{'Delay' if delay else 'Standard'} Sched.': "
                f"{_T3_NODE[size][k]:.0%} / {_T3_RACK[size][k]:.0%}"
            )
            m = Measured(
                Claim(
                    f"node locality, {label}, {shown}",
                    _T3_NODE[size][k],
                    _locality_tolerance(*_T3_NODE[size]),
                    source=cell,
                ),
                node,
            )
            measured.append(m)
            node_bars[name].append(m)
            # With delay scheduling (T1 = T2 = 15 s on a full cluster of 4 racks, blocks on
            # 3 nodes) a map almost always finds a rack-local slot before T2: the model
            # makes that row about 1.0 by construction, a check of the model, not of the
            # paper's claim (issue 33, item 3).
            measured.append(
                Measured(
                    Claim(
                        f"rack locality, {label}, {shown}",
                        _T3_RACK[size][k],
                        _locality_tolerance(*_T3_RACK[size]),
                        source=cell,
                        kind="model-check" if delay else "claim",
                    ),
                    rack,
                )
            )
        standard = ratio_per_seed(
            frame,
            seeds,
            lambda r: number(r.get("makespan")),
            part=label,
            delay__scheduling=None,
        )
        delayed = ratio_per_seed(
            frame,
            seeds,
            lambda r: number(r.get("makespan")),
            part=label,
            delay__scheduling="15,15",
        )
        measured.append(
            Measured(
                Claim(
                    f"throughput gain of delay scheduling, {label}",
                    _T3_GAIN[size],
                    _GAIN_PRECISION,
                    1.0,
                    source="FAIR section 6.2.1: 'Delay scheduling increased throughput by 1.2x "
                    "for 3-map jobs, 1.7x for 10-map jobs, and 1.3x for 100-map jobs'",
                ),
                divided(standard, delayed),
            )
        )
    figure = grouped_figure(
        "FAIR Table 3: node locality in the small-jobs experiment",
        "node-local fraction of maps",
        [f"{s} maps" for s in _T3_SIZES],
        [
            ("standard (ours)", [measured_bar(m) for m in node_bars["standard"]]),
            ("delay scheduling (ours)", [measured_bar(m) for m in node_bars["delay"]]),
        ],
    )
    return Evaluation(tuple(measured), figure)


TABLE3 = Target(
    name="fair-table3",
    typical_seconds=8,
    paper="FAIR",
    figure="Table 3, Fig 12",
    description="locality and throughput vs job size (3/10/100 maps), delay scheduling",
    section="section 6.2.1",
    default_scale=0.25,
    default_seeds=3,
    setup=(
        Setup(
            "scale",
            "0.25: 9,000 of 36,000 map tasks on the paper's 100 nodes",
            "the paper ran 'varying numbers of jobs ... so as to take 10-20 minutes'; a quarter "
            "keeps the default run short",
        ),
        Setup(
            "map task length",
            "10 s, constant",
            "the paper gives none for the scans; one length so makespans compare",
            verdicts_change=True,
            sweep=(
                Variant(
                    "exponential, mean 10 s",
                    partial(_t3_build, duration={"exponential": {"mean": 10}}),
                ),
                Variant("Pareto, alpha 1.9, mean 10 s", partial(_t3_build, duration=_PARETO_10)),
            ),
        ),
        Setup(
            "rack slowdown",
            "1.2 (the --rack-slowdown default): a rack-local map runs 1.2x longer",
            "the paper gives none; the same as fair-fig15",
            verdicts_change=True,
            sweep=(Variant("2.0", with_fixed(_t3_build, rack_slowdown=2.0)),),
        ),
        Setup(
            "arrivals",
            "evenly over 80% of the work's span, so the cluster stays full",
            "the paper does not say how the jobs were submitted",
        ),
        Setup(
            "job initialisation",
            "none",
            "the model has no Hadoop job start-up cost, which the paper blames for the 3-map "
            "jobs' smaller gain",
        ),
    ),
    build=_t3_build,
    evaluate=_t3_evaluate,
    scaled=lambda s: (
        f"{scaled_count(_T3_TASKS, s, 600):,} of 36,000 map tasks per run on the paper's 100 nodes"
    ),
)
"""The target ``fair-table3``: Table 3 and Figure 12, section 6.2.1."""


# ---- Figures 13-14: sticky slots ---------------------------------------------------------

_STICKY_JOBS = (5, 10, 20, 50)
_STICKY_GAIN = {10: 1.1, 20: 1.6, 50: 2.0}
_STICKY_GAIN_TOLERANCE = {10: 0.05, 20: 0.05, 50: 0.05}
"""Half the last printed digit of '1.1x' and '1.6x' (issue 33, item 3); the same sentence's
'2x' is read at that precision too (2.0): as a whole number its ±0.5 would accept half the
effect."""
_STICKY_LOCALITY = {5: 0.90, 50: 0.27}
_STICKY_MAPS = 1440
"""Maps per job at scale 1: the whole 180-GB data set in 128-MB blocks."""
_STICKY_SLOWDOWN = 2.0
"""A non-local scan map's time over a local one's (module docstring)."""


def _sticky_build(
    scale: float,
    seeds: tuple[int, ...],
    slowdown: float = _STICKY_SLOWDOWN,
    duration: object = None,
) -> list[Part]:
    """One part per count of concurrent jobs, all submitted at 0 and all scanning the data
    set (the input file ``dataset``), on one rack (EC2 gives no topology); fair sharing
    with and without delay scheduling (T1 = 10 s); a non-local map runs ``slowdown`` times
    as long (the sensitivity sweep varies it)."""
    maps = scaled_count(_STICKY_MAPS, scale, 100)
    parts = []
    for count in _STICKY_JOBS:
        scenario = {
            "machines": [{"name": "n", "count": 100, "capacity": {"slots": 4}, "rack": "ec2"}],
            "jobs": [
                {
                    "name": f"scan-{k}",
                    "submit": 0,
                    "tasks": maps,
                    "duration": duration or {"exponential": {"mean": 10}},
                    "input": {"replicas": 3, "file": "dataset"},
                }
                for k in range(count)
            ],
        }
        parts.append(
            part(
                f"{count} jobs",
                "fair-fig13-14",
                scenario,
                ["fair"],
                seeds,
                options={
                    "delay-scheduling": [None, "10,10"],
                    "rack-slowdown": [slowdown],
                },
            )
        )
    return parts


def _sticky_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """Node locality with and without delay scheduling, and the makespan ratio."""
    measured: list[Measured] = []
    series: dict[str, list[Measured]] = {"standard": [], "delay": []}
    for count in _STICKY_JOBS:
        label = f"{count} jobs"
        node = {
            name: ratio_per_seed(
                frame, seeds, lambda r: locality(r, "node"), part=label, delay__scheduling=d
            )
            for name, d in (("standard", None), ("delay", "10,10"))
        }
        standard_claim = Claim(
            f"node locality, {label}, standard",
            _STICKY_LOCALITY.get(count),
            _locality_tolerance(_STICKY_LOCALITY.get(count, 0.0), 0.995),
            source="FAIR section 6.2.2: 'It also brings locality from 90-27% to 99-100%' "
            "(90% with 5 jobs, 27% with 50: Figure 14's ends)",
        )
        if standard_claim.paper is None:
            standard_claim = Claim(
                f"node locality, {label}, standard, below delay scheduling's",
                None,
                neutral=0.0,
                direction=">",
                source="FAIR section 6.2.2: 'It also brings locality from 90-27% to 99-100%' "
                "(no number for this count of jobs)",
            )
            m = Measured(standard_claim, _difference(node["delay"], node["standard"]))
        else:
            m = Measured(standard_claim, node["standard"])
        measured.append(m)
        series["standard"].append(
            Measured(Claim("", _STICKY_LOCALITY.get(count)), node["standard"])
        )
        d = Measured(
            Claim(
                f"node locality, {label}, delay scheduling",
                0.995,
                0.01,
                source="FAIR section 6.2.2: 'brings locality from 90-27% to 99-100%' (0.995: "
                "the middle of the printed range; tolerance: half the range plus the printed "
                "precision, 0.005 + 0.005)",
            ),
            node["delay"],
        )
        measured.append(d)
        series["delay"].append(d)
        if count in _STICKY_GAIN:
            spans = {
                name: ratio_per_seed(
                    frame,
                    seeds,
                    lambda r: number(r.get("makespan")),
                    part=label,
                    delay__scheduling=dd,
                )
                for name, dd in (("standard", None), ("delay", "10,10"))
            }
            measured.append(
                Measured(
                    Claim(
                        f"throughput gain of delay scheduling, {label}",
                        _STICKY_GAIN[count],
                        _STICKY_GAIN_TOLERANCE[count],
                        1.0,
                        source="FAIR section 6.2.2: 'Delay scheduling improves by throughput by "
                        "1.1x for 10 concurrent jobs, 1.6x for 20 concurrent jobs, and 2x for "
                        "50 concurrent jobs'",
                    ),
                    divided(spans["standard"], spans["delay"]),
                )
            )
    figure = grouped_figure(
        "FAIR Figure 14: node locality in the sticky-slots experiment",
        "node-local fraction of maps",
        [f"{c} jobs" for c in _STICKY_JOBS],
        [
            ("standard (ours)", [measured_bar(m) for m in series["standard"]]),
            ("delay scheduling (ours)", [measured_bar(m) for m in series["delay"]]),
        ],
    )
    return Evaluation(tuple(measured), figure)


def _difference(a: Sequence[float | None], b: Sequence[float | None]) -> tuple[float | None, ...]:
    """Per seed, ``a - b``."""
    return tuple(
        x - y if x is not None and y is not None else None for x, y in zip(a, b, strict=True)
    )


FIG13_14 = Target(
    name="fair-fig13-14",
    typical_seconds=15,
    paper="FAIR",
    figure="Figs 13-14",
    description="sticky slots: locality and throughput with 5-50 concurrent scan jobs",
    section="section 6.2.2",
    default_scale=0.25,
    default_seeds=3,
    setup=(
        Setup(
            "scale",
            "0.25: 360 of 1,440 maps per job on the paper's 100 nodes",
            "keeps the default run short; the locality arithmetic depends on the job count, "
            "not the maps per job",
        ),
        Setup(
            "rack slowdown",
            "2.0: a non-local map runs 2x longer (fair-table3 and fair-fig15 use 1.2)",
            "section 6.2.1's own numbers (10-map jobs 1.7x faster from 37% to 99% node "
            "locality) imply about 2; the throughput gains depend on it",
            verdicts_change=True,
            sweep=(Variant("1.2", partial(_sticky_build, slowdown=1.2)),),
        ),
        Setup(
            "map task length",
            "exponential, mean 10 s",
            "the paper gives none; with one constant length every slot frees at once each "
            "wave and no slot stays with its job",
            verdicts_change=True,
            sweep=(
                Variant("10 s, constant", partial(_sticky_build, duration=10.0)),
                Variant(
                    "Pareto, alpha 1.9, mean 10 s", partial(_sticky_build, duration=_PARETO_10)
                ),
            ),
        ),
        Setup("racks", "one", "EC2 gives no topology (section 6)"),
    ),
    build=_sticky_build,
    evaluate=_sticky_evaluate,
    scaled=lambda s: (
        f"{scaled_count(_STICKY_MAPS, s, 100):,} of 1,440 maps per job (a data set of "
        f"{scaled_count(_STICKY_MAPS, s, 100) * 128 / 1024:g} GB) on 100 nodes"
    ),
)
"""The target ``fair-fig13-14``: Figures 13-14, section 6.2.2."""


# ---- Figure 15: IO-rate biasing -----------------------------------------------------------

_IO_WORKERS = 10
"""Workers of each kind."""
_IO_MAPS = 16
"""Maps per job: the 2-GB hot file in 128-MB blocks."""
_IO_SPAN = 600.0
_IO_KINDS = (("scan", 9.0), ("compute", 36.0))
_IO_SETTINGS = (
    ("no delay", None, False),
    ("untuned delay", "10,10", False),
    ("IO-rate biasing", "10,10", True),
)
_IO_GAIN = {
    ("scan", "no delay"): 1.08,
    ("compute", "no delay"): 1.10,
    ("scan", "untuned delay"): 1.15,
    ("compute", "untuned delay"): 1.44,
}


def _io_chain(kind: str, duration: float, span: float) -> int:
    """Jobs in a worker's chain: more than it can finish in ``span`` (a job takes at least
    one map's time)."""
    return int(span // duration) + 2


def _io_build(scale: float, seeds: tuple[int, ...]) -> list[Part]:
    """Each worker is a chain of jobs (``after`` the previous one, no think time), all on
    the file ``hot``; the run stops at ``span`` (``until``) and counts the jobs finished.
    One rack (EC2 gives no topology). IO-rate biasing is delay scheduling with per-job
    waits of 0 for the compute jobs (``SimOptions.job_delays``)."""
    span = max(60.0, round(_IO_SPAN * scale))
    jobs: list[dict[str, object]] = []
    compute: list[str] = []
    for kind, duration in _IO_KINDS:
        for w in range(_IO_WORKERS):
            for k in range(_io_chain(kind, duration, span)):
                name = f"{kind}-{w}-{k}"
                job: dict[str, object] = {
                    "name": name,
                    "user": f"{kind}-{w}",
                    "tasks": _IO_MAPS,
                    "duration": duration,
                    "input": {"replicas": 3, "file": "hot"},
                }
                if k == 0:
                    job["submit"] = 0
                else:
                    job["after"] = f"{kind}-{w}-{k - 1}"
                jobs.append(job)
                if kind == "compute":
                    compute.append(name)
    scenario = {
        "machines": [{"name": "n", "count": 100, "capacity": {"slots": 4}, "rack": "ec2"}],
        "jobs": jobs,
    }
    parts = []
    for label, delay, biased in _IO_SETTINGS:
        parts.append(
            part(
                label,
                "fair-fig15",
                scenario,
                ["fair"],
                seeds,
                options={"delay-scheduling": [delay], "until": [span]},
                fixed={"job_delays": dict.fromkeys(compute, (0.0, 0.0))} if biased else None,
            )
        )
    return parts


def _io_finished(row: dict[str, object], kind: str) -> float | None:
    """Jobs of ``kind``'s workers finished in the run."""
    users = json_cell(row.get("users"))
    if not isinstance(users, dict):
        return None
    total = 0.0
    for w in range(_IO_WORKERS):
        stats = users.get(f"{kind}-{w}")
        value = stats.get("finished_jobs") if isinstance(stats, dict) else None
        if not isinstance(value, int | float):
            return None
        total += float(value)
    return total


def _io_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """Jobs completed per kind and setting; IO-rate biasing's gains."""

    def finished(kind: str) -> Callable[[dict[str, object]], float | None]:
        return lambda row: _io_finished(row, kind)

    done = {
        (kind, label): ratio_per_seed(frame, seeds, finished(kind), part=label)
        for kind, _ in _IO_KINDS
        for label, _, _ in _IO_SETTINGS
    }
    measured = tuple(
        Measured(
            Claim(
                f"jobs completed, {kind} jobs: IO-rate biasing over {other}",
                _IO_GAIN[kind, other],
                0.05 if other == "no delay" else 0.1,
                1.0,
                source="FAIR section 6.2.4: 'The throughput gain with IO-rate biasing over no "
                "delay scheduling was 8% for scans and 10% for compute jobs, while the gain over "
                "untuned delay scheduling was 15% for scans and 44% for compute jobs'",
            ),
            divided(done[kind, "IO-rate biasing"], done[kind, other]),
        )
        for other in ("no delay", "untuned delay")
        for kind, _ in _IO_KINDS
    ) + tuple(
        Measured(
            Claim(
                f"jobs completed, {kind} jobs: untuned delay over no delay (worst)",
                None,
                neutral=1.0,
                direction="<",
                source="FAIR section 6.2.4: 'Untuned delay scheduling achieved the worst "
                "throughput and response times'",
            ),
            divided(done[kind, "untuned delay"], done[kind, "no delay"]),
        )
        for kind, _ in _IO_KINDS
    )
    figure = grouped_figure(
        "FAIR Figure 15: jobs completed in 10 minutes on a hot file",
        "jobs completed",
        [kind + " jobs" for kind, _ in _IO_KINDS],
        [
            (label, [bar(done[kind, label]) for kind, _ in _IO_KINDS])
            for label, _, _ in _IO_SETTINGS
        ],
    )
    return Evaluation(measured, figure)


FIG15 = Target(
    name="fair-fig15",
    typical_seconds=10,
    paper="FAIR",
    figure="Fig 15",
    description="IO-rate biasing: throughput of 20 closed-loop workers on a hot file",
    section="section 6.2.4",
    default_scale=1.0,
    default_seeds=5,
    setup=(
        Setup(
            "rack slowdown",
            "1.2 (the --rack-slowdown default)",
            "the model has no disk or network contention; the paper gives no remote-read cost",
            verdicts_change=True,
            sweep=(Variant("2.0", with_fixed(_io_build, rack_slowdown=2.0)),),
        ),
        Setup(
            "map task length",
            "9 s for scans, 36 s for compute jobs, constant",
            "the paper's 'taking about 36s per map task' and '9s per map task'",
        ),
        Setup("racks", "one", "EC2 gives no topology (section 6)"),
    ),
    build=_io_build,
    evaluate=_io_evaluate,
    scaled=lambda s: f"{max(60, round(_IO_SPAN * s))} of 600 s of submissions",
    note="the model has no disk or network contention: a non-local map runs a fixed "
    "--rack-slowdown (1.2x) longer whatever it reads, so running compute jobs remotely "
    "saves no bandwidth for the scans (biasing gains nothing over no delay for compute "
    "jobs), and scans that wait for the hot nodes' slots lose more than the 1.2x they "
    "save (biasing loses to no delay for scans); against untuned delay the paper's "
    "effect (compute tasks holding the contended local slots 36 s) is there",
)
"""The target ``fair-fig15``: Figure 15, section 6.2.4."""


# ---- Section 6.2.3: delay scheduling's impact on a small job's response time -------------

_S623_MAPS = 16
_S623_DELAY = "10,10"
_S623_TIME_TOLERANCE = 0.04
"""The paper's runs spread over 32-38 s (8 per condition, a standard deviation of about a
quarter of the range, 1.5 s): the 95% interval of the difference of two such means is about
±1.5 s, 4% of 35.4 s. A claim of no effect: only closeness counts."""


def _s623_build(scale: float, seeds: tuple[int, ...], slowdown: float | None = None) -> list[Part]:
    """Per seed (one of the paper's eight runs), the one 16-map / 1-reduce job alone on
    EC2's 100 nodes of 4 map and 2 reduce slots (one rack), with and without delay
    scheduling (T1 = 10 s). Map lengths are drawn per task uniformly in 15-25 s and the
    reducer copies 5 s and computes 10 s, so the lone job takes 30-40 s, as the paper's
    32-37 s; ``slowdown`` overrides the rack slowdown (the sensitivity sweep's)."""
    parts = []
    for seed in seeds:
        rng = random.Random(seed)
        scenario = {
            "resources": ["map_slot", "reduce_slot"],
            "machines": [
                {
                    "name": "n",
                    "count": 100,
                    "capacity": {"map_slot": 4, "reduce_slot": 2},
                    "rack": "ec2",
                }
            ],
            "jobs": [
                {
                    "name": "small",
                    "submit": 0,
                    "demand": {"map_slot": 1},
                    "tasks": _S623_MAPS,
                    "duration": [round(rng.uniform(15, 25), 3) for _ in range(_S623_MAPS)],
                    "input": {"replicas": 3},
                    "reduce": {
                        "tasks": 1,
                        "copy": 5,
                        "compute": 10,
                        "demand": {"reduce_slot": 1},
                    },
                }
            ],
        }
        options: dict[str, list[object]] = {"delay-scheduling": [None, _S623_DELAY]}
        if slowdown is not None:
            options["rack-slowdown"] = [slowdown]
        parts.append(part(f"run {seed}", "fair-s623", scenario, ["fair"], [seed], options=options))
    return parts


def _s623_evaluate(frame: pl.DataFrame, seeds: tuple[int, ...]) -> Evaluation:
    """The job's response time with delay scheduling over without; node locality."""

    def column(
        delay: str | None, value: Callable[[dict[str, object]], float | None]
    ) -> tuple[float | None, ...]:
        return ratio_per_seed(frame, seeds, value, delay__scheduling=delay)

    span = {d: column(d, lambda r: number(r.get("makespan"))) for d in (None, _S623_DELAY)}
    node = {d: column(d, lambda r: locality(r, "node")) for d in (None, _S623_DELAY)}
    words = (
        "FAIR section 6.2.3: 'Running alone, the job took 32-37s, with a mean of 35.4s. With "
        "delay scheduling, the job took 32-38s with a mean again of 35.4s. The difference in "
        "response time was not statistically significant, but locality improved from 25% "
        "to 100%'"
    )
    measured = (
        Measured(
            Claim(
                "response time, delay scheduling over none",
                1.0,
                _S623_TIME_TOLERANCE,
                1.0,
                source=words + " (35.4 / 35.4; tolerance: ±1.5 s on 35.4 s)",
            ),
            divided(span[_S623_DELAY], span[None]),
        ),
        Measured(
            Claim(
                "node locality, no delay scheduling",
                0.25,
                _locality_tolerance(0.25, 1.0),
                source=words,
            ),
            node[None],
        ),
        # On an otherwise idle cluster a map always finds a free slot on one of its
        # block's 3 nodes within T1: 100% by the model's construction.
        Measured(
            Claim(
                "node locality, delay scheduling",
                1.0,
                _locality_tolerance(0.25, 1.0),
                source=words,
                kind="model-check",
            ),
            node[_S623_DELAY],
        ),
    )
    figure = grouped_figure(
        "FAIR section 6.2.3: a 16-map job alone, with and without delay scheduling",
        "node-local fraction of maps",
        ["no delay", "delay scheduling"],
        [("ours", [bar(node[None], 0.25), bar(node[_S623_DELAY], 1.0)])],
    )
    return Evaluation(measured, figure)


S623 = Target(
    name="fair-s623",
    typical_seconds=3,
    paper="FAIR",
    figure="Sec 6.2.3",
    description="a small job alone: delay scheduling's locality gain without a response-time cost",
    section="section 6.2.3",
    default_scale=1.0,
    default_seeds=8,
    setup=(
        Setup("runs", "8 seeds", "the paper: 'We ran the job eight times under each condition'"),
        Setup(
            "task lengths",
            "maps uniform in 15-25 s per task, the reducer copies 5 s and computes 10 s",
            "the paper gives only the job's 32-37 s; these put the lone job at 30-40 s",
        ),
        Setup(
            "rack slowdown",
            "1.2 (the --rack-slowdown default): a non-local map runs 1.2x longer",
            "the paper gives no remote-read cost on EC2; the same as fair-table3 and fair-fig15",
            verdicts_change=True,
            sweep=(
                Variant("1.0 (remote reads cost nothing)", partial(_s623_build, slowdown=1.0)),
                Variant("2.0", partial(_s623_build, slowdown=2.0)),
            ),
        ),
        Setup("racks", "one", "EC2 gives no topology (section 6)"),
    ),
    build=_s623_build,
    evaluate=_s623_evaluate,
    scaled=lambda s: "the paper's size (one job; --scale does not change it)",
)
"""The target ``fair-s623``: section 6.2.3."""
