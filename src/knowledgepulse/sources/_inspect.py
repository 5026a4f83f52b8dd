"""What reading one file does, said: its source and why, and where its first trace came from.

``kp inspect`` shows it: the source, each part of the first trace with the field it was read
from, and that trace beside the records it was made of.

Nothing here describes a converter by hand. The source is the one detection picks (and every
source that recognised the record is named); the columns are the ones the source itself says it
reads (:meth:`Source.mapping`); the other parts are found by looking for the first trace's own
values (its objective, answer, first tool name, source id) among the records it was made of, so
the mapping shown is the one the conversion made, and cannot drift from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse.errors import InputFileError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records._parted import is_parted_folder
from knowledgepulse.records.json_values import nodes
from knowledgepulse.records.readers import read_records, reads_once
from knowledgepulse.sources._chat._text import (
    action_calls,
    json_or_python,
    listed_calls,
    python_calls,
    react_call,
    tool_calls,
    xml_calls,
)
from knowledgepulse.sources._envelope import TraceOptions, request
from knowledgepulse.sources._hosted import tool_name
from knowledgepulse.sources._read import read, undecided_parts
from knowledgepulse.sources._registry import (
    REASONING_TRACE,
    Source,
    asked,
    detect,
    get_source,
    provided_by,
    recognisers,
)
from knowledgepulse.sources._sessions.cline import written_calls
from knowledgepulse.sources._steps import CUT_MARK, RESPOND
from knowledgepulse.sources.openai_agents._items import transfer_tool
from knowledgepulse.sources.otel._haystack import printed_part
from knowledgepulse.sources.otel.messages import loads
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.item import with_task
from knowledgepulse.trace.models import Step

KEPT_RECORDS = 200
"""The records kept to look in: those of the first trace, from where it starts."""
_MIN_INSIDE = 20
"""A value this long may be found inside a longer text (a prompt holding the question)."""
_SHOWN_PROBLEMS = 3

Path_ = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a value of the trace sits in the file: a record, and a path inside it.

    Attributes:
        record: the record's 0-based index among the file's records.
        path: the JSON path of the value inside the record (``messages[1].content``).
        inside: when the value at ``path`` is JSON text, the path inside it (decoded all the
            way: Langfuse keeps JSON text as JSON text again); else ``None``.
        within: whether the trace's value is part of the text there, not all of it.
        where: the path as words, a list of ``{key, value}`` attributes shown by key.
        also: how many other places hold the same value.
    """

    record: int
    path: Path_
    inside: Path_ | None
    within: bool
    where: str
    also: int


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the first trace, its value and where it came from.

    Attributes:
        name: ``objective``, ``steps``, ``answer``, ``tool``, ``model``, ``success``,
            ``reward``, ``task``, ``domain`` or ``id``.
        value: the part's value in the converted trace, as text.
        field: the record field the source says it read the part from (a column), if any.
        origin: where the value was found among the trace's records, if it was.
        note: how the value was made when no field holds it (``default``, ``argument``...).
    """

    name: str
    value: str | None
    field: str | None = None
    origin: Origin | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class StepLine:
    """A step of the trace, in short: its number, type, tool and text."""

    step_id: int
    type: str
    tool: str | None
    text: str


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """A record of the file that the first trace was made of.

    Attributes:
        index: its 0-based index among the file's records.
        location: where it is (``FILE:LINE``).
        value: the record as read (a JSON value or a row).
    """

    index: int
    location: str
    value: Any


@dataclass(frozen=True, slots=True)
class Inspection:
    """What reading one file gives, for a person to check: the result of :func:`inspect_file`.

    Attributes:
        file: the file read.
        source: the source that read it; ``None``: detected, and the file holds no record to
            recognise one by (it is empty, or every record is an error).
        plugin: when the source is a third party's, its class and the installed package that
            publishes it (``acme.sources.AcmeLog, of acme-kp 0.1.0``); ``None``: kp's own.
        named: whether the source was named (``--from``) rather than detected.
        decided_by: the 0-based index of the record the source was chosen on; when detected, no
            source recognised the ones before it.
        evidence: what in that record the source recognised.
        also: the other sources that recognised the record, which the chosen one takes
            precedence over (it overrides them, or it is a ``ReasoningTrace``).
        read_as: what the source says it read (``read as otlp (3 traces)``).
        records: how many records the file holds.
        traces: how many traces it gave.
        errors: how many records or parts could not be read.
        problems: the first of them, with where each is.
        warnings: what reading warned of, each message once, with where it was first said.
        parts: the first trace's parts, and where each came from.
        steps: the first trace's steps.
        success: the first trace's success.
        trace_id: the first trace's id.
        source_records: the first of the records the first trace was made of.
        privacy_level: the first trace's ``metadata.privacy_level`` (``private`` when
            converted), which its redaction follows unless told another level.
    """

    file: str
    source: str | None
    plugin: str | None
    named: bool
    decided_by: int | None
    evidence: str | None
    also: tuple[str, ...]
    read_as: str | None
    records: int
    traces: int
    errors: int
    problems: tuple[str, ...]
    warnings: tuple[str, ...]
    parts: tuple[Part, ...]
    steps: tuple[StepLine, ...]
    success: bool | None
    trace_id: str | None
    source_records: tuple[SourceRecord, ...]
    privacy_level: str | None = None


def inspect_file(
    path: str | Path, *, source: str = "auto", options: TraceOptions | None = None
) -> Inspection:
    """Read a file as :func:`~knowledgepulse.sources.read` does, and say what was read.

    Args:
        path: a JSON, JSON Lines (compressed too), Parquet or Arrow file.
        source: a source's name, or ``auto`` to recognise it from the file's content.
        options: the domain, confidence and row columns, as for ``read``.

    Raises:
        InputFileError: the file cannot be read, or no source (or several) recognises its
            records; the message names the candidates and how to choose.
        UnknownSourceError: ``source`` is not a registered source.
    """
    options = options or TraceOptions()
    name = str(path)
    # A pipe (kp inspect <(...)) read a second time is empty, or waits for a writer for ever.
    if reads_once(name):
        raise InputFileError(
            f"{Location(name)}: inspect reads its file twice (to count it, then to read it as a "
            "run does), which standard input or a pipe cannot be: save it to a file and inspect "
            "that"
        )
    if os.path.isdir(name) and not is_parted_folder(Path(name)):
        raise InputFileError(
            f"{Location(name)}: is a folder; inspect reads one file (validate the folder to "
            "hear what each file in it is read as)"
        )
    kept, count = _head(name)
    chosen, decided = _decide(kept, source)
    first_value = None if decided is None else decided.value
    said: list[str] = []
    item: TraceItem | None = None
    traces = errors = 0
    warnings: dict[str, str] = {}  # each message once, where it was first said
    problems: list[str] = []
    for found in read([name], source=source, options=options, notes=said.append):
        if isinstance(found, Problem):
            if found.warning:
                warnings.setdefault(found.message, str(found))
            else:
                errors += 1
                if len(problems) < _SHOWN_PROBLEMS:
                    problems.append(str(found))
            continue
        traces += 1
        # The task as select, dedupe and split read it: a row's column, else a dotted path of
        # the trace's JSON (a trace file has no column, so the reader alone never sets it).
        item = item or with_task(found, options.rows.task_field)
    # Asked once: a broken plugin's recognises() logs a warning each time it is asked.
    recognising = [] if first_value is None else recognisers(first_value)
    also: tuple[str, ...] = ()
    if source == "auto" and chosen is not None:
        also = tuple(s.name for s in recognising if s.name != chosen.name)
    start = _start(item, kept)
    parts: tuple[Part, ...] = ()
    evidence: str | None = None
    if chosen is not None and chosen in recognising:
        evidence, failure = asked(chosen, "evidence", None, partial(chosen.evidence, first_value))
        if failure is not None:
            warnings.setdefault(failure, failure)
    if item is not None and chosen is not None:
        unknown: dict[str, str] = {}  # a plugin's mapping() that raised: no field named
        call = partial(chosen.mapping, first_value, options)
        mapping, failure = asked(chosen, "mapping", unknown, call)
        if failure is not None:
            warnings.setdefault(failure, failure)
        # Each record looked in, or the first trace ends where another starts (a row file's)
        seen_all = count == len(kept) or traces > 1
        parts = _parts(item, mapping, kept, start, seen_all=seen_all)
    return Inspection(
        file=name,
        source=None if chosen is None else chosen.name,
        plugin=None if chosen is None else provided_by(chosen),
        named=source != "auto",
        decided_by=None if decided is None else decided.location.index or 0,
        evidence=evidence,
        also=also,
        read_as=_read_as(said[0].split(": ", 1)[-1] if said else None, chosen, item, traces),
        records=count,
        traces=traces,
        errors=errors,
        problems=tuple(problems),
        warnings=tuple(warnings.values()),
        parts=parts,
        steps=() if item is None else _steps(item),
        success=None if item is None else item.trace.metadata.success,
        trace_id=None if item is None else item.trace.id,
        source_records=_made_of(parts, kept, start),
        privacy_level=None if item is None else item.trace.metadata.privacy_level,
    )


def _read_as(
    line: str | None, chosen: Source | None, item: TraceItem | None, traces: int
) -> str | None:
    """What the source says it read, and the format its trace was read in, where another.

    A saved conversation is read by the chat format its messages are in (Chat Completions,
    Anthropic...), which the trace keeps as ``metadata.source.format``: the line says it, or
    ``read as conversation`` leaves the user to guess which format kp saw. A ReasoningTrace
    read as itself keeps the format it was once converted from: not this reading's.
    """
    if line is None or item is None or chosen is None or chosen.name == REASONING_TRACE:
        return line
    source = (item.trace.metadata.model_extra or {}).get("source")  # an extra of the spec
    format_ = source.get("format") if isinstance(source, dict) else None
    if not isinstance(format_, str) or format_ == chosen.name:
        return line
    first = "" if traces == 1 else "the first "
    return f"{line}, {first}in the {format_} format"


def _head(name: str) -> tuple[list[Record], int]:
    """The file's first records, and how many it holds."""
    kept: list[Record] = []
    count = 0
    for record in read_records(name):
        if isinstance(record, Problem):
            continue
        count += 1
        if len(kept) < KEPT_RECORDS:
            kept.append(record)
    return kept, count


