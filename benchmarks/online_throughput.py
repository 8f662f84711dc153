"""Online scheduling throughput (issue 4): task placements per second, end to end.

10,000 machines (two attribute classes, two racks of sizes), 1,000 jobs of 200 tasks each, a
third of them constrained to a machine class, three task shapes, exponential durations,
submissions spread over time. Runs ``simulate`` for each policy and reports placements per
second (launches / CPU time of the process, which a busy shared machine disturbs less than
wall time; wall time is printed too) and the ratio to a bare heapq push/pop loop over the
same number of decisions (one push and one pop per placement, the floor of any heap-driven
simulator).

    python benchmarks/online_throughput.py [--policies drf,tsf,choosy] [--jobs 1000]

Figures before and after the bucketed free-machine index and batched launches, after the
fused finish-and-decide path (``Policy.finish_and_decide``), and after lazy attempt rows,
active-group selection and no cyclic GC during the run (back to back: drf 36.4k -> 42.4k/s,
tsf 34.2k -> 45.3k/s, choosy 33.3k -> 46.3k/s) are in the git history of DEVELOPERS.md
("Online policies"); the current figures are in ``docs/performance.md``, the later history in
``benchmarks/HISTORY.md``.

The engine's own share (branch engine-speed: a running task is its own finish event, the
event queue a heap of float times, attempt rows placed at the launch so the final sort is
nearly free, one job record per job, ``Policy.uses_wakeups``), medians of three interleaved
runs against 9772264 on the shared 2-core machine (bare heap 340-495k/s): drf 48.3k ->
52.2k/s, tsf 46.5k -> 50.0k/s, choosy 46.6k -> 53.8k/s. The issue's bar of 100,000
placements per CPU second is not reached: the rate sits near 50k/s, an eighth of the bare
heap loop; the engine is about a quarter of the run, the policy's offer path the rest (what
was left then: ``benchmarks/HISTORY.md``, "What 100,000 placements per second would take").

End of 2026-11-22, with the policy side's work too (no selection while nobody waits, FAIR and
collapsed-drf on the fused path, allocations kept only for H-DRF), medians of three quiet
runs: drf 62.2k/s, tsf 61.2k/s, choosy 59.0k/s (bare heap 408-506k/s; 0.12-0.15 x). Session
start on the same machine: 40.9k, 34.5k, 35.4k/s.

Night of 2026-11-22/23 (finishes held back while the policy is quiescent and released in one
loop, attempt rows written at the launch, six-field running entries, the batch's tight loop,
offers to a lone user without selection or bound): in quiet spells 90-99k/s (drf 2.19 s,
tsf 2.11 s, choosy 2.01 s; 0.19-0.21 x the bare heap loop), in slow ones 64-85k/s; 0.66-0.75
x the session start's time when interleaved with it. ``--repeat`` (default 3) reports the
median run and the best rate, since single runs swung by half that night.

2026-11-23 (the memory per running task cut: finish events in per-round lanes so the event
heap holds a few hundred heads, attempts recorded flat, running map tasks as slots of
per-job lists in the engine and the policy, class lists shared per machine signature,
durations packed): against that night's end, interleaved in one window, 0.79-0.85 x the
time (medians of two sets of four rounds); ``--repeat 5`` medians 103-131k/s in seventeen
of eighteen windows (bare heap 471-592k/s, 0.19-0.25 x; best runs up to 142k/s) and
87-94k/s in the other (468k/s, 0.19-0.20 x).

A thin wrapper over ``fairshare bench online`` (same options, plus ``--machines``, ``--tasks``,
``--repeat`` and ``--json``); the workload is defined once, in ``fairshare.bench.online``.
"""

from __future__ import annotations

import sys

from fairshare.cli import main

if __name__ == "__main__":
    main(["bench", "online", *sys.argv[1:]])
