"""Fuzzing the command line with mutated scenarios and traces (SPEC section 4).

Hypothesis mutates valid inputs (the structure, the numbers, the encoding, the nesting) and
every run must end in exit 0 with valid output or exit 2 with one ``error:`` line: never a
traceback, a Python warning, a signal, or more than a bounded time and memory.

The commands run in one long-lived worker process (``fairshare.cli.main`` in a loop, standard
streams captured), started with an address-space limit, so that a crash or a signal kills
the worker and not the test session, and a run that hangs is noticed by the timeout; the
installed executable itself is exercised by ``test_executable.py``. In CI (``CI`` set, the
``ci`` Hypothesis profile of ``tests/conftest.py``) the search is derandomized, so a red run can
be repeated; locally each run explores new inputs (``HYPOTHESIS_PROFILE=nightly``: ten times as
many, as does ``FAIRSHARE_FUZZ_EXAMPLES=N``: N of them).
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import resource
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairshare.policies import ONLINE_POLICIES
from fairshare.solvers import SOLVER_POLICIES

from conftest import EXAMPLES, scaled_examples

RUN_SECONDS = 60.0
"""Longest a single fuzzed command may take: limits reject huge inputs before any work."""
MEMORY_BYTES = 6 * 1024**3
"""Address space of the worker: a fuzzed input must not need more."""

FUZZ = settings(
    # The Hypothesis profile (tests/conftest.py) derandomizes in CI and scales the budget.
    max_examples=int(os.environ.get("FAIRSHARE_FUZZ_EXAMPLES", "0")) or scaled_examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

_WORKER = textwrap.dedent(
    """
    import contextlib, io, json, os, sys, traceback
    reply = os.fdopen(os.dup(1), "w")
    from fairshare.cli import main
    for line in sys.stdin:
        request = json.loads(line)
        out, err = io.StringIO(), io.StringIO()
        os.chdir(request["cwd"])
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(request["argv"])
                code = 0
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 1
            except BaseException:
                traceback.print_exc()
                code = 1
        reply.write(json.dumps({"code": code, "stdout": out.getvalue(),
                                "stderr": err.getvalue()}) + "\\n")
        reply.flush()
    """
)


class Worker:
    """One ``fairshare`` process that runs command lines as they come, until it dies."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))

        return subprocess.Popen(
            [sys.executable, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=limit,  # noqa: PLW1509 - a resource limit only, no locks involved
        )

    def run(self, argv: list[str], cwd: Path) -> dict[str, Any]:
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"argv": argv, "cwd": str(cwd)}) + "\n")
        process.stdin.flush()
        answer = _read_line(process, RUN_SECONDS)
        if answer is None:
            process.kill()
            _, stderr = process.communicate()
            self.process = None
            raise AssertionError(
                f"fairshare {' '.join(argv)}: no answer in {RUN_SECONDS:.0f} s or the process "
                f"died (exit {process.returncode}): {stderr[-3000:]}"
            )
        result: dict[str, Any] = json.loads(answer)
        return result

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


def _read_line(process: subprocess.Popen[str], seconds: float) -> str | None:
    import selectors  # noqa: PLC0415

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(seconds):
            return None
    line = process.stdout.readline()
    return line or None


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    shared = Worker()
    yield shared
    shared.close()


def strict_json(text: str) -> object:
    def refuse(token: str) -> object:
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def assert_clean_outcome(argv: list[str], result: dict[str, Any]) -> None:
    """Exit 0 (warnings allowed) or exit 2 with exactly one error line, nothing else."""
    code, out, err = result["code"], result["stdout"], result["stderr"]
    context = f"fairshare {' '.join(argv)}\nexit {code}\nstderr: {err[-3000:]}"
    assert "Traceback" not in err, context
    assert "Warning:" not in err, context  # a Python warning, not a `warning:` line of ours
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), context
        assert len(lines[0]) <= 2000, context
        assert out == "", context
        return
    assert code == 0, context
    assert all(line.startswith("warning: ") for line in err.splitlines()), context
    if "--json" in argv:
        strict_json(out)


# ---------------------------------------------------------------------------------------------
# Mutations of a parsed document


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


