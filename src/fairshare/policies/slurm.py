"""Slurm's Fair Tree fair-share algorithm (``slurm-fairtree``), with Slurm's whole-job starts
and EASY backfilling.

Slurm's ``priority/multifactor`` plugin ranks every user association by the *Fair Tree*
algorithm (Slurm documentation, ``fair_tree.html``; the source,
``src/plugins/priority/multifactor/fair_tree.c`` and ``src/common/assoc_mgr.c``). The
association tree is the scenario's queue tree: accounts are queues, users are the leaves; a
queue's or a user's ``weight`` is its ``Share``.

- *Level fairshare* (``fair_tree.html``, "Level Fairshare Calculation"; ``_calc_assoc_fs``):
  for every association, ``LF = S / U``, where ``S`` is its shares over the shares of itself
  and its siblings (``shares_norm``) and ``U`` its decayed usage over its parent's
  (``usage_efctv``: an account's usage is the sum of its users'). ``U = 0`` gives ``LF = inf``
  ("NOT A BUG"), ``S = 0`` gives ``LF = 0`` whatever the usage.
- *Ranking* (``_calc_tree_fs``): from the root, the children of an account are sorted by
  ``LF`` descending (users before accounts at equal ``LF``) and visited depth first; users are
  ranked in that order from ``N`` (the number of user associations) down, and a user's
  fair-share factor is ``rank / N``. Ties (``fair_tree.html``, "Ties"): sibling users of equal
  ``LF`` get the same rank, and an account of equal ``LF`` to the sibling before it passes
  the tie to its first child (so its best user shares the rank of the previous sibling's last
  ranked user). The documentation's third rule, that tied sibling accounts have their
  children merged before sorting, is not what the code does: ``_count_tied_accounts`` stops at
  the first account it meets (its test reads ``if (!next_assoc->user) break``), so it never
  counts one, and the accounts are visited one after the other. We follow the code, which
  Slurm's own test of Fair Tree (``testsuite/expect/test24.4``) checks.
- ``Share=parent`` (``SLURMDB_FS_USE_PARENT``; ``assoc_mgr.c``, ``_find_assoc_parent``): such
  an association takes no part in its level's shares; an account's children compete as
  children of its nearest ancestor with shares of its own, and a user gets ``LF = inf``
  (ranked first among its siblings, subject to ties). :func:`fair_tree` implements it (Slurm's
  test has it); scenarios express it by their shape (``fairshare import slurm``).
- *Usage* (``priority_multifactor.html``, "Fair-share Factor"; "The Slurm usage is ... decayed
  ... PriorityDecayHalfLife"): each user's decayed use of the billing resource, kept by the
  ledger (``Ledger.resource_usage``, exact from timestamps: a running job accrues usage
  continuously) with the run's ``usage_half_life``, else Slurm's default
  ``PriorityDecayHalfLife`` of 7 days. Billing: Slurm bills a job its allocated CPUs when no
  ``TRESBillingWeights`` are set, so usage is the ``cpu`` resource's (relative to the
  cluster's capacity: the ratios ``U`` do not see the unit), or the first resource when the
  cluster has no ``cpu``.
- *When* (``slurm.conf``, ``PriorityCalcPeriod``: "the period of time in minutes in which the
  half-life decay will be re-calculated", default 5): the ranking is computed again at the
  first decision in each new period of :data:`PRIORITY_CALC_PERIOD` seconds of simulated time
  (periods counted from time 0), and ranks stay fixed between two calculations, as job
  priorities do in Slurm. A user that appears between two calculations (a job's user not in
  the scenario) has no usage, so Fair Tree ranks it first within its nearest existing account
  (``LF = inf`` at its level): until the next calculation it takes the rank of that account's
  best ranked user (``O(depth)``, not a new calculation: a calculation is ``O(n log n)`` in
  the associations, and a calculation per new user would make a run quadratic). Slurm itself
  gives a new association the factor 0 until the next calculation
  (``slurmdb_create_assoc_usage``).
- *Job order* (``PriorityWeightFairshare`` alone, every other weight 0): a job's priority is
  its user's fair-share factor; jobs go by priority, then submission. A job starts whole
  (Slurm allocates all of a job's nodes at once): each job without ``min_tasks`` is a gang of
  all its tasks; EASY backfilling is on unless the options set ``backfill`` (Slurm's
  ``sched/backfill``: the first job that cannot start gets a reservation, later ones start
  only where they do not delay it; :mod:`fairshare.policies.gangs`). The scenario's job
  ``priority`` orders waiting jobs first (a partition's ``PriorityTier``). A job that the
  machines it may use can never hold whole is rejected on arrival, as Slurm refuses it at
  submission ("Requested node configuration is not available").

Reported shares (SPEC section 8.3, ``sshare -l``): per user its ``FairShare`` factor, per
queue (account) its ``Level FS``; both as computed at the time asked.

Examples
--------
Slurm's Fair Tree test (``testsuite/expect/test24.4``), account ``aA``: two sub-accounts of
shares 30 and 10 whose users used 20 and 25 (and 0) units; the tie-free ranking gives
``uAA1`` (``LF`` 1.6875 for ``aAA``) before ``uAB2`` (no usage: ``inf`` in ``aAB``) and
``uAB1``.

>>> tree = fair_tree(
...     parent=[-1, 0, 1, 2, 1, 4, 4],
...     shares=[1.0, 40.0, 30.0, 1.0, 10.0, 1.0, 1.0],
...     is_user=[False, False, False, True, False, True, True],
...     usage=[0.0, 0.0, 0.0, 20.0, 0.0, 25.0, 0.0],
... )
>>> [round(tree.level_fs[n], 4) for n in (2, 4, 5)]
[1.6875, 0.45, 0.5]
>>> [round(tree.factor[n], 4) for n in (3, 6, 5)]
[1.0, 0.6667, 0.3333]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mypy_extensions import mypyc_attr

from fairshare.cluster import Cluster
from fairshare.policies.gangs import tasks_on_capacity
from fairshare.policies.options import PolicyOptions
from fairshare.policies.protocol import Decision, TaskRef
from fairshare.policies.ranking import Ranking
from fairshare.policies.records import JobState, UserState
from fairshare.policies.scheduler import Scheduler
from fairshare.workload.model import ROOT, Job, Queue, User

if TYPE_CHECKING:
    from fairshare.policies.ledger import Ledger

__all__ = [
    "PRIORITY_CALC_PERIOD",
    "PRIORITY_DECAY_HALF_LIFE",
    "FairTree",
    "FairTreeRanking",
    "SlurmFairTree",
    "fair_tree",
]

PRIORITY_DECAY_HALF_LIFE = 7 * 86400.0
"""Slurm's default ``PriorityDecayHalfLife`` (``7-0``: seven days), in seconds."""