def _decide(kept: list[Record], source: str) -> tuple[Source | None, Record | None]:
    """The source that reads the file, and the record it was chosen on (``auto``: detected).

    ``None``: ``auto``, and no record to recognise a source by (an empty file, or one whose
    every record is an error): no trace, as ``read`` gives none.
    """
    if source != "auto":  # named: the first record it recognises is the one to explain
        named = get_source(source)
        known = (record for record in kept if named in recognisers(record.value))
        return named, next(known, kept[0] if kept else None)
    if not kept:
        return None, None
    for record in kept:  # the first record a source recognises decides, as in read()
        candidates = detect(record.value)
        if len(candidates) == 1:
            return candidates[0], record
        if candidates:
            raise InputFileError(f"{record.location}: ", *undecided_parts(record.value, candidates))
    first = kept[0]
    raise InputFileError(f"{first.location}: ", *undecided_parts(first.value, []))


def _start(item: TraceItem | None, kept: list[Record]) -> int:
    """The position among ``kept`` of the record the first trace starts at."""
    if item is None:
        return 0
    at = (item.row or item.record).location.index or 0
    return next((place for place, record in enumerate(kept) if record.location.index == at), 0)


def _made_of(parts: tuple[Part, ...], kept: list[Record], start: int) -> tuple[SourceRecord, ...]:
    """The record the first trace starts at, and the next one its parts were found in."""
    found = {part.origin.record for part in parts if part.origin is not None}
    return tuple(
        SourceRecord(record.location.index or 0, str(record.location), record.value)
        for at, record in enumerate(kept[start:])
        if at == 0 or (record.location.index or 0) in found
    )[:2]


