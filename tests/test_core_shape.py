"""The online core is composed, not inherited (DESIGN-core.md; DEVELOPERS.md, "The online
core"): a new rule is one filter that placement and preemption both obey, a policy class
stands on at most three fairshare classes, and no class reads another's underscore members.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import fairshare.policies
from fairshare.cluster import Cluster, Machine
from fairshare.policies import ONLINE_POLICIES, PolicyOptions, Scheduler, make_policy
from fairshare.policies.fair import FairRanking
from fairshare.policies.filters import Filter
from fairshare.policies.records import JobState
from fairshare.workload.model import Job, User

POLICIES = Path(fairshare.policies.__file__).parent
SOURCES = POLICIES.parent

THIRD_PARTY_PRIVATE = {
    "cli/coercion.py": [
        "PlainRuntimeParam: self.fallback[0]._coerce_value (line 131)",
        "module level: param._runtime_param (line 180)",
    ],
}
"""Reads of a library's own private members (typer's converters, which ``cli.coercion``
bypasses for speed and ``tests/test_cli_coercion.py`` pins), not of a fairshare class."""


class KeepAOffM0(Filter):
    """A rule the core has never heard of: user A may not start tasks on machine m0."""

    stage = "launch"

    def admits(self, job: JobState, mi: int, free: object, now: float) -> bool:
        ledger = self.ledger
        return not (ledger.users[job.user].name == "A" and ledger.cluster.names[mi] == "m0")


def _fair_with(filters: list[Filter]) -> Scheduler:
    """FAIR on two machines of two slots, pool A with a minimum share of 2, preemption after
    one second min-starved."""
    cluster = Cluster.build(["slots"], [Machine(f"m{i}", np.array([2.0])) for i in range(2)])
    users = [User("A", np.array([1.0]), min_share=2), User("B", np.array([1.0]))]
    return Scheduler(
        cluster,
        users=users,
        options=PolicyOptions(preemption=(1.0, 1e9)),
        ranking=FairRanking("fair"),
        filters=filters,
    )


def _kills_after_a_arrives(policy: Scheduler) -> list[tuple[str, int, str]]:
    """B fills both machines at t=0 (m1 first, then m0: m0's tasks are the newest); A
    arrives at t=1, min-starved; the decision at t=2 preempts for it."""
    policy.job_submitted(0.0, 0, Job("b", 0.0, "B", np.array([1.0]), 4))
    assert [d.machine for d in policy.decide(0.0)] == ["m1", "m1", "m0", "m0"]
    policy.job_submitted(1.0, 1, Job("a", 1.0, "A", np.array([1.0]), 4))
    assert policy.decide(1.0) == []
    assert policy.next_wakeup() == 2.0
    policy.advance(2.0)
    return [(type(d).__name__, d.task.job, d.machine) for d in policy.decide(2.0)]


def test_placement_obeys_a_new_filter() -> None:
    policy = _fair_with([KeepAOffM0()])
    policy.job_submitted(0.0, 0, Job("a", 0.0, "A", np.array([1.0]), 4))
    assert [(d.task.task, d.machine) for d in policy.decide(0.0)] == [(0, "m1"), (1, "m1")]
    policy.job_submitted(0.0, 1, Job("b", 0.0, "B", np.array([1.0]), 4))
    assert [(d.task.job, d.machine) for d in policy.decide(0.0)] == [(1, "m0"), (1, "m0")]


def test_preemption_obeys_the_same_filter() -> None:
    # Without the filter, the newest victims are B's tasks on m0, and A takes m0.
    assert _kills_after_a_arrives(_fair_with([])) == [
        ("Kill", 0, "m0"),
        ("Launch", 1, "m0"),
        ("Kill", 0, "m0"),
        ("Launch", 1, "m0"),
    ]
    # With it, preemption's dry run asks the same filter: nothing on m0 is killed for A.
    assert _kills_after_a_arrives(_fair_with([KeepAOffM0()])) == [
        ("Kill", 0, "m1"),
        ("Launch", 1, "m1"),
        ("Kill", 0, "m1"),
        ("Launch", 1, "m1"),
    ]


def test_the_filters_are_one_ordered_list() -> None:
    cluster = Cluster.build(["cpu"], [Machine("m", np.array([4.0]))])
    options = PolicyOptions(headroom=True, delay=(1.0, 2.0), backfill="easy")
    policy = make_policy("capacity", cluster, options=options)
    assert [f.name for f in policy.placer.filters] == [
        "eligibility",
        "headroom",
        "reservation",
        "delay-scheduling",
        "max-capacity",
    ]
    assert [f.name for f in policy.placer.trial_filters] == [
        "eligibility",
        "headroom",
        "reservation",
        "delay-scheduling",
    ]


@pytest.mark.parametrize("name", sorted(ONLINE_POLICIES))
def test_a_policy_stands_on_at_most_three_fairshare_classes(name: str) -> None:
    cls = ONLINE_POLICIES[name].cls
    ours = [k for k in cls.__mro__ if k.__module__.startswith("fairshare.")]
    assert len(ours) <= 3, [k.__name__ for k in ours]
    assert issubclass(cls, Scheduler)


def _underscore_reads(tree: ast.Module) -> list[str]:
    """Every read of an underscore member that is not the reading class's own: ``x._m``
    for any ``x`` but ``self`` or ``cls``, and ``self._m`` in a class that does not define
    ``_m`` itself (in its body or by assigning ``self._m``)."""
    found: list[str] = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        own = {
            n.name
            for n in cls.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
        own |= {
            t.id
            for n in cls.body
            if isinstance(n, (ast.Assign, ast.AnnAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                own.add(node.attr)
        for node in ast.walk(cls):
            if not (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                continue
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                if node.attr not in own:
                    found.append(f"{cls.name}: self.{node.attr} (line {node.lineno})")
            elif not isinstance(base, ast.Name) or base.id != "super":
                found.append(f"{cls.name}: {ast.unparse(node)} (line {node.lineno})")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            and f"{ast.unparse(node)} (line {node.lineno})" not in " ".join(found)
        ):
            found.append(f"module level: {ast.unparse(node)} (line {node.lineno})")
    return found


@pytest.mark.parametrize("path", sorted(str(p.relative_to(SOURCES)) for p in SOURCES.rglob("*.py")))
def test_no_class_reads_another_class_underscore_members(path: str) -> None:
    tree = ast.parse((SOURCES / path).read_text(encoding="utf-8"))
    assert _underscore_reads(tree) == THIRD_PARTY_PRIVATE.get(path, [])


def test_the_underscore_check_sees_a_read_across_classes() -> None:
    source = inspect.cleandoc(
        """
        class A:
            def __init__(self):
                self._x = 1
        class B(A):
            def f(self, other):
                return self._x + other._y
        """
    )
    assert _underscore_reads(ast.parse(source)) == [
        "B: self._x (line 6)",
        "B: other._y (line 6)",
    ]
