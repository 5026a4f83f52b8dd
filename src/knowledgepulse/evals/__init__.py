"""Evaluation of LLM workflow output: cases, scorers, suites, and runs with verdicts.

In five lines::

    from knowledgepulse.evals import load_cases, load_suite, run_suite

    suite = load_suite("suite.yaml")  # or preset("standard")
    run = run_suite(suite, load_cases(["cases.jsonl"]))
    print(run.summary.pass_rate, [c.case_id for c in run.cases if not c.passed])
"""

from knowledgepulse.evals.cases import (
    CaseInput,
    FileProblem,
    LoadedCase,
    MalformedCase,
    iter_cases,
    load_cases,
    parse_case,
)
from knowledgepulse.evals.models import (
    ActualOutput,
    Block,
    Case,
    ExpectedOperation,
    ExpectedOutput,
    Operation,
    Page,
)
from knowledgepulse.evals.presets import PRESET_NAMES, preset
from knowledgepulse.evals.registry import (
    get_scorer_class,
    register_scorer,
    scorer_types,
    unregister_scorer,
)
from knowledgepulse.evals.runner import (
    TOLERANCE,
    CaseResult,
    EvalRun,
    RunSummary,
    ScorerOutcome,
    ScorerStats,
    evaluate_case,
    run_suite,
    weighted_score,
)
from knowledgepulse.evals.schema import case_json_schema, suite_json_schema
from knowledgepulse.evals.scorer import NoParams, Scorer, ScorerError, ScoreResult
from knowledgepulse.evals.suite import Suite, SuiteScorer, load_suite, suite_from_dict

__all__ = [
    "PRESET_NAMES",
    "TOLERANCE",
    "ActualOutput",
    "Block",
    "Case",
    "CaseInput",
    "CaseResult",
    "EvalRun",
    "ExpectedOperation",
    "ExpectedOutput",
    "FileProblem",
    "LoadedCase",
    "MalformedCase",
    "NoParams",
    "Operation",
    "Page",
    "RunSummary",
    "ScoreResult",
    "Scorer",
    "ScorerError",
    "ScorerOutcome",
    "ScorerStats",
    "Suite",
    "SuiteScorer",
    "case_json_schema",
    "evaluate_case",
    "get_scorer_class",
    "iter_cases",
    "load_cases",
    "load_suite",
    "parse_case",
    "preset",
    "register_scorer",
    "run_suite",
    "scorer_types",
    "suite_from_dict",
    "suite_json_schema",
    "unregister_scorer",
    "weighted_score",
]
