"""The compiled check agrees with the models: what it accepts, they accept, and scoring agrees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from knowledgepulse.records.strict_json import loads_bytes
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import LoadedTrace, load_traces
from knowledgepulse.trace.models import ReasoningTrace
from knowledgepulse.trace.views import TraceView, decode_view, trace_view
from knowledgepulse.value import TraceValueScorer
from knowledgepulse.value.dimensions import TraceFeatures
from tests.builders import trace_json
from tests.trace.strategies import mutated_documents, nearly_valid_documents

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "traces" / "traces.jsonl"


def _model_or_none(document: Any) -> ReasoningTrace | None:
    try:
        return ReasoningTrace.model_validate(document)
    except ValidationError:
        return None


@settings(max_examples=400, deadline=None)
@given(document=nearly_valid_documents() | mutated_documents())
def test_a_view_is_made_only_of_what_the_models_accept(document: dict[str, Any]) -> None:
    """Whenever the check accepts a document, the models do, and both score it the same."""
    view = trace_view(document)
    if view is None:
        return
    model = _model_or_none(document)
    assert model is not None, "the compiled check accepted a trace the models refuse"
    assert TraceFeatures.of(view) == TraceFeatures.of(model)
    assert (view.id, view.metadata.task_domain) == (model.id, model.metadata.task_domain)


@st.composite
def trace_lines(draw: st.DrawFn) -> bytes:
    """A near-valid or mutated trace as one JSON Lines line, written in one of several ways."""
    document = draw(nearly_valid_documents() | mutated_documents())
    text = json.dumps(document, ensure_ascii=draw(st.booleans()))
    twist = draw(st.sampled_from(["none", "repeat", "escape", "null", "nest"]))
    if twist == "repeat":  # a repeated key, which json.dumps cannot write
        text = text.replace('"task": {', '"task": {"objective": "x", ', 1)
    elif twist == "escape":  # a colon written as an escape
        text = text.replace('"kp:trace:', '"kp\\u003atrace:', 1)
    elif twist == "null":  # an optional field given as null
        text = text.replace('"type": "thought"', '"type": "thought", "content": null', 1)
    elif twist == "nest":
        text = text.replace('"Lisbon"', "[" * 120 + "]" * 120, 1)
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=400, deadline=None)
@given(line=trace_lines())
def test_a_line_decoded_in_one_pass_is_read_as_the_usual_path_reads_it(line: bytes) -> None:
    """decode_view accepts a line only if strict parsing, the check and the models agree."""
    view = decode_view(line)
    if view is None:
        return
    notes: list[str] = []
    value = loads_bytes(line, notes)  # raises if the usual path would refuse the line
    assert notes == []
    assert trace_view(value) == view
    assert _model_or_none(value) is not None


def _with_input(document: dict[str, Any], value: Any, *, depth: int) -> bytes:
    """The trace with ``value`` as its second step's input, wrapped in lists to ``depth``."""
    for _ in range(depth):
        value = [value]
    document["steps"][1]["input"] = {"query": value}
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    "line",
    [
        b'{"id": "kp:trace:a", "id": "kp:trace:b"}',
        json.dumps(trace_json()).replace('"task": {', '"task": {"objective": "x", ').encode(),
        json.dumps(trace_json(note="an extra")).encode(),
        json.dumps(trace_json()).replace('"done"', '"\\ud800"').encode(),
        json.dumps(trace_json()).replace('"confidence": 1.0', '"confidence": 1e999').encode(),
        _with_input(trace_json(), [[[["deep"]]]], depth=100),
    ],
    ids=["repeated-id", "repeated-key", "extra", "lone-surrogate", "overflow", "too-deep"],
)
def test_lines_the_one_pass_leaves_to_the_usual_path(line: bytes) -> None:
    """Repeated keys, extras, lone surrogates, overflowing numbers: not decoded in one pass."""
    assert decode_view(line) is None


def test_a_long_shallow_trace_takes_the_one_pass() -> None:
    """Over a hundred objects and lists, none deep: one pass, read as the usual path reads it."""
    document = trace_json(step_list=[])
    document["steps"] = [
        {"step_id": i, "type": "tool_call", "tool": {"name": "sql"}, "input": {"q": [i]}}
        for i in range(60)
    ]
    line = json.dumps(document).encode()
    view = decode_view(line)
    assert view is not None
    assert trace_view(loads_bytes(line)) == view


