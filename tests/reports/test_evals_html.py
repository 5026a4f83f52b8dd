"""The evaluation HTML report's content, without a browser: sections, matrix, diff, escaping."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.evals.cases import LoadedCase, MalformedCase
from knowledgepulse.evals.compare import compare_runs
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.records import Location, Problem
from knowledgepulse.reports import evals_html
from knowledgepulse.reports.evals_html import input_output_diff, to_html, word_diff
from tests.evals.builders import make_case, make_suite, op, page

FILE = "cases.jsonl"
SUITE = make_suite(
    {"type": "operation-accuracy"},
    {"type": "anti-hallucination", "weight": 2},
    {"type": "response-time", "params": {"max_acceptable_ms": 1000}},
    name="demo",
)
PAGES = [page("p1", b1="Add to Cart", b2="Your Cart | total", b3="Old notice")]


def build_run(*, hostile_id: str = "invented") -> EvalRun:
    """A passing case, one that invents, inserts, deletes and changes, one too slow, one broken."""
    rename = [op("update", "b1", content="Add to Basket")]
    good = make_case(PAGES, actual=rename, expected=rename, duration_ms=10, case_id="good")
    invented = make_case(
        PAGES,
        actual=[
            *rename,
            op("update", "b2", content="Your Basket total now"),
            op("delete", "b3"),
            op("insert", "b1", content="Free shipping!"),
            op("update", "b9", content="?"),
        ],
        expected=rename,
        duration_ms=10,
        case_id=hostile_id,
    )
    slow = make_case(PAGES, actual=rename, expected=rename, duration_ms=1500, case_id="slow")
    problem = Problem(Location(FILE, 4, 3), "pages[0].id", "required field is missing")
    return run_suite(
        SUITE,
        [
            LoadedCase(good, Location(FILE, 1, 0)),
            LoadedCase(invented, Location(FILE, 2, 1)),
            LoadedCase(slow, Location(FILE, 3, 2)),
            MalformedCase(Location(FILE, 4, 3), (problem,), "broken"),
        ],
    )


class _Tables(HTMLParser):
    """Each table's rows as (css class, text) cells, with the table's class, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[tuple[str, str]]]]] = []
        self._current: list[list[tuple[str, str]]] | None = None
        self._cell: list[str] | None = None
        self._cell_class = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table":
            self._current = []
            self.tables.append((found.get("class") or "", self._current))
        elif tag == "tr" and self._current is not None:
            self._current.append([])
        elif tag in ("td", "th"):
            self._cell, self._cell_class = [], found.get("class") or tag

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._current is not None:
            self._current[-1].append((self._cell_class, "".join(self._cell)))
            self._cell = None
        elif tag == "table":
            self._current = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables(page_text: str, css_class: str = "") -> list[list[list[tuple[str, str]]]]:
    """The page's tables of that class, parsed, in page order."""
    parser = _Tables()
    parser.feed(page_text)
    return [rows for found, rows in parser.tables if found == css_class]


def failing_section(page_text: str) -> str:
    """The page from the failing-cases heading to the next h2."""
    start = page_text.index("<h2 id='failing'>Failing cases")
    end = page_text.find("<h2>", start + 1)
    return page_text[start : end if end != -1 else None]


def test_the_page_is_one_self_contained_document() -> None:
    """No script, no link or source to fetch, only in-page anchors; a policy refuses the rest."""
    text = to_html(build_run())
    assert text.startswith("<!DOCTYPE html>")
    assert text.rstrip().endswith("</html>")
    assert "<script" not in text
    assert "://" not in text
    assert re.findall(r"\b(?:src|href)=", text) == ["href="] * len(re.findall("href='#", text))
    assert "Content-Security-Policy" in text


def test_the_summary_and_each_scorers_distribution_are_shown() -> None:
    """The summary line, and one histogram per scorer whose bars count every scored case."""
    text = to_html(build_run())
    assert "1 of 4 cases passed (25.0%); 1 malformed" in text
    scorers = tables(text)[1]  # the summary table comes first
    assert [cells[0][1] for cells in scorers[1:]] == [
        "operation-accuracy",
        "anti-hallucination",
        "response-time",
    ]
    assert text.count("<svg") == 3
    counts = [int(n) for n in re.findall(r"<title>[0-9.]+-[0-9.]+: (\d+)</title>", text)]
    assert sum(counts) == 3 * 3  # three scorers, three scored cases each


