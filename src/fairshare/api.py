"""The Python API: what a script or a notebook uses to solve, simulate, compare and check.

Everything here is also exported by the top-level package (``import fairshare``), which loads
it on first use so that ``import fairshare`` stays cheap. The command line is a thin layer
over these functions: ``fairshare solve`` is :func:`solve`, ``fairshare simulate`` is
:func:`simulate` followed by :meth:`Run.write`, ``fairshare compare`` is :func:`compare`
followed by :meth:`Comparison.write`, and ``fairshare check`` is :func:`check`.

Errors are exceptions that name the input, the field and what is allowed (the command line
prints them as SPEC section 4's one ``error:`` line): :class:`ScenarioError` for a scenario
or trace that breaks the format, :class:`PolicyError` for a request a policy or the
simulator cannot serve, :class:`InvalidRequest` and :class:`SolverFailure` from the offline
solvers.

Examples
--------
>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {
...         "machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
...         "users": [
...             {"name": "A", "demand": {"cpu": 1, "mem": 4}},
...             {"name": "B", "demand": {"cpu": 3, "mem": 1}},
...         ],
...     },
...     source="drf-section-4.1",
... )
>>> fairshare.solve(scenario, "drf").tasks_by_user()
{'A': 3.0, 'B': 2.0}
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fairshare.allocation import Allocation, allocation_document
from fairshare.policies import ONLINE_POLICIES, PolicyError
from fairshare.runlog import RunLog
from fairshare.sim.engine import SimOptions
from fairshare.sim.engine import simulate as simulate_jobs
from fairshare.workload import Job, Scenario, ScenarioError, load_scenario, parse_scenario
from fairshare.workload.generators import Workload

if TYPE_CHECKING:
    import polars as pl

    from fairshare.fairness import PROPERTIES, CheckResult, check
    from fairshare.solvers import SOLVER_POLICIES, InvalidRequest, SolverFailure

# The offline solvers (HiGHS, SciPy) and the fairness search are loaded when first named, so
# that a script (or `fairshare simulate`) that only simulates does not pay for them.
_LAZY = {
    "SOLVER_POLICIES": "fairshare.solvers",
    "InvalidRequest": "fairshare.solvers",
    "SolverFailure": "fairshare.solvers",
    "PROPERTIES": "fairshare.fairness",
    "CheckResult": "fairshare.fairness",
    "check": "fairshare.fairness",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fairshare.api' has no attribute {name!r}")


__all__ = [
    "ONLINE_POLICIES",
    "PROPERTIES",
    "SOLVER_POLICIES",
    "Allocation",
    "CheckResult",
    "Comparison",
    "InvalidRequest",
    "PolicyError",
    "Run",
    "Scenario",
    "ScenarioError",
    "SimOptions",
    "Solution",
    "SolverFailure",
    "check",
    "check_comparison",
    "check_policy",
    "compare",
    "load_scenario",
    "parse_scenario",
    "replay",
    "simulate",
    "solve",
    "unrunnable_jobs",
    "workload_of",
]

ScenarioLike = Scenario | str | Path
"""A scenario, or the path of a scenario file (YAML or JSON, SPEC section 1)."""

TraceLike = str | tuple[str, str | Path]
"""A trace as ``"FORMAT:PATH"`` (as ``--trace`` takes it) or as ``(FORMAT, PATH)``."""


def _scenario(scenario: ScenarioLike) -> Scenario:
    """The scenario itself, or the one its path's file holds (loaded and validated)."""
    return scenario if isinstance(scenario, Scenario) else load_scenario(scenario)


