"""Rendering evaluation runs: JSON, JUnit XML, Markdown and the console view."""

from __future__ import annotations

import html
import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from rich.console import Console

from knowledgepulse.evals import evaluate
from knowledgepulse.evals.cases import FileProblem, LoadedCase, MalformedCase
from knowledgepulse.evals.compare import compare_runs
from knowledgepulse.evals.report import EvalReport
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.records import Location, Problem
from knowledgepulse.reports.eval_formats import run_report
from knowledgepulse.reports.evals import (
    MARKDOWN_BUDGET,
    MARKDOWN_ROWS,
    checked_line,
    code,
    escape,
    indented_json,
    json_chunks,
    suite_table,
    suite_to_json,
    suite_to_markdown,
    summary_line,
    to_console,
    to_json,
    to_markdown,
)
from knowledgepulse.reports.junit import to_junit
from tests.evals.builders import make_case, make_suite, op, page
from tests.evals.test_evaluate import text_case

CASES_FILE = "cases.jsonl"


def build_run() -> EvalRun:
    """Three cases: one passing, one failing two scorers, one malformed."""
    suite = make_suite(
        {"type": "operation-accuracy"},
        {"type": "content-quality", "name": "content", "weight": 2},
        {"type": "anti-hallucination"},
        name="demo",
    )
    pages = [page("p1", b1="Add to Cart", b2="Your Cart | total")]
    renames = [op("update", "b1", content="Add to Basket"), op("update", "b2", content="Basket")]
    good = make_case(pages, actual=renames, expected=renames, patterns=["Basket"], case_id="good")
    bad = make_case(
        pages,
        actual=[op("update", "b2", content="Basket *now*")],
        expected=[op("update", "b1")],
        patterns=["Add to Basket"],
        case_id="bad",
    )
    problem = Problem(Location(CASES_FILE, 3, 2), "pages[0].id", "required field is missing")
    return run_suite(
        suite,
        [
            LoadedCase(good, Location(CASES_FILE, 1, 0)),
            LoadedCase(bad, Location(CASES_FILE, 2, 1)),
            MalformedCase(Location(CASES_FILE, 3, 2), (problem,), "broken"),
        ],
    )


@pytest.fixture
def run() -> EvalRun:
    """A small run with a passing, a failing and a malformed case."""
    return build_run()


# --- JSON ------------------------------------------------------------------------------------


def test_json_has_summary_and_cases_in_input_order(run: EvalRun) -> None:
    """One object: format, suite, summary (counts, rates, stats by key), file problems, cases."""
    document = json.loads(to_json(run))
    assert list(document) == ["format", "suite", "summary", "problems", "cases"]
    summary = document["summary"]
    assert {k: summary[k] for k in ("cases", "passed", "failed", "malformed")} == {
        "cases": 3,
        "passed": 1,
        "failed": 2,
        "malformed": 1,
    }
    assert summary["pass_rate"] == pytest.approx(1 / 3)
    assert list(summary["scorers"]) == ["operation-accuracy", "content", "anti-hallucination"]
    assert set(summary["scorers"]["content"]) == {"mean", "stderr", "n", "errors"}
    assert [c["id"] for c in document["cases"]] == ["good", "bad", "broken"]


def test_json_scorer_rows_have_the_documented_fields(run: EvalRun) -> None:
    """Each scorer row: type, name only when named, score, threshold, weight, verdict, margin..."""
    bad = json.loads(to_json(run))["cases"][1]
    assert (bad["passed"], bad["file"], bad["line"]) == (False, CASES_FILE, 2)
    accuracy, content, _ = bad["scorers"]
    assert list(accuracy) == [
        "type",
        "score",
        "threshold",
        "weight",
        "passed",
        "margin",
        "details",
        "error",
        "diagnosis",
    ]
    assert content["name"] == "content"
    assert (accuracy["score"], accuracy["margin"], accuracy["passed"]) == (0.0, -0.8, False)
    assert accuracy["details"]["totalExpectedOperations"] == 1
    assert accuracy["diagnosis"][0].startswith("check unmatchedOperations")


