"""An evaluation run as one self-contained HTML page (``kp eval -f html``).

Each scorer's score distribution, the pass/fail matrix of cases by scorers, and for
``anti-hallucination`` the input/output diff word by word, on :mod:`.html`'s shell with a
Content-Security-Policy. A module apart, so that ``kp score -f html`` loads no evaluation code.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Mapping
from typing import Any

from knowledgepulse.errors import Problem
from knowledgepulse.evals.compare import Comparison
from knowledgepulse.evals.results import CaseResult, EvalRun, ScorerOutcome
from knowledgepulse.reports.compare import (
    SCORER_HEAD,
    SECTIONS,
    case_row,
    counts_line,
    scorer_rows,
    section_cases,
    totals_rows,
)
from knowledgepulse.reports.evals import (
    DASH,
    ID_LIMIT,
    SCORER_COLUMNS,
    answer_lines,
    apart,
    duration,
    number,
    outcome_line,
    passed_scores,
    repeat_line,
    scorer_cells,
    shown_id,
    summary_cells,
    summary_line,
    task_failure,
    verdict_figure,
    workflow_lines,
)
from knowledgepulse.reports.html import (
    bullets,
    histogram,
    isolated,
    page,
    row_cells,
    table,
    text,
)

HTML_FAILING = 100
"""The failing (and malformed) cases the page details, each with its diagnosis and answer; the
rest are counted, with a pointer to the JSON report. 10,000 failing cases with 2,000-character
answers made a 27 MB page that a browser hardly opens."""
HTML_MATRIX_ROWS = 1000
"""The cases the pass/fail matrix shows (past it, failing ones first), and the rows of each
comparison table."""
HTML_ID_LIMIT = ID_LIMIT
"""The characters of a case id the matrix shows (the rest counted, the whole id its tooltip): a
3,000-character id made one matrix row 50 lines tall. Its failing-case section shows it whole."""
_FAILED = "✗"
_MORE = "the JSON report (kp eval -f json -o report.json) has every case"

# A change longer than this is shown whole, before and after: a word diff of it is unreadable
# and would cost quadratic time.
_DIFF_LIMIT = 5000
# A CJK character is a word of its own; otherwise words, runs of spaces, and single marks.
_TOKEN = re.compile(r"[\u3000-\u9fff\uf900-\ufaff\uff00-\uffef]|\w+|\s+|[^\w\s]")
_EVAL_STYLE = """
h1 small{font-weight:normal;color:#666}
.banner{font-size:1.2em;font-weight:bold}
.ok{color:#1b7f2a}.bad{color:#b3261e}
td.p{background:#e3f4e1}td.f{background:#fbe0e0;font-weight:bold}td.e{background:#f5e6c8}
td.m{background:#eee0f5;text-align:left}
table.matrix td,table.matrix th{text-align:center}
table.matrix td:first-child,table.matrix th:first-child{text-align:left}
section.case{border-left:4px solid #b3261e;padding-left:1em;margin:1em 0 1.5em}
section.case.malformed{border-color:#7b3fa0}
.where{color:#666;font-size:.9em}
.diff{font-family:ui-monospace,monospace;background:#f6f6f6;padding:.5em;white-space:pre-wrap}
ins{background:#c9f0d1;text-decoration:none}del{background:#f8cccc}
table.changes td,table.changes th{text-align:left}
td svg{background:#eef2f8}
"""


def to_html(run: EvalRun, comparison: Comparison | None = None) -> str:
    """The evaluation report page, with the comparison with a baseline when given."""
    title = run.suite.name or run.suite.source
    sections = [
        f"<h1>Evaluation report <small>{text(title)}</small></h1>",
        _summary(run),
        # Right after the summary: with a baseline, what regressed is the first question.
        _comparison(comparison) if comparison is not None else "",
        _scorers(run),
        _matrix(run),
        _failing(run),
        _problems(run),
    ]
    return page(f"kp eval: {title}", sections, style=_EVAL_STYLE)


def _summary(run: EvalRun) -> str:
    banner = "ok" if run.passed else "bad"
    parts = [f"<p class='banner {banner}'>{text(summary_line(run))}</p>"]
    parts.extend(f"<p class='workflow'>{text(line)}</p>" for line in workflow_lines(run))
    if run.suite.description:
        parts.append(f"<p>{text(run.suite.description)}</p>")
    parts.append(f"<p class='where'>suite {text(run.suite.source)}</p>")
    if failing := sum(not result.passed for result in run.cases):
        # With thousands of cases the details sit below a long matrix: one click to them.
        parts.append(f"<p><a href='#failing'>Go to the failing cases ({failing:,})</a></p>")
    totals = summary_cells(run)
    parts.append(table(list(totals), [[text(cell) for cell in totals.values()]]))
    return "\n".join(parts)


def _scorers(run: EvalRun) -> str:
    rows = []
    for entry in run.suite.scorers:
        outcomes = [o for r in run.cases for o in r.outcomes if o.key == entry.key]
        scores = [o.score for o in outcomes if o.score is not None]
        passed = f"{sum(o.passed for o in outcomes)} of {len(outcomes)}"
        shown = [entry.label, *scorer_cells(run, entry), passed]
        chart = histogram(scores, bins=10, bar_width=14, height=36) if scores else "no scores"
        rows.append([*(text(cell) for cell in shown), chart])
    head = ("scorer", *SCORER_COLUMNS, "passed", "score distribution 0-1")
    return "<h2>Scorers</h2>" + table(head, rows, row_headers=True)


def _more(count: int, what: str, note: str = "") -> str:
    """``… and 9,900 more failing cases, not shown here: the JSON report ...``."""
    said = f"{count:,} more {what}{'' if count == 1 else 's'}{note}"
    return f"<p class='more'>… and {text(said)}, not shown here: {_MORE}.</p>"


def _detailed(run: EvalRun) -> set[int]:
    """The indexes of the failing cases the page details (the first :data:`HTML_FAILING`)."""
    failing = (index for index, result in enumerate(run.cases) if not result.passed)
    return set(itertools.islice(failing, HTML_FAILING))


def _matrix(run: EvalRun) -> str:
    keys = [entry.key for entry in run.suite.scorers]
    detailed = _detailed(run)
    order = list(range(len(run.cases)))
    if len(order) > HTML_MATRIX_ROWS:
        # Failing cases first, so a cut matrix still shows them; each group in input order.
        order.sort(key=lambda index: run.cases[index].passed)
    rows = []
    for index in order[:HTML_MATRIX_ROWS]:
        result = run.cases[index]
        name = _name(result, HTML_ID_LIMIT)
        if name != (whole := _name(result)):
            name = f"<span title='{whole}'>{isolated(name)}</span>"
        else:
            name = isolated(name)
        if index in detailed:
            name = f"<a href='#case-{index}'>{name}</a>"
        reason = task_failure(result)
        if result.malformed:
            # With its path: "required field is missing" alone does not say which field.
            first = text(_unlocated(result.problems[0])) if result.problems else ""
            cells = [f"<td class='m' colspan='{len(keys)}'>malformed: {first}</td>"]
        elif reason is not None:
            # One cell for the case: the task's error, not the same "no score" per scorer.
            cells = [f"<td class='e' colspan='{len(keys)}'>{text(reason)}</td>"]
        else:
            outcomes = {o.key: o for o in result.outcomes}
            cells = [_cell(outcomes.get(key)) for key in keys]
        css, verdict = ("ok", "pass") if result.passed else ("bad", "fail")
        verdict_cell = f"<span class='{css}'>{verdict}</span>"
        head_cells = row_cells([name, verdict_cell, number(result.weighted_score)])
        rows.append(f"<tr>{head_cells}{''.join(cells)}</tr>")
    head = "".join(
        f"<th scope='col'>{text(key)}</th>" for key in ("case", "verdict", "weighted", *keys)
    )
    left = len(order) - HTML_MATRIX_ROWS
    return (
        "<h2>Pass/fail matrix</h2>"
        f"<p class='where'>Each cell is the score, {_FAILED} when below its threshold; hover for "
        "the threshold and margin. Failing cases link to their diagnosis.</p>"
        f"<table class='matrix'><tr>{head}</tr>"
        + "".join(rows)
        + "</table>"
        + (_more(left, "case", " (failing ones first above)") if left > 0 else "")
    )


def _cell(outcome: ScorerOutcome | None) -> str:
    if outcome is None:
        return f"<td>{DASH}</td>"
    css = "p" if outcome.passed else "e" if outcome.score is None else "f"
    # Two decimals fit a cell, unless they would show a failing 0.999 as its threshold's 1.00.
    digits = 2 if outcome.passed else apart(outcome.score, outcome.threshold, 2)
    shown = "error" if outcome.score is None else number(outcome.score, digits)
    # The mark, not the cell's colour only, says it failed: the two backgrounds are 1.09:1 apart.
    shown += "" if outcome.passed or outcome.score is None else f" {_FAILED}"
    return f"<td class='{css}' title='{text(outcome_line(outcome))}'>{shown}</td>"


def _failing(run: EvalRun) -> str:
    failing = sum(not result.passed for result in run.cases)
    if not failing:
        return "<h2>Failing cases</h2><p>none: every case passed.</p>" if run.cases else ""
    shown = [_failing_case(i, run.cases[i]) for i in sorted(_detailed(run))]
    left = failing - len(shown)
    more = [_more(left, "failing case")] if left else []
    return "\n".join([f"<h2 id='failing'>Failing cases ({failing:,})</h2>", *shown, *more])


def _unlocated(problem: Problem) -> str:
    """``pages[0].id: required field is missing``: a problem without its file and line."""
    return f"{problem.path}: {problem.message}" if problem.path else problem.message


def _name(result: CaseResult, limit: int | None = None) -> str:
    r"""The case's id as HTML on one line (a newline shown as ``\n``), or ``(no id)``.

    With ``limit``, cut to that many characters, the rest counted.
    """
    return text(shown_id(result.case_id, limit))


def _failing_case(index: int, result: CaseResult) -> str:
    name = _name(result)
    css, label = ("case malformed", "MALFORMED") if result.malformed else ("case", "FAIL")
    weighted = "" if result.malformed else f", {text(verdict_figure(result))}"
    took = f", {duration(result.duration_ms)}" if result.duration_ms is not None else ""
    parts = [
        f"<section class='{css}' id='case-{index}'>",
        f"<h3>{label} {isolated(name)}</h3>",
        f"<p class='where'>{text(result.location)}{weighted}{took}</p>",
    ]
    if (reason := task_failure(result)) is not None:
        said = f"<p class='bad task-error'>{text(reason)}: no output, so no scorer ran</p>"
        return "\n".join([*parts, said + "</section>"])
    if (repeated := repeat_line(result)) is not None:
        parts.append(f"<p class='repeat'>{text(repeated)}</p>")
    if result.description:
        parts.append(f"<p dir='auto'>{text(result.description)}</p>")
    if result.malformed:
        parts.append(bullets(str(problem) for problem in result.problems))
    for outcome in result.failing:
        parts.append(f"<h4>{text(outcome.label)}</h4><p>{text(outcome_line(outcome))}</p>")
        if outcome.diagnosis:
            parts.append(bullets(outcome.diagnosis))
        if outcome.type == "anti-hallucination" and outcome.score is not None:
            parts.append(input_output_diff(outcome.result.details))
    if passed := passed_scores(result):
        parts.append(f"<p class='where'>passed: {text(passed)}</p>")
    for label, shown in answer_lines(result):
        parts.append(
            f"<h4>{text(label)}</h4><pre class='diff answer' dir='auto'>{text(shown)}</pre>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def input_output_diff(details: Mapping[str, Any]) -> str:
    """The anti-hallucination diff as HTML: ids invented, blocks inserted, deleted and changed.

    Built from the scorer's details; an entry of an unexpected shape is skipped, never fatal.
    """
    lines = [
        f"operation {_get(item, 'operationIndex')} names {text(_get(item, 'field'))} "
        f"'{text(_get(item, 'id'))}', which is not in the input"
        for item in _items(details, "hallucinatedIds")
    ]
    for item in _items(details, "unexpectedInserts"):
        inserted, allowed = _get(item, "inserted"), _get(item, "expectedInserts")
        lines.append(
            f"page '{text(_get(item, 'pageId'))}': {text(inserted)} inserted, "
            f"the expected operations insert {text(allowed)}"
        )
        lines += [
            f"<ins>+ {isolated(text(_get(block, 'content')))}</ins>  "
            f"<span class='where'>operation {text(_get(block, 'operationIndex'))}</span>"
            for block in _items(item, "blocks")
        ]
    lines += [
        f"<del>- {isolated(text(_get(item, 'content')))}</del>  <span class='where'>page "
        f"'{text(_get(item, 'pageId'))}', block '{text(_get(item, 'blockId'))}' deleted</span>"
        for item in _items(details, "unexpectedDeletions")
    ]
    for item in _items(details, "unexpectedChanges"):
        lines.append(
            f"<span class='where'>page '{text(_get(item, 'pageId'))}', block "
            f"'{text(_get(item, 'blockId'))}' changed, and no expected update targets it:</span>"
        )
        changed = word_diff(str(_get(item, "before")), str(_get(item, "after")))
        lines.append(f"~ {isolated(changed)}")
    return "<div class='diff'>" + "\n".join(lines) + "</div>" if lines else ""


def _items(details: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = details.get(key) if isinstance(details, Mapping) else None
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _get(item: Mapping[str, Any], key: str) -> object:
    return DASH if (value := item.get(key)) is None else value


def word_diff(before: str, after: str) -> str:
    """HTML of ``before`` turned into ``after``: removed words in ``<del>``, added in ``<ins>``."""
    if len(before) + len(after) > _DIFF_LIMIT:
        return f"<del>{text(before)}</del>\n<ins>{text(after)}</ins>"
    old, new = _TOKEN.findall(before), _TOKEN.findall(after)
    parts = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            parts.append(text("".join(old[i1:i2])))
            continue
        if i2 > i1:
            parts.append(f"<del>{text(''.join(old[i1:i2]))}</del>")
        if j2 > j1:
            parts.append(f"<ins>{text(''.join(new[j1:j2]))}</ins>")
    return "".join(parts)


def _comparison(comparison: Comparison) -> str:
    base = comparison.base
    parts = [
        "<h2>Comparison with the baseline</h2>",
        f"<p class='banner {'bad' if comparison.regressed else 'ok'}'>"
        f"{text(counts_line(comparison))}</p>",
        f"<p class='where'>base {text(base.source)}; score changes of at most "
        f"{comparison.tolerance:g} count as unchanged</p>",
        table(("", "base", "new", "change"), totals_rows(comparison), row_headers=True),
    ]
    for section, heading, _ in SECTIONS:
        if cases := section_cases(comparison, section):
            rows = [_change_row(case_row(c)) for c in cases[:HTML_MATRIX_ROWS]]
            parts.append(f"<h3>{text(heading)} ({len(cases):,})</h3>")
            head = ("case", "what changed", "weighted")
            parts.append(table(head, rows, css_class="changes", row_headers=True))
            if (left := len(cases) - HTML_MATRIX_ROWS) > 0:
                parts.append(_more(left, "case"))
    rows = [[text(cell) for cell in row] for row in scorer_rows(comparison)]
    parts += ["<h3>Scorers</h3>", table(SCORER_HEAD, rows, row_headers=True)]
    return "\n".join(parts)


def _change_row(cells: list[str]) -> list[str]:
    r"""A compared case's cells as HTML, its label on one line and in its own direction.

    A line break in the label shows as ``a\nb``, as every case id on the page: a browser would
    show it as a space, another id (``a b``).
    """
    label, *rest = cells
    return [isolated(text(label, one_line=True)), *map(text, rest)]


def _problems(run: EvalRun) -> str:
    unreadable = [problem for problem in run.file_problems if not problem.warning]
    return "\n".join(
        f"<h2>{heading} ({len(problems)})</h2>" + bullets(str(problem) for problem in problems)
        for heading, problems in (("Not read in full", unreadable), ("Warnings", run.warnings))
        if problems
    )
