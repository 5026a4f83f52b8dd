"""Model calls traced with their provider's own request and reply: Bedrock Converse, Anthropic.

``mlflow.bedrock.autolog()`` keeps a ``converse`` call's request and response as they are:
content blocks named by their one key (``text``, ``toolUse``, ``toolResult`` with a ``status``,
``reasoningContent``), the reply under ``output.message``. Anthropic's ``tool_result`` block
says a failed tool ``is_error``. Files: ``tests/conformance/files/mlflow/bedrock_*`` and
``anthropic_*`` (``SOURCES.md``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import CORPUS, convert_file

BEDROCK = CORPUS / "mlflow" / "bedrock_converse_tool_error.json"
ANTHROPIC = CORPUS / "mlflow" / "anthropic_tool_with_thinking.json"


def _trace(path: Path) -> ReasoningTrace:
    return _trace_of(path, "mlflow")


def _trace_of(path: Path, source: str) -> ReasoningTrace:
    items = convert_file(path, source=source)
    assert [item for item in items if isinstance(item, Problem)] == []
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    return trace


def _steps(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def _untooled(source: Path, tmp_path: Path, change: Any = None) -> Path:
    """The trace with its ``TOOL`` spans left out (only the model calls traced)."""
    document = json.loads(source.read_text())
    spans = document["data"]["spans"]
    document["data"]["spans"] = [
        span for span in spans if span["attributes"].get("mlflow.spanType") != '"TOOL"'
    ]
    if change is not None:
        change(document["data"]["spans"])
    path = tmp_path / source.name
    path.write_text(json.dumps(document))
    return path


def test_a_bedrock_converse_reply_gives_the_model_s_text_and_its_tool_calls() -> None:
    trace = _trace(BEDROCK)
    assert _steps(trace) == [
        ("thought", None),
        ("tool_call", "get_capital"),
        ("observation", "get_capital"),
        ("error_recovery", None),
        ("thought", None),
    ]
    # Nova's <thinking> blocks are reasoning (the recovery), the text after them the answer.
    assert (trace.steps[0].content or "").startswith("To determine the capital of France")
    assert (trace.steps[3].content or "").startswith("It appears that there was an error")
    assert trace.steps[1].input == {"country": "France"}
    assert trace.outcome.result_summary == (
        "The capital of France is Paris. If you need any further information, feel free to ask!"
    )


def test_a_converse_tool_result_with_status_error_is_a_failed_call(tmp_path: Path) -> None:
    """No tool span: the call is the reply's ``toolUse``, its result the next request's
    ``toolResult``, whose ``status`` says it failed (its text need not)."""
    trace = _trace(_untooled(BEDROCK, tmp_path))
    assert _steps(trace) == [
        ("thought", None),
        ("tool_call", "get_capital"),
        ("observation", "get_capital"),
        ("error_recovery", None),
        ("thought", None),
    ]
    assert trace.steps[2].content == "The country is not supported: France"


def test_an_anthropic_tool_result_marked_is_error_is_a_failed_call(tmp_path: Path) -> None:
    def failed(spans: list[dict[str, Any]]) -> None:
        second = [span for span in spans if span["name"] == "Messages.create"][1]
        inputs = json.loads(second["attributes"]["mlflow.spanInputs"])
        result = inputs["messages"][2]["content"][0]
        result.update(content="lookup refused", is_error=True)
        second["attributes"]["mlflow.spanInputs"] = json.dumps(inputs)

    untooled = _trace(_untooled(ANTHROPIC, tmp_path))
    assert [kind for kind, _ in _steps(untooled)][-2:] == ["observation", "thought"]
    trace = _trace(_untooled(ANTHROPIC, tmp_path, failed))
    assert _steps(trace) == [
        ("thought", None),
        ("thought", None),
        ("tool_call", "get_user_country"),
        ("observation", "get_user_country"),
        ("error_recovery", None),
    ]
    assert trace.steps[3].content == "lookup refused"


GEMINI = CORPUS / "mlflow" / "gemini_google_model_retry.json"


def test_a_gemini_response_s_function_calls_and_the_next_request_s_responses_are_read(
    tmp_path: Path,
) -> None:
    """``mlflow.gemini.autolog()``'s spans keep the ``GenerateContentResponse``
    (``candidates[0].content.parts``) and the request's ``contents``: with no tool span, the
    calls and their results (``function_response``, ``{"error": ...}`` for the failed one) are
    theirs; with the tool spans, each call is told once (MLflow nests the SDK's
    ``_generate_content`` span inside ``generate_content``, both model calls)."""
    retry = [
        ("tool_call", "get_capital"),
        ("observation", "get_capital"),
        ("error_recovery", "get_capital"),
        ("observation", "get_capital"),
        ("thought", None),
    ]
    assert _steps(_trace(GEMINI)) == retry
    untooled = _trace(_untooled(GEMINI, tmp_path))
    assert _steps(untooled) == retry
    assert untooled.steps[2].input == {"country": "La France"}
    assert untooled.outcome.result_summary == "Paris"


RESPONSES = CORPUS / "mlflow" / "openai_responses_parallel_tool_error.json"


def test_a_responses_call_asked_beside_a_failed_one_is_no_recovery(tmp_path: Path) -> None:
    """``client.responses.create`` traced by ``mlflow.openai.autolog()``: the response's
    ``function_call`` items are the model's calls, both of one turn; the one beside the failed
    call was asked before the error was seen, so the model's next reply is the recovery."""
    assert _steps(_trace(RESPONSES)) == [
        ("tool_call", "get_location"),
        ("observation", "get_location"),
        ("tool_call", "get_location"),
        ("observation", "get_location"),
        ("error_recovery", None),
    ]
    untooled = _trace(_untooled(RESPONSES, tmp_path))
    assert _steps(untooled) == [
        ("tool_call", "get_location"),
        ("observation", "get_location"),
        ("tool_call", "get_location"),
        ("observation", "get_location"),
        ("thought", None),
    ]
    assert [step.input for step in untooled.steps if step.type == "tool_call"] == [
        {"loc_name": "Londos"},
        {"loc_name": "London"},
    ]
    assert untooled.steps[3].content == '{"lat": 51, "lng": 0}'


