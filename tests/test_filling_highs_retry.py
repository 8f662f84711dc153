"""HiGHS's retry from scratch in progressive filling (``FillingLP.solve``, Choosy section 5.1,
Algorithm 1): every LP HiGHS does not solve warm-started is solved once more from scratch
before its status counts.

- The regression input: 7 single-resource users on 4 machine types (3, 1, 2 and 3 machines),
  user 0 alone in a queue capped at 1 task. HiGHS 1.16, warm-started from the second round's
  basis, stopped the third level LP in status Unknown, which was raised as "HiGHS could not
  solve the level LP: Unknown". Solved from scratch it is optimal; the allocation is the one
  derived by hand, the one the papers' per-user model gives, and sound as a CMMF allocation.
- The rule itself, for the level LP and the freeze tests alike: a warm-started solve made to
  stop short (an iteration limit of 0) is retried from scratch and gives the unforced result.
- A level LP no step of the chain solves (no iteration allowed) is bisected over
  feasibility LPs, which presolve decides; minimum shares that do not fit are still an
  ``InvalidRequest``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import highspy
import numpy as np
import pytest

from fairshare.allocation import check_allocation
from fairshare.solvers import filling_lp, solve
from fairshare.solvers.errors import InvalidRequest
from fairshare.solvers.filling_lp import progressive_filling
from fairshare.solvers.filling_model import FillingLP
from fairshare.solvers.filling_problem import FillingProblem
from fairshare.workload.loader import parse_scenario

from conftest import choosy_figure_1_problem

TOLERANCE = 1e-9

# types 0..3: 3 machines of 6 slots, then 1, 2 and 3 machines of 1 slot
_USABLE = np.array(
    [
        [1, 1, 0, 1],
        [0, 1, 0, 1],
        [1, 1, 0, 1],
        [1, 1, 0, 1],
        [1, 1, 0, 1],
        [1, 1, 0, 1],
        [1, 0, 1, 0],
    ],
    dtype=np.bool_,
)

EXPECTED = np.array([1.0, 4.0, 19 / 9, 19 / 9, 19 / 9, 19 / 3, 19 / 3])
"""By hand: user 0's queue stops it at 1 task (level 1). User 1 (weight 2) may use only the 4
one-slot machines of types 1 and 3, which nobody else needs (18 + 2 slots on types 0 and 2
hold the others at level 2), so it freezes with all 4 at level 2. Users 2-6 (weights 1, 1, 1,
3, 3) share the 19 slots left on types 0 and 2: level 19/9, user 5's cap of 7 never binds.
All 24 slots are used."""


def _problem() -> FillingProblem:
    """The reproducer's exact input."""
    return FillingProblem(
        capacity=np.array([[6.0], [1.0], [1.0], [1.0]]),
        count=np.array([3.0, 1.0, 2.0, 3.0]),
        usable=_USABLE.copy(),
        demands=np.ones((7, 1)),
        share_per_task=np.ones(7),
        weights=np.array([1.0, 2.0, 1.0, 1.0, 1.0, 3.0, 3.0]),
        caps=np.array([np.inf, np.inf, np.inf, np.inf, np.inf, 7.0, np.inf]),
        initial=np.zeros(7),
        group_members=(np.array([0], dtype=np.int64),),
        group_caps=np.array([1.0]),
    )


def _assert_feasible(problem: FillingProblem, tasks: np.ndarray, per_type: np.ndarray) -> None:
    assert np.all(per_type >= -TOLERANCE)
    assert np.all(per_type[~problem.usable] <= TOLERANCE)
    used = np.einsum("it,ir->tr", per_type, problem.demands)
    assert np.all(used <= problem.capacity * problem.count[:, None] + TOLERANCE)
    np.testing.assert_allclose(per_type.sum(axis=1), tasks, atol=TOLERANCE)
    assert np.all(tasks <= problem.caps + TOLERANCE)
    assert tasks[0] <= 1.0 + TOLERANCE  # user 0's queue


def test_level_lp_unknown_when_warm_started_is_solved_from_scratch() -> None:
    problem = _problem()
    result = progressive_filling(problem)
    np.testing.assert_allclose(result.tasks, EXPECTED, atol=TOLERANCE)
    _assert_feasible(problem, result.tasks, result.per_type(4))
    np.testing.assert_allclose(result.level, [1, 2, 19 / 9, 19 / 9, 19 / 9, 19 / 9, 19 / 9])
    assert [round(level, 9) for level, _ in result.rounds] == [1.0, 2.0, round(19 / 9, 9)]
    assert [users.tolist() for _, users in result.rounds] == [[0], [1], [2, 3, 4, 5, 6]]
    # every slot is used: types 1 and 3 by user 1 alone, types 0 and 2 by the others
    per_type = result.per_type(4)
    np.testing.assert_allclose(per_type.sum(axis=0), [18.0, 1.0, 2.0, 3.0], atol=TOLERANCE)
    np.testing.assert_allclose(per_type[1], [0.0, 1.0, 0.0, 3.0], atol=TOLERANCE)
    # the papers' model (one level row and one freeze-test LP per user) and the per-user rows
    for options in ({"per_user_test": True}, {"pool": False}):
        other = progressive_filling(problem, **options)
        np.testing.assert_allclose(other.tasks, result.tasks, atol=TOLERANCE)
        np.testing.assert_allclose(other.level, result.level, atol=TOLERANCE)


