"""Cuts the trace samples in this directory from the full data sets.

The samples are small prefixes of real traces (see ``README.md`` and each folder's
``SOURCE.md``), so the tests and the README's commands run on a bare clone. This script
regenerates them, byte for byte, from the full data sets laid out as in ``docs/traces.md``
("Trace data"): by default ``../shared/data`` beside the repository, or ``--data DIR``::

    python data/samples/make_samples.py [--data DIR] [--check]

``--check`` writes nothing and exits 1 when a committed sample differs from what the cut
gives. Gzip members are written with no file name and time 0, so the bytes depend only on
the input.
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[2] / "shared" / "data"

SWIM_JOBS = {
    "FB-2009_samples_24_times_1hr_0.tsv": 1000,
    "FB-2009_samples_24_times_1hr_1.tsv": 200,
    "FB-2010_samples_24_times_1hr_0.tsv": 1000,
    "FB-2010_samples_24_times_1hr_withInputPaths_0.tsv": 300,
}
"""SWIM: the first N jobs (lines; the files have no header) of each workload."""
SWF_JOBS = {"KTH-SP2-1996-2.1-cln.swf.gz": 5000, "LCG.swf.gz": 2000}
"""SWF: every header line (``;``) and the first N job lines of each log."""
GOOGLE_START_EVENTS = 500
"""Google 2011: of shard 0, the first N of its events at time 0 (jobs running before the
trace window opens at 600 s; 7,970 of its 10,704 events) and every later event (to 5,599 s);
of shard 1 (from 5,620 s), its first N events (to 6,196 s)."""
ALIBABA_PODS = {"openb_pod_list_default.csv": 1000, "openb_pod_list_gpuspec33.csv": 1000}
"""Alibaba GPU 2023: the header and the first N pods of each pod list; the node list whole."""

ALIBABA_2017_TASKS = 300
ALIBABA_2017_MACHINES = 400
"""Alibaba v2017: the header and the first ``ALIBABA_2017_TASKS`` rows of ``batch_task.csv``;
the first ``ALIBABA_2017_MACHINES`` rows of ``server_event.csv`` (their ``add`` events)."""
ALIBABA_2018_TASKS = 400
"""Alibaba v2018: the first N rows of ``sample_tasks.csv`` and the rest of the last job's rows
(a job's DAG is whole); the first ``ALIBABA_2018_MACHINE_ROWS`` rows of ``machine_meta.csv``
(every row of its first machines)."""
ALIBABA_2018_MACHINE_ROWS = 600


def _head(lines: Iterable[str], count: int) -> list[str]:
    """The first ``count`` lines of ``lines``."""
    kept: list[str] = []
    for line in lines:
        if len(kept) == count:
            break
        kept.append(line)
    return kept


def _read(path: Path) -> list[str]:
    """The lines of ``path`` (gunzipped when it ends in ``.gz``), line ends kept."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
            return handle.readlines()
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.readlines()


def _encode(name: str, lines: list[str]) -> bytes:
    """``lines`` as the bytes of a file named ``name``: gzip (no name, time 0) for ``.gz``."""
    raw = "".join(lines).encode("utf-8")
    if not name.endswith(".gz"):
        return raw
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(raw)
    return buffer.getvalue()


def swim(data: Path) -> dict[str, bytes]:
    """The SWIM samples, by path under this directory."""
    source = data / "swim-facebook"
    return {
        f"swim/{name}": _encode(name, _head(_read(source / name), count))
        for name, count in SWIM_JOBS.items()
    }


def swf(data: Path) -> dict[str, bytes]:
    """The SWF samples: each log's header and its first jobs."""
    out: dict[str, bytes] = {}
    for name, count in SWF_JOBS.items():
        lines = _read(data / "pwa-swf" / name)
        header = [line for line in lines if line.startswith(";")]
        jobs = [line for line in lines if line.strip() and not line.startswith(";")]
        out[f"swf/{name}"] = _encode(name, header + jobs[:count])
    return out


def google(data: Path) -> dict[str, bytes]:
    """The Google 2011 ``job_events`` samples: shard 0 with fewer time-0 events, shard 1's
    start."""
    source = data / "google-clusterdata-2011" / "job_events"
    first = _read(source / "part-00000-of-00500.csv.gz")
    at_zero = [line for line in first if int(line.split(",", 1)[0]) == 0]
    later = [line for line in first if int(line.split(",", 1)[0]) > 0]
    second = _read(source / "part-00001-of-00500.csv.gz")
    return {
        "google-2011/job_events/part-00000-of-00500.csv.gz": _encode(
            ".gz", at_zero[:GOOGLE_START_EVENTS] + later
        ),
        "google-2011/job_events/part-00001-of-00500.csv.gz": _encode(
            ".gz", second[:GOOGLE_START_EVENTS]
        ),
    }


def alibaba(data: Path) -> dict[str, bytes]:
    """The Alibaba GPU 2023 samples: the whole node list, the first pods of two pod lists."""
    source = data / "alibaba-gpu-v2023"
    nodes = "openb_node_list_all_node.csv"
    out = {f"alibaba-gpu/{nodes}": _encode(nodes, _read(source / nodes))}
    for name, count in ALIBABA_PODS.items():
        out[f"alibaba-gpu/{name}"] = _encode(name, _head(_read(source / name), 1 + count))
    return out


def alibaba_batch(data: Path) -> dict[str, bytes]:
    """The Alibaba cluster-trace-v2017 and v2018 samples: the first task rows (v2018: whole
    jobs) and the machines."""
    v2017 = data / "alibaba-v2017-batch"
    v2018 = data / "alibaba-v2018-batch"
    events = "server_event.csv"
    tasks = _read(v2018 / "sample_tasks.csv")
    cut = ALIBABA_2018_TASKS
    job = tasks[cut - 1].split(",")[1]
    while cut < len(tasks) and tasks[cut].split(",")[1] == job:
        cut += 1
    machines = _read(v2018 / "machine_meta.csv")
    return {
        "alibaba-2017/batch_task.csv": _encode(
            "batch_task.csv", _head(_read(v2017 / "batch_task.csv"), 1 + ALIBABA_2017_TASKS)
        ),
        f"alibaba-2017/{events}": _encode(
            events, _head(_read(v2017 / events), ALIBABA_2017_MACHINES)
        ),
        "alibaba-2018/sample_tasks.csv": _encode("sample_tasks.csv", tasks[:cut]),
        "alibaba-2018/machine_meta.csv": _encode(
            "machine_meta.csv", machines[:ALIBABA_2018_MACHINE_ROWS]
        ),
    }


CUTS: tuple[Callable[[Path], dict[str, bytes]], ...] = (swim, swf, google, alibaba, alibaba_batch)


def main(argv: list[str] | None = None) -> int:
    """Writes (or with ``--check`` compares) every sample; 0 when done (or all equal)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the full data sets")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"error: {args.data}: no such directory (the full data sets)", file=sys.stderr)
        return 2
    differ = []
    for cut in CUTS:
        for relative, content in cut(args.data).items():
            target = HERE / relative
            if args.check:
                if not target.is_file() or target.read_bytes() != content:
                    differ.append(relative)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            print(f"{relative}: {len(content):,} bytes")
    for relative in differ:
        print(f"differs: {relative}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