def test_the_matrix_has_a_row_per_case_and_a_coloured_cell_per_scorer() -> None:
    """pass cells 'p', failing 'f'; the malformed case spans the scorers with its problem."""
    (rows,) = tables(to_html(build_run()), "matrix")
    assert [cell[1] for cell in rows[0]] == [
        "case",
        "verdict",
        "weighted",
        "operation-accuracy",
        "anti-hallucination",
        "response-time",
    ]
    body = {row[0][1]: row for row in rows[1:]}
    assert list(body) == ["good", "invented", "slow", "broken"]
    assert [cls for cls, _ in body["good"][3:]] == ["p", "p", "p"]
    assert [cls for cls, _ in body["invented"][3:]] == ["p", "f", "p"]
    assert body["invented"][4][1] == "0.00 ✗"
    assert [cls for cls, _ in body["slow"][3:]] == ["p", "p", "f"]
    # The field is named: "required field is missing" alone would not say which.
    assert body["broken"][3] == ("m", "malformed: pages[0].id: required field is missing")


def test_every_failing_case_is_listed_with_its_diagnosis_and_nothing_else() -> None:
    """Failing and malformed cases have sections (linked from the matrix); the passing one not."""
    text = to_html(build_run())
    section = failing_section(text)
    assert "<h2 id='failing'>Failing cases (3)</h2>" in section
    for index, name in ((1, "invented"), (2, "slow"), (3, "broken")):
        assert f"id='case-{index}'" in section
        assert f"<a href='#case-{index}'><bdi>{name}</bdi></a>" in text
    assert "good" not in section
    assert "took 1500 ms, 500 ms (50%) over max_acceptable_ms 1000" in section
    assert "cases.jsonl:4: pages[0].id: required field is missing" in section


def test_anti_hallucination_failures_show_the_input_output_diff() -> None:
    """Invented id, inserted and deleted blocks, and a changed block word by word."""
    section = failing_section(to_html(build_run()))
    diff = section[section.index("<div class='diff'>") :]
    diff = diff[: diff.index("</div>")]
    assert diff.split("\n") == [
        "<div class='diff'>operation 4 names targetBlockId 'b9', which is not in the input",
        "page 'p1': 1 inserted, the expected operations insert 0",
        "<ins>+ <bdi>Free shipping!</bdi></ins>  <span class='where'>operation 3</span>",
        "<del>- <bdi>Old notice</bdi></del>  "
        "<span class='where'>page 'p1', block 'b3' deleted</span>",
        "<span class='where'>page 'p1', block 'b2' changed, and no expected update targets "
        "it:</span>",
        "~ <bdi>Your <del>Cart |</del><ins>Basket</ins> total<ins> now</ins></bdi>",
    ]


@pytest.mark.parametrize(
    "hostile", ["<script>alert(1)</script>", "x' onmouseover='alert(1)", 'a"><img src=x>']
)
def test_case_ids_are_escaped_everywhere(hostile: str) -> None:
    """An id that is markup is shown as text, in the matrix, the sections and the tooltips."""
    text = to_html(build_run(hostile_id=hostile))
    assert hostile not in text
    assert html.escape(hostile, quote=True) in text
    assert "<script" not in text
    assert "<img" not in text


def test_the_comparison_section_appears_only_with_a_baseline() -> None:
    """With a baseline: its counts, the regression, and the totals on both sides."""
    run = build_run()
    assert "Comparison with the baseline" not in to_html(run)
    rename = [op("update", "b1", content="Add to Basket")]
    before = make_case(PAGES, actual=rename, expected=rename, duration_ms=10, case_id="slow")
    base = run_suite(SUITE, [before])
    text = to_html(run, compare_runs(base, run))
    assert "Comparison with the baseline" in text
    assert "1 regression, 0 improvements, 0 changed, 0 unchanged, 3 added, 0 removed" in text
    changes = tables(text, "changes")[0]
    assert changes[1][0][1] == "slow"
    assert "response-time 1.000 → 0.500 (-0.500), pass → fail" in changes[1][1][1]


