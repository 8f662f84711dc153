"""The compiled kernel's records against what they replace: a bucket's
:class:`~fairshare.policies.records.RoomKey` against the tuple of floats it was (equal exactly
when the amounts are, hashed alike then, printed alike), and the
:class:`~fairshare.policies.decisions.Launch` record against the NamedTuple it was (equality,
hashing, unpacking, ``repr``, pickling), and the
:class:`~fairshare.policies.decisions.TaskRef` record against the plain tuple of its fields
(equality, hashing, ordering, unpacking, indexing, ``repr``, pickling). And
:func:`~fairshare.runlog.uniform_end` (the isolated response of equal tasks, a step per
round) against :func:`~fairshare.runlog.greedy_end` (a step per task): the same float."""

from __future__ import annotations

import math
import pickle

from hypothesis import given
from hypothesis import strategies as st
from librt.vecs import vec

from fairshare.policies import Launch, TaskRef
from fairshare.policies.protocol import Phase
from fairshare.policies.records import RoomKey
from fairshare.runlog import greedy_end, uniform_end


@given(
    st.lists(st.sampled_from([0.0, -0.0, 0.5, 1e-9, 3.0, 2.0**22, 1e300, math.inf]), max_size=4),
    st.lists(st.sampled_from([0.0, -0.0, 0.5, 1e-9, 3.0, 2.0**22, 1e300, math.inf]), max_size=4),
)
def test_room_keys_equal_exactly_when_their_amounts_do(a: list[float], b: list[float]) -> None:
    key_a = RoomKey(vec[float](a))
    key_b = RoomKey(vec[float](b))
    assert (key_a == key_b) == (tuple(a) == tuple(b))
    if tuple(a) == tuple(b):
        assert hash(key_a) == hash(key_b)
    assert key_a.amounts == tuple(a) and repr(key_a) == repr(tuple(a))
    assert key_a.same(vec[float](b)) == (tuple(a) == tuple(b))


def test_launch_behaves_as_its_named_tuple_did() -> None:
    task = TaskRef(7, "map", 3)
    launch = Launch(task, "m2", "rack")
    assert (launch.task, launch.machine, launch.locality) == (task, "m2", "rack")
    assert launch == Launch(TaskRef(7, "map", 3), "m2", "rack")
    assert launch == (task, "m2", "rack") and (task, "m2", "rack") == launch
    assert launch != Launch(task, "m2", None) and launch != Launch(task, "m3", "rack")
    assert launch != Launch(TaskRef(7, "map", 4), "m2", "rack")
    assert launch != "m2"
    assert hash(launch) == hash((task, "m2", "rack"))
    assert len({launch, Launch(task, "m2", "rack")}) == 1
    unpacked_task, machine, locality = launch
    assert (unpacked_task, machine, locality, len(launch), launch[1]) == (
        task,
        "m2",
        "rack",
        3,
        "m2",
    )
    assert repr(launch) == (
        "Launch(task=TaskRef(job=7, phase='map', task=3), machine='m2', locality='rack')"
    )
    copy = pickle.loads(pickle.dumps(launch))
    assert type(copy) is Launch and copy == launch


_REFS = st.tuples(
    st.integers(0, 2**40), st.sampled_from(["map", "reduce", "copy"]), st.integers(0, 2**20)
)


@given(_REFS, _REFS)
def test_task_refs_compare_and_hash_as_their_tuples(
    a: tuple[int, Phase, int], b: tuple[int, Phase, int]
) -> None:
    ref_a, ref_b = TaskRef(*a), TaskRef(*b)
    assert (ref_a == ref_b) == (a == b) and (ref_a != ref_b) == (a != b)
    assert ref_a == a and a == ref_a and (ref_a != a) is False
    assert (ref_a < ref_b, ref_a <= ref_b, ref_a > ref_b, ref_a >= ref_b) == (
        a < b,
        a <= b,
        a > b,
        a >= b,
    )
    assert (ref_a < b, a < ref_b) == (a < b, a < b)
    assert hash(ref_a) == hash(a) and hash(ref_a) == hash(ref_a)
    # Either finds the other in a dictionary.
    by_tuple: dict[object, int] = {a: 1}
    by_ref: dict[object, int] = {ref_a: 1}
    assert by_tuple[ref_a] == 1 and by_ref[a] == 1
    assert sorted([ref_b, ref_a]) == sorted([b, a])


def test_task_ref_behaves_as_its_named_tuple_did() -> None:
    ref = TaskRef(3, "reduce", 0)
    assert (ref.job, ref.phase, ref.task) == (3, "reduce", 0)
    job, phase, task = ref
    assert (job, phase, task, len(ref), ref[1], ref[-1], list(ref)) == (
        3,
        "reduce",
        0,
        3,
        "reduce",
        0,
        [3, "reduce", 0],
    )
    assert repr(ref) == "TaskRef(job=3, phase='reduce', task=0)"
    assert ref != "reduce"
    assert ref != (3, "reduce")
    assert not isinstance(ref, tuple)
    copy = pickle.loads(pickle.dumps(ref))
    assert type(copy) is TaskRef and copy == ref and hash(copy) == hash(ref)
    assert pickle.loads(pickle.dumps(Launch(ref, "m", None))).task == ref


@given(
    st.floats(0.0, 1e7, allow_subnormal=True),
    st.integers(0, 300),
    st.integers(1, 40),
    st.floats(0.0, 1e6),
)
def test_uniform_end_is_greedy_end_of_equal_tasks(
    seconds: float, tasks: int, slots: int, start: float
) -> None:
    expected = greedy_end([seconds] * tasks, slots, start)
    assert uniform_end(seconds, tasks, slots, start) == expected
    assert math.copysign(1.0, uniform_end(seconds, tasks, slots, start)) == math.copysign(
        1.0, expected
    )
