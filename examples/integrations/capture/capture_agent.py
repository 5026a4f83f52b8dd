"""``@kp.capture`` around an agent function: its real steps are recorded, scored and handed on.

The agent is a Pydantic AI agent with OpenTelemetry instrumentation on (``agent.instrument =
True``), driven offline by a scripted ``FunctionModel``: ``kp.capture`` switches on the OTel
collector for the duration of each call (and the LangChain / Agents SDK hooks, when installed), so
the run's spans become a scored ``ReasoningTrace``. Its tool fails once (``ModelRetry``) and is
retried. No network, no key.

    python examples/integrations/capture/capture_agent.py

Needs, from the repository's root (README.md beside this file):
``pip install -e ".[embeddings,otel]" "pydantic-ai-slim>=1.0"``
(or ``pip install -e ".[examples]"`` for every example's frameworks).
"""

from __future__ import annotations

import json

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import knowledgepulse as kp
from knowledgepulse.value import ScoredItem


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Call the tool, call it again after the failure, then answer."""
    turn = sum(1 for message in messages if message.kind == "response")
    if turn < 2:
        return ModelResponse(
            parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id=f"call_{turn}")]
        )
    return ModelResponse(parts=[TextPart("It is sunny in Paris, 24 °C.")])


agent = Agent(FunctionModel(scripted_model), system_prompt="Answer weather questions.")
agent.instrument = True  # Pydantic AI emits OpenTelemetry GenAI spans for this agent
calls = {"count": 0}


@agent.tool_plain
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    calls["count"] += 1
    if calls["count"] == 1:
        raise ModelRetry("the weather service timed out, try again")
    return f"sunny, 24 °C in {city}"


def report(captured: ScoredItem) -> None:
    """What ``on_trace`` receives: the trace and its score."""
    steps = [step.type for step in captured.trace.steps]
    print(f"captured {captured.trace.id}: score {captured.breakdown.score:.4f}, steps {steps}")


@kp.capture(domain="default", on_trace=report)
def ask(question: str) -> str:
    """Any agent function: what it returns is untouched."""
    return agent.run_sync(question).output


def main() -> None:
    """Ask once; print the answer and the captured trace."""
    print(ask("What is the weather in Paris today?"))
    trace = ask.kp_capture.traces[-1]  # type: ignore[attr-defined]
    print(json.dumps(trace.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2))


if __name__ == "__main__":
    main()
