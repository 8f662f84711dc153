"""Trace readers (SPEC section 3, ``--trace FORMAT:PATH``) on the real samples shipped in
``data/samples/`` (the first records of each real trace; ``data/samples/README.md`` says how
each was cut) and on small corrupt copies written here."""

from __future__ import annotations

import gzip
import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fairshare.cluster import Cluster, Machine
from fairshare.workload.loader import ScenarioError
from fairshare.workload.model import FixedDuration, Job, ReducePhase
from fairshare.workload.traces import TRACE_FORMATS, TraceError, open_trace, parse_trace_argument
from fairshare.workload.traces.google2011 import HORIZON_SECONDS
from fairshare.workload.traces.swim import (
    COPY_BYTES_PER_SECOND,
    PROCESS_BYTES_PER_SECOND,
    TASK_STARTUP_SECONDS,
)

from conftest import SAMPLE_DATA

DATA = SAMPLE_DATA
SWIM = DATA / "swim"
SWF = DATA / "swf"
GOOGLE = DATA / "google-2011"
ALIBABA = DATA / "alibaba-gpu"


def slots(machines: int = 10, resources: tuple[str, ...] = ("slot",)) -> Cluster:
    capacity = np.ones(len(resources))
    capacity.setflags(write=False)
    return Cluster.build(resources, [Machine(f"m{i}", capacity) for i in range(machines)])


def first(jobs: Iterator[Job], n: int) -> list[Job]:
    return list(itertools.islice(jobs, n))


def map_seconds(nbytes: float) -> float:
    return TASK_STARTUP_SECONDS + nbytes / PROCESS_BYTES_PER_SECOND


# --------------------------------------------------------------------------------------------
# SWIM


@pytest.mark.parametrize(
    ("name", "count"),
    [
        # the first jobs of each workload (of 5,894, 6,638, 24,442 and 25,428 in the full files)
        ("FB-2009_samples_24_times_1hr_0.tsv", 1000),
        ("FB-2009_samples_24_times_1hr_1.tsv", 200),
        ("FB-2010_samples_24_times_1hr_0.tsv", 1000),
        ("FB-2010_samples_24_times_1hr_withInputPaths_0.tsv", 300),
    ],
)
def test_swim_samples_job_counts_and_submit_order(name: str, count: int) -> None:
    submits = [job.submit for job in open_trace("swim", SWIM / name, slots()).jobs]
    assert len(submits) == count
    assert submits == sorted(submits)


def test_swim_first_jobs_fb2009() -> None:
    # job0  49  49  740773  2339561  627471: one map (under a block), one reducer (under 1 GiB)
    workload = open_trace("swim", SWIM / "FB-2009_samples_24_times_1hr_0.tsv", slots(5))
    job = next(workload.jobs)
    assert job.name == "job0"
    assert job.user == "job0"
    assert job.submit == 49.0
    assert job.tasks == 1
    assert job.input_replicas == 3
    assert job.demand.tolist() == [1.0]
    assert job.duration == FixedDuration(map_seconds(740773))
    assert job.reduce == ReducePhase(
        1, 2339561 / COPY_BYTES_PER_SECOND, map_seconds(2339561 + 627471)
    )


def test_swim_map_only_job_writes_its_output_in_the_maps() -> None:
    # job0  23  23  410483  0  2513586060 (FB-2009 sample 1): shuffles nothing
    job = next(open_trace("swim", SWIM / "FB-2009_samples_24_times_1hr_1.tsv", slots()).jobs)
    assert (job.name, job.submit, job.tasks, job.reduce) == ("job0", 23.0, 1, None)
    assert job.duration == FixedDuration(map_seconds(410483 + 2513586060))


def test_swim_block_and_reducer_counts_fb2010() -> None:
    jobs = first(open_trace("swim", SWIM / "FB-2010_samples_24_times_1hr_0.tsv", slots()).jobs, 3)
    # job2: 53,088,744,165 input bytes = 395.5 blocks of 128 MiB; 1,510,005,522 shuffle = 1.4 GiB
    assert [j.tasks for j in jobs] == [1, 1, 396]
    assert [j.reduce.tasks if j.reduce else 0 for j in jobs] == [0, 1, 2]
    assert jobs[2].duration == FixedDuration(map_seconds(53088744165 / 396))


def test_swim_input_paths_file_and_few_machines() -> None:
    path = SWIM / "FB-2010_samples_24_times_1hr_withInputPaths_0.tsv"
    jobs = first(open_trace("swim", path, slots(2)).jobs, 2)
    assert [(j.name, j.submit, j.tasks) for j in jobs] == [("job0", 1.0, 1), ("job1", 2.0, 155)]
    assert jobs[1].reduce is not None and jobs[1].reduce.tasks == 12
    assert jobs[0].input_replicas == 2  # HDFS's 3 replicas, but only 2 machines


