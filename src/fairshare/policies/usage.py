"""Usage over time: each account's (user's or queue's) past share, decayed exponentially with a
half-life (SPEC section 8.3), kept lazily from timestamps.

Every production fair-share scheduler ranks tenants by what they used recently, not only by
what they hold this instant: Slurm's ``PriorityDecayHalfLife`` (the *Multifactor Priority
Plugin*: "usage is decayed ... with a half-life"), Kueue's Admission Fair Sharing
(``usageHalfLifeTime``: "the time after which the current usage decays by a half"),
HTCondor's ``PRIORITY_HALFLIFE``, Volcano's ``fairshare`` plugin. An account's decayed usage
at time ``t`` is

    U(t) = integral over s <= t of rate(s) * 2 ** (-(t - s) / h) ds

where ``rate`` is what the account holds (its share of the cluster: each resource relative to
the cluster's capacity, or the policy's own share unit) and ``h`` the half-life, in seconds;
its unit is share-seconds. Its *average*, ``ln 2 / h * U(t)``, is the exponentially weighted
mean of the rate: an account that held share ``s`` for ever has average ``s``, so averages
and shares are in the same unit and can be added or compared (how each policy combines them
is its ranking's to say; see ``docs/usage-over-time.md``).

No clock ticks: an account's value is brought up to date when its rate changes (a task starts
or stops), with the exact integral of the constant rate since the last change, so a change
costs O(width) and a reading is O(width), whatever the time since the last one.

Examples
--------
One account held half the cluster for one half-life (60 s), then nothing: its usage is 30
share-seconds times the integral's decay, and it halves every 60 s after.

>>> usage = DecayedUsage(60.0)
>>> a = usage.add_account()
>>> usage.set_rate(a, 0.0, (0.5,))
>>> round(usage.usage(a, 60.0)[0], 4)  # 0.5 * 60 / ln 2 * (1 - 1/2)
21.6404
>>> usage.set_rate(a, 60.0, (0.0,))
>>> round(usage.usage(a, 120.0)[0], 4)
10.8202
>>> round(usage.average(a, 60.0)[0], 4)  # the decayed mean of the share: half of 0.5
0.25
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fairshare.errors import PolicyError


class DecayedUsage:
    """Decayed usage of numbered accounts, each a vector of ``width`` amounts (see the
    module).

    Parameters
    ----------
    half_life : float
        Seconds after which past usage counts half; > 0 and finite.
    width : int
        How many amounts each account has (1: a share; R: one per resource).

    Raises
    ------
    PolicyError
        The half-life is not a positive finite number.
    """

    def __init__(self, half_life: float, width: int = 1) -> None:
        if not (half_life > 0.0 and math.isfinite(half_life)):
            raise PolicyError(
                "usage_half_life",
                f"must be a positive number of seconds, not {half_life!r}",
            )
        self.half_life = half_life
        self.width = width
        # ln 2 / h: the decay rate per second, and the factor that turns a usage into the
        # decayed mean of the rate.
        self.decay = math.log(2.0) / half_life
        self._value: list[list[float]] = []
        self._rate: list[list[float]] = []
        self._stamp: list[float] = []

    def __len__(self) -> int:
        return len(self._stamp)

    def add_account(self, now: float = 0.0) -> int:
        """A new account with no usage and rate 0 (accounts are numbered from 0 in order).

        Parameters
        ----------
        now : float
            When it appears.

        Returns
        -------
        int
            Its number.
        """
        self._value.append([0.0] * self.width)
        self._rate.append([0.0] * self.width)
        self._stamp.append(now)
        return len(self._stamp) - 1

    def _factor(self, account: int, now: float) -> float:
        """2 ** (-(now - stamp) / h): how much of the value at the account's stamp is left."""
        elapsed = now - self._stamp[account]
        return math.exp(-self.decay * elapsed) if elapsed > 0.0 else 1.0

    def _settle(self, account: int, now: float) -> None:
        """Bring the account's value up to ``now`` at the rate it held since its stamp, in
        place (the one place usage accrues)."""
        if now <= self._stamp[account]:
            return
        keep = self._factor(account, now)
        # The constant rate's integral since the stamp: rate * (1 - keep) / (ln 2 / h).
        grow = (1.0 - keep) / self.decay
        value = self._value[account]
        rate = self._rate[account]
        for r in range(self.width):
            value[r] = value[r] * keep + rate[r] * grow
        self._stamp[account] = now

    def set_rate(self, account: int, now: float, rate: Sequence[float]) -> None:
        """From ``now`` on the account holds ``rate``: its usage is first brought up to
        ``now`` at the rate it held until then.

        Parameters
        ----------
        account : int
            The account.
        now : float
            The time of the change (never before the account's last change).
        rate : sequence of float
            What it holds from now on, ``width`` amounts.
        """
        self._settle(account, now)
        self._rate[account] = list(rate)

    def set_share(self, account: int, now: float, rate: float) -> None:
        """:meth:`set_rate` of a one-amount account, without a list: the ledger's call at
        every launch and stop (several launches at one time cost no decay).

        Parameters
        ----------
        account : int
            The account.
        now : float
            The time of the change (never before the account's last change).
        rate : float
            What it holds from now on.
        """
        self._settle(account, now)
        self._rate[account][0] = rate

    def set_relative(
        self, account: int, now: float, held: Sequence[float], total: Sequence[float]
    ) -> None:
        """:meth:`set_rate` with the rate ``held / total`` per amount (0 where the total
        is 0), in place: the ledger's call for each resource's use relative to capacity at
        every launch and stop.

        Parameters
        ----------
        account : int
            The account.
        now : float
            The time of the change (never before the account's last change).
        held, total : sequence of float
            What it holds from now on, and the capacity, per amount.
        """
        self._settle(account, now)
        rate = self._rate[account]
        for r in range(self.width):
            t = total[r]
            rate[r] = held[r] / t if t > 0.0 else 0.0

    def usage_of(self, account: int, now: float, amount: int) -> float:
        """One amount of the account's decayed usage at ``now``, in share-seconds.

        Parameters
        ----------
        account : int
            The account.
        now : float
            The time (not before its last change).
        amount : int
            Which amount.

        Returns
        -------
        float
        """
        keep = self._factor(account, now)
        return (
            self._value[account][amount] * keep
            + self._rate[account][amount] * (1.0 - keep) / self.decay
        )

    def usage(self, account: int, now: float) -> list[float]:
        """The account's decayed usage at ``now``, in share-seconds, per amount.

        Parameters
        ----------
        account : int
            The account.
        now : float
            The time (not before its last change).

        Returns
        -------
        list of float
        """
        return [self.usage_of(account, now, r) for r in range(self.width)]

    def average(self, account: int, now: float) -> list[float]:
        """The decayed mean of the account's rate at ``now``: ``ln 2 / h`` times its usage,
        in the rate's own unit (see the module).

        Parameters
        ----------
        account : int
            The account.
        now : float
            The time.

        Returns
        -------
        list of float
        """
        return [self.usage_of(account, now, r) * self.decay for r in range(self.width)]

    def mean(self, account: int, now: float) -> float:
        """:meth:`average`'s first amount (a share's decayed mean, without a list).

        Parameters
        ----------
        account : int
            The account.
        now : float
            The time.

        Returns
        -------
        float
        """
        return self.usage_of(account, now, 0) * self.decay

    def state(self, account: int) -> tuple[list[float], list[float], float]:
        """What a durable store keeps of the account: its value and rate as of its stamp,
        and the stamp (the live service writes it, so usage survives a restart).

        Parameters
        ----------
        account : int
            The account.

        Returns
        -------
        (list of float, list of float, float)
        """
        return list(self._value[account]), list(self._rate[account]), self._stamp[account]

    def restore(
        self, account: int, value: Sequence[float], rate: Sequence[float], stamp: float
    ) -> None:
        """Put back what :meth:`state` returned.

        Parameters
        ----------
        account : int
            The account.
        value, rate : sequence of float
            Its value and rate as of ``stamp``.
        stamp : float
            The time of its last change.
        """
        self._value[account] = list(value)
        self._rate[account] = list(rate)
        self._stamp[account] = stamp
