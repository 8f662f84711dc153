"""Outputs from the spill file a chunk at a time (issue 32 item 2): the pieces of the streamed
path against their definitions, and a run's files written with tiny spills, chunks and row
groups against the same run held in memory.

:func:`fairshare.metrics.totals.run_totals`, :func:`fairshare.metrics.timeline.
timeline_batches` and ``tasks.parquet``'s writer read the attempts a chunk at a time; a run
long enough to spill reads them from its spill file (:class:`fairshare.runlog.SpilledRows`).
Every file must be the same bytes whatever the chunk (the golden digests of
``tests/test_simulate_outputs.py`` pin the unchunked bytes).
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairshare
from fairshare.metrics.timeline import resample, segmented_cumsum, share_integrals
from fairshare.metrics.totals import ExactSum, run_totals
from fairshare.report import write_outputs
from fairshare.runlog import AttemptRows, RunLog, SpilledRows, attempt_chunks
from fairshare.sim import SimOptions, run_state

from conftest import scaled_examples

timeline_module = importlib.import_module("fairshare.metrics.timeline")
totals_module = importlib.import_module("fairshare.metrics.totals")
tables_module = importlib.import_module("fairshare.metrics.tables")

_FINITE = st.floats(-1e30, 1e30, allow_nan=False, allow_infinity=False)


@settings(max_examples=scaled_examples(60), deadline=None)
@given(parts=st.lists(st.lists(_FINITE, max_size=20), max_size=8))
def test_exact_sum_of_parts_is_fsum_of_all(parts: list[list[float]]) -> None:
    """Busy time is summed a chunk at a time; the result must be ``math.fsum`` of every
    value at once (correctly rounded), whatever the cut."""
    total = ExactSum()
    for part in parts:
        total.add(part)
    assert total.value() == math.fsum(v for part in parts for v in part)


def test_exact_sum_keeps_what_one_rounding_would_lose() -> None:
    total = ExactSum()
    total.add([1e16])
    total.add([1.0])
    total.add([1.0, -1e16])
    assert total.value() == 2.0  # a float sum of the parts' sums gives 0.0 or 4.0


@settings(max_examples=scaled_examples(60), deadline=None)
@given(
    lengths=st.lists(st.integers(1, 40), min_size=1, max_size=12),
    data=st.data(),
)
def test_segmented_cumsum_is_each_segments_cumsum(lengths: list[int], data: Any) -> None:
    """Each segment's sums are ``np.cumsum`` of its start value and its values, bit for
    bit (segments of every length bucket side by side)."""
    values = np.array(
        data.draw(st.lists(_FINITE, min_size=sum(lengths), max_size=sum(lengths))),
        dtype=np.float64,
    )
    carry = np.array(
        data.draw(st.lists(_FINITE, min_size=len(lengths), max_size=len(lengths))),
        dtype=np.float64,
    )
    seg_len = np.array(lengths, dtype=np.int64)
    seg_start = np.cumsum(seg_len) - seg_len
    got = segmented_cumsum(values, seg_start, seg_len, carry)
    for j, (lo, n) in enumerate(zip(seg_start.tolist(), lengths, strict=True)):
        want = np.cumsum(np.concatenate([[carry[j]], values[lo : lo + n]]))[1:]
        assert got[lo : lo + n].tobytes() == want.tobytes()
    # Columns summed together over one layout: each column's bits as summed alone.
    both = segmented_cumsum(
        np.stack([values, values[::-1]], axis=1), seg_start, seg_len, np.stack([carry, -carry], 1)
    )
    reversed_alone = segmented_cumsum(values[::-1].copy(), seg_start, seg_len, -carry)
    assert both[:, 0].tobytes() == got.tobytes()
    assert both[:, 1].tobytes() == reversed_alone.tobytes()


_SCENARIO = {
    "resources": ["cpu", "mem"],
    "machines": [
        {"name": f"m{i}", "rack": f"r{i % 2}", "capacity": {"cpu": 4, "mem": 7 + i}}
        for i in range(4)
    ],
    "workload": {
        "generator": "facebook-2009",
        "jobs": 14,
        "arrival": 4,
        "users": 3,
        "demand": [{"cpu": 1, "mem": 1.3}, {"cpu": 0.7, "mem": 2.1}],
        "duration": {"exponential": {"mean": 20}},
    },
}

RUNS = [
    ("fair", SimOptions(preemption=(1.0, 2.0), until=300.0)),
    ("drf", SimOptions(reduce_slowstart=0.05, copy_compute_splitting=True)),
    ("fifo", SimOptions()),
]


def _files(directory: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(directory.iterdir()):
        if path.suffix == ".parquet":
            frame = pl.read_parquet(path)
            out[path.name] = (str(frame.schema) + "\n" + frame.write_csv()).encode()
        elif path.name == "summary.json":
            out[path.name] = b"\n".join(
                line for line in path.read_bytes().splitlines() if b"wall_seconds" not in line
            )
        else:
            out[path.name] = path.read_bytes()
    return out


def _run(policy: str, options: SimOptions) -> RunLog:
    scenario = fairshare.parse_scenario(_SCENARIO, source="fb")
    return fairshare.simulate(scenario, policy, seed=2, options=options).log


def _small(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    monkeypatch.setattr(run_state, "SPILL_ROWS", size)
    monkeypatch.setattr(totals_module, "ATTEMPT_CHUNK", size)
    monkeypatch.setattr(timeline_module, "TIMELINE_CHUNK", size)
    monkeypatch.setattr(tables_module, "TASK_ROW_GROUP", size)


@pytest.mark.parametrize(("policy", "options"), RUNS)
@pytest.mark.parametrize("size", [1, 2, 5, 17])
def test_tiny_spills_and_chunks_write_the_in_memory_files(
    policy: str, options: SimOptions, size: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every output file of a run with kills, truncations, early reducers and split copy
    parts: spilled every ``size`` attempts, read ``size`` at a time, written in row groups
    of ``size``, the files are those of the run held in memory in one chunk."""
    whole = _run(policy, options)
    assert whole.attempt_table() is not None
    assert not isinstance(whole.attempt_table(), SpilledRows)
    write_outputs(whole, tmp_path / "whole")
    _small(monkeypatch, size)
    log = _run(policy, options)
    assert isinstance(log.attempt_table(), SpilledRows)
    assert log.attempt_count > 5 * size  # many chunks

    def never(_self: RunLog) -> AttemptRows:
        raise AssertionError("the streamed outputs read the whole spill file back")

    monkeypatch.setattr(RunLog, "_read_rows", never)
    write_outputs(log, tmp_path / "small")
    assert _files(tmp_path / "small") == _files(tmp_path / "whole")


