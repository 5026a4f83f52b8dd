"""One trace of many spans through ``kp convert``: seconds and peak memory, by export format.

    python bench/bench_spans.py                        # 100,000 spans, every format
    python bench/bench_spans.py 32000 --formats langfuse otlp

For each format a file holds one trace: a root agent span and N tool spans under it (tool
``search``, call ids ``call_0``...), in the shape that format exports (Langfuse's
``{trace, observations}``, OTLP JSON, Tempo's ``batches`` with base64 ids, Jaeger's query API,
Phoenix's span rows as JSON Lines, OTel JS spans). ``kp convert --from FORMAT FILE -o OUT`` runs
in a fresh process: its wall time, CPU time and peak resident memory (``ru_maxrss`` of that child
alone, from ``os.wait4``) are printed. The output is checked: one trace, N tool calls.
Goal (issue 28): 100,000 spans under one root converted in under 30 s on 2 cores, peak under 1 GB.

Measured on the 2-core development machine (2026-11-28), which other jobs held at a load of 15
to 22, so CPU seconds are the figures to compare. Before (each tool call scanned every earlier
tool event; issue 28's figures, machine lightly loaded): Langfuse 32,000 observations 60.1 s,
306 MB; OTLP 100,000 spans 173 s, 2.2 GB. Then linear time, but a peak a little over 1 GB for
the OTLP-shaped files (OTLP 1,080 MB), because the parsed file stayed alive through conversion.
Now it is let go once its spans are read; 100,000 spans: Langfuse 16.9 CPU s, 800 MB; OTLP
24.1 CPU s, 864 MB; Tempo 24.9 CPU s, 864 MB; Jaeger 26.8 CPU s, 882 MB; Phoenix 19.8 CPU s,
753 MB; OTel JS 21.1 CPU s, 860 MB. On a quiet machine (load 0.8), wall time and peak: OTLP
20.4 s, 865 MB; Jaeger 18.9 s, 884 MB; Tempo 22.7 s, 864 MB; Langfuse 12.2 s, 798 MB; Phoenix
12.4 s, 752 MB; OTel JS 16.1 s, 861 MB.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
ROOT_ID = "b7ad6b7169203331"
START_S = 1_741_165_200
"""The root span's start, Unix seconds; tool span ``i`` starts ``i`` milliseconds after it."""
QUESTION = "Find every document about invoices."
ANSWER = "Found them all."


def span_id(number: int) -> str:
    """A 16-hex-digit span id, distinct from the root's."""
    return f"{number + 1:016x}"


def arguments(number: int) -> str:
    return json.dumps({"query": f"invoice {number}"})


def result(number: int) -> str:
    return json.dumps({"hits": number % 7})


def iso(milliseconds: int) -> str:
    at = datetime.fromtimestamp(START_S + milliseconds / 1000, UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def langfuse(count: int) -> Any:
    root = {
        "id": "root",
        "traceId": TRACE_ID,
        "type": "AGENT",
        "name": "agent",
        "startTime": iso(0),
        "endTime": iso(count + 1),
        "parentObservationId": None,
        "input": QUESTION,
        "output": ANSWER,
        "level": "DEFAULT",
    }
    tools = [
        {
            "id": f"t{n}",
            "traceId": TRACE_ID,
            "type": "TOOL",
            "name": "search",
            "startTime": iso(n + 1),
            "endTime": iso(n + 1),
            "parentObservationId": "root",
            "input": json.loads(arguments(n)),
            "output": result(n),
            "level": "DEFAULT",
        }
        for n in range(count)
    ]
    trace = {"id": TRACE_ID, "timestamp": iso(0), "name": "agent", "input": QUESTION}
    return {"trace": {**trace, "output": ANSWER}, "observations": [root, *tools]}


def _attributes(values: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": key, "value": {"stringValue": value}} for key, value in values.items()]


def _otlp_spans(count: int, encode: Callable[[str], str]) -> list[dict[str, Any]]:
    messages = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]
    root = {
        "traceId": encode(TRACE_ID),
        "spanId": encode(ROOT_ID),
        "name": "invoke_agent bench",
        "kind": 1,
        "startTimeUnixNano": str(START_S * 10**9),
        "endTimeUnixNano": str(START_S * 10**9 + (count + 1) * 10**6),
        "attributes": _attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(output),
            }
        ),
        "status": {},
    }
    tools = [
        {
            "traceId": encode(TRACE_ID),
            "spanId": encode(span_id(n)),
            "parentSpanId": encode(ROOT_ID),
            "name": "execute_tool search",
            "kind": 1,
            "startTimeUnixNano": str(START_S * 10**9 + (n + 1) * 10**6),
            "endTimeUnixNano": str(START_S * 10**9 + (n + 1) * 10**6 + 500_000),
            "attributes": _attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.tool.call.id": f"call_{n}",
                    "gen_ai.tool.call.arguments": arguments(n),
                    "gen_ai.tool.call.result": result(n),
                }
            ),
            "status": {},
        }
        for n in range(count)
    ]
    return [root, *tools]


