"""The placement-constraint language (SPEC section 1, "Constraint expressions").

Hand-written cases pin parsing, semantics and error messages/columns; a Hypothesis property
checks random expressions against an independent reference evaluator written here.
"""

from __future__ import annotations

import copy
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairshare.cluster.constraint_syntax import MAX_DEPTH
from fairshare.cluster.constraints import (
    And,
    Attribute,
    Comparison,
    Constraint,
    ConstraintSyntaxError,
    LiteralList,
    LiteralValue,
    MachineName,
    MachineRack,
    Not,
    Or,
    Truth,
    parse_constraint,
)
from fairshare.cluster.model import AttributeValue, Machine

from conftest import scaled_examples


def machine(name: str = "m1", rack: str | None = "r1", **attributes: AttributeValue) -> Machine:
    return Machine(name, np.zeros(1), rack, dict(attributes))


def ok(text: str, m: Machine) -> bool:
    return parse_constraint(text).matches(m)


# ---------------------------------------------------------------------------------------------
# Evaluation


EXTRA: dict[str, AttributeValue] = {"public-ip": True, "os.version": "4.19.2", "_x": 1}
M = machine(
    "web-3",
    "r2",
    gpu=True,
    ssd=False,
    cores=8,
    load=0.0,
    mem=16.5,
    kernel="5.10",
    zone="eu-west",
    empty="",
    **EXTRA,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # bare names: present and truthy
        ("gpu", True),
        ("ssd", False),
        ("cores", True),
        ("load", False),
        ("mem", True),
        ("zone", True),
        ("empty", False),
        ("missing", False),
        ("public-ip", True),
        ("os.version", True),
        ("_x", True),
        ("name", True),
        ("rack", True),
        ("true", True),
        ("True", True),
        ("false", False),
        ("False", False),
        # equality, type-aware
        ("gpu == true", True),
        ("gpu == True", True),
        ("gpu != false", True),
        ("gpu == 1", False),
        ("gpu != 1", True),
        ("_x == true", False),
        ("_x == 1", True),
        ("_x == 1.0", True),
        ("cores == 8", True),
        ("cores == 8.0", True),
        ("cores == '8'", False),
        ("cores != '8'", True),
        ("mem == 16.5", True),
        ("mem == 165e-1", True),
        ("zone == 'eu-west'", True),
        ('zone == "eu-west"', True),
        ("zone != 'eu-west'", False),
        ("kernel == 5.10", False),
        ("kernel == '5.10'", True),
        ("name == 'web-3'", True),
        ("rack == 'r2'", True),
        ("rack != 'r3'", True),
        ("'r2' == rack", True),
        # ordering: numbers
        ("cores > 4", True),
        ("cores >= 8", True),
        ("cores < 8", False),
        ("cores <= 8", True),
        ("cores > 8.5", False),
        ("cores > -3", True),
        ("cores < 1e3", True),
        ("cores>=+8", True),
        ("mem > .5", True),
        ("5 < cores", True),
        ("8 <= cores", True),
        ("9 <= cores", False),
        ("100 > mem", True),
        # ordering: versions and strings
        ("kernel > '5.4'", True),
        ("kernel >= '5.9'", True),
        ("kernel < '5.9'", False),
        ("kernel < '10'", True),
        ("os.version < '5.4'", True),
        ("os.version > '4.19'", True),
        ("os.version >= '4.19.2'", True),
        ("os.version < '4.19.10'", True),
        ("'5.4' < kernel", True),
        ("zone > 'eu'", True),
        ("zone < 'us'", True),
        ("zone <= 'eu-west'", True),
        ("name > 'web-10'", True),  # lexicographic: 'web-3' > 'web-10'
        # ordering across types never matches
        ("kernel > 5", False),
        ("kernel < 5", False),
        ("cores > '1'", False),
        ("gpu > false", False),
        ("gpu >= true", False),
        ("gpu < 2", False),
        ("_x > 0", True),
        # in / not in with lists
        ("zone in ['eu-west', 'us-east']", True),
        ("zone in ['us-east']", False),
        ("zone not in ['us-east']", True),
        ("zone not in ['eu-west']", False),
        ("cores in [1, 8.0]", True),
        ("cores in ['8']", False),
        ("gpu in [1]", False),
        ("gpu in [true]", True),
        ("_x in [true]", False),
        ("_x in [1]", True),
        ("gpu not in [1, 'x']", True),
        ("cores in []", False),
        ("cores not in []", True),
        ("cores in [8,]", True),
        ("rack in ['r1', 'r2']", True),
        ("name in ['web-3']", True),
        ("3 in [1, 2, 3]", True),
        # in / not in with a string: substring
        ("zone in 'eu-west-1'", True),
        ("zone in 'us-east-1'", False),
        ("zone not in 'us-east-1'", True),
        ("name in 'web-3 web-4'", True),
        ("rack in 'r2r3'", True),
        ("cores in '8'", False),
        ("cores not in '8'", True),
        ("'eu' in 'eu-west'", True),
        ("empty in 'anything'", True),
        # booleans and precedence
        ("gpu and cores > 4", True),
        ("gpu and ssd", False),
        ("ssd or gpu", True),
        ("not ssd", True),
        ("not not gpu", True),
        ("not cores == 8", False),
        ("not cores in [8]", False),
        ("ssd or gpu and not empty", True),
        ("(ssd or gpu) and empty", False),
        ("ssd or (gpu and empty)", False),
        ("not (ssd or gpu)", False),
        ("not ssd and gpu", True),
        ("gpu and rack != 'r3'", True),
        ("((gpu))", True),
        ("gpu and cores >= 8 and zone in ['eu-west'] and not ssd", True),
        ("ssd or load or empty or missing", False),
        # comparing two identifiers
        ("cores == cores", True),
        ("cores > _x", True),
        ("cores == mem", False),
        ("gpu == public-ip", True),
        ("gpu == _x", False),
        ("kernel > os.version", True),
        ("name != rack", True),
        ("zone > cores", False),
        # constants
        ("1 == 1", True),
        ("1 == true", False),
        ("'a' < 'b'", True),
        ("true and not false", True),
    ],
)
def test_evaluation(text: str, expected: bool) -> None:
    assert ok(text, M) is expected


