"""Probes: measurements of a cell's run beyond its ``summary.json``, for the papers'
figures that need them (``fairshare reproduce``, :mod:`fairshare.experiments.targets`).

A probe is named by a :class:`Probe` (a name in :data:`PROBES` and its parameters as JSON
text), so a cell that carries one stays plain data: it crosses process and Ray boundaries,
and its id (:func:`fairshare.experiments.grid_model.cell_id`) covers it. Each probe is a pure
function of the run (and, for ``versus``, of a second run of the same scenario, seed and
options under another policy) that returns columns to add to the cell's row; a list or a
mapping is one column of JSON text, as in :func:`fairshare.experiments.cells.flat_summary`.

- ``running``, ``{"times": [T, ...]}``: the column ``running_at``, per user its running
  tasks at each time (TSF Figure 5, H-DRF Figure 9);
- ``versus``, ``{"policy": P}``: columns ``versus_*``, P's run against this one (Choosy
  Table 1's slowdown, Figure 8's RMSE and Table 2's run time; TSF Figures 10-11's per-job
  and per-task differences); with ``"windows": [[FROM, TO], ...]`` also the mean RMSE in
  each window (Choosy Figures 10-11: users joining, then leaving);
- ``jobs``, ``{"users": [U, ...], "during": D}``: the column ``job_spans``, per listed user
  its jobs' ``[name, submit, finish]`` in submission order (H-DRF Figure 11b's per-job
  improvement needs each job's finish under two policies), and with ``during`` the column
  ``running_median``, per listed user the time-weighted median of its running tasks from
  the first submission of user D's jobs to their last finish (H-DRF Figure 11a: n1,1's
  median throughput while n1,2's jobs run).

Examples
--------
>>> import fairshare
>>> from fairshare.experiments.probes import Probe, run_probe
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 8, "duration": 10},
...               {"name": "b", "submit": 1, "tasks": 4, "duration": 10}]},
...     source="two-jobs",
... )
>>> run = fairshare.simulate(scenario, "fair")
>>> run_probe(Probe.of("running", times=[0.5, 12.0]), run, scenario)
{'running_at': '{"a":[4,2],"b":[0,2]}'}
>>> columns = run_probe(Probe.of("versus", policy="fifo"), run, scenario)
>>> columns["versus_rmse_mean"], json.loads(columns["versus_slowdown_bins"])[0]["jobs"]
(0.3333333333333333, 1)
>>> columns = run_probe(Probe.of("jobs", users=["a", "b"], during="b"), run, scenario)
>>> columns["job_spans"], columns["running_median"]
('{"a":[["a",0.0,30.0]],"b":[["b",1.0,30.0]]}', '{"a":2,"b":2}')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from fairshare.api import Run, Scenario, SimOptions, simulate
from fairshare.metrics import (
    RunFrames,
    Timeline,
    allocation_rmse,
    relative_slowdown,
    run_frames,
    timeline,
)

__all__ = ["PROBES", "TSF_BIN_BOUNDS", "TSF_BIN_LABELS", "Probe", "run_probe"]

TSF_BIN_BOUNDS = (10, 100, 500)
"""TSF section VI-B2's job bins by tasks (inclusive upper bounds): small, medium, big; huge
above."""
TSF_BIN_LABELS = ("<=10", "11-100", "101-500", ">500")
"""The labels of TSF's job bins."""


@dataclass(frozen=True)
class Probe:
    """A probe of a cell: its name (a key of :data:`PROBES`) and parameters (canonical JSON).

    Parameters
    ----------
    name : str
        The probe.
    params : str
        Its parameters, as JSON text with sorted keys.
    """

    name: str
    params: str

    @classmethod
    def of(cls, name: str, **params: object) -> Probe:
        """The probe ``name`` with ``params`` (checked to name a probe)."""
        if name not in PROBES:
            raise ValueError(f"unknown probe {name!r}; allowed: {', '.join(PROBES)}")
        return cls(name, json.dumps(params, sort_keys=True, separators=(",", ":")))

    def arguments(self) -> dict[str, object]:
        """The parameters as a mapping."""
        found = json.loads(self.params)
        assert isinstance(found, dict)
        return found


