"""Bounded memory at the end of a run (issue 32 item 2): the attempts' spill file and the
timeline's running sums in chunks.

The spill file (:class:`fairshare.runlog.AttemptSpill`) must give back the same table as the
pieces kept in memory and concatenated (:meth:`AttemptRows.concat`), and the timeline walked
a few events at a time (``fairshare.metrics.timeline.TIMELINE_CHUNK`` lowered) must be the
same to the bit as the one walked in one pass: the golden digests of ``timeline.csv`` and
``summary.json`` (``tests/test_simulate_outputs.py``) are only as good as the chunk boundaries
they happen to cross, which at their sizes is none.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairshare
from fairshare.runlog import AttemptRows, AttemptSpill, RunLog
from fairshare.sim import SimOptions, run_state
from test_simulate_outputs import CASES, EXAMPLES, golden, outputs

timeline_module = importlib.import_module("fairshare.metrics.timeline")

COLUMNS = (
    "start",
    "order",
    "phase",
    "task",
    "attempt",
    "machine",
    "finish",
    "killed",
    "locality",
    "truncated",
)


def _flat(rows: list[tuple[float, int, str, int, str, float]]) -> list[object]:
    out: list[object] = []
    for start, order, phase, task, machine, finish in rows:
        out += [start, order, phase, task, 0, machine, finish, None]
    return out


def _same_rows(a: AttemptRows, b: AttemptRows) -> None:
    assert a.machine_names == b.machine_names
    for name in COLUMNS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert x.tobytes() == y.tobytes(), name


def test_spill_file_gives_back_the_concatenated_pieces() -> None:
    """Three pieces (one empty) with machines first used in different pieces, a killed and
    a truncated attempt: the file's table is concat's, machine codes renumbered."""
    pieces = [
        AttemptRows.from_flat(
            _flat([(0.0, 0, "map", 0, "m3", 4.0), (0.0, 1, "map", 0, "m1", 2.5)]), [8], []
        ),
        AttemptRows.from_flat([], [], []),
        AttemptRows.from_flat(_flat([(1.0, 0, "reduce", 0, "m2", 9.0)]), [], [0]),
    ]
    last = AttemptRows.from_flat(
        _flat([(2.0, 1, "copy", 0, "m1", 3.0), (2.0, 1, "map", 1, "m4", 6.0)]), [], [8]
    )
    spill = AttemptSpill()
    for piece in pieces:
        spill.append(piece)
    assert spill.spilled == 3
    rows = spill.rows(last)
    _same_rows(rows, AttemptRows.concat([*pieces, last]))
    assert rows.names("machine") == ["m3", "m1", "m2", "m1", "m4"]
    assert rows.killed.tolist() == [False, True, False, False, False]
    assert rows.truncated.tolist() == [False, False, True, False, True]
    assert spill.file is None  # closed: the anonymous file is gone
    assert not rows.start.flags.writeable


def test_nothing_spilled_is_the_last_piece_itself() -> None:
    last = AttemptRows.from_flat(_flat([(0.0, 0, "map", 0, "m", 1.0)]), [], [])
    spill = AttemptSpill()
    assert spill.rows(last) is last
    assert spill.file is None


def _timeline_arrays(log: RunLog, chunk: int, monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    monkeypatch.setattr(timeline_module, "TIMELINE_CHUNK", chunk)
    tl = timeline_module._timeline(log)
    return [a.tobytes() for a in (tl.time, tl.user, tl.running, tl.share, tl.by_user)]


RUNS = [
    ("sim-fair-section-5.3.yaml", "fair", SimOptions(copy_compute_splitting=True)),
    ("sim-two-jobs.yaml", "fair", SimOptions(preemption=(1.0, 2.0), until=25.0)),
    ("sim-choosy-constraints.yaml", "choosy", SimOptions()),
    ("sim-hdrf-section-5.2.yaml", "hdrf", SimOptions()),
]


@pytest.mark.parametrize(("example", "policy", "options"), RUNS)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_timeline_in_chunks_is_the_one_pass_timeline(
    example: str,
    policy: str,
    options: SimOptions,
    chunk: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chunks of 1 to 64 attempts: every boundary falls inside a user's events, between
    events of one time, at a user's first event; the rows are those of one pass."""
    log = fairshare.simulate(EXAMPLES / example, policy, seed=3, options=options).log
    whole = _timeline_arrays(log, 1 << 30, monkeypatch)
    assert len(whole[0]) >= 8 * 5  # rows enough to cross many boundaries
    assert _timeline_arrays(log, chunk, monkeypatch) == whole


