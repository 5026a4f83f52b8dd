"""Evaluation of LLM workflow output: cases, scorers, suites, and runs with verdicts.

In five lines::

    from knowledgepulse.evals import load_cases, load_suite, run_suite

    suite = load_suite("suite.yaml")  # or preset("standard")
    run = run_suite(suite, load_cases(["cases.jsonl"]))
    print(run.summary.pass_rate, [c.case_id for c in run.cases if not c.passed])

Or call the workflow under test on each case first: ``evaluate(task, "cases.jsonl", suite)``.
"""

from knowledgepulse.evals.cases import (
    CaseInput,
    FileProblem,
    LoadedCase,
    MalformedCase,
    fit_cases,
    iter_cases,
    load_cases,
    parse_case,
)
from knowledgepulse.evals.compare import (
    CaseComparison,
    Comparison,
    ComparisonSummary,
    ScoreDelta,
    ScorerChange,
    compare_runs,
)
from knowledgepulse.evals.evaluate import DEFAULT_CACHE_DIR, OutputCache, evaluate, evaluate_async
from knowledgepulse.evals.models import (
    ActualOutput,
    Block,
    Case,
    ExpectedOperation,
    ExpectedOutput,
    Operation,
    Page,
    case_json_schema,
)
from knowledgepulse.evals.registry import (
    get_scorer_class,
    register_scorer,
    scorer_types,
    unregister_scorer,
)
from knowledgepulse.evals.results import (
    TOLERANCE,
    CaseResult,
    EvalRun,
    RepeatStats,
    RepeatSummary,
    RunSummary,
    ScorerOutcome,
    ScorerRepeat,
    ScorerStats,
    weighted_score,
)
from knowledgepulse.evals.runner import evaluate_case, run_suite
from knowledgepulse.evals.scorer import (
    BULK_EDIT,
    CaseContext,
    CasePart,
    NoParams,
    Scorer,
    ScorerError,
    ScoreResult,
)
from knowledgepulse.evals.snapshot import (
    CaseSnapshot,
    RunSnapshot,
    ScorerSpec,
    ScoreSnapshot,
    load_report,
    report_snapshot,
    run_snapshot,
)
from knowledgepulse.evals.suite import (
    PRESET_NAMES,
    Suite,
    SuiteScorer,
    load_suite,
    preset,
    suite_from_dict,
    suite_json_schema,
)
from knowledgepulse.evals.tasks import (
    Task,
    TaskInput,
    TaskRecord,
    TaskSummary,
    load_plugin,
    load_task,
)

__all__ = [
    "BULK_EDIT",
    "DEFAULT_CACHE_DIR",
    "PRESET_NAMES",
    "TOLERANCE",
    "ActualOutput",
    "Block",
    "Case",
    "CaseComparison",
    "CaseContext",
    "CaseInput",
    "CasePart",
    "CaseResult",
    "CaseSnapshot",
    "Comparison",
    "ComparisonSummary",
    "EvalRun",
    "ExpectedOperation",
    "ExpectedOutput",
    "FileProblem",
    "LoadedCase",
    "MalformedCase",
    "NoParams",
    "Operation",
    "OutputCache",
    "Page",
    "RepeatStats",
    "RepeatSummary",
    "RunSnapshot",
    "RunSummary",
    "ScoreDelta",
    "ScoreResult",
    "ScoreSnapshot",
    "Scorer",
    "ScorerChange",
    "ScorerError",
    "ScorerOutcome",
    "ScorerRepeat",
    "ScorerSpec",
    "ScorerStats",
    "Suite",
    "SuiteScorer",
    "Task",
    "TaskInput",
    "TaskRecord",
    "TaskSummary",
    "case_json_schema",
    "compare_runs",
    "evaluate",
    "evaluate_async",
    "evaluate_case",
    "fit_cases",
    "get_scorer_class",
    "iter_cases",
    "load_cases",
    "load_plugin",
    "load_report",
    "load_suite",
    "load_task",
    "parse_case",
    "preset",
    "register_scorer",
    "report_snapshot",
    "run_snapshot",
    "run_suite",
    "scorer_types",
    "suite_from_dict",
    "suite_json_schema",
    "unregister_scorer",
    "weighted_score",
]
