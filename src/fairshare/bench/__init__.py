"""The benchmark workloads and their timing, shared by ``fairshare bench`` and the
scripts in ``benchmarks/`` (one definition of each workload, so figures stay comparable).

- :mod:`fairshare.bench.online`: placements per CPU second of the online policies.
- :mod:`fairshare.bench.simulate`: the simulator at the papers' macrobenchmark scales (Choosy
  section 7.1, TSF section VI), each case in a fresh interpreter for its own peak memory.
- :mod:`fairshare.bench.solve`: ``fairshare solve`` on a 1,000-user hierarchy and on the
  CMMF and TSF scales of 100,000 machines and 1,000 users on 1,000 machines.
- :mod:`fairshare.bench.end_to_end`: ``fairshare simulate`` of the online benchmark's workload
  as a user runs it (scenario file in, every output written) against the simulation's own
  time.
- :mod:`fairshare.bench.fingerprint`: digests of the online policies' decisions, pinned by the
  test suite (``tests/golden/decision_fingerprints.txt``).

The package imports none of them: a ``simulate`` child loads only what its case runs, so its
peak resident memory stays comparable with the figures recorded before the move.
"""

BENCHMARKS = ("online", "simulate", "solve", "end_to_end")
"""The benchmarks ``fairshare bench`` runs, one submodule each."""
