"""The public API as a user's typed code calls it: mypy strict checks this file against the
signatures, so a change to a public name, argument or return type fails here (structlog's habit);
pytest runs it, so each call really works as written."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ForwardRef, assert_type, get_args, get_overloads

import knowledgepulse as kp
from knowledgepulse.curation import select
from knowledgepulse.curation.select import Candidate, Selection
from knowledgepulse.evals import EvalRun, evaluate_case, parse_case
from knowledgepulse.evals.cases import CaseInput
from knowledgepulse.evals.results import CaseResult
from knowledgepulse.evals.suite import Suite
from knowledgepulse.novelty import Embedder, embedder_for
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.cache.vector_cache import Nearest
from knowledgepulse.records import Problem
from knowledgepulse.runs import redact
from knowledgepulse.runs.api import Redaction
from knowledgepulse.testing import HashingEmbedder, assert_passes
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.value import ScoredItem, ScoringWeights, TraceValueScorer, ValueBreakdown

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_trace_value_scoring_is_typed_end_to_end() -> None:
    """Load traces, score them with a scorer of one's own, read the breakdown's numbers."""
    loaded: Iterator[TraceItem | Problem] = kp.load_traces([EXAMPLES / "traces/traces.jsonl"])
    traces: list[ReasoningTrace] = [item.trace for item in loaded if isinstance(item, TraceItem)]
    embedder: Embedder = HashingEmbedder(dimensions=64)
    scorer = TraceValueScorer(embedder=embedder, cache=VectorCache(max_elements=25))
    breakdowns: list[ValueBreakdown] = [scorer.score(trace) for trace in traces]
    score: float = breakdowns[0].score
    weights: ScoringWeights = kp.ScoringWeights(0.25, 0.25, 0.25, 0.25)
    assert 0.0 <= score <= 1.0
    assert len(breakdowns) == len(traces) > 1
    assert weights.complexity == 0.25


def test_the_vector_cache_is_typed() -> None:
    """A cache takes array-likes and ids, and names the nearest earlier vector."""
    cache = VectorCache(max_elements=3)
    cache.add([1.0, 0.0], id="kp:trace:a")
    nearest: Nearest | None = cache.nearest([1.0, 0.1])
    assert nearest is not None
    assert nearest.id == "kp:trace:a"


def test_evaluation_is_typed_end_to_end() -> None:
    """A suite over case files gives a run; one case gives a result that assert_passes reads."""
    suite: Suite = kp.load_suite(EXAMPLES / "evals/suite.yaml")
    cases: list[CaseInput] = kp.load_cases(EXAMPLES / "evals/cases.jsonl")
    run: EvalRun = kp.run_suite(suite, cases)
    case = parse_case({"id": "same", "actual": "a text", "expected": "a text"})
    result: CaseResult = evaluate_case(kp.preset("standard"), case)
    assert len(run.cases) == len(cases)
    assert isinstance(result.passed, bool)
    if result.passed:
        assert_passes(result)


def test_curation_and_device_choice_are_typed() -> None:
    """select takes candidates and gives a selection; embedder_for names the CPU embedder."""
    candidates = [Candidate(key=f"kp:trace:{i}", score=i / 4, domain="code") for i in range(4)]
    selection: Selection = select(candidates, budget=2)
    assert [candidates[i].key for i in selection.selected] == ["kp:trace:3", "kp:trace:2"]
    assert isinstance(embedder_for("cpu"), Embedder)


def test_annotated_rows_of_dicts_come_back_typed_as_dicts() -> None:
    """Row dicts (or files) in, row dicts out: annotate's result is typed, not Any (mypy checks)."""
    chat = EXAMPLES / "datasets/openai_chat.jsonl"
    rows: list[dict[str, Any]] = [json.loads(line) for line in chat.read_text("utf-8").splitlines()]
    scorer = TraceValueScorer(embedder=None)
    annotated = assert_type(kp.annotate(rows, scorer=scorer), list[dict[str, Any]])
    from_file = assert_type(
        kp.annotate(EXAMPLES / "datasets/openai_chat.jsonl", scorer=scorer), list[dict[str, Any]]
    )
    assert [row["kp_score"] for row in annotated] == [row["kp_score"] for row in from_file]


def test_models_and_scored_items_annotate_and_redact_into_typed_rows() -> None:
    """ReasoningTrace models and score's items are documented inputs: mypy takes them, rows out."""
    traces = [
        item.trace
        for item in kp.load_traces([EXAMPLES / "traces/traces.jsonl"])
        if isinstance(item, TraceItem)
    ]
    scorer = TraceValueScorer(embedder=None)
    from_models = assert_type(kp.annotate(traces, scorer=scorer), list[dict[str, Any]])
    from_items = assert_type(kp.annotate(kp.score(traces, scorer=scorer)), list[dict[str, Any]])
    redacted = assert_type(redact(traces, level="aggregated"), Redaction)
    rows: list[dict[str, Any]] = redacted.data
    assert len(from_models) == len(from_items) == len(rows) == len(traces)
    assert [row["id"] for row in rows] == [trace.id for trace in traces]


class _Names(dict[str, Any]):
    """A module's names, each string alias (``Rows``) given as the type it names."""

    def __getitem__(self, name: str) -> Any:
        return _resolved(super().__getitem__(name), self)


def _resolved(annotation: object, names: dict[str, Any]) -> Any:
    """An annotation as its type: the module's strings (and string aliases) evaluated."""
    while isinstance(annotation, str | ForwardRef):
        text = annotation if isinstance(annotation, str) else annotation.__forward_arg__
        annotation = eval(text, {}, _Names(names))  # the library's own annotations
    return annotation


def _overload_returning_rows_for(function: Callable[..., Any]) -> tuple[Any, Any]:
    """The ``data`` type and return type of ``function``'s overload that takes row dicts."""
    namespace = vars(inspect.getmodule(function))
    for overload in get_overloads(function):
        signature = inspect.signature(overload)
        data = _resolved(signature.parameters["data"].annotation, namespace)
        if Iterable[Mapping[str, Any]] in get_args(data):
            return data, _resolved(signature.return_annotation, namespace)
    raise AssertionError(f"no overload of {function.__name__} takes row dicts")


def test_the_rows_overload_takes_every_documented_list_input() -> None:
    """Models or score's items reach annotate's overload that gives rows (not Any)."""
    data, returned = _overload_returning_rows_for(kp.annotate)
    for documented in (Iterable[ReasoningTrace], Iterable[TraceItem], Iterable[ScoredItem]):
        assert documented in get_args(data), documented
    assert returned == list[dict[str, Any]]
