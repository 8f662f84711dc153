"""A driver's flat attempt list made into columns (``AttemptRows.from_flat``), against sorting
the attempts as tuples.

The columns must hold the attempts in the log's order, by (start, job order, phase name,
task, attempt), whatever order the driver appended them in, with each attempt's machine,
finish, locality and flags kept with it; names are stored once and indexed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster import Cluster, Machine
from fairshare.runlog import LOCALITIES, PHASES, ROW_FIELDS, AttemptRows, _lexicographic_order
from fairshare.sim import SimOptions, run_state, simulate
from fairshare.workload.model import FixedDuration, Job

from conftest import scaled_examples

ATTEMPTS = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.5, 1.0, 2.25]),  # start: few values, so ties are common
        st.integers(0, 3),  # job order
        st.sampled_from(PHASES),
        st.integers(0, 3),  # task
        st.integers(0, 2),  # attempt
        st.sampled_from(["m0", "m1", "m2"]),
        st.sampled_from([1.0, 3.5, 9.0]),  # finish
        st.sampled_from([None, *LOCALITIES]),
    ),
    max_size=30,
    unique_by=lambda row: row[:5],  # the five keys are unique per attempt
)


@settings(max_examples=scaled_examples(300), deadline=None)
@given(ATTEMPTS, st.data())
def test_columns_are_the_attempts_sorted_as_tuples(
    attempts: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    flat: list[Any] = [item for row in attempts for item in row]
    offsets = [k * ROW_FIELDS for k in range(len(attempts))]
    killed = set(data.draw(st.lists(st.sampled_from(offsets), unique=True))) if offsets else set()
    truncated = (
        set(data.draw(st.lists(st.sampled_from(offsets), unique=True))) if offsets else set()
    )
    rows = AttemptRows.from_flat(flat, killed=killed, truncated=truncated)

    expected = sorted(
        (*row, k * ROW_FIELDS in killed, k * ROW_FIELDS in truncated)
        for k, row in enumerate(attempts)
    )
    got = list(
        zip(
            rows.start.tolist(),
            rows.order.tolist(),
            rows.names("phase"),
            rows.task.tolist(),
            rows.attempt.tolist(),
            rows.names("machine"),
            rows.finish.tolist(),
            rows.names("locality"),
            rows.killed.tolist(),
            rows.truncated.tolist(),
            strict=True,
        )
    )
    assert got == expected
    assert sorted(rows.machine_names) == sorted({row[5] for row in attempts})
    assert all(not column.flags.writeable for column in (rows.start, rows.machine, rows.killed))


@settings(max_examples=scaled_examples(300), deadline=None)
@given(
    st.lists(st.sampled_from([-0.0, 0.0, 0.5, 2.25, 7.0]), min_size=2, max_size=40),
    st.booleans(),  # the starts ascending, as a driver appends them
    st.lists(
        st.sampled_from([(0, 3), (-5, 5), (0, 2**40), (-(2**62), 2**62)]), min_size=1, max_size=4
    ),
    st.data(),
)
def test_the_packed_order_is_lexsorts(
    starts: list[float],
    ascending: bool,
    spans: list[tuple[int, int]],
    data: st.DataObject,
) -> None:
    """``_lexicographic_order`` is ``np.lexsort``'s permutation, ties in row order: one packed
    key when the columns fit 62 bits and the starts ascend (-0.0 equal to 0.0), else
    ``np.lexsort`` itself."""
    n = len(starts)
    start = np.array(sorted(starts) if ascending else starts)
    columns = [
        np.array(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)))
        for lo, hi in spans
    ]
    for keys in ((start, *columns), tuple(columns)):
        expected = np.lexsort(keys[::-1])
        assert _lexicographic_order(keys).tolist() == expected.tolist()


@settings(max_examples=scaled_examples(200), deadline=None)
@given(ATTEMPTS, st.data())
def test_pieces_cut_where_the_start_changes_concat_to_the_whole(
    attempts: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    """A driver's list in start order, cut into pieces at start-time changes (as the
    simulator spills it, ``RunState.spill``): the pieces' columns, concatenated, are the
    whole list's."""
    rows_in_order = sorted(attempts, key=lambda row: row[0])  # appended as they start
    flat: list[Any] = [item for row in rows_in_order for item in row]
    offsets = [k * ROW_FIELDS for k in range(len(rows_in_order))]
    killed = set(data.draw(st.lists(st.sampled_from(offsets), unique=True))) if offsets else set()
    changes = [
        k for k in range(1, len(rows_in_order)) if rows_in_order[k][0] != rows_in_order[k - 1][0]
    ]
    cuts = sorted(data.draw(st.lists(st.sampled_from(changes), unique=True))) if changes else []
    pieces = []
    for lo, hi in zip([0, *cuts], [*cuts, len(rows_in_order)], strict=True):
        part = flat[lo * ROW_FIELDS : hi * ROW_FIELDS]
        own = [o - lo * ROW_FIELDS for o in killed if lo * ROW_FIELDS <= o < hi * ROW_FIELDS]
        pieces.append(AttemptRows.from_flat(part, killed=own, truncated=[]))
    whole = AttemptRows.from_flat(flat, killed=killed, truncated=[])
    joined = AttemptRows.concat(pieces)
    assert joined.machine_names == whole.machine_names
    for a, b in zip(joined, whole, strict=True):
        assert (a == b) if isinstance(a, tuple) else a.tolist() == b.tolist()


JOBS = st.lists(
    st.tuples(
        st.integers(0, 20),  # submit
        st.sampled_from(["u0", "u1", "u2"]),
        st.integers(1, 6),  # tasks
        st.integers(1, 15),  # duration
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=scaled_examples(60), deadline=None)
@given(
    JOBS,
    st.sampled_from(["fifo", "fair", "drf"]),
    st.booleans(),
    st.sampled_from([None, 12.0]),
    st.integers(1, 4),
)
def test_a_spilled_run_records_the_same_attempts(
    jobs: list[tuple[int, str, int, int]],
    policy: str,
    preempt: bool,
    until: float | None,
    every: int,
) -> None:
    """Whatever the policy, preemption's kills and ``until``'s truncations: a run whose
    attempt list is spilled every ``every`` rows records the attempts a run without a spill
    does."""

    cluster = Cluster.build(
        ["slots"], [Machine("m0", np.array([2.0])), Machine("m1", np.array([3.0]))]
    )
    made = [
        Job(f"j{k}", float(submit), user, np.array([1.0]), tasks, FixedDuration(float(seconds)))
        for k, (submit, user, tasks, seconds) in enumerate(sorted(jobs, key=lambda j: j[0]))
    ]
    options = SimOptions(preemption=(1.0, 2.0) if preempt else None, until=until)

    def columns() -> list[list[Any]]:
        rows = simulate(cluster, made, policy, seed=0, options=options).attempt_columns().rows
        return [rows.names("machine"), *(c.tolist() for c in rows if hasattr(c, "tolist"))]

    whole = columns()
    saved = run_state.SPILL_ROWS
    run_state.SPILL_ROWS = every
    try:
        spilled = columns()
    finally:
        run_state.SPILL_ROWS = saved
    assert spilled == whole
