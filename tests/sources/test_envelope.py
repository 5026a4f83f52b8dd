"""The envelope every source shares, and the origin of domain and confidence."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.errors import ConversionError, ScorerParameterError
from knowledgepulse.sources import StepBuilder, TraceOptions, _envelope
from knowledgepulse.sources._envelope import assemble
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.value import TraceValueScorer
from tests.sources.helpers import CORPUS, convert_file, has_text, source_of


def one_step() -> StepBuilder:
    builder = StepBuilder()
    builder.tool_result("search", arguments={"q": "x"}, output="found")
    builder.answer("x is found")
    return builder


def convert(**kwargs: object) -> TraceItem:
    settings: dict[str, object] = {
        "source": "test",
        "source_id": "run-1",
        "success": True,
        "options": TraceOptions(),
        "objective": "find x",
        "created_at": 1_700_000_000.0,
    }
    settings.update(kwargs)
    return assemble(one_step(), **settings)  # type: ignore[arg-type]


def test_a_converted_trace_has_the_specs_context() -> None:
    """The spec's ``@context`` (trace-value.md), which the bundled traces carry; before, kp wrote
    the other one it accepts, so converted and bundled traces named two schemas."""
    item = convert()
    assert item.document["@context"] == "https://openknowledgepulse.org/schema/v1"
    assert item.trace.context == item.document["@context"]


def test_the_id_is_the_source_id_so_reimporting_gives_the_same_trace() -> None:
    """kp:trace:<source id>, created_at from the root, private by default."""
    trace = convert().trace
    assert trace.id == "kp:trace:run-1"
    assert trace.metadata.created_at.isoformat() == "2023-11-14T22:13:20+00:00"
    assert (trace.metadata.visibility, trace.metadata.privacy_level) == ("private", "private")
    assert trace.outcome.result_summary == "x is found"
    assert convert().trace == trace


@pytest.mark.parametrize(
    ("options", "metadata", "expected"),
    [
        (TraceOptions(domain="code", confidence=0.9), {"kp.task_domain": "ops"}, ("code", 0.9)),
        (TraceOptions(), {"kp.task_domain": "ops", "kp.confidence": "0.65"}, ("ops", 0.65)),
        (TraceOptions(), {"kp.confidence": 7}, ("default", 0.8)),
        (TraceOptions(), {"kp.confidence": 10**400}, ("default", 0.8)),
        (TraceOptions(), {}, ("default", 0.8)),
    ],
)
def test_domain_and_confidence_come_from_argument_then_metadata_then_default(
    options: TraceOptions, metadata: dict[str, object], expected: tuple[str, float]
) -> None:
    """An out-of-range kp.confidence (one too big for a float too) is ignored, not clamped."""
    trace = convert(options=options, metadata=metadata).trace
    assert (trace.metadata.task_domain, trace.outcome.confidence) == expected


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        ({"kp.confidence": 7}, "kp.confidence is outside [0, 1]"),
        ({"kp.confidence": "7"}, "kp.confidence is outside [0, 1]"),
        ({"kp.confidence": 10**400}, "kp.confidence is not a finite number"),
        ({"kp.confidence": "high"}, "kp.confidence is text, not a number in [0, 1]"),
        ({"kp.confidence": [0.5]}, "kp.confidence is a list, not a number in [0, 1]"),
        ({"kp.task_domain": 3}, "kp.task_domain is a number, not a domain name (text)"),
        ({"kp.task_domain": " "}, "kp.task_domain is blank text, not a domain name (text)"),
    ],
)
def test_a_metadata_value_that_cannot_be_used_is_said(
    metadata: dict[str, object], said: str
) -> None:
    """The run asked for a domain or confidence kp could not take: a warning, not silence."""
    warnings = convert(metadata=metadata).warnings
    assert list(warnings) == [f"metadata {said}: the default is used"]


def test_the_warning_does_not_show_the_metadata_text() -> None:
    """Metadata text may hold a secret; the warning is printed before any redaction."""
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    (warning,) = convert(metadata={"kp.confidence": secret}).warnings
    assert "ABCD" not in warning
    assert "sk-" not in warning


def test_metadata_used_or_overridden_is_not_said() -> None:
    usable = {"kp.confidence": 0.5, "kp.task_domain": "code"}
    assert not convert(metadata=usable).warnings
    overridden = TraceOptions(domain="code", confidence=0.5)
    assert not convert(options=overridden, metadata={"kp.confidence": 7}).warnings


def test_a_failed_run_defaults_to_confidence_0_2() -> None:
    """The TS SDK's parity default."""
    converted = convert(success=False)
    assert converted.trace.outcome.confidence == 0.2
    assert source_of(converted)["confidence_source"] == "default"