@dataclass(frozen=True)
class Solution:
    """The fair allocation of a scenario's users under one policy, with the scenario it
    belongs to (so that users and machines have their names).

    Attributes
    ----------
    scenario : Scenario
        The scenario that was solved.
    allocation : Allocation
        Tasks and shares per user (in scenario order) and, for the policies that place
        tasks, the placement per machine: the type every solver and online policy returns.
    """

    scenario: Scenario
    allocation: Allocation

    def tasks_by_user(self) -> dict[str, float]:
        """Tasks per user name (fractional for a divisible allocation), rounded to 6
        decimals as in the JSON document.

        Returns
        -------
        dict of str to float
            By user name, in scenario order.
        """
        users = self.to_dict()["users"]
        assert isinstance(users, dict)
        return {name: entry["tasks"] for name, entry in users.items()}

    def to_dict(self) -> dict[str, object]:
        """The JSON document of SPEC section 2 (``fairshare solve --json``).

        Returns
        -------
        dict
            ``policy``, ``integral``, per user its ``tasks`` and ``share``, and the
            placement for the policies that place tasks.

        Examples
        --------
        >>> import fairshare
        >>> scenario = fairshare.parse_scenario(
        ...     {"machines": [{"name": "m", "capacity": {"slots": 10}}],
        ...      "users": [{"name": "a"}, {"name": "b", "weight": 4}]},
        ...     source="two-users",
        ... )
        >>> fairshare.solve(scenario, "max-min").to_dict()["users"]
        {'a': {'tasks': 2.0, 'share': 0.2}, 'b': {'tasks': 8.0, 'share': 0.8}}
        """
        return allocation_document(self.scenario, self.allocation)

    def frame(self) -> pl.DataFrame:
        """One row per user: ``user``, ``tasks``, ``share``, ``weight``, plus one column per
        resource with the amount allocated to the user.

        Returns
        -------
        polars.DataFrame
            One row per user, in scenario order.

        Examples
        --------
        >>> import fairshare
        >>> scenario = fairshare.parse_scenario(
        ...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
        ...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
        ...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
        ...     source="drf-section-4.1",
        ... )
        >>> frame = fairshare.solve(scenario, "drf").frame()
        >>> frame.columns, frame["mem"].to_list()
        (['user', 'tasks', 'share', 'weight', 'cpu', 'mem'], [12.0, 2.0])
        """
        import polars as pl  # noqa: PLC0415

        scenario = self.scenario
        used = self.allocation.tasks[:, None] * scenario.demands
        columns: dict[str, object] = {
            "user": [u.name for u in scenario.users],
            "tasks": self.allocation.tasks.tolist(),
            "share": self.allocation.shares.tolist(),
            "weight": [float(u.weight) for u in scenario.users],
        }
        for r, resource in enumerate(scenario.cluster.resources):
            columns[resource] = used[:, r].tolist()
        return pl.DataFrame(columns, schema_overrides={"user": pl.String})


def solve(scenario: ScenarioLike, policy: str, *, integral: bool = False) -> Solution:
    """The exact fair allocation of ``scenario``'s users under a solver policy.

    Parameters
    ----------
    scenario : Scenario or path
        The scenario, or the path of its file.
    policy : str
        A name of :data:`SOLVER_POLICIES` (``drf``, ``hdrf``, ``cmmf``, ``tsf``, ...).
    integral : bool
        Whole tasks (a maximal integral allocation) instead of the divisible one.

    Returns
    -------
    Solution

    Raises
    ------
    ScenarioError
        The file breaks the scenario format.
    UnknownPolicy, InvalidRequest, SolverFailure
        Unknown policy, a request the policy cannot serve, a solver that gave up.

    Examples
    --------
    DRF section 4.1: A's tasks need <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>, on <9 CPUs, 18 GB>.

    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
    ...      "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}},
    ...                {"name": "B", "demand": {"cpu": 3, "mem": 1}}]},
    ...     source="drf-section-4.1",
    ... )
    >>> solution = fairshare.solve(scenario, "drf")
    >>> solution.tasks_by_user(), solution.to_dict()["users"]["A"]["share"]
    ({'A': 3.0, 'B': 2.0}, 0.666667)
    """
    from fairshare.solvers import solve as solve_allocation  # noqa: PLC0415

    loaded = _scenario(scenario)
    return Solution(loaded, solve_allocation(loaded, policy, integral=integral))


