"""Shapes a sweep of agent frameworks' OpenTelemetry spans found kp reading wrong.

OpenLLMetry's Agno instrumentation records a tool's output as ``str()`` of Agno's
``FunctionExecutionResult`` (pydantic's fields, a space apart) and ends the span OK when the
tool raised; OpenInference's Haystack instrumentor dumps messages as ``ChatMessage`` reprs,
flattening a tool message to its role alone, and a pipeline's output is keyed by component.
"""

from __future__ import annotations

import json

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.sources._steps import python_fields
from knowledgepulse.sources.otel import messages as msg
from knowledgepulse.sources.otel import to_trace
from knowledgepulse.sources.otel._haystack import chat_message
from knowledgepulse.sources.otel.spans import Span
from knowledgepulse.trace import ReasoningTrace
from tests.sources.helpers import CORPUS
from tests.sources.test_otel_dialects import span, steps

ASKED = "Calculate 2+2 and check weather in NYC"
ANSWER = "2 + 2 is 4. The weather service is down for New York City."


def _agno_run(weather_output: str) -> ReasoningTrace:
    """OpenLLMetry's Agno spans: an agent span over two tool spans, every span OK."""
    agent = span(
        "Assistant Agent.agent",
        {
            "traceloop.span.kind": "agent",
            "gen_ai.agent.name": "Assistant Agent",
            "traceloop.entity.input": ASKED,
            "traceloop.entity.output": ANSWER,
        },
        start=0,
    )

    def tool(name: str, arguments: str, output: str, start: int) -> Span:
        return span(
            f"{name}.tool",
            {
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": name,
                "gen_ai.tool.name": name,
                "traceloop.entity.input": arguments,
                "traceloop.entity.output": output,
            },
            start=start,
            parent=agent,
        )

    calculator = tool(
        "calculator",
        '{"a": 2, "b": 2}',
        "status='success' result=4 error=None updated_session_state=None images=None",
        1,
    )
    weather = tool("weather_lookup", '{"city": "New York City"}', weather_output, 2)
    return to_trace([agent, calculator, weather]).trace


def test_agno_execution_result_is_unwrapped_and_its_failure_read() -> None:
    """Before: the observations were the reprs (``status='success' result=4 ...``) and the
    failed call an ordinary result (the span ended OK): the answer a plain thought. Now the
    result is what the model was sent, and ``status='failure'`` fails the call with its error."""
    trace = _agno_run(
        "status='failure' result=None error='Weather service down for: New York City' "
        "updated_session_state=None images=None"
    )
    assert steps(trace) == [
        ("tool_call", "calculator", 'calculator {"a":2,"b":2}'),
        ("observation", "calculator", "4"),
        ("tool_call", "weather_lookup", 'weather_lookup {"city":"New York City"}'),
        ("observation", "weather_lookup", "Weather service down for: New York City"),
        ("error_recovery", None, ANSWER),
    ]
    assert trace.metadata.success is True


def test_agno_success_with_text_result_is_the_text() -> None:
    trace = _agno_run("status='success' result='Sunny, 21 C' error=None images=None")
    assert steps(trace)[3] == ("observation", "weather_lookup", "Sunny, 21 C")
    assert steps(trace)[-1][0] == "thought"


def test_python_fields_reads_only_a_model_str() -> None:
    assert python_fields("status='success' result=[1, 2] error=None") == {
        "status": "success",
        "result": [1, 2],
        "error": None,
    }
    # Text with an "=" in it is no model: one field, words between, a call, more than one line.
    for text in ("a=1", "x=1 and y=2", "The result x=1 y=2", "a=f(1) b=2", "a=1\nb=2", ""):
        assert python_fields(text) is None, text


HAYSTACK = CORPUS / "otlp" / "openinference_haystack_agent_search.json"