PRIORITY_CALC_PERIOD = 300.0
"""Slurm's default ``PriorityCalcPeriod`` (5 minutes), in seconds."""

NO_VAL = float(0xFFFFFFFE)
"""Slurm's ``NO_VAL``: the level fairshare ``fair_tree.c`` gives an account of
``Share=parent`` (and the "previous" value before a level's first sibling)."""


BF_INTERVAL = 30.0
"""Seconds between Slurm's backfill passes (``SchedulerParameters=bf_interval``, default 30):
the head job's reservation stands that long (``PolicyOptions.backfill_interval``)."""


@dataclass(frozen=True)
class FairTree:
    """One Fair Tree calculation: per association (node), what ``sshare -l`` prints.

    Attributes
    ----------
    usage : list of float
        Raw usage: a user's own, an account's the sum of its users' (``RawUsage``).
    shares_norm : list of float
        Shares over the shares of the level (``NormShares``).
    usage_efctv : list of float
        Usage over the usage of its fair-share parent (``EffectvUsage``).
    level_fs : list of float
        ``S / U`` (``Level FS``); :data:`NO_VAL` for an account of ``Share=parent``.
    factor : list of float
        A user's fair-share factor, ``rank / users`` (``FairShare``); ``nan`` for an account.
    top : list of float
        Per account, the best factor of a user below it in the ranking (``nan``: none).
    """

    usage: list[float]
    shares_norm: list[float]
    usage_efctv: list[float]
    level_fs: list[float]
    factor: list[float]
    top: list[float]


