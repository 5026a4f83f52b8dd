"""``kp schema trace``: the trace's JSON Schema, generated from the models and committed."""

from __future__ import annotations

import json
from pathlib import Path

from knowledgepulse.trace.models import trace_json_schema

ROOT = Path(__file__).parents[2]


def test_the_committed_schema_is_the_generated_one() -> None:
    """schemas/trace.schema.json equals what the models generate (regenerate with kp schema)."""
    committed = json.loads((ROOT / "schemas" / "trace.schema.json").read_text(encoding="utf-8"))
    assert committed == trace_json_schema()
