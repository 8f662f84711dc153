"""Read and validate a scenario file (SPEC section 1) into trusted domain objects.

Three stages, each rejecting bad input with one :class:`ScenarioError`
(``error: FILE: WHERE: WHAT``, SPEC section 4):

0. Text (:mod:`fairshare.workload.reading`): YAML or JSON, duplicate keys, nesting and
   alias expansion within the limits.
1. Structure (:mod:`fairshare.workload.schema`): records that mirror SPEC section 1 field
   by field check names, types and ranges of single fields (unknown fields, missing
   fields, strings where numbers belong, negative / NaN / infinite numbers, non-integral
   counts). The first problem becomes the :class:`ScenarioError`, with WHERE the field's
   path.
2. Meaning (:mod:`fairshare.workload.builder`): the checked records become a
   :class:`~fairshare.workload.model.Scenario`, checking what spans fields: unique names
   (after ``count`` expansion), known resources, queues and machines, constraint syntax,
   duration lists against task counts, and the totals of :mod:`fairshare.workload.limits`.

Examples
--------
>>> from fairshare.workload import ScenarioError, parse_scenario
>>> try:
...     parse_scenario(
...         {
...             "machines": [{"name": "m", "capacity": {"slots": 4}}],
...             "users": [{"name": "a", "queue": "ads"}],
...         },
...         source="pools.yaml",
...     )
... except ScenarioError as error:
...     print(error)
error: pools.yaml: users[0].queue: unknown queue 'ads'; no queues are declared
"""

from __future__ import annotations

from pathlib import Path

from fairshare import collector
from fairshare.workload.builder import MachinesFrom, build_scenario
from fairshare.workload.errors import ScenarioError, got
from fairshare.workload.model import Scenario
from fairshare.workload.reading import read_json, read_text_file, read_yaml
from fairshare.workload.schema import GENERATORS, MAX_COUNT, SCENARIO_FIELDS, check_scenario

__all__ = [
    "GENERATORS",
    "MAX_COUNT",
    "MachinesFrom",
    "ScenarioError",
    "load_scenario",
    "parse_scenario",
    "read_scenario_file",
]


def parse_scenario(
    data: object, source: str, machines_from: MachinesFrom | None = None
) -> Scenario:
    """Validate an already-parsed scenario (a dict as from ``json.load``) and build it.

    Parameters
    ----------
    data : object
        The scenario document: a mapping with SPEC section 1's fields.
    source : str
        Names the input in error messages; becomes ``Scenario.source``.
    machines_from : MachinesFrom, optional
        Gives the machines when the scenario has no ``machines`` field (a trace's node list,
        SPEC section 3); without it, ``machines`` is required.

    Returns
    -------
    Scenario

    Raises
    ------
    ScenarioError
        The first problem found: a field path and what is allowed.

    Examples
    --------
    >>> from fairshare.workload import parse_scenario
    >>> scenario = parse_scenario(
    ...     {
    ...         "machines": [{"name": "m", "count": 2, "capacity": {"cpu": 4, "mem": 8}}],
    ...         "queues": [{"path": "ads"}, {"path": "ads/prod", "weight": 2}],
    ...         "users": [{"name": "a", "queue": "ads/prod", "demand": {"cpu": 1, "mem": 2}}],
    ...     },
    ...     source="inline",
    ... )
    >>> scenario.cluster.machine_names, scenario.cluster.total.tolist()
    (('m-0', 'm-1'), [8.0, 16.0])
    >>> [queue.path for queue in scenario.queues], scenario.users[0].queue
    (['ads', 'ads/prod'], 'ads/prod')
    """
    if data is None:
        raise ScenarioError(source, "file", "is empty; a scenario needs at least 'machines'")
    if not isinstance(data, dict):
        fields = ", ".join(SCENARIO_FIELDS)
        raise ScenarioError(
            source, "top level", f"must be a mapping with fields {fields}, {got(data)}"
        )
    # Records, machines, users and jobs: many small objects and no reference cycles.
    with collector.paused():
        model = check_scenario(data, source)
        return build_scenario(model, source, machines_from)


def load_scenario(path: str | Path, machines_from: MachinesFrom | None = None) -> Scenario:
    r"""Read a YAML or JSON scenario file, validate it and build the :class:`Scenario`.

    The format follows the suffix (``.json``; ``.yaml`` or ``.yml``); any other suffix is read
    as JSON if the text starts with ``{``, else as YAML.

    Parameters
    ----------
    path : str or Path
        The scenario file (at most :data:`~fairshare.workload.limits.MAX_SCENARIO_BYTES`).
    machines_from : MachinesFrom, optional
        As for :func:`parse_scenario`.

    Returns
    -------
    Scenario

    Raises
    ------
    ScenarioError
        The file cannot be read, is too large, is not UTF-8, is empty, or breaks the format.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from fairshare.workload import load_scenario
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "tiny.yaml"
    ...     _ = path.write_text("machines: [{name: m, capacity: {slots: 4}}]\nusers: [{name: a}]\n")
    ...     scenario = load_scenario(path)
    >>> [user.name for user in scenario.users], scenario.users[0].demand.tolist()
    (['a'], [1.0])
    """
    with collector.paused():  # the parsed data too: dicts and lists, no cycles
        return parse_scenario(read_scenario_file(path), str(path), machines_from)


def read_scenario_file(path: str | Path) -> object:
    """A scenario file's parsed YAML or JSON (by suffix, as :func:`load_scenario` reads it),
    within the reading limits, not yet validated."""
    source = str(path)
    text = read_text_file(path)
    if not text.strip():
        raise ScenarioError(source, "file", "is empty; a scenario needs at least 'machines'")
    suffix = Path(path).suffix.lower()
    is_json = suffix == ".json" or (
        suffix not in (".yaml", ".yml") and text.lstrip().startswith("{")
    )
    return read_json(text, source) if is_json else read_yaml(text, source)
