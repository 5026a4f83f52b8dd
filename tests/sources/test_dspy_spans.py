"""DSPy programs as their tracers record them: its tools' names, ReAct's ``finish``, its replies.

DSPy's ChatAdapter writes a model's request and reply as ``[[ ## field ## ]]`` sections; its
ReAct agent ends its loop by choosing the ``finish`` tool; OpenInference's instrumentor names a
tool's span ``<Tool.name>.__call__`` and writes no ``tool.name``, and a retriever's
``<class>.forward`` (``Retrieve``) or ``<class>.__call__`` (``ColBERTv2``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.sources._envelope import dspy_fields
from knowledgepulse.sources.otel import to_trace
from knowledgepulse.sources.otel.spans import Span
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file
from tests.sources.test_otel_dialects import span, steps

CORPUS = Path(__file__).parents[1] / "conformance" / "files"


def _trace(path: Path) -> ReasoningTrace:
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem)
    return item.trace


def test_a_dspy_react_run_traced_by_openinference_calls_its_tools_by_name_finish_none() -> None:
    """``otlp/openinference_dspy_react.json``: the tool spans are ``add.__call__`` and
    ``finish.__call__``. Before, the tools were ``add.__call__`` and ``finish.__call__``, and
    each thought was the model's reply, ``[[ ## next_thought ## ]]`` markers and all."""
    trace = _trace(CORPUS / "otlp" / "openinference_dspy_react.json")
    assert [(kind, name) for kind, name, _ in steps(trace)] == [
        ("thought", None),
        ("tool_call", "add"),
        ("observation", "add"),
        ("thought", None),  # it chose finish: the outputs are ready, no call
        ("thought", None),  # the extract step's reasoning
        ("thought", None),  # the answer
    ]
    thoughts = [content for kind, _, content in steps(trace) if kind == "thought"]
    assert not any("[[ ##" in thought for thought in thoughts)
    assert trace.outcome.result_summary == "4"


@pytest.mark.parametrize(
    ("path", "answer"),
    [("otlp/openinference_dspy_react.json", "4"), ("mlflow/dspy_react_tool_error.json", "Paris")],
)
def test_a_dspy_react_thought_is_its_reasoning_and_the_answer_is_said_once(
    path: str, answer: str
) -> None:
    """A ReAct reply's ``next_tool_name`` and ``next_tool_args`` are its call (a step of its
    own; ``finish``: none), and the extract step's ``answer`` field is the answer. Before, each
    thought ended in the call it made (``add\\n\\n{"x": 2, "y": 2}``, ``finish\\n\\n{}``)
    and the extract step's thought ended in the answer, said again as the last turn."""
    trace = _trace(CORPUS / path)
    thoughts = [content for kind, _, content in steps(trace) if kind == "thought"]
    called = {step.tool.name for step in trace.steps if step.tool} | {"finish"}
    assert not any(line in called for thought in thoughts for line in thought.split("\n"))
    assert [thought for thought in thoughts if answer in thought.split("\n")] == [answer]
    assert trace.outcome.result_summary == answer


def test_a_dspy_react_run_traced_by_mlflow_tells_its_replies_field_values() -> None:
    """``mlflow/dspy_react_tool_error.json``: a ``DummyLM``'s completions, ChatAdapter replies,
    are their fields' values."""
    trace = _trace(CORPUS / "mlflow" / "dspy_react_tool_error.json")
    thoughts = [content for kind, _, content in steps(trace) if kind == "thought"]
    assert thoughts[0] == "I should look up the capital of France with the tool."
    assert not any("[[ ##" in thought for thought in thoughts)


def _tool(name: str, output: Any, **at: Any) -> Span:
    """A TOOL span as OpenInference's DSPy instrumentor writes it (``_ToolCallWrapper``)."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "TOOL",
        "input.value": json.dumps({"kwargs": {"q": "Oslo"}}),
        "output.value": json.dumps(output),
    }
    return span(name, attributes, **at)


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("search.__call__", "search"),  # Tool.__call__
        ("search.acall", "search"),  # Tool.acall
        ("Tool.__call__", "Tool"),  # a tool without a name: the class's
        ("search", "search"),  # no method: the span's name, as before
    ],
)
def test_an_openinference_tool_span_of_dspy_is_named_by_its_tool(name: str, tool: str) -> None:
    root = span("ReAct.forward", {"openinference.span.kind": "CHAIN"}, start=0)
    trace = to_trace([root, _tool(name, "Oslo is cold", start=1, parent=root)]).trace
    assert [(kind, called) for kind, called, _ in steps(trace)] == [
        ("tool_call", tool),
        ("observation", tool),
    ]


def test_a_tool_span_that_names_its_tool_keeps_that_name() -> None:
    """LlamaIndex's ``FunctionTool.acall`` spans write ``tool.name``: it wins."""
    root = span("agent", {"openinference.span.kind": "AGENT", "input.value": "Weather?"}, start=0)
    tool = _tool("FunctionTool.acall", "cold", start=1, parent=root)
    tool = dataclasses.replace(tool, attributes={**tool.attributes, "tool.name": "w"})
    assert [name for _, name, _ in steps(to_trace([root, tool]).trace)] == ["w", "w"]


