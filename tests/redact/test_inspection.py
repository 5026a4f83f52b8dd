"""``redact_inspection``: no secret planted in a file survives what ``kp inspect`` shows of it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.redact.inspection import redact_inspection
from knowledgepulse.reports.inspection import inspection_json, inspection_text
from knowledgepulse.sources import inspect_file
from tests.builders import trace_json

DATA = Path(__file__).parent / "data"
EXAMPLES = [
    json.loads(line) for line in (DATA / "secret_examples.jsonl").read_text("utf-8").splitlines()
]
CHAT = Path(__file__).parents[1] / "sources" / "data" / "chat" / "openai_chat.jsonl"


def _trace(text: str) -> dict[str, Any]:
    return trace_json(trace_id="kp:trace:planted", objective=f"deploy {text}")


def _step(text: str) -> dict[str, Any]:
    planted = trace_json()
    planted["steps"][0]["content"] = f"ran {text} then"
    return planted


def _tool(text: str) -> dict[str, Any]:
    planted = trace_json()
    planted["steps"][1]["tool"] = {"name": text}
    return planted


def _refused(text: str) -> dict[str, Any]:  # a problem's message quotes the value it refuses
    planted = trace_json()
    planted["metadata"]["success"] = text
    return planted


def _row(text: str) -> dict[str, Any]:  # a column kp does not read, shown in the source record
    row: dict[str, Any] = json.loads(CHAT.read_text().splitlines()[0])
    row["notes"] = f"see {text}"
    return row


PLACES = [_trace, _step, _tool, _refused, _row]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example=st.sampled_from(EXAMPLES), place=st.sampled_from(PLACES))
def test_no_planted_secret_is_shown_by_an_inspection(example: dict[str, str], place: Any) -> None:
    """A secret anywhere in the file's first records: in neither the text nor the JSON."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "in.jsonl"
        path.write_text(json.dumps(place(example["sample"])) + "\n" + json.dumps(_row("x")) + "\n")
        inspection = redact_inspection(inspect_file(path), "private")
    shown = inspection_text(inspection, 100) + inspection_json(inspection)
    assert example["secret"] not in shown


def test_an_inspection_keeps_identifiers_at_private_and_redacts_them_at_aggregated(
    tmp_path: Path,
) -> None:
    """Personal data goes by the level: kept at private, redacted at aggregated."""
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(_trace("for dana@corp.io")) + "\n")
    inspection = inspect_file(path)
    assert "dana@corp.io" in inspection_json(redact_inspection(inspection, "private"))
    cleaned = inspection_json(redact_inspection(inspection, "aggregated"))
    assert "dana@corp.io" not in cleaned
    assert "[REDACTED:email]" in cleaned


def test_an_inspection_without_a_level_follows_the_first_trace_s_own(tmp_path: Path) -> None:
    """A converted trace is private (identifiers kept); a trace saying aggregated is redacted."""
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(_trace("for dana@corp.io")) + "\n")  # aggregated
    assert "dana@corp.io" not in inspection_json(redact_inspection(inspect_file(path)))
    path.write_text(json.dumps(_row("for dana@corp.io")) + "\n")  # converted: private
    assert "dana@corp.io" in inspection_json(redact_inspection(inspect_file(path)))