@dataclass(frozen=True)
class Run:
    """One simulated run: the log the engine wrote, and its metrics (SPEC section 3).

    Attributes
    ----------
    log : RunLog
        Every task attempt and job record of the run; the metrics are functions of it.
    """

    log: RunLog

    @property
    def policy(self) -> str:
        """The online policy's name."""
        return self.log.policy

    @property
    def seed(self) -> int:
        """The run's seed (task durations, input block placement, generated jobs)."""
        return self.log.seed

    @cached_property
    def summary(self) -> dict[str, object]:
        """The ``summary.json`` document: response times, slowdown, locality, utilisation,
        per-user figures. Numbers rounded to 6 decimals; None where undefined."""
        from fairshare.metrics import summary  # noqa: PLC0415

        return summary(self.log)

    def to_dict(self) -> dict[str, object]:
        """The ``summary.json`` document (a copy of :attr:`summary`).

        Returns
        -------
        dict
        """
        return dict(self.summary)

    def jobs_frame(self) -> pl.DataFrame:
        """``jobs.csv`` as a polars DataFrame: one row per job, in submission order.

        Returns
        -------
        polars.DataFrame
        """
        from fairshare.metrics import jobs_frame  # noqa: PLC0415

        return jobs_frame(self.log)

    def timeline_frame(self) -> pl.DataFrame:
        """``timeline.csv`` as a polars DataFrame: running tasks and share per user over
        time.

        Returns
        -------
        polars.DataFrame
        """
        from fairshare.metrics import timeline_frame  # noqa: PLC0415

        return timeline_frame(self.log)

    def tasks_frame(self) -> pl.DataFrame:
        """``tasks.parquet`` as a polars DataFrame: one row per task attempt.

        Returns
        -------
        polars.DataFrame
        """
        from fairshare.metrics import tasks_frame  # noqa: PLC0415

        return tasks_frame(self.log)

    def write(self, out_dir: str | Path) -> dict[str, object]:
        """Write ``summary.json``, ``jobs.csv``, ``timeline.csv``, ``tasks.parquet`` and
        ``report.html`` into ``out_dir`` (created if missing; files of the same names are
        replaced).

        Parameters
        ----------
        out_dir : str or path
            The directory.

        Returns
        -------
        dict
            The summary document.
        """
        from fairshare.report import write_outputs  # noqa: PLC0415

        return write_outputs(self.log, Path(out_dir))


def _trace(trace: TraceLike) -> tuple[str, Path]:
    """A trace argument as (format, path), checked as ``--trace`` is."""
    from fairshare.workload.traces import parse_trace_argument  # noqa: PLC0415

    if isinstance(trace, str):
        return parse_trace_argument(trace)
    fmt, path = trace
    return parse_trace_argument(f"{fmt}:{path}")


def workload_of(
    scenario: ScenarioLike, *, seed: int = 0, trace: TraceLike | None = None
) -> Workload:
    """The jobs a run replays, streamed in submit order, and the cluster it replays them on.

    The jobs come from the trace if one is given, else from the scenario's ``jobs``, else
    from its ``workload`` generator, drawn from a child generator of ``seed`` so that every
    policy of a comparison replays the same jobs. A trace record that breaks its format
    raises :class:`ScenarioError` when the iteration reaches it.

    Parameters
    ----------
    scenario : Scenario or path
        The scenario, or the path of its file.
    seed : int
        Seeds a generated workload.
    trace : str or (str, path), optional
        ``"FORMAT:PATH"``: the jobs of a trace instead of the scenario's.

    Returns
    -------
    Workload
        The jobs (an iterator, read once) and the cluster.

    Raises
    ------
    ScenarioError
        The scenario has neither jobs nor a workload and no trace is given, or the file or
        the trace argument breaks its format.

    Examples
    --------
    >>> from fairshare import api
    >>> scenario = api.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 2}}],
    ...      "jobs": [{"name": "late", "submit": 5, "tasks": 1, "duration": 1},
    ...               {"name": "early", "submit": 0, "tasks": 1, "duration": 1}]},
    ...     source="two-jobs",
    ... )
    >>> [job.name for job in api.workload_of(scenario).jobs]
    ['early', 'late']
    """
    from fairshare.workload.generators import generate  # noqa: PLC0415

    loaded = _scenario(scenario)
    if trace is not None:
        # The trace readers are loaded by a run that replays a trace, not by the others.
        from fairshare.workload.traces import open_trace  # noqa: PLC0415

        fmt, path = _trace(trace)
        return open_trace(fmt, path, loaded.cluster)
    if loaded.jobs:
        ordered = sorted(loaded.jobs, key=lambda job: job.submit)
        return Workload(iter(ordered), loaded.cluster)
    if loaded.workload is None:
        raise ScenarioError(
            loaded.source,
            "jobs",
            "nothing to simulate: the scenario has neither 'jobs' nor 'workload'; add one, "
            "or give a trace",
        )
    rng = np.random.default_rng(seed).spawn(1)[0]
    return generate(
        loaded.workload,
        loaded.cluster,
        rng,
        queues=[q.path for q in loaded.queues],
        source=loaded.source,
    )