def _set(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(node, path[:-1])[path[-1]] = value
    return node


RAW = "RAWTEXT{}TOKEN"
"""Stands for text substituted once serialised: values Python's serialisers cannot write (a
document nested thousands deep, a 5,000-digit integer, YAML anchors and aliases)."""
ALIAS_BOMB = (
    "["
    + ", ".join(
        [f"&l0 [{', '.join(['x'] * 9)}]"]
        + [f"&l{level} [{', '.join([f'*l{level - 1}'] * 9)}]" for level in range(1, 9)]
    )
    + "]"
)
"""Nine levels of nine aliases: 40 bytes per level, 9**9 nodes once expanded."""


STRANGE_NUMBERS: list[Any] = [
    0,
    -1,
    1,
    2,
    0.5,
    -0.0,
    1e-300,
    5e-324,
    1e15,
    1e300,
    1.7976931348623157e308,
    10**30,
    2**63,
    -(2**63),
    float("inf"),
    float("nan"),
]
STRANGE_STRINGS = ["", " ", "[/bold]", "[red]x[/red]", "名前", "a" * 300, "..", "m0", "cpu", "\t"]
STRANGE_VALUES = [None, True, False, [], {}, [1, 2], {"x": 1}]


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> tuple[Any, dict[str, str]]:
    """``document`` with one to four random mutations, and the text of its deep values."""
    doc = json.loads(json.dumps(document))
    raw: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 4))):
        paths = list(_paths(doc))
        path = draw(st.sampled_from(paths))
        target = _get(doc, path)
        kind = draw(
            st.sampled_from(
                ["number", "string", "value", "delete", "duplicate", "nest", "scale", "key", "raw"]
            )
        )
        if kind == "number":
            doc = _set(doc, path, draw(st.sampled_from(STRANGE_NUMBERS) | st.integers(-5, 50)))
        elif kind == "string":
            doc = _set(doc, path, draw(st.sampled_from(STRANGE_STRINGS)))
        elif kind == "value":
            doc = _set(doc, path, copy.deepcopy(draw(st.sampled_from(STRANGE_VALUES))))
        elif kind == "delete" and path:
            parent = _get(doc, path[:-1])
            del parent[path[-1]]
        elif kind == "duplicate" and isinstance(target, list) and target:
            target.append(json.loads(json.dumps(draw(st.sampled_from(target)))))
        elif kind == "nest":
            depth = draw(st.sampled_from([2, 50, 500, 3000]))
            token = RAW.format(len(raw))
            raw[token] = "[" * depth + json.dumps(target) + "]" * depth
            doc = _set(doc, path, token)
        elif kind == "raw":
            token = RAW.format(len(raw))
            raw[token] = draw(st.sampled_from(["9" * 5000, "-" + "1" * 5000, ALIAS_BOMB]))
            doc = _set(doc, path, token)
        elif kind == "scale" and isinstance(target, int | float) and not isinstance(target, bool):
            doc = _set(doc, path, target * draw(st.sampled_from([-1, 10**6, 10**12, 1e-9])))
        elif kind == "key" and isinstance(target, dict):
            key = draw(st.sampled_from(["extra", "name", "count", "weight", "[b]"]))
            value = draw(st.sampled_from(STRANGE_NUMBERS + STRANGE_STRINGS + STRANGE_VALUES))
            target[key] = copy.deepcopy(value)
    return doc, raw


@st.composite
def encoded(draw: st.DrawFn, document: tuple[Any, dict[str, str]]) -> bytes:
    """The document as YAML or JSON text, in an encoding that may be wrong or damaged."""
    doc, raw = document
    if draw(st.booleans()):
        text = json.dumps(doc, allow_nan=True, indent=0)
    else:
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**9)
    for token, value in raw.items():
        text = text.replace(f'"{token}"', value).replace(token, value)
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    data = text.encode(encoding, errors="replace")
    damage = draw(st.sampled_from(["none", "none", "flip", "truncate", "nul"]))
    if damage == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
    elif damage == "truncate" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif damage == "nul":
        data = data.replace(b":", b"\x00:", 1)
    return data


def _load(name: str) -> Any:
    return yaml.safe_load((EXAMPLES / name).read_text())


