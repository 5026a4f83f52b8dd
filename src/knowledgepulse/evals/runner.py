"""Running a suite over cases: each scorer on each case, the verdicts, and the run's totals.

Scorers run independently: one that raises becomes an error result, the others still run. A case
that misses what the suite's scorers read is malformed for this suite. Nothing here reads a
clock, so equal inputs give equal results (plain data, :mod:`knowledgepulse.evals.results`).
"""

from __future__ import annotations

import logging
import numbers
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from knowledgepulse._util.raised import raised
from knowledgepulse._util.settings import instance_of
from knowledgepulse.errors import Setting, spelt
from knowledgepulse.evals.cases import (
    CaseInput,
    Cases,
    FileProblem,
    LoadedCase,
    MalformedCase,
    case_inputs,
    check_case,
    fit_cases,
)
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.results import (
    ERROR_LIMIT,
    TOLERANCE,
    UNSET,
    CaseResult,
    EvalRun,
    RepeatStats,
    RepeatSummary,
    RunSummary,
    ScorerOutcome,
    ScorerRepeat,
    ScorerStats,
    TaskSummary,
    mean_and_stderr,
    passes,
)
from knowledgepulse.evals.scorer import CaseContext, Scorer, ScoreResult, is_builtin
from knowledgepulse.evals.suite import Suite, SuiteScorer
from knowledgepulse.evals.tasks import TaskRecord, call_bounded
from knowledgepulse.records import Location, Problem

_log = logging.getLogger("knowledgepulse")


def _outcome(
    entry: SuiteScorer, result: ScoreResult, diagnosis: tuple[str, ...] | None = None
) -> ScorerOutcome:
    scorer = entry.scorer
    if passes(result.score, entry.threshold):
        diagnosis = ()
    elif diagnosis is None:  # the scorer's diagnosis_check (with a score), then its own lines
        lines = (
            [scorer.diagnosis_check] if scorer.diagnosis_check and result.score is not None else []
        )
        try:
            lines.extend(_hint_lines(scorer, scorer.diagnose(result)))
        except (Exception, SystemExit) as error:  # a broken hint must not break the report
            lines.append(f"{scorer.type_name}.diagnose() raised {_raised(error, scorer)}")
        diagnosis = tuple(lines)
    return ScorerOutcome(
        entry.key, entry.type, entry.name, entry.weight, entry.threshold, result, diagnosis
    )


def _checked(result: Any) -> ScoreResult:
    # Each message says what to return instead: the scorer is the user's code, to fix.
    if not isinstance(result, ScoreResult):
        return ScoreResult.failed(
            f"the scorer returned {type(result).__name__}, not a ScoreResult; return "
            "ScoreResult(score, details)"
        )
    if result.details is None:  # nothing to explain: the same as no details
        result = ScoreResult(result.score, {}, result.error)
    elif not isinstance(result.details, Mapping):
        # Every report reads details as an object (key: value); a list stopped the run.
        return ScoreResult.failed(
            f"the scorer returned details of type {type(result.details).__name__}; give a "
            'dict, ScoreResult(score, {"reason": ...})'
        )
    if result.error is not None and not isinstance(result.error, str):  # an exception, say
        result = ScoreResult(result.score, result.details, str(result.error))
    score = result.score
    if score is None:
        if result.error is None:
            return ScoreResult(
                None,
                result.details,
                "the scorer returned no score and no error; return ScoreResult.failed(reason) "
                "when it cannot score",
            )
        return result
    if (
        isinstance(score, bool)
        or not isinstance(score, numbers.Real)
        or not -TOLERANCE <= score <= 1 + TOLERANCE
    ):
        return ScoreResult.failed(
            f"the scorer returned score {score!r}, which is not a number in [0, 1]; scale it "
            "into [0, 1], or return ScoreResult.failed(reason) when it cannot score",
            result.details,
        )
    # A score an ulp past a bound is rounding (0.1 * 3 / 0.3 is 1.0000000000000002), not a fault
    # of the scorer: it is the bound, as a threshold within TOLERANCE is reached.
    return ScoreResult(min(max(float(score), 0.0), 1.0), result.details, result.error)


def evaluate_case(
    suite: Suite, case: Case, location: Location | None = None, *, timeout: float | None = None
) -> CaseResult:
    """Every suite scorer on one case's recorded output, and its verdict.

    Malformed when the case misses what the suite's scorers read. ``timeout``: the seconds one
    scorer may take (``None``: no limit).
    """
    where = location or Location("<case>")
    problems = check_case(case, suite, where).problems
    if problems:
        return CaseResult(case.id, where, problems=problems, description=case.description)
    return score_context(suite, CaseContext.of(case), where, timeout=timeout)


