"""Every view shows what a failing case's workflow answered beside what was expected."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import JsonValue
from rich.console import Console

from knowledgepulse._util.text import grapheme_end
from knowledgepulse.evals import evaluate
from knowledgepulse.evals.compare import Comparison, compare_runs, same_json
from knowledgepulse.evals.report import EvalReport, parse_report
from knowledgepulse.evals.results import ERROR_LIMIT, UNSET, CaseResult, EvalRun, ScorerOutcome
from knowledgepulse.evals.runner import run_suite, summarize
from knowledgepulse.evals.scorer import ScoreResult
from knowledgepulse.evals.tasks import TaskInput
from knowledgepulse.records import Location
from knowledgepulse.reports.compare import (
    case_detail,
    comparison_to_console,
    comparison_to_json,
    comparison_to_markdown,
    counts_line,
)
from knowledgepulse.reports.evals import (
    ID_LIMIT,
    MARKDOWN_OUTPUT_LIMIT,
    OUTPUT_LIMIT,
    failing_case,
    shown_value,
    to_json,
    to_markdown,
)
from knowledgepulse.reports.evals_html import to_html
from knowledgepulse.reports.junit import to_junit
from knowledgepulse.runs.evaluation import secret_free_result
from knowledgepulse.testing import failure_message
from tests.evals.builders import make_suite
from tests.evals.test_evaluate import text_case
from tests.paths import REPO

SUITE = make_suite({"type": "content-quality", "threshold": 0.9})
CASES = [text_case("good", "alpha", "alpha"), text_case("bad", "<b>beta</b>", "alpha")]


def answered(answer: str = "") -> EvalRun:
    """The two cases answered by a task that echoes its input (plus ``answer``)."""

    def task(given: TaskInput) -> str:
        return str(given.input) + answer

    return evaluate(task, CASES, SUITE, cache_dir=None)


def console_text(result: CaseResult) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=100, color_system=None).print(*failing_case(result))
    return buffer.getvalue()


def test_the_json_report_keeps_each_cases_output_and_expected_and_reads_them_back() -> None:
    """The task's answer and the expectation are in the JSON report and load as they were."""
    run = answered()
    report = parse_report(json.loads(to_json(run)), "r.json")
    assert [case.output for case in report.cases] == ["alpha", "<b>beta</b>"]
    assert report.cases[1].expected == {"contentPatterns": ["alpha"]}
    assert report == EvalReport.of(run, "r.json")


def test_a_report_written_before_outputs_were_kept_still_loads() -> None:
    """An older report has no output or expected field: it reads them as None."""
    document = json.loads(to_json(answered()))
    for case in document["cases"]:
        del case["output"], case["expected"]
    report = parse_report(document, "old.json")
    assert [case.output for case in report.cases] == [None, None]


def test_every_view_shows_a_failing_cases_output_beside_the_expected_one() -> None:
    """Markdown, HTML (escaped), JUnit, pytest: the failing case's answer, not a passing one's."""
    run = answered()
    bad = run.cases[1]
    markdown = to_markdown(run)
    assert "output:\n\n```\n<b>beta</b>\n```" in markdown
    assert '"contentPatterns"' in markdown
    page = to_html(run)
    assert "&lt;b&gt;beta&lt;/b&gt;" in page
    assert "<b>beta</b>" not in page
    failure = ET.fromstring(to_junit(run)).find(".//testcase/failure")
    assert failure is not None
    assert "output:\n  <b>beta</b>" in (failure.text or "")
    assert "<b>beta</b>" in failure_message(bad)
    assert "output:" in console_text(bad)
    assert "alpha\n```" not in markdown  # the passing case's answer is not shown