SOLVE_SEEDS = {
    name: _load(name)
    for name in (
        "tsf-figure-2a.yaml",
        "choosy-figure-1.yaml",
        "hdrf-figure-2.yaml",
        "fair-figure-3.yaml",
        "quickstart.yaml",
    )
}
SIMULATE_SEEDS = {
    name: _load(name)
    for name in (
        "sim-two-jobs.yaml",
        "sim-choosy-constraints.yaml",
        "sim-fair-section-5.3.yaml",
        "sim-fair-sticky-slots.yaml",
    )
}
SIMULATE_SEEDS["generated.yaml"] = {
    "machines": [{"name": "m", "count": 8, "capacity": {"cpu": 4, "mem": 8}, "rack": "r"}],
    "workload": {"generator": "facebook-2009", "jobs": 6},
}


@st.composite
def solve_case(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    seed = draw(st.sampled_from(sorted(SOLVE_SEEDS)))
    data = draw(encoded(draw(mutated(SOLVE_SEEDS[seed]))))
    policy = draw(st.sampled_from(list(SOLVER_POLICIES)))
    flags = ["--json"] + (["--integral"] if draw(st.booleans()) else [])
    return data, ["--policy", policy, *flags]


@st.composite
def simulate_case(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    seed = draw(st.sampled_from(sorted(SIMULATE_SEEDS)))
    data = draw(encoded(draw(mutated(SIMULATE_SEEDS[seed]))))
    policy = draw(st.sampled_from(list(ONLINE_POLICIES)))
    return data, ["--policy", policy, "--seed", str(draw(st.integers(0, 3)))]


def _scenario_file(factory: pytest.TempPathFactory, data: bytes) -> tuple[Path, Path]:
    directory = factory.mktemp("case")
    path = directory / "scenario.yaml"
    path.write_bytes(data)
    return directory, path


@FUZZ
@given(case=solve_case())
def test_fuzzed_scenarios_solve_cleanly(
    case: tuple[bytes, list[str]], worker: Worker, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data, options = case
    directory, path = _scenario_file(tmp_path_factory, data)
    argv = ["solve", str(path), *options]
    assert_clean_outcome(argv, worker.run(argv, directory))


@FUZZ
@given(case=simulate_case())
def test_fuzzed_scenarios_simulate_cleanly(
    case: tuple[bytes, list[str]], worker: Worker, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data, options = case
    directory, path = _scenario_file(tmp_path_factory, data)
    argv = ["simulate", str(path), *options, "--out", str(directory / "out")]
    result = worker.run(argv, directory)
    assert_clean_outcome(argv, result)
    if result["code"] == 0:
        strict_json((directory / "out" / "summary.json").read_text())
    else:
        assert not (directory / "out").exists()


# ---------------------------------------------------------------------------------------------
# Traces: small valid files of each format, mutated line by line and byte by byte

SWIM_TEXT = "".join(
    f"job{i}\t{49 + 60 * i}\t{10 + i}\t{740773 * (i + 1)}\t{2339561 * (i % 3)}\t{627471 + i}\n"
    for i in range(12)
)
SWF_TEXT = "; a comment\n" + "".join(
    " ".join(
        str(v)
        for v in (i + 1, 100 * i, 5, 60 + i, 1 + i % 4, -1, -1, 1 + i % 4, 120, -1, 1, 1, 1, 1,
                  1, -1, -1, -1)
    )
    + "\n"
    for i in range(12)
)  # fmt: skip
ALIBABA_PODS = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    "creation_time,deletion_time,scheduled_time\n"
    + "".join(
        f"p{i},{500 * (i % 4 + 1)},{256 * (i + 1)},{i % 2},{1000 * (i % 2)},"
        f"{'T4' if i % 3 == 0 else ''},BE,Running,{5 * i},{5 * i + 60},{5 * i + 1}\n"
        for i in range(10)
    )
)
GOOGLE_EVENTS = "".join(
    f"{600_000_000 + 1_000_000 * i},,{100 + i % 6},{event},user{i % 3},0,j{i % 6},l{i % 6}\n"
    for i, event in enumerate([0, 0, 1, 0, 1, 1, 4, 0, 5, 1, 4, 3, 0, 1, 4])
)
ALIBABA_NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,4096,1,T4\nn1,4000,2048,0,\n"

TRACE_SCENARIO = "machines:\n  - {name: m, count: 6, capacity: {cpu: 8000, mem: 65536, gpu: 2}}\n"


HUGE_FIELDS = ["9" * 400, "1" + "0" * 30, "1e308", "-1e308", "1e-300", "4e15", "1" + "0" * 5000]


@st.composite
def trace_case(draw: st.DrawFn) -> tuple[str, bytes, bool]:
    fmt = draw(st.sampled_from(["swim", "swf", "alibaba-gpu", "google-2011"]))
    text = {"swim": SWIM_TEXT, "swf": SWF_TEXT, "alibaba-gpu": ALIBABA_PODS}.get(fmt, GOOGLE_EVENTS)
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines) - 1))
        separator = {"swim": "\t", "swf": " "}.get(fmt, ",")
        fields = lines[at].rstrip("\n").split(separator)
        kind = draw(
            st.sampled_from(["field", "huge", "drop", "extra", "duplicate", "swap", "long"])
        )
        if kind == "huge":  # numbers beyond the float range, the bounds or the task limit
            value = draw(st.sampled_from(HUGE_FIELDS))
            fields[draw(st.integers(0, len(fields) - 1))] = value
        elif kind == "field":
            value = draw(
                st.sampled_from(
                    ["", "-1", "0", "1e308", "nan", "inf", "9" * 400, "x", "[/bold]", "1.5"]
                )
            )
            fields[draw(st.integers(0, len(fields) - 1))] = value
        elif kind == "drop":
            fields = fields[: draw(st.integers(0, len(fields) - 1))]
        elif kind == "extra":
            fields.append("7")
        elif kind == "duplicate":
            lines.insert(at, lines[at])
        elif kind == "swap" and at + 1 < len(lines):
            lines[at], lines[at + 1] = lines[at + 1], lines[at]
        elif kind == "long":
            fields[-1] = "7" * 5_000
        if kind in {"field", "huge", "drop", "extra", "long"}:
            lines[at] = separator.join(fields) + "\n"
    data = "".join(lines).encode()
    compressed = fmt == "swf" and draw(st.booleans())
    if compressed:
        data = gzip.compress(data, mtime=0)
        if draw(st.booleans()):
            at = draw(st.integers(10, len(data) - 9))
            data = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]
    return fmt, data, compressed