def fair_tree(
    parent: Sequence[int],
    shares: Sequence[float | None],
    is_user: Sequence[bool],
    usage: Sequence[float],
) -> FairTree:
    """Slurm's Fair Tree over an association tree (see the module: ``fair_tree.c``'s
    ``_apply_priority_fs``, with ``assoc_mgr.c``'s shares and fair-share parents).

    Parameters
    ----------
    parent : sequence of int
        Each node's parent; node 0 is the root (parent -1), and a parent comes before its
        children.
    shares : sequence of float or None
        Each node's raw shares (``Share``), None for ``Share=parent``; the root's is unused.
    is_user : sequence of bool
        Whether the node is a user association (a leaf); users have no children.
    usage : sequence of float
        Each user's raw (decayed) usage; an account's entry is ignored (the sum of its
        users' is used).

    Returns
    -------
    FairTree
        Per node: usage, normalised shares, effective usage, level fairshare, and users'
        factors (each user ranked once: the factor's denominator is the number of users).

    Examples
    --------
    Two users with shares 70 and 30 under the root: the one with less usage for its shares
    ranks first (``LF`` 0.7 / 0.6 against 0.3 / 0.4).

    >>> tree = fair_tree([-1, 0, 0], [None, 70.0, 30.0], [False, True, True], [0.0, 6.0, 4.0])
    >>> [round(x, 4) for x in tree.level_fs[1:]], tree.factor[1:]
    ([1.1667, 0.75], [1.0, 0.5])
    """
    n = len(parent)
    raw = [float(usage[i]) if is_user[i] else 0.0 for i in range(n)]
    for i in range(n - 1, 0, -1):
        raw[parent[i]] += raw[i]
    # The fair-share parent (assoc_mgr.c, _find_assoc_parent): the nearest ancestor whose
    # shares are its own; an account of Share=parent so hands its children up.
    fs_parent = [-1] * n
    for i in range(1, n):
        p = parent[i]
        while p > 0 and shares[p] is None:
            p = parent[p]
        fs_parent[i] = p
    children: list[list[int]] = [[] for _ in range(n)]
    level_shares = [0.0] * n
    for i in range(1, n):
        children[fs_parent[i]].append(i)
        own = shares[i]
        if own is not None:
            level_shares[fs_parent[i]] += own
    shares_norm = [0.0] * n
    usage_efctv = [0.0] * n
    level_fs = [0.0] * n
    shares_norm[0] = 1.0
    for i in range(1, n):
        p = fs_parent[i]
        own = shares[i]
        # Share=parent: the fair-share parent's own normalised shares (assoc_mgr.c,
        # _normalize_assoc_shares_fair_tree).
        source, amount = (i, own) if own is not None else (p, shares[p] if p > 0 else 1.0)
        divisor = level_shares[fs_parent[source]] if source > 0 else 1.0
        s = (amount or 0.0) / divisor if divisor else 0.0
        shares_norm[i] = s
        u = raw[i] / raw[p] if raw[p] else 0.0
        usage_efctv[i] = u
        if own is None:
            level_fs[i] = math.inf if is_user[i] else NO_VAL
        elif s == 0.0:
            level_fs[i] = 0.0
        else:
            level_fs[i] = s / u if u else math.inf
    users = sum(1 for flag in is_user if flag)
    factor = [math.nan] * n
    # rank and rnt ("rank, no ties") of _calc_tree_fs, carried through the walk.
    state = [float(users), float(users)]

    def walk(siblings: list[int], account_tied: bool) -> None:
        # Users before accounts at equal LF (_cmp_level_fs); a stable sort keeps the
        # association order among equals.
        ordered = sorted(siblings, key=lambda c: (-level_fs[c], not is_user[c]))
        previous = NO_VAL
        for i, c in enumerate(ordered):
            tied = True if i == 0 and account_tied else previous == level_fs[c]
            if is_user[c]:
                if not tied:
                    state[0] = state[1]
                factor[c] = state[0] / users
                state[1] -= 1.0
            else:
                walk(children[c], tied)
            previous = level_fs[c]

    walk(children[0], False)
    top = [math.nan] * n
    for i in range(n - 1, 0, -1):
        best = factor[i] if is_user[i] else top[i]
        p = fs_parent[i]
        if not math.isnan(best) and not best <= top[p]:
            top[p] = best
    return FairTree(raw, shares_norm, usage_efctv, level_fs, factor, top)