def test_json_lists_a_malformed_case_as_failed_with_its_problems(run: EvalRun) -> None:
    """A malformed case: passed false, no scorers, and its problems with file, line and path."""
    broken = json.loads(to_json(run))["cases"][2]
    assert broken["passed"] is False
    assert broken["scorers"] == []
    assert broken["weighted_score"] is None
    assert broken["error"] == [
        {
            "file": CASES_FILE,
            "line": 3,
            "index": 2,
            "path": "pages[0].id",
            "message": "required field is missing",
            "severity": "error",
        }
    ]


def test_json_is_byte_identical_across_runs() -> None:
    """The same inputs give the same bytes: no clocks, no reordering."""
    assert to_json(build_run()) == to_json(build_run())


def test_dry_run_json_is_the_resolved_suite(run: EvalRun) -> None:
    """suite_to_json gives each scorer's key, type, weight, threshold and params."""
    suite = json.loads(suite_to_json(run.suite))
    assert suite["scorers"][1] == {
        "key": "content",
        "type": "content-quality",
        "name": "content",
        "weight": 2.0,
        "threshold": 0.6,
        "params": {"ignore_case": False, "timeout_ms": 1000.0, "case_timeout_ms": 10000.0},
    }


# --- JUnit -----------------------------------------------------------------------------------


def test_junit_has_one_testsuite_and_one_testcase_per_case(run: EvalRun) -> None:
    """The XML parses; classname is the cases file and name the case id; counts add up."""
    root = ET.fromstring(to_junit(run))
    [suite] = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        (CASES_FILE, "good"),
        (CASES_FILE, "bad"),
        (CASES_FILE, "broken"),
    ]
    assert list(cases[0]) == []


def test_junit_failure_holds_every_failing_scorers_diagnosis(run: EvalRun) -> None:
    """The failure names each failing scorer; its text has all their diagnosis lines."""
    bad_result = run.cases[1]
    root = ET.fromstring(to_junit(run))
    failure = root.find("testsuite/testcase[@name='bad']/failure")
    assert failure is not None
    message, text = failure.get("message") or "", failure.text or ""
    for outcome in bad_result.failing:
        assert outcome.key in message
        for line in outcome.diagnosis:
            assert line in text
    assert len(bad_result.failing) == 3


def test_junit_malformed_case_is_an_error_with_its_problems(run: EvalRun) -> None:
    """A malformed case is <error>, not <failure>, and lists FILE:LINE: PATH: message."""
    root = ET.fromstring(to_junit(run))
    error = root.find("testsuite/testcase[@name='broken']/error")
    assert error is not None
    assert error.text == f"{CASES_FILE}:3: pages[0].id: required field is missing"


def test_junit_properties_describe_the_suite(run: EvalRun) -> None:
    """Each scorer's type, weight and threshold is a property."""
    root = ET.fromstring(to_junit(run))
    props = {p.get("name"): p.get("value") for p in root.iterfind("testsuite/properties/property")}
    assert props["scorer.content"] == "type=content-quality weight=2 threshold=0.6"


# --- Markdown --------------------------------------------------------------------------------


def test_markdown_has_a_summary_table_then_failing_then_malformed_cases(run: EvalRun) -> None:
    """Summary table first; each failing case with its failing scorers and diagnosis lines."""
    text = to_markdown(run)
    lines = text.splitlines()
    assert lines[0] == "## Evaluation: demo"
    assert lines[2] == (
        "| cases | passed | failed | malformed | pass rate | weighted mean "
        "| files not read in full | warnings |"
    )
    assert lines[4].startswith("| 3 | 1 | 2 | 1 | 33.3% |")
    assert lines[4].endswith("| 0 | 0 |")
    assert "| content (content-quality) | 2 | 0.6 |" in text
    failing_at = text.index("### Failing cases (2)\n\n1 ran and failed; 1 malformed, not run.")
    malformed_at = text.index("#### Malformed cases (1)")
    assert failing_at < text.index("#### `bad`") < malformed_at
    for outcome in run.cases[1].failing:
        assert f"- **{escape(outcome.key)}**: score" in text
        for line in outcome.diagnosis:
            assert f"  - {escape(line)}" in text
    assert "`good`" not in text


