"""Evaluation of LLM workflow output: cases, scorers, suites, and runs with verdicts.

``run_suite(load_suite("suite.yaml"), load_cases(["cases.jsonl"]))`` scores recorded outputs
(or a ``preset("standard")``); ``evaluate(task, "cases.jsonl", suite)`` calls the workflow first.
The rest is in the modules: the case models (``models``, ``cases``), the scorer registry
(``scorer``), suites (``suite``), tasks (``tasks``), results and reports (``results``,
``report``), and comparison with a baseline (``compare``).
"""

from knowledgepulse.evals.cases import load_cases, parse_case
from knowledgepulse.evals.compare import compare_runs
from knowledgepulse.evals.evaluate import evaluate
from knowledgepulse.evals.report import load_report
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import evaluate_case, run_suite
from knowledgepulse.evals.scorer import CaseContext, Scorer, ScoreResult, register_scorer
from knowledgepulse.evals.suite import load_suite, preset
from knowledgepulse.evals.tasks import TaskInput

__all__ = [
    "CaseContext",
    "EvalRun",
    "ScoreResult",
    "Scorer",
    "TaskInput",
    "compare_runs",
    "evaluate",
    "evaluate_case",
    "load_cases",
    "load_report",
    "load_suite",
    "parse_case",
    "preset",
    "register_scorer",
    "run_suite",
]