def score_context(
    suite: Suite,
    context: CaseContext,
    location: Location,
    *,
    unfit: Mapping[str, Sequence[Problem]] | None = None,
    timeout: float | None = None,
) -> CaseResult:
    """Every suite scorer on one case, and its verdict; those ``unfit`` (by key) cannot read it.

    ``timeout``: the seconds one scorer may take on the case (``None``: no limit).
    """
    outcomes = []
    for entry in suite.scorers:
        problems = (unfit or {}).get(entry.key)
        if problems:
            said = "; ".join(f"{p.path}: {p.message}" if p.path else p.message for p in problems)
            result = ScoreResult.failed(f"cannot read the output: {said}")
        else:
            result = _scored(entry, context.seen_by(entry.key), timeout)
        outcomes.append(_outcome(entry, result))
    case = context.case
    return CaseResult(
        case.id,
        location,
        tuple(outcomes),
        description=case.description,
        output=case.actual if case.has_actual else UNSET,
        expected=case.expected if case.has_expected else UNSET,
    )


def _scored(entry: SuiteScorer, context: CaseContext, timeout: float | None) -> ScoreResult:
    """One scorer's result on one case; what it raises, or an invalid result, is an error result.

    The user's scorers run in a thread of their own, bounded by ``timeout``: a hung one fails
    its case, a ``KeyboardInterrupt`` it raises is its error, and a real Ctrl-C, which reaches
    the waiting main thread, stops the run. The built-ins bound their own time and run here.
    """
    scorer = entry.scorer
    failure: BaseException | None
    if is_builtin(scorer):
        try:
            returned, failure = scorer.score_case(context), None
        except (Exception, SystemExit) as error:
            returned, failure = None, error
    else:
        try:
            returned, failure = call_bounded(
                lambda: scorer.score_case(context), timeout, "kp-scorer"
            )
        except TimeoutError:
            return ScoreResult.failed(
                f"scorer {entry.label!r} gave no result within {timeout:g} s; make it faster, "
                f"or give it more time ({spelt(Setting('timeout'))})"
            )
    if failure is None:
        return _checked(returned)
    # Scorers are independent: one failure is one row.
    _log.debug("scorer %r raised on case %r", entry.key, context.case.id, exc_info=failure)
    return ScoreResult.failed(f"the scorer raised {_raised(failure, scorer)}")


def _hint_lines(scorer: Scorer, hints: Any) -> list[str]:
    """What a scorer's ``diagnose`` returned, as lines: a text is one line, not one a letter.

    Anything that is no list of lines (``None``, from a ``diagnose`` that forgot to return) is
    one line saying so, not a ``TypeError`` it never raised.
    """
    if isinstance(hints, str):
        return [hints]
    if not isinstance(hints, Iterable):
        what = "None" if hints is None else type(hints).__name__
        return [
            f"{scorer.type_name}.diagnose() returned {what}, not a list of lines; "
            "return [line, ...]"
        ]
    return [str(hint) for hint in hints]


def _raised(error: BaseException, scorer: Scorer) -> str:
    """``Type: message (at file:line)``, the line the scorer's own code raised it from."""
    return raised(error, type(scorer))


def task_failed(suite: Suite, case: Case, location: Location, record: TaskRecord) -> CaseResult:
    """The result of a case whose task gave no output: every scorer without a score, saying why."""
    hint = (
        f"; give the task more time ({spelt(Setting('timeout'))}) or make it faster"
        if record.timed_out
        else ""
        if record.not_json  # the reason says what to return
        else f"; fix the task, or retry it ({spelt(Setting('retries'))}) if the failure comes "
        "and goes"
    )
    result = ScoreResult.failed(f"no output to score: {record.reason(ERROR_LIMIT)}{hint}")
    outcomes = tuple(_outcome(entry, result) for entry in suite.scorers)
    return CaseResult(
        case.id,
        location,
        outcomes,
        description=case.description,
        task=record,
        expected=case.expected if case.has_expected else UNSET,
    )


def combine_runs(suite: Suite, runs: Sequence[CaseResult]) -> CaseResult:
    """One result for a case run several times: each scorer's mean, the runs kept beside it.

    Every run must hold an outcome for every scorer (a failed task gives error outcomes).
    """
    first = runs[0]
    outcomes = []
    per_scorer = {}
    for entry in suite.scorers:
        own = [next(o for o in run.outcomes if o.key == entry.key) for run in runs]
        scores = [o.score for o in own]
        valued = [score for score in scores if score is not None]
        mean, stderr = mean_and_stderr(valued)
        passed = sum(o.passed for o in own)
        stats = ScorerRepeat(
            mean=mean,
            stderr=stderr,
            n=len(valued),
            errors=len(scores) - len(valued),
            passed_runs=passed,
        )
        per_scorer[entry.key] = stats
        details = {
            "runs": len(runs),
            "scores": scores,
            "mean": mean,
            "stderr": stderr,
            "passedRuns": stats.passed_runs,
        }
        error = None if valued else f"no run gave a score; the first said: {own[0].error}"
        result = ScoreResult(mean, details, error)
        outcomes.append(_outcome(entry, result, _repeat_diagnosis(own, stats)))
    durations = [run.duration_ms for run in runs if run.duration_ms is not None]
    return CaseResult(
        first.case_id,
        first.location,
        tuple(outcomes),
        description=first.description,
        duration_ms=statistics.fmean(durations) if durations else None,
        warnings=tuple(dict.fromkeys(w for run in runs for w in run.warnings)),  # once each
        repeat=RepeatStats.of(len(runs), sum(run.passed for run in runs), per_scorer),
        runs=tuple(runs),
        expected=first.expected,
    )