def simulate(
    scenario: ScenarioLike,
    policy: str,
    *,
    seed: int = 0,
    trace: TraceLike | None = None,
    options: SimOptions | None = None,
) -> Run:
    """Replay the scenario's jobs (or its generated workload, or a trace) under an online
    policy, in simulated time.

    Parameters
    ----------
    scenario : Scenario or path
        Machines, users and queues, and the jobs unless a trace gives them.
    policy : str
        A name of :data:`ONLINE_POLICIES` (``fifo``, ``fair``, ``drf``, ``hdrf``, ``choosy``,
        ``tsf``, ...) or of the reference schedulers (``fairshare policies`` lists them).
    seed : int
        Seeds task durations drawn from distributions, input block placement and generated
        jobs: the same seed and inputs give the same run.
    trace : str or (str, path), optional
        ``"FORMAT:PATH"``: replay a trace's jobs instead of the scenario's.
    options : SimOptions, optional
        Delay scheduling, preemption, copy-compute splitting, ``until``, locality slowdowns.

    Returns
    -------
    Run

    Examples
    --------
    Two jobs of four one-slot tasks of 10 s on a machine with four slots:

    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 4, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> fifo = fairshare.simulate(scenario, "fifo")
    >>> fair = fairshare.simulate(scenario, "fair")
    >>> fifo.summary["makespan"], fair.summary["makespan"]
    (20.0, 20.0)
    >>> fifo.jobs_frame()["response_time"].to_list()
    [10.0, 19.0]
    """
    loaded = _scenario(scenario)
    check_policy(policy, options)
    workload = workload_of(loaded, seed=seed, trace=trace)
    return replay(loaded, workload, policy, seed=seed, options=options)


def check_policy(name: str, options: SimOptions | None = None, where: str = "policy") -> None:
    """Raise :class:`PolicyError` at ``where`` unless ``name`` is an online policy or a
    reference scheduler (Choosy section 7) that combines with ``options``: the reference
    schedulers place tasks by the exact offline allocation, so they take no delay scheduling,
    preemption, copy-compute splitting, headroom or backfilling.

    Parameters
    ----------
    name : str
        The policy's name.
    options : SimOptions, optional
        The run's options.
    where : str
        The field or option the error names.

    Raises
    ------
    PolicyError
        An unknown name, or a reference scheduler with an option it does not take.

    Examples
    --------
    >>> from fairshare import api
    >>> api.check_policy("drf")
    >>> api.check_policy("offline-restricted", api.SimOptions(headroom=True))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairshare.policies.protocol.PolicyError: --headroom: does not combine with the ...
    """
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415

    if name not in ONLINE_POLICIES and name not in REFERENCE_POLICIES:
        raise PolicyError(
            where,
            f"unknown policy {name!r}; allowed: {', '.join(ONLINE_POLICIES)} "
            f"(reference schedulers: {', '.join(REFERENCE_POLICIES)})",
        )
    if name not in REFERENCE_POLICIES or options is None:
        return
    for given, flag in (
        (options.delay is not None, "--delay-scheduling"),
        (options.preemption is not None, "--preemption"),
        (options.copy_compute_splitting, "--copy-compute-splitting"),
        (options.headroom, "--headroom"),
        (options.backfill is not None, "--backfill"),
    ):
        if given:
            raise PolicyError(
                flag,
                f"does not combine with the reference scheduler {name!r}, which places "
                "tasks by the exact offline allocation",
            )