def test_the_breakdown_says_where_domain_and_confidence_came_from() -> None:
    """A default is never mistaken for a measurement."""
    converted = convert(options=TraceOptions(domain="code"))
    breakdown = TraceValueScorer(embedder=None).score(converted.trace)
    data = breakdown.to_dict()
    assert data["domain_source"] == "argument"
    assert data["inputs"]["outcome_confidence"]["confidence_source"] == "default"
    assert "the default: the source records none" in breakdown.explain()
    assert "(domain 'code', as given)" in breakdown.explain()


def test_the_explanation_keeps_the_confidence_arithmetic_whole() -> None:
    """``confidence x factor (verb)`` reads in one piece; where it came from follows it."""
    breakdown = TraceValueScorer(embedder=None).score(convert(success=False).trace)
    assert (
        "confidence 0.2000 x 0.3 (failed); the confidence is the default: the source records none"
    ) in breakdown.explain()


def test_a_hand_written_trace_reports_its_values_as_the_traces_own() -> None:
    """Without metadata.source, both origins are 'trace' and the explanation adds nothing."""
    document = convert().trace.model_dump(mode="json", by_alias=True, exclude_none=True)
    del document["metadata"]["source"]
    breakdown = TraceValueScorer(embedder=None).score(document)
    assert breakdown.to_dict()["domain_source"] == "trace"
    assert breakdown.explain().split("\n")[1] == "  profile 'default' (domain 'default')"
    assert "source records none" not in breakdown.explain()


def test_the_objective_falls_back_to_the_agent_name_then_the_framework() -> None:
    """A run with no user text still has a non-empty objective."""
    assert convert(objective=None, fallback_objective="triage-agent").trace.task.objective == (
        "triage-agent"
    )
    assert convert(objective="  ", framework="smolagents").trace.task.objective == (
        "smolagents run"
    )


def test_a_run_with_no_step_cannot_be_converted() -> None:
    """Nothing recorded is an error the readers report, not an invented step."""
    with pytest.raises(ConversionError, match="no step"):
        assemble(StepBuilder(), source="t", source_id="x", success=True, options=TraceOptions())


def test_options_reject_an_empty_domain_and_an_out_of_range_confidence() -> None:
    """The user's own values are checked where they are given."""
    with pytest.raises(ValueError, match="domain"):
        TraceOptions(domain="")
    with pytest.raises(ValueError, match="confidence"):
        TraceOptions(confidence=1.5)


def test_options_of_the_wrong_type_are_refused_by_name_not_crashed_on() -> None:
    """tracer(domain=5) or confidence="high" names the setting (no AttributeError, TypeError)."""
    with pytest.raises(ScorerParameterError, match="domain=5"):
        TraceOptions(domain=5)  # type: ignore[arg-type]
    with pytest.raises(ScorerParameterError, match="confidence"):
        TraceOptions(confidence="high")  # type: ignore[arg-type]
    for limit in (10, 100.5, "8 KB", True):
        with pytest.raises(ScorerParameterError, match=r"text_limit=.*64 or more, or None"):
            TraceOptions(text_limit=limit)  # type: ignore[arg-type]


