"""Write the shipped what-if examples: a Kueue cohort and a Slurm account tree, each with a
history of jobs (``examples/whatif/kueue/``, ``examples/whatif/slurm/``).

Run from anywhere: ``python examples/whatif/make_histories.py``. A fixed seed makes the files
byte-identical on every run, so they can be regenerated and reviewed as a diff.

- ``kueue/config.yaml``: a Cohort ``research`` of four ClusterQueues with fair sharing,
  their LocalQueues, Kueue's Configuration; ``kueue/config-after.yaml``: the same with 20
  GPUs of nominal quota moved from ``team-a`` to ``team-b``; ``kueue/workloads.yaml``: the
  Workloads of a few busy hours as ``kubectl get workloads -A -o yaml`` lists them.
- ``slurm/sacctmgr.txt``: ``sacctmgr -P show assoc`` of an account tree three levels deep;
  ``slurm/sacctmgr-after.txt``: the same with the shares of two groups swapped;
  ``slurm/slurm.conf``: the nodes and ``PriorityDecayHalfLife``; ``slurm/sacct.txt``: the
  jobs of a few busy hours as ``sacct -a -P`` lists them (with job steps).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
SEED = 29
START = datetime(2024, 3, 4, 8, 0, 0, tzinfo=UTC)

# ---------------------------------------------------------------------------- Kueue

TEAMS = {  # ClusterQueue: (namespace, GPUs of nominal quota, fair-sharing weight)
    "team-a": ("team-a", 24, 1),
    "team-b": ("team-b", 16, 1),
    "team-c": ("team-c", 16, 1),
    "team-d": ("team-d", 8, 1),
}
MOVED_GPUS = 20  # from team-a to team-b in config-after.yaml
KUEUE_WORKLOADS = 140
KUEUE_HOURS = 4


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def kueue_config(moved: int) -> list[dict[str, object]]:
    """The ResourceFlavor, Cohort, ClusterQueues, LocalQueues and Configuration."""
    objects: list[dict[str, object]] = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "a100"},
            "spec": {"nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Cohort",
            "metadata": {"name": "research"},
        },
    ]
    for name, (_, nominal, weight) in TEAMS.items():
        shift = {"team-a": -moved, "team-b": moved}.get(name, 0)
        gpus = nominal + shift
        objects.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": name},
                "spec": {
                    "cohortName": "research",
                    "fairSharing": {"weight": weight},
                    "preemption": {
                        "reclaimWithinCohort": "Any",
                        "withinClusterQueue": "LowerPriority",
                    },
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                            "flavors": [
                                {
                                    "name": "a100",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": gpus * 8},
                                        {"name": "memory", "nominalQuota": f"{gpus * 64}Gi"},
                                        {"name": "nvidia.com/gpu", "nominalQuota": gpus},
                                    ],
                                }
                            ],
                        }
                    ],
                },
            }
        )
    for name, (namespace, _, _) in TEAMS.items():
        objects.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "user-queue", "namespace": namespace},
                "spec": {"clusterQueue": name},
            }
        )
    objects.append(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "fairSharing": {"enable": True},
        }
    )
    return objects


def kueue_workloads(rng: random.Random) -> dict[str, object]:
    """The history: ``kubectl get workloads -A -o yaml`` of a few busy hours."""
    items: list[dict[str, object]] = []
    # team-a runs the big training jobs, team-b medium ones, the others small ones.
    mix = {"team-a": 0.35, "team-b": 0.3, "team-c": 0.2, "team-d": 0.15}
    teams = list(mix)
    span = KUEUE_HOURS * 3600
    times = sorted(rng.uniform(0, span) for _ in range(KUEUE_WORKLOADS))
    for k, offset in enumerate(times):
        team = rng.choices(teams, weights=[mix[t] for t in teams])[0]
        big, medium = team == "team-a", team == "team-b"
        pods = rng.choice([1, 2, 4]) if big else rng.choice([1, 1, 2])
        gpus = rng.choice([2, 4]) if big or medium else rng.choice([1, 2])
        minutes = rng.uniform(20, 60) if big or medium else rng.uniform(5, 30)
        created = START + timedelta(seconds=round(offset))
        admitted = created + timedelta(seconds=rng.randint(1, 120))
        finished = admitted + timedelta(seconds=round(minutes * 60))
        name = f"job-{team}-{k:04d}"
        conditions = [
            {
                "lastTransitionTime": _stamp(admitted),
                "message": f"Quota reserved in ClusterQueue {team}",
                "reason": "QuotaReserved",
                "status": "True",
                "type": "QuotaReserved",
            },
            {
                "lastTransitionTime": _stamp(admitted),
                "message": "The workload is admitted",
                "reason": "Admitted",
                "status": "True",
                "type": "Admitted",
            },
        ]
        state = rng.random()
        if state < 0.03:  # still running when the history was taken
            pass
        elif state < 0.05:  # still pending: never admitted
            conditions = [
                {
                    "lastTransitionTime": _stamp(created),
                    "message": f"couldn't assign flavors to pod set main: insufficient quota "
                    f"for nvidia.com/gpu in flavor a100, request > maximum capacity "
                    f"({gpus * pods} > 0)",
                    "reason": "Pending",
                    "status": "False",
                    "type": "QuotaReserved",
                }
            ]
        else:
            failed = state > 0.95
            conditions.append(
                {
                    "lastTransitionTime": _stamp(finished),
                    "message": "Job failed" if failed else "Job finished successfully",
                    "reason": "Failed" if failed else "Succeeded",
                    "status": "True",
                    "type": "Finished",
                }
            )
        items.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Workload",
                "metadata": {
                    "creationTimestamp": _stamp(created),
                    "name": name,
                    "namespace": team,
                },
                "spec": {
                    "active": True,
                    "podSets": [
                        {
                            "count": pods,
                            "name": "main",
                            "template": {
                                "spec": {
                                    "containers": [
                                        {
                                            "name": "trainer",
                                            "resources": {
                                                "requests": {
                                                    "cpu": str(gpus * 8),
                                                    "memory": f"{gpus * 64}Gi",
                                                    "nvidia.com/gpu": str(gpus),
                                                }
                                            },
                                        }
                                    ],
                                }
                            },
                        }
                    ],
                    "priority": 0,
                    "queueName": "user-queue",
                },
                "status": {"conditions": conditions},
            }
        )
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


# ---------------------------------------------------------------------------- Slurm

# The account tree: root > division > group, users in groups (bob in two groups).
DIVISIONS = {"science": 60, "engineering": 40}
GROUPS = {  # group: (division, Share, Share after)
    "physics": ("science", 50, 20),
    "chemistry": ("science", 50, 80),
    "ml": ("engineering", 70, 70),
    "infra": ("engineering", 30, 30),
}
USERS = {  # user: groups
    "alice": ["physics"],
    "bob": ["physics", "chemistry"],
    "carol": ["chemistry"],
    "dave": ["ml"],
    "erin": ["ml"],
    "frank": ["infra"],
}
SACCT_JOBS = 200
SACCT_HOURS = 4
NODES = 16
CPUS = 32


def sacctmgr(after: bool) -> str:
    """``sacctmgr -P show assoc format=Cluster,Account,User,Share,ParentName``."""
    lines = ["Cluster|Account|User|Share|ParentName", "hpc|root||1|"]
    for division, share in DIVISIONS.items():
        lines.append(f"hpc|{division}||{share}|root")
    for group, (division, share, share_after) in GROUPS.items():
        lines.append(f"hpc|{group}||{share_after if after else share}|{division}")
    for user, groups in USERS.items():
        lines.extend(f"hpc|{group}|{user}|1|" for group in groups)
    return "\n".join(lines) + "\n"


def slurm_conf() -> str:
    return (
        "# The parts of slurm.conf that fairshare import slurm reads.\n"
        "ClusterName=hpc\n"
        "SelectType=select/cons_tres\n"
        "PriorityType=priority/multifactor\n"
        "PriorityDecayHalfLife=0-2\n"
        "PriorityWeightFairshare=10000\n"
        f"NodeName=node[01-{NODES:02d}] CPUs={CPUS} RealMemory=128000 State=UNKNOWN\n"
        "PartitionName=batch Nodes=ALL Default=YES MaxTime=1-00:00:00 State=UP\n"
    )


def _slurm_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _elapsed(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def sacct(rng: random.Random) -> str:
    """``sacct -a -P --format=...`` of a few busy hours: jobs with their steps."""
    header = (
        "JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|AllocTRES|NNodes|"
        "NCPUS|State|Timelimit"
    )
    lines = [header]
    weights = {"alice": 3, "bob": 2, "carol": 3, "dave": 2, "erin": 1, "frank": 1}
    names = list(weights)
    span = SACCT_HOURS * 3600
    times = sorted(rng.uniform(0, span) for _ in range(SACCT_JOBS))
    start_local = START.replace(tzinfo=None)
    for k, offset in enumerate(times):
        job = 4100 + k
        user = rng.choices(names, weights=[weights[n] for n in names])[0]
        account = rng.choice(USERS[user])
        nodes = rng.choice([1, 1, 1, 2])
        cpus = nodes * rng.choice([8, 16, 32])
        mem = cpus * 2  # GiB
        submit = start_local + timedelta(seconds=round(offset))
        start = submit + timedelta(seconds=rng.randint(0, 300))
        run = rng.randint(10, 50) * 60
        limit = "01:00:00"
        roll = rng.random()
        state = "COMPLETED"
        if roll < 0.04:
            state, run = "TIMEOUT", 3600
        elif roll < 0.08:
            state = "FAILED"
            run = rng.randint(1, 300)
        elif roll < 0.11:
            state = "CANCELLED by 1001"
            run = rng.randint(60, 900)
        elif roll < 0.13:
            state = "OUT_OF_MEMORY"
            run = rng.randint(30, 600)
        end = start + timedelta(seconds=run)
        tres = f"billing={cpus},cpu={cpus},mem={mem}G,node={nodes}"
        name = rng.choice(["sim", "train", "analysis", "build"])
        if roll > 0.985:  # cancelled before it started
            lines.append(
                f"{job}|{name}|{user}|{account}|batch|{_slurm_time(submit)}|None|"
                f"{_slurm_time(submit + timedelta(seconds=120))}|00:00:00||{nodes}|{cpus}|"
                f"CANCELLED by 1001|{limit}"
            )
            continue
        fields = (
            f"{_slurm_time(submit)}|{_slurm_time(start)}|{_slurm_time(end)}|{_elapsed(run)}"
        )
        lines.append(
            f"{job}|{name}|{user}|{account}|batch|{fields}|{tres}|{nodes}|{cpus}|{state}|{limit}"
        )
        step_state = "CANCELLED" if state.startswith("CANCELLED") else state
        per_node = f"cpu={cpus // nodes},mem={mem // nodes}G,node=1"
        lines.append(
            f"{job}.batch|batch||{account}||{fields}|{per_node}|1|{cpus // nodes}|"
            f"{step_state}|"
        )
        lines.append(f"{job}.extern|extern||{account}||{fields}|{tres}|{nodes}|{cpus}|COMPLETED|")
    return "\n".join(lines) + "\n"


def _dump(objects: object) -> str:
    return yaml.safe_dump(objects, sort_keys=False, default_flow_style=False, width=100)


def main() -> None:
    rng = random.Random(SEED)
    kueue = HERE / "kueue"
    slurm = HERE / "slurm"
    kueue.mkdir(exist_ok=True)
    slurm.mkdir(exist_ok=True)
    (kueue / "config.yaml").write_text(_dump_all(kueue_config(0)))
    (kueue / "config-after.yaml").write_text(_dump_all(kueue_config(MOVED_GPUS)))
    (kueue / "workloads.yaml").write_text(_dump(kueue_workloads(rng)))
    (slurm / "sacctmgr.txt").write_text(sacctmgr(after=False))
    (slurm / "sacctmgr-after.txt").write_text(sacctmgr(after=True))
    (slurm / "slurm.conf").write_text(slurm_conf())
    (slurm / "sacct.txt").write_text(sacct(rng))


def _dump_all(objects: list[dict[str, object]]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, width=100)


if __name__ == "__main__":
    main()
