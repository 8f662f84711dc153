"""Where the simulator puts the replicas of input blocks (FAIR section 4's data locality).

Two placements (:attr:`fairshare.workload.model.Job.replica_placement`):

``rack-aware`` (the default)
    HDFS's default block placement, which FAIR section 5.1 discusses (a rack-local read is
    the usual alternative to a node-local one because of it): the first replica on a machine
    drawn uniformly (HDFS: the writer's node, a random one for a writer outside the cluster),
    the second and third on two distinct machines of one other rack drawn uniformly, any
    further replicas on machines drawn uniformly. On a cluster of one rack (or without racks)
    every replica is drawn uniformly. A rack with one live machine gives that machine once.
``uniform``
    Each replica on a machine drawn uniformly from the live ones (the simulator's placement
    before rack-aware became the default).

Repeated machines in a block's draw are dropped (the block has fewer distinct replicas). All
draws come from the run's generator, vectorised per job.

Examples
--------
>>> import numpy as np
>>> from fairshare.sim.placement import BlockPlacer
>>> placer = BlockPlacer(["a0", "a1", "b0", "b1"], {"a0": "A", "a1": "A", "b0": "B", "b1": "B"})
>>> blocks = placer.place(5, 3, "rack-aware", np.random.default_rng(0))
>>> all(len({name[0] for name in block}) == 2 and len(block) == 3 for block in blocks)
True
"""

from __future__ import annotations

import numpy as np

from fairshare.workload.model import ReplicaPlacement

__all__ = ["BlockPlacer"]


class BlockPlacer:
    """Draws block replicas over the machines alive at one time (rebuilt when they change).

    Parameters
    ----------
    live : list of str
        The live machines' names, in the run's order.
    racks : dict of str to str or None
        Each machine's rack (None: a rack of its own kind shared by every rackless machine).
    """

    def __init__(self, live: list[str], racks: dict[str, str | None]) -> None:
        self.live = live
        rack_ids: dict[str | None, int] = {}
        rack_of = [rack_ids.setdefault(racks[name], len(rack_ids)) for name in live]
        self.rack_of = np.array(rack_of, dtype=np.int64)
        # Machines grouped by rack: members[start[k] : start[k] + size[k]] are rack k's.
        order = np.argsort(self.rack_of, kind="stable")
        self.members = order
        self.size = np.bincount(self.rack_of, minlength=len(rack_ids)).astype(np.int64)
        self.start = np.concatenate([[0], np.cumsum(self.size)[:-1]]).astype(np.int64)
        self.racks = len(rack_ids)

    def place(
        self, blocks: int, replicas: int, placement: ReplicaPlacement, rng: np.random.Generator
    ) -> list[tuple[str, ...]]:
        """The replicas of ``blocks`` new blocks (module docstring), each a tuple of distinct
        machine names.

        Parameters
        ----------
        blocks : int
            How many blocks.
        replicas : int
            Replicas per block (at most the machines; fewer distinct ones on repeats).
        placement : ReplicaPlacement
            ``rack-aware`` or ``uniform``.
        rng : numpy.random.Generator
            The run's generator.

        Returns
        -------
        list of tuple of str
        """
        live = self.live
        count = len(live)
        if placement == "uniform" or self.racks < 2 or replicas < 2:
            picks = rng.integers(0, count, size=(blocks, replicas))
        else:
            picks = np.empty((blocks, replicas), dtype=np.int64)
            first = rng.integers(0, count, size=blocks)
            picks[:, 0] = first
            # Another rack than the first replica's, uniformly among the others.
            other = rng.integers(0, self.racks - 1, size=blocks)
            other += other >= self.rack_of[first]
            size = self.size[other]
            second = np.floor(rng.random(blocks) * size).astype(np.int64)
            picks[:, 1] = self.members[self.start[other] + second]
            if replicas >= 3:
                # A second machine of that rack, distinct from the second replica's when the
                # rack has one (a rack of one machine gives it again: dropped as a repeat).
                third = np.floor(rng.random(blocks) * np.maximum(size - 1, 1)).astype(np.int64)
                third += (third >= second) & (size > 1)
                third = np.minimum(third, size - 1)
                picks[:, 2] = self.members[self.start[other] + third]
            if replicas > 3:
                picks[:, 3:] = rng.integers(0, count, size=(blocks, replicas - 3))
        return [tuple(dict.fromkeys(live[i] for i in row)) for row in picks.tolist()]