@mypyc_attr(allow_interpreted_subclasses=True)
class FairTreeRanking(Ranking):
    """Slurm's Fair Tree order (see the module): users go by their fair-share factor,
    highest first, computed from their decayed usage of the billing resource at most once
    per calculation period.

    Parameters
    ----------
    calc_period : float
        Seconds of simulated time between two calculations (Slurm's
        ``PriorityCalcPeriod``).
    """

    def __init__(self, calc_period: float = PRIORITY_CALC_PERIOD) -> None:
        super().__init__()
        self.by_share = False
        self.tracks_resource_usage = True
        self.default_half_life = PRIORITY_DECAY_HALF_LIFE
        self.calc_period = calc_period
        # The association tree: node 0 is the root; accounts by path; users by index.
        self.parent: list[int] = [-1]
        self.shares: list[float | None] = [1.0]
        self.is_user: list[bool] = [False]
        self.names: list[str] = [ROOT]
        self.accounts: dict[str, int] = {ROOT: 0}
        self.user_node: list[int] = []
        self.weights: dict[str, float] = {}
        # Each user's factor as last calculated (a new user's: see on_new_user), and each
        # account's best, by node.
        self.factor: list[float] = []
        self.top: list[float] = [math.nan]
        self.period = -1

    def bind(self, ledger: Ledger) -> None:
        """Read ``ledger`` from now on; the declared queues become the tree's accounts, in
        scenario order, and the billing resource is chosen.

        Parameters
        ----------
        ledger : Ledger
            The scheduler's state.
        """
        super().bind(ledger)
        queues = ledger.queues
        self.weights = {q.path: q.weight for q in queues}
        for q in sorted(queues, key=lambda q: q.path.count("/")):
            self.account(q.path)
        resources = ledger.cluster.resources
        self.billing = resources.index("cpu") if "cpu" in resources else 0

    def account(self, path: str) -> int:
        """The node of account ``path``, created with its missing ancestors (a path no queue
        declares is an account of share 1).

        Parameters
        ----------
        path : str
            A queue path (``ROOT``: the root).

        Returns
        -------
        int
        """
        node = self.accounts.get(path)
        if node is not None:
            return node
        up = self.account(path.rpartition("/")[0])
        node = len(self.parent)
        self.parent.append(up)
        self.shares.append(self.weights.get(path, 1.0))
        self.is_user.append(False)
        self.names.append(path)
        self.top.append(math.nan)
        self.accounts[path] = node
        return node

    def on_new_user(self, user: UserState) -> bool:
        """A user joins the tree under its queue. Until the next calculation it takes the
        best factor of its nearest account that has a ranked user (a user without usage is
        first in its account: see the module), or 1.0 before the first calculation.

        Parameters
        ----------
        user : UserState
            The new user.

        Returns
        -------
        bool
            False: no divisor changes.
        """
        up = self.account(user.queue)
        node = len(self.parent)
        self.parent.append(up)
        self.shares.append(user.weight)
        self.is_user.append(True)
        self.names.append(user.name)
        self.top.append(math.nan)
        self.user_node.append(node)
        provisional = 1.0
        while up >= 0:
            best = self.top[up]
            if not math.isnan(best):
                provisional = best
                break
            up = self.parent[up]
        self.factor.append(provisional)
        return False

    def calculate(self, now: float) -> FairTree:
        """Fair Tree on every user's decayed usage of the billing resource at ``now``.

        Parameters
        ----------
        now : float
            The time (not before any user's last change of usage).

        Returns
        -------
        FairTree
        """
        usage = [0.0] * len(self.parent)
        kept = self.ledger.resource_usage
        if kept is not None:
            billing = self.billing
            for idx, node in enumerate(self.user_node):
                usage[node] = kept.usage_of(idx, now, billing)
        return fair_tree(self.parent, self.shares, self.is_user, usage)

    def due(self, now: float) -> bool:
        """Whether a decision at ``now`` starts a new calculation period (the first decision
        always does).

        Parameters
        ----------
        now : float
            The time of the decision.

        Returns
        -------
        bool
        """
        return math.floor(now / self.calc_period) > self.period

    def recalculate(self, now: float) -> list[int]:
        """Calculate the factors at ``now`` and keep them until the next period.

        Parameters
        ----------
        now : float
            The time of the decision.

        Returns
        -------
        list of int
            The users whose factor changed (their heap entries are stale).
        """
        self.period = math.floor(now / self.calc_period)
        tree = self.calculate(now)
        self.top = tree.top
        moved = []
        factor = self.factor
        for idx, node in enumerate(self.user_node):
            value = tree.factor[node]
            if value != factor[idx]:
                factor[idx] = value
                moved.append(idx)
        return moved

    def user_rank(self, user: UserState, group: int) -> float:
        """Minus the user's fair-share factor (lower goes first: the highest factor).

        Parameters
        ----------
        user : UserState
            The user.
        group : int
            Unused: the factor is the user's.

        Returns
        -------
        float
        """
        return -self.factor[user.idx]

    def gang_rank(self, job: JobState) -> tuple[float, float, int, int, float, int]:
        """Jobs (gangs) by the scenario's ``priority`` (higher first: a partition's
        ``PriorityTier``, which Slurm's scheduler orders by before job priorities), then their
        priority, the user's factor, then submission (Slurm's job queue order).

        Parameters
        ----------
        job : JobState
            A waiting gang's map side.

        Returns
        -------
        tuple of (float, float, int, int, float, int)
        """
        return (float(-job.priority), -self.factor[job.user], 0, 0, job.job.submit, job.id)

    def reported_shares(self) -> tuple[dict[str, float], dict[str, float]]:
        """What ``sshare -l`` prints, calculated at the ledger's time: per user its
        ``FairShare`` factor, per queue (account) its ``Level FS`` (``inf`` for an account
        without usage).

        Returns
        -------
        (dict of str to float, dict of str to float)
            Level fairshare by queue path, factor by user name.
        """
        tree = self.calculate(self.ledger.now)
        queues = {path: tree.level_fs[node] for path, node in self.accounts.items() if path != ROOT}
        users = {
            self.names[node]: tree.factor[node]
            for node in self.user_node  # in order of appearance
        }
        return queues, users