def _json(value: object) -> str:
    """Compact JSON text (one column)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _running(
    run: Run, scenario: Scenario, options: SimOptions, params: Mapping[str, object]
) -> dict[str, object]:
    """Each user's running tasks at each of ``params["times"]``."""
    times = params["times"]
    assert isinstance(times, list)
    tl = timeline(run.log)
    found: dict[str, list[int]] = {}
    for i, user in enumerate(tl.users):
        rows = tl.by_user[tl.user[tl.by_user] == i]
        values = []
        for t in times:
            before = rows[tl.time[rows] <= float(t)]
            values.append(int(tl.running[before[-1]]) if before.size else 0)
        found[user] = values
    return {"running_at": _json(found)}


def _mean(values: np.ndarray) -> float | None:
    """The mean of finite values, None for none."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def _versus(
    run: Run, scenario: Scenario, options: SimOptions, params: Mapping[str, object]
) -> dict[str, object]:
    """``params["policy"]``'s run of the same scenario, seed and options, against this one.

    - ``versus_slowdown_bins``: Choosy Table 1, the other run's jobs' slowdown relative to
      this run, by their duration here (:func:`fairshare.metrics.relative_slowdown`);
    - ``versus_rmse_mean``: Choosy Figure 8, the time-weighted mean RMSE of the two runs'
      sorted dominant shares (:func:`fairshare.metrics.allocation_rmse`);
    - ``versus_wall_seconds``: the other run's simulation time (Choosy Table 2);
    - ``versus_job_bins``: TSF Figure 10, per job bin by tasks, the mean of this run's
      completion time minus the other's, over this run's (positive: the other is faster);
    - ``versus_task_delay``, ``versus_task_later``: TSF Figure 11, the other run's mean
      task queueing delay (first start minus submit), and the fraction of tasks that waited
      longer here than there;
    - ``versus_rmse_windows`` (only with ``params["windows"]``): per window ``[FROM, TO]``,
      the time-weighted mean RMSE in it (Choosy Figures 10-11), as JSON text.
    """
    policy = params["policy"]
    assert isinstance(policy, str)
    other = simulate(scenario, policy, seed=run.seed, options=options)
    here, there = run_frames(run.log), run_frames(other.log)
    series = allocation_rmse(other.log, run.log)
    rmse = series.stats()["mean"]
    index = {name: i for i, name in enumerate(there.job_names)}
    mine = np.array([index.get(n, -1) for n in here.job_names], dtype=np.int64)
    shared = mine >= 0
    done_here = here.finish - here.submit
    done_there = np.full(done_here.shape, np.nan)
    done_there[shared] = there.finish[mine[shared]] - there.submit[mine[shared]]
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = (done_here - done_there) / done_here
    which = np.searchsorted(np.asarray(TSF_BIN_BOUNDS), here.tasks, side="left")
    bins = []
    for b, label in enumerate(TSF_BIN_LABELS):
        values = gain[(which == b) & np.isfinite(gain)]
        bins.append(
            {
                "bin": label,
                "jobs": int(values.size),
                "mean": float(values.mean()) if values.size else None,
                "std": float(values.std()) if values.size else None,
            }
        )
    delay_here, delay_there = _task_delays(here), _task_delays(there)
    keys = sorted(set(delay_here) & set(delay_there))
    later = sum(delay_here[k] > delay_there[k] + 1e-9 for k in keys)
    windows: dict[str, object] = {}
    if "windows" in params:
        found = params["windows"]
        assert isinstance(found, list)
        windows["versus_rmse_windows"] = _json(
            [series.mean_between(float(a), float(b)) for a, b in found]
        )
    return {
        **windows,
        "versus_slowdown_bins": _json(relative_slowdown(other.log, run.log)),
        "versus_rmse_mean": rmse,
        "versus_wall_seconds": other.log.wall_seconds,
        "versus_job_bins": _json(bins),
        "versus_task_delay": _mean(np.array(list(delay_there.values()), dtype=np.float64)),
        "versus_task_later": later / len(keys) if keys else None,
    }


def _jobs(
    run: Run, scenario: Scenario, options: SimOptions, params: Mapping[str, object]
) -> dict[str, object]:
    """The listed users' job spans and, with ``params["during"]``, their median running
    tasks while that user's jobs run (module docstring). A finish the run did not reach is
    None; the window of a ``during`` whose jobs did not all finish ends at the run's last
    event."""
    users = params["users"]
    assert isinstance(users, list)
    f = run_frames(run.log)
    index = {name: i for i, name in enumerate(f.users)}
    spans: dict[str, list[list[object]]] = {}
    for user in users:
        i = index.get(str(user), -1)
        mine = np.flatnonzero(f.job_user == i) if i >= 0 else np.zeros(0, dtype=np.int64)
        mine = mine[np.argsort(f.submit[mine], kind="stable")]
        spans[str(user)] = [
            [
                f.job_names[int(j)],
                float(f.submit[j]),
                float(f.finish[j]) if np.isfinite(f.finish[j]) else None,
            ]
            for j in mine
        ]
    columns: dict[str, object] = {"job_spans": _json(spans)}
    during = params.get("during")
    if during is not None:
        d = index.get(str(during), -1)
        window = np.flatnonzero(f.job_user == d) if d >= 0 else np.zeros(0, dtype=np.int64)
        medians: dict[str, int | None] = {}
        if window.size:
            start = float(f.submit[window].min())
            ends = f.finish[window]
            if np.isfinite(ends).all():
                end = float(ends.max())
            else:
                done = f.finish[np.isfinite(f.finish)]
                end = max(float(f.a_finish.max(initial=start)), float(done.max(initial=start)))
            tl = timeline(run.log)
            for user in users:
                i = index.get(str(user), -1)
                medians[str(user)] = _median_running(tl, i, start, end) if i >= 0 else 0
        else:
            medians = {str(user): None for user in users}
        columns["running_median"] = _json(medians)
    return columns


def _median_running(tl: Timeline, user: int, start: float, end: float) -> int | None:
    """The time-weighted median of the user's running tasks over ``[start, end)``: the
    least count it ran at most for at least half of that time (None for an empty window)."""
    if not end > start:
        return None
    rows = tl.by_user[tl.user[tl.by_user] == user]
    t, r = tl.time[rows], tl.running[rows]
    before = int(np.searchsorted(t, start, side="right"))
    first = int(r[before - 1]) if before else 0
    inside = (t > start) & (t < end)
    times = np.concatenate([[start], t[inside], [end]])
    values = np.concatenate([[first], r[inside]])
    widths = np.diff(times)
    order = np.argsort(values, kind="stable")
    held = np.cumsum(widths[order])
    k = int(np.searchsorted(held, 0.5 * held[-1], side="left"))
    return int(values[order][min(k, order.size - 1)])


def _task_delays(f: RunFrames) -> dict[tuple[str, int, int], float]:
    """Per task (job, phase, index), its first attempt's start minus its job's submit."""
    first = f.a_attempt == 0
    delays = f.a_start[first] - f.submit[f.a_job[first]]
    jobs, phases, tasks = f.a_job[first], f.a_phase[first], f.a_task[first]
    return {
        (f.job_names[int(j)], int(p), int(t)): float(d)
        for j, p, t, d in zip(
            jobs.tolist(), phases.tolist(), tasks.tolist(), delays.tolist(), strict=True
        )
    }


PROBES: dict[
    str, Callable[[Run, Scenario, SimOptions, Mapping[str, object]], dict[str, object]]
] = {
    "running": _running,
    "versus": _versus,
    "jobs": _jobs,
}
"""The probes by name."""


def run_probe(
    probe: Probe, run: Run, scenario: Scenario, options: SimOptions | None = None
) -> dict[str, object]:
    """The columns ``probe`` measures on ``run`` (of ``scenario``).

    Parameters
    ----------
    probe : Probe
        The probe.
    run : Run
        The cell's run.
    scenario : Scenario
        Its scenario (``versus`` runs another policy on it).
    options : SimOptions, optional
        The run's options (``versus`` runs the other policy with them).

    Returns
    -------
    dict of str to object
    """
    return PROBES[probe.name](run, scenario, options or SimOptions(), probe.arguments())