def check_comparison(policies: Sequence[str], reference: str | None = None) -> None:
    """Raise :class:`PolicyError` unless ``policies`` is a non-empty list without repeats
    and ``reference`` (if given) is one of them.

    Parameters
    ----------
    policies : sequence of str
        The policies to compare.
    reference : str, optional
        The run the others are compared against.

    Raises
    ------
    PolicyError
        An empty list or name, a name listed twice, or a reference not among them.
    """
    names = list(policies)
    if not names or any(not name for name in names):
        raise PolicyError("policies", f"expected a non-empty list of policies, got {names!r}")
    for name in names:
        if names.count(name) > 1:
            raise PolicyError("policies", f"policy {name!r} is listed twice")
    if reference is not None and reference not in names:
        raise PolicyError(
            "reference", f"{reference!r} is not one of the compared policies: {', '.join(names)}"
        )


def replay(
    scenario: Scenario,
    workload: Workload,
    policy: str,
    *,
    seed: int = 0,
    options: SimOptions | None = None,
    jobs: Iterator[Job] | None = None,
) -> Run:
    """Simulate ``workload`` (from :func:`workload_of`) under ``policy``: the step of
    :func:`simulate` after the jobs are known. ``jobs`` replaces ``workload.jobs`` (the same
    jobs, observed on the way: a progress bar).

    Parameters
    ----------
    scenario : Scenario
        Users and queues.
    workload : Workload
        The jobs and the cluster (:func:`workload_of`).
    policy : str
        An online policy or a reference scheduler.
    seed : int
        Seeds task durations and input block placement.
    options : SimOptions, optional
        The run's options.
    jobs : iterator of Job, optional
        Replaces ``workload.jobs``.

    Returns
    -------
    Run

    Raises
    ------
    PolicyError
        An unknown policy, or options it does not combine with.
    """
    from fairshare.sim.reference import REFERENCE_POLICIES, make_reference  # noqa: PLC0415

    check_policy(policy, options)
    scheduler = (
        make_reference(policy, workload.cluster, users=scenario.users, queues=scenario.queues)
        if policy in REFERENCE_POLICIES
        else policy
    )
    log = simulate_jobs(
        workload.cluster,
        jobs if jobs is not None else workload.jobs,
        scheduler,
        seed=seed,
        users=scenario.users,
        queues=scenario.queues,
        options=options,
    )
    return Run(log)


def unrunnable_jobs(workload: Workload, until: float | None = None) -> list[tuple[str, str]]:
    """The jobs of ``workload`` that can never run, with the reason: a task larger than every
    machine it may use, or a constraint that matches no machine
    (:class:`~fairshare.workload.eligibility.TaskFit`, the check behind the simulator's
    slowdown denominator, so this list and ``summary.json``'s ``unrunnable_jobs`` agree). Jobs
    submitted after ``until`` are left out: the run stops before it submits them. Reads the
    whole workload, so a corrupt trace record raises here.

    Parameters
    ----------
    workload : Workload
        The jobs and the cluster (:func:`workload_of`); its jobs are read.
    until : float, optional
        The run's end (``SimOptions.until``).

    Returns
    -------
    list of (str, str)
        Each such job's name and why it never runs, in submission order.

    Examples
    --------
    >>> from fairshare import api
    >>> scenario = api.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"cpu": 2}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 2, "duration": 10,
    ...                "demand": {"cpu": 1}},
    ...               {"name": "big", "submit": 1, "tasks": 1, "duration": 5,
    ...                "demand": {"cpu": 4}}]},
    ...     source="too-big",
    ... )
    >>> api.unrunnable_jobs(api.workload_of(scenario))
    [('big', 'its task demand (cpu 4) fits on no machine')]
    """
    from fairshare.workload.eligibility import TaskFit  # noqa: PLC0415

    fit = TaskFit(workload.cluster.machines, workload.cluster.resources)
    found: list[tuple[str, str]] = []
    for job in workload.jobs:
        if until is not None and job.submit > until:
            break
        reason = fit.never_runs(job)
        if reason is not None:
            found.append((job.name, reason))
    return found


