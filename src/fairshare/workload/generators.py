"""Built-in workload generators (SPEC section 1, ``workload: {generator: NAME, ...}``).

Four generators, each after the paper that measured the workload:

``facebook-2009``
    FAIR section 6.1 and Table 2: map counts drawn from the nine Facebook job-size bins
    (58% of jobs have 1-25 maps, ..., 1.7% more than 3200), uniform within a bin (the open
    last bin is capped at 6400, the size FAIR's benchmark used for it); reducers 5% to 25%
    of the maps (at least one); Poisson arrivals 30 s apart on average; each map reads one
    block held on 3 machines (``replicas``), so delay scheduling has data to be local to.
``facebook-2010``
    H-DRF section 5.3.1 and Table 1: task counts from the 2010 Facebook bins 0-19 (73%),
    20-149 (10%), 150-499 (7%) and 500+ (9%; capped at 3000), the percentages renormalised
    (they sum to 99); single-phase jobs (H-DRF's jobs are tasks with a demand vector).
``zipf``
    FAIR section 5.3: maps Zipf-distributed between 1 and 400 (exponent ``s``, default 1),
    reducers uniform between 1 and maps / 5.
``google-constraints``
    Choosy section 7.1 / TSF section VI: job sizes from FAIR Table 2 (Choosy took the
    Facebook size distribution) and placement constraints after Sharma et al.'s model of
    Google's constraints: 21 boolean machine attributes ``a0`` ... ``a20``, 4 machine
    classes, a frequency for each class meeting each attribute (overall from 100% for ``a0``
    down to 7.5%), and jobs requiring each attribute with its own probability, 1.8
    attributes per job on average. The paper's resulting statistics, which the tests check:
    the average job can use about 38% of the machines, 40% of jobs under 20% and 30% under
    10%. A job's constraint is the conjunction of its attributes (``"a3 and a17"``).
    Machines that lack the attributes get them (and ``machine_class``) from the seed; a
    scenario that sets ``a0`` ... ``a20`` on every machine keeps its own. A job whose
    attributes no machine has is redrawn, so every job can run.

Parameters (all optional; every number >= 0 as the loader already enforces; times and
demands within the loader's bounds, ``MAX_SECONDS`` and ``MIN_AMOUNT`` to ``MAX_AMOUNT``):

- ``jobs``: how many jobs (defaults: the papers' experiments: 50 for ``facebook-2009``
  (FAIR's benchmark BM), 100 for ``facebook-2010`` (H-DRF section 5.3.1), 30 for ``zipf``
  (FAIR section 5.3), 300 for ``google-constraints`` (Choosy's one hour));
- ``arrival``: mean seconds between Poisson arrivals, > 0 (default 30, FAIR section 6.1;
  12 for ``google-constraints``: 300 jobs an hour);
- ``duration``: seconds per task, or ``{pareto: {alpha, min}}`` or
  ``{exponential: {mean}}`` (default ``{pareto: {alpha: 1.9, min: 10}}``: Choosy section 6
  measured Pareto task durations with alpha > 1.9 at Facebook and Bing); the simulator
  draws the per-task durations from its seed;
- ``demand``: per-task demand ``{cpu: 1, mem: 2}``, or a list of such mappings, one picked
  uniformly per job (H-DRF's mix: ``[{cpu: 1, mem: 1}, {cpu: 1, mem: 1.5}]``); default one
  unit of the cluster's first resource (a slot);
- ``users``: how many users share the jobs (``user0`` ...), each job's picked uniformly;
  default: every job is its own user;
- ``queues``: a list of declared queue paths, each job's picked uniformly;
- ``replicas``: machines holding each map's input block (MapReduce generators; default 3,
  at most the cluster's machines; 0 for no input data);
- ``reduce``: ``{copy: S, compute: S, demand: {...}, slowstart: F}`` (``facebook-2009``,
  ``zipf``): seconds per reduce task (default copy 10, compute 20), a reducer's own demand
  (Hadoop's reduce slots, FAIR section 5.3; default the map tasks'), and the fraction of a
  job's maps that must finish before its reducers launch (FAIR section 5.1's slow-start;
  default the run's ``--reduce-slowstart``); or ``false`` for map-only jobs;
- ``replica_placement``: ``rack-aware`` (HDFS's default, the default) or ``uniform``: where
  the simulator puts the replicas of the input blocks (:mod:`fairshare.sim.placement`);
- ``hot_files``: ``{fraction: F, files: K}`` (MapReduce generators): a fraction F of the jobs
  read one of K popular files (``hot0`` ...; default K 3), picked uniformly (from a child
  generator: the jobs are the same with and without hot files), whose blocks they
  share (map task ``i`` of every job reading it reads block ``i``), so their maps compete
  for the same machines' locality (FAIR section 5.1);
- ``closed_loop``: ``{think: S}`` (needs ``users``): each user submits its next job S seconds
  after its previous one ends (FAIR section 6.3's IO-rate biasing runs users that keep
  submitting); the drawn arrival times give only each user's first job;
- ``s``: the Zipf exponent (``zipf`` only, > 0, default 1);
- ``sizes``: job-size bins ``[{low: N, high: N, fraction: F}, ...]`` drawn instead of the
  generator's own (``facebook-2009``, ``facebook-2010``, ``google-constraints``): a bin by
  its fraction (renormalised), then uniform from ``low`` to ``high`` tasks; for a workload
  whose size distribution differs from the Facebook bins, such as TSF section VI-B's
  Google hour ("over 60% of jobs have only one task", 180k tasks across 4,500 jobs).

Determinism: all randomness comes from the ``numpy.random.Generator`` passed in; the jobs are
drawn lazily as ``Workload.jobs`` is iterated, so the same seed gives the same jobs provided
nothing else draws from that generator in between (give the generator its own child
generator, e.g. ``rng.spawn(1)[0]``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from fairshare.cluster import Cluster, FloatArray
from fairshare.cluster.constraints import Constraint
from fairshare.workload.constraint_model import (
    ATTRIBUTE_FREQUENCY,
    ATTRIBUTES,
    CLASS_SHARES,
    REQUIRE_PROBABILITY,
    attribute_matrix,
    constraint_cluster,
    draw_constraint,
)
from fairshare.workload.generator_params import DEFAULT_JOBS, GeneratorParams
from fairshare.workload.limits import MAX_REPLICA_COPIES, MAX_TASKS
from fairshare.workload.loader import GENERATORS, ScenarioError
from fairshare.workload.model import (
    Job,
    ScenarioEvent,
    WorkloadSpec,
)

__all__ = [
    "ATTRIBUTES",
    "ATTRIBUTE_FREQUENCY",
    "CLASS_SHARES",
    "DEFAULT_JOBS",
    "FACEBOOK_2009_BINS",
    "FACEBOOK_2010_BINS",
    "REQUIRE_PROBABILITY",
    "Workload",
    "generate",
]


@dataclass(frozen=True)
class Workload:
    """Jobs to replay and the cluster to replay them on.

    Parameters
    ----------
    jobs : Iterator of Job
        Yields each job once, lazily, in submit order.
    cluster : Cluster
        The scenario's cluster, or the one the source needs instead (``google-constraints``
        adds machine attributes; an ``alibaba-gpu`` trace brings its node list).
    warnings : Sequence of str
        ``warning:`` lines about records the source skipped (a history's jobs that never
        ran), complete once ``jobs`` is exhausted; empty for most sources.
    """

    jobs: Iterator[Job]
    cluster: Cluster
    warnings: Sequence[str] = ()


@dataclass(frozen=True)
class SizeBin:
    """A bin of job sizes: jobs with ``low`` to ``high`` tasks, a ``fraction`` of all jobs.

    Parameters
    ----------
    low : int
        The fewest tasks (inclusive).
    high : int
        The most tasks (inclusive).
    fraction : float
        The fraction of jobs in the bin.
    """

    low: int
    high: int
    fraction: float


FACEBOOK_2009_BINS = (
    SizeBin(1, 25, 0.58),
    SizeBin(26, 50, 0.096),
    SizeBin(51, 100, 0.086),
    SizeBin(101, 200, 0.084),
    SizeBin(201, 400, 0.056),
    SizeBin(401, 800, 0.043),
    SizeBin(801, 1600, 0.025),
    SizeBin(1601, 3200, 0.013),
    SizeBin(3201, 6400, 0.017),
)
"""FAIR Table 2: maps per job at Facebook (2009), the "% at Facebook" column."""

FACEBOOK_2010_BINS = (
    SizeBin(1, 19, 0.73),
    SizeBin(20, 149, 0.10),
    SizeBin(150, 499, 0.07),
    SizeBin(500, 3000, 0.09),
)
"""H-DRF Table 1: tasks per job in the 2010 Facebook trace (renormalised when drawn)."""

_ZIPF_MAX_MAPS = 400
_MAX_REDUCE_FRACTION = 0.25  # facebook-2009: reducers are 5% to 25% of the maps


# --------------------------------------------------------------------------------------------
# Job sizes


def _cumulative(weights: FloatArray) -> FloatArray:
    """The distribution function of ``weights`` (normalised), for inverse-transform draws:
    ``searchsorted(cdf, u, 'right')`` with ``u`` uniform on [0, 1) picks index ``i`` with
    probability ``weights[i] / sum`` (an order of magnitude faster than ``rng.choice``)."""
    cdf = np.cumsum(weights) / weights.sum()
    cdf[-1] = 1.0  # no rounding gap above the last bin
    return np.asarray(cdf, dtype=np.float64)


def _pick(cdf: FloatArray, rng: np.random.Generator) -> int:
    """An index drawn with the probabilities of ``cdf`` (see :func:`_cumulative`)."""
    return int(np.searchsorted(cdf, rng.random(), side="right"))


def _draw_bin(bins: Sequence[SizeBin], cdf: FloatArray, rng: np.random.Generator) -> int:
    """A job size: a bin by its fraction, then uniform within the bin."""
    chosen = bins[_pick(cdf, rng)]
    return int(rng.integers(chosen.low, chosen.high, endpoint=True))


# --------------------------------------------------------------------------------------------
# Entry point


def generate(
    spec: WorkloadSpec,
    cluster: Cluster,
    rng: np.random.Generator,
    *,
    queues: Collection[str] = (),
    source: str = "workload",
    events: Sequence[ScenarioEvent] = (),
) -> Workload:
    """The jobs of the built-in generator ``spec`` on ``cluster``, drawn from ``rng``.

    Parameters are checked now; the jobs are drawn as the returned workload's ``jobs`` is
    iterated, in submit order, and the tasks and block locations they add up to are counted
    against :mod:`fairshare.workload.limits` as they are drawn.

    Parameters
    ----------
    spec : WorkloadSpec
        The generator and its parameters (module docstring).
    cluster : Cluster
        The machines the jobs run on.
    rng : numpy.random.Generator
        The only source of randomness: the same seed gives the same jobs.
    queues : Collection of str
        The scenario's declared queue paths (for the ``queues`` parameter).
    source : str
        Names the scenario file in errors.
    events : sequence of ScenarioEvent
        The scenario's events: the jobs and users they cancel must be generated ones.

    Returns
    -------
    Workload
        The lazily drawn jobs, and the cluster (``google-constraints`` adds the attributes).

    Raises
    ------
    ScenarioError
        An unknown generator or a bad parameter, at ``workload.<name>``; while iterating, jobs
        whose tasks or block locations pass the limits, at ``workload.jobs``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairshare.workload import parse_scenario
    >>> from fairshare.workload.generators import generate
    >>> scenario = parse_scenario(
    ...     {
    ...         "machines": [{"name": "m", "count": 10, "capacity": {"slots": 4}}],
    ...         "workload": {"generator": "facebook-2009", "jobs": 3},
    ...     },
    ...     source="fb",
    ... )
    >>> jobs = list(generate(scenario.workload, scenario.cluster, np.random.default_rng(1)).jobs)
    >>> [job.name for job in jobs], [job.input_replicas for job in jobs]
    (['job0', 'job1', 'job2'], [3, 3, 3])
    >>> again = generate(scenario.workload, scenario.cluster, np.random.default_rng(1)).jobs
    >>> [job.tasks for job in jobs] == [job.tasks for job in again]
    True
    """
    if spec.generator not in GENERATORS:
        raise ScenarioError(
            source,
            "workload.generator",
            f"unknown generator {spec.generator!r}; allowed: {', '.join(GENERATORS)}",
        )
    params = GeneratorParams(spec, cluster, source)
    count = params.count("jobs")
    assert count is not None  # every generator has a default
    arrival = params.seconds("arrival", params.values.get("arrival", 30.0))
    duration = params.duration()
    demands = params.demands()
    users = params.users()
    paths = params.queues(queues)
    kind = spec.generator
    replicas = params.replicas() if kind != "google-constraints" else None
    placement = params.placement()
    hot = params.hot_files() if replicas is not None else None
    # Files are picked from a generator of their own: with and without hot files the jobs
    # are the same, only what they read differs.
    files_rng = rng.spawn(1)[0] if hot is not None else rng
    think = params.closed_loop(users)
    reduce = params.reduce() if kind in ("facebook-2009", "zipf") else None
    _check_events(events, count, users, source)
    exponent = params.number("s", 1.0) if kind == "zipf" else 1.0
    sizes = params.sizes() if kind != "zipf" else None
    if kind == "google-constraints":
        cluster = constraint_cluster(cluster, rng)
    has = attribute_matrix(cluster) if kind == "google-constraints" else None

    def jobs() -> Iterator[Job]:
        zipf = None
        if kind == "zipf":  # P(k maps) proportional to k^-s, k = 1 .. 400
            zipf = _cumulative(np.arange(1, _ZIPF_MAX_MAPS + 1, dtype=np.float64) ** -exponent)
        bins: tuple[SizeBin, ...] = (
            FACEBOOK_2010_BINS if kind == "facebook-2010" else FACEBOOK_2009_BINS
        )
        if sizes is not None:
            bins = tuple(SizeBin(low, high, fraction) for low, high, fraction in sizes)
        bin_cdf = _cumulative(np.array([b.fraction for b in bins], dtype=np.float64))
        cache: dict[tuple[int, ...], Constraint] = {}
        width = len(str(count - 1))
        submit = 0.0
        total_tasks = 0
        block_copies = 0
        for i in range(count):
            submit += float(rng.exponential(arrival))
            tasks = _pick(zipf, rng) + 1 if zipf is not None else _draw_bin(bins, bin_cdf, rng)
            phase = None
            if reduce is not None:
                if zipf is not None:
                    reducers = int(rng.integers(1, max(1, tasks // 5), endpoint=True))
                else:
                    reducers = max(1, round(tasks * float(rng.uniform(0.05, _MAX_REDUCE_FRACTION))))
                phase = replace(reduce, tasks=reducers)
            total_tasks += tasks + (phase.tasks if phase is not None else 0)
            block_copies += tasks * (replicas or 0)
            if total_tasks > MAX_TASKS or block_copies > MAX_REPLICA_COPIES:
                what = "tasks" if total_tasks > MAX_TASKS else "input block locations"
                most = MAX_TASKS if total_tasks > MAX_TASKS else MAX_REPLICA_COPIES
                raise ScenarioError(
                    source,
                    "workload.jobs",
                    f"the first {i + 1:,} of the {count:,} jobs drawn already have more than "
                    f"{most:,} {what} (the limit); ask for fewer jobs",
                )
            constraint = draw_constraint(has, rng, cache) if has is not None else None
            name = f"job{i:0{width}d}"
            yield Job(
                name=name,
                submit=submit,
                user=name if users is None else f"user{int(rng.integers(users))}",
                demand=demands[int(rng.integers(len(demands)))] if len(demands) > 1 else demands[0],
                tasks=tasks,
                duration=duration,
                queue=paths[int(rng.integers(len(paths)))] if len(paths) > 1 else paths[0],
                constraint=constraint,
                input_replicas=replicas,
                reduce=phase,
                input_file=(
                    f"hot{int(files_rng.integers(hot[1]))}"
                    if hot is not None and files_rng.random() < hot[0]
                    else None
                ),
                replica_placement=placement,
            )

    if think is not None:
        return Workload(_closed_loop(jobs(), think), cluster)
    return Workload(jobs(), cluster)


def _closed_loop(jobs: Iterator[Job], think: float) -> Iterator[Job]:
    """The jobs as closed-loop submitters run them: each user's first job at its drawn time,
    each later one ``think`` seconds after the user's previous job ends. A user's chain
    follows its first job in the stream (the simulator keeps each until its turn)."""
    drawn = list(jobs)
    chains: dict[str, list[Job]] = {}
    for job in drawn:
        chain = chains.setdefault(job.user, [])
        if chain:
            # A follower's submit is decided by the run; its head's keeps the stream sorted.
            job = replace(job, after=chain[-1].name, think=think, submit=chain[0].submit)  # noqa: PLW2901
        chain.append(job)
    for job in drawn:
        chain = chains.get(job.user, [])
        if chain and chain[0].name == job.name:
            yield from chain


def _check_events(
    events: Sequence[ScenarioEvent], count: int, users: int | None, source: str
) -> None:
    """The jobs and users the scenario's events cancel are among the generated ones."""
    width = len(str(count - 1))
    for i, event in enumerate(events):
        if event.kind not in ("cancel_job", "cancel_user"):
            continue
        name = event.target
        assert isinstance(name, str)
        jobs = name.startswith("job") and name[3:].isdigit() and len(name) == 3 + width
        if event.kind == "cancel_job" or users is None:
            known = jobs and int(name[3:]) < count
            what = f"job{0:0{width}d} to job{count - 1:0{width}d}"
        else:
            known = name.startswith("user") and name[4:].isdigit() and int(name[4:]) < users
            known = known and name == f"user{int(name[4:])}"
            what = f"user0 to user{users - 1}"
        if not known:
            raise ScenarioError(
                source,
                f"events[{i}].{event.kind}",
                f"unknown {event.kind[7:]} {name!r}; the generator's are {what}",
            )