DSPY = CORPUS / "mlflow" / "dspy_react_tool_error.json"


def test_a_dspy_react_run_names_its_tools_and_tells_the_model_s_completions() -> None:
    """``mlflow.dspy.autolog()``: a tool span is named ``Tool.<name>`` and keeps the tool
    object's ``name``; a language model's span outputs its completions, a list of texts."""
    trace = _trace(DSPY)
    assert _steps(trace) == [
        ("thought", None),
        ("tool_call", "get_capital"),
        ("observation", "get_capital"),
        ("thought", None),
        ("error_recovery", "get_capital"),
        ("observation", "get_capital"),
        ("thought", None),
        ("thought", None),
        ("thought", None),
    ]
    assert "I should look up the capital of France" in (trace.steps[0].content or "")
    assert trace.outcome.result_summary == "Paris"


def test_langsmith_results_of_untraced_tools_are_read_from_the_next_request(
    tmp_path: Path,
) -> None:
    """A ``@traceable`` agent whose tool is not traced: the ``tool`` messages the next model
    call was sent are the results, ``Error: ...`` a failed call; a traced tool is told once."""
    source = CORPUS / "langsmith" / "traceable_google_model_retry.json"
    batches = json.loads(source.read_text())
    for batch in batches:
        for kind in batch:
            batch[kind] = [run for run in batch[kind] if run.get("run_type") != "tool"]
    path = tmp_path / "untraced.json"
    path.write_text(json.dumps(batches))
    retry = [
        ("tool_call", "get_capital"),
        ("observation", "get_capital"),
        ("error_recovery", "get_capital"),
        ("observation", "get_capital"),
        ("thought", None),
    ]
    for file in (path, source):
        assert _steps(_trace_of(file, "langsmith")) == retry
    untraced = _trace_of(path, "langsmith")
    assert (untraced.steps[1].content or "").startswith("Error: The country is not supported")


def test_langsmith_an_anthropic_tool_result_marked_is_error_is_a_failed_call(
    tmp_path: Path,
) -> None:
    """``wrap_anthropic``'s runs, the tool not traced: the next request's ``tool_result``
    block is the result, ``is_error`` a failure (its text need not say so)."""
    source = CORPUS / "langsmith" / "traceable_anthropic_tool_with_thinking.json"
    batches = json.loads(source.read_text())
    for batch in batches:
        for kind in batch:
            batch[kind] = [run for run in batch[kind] if run.get("run_type") != "tool"]
            for run in batch[kind]:
                messages = run.get("inputs", {}).get("messages", [])
                if run.get("run_type") == "llm" and len(messages) > 2:
                    messages[2]["content"][0].update(content="lookup refused", is_error=True)
    path = tmp_path / "untraced.json"
    path.write_text(json.dumps(batches))
    trace = _trace_of(path, "langsmith")
    assert _steps(trace) == [
        ("thought", None),  # the thinking the next request sends back with the call
        ("thought", None),
        ("tool_call", "get_user_country"),
        ("observation", "get_user_country"),
        ("error_recovery", None),
    ]
    assert trace.steps[3].content == "lookup refused"