@pytest.mark.parametrize("size", [1, 4, 50])
def test_totals_from_the_spill_file_are_those_in_memory(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = run_totals(_run("fair", RUNS[0][1]))
    _small(monkeypatch, size)
    spilled = run_totals(_run("fair", RUNS[0][1]))
    for name in whole.__dataclass_fields__:
        a, b = getattr(whole, name), getattr(spilled, name)
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes(), name
        else:
            assert a == b, name
    assert whole.killed > 0


@settings(max_examples=scaled_examples(25), deadline=None)
@given(lo=st.integers(0, 400), width=st.integers(0, 400), size=st.integers(1, 64))
def test_spilled_rows_read_any_range(lo: int, width: int, size: int) -> None:
    """A range of the spill file, across pieces and patched rows, is the same range of
    the table read whole."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_state, "SPILL_ROWS", size)
        log = _run("fair", RUNS[0][1])
    table = log.attempt_table()
    assert isinstance(table, SpilledRows)
    whole = table.read(0, len(table))
    part = table.read(lo, lo + width)
    want = whole.slice(lo, lo + width)
    for name in AttemptRows._fields:
        a, b = getattr(part, name), getattr(want, name)
        assert (a == b) if name == "machine_names" else a.tobytes() == b.tobytes(), name
    chunks = [rows for _, rows in attempt_chunks(table, size)]
    assert sum(len(rows.start) for rows in chunks) == len(table)


@pytest.mark.parametrize(("policy", "options"), RUNS)
@pytest.mark.parametrize("size", [1, 3, 40])
def test_timeline_view_is_resample_and_integrals_of_the_timeline(
    policy: str, options: SimOptions, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's resampled shares and the summary's share integrals, followed batch by
    batch, are :func:`resample` and :func:`share_integrals` of the whole timeline, bit for
    bit (horizons inside and past the run, a grid finer than the rows)."""
    log = _run(policy, options)
    tl = timeline_module.timeline(log)
    assert len(tl) > 20
    monkeypatch.setattr(timeline_module, "TIMELINE_CHUNK", size)
    monkeypatch.setattr(timeline_module, "_PAIRS", size)
    end = float(tl.time.max())
    for horizon, points in ((end, 400), (end / 3, 7), (end * 2, 1)):
        view = timeline_module.timeline_view(log, horizon, points)
        grid = np.linspace(0.0, horizon, points + 1)
        assert view.rows == len(tl)
        assert view.integrals.tobytes() == share_integrals(tl, horizon).tobytes()
        assert view.resampled.tobytes() == resample(tl, grid).tobytes()