@mypyc_attr(allow_interpreted_subclasses=True)
class SlurmFairTree(Scheduler):
    """Slurm's ``priority/multifactor`` with Fair Tree and ``sched/backfill`` (see the
    module).

    Parameters
    ----------
    cluster : Cluster
        The machines at the start.
    users : sequence of User
        The configured users (user associations: their weights are their shares), in
        scenario order.
    queues : sequence of Queue
        The accounts (their weights are their shares).
    options : PolicyOptions, optional
        ``usage_half_life`` (default: Slurm's 7 days), ``backfill`` (default: ``easy``) and
        the mechanisms every policy has.

    Examples
    --------
    Two accounts of shares 70 and 30 with a user each; ``b`` used the cluster before ``a``
    arrived. At the next calculation period ``a`` (no usage: ``Level FS`` inf) ranks first,
    and its job starts before ``b``'s older one.

    >>> import numpy as np
    >>> from fairshare.cluster import Cluster, Machine
    >>> from fairshare.policies import TaskRef, make_policy
    >>> from fairshare.workload.model import FixedDuration, Job, Queue, User
    >>> cluster = Cluster.build(["cpu"], [Machine("m", np.array([2.0]))])
    >>> users = [User("a", np.array([1.0]), queue="A"), User("b", np.array([1.0]), queue="B")]
    >>> policy = make_policy(
    ...     "slurm-fairtree", cluster, users=users, queues=[Queue("A", 70.0), Queue("B", 30.0)]
    ... )
    >>> policy.job_submitted(0.0, 0, Job("b0", 0.0, "b", np.array([1.0]), 2, FixedDuration(600)))
    >>> [d.task.job for d in policy.decide(0.0)]
    [0, 0]
    >>> policy.job_submitted(500.0, 1, Job("b1", 500.0, "b", np.array([1.0]), 2))
    >>> policy.job_submitted(550.0, 2, Job("a1", 550.0, "a", np.array([1.0]), 2))
    >>> policy.task_finished(600.0, TaskRef(0, "map", 0))
    >>> policy.task_finished(600.0, TaskRef(0, "map", 1))
    >>> [d.task.job for d in policy.decide(600.0)]
    [2, 2]
    >>> queues, users = policy.ranking.reported_shares()
    >>> queues["A"], round(queues["B"], 4), users
    (inf, 0.3, {'a': 1.0, 'b': 0.5})
    """

    name = "slurm-fairtree"

    def __init__(
        self,
        cluster: Cluster,
        *,
        users: Sequence[User] = (),
        queues: Sequence[Queue] = (),
        options: PolicyOptions | None = None,
    ) -> None:
        opts = options if options is not None else PolicyOptions()
        if opts.backfill is None and opts.copy_compute is None:
            # EASY backfilling does not combine with copy-compute splitting (SimOptions).
            opts = replace(opts, backfill="easy")
        if opts.backfill_interval == 0.0:
            # Slurm's backfill scheduler passes every bf_interval, 30 s by default
            # (slurm.conf SchedulerParameters): a head's reservation stands that long.
            opts = replace(opts, backfill_interval=BF_INTERVAL)
        self.fair_tree = FairTreeRanking()
        super().__init__(cluster, users=users, queues=queues, options=opts, ranking=self.fair_tree)

    def recalculate(self, now: float) -> None:
        """At the first decision of a calculation period, the factors are calculated again
        and the users whose factor moved are touched (their entries re-ranked); machines
        with room are offered again, so that the waiting jobs are tried in the new order.

        Parameters
        ----------
        now : float
            The time of the decision.
        """
        ledger = self.ledger
        ledger.now = now
        moved = self.fair_tree.recalculate(now)
        users = ledger.users
        for idx in moved:
            ledger.touch(users[idx])
        if moved and ledger.gangs:
            ledger.mark_roomy()

    def job_submitted(
        self, now: float, job_id: int, job: Job, blocks: Sequence[Sequence[str]] | None = None
    ) -> None:
        """A job arrives; one of several tasks without ``min_tasks`` starts whole (all its
        tasks together; a job of one task is placed as any task is). A job whose gang the
        machines it may use can never hold is rejected: it never runs, as Slurm refuses it
        at submission.

        Parameters
        ----------
        now : float
            The time of the arrival.
        job_id : int
            The driver's id for the job.
        job : Job
            The job.
        blocks : sequence of sequence of str, optional
            Per map task, the machines holding its input block.
        """
        ledger = self.ledger
        if job.min_tasks is None and job.tasks > 1:
            job = replace(job, min_tasks=job.tasks)
        super().job_submitted(now, job_id, job, blocks)
        gang = ledger.gangs.get(job_id)
        if gang is not None:
            cls = ledger.cluster.groups[gang.group].cls
            if tasks_on_capacity(ledger.cluster, cls, gang.demand, gang.gang) < gang.gang:
                # Slurm rejects at submission a job its nodes can never hold ("Requested node
                # configuration is not available"): it leaves at once and never runs.
                ledger.cancel(job_id)

    def decide(self, now: float) -> list[Decision]:
        """Calculate the factors when a new period began, then decide as every policy does.

        Parameters
        ----------
        now : float
            The time of the decision.

        Returns
        -------
        list of Decision
        """
        if self.fair_tree.due(now):
            self.recalculate(now)
        return super().decide(now)

    def finish_and_decide(self, now: float, task: TaskRef) -> list[Decision]:
        """``task_finished`` then :meth:`decide`, the factors calculated first when a new
        period began.

        Parameters
        ----------
        now : float
            The time of the finish.
        task : TaskRef
            The finished task.

        Returns
        -------
        list of Decision
        """
        if self.fair_tree.due(now):
            self.recalculate(now)
        return super().finish_and_decide(now, task)
