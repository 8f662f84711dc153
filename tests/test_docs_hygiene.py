"""The documentation's own rules: the user pages are a guide, not a development log (issue 27,
item 8), and DEVELOPERS.md stays a short guide.

The rule for ``docs/`` (DEVELOPERS.md, "Documentation", states it for authors). Outside fenced
code blocks (examples of input and output are data, not history), a page has:

1. no date (``YYYY-MM-DD``) except right after ``Measured on`` on the same line, the caption
   that says when a figure was measured (``docs/performance.md``, ``docs/live.md``);
2. no session narrative: the words "session", "previously", "formerly", "this commit", and
   "used to" unless passive ("is used to", "are used to", "be used to");
3. no commit id (7 to 40 hexadecimal digits, at least one a letter and one a digit) and no
   reference to the project's issues ("issue 18", "the issue's").

A dated history of measurements goes to ``benchmarks/HISTORY.md``, older narrative to git.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DEVELOPERS = ROOT / "DEVELOPERS.md"
GUIDE_LIMIT = 15_000
"""DEVELOPERS.md's size in bytes (``wc -c``) at most: a guide a newcomer reads in one sitting."""

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_CAPTION = re.compile(r"\bMeasured on $", re.IGNORECASE)
_NARRATIVE = re.compile(
    r"\bsessions?\b|\bpreviously\b|\bformerly\b|\bthis commit\b"
    r"|(?<!\bis )(?<!\bare )(?<!\bbe )\bused to\b",
    re.IGNORECASE,
)
_COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
_ISSUE = re.compile(r"\bissues?\s+#?\d+|\bthe issue's\b", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")


def log_lines(text: str) -> list[tuple[int, str]]:
    """The lines of a page that break the rule, as (line number, why).

    Parameters
    ----------
    text : str
        A Markdown page.

    Returns
    -------
    list of (int, str)
        One entry per offending line, numbered from 1, fenced code blocks skipped.
    """
    found: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for date in _DATE.finditer(line):
            if not _CAPTION.search(line[: date.start()]):
                found.append((number, f"date {date.group()} outside a 'Measured on' caption"))
        for pattern, why in (
            (_NARRATIVE, "session narrative"),
            (_COMMIT, "commit id"),
            (_ISSUE, "issue reference"),
        ):
            match = pattern.search(line)
            if match:
                found.append((number, f"{why}: {match.group()!r}"))
    return found


def test_no_docs_page_keeps_a_development_log() -> None:
    pages = sorted(DOCS.rglob("*.md"))
    assert len(pages) >= 10  # the site's pages, so that a moved docs/ is noticed
    offenders = [
        f"{page.relative_to(ROOT)}:{number}: {why}"
        for page in pages
        for number, why in log_lines(page.read_text(encoding="utf-8"))
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("### Gangs (2026-11-26)", "date 2026-11-26 outside a 'Measured on' caption"),
        ("the night of 2026-11-22/23 the machine", "date 2026-11-22 outside"),
        ("Against the start of this session, interleaved", "session narrative: 'session'"),
        ("the reclaim used to kill 4 of its 12 tasks", "session narrative: 'used to'"),
        ("Previously the timeline was summed five times", "session narrative: 'Previously'"),
        ("phases, CPU s (before: 0e7fc07)", "commit id: '0e7fc07'"),
        ("Issue 18's example", "issue reference: 'Issue 18'"),
        ("(the issue's target: 0.5)", 'issue reference: "the issue\'s"'),
    ],
)
def test_the_rule_flags_development_log_lines(line: str, why: str) -> None:
    found = log_lines(line)
    assert len(found) == 1
    assert found[0][0] == 1
    assert found[0][1].startswith(why)


@pytest.mark.parametrize(
    "line",
    [
        "Measured on 2026-11-26, compiled kernel, `--repeat 3`:",
        "rounds. Measured on 2026-11-25 on the shared 2-core machine (400 tasks,",
        "Each task is used to draw a duration; the seeds are used to place replicas.",
        "the paper's text is `../shared/papers/001_d148d420ded181dd.txt`",
        "1,000 jobs x 200 tasks at 129k placements per CPU second (deadline 1000000)",
        "the test's version of #3779 kills at most 8 tasks",
    ],
)
def test_the_rule_passes_captions_and_ordinary_prose(line: str) -> None:
    assert log_lines(line) == []


def test_the_rule_skips_fenced_examples_but_not_what_follows_them() -> None:
    page = "```text\n2011-05-01 00:00:01 job 7 submitted\n```\nsince 2026-11-24 it is faster\n"
    assert log_lines(page) == [(4, "date 2026-11-24 outside a 'Measured on' caption")]


def test_developers_guide_is_short() -> None:
    size = len(DEVELOPERS.read_bytes())
    assert 0 < size <= GUIDE_LIMIT, f"DEVELOPERS.md is {size:,} bytes, the limit {GUIDE_LIMIT:,}"


def test_developers_guide_has_the_sections_the_issue_asks_for() -> None:
    headings = {
        line.strip()
        for line in DEVELOPERS.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }
    assert {
        "## The online core",
        "## Recipes",
        "### A new policy",
        "### A new filter",
        "### A new trace reader",
        "### A new report figure",
        "### Proving decisions unchanged",
    } <= headings