def _objective(item: TraceItem, records: list[Record]) -> Part:
    """The objective and where it was found; a warning says why when no record holds it."""
    objective = item.trace.task.objective
    origin = _find(objective, records) or _find(objective, records, framed=True)
    if origin is not None:
        return Part("objective", objective, origin=origin)
    first, _, rest = objective.partition("\n\n")
    origin = _find(first, records) if rest else None
    if origin is not None:  # the request told in several turns (StepBuilder.request_parts)
        return Part("objective", objective, origin=origin, note=CONTINUED_REQUEST)
    joined = _joined(objective, records)
    if joined is not None:
        return Part("objective", objective, origin=joined[0], note=joined[1])
    why = next((text for text in item.warnings if "objective" in text), None)
    return Part("objective", objective, note=why)


CONTINUED_REQUEST = "then the user's turns before the agent's first, a blank line apart"
"""How an objective is made of the user's first turns: the place named is the first one's."""


JOINED = "joined on a new line with the text at"
"""How a value made of several texts is said: the place named is its first part's."""
_JOINED_LINES = 8
"""The first lines a value's first part is looked for in (each cut is one more search)."""


def _joined(value: str, records: list[Record]) -> tuple[Origin, str] | None:
    """Where the first of the texts ``value`` was joined from sits, and where the rest does.

    A message's text parts joined on a new line (a request of text, an image, then more text),
    an alpaca row's ``instruction`` then its ``input``: no one field holds the whole.
    """
    lines = value.split("\n")
    for cut in range(1, min(len(lines), _JOINED_LINES)):
        first = _find("\n".join(lines[:cut]), records, inside_text=False)
        rest = None if first is None else _find("\n".join(lines[cut:]), records)
        if first is not None and rest is not None:
            return first, f"{JOINED} record {rest.record + 1}: {rest.where}"
    return None


