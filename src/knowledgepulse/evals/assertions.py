"""``assert_passes``: a test fails with the case's diagnosis, as ``kp eval`` prints it.

The message is rendered by the console report (``knowledgepulse.reports.evals``), imported only
when something failed: the evaluation half depends on the reports half nowhere else, and a
passing test pays for no rendering.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from knowledgepulse._util.text import counted
from knowledgepulse.evals.results import CaseResult, EvalRun

DEFAULT_WIDTH = 100
"""Where long diagnosis lines wrap (under their own first character, as in the table report)."""


def assert_passes(result: CaseResult | EvalRun) -> None:
    """Fail the calling test unless the case, or every case of the run, passed.

    An :class:`EvalRun` passes when it holds at least one case, every case passed, none was
    malformed, and every case file was read in full; a run of no cases checks nothing, so it
    fails.

    Raises:
        AssertionError: its message says why on the first line, then gives every failing case
            with each failing scorer, its score, threshold and diagnosis, as the table report
            of ``kp eval`` shows them.
        TypeError: ``result`` is neither a :class:`CaseResult` nor an :class:`EvalRun`.
    """
    __tracebackhide__ = True
    if not isinstance(result, CaseResult | EvalRun):
        raise TypeError(
            f"assert_passes takes a CaseResult or an EvalRun, got {type(result).__name__}"
        )
    if isinstance(result, EvalRun) and not result.cases and result.passed:
        raise AssertionError("the run evaluated no cases, so it shows nothing")
    if not result.passed:
        raise AssertionError(failure_message(result))


def failure_message(result: CaseResult | EvalRun, *, width: int = DEFAULT_WIDTH) -> str:
    """Why a case (or a run) did not pass: a one-line reason, then the report's diagnosis.

    For a case: ``2 scorers below threshold: operation-accuracy 0.667 < 0.800, ...``, then the
    case as the table report shows it. For a run: its summary line, then each case that did not
    pass, then the parts of files that could not be read.
    """
    from rich.console import Console, Group  # noqa: PLC0415 - rendering only when a case failed

    from knowledgepulse.reports import evals as report  # noqa: PLC0415 - the reports import evals

    if isinstance(result, CaseResult):
        head, failed, lost = _reason(result, report.number), [result], []
    else:
        head = report.summary_line(result)
        failed = [case for case in result.cases if not case.passed]
        lost = [problem for problem in result.file_problems if not problem.warning]
    lines = [report.printable(head)]
    if failed:
        buffer = io.StringIO()
        console = Console(
            file=buffer, width=width, color_system=None, markup=False, emoji=False, highlight=False
        )
        console.print(Group(*(part for case in failed for part in report.failing_case(case))))
        lines.extend(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())
    if lost:
        lines.append("Not read in full")
        lines.extend(f"  {report.printable(str(problem))}" for problem in lost)
    return "\n".join(lines)


def _reason(result: CaseResult, number: Callable[[float | None], str]) -> str:
    """One line: which scorers failed, with score and threshold, or why the case is malformed."""
    if result.malformed:
        return f"malformed case: {counted(len(result.problems), 'problem')}"
    shown = ", ".join(
        f"{o.key} {number(o.score)} < {number(o.threshold)}"
        if o.score is not None
        else f"{o.key}: no score"
        for o in result.failing
    )
    return f"{counted(len(result.failing), 'scorer')} below threshold: {shown}"