# --------------------------------------------------------------------------------------------
# SWF


def test_swf_kth_first_jobs_and_count(tmp_path: Path) -> None:
    jobs = list(open_trace("swf", SWF / "KTH-SP2-1996-2.1-cln.swf.gz", slots()).jobs)
    assert len(jobs) == 5000  # the sample's first 5,000 of the log's 28,476 jobs
    # "15 599850 192180 3477 4 ... 12 12": 4 processors for 3477 s, user 12
    assert jobs[0] == Job(
        name="15",
        submit=599850.0,
        user="user12",
        demand=jobs[0].demand,
        tasks=4,
        duration=FixedDuration(3477.0),
        min_tasks=4,  # a parallel job is a gang
        estimate=53940.0,  # its requested time (field 9)
    )
    assert jobs[0].demand.tolist() == [1.0]
    assert [(j.name, j.tasks, j.duration) for j in jobs[1:3]] == [
        ("16", 25, FixedDuration(2488.0)),
        ("17", 5, FixedDuration(215337.0)),
    ]
    # job 27313 (the full log's line, past the sample) records no processors at all
    # (allocated and requested -1): one task
    log = tmp_path / "odd.swf"
    log.write_text(
        "; Version: 2.2\n"
        "27313 27845375    480      1   -1     -1    -1   -1    600    -1"
        "  1  48 225  -1 -1 -1 -1 -1\n"
    )
    (odd,) = open_trace("swf", log, slots()).jobs
    assert (odd.name, odd.tasks, odd.user) == ("27313", 1, "user48")


def test_swf_lcg_first_jobs() -> None:
    jobs = first(open_trace("swf", SWF / "LCG.swf.gz", slots()).jobs, 3)
    assert [(j.name, j.submit, j.user, j.tasks, j.duration) for j in jobs] == [
        ("1", 0.0, "user1", 1, FixedDuration(83.0)),
        ("2", 3.0, "user2", 1, FixedDuration(3611.0)),
        ("3", 12.0, "user1", 1, FixedDuration(205.0)),
    ]


def test_swf_skips_jobs_that_never_ran(tmp_path: Path) -> None:
    log = tmp_path / "tiny.swf"
    log.write_text(
        "; Version: 2.2\n"
        "1 0 5 -1 2 -1 -1 2 60 -1 5 3 1 -1 -1 -1 -1 -1\n"
        "2 7 0 30 -1 -1 -1 8 60 -1 1 -1 1 -1 -1 -1 -1 -1\n"
    )
    (job,) = open_trace("swf", log, slots()).jobs
    assert (job.name, job.submit, job.tasks, job.user) == ("2", 7.0, 8, "2")


# --------------------------------------------------------------------------------------------
# Google 2011


def test_google_sample_counts_and_first_jobs() -> None:
    jobs = list(open_trace("google-2011", GOOGLE, slots()).jobs)
    # the sample's jobs (the full 20 shards: 27,105 jobs of 587 users): SUBMIT events of
    # distinct job ids, `zcat job_events/*.gz | awk -F, '$4==0 && !seen[$3]++'`
    assert len(jobs) == 1588
    assert len({j.user for j in jobs}) == 169
    assert [j.submit for j in jobs] == sorted(j.submit for j in jobs)
    head = jobs[0]
    assert (head.name, head.submit, head.tasks) == ("3418309", 0.0, 1)
    assert head.user == "70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo="
    # submitted before the trace window and still running at the sample's last event (shard
    # 1's 500th, 6,196.376432 s): cut there (in the 20 full shards, a day later, at the horizon)
    assert head.duration == FixedDuration(6196.376432)
    # 6251639646: SUBMIT 604.046279 s, SCHEDULE 605.569012 s, FINISH 675.251710 s
    (job,) = [j for j in jobs if j.name == "6251639646"]
    assert job.submit == pytest.approx(604.046279)
    assert job.user == "0yO12LxPGQxL+XkI4hS6Tlyx5V3KOvjHS0DQSOJeMbs="
    assert isinstance(job.duration, FixedDuration)
    assert job.duration.seconds == pytest.approx(675.251710 - 605.569012)


def test_google_accepts_the_job_events_directory_itself() -> None:
    jobs = first(open_trace("google-2011", GOOGLE / "job_events", slots()).jobs, 1)
    assert jobs[0].name == "3418309"