def _said(step: Step) -> bool:
    """Whether a step is kp's ``respond``: words said to the user, or theirs, no tool of the run's.

    The first tool shown is the run's own (a Gemini CLI session whose first turns answer the user
    showed ``respond``, made by kp, before its 44 calls); a ``respond`` the run's records name as
    a call (tau-bench's action) has its arguments.
    """
    return step.tool is not None and step.tool.name == RESPOND and step.input is None


def _parts(
    item: TraceItem, fields: dict[str, str], kept: list[Record], start: int, *, seen_all: bool
) -> tuple[Part, ...]:
    parts = _found_parts(item, fields, kept[start:])
    # records never looked in (a long session's last ones): a value not found may be there
    return parts if seen_all else tuple(_looked_short(part) for part in parts)


def _found_parts(
    item: TraceItem, fields: dict[str, str], records: list[Record]
) -> tuple[Part, ...]:
    trace = item.trace
    found = (trace.metadata.model_extra or {}).get("source")  # a converted trace's origins
    source: dict[str, Any] = found if isinstance(found, dict) else {}
    tools = [step.tool.name for step in trace.steps if step.tool is not None and not _said(step)]
    tools = tools or [step.tool.name for step in trace.steps if step.tool is not None]
    domain_note = {
        "argument": "given as a setting (options.domain; kp: --domain)",
        "metadata": "the kp.task_domain metadata key",
        "default": "the default: no domain column or kp.task_domain key",
    }.get(str(source.get("domain_source")), "the trace's own task_domain")
    reward = None if item.reward is None else f"{item.reward:g}"
    model = source.get("model") if isinstance(source.get("model"), str) else None
    return (
        _objective(item, records),
        Part("steps", f"{len(trace.steps)} steps", field=fields.get("steps")),
        _tool(tools[0] if tools else None, records),
        Part(
            "answer",
            trace.outcome.result_summary,
            origin=_find(trace.outcome.result_summary, records),
        ),
        Part("model", model, origin=_find(model, records, inside_text=False) if model else None),
        Part(
            "success",
            str(trace.metadata.success).lower(),
            field=fields.get("success"),
            note=None if "success" in fields else _success_note(source, fields),
        ),
        Part(
            "reward", reward, field=fields.get("reward", fields.get("success")) if reward else None
        ),
        Part(
            "task",
            item.task,
            field=fields.get("task"),
            origin=_find(item.task, records) if item.task and "task" not in fields else None,
        ),
        Part(
            "domain",
            trace.metadata.task_domain,
            field=fields.get("domain") if source.get("domain_source") == "metadata" else None,
            note=domain_note,
        ),
        Part(
            "id",
            trace.id,
            field=fields.get("id"),
            origin=_find(str(source.get("trace_id", "")), records) if "id" not in fields else None,
        ),
    )