def _repeat_diagnosis(own: Sequence[ScorerOutcome], stats: ScorerRepeat) -> tuple[str, ...]:
    spread = "" if stats.stderr is None else f" ± {stats.stderr:.3f}"
    mean = "no score" if stats.mean is None else f"mean {stats.mean:.3f}{spread}"
    lines = [
        f"{mean} over {stats.n} of {len(own)} runs; {stats.passed_runs} of {len(own)} runs "
        "reached the threshold"
    ]
    if stats.errors:
        first = next(o for o in own if o.score is None)
        lines.append(f"{stats.errors} runs gave no score; the first said: {first.error}")
    scored = [(o.score, i, o) for i, o in enumerate(own) if o.score is not None]
    if scored:
        score, index, lowest = min(scored, key=lambda item: (item[0], item[1]))
        lines.append(f"lowest: run {index + 1}, score {score:.3f}")
        lines.extend(f"  {line}" for line in lowest.diagnosis)
    return tuple(lines)


def summarize(
    suite: Suite, results: Sequence[CaseResult], file_problems: Sequence[Problem] = ()
) -> RunSummary:
    """Pass rate, each scorer's mean and standard error, the weighted mean, and what was lost."""
    passed = sum(result.passed for result in results)
    stats = {}
    for entry in suite.scorers:
        outcomes = [o for r in results for o in r.outcomes if o.key == entry.key]
        scores = [o.score for o in outcomes if o.score is not None]
        mean, stderr = mean_and_stderr(scores)
        errors = len(outcomes) - len(scores)
        stats[entry.key] = ScorerStats(mean=mean, stderr=stderr, n=len(scores), errors=errors)
    scored = [(r, r.weighted_score) for r in results]
    weighted = [s for _, s in scored if s is not None]
    calls = [
        (run.task, run.duration_ms)
        for result in results
        for run in (result.runs or (result,))
        if run.task is not None
    ]
    repeated = [result.repeat for result in results if result.repeat is not None]
    return RunSummary(
        cases=len(results),
        passed=passed,
        failed=len(results) - passed,
        malformed=sum(result.malformed for result in results),
        pass_rate=passed / len(results) if results else None,
        weighted_mean=statistics.fmean(weighted) if weighted else None,
        unscored=sum(s is None and not r.malformed for r, s in scored),
        scorers=stats,
        unreadable_files=len({p.location.file for p in file_problems if not p.warning}),
        warnings=sum(p.warning for p in file_problems)
        + sum(len(result.warnings) for result in results),
        task=TaskSummary.of(calls) if calls else None,
        repeat=RepeatSummary.of(repeated, len(results)) if repeated else None,
    )


def run_suite(suite: Suite, cases: Cases, *, timeout: float | None = None) -> EvalRun:
    """Run every scorer of ``suite`` on every case's recorded output, in order, as they are read.

    ``cases``: case files, or cases (see :data:`~knowledgepulse.evals.cases.Cases`): models,
    plain dicts, or what :func:`~knowledgepulse.evals.cases.iter_cases` yields; an iterator of
    cases is never held whole. ``timeout``: the seconds one of your scorers may take on one case
    (``None``: no limit); past it the case gets an error result and the run goes on.

    Raises:
        InputFileError: a case file cannot be opened at all.
        SettingTypeError: ``suite`` is no Suite; paths mixed with cases, or one case not in a
            list.
    """
    instance_of(suite, "suite", Suite, "a Suite, as load_suite(path) gives")
    return collect_run(
        suite,
        fit_cases(case_inputs(cases), suite),
        lambda _, item: score_context(
            suite, CaseContext.of(item.case), item.location, timeout=timeout
        ),
    )


def collect_run(
    suite: Suite,
    items: Iterable[CaseInput],
    score: Callable[[int, LoadedCase], CaseResult],
) -> EvalRun:
    """The run of ``items``: each valid case scored by ``score(index, case)``, in order."""
    results: list[CaseResult] = []
    file_problems: list[Problem] = []
    for index, item in enumerate(items):
        if isinstance(item, FileProblem):
            file_problems.append(item.problem)
        elif isinstance(item, MalformedCase):
            results.append(
                CaseResult(
                    item.case_id, item.location, problems=item.problems, warnings=item.warnings
                )
            )
        else:
            result = score(index, item)
            # The case's warnings, then its output's (a task's), each once: checking the case
            # again with its answer finds the case's own again (an expected block it lacks).
            warnings = tuple(dict.fromkeys((*item.warnings, *result.warnings)))
            results.append(replace(result, warnings=warnings) if item.warnings else result)
    return EvalRun(
        suite, tuple(results), summarize(suite, results, file_problems), tuple(file_problems)
    )