def test_markdown_counts_malformed_cases_among_the_failing_as_the_json_summary_does() -> None:
    """The failing cases' count is the summary's failed, malformed ones included, never less."""
    suite = make_suite({"type": "operation-accuracy"})
    problem = Problem(Location(CASES_FILE, 1), "id", "required field is missing")
    run = run_suite(suite, [MalformedCase(Location(CASES_FILE, n), (problem,)) for n in (1, 2)])
    text = to_markdown(run)
    assert run.summary.failed == 2
    assert f"### Failing cases ({run.summary.failed})\n\n#### Malformed cases (2)\n" in text
    assert "ran and failed" not in text


def test_markdown_cuts_long_case_sections_and_says_how_many_more() -> None:
    """Past MARKDOWN_ROWS failing (or malformed) cases a section ends with '… and N more'."""
    suite = make_suite({"type": "operation-accuracy"})
    pages = [page("p1", b1="Cart")]
    failing = make_case(pages, actual=[], expected=[op("update", "b1")])
    count = MARKDOWN_ROWS + 7
    problem = Problem(Location(CASES_FILE, 1), "id", "required field is missing")
    run = run_suite(
        suite,
        [LoadedCase(failing, Location(CASES_FILE, n)) for n in range(count)]
        + [MalformedCase(Location(CASES_FILE, n), (problem,)) for n in range(count)],
    )
    text = to_markdown(run)
    assert f"### Failing cases ({2 * count})" in text
    assert f"#### Malformed cases ({count})" in text
    assert text.count("#### `") == MARKDOWN_ROWS
    assert text.count("- (no id) at ") == MARKDOWN_ROWS
    assert text.count("… and 7 more (the JSON report has them all).") == 2


def long_answers_run(count: int) -> EvalRun:
    """``count`` failing cases, each answering 600 characters and expecting 24 long patterns."""
    patterns = [f"pattern number {n} that the answer lacks" for n in range(24)]
    cases = [text_case(f"c{n}", "an answer " * 60, *patterns) for n in range(count)]
    return evaluate(lambda given: str(given.input), cases, make_suite(*CONTENT), cache_dir=None)


CONTENT = ({"type": "content-quality"},)


def test_markdown_of_many_long_failures_fits_a_pull_request_comment() -> None:
    """50 failing cases with long answers stay within MARKDOWN_BUDGET; the rest counted."""
    run = long_answers_run(MARKDOWN_ROWS)
    text = to_markdown(run)
    shown = text.count("#### ")
    assert len(text) <= MARKDOWN_BUDGET < 65_536
    assert 0 < shown < MARKDOWN_ROWS
    assert f"… and {MARKDOWN_ROWS - shown} more (the JSON report has them all)." in text


def test_markdown_with_a_baseline_puts_the_comparison_before_the_failures_within_budget() -> None:
    """kp eval --baseline -f markdown: totals, then the regressions, then cases as fit."""
    base, new = long_answers_run(2), long_answers_run(MARKDOWN_ROWS)
    text = run_report(new, "markdown", compare_runs(base, new))
    assert isinstance(text, str)
    assert len(text) <= MARKDOWN_BUDGET
    assert text.index("## Comparison") < text.index("### Failing cases")


def test_markdown_escapes_text_from_cases() -> None:
    """Pipes, stars, dollars and angle brackets from content cannot break the Markdown."""
    assert escape("a|b *c* $5 <x>") == r"a\|b \*c\* \$5 \<x\>"


# rich renders Markdown with markdown-it-py, so it is there wherever the reports are.
GFM = MarkdownIt("commonmark").enable("table")
MENTION_OR_ISSUE = re.compile(r"(?<!\w)@[A-Za-z0-9]|#[0-9]|GH-[0-9]")