@dataclass(frozen=True)
class Comparison:
    """Runs of the same jobs under several policies, compared against a reference run
    (Choosy section 7.1: allocation RMSE against the reference, relative slowdown per job
    size bin).

    Attributes
    ----------
    runs : tuple of Run
        One run per policy, in the order given.
    reference : int
        The index in ``runs`` of the reference run.
    """

    runs: tuple[Run, ...]
    reference: int = 0
    _document: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    def run(self, policy: str) -> Run:
        """The run of ``policy``.

        Parameters
        ----------
        policy : str
            A compared policy.

        Returns
        -------
        Run

        Raises
        ------
        KeyError
            ``policy`` was not compared.
        """
        for run in self.runs:
            if run.policy == policy:
                return run
        raise KeyError(policy)

    def to_dict(self) -> dict[str, object]:
        """The ``compare.json`` document: every run's summary, and the comparison with the
        reference.

        Returns
        -------
        dict
        """
        if not self._document:
            from fairshare.metrics import clean, compare_runs  # noqa: PLC0415

            document = clean(compare_runs([r.log for r in self.runs], self.reference))
            assert isinstance(document, dict)
            self._document.update(document)
        return dict(self._document)

    def frame(self) -> pl.DataFrame:
        """``compare.csv`` as a polars DataFrame: one row per run.

        Returns
        -------
        polars.DataFrame
        """
        from fairshare.metrics import compare_frame  # noqa: PLC0415

        return compare_frame(self.to_dict())

    def write(self, out_dir: str | Path) -> dict[str, object]:
        """Write ``compare.json``, ``compare.csv``, ``compare.html`` and each run's files in
        ``out_dir/POLICY/``.

        Parameters
        ----------
        out_dir : str or path
            The directory (created if missing).

        Returns
        -------
        dict
            The comparison document.
        """
        from fairshare.report import write_compare  # noqa: PLC0415

        out = Path(out_dir)
        for run in self.runs:
            run.write(out / run.policy)
        return write_compare([r.log for r in self.runs], out, self.reference)


def compare(
    scenario: ScenarioLike,
    policies: Sequence[str],
    *,
    seed: int = 0,
    trace: TraceLike | None = None,
    options: SimOptions | None = None,
    reference: str | None = None,
) -> Comparison:
    """Simulate the same jobs (same seed: same jobs and task durations) under each policy.

    ``reference`` (default: the first policy) is the run the others are compared against.

    Parameters
    ----------
    scenario : Scenario or path
        Machines, users and queues, and the jobs unless a trace gives them.
    policies : sequence of str
        Online policies or reference schedulers, each once.
    seed : int
        Seeds task durations, input block placement and generated jobs (the same for
        every run).
    trace : str or (str, path), optional
        ``"FORMAT:PATH"``: replay a trace's jobs instead of the scenario's.
    options : SimOptions, optional
        The runs' options (see :func:`simulate`).
    reference : str, optional
        One of ``policies`` (default: the first).

    Returns
    -------
    Comparison

    Raises
    ------
    ScenarioError
        The scenario or trace breaks its format.
    PolicyError
        An empty or repeated list, an unknown policy, a reference not compared, or options
        a policy does not combine with.

    Examples
    --------
    >>> import fairshare
    >>> scenario = fairshare.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
    ...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
    ...     source="two-jobs",
    ... )
    >>> result = fairshare.compare(scenario, ["fifo", "fair"])
    >>> [run.summary["mean_response_time"] for run in result.runs]
    [24.5, 29.5]
    >>> result.frame()["policy"].to_list()
    ['fifo', 'fair']
    """
    names = list(policies)
    check_comparison(names, reference)
    for name in names:
        check_policy(name, options)
    loaded = _scenario(scenario)
    runs = []
    for name in names:
        workload = workload_of(loaded, seed=seed, trace=trace)
        runs.append(replay(loaded, workload, name, seed=seed, options=options))
    return Comparison(tuple(runs), names.index(reference) if reference is not None else 0)
