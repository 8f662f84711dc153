"""A seeded corpus of wide-range scenarios for the LP policies, and its run.

Every number of a scenario (capacities, demands, weights, caps) is drawn log-uniformly from
a window of :data:`LOW` to :data:`HIGH` (1e-6 to 1e9; a demand sized to fit the smallest
machine may be smaller, down to 1.3e-7 in the corpus); each scenario has several users and
machines, some with whitelists or label constraints, some users capped (``max_tasks`` or
``max_share``) and some in a queue with a ``max_share``. It is the shape of the failing case
of the LP policies' robustness work: 5 users on 7 machines, capacities from 21 to 380,123 and
demands from 0.0006 to 8, on which tsf, drfh and cdrf used to end in "HiGHS could not solve
the level LP: Unknown". Each scenario is valid input: every user may use some machine, and no
minimum shares (which may not fit) are drawn.

:func:`run_corpus` solves every scenario with every LP policy (divisible and integral; or
any solver policies, :data:`ALL_POLICIES` for all of them) and counts failures: a raised
:class:`~fairshare.errors.FairshareError` other than a request the policy cannot serve
(several resources for a one-resource policy), and allocations the invariant checks reject
as printed (:func:`fairshare.allocation.printed_allocation`).
``benchmarks/lp_corpus.py`` prints the counts and the time per solve; the figures are in
``docs/performance.md``.

Examples
--------
>>> first = corpus_scenario(0)
>>> sorted(first), len(first["users"]) >= 2
(['machines', 'queues', 'resources', 'users'], True)
>>> corpus_scenario(0) == first
True
"""

from __future__ import annotations

import copy
import signal
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairshare.allocation import check_allocation, printed_allocation
from fairshare.errors import FairshareError
from fairshare.solvers import SOLVER_POLICIES, InvalidRequest, solve
from fairshare.workload.loader import parse_scenario

LOW = 1e-6
"""The smallest number a corpus scenario holds."""
HIGH = 1e9
"""The largest number a corpus scenario holds."""
SIZE = 1000
"""Scenarios in the corpus."""
SEED = 30
"""The corpus's seed: scenario ``k`` is drawn from ``numpy.random.default_rng((SEED, k))``."""
LP_POLICIES = ("cmmf", "tsf", "drfh", "cdrf")
"""The solver policies whose allocations come from HiGHS LPs (progressive filling)."""
ALL_POLICIES = tuple(SOLVER_POLICIES)
"""Every solver policy: the corpus holds every one to its caps (a queue's ``max_share``
included), not only the LP ones."""
_RESOURCES = ("cpu", "mem", "gpu")


def _log_uniform(rng: np.random.Generator, low: float, high: float, size: int) -> list[float]:
    """``size`` numbers log-uniform in ``[low, high]``, as Python floats."""
    return [float(x) for x in np.exp(rng.uniform(np.log(low), np.log(high), size))]


def _window(rng: np.random.Generator, decades: float) -> tuple[float, float]:
    """A sub-range of ``[LOW, HIGH]`` spanning up to ``decades`` orders of magnitude."""
    span = float(rng.uniform(1.0, decades))
    start = float(rng.uniform(np.log10(LOW), np.log10(HIGH) - span))
    return 10.0**start, 10.0 ** (start + span)


def corpus_scenario(index: int, seed: int = SEED) -> dict[str, Any]:
    """Scenario ``index`` of the corpus, as a scenario document.

    Parameters
    ----------
    index : int
        The scenario's number (0 to :data:`SIZE` - 1, though any number draws one).
    seed : int
        The corpus's seed.

    Returns
    -------
    dict
        ``resources``, ``machines`` (2 to 8 entries, some with a ``count``; attributes
        ``a0`` to ``a2``), ``queues`` (one capped queue or none) and ``users`` (2 to 7;
        weights, caps, whitelists and constraints drawn).
    """
    rng = np.random.default_rng((seed, index))
    resources = list(_RESOURCES[: int(rng.integers(1, 4))])
    r = len(resources)
    cap_low, cap_high = _window(rng, 9.0)
    machines: list[dict[str, Any]] = []
    for m in range(int(rng.integers(2, 9))):
        capacity = dict(zip(resources, _log_uniform(rng, cap_low, cap_high, r), strict=True))
        machine: dict[str, Any] = {
            "name": f"m{m}",
            "capacity": capacity,
            "attributes": {f"a{k}": bool(rng.random() < 0.5) for k in range(3)},
        }
        if rng.random() < 0.3:
            machine["count"] = int(rng.integers(2, 5))
        machines.append(machine)
    names = [
        f"{m['name']}-{c}" if "count" in m else m["name"]
        for m in machines
        for c in range(int(m.get("count", 1)))
    ]
    smallest = min(min(m["capacity"].values()) for m in machines)
    dem_low, dem_high = _window(rng, 7.0)
    # demands at most the largest capacity, so that some machine may run each user's task
    dem_high = min(dem_high, cap_high)
    dem_low = min(dem_low, dem_high / 10)
    queues: list[dict[str, Any]] = []
    users: list[dict[str, Any]] = []
    for u in range(int(rng.integers(2, 8))):
        demand = dict(zip(resources, _log_uniform(rng, dem_low, dem_high, r), strict=True))
        if rng.random() < 0.3:
            # a task that fits even the smallest machine: the capacities' low end
            demand = {
                k: min(v, smallest * float(rng.uniform(0.01, 1.0))) for k, v in demand.items()
            }
        user: dict[str, Any] = {"name": f"u{u}", "demand": demand}
        if rng.random() < 0.6:
            user["weight"] = _log_uniform(rng, 1e-3 if rng.random() < 0.7 else LOW, 1e3, 1)[0]
        draw = rng.random()
        if draw < 0.2:
            user["max_tasks"] = _log_uniform(rng, max(LOW, 1e-3), HIGH, 1)[0]
        elif draw < 0.3:
            user["max_share"] = _log_uniform(rng, max(LOW, 1e-3), HIGH, 1)[0]
        draw = rng.random()
        if draw < 0.25:
            chosen = rng.choice(len(names), size=int(rng.integers(1, len(names) + 1)))
            user["machines"] = sorted({names[int(k)] for k in chosen})
        elif draw < 0.45:
            user["constraint"] = f"a{int(rng.integers(0, 3))}"
        users.append(user)
    if rng.random() < 0.3:
        queues.append({"path": "q", "max_share": _log_uniform(rng, 1e-2, 1e6, 1)[0]})
        for k in rng.choice(len(users), size=min(2, len(users)), replace=False):
            users[int(k)]["queue"] = "q"
    return {"resources": resources, "machines": machines, "queues": queues, "users": users}