def test_haystack_chat_message_repr() -> None:
    tool_message = (
        "ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result='boom', "
        "origin=ToolCall(tool_name='search', arguments={'query': 'x'}, id='call_1', extra=None), "
        "error=True)], _name=None, _meta={})"
    )
    assert chat_message(tool_message) == {
        "role": "tool",
        "parts": [
            {
                "type": "tool_call_response",
                "id": "call_1",
                "name": "search",
                "response": "boom",
                "is_error": True,
            }
        ],
    }
    assert chat_message("ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[") is None
    assert chat_message("Not a message") is None


def test_haystack_agent_result_and_answer() -> None:
    """Before: no observation for ``search`` (its result is only in the reprs) and the answer
    was the pipeline's output JSON (``{"agent": {"messages": [...]}}``). Now the result is read
    from the next model call's ``input.value`` and the answer is the agent's last message."""
    (item,) = sources.convert([json.loads(HAYSTACK.read_text())], source="otlp")
    assert not isinstance(item, Problem), item
    trace = item.trace
    assert steps(trace) == [
        ("tool_call", "search", 'search {"query":"Python tutorials"}'),
        (
            "observation",
            "search",
            "{'results': [\"Found results for 'Python tutorials' (user: Alice)\"]}",
        ),
        (
            "thought",
            None,
            'I found some results for "Python tutorials." Would you like more specific '
            "information about them?",
        ),
    ]
    assert trace.outcome.result_summary == steps(trace)[-1][2]
    assert trace.task.objective == "Search for Python tutorials"


def test_haystack_pipeline_output_without_a_reply_is_kept_as_written() -> None:
    """An output keyed by component that holds no message is the output as it is."""
    output = json.dumps({"ranker": {"documents": []}})
    root = span(
        "Pipeline.run",
        {"openinference.span.kind": "CHAIN", "input.value": "find", "output.value": output},
        start=0,
    )
    assert to_trace([root]).trace.outcome.result_summary == output


def _adk_tool_run(response: dict[str, object]) -> ReasoningTrace:
    """OpenInference's Google ADK spans: a model call asking for a tool, its TOOL span (ended
    OK) whose output is ADK's function response, then the answer."""
    agent = span(
        "agent_run [stock_agent]",
        {"openinference.span.kind": "AGENT", "agent.name": "stock_agent"},
        start=0,
    )
    model = span(
        "call_llm",
        {
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Price of XYZ?",
            "llm.output_messages.0.message.role": "model",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "adk-1",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_price",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
                '{"ticker": "XYZ"}'
            ),
        },
        start=1,
        parent=agent,
    )
    tool = span(
        "execute_tool get_price",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "get_price",
            "input.value": '{"ticker": "XYZ"}',
            "output.value": json.dumps({"id": "adk-1", "name": "get_price", "response": response}),
        },
        start=2,
        parent=agent,
    )
    answer = span(
        "call_llm",
        {
            "openinference.span.kind": "LLM",
            "llm.output_messages.0.message.role": "model",
            "llm.output_messages.0.message.content": "I could not find XYZ.",
        },
        start=3,
        parent=agent,
    )
    return to_trace([agent, model, tool, answer]).trace


def test_adk_function_response_is_unwrapped() -> None:
    """Before: the observation was ADK's whole function response (the call's id, the tool's
    name) and an ``error`` inside it failed nothing. Now the result is its ``response``."""
    worked = _adk_tool_run({"price": 12})
    assert steps(worked)[1] == ("observation", "get_price", '{"price": 12}')
    failed = _adk_tool_run({"error": "ticker not found"})
    assert [kind for kind, _, _ in steps(failed)] == [
        "tool_call",
        "observation",
        "error_recovery",
    ]
    assert steps(failed)[1][2] == "ticker not found"


