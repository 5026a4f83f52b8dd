"""What ``kp inspect`` prints: an inspection as one screen of text, or as JSON for a program.

An :class:`~knowledgepulse.sources.Inspection` is data; this renders it. The text fits
:data:`SCREEN_LINES` lines of the width given: every value from the file is cut to one line,
the steps and the source records to a few; the JSON has them whole.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from knowledgepulse._util.text import counted, printable
from knowledgepulse.sources import Inspection
from knowledgepulse.sources._inspect import Part

if TYPE_CHECKING:
    from knowledgepulse.novelty.cache.describe import CacheDescription

SCREEN_LINES = 50
"""The most lines the text takes (a terminal's screen, with room for the prompt)."""
SHOWN_STEPS = 10
SHOWN_WARNINGS = 3
RECORD_LINES = 6
_LABEL = 11
_RECORD_AT_LEAST = 5
"""The lines the steps leave for a source record: a blank line, its title, three lines."""


def inspection_report(inspected: Inspection | CacheDescription, output_format: str) -> str:
    """What ``kp inspect`` writes: a file's inspection or a cache's description, as ``json``.

    Or as text, as wide as the terminal, at most 100 columns (off one, 100).
    """
    if isinstance(inspected, Inspection):
        if output_format == "json":
            return inspection_json(inspected) + "\n"
        width = min(100, shutil.get_terminal_size((100, 50)).columns)
        return inspection_text(inspected, width)
    return cache_json(inspected) + "\n" if output_format == "json" else cache_text(inspected)


def inspection_json(inspection: Inspection) -> str:
    """The inspection as JSON: every part, step and source record whole."""
    return json.dumps(asdict(inspection), indent=2, ensure_ascii=False, default=str)


def inspection_text(inspection: Inspection, width: int = 100) -> str:
    """The inspection as text for a person, at most :data:`SCREEN_LINES` lines of ``width``."""
    head = [*_header(inspection, width), *_parts(inspection, width)]
    tail = _tail(inspection, width)
    room = SCREEN_LINES - len(head) - len(tail)  # the steps, then the records, take what is left
    steps = _steps(inspection, width, room - _RECORD_AT_LEAST)
    records = _records(inspection, width, room - len(steps))
    # Every text from the file is shown, never obeyed: an escape sequence in a name is escaped.
    return (
        "\n".join(printable(line, one_line=True) for line in (*head, *steps, *records, *tail))
        + "\n"
    )


def _header(inspection: Inspection, width: int) -> list[str]:
    how = "named with --from" if inspection.named else "recognised"
    source = (
        f"{inspection.source} ({how})"
        if inspection.source
        else "none: the file holds no record to recognise one by"
    )
    name = _one_line(inspection.file)
    lines = [name if len(name) <= width else "…" + name[len(name) - width + 1 :]]
    lines += _row("source", source, width)
    if inspection.plugin:
        lines += _row("plugin", f"a third party's source: {inspection.plugin}", width)
    if inspection.evidence is not None and inspection.decided_by is not None:
        lines += _row("why", f"record {inspection.decided_by + 1}: {inspection.evidence}", width)
    if inspection.decided_by and not inspection.named:
        lines += _row(
            "unsure",
            f"no source recognised the {counted(inspection.decided_by, 'record')} before it "
            "(each one an error, unless the source leaves it out with a warning); check that "
            "this source is the right one",
            width,
        )
    if inspection.also:
        lines += _row(
            "also",
            f"recognised by {', '.join(inspection.also)} too; {inspection.source} takes "
            "precedence (--from names another)",
            width,
        )
    if inspection.read_as:
        lines += _row("read as", inspection.read_as.removeprefix("read as "), width)
    counts = (
        f"{counted(inspection.records, 'record')} -> {counted(inspection.traces, 'trace')}; "
        f"{counted(inspection.errors, 'error')}; {counted(len(inspection.warnings), 'warning')}"
    )
    return [*lines, *_row("counts", counts, width)]


def _parts(inspection: Inspection, width: int) -> list[str]:
    if inspection.trace_id is None:
        said = "errors" if inspection.problems else "warnings" if inspection.warnings else None
        return ["", f"no trace was read: the {said} below say why" if said else "no trace was read"]
    lines = [
        "",
        _cut(f"first trace {inspection.trace_id}: each part, and where it came from", width),
    ]
    for part in inspection.parts:
        if part.value is None and part.field is None and part.name in ("reward", "tool"):
            continue
        value = f"  {part.name:<{_LABEL}}{_one_line(part.value or '(none)')}"
        source = _source(part)
        if source and len(value) + len(source) + 5 <= width:  # a short value: on one line
            lines.append(f"{value}  <- {source}")
            continue
        lines.append(_cut(value, width))
        if source:
            lines.append(_cut(f"  {'':<{_LABEL}}<- {source}", width))
    return lines


def _source(part: Part) -> str | None:
    if part.field is not None:
        return f"field {part.field!r}"
    if part.origin is not None:
        origin = part.origin
        where = f"record {origin.record + 1}: {origin.where}"
        if origin.within:
            where = f"part of the text at {where}"
        where += f" (and {counted(origin.also, 'other place')})" if origin.also else ""
        return where + (f", {part.note}" if part.note else "")
    if part.note is not None:
        return part.note
    if part.value is not None and part.name in ("objective", "answer", "tool"):
        return "made by the source: no field of the records holds it as it is"
    return None


def _steps(inspection: Inspection, width: int, room: int) -> list[str]:
    shown = min(SHOWN_STEPS, room - 3)  # a blank line, the title, the count of the rest
    if not inspection.steps or shown < 1:
        return []
    lines = ["", f"steps ({len(inspection.steps)})"]
    for step in inspection.steps[:shown]:
        head = f"  {step.step_id:>3} {step.type}"
        if step.tool is not None and step.type != "tool_call":
            head += f" [{step.tool}]"
        elif step.tool is not None:
            head += f" {step.tool}"
        text = step.text if step.tool is None or step.type != "tool_call" else ""
        lines.append(_cut(f"{head}  {_one_line(text)}".rstrip(), width))
    if len(inspection.steps) > shown:
        lines.append(f"  … {counted(len(inspection.steps) - shown, 'more step')}")
    return lines


def _records(inspection: Inspection, width: int, room: int) -> list[str]:
    lines: list[str] = []
    for record in inspection.source_records:
        if room - len(lines) < 3:
            break
        text = json.dumps(record.value, ensure_ascii=False, default=str)
        text = _one_line(text[: 2 * RECORD_LINES * width])  # a record may be megabytes
        wrapped = textwrap.wrap(text, width - 2, break_on_hyphens=False) or [""]
        shown = min(RECORD_LINES, room - len(lines) - 2)
        body = wrapped[:shown]
        if len(wrapped) > shown:
            body[-1] = _cut(body[-1] + " …", width - 2)
        lines += [
            "",
            _cut(f"source record {record.index + 1} ({record.location}), as read:", width),
        ]
        lines += [f"  {line}" for line in body]
    return lines


def _tail(inspection: Inspection, width: int) -> list[str]:
    lines: list[str] = []
    if inspection.problems:
        lines += ["", f"errors (first {len(inspection.problems)} of {inspection.errors})"]
        lines += [line for problem in inspection.problems for line in _message(problem, width)]
    if inspection.warnings:
        shown = inspection.warnings[:SHOWN_WARNINGS]
        lines += ["", f"warnings (first {len(shown)} of {len(inspection.warnings)})"]
        lines += [line for warning in shown for line in _message(warning, width)]
    return lines


def _message(text: str, width: int) -> list[str]:
    """A problem's message in at most two lines, the second indented."""
    wrapped = textwrap.wrap(_one_line(text), width - 4, break_on_hyphens=False) or [""]
    rest = _cut(" ".join(wrapped[1:]), width - 4)
    return [f"  {wrapped[0]}", *([f"    {rest}"] if rest else [])]


def _row(label: str, text: str, width: int) -> list[str]:
    """A labelled value, wrapped under its label, at most two lines."""
    wrapped = textwrap.wrap(_one_line(text), width - _LABEL - 2, break_on_hyphens=False) or [""]
    if len(wrapped) > 2:
        wrapped = [wrapped[0], _cut(" ".join(wrapped[1:]), width - _LABEL - 2)]
    indent = " " * (_LABEL + 2)
    return [f"  {label:<{_LABEL}}{wrapped[0]}", *(indent + line for line in wrapped[1:])]


def _one_line(text: Any) -> str:
    return printable(" ".join(str(text).split()), one_line=True)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def cache_json(description: CacheDescription) -> str:
    """What a cache holds, as JSON for a program."""
    return json.dumps(asdict(description), indent=2, ensure_ascii=False)


def cache_text(description: CacheDescription) -> str:
    """What a cache holds, a few lines for a person."""
    d = description
    made_by = "not recorded" if d.model_id is None else d.model_id
    if d.embedder is not None:
        made_by = f"--embedder {d.embedder}, --novelty-text {d.novelty_text} ({d.model_id})"
    ttl = "none" if d.ttl_ms is None else f"{d.ttl_ms / 1000:g} s"
    held = f"{d.live} of {counted(d.capacity, 'vector')} count ({d.dimensions} dimensions)"
    if d.expired:
        held += f"; {d.expired} more expired (older than the TTL), evicted first"
    ids = counted(d.distinct_ids, "distinct id")
    if d.repeated_ids:
        ids += f"; {counted(d.repeated_ids, 'id')} held more than once"
    rows = [
        ("cache", f"{d.format} (a knowledgepulse vector cache)"),
        ("made by", made_by),
        ("held", held),
        ("ttl", ttl),
        ("ids", ids),
    ]
    if d.oldest_ms is not None and d.newest_ms is not None:
        rows.append(("added", f"{_when(d.oldest_ms)} to {_when(d.newest_ms)}"))
    lines = [_one_line(d.file), *(line for row in rows for line in _row(*row, 100))]
    return "\n".join(printable(line, one_line=True) for line in lines) + "\n"


def _when(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