def _google_dir(tmp_path: Path, lines: list[str]) -> Path:
    table = tmp_path / "trace" / "job_events"
    table.mkdir(parents=True)
    (table / "part-00000-of-00001.csv").write_text("".join(line + "\n" for line in lines))
    return tmp_path / "trace"


def test_google_events_to_jobs(tmp_path: Path) -> None:
    us = 1_000_000
    day = int(HORIZON_SECONDS) * us
    trace = _google_dir(
        tmp_path,
        [
            f"{600 * us},,1,0,alice,0,n,l",  # SUBMIT
            f"{601 * us},,2,0,bob,0,n,l",
            f"{605 * us},,2,1,bob,0,n,l",  # SCHEDULE
            f"{610 * us},,2,4,bob,0,n,l",  # FINISH: 2 ran 5 s
            f"{612 * us},,1,2,alice,0,n,l",  # EVICT does not end job 1
            f"{620 * us},,1,5,alice,0,n,l",  # KILL: 1 ran 20 s from its submit (never scheduled)
            f"{630 * us},,1,0,alice,0,n,l",  # re-SUBMIT of an ended job: ignored
            f"{700 * us},,3,0,carol,0,n,l",
            f"{700 * us + day},,4,0,dave,0,n,l",  # a day later: 3 is cut at the horizon
            f"{800 * us + day},,9,4,erin,0,n,l",  # an event for a job never submitted
        ],
    )
    jobs = list(open_trace("google-2011", trace, slots()).jobs)
    assert [(j.name, j.user, j.submit, j.duration) for j in jobs] == [
        ("1", "alice", 600.0, FixedDuration(20.0)),
        ("2", "bob", 601.0, FixedDuration(5.0)),
        ("3", "carol", 700.0, FixedDuration(HORIZON_SECONDS)),
        ("4", "dave", 700.0 + HORIZON_SECONDS, FixedDuration(100.0)),  # cut at the trace's end
    ]


# --------------------------------------------------------------------------------------------
# Alibaba GPU 2023


def test_alibaba_cluster_from_the_node_list_beside() -> None:
    workload = open_trace("alibaba-gpu", ALIBABA / "openb_pod_list_default.csv", None)
    cluster = workload.cluster
    assert cluster.resources == ("cpu", "mem", "gpu")
    assert len(cluster.machines) == 1523
    node = cluster.machines[0]
    assert (node.name, node.capacity.tolist(), dict(node.attributes)) == (
        "openb-node-0000",
        [32.0, 256.0, 0.0],
        {},
    )
    gpu_node = next(m for m in cluster.machines if m.name == "openb-node-0123")
    assert gpu_node.capacity.tolist() == [64.0, 256.0, 2.0]
    assert dict(gpu_node.attributes) == {"gpu_model": "P100"}
    models = [m.attributes.get("gpu_model") for m in cluster.machines]
    assert (models.count("G2"), models.count("T4"), models.count(None)) == (549, 404, 310)
    jobs = list(workload.jobs)
    assert len(jobs) == 1000  # the sample's first 1,000 of the 8,152 pods
    assert all(j.constraint is None for j in jobs)  # the default list has no gpu_spec


def test_alibaba_first_pods() -> None:
    jobs = first(open_trace("alibaba-gpu", ALIBABA / "openb_pod_list_default.csv", None).jobs, 2)
    # openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0
    assert (jobs[0].name, jobs[0].user, jobs[0].submit, jobs[0].tasks) == (
        "openb-pod-0000",
        "openb-pod-0000",
        0.0,
        1,
    )
    assert jobs[0].demand.tolist() == [12.0, 16.0, 1.0]
    assert jobs[0].duration == FixedDuration(12537496.0)
    # openb-pod-0001,6000,12288,1,460,...,427061,12902960,427061: shares 46% of a GPU
    assert jobs[1].demand.tolist() == [6.0, 12.0, 0.46]
    assert jobs[1].duration == FixedDuration(12902960.0 - 427061.0)


def test_alibaba_gpu_spec_becomes_a_gpu_model_constraint() -> None:
    workload = open_trace("alibaba-gpu", ALIBABA / "openb_pod_list_gpuspec33.csv", None)
    jobs = list(workload.jobs)
    constrained = [j for j in jobs if j.constraint is not None]
    # the sample's pods with a gpu_spec (the full list: 8,152 - 5,764 of them)
    assert len(constrained) == 281
    pod9 = next(j for j in jobs if j.name == "openb-pod-0009")
    assert pod9.constraint is not None
    assert str(pod9.constraint) == "gpu_model in ['V100M16', 'V100M32']"
    eligible = {
        m.attributes["gpu_model"] for m in workload.cluster.machines if pod9.constraint.matches(m)
    }
    assert eligible == {"V100M16", "V100M32"}
    pod12 = next(j for j in jobs if j.name == "openb-pod-0012")
    assert pod12.duration == FixedDuration(10959245.0 - 6595531.0)  # from scheduling