def test_a_long_output_is_cut_in_the_views_saying_how_much_and_kept_whole_in_json() -> None:
    """A 6,000-character answer: views show their limit's worth and the count of the rest."""
    run = answered("x" * 6000)
    answer = len("<b>beta</b>") + 6000
    said = f"… ({answer - OUTPUT_LIMIT:,} more characters)"
    assert f"… ({answer - MARKDOWN_OUTPUT_LIMIT:,} more characters)" in to_markdown(run)
    assert said in to_html(run)
    assert said in to_junit(run)
    assert said in " ".join(failure_message(run.cases[1]).split())  # wrapped at 100 columns
    assert json.loads(to_json(run))["cases"][1]["output"].endswith("x" * 6000)


def test_a_task_error_is_cut_where_the_docs_say() -> None:
    """docs/evals-tasks.md tells a user a task's message is cut at 500 characters: ERROR_LIMIT."""
    docs = " ".join((REPO / "docs" / "evals-tasks.md").read_text(encoding="utf-8").split())
    assert f"its message cut at {ERROR_LIMIT} characters" in docs


def test_a_long_task_error_is_cut_in_every_view_and_kept_whole_in_json() -> None:
    """A 10,000-character exception message: ERROR_LIMIT of it in each view, the rest counted."""

    def task(given: TaskInput) -> str:
        raise ValueError("y" * 10_000)

    run = evaluate(task, CASES[:1], SUITE, cache_dir=None)
    said = f"… ({10_000 - ERROR_LIMIT:,} more characters)"
    error = ET.fromstring(to_junit(run)).find(".//testcase/error")
    assert error is not None
    message = error.get("message", "")
    at = f"(at tests/reports/test_evals_outputs.py:{task.__code__.co_firstlineno + 1}, in task)"
    assert f"{said} {at}" in message  # the line it raised at is kept whole, after the cut
    assert len(message) < ERROR_LIMIT + 100 + len(at)
    assert said in to_markdown(run)
    assert said in to_html(run)
    assert json.loads(to_json(run))["cases"][0]["task"]["error"]["message"] == "y" * 10_000


def test_junit_shows_each_control_character_of_an_answer_escaped() -> None:
    """Vertical tab, form feed, NEL and the file separator are shown as escapes, not line breaks."""
    run = answered("\x0b\x0c\x1c\x85|")
    failure = ET.fromstring(to_junit(run)).find(".//testcase/failure")
    assert failure is not None
    assert "  <b>beta</b>\\x0b\\x0c\\x1c\\x85|\n" in (failure.text or "")


def test_a_markdown_output_holding_backticks_cannot_close_its_fence() -> None:
    """An answer with a ``` run is fenced by a longer run of backticks."""
    run = answered("\n```\n# heading")
    assert "````\n<b>beta</b>\n```\n# heading\n````" in to_markdown(run)


def test_a_secret_in_an_output_is_redacted_before_any_report() -> None:
    """A workflow that echoes a key: the key is in no report (keys of objects too)."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    result = CaseResult(
        "c", Location("c.jsonl", 1, 0), output={token: [token]}, expected=f"key {token}"
    )
    cleaned = secret_free_result(result)
    assert token not in json.dumps([cleaned.output, cleaned.expected])


def test_an_answer_with_a_lone_surrogate_is_cleaned_for_the_report() -> None:
    """A task's answer no UTF-8 file can hold (``\\udc80``) is reported with U+FFFD, not a crash."""
    cleaned = secret_free_result(answered("\udc80 token").cases[1])
    assert cleaned.output == "<b>beta</b>\ufffd token"


def test_the_json_report_is_the_same_bytes_for_the_same_answers() -> None:
    """Recorded outputs (no clock involved) give the same JSON report, byte for byte."""
    recorded = [{**case, "actual": "an answer"} for case in CASES]
    first = to_json(run_suite(SUITE, recorded))
    assert first == to_json(run_suite(SUITE, recorded))
    assert '"output": "an answer"' in first


