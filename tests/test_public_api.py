"""The public API: the names each public package exports, pinned here so that a change to the
surface shows in a diff and is made on purpose, and the rules every export follows."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

SURFACE: dict[str, list[str]] = {
    "knowledgepulse": [
        "DEFAULT_THRESHOLD",
        "Embedder",
        "KnowledgePulseError",
        "MiniLMEmbedder",
        "ReasoningTrace",
        "ScoreResult",
        "Scorer",
        "ScoringWeights",
        "TraceValueScorer",
        "ValueBreakdown",
        "VectorCache",
        "__version__",
        "capture",
        "evaluate_value",
        "integrations",
        "load_cases",
        "load_suite",
        "load_traces",
        "parse_trace",
        "preset",
        "register_profile",
        "register_scorer",
        "run_suite",
        "score_trace",
        "score_traces",
    ],
    "knowledgepulse.trace": [
        "CONTEXT_URLS",
        "STEP_TYPES",
        "Entity",
        "KnowledgeGraphDelta",
        "LoadedTrace",
        "Metadata",
        "Outcome",
        "ReasoningTrace",
        "Relationship",
        "Step",
        "StepType",
        "Task",
        "Tool",
        "load_traces",
        "parse_trace",
        "validate_record",
    ],
    "knowledgepulse.value": [
        "BUILTIN_PROFILES",
        "DEFAULT_THRESHOLD",
        "AppliedOverride",
        "CacheMode",
        "Dimensions",
        "NoveltyOrigin",
        "NoveltySource",
        "OverrideName",
        "ProfileRegistry",
        "ScoringWeights",
        "TraceFeatures",
        "TraceValueScorer",
        "ValueBreakdown",
        "apply_overrides",
        "complexity",
        "default_scorer",
        "embedding_text",
        "evaluate_value",
        "novelty",
        "outcome_confidence",
        "register_profile",
        "score_trace",
        "score_traces",
        "set_default_scorer",
        "tool_diversity",
    ],
    "knowledgepulse.novelty": [
        "DEFAULT_MAX_WINDOWS",
        "DEFAULT_NOVELTY_TEXT",
        "MODEL_POSITIONS",
        "NOVELTY_TEXTS",
        "WINDOW_PIECES",
        "Embedder",
        "LeadingEmbedder",
        "NoveltyText",
        "WindowedEmbedder",
        "default_embedder",
        "dimensions_of",
        "embedder_for",
        "model_id_of",
        "novelty_text",
        "shared_embedder",
    ],
    "knowledgepulse.novelty.cache": [
        "CachedVector",
        "Clock",
        "Nearest",
        "Neighbours",
        "VectorCache",
        "frozen_nearest",
        "online_nearest",
        "wall_clock_ms",
    ],
    "knowledgepulse.evals": [
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
    ],
    "knowledgepulse.curation": [
        "Candidate",
        "CorpusScores",
        "DuplicateGroup",
        "MinScore",
        "Rejection",
        "RejectionReason",
        "Selection",
        "ThresholdSpecError",
        "budget_for_top",
        "canonical_order",
        "content_digest",
        "dedupe",
        "domain_percentiles",
        "leave_one_out_nearest",
        "percentiles",
        "ranking",
        "score_corpus",
        "select",
        "time_order",
    ],
    "knowledgepulse.integrations": [
        "CONFIDENCE_KEY",
        "DOMAIN_KEY",
        "SOURCES",
        "SOURCE_CHOICES",
        "CapturedTrace",
        "Collector",
        "ConversionError",
        "ConvertedTrace",
        "OnTrace",
        "StepBuilder",
        "TraceOptions",
        "capture",
        "convert_file",
        "langchain",
        "openai_agents",
        "otel",
        "pydantic_ai",
        "recognise",
        "smolagents",
    ],
    "knowledgepulse.engines.ray_engine": [
        "INSTALL_HINT",
        "TRACE_COLUMN",
        "DatasetScores",
        "DeviceFactory",
        "EmbedWorker",
        "EmbedderFactory",
        "MiniLMFactory",
        "RayClusterError",
        "RayEmbedder",
        "ScoredRow",
        "TraceBatchEmbedder",
        "check_reachable",
        "contiguous_shards",
        "iter_dataset_scores",
        "score_dataset",
    ],
    "knowledgepulse.testing": [
        "HashingEmbedder",
        "assert_passes",
        "failure_message",
    ],
    "knowledgepulse.pytest_plugin": [
        "EvalWarning",
    ],
    "knowledgepulse.errors": [
        "CacheFileError",
        "CaseValidationError",
        "EmbedderUnavailableError",
        "InputFileError",
        "KnowledgePulseError",
        "MissingDependencyError",
        "OutputError",
        "PluginLoadError",
        "ProblemsError",
        "ProfileError",
        "ReportFileError",
        "ScorerParameterError",
        "SuiteError",
        "TraceValidationError",
        "UnknownPresetError",
        "UnknownScorerError",
        "VectorError",
        "missing_extra",
    ],
}


@pytest.mark.parametrize("name", SURFACE)
def test_the_public_surface_is_the_one_pinned_here(name: str) -> None:
    """Each public package exports exactly the pinned names (add a name here on purpose)."""
    assert list(importlib.import_module(name).__all__) == SURFACE[name]


@pytest.mark.parametrize("name", SURFACE)
def test_every_export_exists_and_is_ours_and_public(name: str) -> None:
    """Each exported name resolves and is not private; its class or function is defined here.

    Nothing of a third party is re-exported as if it were ours, and no ``_private`` name leaks.
    """
    package = importlib.import_module(name)
    for exported in package.__all__:
        assert not exported.startswith("_") or exported == "__version__", f"{name}.{exported}"
        value = getattr(package, exported)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("knowledgepulse."), f"{name}.{exported}"
        elif inspect.ismodule(value):
            assert value.__name__.startswith("knowledgepulse."), f"{name}.{exported}"


def test_the_seeds_api_is_at_the_top_level() -> None:
    """evaluate_value, VectorCache and the weight type come straight from knowledgepulse."""
    import knowledgepulse

    assert (
        knowledgepulse.evaluate_value
        is importlib.import_module("knowledgepulse.value").evaluate_value
    )
    assert knowledgepulse.VectorCache(max_elements=10, dimensions=4).size == 0
    assert knowledgepulse.ScoringWeights(0.25, 0.25, 0.25, 0.25).novelty == 0.25


def test_importing_the_package_loads_no_model() -> None:
    """Nothing heavy is imported until an embedding is needed."""
    code = (
        "import sys, knowledgepulse; "
        "print('onnxruntime' in sys.modules, 'tokenizers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