def test_the_diff_skips_details_of_an_unexpected_shape() -> None:
    """A plugin's look-alike details never break the page: what does not fit is left out."""
    assert input_output_diff({"unexpectedInserts": "three", "unexpectedDeletions": [1]}) == ""
    assert "<del>- <bdi>x</bdi></del>" in input_output_diff(
        {"unexpectedDeletions": [{"content": "x"}]}
    )


_WORDS = st.text(alphabet="ab c.要約\n<&", max_size=30)


def _side(diff: str, keep: str, drop: str) -> str:
    text = re.sub(f"<{drop}>.*?</{drop}>", "", diff, flags=re.DOTALL)
    return html.unescape(text.replace(f"<{keep}>", "").replace(f"</{keep}>", ""))


@given(before=_WORDS, after=_WORDS)
def test_a_word_diff_holds_both_texts(before: str, after: str) -> None:
    """Dropping the insertions gives the text before; dropping the deletions, the text after."""
    diff = word_diff(before, after)
    assert _side(diff, keep="del", drop="ins") == before
    assert _side(diff, keep="ins", drop="del") == after


def test_a_long_change_is_shown_whole_not_diffed() -> None:
    """Past the limit the before and after are shown as they are."""
    before, after = "a " * 3000, "b " * 3000
    assert word_diff(before, after) == f"<del>{before}</del>\n<ins>{after}</ins>"


def test_a_page_of_many_failing_cases_details_the_first_and_counts_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the caps: failing cases first in the matrix, each cut said with a pointer to JSON."""
    monkeypatch.setattr(evals_html, "HTML_FAILING", 2)
    monkeypatch.setattr(evals_html, "HTML_MATRIX_ROWS", 3)
    text = to_html(build_run())
    section = failing_section(text)
    assert "<h2 id='failing'>Failing cases (3)</h2>" in section
    assert [f"id='case-{i}'" in section for i in (1, 2, 3)] == [True, True, False]
    assert (
        "… and 1 more failing case, not shown here: the JSON report (kp eval -f json -o "
        "report.json) has every case."
    ) in section
    (rows,) = tables(text, "matrix")
    assert [row[0][1] for row in rows[1:]] == ["invented", "slow", "broken"]  # "good" cut
    assert "… and 1 more case (failing ones first above), not shown here" in text
    assert "<a href='#case-3'>" not in text  # no link to a section the page lacks
    assert "<a href='#case-2'><bdi>slow</bdi></a>" in text


def test_the_comparison_tables_are_cut_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A comparison section past the cap lists its first rows and counts the rest."""
    monkeypatch.setattr(evals_html, "HTML_MATRIX_ROWS", 1)
    run = build_run()
    empty = replace(run, cases=())
    text = to_html(run, compare_runs(empty, run))
    assert "Added cases (4)" in text
    assert "… and 3 more cases, not shown here" in text


