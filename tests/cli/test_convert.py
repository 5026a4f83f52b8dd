"""``kp convert`` and ``kp score --from``: framework files in, valid scored traces out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knowledgepulse.trace import parse_trace
from tests.cli.conftest import KpRunner

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "integrations"
SAMPLES = {
    "otlp": EXAMPLES / "otel" / "pydantic_ai_weather.otlp.jsonl",
    "langsmith": EXAMPLES / "langgraph" / "runs.json",
    "openai-agents": EXAMPLES / "openai_agents" / "agents_export.jsonl",
    "smolagents": EXAMPLES / "smolagents" / "steps.json",
    "pydantic-ai": EXAMPLES / "pydantic_ai" / "messages.json",
}


def traces_in(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("source", sorted(SAMPLES))
def test_auto_recognises_each_frameworks_file_and_writes_valid_traces(
    kp: KpRunner, source: str
) -> None:
    """--from auto gives what --from <source> gives; every line is a valid ReasoningTrace."""
    auto = kp("convert", str(SAMPLES[source]))
    named = kp("convert", "--from", source, str(SAMPLES[source]))
    assert auto.code == named.code == 0, auto.err
    assert auto.out == named.out
    traces = traces_in(auto.out)
    assert traces
    for document in traces:
        trace = parse_trace(document)
        assert trace.metadata.source["format"] == source  # type: ignore[attr-defined]
    assert "converted 1 trace" in auto.err


def test_domain_and_confidence_apply_to_every_trace_and_say_so(kp: KpRunner) -> None:
    """--domain/--confidence win over metadata and defaults; the breakdown names the origin."""
    run = kp(
        "score",
        "--from",
        "langsmith",
        str(SAMPLES["langsmith"]),
        "--domain",
        "weather",
        "--confidence",
        "0.9",
        "--no-embedder",
        "-f",
        "jsonl",
    )
    assert run.code == 0, run.err
    (row,) = traces_in(run.out)
    assert (row["domain"], row["domain_source"]) == ("weather", "argument")
    outcome = row["inputs"]["outcome_confidence"]  # type: ignore[index]
    assert (outcome["confidence"], outcome["confidence_source"]) == (0.9, "argument")
    assert row["file"] == str(SAMPLES["langsmith"])


def test_score_from_matches_convert_then_score(kp: KpRunner, tmp_path: Path) -> None:
    """Converting and scoring in one go equals the two steps."""
    converted = tmp_path / "traces.jsonl"
    assert kp("convert", str(SAMPLES["otlp"]), "-o", str(converted)).code == 0
    direct = kp("score", "--from", "otlp", str(SAMPLES["otlp"]), "--no-embedder", "-f", "jsonl")
    two_steps = kp("score", str(converted), "--no-embedder", "-f", "jsonl")
    scores = [[(r["id"], r["score"]) for r in traces_in(run.out)] for run in (direct, two_steps)]
    assert scores[0] == scores[1]
    assert scores[0]


def test_a_bad_record_is_located_and_the_rest_go_on(kp: KpRunner, tmp_path: Path) -> None:
    """FILE:LINE: message for the record it cannot read; exit 1; the good trace is written."""
    good = SAMPLES["otlp"].read_text("utf-8").splitlines()
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join([good[0], '{"resourceSpans": [{"scopeSpans": 7}]}', *good[1:]]))
    run = kp("convert", "--from", "otlp", str(path))
    assert run.code == 1
    assert f"{path}:2:" in run.err
    assert len(traces_in(run.out)) == 1
    assert "; 1 invalid record skipped" in run.err


def test_an_unknown_shape_says_which_sources_exist(kp: KpRunner, tmp_path: Path) -> None:
    """auto names the formats it knows and how to choose one."""
    path = tmp_path / "other.json"
    path.write_text('{"hello": "world"}')
    run = kp("convert", str(path))
    assert run.code == 1
    assert f"{path}:1: not a trace file this tool knows: an object with keys hello" in run.err
    assert "--from" in run.err


def test_domain_on_a_reasoning_trace_file_is_not_applied_and_says_so(kp: KpRunner) -> None:
    """A ReasoningTrace file has its own domain: --domain is for converted traces, a warning."""
    run = kp(
        "score", "-f", "jsonl", str(ROOT / "examples" / "traces" / "traces.jsonl"), "--domain", "x"
    )
    assert run.code == 0, run.err
    assert "x" not in {json.loads(line)["domain"] for line in run.out.splitlines()}
    assert "the domain and confidence given for converted traces are not applied" in run.err


def test_files_without_message_text_name_the_switch_once(kp: KpRunner, tmp_path: Path) -> None:
    """Official instrumentations record no text by default: the hint names both variables."""
    spans = [
        {
            "traceId": "5b8efff798038103d269b633813fc60c",
            "spanId": f"eee19b7ec3c1b17{index}",
            "name": "execute_tool get_weather",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + index),
            "endTimeUnixNano": str(1_700_000_000_000_000_100 + index),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                {"key": "gen_ai.tool.name", "value": {"stringValue": "get_weather"}},
            ],
        }
        for index in range(2)
    ]
    document = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    path = tmp_path / "no-content.json"
    path.write_text(json.dumps(document))
    run = kp("convert", str(path), str(path))
    assert run.err.count("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT") == 1
    assert "hold no message text" in run.err
    assert "appeared earlier in the input" in run.err  # the same run exported twice


def test_the_sdks_default_console_exporter_output_converts(tmp_path: Path) -> None:
    """ConsoleSpanExporter prints indented span objects back to back: each is a record."""
    script = """
import sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stdout)))
tracer = provider.get_tracer("demo")
user = '[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]'
with tracer.start_as_current_span("invoke_agent weather", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.input.messages": user}):
    with tracer.start_as_current_span("execute_tool get_weather", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.arguments": '{"city": "Paris"}',
            "gen_ai.tool.call.result": "sunny"}):
        pass
"""
    printed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert printed.startswith("{\n    ")  # indented, not one span a line
    path = tmp_path / "console.json"
    path.write_text(printed)
    result = subprocess.run(
        [sys.executable, "-m", "knowledgepulse.cli.main", "convert", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (document,) = traces_in(result.stdout)
    trace = parse_trace(document)
    assert trace.task.objective == "Weather in Paris?"
    assert [(s.type, s.tool.name if s.tool else None) for s in trace.steps] == [
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
    ]


def test_a_named_source_that_reads_nothing_says_which_source_the_file_is(
    kp: KpRunner, tmp_path: Path
) -> None:
    """--from langfuse on a SWE-agent .traj gives no trace: the note names --from swe-agent."""
    traj = ROOT / "tests" / "conformance" / "files" / "swe-agent" / "function_calling_simple.traj"
    wrong = kp("convert", str(traj), "--from", "langfuse", "-o", str(tmp_path / "a.jsonl"))
    assert f"{traj}: read as langfuse (0 traces); its first record reads as swe-agent" in wrong.err
    assert "(kp: --from swe-agent)" in wrong.err
    right = kp("convert", str(traj), "--from", "swe-agent", "-o", str(tmp_path / "b.jsonl"))
    assert f"{traj}: read as swe-agent (1 trace)\n" in right.err
    assert "reads as" not in right.err