def test_alibaba_on_the_scenario_machines(tmp_path: Path) -> None:
    capacity = np.array([0.0, 96.0, 512.0, 8.0])
    capacity.setflags(write=False)
    cluster = Cluster.build(("disk", "cpu", "memory", "gpu"), [Machine("big", capacity)])
    workload = open_trace("alibaba-gpu", ALIBABA / "openb_pod_list_default.csv", cluster)
    assert workload.cluster is cluster
    assert next(workload.jobs).demand.tolist() == [0.0, 12.0, 16.0, 1.0]
    with pytest.raises(TraceError) as err:
        next(open_trace("alibaba-gpu", ALIBABA / "openb_pod_list_default.csv", slots()).jobs)
    assert err.value.where == "line 2"
    assert "demands cpu" in err.value.what


def test_alibaba_without_machines_or_node_list(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    shutil.copy(ALIBABA / "openb_pod_list_default.csv", pods)
    with pytest.raises(TraceError, match="no node list"):
        open_trace("alibaba-gpu", pods, None)
    with pytest.raises(TraceError, match="scenario must give them"):
        open_trace("swim", SWIM / "FB-2009_samples_24_times_1hr_0.tsv", None)


# --------------------------------------------------------------------------------------------
# Errors: file and line, raised when iteration reaches the record


def _copy_with_line(source: Path, target: Path, line: int, text: str, head: int = 50) -> Path:
    """The first ``head`` lines of ``source`` with line ``line`` (1-based) replaced."""
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt") as handle:
        lines = [next(handle) for _ in range(head)]
    lines[line - 1] = text + "\n"
    writer = gzip.open if target.suffix == ".gz" else open
    with writer(target, "wt") as out:
        out.writelines(lines)
    return target


@pytest.mark.parametrize(
    ("fmt", "source", "name", "line", "text", "what"),
    [
        ("swim", SWIM / "FB-2009_samples_24_times_1hr_0.tsv", "t.tsv", 7, "job6\t400\t3", "got 3"),
        ("swim", SWIM / "FB-2009_samples_24_times_1hr_0.tsv", "t.tsv", 4, "job3\t200\t1\tx\t0\t0",
         "map input bytes"),
        ("swim", SWIM / "FB-2009_samples_24_times_1hr_0.tsv", "t.tsv", 9, "job8\t1\t0\t5\t0\t0",
         "before the previous"),
        ("swf", SWF / "KTH-SP2-1996-2.1-cln.swf.gz", "t.swf.gz", 30, "15 599850 1 2 3",
         "expected 18 fields"),
        ("swf", SWF / "LCG.swf.gz", "t.swf", 40, " ".join(["2000000", "-5"] + ["1"] * 16),
         "submit time (field 2)"),
        ("alibaba-gpu", ALIBABA / "openb_pod_list_default.csv", "pods.csv", 5,
         "openb-pod-0003,4000,abc,0,0,,BE,Running,1,2,1", "memory_mib"),
        ("alibaba-gpu", ALIBABA / "openb_pod_list_default.csv", "pods.csv", 3,
         "openb-pod-0001,6000", "expected 11"),
    ],
)  # fmt: skip
def test_corrupt_record_names_file_and_line(
    tmp_path: Path, fmt: str, source: Path, name: str, line: int, text: str, what: str
) -> None:
    path = _copy_with_line(source, tmp_path / name, line, text)
    cluster = slots(4, ("cpu", "mem", "gpu")) if fmt == "alibaba-gpu" else slots()
    workload = open_trace(fmt, path, cluster)
    with pytest.raises(TraceError) as err:
        for _ in workload.jobs:
            pass
    assert (err.value.file, err.value.where) == (str(path), f"line {line}")
    assert what in err.value.what
    assert str(err.value).startswith(f"error: {path}: line {line}: ")
    assert "\n" not in str(err.value)


def test_google_corrupt_shard_names_the_shard_and_line(tmp_path: Path) -> None:
    trace = tmp_path / "trace" / "job_events"
    trace.mkdir(parents=True)
    shutil.copy(GOOGLE / "job_events" / "part-00001-of-00500.csv.gz", trace)
    shard = _copy_with_line(
        GOOGLE / "job_events" / "part-00000-of-00500.csv.gz",
        trace / "part-00000-of-00500.csv.gz",
        12,
        "5,,3418309,11,user,0,n,l",
    )
    with pytest.raises(TraceError) as err:
        list(open_trace("google-2011", tmp_path / "trace", slots()).jobs)
    assert (err.value.file, err.value.where) == (str(shard), "line 12")
    assert (
        err.value.what == "field event type (field 4): must be a whole number from 0 to 8, got '11'"
    )


def test_truncated_gzip_names_where_it_broke(tmp_path: Path) -> None:
    data = (SWF / "KTH-SP2-1996-2.1-cln.swf.gz").read_bytes()
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceError) as err:
        list(open_trace("swf", path, slots()).jobs)
    assert err.value.where.startswith("line ")
    assert int(err.value.where.split()[1]) > 1000


