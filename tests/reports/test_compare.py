"""Rendering comparisons: JSON, the console view, Markdown for a pull request, one stderr line."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from knowledgepulse.evals import load_cases, load_suite, preset, run_suite
from knowledgepulse.evals.compare import Comparison, compare_runs
from knowledgepulse.evals.report import load_report
from knowledgepulse.reports.compare import (
    case_detail,
    comparison_line,
    comparison_to_console,
    comparison_to_dict,
    comparison_to_json,
    comparison_to_markdown,
    counts_line,
    with_comparison,
)
from knowledgepulse.reports.evals import MARKDOWN_ROWS, json_chunks
from tests.evals.test_compare import timed_run
from tests.paths import REPO


def build_comparison() -> Comparison:
    """One regression, one improvement, one changed, one unchanged, one added, one removed."""
    base = timed_run({"ok": 100, "worse": 900, "better": 1900, "moved": 1200, "gone": 100})
    new = timed_run({"ok": 100, "worse": 1900, "better": 900, "moved": 1400, "fresh": 100})
    return compare_runs(base, new)


def render(comparison: Comparison) -> str:
    """The console view as plain text, 160 columns wide."""
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(comparison_to_console(comparison))
    output = console.file
    assert isinstance(output, io.StringIO)
    return output.getvalue()


def test_json_has_totals_counts_scorers_and_every_case() -> None:
    """Each case once with its change and per-scorer deltas; counts and totals on top."""
    document = json.loads(comparison_to_json(build_comparison()))
    assert list(document) == ["base", "new", "tolerance", "summary", "scorers", "cases"]
    assert document["summary"] | {"pass_rate_delta": None} == {
        "regressions": 1,
        "improvements": 1,
        "changed": 1,
        "unchanged": 1,
        "added": 1,
        "removed": 1,
        "output_changed": 3,  # worse, better, moved: their durationMs
        "unchanged_output_changed": 0,
        "pass_rate_delta": None,
        "weighted_mean_delta": document["summary"]["weighted_mean_delta"],
    }
    changes = {case["id"]: case["change"] for case in document["cases"]}
    assert changes == {
        "ok": "unchanged",
        "worse": "regressed",
        "better": "improved",
        "moved": "changed",
        "fresh": "added",
        "gone": "removed",
    }
    worse = next(case for case in document["cases"] if case["id"] == "worse")
    (score,) = worse["scores"]
    assert score["scorer"] == "response-time"
    assert (score["base"], score["new"], score["flip"]) == (1.0, pytest.approx(0.1), "regressed")
    assert score["delta"] == -0.9  # rounded to 12 decimals, not 1 - 0.09999999999999998
    assert next(c for c in document["cases"] if c["id"] == "fresh")["base"] is None


def test_with_comparison_adds_one_member_and_stays_a_report(tmp_path: Path) -> None:
    """The run's report gains 'comparison'; read back, it is still a valid baseline."""
    comparison = build_comparison()
    new = timed_run({"ok": 100, "worse": 1900, "better": 900, "moved": 1400, "fresh": 100})
    text = "".join(with_comparison(json_chunks(new), comparison))
    document = json.loads(text)
    assert list(document) == ["format", "suite", "summary", "problems", "cases", "comparison"]
    assert document["comparison"] == comparison_to_dict(comparison)
    path = tmp_path / "new.json"
    path.write_text(text, encoding="utf-8")
    assert len(load_report(path).cases) == 5


def test_console_puts_regressions_first_and_ends_with_the_totals() -> None:
    """Sections in order: regressions, improvements, changed, added, removed; then the line."""
    text = render(build_comparison())
    headings = [
        "Regressions (1)",
        "Improvements (1)",
        "Scores changed, verdict held (1)",
        "Added cases (1)",
        "Removed cases (1)",
        "Scorers",
    ]
    positions = [text.index(heading) for heading in headings]
    assert positions == sorted(positions)
    assert "response-time 1.000 → 0.100 (-0.900), pass → fail" in text
    # Means of 1, 1, 0.1, 0.8, 1 and of 1, 0.1, 1, 0.6, 1.
    assert text.rstrip().endswith("weighted mean 0.780 → 0.740")