@pytest.mark.parametrize(
    ("op", "expected"),
    [("==", False), ("!=", True), ("<", False), ("<=", False), (">", False), (">=", False)],
)
@pytest.mark.parametrize("literal", ["1", "0", "-2.5", "'x'", "''", "'5.4'", "true", "false"])
def test_missing_attribute_compares_unequal(op: str, expected: bool, literal: str) -> None:
    m = machine(gpu=True)
    assert ok(f"missing {op} {literal}", m) is expected
    assert ok(f"{literal} {op} missing", m) is expected
    assert ok(f"missing {op} gpu", m) is expected
    assert ok(f"gpu {op} missing", m) is expected
    assert ok(f"missing {op} missing", m) is expected  # not even equal to itself


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("missing in [1, 'x', true, false, '']", False),
        ("missing not in [1, 'x', true, false, '']", True),
        ("missing in []", False),
        ("missing not in []", True),
        ("missing in 'anything'", False),
        ("missing not in 'anything'", True),
        ("missing in ''", False),
        ("missing", False),
        ("not missing", True),
    ],
)
def test_missing_attribute_membership(text: str, expected: bool) -> None:
    assert ok(text, machine()) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rack", False),
        ("not rack", True),
        ("rack == ''", False),
        ("rack != 'r1'", True),
        ("rack < 'z'", False),
        ("rack >= ''", False),
        ("rack in ['r1', '']", False),
        ("rack not in ['r1']", True),
        ("rack in 'r1'", False),
        ("rack not in 'r1'", True),
        ("rack == name", False),
    ],
)
def test_rack_none_is_missing(text: str, expected: bool) -> None:
    assert ok(text, machine(rack=None)) is expected


def test_empty_rack_and_name_are_present_but_false() -> None:
    m = Machine("", np.zeros(1), "", {})
    assert not ok("rack", m)
    assert not ok("name", m)
    assert ok("rack == ''", m)
    assert ok("name == rack", m)
    assert ok("rack in 'abc'", m)


