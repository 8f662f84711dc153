"""``fairshare import slurm``: Slurm's association tree and shares as a scenario (SPEC section
8.1), for the ``slurm-fairtree`` policy (:mod:`fairshare.policies.slurm`).

Inputs, told apart by content (a file named ``*.conf`` is a ``slurm.conf``):

- The output of ``sacctmgr -P show assoc format=Cluster,Account,User,Share,ParentName`` (or
  ``-p``, which ends every line with ``|``): a header line naming the five columns (in any
  order; other columns are ignored with a warning), then one association per line. A row
  with an empty ``User`` is an account, whose ``ParentName`` is its parent account (empty for
  the root account); a row with a ``User`` is a user association in its ``Account``.
- Optionally a ``slurm.conf``: ``PriorityDecayHalfLife`` becomes the scenario's
  ``usage_half_life`` in seconds (Slurm's time format, ``parse_time.c``'s ``time_str2secs``:
  ``min``, ``min:sec``, ``hr:min:sec``, ``days-hr``, ``days-hr:min``, ``days-hr:min:sec``,
  rounded up to whole minutes as ``read_config.c`` does; ``0``, ``-1``, ``INFINITE`` and
  ``UNLIMITED`` mean no decay, which a scenario cannot say: a warning, and no
  ``usage_half_life``). Its ``NodeName`` lines become the machines (``CPUs``, else
  ``Boards x Sockets x CoresPerSocket x ThreadsPerCore``; ``RealMemory`` in MiB as ``mem``;
  ``Gres=gpu[:type]:N`` as ``gpu``; host lists such as ``node[01-04,07]`` expanded;
  ``NodeName=DEFAULT`` sets the defaults of the lines after it). The priority settings the
  policy does not model (``PriorityCalcPeriod`` other than 5 minutes, weights other than
  ``PriorityWeightFairshare``, ``PriorityFlags=NO_FAIR_TREE``, ``TRESBillingWeights``,
  ``PriorityUsageResetPeriod``, ``PriorityType`` other than multifactor) are warnings.

The scenario:

- Accounts become queues, their path from the root account down (``physics/theory``; the
  root account is the tree's root, not a queue), weighted by their ``Share``.
- Each user association becomes a user named ``USER``, or ``ACCOUNT/USER`` for every
  association of a user under several accounts, in its account's queue (none for the root
  account), weighted by its ``Share``.
- ``Share``: a whole number; empty is 1. ``parent`` (Slurm's ``SLURMDB_FS_USE_PARENT``): an
  account of ``Share=parent`` takes no part in its level, and Fair Tree ranks its children
  with its parent's (``assoc_mgr.c``'s fair-share parent): its children are placed in its
  parent's queue, a warning names it. A user of ``Share=parent`` is ranked first among its
  siblings by Fair Tree (``Level FS`` inf), which a weight cannot say: it is given its
  account's share, with a warning. ``Share=0`` (never ahead of a sibling with shares) becomes
  the weight :data:`ZERO_SHARE_WEIGHT`, with a warning (a scenario's weights are > 0; the two
  differ while the association has no usage).
- Several clusters in one file: the first listed is kept (or the one ``cluster`` names), and
  a warning names the others.
- Machines: sacctmgr lists none. They come from ``slurm.conf``'s nodes, else from the
  ``machines`` (and ``resources``) of a scenario given as ``machines``, else one placeholder
  machine with a warning to replace it.

A malformed input raises :class:`~fairshare.workload.errors.ScenarioError` naming the file,
the line and the field (``error: FILE: line N: FIELD: WHAT``).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> listing = (
...     "Cluster|Account|User|Share|ParentName\\n"
...     "c|root||1|\\n"
...     "c|physics||70|root\\n"
...     "c|bio||30|root\\n"
...     "c|physics|alice|1|\\n"
...     "c|bio|bob||\\n"
... )
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp, "assoc.txt")
...     _ = path.write_text(listing)
...     result = import_slurm([path])
>>> result.scenario["queues"], result.scenario["users"]
([{'path': 'physics', 'weight': 70}, {'path': 'bio', 'weight': 30}], \
[{'name': 'alice', 'queue': 'physics', 'weight': 1}, {'name': 'bob', 'queue': 'bio', 'weight': 1}])
>>> print(result.warnings[0])  # doctest: +ELLIPSIS
warning: ...assoc.txt: machines: sacctmgr lists no nodes: one placeholder machine ...
>>> slurm_seconds("7-0"), slurm_seconds("90"), slurm_seconds("1:30:00"), slurm_seconds("0")
(604800, 5400, 5400, 0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fairshare.workload.errors import ScenarioError
from fairshare.workload.imports import ImportResult
from fairshare.workload.limits import MAX_MACHINES
from fairshare.workload.loader import parse_scenario, read_scenario_file
from fairshare.workload.reading import read_text_file
from fairshare.workload.schema import SCENARIO_FIELDS

__all__ = [
    "COLUMNS",
    "PLACEHOLDER",
    "ZERO_SHARE_WEIGHT",
    "expand_hostlist",
    "import_slurm",
    "slurm_seconds",
]

COLUMNS = ("Cluster", "Account", "User", "Share", "ParentName")
"""The columns of ``sacctmgr -P show assoc format=Cluster,Account,User,Share,ParentName``."""

PLACEHOLDER = {"name": "placeholder", "capacity": {"cpu": 1}}
"""The machine of a scenario imported without nodes (replace it with yours)."""

ZERO_SHARE_WEIGHT = 1e-6
"""The weight of an association of ``Share=0`` (a scenario's weights are > 0)."""

_DEFAULT_CALC_MINUTES = 5
"""Slurm's default ``PriorityCalcPeriod``, the one ``slurm-fairtree`` uses."""

_WEIGHTS = (
    "PriorityWeightAge",
    "PriorityWeightAssoc",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityWeightTRES",
)
"""The multifactor weights besides ``PriorityWeightFairshare``: ``slurm-fairtree`` orders jobs
by the fair-share factor alone."""


@dataclass
class _Row:
    """One association of the listing."""

    line: int
    cluster: str
    account: str
    user: str
    share: int | None  # None: Share=parent
    parent: str


def _read(path: Path) -> str:
    """The file's text, within the scenario size limit."""
    return read_text_file(path)


def _shown(text: str) -> str:
    """``text`` quoted for a message, cut when long."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}..."


def _significant(text: str) -> list[tuple[int, str]]:
    """The numbered lines that are neither blank nor ``#`` comments."""
    return [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _is_conf(path: Path, text: str) -> bool:
    """Whether the file is a ``slurm.conf`` (by name, else by its first line: ``Key=Value``
    with no ``|``)."""
    if path.suffix == ".conf":
        return True
    lines = _significant(text)
    return bool(lines) and "|" not in lines[0][1] and "=" in lines[0][1]


def slurm_seconds(text: str) -> int | None:
    """A Slurm time string in seconds, as ``parse_time.c``'s ``time_str2secs`` reads it
    (``min``, ``min:sec``, ``hr:min:sec``, ``days-hr``, ``days-hr:min``, ``days-hr:min:sec``);
    None when it is not one. ``-1``, ``INFINITE`` and ``UNLIMITED`` are ``-1``.

    Parameters
    ----------
    text : str
        The value.

    Returns
    -------
    int or None

    Examples
    --------
    >>> [slurm_seconds(t) for t in ("14-0", "2-12:30", "30:15", "UNLIMITED", "1-2-3", "x")]
    [1209600, 217800, 1815, -1, None, None]
    """
    value = text.strip()
    if value.lower() in ("-1", "infinite", "unlimited"):
        return -1
    if not re.fullmatch(r"(\d+-)?\d+(:\d+){0,2}", value):
        return None
    days = 0
    if "-" in value:
        head, _, value = value.partition("-")
        days = int(head)
        parts = [int(p) for p in value.split(":")] + [0, 0]
        hours, minutes, seconds = parts[0], parts[1], parts[2]
    else:
        parts = [int(p) for p in value.split(":")]
        if len(parts) == 3:
            hours, minutes, seconds = parts
        else:
            hours, minutes, seconds = 0, parts[0], parts[1] if len(parts) == 2 else 0
    return days * 86400 + hours * 3600 + minutes * 60 + seconds


def expand_hostlist(expr: str) -> list[str]:
    """A Slurm host list's names: ``node[01-03,07]`` is node01, node02, node03, node07
    (zero padding kept); comma-separated lists and several bracket groups expand in order.

    Parameters
    ----------
    expr : str
        The host list.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        A bracket is not closed or a range is not ``low-high`` of whole numbers.

    Examples
    --------
    >>> expand_hostlist("gpu[1-2]x,cpu[08-10]")
    ['gpu1x', 'gpu2x', 'cpu08', 'cpu09', 'cpu10']
    """
    names: list[str] = []
    depth = 0
    start = 0
    parts: list[str] = []
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(expr[start:i])
            start = i + 1
    parts.append(expr[start:])
    if depth != 0:
        raise ValueError("unbalanced brackets")
    for part in parts:
        names.extend(_expand_one(part))
    return names


def _expand_one(part: str) -> list[str]:
    """The names of one host-list element (no top-level comma)."""
    match = re.search(r"\[([^\]]*)\]", part)
    if match is None:
        if "[" in part or "]" in part or not part:
            raise ValueError(f"bad host name {part!r}")
        return [part]
    head, tail = part[: match.start()], part[match.end() :]
    out: list[str] = []
    for item in match.group(1).split(","):
        low, dash, high = item.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ValueError(f"bad range {item!r}")
        width = len(low)
        last = int(high) if dash else int(low)
        if last < int(low) or last - int(low) > MAX_MACHINES:
            raise ValueError(f"bad range {item!r}")
        for k in range(int(low), last + 1):
            out.extend(_expand_one(f"{head}{k:0{width}d}{tail}"))
    return out


def _conf_pairs(line: str) -> list[tuple[str, str]]:
    """The ``Key=Value`` pairs of a ``slurm.conf`` line (values may not hold spaces)."""
    pairs = []
    for token in line.split("#", 1)[0].split():
        key, eq, value = token.partition("=")
        if eq:
            pairs.append((key, value))
    return pairs


@dataclass
class _Conf:
    """What a ``slurm.conf`` says that the import reads."""

    half_life: int | None = None  # seconds; None: not set; 0: no decay
    machines: list[dict[str, object]] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _parse_conf(path: Path, text: str) -> _Conf:
    """Read ``slurm.conf`` (see the module)."""
    conf = _Conf()
    source = str(path)
    defaults: dict[str, str] = {}
    seen: set[str] = set()
    for number, line in _significant(text):
        pairs = _conf_pairs(line)
        if not pairs:
            continue
        key = pairs[0][0].lower()
        where = f"line {number}"
        if key == "nodename":
            _node_line(conf, source, number, pairs, defaults, seen)
            continue
        for name, value in pairs:
            low = name.lower()
            if low == "prioritydecayhalflife":
                seconds = slurm_seconds(value)
                if seconds is None:
                    raise ScenarioError(
                        source,
                        f"{where}: PriorityDecayHalfLife",
                        "expected a Slurm time (minutes, hh:mm:ss, days-hh[:mm[:ss]]), "
                        f"got {_shown(value)}",
                    )
                if seconds in (0, -1):
                    conf.half_life = 0
                    conf.warnings.append(
                        f"warning: {source}: {where}: PriorityDecayHalfLife: {value} means no "
                        "decay, which a scenario cannot say: no usage_half_life is written "
                        "(slurm-fairtree then decays with Slurm's default of 7 days); set "
                        "usage_half_life to a long time to approach it"
                    )
                else:
                    # read_config.c: time_str2mins rounds up to whole minutes.
                    conf.half_life = math.ceil(seconds / 60) * 60
            elif low == "prioritycalcperiod":
                seconds = slurm_seconds(value)
                if seconds != _DEFAULT_CALC_MINUTES * 60:
                    conf.warnings.append(
                        f"warning: {source}: {where}: PriorityCalcPeriod: {value} is not "
                        "modelled; slurm-fairtree recalculates every 5 minutes"
                    )
            elif low == "prioritytype" and value.lower() != "priority/multifactor":
                conf.warnings.append(
                    f"warning: {source}: {where}: PriorityType: {value} is not modelled; "
                    "slurm-fairtree is priority/multifactor with Fair Tree"
                )
            elif low == "priorityflags" and "no_fair_tree" in value.lower():
                conf.warnings.append(
                    f"warning: {source}: {where}: PriorityFlags: NO_FAIR_TREE (the classic "
                    "fair-share algorithm) is not modelled; slurm-fairtree is Fair Tree"
                )
            elif low in (w.lower() for w in _WEIGHTS) and value.strip() not in ("", "0"):
                conf.warnings.append(
                    f"warning: {source}: {where}: {name}: {value} is not modelled; "
                    "slurm-fairtree orders jobs by the fair-share factor alone"
                )
            elif low == "tresbillingweights":
                conf.warnings.append(
                    f"warning: {source}: {where}: TRESBillingWeights is not modelled; "
                    "usage counts CPUs (Slurm's billing without weights)"
                )
            elif low == "priorityusageresetperiod" and value.lower() != "none":
                conf.warnings.append(
                    f"warning: {source}: {where}: PriorityUsageResetPeriod: {value} is not "
                    "modelled; usage only decays"
                )
            elif low == "include":
                conf.warnings.append(
                    f"warning: {source}: {where}: Include: {value} is not read; pass the "
                    "included file's settings in the main file"
                )
    return conf


def _node_line(
    conf: _Conf,
    source: str,
    number: int,
    pairs: list[tuple[str, str]],
    defaults: dict[str, str],
    seen: set[str],
) -> None:
    """One ``NodeName=`` line: its machines, or the defaults of the lines after it."""
    values = {k.lower(): v for k, v in pairs[1:]}
    hosts = pairs[0][1]
    if hosts.upper() == "DEFAULT":
        defaults.update(values)
        return
    settings = {**defaults, **values}
    where = f"line {number}"

    def count(key: str, default: int) -> int:
        text = settings.get(key)
        if text is None:
            return default
        if not text.isdigit():
            raise ScenarioError(
                source, f"{where}: {key}", f"expected a whole number, got {_shown(text)}"
            )
        return int(text)

    cpus = count("cpus", 0) or (
        max(1, count("boards", 1))
        * count("sockets", 1)
        * count("corespersocket", 1)
        * count("threadspercore", 1)
    )
    capacity: dict[str, float] = {"cpu": cpus}
    if "realmemory" in settings:
        capacity["mem"] = count("realmemory", 1)
    gpus = 0
    for spec in settings.get("gres", "").split(","):
        fields = spec.split(":")
        if fields[0] == "gpu" and len(fields) > 1:
            amount = fields[-1].rstrip("KMG")
            if not amount.isdigit():
                raise ScenarioError(
                    source, f"{where}: Gres", f"expected gpu[:type]:N, got {_shown(spec)}"
                )
            gpus += int(amount)
    if gpus:
        capacity["gpu"] = gpus
    try:
        names = expand_hostlist(hosts)
    except ValueError as err:
        raise ScenarioError(
            source, f"{where}: NodeName", f"expected a host list such as node[01-04], {err}"
        ) from None
    if len(conf.machines) + len(names) > MAX_MACHINES:
        raise ScenarioError(source, f"{where}: NodeName", f"more than {MAX_MACHINES:,} nodes")
    for resource in capacity:
        if resource not in conf.resources:
            conf.resources.append(resource)
    for name in names:
        if name in seen:
            raise ScenarioError(source, f"{where}: NodeName", f"node {name!r} is listed twice")
        seen.add(name)
        conf.machines.append({"name": name, "capacity": dict(capacity)})
    if "feature" in settings or "features" in settings:
        conf.warnings.append(
            f"warning: {source}: {where}: Features: node features are not kept (add them as "
            "machine attributes for constraints)"
        )


def _parse_listing(path: Path, text: str) -> tuple[list[_Row], list[str]]:
    """The associations of an ``sacctmgr -P`` listing, and the warnings about its columns."""
    source = str(path)
    lines = _significant(text)
    if not lines:
        raise ScenarioError(source, "file", "is empty; expected sacctmgr's listing")
    number, header = lines[0]
    trailing = header.endswith("|")  # sacctmgr -p ends every line with '|'
    names = (header[:-1] if trailing else header).split("|")
    index = {name.strip().lower(): k for k, name in enumerate(names)}
    missing = [c for c in COLUMNS if c.lower() not in index]
    if missing:
        raise ScenarioError(
            source,
            f"line {number}: header",
            f"expected the columns {'|'.join(COLUMNS)} (sacctmgr -P show assoc "
            f"format={','.join(COLUMNS)}), got {_shown(header)}",
        )
    warnings = [
        f"warning: {source}: line {number}: {name.strip()}: column not used"
        for name in names
        if name.strip().lower() not in (c.lower() for c in COLUMNS)
    ]
    at = {c: index[c.lower()] for c in COLUMNS}
    rows: list[_Row] = []
    for number, line in lines[1:]:
        fields = (line[:-1] if trailing and line.endswith("|") else line).split("|")
        if len(fields) != len(names):
            raise ScenarioError(
                source,
                f"line {number}",
                f"expected {len(names)} fields separated by '|', got {len(fields)}",
            )
        value = {c: fields[at[c]].strip() for c in COLUMNS}
        if not value["Account"]:
            raise ScenarioError(
                source, f"line {number}: Account", "must name the association's account"
            )
        for column in ("Account", "User", "ParentName"):
            if "/" in value[column]:
                raise ScenarioError(
                    source,
                    f"line {number}: {column}",
                    f"'/' is not allowed (it separates queue levels), got {_shown(value[column])}",
                )
        share_text = value["Share"]
        share: int | None
        if share_text.lower() == "parent":
            share = None
        elif share_text == "":
            share = 1
        elif share_text.isdigit() and len(share_text) <= 10:
            share = int(share_text)
        else:
            raise ScenarioError(
                source,
                f"line {number}: Share",
                f"expected a whole number >= 0, 'parent' or nothing, got {_shown(share_text)}",
            )
        rows.append(
            _Row(
                number,
                value["Cluster"],
                value["Account"],
                value["User"],
                share,
                value["ParentName"],
            )
        )
    return rows, warnings


def _weight(share: int) -> float | int:
    """A share as a weight (a share of 0 as :data:`ZERO_SHARE_WEIGHT`)."""
    return share if share > 0 else ZERO_SHARE_WEIGHT


def _tree(
    source: str, rows: Sequence[_Row], warnings: list[str]
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The queues and users of one cluster's associations (see the module)."""
    accounts: dict[str, _Row] = {}
    for row in rows:
        if row.user:
            continue
        if row.account in accounts:
            # Two rows of one account (two parents, two shares): which one sacctmgr meant
            # cannot be told, and a tree where an account sits twice is not one.
            raise ScenarioError(
                source,
                f"line {row.line}: Account",
                f"account {row.account!r} is listed twice (first at line "
                f"{accounts[row.account].line}); list each account once",
            )
        accounts[row.account] = row
    roots = [a for a in accounts.values() if not a.parent]
    if not roots:
        raise ScenarioError(
            source, "file", "no root account: one account row must have an empty ParentName"
        )
    if len(roots) > 1:
        raise ScenarioError(
            source,
            f"line {roots[1].line}: ParentName",
            f"only the root account has none; {roots[0].account!r} (line {roots[0].line}) "
            f"and {roots[1].account!r} both lack one",
        )
    root = roots[0].account
    for row in accounts.values():
        if row.parent and row.parent not in accounts:
            raise ScenarioError(
                source,
                f"line {row.line}: ParentName",
                f"unknown account {row.parent!r} (no account row lists it)",
            )
    # Each account's path: its ancestors' names from below the root down, skipping those of
    # Share=parent (Fair Tree hands their children up: assoc_mgr.c's fair-share parent).
    paths: dict[str, str] = {root: ""}
    order: list[str] = []

    def path_of(name: str) -> str:
        chain = [name]
        while chain[-1] not in paths:
            up = accounts[chain[-1]].parent
            if up in chain:
                cycle = " -> ".join([*chain[chain.index(up) :], up])
                raise ScenarioError(
                    source,
                    f"line {accounts[name].line}: ParentName",
                    f"accounts form a cycle ({cycle}); the tree needs one root",
                )
            chain.append(up)
        for below in reversed(chain[:-1]):
            row = accounts[below]
            base = paths[row.parent]
            if row.share is None:
                paths[below] = base
                warnings.append(
                    f"warning: {source}: line {row.line}: Share: account {below!r} has "
                    f"Share=parent: Fair Tree ranks its children with its parent's, so they "
                    f"are placed in {('queue ' + repr(base)) if base else 'the root'}"
                )
            else:
                paths[below] = f"{base}/{below}" if base else below
                order.append(below)
        return paths[name]

    for name in accounts:
        path_of(name)
    queues: list[dict[str, object]] = []
    for name in sorted(order, key=lambda a: paths[a].count("/")):
        share = accounts[name].share
        assert share is not None
        queues.append({"path": paths[name], "weight": _weight(share)})
        if share == 0:
            warnings.append(
                f"warning: {source}: line {accounts[name].line}: Share: account {name!r} has "
                f"Share=0, kept as the weight {ZERO_SHARE_WEIGHT:g} (weights are > 0)"
            )
    user_rows = [row for row in rows if row.user]
    seen: dict[tuple[str, str], int] = {}
    kept: list[_Row] = []
    for row in user_rows:
        key = (row.account, row.user)
        if key in seen:
            warnings.append(
                f"warning: {source}: line {row.line}: User: {row.user!r} in {row.account!r} "
                f"is listed again (first at line {seen[key]}; a partition's association?); "
                "the first is kept"
            )
            continue
        if row.account not in accounts:
            raise ScenarioError(
                source,
                f"line {row.line}: Account",
                f"unknown account {row.account!r} (no account row lists it)",
            )
        seen[key] = row.line
        kept.append(row)
    accounts_of: dict[str, int] = {}
    for row in kept:
        accounts_of[row.user] = accounts_of.get(row.user, 0) + 1
    users: list[dict[str, object]] = []
    for row in kept:
        name = row.user if accounts_of[row.user] == 1 else f"{row.account}/{row.user}"
        user: dict[str, object] = {"name": name}
        queue = paths[row.account]
        if queue:
            user["queue"] = queue
        share = row.share
        if share is None:
            account = accounts[row.account]
            inherited = account.share if account.share is not None else 1
            share = inherited if account.account != root else 1
            warnings.append(
                f"warning: {source}: line {row.line}: Share: user {row.user!r} has "
                "Share=parent, which Fair Tree ranks first in its account (Level FS inf); "
                f"the scenario gives it its account's share, {share}"
            )
        elif share == 0:
            warnings.append(
                f"warning: {source}: line {row.line}: Share: user {row.user!r} has Share=0, "
                f"kept as the weight {ZERO_SHARE_WEIGHT:g} (weights are > 0)"
            )
        user["weight"] = _weight(share)
        users.append(user)
    return queues, users


def _machines_from(path: Path) -> tuple[object, object]:
    """The ``machines`` and ``resources`` of a scenario file (validated with the result)."""
    data = read_scenario_file(path)
    if not isinstance(data, Mapping) or "machines" not in data:
        raise ScenarioError(str(path), "machines", "a scenario with machines is expected here")
    return data["machines"], data.get("resources")


def import_slurm(
    paths: Sequence[str | Path],
    *,
    cluster: str | None = None,
    machines: str | Path | None = None,
) -> ImportResult:
    """Convert an ``sacctmgr`` association listing (and optionally a ``slurm.conf``) into a
    scenario (see the module).

    Parameters
    ----------
    paths : sequence of str or Path
        One listing, and at most one ``slurm.conf``, in any order.
    cluster : str, optional
        The cluster to keep when the listing has several (default: the first listed).
    machines : str or Path, optional
        A scenario file whose ``machines`` (and ``resources``) the result takes, when no
        ``slurm.conf`` lists nodes.

    Returns
    -------
    ImportResult
        The scenario mapping and the warnings.

    Raises
    ------
    ScenarioError
        A file cannot be read, is neither input, or is malformed (its line and field named),
        or the result is not a valid scenario.
    """
    listing: tuple[Path, list[_Row]] | None = None
    conf: _Conf | None = None
    warnings: list[str] = []
    for given in paths:
        path = Path(given)
        text = _read(path)
        if _is_conf(path, text):
            if conf is not None:
                raise ScenarioError(str(path), "file", "a second slurm.conf; give one")
            conf = _parse_conf(path, text)
            continue
        if listing is not None:
            raise ScenarioError(
                str(path), "file", f"a second sacctmgr listing (after {listing[0]}); give one"
            )
        rows, more = _parse_listing(path, text)
        warnings += more
        listing = (path, rows)
    if listing is None:
        raise ScenarioError(
            str(Path(paths[0])) if paths else "command line",
            "file",
            "no sacctmgr listing given (the output of sacctmgr -P show assoc "
            f"format={','.join(COLUMNS)})",
        )
    path, rows = listing
    source = str(path)
    clusters = list(dict.fromkeys(row.cluster for row in rows))
    if not clusters:
        raise ScenarioError(source, "file", "lists no association")
    chosen = cluster if cluster is not None else clusters[0]
    if chosen not in clusters:
        raise ScenarioError(
            source,
            "cluster",
            f"unknown cluster {chosen!r}; the listing has {', '.join(map(repr, clusters))}",
        )
    if len(clusters) > 1:
        others = ", ".join(repr(c) for c in clusters if c != chosen)
        warnings.append(
            f"warning: {source}: Cluster: several clusters; {chosen!r} is kept, {others} "
            "dropped (choose one with --cluster)"
        )
    queues, users = _tree(source, [r for r in rows if r.cluster == chosen], warnings)
    scenario: dict[str, object] = {}
    if conf is not None:
        warnings += conf.warnings
    if conf is not None and conf.machines:
        scenario["resources"] = conf.resources
        scenario["machines"] = conf.machines
    elif machines is not None:
        listed, resources = _machines_from(Path(machines))
        if resources is not None:
            scenario["resources"] = resources
        scenario["machines"] = listed
    else:
        scenario["machines"] = [dict(PLACEHOLDER)]
        warnings.append(
            f"warning: {source}: machines: sacctmgr lists no nodes: one placeholder machine "
            f"'{PLACEHOLDER['name']}' of 1 CPU; replace it with your nodes (or give a "
            "slurm.conf or --machines FILE)"
        )
    scenario["queues"] = queues
    scenario["users"] = users
    if conf is not None and conf.half_life:
        scenario["usage_half_life"] = conf.half_life
    _check(source, scenario)
    return ImportResult(scenario, warnings)


def _check(source: str, scenario: dict[str, object]) -> None:
    """Validate the result as every command will read it (only the fields this version's
    scenarios have)."""
    checked = {k: v for k, v in scenario.items() if k in SCENARIO_FIELDS}
    resources = checked.get("resources")
    listed = checked.get("machines")
    if resources is None and isinstance(listed, list):
        # The default order: the names used in the machines' capacities, first seen first.
        names: dict[str, None] = {}
        for machine in listed:
            capacity = machine.get("capacity") if isinstance(machine, Mapping) else None
            if isinstance(capacity, Mapping):
                names.update(dict.fromkeys(map(str, capacity)))
        resources = list(names)
    if isinstance(resources, list) and len(resources) > 1:
        # Users need a demand when the cluster has several resources: one CPU each.
        demand = {"cpu" if "cpu" in resources else str(resources[0]): 1}
        users = checked.get("users")
        if isinstance(users, list):
            checked["users"] = [{**u, "demand": dict(demand)} for u in users]
            scenario["users"] = checked["users"]
    parse_scenario(checked, source)