def test_a_text_limit_cuts_steps_objective_and_answer_and_none_keeps_them_whole() -> None:
    """``text_limit`` bounds every text a trace keeps, in UTF-8 bytes, cut between tokens."""
    long = " ".join(["word"] * 200)  # 999 bytes
    builder = StepBuilder()
    answer = "So: " + long
    builder.thought(long)
    builder.answer(answer)

    def made(limit: int | None) -> ReasoningTrace:
        options = TraceOptions(text_limit=limit)
        kwargs = {"source": "t", "source_id": "x", "success": True, "objective": long}
        return assemble(builder, options=options, **kwargs).trace  # type: ignore[arg-type]

    whole, cut = made(None), made(100)
    assert [step.content for step in whole.steps] == [long, answer]
    assert (whole.task.objective, whole.outcome.result_summary) == (long, answer)
    texts = [*(step.content or "" for step in cut.steps), cut.task.objective]
    texts.append(cut.outcome.result_summary)
    assert all(len(text.encode()) <= 100 and text.endswith("…") for text in texts)


ROOT = Path(__file__).parents[2]
FILES = sorted(
    path
    for folder in (ROOT / "tests" / "sources" / "data", ROOT / "examples" / "datasets")
    for path in folder.rglob("*")
    if path.suffix in (".json", ".jsonl", ".parquet")
)