def test_reserved_identifiers_read_the_machine_not_attributes() -> None:
    m = Machine("real", np.zeros(1), "rk", {"name": "fake", "rack": "fake"})
    assert ok("name == 'real'", m)
    assert ok("rack == 'rk'", m)
    assert not ok("name == 'fake'", m)


@pytest.mark.parametrize(
    ("a", "op", "b", "expected"),
    [
        ("5.4", "<", "5.10", True),
        ("5.10", ">", "5.9", True),
        ("4.19.2", "<", "5.4", True),
        ("4.19.2", ">", "4.19", True),
        ("4.19", "<", "4.19.0", True),
        ("10", ">", "9", True),
        ("010", "<", "9", False),
        ("1.02", "==", "1.2", False),  # equality of strings is textual
        ("1.02", "<=", "1.2", True),
        ("1.02", ">=", "1.2", True),
        ("5.4-rc1", "<", "5.10", False),  # not a version: lexicographic
        ("abc", "<", "abd", True),
        ("B", "<", "a", True),
        ("5.4.", "<", "5.10", False),
        ("99999999999999999999999.1", ">", "99999999999999999999998.9", True),
    ],
)
def test_version_and_string_ordering(a: str, op: str, b: str, expected: bool) -> None:
    m = machine(v=a, w=b)
    assert ok(f"v {op} w", m) is expected
    assert ok(f"v {op} '{b}'", m) is expected
    assert ok(f"'{a}' {op} w", m) is expected


def test_precedence_truth_table() -> None:
    for a in (False, True):
        for b in (False, True):
            for c in (False, True):
                m = machine(a=a, b=b, c=c)
                assert ok("a or b and not c", m) is (a or (b and not c))
                assert ok("(a or b) and not c", m) is ((a or b) and not c)
                assert ok("not a and b or c", m) is (((not a) and b) or c)
                assert ok("not (a and b) or c", m) is ((not (a and b)) or c)
                assert ok("a and not b == true", m) is (a and not b)


def test_parse_tree() -> None:
    c = parse_constraint("a or b and not c")
    assert c.expression == Or(
        (
            Truth(Attribute("a")),
            And((Truth(Attribute("b")), Not(Truth(Attribute("c"))))),
        )
    )
    assert parse_constraint("not x == 1").expression == Not(
        Comparison("==", Attribute("x"), LiteralValue(1))
    )
    assert parse_constraint("rack not in ['a', 2, true]").expression == Comparison(
        "not in", MachineRack(), LiteralList(("a", 2, True))
    )
    assert parse_constraint("-3 < name").expression == Comparison(
        "<", LiteralValue(-3), MachineName()
    )
    assert parse_constraint("(a)").expression == Truth(Attribute("a"))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("-3", -3),
        ("+3", 3),
        ("5.4", 5.4),
        ("1e3", 1000.0),
        ("-2.5E-1", -0.25),
        (".5", 0.5),
        ("5.", 5.0),
        ("'it\\'s'", "it's"),
        ('"say \\"hi\\""', 'say "hi"'),
        ("'back\\\\slash'", "back\\slash"),
        ('"single \' inside"', "single ' inside"),
        ("'double \" inside'", 'double " inside'),
        ("''", ""),
        ("true", True),
        ("False", False),
    ],
)
def test_literals(text: str, value: Any) -> None:
    expression = parse_constraint(f"x == {text}").expression
    assert isinstance(expression, Comparison)
    assert isinstance(expression.right, LiteralValue)
    assert expression.right.value == value
    assert type(expression.right.value) is type(value)


def test_whitespace_is_free() -> None:
    m = machine(cores=8, zone="a")
    assert ok("cores>=8 and zone in['a']", m)
    assert ok("\tcores  >=\n8 ", m)
    assert ok("(cores>=8)and(zone=='a')", m)
    assert ok("not(cores<8)", m)


def test_mask_matches_per_machine() -> None:
    machines = [
        machine("a", "r1", gpu=True, cores=4),
        machine("b", "r2", gpu=False, cores=16),
        machine("c", None, cores=32),
        machine("d", "r1", gpu=True, cores=64),
    ]
    c = parse_constraint("gpu or cores > 20 and rack != 'r2'")
    mask = c.mask(machines)
    assert mask.dtype == np.bool_
    assert mask.tolist() == [True, False, True, True]
    assert mask.tolist() == [c.matches(m) for m in machines]
    assert c.mask([]).shape == (0,)