def test_compare_says_when_a_cases_output_changed() -> None:
    """Same scores, another answer: the comparison says the output changed."""
    comparison = compare_runs(answered(), answered(" gamma"))
    bad = next(case for case in comparison.cases if case.case_id == "bad")
    assert bad.output_changed
    assert "output changed" in case_detail(bad)
    assert json.loads(comparison_to_json(comparison))["cases"][1]["output_changed"] is True
    same = compare_runs(answered(), answered())
    assert not any(case.output_changed for case in same.cases)


def test_a_scorer_error_heads_the_case_instead_of_a_weighted_score() -> None:
    """One scorer raised, one scored 1.0: no view says "weighted 1.000" for the failing case."""
    suite = make_suite(
        {"type": "content-quality", "name": "ok", "threshold": 0.5},
        {"type": "content-quality", "name": "citations", "threshold": 0.5},
    )
    outcomes = (
        ScorerOutcome("ok", "content-quality", None, 1.0, 0.5, ScoreResult(1.0)),
        ScorerOutcome(
            "citations", "content-quality", None, 1.0, 0.5, ScoreResult.failed("raised KeyError")
        ),
    )
    result = CaseResult("c", Location("c.jsonl", 1, 0), outcomes)
    run = EvalRun(suite, (result,), summarize(suite, [result]))
    for view in (console_text(result), to_markdown(run), to_html(run), failure_message(result)):
        assert "weighted 1.000" not in view
        assert "citations gave no score: raised KeyError" in view


def test_a_repeated_case_shows_its_first_failing_runs_output() -> None:
    """Run 1 passes, run 2 fails: the case shows run 2's answer, each run's is in the JSON."""

    def task(given: TaskInput) -> str:
        return "alpha" if given.run == 0 else "no match"

    run = evaluate(task, [CASES[0]], SUITE, cache_dir=None, repeat=2)
    assert "output (run 2):\n\n```\nno match\n```" in to_markdown(run)
    runs = json.loads(to_json(run))["cases"][0]["runs"]
    assert [each["output"] for each in runs] == ["alpha", "no match"]


@given(text=st.text(max_size=60), limit=st.integers(1, 40))
@example(text="00\u093a", limit=2)  # a mark joined to the second 0: the cut keeps them together
def test_a_shown_value_is_whole_or_its_first_characters_and_the_count_of_the_rest(
    text: str, limit: int
) -> None:
    """Cut or not, nothing is lost silently: what is left out is counted. The cut falls between
    graphemes, at most ``limit`` characters kept."""
    shown = shown_value(text, limit)
    if len(text) <= limit:
        assert shown == text
    else:
        kept = grapheme_end(text, limit)
        assert kept <= limit
        assert shown == f"{text[:kept]}… ({len(text) - kept:,} more characters)"


def test_a_case_whose_only_change_is_its_answer_is_counted_and_listed() -> None:
    """Same verdict and scores, another answer: not plain "unchanged" in any view or count."""
    comparison = compare_runs(answered(), answered(" gamma"))
    bad = next(case for case in comparison.cases if case.case_id == "bad")
    assert [bad.change, bad.output_changed, bad.changed_scores] == ["unchanged", True, ()]
    summary = comparison.summary
    both = (summary.unchanged, summary.unchanged_output_changed, summary.output_changed)
    assert both == (2, 2, 2)  # "good" answers "alpha gamma" and still passes
    assert "2 unchanged (2 answered otherwise)" in counts_line(comparison)
    assert json.loads(comparison_to_json(comparison))["summary"]["unchanged_output_changed"] == 2
    assert "Scores held, answer changed (2)" in comparison_table_text(comparison)
    markdown = comparison_to_markdown(comparison)
    assert "<summary>Scores held, answer changed (2)</summary>" in markdown
    assert "Scores held, answer changed (2)" in to_html(answered(" gamma"), comparison)


def comparison_table_text(comparison: Comparison) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=120, color_system=None).print(comparison_to_console(comparison))
    return buffer.getvalue()


def null_answers(*answers: JsonValue) -> list[EvalRun]:
    """One run per answer of a task answering the "good" case with it."""

    def run(answer: JsonValue) -> EvalRun:
        return evaluate(lambda _: answer, [CASES[0]], SUITE, cache_dir=None)

    return [run(answer) for answer in answers]


