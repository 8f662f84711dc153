"""The grid file of ``fairshare sweep`` (SPEC section 7): every bad field is one error that
names the file, the field path and what is allowed; good grids expand to the cells in the
documented order with stable keys; a cell's row is its parameters and every field of
``summary.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from fairshare.experiments import GridError, load_grid, parse_grid, run_cell, run_sweep
from fairshare.experiments.options import OPTIONS, read_option
from fairshare.workload import ScenarioError

from conftest import EXAMPLES

MACHINES = [{"name": "m", "count": 4, "capacity": {"slots": 2}, "rack": "r1"}]
WORKLOAD = {"generator": "facebook-2009", "jobs": 4}


def grid(**fields: Any) -> dict[str, Any]:
    """A valid inline grid, with ``fields`` replacing or (as None) removing its own."""
    document: dict[str, Any] = {
        "machines": MACHINES,
        "workload": WORKLOAD,
        "policies": ["fifo", "fair"],
        "seeds": [0, 1],
    }
    for key, value in fields.items():
        if value is None:
            document.pop(key, None)
        else:
            document[key] = value
    return document


def rejected(document: object, source: str = "grid.yaml") -> GridError | ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        parse_grid(document, source)
    return caught.value


@pytest.mark.parametrize(
    ("document", "where", "what"),
    [
        (None, "file", "is empty"),
        ([1, 2], "top level", "must be a mapping"),
        (grid(bogus=1), "bogus", "unknown field 'bogus'; allowed: scenario, policies"),
        (grid(policies=None), "policies", "missing"),
        (grid(policies="drf"), "policies", "must be a non-empty list of policy names"),
        (grid(policies=[]), "policies", "must be a non-empty list"),
        (grid(policies=["drf", 3]), "policies[1]", "must be a policy name, got 3"),
        (grid(policies=["drf", "dfr"]), "policies[1]", "unknown policy 'dfr'; allowed: fifo"),
        (grid(policies=["drf", "fair", "drf"]), "policies[2]", "repeats policies[0] ('drf')"),
        (grid(seeds=None), "seeds", "missing"),
        (grid(seeds=0), "seeds", "a count of seeds must be from 1 to 100,000, got 0"),
        (grid(seeds="3"), "seeds", "must be a non-empty list of seeds or a count"),
        (grid(seeds=[]), "seeds", "must be a non-empty list of seeds"),
        (grid(seeds=[0, -1]), "seeds[1]", "must be a whole number from 0 to"),
        (grid(seeds=[0, 1.5]), "seeds[1]", "must be a whole number from 0 to"),
        (grid(seeds=[True]), "seeds[0]", "must be a whole number"),
        (grid(seeds=[0, 2**63]), "seeds[1]", "from 0 to 9223372036854775807, got 9223"),
        (grid(seeds=[3, 1, 3]), "seeds[2]", "repeats seeds[0] (3)"),
        (grid(options=[1]), "options", "must be a mapping from option names to lists"),
        (grid(options={"delay": [None]}), "options.delay", "unknown option 'delay'; allowed"),
        (grid(options={"headroom": True}), "options.headroom", "must be a non-empty list"),
        (grid(options={"headroom": []}), "options.headroom", "must be a non-empty list"),
        (
            grid(options={"delay-scheduling": [5, 10]}),
            "options.delay-scheduling[0]",
            "expected null, two seconds as '5,10' or [5,10], got 5",
        ),
        (
            grid(options={"delay-scheduling": ["5,10", [5, 10]]}),
            "options.delay-scheduling[1]",
            "repeats options.delay-scheduling[0] ('5,10')",
        ),
        (
            grid(options={"preemption": ["30,-1"]}),
            "options.preemption[0]",
            "times must be numbers of seconds from 0 to 1e+15, got '30,-1'",
        ),
        (
            grid(options={"copy-compute-splitting": ["yes"]}),
            "options.copy-compute-splitting[0]",
            "expected true or false, got 'yes'",
        ),
        (grid(options={"pool-order": ["lifo"]}), "options.pool-order[0]", "expected fair or fifo"),
        (grid(options={"backfill": ["lazy"]}), "options.backfill[0]", "expected easy, got 'lazy'"),
        (
            grid(options={"rack-slowdown": [0]}),
            "options.rack-slowdown[0]",
            "must be a number > 0, at most 1e+06, got 0",
        ),
        (
            grid(options={"off-rack-slowdown": ["2"]}),
            "options.off-rack-slowdown[0]",
            "expected a number, got '2' (a string",
        ),
        (grid(options={"until": [-5]}), "options.until[0]", "must be a number >= 0, at most"),
        (
            grid(policies=["fifo", "offline-restricted"], options={"headroom": [False, True]}),
            "options.headroom[1]",
            "does not combine with the reference scheduler 'offline-restricted'",
        ),
        (grid(machines=None, workload=None), "scenario", "missing; a grid needs 'scenario'"),
        (grid(scenario="s.yaml"), "machines", "names a scenario file or holds the scenario's"),
        (grid(machines=None, workload=None, scenario=3), "scenario", "must be the path of a"),
        (
            grid(machines=None, workload=None, scenario="absent.yaml"),
            "scenario",
            "no scenario file",
        ),
        (grid(parameters=[1]), "parameters", "must be a mapping from scenario fields"),
        (
            grid(parameters={"policy": ["drf"]}),
            "parameters.policy",
            "must be a field of the scenario such as workload.jobs",
        ),
        (
            grid(parameters={"workload..jobs": [3]}),
            "parameters.workload..jobs",
            "must be a field of the scenario",
        ),
        (grid(parameters={"workload.jobs": 3}), "parameters.workload.jobs", "non-empty list"),
        (
            grid(parameters={"machines": [MACHINES]}),
            "parameters.machines",
            "a whole 'machines' would share its column with summary.json's 'machines'; sweep",
        ),
        (
            grid(parameters={"workload.jobs": [3, 3]}),
            "parameters.workload.jobs[1]",
            "repeats parameters.workload.jobs[0] (3)",
        ),
        (
            grid(parameters={"machines[2].count": [3]}),
            "parameters.machines[2].count",
            "cannot be set: machines has 1 item; index 2 is not one of them",
        ),
        (
            grid(parameters={"queues[0].weight": [3]}),
            "parameters.queues[0].weight",
            "cannot be set: the scenario has no queues",
        ),
        (
            grid(parameters={"workload.jobs.count": [3]}),
            "parameters.workload.jobs.count",
            "cannot be set: workload.jobs is not a mapping",
        ),
        (
            grid(parameters={"workload.jobs": [3, 0]}),
            "parameters.workload.jobs[1]",
            "makes the scenario invalid: workload.jobs: jobs must be a whole number >= 1, got 0",
        ),
        (
            grid(parameters={"workload.arrival": [10, -1]}),
            "parameters.workload.arrival[1]",
            "makes the scenario invalid: workload.arrival: arrival must be a number >= 0, got -1",
        ),
        (
            grid(parameters={"machines[0].capacity.gpu": [1], "workload.demand": [{"gpu": 1}]}),
            "parameters.workload.demand[0]",
            "makes the scenario invalid: workload.demand.gpu: unknown resource 'gpu'",
        ),
        (
            grid(seeds=1000, parameters={"workload.jobs": list(range(1, 101))}),
            "top level",
            "the grid has 200,000 cells (100 scenarios x 1 option combinations x 2 policies x "
            "1,000 seeds); at most 100,000",
        ),
    ],
)
def test_each_bad_field_is_one_error_naming_the_field_and_what_is_allowed(
    document: object, where: str, what: str
) -> None:
    error = rejected(document)
    assert (error.file, error.where) == ("grid.yaml", where), str(error)
    assert what in error.what, str(error)
    assert str(error).startswith(f"error: grid.yaml: {where}: ")


def test_a_scenario_problem_is_the_scenarios_own(tmp_path: Path) -> None:
    # Inline, the scenario's fields are the grid's: their paths are the grid's paths.
    error = rejected(grid(machines=[{"name": "m", "capacity": {"slots": -1}}]))
    assert (error.file, error.where) == ("grid.yaml", "machines[0].capacity.slots")
    # In a file of its own, the error names that file and its field.
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("machines: [{name: m, capacity: {slots: 2}}]\nworkload: {generator: x}\n")
    path = tmp_path / "grid.yaml"
    path.write_text("scenario: bad.yaml\npolicies: [drf]\nseeds: 2\n")
    with pytest.raises(ScenarioError) as caught:
        load_grid(path)
    assert (caught.value.file, caught.value.where) == (str(scenario), "workload.generator")
    # A scenario with nothing to simulate.
    error = rejected(grid(workload=None))
    assert (error.where, error.what) == (
        "jobs",
        "nothing to simulate: the scenario has neither 'jobs' nor 'workload'; add one",
    )


def test_a_combination_of_parameters_can_be_at_fault() -> None:
    # Each value is fine alone; together the jobs' demand names a resource the machines'
    # new capacity lacks.
    machines = [{"name": "m", "count": 2, "capacity": {"cpu": 4, "gpu": 1}}]
    error = rejected(
        grid(
            machines=machines,
            workload={"generator": "facebook-2010", "jobs": 3, "demand": {"cpu": 1}},
            parameters={
                "machines[0].capacity": [{"cpu": 4, "gpu": 1}, {"cpu": 4}],
                "workload.demand": [{"cpu": 1}, {"gpu": 1}],
            },
        )
    )
    assert error.where == "parameters.machines[0].capacity[1], parameters.workload.demand[1]"
    assert "workload.demand.gpu: unknown resource 'gpu'" in error.what


def test_grid_files_are_read_as_yaml_or_json_with_the_readers_limits(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("  \n")
    with pytest.raises(GridError, match=r"empty.yaml: file: is empty; a grid needs 'scenario'"):
        load_grid(empty)
    with pytest.raises(GridError, match="file: cannot read"):
        load_grid(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("policies: [drf\n")
    with pytest.raises(ScenarioError, match=r"broken.yaml: line \d+: invalid YAML"):
        load_grid(broken)
    duplicate = tmp_path / "dup.yaml"
    duplicate.write_text("policies: [drf]\npolicies: [fifo]\n")
    with pytest.raises(ScenarioError, match="line 2: duplicate key 'policies'"):
        load_grid(duplicate)
    as_json = tmp_path / "grid.json"
    as_json.write_text(json.dumps(grid(seeds=3)))
    assert load_grid(as_json).seeds == (0, 1, 2)
    # A relative scenario path is read from the grid's directory, not the working directory.
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "grid.yaml").write_text(
        "scenario: ../scenario.yaml\npolicies: [drf]\nseeds: [4]\noptions: {pool-order: [fifo]}\n"
    )
    (tmp_path / "scenario.yaml").write_text((EXAMPLES / "sim-two-jobs.yaml").read_text())
    loaded = load_grid(tmp_path / "sub" / "grid.yaml")
    assert loaded.scenario == "../scenario.yaml"
    assert loaded.cells()[0].parameters == (
        ("scenario", "../scenario.yaml"),
        ("policy", "drf"),
        ("seed", 4),
        ("pool-order", "fifo"),
    )


def test_option_values_read_as_the_command_line_reads_them() -> None:
    assert read_option("delay-scheduling", "5, 10.5") == ("5,10.5", {"delay": (5.0, 10.5)})
    assert read_option("preemption", [30, 60]) == ("30,60", {"preemption": (30.0, 60.0)})
    assert read_option("preemption", None) == (None, {"preemption": None})
    assert read_option("copy-compute-splitting", True) == (
        True,
        {"copy_compute_splitting": True},
    )
    assert read_option("rack-slowdown", 2) == (2.0, {"rack_slowdown": 2.0})
    assert read_option("until", 3600) == (3600.0, {"until": 3600.0})
    for name in OPTIONS:
        with pytest.raises(ValueError, match=r"got \{\}|got a mapping"):
            read_option(name, {})
    with pytest.raises(ValueError, match="expected null, two seconds"):
        read_option("delay-scheduling", "5,10,15")
    with pytest.raises(ValueError, match="times must be numbers of seconds"):
        read_option("delay-scheduling", "5,nan")


def test_cells_come_in_the_grid_order_with_keys_that_identify_their_runs() -> None:
    loaded = parse_grid(
        grid(
            seeds=[7, 3],
            options={"delay-scheduling": [None, "5,10"]},
            parameters={"workload.jobs": [4, 6]},
        ),
        "grid.yaml",
    )
    cells = loaded.cells()
    assert loaded.size == len(cells) == 16
    order = [(c.parameters[4][1], c.parameters[3][1], c.policy, c.seed) for c in cells[:8]]
    assert order == [
        (4, None, "fifo", 7),
        (4, None, "fifo", 3),
        (4, None, "fair", 7),
        (4, None, "fair", 3),
        (4, "5,10", "fifo", 7),
        (4, "5,10", "fifo", 3),
        (4, "5,10", "fair", 7),
        (4, "5,10", "fair", 3),
    ]
    assert cells[4].options.delay == (5.0, 10.0) and cells[0].options.delay is None
    assert cells[8].scenario.document["workload"] == {"generator": "facebook-2009", "jobs": 6}
    assert len({c.id for c in cells}) == 16
    # The same run in another grid (an option left at its default, in another order) has
    # the same key; a changed scenario does not.
    other = parse_grid(
        grid(seeds=[3], policies=["fair"], options={"pool-order": ["fair"]}), "other.yaml"
    )
    same = next(c for c in cells if (c.policy, c.seed, c.options.delay) == ("fair", 3, None))
    assert other.cells()[0].id == same.id
    changed = parse_grid(grid(seeds=[3], workload={**WORKLOAD, "arrival": 5}), "grid.yaml")
    assert same.id not in {c.id for c in changed.cells()}
    # JSON columns for parameters whose values are not of one scalar type.
    durations = [10, {"exponential": {"mean": 5}}]
    mixed = parse_grid(grid(parameters={"workload.duration": durations}), "g")
    assert mixed.columns()[-1] == ("workload.duration", "json")
    assert [c.parameters[-1][1] for c in mixed.cells()[::4]] == [
        "10",
        '{"exponential":{"mean":5}}',
    ]


def test_a_cells_row_is_its_parameters_then_every_field_of_the_summary() -> None:
    import fairshare  # noqa: PLC0415

    loaded = parse_grid(grid(seeds=[2], options={"delay-scheduling": ["1,2"]}), "grid.yaml")
    cell = loaded.cells()[1]
    row = run_cell(cell)
    run = fairshare.simulate(
        fairshare.parse_scenario({"machines": MACHINES, "workload": WORKLOAD}, "grid.yaml"),
        "fair",
        seed=2,
        options=fairshare.SimOptions(delay=(1.0, 2.0)),
    )
    summary = run.summary
    assert list(row)[:4] == ["scenario", "policy", "seed", "delay-scheduling"]
    assert row["delay-scheduling"] == "1,2" and row["policy"] == "fair" and row["seed"] == 2
    for field, value in summary.items():
        if field in ("policy", "seed", "wall_seconds"):
            continue
        if isinstance(value, dict) and not any(isinstance(v, dict) for v in value.values()):
            for key, item in value.items():
                shown = json.dumps(item, separators=(",", ":")) if isinstance(item, list) else item
                assert row[f"{field}_{key}"] == shown, (field, key)
        elif isinstance(value, list | dict):
            assert json.loads(str(row[field])) == value, field
        else:
            assert row[field] == value, field
    assert row["options_delay"] == "[1.0,2.0]"
    assert row["fairshare_version"] == fairshare.__version__
    assert row["kernel"] in ("compiled", "python")
    assert isinstance(row["cell_seconds"], float) and isinstance(row["wall_seconds"], float)


def test_a_grown_grid_runs_only_its_new_cells(tmp_path: Path) -> None:
    small = parse_grid(grid(seeds=[0]), "grid.yaml")
    first = run_sweep(small, tmp_path / "out", jobs=1)
    assert (first.ran, first.reused) == (2, 0)
    grown = parse_grid(grid(seeds=[0, 1], options={"pool-order": ["fair", "fifo"]}), "grid.yaml")
    second = run_sweep(grown, tmp_path / "out", jobs=1)
    # pool-order fair is the default: those cells with seed 0 are the first sweep's runs.
    assert (second.ran, second.reused) == (6, 2)
    reused = second.results.filter((pl.col("seed") == 0) & (pl.col("pool-order") == "fair")).drop(
        "pool-order"
    )
    assert reused.equals(first.results)
    assert second.results["pool-order"].to_list() == ["fair"] * 4 + ["fifo"] * 4


def test_the_example_grid_is_valid() -> None:
    example = load_grid(EXAMPLES / "sweeps" / "fair-delay-scheduling.yaml")
    assert example.size == 40
    assert [axis.path for axis in example.parameters] == ["workload.arrival"]


def test_cells_whose_runs_leave_jobs_unfinished_are_counted_in_a_warning(tmp_path: Path) -> None:
    loaded = parse_grid(grid(seeds=[0], options={"until": [None, 200]}), "grid.yaml")
    result = run_sweep(loaded, tmp_path / "out", jobs=1)
    unfinished = result.results["unfinished_jobs"].to_list()
    assert unfinished[:2] == [0, 0] and all(n > 0 for n in unfinished[2:])
    assert result.warnings() == [
        "warning: grid.yaml: 2 of 4 cells have jobs unfinished at the end of the run "
        "(column unfinished_jobs of results.parquet)"
    ]