def test_attributes() -> None:
    c = parse_constraint("gpu and (kernel >= '5.4' or 3 < cores) and not x-y in [1] or 'a' in 'b'")
    assert c.attributes() == frozenset({"gpu", "kernel", "cores", "x-y"})
    assert parse_constraint("name == 'a' or rack").attributes() == frozenset({"name", "rack"})
    assert parse_constraint("true").attributes() == frozenset()


def test_constraint_value_semantics() -> None:
    c = parse_constraint("gpu and rack != 'r3'")
    assert c.source == "gpu and rack != 'r3'"
    assert str(c) == c.source
    assert c == Constraint("gpu and rack != 'r3'")
    assert hash(c) == hash(Constraint(c.source))
    assert c != parse_constraint("gpu")
    m = machine(gpu=True)
    for clone in (pickle.loads(pickle.dumps(c)), copy.deepcopy(c), copy.copy(c)):
        assert clone == c
        assert clone.matches(m)
    with pytest.raises(ConstraintSyntaxError):
        Constraint("a ==")
    with pytest.raises(TypeError):
        Constraint(3)  # type: ignore[arg-type]


def test_numpy_attribute_values() -> None:
    m = machine(n=np.int64(8), f=np.float64(2.5), b=np.bool_(True))  # type: ignore[arg-type]
    assert ok("n == 8 and n > 7 and f < 3 and b == true and b and n in [8]", m)
    assert not ok("b == 1", m)


# ---------------------------------------------------------------------------------------------
# Errors

