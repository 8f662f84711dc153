"""How the Ray executor sees Ray (no cluster needed): nodes as machines (capacity from
resources, rack and attributes from labels), the cluster's resources, and a task's demand as
Ray task options; and what a worker runs."""

from __future__ import annotations

from fairshare.backends.ray_cluster import node_machine, node_resources, ray_options
from fairshare.backends.ray_task import run_command

NODE = {
    "NodeID": "abc123",
    "Alive": True,
    "Resources": {
        "CPU": 8.0,
        "GPU": 2.0,
        "memory": 16.0 * 2**30,
        "object_store_memory": 1e9,
        "node:10.0.0.1": 1.0,
        "accelerator_type:A100": 1.0,
        "ssd": 3.0,
    },
    "Labels": {
        "ray.io/node-id": "abc123",
        "rack": "r7",
        "gpu": "true",
        "spot": "False",
        "kernel": "5.4",
        "cores": "64",
        "zone": "eu-1",
    },
}


def test_a_node_is_a_machine() -> None:
    machine = node_machine(NODE, ("cpu", "mem", "gpu", "ssd", "fpga"))
    assert machine.name == "abc123"
    assert machine.capacity.tolist() == [8.0, 16.0, 2.0, 3.0, 0.0]
    assert machine.rack == "r7"
    assert dict(machine.attributes) == {
        "gpu": True,
        "spot": False,
        "kernel": 5.4,
        "cores": 64,
        "zone": "eu-1",
    }


def test_the_resources_of_a_scenario_without_machines_are_the_nodes() -> None:
    plain = {"NodeID": "n2", "Resources": {"CPU": 1.0, "memory": 1.0, "slot": 2.0}}
    assert node_resources([plain]) == ("cpu", "mem", "slot")
    assert node_resources([plain, NODE]) == ("cpu", "mem", "gpu", "slot", "ssd")


def test_a_demand_becomes_ray_task_options() -> None:
    options = ray_options({"cpu": 0.5, "mem": 2.0, "gpu": 1.0, "ssd": 1.0, "fpga": 0.0})
    assert options == {
        "num_cpus": 0.5,
        "memory": 2 * 2**30,
        "num_gpus": 1.0,
        "resources": {"ssd": 1.0},
        "max_retries": 0,
    }
    assert ray_options({"slot": 1.0}) == {
        "num_cpus": 0,
        "max_retries": 0,
        "resources": {"slot": 1.0},
    }


def test_a_worker_runs_the_argv_with_its_environment() -> None:
    code, tail = run_command(
        ["sh", "-c", 'echo "task $FAIRSHARE_TASK_INDEX" >&2; exit 3'],
        {"FAIRSHARE_TASK_INDEX": "7"},
    )
    assert (code, tail) == (3, "task 7")
    assert run_command(["true"], {}) == (0, "")
    code, tail = run_command(["/no/such/program"], {})
    assert code == 127 and tail.startswith("cannot run '/no/such/program'")


def test_a_failed_commands_error_keeps_the_end_of_its_output() -> None:
    code, tail = run_command(["sh", "-c", "yes x | head -c 100000 >&2; exit 1"], {})
    assert code == 1
    assert len(tail) <= 2000 and set(tail.replace("\n", "")) == {"x"}