def otlp(count: int) -> Any:
    scope = {"scope": {"name": "bench"}, "spans": _otlp_spans(count, lambda hex_id: hex_id)}
    resource = {"attributes": _attributes({"service.name": "bench"})}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def tempo(count: int) -> Any:
    def encode(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()

    library = {"instrumentationLibrary": {"name": "bench"}, "spans": _otlp_spans(count, encode)}
    resource = {"attributes": _attributes({"service.name": "bench"})}
    return {"batches": [{"resource": resource, "instrumentationLibrarySpans": [library]}]}


def _jaeger_tags(values: dict[str, str]) -> list[dict[str, str]]:
    return [{"key": key, "type": "string", "value": value} for key, value in values.items()]


def jaeger(count: int) -> Any:
    messages = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]
    root = {
        "traceID": TRACE_ID,
        "spanID": ROOT_ID,
        "operationName": "invoke_agent bench",
        "references": [],
        "startTime": START_S * 10**6,
        "duration": (count + 1) * 1000,
        "tags": _jaeger_tags(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(output),
            }
        ),
        "logs": [],
        "processID": "p1",
    }
    parent = [{"refType": "CHILD_OF", "traceID": TRACE_ID, "spanID": ROOT_ID}]
    tools = [
        {
            "traceID": TRACE_ID,
            "spanID": span_id(n),
            "operationName": "execute_tool search",
            "references": parent,
            "startTime": START_S * 10**6 + (n + 1) * 1000,
            "duration": 500,
            "tags": _jaeger_tags(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.tool.call.id": f"call_{n}",
                    "gen_ai.tool.call.arguments": arguments(n),
                    "gen_ai.tool.call.result": result(n),
                }
            ),
            "logs": [],
            "processID": "p1",
        }
        for n in range(count)
    ]
    processes = {"p1": {"serviceName": "bench", "tags": []}}
    return {"data": [{"traceID": TRACE_ID, "spans": [root, *tools], "processes": processes}]}


def phoenix(count: int) -> list[dict[str, Any]]:
    """Span rows, one a line (written as JSON Lines)."""
    common = {"status_code": "OK", "status_message": "", "events": []}
    root = {
        "name": "agent",
        "span_kind": "AGENT",
        "parent_id": None,
        "start_time": START_S * 1000,
        "end_time": START_S * 1000 + count + 1,
        **common,
        "context.span_id": ROOT_ID,
        "context.trace_id": TRACE_ID,
        "attributes.openinference.span.kind": "AGENT",
        "attributes.input.value": QUESTION,
        "attributes.output.value": ANSWER,
    }
    tools = [
        {
            "name": "search",
            "span_kind": "TOOL",
            "parent_id": ROOT_ID,
            "start_time": START_S * 1000 + n + 1,
            "end_time": START_S * 1000 + n + 1,
            **common,
            "context.span_id": span_id(n),
            "context.trace_id": TRACE_ID,
            "attributes.openinference.span.kind": "TOOL",
            "attributes.tool.name": "search",
            "attributes.input.value": arguments(n),
            "attributes.output.value": result(n),
        }
        for n in range(count)
    ]
    return [root, *tools]


