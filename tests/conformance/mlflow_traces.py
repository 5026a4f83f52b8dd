"""Make MLflow Tracing exports: tool-calling agents traced by MLflow, each trace as MLflow dumps it.

Run by hand from the repository root (never by the test suite), in a virtual environment of its
own, with the cassettes laid out as ``replay_frameworks.py`` says::

    python3.11 -m venv /tmp/mlf
    /tmp/mlf/bin/pip install mlflow-skinny openai pyyaml sqlparse
    MLFLOW_ALLOW_FILE_STORE=true MLFLOW_ENABLE_ASYNC_TRACE_LOGGING=false \
        /tmp/mlf/bin/python tests/conformance/mlflow_traces.py CASSETTES

No public file under a licence holds an MLflow trace dump of an agent run (``SOURCES.md`` says
what was searched), so these runs make them. Each agent is the tool-calling loop MLflow's
tracing guide writes: an ``@mlflow.trace(span_type=SpanType.AGENT)`` function that calls the
OpenAI Chat Completions client (traced by ``mlflow.openai.autolog()``: a ``CHAT_MODEL`` span a
call, its messages and tools in ``mlflow.chat.*``) and runs the tools the model asks for, each an
``@mlflow.trace(span_type=SpanType.TOOL)`` function. The model replies are those public VCR
cassettes recorded, served in order through an ``httpx2.MockTransport`` (``replay_frameworks``'s
``transport``): no network. Each trace is then fetched as a user does, ``mlflow.get_trace(id)``,
and written with ``Trace.to_json()``; the stack traces of the exception events are cut to start at
``site-packages/`` or ``tests/conformance/`` (the making machine's folders are no data).

* ``openai_agent_google_model_retry.json``: one trace (``to_json()`` as it is): ``get_capital``
  raises on "France" (an ERROR tool span), the agent hands the error to the model, which asks for
  "La France", then answers.
* ``openai_agent_tool_raises.json``: one trace whose tool error is not caught: the run ends in the
  exception (trace state ERROR, the agent span ERROR).
* ``openai_agent_runs.jsonl``: JSON Lines, a trace a line: the two runs above and the temperature
  recording (one call, then the answer).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replay_frameworks import GOOGLE_RETRY, TEMPERATURE, transport  # type: ignore[import-not-found]

OUT = Path(__file__).parent / "files" / "mlflow"
ROOT = Path(__file__).parents[2]

CAPITAL_TOOL = {
    "type": "function",
    "function": {
        "name": "get_capital",
        "description": "Get the capital of a country.",
        "parameters": {
            "type": "object",
            "properties": {"country": {"type": "string", "description": "The country name."}},
            "required": ["country"],
            "additionalProperties": False,
        },
    },
}
TEMPERATURE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_temperature",
        "description": "",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


def _client(cassette: Path) -> Any:
    import httpx2
    import openai

    http = httpx2.Client(transport=httpx2.MockTransport(transport(cassette)))
    return openai.OpenAI(api_key="replayed", http_client=http)


def _agent(
    client: Any,
    model: str,
    system: str,
    tools: list[dict[str, Any]],
    functions: dict[str, Callable[..., Any]],
    *,
    hand_back_errors: bool,
) -> Callable[[str], str]:
    """MLflow's tool-calling agent: ask the model, run the tools it asks for, until it answers."""
    import mlflow  # type: ignore[import-not-found]
    from mlflow.entities import SpanType  # type: ignore[import-not-found]

    @mlflow.trace(span_type=SpanType.AGENT)  # type: ignore[untyped-decorator]
    def run(question: str) -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": question},
        ]
        while True:
            reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
            message = reply.choices[0].message
            if not message.tool_calls:
                return str(message.content)
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                arguments = json.loads(call.function.arguments)
                try:
                    result = functions[call.function.name](**arguments)
                except ValueError as error:
                    if not hand_back_errors:
                        raise
                    result = f"Error: {error}"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})

    return run  # type: ignore[no-any-return]


def _traced_tools() -> dict[str, Callable[..., Any]]:
    import mlflow
    from mlflow.entities import SpanType

    @mlflow.trace(span_type=SpanType.TOOL)  # type: ignore[untyped-decorator]
    def get_capital(country: str) -> str:
        """The recording's tool: only "La France" is known (the model must ask again)."""
        if country == "La France":
            return "Paris"
        raise ValueError('The country is not supported. Use "La France" instead.')

    @mlflow.trace(span_type=SpanType.TOOL)  # type: ignore[untyped-decorator]
    def get_temperature(city: str) -> float:
        return 20.0

    return {"get_capital": get_capital, "get_temperature": get_temperature}


def _dumped(trace_id: str) -> str:
    """The trace as MLflow gives it back, its stack traces' folders cut."""
    import mlflow

    text = mlflow.get_trace(trace_id).to_json().replace(str(ROOT) + "/", "")
    return re.sub(r'[^"\s\\]*/site-packages/', "site-packages/", text)


def main(cassettes: Path) -> None:
    import mlflow

    mlflow.set_tracking_uri(f"file://{Path('/tmp/mlflow-traces-runs').resolve()}")
    mlflow.set_experiment("kp-mlflow-traces")
    mlflow.openai.autolog()
    tools = _traced_tools()
    dumps: list[str] = []

    retry = _agent(
        _client(cassettes / GOOGLE_RETRY),
        "gemini-2.5-pro",
        "You are a helpful chatbot.",
        [CAPITAL_TOOL],
        tools,
        hand_back_errors=True,
    )
    retry("What is the capital of France?")
    dumps.append(_dumped(str(mlflow.get_last_active_trace_id())))

    raising = _agent(
        _client(cassettes / GOOGLE_RETRY),
        "gemini-2.5-pro",
        "You are a helpful chatbot.",
        [CAPITAL_TOOL],
        tools,
        hand_back_errors=False,
    )
    # The run ends in the tool's error, as an agent that does not catch it does.
    with contextlib.suppress(ValueError):
        raising("What is the capital of France?")
    dumps.append(_dumped(str(mlflow.get_last_active_trace_id())))

    temperature = _agent(
        _client(cassettes / TEMPERATURE),
        "gpt-4.1-mini",
        "You are a helpful assistant.",
        [TEMPERATURE_TOOL],
        tools,
        hand_back_errors=True,
    )
    temperature("What is the temperature in Tokyo?")
    dumps.append(_dumped(str(mlflow.get_last_active_trace_id())))

    OUT.mkdir(parents=True, exist_ok=True)
    if mlflow.__version__.startswith("2."):
        # MLflow 2's form (request_id, status, request_metadata; spans with context): the
        # three traces as one JSON list, as a user keeps a list of get_trace(...) dumps.
        listed = ",\n".join(dumps)
        (OUT / "mlflow2_openai_agent_runs.json").write_text(f"[\n{listed}\n]\n")
    else:
        (OUT / "openai_agent_google_model_retry.json").write_text(dumps[0] + "\n")
        (OUT / "openai_agent_tool_raises.json").write_text(dumps[1] + "\n")
        (OUT / "openai_agent_runs.jsonl").write_text("".join(dump + "\n" for dump in dumps))
    print(f"wrote {len(dumps)} traces to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main(Path(sys.argv[1]))
