"""What the Python API returns: a :class:`Solution` of :func:`fairshare.api.solve`, a
:class:`Run` of :func:`fairshare.api.simulate` and a :class:`Comparison` of
:func:`fairshare.api.compare`.

Each holds the result as computed (the scenario and its allocation, the run's log, the runs of a
comparison) and gives its documents (SPEC section 2's allocation, ``summary.json``,
``compare.json``), its tables as polars DataFrames, and, for runs and comparisons, the output
files of ``fairshare simulate`` and ``fairshare compare`` (SPEC section 3). Polars, the metrics
and the report are loaded when first used. The names are exported by :mod:`fairshare.api` and
the top-level package.

Examples
--------
>>> import fairshare
>>> scenario = fairshare.parse_scenario(
...     {"machines": [{"name": "m", "capacity": {"slots": 4}}],
...      "jobs": [{"name": "a", "submit": 0, "tasks": 4, "duration": 10}]},
...     source="one-job",
... )
>>> run = fairshare.simulate(scenario, "fifo")
>>> type(run).__name__, run.policy, run.seed, run.summary["makespan"]
('Run', 'fifo', 0, 10.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from fairshare import __version__
from fairshare.allocation import Allocation, allocation_document
from fairshare.runlog import RunLog
from fairshare.workload import Scenario

if TYPE_CHECKING:
    import polars as pl

    from fairshare.metrics.intervals import Interval

__all__ = ["ChangeCheck", "Comparison", "Run", "Solution", "WhatIf"]


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
        """Tasks per user name (fractional for a divisible allocation), exact as in the JSON
        document.

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
            ``policy``, ``integral``, per user its ``tasks`` and ``share``, the
            placement for the policies that place tasks, and ``fairshare_version`` (the
            build that computed it).

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
        return {
            **allocation_document(self.scenario, self.allocation),
            "fairshare_version": __version__,
        }

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
        per-user figures. Floats exact (JSON never rounds); None where undefined."""
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


@dataclass(frozen=True)
class WhatIf:
    """The same jobs replayed under two configurations, per seed (SPEC section 8.4, the
    result of :func:`fairshare.api.whatif`).

    Attributes
    ----------
    pairs : tuple of (Run, Run)
        Per seed, in seed order, the run under the old configuration and under the new one.
    before, after : str
        Where each configuration came from (the scenarios' sources).
    unrunnable : tuple of (str, str)
        The jobs of the first seed that can never run on the old configuration's machines,
        with the reason (:func:`fairshare.api.unrunnable_jobs`).
    warnings : tuple of str
        The trace reader's ``warning:`` lines (records it skipped), from the first seed.
    """

    pairs: tuple[tuple[Run, Run], ...]
    before: str
    after: str
    unrunnable: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    _frames: list[pl.DataFrame] = field(default_factory=list, repr=False, compare=False)

    @property
    def seeds(self) -> list[int]:
        """The seeds, one per pair of runs."""
        return [old.seed for old, _ in self.pairs]

    def tenants_frame(self) -> pl.DataFrame:
        """``tenants.csv`` as a polars DataFrame: per tenant its wait, slowdown and share
        before and after, who loses most first (:func:`fairshare.metrics.whatif.tenants_frame`;
        with several seeds, the means over them and the interval of ``delta_wait_p95``).

        Returns
        -------
        polars.DataFrame
        """
        if not self._frames:
            from fairshare.metrics.whatif import tenants_frame, tenants_over_seeds  # noqa: PLC0415

            frames = [tenants_frame(old.log, new.log) for old, new in self.pairs]
            self._frames.extend(frames)
            self._frames.append(frames[0] if len(frames) == 1 else tenants_over_seeds(frames))
        return self._frames[-1]

    def seed_frames(self) -> list[pl.DataFrame]:
        """:meth:`tenants_frame` of each seed's pair of runs alone, in seed order.

        Returns
        -------
        list of polars.DataFrame
        """
        self.tenants_frame()
        return self._frames[:-1]

    def verdicts(self) -> tuple[int, int]:
        """How many tenants wait longer at the 95th percentile, and how many less.

        Returns
        -------
        (int, int)
        """
        from fairshare.metrics.whatif import tenant_verdicts  # noqa: PLC0415

        return tenant_verdicts(self.tenants_frame())

    def intervals(self) -> dict[str, Interval]:
        """Per tenant, ``delta_wait_p95`` over the seeds: mean and 95% interval.

        Returns
        -------
        dict of str to Interval
        """
        from fairshare.metrics.intervals import mean_interval  # noqa: PLC0415
        from fairshare.metrics.whatif import tenants_frame  # noqa: PLC0415

        values: dict[str, list[float | None]] = {}
        for old, new in self.pairs:
            for row in tenants_frame(old.log, new.log).iter_rows(named=True):
                values.setdefault(row["user"], []).append(row["delta_wait_p95"])
        return {user: mean_interval(v) for user, v in values.items()}

    def write(self, out_dir: str | Path) -> dict[str, object]:
        """Write ``tenants.csv``, ``summary.json``, ``report.html`` and the first seed's runs'
        files in ``before/`` and ``after/`` into ``out_dir``.

        Parameters
        ----------
        out_dir : str or path
            The directory (created if missing).

        Returns
        -------
        dict
            The ``summary.json`` document.
        """
        from fairshare.report.whatif import write_whatif  # noqa: PLC0415

        return write_whatif(
            [(old.log, new.log) for old, new in self.pairs],
            Path(out_dir),
            self.before,
            self.after,
            frames=(self.seed_frames(), self.tenants_frame()),
        )


@dataclass(frozen=True)
class ChangeCheck:
    """The verdict of the regression gate on a configuration change (SPEC section 8.4,
    :func:`fairshare.api.check_change`, ``fairshare check --before --after``).

    Attributes
    ----------
    policy : str
        The online policy of both runs.
    max_wait_increase : float
        The largest growth of a tenant's p95 wait allowed, as a fraction.
    failures : tuple of dict
        What fails, each ``{"kind": "wait" | "property", "user", "property", "detail",
        "counterexample"}`` (``user`` or ``property`` null when not one).
    properties : tuple of dict
        Each property evaluated: ``{"property", "solver", "before", "after"}`` with verdicts
        ``holds``, ``violated`` or ``undecided``.
    tenants : tuple of dict
        Each tenant's ``{"user", "wait_p95_before", "wait_p95_after", "growth"}``, in
        ``tenants.csv``'s order.
    whatif : WhatIf
        The runs the waits come from.
    """

    policy: str
    max_wait_increase: float
    failures: tuple[dict[str, object], ...]
    properties: tuple[dict[str, object], ...]
    tenants: tuple[dict[str, object], ...]
    whatif: WhatIf

    @property
    def passed(self) -> bool:
        """True when nothing fails (``check`` exits 0)."""
        return not self.failures

    def to_dict(self) -> dict[str, object]:
        """The ``--json`` document (``docs/whatif.md``, "The gate's JSON").

        Returns
        -------
        dict
        """
        return {
            "passed": self.passed,
            "policy": self.policy,
            "before": self.whatif.before,
            "after": self.whatif.after,
            "max_wait_increase": self.max_wait_increase,
            "failures": [dict(f) for f in self.failures],
            "properties": [dict(p) for p in self.properties],
            "tenants": [dict(t) for t in self.tenants],
        }