@pytest.mark.parametrize("path", FILES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_converted_traces_document_is_its_model_dump_byte_for_byte(path: Path) -> None:
    """``document`` is written instead of a dump of the model: they must not differ, key order
    included (kp convert's output would change)."""
    for item in convert_file(path):
        if isinstance(item, TraceItem):
            dumped = item.trace.model_dump(mode="json", by_alias=True, exclude_none=True)
            assert orjson.dumps(item.document) == orjson.dumps(dumped)


SMOLAGENTS_PLANNING = (
    Path(__file__).parents[1] / "conformance" / "files" / "otlp"
) / "openinference_openai_smolagents_planning.json"


def test_smolagents_traced_only_through_its_model_client_has_the_task_as_objective() -> None:
    """Each model call of a smolagents run seen only by the OpenAI instrumentor is a trace; the
    first user message is smolagents' planning prompt, then its ``New task:`` step: the task
    inside them is the objective, never the template."""
    traces = [
        item.trace for item in convert_file(SMOLAGENTS_PLANNING) if isinstance(item, TraceItem)
    ]
    assert len(traces) == 3
    assert {trace.task.objective for trace in traces} == {"What is the temperature in Tokyo?"}


@given(st.text(min_size=1).filter(lambda text: text.strip() and "```" not in text))
def test_a_task_in_smolagents_framing_is_the_objective_as_the_person_wrote_it(task: str) -> None:
    """Whatever the task, ``New task:`` and the planning prompt around it are taken off."""
    planning = f"You are a world expert...\n---\nNow begin! Here is your task:\n```\n{task}\n```\n"
    for framed in (f"New task:\n{task}", planning + "First in part 1, write the facts survey."):
        assert convert(objective=framed).trace.task.objective == task.strip()


def test_text_no_framework_framed_is_the_objective_as_written() -> None:
    """A request that only mentions a task keeps its words."""
    text = "Here is my new task: plan the sprint."
    assert convert(objective=text).trace.task.objective == text


class _Searched:
    """A framing's pattern that notes each text it searches."""

    def __init__(self, pattern: re.Pattern[str], searched: list[str]) -> None:
        self.pattern, self.searched = pattern, searched

    def search(self, text: str) -> re.Match[str] | None:
        self.searched.append(self.pattern.pattern)
        return self.pattern.search(text)


def test_a_framings_pattern_searches_only_a_request_with_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request no framework framed is searched by no pattern (one that may start anywhere cost
    a long request 100 microseconds); a framed one by those whose words it holds."""
    searched: list[str] = []
    framings = [
        (words, at_start, _Searched(pattern, searched))
        for words, at_start, pattern in _envelope._FRAMINGS
    ]
    monkeypatch.setattr(_envelope, "_FRAMINGS", tuple(framings))
    text = "Please handle the invoice for the customer, then tell me the task. " * 50
    assert convert(objective=text).trace.task.objective == text
    assert searched == []
    planning = "Now begin! Here is your task:\n```\nFind the invoice.\n```\n"
    assert convert(objective=planning).trace.task.objective == "Find the invoice."
    assert searched == [framings[1][2].pattern.pattern]


def _called_only() -> StepBuilder:
    builder = StepBuilder()
    builder.tool_request("lookup_order", {"id": "A-1187"}, call_id="c1")
    return builder


@pytest.mark.parametrize(
    ("objective", "fallback", "warned"),
    [
        ("Where is order A-1187?", None, False),  # the user's words are message text
        (None, "support_agent", True),  # an agent's name is nobody's words
        (None, None, True),  # the placeholder ("test run")
        ("openai run", None, True),  # a placeholder a source passed as the objective
    ],
)
def test_a_run_that_only_called_a_tool_holds_text_when_its_objective_is_the_users(
    objective: str | None, fallback: str | None, *, warned: bool
) -> None:
    """A reply that only calls a tool (its result not recorded) gives no step text, but the
    request it answered is the user's words: no warning that the trace holds no message text.
    Before, the OpenTelemetry GenAI tool-call traces of tests/conformance/files/otlp/
    genai_interlingua_*_tool_call.json and an interrupted LangGraph run were warned of so."""
    item = assemble(
        _called_only(),
        source="test",
        source_id="run-1",
        success=True,
        options=TraceOptions(),
        objective=objective,
        fallback_objective=fallback,
        framework="test",
    )
    assert any("hold no message text" in warning for warning in item.warnings) is warned


@pytest.mark.parametrize(
    "name",
    [
        "otlp/genai_interlingua_litellm_acompletion_tool_call.json",
        "otlp/genai_interlingua_otel_util_genai_tool_call.json",
        "langsmith/langgraph_interrupt_then_resumed.json",
    ],
)
def test_corpus_runs_asked_in_words_are_not_said_to_hold_no_text(name: str) -> None:
    """Each trace of these files has the user's request as its objective, whatever its steps."""
    items = convert_file(CORPUS / name)
    assert items
    for item in items:
        assert isinstance(item, TraceItem)
        assert has_text(item), (item.trace.task.objective, item.warnings)


_DSPY_REACT_REQUEST = (
    "[[ ## question ## ]]\nWhat is 2 + 2?\n\n[[ ## trajectory ## ]]\n\n\n"
    "Respond with the corresponding output fields, starting with the field `[[ ## next_thought "
    "## ]]`, then `[[ ## next_tool_name ## ]]` (must be formatted as a valid Python "
    "Literal['add', 'finish']), and then ending with the marker for `[[ ## completed ## ]]`."
)


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        (_DSPY_REACT_REQUEST, "What is 2 + 2?"),  # ReAct's empty trajectory is no words
        (  # two input fields, JSONAdapter's reminder
            "[[ ## context ## ]]\nParis is in France.\n\n[[ ## question ## ]]\nWhere is Paris?"
            "\n\nRespond with a JSON object in the following order of fields: `answer`.",
            "Paris is in France.\n\nWhere is Paris?",
        ),
        (  # DSPy 2.5's reminder named the fields without their markers
            "[[ ## question ## ]]\nWhat is 1 + 1?\n\nRespond with the corresponding output "
            "fields, starting with the field `answer`, and then ending with the marker for "
            "`completed`.",
            "What is 1 + 1?",
        ),
        ("Explain [[ ## question ## ]] markers", "Explain [[ ## question ## ]] markers"),
    ],
)
def test_a_dspy_adapter_request_asks_its_input_fields_values(text: str, asked: str) -> None:
    """DSPy's ChatAdapter writes a call's request as ``[[ ## field ## ]]`` sections and a reminder
    of the output fields: the objective is the input fields' values. Before, it was the prompt."""
    assert convert(objective=text).trace.task.objective == asked


def test_a_dspy_react_run_traced_by_openinference_asks_the_users_question() -> None:
    """``otlp/openinference_dspy_react.json``: ReAct's module span records its arguments as
    ``{"input_args": {...}}`` and its model calls are sent DSPy's prompts; the objective was the
    first one, ``[[ ## question ## ]]`` markers and all."""
    (item,) = convert_file(CORPUS / "otlp" / "openinference_dspy_react.json")
    assert isinstance(item, TraceItem)
    assert item.trace.task.objective == "What is 2 + 2?"