@FUZZ
@given(case=trace_case())
def test_fuzzed_traces_simulate_cleanly(
    case: tuple[str, bytes, bool],
    worker: Worker,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    fmt, data, compressed = case
    directory = tmp_path_factory.mktemp("trace")
    name = {"swim": "t.tsv", "swf": "t.swf", "alibaba-gpu": "pods.csv"}.get(fmt, "trace")
    trace = directory / (name + (".gz" if compressed else ""))
    if fmt == "google-2011":
        (trace / "job_events").mkdir(parents=True)
        (trace / "job_events" / "part-00000-of-00001.csv").write_bytes(data)
    else:
        trace.write_bytes(data)
    if fmt == "alibaba-gpu":
        (directory / "openb_node_list_gpu_node.csv").write_text(ALIBABA_NODES)
    scenario = directory / "scenario.yaml"
    scenario.write_text(TRACE_SCENARIO)
    argv = ["simulate", str(scenario), "--policy", "drf", "--trace", f"{fmt}:{trace}"]
    argv += ["--until", "100000", "--out", str(directory / "out")]
    result = worker.run(argv, directory)
    assert_clean_outcome(argv, result)


def test_the_worker_reports_a_crash_instead_of_hanging(tmp_path: Path) -> None:
    """The harness itself: a process that dies is an assertion, not a hang of the suite."""
    broken = Worker()
    original: Callable[[], subprocess.Popen[str]] = broken._start

    def start_dying() -> subprocess.Popen[str]:
        process = original()
        process.kill()
        process.wait()
        return process

    broken._start = start_dying  # type: ignore[method-assign]
    with pytest.raises((AssertionError, BrokenPipeError)):
        broken.run(["policies"], tmp_path)
    broken.close()


def test_the_worker_answers_like_the_executable(worker: Worker, tmp_path: Path) -> None:
    argv = ["solve", str(EXAMPLES / "tsf-figure-2a.yaml"), "--policy", "tsf", "--json"]
    result = worker.run(argv, tmp_path)
    assert result["code"] == 0 and result["stderr"] == ""
    doc = strict_json(result["stdout"])
    assert isinstance(doc, dict) and doc["users"]["u1"]["tasks"] == pytest.approx(9.0)
    bad = worker.run(["solve", str(tmp_path / "nope.yaml"), "--policy", "drf"], tmp_path)
    assert bad["code"] == 2 and bad["stderr"].startswith("error: ")
