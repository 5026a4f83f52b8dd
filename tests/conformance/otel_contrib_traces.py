"""Replay a recorded Gemini run under OpenTelemetry's own GenAI instrumentation; keep its spans.

Run by hand from the repository root (never by the test suite), the cassettes laid out as
``replay_frameworks.py`` says, in a virtual environment of its own (made on 4 December 2026)::

    python -m venv /tmp/contrib
    /tmp/contrib/bin/pip install google-genai opentelemetry-sdk pyyaml httpx2 \
        "opentelemetry-instrumentation-google-genai==1.3b0" "opentelemetry-util-genai==1.3b0"
    /tmp/contrib/bin/python tests/conformance/otel_contrib_traces.py CASSETTES

``opentelemetry-instrumentation-google-genai`` (opentelemetry-python-contrib's, on
``opentelemetry-util-genai``) traces the Gen AI SDK in the conventions' newest shape when
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``: a ``generate_content`` span a model
call with ``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``gen_ai.system_instructions``
parts and ``gen_ai.tool.definitions``, and an ``execute_tool`` span for each Python function the
SDK's automatic function calling runs (the instrumentation wraps the functions given as tools).
The replies are pydantic-ai's recording of gemini-2.5-pro asking ``get_capital`` for "France"
(the tool raises; the SDK hands the model ``{"error": ...}``), then "La France", then answering
(``test_google_model_retry.yaml``), served in order by a local endpoint the client is pointed at:
no network.

* ``otlp/otel_contrib_google_genai_capital_retry.json``: the spans an in-memory exporter kept,
  as OTLP JSON (``tests/integrations/otel_helpers.otlp_json``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

CASSETTE = "pydantic+pydantic-ai/tests/models/cassettes/test_google/test_google_model_retry.yaml"
ASKED = "What is the capital of France?"


def get_capital(country: str) -> str:
    """Get the capital of a country."""
    if country == "La France":
        return "Paris"
    raise ValueError('The country is not supported. Use "La France" instead.')


def main(cassettes: Path) -> None:
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    root = Path(__file__).parents[2]
    sys.path.insert(0, str(root))
    sys.path.insert(0, str(Path(__file__).parent))
    from bedrock_traces import served  # type: ignore[import-not-found]
    from google import genai  # type: ignore[import-untyped]
    from google.genai import types  # type: ignore[import-untyped]
    from opentelemetry import trace
    from opentelemetry.instrumentation.google_genai import (  # type: ignore[import-not-found]
        GoogleGenAiSdkInstrumentor,
    )

    from tests.integrations.otel_helpers import otlp_json, provider

    tracer_provider, exporter = provider()
    trace.set_tracer_provider(tracer_provider)
    GoogleGenAiSdkInstrumentor().instrument(tracer_provider=tracer_provider)
    config = types.GenerateContentConfig(
        system_instruction="You are a helpful chatbot.", tools=[get_capital]
    )
    with served(cassettes / CASSETTE, ":generateContent") as endpoint:
        options = types.HttpOptions(base_url=endpoint)
        client = genai.Client(api_key="replayed", http_options=options)
        reply = client.models.generate_content(
            model="gemini-2.5-pro", contents=ASKED, config=config
        )
    print(reply.text)
    text = json.dumps(otlp_json(exporter.get_finished_spans()), indent=1, ensure_ascii=False)
    text = text.replace(str(root) + "/", "")
    text = re.sub(r'[^"\s]*/site-packages/', "site-packages/", text)
    text = re.sub(r'[^"\s]*/(lib/python3\.\d+/)', r"\1", text)
    out = Path(__file__).parent / "files" / "otlp" / "otel_contrib_google_genai_capital_retry.json"
    out.write_text(text + "\n")
    print(f"wrote {out.name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