class _Headers(HTMLParser):
    """Each header cell's scope, and each row's first cell's tag, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes: list[str | None] = []
        self.first_cells: list[str] = []
        self._row_open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "th":
            self.scopes.append(dict(attrs).get("scope"))
        if tag == "tr":
            self._row_open = True
        elif tag in ("td", "th") and self._row_open:
            self.first_cells.append(tag)
            self._row_open = False


def test_every_header_cell_says_its_scope_and_each_row_is_named_by_a_header() -> None:
    """Screen readers name a cell by its column and its row (the case, the scorer).

    Before, no header said its scope and a case's id was a plain cell.
    """
    run = build_run()
    rename = [op("update", "b1", content="Add to Basket")]
    base = run_suite(SUITE, [make_case(PAGES, actual=rename, expected=rename, case_id="slow")])
    parser = _Headers()
    parser.feed(to_html(run, compare_runs(base, run)))
    assert parser.scopes
    assert set(parser.scopes) == {"col", "row"}
    matrix = tables(to_html(run), "matrix")[0]
    assert all(row[0][0] == "th" for row in matrix)
    # Every row but the summary table's one line of counts opens with a header cell.
    assert parser.first_cells.count("td") == 1


def test_a_failing_score_is_marked_in_text_not_by_colour_alone() -> None:
    """A failing matrix cell carries a mark the legend explains; passing ones carry none.

    The pass and fail backgrounds are 1.09:1 apart (WCAG asks 3:1 for what tells states apart).
    """
    text = to_html(build_run())
    (rows,) = tables(text, "matrix")
    cells = [cell for row in rows[1:] for cell in row[3:] if cell[0] in ("p", "f")]
    assert {css for css, shown in cells if shown.endswith(" ✗")} == {"f"}
    assert any(css == "f" for css, _ in cells)
    assert "✗ when below its threshold" in text


def test_the_summary_links_to_the_failing_cases() -> None:
    """With thousands of cases the details lie below a long matrix: the summary links to them."""
    text = to_html(build_run())
    link = "<a href='#failing'>Go to the failing cases (3)</a>"
    assert text.index(link) < text.index("<h2>Pass/fail matrix</h2>")
    assert "<h2 id='failing'>" in text
    passing = replace(build_run(), cases=build_run().cases[:1])
    assert "#failing" not in to_html(passing)


def test_a_case_id_with_a_newline_is_shown_on_one_line() -> None:
    """An id 'a\\nb' reads 'a\\nb' in the matrix and its section; before, 'a b', another id."""
    text = to_html(build_run(hostile_id="a\nb"))
    assert "<a href='#case-1'><bdi>a\\nb</bdi></a>" in text
    assert "<h3>FAIL <bdi>a\\nb</bdi></h3>" in text


def test_a_long_case_id_is_cut_in_the_matrix_and_whole_in_its_section() -> None:
    """The matrix shows 200 characters and counts the rest; the tooltip and the section have all.

    Before, a 3,000-character id made its matrix row 50 lines tall at 800 px.
    """
    long_id = "A" * 3000
    text = to_html(build_run(hostile_id=long_id))
    (rows,) = tables(text, "matrix")
    shown = next(row[0][1] for row in rows if row[0][1].startswith("A"))
    assert shown == "A" * evals_html.HTML_ID_LIMIT + "… (2,800 more characters)"
    assert f"<span title='{long_id}'>" in text
    assert f"<h3>FAIL <bdi>{long_id}</bdi></h3>" in text


def test_a_line_break_in_a_compared_case_id_is_shown_escaped() -> None:
    r"""A compared case ``a\nb`` reads ``a\nb`` in the comparison table, as everywhere in the
    page; before, the browser showed the line break as a space, so the id read ``a b``."""
    run = build_run(hostile_id="a\nb")
    text = to_html(run, compare_runs(run_suite(SUITE, []), run))
    labels = [row[0][1] for table in tables(text, "changes") for row in table[1:]]
    assert "a\\nb" in labels
    assert not any("\n" in label for label in labels)


class _Directions(HTMLParser):
    """Each text of the page, with whether an element around it sets its own direction."""

    VOID = frozenset({"br", "hr", "img", "input", "link", "meta", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[bool] = []
        self.texts: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.open.append(tag == "bdi" or dict(attrs).get("dir") == "auto")

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        self.texts.append((data, any(self.open)))


def test_right_to_left_user_text_is_shown_in_its_own_direction() -> None:
    """An Arabic case id and output, in the matrix, the failing case, its answer and the
    comparison, each sit in an element that sets its own direction (``<bdi>``, ``dir=auto``);
    before, none did, so they read in the page's left-to-right order beside their neighbours."""
    arabic_id, arabic_output = "حالة-1", "أضف إلى السلة"
    rename = [op("update", "b1", content="Add to Basket")]
    said = [op("update", "b1", content=arabic_output), op("insert", "b1", content=arabic_output)]
    failing = make_case(PAGES, actual=said, expected=rename, duration_ms=10, case_id=arabic_id)
    run = run_suite(SUITE, [failing])
    parser = _Directions()
    parser.feed(to_html(run, compare_runs(run_suite(SUITE, []), run)))
    right_to_left = [
        (data, isolated) for data, isolated in parser.texts if "ح" in data or "أ" in data
    ]
    assert len(right_to_left) >= 4  # the matrix, the case's heading, its answer, the comparison
    assert all(isolated for _, isolated in right_to_left), right_to_left
