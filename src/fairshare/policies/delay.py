"""Data locality and delay scheduling (FAIR section 4, Algorithm 1).

Each map task of a job that reads input has a block on a few machines. For a machine ``n``
offered to job ``j`` the task picked is node-local if one is pending, else rack-local, else
any. With delay scheduling on, a job's *allowed locality* starts at node-local: it may launch
only node-local tasks; after waiting T1 seconds (skipped on every offer in between) it may
launch rack-local ones, and after T2 more, anything (off-rack). Launching sets the allowed
locality to the locality just achieved, so a job that gets a more local task than it was
allowed goes back (Algorithm 1's reset), and resets the wait. Per-job waits (IO-rate biasing,
FAIR section 4.3.2) replace (T1, T2).

Jobs without input blocks, re-queued tasks and reduce tasks are not delayed.

Examples
--------
Job x's two map tasks read blocks held by m1, which another job occupies; m2 shares m1's
rack, m3 does not. With (T1, T2) = (5, 5), x arriving at t=1 skips the free machines until
t=6, then takes the rack-local m2; its next task skips m3 for T2 more, until t=11.

>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import PolicyOptions, make_policy
>>> from fairshare.workload.model import Job
>>> cluster = Cluster.build(["slots"], [Machine("m1", np.array([1.0]), rack="r1"),
...                                     Machine("m2", np.array([1.0]), rack="r1"),
...                                     Machine("m3", np.array([1.0]), rack="r2")])
>>> fair = make_policy("fair", cluster, options=PolicyOptions(delay=(5.0, 5.0)))
>>> fair.job_submitted(0.0, 0, Job("busy", 0.0, "a", np.array([1.0]), 1), blocks=[("m1",)])
>>> [(d.machine, d.locality) for d in fair.decide(0.0)]
[('m1', 'node')]
>>> x = Job("x", 1.0, "b", np.array([1.0]), 2)
>>> fair.job_submitted(1.0, 1, x, blocks=[("m1",), ("m1",)])
>>> fair.decide(1.0), fair.next_wakeup()
([], 6.0)
>>> fair.advance(6.0)
>>> [(d.machine, d.locality) for d in fair.decide(6.0)], fair.next_wakeup()
([('m2', 'rack')], 11.0)
>>> fair.advance(11.0)
>>> [(d.machine, d.locality) for d in fair.decide(11.0)]
[('m3', 'off_rack')]
"""

from __future__ import annotations

from fairshare.policies.protocol import Locality
from fairshare.policies.records import JobState

LOCALITY_ORDER: dict[Locality, int] = {"node": 0, "rack": 1, "off_rack": 2}
"""A job's allowed locality is kept as this index (wider is larger)."""


def first_unlaunched(candidates: list[int] | None, launched: bytearray) -> int | None:
    """The first task of ``candidates`` (a job's map tasks with a block on one machine or
    rack, taken from the end) not yet launched; launched ones are dropped from the end as
    they are met, so that each is read once however often the list is asked.

    Parameters
    ----------
    candidates : list of int or None
        Map task indices (None: none).
    launched : bytearray
        Per map task of the job, whether it was launched.

    Returns
    -------
    int or None

    Examples
    --------
    >>> tasks = [3, 1, 0]
    >>> first_unlaunched(tasks, bytearray([1, 1, 0, 0])), tasks
    (3, [3])
    """
    if not candidates:
        return None
    while candidates:
        index = candidates[-1]
        if not launched[index]:
            return index
        candidates.pop()
    return None


def locality_of(job: JobState, index: int, machine: int, rack: list[str | None]) -> Locality:
    """Where the input block of map task ``index`` of ``job`` is, seen from ``machine``.

    Parameters
    ----------
    job : JobState
        A map side of a job that reads input.
    index : int
        The map task.
    machine : int
        The machine's index.
    rack : list of str or None
        Each machine's rack (None: in no rack).

    Returns
    -------
    {"node", "rack", "off_rack"}
        On the machine, on another machine of its rack, or elsewhere.
    """
    assert job.blocks is not None
    holders = job.blocks[index]
    if machine in holders:
        return "node"
    here = rack[machine]
    if here is not None and any(rack[h] == here for h in holders):
        return "rack"
    return "off_rack"


def may_launch(job: JobState, locality: Locality, now: float) -> bool:
    """Algorithm 1's test: whether ``job``, at its allowed locality and after waiting since it
    was first skipped, may launch a task of this ``locality`` now (always, without delay
    scheduling).

    Parameters
    ----------
    job : JobState
        A map side that reads input.
    locality : {"node", "rack", "off_rack"}
        The locality of the task it would launch.
    now : float
        The time of the offer.

    Returns
    -------
    bool
    """
    if job.waits is None or locality == "node":
        return True
    t1, t2 = job.waits
    wait = 0.0 if job.skip_since is None else now - job.skip_since
    if (
        job.allowed_locality == 2
        or (job.allowed_locality == 1 and wait >= t2)
        or (job.allowed_locality == 0 and wait >= t1 + t2)
    ):
        return True
    return locality == "rack" and (job.allowed_locality >= 1 or wait >= t1)


def pick_map(
    job: JobState, machine: int, rack: list[str | None], now: float
) -> tuple[int, Locality] | None:
    """The map task of ``job`` (which reads input) to run on ``machine``, or None when delay
    scheduling says the job must skip this offer (Algorithm 1). Marks the task launched.

    Node-local first, then rack-local, then any; a launch sets the job's allowed locality to
    the one achieved and ends its wait, a skip starts the wait.

    Parameters
    ----------
    job : JobState
        A map side that reads input and has a pending map task never launched.
    machine : int
        The machine offered.
    rack : list of str or None
        Each machine's rack.
    now : float
        The time of the offer.

    Returns
    -------
    (int, {"node", "rack", "off_rack"}) or None
        The map task and where its block is, or None to skip.
    """
    launched = job.launched
    assert launched is not None
    index = first_unlaunched(job.by_machine.get(machine), launched)
    locality: Locality = "node"
    if index is None:
        index = first_unlaunched(job.by_rack.get(rack[machine]), launched)
        locality = "rack"
        if index is None:
            while job.next_map < job.maps and launched[job.next_map]:
                job.next_map += 1
            index = job.next_map
            locality = "off_rack"
    if not may_launch(job, locality, now):
        if job.skip_since is None:
            job.skip_since = now
        return None
    # Off-rack means "any task" in Algorithm 1; report where its block really is.
    if locality == "off_rack":
        locality = locality_of(job, index, machine, rack)
    launched[index] = 1
    job.allowed_locality = LOCALITY_ORDER[locality]
    job.skip_since = None
    return index, locality


def deadlines(job: JobState) -> tuple[float, ...]:
    """When a skipped job's allowed locality next widens, so the driver wakes the policy then.

    Parameters
    ----------
    job : JobState
        A map side that reads input.

    Returns
    -------
    tuple of float
        The times its allowed locality widens (to rack-local, then to any), empty when it
        is not waiting.
    """
    if job.waits is None or job.skip_since is None:
        return ()
    t1, t2 = job.waits
    if job.allowed_locality == 0:
        return (job.skip_since + t1, job.skip_since + t1 + t2)
    if job.allowed_locality == 1:
        return (job.skip_since + t2,)
    return ()