def test_an_extra_field_is_read_through_the_usual_path_and_kept(tmp_path: Path) -> None:
    """A line the one pass leaves is still a trace, its extras in the record and the model."""
    path = tmp_path / "extra.jsonl"
    path.write_text(json.dumps(trace_json(note="kept")) + "\n", "utf-8")
    (loaded,) = load_traces([path])
    assert isinstance(loaded, LoadedTrace)
    assert loaded.record.value["note"] == "kept"


def test_ordinary_traces_get_a_view() -> None:
    """The bundled examples take the one pass (else it would save nothing)."""
    lines = EXAMPLES.read_bytes().splitlines()
    assert all(decode_view(line) is not None for line in lines)
    assert all(trace_view(json.loads(line)) is not None for line in lines)


@pytest.mark.parametrize(
    ("changes", "models_accept"),
    [
        ({"steps": [{"step_id": 1.0, "type": "thought"}]}, True),  # integral float id
        ({"metadata": {"created_at": "2026-11-23t08:00:00z"}}, True),  # lower-case T and Z
        ({"metadata": {"created_at": "2026-11-23T08:00:00.1234567Z"}}, None),  # 7 digits
        ({"metadata": {"created_at": "2026-02-30T08:00:00Z"}}, False),  # no such day
        ({"metadata": {"created_at": "2026-11-23T08:00:00"}}, False),  # no zone
    ],
)
def test_what_the_check_leaves_goes_to_the_models(
    changes: dict[str, Any], models_accept: bool | None
) -> None:
    """Valid in a rarer way or invalid: no view; the models decide (and explain)."""
    document = trace_json()
    for key, value in changes.items():
        if key == "metadata":
            document["metadata"].update(value)
        else:
            document[key] = value
    assert trace_view(document) is None
    if models_accept is not None:
        assert (_model_or_none(document) is not None) is models_accept


def test_metadata_source_is_read_from_a_view_as_from_the_model() -> None:
    """A converted trace's recorded origins reach the breakdown by either path."""
    document = trace_json()
    document["metadata"]["source"] = {"domain_source": "argument", "confidence_source": "default"}
    view = trace_view(document)
    model = ReasoningTrace.model_validate(document)
    assert view is not None
    features = TraceFeatures.of(view)
    assert (features.domain_source, features.confidence_source) == ("argument", "default")
    assert features == TraceFeatures.of(model)


@pytest.mark.parametrize("extra", [{}, {"note": "kept"}], ids=["one-pass", "usual-path"])
def test_loaded_traces_build_their_record_and_model_on_demand(
    tmp_path: Path, extra: dict[str, str]
) -> None:
    """load_traces keeps the view for scoring; .record and .trace give the whole document."""
    document = trace_json() | extra
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(document) + "\n", "utf-8")
    (loaded,) = load_traces([path])
    assert isinstance(loaded, LoadedTrace)
    assert isinstance(loaded.scorable, TraceView)
    assert loaded.record.value == document
    assert (loaded.trace.model_extra or {}) == extra
    assert loaded.trace is loaded.trace
    # Once the model is made it is what scores: a run holding every trace keeps one of the two.
    scorable: object = loaded.scorable  # no longer the view narrowed above
    assert scorable is loaded.trace
    assert str(loaded.location) == f"{path}:1"


def test_a_view_scores_as_its_model_with_and_without_an_embedder() -> None:
    """iter_scores takes views: the same breakdowns as the models give."""
    documents = [json.loads(line) for line in EXAMPLES.read_text("utf-8").splitlines()]
    views = [trace_view(document) for document in documents]
    models = [ReasoningTrace.model_validate(document) for document in documents]
    assert all(view is not None for view in views)
    for embedder in (None, HashingEmbedder()):
        by_view = TraceValueScorer(embedder=embedder).score_many([v for v in views if v])
        by_model = TraceValueScorer(embedder=embedder).score_many(models)
        assert by_view == by_model