def test_an_answer_of_null_is_in_every_report() -> None:
    """A task that answers null: the JSON says "output": null, every view shows null."""
    (run,) = null_answers(None)
    document = json.loads(to_json(run))
    assert document["cases"][0]["output"] is None
    assert parse_report(document, "r.json").cases[0].has_output
    assert "output:\n\n```\nnull\n```" in to_markdown(run)
    assert "  output:\n    null" in "\n".join(
        map(str.rstrip, console_text(run.cases[0]).splitlines())
    )
    assert "null" in (ET.fromstring(to_junit(run)).findtext(".//testcase/failure") or "")
    assert "output:\n    null" in failure_message(run.cases[0])


def test_a_case_without_an_output_or_expectation_writes_neither() -> None:
    """A case giving no expected value: no "expected" field, and no line in the views."""
    (run,) = null_answers(None)
    bare = replace(run.cases[0], expected=UNSET)
    report = EvalReport.of(replace(run, cases=(bare,)))
    assert "expected" not in report.cases[0].model_dump()
    assert not report.cases[0].has_expected
    assert "expected:" not in failure_message(bare)


def test_compare_tells_a_null_answer_from_no_answer_kept() -> None:
    """null then "alpha" changed the output; null twice did not; an older report says nothing."""
    null, text, again = null_answers(None, "alpha", None)
    assert compare_runs(null, text).cases[0].output_changed
    assert not compare_runs(null, again).cases[0].output_changed
    old = json.loads(to_json(text))
    del old["cases"][0]["output"]
    assert not compare_runs(parse_report(old, "old.json"), null).cases[0].output_changed


@given(st.sampled_from([1, 1.0, True, "1", [1], {"a": 1}]), st.sampled_from([1, True, "1"]))
def test_an_output_changes_exactly_when_its_json_text_does(a: JsonValue, b: JsonValue) -> None:
    """1 and true are other answers (Python's == says equal); key order is no change."""
    assert same_json(a, b) == (json.dumps(a) == json.dumps(b))
    assert same_json({"x": a, "y": b}, {"y": b, "x": a})


def test_a_long_case_id_is_cut_alike_in_the_terminal_markdown_and_html_headings() -> None:
    """A 3,000-character id: ID_LIMIT of it in the terminal's and Markdown's case headings, as
    in the HTML matrix, the rest counted. Before, Markdown's heading held it whole (3,000
    characters of the comment's 60,000), the terminal's cut it at 120 without a count."""
    run = answered()
    long_id = "A" * 3000
    run = replace(run, cases=(run.cases[0], replace(run.cases[1], case_id=long_id)))
    shown = "A" * ID_LIMIT + "… (2,800 more characters)"
    heading = next(line for line in to_markdown(run).splitlines() if line.startswith("#### "))
    assert heading.startswith(f"#### `{shown}` (")
    terminal = "".join(console_text(run.cases[1]).split())  # wrapped at 100 columns
    assert terminal.startswith("FAIL" + "".join(shown.split()))
    assert f"<bdi>{shown}</bdi>" in to_html(run)
    assert long_id not in to_markdown(run)


def test_a_crlf_in_an_output_is_a_line_end_in_html_and_markdown_and_escaped_on_a_terminal() -> None:
    r"""An answer written with CRLF line ends reads as lines in the page and the Markdown; the
    terminal still shows each CR (``\x0d``), where it would move the cursor. Before, the page
    and the Markdown showed ``\x0d`` at each line's end too. A lone CR stays escaped."""
    run = answered("\r\nsecond line\r\nthird\rline")
    markdown, page = to_markdown(run), to_html(run)
    for view in (markdown, page):
        assert "second line\nthird\\x0dline" in view
        assert "\\x0d\n" not in view
    assert "\\x0d" in console_text(run.cases[1]).split("third")[0]