SCENARIO = {
    "resources": ["slots"],
    "machines": [
        {"name": "big", "count": 3, "capacity": {"slots": 6}, "attributes": {"kind": "big"}},
        {"name": "one", "count": 1, "capacity": {"slots": 1}, "attributes": {"kind": "one"}},
        {"name": "two", "count": 2, "capacity": {"slots": 1}, "attributes": {"kind": "two"}},
        {"name": "three", "count": 3, "capacity": {"slots": 1}, "attributes": {"kind": "three"}},
    ],
    "queues": [{"path": "capped", "max_share": 1}],
    "users": [
        {"name": "u0", "queue": "capped", "constraint": "kind != 'two'"},
        {"name": "u1", "weight": 2, "constraint": "kind in ['one', 'three']"},
        {"name": "u2", "constraint": "kind != 'two'"},
        {"name": "u3", "constraint": "kind != 'two'"},
        {"name": "u4", "constraint": "kind != 'two'"},
        {"name": "u5", "weight": 3, "max_tasks": 7, "constraint": "kind != 'two'"},
        {"name": "u6", "weight": 3, "constraint": "kind in ['big', 'two']"},
    ],
}


def test_the_regression_as_a_cmmf_scenario_is_a_sound_allocation() -> None:
    scenario = parse_scenario(SCENARIO, "highs-unknown")
    allocation = solve(scenario, "cmmf")
    np.testing.assert_allclose(allocation.tasks, EXPECTED, atol=1e-6)
    assert check_allocation(scenario, allocation) == []


class _StopsWarm(FillingLP):
    """A model whose every warm-started solve stops at once (an iteration limit of 0), so
    each LP that is not already optimal at its starting basis needs the next step of the
    fallback chain (``scaled``: from scratch)."""

    retries: list[bool]

    def _attempt(self, step: str, *, level_fixed: bool) -> highspy.HighsModelStatus:
        if step == "warm":
            self.highs.setOptionValue("simplex_iteration_limit", 0)
            try:
                return super()._attempt(step, level_fixed=level_fixed)
            finally:
                self.highs.setOptionValue("simplex_iteration_limit", 2**31 - 1)
        if not hasattr(self, "retries"):
            self.retries = []
        self.retries.append(level_fixed)
        return super()._attempt(step, level_fixed=level_fixed)


@pytest.mark.parametrize("make", [_problem, choosy_figure_1_problem])
def test_every_lp_stopped_short_warm_started_is_retried_from_scratch(
    make: Callable[[], FillingProblem], monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = make()
    unforced = progressive_filling(problem, per_user_test=True)
    models: list[_StopsWarm] = []

    def build(*args: object, **kwargs: object) -> _StopsWarm:
        model = _StopsWarm(*args, **kwargs)  # type: ignore[arg-type]
        models.append(model)
        return model

    monkeypatch.setattr(filling_lp, "FillingLP", build)
    result = progressive_filling(problem, per_user_test=True)
    np.testing.assert_allclose(result.tasks, unforced.tasks, atol=TOLERANCE)
    np.testing.assert_allclose(result.level, unforced.level, atol=TOLERANCE)
    (model,) = models
    # both kinds of LP went through the retry: level LPs (level free), freeze tests (fixed)
    assert set(model.retries) == {False, True}
    assert result.lp_solves == unforced.lp_solves + len(model.retries)


def test_a_level_lp_no_iteration_solves_is_bisected_by_presolve() -> None:
    """With no simplex or interior-point iteration allowed every step of the level LP
    fails; each fixed level of the bisection (``FillingLP._bisect_level``) is decided by
    presolve alone, and the level is the one the unrestricted LP finds."""
    free = FillingLP(_problem())
    expected = free.raise_level()
    model = FillingLP(_problem())
    model.highs.setOptionValue("simplex_iteration_limit", 0)
    model.highs.setOptionValue("ipm_iteration_limit", 0)
    level = model.raise_level()
    assert model.steps[-1] == "bisect"
    # within the LPs' feasibility tolerance (1e-10) of the level the free LP finds
    assert level == pytest.approx(expected, rel=1e-9)


def test_minimum_shares_that_do_not_fit_are_still_an_invalid_request() -> None:
    initial = np.zeros(7)
    initial[1] = 5.0  # user 1 may use 4 slots only
    problem = dataclasses.replace(_problem(), initial=initial)
    model = FillingLP(problem)
    with pytest.raises(InvalidRequest, match="minimum shares do not fit"):
        model.raise_level()
    # infeasible warm-started, from scratch with scaling, by the interior point method, and
    # with the frozen amounts (here the minimums) 1e-9 and 1e-7 lower
    assert model.lp_solves == 5