@given(st.text(st.sampled_from("ab1 @#&;|*_`<>[]()!\\-GH"), max_size=30))
def test_escaped_text_renders_as_written_and_links_no_person_or_issue(written: str) -> None:
    """Rendered, escaped text reads as written (bar zero-width spaces) and mentions nobody."""
    rendered = GFM.renderInline(f"x {escape(written)}")
    shown = html.unescape(rendered).replace("\u200b", "")
    assert shown.rstrip() == f"x {written}".rstrip()
    assert MENTION_OR_ISSUE.search(html.unescape(rendered)) is None


@given(st.text(st.sampled_from("a `\n|<"), max_size=12))
def test_inline_code_shows_any_text_as_one_code_span(written: str) -> None:
    """Backtick runs of any length, edge spaces and newlines stay inside one code span.

    Before, ``a``b`` closed its double-backtick fence early and the rest showed as text.
    """
    rendered = GFM.renderInline(code(written))
    if not written:
        assert rendered == "(empty)"
        return
    assert rendered.startswith("<code>")
    assert rendered.endswith("</code>")
    assert html.unescape(rendered[6:-7]) == written.replace("\n", "\\n")


def test_dry_run_markdown_keeps_a_param_with_a_pipe_in_its_cell() -> None:
    """A pipe in a parameter (a pattern's ``a|b``) is shown in the params cell, not a new cell."""
    suite = make_suite({"type": "response-time", "params": {"max_acceptable_ms": 5}})
    params = {"pattern": "x|y `z`"}
    entry = replace(suite.scorers[0], params=params)
    rendered = GFM.render(suite_to_markdown(replace(suite, scorers=(entry,))))
    cells = re.findall(r"<td>(.*?)</td>", rendered)
    assert html.unescape(cells[-1]) == f"<code>{json.dumps(params)}</code>"


def test_dry_run_markdown_lists_the_scorers(run: EvalRun) -> None:
    """The suite as a Markdown table, params as inline code."""
    text = suite_to_markdown(run.suite)
    assert '| content (content-quality) | 2 | 0.6 | `{"ignore_case": false' in text


# --- console ---------------------------------------------------------------------------------


def render(renderable: object) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=200, no_color=True, color_system=None).print(renderable)
    return buffer.getvalue()


def test_console_shows_failing_cases_first_then_passing_then_the_summary(run: EvalRun) -> None:
    """FAIL and MALFORMED cases with diagnosis, then the passing table, then the totals."""
    text = render(to_console(run))
    fail_at = text.index("FAIL bad")
    malformed_at = text.index("MALFORMED broken")
    passing_at = text.index("Passing cases")
    summary_at = text.index("1 of 3 cases passed (33.3%); 1 malformed")
    assert fail_at < malformed_at < passing_at < summary_at
    assert text.index("good", passing_at) > passing_at
    assert "✗ operation-accuracy  score 0.000 < threshold 0.800 (margin -0.800)" in text
    assert "check unmatchedOperations" in text


def test_dry_run_table_shows_named_entries_with_their_type(run: EvalRun) -> None:
    """The suite table names each scorer, its weight, threshold and params."""
    text = render(suite_table(run.suite))
    assert "content (content-quality)" in text
    assert '"timeout_ms": 1000.0' in text


# --- odd text, file problems and warnings ----------------------------------------------------

ODD = "[bold]x[/bold] [/oops] :100: \x1b[31m\x00\x0c\ufffe"
ODD_RAW = ODD + "\ud800"  # pydantic refuses a lone surrogate, but a malformed record keeps it


def odd_run() -> EvalRun:
    """A case whose id and problems hold markup, emoji codes, controls and a lone surrogate."""
    suite = make_suite({"type": "operation-accuracy", "name": ODD}, name=ODD)
    pages = [page("p1", b1="Cart")]
    case = make_case(pages, actual=[], expected=[op("update", "b1")], case_id=ODD)
    warning = Problem(Location(CASES_FILE, 1, 0), "id", f"used before: {ODD}", warning=True)
    problem = Problem(Location(CASES_FILE, 2, 1), "pages", f"bad {ODD_RAW}")
    unreadable = Problem(Location("broken.yaml", 7), "", f"invalid YAML: {ODD_RAW}")
    return run_suite(
        suite,
        [
            LoadedCase(case, Location(CASES_FILE, 1, 0), (warning,)),
            MalformedCase(Location(CASES_FILE, 2, 1), (problem,), ODD_RAW),
            FileProblem(unreadable),
        ],
    )