def test_a_flip_the_threshold_made_says_the_threshold_moved() -> None:
    """A held score that fails a raised threshold names it, not a causeless pass → fail."""
    base = timed_run({"a": 1200}, threshold=0.5)  # scores 0.8
    comparison = compare_runs(base, timed_run({"a": 1200}, threshold=0.9))
    [case] = comparison.of("regressed")
    assert case_detail(case) == (
        "response-time 0.800 → 0.800 (+0.000), pass → fail (threshold 0.5 → 0.9)"
    )
    moved = compare_runs(base, timed_run({"a": 1900}, threshold=0.5))
    assert "threshold" not in case_detail(moved.of("regressed")[0])


def test_the_stderr_line_names_the_base_and_every_count() -> None:
    """One line: what it was compared against, the six counts, both pass rates."""
    line = comparison_line(build_comparison())
    assert line.startswith(
        "against base run: 1 regression, 1 improvement, 1 changed, 1 unchanged, 1 added, "
        "1 removed; pass rate 80.0% → 80.0%"
    )
    assert "\n" not in line


def test_the_counts_are_written_with_thousands_separators() -> None:
    """Every count reads alike past a thousand: not "1,200 regressions, ..., 1500 unchanged"."""
    comparison = build_comparison()
    thousands = replace(comparison.summary, regressions=1_200, unchanged=1_500, removed=2_000)
    assert counts_line(replace(comparison, summary=thousands)) == (
        "1,200 regressions, 1 improvement, 1 changed, 1,500 unchanged, 1 added, 2,000 removed"
    )


def test_the_stderr_line_says_when_no_case_id_is_in_common() -> None:
    """A baseline of other cases (a wrong artifact) compares nothing: the line says so."""
    line = comparison_line(compare_runs(timed_run({"a": 100}), timed_run({"b": 100})))
    assert line.endswith("; no case id in common: is the baseline a run of these cases?")
    assert "in common" not in comparison_line(build_comparison())


def test_markdown_shows_regressions_as_a_table_and_folds_the_rest() -> None:
    """The regression table is outside any <details>; every other section is inside one."""
    text = comparison_to_markdown(build_comparison())
    assert text.startswith("## Comparison: timed\n")
    assert "**1 regression** (passed in the base run, fail now)" in text
    regressions = text.index("### Regressions (1)")
    first_fold = text.index("<details>")
    assert regressions < first_fold
    # Its answer's durationMs changed too.
    assert "| worse | response-time 1.000 → 0.100 (-0.900), pass → fail; output changed |" in text
    for summary in ("Improvements (1)", "Added cases (1)", "Removed cases (1)", "Scorers"):
        assert f"<details>\n<summary>{summary}</summary>\n\n" in text
    assert text.count("<details>") == text.count("</details>") == 5


@pytest.mark.parametrize(
    ("names", "title"),
    [
        (("timed", "timed"), "timed"),
        (("fast", "strict"), "fast → strict"),
        ((None, "strict"), "suites/timed.yaml → strict"),
        ((None, None), "evaluation"),
    ],
)
def test_markdown_title_names_both_suites_when_they_differ(
    names: tuple[str | None, str | None], title: str
) -> None:
    """Reports of two suites are titled by both, not as if the new suite were the only one."""
    base, new = (
        replace(run, suite=replace(run.suite, name=name, source="suites/timed.yaml"))
        for run, name in zip((timed_run({"a": 100}), timed_run({"a": 1900})), names, strict=True)
    )
    text = comparison_to_markdown(compare_runs(base, new))
    assert text.startswith(f"## Comparison: {title}\n")


def test_markdown_without_regressions_says_so_plainly() -> None:
    """No bold warning when nothing regressed."""
    run = timed_run({"a": 100})
    text = comparison_to_markdown(compare_runs(run, run))
    assert "**" not in text
    assert "0 regressions, 0 improvements, 0 changed, 1 unchanged, 0 added, 0 removed." in text