def otel_js(count: int) -> Any:
    def span(name: str, own_id: str, start_ms: int, end_ms: int, **attributes: Any) -> Any:
        return {
            "name": name,
            "kind": 0,
            "spanContext": {"traceId": TRACE_ID, "spanId": own_id, "traceFlags": 1},
            "startTime": [START_S + start_ms // 1000, start_ms % 1000 * 10**6],
            "endTime": [START_S + end_ms // 1000, end_ms % 1000 * 10**6],
            "attributes": {"ai.operationId": name, **attributes},
            "status": {"code": 0},
            "events": [],
            "links": [],
            "resource": {"attributes": {"service.name": "bench"}},
            "instrumentationLibrary": {"name": "ai", "version": "4.3.16"},
        }

    root = span(
        "ai.generateText",
        ROOT_ID,
        0,
        count + 1,
        **{"ai.prompt": json.dumps({"prompt": QUESTION}), "ai.response.text": ANSWER},
    )
    tools = [
        {
            **span(
                "ai.toolCall",
                span_id(n),
                n + 1,
                n + 1,
                **{
                    "ai.toolCall.name": "search",
                    "ai.toolCall.id": f"call_{n}",
                    "ai.toolCall.args": arguments(n),
                    "ai.toolCall.result": result(n),
                },
            ),
            "parentSpanId": ROOT_ID,
        }
        for n in range(count)
    ]
    return [root, *tools]


FORMATS: dict[str, tuple[str, Callable[[int], Any]]] = {
    "langfuse": ("langfuse", langfuse),
    "otlp": ("otlp", otlp),
    "tempo": ("otlp", tempo),
    "jaeger": ("jaeger", jaeger),
    "phoenix": ("phoenix", phoenix),
    "otel-js": ("otel-js", otel_js),
}
"""Each bench format: the ``--from`` source that reads it, and its generator."""


def write(path: Path, value: Any) -> None:
    with path.open("w", encoding="utf-8") as out:
        if path.suffix == ".jsonl":
            out.writelines(json.dumps(row) + "\n" for row in value)
        else:
            json.dump(value, out)


def measure(name: str, count: int, scratch: Path) -> dict[str, float]:
    """Convert ``count`` spans of one format in a fresh ``kp`` process; its time and memory."""
    source_name, generate = FORMATS[name]
    source = scratch / f"{name}-{count}.{'jsonl' if name == 'phoenix' else 'json'}"
    out = scratch / f"{name}-{count}.trace.jsonl"
    write(source, generate(count))
    command = [sys.executable, "-m", "knowledgepulse.cli.main", "convert", "--from", source_name]
    log = scratch / f"{name}-{count}.stderr"
    with log.open("wb") as stderr:
        began = time.perf_counter()
        child = subprocess.Popen([*command, str(source), "-o", str(out)], stderr=stderr)
        # wait4: this child's own resource use (RUSAGE_CHILDREN's peak is the largest child's).
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - began
    child.returncode = os.waitstatus_to_exitcode(status)
    messages = log.read_text(encoding="utf-8", errors="replace")
    lines = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
    if child.returncode != 0 or len(lines) != 1:
        raise SystemExit(f"{name}: exit {child.returncode}, {len(lines)} traces\n{messages}")
    steps = json.loads(lines[0])["steps"]
    calls = sum(step["type"] in ("tool_call", "error_recovery") for step in steps)
    if calls != count:
        raise SystemExit(f"{name}: {calls} tool calls in the trace, not {count}")
    return {
        "seconds": elapsed,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "input_mb": source.stat().st_size / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("spans", type=int, nargs="?", default=100_000, help="tool spans")
    parser.add_argument("--formats", nargs="+", choices=list(FORMATS), default=list(FORMATS))
    args = parser.parse_args()
    print(f"cores available: {len(os.sched_getaffinity(0))}; {args.spans:,} spans under one root")
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.formats:
            found = measure(name, args.spans, Path(scratch))
            print(
                f"{name:>8} ({found['input_mb']:.0f} MB): {found['seconds']:.1f} s, "
                f"{found['cpu_seconds']:.1f} CPU s, peak {found['peak_mb']:.0f} MB",
                flush=True,
            )


if __name__ == "__main__":
    main()
