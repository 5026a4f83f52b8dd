"""What the reader tests share: one file read by one source, and what a converted trace says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import TraceOptions, read
from knowledgepulse.sources._envelope import NO_TEXT
from knowledgepulse.sources._registry import detect, get_source
from knowledgepulse.trace import TraceItem


def convert_file(
    path: str | Path, *, source: str = "auto", options: TraceOptions | None = None
) -> list[TraceItem | Problem]:
    """What one source gives for a file, as its reader yields it (no repeated-id checks).

    A file no source (or more than one) recognises gives what ``sources.read`` says of it.
    """
    records = list(read_records(path))
    found = get_source(source) if source != "auto" else None
    if found is None:
        first = next((record for record in records if isinstance(record, Record)), None)
        candidates = [] if first is None else detect(first.value)
        if len(candidates) != 1:
            return list(read([path]))
        found = candidates[0]
    return list(found.convert(records, options or TraceOptions()))


def recognise(value: Any) -> str | None:
    """The one source that reads a record, or ``None`` when none or several do."""
    found = detect(value)
    return found[0].name if len(found) == 1 else None


def source_of(item: TraceItem) -> dict[str, Any]:
    """The converted trace's ``metadata.source``: its format, the origins of its values."""
    found = getattr(item.trace.metadata, "source", None)
    assert isinstance(found, dict)
    return found


def has_text(item: TraceItem) -> bool:
    """Whether the source recorded any message text (else a warning says it holds none)."""
    return not any(NO_TEXT in warning for warning in item.warnings)