ALLOWED_WORDS = [
    "attribute names",
    "name",
    "rack",
    "literals",
    "== != < <= > >=",
    "in",
    "not in",
    "and",
    "or",
    "not",
    "parentheses",
]


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        # empty
        ("", 1, "empty constraint"),
        ("   ", 1, "empty constraint"),
        # unknown characters
        ("a & b", 3, "use 'and'"),
        ("a && b", 3, "use 'and'"),
        ("a || b", 3, "use 'or'"),
        ("!a", 1, "use 'not'"),
        ("a = 1", 3, "use '=='"),
        ("cores * 2 > 3", 7, "arithmetic is not allowed"),
        ("cores - 2 > 3", 7, "arithmetic is not allowed"),
        ("x == $y", 6, "unexpected character '$'"),
        ("x == {1}", 6, "unexpected character '{'"),
        ("a;b", 2, "unexpected character ';'"),
        ("zone == 'é' and ü", 17, "unexpected character 'ü'"),
        # strings
        ("zone == 'eu", 9, "unterminated string"),
        ('zone == "eu', 9, "unterminated string"),
        ("zone == 'eu\\'", 9, "unterminated string"),
        ("zone == 'a\\nb'", 11, "unknown escape"),
        # numbers
        ("kernel == 5.4.3", 11, "malformed number '5.4.3'"),
        ("x == 3abc", 6, "malformed number"),
        ("x == 1e", 6, "malformed number"),
        ("x == 1e999", 6, "out of range"),
        # code is not in the language
        ("__import__('os').system('rm')", 11, "function calls are not allowed"),
        ("os.system('rm -rf /')", 10, "function calls are not allowed"),
        ("len(name) > 3", 4, "function calls are not allowed"),
        ("'a'('b')", 4, "function calls are not allowed"),
        ("x[0] == 1", 2, "indexing is not allowed"),
        ("(a).b", 4, "attribute access"),
        ("a. == 1", 2, "attribute access"),
        ("lambda: 1", 7, "unexpected character ':'"),
        ("a if b else c", 3, "after a complete condition"),
        # parentheses
        ("(a and b", 1, "'(' at column 1 is never closed"),
        ("a and ((b or c)", 7, "'(' at column 7 is never closed"),
        ("a)", 2, "')' at column 2 has no matching '('"),
        ("(a)) or b", 4, "no matching '('"),
        (")", 1, "no matching '('"),
        ("()", 2, "expected a condition"),
        ("(a b)", 4, "expected ')'"),
        ("(a) == 1", 5, "parenthesised condition cannot be compared"),
        ("(a) in [1]", 5, "parenthesised condition cannot be compared"),
        # trailing tokens and missing pieces
        ("a b", 3, "unexpected 'b' after a complete condition"),
        ("a == 1 2", 8, "after a complete condition"),
        ("gpu 'x'", 5, "after a complete condition"),
        ("a AND b", 3, "keywords are lower-case"),
        ("a not b", 3, "did you mean 'not in'"),
        ("a and", 6, "ends too early"),
        ("not", 4, "ends too early"),
        ("a or or b", 6, "expected a condition"),
        ("and a", 1, "expected a condition"),
        ("== 1", 1, "expected a condition"),
        ("a ==", 5, "ends too early"),
        ("a == == 1", 6, "expected an attribute name or a literal"),
        ("a == not b", 6, "expected an attribute name or a literal"),
        ("a == (b)", 6, "parentheses group conditions"),
        ("5", 1, "alone is not a condition"),
        ("'x' or a", 1, "alone is not a condition"),
        # chains
        ("a < b < c", 7, "cannot be chained"),
        ("1 < cores <= 8", 11, "cannot be chained"),
        ("a == b == c", 8, "cannot be chained"),
        ("a in [1] == true", 10, "cannot be chained"),
        ("a == 1 not in [1]", 8, "cannot be chained"),
        # in / not in
        ("x in 5", 6, "must be a list"),
        ("x in y", 6, "must be a list"),
        ("x not in true", 10, "right side of 'not in' must be a list"),
        ("x in (1, 2)", 6, "must be a list"),
        ("x in", 5, "must be a list"),
        ("x in [y]", 7, "may only hold literals"),
        ("x in [[1]]", 7, "cannot be nested"),
        ("x in [1 2]", 9, "expected ',' or ']'"),
        ("x in [1,,2]", 9, "expected a list item"),
        ("x in [1,", 9, "'[' at column 6 is never closed"),
        ("x == [1]", 6, "list is only allowed after in / not in"),
        ("[1] in x", 1, "list is only allowed on the right of in / not in"),
    ],
)
def test_syntax_errors(text: str, column: int, fragment: str) -> None:
    with pytest.raises(ConstraintSyntaxError) as info:
        parse_constraint(text)
    error = info.value
    assert fragment in error.message, error.message
    assert error.column == column, error.message
    assert str(error) == error.message
    assert "\n" not in error.message
    assert isinstance(error, ValueError)


def test_call_message_lists_what_is_allowed() -> None:
    with pytest.raises(ConstraintSyntaxError) as info:
        parse_constraint("__import__('os').system('rm')")
    message = info.value.message
    assert "calls are not allowed" in message
    for word in ALLOWED_WORDS:
        assert word in message


def test_unknown_character_message_lists_what_is_allowed() -> None:
    with pytest.raises(ConstraintSyntaxError) as info:
        parse_constraint("a @ b")
    assert info.value.column == 3
    for word in ALLOWED_WORDS:
        assert word in info.value.message


def test_leftmost_error_is_reported() -> None:
    with pytest.raises(ConstraintSyntaxError) as info:
        parse_constraint("a b & c")
    assert info.value.column == 3