HANDED_TO = "the Agents SDK's name for a handoff to the agent named there"
"""How a handoff's tool is said: the SDK names it after the agent (``transfer_to_<agent>``)."""
HOSTED = "a call of a tool the API runs, named by its item's type less _call"
"""How a hosted tool is said: a Responses item's type names it (``web_search_call``)."""


def _hosted_tool(text: str) -> str | None:
    """The tool a Responses item of this type calls, as the readers name it."""
    return tool_name({"type": text})


_NAMED_FROM: tuple[tuple[Callable[[str], str | None], str], ...] = (
    (transfer_tool, HANDED_TO),
    (_hosted_tool, HOSTED),
)
"""The readers' rules that name a tool from another text, and how each is said."""


def _tool(name: str | None, records: list[Record]) -> Part:
    """The first tool the run called, and where its name sits or the text it was named from."""
    if name is None:
        return Part("tool", None)
    origin = _find(name, records, inside_text=False, called=True)
    if origin is not None:
        return Part("tool", name, origin=origin)
    for named, note in _NAMED_FROM:
        origin = _find(name, records, inside_text=False, named_from=named)
        if origin is not None:
            return Part("tool", name, origin=origin, note=note)
    return Part("tool", name)


UNSEEN = (
    f"made by the source, or past the first {KEPT_RECORDS} records, where the inspection "
    "stops looking"
)
"""Why a value was not found in a file longer than the records looked in (a long session)."""


def _looked_short(part: Part) -> Part:
    """A part whose value no record looked in holds, said as perhaps in the records not seen."""
    unfound = part.origin is None and part.field is None and part.note is None
    if part.value is None or not unfound or part.name not in ("objective", "tool", "answer"):
        return part
    return replace(part, note=UNSEEN)


def _success_note(source: dict[str, Any], fields: dict[str, str]) -> str:
    if not source:  # not converted: a ReasoningTrace read as itself
        return "the trace's own metadata.success"
    if "steps" in fields:  # rows without a success column
        return "no column: whether the conversation ends in an answer"
    return "the source's own rule (the run's status, its errors)"


def _steps(item: TraceItem) -> tuple[StepLine, ...]:
    return tuple(
        StepLine(
            step.step_id,
            step.type,
            None if step.tool is None else step.tool.name,
            " ".join((step.content or "").split()),
        )
        for step in item.trace.steps
    )


def _find(
    value: str | None,
    records: list[Record],
    *,
    inside_text: bool = True,
    framed: bool = False,
    called: bool = False,
    named_from: Callable[[str], str | None] | None = None,
) -> Origin | None:
    """Where ``value`` first sits among ``records`` (whole, else inside a longer text if asked).

    A name (a tool's) is looked for whole only: a prompt listing the tools holds it too.
    ``framed``: ``value`` is the request a text holds inside a framework's prompt around it
    (:func:`~knowledgepulse.sources._envelope.request`), however short (a DSPy field's ``What is
    2+2?``). ``called``: ``value`` is a tool's name, also found as the name of a call a text
    holds (:func:`_called`). ``named_from``: ``value`` is a name a reader made from a
    text (a handoff's tool from its agent's name), found where that text is.
    """
    if not value or not value.strip():
        return None
    wanted = _folded(value)
    cut = wanted.endswith(CUT_MARK)
    wanted = wanted.removesuffix(CUT_MARK).rstrip()
    written = loads(value)  # an answer that is an object's JSON text (structured output)
    whole: list[tuple[int, Path_, Path_ | None, Any]] = []
    equal: list[tuple[int, Path_, Path_ | None, Any]] = []  # the object a JSON text writes
    inside: list[tuple[int, Path_, Path_ | None, Any]] = []
    for index, record in enumerate(records):
        for text, path, within, root in _values(record.value):
            if not isinstance(text, str):
                if isinstance(written, (dict, list)) and written and text == written:
                    equal.append((index, path, within, root))
                continue
            folded = _folded(text)
            if (
                folded == wanted
                or (cut and folded.startswith(wanted))
                or (named_from is not None and named_from(folded) == wanted)
            ):
                whole.append((index, path, within, root))
            elif (
                (inside_text and len(wanted) >= _MIN_INSIDE and wanted in folded)
                or (framed and _folded(request(text) or "") == wanted)
                # a call's name is written in its text: parse only a text that holds it
                or (called and wanted in folded and wanted in _called(text))
            ):
                inside.append((index, path, within, root))
    found = whole or equal or inside  # the text itself before the object it writes
    if not found:
        return None
    whole = whole or equal
    index, path, within, root = found[0]
    record = records[index]
    where = _where(root, path) + ("" if within is None else f" (JSON) {format_path(within)}")
    return Origin(record.location.index or 0, path, within, not whole, where, len(found) - 1)