def _llama_index_run(tool_output: dict[str, object]) -> ReasoningTrace:
    """OpenLLMetry's LlamaIndex spans: the workflow, a ``task`` step, the tool's ``task`` run
    whose output is LlamaIndex's ``ToolOutput``, and the answer."""
    workflow = span(
        "ReActAgent.workflow",
        {
            "traceloop.span.kind": "workflow",
            "traceloop.entity.name": "ReActAgent.workflow",
            "traceloop.entity.input": json.dumps({"user_msg": "What is 2 times 3?"}),
        },
        start=0,
    )
    step = span(
        "BaseWorkflowAgent.task",
        {"traceloop.span.kind": "task", "tool.name": "multiply"},
        start=1,
        parent=workflow,
    )
    ran = span(
        "FunctionTool.task",
        {
            "traceloop.span.kind": "task",
            "traceloop.entity.name": "FunctionTool.task",
            "traceloop.entity.input": json.dumps({"kwargs": {"a": 2, "b": 3}}),
            "traceloop.entity.output": json.dumps(tool_output),
        },
        start=2,
        parent=step,
    )
    model = span(
        "openai.chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "It is 6."}]}]
            ),
        },
        start=3,
        parent=workflow,
    )
    return to_trace([workflow, step, ran, model]).trace


def test_llama_index_tool_run_is_a_call() -> None:
    """Before: the ``FunctionTool.task`` span was plumbing, as every ``task`` span: no call.
    Now its ``ToolOutput`` makes it the call of ``multiply``, its text the result."""
    output = {
        "blocks": [{"block_type": "text", "text": "6"}],
        "tool_name": "multiply",
        "raw_input": {"args": [], "kwargs": {"a": 2, "b": 3}},
        "raw_output": 6,
        "is_error": False,
    }
    assert steps(_llama_index_run(output)) == [
        ("tool_call", "multiply", 'multiply {"a":2,"b":3}'),
        ("observation", "multiply", "6"),
        ("thought", None, "It is 6."),
    ]
    failed = {
        **output,
        "blocks": [],
        "content": "Error: boom",
        "raw_output": None,
        "is_error": True,
    }
    assert [kind for kind, _, _ in steps(_llama_index_run(failed))] == [
        "tool_call",
        "observation",
        "error_recovery",
    ]


def test_tool_call_result_of_text_blocks_is_their_text() -> None:
    """Before: Strands' ``gen_ai.tool.call.result`` ``[{"text": "Paris"}]`` was the observation
    as JSON. Now the blocks' text is."""
    tool = span(
        "execute_tool get_capital",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_capital",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.result": json.dumps([{"text": "Paris"}]),
        },
        start=1,
    )
    assert steps(to_trace([tool]).trace)[1] == ("observation", "get_capital", "Paris")


ANTHROPIC = CORPUS / "otlp" / "openinference_anthropic_tool_result.json"


def test_a_call_only_the_history_holds_names_its_result() -> None:
    """Before: the request's history (the assistant's ``get_weather`` call, then its result)
    gave a ``tool_call`` with no name, and the ``tool_use`` block was read twice (a content and
    a ``tool_calls`` entry of OpenInference's Anthropic instrumentor). Now the result is
    ``get_weather``'s, and the call is read once."""
    (item,) = sources.convert([json.loads(ANTHROPIC.read_text())], source="otlp")
    assert not isinstance(item, Problem), item
    assert [(kind, tool) for kind, tool, _ in steps(item.trace)] == [
        ("thought", None),  # what the history's assistant message said with the call
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("thought", None),
    ]
    attributes = {
        "llm.input_messages.0.message.role": "assistant",
        "llm.input_messages.0.message.contents.0.message_content.type": "tool_use",
        "llm.input_messages.0.message.contents.0.tool_call.id": "toolu_1",
        "llm.input_messages.0.message.contents.0.tool_call.function.name": "get_weather",
        "llm.input_messages.0.message.tool_calls.0.tool_call.id": "toolu_1",
        "llm.input_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
    }
    (message,) = msg.openinference_messages(attributes, "llm.input_messages")
    assert [part["type"] for part in message["parts"]] == ["tool_call"]
