"""``kp schema NAME`` prints a file format's JSON Schema."""

from __future__ import annotations

import json

from tests.cli.conftest import KpRunner


def test_kp_schema_trace_prints_it(kp: KpRunner) -> None:
    """kp schema trace prints the schema, with the JSON-LD keys and the step types."""
    run = kp("schema", "trace")
    assert run.code == 0
    schema = json.loads(run.out)
    assert {"@context", "@type", "steps"} <= set(schema["properties"])
    assert schema["$defs"]["Step"]["properties"]["type"]["enum"] == [
        "thought",
        "tool_call",
        "observation",
        "error_recovery",
    ]
