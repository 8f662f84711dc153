"""The simulator's attempt rows spilled in pieces during the run, and ``tasks.parquet``
written in row groups (issue 32, bounded memory): every output of every golden run is
byte-identical when the attempt rows are spilled after every few of them (``tasks.parquet``:
the same schema and rows), and the spilled log's columns equal the unspilled one's.

``fairshare.sim.run_state.SPILL_ROWS`` is lowered so that the goldens' small runs spill
hundreds of times: pieces cut by preemption's kills, ``until``'s truncations, reducers
waiting for their maps (``reduce`` rows open for the whole map phase), copy-compute
splitting and delay scheduling's ties at one time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import fairshare
from fairshare.metrics import tables
from fairshare.runlog import AttemptRows
from fairshare.sim import SimOptions, run_state
from test_simulate_outputs import CASES, EXAMPLES, golden, outputs


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("name", [n for n in CASES if n != "compare-constraints"])
def test_spilled_runs_write_the_golden_bytes(
    name: str, rows: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_state, "SPILL_ROWS", rows)
    assert outputs(name, tmp_path) == golden()[name]


@pytest.mark.parametrize("name", ["section-5.3-fair-ccs", "online-tsf", "sticky-fair-delay"])
def test_tasks_in_row_groups_are_the_golden_rows(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Row groups of 5 attempts through pyarrow: the rows polars wrote in one group."""
    monkeypatch.setattr(tables, "TASK_ROW_GROUP", 5)
    assert outputs(name, tmp_path) == golden()[name]
    groups = pq.ParquetFile(tmp_path / "out" / "tasks.parquet").metadata.num_row_groups
    assert groups > 1


def _columns(rows: AttemptRows) -> list[list[object]]:
    return [
        rows.start.tolist(),
        rows.order.tolist(),
        rows.names("phase"),
        rows.task.tolist(),
        rows.attempt.tolist(),
        rows.names("machine"),
        rows.finish.tolist(),
        rows.killed.tolist(),
        rows.names("locality"),
        rows.truncated.tolist(),
    ]


@pytest.mark.parametrize(
    ("example", "policy", "options"),
    [
        ("sim-fair-section-5.3.yaml", "fair", SimOptions(copy_compute_splitting=True)),
        ("sim-two-jobs.yaml", "fair", SimOptions(preemption=(1.0, 2.0), until=25.0)),
        ("sim-choosy-constraints.yaml", "choosy", SimOptions()),
    ],
)
def test_spilled_columns_equal_the_unspilled(
    example: str, policy: str, options: SimOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = fairshare.simulate(EXAMPLES / example, policy, seed=3, options=options).log
    monkeypatch.setattr(run_state, "SPILL_ROWS", 1)
    spilled = fairshare.simulate(EXAMPLES / example, policy, seed=3, options=options).log
    a, b = whole.attempt_columns().rows, spilled.attempt_columns().rows
    assert a.machine_names == b.machine_names
    assert _columns(a) == _columns(b)
    assert len(a.start) >= 6


def test_concat_keeps_machine_first_use_and_flags() -> None:
    """Machine codes are remapped to the merged first-use order; flags stay per row."""
    first = AttemptRows.from_flat([0.0, 0, "map", 0, 0, "b", 1.0, "node"], [0], [])
    second = AttemptRows.from_flat(
        [2.0, 1, "map", 0, 0, "a", 3.0, None, 2.0, 0, "reduce", 0, 0, "b", 4.0, None],
        [],
        [8],
    )
    rows = AttemptRows.concat([first, second])
    assert rows.machine_names == ("b", "a")
    assert rows.names("machine") == ["b", "b", "a"]  # job 0's reduce sorts before job 1
    assert rows.killed.tolist() == [True, False, False]
    assert rows.truncated.tolist() == [False, True, False]
    assert np.array_equal(rows.order, [0, 0, 1])
    empty = AttemptRows.concat([])
    assert empty.start.size == 0
