"""Population monotonicity (H-DRF section 4.3): no user's allocation drops when another leaves.

Each user in turn leaves the scenario (with the queues left without users), the policy solves
what remains, and every other user must run at least as many tasks as before.

Examples
--------
>>> document = {
...     "resources": ["cpu", "mem"],
...     "machines": [{"name": "m1", "capacity": {"cpu": 9, "mem": 18}}],
...     "users": [
...         {"name": "A", "demand": {"cpu": 1, "mem": 4}},
...         {"name": "B", "demand": {"cpu": 3, "mem": 1}},
...     ],
... }
>>> PopulationMonotonicity().violation(document, "drf") is None
True
"""

from __future__ import annotations

import copy

from fairshare.fairness.outcomes import allocate, better, fmt, tasks_phrase
from fairshare.fairness.protocol import Violation
from fairshare.fairness.scenarios import Document, Domain, ScenarioShape


class PopulationMonotonicity:
    """Population monotonicity (H-DRF section 4.3): no user's allocation drops when another
    leaves."""

    name = "population-monotonicity"
    shape = ScenarioShape(weights=True, caps=True, max_users=4)
    trials = 80

    def applies(self, domain: Domain) -> bool:
        """Defined for every policy.

        Parameters
        ----------
        domain : Domain
            A policy's domain.

        Returns
        -------
        bool
            Always True.
        """
        return True

    def violation(
        self, document: Document, policy: str, focus: tuple[str, ...] = ()
    ) -> Violation | None:
        """Check population monotonicity on one scenario under ``policy``.

        Violated when some user runs fewer tasks when another leaves (``focus``: only those users
        leave).

        Parameters
        ----------
        document : Document
            The scenario document.
        policy : str
            A solver policy's name.
        focus : tuple of str
            The users to try (see
            :meth:`~fairshare.fairness.protocol.FairnessProperty.violation`); empty: all.

        Returns
        -------
        Violation or None
            None if the property holds on ``document``.
        """
        scenario, before = allocate(document, policy)
        names = [u.name for u in scenario.users]
        for leaving in range(len(names)):
            if focus and names[leaving] not in focus:
                continue
            smaller = copy.deepcopy(document)
            del smaller["users"][leaving]
            if "queues" in smaller:
                used = {u.get("queue") for u in smaller["users"]}
                smaller["queues"] = [q for q in smaller["queues"] if q["path"] in used]
            _, after = allocate(smaller, policy)
            for k, name in enumerate(n for n in names if n != names[leaving]):
                old = float(before.tasks[names.index(name)])
                if better(old, float(after.tasks[k])):
                    return Violation(
                        f"when {names[leaving]} leaves, {name} drops from {fmt(old)} to "
                        f"{tasks_phrase(after.tasks[k])}",
                        focus=(names[leaving],),
                    )
        return None
