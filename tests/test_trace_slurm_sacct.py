"""``--trace slurm-sacct:FILE``: Slurm's ``sacct -P`` history as jobs
(:mod:`fairshare.workload.traces.slurm_sacct`, docs/scenarios.md#slurm-sacct).

The records are written as ``sacct -P`` prints them (the sacct man page: ``--parsable2``
output, ``JobID`` of steps ``N.batch``/``N.extern``/``N.0``, array tasks ``N_I``,
heterogeneous components ``N+K``, ``Unknown``/``None`` for unset times, ``CANCELLED by UID``,
and the "JOB STATE CODES" section's states).
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.errors import FairshareError
from fairshare.workload.traces import TraceError
from fairshare.workload.traces.slurm_sacct import read_sacct

from conftest import EXAMPLES, assert_rejected, run_fairshare

HEADER = (
    "JobID|JobName|User|Account|Submit|Start|End|Elapsed|AllocTRES|NNodes|NCPUS|State|Timelimit"
)
CLUSTER = Cluster.build(
    ["cpu", "mem", "gpu"], [Machine(f"n{k}", np.array([32.0, 128000.0, 4.0])) for k in range(4)]
)


def row(
    job: str,
    user: str = "alice",
    account: str = "physics",
    submit: str = "2024-03-04T08:00:00",
    start: str = "2024-03-04T08:00:10",
    end: str = "2024-03-04T08:10:10",
    tres: str = "billing=4,cpu=4,mem=8G,node=1",
    nodes: str = "1",
    state: str = "COMPLETED",
    limit: str = "01:00:00",
) -> str:
    return (
        f"{job}|x|{user}|{account}|{submit}|{start}|{end}|00:10:00|{tres}|{nodes}|4|{state}|{limit}"
    )


def read(
    tmp_path: Path, *rows: str, users: tuple[str, ...] = ("alice", "bob")
) -> tuple[list, list[str]]:
    path = tmp_path / "sacct.txt"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    jobs = read_sacct(path, CLUSTER, users)
    listed = list(jobs)
    return listed, jobs.warnings


def test_steps_are_skipped_and_arrays_and_het_components_are_jobs(tmp_path: Path) -> None:
    """sacct man page: steps ``N.batch``, ``N.extern``, ``N.0`` belong to job N's allocation;
    array tasks ``N_I`` and heterogeneous components ``N+K`` are jobs of their own."""
    jobs, warnings = read(
        tmp_path,
        row("100"),
        row("100.batch", user=""),
        row("100.extern", user=""),
        row("100.0", user=""),
        row("101_1"),
        row("101_2"),
        row("102+0"),
        row("102+1", tres="cpu=1,mem=1G,node=1"),
        row("102+0.batch", user=""),
    )
    assert [j.name for j in jobs] == ["100", "101_1", "101_2", "102+0", "102+1"]
    assert warnings == []


@pytest.mark.parametrize(
    "state",
    [
        "COMPLETED",
        "FAILED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
        "NODE_FAIL",
        "PREEMPTED",
        "CANCELLED by 1001",
    ],
)
def test_a_job_that_ran_keeps_its_recorded_run_time(tmp_path: Path, state: str) -> None:
    """Every finished state with a Start ran ``End - Start``: 08:00:10 to 08:10:10 is 600 s;
    a job cancelled while running ran until cancelled."""
    (job,), warnings = read(tmp_path, row("7", state=state))
    assert job.duration.seconds == 600.0
    assert job.estimate == 3600.0
    assert warnings == []


def test_records_that_never_ran_or_are_unfinished_are_skipped_and_counted(tmp_path: Path) -> None:
    """``CANCELLED`` without a Start (``Unknown`` or ``None``), ``PENDING``, ``RUNNING`` (End
    ``Unknown``) and ``REQUEUED`` are skipped, counted in one warning line."""
    jobs, warnings = read(
        tmp_path,
        row("1"),
        row("2", start="Unknown", state="CANCELLED by 0"),
        row("3", start="None", end="2024-03-04T08:01:00", state="CANCELLED by 1001"),
        row("4", start="Unknown", end="Unknown", state="PENDING"),
        row("5", end="Unknown", state="RUNNING"),
        row("6", state="REQUEUED"),
        row("6"),
    )
    assert [j.name for j in jobs] == ["1", "6"]
    (line,) = warnings
    assert line == (
        f"warning: {tmp_path / 'sacct.txt'}: 5 job records skipped: 2 never started (cancelled "
        "before it ran), 1 pending (never ran), 1 still running (run time unknown), 1 requeued "
        "or revoked (superseded by a later record, or run elsewhere); only jobs with a Start "
        "and an End are replayed"
    )


def test_demand_per_node_units_and_gangs(tmp_path: Path) -> None:
    """AllocTRES ``cpu=8,mem=16G,node=2,gres/gpu=2`` on two nodes: two tasks of 4 CPUs,
    8192 MiB and one GPU, started together; ``mem`` in M, G, T; typed GPUs summed; NCPUS when
    AllocTRES is empty."""
    jobs, _ = read(
        tmp_path,
        row("1", tres="billing=8,cpu=8,mem=16G,node=2,gres/gpu=2", nodes="2"),
        row("2", tres="cpu=2,mem=500M,node=1", submit="2024-03-04T08:00:01"),
        row("3", tres="cpu=1,mem=1T,gres/gpu:a100=1,gres/gpu:v100=2", submit="2024-03-04T08:00:02"),
        row("4", tres="", submit="2024-03-04T08:00:03"),
    )
    assert [(j.tasks, j.min_tasks, j.demand.tolist()) for j in jobs] == [
        (2, 2, [4.0, 8192.0, 1.0]),
        (1, None, [2.0, 500.0, 0.0]),
        (1, None, [1.0, 1024.0**2, 3.0]),
        (1, None, [4.0, 0.0, 0.0]),
    ]


def test_jobs_are_replayed_in_submit_order_from_the_first_submit(tmp_path: Path) -> None:
    """sacct lists by JobID; an array task submitted earlier than a lower JobID comes first."""
    jobs, _ = read(
        tmp_path,
        row(
            "10",
            submit="2024-03-04T09:00:00",
            start="2024-03-04T09:00:00",
            end="2024-03-04T09:01:00",
        ),
        row(
            "11",
            submit="2024-03-04T08:30:00",
            start="2024-03-04T09:00:00",
            end="2024-03-04T09:01:00",
        ),
        row(
            "12",
            submit="2024-03-04T09:00:00",
            start="2024-03-04T09:00:00",
            end="2024-03-04T09:01:00",
        ),
    )
    assert [(j.name, j.submit) for j in jobs] == [("11", 0.0), ("10", 1800.0), ("12", 1800.0)]


def test_tenants_are_named_as_the_slurm_importer_names_users(tmp_path: Path) -> None:
    """``fairshare import slurm`` names a user ``USER``, or ``ACCOUNT/USER`` when it is under
    several accounts; a tenant the scenario lacks is counted in a warning."""
    jobs, warnings = read(
        tmp_path,
        row("1", user="alice", account="physics"),
        row("2", user="bob", account="physics"),
        row("3", user="bob", account="chemistry"),
        row("4", user="zoe", account="bio"),
        users=("alice", "physics/bob", "chemistry/bob"),
    )
    assert [j.user for j in jobs] == ["alice", "physics/bob", "chemistry/bob", "zoe"]
    assert warnings == [
        f"warning: {tmp_path / 'sacct.txt'}: 1 jobs of 1 user(s) the scenario lacks ('zoe'): "
        "each is a user of its own at the root"
    ]


def test_without_scenario_users_the_importers_rule_applies_to_the_history(tmp_path: Path) -> None:
    jobs, warnings = read(
        tmp_path,
        row("1", user="alice", account="physics"),
        row("2", user="bob", account="physics"),
        row("3", user="bob", account="chemistry"),
        users=(),
    )
    assert [j.user for j in jobs] == ["alice", "physics/bob", "chemistry/bob"]
    assert warnings == []


def test_parsable_with_a_trailing_bar_and_columns_in_any_order(tmp_path: Path) -> None:
    """``sacct -p`` ends every line with ``|``; columns come in the order of ``--format``."""
    path = tmp_path / "sacct.txt"
    path.write_text(
        "State|End|Start|Submit|Account|User|JobID|NCPUS|\n"
        "COMPLETED|2024-03-04T08:01:40|2024-03-04T08:00:00|2024-03-04T08:00:00|p|alice|9|3|\n"
    )
    (job,) = list(read_sacct(path, CLUSTER, ()))
    assert (job.name, job.user, job.tasks, job.demand.tolist(), job.duration.seconds) == (
        "9",
        "alice",
        1,
        [3.0, 0.0, 0.0],
        100.0,
    )


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("JobID|User|Submit\n", "line 1", "the header lacks column(s) Account, Start, End, State"),
        (
            HEADER + "\n" + row("1", submit="2024-03-04 08:00:00"),
            "line 2",
            "field Submit: must be a time",
        ),
        (HEADER + "\n" + row("1", state="EXPLODED"), "line 2", "field State: must be one of"),
        (HEADER + "\n" + row("1", tres="cpu=x"), "line 2", "field AllocTRES cpu: must be a number"),
        (HEADER + "\n" + row("1", tres="cpu4"), "line 2", "field AllocTRES: expected NAME=VALUE"),
        (HEADER + "\n" + row("1", nodes="-2"), "line 2", "field NNodes: must be a whole number"),
        (HEADER + "\n" + row("1", limit="soon"), "line 2", "field Timelimit: must be a Slurm time"),
        (
            HEADER + "\n" + row("1", start="2024-03-04T09:00:00"),
            "line 2",
            "fields Submit, Start, End",
        ),
        (
            HEADER + "\n" + row("1") + "\n" + row("1"),
            "line 3",
            "JobID '1' repeats (first at line 2)",
        ),
        (HEADER + "\n1|x|alice", "line 2", "expected 13 fields separated by '|', got 3"),
        (HEADER + "\n" + row("1", user=""), "line 2", "field User: job '1' names no user"),
        ("", "file", "is empty"),
    ],
)
def test_malformed_histories_name_the_line_and_field(
    tmp_path: Path, text: str, where: str, what: str
) -> None:
    path = tmp_path / "sacct.txt"
    path.write_text(text)
    with pytest.raises(TraceError) as caught:
        list(read_sacct(path, CLUSTER, ()))
    assert caught.value.where == where
    assert what in caught.value.what


def test_a_malformed_record_is_one_error_line_through_the_executable(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("machines: [{name: m, capacity: {cpu: 32, mem: 128000}}]\n")
    trace = tmp_path / "sacct.txt"
    trace.write_text(HEADER + "\n" + row("1") + "\n" + row("2", end="yesterday") + "\n")
    done = run_fairshare(
        "simulate", str(scenario), "--policy", "drf", "--trace", f"slurm-sacct:{trace}",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    line = assert_rejected(done)
    assert line.startswith(f"error: {trace}: line 3: field End: must be a time YYYY-MM-DDTHH:MM:SS")
    assert not (tmp_path / "out").exists()


def per_user(jobs_csv: Path) -> Counter[str]:
    with jobs_csv.open() as handle:
        return Counter(record["user"] for record in csv.DictReader(handle))


def test_import_slurm_then_simulate_the_history_lands_jobs_in_the_imported_users(
    tmp_path: Path,
) -> None:
    """The shipped example: ``fairshare import slurm`` + ``simulate --trace slurm-sacct:``;
    bob, under physics and chemistry, is two users; the skipped records are one warning."""
    here = EXAMPLES / "whatif" / "slurm"
    scenario = tmp_path / "s.yaml"
    done = run_fairshare(
        "import", "slurm", str(here / "sacctmgr.txt"), str(here / "slurm.conf"), "-o", str(scenario)
    )
    assert done.returncode == 0, done.stderr
    done = run_fairshare(
        "simulate", str(scenario), "--policy", "slurm-fairtree",
        "--trace", f"slurm-sacct:{here / 'sacct.txt'}", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "5 job records skipped: 5 never started" in done.stderr
    counts = per_user(tmp_path / "out" / "jobs.csv")
    expected: Counter[str] = Counter()
    with (here / "sacct.txt").open() as handle:
        for record in csv.DictReader(handle, delimiter="|"):
            if "." in record["JobID"] or record["Start"] == "None":
                continue
            bob = record["User"] == "bob"
            expected[f"{record['Account']}/bob" if bob else record["User"]] += 1
    assert counts == expected
    assert set(counts) == {
        "alice",
        "carol",
        "dave",
        "erin",
        "frank",
        "physics/bob",
        "chemistry/bob",
    }


def p95_waits(jobs_csv: Path) -> dict[str, float]:
    waits: dict[str, list[float]] = {}
    with jobs_csv.open() as handle:
        for record in csv.DictReader(handle):
            waits.setdefault(record["user"], []).append(float(record["queueing_delay"]))
    return {
        user: sorted(values)[max(0, math.ceil(0.95 * len(values)) - 1)]
        for user, values in waits.items()
    }


def test_the_shipped_slurm_change_hurts_physics(tmp_path: Path) -> None:
    """examples/whatif/slurm: lowering physics' share (sacctmgr-after.txt) makes physics/bob's
    p95 wait grow under slurm-fairtree."""
    here = EXAMPLES / "whatif" / "slurm"
    result = {}
    for variant in ("sacctmgr.txt", "sacctmgr-after.txt"):
        scenario = tmp_path / f"{variant}.yaml"
        out = tmp_path / f"{variant}.out"
        assert (
            run_fairshare(
                "import",
                "slurm",
                str(here / variant),
                str(here / "slurm.conf"),
                "-o",
                str(scenario),
            ).returncode
            == 0
        )
        done = run_fairshare(
            "simulate", str(scenario), "--policy", "slurm-fairtree",
            "--trace", f"slurm-sacct:{here / 'sacct.txt'}", "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result[variant] = p95_waits(out / "jobs.csv")
    before, after = result["sacctmgr.txt"], result["sacctmgr-after.txt"]
    assert after["physics/bob"] > before["physics/bob"] + 1000


def test_the_reader_is_registered_and_checks_the_file_at_once(tmp_path: Path) -> None:
    with pytest.raises(FairshareError):
        read_sacct(tmp_path / "missing.txt", CLUSTER, ())
