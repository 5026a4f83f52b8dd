"""Write ``observations_v2.parquet``: this folder's two JSON traces as Langfuse's enriched export.

Run from the repository root: ``python tests/sources/data/langfuse/make_observations_v2.py``.
Not a real export (none is public): the rows are built from Langfuse's own schema of its
``observations_v2/`` blob storage export, every field group selected. The columns are those of
``EVENTS_FIELDS`` and ``FIELD_SETS`` in ``langfuse/langfuse``
``packages/shared/src/server/queries/clickhouse-sql/event-query-builder.ts`` (commit
``62751446149b``), as langfuse.com/docs/api-and-data-platform/features/blob-storage-export-fields
lists them; the Parquet types are those ClickHouse writes for the ``events_full`` columns'
types (``packages/shared/clickhouse/migrations/unclustered/0039_create_events_full.up.sql``):
``String`` text, ``DateTime64(6)`` microsecond UTC times, ``Map`` maps, ``Array(String)`` lists,
``Decimal(18,12)`` costs. As in Langfuse v4, a trace's input and output sit on its root
observation (its metadata too), and each row repeats its trace's name, user, session and tags.
The rows of the two traces are interleaved, the newest first: an export is ordered by no trace.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).parent
TIME = pa.timestamp("us", tz="UTC")
COST = pa.decimal128(18, 12)
SCHEMA = pa.schema(
    [
        # core
        ("id", pa.string()),
        ("trace_id", pa.string()),
        ("start_time", TIME),
        ("end_time", TIME),
        ("project_id", pa.string()),
        ("parent_observation_id", pa.string()),
        ("type", pa.string()),
        # basic
        ("name", pa.string()),
        ("level", pa.string()),
        ("status_message", pa.string()),
        ("version", pa.string()),
        ("environment", pa.string()),
        ("bookmarked", pa.bool_()),
        ("public", pa.bool_()),
        ("user_id", pa.string()),
        ("session_id", pa.string()),
        ("is_root_observation", pa.bool_()),
        # time
        ("completion_start_time", TIME),
        ("created_at", TIME),
        ("updated_at", TIME),
        # io
        ("input", pa.string()),
        ("output", pa.string()),
        # metadata
        ("metadata", pa.map_(pa.string(), pa.string())),
        # model
        ("provided_model_name", pa.string()),
        ("model_id", pa.string()),
        ("model_parameters", pa.string()),
        # usage
        ("usage_details", pa.map_(pa.string(), pa.uint64())),
        ("cost_details", pa.map_(pa.string(), COST)),
        ("total_cost", COST),
        ("usage_pricing_tier_id", pa.string()),
        ("usage_pricing_tier_name", pa.string()),
        # prompt
        ("prompt_id", pa.string()),
        ("prompt_name", pa.string()),
        ("prompt_version", pa.uint16()),
        # metrics (seconds)
        ("latency", pa.float64()),
        ("time_to_first_token", pa.float64()),
        # trace_context
        ("tags", pa.list_(pa.string())),
        ("release", pa.string()),
        ("trace_name", pa.string()),
        # tools
        ("tool_definitions", pa.map_(pa.string(), pa.string())),
        ("tool_calls", pa.list_(pa.string())),
        ("tool_call_names", pa.list_(pa.string())),
    ]
)


def traces() -> list[dict[str, Any]]:
    """The two JSON fixtures' traces, each with its observations inline."""
    export = json.loads((HERE / "weather_agent_export.json").read_text())
    page = json.loads((HERE / "api_traces_page.json").read_text())
    return [{**export["trace"], "observations": export["observations"]}, page["data"][0]]


def rows(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """A trace's observations as enriched export rows."""
    found = []
    for observation in trace["observations"]:
        root = not observation.get("parentObservationId")
        start = datetime.fromisoformat(observation["startTime"]).astimezone(UTC)
        end = _time(observation.get("endTime"))
        output = trace.get("output") if root and trace.get("output") else observation.get("output")
        calls = _tool_calls(output)
        found.append(
            {
                "id": observation["id"],
                "trace_id": trace["id"],
                "start_time": start,
                "end_time": end,
                "project_id": "demo-project",
                "parent_observation_id": observation.get("parentObservationId") or "",
                "type": observation["type"],
                "name": observation.get("name") or "",
                "level": observation.get("level") or "DEFAULT",
                "status_message": observation.get("statusMessage") or "",
                "version": trace.get("version") or "",
                "environment": trace.get("environment") or "default",
                "bookmarked": bool(trace.get("bookmarked")),
                "public": bool(trace.get("public")),
                "user_id": trace.get("userId") or "",
                "session_id": trace.get("sessionId") or "",
                "is_root_observation": root,
                "completion_start_time": None,
                "created_at": start,
                "updated_at": end or start,
                "input": _text(trace.get("input") if root and trace.get("input") else None)
                or _text(observation.get("input")),
                "output": _text(output),
                "metadata": [(k, _text(v)) for k, v in _metadata(trace, observation, root).items()],
                "provided_model_name": observation.get("model") or "",
                "model_id": "",
                "model_parameters": "",
                "usage_details": list((observation.get("usageDetails") or {}).items()),
                "cost_details": [],
                "total_cost": Decimal(0),
                "usage_pricing_tier_id": None,
                "usage_pricing_tier_name": None,
                "prompt_id": "",
                "prompt_name": "",
                "prompt_version": None,
                "latency": (end - start).total_seconds() if end else None,
                "time_to_first_token": None,
                "tags": trace.get("tags") or [],
                "release": trace.get("release") or "",
                "trace_name": trace.get("name") or "",
                "tool_definitions": [],
                "tool_calls": [json.dumps(call) for call in calls],
                "tool_call_names": [call["function"]["name"] for call in calls],
            }
        )
    return found


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value).astimezone(UTC) if value else None


def _text(value: Any) -> str:
    """A value as Langfuse stores it: text as it is, anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _metadata(trace: dict[str, Any], observation: dict[str, Any], root: bool) -> dict[str, Any]:
    """An observation's metadata; the root's holds its trace's too, as its input and output."""
    own = observation.get("metadata")
    own = json.loads(own) if isinstance(own, str) else own or {}
    return {**(trace.get("metadata") or {}), **own} if root else own


def _tool_calls(output: Any) -> list[dict[str, Any]]:
    """The OpenAI tool calls of a generation's output (Langfuse v4 extracts them to columns)."""
    calls = output.get("tool_calls") if isinstance(output, dict) else None
    return [call for call in calls or [] if isinstance(call, dict) and "function" in call]


def main() -> None:
    """Write the two traces' rows, interleaved, the newest first."""
    first, second = (rows(trace) for trace in traces())
    interleaved = [row for pair in zip(first, second, strict=False) for row in pair]
    interleaved += first[len(second) :] + second[len(first) :]
    table = pa.Table.from_pylist(list(reversed(interleaved)), schema=SCHEMA)
    pq.write_table(table, HERE / "observations_v2.parquet", compression="zstd")


if __name__ == "__main__":
    main()