def test_streaming_reads_lazily(tmp_path: Path) -> None:
    """The first jobs come out of a file whose end is corrupt: nothing reads ahead."""
    for fmt, source, name in [
        ("swim", SWIM / "FB-2010_samples_24_times_1hr_0.tsv", "t.tsv"),
        ("swf", SWF / "LCG.swf.gz", "t.swf.gz"),
        ("alibaba-gpu", ALIBABA / "openb_pod_list_default.csv", "pods.csv"),
    ]:
        path = _copy_with_line(source, tmp_path / name, 500, "garbage", head=500)
        cluster = slots(4, ("cpu", "mem", "gpu")) if fmt == "alibaba-gpu" else slots()
        jobs = first(open_trace(fmt, path, cluster).jobs, 10)
        assert len(jobs) == 10


def test_missing_files_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(TraceError) as err:
        open_trace("swim", tmp_path / "none.tsv", slots())
    assert (err.value.where, err.value.what) == ("file", "no such SWIM trace (.tsv)")
    with pytest.raises(TraceError, match="expects a directory"):
        open_trace("google-2011", SWIM / "FB-2009_samples_24_times_1hr_0.tsv", slots())
    with pytest.raises(TraceError, match="no job_events shards"):
        open_trace("google-2011", tmp_path, slots())
    with pytest.raises(ScenarioError) as unknown:
        open_trace("parquet", tmp_path, slots())
    assert unknown.value.what == (
        "unknown trace format 'parquet'; allowed: swim, google-2011, alibaba-gpu, alibaba-2017, "
        "alibaba-2018, swf, slurm-sacct, kueue-workloads"
    )
    bad_gzip = tmp_path / "x.swf.gz"
    bad_gzip.write_text("not gzip")
    with pytest.raises(TraceError, match="cannot read"):
        open_trace("swf", bad_gzip, slots())


def test_parse_trace_argument() -> None:
    assert parse_trace_argument("swim:/a/b:c.tsv") == ("swim", Path("/a/b:c.tsv"))
    assert tuple(TRACE_FORMATS) == (
        "swim",
        "google-2011",
        "alibaba-gpu",
        "alibaba-2017",
        "alibaba-2018",
        "swf",
        "slurm-sacct",
        "kueue-workloads",
    )
    with pytest.raises(ScenarioError, match="expected FORMAT:PATH"):
        parse_trace_argument("swim")
    with pytest.raises(ScenarioError, match="unknown trace format 'csv'"):
        parse_trace_argument("csv:x")


def test_alibaba_small_lists_with_byte_order_mark(tmp_path: Path) -> None:
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(
        "\ufeffsn,cpu_milli,memory_mib,gpu,model\nn0,8000,4096,1,T4\nn1,4000,2048,0,\n"
    )
    pods = tmp_path / "pods.csv"
    pods.write_text(
        "\ufeffname,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
        "creation_time,deletion_time,scheduled_time\n"
        "p0,500,1024,0,0,,BE,Pending,5,65,\n"
        "p1,2000,512,1,1000,T4|A10,LS,Running,7,20,9\n"
    )
    workload = open_trace("alibaba-gpu", pods, None)
    assert [(m.name, m.capacity.tolist()) for m in workload.cluster.machines] == [
        ("n0", [8.0, 4.0, 1.0]),
        ("n1", [4.0, 2.0, 0.0]),
    ]
    p0, p1 = workload.jobs
    assert (p0.demand.tolist(), p0.duration, p0.constraint) == (
        [0.5, 1.0, 0.0],
        FixedDuration(60.0),  # never scheduled: its lifetime from creation
        None,
    )
    assert (p1.submit, p1.duration, str(p1.constraint)) == (
        7.0,
        FixedDuration(11.0),
        "gpu_model in ['T4', 'A10']",
    )
    assert [m.name for m in workload.cluster.machines if p1.constraint.matches(m)] == ["n0"]