def test_a_dspy_retriever_is_named_by_its_class_not_its_method() -> None:
    """OpenInference's DSPy spans: ``Retrieve.forward`` around ``ColBERTv2.__call__`` (its test)."""
    question = "What's the capital of the United States?"
    module = span("RAG.forward", {"openinference.span.kind": "CHAIN"}, start=0)
    retrieve = span(
        "Retrieve.forward",
        {
            "openinference.span.kind": "RETRIEVER",
            "input.value": json.dumps({"query_or_queries": question}),
            "retrieval.documents.0.document.content": "Washington, D.C. is the capital.",
        },
        start=1,
        parent=module,
    )
    colbert = span(
        "ColBERTv2.__call__",
        {
            "openinference.span.kind": "RETRIEVER",
            "input.value": json.dumps({"query": question, "k": 3}),
            "retrieval.documents.0.document.content": "Washington, D.C. is the capital.",
        },
        start=1,
        parent=retrieve,
    )
    told = to_trace([module, retrieve, colbert]).trace
    assert [(kind, tool) for kind, tool, _ in steps(told)][:2] == [
        ("tool_call", "Retrieve"),
        ("observation", "Retrieve"),
    ]
    alone = to_trace([module, dataclasses.replace(colbert, parent_id=module.span_id)]).trace
    assert [step.tool.name for step in alone.steps if step.tool] == ["ColBERTv2", "ColBERTv2"]


def test_dspy_react_s_finish_is_no_tool_call() -> None:
    root = span("ReAct.forward", {"openinference.span.kind": "CHAIN"}, start=0)
    search = _tool("search.__call__", "Oslo is cold", start=1, parent=root)
    finish = _tool("finish.acall", "Completed.", start=2, parent=root)
    trace = to_trace([root, search, finish]).trace
    assert [name for _, name, _ in steps(trace)] == ["search", "search"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "[[ ## reasoning ## ]]\n2 and 2 make 4.\n\n[[ ## answer ## ]]\n4\n\n"
            "[[ ## completed ## ]]",
            "2 and 2 make 4.\n\n4",
        ),
        # ChatAdapter.parse: a marker's line may start the value; a field written twice is the
        # first; leading blanks and what follows the closing marker are no field's value
        ("\n[[ ## answer ## ]] 4\n[[ ## answer ## ]]\n5\n[[ ## completed ## ]]\n", "4"),
        ("The answer is 4.", None),  # no marker first: no DSPy message
        ("Say [[ ## answer ## ]] first", None),
    ],
)
def test_a_dspy_chat_adapter_message_is_its_fields_values(text: str, said: str | None) -> None:
    assert dspy_fields(text) == said


_SYSTEM = (
    "Your input fields are:\n1. `question` (str):\nYour output fields are:\n1. `answer` (str):"
)


def _request(question: str) -> str:
    return (
        f"[[ ## question ## ]]\n{question}\n\nRespond with the corresponding output fields, "
        "starting with the field `[[ ## answer ## ]]`, and then ending with the marker for "
        "`[[ ## completed ## ]]`."
    )


def test_a_dspy_request_sent_after_its_demos_is_the_objective() -> None:
    """DSPy's adapter sends a compiled program's demos as user/assistant turns before the
    request (``Adapter.format``): the request is the last user turn, not the first demo's.
    Only the model call is traced (an OpenAI client's instrumentation): the call's messages
    give the objective. Before, it was the demo's question."""
    sent = [
        ("system", _SYSTEM),
        ("user", _request("What is 1 + 1?")),
        ("assistant", "[[ ## answer ## ]]\n2\n\n[[ ## completed ## ]]"),
        ("user", _request("What is 2 + 2?")),
    ]
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM"}
    for number, (role, content) in enumerate(sent):
        attributes[f"llm.input_messages.{number}.message.role"] = role
        attributes[f"llm.input_messages.{number}.message.content"] = content
    attributes["llm.output_messages.0.message.role"] = "assistant"
    attributes["llm.output_messages.0.message.content"] = (
        "[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]"
    )
    trace = to_trace([span("ChatCompletion", attributes, start=0)]).trace
    assert trace.task.objective == "What is 2 + 2?"
    assert trace.outcome.result_summary == "4"