def test_nesting_limit() -> None:
    depth = MAX_DEPTH - 1
    deep = "(" * depth + "not a" + ")" * depth
    assert ok(deep, machine(a=False))
    assert ok("not " * 50 + "a", machine(a=True))
    assert not ok("not " * 51 + "a", machine(a=True))
    with pytest.raises(ConstraintSyntaxError, match="nests too deeply"):
        parse_constraint("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(ConstraintSyntaxError, match="nests too deeply"):
        parse_constraint("not " * (MAX_DEPTH + 1) + "a")


def test_long_flat_expression() -> None:
    text = " or ".join(f"a{i} == {i}" for i in range(2000))
    assert ok(text, machine(a1999=1999))
    assert not ok(text, machine(a1999=1))


def test_no_code_execution_primitives_in_the_module() -> None:
    source = (Path(__file__).parent.parent / "src/fairshare/cluster/constraints.py").read_text()
    assert not re.search(r"(?<![.\w])(eval|exec|compile)\s*\(", source)
    assert "literal_eval" not in source
    assert "import ast" not in source


def test_many_constraints_parse_and_mask_like_one_by_one_matching() -> None:
    texts = [
        f"gpu and rack != 'r{i}' and (kernel >= '5.{i}' or cores in [1, 2, {i}]) and not x{i}"
        for i in range(2000)
    ]
    constraints = [parse_constraint(t) for t in texts]
    machines = [machine(f"m{i}", f"r{i % 7}", gpu=i % 2 == 0, cores=i % 5) for i in range(20000)]
    for constraint in constraints[:5]:
        mask = constraint.mask(machines)
        assert mask.tolist() == [constraint.matches(m) for m in machines]
    assert int(constraints[3].mask(machines).sum()) == 5144


# ---------------------------------------------------------------------------------------------
# Property: random expressions agree with an independent reference evaluator.

ATTRS = ["gpu", "cores", "kernel", "zone", "mem-gb", "os.version", "nope"]
MISSING = object()


@dataclass(frozen=True)
class Ident:
    name: str


@dataclass(frozen=True)
class Lit:
    value: Any
    text: str


@dataclass(frozen=True)
class ListLit:
    items: tuple[Lit, ...]


@dataclass(frozen=True)
class Node:
    kind: str  # truth cmp in not and or paren
    op: str = ""
    args: tuple[Any, ...] = ()


VERSIONS = ["5.4", "5.10", "4.19.2", "10", "9", "010", "1.02", "1.2"]
STRINGS = ["", "a", "abc", "b", "r1", "web-0", "x'y", 'q"\\']
NUMBERS: list[tuple[Any, str]] = [
    (0, "0"),
    (1, "1"),
    (1, "+1"),
    (8, "8"),
    (-3, "-3"),
    (0.0, "0.0"),
    (2.5, "2.5"),
    (8.0, "8.0"),
    (1000.0, "1e3"),
    (-0.25, "-2.5e-1"),
    (0.5, ".5"),
]
# Each identifier usually holds values of one kind (b: bool, n: number, v: version string,
# s: other string), so that most comparisons meet values they can match; other kinds occur too.
KIND_OF = {
    "gpu": "b",
    "cores": "n",
    "mem-gb": "n",
    "kernel": "v",
    "os.version": "v",
    "zone": "s",
    "nope": "n",
    "name": "s",
    "rack": "s",
}
KINDS = "bnvs"


def values_of(kind: str) -> st.SearchStrategy[Any]:
    if kind == "b":
        return st.booleans()
    if kind == "n":
        return st.one_of(st.integers(-4, 10), st.sampled_from([0.0, 2.5, 8.0, -3.0, -0.25]))
    if kind == "v":
        return st.sampled_from(VERSIONS)
    return st.one_of(st.sampled_from(STRINGS), st.text(alphabet="ab5.'\"\\ 9", max_size=4))


ABSENT = object()
OFF_KIND = [True, False, 0, 3, 2.5, "", "abc", "5.4", "10"]
POOLS: dict[str, list[Any]] = {
    "b": [True, False],
    "n": [-4, -3, -0.25, 0, 0.0, 1, 2, 2.5, 3, 8, 8.0, 10],
    "v": VERSIONS,
    "s": [*STRINGS, "5.4", "a'b", "ab 5"],
}


def pool(kind: str) -> st.SearchStrategy[Any]:
    """One draw: mostly a value of ``kind``, sometimes another kind, sometimes absent."""
    own = POOLS[kind]
    return st.sampled_from([*own, *own, *own, *OFF_KIND, ABSENT])


@st.composite
def machines_st(draw: st.DrawFn) -> Machine:
    attributes = {key: draw(pool(KIND_OF[key])) for key in ATTRS[:-1]}
    name = draw(st.sampled_from([*POOLS["s"], *VERSIONS]))
    rack = draw(st.sampled_from([None, *POOLS["s"], *VERSIONS]))
    present = {key: value for key, value in attributes.items() if value is not ABSENT}
    return Machine(name, np.zeros(1), rack, present)


def render_string(value: str, quote: str) -> str:
    return quote + value.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


@st.composite
def literals(draw: st.DrawFn, kind: str | None = None) -> Lit:
    """A literal, mostly of ``kind`` (any kind when None)."""
    if kind is None or draw(st.integers(0, 3)) == 0:
        kind = draw(st.sampled_from(KINDS))
    if kind == "b":
        text = draw(st.sampled_from(["true", "True", "false", "False"]))
        return Lit(text.lower() == "true", text)
    if kind == "n":
        value, text = draw(st.sampled_from(NUMBERS))
        return Lit(value, text)
    value = draw(values_of(kind))
    return Lit(value, render_string(value, draw(st.sampled_from(["'", '"']))))


@st.composite
def string_literals(draw: st.DrawFn) -> Lit:
    value = draw(st.one_of(values_of("s"), values_of("v"), st.sampled_from(["web-0 r1", "5.4.1"])))
    return Lit(value, render_string(value, draw(st.sampled_from(["'", '"']))))


idents = st.sampled_from([*ATTRS, "name", "rack"]).map(Ident)
booleans = st.sampled_from(["true", "True", "false", "False"]).map(
    lambda text: Lit(text.lower() == "true", text)
)


def kind_of(x: Ident | Lit) -> str | None:
    return KIND_OF[x.name] if isinstance(x, Ident) else None


@st.composite
def leaves(draw: st.DrawFn) -> Node:
    kind = draw(st.sampled_from(["truth", "cmp", "cmp", "cmp", "in"]))
    if kind == "truth":
        return Node("truth", args=(draw(st.one_of(idents, idents, booleans)),))
    left: Ident | Lit = draw(idents) if draw(st.integers(0, 4)) else draw(literals())
    if kind == "cmp":
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        if isinstance(left, Lit) or draw(st.integers(0, 2)) == 0:
            right: Ident | Lit = draw(idents)
        else:
            right = draw(literals(kind_of(left)))
        if draw(st.booleans()):
            left, right = right, left
        return Node("cmp", op, (left, right))
    op = draw(st.sampled_from(["in", "not in"]))
    container: Lit | ListLit
    if draw(st.booleans()):
        container = ListLit(tuple(draw(st.lists(literals(kind_of(left)), max_size=4))))
    else:
        container = draw(string_literals())
    return Node("in", op, (left, container))


expressions = st.recursive(
    leaves(),
    lambda inner: st.one_of(
        st.builds(lambda e: Node("not", args=(e,)), inner),
        st.builds(lambda e: Node("paren", args=(e,)), inner),
        st.builds(lambda a, b: Node("and", args=(a, b)), inner, inner),
        st.builds(lambda a, b: Node("or", args=(a, b)), inner, inner),
    ),
    max_leaves=12,
)

LEVEL = {"or": 1, "and": 2, "not": 3}


def render_operand(x: Ident | Lit) -> str:
    return x.name if isinstance(x, Ident) else x.text


def render(e: Node, level: int, space: str) -> str:
    """Text for ``e`` with the fewest parentheses its precedence needs (plus explicit
    ``paren`` nodes), so precedence is exercised."""
    if e.kind == "truth":
        return render_operand(e.args[0])
    if e.kind == "cmp":
        return f"{render_operand(e.args[0])}{space}{e.op}{space}{render_operand(e.args[1])}"
    if e.kind == "in":
        left, right = e.args
        if isinstance(right, ListLit):
            text = "[" + f",{space}".join(item.text for item in right.items) + "]"
        else:
            text = right.text
        return f"{render_operand(left)} {e.op} {text}"
    if e.kind == "paren":
        return f"({space}{render(e.args[0], 1, space)}{space})"
    mine = LEVEL[e.kind]
    if e.kind == "not":
        text = "not " + render(e.args[0], mine, space)
    else:
        # left-associative: the right operand of the same operator is fine unparenthesised
        # too, since and / or are associative.
        text = f" {e.kind} ".join(render(a, mine, space) for a in e.args)
    return f"({text})" if mine < level else text


def ref_value(m: Machine, x: Ident | Lit) -> Any:
    if isinstance(x, Lit):
        return x.value
    if x.name == "name":
        return m.name
    if x.name == "rack":
        return MISSING if m.rack is None else m.rack
    return m.attributes.get(x.name, MISSING)


def ref_type(v: Any) -> str | None:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    return None


def ref_equal(a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return False
    return ref_type(a) == ref_type(b) and a == b


def ref_version(s: str) -> list[int] | None:
    if re.fullmatch(r"\d+(\.\d+)*", s):
        return [int(part) for part in s.split(".")]
    return None


def ref_order(op: str, a: Any, b: Any) -> bool:
    if a is MISSING or b is MISSING:
        return False
    ta, tb = ref_type(a), ref_type(b)
    if ta != tb or ta == "bool":
        return False
    if ta == "string":
        va, vb = ref_version(a), ref_version(b)
        if va is not None and vb is not None:
            a, b = va, vb
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def reference(e: Node, m: Machine) -> bool:
    if e.kind == "truth":
        v = ref_value(m, e.args[0])
        return v is not MISSING and bool(v)
    if e.kind == "cmp":
        a, b = ref_value(m, e.args[0]), ref_value(m, e.args[1])
        if e.op == "==":
            return ref_equal(a, b)
        if e.op == "!=":
            return not ref_equal(a, b)
        return ref_order(e.op, a, b)
    if e.kind == "in":
        v = ref_value(m, e.args[0])
        right = e.args[1]
        if isinstance(right, ListLit):
            found = any(ref_equal(v, item.value) for item in right.items)
        else:
            found = isinstance(v, str) and v in right.value
        return found if e.op == "in" else not found
    if e.kind == "not":
        return not reference(e.args[0], m)
    if e.kind == "paren":
        return reference(e.args[0], m)
    if e.kind == "and":
        return all(reference(a, m) for a in e.args)
    return any(reference(a, m) for a in e.args)


def identifiers(e: Node | Ident | Lit | ListLit) -> set[str]:
    if isinstance(e, Ident):
        return {e.name}
    if isinstance(e, Node):
        return set().union(*(identifiers(a) for a in e.args))
    return set()


@settings(max_examples=scaled_examples(400), deadline=None)
@given(expressions, st.lists(machines_st(), min_size=1, max_size=5), st.sampled_from(["", " "]))
def test_random_expressions_match_reference(e: Node, machines: list[Machine], space: str) -> None:
    text = render(e, 1, space)
    constraint = parse_constraint(text)
    negated = parse_constraint(f"not ({text})")
    expected = [reference(e, m) for m in machines]
    assert [constraint.matches(m) for m in machines] == expected, text
    assert [negated.matches(m) for m in machines] == [not x for x in expected], text
    assert constraint.mask(machines).tolist() == expected
    assert constraint.attributes() == frozenset(identifiers(e))


@settings(max_examples=scaled_examples(300), deadline=None)
@given(st.text(alphabet="ab =!<>()[],'\"\\.-+1e5 notandorin_TF$", max_size=30))
def test_arbitrary_text_parses_or_raises_a_syntax_error(text: str) -> None:
    try:
        constraint = parse_constraint(text)
    except ConstraintSyntaxError as error:
        assert 1 <= error.column <= len(text) + 1
        assert error.message and "\n" not in error.message
    else:
        assert isinstance(constraint.matches(machine(a=1, b="x")), bool)


@settings(max_examples=scaled_examples(400), deadline=None)
@given(leaves(), st.lists(machines_st(), min_size=1, max_size=5), st.sampled_from(["", " "]))
def test_random_single_conditions_match_reference(
    e: Node, machines: list[Machine], space: str
) -> None:
    """Single conditions, where no and / or can mask a wrong answer."""
    text = render(e, 1, space)
    constraint = parse_constraint(text)
    expected = [reference(e, m) for m in machines]
    assert constraint.mask(machines).tolist() == expected, text
    assert [parse_constraint(f"not {text}").matches(m) for m in machines] == [
        not x for x in expected
    ], text
