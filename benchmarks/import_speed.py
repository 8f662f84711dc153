"""Import speed (issue 29's bound: a 10,000-queue configuration under 2 s): writes one
configuration of ``--queues`` queues per format (Kueue: ClusterQueues in cohorts of 10 with a
LocalQueue each; Slurm: accounts in parents of 10, a user each; yarn-fair and yarn-capacity:
queues in parents of 10) and times ``fairshare import FORMAT FILE -o OUT`` end to end, the
best of ``--repeat`` runs of the installed executable.

Usage: ``python benchmarks/import_speed.py [--queues 10000] [--repeat 3] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def kueue(n: int) -> str:
    """``n`` ClusterQueues in cohorts of 10, each with a LocalQueue."""
    docs = []
    for c in range(n // 10):
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {{name: co{c}}}\n"
        )
    for q in range(n):
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
            f"metadata: {{name: cq{q}}}\nspec:\n  cohort: co{q // 10}\n"
            "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
            "    - name: default\n      resources: [{name: cpu, nominalQuota: '4'}]\n"
        )
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{name: lq{q}, namespace: ns}}\nspec: {{clusterQueue: cq{q}}}\n"
        )
    return "---\n".join(docs)


def slurm(n: int) -> str:
    """``n`` accounts below parents of 10, a user in each leaf account."""
    lines = ["Cluster|Account|User|Share|ParentName", "c|root||1|"]
    parents = n // 10
    for p in range(parents):
        lines.append(f"c|p{p}||{1 + p % 5}|root")
    for a in range(n - parents):
        lines.append(f"c|a{a}||{1 + a % 7}|p{a % parents}")
        lines.append(f"c|a{a}|u{a}|1|")
    return "\n".join(lines) + "\n"


def yarn_fair(n: int) -> str:
    """``n`` queues: parents of 10 leaves with weights and minimum resources."""
    parents = n // 11
    out = ["<allocations>"]
    for p in range(parents):
        out.append(f'<queue name="p{p}"><weight>{1 + p % 3}</weight>')
        for leaf in range(10):
            out.append(
                f'<queue name="q{leaf}"><minResources>1024 mb, 1 vcores</minResources>'
                "<maxResources>8192 mb, 8 vcores</maxResources></queue>"
            )
        out.append("</queue>")
    out.append("</allocations>")
    return "\n".join(out)


def yarn_capacity(n: int) -> str:
    """``n`` queues: parents of 10 leaves, percentages adding up to 100."""
    parents = n // 11
    props = [("root.queues", ",".join(f"p{p}" for p in range(parents)))]
    share = 100 / parents
    for p in range(parents):
        props.append((f"root.p{p}.capacity", f"{share!r}"))
        props.append((f"root.p{p}.queues", ",".join(f"q{leaf}" for leaf in range(10))))
        for leaf in range(10):
            props.append((f"root.p{p}.q{leaf}.capacity", "10"))
            props.append((f"root.p{p}.q{leaf}.maximum-capacity", "50"))
    rows = "\n".join(
        f"<property><name>yarn.scheduler.capacity.{k}</name><value>{v}</value></property>"
        for k, v in props
    )
    return f"<configuration>\n{rows}\n</configuration>\n"


FORMATS = {
    "kueue": ("kueue.yaml", kueue),
    "slurm": ("assoc.txt", slurm),
    "yarn-fair": ("fair-scheduler.xml", yarn_fair),
    "yarn-capacity": ("capacity-scheduler.xml", yarn_capacity),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="import-speed-"))
    folder.mkdir(parents=True, exist_ok=True)
    executable = shutil.which("fairshare") or sys.exit("fairshare is not on PATH")
    for fmt, (name, make) in FORMATS.items():
        path = folder / name
        path.write_text(make(args.queues))
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            done = subprocess.run(
                [executable, "import", fmt, str(path), "-o", str(folder / f"imported-{fmt}.yaml")],
                capture_output=True,
                text=True,
                check=False,
            )
            best = min(best, time.perf_counter() - start)
            if done.returncode != 0:
                sys.exit(f"{fmt}: exit {done.returncode}: {done.stderr[-500:]}")
        size = path.stat().st_size / 2**20
        print(f"{fmt:14s} {args.queues:,} queues  {size:5.1f} MiB  {best:6.2f} s")


if __name__ == "__main__":
    main()