def _called(text: str) -> list[str]:
    """The names of the calls ``text`` holds, as the readers read them from a text.

    The OpenAI SDK's repr (the contrib OpenAI Agents instrumentation writes a handoff only as
    ``ResponseFunctionToolCall(..., name='transfer_to_x', ...)``), and the calls a model writes
    in a text of its own protocol: Hermes' ``<tool_call>``, Nemotron's ``<TOOLCALL>``, the
    ``<function=NAME>`` XML, ``<action>`` JSON, ReAct's ``Action:``, ToolACE's ``[f(x=1)]``,
    Cline's tags (``<write_to_file>``).
    """
    part = printed_part(text)
    if part is not None:
        name = part.get("name") if part["type"] == "tool_call" else None
        return [name] if isinstance(name, str) else []
    written = [
        *tool_calls(text)[0],
        *listed_calls(text)[0],
        *xml_calls(text)[0],
        *action_calls(text)[0],
        *(python_calls(text) or []),
    ]
    react = react_call(text)
    names = [call.name for call in written] + ([] if react is None else [react[0].name])
    return names + written_calls(text)


_REPR_LIMIT = 10_000
"""The longest text read as a Python repr: a call's is short, and each search parses again (a
99 KB repr on each of 200 records made an inspection take a minute)."""


def _values(value: Any) -> Iterator[tuple[Any, Path_, Path_ | None, Any]]:
    """Every value under ``value`` with its path; a string of JSON (or a repr) is looked into."""
    for node, loc in nodes(value):
        yield node, tuple(loc), None, value
        if not isinstance(node, str):
            continue
        parsed = loads(node)  # JSON text, or JSON text of JSON text (as Langfuse keeps it)
        if parsed is node and len(node) <= _REPR_LIMIT and node.lstrip()[:1] in ("[", "{"):
            parsed = json_or_python(node)  # a repr (a ShareGPT function-call turn's call)
        if parsed is node or parsed is None:
            continue
        for inner, inner_loc in nodes(parsed):
            yield inner, tuple(loc), tuple(inner_loc), value


def _where(root: Any, path: Path_) -> str:
    """The path as words: an item of a ``[{key, value}]`` list (OTLP attributes) by its key."""
    text = ""
    node = root
    for step in path:
        item = _child(node, step)
        key = item.get("key") if isinstance(step, int) and isinstance(item, dict) else None
        # format_path spells one step after a first one: ``.name``, ``[3]`` or ``['a b']``.
        text += f"[key={key}]" if isinstance(key, str) else format_path(("_", step))[1:]
        node = item
    return text.lstrip(".") or "$"


def _child(node: Any, step: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(step)
    return node[step] if isinstance(node, list) and isinstance(step, int) else None


def _folded(text: str) -> str:
    return " ".join(text.split())


__all__ = ["Inspection", "Origin", "Part", "SourceRecord", "StepLine", "inspect_file"]
