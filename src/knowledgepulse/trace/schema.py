"""The JSON Schema of a ``ReasoningTrace``, generated from the models (``kp schema trace``).

The repository keeps a copy at ``schemas/trace.schema.json``, which a test keeps equal to what
this module generates (regenerate with ``kp schema trace > schemas/trace.schema.json``). Two
rules of the models have no JSON Schema keyword and are stated in descriptions instead: a key
may not appear twice in one object, and NaN or infinite numbers are not JSON.
"""

from __future__ import annotations

from typing import Any

from knowledgepulse.trace.models import ReasoningTrace

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def trace_json_schema() -> dict[str, Any]:
    """The JSON Schema of one trace document (a JSON Lines line, or an item of a JSON list)."""
    schema = ReasoningTrace.model_json_schema(by_alias=True)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}