_SCENARIO = {
    "resources": ["cpu", "mem", "gpu"],
    "machines": [
        {"name": f"m{i}", "capacity": {"cpu": 8, "mem": 16 + i, "gpu": i % 2}} for i in range(5)
    ],
    "workload": {
        "generator": "zipf",
        "jobs": 12,
        "arrival": 3,
        "users": 3,
        "demand": [{"cpu": 1, "mem": 1.3}, {"cpu": 0.7, "mem": 3.1, "gpu": 0.5}, {"cpu": 2.2}],
        "duration": {"exponential": {"mean": 7}},
    },
}


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    policy=st.sampled_from(["drf", "fair", "fifo"]),
    chunk=st.integers(1, 300),
)
def test_timeline_chunks_never_move_a_bit(seed: int, policy: str, chunk: int) -> None:
    """Three resources of fractional demands (float residue in every running sum), three
    users, any chunk: the same rows as one pass."""
    scenario = fairshare.parse_scenario(_SCENARIO, source="zipf")
    log = fairshare.simulate(scenario, policy, seed=seed).log
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(timeline_module, "TIMELINE_CHUNK", 1 << 30)
        one = timeline_module._timeline(log)
        patch.setattr(timeline_module, "TIMELINE_CHUNK", chunk)
        chunked = timeline_module._timeline(log)
    for name in ("time", "user", "running", "share", "by_user"):
        a, b = getattr(one, name), getattr(chunked, name)
        assert a.dtype == b.dtype
        assert np.array_equal(a, b), name


@pytest.mark.parametrize("name", ["section-5.3-fair-ccs", "online-tsf", "two-jobs-drf"])
def test_golden_runs_spilled_and_walked_in_chunks(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file of a golden run, byte for byte, with the attempts spilled to the file
    every row and the timeline walked five events at a time."""
    assert name in CASES
    monkeypatch.setattr(run_state, "SPILL_ROWS", 1)
    monkeypatch.setattr(timeline_module, "TIMELINE_CHUNK", 5)
    assert outputs(name, tmp_path) == golden()[name]


def _all_columns(log: RunLog) -> tuple[tuple[str, ...], list[bytes]]:
    rows = log.attempt_columns().rows
    return rows.machine_names, [getattr(rows, name).tobytes() for name in COLUMNS]


@pytest.mark.parametrize(
    "options",
    [
        SimOptions(preemption=(1.0, 2.0), until=200.0),
        SimOptions(reduce_slowstart=0.05),
        SimOptions(reduce_slowstart=0.05, copy_compute_splitting=True, preemption=(1.0, 2.0)),
    ],
)
@pytest.mark.parametrize("items", [1, 3, 10])
def test_attempts_spilled_while_they_run_are_rewritten(
    options: SimOptions, items: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attempts spilled while their task still runs, then killed by preemption, cut by
    ``until``, or given their end when their job's maps finish (reducers launched early):
    the table read back is the unspilled run's, and the rewrites did happen."""
    scenario = fairshare.parse_scenario(
        {
            "machines": [{"name": f"m{i}", "capacity": {"slots": 4}} for i in range(4)],
            "workload": {
                "generator": "facebook-2009",
                "jobs": 12,
                "arrival": 5,
                "users": 3,
                "duration": {"exponential": {"mean": 30}},
            },
        },
        source="fb",
    )
    whole = _all_columns(fairshare.simulate(scenario, "fair", seed=1, options=options).log)
    rewrites: list[tuple[bool, bool]] = []
    patch = AttemptSpill.patch

    def counted(
        self: AttemptSpill, row: int, finish: float, *, killed: bool, truncated: bool
    ) -> None:
        rewrites.append((killed, truncated))
        patch(self, row, finish, killed=killed, truncated=truncated)

    monkeypatch.setattr(AttemptSpill, "patch", counted)
    monkeypatch.setattr(run_state, "SPILL_ROWS", items)
    spilled = fairshare.simulate(scenario, "fair", seed=1, options=options).log
    assert _all_columns(spilled) == whole
    assert len(rewrites) >= 5
    if options.preemption is not None:
        assert any(killed for killed, _ in rewrites)
    if options.until is not None:
        assert any(truncated for _, truncated in rewrites)