def corpus(size: int = SIZE, seed: int = SEED) -> Iterator[dict[str, Any]]:
    """The corpus's scenario documents in order.

    Parameters
    ----------
    size : int
        How many scenarios.
    seed : int
        The corpus's seed.

    Yields
    ------
    dict
        :func:`corpus_scenario` ``(k, seed)`` for k from 0.
    """
    for k in range(size):
        yield corpus_scenario(k, seed)


@dataclass
class CorpusRun:
    """What :func:`run_corpus` found.

    Attributes
    ----------
    solves : int
        The solves run (a policy that cannot serve a scenario, such as a one-resource policy
        on two resources, is not counted).
    failures : list of str
        One line per failed solve: ``scenario policy mode: what``.
    seconds : dict
        Per (policy, mode): the wall seconds of each solve.
    """

    solves: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def median(self, policy: str, mode: str) -> float:
        """The median seconds of ``policy``'s solves in ``mode`` (``divisible``/``integral``).

        Parameters
        ----------
        policy, mode : str
            The policy and the mode.

        Returns
        -------
        float
        """
        return statistics.median(self.seconds.get((policy, mode), [0.0]))


def run_corpus(
    size: int = SIZE,
    seed: int = SEED,
    policies: tuple[str, ...] = LP_POLICIES,
    *,
    integral: tuple[bool, ...] = (False, True),
    check: bool = True,
    limit: float = 20.0,
) -> CorpusRun:
    """Solve every scenario of the corpus with every policy and count the failures.

    Parameters
    ----------
    size, seed : int
        The corpus.
    policies : tuple of str
        Solver policies.
    integral : tuple of bool
        The modes to run.
    check : bool
        Also check each allocation as printed (``check_allocation`` of
        :func:`~fairshare.allocation.printed_allocation`); False times the solves alone.
    limit : float
        Seconds a solve may take before it counts as a failure (``timeout``; a wall-clock
        alarm, so the run must be on the main thread of a Unix process): a guard against a
        solve that would not end, as the integral walks once did on scenario 287 (a user
        of weight 4e-6 owed 6.3e10 tasks).

    Returns
    -------
    CorpusRun
    """
    out = CorpusRun()

    def expired(signum: int, frame: object) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expired)
    try:
        _run(out, size, seed, policies, integral, check, limit)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return out


class _Timeout(FairshareError):
    """A solve ran past the corpus run's limit."""


def _run(
    out: CorpusRun,
    size: int,
    seed: int,
    policies: tuple[str, ...],
    integral: tuple[bool, ...],
    check: bool,
    limit: float,
) -> None:
    """The loop of :func:`run_corpus`."""
    for k, document in enumerate(corpus(size, seed)):
        scenario = parse_scenario(copy.deepcopy(document), f"corpus[{k}]")
        for policy in policies:
            for whole in integral:
                mode = "integral" if whole else "divisible"
                start = time.perf_counter()
                signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    allocation = solve(scenario, policy, integral=whole)
                except _Timeout:
                    out.failures.append(f"{k} {policy} {mode}: timeout: over {limit:g} s")
                    out.solves += 1
                    continue
                except InvalidRequest as err:
                    if "single resource" in str(err):
                        continue
                    out.failures.append(f"{k} {policy} {mode}: {err}")
                    out.solves += 1
                    continue
                except FairshareError as err:
                    out.failures.append(f"{k} {policy} {mode}: {err}")
                    out.solves += 1
                    continue
                except Exception as err:  # a crash is a failure to count
                    out.failures.append(f"{k} {policy} {mode}: crash: {err!r}")
                    out.solves += 1
                    continue
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                out.seconds.setdefault((policy, mode), []).append(time.perf_counter() - start)
                out.solves += 1
                if check:
                    wrong = check_allocation(scenario, allocation)
                    if wrong:
                        out.failures.append(f"{k} {policy} {mode}: checks: {wrong[0]}")
                        continue
                    wrong = check_allocation(scenario, printed_allocation(scenario, allocation))
                    if wrong:
                        out.failures.append(f"{k} {policy} {mode}: as printed: {wrong[0]}")
