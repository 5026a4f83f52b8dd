"""An OpenAI Agents SDK agent, run offline with a scripted model, scored with one line.

The model is the SDK's own ``ScriptedModel``, made to trace a response span the way
``OpenAIResponsesModel`` does: it says what it will do and calls ``get_weather`` (which fails
once), calls it again, then answers. ``kp.integrations.openai_agents.processor()`` converts and
scores the trace when the run ends. No network, no key: only our processor is installed, so the
SDK's OpenAI exporter never runs.

    python examples/integrations/openai_agents/weather_agent.py            # print the scored trace
    python examples/integrations/openai_agents/weather_agent.py --export agents_export.jsonl
    kp convert --from openai-agents agents_export.jsonl                     # the exported spans

Needs, from the repository's root (README.md beside this file):
``pip install -e ".[embeddings,openai-agents]"``
(or ``pip install -e ".[examples]"`` for every example's frameworks).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import agents
from agents import Agent, Runner, function_tool
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import ModelResponse
from agents.model_settings import ModelSettings
from agents.models.interface import ModelTracing
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool import Tool
from agents.tracing import Span, Trace, TracingProcessor, response_span
from openai.types.responses import Response
from typing_extensions import override

import knowledgepulse as kp


class ResponsesScriptedModel(ScriptedModel):
    """``ScriptedModel`` that records its output on a response span, as the real model does."""

    @override
    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        **kwargs: Any,
    ) -> ModelResponse:
        call = (system_instructions, input, model_settings, tools, output_schema, handoffs, tracing)
        with response_span(disabled=tracing.is_disabled()) as span:
            result = await super().get_response(*call, **kwargs)
            if tracing.include_data():
                span.span_data.response = Response(
                    id=result.response_id or "resp_scripted",
                    created_at=0,
                    model="scripted",
                    object="response",
                    output=result.output,
                    tool_choice="auto",
                    tools=[],
                    parallel_tool_calls=False,
                    status="completed",
                )
                span.span_data.input = input
            return result


class ExportFile(TracingProcessor):
    """Writes each trace and span as the SDK's exporter sends them (``export()``), one a line."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("w", encoding="utf-8")

    def _write(self, item: Trace | Span[Any]) -> None:
        exported = item.export()
        if exported is not None:
            self._file.write(json.dumps(exported, default=str) + "\n")

    def on_trace_start(self, trace: Trace) -> None:  # noqa: D102 - the SDK's interface
        self._write(trace)

    def on_trace_end(self, trace: Trace) -> None:  # noqa: D102
        self._file.flush()

    def on_span_start(self, span: Span[Any]) -> None:  # noqa: D102
        pass

    def on_span_end(self, span: Span[Any]) -> None:  # noqa: D102
        self._write(span)

    def shutdown(self) -> None:  # noqa: D102
        self._file.close()

    def force_flush(self) -> None:  # noqa: D102
        self._file.flush()


def build_agent() -> Agent[Any]:
    """A weather agent whose tool fails on its first call, and the model's script."""
    calls = {"count": 0}

    def tell_the_model(context: Any, error: Exception) -> str:
        # What the model (and the trace) see of a failure; the SDK's default hides the details.
        return f"get_weather failed: {error}. Try again."

    @function_tool(failure_error_function=tell_the_model)
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        calls["count"] += 1
        if calls["count"] == 1:
            raise TimeoutError("the weather service timed out")
        return f"sunny, 24 °C in {city}"

    model = ResponsesScriptedModel(
        [
            [
                assistant_message(
                    "The weather tool knows this; asking it for Paris.", item_id="m1"
                ),
                function_call("get_weather", {"city": "Paris"}, call_id="call_1"),
            ],
            [function_call("get_weather", {"city": "Paris"}, call_id="call_2")],
            [assistant_message("It is sunny in Paris, 24 °C.", item_id="m2")],
        ]
    )
    return Agent(
        name="forecaster",
        instructions="Answer weather questions.",
        model=model,
        tools=[get_weather],
    )


def main() -> None:
    """Run the agent, print its scored trace (and write the exported spans when asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", type=Path, help="also write the SDK's export() lines here")
    args = parser.parse_args()

    processor = kp.integrations.openai_agents.processor(domain="default")
    # set_trace_processors replaces the SDK's OpenAI exporter: nothing leaves this machine.
    # With a real model, add_trace_processor(processor) keeps that exporter as well.
    export = ExportFile(args.export) if args.export else None
    agents.set_trace_processors([processor, *([export] if export else [])])

    result = Runner.run_sync(build_agent(), "What is the weather in Paris today?")
    if export is not None:
        export.shutdown()

    (captured,) = processor.captured
    print(
        json.dumps(
            captured.trace.model_dump(mode="json", by_alias=True, exclude_none=True),
            indent=2,
            ensure_ascii=False,
        )
    )
    print(f"answer {result.final_output!r}; score {captured.breakdown.score:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
