"""The Python API: what a script or a notebook uses to solve, simulate, compare and check.

Everything here is also exported by the top-level package (``import fairshare``), which loads
it on first use so that ``import fairshare`` stays cheap. The command line is a thin layer
over these functions: ``fairshare solve`` is :func:`solve`, ``fairshare simulate`` is
:func:`simulate` followed by :meth:`Run.write`, ``fairshare compare`` is :func:`compare`
followed by :meth:`Comparison.write`, and ``fairshare check`` is :func:`check`.

Errors are exceptions that name the input, the field and what is allowed (the command line
prints them as SPEC section 4's one ``error:`` line, with its flags, ``--until``, where the
library names a parameter or a :class:`SimOptions` field, ``until``). Every one is a
:class:`FairshareError`: catch it to catch them all. :class:`ScenarioError` is a scenario or
trace that breaks the format, :class:`PolicyError` a request a policy or the simulator
cannot serve (:class:`UnknownPolicy`, a subclass, an unknown policy, from :func:`solve`,
:func:`simulate`, :func:`compare` and :func:`check` alike), :class:`InvalidRequest` and
:class:`SolverFailure` come from the offline solvers.

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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fairshare._api_results import ChangeCheck, Comparison, Run, Solution, WhatIf
from fairshare.allocation import Allocation
from fairshare.cluster import Cluster, Machine
from fairshare.errors import FairshareError, UnknownPolicy
from fairshare.policies import ONLINE_POLICIES, Policy, PolicyError
from fairshare.sim.engine import JobEvent, MachineEvent, SimOptions
from fairshare.sim.engine import simulate as simulate_jobs
from fairshare.workload import Job, Scenario, ScenarioError, load_scenario, parse_scenario
from fairshare.workload.generators import Workload
from fairshare.workload.model import ScenarioEvent

if TYPE_CHECKING:
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
    "ChangeCheck",
    "CheckResult",
    "Comparison",
    "FairshareError",
    "InvalidRequest",
    "PolicyError",
    "Run",
    "Scenario",
    "ScenarioError",
    "SimOptions",
    "Solution",
    "SolverFailure",
    "UnknownPolicy",
    "WhatIf",
    "check",
    "check_change",
    "compare",
    "load_scenario",
    "parse_scenario",
    "replay",
    "screen_unrunnable",
    "simulate",
    "solve",
    "unrunnable_jobs",
    "validate_comparison",
    "validate_policy",
    "whatif",
    "workload_of",
]

ScenarioLike = Scenario | str | Path
"""A scenario, or the path of a scenario file (YAML or JSON, SPEC section 1)."""

TraceLike = str | tuple[str, str | Path]
"""A trace as ``"FORMAT:PATH"`` (as ``--trace`` takes it) or as ``(FORMAT, PATH)``."""


def _scenario(scenario: ScenarioLike) -> Scenario:
    """The scenario itself, or the one its path's file holds (loaded and validated)."""
    return scenario if isinstance(scenario, Scenario) else load_scenario(scenario)


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
    UnknownPolicy
        ``policy`` is not a solver policy (a :class:`PolicyError`).
    InvalidRequest, SolverFailure
        A request the policy cannot serve, a solver that gave up.

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
    ({'A': 3.0, 'B': 2.0}, 0.6666666666666666)
    """
    from fairshare.solvers import solve as solve_allocation  # noqa: PLC0415

    loaded = _scenario(scenario)
    return Solution(loaded, solve_allocation(loaded, policy, integral=integral))


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
        return open_trace(fmt, path, loaded.cluster, [user.name for user in loaded.users])
    if loaded.jobs:
        # A closed-loop job goes right after the job it follows (listed before it): the
        # simulator keeps it until that job ends.
        key: dict[str, float] = {}
        for job in loaded.jobs:
            key[job.name] = key[job.after] if job.after is not None else job.submit
        ordered = sorted(loaded.jobs, key=lambda job: key[job.name])
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
        events=loaded.events,
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

    Raises
    ------
    ScenarioError
        The scenario or trace breaks its format.
    PolicyError
        An unknown policy (:class:`UnknownPolicy`), options it does not combine with
        (naming the :class:`SimOptions` field), or a run the simulator cannot make.

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
    validate_policy(policy, options)
    workload = workload_of(loaded, seed=seed, trace=trace)
    return replay(loaded, workload, policy, seed=seed, options=options)


def validate_policy(name: str, options: SimOptions | None = None, where: str = "policy") -> None:
    """Raise :class:`PolicyError` unless ``name`` is an online policy or a reference
    scheduler (Choosy section 7) that combines with ``options``: the reference schedulers
    place tasks by the exact offline allocation, so they take no delay scheduling,
    preemption, copy-compute splitting, headroom, backfilling or reducer slow-start (their
    reducers run after the last map; a job's own ``reduce.slowstart`` is not read either).

    What :func:`simulate`, :func:`replay` and :func:`compare` check before they run; a caller
    that gathers runs to make later (a sweep's grid) checks each policy with it first.

    Parameters
    ----------
    name : str
        The policy's name.
    options : SimOptions, optional
        The run's options.
    where : str
        The parameter or field an unknown name is reported at (``policy``; a grid's
        ``policies[2]``).

    Raises
    ------
    UnknownPolicy
        An unknown name, at ``where``.
    PolicyError
        A reference scheduler with an option it does not take, at that option's
        :class:`SimOptions` field (``headroom``).

    Examples
    --------
    >>> from fairshare import api
    >>> api.validate_policy("drf")
    >>> api.validate_policy("offline-restricted", api.SimOptions(headroom=True))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairshare.errors.PolicyError: headroom: does not combine with the reference scheduler ...
    >>> api.validate_policy("lottery")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairshare.errors.UnknownPolicy: policy: unknown policy 'lottery'; allowed: fifo, ...
    """
    from fairshare.sim.reference import REFERENCE_POLICIES  # noqa: PLC0415

    if name not in ONLINE_POLICIES and name not in REFERENCE_POLICIES:
        raise UnknownPolicy(
            where,
            f"unknown policy {name!r}; allowed: {', '.join(ONLINE_POLICIES)} "
            f"(reference schedulers: {', '.join(REFERENCE_POLICIES)})",
        )
    if name not in REFERENCE_POLICIES or options is None:
        return
    for given, field in (
        (options.delay is not None, "delay"),
        (options.preemption is not None, "preemption"),
        (options.copy_compute_splitting, "copy_compute_splitting"),
        (options.headroom, "headroom"),
        (options.reduce_slowstart is not None, "reduce_slowstart"),
        (options.backfill is not None, "backfill"),
        (options.usage_half_life is not None, "usage_half_life"),
    ):
        if given:
            raise PolicyError(
                field,
                f"does not combine with the reference scheduler {name!r}, which places "
                "tasks by the exact offline allocation",
            )


def validate_comparison(policies: Sequence[str], reference: str | None = None) -> None:
    """Raise :class:`PolicyError` unless ``policies`` is a non-empty list without repeats
    and ``reference`` (if given) is one of them: what :func:`compare` checks first (each
    policy is then checked by :func:`validate_policy`).

    Parameters
    ----------
    policies : sequence of str
        The policies to compare.
    reference : str, optional
        The run the others are compared against.

    Raises
    ------
    PolicyError
        An empty list or name, a name listed twice (at ``policies``), or a reference not
        among them (at ``reference``).

    Examples
    --------
    >>> from fairshare import api
    >>> api.validate_comparison(["fifo", "fair"], reference="fair")
    >>> api.validate_comparison(["fifo", "fifo"])
    Traceback (most recent call last):
    ...
    fairshare.errors.PolicyError: policies: policy 'fifo' is listed twice
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
    at: tuple[float, Callable[[Policy], None]] | None = None,
    progress: Callable[[float, int], None] | None = None,
) -> Run:
    """Simulate ``workload`` (from :func:`workload_of`) under ``policy``: the step of
    :func:`simulate` after the jobs are known. ``jobs`` replaces ``workload.jobs`` (the same
    jobs, observed on the way: a progress bar); ``at`` looks at the policy at a time
    (:func:`fairshare.sim.engine.simulate`'s ``at``: ``fairshare explain``).

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
    at : (float, callable), optional
        ``(T, look)``: ``look(policy)`` sees the policy as it stands at time T.
    progress : callable, optional
        ``progress(now, launched)``, told the simulated time and the task attempts launched
        every few thousand events (:func:`fairshare.sim.engine.simulate`).

    Returns
    -------
    Run

    Raises
    ------
    PolicyError
        An unknown policy (:class:`UnknownPolicy`), or options it does not combine with.
    """
    from fairshare.sim.reference import REFERENCE_POLICIES, make_reference  # noqa: PLC0415

    validate_policy(policy, options)
    if scenario.usage_half_life is not None and (
        options is None or options.usage_half_life is None
    ):
        # The scenario's half-life, unless the run sets its own (SPEC section 8.3).
        options = replace(options or SimOptions(), usage_half_life=scenario.usage_half_life)
    scheduler = (
        make_reference(policy, workload.cluster, users=scenario.users, queues=scenario.queues)
        if policy in REFERENCE_POLICIES
        else policy
    )
    machine_events, job_events = _run_events(scenario.events)
    log = simulate_jobs(
        workload.cluster,
        jobs if jobs is not None else workload.jobs,
        scheduler,
        seed=seed,
        users=scenario.users,
        queues=scenario.queues,
        options=options,
        machine_events=machine_events,
        job_events=job_events,
        at=at,
        progress=progress,
    )
    return Run(log)


def _run_events(events: Sequence[ScenarioEvent]) -> tuple[list[MachineEvent], list[JobEvent]]:
    """A scenario's ``events`` as the simulator's machine and job events."""
    machine_events: list[MachineEvent] = []
    job_events: list[JobEvent] = []
    for event in events:
        target = event.target
        if event.kind == "machine_joins":
            assert isinstance(target, Machine)
            machine_events.append(MachineEvent(event.time, "add", target))
            continue
        assert isinstance(target, str)
        if event.kind == "machine_fails":
            machine_events.append(MachineEvent(event.time, "remove", target))
        else:
            job_events.append(
                JobEvent(
                    event.time, "cancel" if event.kind == "cancel_job" else "cancel_user", target
                )
            )
    return machine_events, job_events


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
    found: list[tuple[str, str]] = []
    for job in screen_unrunnable(workload, found, until):
        if until is not None and job.submit > until:
            break  # the rest are not read
    return found


def screen_unrunnable(
    workload: Workload, found: list[tuple[str, str]], until: float | None = None
) -> Iterator[Job]:
    """The jobs of ``workload`` as they are read, each job that can never run appended to
    ``found`` with the reason as it passes (the check of :func:`unrunnable_jobs`).

    A run given this stream (``replay(..., jobs=...)``) finds the jobs that can never run
    while it reads them, so a trace is read once, not once for the check and once for the
    run; ``found`` is complete once the run has read every job submitted by ``until``.

    Parameters
    ----------
    workload : Workload
        The jobs and the cluster (:func:`workload_of`).
    found : list of (str, str)
        Where each such job's name and reason are appended, in submission order.
    until : float, optional
        Jobs submitted after it are passed on unchecked (``SimOptions.until``).

    Yields
    ------
    Job
        Every job of the workload, in its order.

    Examples
    --------
    >>> from fairshare import api
    >>> scenario = api.parse_scenario(
    ...     {"machines": [{"name": "m", "capacity": {"cpu": 2}}],
    ...      "jobs": [{"name": "big", "submit": 0, "tasks": 1, "duration": 5,
    ...                "demand": {"cpu": 4}}]},
    ...     source="too-big",
    ... )
    >>> found = []
    >>> [job.name for job in api.screen_unrunnable(api.workload_of(scenario), found)]
    ['big']
    >>> found
    [('big', 'its task demand (cpu 4) fits on no machine')]
    """
    from fairshare.workload.eligibility import TaskFit  # noqa: PLC0415

    fit = TaskFit(workload.cluster.machines, workload.cluster.resources)
    for job in workload.jobs:
        if until is None or job.submit <= until:
            reason = fit.never_runs(job)
            if reason is not None:
                found.append((job.name, reason))
        yield job


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
        An empty or repeated list, an unknown policy (:class:`UnknownPolicy`), a reference
        not compared, or options a policy does not combine with.

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
    validate_comparison(names, reference)
    for name in names:
        validate_policy(name, options, "policies")
    loaded = _scenario(scenario)
    runs = []
    for name in names:
        workload = workload_of(loaded, seed=seed, trace=trace)
        runs.append(replay(loaded, workload, name, seed=seed, options=options))
    return Comparison(tuple(runs), names.index(reference) if reference is not None else 0)


def whatif_policies(
    policy: str | None, before_policy: str | None = None, after_policy: str | None = None
) -> tuple[str, str]:
    """The policies of a what-if's two runs: ``before_policy`` and ``after_policy``, each
    defaulting to ``policy``.

    Parameters
    ----------
    policy : str or None
        The policy of both runs.
    before_policy, after_policy : str or None
        The policy of one run, instead of ``policy``.

    Returns
    -------
    (str, str)

    Raises
    ------
    PolicyError
        A run without a policy (naming ``policy``), or an unknown one.

    Examples
    --------
    >>> whatif_policies("drf"), whatif_policies("drf", after_policy="hdrf")
    (('drf', 'drf'), ('drf', 'hdrf'))
    """
    old = before_policy if before_policy is not None else policy
    new = after_policy if after_policy is not None else policy
    if old is None or new is None:
        raise PolicyError(
            "policy",
            "name the online policy of both runs: policy, or before_policy and after_policy",
        )
    validate_policy(old, None, "before_policy" if before_policy is not None else "policy")
    validate_policy(new, None, "after_policy" if after_policy is not None else "policy")
    return old, new


JobsObserver = Callable[[str, int, Iterator[Job]], Iterator[Job]]
"""Sees the jobs of one run as the simulator takes them: called with the run's label
(``before`` or ``after``), its seed and the jobs, returns the same jobs (a progress bar)."""


def _after_cluster(
    old: Scenario, new: Scenario, workload: Workload, trace: TraceLike | None
) -> Cluster:
    """The machines of the AFTER run: AFTER's, as the jobs' source gives them (a trace may
    bring its node list, or add attributes to the scenario's machines)."""
    if new is old or workload.cluster is old.cluster:
        return workload.cluster if new is old else new.cluster
    assert trace is not None  # only a trace replaces the scenario's cluster
    from fairshare.workload.traces import open_trace  # noqa: PLC0415

    fmt, path = _trace(trace)
    # Opening a trace reads its machines; its jobs are streamed, and not read here.
    return open_trace(fmt, path, new.cluster).cluster


def whatif(
    before: ScenarioLike,
    after: ScenarioLike,
    *,
    policy: str | None = None,
    before_policy: str | None = None,
    after_policy: str | None = None,
    seed: int = 0,
    seeds: int = 1,
    trace: TraceLike | None = None,
    options: SimOptions | None = None,
    observe: JobsObserver | None = None,
    runner: ReplayRunner | None = None,
) -> WhatIf:
    """Replay the same jobs under two configurations (SPEC section 8.4): who waits longer?

    The jobs are the trace's, else ``before``'s ``jobs`` or ``workload`` (drawn from each
    seed); they are read once per seed and replayed on ``before``'s machines, users and
    queues under ``before_policy``, and on ``after``'s under ``after_policy``, with the same
    seed (the same task durations and input blocks). A trace is read against ``before``'s
    machines.

    Parameters
    ----------
    before, after : Scenario or path
        The old and the new configuration (the same one with two policies is fine).
    policy : str, optional
        The online policy of both runs, unless ``before_policy`` / ``after_policy`` is given.
    before_policy, after_policy : str, optional
        The policy of one run.
    seed : int
        The first seed.
    seeds : int
        How many seeds: ``seed, seed + 1, ..., seed + seeds - 1``, a pair of runs each.
    trace : str or (str, path), optional
        ``"FORMAT:PATH"``: replay a trace's jobs.
    options : SimOptions, optional
        Both runs' options.
    observe : callable, optional
        Sees each run's jobs as they are submitted (:data:`JobsObserver`); in this process
        only, so not with ``runner``.
    runner : callable, optional
        Makes the runs, given all of them at once (:data:`ReplayRunner`: a sweep executor's
        workers or a Ray cluster, :func:`fairshare.experiments.whatif_runs.executor_runner`);
        by default they are made here, one after the other.

    Returns
    -------
    WhatIf

    Raises
    ------
    ScenarioError
        A scenario or the trace breaks its format.
    PolicyError
        No policy, an unknown one, options a policy does not combine with, ``seeds`` below 1.

    Examples
    --------
    Two tenants whose weights swap: ``b`` loses.

    >>> import fairshare
    >>> def scenario(wa, wb):
    ...     return fairshare.parse_scenario(
    ...         {"machines": [{"name": "m", "capacity": {"slots": 4}}],
    ...          "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
    ...          "jobs": [{"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4,
    ...                    "duration": 10} for k in range(6) for u in "ab"]},
    ...         source=f"a{wa}-b{wb}")
    >>> result = fairshare.whatif(scenario(1, 3), scenario(3, 1), policy="drf")
    >>> result.tenants_frame().row(0, named=True)["user"], result.verdicts()
    ('b', (1, 1))
    """
    old_policy, new_policy = whatif_policies(policy, before_policy, after_policy)
    validate_policy(old_policy, options, "before_policy" if before_policy else "policy")
    validate_policy(new_policy, options, "after_policy" if after_policy else "policy")
    if seeds < 1:
        raise PolicyError("seeds", f"must be at least 1, got {seeds}")
    old = _scenario(before)
    new = old if after is before else _scenario(after)
    requests: list[ReplayRequest] = []
    unrunnable: list[tuple[str, str]] = []
    warnings: tuple[str, ...] = ()
    for k in range(seeds):
        run_seed = seed + k
        workload = workload_of(old, seed=run_seed, trace=trace)
        # Read (or drawn) once, replayed twice: the jobs are immutable.
        jobs = list(workload.jobs)
        if k == 0:
            warnings = tuple(workload.warnings)  # the trace's skipped records
            until = options.until if options is not None else None
            if until is not None and options is not None:  # the run stops there, scaled
                until *= options.load_scale
            unrunnable = unrunnable_jobs(Workload(iter(jobs), workload.cluster), until)
        requests += [
            ReplayRequest("before", old, workload.cluster, old_policy, run_seed, options, jobs),
            ReplayRequest(
                "after",
                new,
                _after_cluster(old, new, workload, trace),
                new_policy,
                run_seed,
                options,
                jobs,
            ),
        ]
    if runner is not None:
        runs = list(runner(requests))
    else:
        runs = [request.run(observe) for request in requests]
    pairs = [(runs[k], runs[k + 1]) for k in range(0, len(runs), 2)]
    return WhatIf(tuple(pairs), old.source, new.source, tuple(unrunnable), warnings)


@dataclass(frozen=True)
class ReplayRequest:
    """One run of a :func:`whatif`: the jobs, replayed on a configuration under a policy.
    Picklable, so that another process or a Ray worker can make it (:meth:`run`).

    Parameters
    ----------
    label : str
        ``"before"`` or ``"after"``.
    scenario : Scenario
        The configuration's users and queues.
    cluster : Cluster
        Its machines.
    policy : str
        The online policy.
    seed : int
        The run's seed.
    options : SimOptions or None
        The run's options.
    jobs : list of Job
        The jobs, in submit order (read once, replayed by both runs of a seed).
    """

    label: str
    scenario: Scenario
    cluster: Cluster
    policy: str
    seed: int
    options: SimOptions | None
    jobs: list[Job]

    def run(self, observe: JobsObserver | None = None) -> Run:
        """Make the run (:func:`replay`).

        Parameters
        ----------
        observe : callable, optional
            Sees the jobs as they are submitted (:data:`JobsObserver`).

        Returns
        -------
        Run
        """
        stream: Iterator[Job] = iter(self.jobs)
        if observe is not None:
            stream = observe(self.label, self.seed, stream)
        return replay(
            self.scenario,
            Workload(iter(()), self.cluster),
            self.policy,
            seed=self.seed,
            options=self.options,
            jobs=stream,
        )


def run_replay(request: ReplayRequest) -> Run:
    """``request.run()``: a module-level function, for executors that pickle what they call.

    Parameters
    ----------
    request : ReplayRequest

    Returns
    -------
    Run
    """
    return request.run()


ReplayRunner = Callable[[Sequence[ReplayRequest]], Sequence[Run]]
"""Makes a :func:`whatif`'s runs, all given at once; returns them in the same order."""


ConfigLike = str | Path | dict[str, Any]
"""A configuration for the gate: a scenario file's path, or its contents."""


def _config(
    config: ConfigLike, name: str, trace: TraceLike | None = None
) -> tuple[Scenario, dict[str, Any]]:
    """The validated scenario and the document its properties are evaluated on. A scenario
    that lists no machines takes the trace's, when its format brings them (SPEC section 3),
    and so does the document."""
    from fairshare.workload.loader import read_scenario_file  # noqa: PLC0415

    source = name if isinstance(config, dict) else str(config)
    document = dict(config) if isinstance(config, dict) else read_scenario_file(config)
    if not isinstance(document, dict):
        return parse_scenario(document, source), {}  # it says what is wrong
    machines_from = None
    if trace is not None and not document.get("machines"):
        from fairshare.workload.traces import machines_from_trace  # noqa: PLC0415

        machines_from = machines_from_trace(*_trace(trace), source)
    scenario = parse_scenario(document, source, machines_from)
    if machines_from is not None:
        document["machines"] = [
            _machine_entry(m, scenario.cluster.resources) for m in scenario.cluster.machines
        ]
        document.setdefault("resources", list(scenario.cluster.resources))
    return scenario, document


def _machine_entry(machine: Machine, resources: Sequence[str]) -> dict[str, Any]:
    """A machine as a scenario file lists it (``machines[i]``)."""
    entry: dict[str, Any] = {
        "name": machine.name,
        "capacity": {r: float(v) for r, v in zip(resources, machine.capacity, strict=True)},
    }
    if machine.rack is not None:
        entry["rack"] = machine.rack
    if machine.attributes:
        entry["attributes"] = dict(machine.attributes)
    return entry


def check_change(
    before: ConfigLike,
    after: ConfigLike,
    *,
    policy: str,
    trace: TraceLike | None = None,
    seed: int = 0,
    options: SimOptions | None = None,
    max_wait_increase: float = 0.2,
) -> ChangeCheck:
    """The regression gate of a configuration change (SPEC section 8.4): does a property that
    held before fail after, or does a tenant's p95 wait grow by more than
    ``max_wait_increase``?

    The waits come from :func:`whatif` (the same jobs under both configurations); a p95 wait's
    growth is :func:`fairshare.metrics.whatif.wait_growth` (a wait under one second counts as
    one second). The properties are evaluated on each configuration's tenants under the
    policy's offline counterpart, and a property that fails after is shrunk to a minimal
    counterexample (:mod:`fairshare.fairness.gate`).

    Parameters
    ----------
    before, after : path or dict
        The configurations: scenario files, or their contents.
    policy : str
        The online policy.
    trace : str or (str, path), optional
        ``"FORMAT:PATH"``: the jobs to replay.
    seed : int
        The runs' seed.
    options : SimOptions, optional
        The runs' options.
    max_wait_increase : float
        The growth of a tenant's p95 wait allowed, as a fraction (0.2: 20%).

    Returns
    -------
    ChangeCheck

    Raises
    ------
    ScenarioError
        A configuration or the trace breaks its format.
    PolicyError
        An unknown policy, options it does not combine with, or a negative
        ``max_wait_increase``.

    Examples
    --------
    >>> def config(wa, wb):
    ...     return {"machines": [{"name": "m", "capacity": {"cpu": 4}}],
    ...             "users": [{"name": "a", "weight": wa}, {"name": "b", "weight": wb}],
    ...             "jobs": [{"name": f"{u}{k}", "user": u, "submit": 0, "tasks": 4,
    ...                       "duration": 10} for k in range(6) for u in "ab"]}
    >>> gate = check_change(config(3, 1), config(1, 3), policy="drf")
    >>> gate.passed, [(f["kind"], f["user"]) for f in gate.failures]
    (False, [('wait', 'a')])
    >>> check_change(config(3, 1), config(3, 1), policy="drf").passed
    True
    """
    from fairshare.fairness.gate import evaluate, minimal_counterexample  # noqa: PLC0415
    from fairshare.metrics.whatif import wait_growth  # noqa: PLC0415

    if not max_wait_increase >= 0 or max_wait_increase == float("inf"):
        raise PolicyError(
            "max_wait_increase", f"must be a finite fraction >= 0, got {max_wait_increase}"
        )
    validate_policy(policy, options)
    old, old_doc = _config(before, "before", trace)
    new, new_doc = _config(after, "after", trace)
    result = whatif(old, new, policy=policy, seed=seed, trace=trace, options=options)
    failures: list[dict[str, object]] = []
    tenants: list[dict[str, object]] = []
    for row in result.tenants_frame().iter_rows(named=True):
        growth = wait_growth(row["wait_p95_before"], row["wait_p95_after"])
        tenants.append(
            {
                "user": row["user"],
                "wait_p95_before": row["wait_p95_before"],
                "wait_p95_after": row["wait_p95_after"],
                "growth": growth,
            }
        )
        if growth is not None and growth > max_wait_increase:
            failures.append(
                {
                    "kind": "wait",
                    "user": row["user"],
                    "property": None,
                    "detail": f"p95 wait {row['wait_p95_before']:g} s -> "
                    f"{row['wait_p95_after']:g} s (+{100 * growth:.0f}%, more than the "
                    f"{100 * max_wait_increase:g}% allowed)",
                    "counterexample": None,
                }
            )
    properties: list[dict[str, object]] = []
    old_verdicts = {v.property: v for v in evaluate(old_doc, policy)}
    for verdict in evaluate(new_doc, policy):
        was = old_verdicts.get(verdict.property)
        properties.append(
            {
                "property": verdict.property,
                "solver": verdict.solver,
                "before": was.verdict if was is not None else None,
                "after": verdict.verdict,
            }
        )
        if was is None or was.verdict != "holds" or verdict.verdict != "violated":
            continue
        found = minimal_counterexample(new_doc, verdict)
        assert found is not None and verdict.violation is not None
        scenario, violation = found
        failures.append(
            {
                "kind": "property",
                "user": violation.focus[0] if violation.focus else None,
                "property": verdict.property,
                "detail": f"holds before, fails after under {verdict.solver}: "
                f"{verdict.violation.explanation}",
                "counterexample": {
                    "scenario": scenario,
                    "explanation": violation.explanation,
                    "solver": verdict.solver,
                },
            }
        )
    return ChangeCheck(
        policy, max_wait_increase, tuple(failures), tuple(properties), tuple(tenants), result
    )
