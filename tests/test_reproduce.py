"""``fairshare reproduce`` through the executable: ``--list``, README's generated table,
a tiny run's ``result.json``, ``figure.svg`` and ``report.html`` (parsed: every row's paper
number, source and verdict, the seeds and scale as run), and bad input (exit 2, one line)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

from fairshare.cli.reproduce import MARKDOWN_BEGIN, MARKDOWN_END, markdown_table
from fairshare.experiments.targets import TARGETS

from conftest import assert_rejected, run_fairshare

README = Path(__file__).resolve().parents[1] / "README.md"


class _ReportTables(HTMLParser):
    """The text of every table cell of a page, table by table, row by row; and its figures."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None
        self.svgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "svg":
            self.svgs += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def test_list_prints_one_target_a_line_in_four_columns() -> None:
    done = run_fairshare("reproduce", "--list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(TARGETS)
    for line, target in zip(lines, TARGETS, strict=True):
        columns = re.split(r"\s{2,}", line, maxsplit=3)
        assert columns[:3] == [target.name, target.paper, target.figure]
        assert columns[3].startswith(target.description)
        assert ("[needs " in columns[3]) == (not target.runnable)
    names = [line.split()[0] for line in lines]
    for expected in ("fair-table3", "hdrf-fig12-13", "choosy-table1", "tsf-fig9-11"):
        assert expected in names


def test_readme_table_is_the_generated_one() -> None:
    text = README.read_text(encoding="utf-8")
    begin, end = text.index(MARKDOWN_BEGIN), text.index(MARKDOWN_END) + len(MARKDOWN_END)
    assert text[begin:end] == markdown_table(TARGETS)
    done = run_fairshare("reproduce", "--list", "--markdown")
    assert done.returncode == 0, done.stderr
    assert done.stdout == markdown_table(TARGETS) + "\n"


def test_a_target_writes_its_result_and_figure(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_fairshare(
        "reproduce",
        "hdrf-fig9",
        "--scale",
        "0.05",
        "--seeds",
        "2",
        "--jobs",
        "1",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert "scale 0.05: 2 of 49 servers" in done.stdout
    document = json.loads((out / "hdrf-fig9" / "result.json").read_text())
    assert list(document) == ["target", "paper", "figure", "rows", "scale", "seeds", "setup"]
    assert document["setup"] and all(
        list(choice) == ["parameter", "value", "why", "verdicts_change"]
        for choice in document["setup"]
    )
    assert (document["target"], document["paper"], document["figure"]) == (
        "hdrf-fig9",
        "H-DRF",
        "Fig 9",
    )
    assert document["scale"] == 0.05 and document["seeds"] == 2
    rows = document["rows"]
    assert rows[0]["metric"] == "CPU share of n1,1 (all leaves active)"
    for row in rows:
        assert list(row) == [
            "metric",
            "paper",
            "ours",
            "spread",
            "verdict",
            "reason",
            "neutral",
            "tolerance",
            "source",
        ]
        assert row["verdict"] in ("reproduced", "same-direction", "inconclusive", "differs")
        assert (row["reason"] is None) == (row["verdict"] == "reproduced")
        assert row["source"].startswith("H-DRF section 5.1: '")
        assert row["tolerance"] == 0.05 and row["neutral"] is None
    # Two servers of 4 CPUs: n1,1 gets 6 of 8 CPUs, n1,2 both GPU units... of 8.
    assert rows[0]["ours"] == 0.75 and rows[0]["spread"] == 0.0
    assert rows[1]["ours"] == 1.0 and rows[1]["verdict"] == "reproduced"
    page = _ReportTables()
    page.feed((out / "hdrf-fig9" / "report.html").read_text())
    facts = dict(page.tables[0])
    assert facts["seeds"] == "2 (0 to 1)" and facts["scale"].startswith("0.05: 2 of 49 servers")
    header, *cells = page.tables[1]
    assert header == [
        "metric",
        "paper",
        "source",
        "ours",
        "tolerance",
        "neutral",
        "verdict",
        "reason",
    ]
    assert len(cells) == len(rows)
    for cell, row in zip(cells, rows, strict=True):
        shown = dict(zip(header, cell, strict=True))
        assert shown["metric"] == row["metric"] and shown["verdict"] == row["verdict"]
        assert shown["paper"] == f"{row['paper']:.4g}" and shown["source"] == row["source"]
        assert shown["reason"] == (row["reason"] or "")
    setup_header, *choices = page.tables[2]
    assert setup_header[0] == "parameter" and len(choices) == len(document["setup"])
    assert page.svgs == 1
    svg = ET.fromstring((out / "hdrf-fig9" / "figure.svg").read_text())
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    assert (out / "hdrf-fig9" / "sweep" / "results.parquet").is_file()
    # Run again: every cell is reused.
    again = run_fairshare(
        "reproduce",
        "hdrf-fig9",
        "--scale",
        "0.05",
        "--seeds",
        "2",
        "--jobs",
        "1",
        "--out",
        str(out),
    )
    assert again.returncode == 0, again.stderr
    assert "ran 0 cells (2 done before)" in again.stdout


def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cases = [
        (("reproduce", "fair-table4", "--out", str(out)), "unknown target 'fair-table4'"),
        (("reproduce", "hdrf-fig9", "--scale", "0", "--out", str(out)), "--scale"),
        (("reproduce", "hdrf-fig9", "--scale", "2", "--out", str(out)), "--scale"),
        (("reproduce", "hdrf-fig9"), "--out"),
        (("reproduce", "--out", str(out)), "TARGET"),
        (("reproduce", "--markdown"), "--markdown"),
        (("reproduce", "--list", "hdrf-fig9"), "--list"),
    ]
    for args, expected in cases:
        line = assert_rejected(run_fairshare(*args))
        assert expected in line, (args, line)
    assert not out.exists()
    foreign = tmp_path / "taken" / "hdrf-fig9"
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine")
    line = assert_rejected(
        run_fairshare("reproduce", "hdrf-fig9", "--out", str(tmp_path / "taken"))
    )
    assert "notes.txt" in line and "--out" in line
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
