"""Comparisons of two evaluation runs as JSON, a rich console view and Markdown.

Every view puts regressions first. The Markdown is a pull-request comment: the regressions as a
table, the rest folded into ``<details>``, each table cut at :data:`MARKDOWN_ROWS` rows and all
of them to :data:`MARKDOWN_BUDGET` characters, so the comment stays within what a code host
accepts (the JSON report has every case).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import Any, Literal, get_args

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from knowledgepulse._util.text import counted, printable
from knowledgepulse.evals.compare import (
    CaseChange,
    CaseComparison,
    Comparison,
    Gate,
    ScoreDelta,
    ScorerChange,
    Standing,
    difference,
)
from knowledgepulse.evals.report import EvalReport, ReportCase, ReportScore, ReportScorer
from knowledgepulse.evals.results import RunSummary
from knowledgepulse.reports.evals import (
    DASH,
    MARKDOWN_BUDGET,
    MarkdownRoom,
    apart,
    escape,
    indented_json,
    markdown_more,
    markdown_row,
    markdown_table,
    mean_said,
    number,
    percent,
    short,
    titled_table,
)

ARROW = "→"
STANDINGS: tuple[Standing, ...] = get_args(Standing)
"""The standings in the order a gate line names them (``Standing``'s own)."""
Section = CaseChange | Literal["answered"]
"""A change, or ``answered``: the unchanged cases whose answer changed."""
# Sections in the order every view shows them, with their headings and console styles.
SECTIONS: tuple[tuple[Section, str, str], ...] = (
    ("regressed", "Regressions", "bold red"),
    ("improved", "Improvements", "bold green"),
    ("changed", "Scores changed, verdict held", "bold yellow"),
    ("answered", "Scores held, answer changed", "yellow"),
    ("added", "Added cases", "bold cyan"),
    ("removed", "Removed cases", "bold magenta"),
)


def section_cases(comparison: Comparison, section: Section) -> tuple[CaseComparison, ...]:
    """The cases one of :data:`SECTIONS` lists, in order."""
    if section == "answered":
        return comparison.answered_otherwise()
    return comparison.of(section)


SCORER_HEAD = ("scorer", "base mean", "new mean", "change", "suite change")


def signed(delta: float | None, digits: int = 3) -> str:
    """``+0.100``, ``-0.250``, or a dash when there is no delta."""
    return DASH if delta is None else f"{delta:+.{digits}f}"


def _score(score: ReportScore | None, digits: int = 3) -> str:
    if score is None:
        return "absent"
    return "no score" if score.score is None else number(score.score, digits)


def _value(score: ReportScore | None) -> float | None:
    return None if score is None else score.score


def score_change(delta: ScoreDelta) -> str:
    """``anti-hallucination 1.000 → 0.000 (-1.000), pass → fail``; errors say so.

    A flip where the suite moved the threshold says so: ``pass → fail (threshold 0.5 → 0.9)``.

    Scores that differ show enough decimals to differ (``1.0000 → 0.9999``), never ``1.000 →
    1.000, pass → fail``.
    """
    digits = apart(_value(delta.base), _value(delta.new))
    text = f"{delta.key} {_score(delta.base, digits)} {ARROW} {_score(delta.new, digits)}"
    if delta.delta is not None:
        text += f" ({signed(delta.delta, digits)})"
    if delta.flip is not None and delta.base is not None and delta.new is not None:
        text += f", {_verdict(delta.base.passed)} {ARROW} {_verdict(delta.new.passed)}"
        if delta.base.threshold != delta.new.threshold:
            # A flip on a held score is the threshold's doing: said here, not only folded away
            # in the scorers' table, or ``0.000 → 0.000, pass → fail`` has no cause.
            before, after = delta.base.threshold, delta.new.threshold
            text += f" (threshold {before:g} {ARROW} {after:g})"
    if delta.new is not None and delta.new.error is not None:
        text += f": {delta.new.error}"
    return text


def case_detail(case: CaseComparison) -> str:
    """What moved in a case: each changed score, or the verdict of an added or removed case."""
    if case.change in ("added", "removed"):
        present = case.new if case.new is not None else case.base
        assert present is not None  # one side is always there
        return _verdict_of(present)
    if case.base is not None and case.new is not None and case.new.malformed != case.base.malformed:
        return "now malformed" if case.new.malformed else "no longer malformed"
    changes = [score_change(score) for score in case.changed_scores]
    changes += _one_sided_failures(case) if case.change != "changed" else _one_sided(case)
    if case.output_changed:
        changes.append("output changed")
    if not changes and case.change == "changed":
        # The shared scores held and no scorer came or went: only the weights can have moved it.
        return "scores held; the weighted score moved with the suite's weights"
    return "; ".join(changes) or DASH


def _one_sided(case: CaseComparison) -> list[str]:
    """The scores of scorers only one suite has, which move a case's weighted score alone."""
    shared = {score.key for score in case.scores}
    said = []
    if case.base is not None:
        said += [
            f"{score.key} {_score(score)} {ARROW} absent: no longer in the suite"
            for score in case.base.scorers
            if score.key not in shared
        ]
    if case.new is not None:
        said += [
            f"{score.key} absent {ARROW} {_score(score)}: new in the suite"
            for score in case.new.scorers
            if score.key not in shared
        ]
    return said


def _one_sided_failures(case: CaseComparison) -> list[str]:
    """Why a case flipped when a suite entry only one run has decided it: that scorer's failure.

    ``pass → fail`` because the new suite adds a scorer the case fails (or the reverse, after one
    was removed) moves no score both runs have; without this the flip would read as a dash.
    """
    failing = case.new if case.change == "regressed" else case.base
    if case.change not in ("regressed", "improved") or failing is None:
        return []
    shared = {score.key for score in case.scores}
    if case.change == "regressed":
        said = "{key} absent {arrow} {score}: new in the suite, and fails"
    else:
        said = "{key} {score} {arrow} absent: failed, and is no longer in the suite"
    return [
        said.format(key=score.key, arrow=ARROW, score=_score(score))
        for score in failing.scorers
        if not score.passed and score.key not in shared
    ]


def _verdict(passed: bool) -> str:
    return "pass" if passed else "fail"


def _verdict_of(case: ReportCase) -> str:
    if case.malformed:
        return "malformed"
    failing = [score.key for score in case.scorers if not score.passed]
    return "pass" if case.passed else "fail: " + ", ".join(failing)


def counts_line(comparison: Comparison) -> str:
    """``1 regression, 2 improvements, 0 changed, 5 unchanged, 1 added, 0 removed``.

    Unchanged cases whose answer changed are counted beside them: ``5 unchanged (2 answered
    otherwise)``.
    """
    s = comparison.summary
    counts = [counted(s.regressions, "regression"), counted(s.improvements, "improvement")]
    answered = s.unchanged_output_changed
    held = f"{s.unchanged:,} unchanged" + (
        f" ({answered:,} answered otherwise)" if answered else ""
    )
    rest = [f"{s.changed:,} changed", held, f"{s.added:,} added", f"{s.removed:,} removed"]
    return ", ".join([*counts, *rest])


def baseline_warning(comparison: Comparison) -> str | None:
    """The warning for a base run with no passing case, which no case can regress against.

    A baseline recorded while the task or a service it calls was down fails every case: a
    gate on regressions would then pass whatever the new run does.
    """
    base = comparison.base
    if base.summary.passed:
        return None
    return (
        f"WARNING: the base run {base.source} has no passing case, so no case can regress "
        "against it and a gate on regressions passes every case (was it recorded while the "
        "task or a service it calls was down?): record it again from a run that passes"
    )


def comparison_line(comparison: Comparison) -> str:
    """One line for stderr: the counts, then the pass rate and weighted mean on each side.

    It starts with :func:`baseline_warning` when the base run has no passing case. A side with
    cases left out of its mean says so (:func:`~knowledgepulse.reports.evals.mean_said`), and a
    base report that kept no answer says they were not compared (:func:`answers_unkept`).
    """
    base, new = comparison.base, comparison.new
    before, after = base.summary, new.summary
    warning = baseline_warning(comparison)
    parts = [
        *([warning] if warning else []),
        f"against {base.source}: {counts_line(comparison)}",
        f"pass rate {percent(before.pass_rate)} {ARROW} {percent(after.pass_rate)}",
        f"weighted mean {mean_said(before)} {ARROW} {mean_said(after)}",
    ]
    if unmatched := base.without_id + new.without_id:
        parts.append(f"{counted(unmatched, 'malformed case')} without an id not compared")
    s = comparison.summary
    if s.added and s.removed and not (s.regressions + s.improvements + s.changed + s.unchanged):
        parts.append("no case id in common: is the baseline a run of these cases?")
    if unkept := answers_unkept(comparison):
        parts.append(
            f"{counted(unkept, 'answer')} not compared: the base report kept none (an older kp "
            "wrote it); write the baseline again to compare answers"
        )
    return "; ".join(parts)


def answers_unkept(comparison: Comparison) -> int:
    """The matched cases whose answer cannot be compared: an older kp's base report kept none.

    Reports keep each case's ``output`` since a version before they named their ``format``; one
    written before holds none, and no ``answered otherwise`` would read as the same answers.
    """
    base = comparison.base
    if "format" in base.model_fields_set or any(case.has_output for case in base.cases):
        return 0
    return sum(
        case.base is not None and case.new is not None and case.new.has_output
        for case in comparison.cases
    )


def standings_line(gate: Gate) -> str:
    """How a run gated on regressions stands: ``1 regression, 0 new failures; ...``."""
    count = Counter(gate.standings)
    old = count["old failure"]
    return (
        f"{counted(count['regression'], 'regression')}, "
        f"{counted(count['new failure'], 'new failure')}; "
        f"{counted(old, 'old failure')} {'does' if old == 1 else 'do'} not fail the run"
    )


def gate_line(
    gate: Gate, summary: RunSummary, *, option: str = "--fail-on", empty_allowed: bool = False
) -> str | None:
    """Why a run stands as it does under its gate, with a baseline or not; ``None`` for never.

    ``--fail-on failure: 3 failing cases (1 regression, 2 old failures)`` (without a baseline:
    ``3 failing cases``) or ``--fail-on regression: 1 regression, ...``: a CI log then says
    what set the exit code. ``option``: the gate's option as the shell spells it (the pytest
    plugin's ``--kp-fail-on``). ``empty_allowed``: a run over no case passes (``kp eval
    --allow-empty``), which the line then says instead of a judgement that reads as a failure.
    """
    if gate.fail_on == "never":
        return None
    if not summary.cases and empty_allowed and not summary.unreadable_files:
        return f"{option} {gate.fail_on}: no case to judge, and --allow-empty lets the run pass"
    if not summary.cases:  # "0 failing cases" would read as a pass; no case fails unless allowed
        said = "no case to judge"
    elif gate.fail_on == "regression":
        said = standings_line(gate)
    else:
        count = Counter(standing for standing in gate.standings if standing is not None)
        kinds = [counted(count[kind], kind) for kind in STANDINGS if count[kind]]
        said = counted(summary.failed, "failing case") + (f" ({', '.join(kinds)})" if kinds else "")
    if summary.unreadable_files:  # fails either gate (exit 1), whatever the cases did
        said += f"; {counted(summary.unreadable_files, 'file')} not read in full"
    return f"{option} {gate.fail_on}: {said}"


def totals_rows(comparison: Comparison) -> list[list[str]]:
    """The pass rate and the weighted mean: each a row of name, base, new and change.

    A mean says how many cases it leaves out, unscored (as ``kp eval``'s summary does).
    """
    base, new = comparison.base.summary, comparison.new.summary
    rate = difference(base.pass_rate, new.pass_rate)
    points = DASH if rate is None else f"{100 * rate:+.1f} pts"
    mean = signed(difference(base.weighted_mean, new.weighted_mean))
    return [
        ["pass rate", percent(base.pass_rate), percent(new.pass_rate), points],
        ["weighted mean", mean_said(base), mean_said(new), mean],
    ]


def case_row(case: CaseComparison) -> list[str]:
    """A case's cells in every view: label, what changed, weighted ``0.950 → 0.600 (-0.350)``."""
    before = case.base.weighted_score if case.base is not None else None
    after = case.new.weighted_score if case.new is not None else None
    digits = apart(before, after)
    base = number(before, digits) if case.base is not None else DASH
    new = number(after, digits) if case.new is not None else DASH
    suffix = f" ({signed(case.weighted_delta, digits)})" if case.weighted_delta is not None else ""
    return [case.label, case_detail(case), f"{base} {ARROW} {new}{suffix}"]


def scorer_rows(comparison: Comparison) -> list[list[str]]:
    """Each scorer's cells (see :data:`SCORER_HEAD`): means on each side, change, suite change."""
    return [
        [c.key, number(c.base_mean), number(c.new_mean), signed(c.mean_delta), scorer_note(c)]
        for c in comparison.scorers
    ]


def scorer_note(change: ScorerChange) -> str:
    """``threshold 0.8 → 0.9``: what changed in a suite entry; ``added``/``removed``."""
    if change.status in ("added", "removed"):
        return change.status
    if change.status == "same" or change.base is None or change.new is None:
        return ""
    notes = []
    for field in ("type", "weight", "threshold"):
        before, after = getattr(change.base, field), getattr(change.new, field)
        if before != after:
            shown = (f"{before:g}", f"{after:g}") if field != "type" else (before, after)
            notes.append(f"{field} {shown[0]} {ARROW} {shown[1]}")
    return ", ".join(notes)


def comparison_to_dict(comparison: Comparison) -> dict[str, Any]:
    """The comparison as one JSON object: both runs' totals, counts, scorers and every case."""
    base, new = comparison.base.summary, comparison.new.summary
    return {
        "base": _run_dict(comparison.base),
        "new": _run_dict(comparison.new),
        "tolerance": comparison.tolerance,
        "summary": {
            **comparison.summary.to_dict(),
            "pass_rate_delta": difference(base.pass_rate, new.pass_rate),
            "weighted_mean_delta": difference(base.weighted_mean, new.weighted_mean),
        },
        "scorers": [_scorer_dict(change) for change in comparison.scorers],
        "cases": [_case_dict(case) for case in comparison.cases],
    }


def comparison_to_json(comparison: Comparison) -> str:
    """The comparison as an indented JSON document (see :func:`comparison_to_dict`)."""
    return indented_json(comparison_to_dict(comparison))


def with_comparison(run_chunks: Iterable[str], comparison: Comparison) -> Iterator[str]:
    """A ``kp eval`` JSON report's text with a ``comparison`` member added (still a baseline)."""
    last = None
    for chunk in run_chunks:
        if last is not None:
            yield last
        last = chunk
    body = (last or "").rstrip()
    if not body.endswith("}"):
        raise ValueError("the report's JSON text does not end with an object")
    member = indented_json(comparison_to_dict(comparison)).rstrip("\n").replace("\n", "\n  ")
    yield body[:-1].rstrip() + f',\n  "comparison": {member}\n}}\n'


def _run_dict(run: EvalReport) -> dict[str, Any]:
    return {
        "source": run.source,
        "suite": run.suite.name,
        "cases": len(run.cases),
        "cases_without_id": run.without_id,
        "pass_rate": run.summary.pass_rate,
        "weighted_mean": run.summary.weighted_mean,
        "unscored": run.summary.unscored,
    }


def _spec_dict(spec: ReportScorer | None) -> dict[str, Any] | None:
    return None if spec is None else spec.model_dump(include={"type", "weight", "threshold"})


def _scorer_dict(change: ScorerChange) -> dict[str, Any]:
    specs = {"base": _spec_dict(change.base), "new": _spec_dict(change.new)}
    return {**asdict(change), **specs, "mean_delta": change.mean_delta}


def _side(case: ReportCase | None) -> dict[str, Any] | None:
    if case is None:
        return None
    return {
        "passed": case.passed,
        "malformed": case.malformed,
        "weighted_score": case.weighted_score,
        "scores": {score.key: score.score for score in case.scorers},
    }


def _case_dict(case: CaseComparison) -> dict[str, Any]:
    return {
        "id": case.case_id,
        "occurrence": case.occurrence,
        "change": case.change,
        "base": _side(case.base),
        "new": _side(case.new),
        "weighted_delta": case.weighted_delta,
        "output_changed": case.output_changed,
        "scores": [
            {
                "scorer": score.key,
                "base": _value(score.base),
                "new": _value(score.new),
                "delta": score.delta,
                "base_passed": score.base.passed if score.base is not None else None,
                "new_passed": score.new.passed if score.new is not None else None,
                "flip": score.flip,
                "changed": score.changed,
                "error": score.new.error if score.new is not None else None,
            }
            for score in case.scores
        ],
    }


def comparison_to_console(comparison: Comparison) -> Group:
    """The console view: regressions, improvements, other changes, scorers, then the totals."""
    parts: list[RenderableType] = [
        Text(printable(f"Comparison: {comparison.base.source} {ARROW} {comparison.new.source}"))
    ]
    for section, heading, style in SECTIONS:
        if cases := section_cases(comparison, section):
            table = titled_table(Text(f"{heading} ({len(cases)})", style=style))
            table.add_column("case", no_wrap=True)
            table.add_column("what changed")
            table.add_column("weighted", justify="right", no_wrap=True)
            for case in cases:
                label, detail, weighted = case_row(case)
                table.add_row(Text(short(label)), Text(printable(detail)), weighted)
            parts += [Text(), table]
    scorers = titled_table(Text("Scorers"))
    for column in SCORER_HEAD:
        left = column in ("scorer", "suite change")
        scorers.add_column(column, justify="left" if left else "right", no_wrap=column == "scorer")
    for key, *means, note in scorer_rows(comparison):
        scorers.add_row(Text(printable(key)), *means, Text(printable(note)))
    totals = Table(show_edge=False, header_style="bold")
    for column in ("", "base", "new", "change"):
        totals.add_column(column, justify="left" if not column else "right")
    for row in totals_rows(comparison):
        totals.add_row(*row)
    parts += [Text(), scorers, Text()]
    loud = comparison.regressed or baseline_warning(comparison) is not None
    parts += [
        totals,
        Text(printable(comparison_line(comparison)), style="bold red" if loud else "bold"),
    ]
    return Group(*parts)


def suites_title(comparison: Comparison) -> str:
    """The suite compared (``bulk-edit``), or both when they differ (``bulk-edit → strict``).

    A suite is named by its ``name``, else its file; runs of one unnamed suite are an
    ``evaluation``.
    """
    base, new = comparison.base.suite, comparison.new.suite
    if base.name == new.name:
        return new.name or "evaluation"
    return f"{base.name or base.source} {ARROW} {new.name or new.source}"


def comparison_to_markdown(comparison: Comparison, budget: int = MARKDOWN_BUDGET) -> str:
    """The comparison as Markdown for a pull-request comment: regressions first, rest folded.

    As many rows as fit in ``budget`` characters, regressions first; the rest are counted.
    """
    base, new = comparison.base, comparison.new
    title = suites_title(comparison)
    counts = counts_line(comparison)
    if comparison.regressed:
        # The regression count leads the line; bold, so a reviewer cannot miss it.
        first, rest = counts.split(", ", 1)
        counts = f"**{first}** (passed in the base run, fail now), {rest}"
    warning = baseline_warning(comparison)
    lines = [
        f"## Comparison: {escape(title)}",
        "",
        *([f"**{escape(warning)}**", ""] if warning else []),
        f"{counts}.",
        "",
        f"Base {escape(base.source)}, new {escape(new.source)}; "
        f"score changes of at most {comparison.tolerance:g} count as unchanged.",
        "",
        "| | base | new | change |",
        "|---|---:|---:|---:|",
        *(f"| {' | '.join(row)} |" for row in totals_rows(comparison)),
    ]
    rows = [map(escape, [*row[:-1], row[-1] or DASH]) for row in scorer_rows(comparison)]
    scorers = _folded("Scorers", markdown_table(SCORER_HEAD, rows))
    room = MarkdownRoom(budget - len(printable("\n".join([*lines, *scorers]))))
    for change, heading, _ in SECTIONS:
        if not (cases := section_cases(comparison, change)):
            continue
        shown = room.take(markdown_row(map(escape, case_row(case))) for case in cases)
        table = markdown_table(("case", "what changed", "weighted"), [])
        table += [*shown, *markdown_more(len(cases), len(shown))]
        if change == "regressed":
            lines += ["", f"### {heading} ({len(cases)})", "", *table]
        else:
            lines += ["", *_folded(f"{heading} ({len(cases)})", table)]
    lines += ["", *scorers]
    return printable("\n".join(lines) + "\n")


def _folded(summary: str, body: list[str]) -> list[str]:
    # GitHub renders Markdown inside <details> only with a blank line after <summary>.
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]
