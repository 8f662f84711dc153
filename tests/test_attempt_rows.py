"""A driver's flat attempt list made into columns (``AttemptRows.from_flat``), against sorting
the attempts as tuples.

The columns must hold the attempts in the log's order, by (start, job order, phase name,
task, attempt), whatever order the driver appended them in, with each attempt's machine,
finish, locality and flags kept with it; names are stored once and indexed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.runlog import LOCALITIES, PHASES, ROW_FIELDS, AttemptRows

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