def test_markdown_escapes_case_ids_so_a_table_cannot_break() -> None:
    """An id with a pipe, markup and HTML stays one table cell, shown as written."""
    weird = "a|b <script>*x*</script>"
    text = comparison_to_markdown(compare_runs(timed_run({weird: 100}), timed_run({weird: 1900})))
    assert "| a\\|b \\<script\\>\\*x\\*\\</script\\> |" in text
    assert "<script>" not in text


def test_markdown_cuts_long_tables_and_says_how_many_more() -> None:
    """Past MARKDOWN_ROWS rows a section ends with '… and N more'."""
    count = MARKDOWN_ROWS + 7
    ids = {f"case-{n}": 100.0 for n in range(count)}
    text = comparison_to_markdown(compare_runs(timed_run(ids), timed_run(dict.fromkeys(ids, 1900))))
    rows = re.findall(r"^\| case-\d+ \|", text, flags=re.MULTILINE)
    assert len(rows) == MARKDOWN_ROWS
    assert "… and 7 more (the JSON report has them all)." in text


def test_markdown_keeps_within_its_budget_showing_regressions_first() -> None:
    """A budget too small for every row cuts the later sections first, each saying how many."""
    count = 40
    ids = {f"case-{n}": 100.0 for n in range(count)}
    worse, better = dict.fromkeys(ids, 1900.0), {f"fixed-{n}": 1900.0 for n in range(count)}
    comparison = compare_runs(timed_run(ids | better), timed_run(worse | dict.fromkeys(better, 1)))
    whole = comparison_to_markdown(comparison)
    budget = len(whole) - 10
    text = comparison_to_markdown(comparison, budget)
    assert len(text) <= budget
    assert len(re.findall(r"^\| case-\d+ \|", text, flags=re.MULTILINE)) == count
    improvements = len(re.findall(r"^\| fixed-\d+ \|", text, flags=re.MULTILINE))
    assert improvements < count
    assert f"… and {count - improvements} more (the JSON report has them all)." in text


def test_a_flip_decided_by_a_scorer_one_suite_lacks_names_that_scorer() -> None:
    """A scorer added to the suite that a case fails explains its regression (it read '—')."""
    examples = Path(__file__).parents[2] / "examples" / "evals"
    cases = load_cases(examples / "after.jsonl")
    without = run_suite(preset("standard"), cases)
    with_it = run_suite(load_suite(examples / "suite.yaml"), cases)
    regressed = {
        case.label: case_detail(case) for case in compare_runs(without, with_it).of("regressed")
    }
    assert regressed["delete-outdated-notice"] == (
        "response-time absent → 0.620: new in the suite, and fails"
    )
    improved = {
        case.label: case_detail(case) for case in compare_runs(with_it, without).of("improved")
    }
    assert improved["delete-outdated-notice"] == (
        "response-time 0.620 → absent: failed, and is no longer in the suite"
    )


OLDER = REPO / "tests" / "data" / "older_kp"
EXAMPLES = REPO / "examples" / "evals"


@pytest.mark.parametrize(
    ("name", "said"), [("report-04627901.json", True), ("report-f4331a0b.json", False)]
)
def test_the_stderr_line_says_when_an_older_base_report_kept_no_answer(
    name: str, said: bool
) -> None:
    """A baseline from before reports kept answers: not 'the same answers', but not compared."""
    new = run_suite(load_suite(EXAMPLES / "suite.yaml"), load_cases(EXAMPLES / "cases.jsonl"))
    line = comparison_line(compare_runs(OLDER / name, new))
    expected = "; 4 answers not compared: the base report kept none (an older kp wrote it); "
    assert (expected in line) is said


def test_a_base_report_of_today_without_answers_says_nothing_of_them(tmp_path: Path) -> None:
    """This kp's report names its format: one with no answer (none given) is no older one."""
    new = run_suite(load_suite(EXAMPLES / "suite.yaml"), load_cases(EXAMPLES / "cases.jsonl"))
    document = json.loads("".join(json_chunks(new)))
    for case in document["cases"]:
        del case["output"]
    base = tmp_path / "base.json"
    base.write_text(json.dumps(document), encoding="utf-8")
    assert "not compared" not in comparison_line(compare_runs(base, new))
