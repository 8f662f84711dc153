"""Hostile configurations given to ``fairshare import`` (SPEC sections 4 and 8.1): an XML
external entity, an entity expansion bomb, a file over the 64 MiB limit, elements nested
without end, a Kueue cohort cycle, and a queue named twice in each format. Each is refused
through the installed executable with exit 2 and one ``error:`` line, and nothing outside the
file is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairshare.workload.limits import MAX_SCENARIO_BYTES

from conftest import assert_rejected, run_fairshare

FORMATS = ("yarn-fair", "yarn-capacity", "kueue", "slurm")
SECRET = "TOP-SECRET-CONTENT-4711"


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET + "\n")
    return path


@pytest.mark.parametrize("fmt", ["yarn-fair", "yarn-capacity"])
def test_external_entity_is_not_read(tmp_path: Path, fmt: str) -> None:
    """XXE: an entity naming a local file (``file://``) is refused with the DTD; the file's
    content appears nowhere."""
    secret = _secret(tmp_path)
    top = "allocations" if fmt == "yarn-fair" else "configuration"
    path = tmp_path / "xxe.xml"
    path.write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE {top} [\n'
        f'  <!ENTITY xxe SYSTEM "file://{secret}">\n]>\n'
        f"<{top}><queue name='&xxe;'/><property><name>&xxe;</name></property></{top}>\n"
    )
    done = run_fairshare("import", fmt, str(path))
    line = assert_rejected(done)
    assert line.startswith(f"error: {path}: line 2: a document type declaration (DTD)")
    assert SECRET not in done.stderr + done.stdout


@pytest.mark.parametrize("fmt", ["yarn-fair", "yarn-capacity"])
def test_external_dtd_is_not_fetched(tmp_path: Path, fmt: str) -> None:
    """An external DTD (``SYSTEM "file://..."``) is refused before anything is resolved."""
    secret = _secret(tmp_path)
    path = tmp_path / "dtd.xml"
    path.write_text(f'<!DOCTYPE allocations SYSTEM "file://{secret}">\n<allocations/>\n')
    done = run_fairshare("import", fmt, str(path))
    assert "DTD" in assert_rejected(done)
    assert SECRET not in done.stderr


@pytest.mark.parametrize("fmt", ["yarn-fair", "yarn-capacity"])
def test_billion_laughs(tmp_path: Path, fmt: str) -> None:
    """The entity expansion bomb (10^9 "lol"s from 1 KB) is refused, nothing expanded."""
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10)
    ]
    path = tmp_path / "bomb.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n' + "\n".join(entities) + "\n]>\n"
        "<allocations><queue name='&lol9;'/></allocations>\n"
    )
    line = assert_rejected(run_fairshare("import", fmt, str(path)))
    assert line == (
        f"error: {path}: line 2: a document type declaration (DTD) is not allowed: entities "
        "and external references are refused; remove the <!DOCTYPE ...>"
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_over_64_mib(tmp_path: Path, fmt: str) -> None:
    """A file past the 64 MiB limit is refused before it is read whole (sparse: no disk)."""
    path = tmp_path / "huge.txt"
    with path.open("wb") as stream:
        stream.truncate(MAX_SCENARIO_BYTES + 1)
    line = assert_rejected(run_fairshare("import", fmt, str(path)))
    assert line == f"error: {path}: file: is larger than 64 MiB (the limit for a scenario file)"


@pytest.mark.parametrize("fmt", ["yarn-fair", "yarn-capacity"])
def test_nesting_without_end(tmp_path: Path, fmt: str) -> None:
    """Elements nested 100,000 deep are refused by the depth limit (no recursion)."""
    path = tmp_path / "deep.xml"
    path.write_text("<allocations>" + "<queue name='q'>" * 100_000 + "</queue>" * 100_000
                    + "</allocations>")  # fmt: skip
    line = assert_rejected(run_fairshare("import", fmt, str(path)))
    assert "nested more than 100 levels deep" in line


@pytest.mark.parametrize(
    ("fmt", "name", "text", "expected"),
    [
        ("yarn-fair", "fair-scheduler.xml",
         "<allocations><queue name='a'/><pool name='a'/></allocations>",
         "allocations/queue[root.a]: queue 'root.a' is defined twice; name it once"),
        ("yarn-capacity", "capacity-scheduler.xml",
         "<configuration><property><name>yarn.scheduler.capacity.root.queues</name>"
         "<value>a,b,a</value></property></configuration>",
         "configuration/property[yarn.scheduler.capacity.root.queues]: queue root.a is listed "
         "twice; list it once"),
        ("kueue", "kueue.yaml",
         "kind: ClusterQueue\nmetadata: {name: cq}\n---\n"
         "kind: ClusterQueue\nmetadata: {name: cq}\n",
         "document 2 (ClusterQueue 'cq') metadata.name: ClusterQueue 'cq' is defined twice"),
        ("slurm", "assoc.txt",
         "Cluster|Account|User|Share|ParentName\nc|root||1|\nc|a||1|root\nc|a||2|root\n",
         "line 4: Account: account 'a' is listed twice (first at line 3); list each account once"),
    ],
)  # fmt: skip
def test_queue_named_twice(tmp_path: Path, fmt: str, name: str, text: str, expected: str) -> None:
    """The same queue twice (a YARN queue, a Kueue ClusterQueue, a Slurm account)."""
    path = tmp_path / name
    path.write_text(text)
    line = assert_rejected(run_fairshare("import", fmt, str(path)))
    assert line == f"error: {path}: {expected}"


def test_kueue_cohort_cycle(tmp_path: Path) -> None:
    """Cohorts whose parents form a cycle (Kueue marks them inactive): refused, the cycle
    named."""
    path = tmp_path / "cycle.yaml"
    path.write_text(
        "kind: Cohort\nmetadata: {name: a}\nspec: {parentName: b}\n---\n"
        "kind: Cohort\nmetadata: {name: b}\nspec: {parentName: a}\n"
    )
    line = assert_rejected(run_fairshare("import", "kueue", str(path)))
    assert "cohorts form a cycle: a -> b -> a" in line
