"""The live policy's usage over time kept in the service's database (SPEC section 6's
``--usage-half-life``, section 8.3's decayed usage), so that a restarted service goes on
from the usage its tenants had, decayed by the time it was down.

The ledger's :class:`~fairshare.policies.usage.DecayedUsage` accounts (``usage``, per user
in share-seconds, and ``resource_usage``, per user and resource) are saved as each user's
value at the driver's time ``now`` with the wall clock, by user name (a restart may change
the scenario's order). On restore each value is decayed by the wall-clock seconds since it
was saved, at the rate of its half-life, and accrues from the new driver's ``now`` at rate 0
(nothing runs yet: the jobs resumed launch again and set their rates then).

Examples
--------
>>> import numpy as np
>>> from fairshare.cluster import Cluster, Machine
>>> from fairshare.policies import PolicyOptions, make_policy
>>> from fairshare.service.store import Store
>>> from fairshare.workload.model import User
>>> store = Store(":memory:")
>>> cluster = Cluster.build(("cpu",), [Machine("n1", np.array([4.0]))])
>>> users = [User("alice", np.array([1.0])), User("bob", np.array([1.0]))]
>>> policy = make_policy("drf", cluster, users=users,
...                      options=PolicyOptions(usage_half_life=60.0))
>>> alice = policy.ledger.users[0]
>>> policy.ledger.usage.restore(alice.idx, [30.0], [0.0], 0.0)
>>> save_usage(store, policy, 0.0, wall=1000.0)
True
>>> later = make_policy("drf", cluster, users=users,
...                     options=PolicyOptions(usage_half_life=60.0))
>>> restore_usage(store, later, 0.0, wall=1060.0)
['alice', 'bob']
>>> later.ledger.usage.usage(later.ledger.users[0].idx, 0.0)
[15.0]
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from fairshare.policies import Scheduler
from fairshare.policies.usage import DecayedUsage
from fairshare.service.store import Store

USAGE_KEY = "usage"
"""The database's ``meta`` key of the saved usage."""

_ACCOUNTS = ("usage", "resource_usage")


def _accounts(policy: Scheduler) -> dict[str, DecayedUsage]:
    """The ledger's decayed-usage accounts that exist (none without a half-life)."""
    ledger = policy.ledger
    found = {name: getattr(ledger, name, None) for name in _ACCOUNTS}
    return {name: usage for name, usage in found.items() if isinstance(usage, DecayedUsage)}


def save_usage(store: Store, policy: Scheduler, now: float, *, wall: float | None = None) -> bool:
    """Write every user's decayed usage as of the driver's time ``now``.

    Parameters
    ----------
    store : Store
        The database.
    policy : Scheduler
        The live policy.
    now : float
        The driver's time.
    wall : float, optional
        The wall clock (seconds since the epoch; default: now).

    Returns
    -------
    bool
        Whether there was usage to save (a policy without a half-life keeps none).

    Raises
    ------
    StoreFault
        The database cannot be written now.
    """
    accounts = _accounts(policy)
    if not accounts:
        return False
    users: dict[str, dict[str, list[float]]] = {}
    for user in policy.ledger.users:
        users[user.name] = {
            name: usage.usage(user.idx, max(now, usage.state(user.idx)[2]))
            for name, usage in accounts.items()
        }
    doc = {
        "saved": time.time() if wall is None else wall,
        "half_life": {name: usage.half_life for name, usage in accounts.items()},
        "users": users,
    }
    store.set_meta(USAGE_KEY, json.dumps(doc, sort_keys=True))
    return True


def restore_usage(
    store: Store, policy: Scheduler, now: float, *, wall: float | None = None
) -> list[str]:
    """Put back the usage :func:`save_usage` wrote, decayed by the wall-clock time since.

    Parameters
    ----------
    store : Store
        The database.
    policy : Scheduler
        The live policy, before any job runs.
    now : float
        The driver's time.
    wall : float, optional
        The wall clock (default: now).

    Returns
    -------
    list of str
        The users whose usage was restored, in the policy's order (users the saved state
        does not name, or of a resource count that changed, start from zero).
    """
    accounts = _accounts(policy)
    text = store.meta(USAGE_KEY)
    if not accounts or text is None:
        return []
    try:
        doc: Any = json.loads(text)
        saved = float(doc["saved"])
        users = doc["users"]
    except (ValueError, KeyError, TypeError):
        return []
    elapsed = max(0.0, (time.time() if wall is None else wall) - saved)
    restored: list[str] = []
    for user in policy.ledger.users:
        entry = users.get(user.name) if isinstance(users, dict) else None
        if not isinstance(entry, dict):
            continue
        done = False
        for name, usage in accounts.items():
            values = entry.get(name)
            if not isinstance(values, list) or len(values) != usage.width:
                continue
            keep = math.exp(-usage.decay * elapsed)
            usage.restore(
                user.idx,
                [float(v) * keep for v in values],
                [0.0] * usage.width,
                now,
            )
            done = True
        if done:
            restored.append(user.name)
    if restored:
        policy.ledger.rerank()
    return restored