def test_junit_stays_well_formed_xml_whatever_the_cases_hold() -> None:
    """Characters XML 1.0 cannot hold are written as visible escapes, so CI can parse it."""
    root = ET.fromstring(to_junit(odd_run()))
    names = [case.get("name") for case in root.iter("testcase")]
    shown = "[bold]x[/bold] [/oops] :100: \\x1b[31m\\x00\\x0c\\ufffe"
    assert names == ["(not read in full) broken.yaml:7", shown, shown + "\ufffd"]
    assert root.get("errors") == "2"
    unreadable = root.find("testsuite/testcase/error[@type='UnreadableFile']")
    assert unreadable is not None
    assert (unreadable.text or "").startswith("broken.yaml:7: invalid YAML: ")
    warnings = root.find("testsuite/testcase/system-err")
    assert warnings is not None
    assert (warnings.text or "").startswith(f"{CASES_FILE}:1: warning: id: used before: ")


def test_json_escapes_an_unpaired_surrogate_and_keeps_every_problem() -> None:
    r"""A lone surrogate cannot be UTF-8; JSON writes it as ``\ud800`` and reads it back."""
    text = to_json(odd_run())
    text.encode("utf-8")
    document = json.loads(text)
    assert [case["id"] for case in document["cases"]] == [ODD, ODD_RAW]
    assert document["cases"][0]["warnings"][0]["severity"] == "warning"
    assert [p["file"] for p in document["problems"]] == ["broken.yaml"]
    assert (document["summary"]["unreadable_files"], document["summary"]["warnings"]) == (1, 1)


def test_json_is_the_same_text_in_pieces_and_whole(run: EvalRun) -> None:
    """The report streamed case by case is byte for byte the document it always was."""
    assert "".join(json_chunks(run)) == indented_json(EvalReport.of(run).model_dump())


def test_the_console_view_shows_markup_and_emoji_codes_as_written() -> None:
    """Even on a console with markup and emoji on, ids are data, never formatting."""
    out = io.StringIO()
    Console(file=out, width=200, markup=True, emoji=True).print(to_console(odd_run()))
    text = out.getvalue()
    assert "MALFORMED [bold]x[/bold] [/oops] :100: \\x1b[31m\\x00\\x0c\\ufffe\ufffd" in text
    assert "💯" not in text
    assert "Not read in full" in text
    assert "Warnings (1)" in text
    assert "1 file could not be read in full; 1 warning" in text


def test_markdown_lists_unreadable_files_and_warnings() -> None:
    """Both get their own section, and the summary table counts them."""
    text = to_markdown(odd_run())
    assert "### Not read in full (1)" in text
    assert "### Warnings (1)" in text
    assert text.splitlines()[4].endswith("| 1 | 1 |")
    assert "\x1b" not in text
    text.encode("utf-8")


def test_the_summary_line_counts_files_not_read_even_with_no_cases() -> None:
    """A run whose only file could not be read says so; it is not "no cases" and nothing else."""
    lost = FileProblem(Problem(Location("broken.yaml", 3), "", "invalid YAML: x"))
    run = run_suite(make_suite({"type": "operation-accuracy"}), [lost])
    assert summary_line(run) == "no cases to evaluate; 1 file could not be read in full"
    assert not run.passed


def test_the_summary_lines_write_every_count_with_thousands_separators(run: EvalRun) -> None:
    """Past a thousand cases the counts read alike: not "1000 of 2,400 cases passed"."""
    totals = {"cases": 2_400, "passed": 1_000, "malformed": 1_050, "pass_rate": 1_000 / 2_400}
    line = summary_line(replace(run, summary=run.summary.model_copy(update=totals)))
    assert line.startswith("1,000 of 2,400 cases passed (41.7%); 1,050 malformed; ")
    assert checked_line(2_400, 1_050, 0, 0) == "checked 2,400 cases: 1,050 malformed"
