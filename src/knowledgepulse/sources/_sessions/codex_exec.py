"""``codex exec --json`` output (and the Codex SDK's thread events) as traces: a thread a trace.

Each line is a thread event: ``thread.started`` (its ``thread_id``, the trace's id),
``turn.started``, ``item.started`` / ``item.updated`` / ``item.completed`` (an ``item`` with
its ``id`` and ``type``), ``turn.completed`` (``usage``), ``turn.failed`` (``error.message``)
and ``error`` (``message``). An item is told once, as it last stood (its ``started`` and
``updated`` lines are earlier states of it), where it first appeared. The mapping:
``reasoning`` is a thought; ``agent_message`` a thought, the last one after the last call the
answer; ``command_execution`` a ``shell`` call of its ``command``, answered by its
``aggregated_output``, an error when its ``exit_code`` is not 0 or its ``status`` is ``failed``
or ``declined`` (the next action its error_recovery); ``file_change`` an ``apply_patch`` call of
its ``changes``, answered by them (an error when ``failed``); ``mcp_tool_call`` a call of
``<server>__<tool>`` (the name Codex gives the model) with its ``arguments``, answered by its
``result`` or ``error``; ``web_search`` a ``web_search`` call of its ``query`` (else its
``action``), answered by its ``results`` when it has them; ``todo_list`` an ``update_plan`` call
of its ``items``; ``collab_tool_call`` (Codex 0.15x's sub-agents) a call of its ``tool``
(``spawn_agent``, ``send_input``, ``wait``, ``close_agent``: the tools Codex gives the model) with
its ``prompt`` and the threads it names, answered by its ``agents_states`` (each sub-agent's
status and message), an error when ``failed`` or a sub-agent it names ``errored`` or was
``not_found``; an ``error`` line an evident error, and ``turn.failed`` a terminal one (once,
when the ``error`` line before it said the same), each said by its message, or where that is the
model API's JSON body, by the body's ``error.message`` (else its ``message``). An ``error``
item is Codex's non-fatal notice (a config warning), nothing the agent did: left out, with a
warning that quotes it, as are item and event types kp does not know.

The stream holds no prompt (``codex exec`` takes it as an argument, and the session's rollout
file keeps it): the objective is the envelope's placeholder, with a warning that says so.
A ``thread.started`` of a thread told before (``codex exec resume`` writes it again) goes on
with that thread: one trace, its turns in order. Success: the last turn did not fail and ends in
the agent's answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat._row import Calls
from knowledgepulse.sources._chat._text import api_error_text, content_text
from knowledgepulse.sources._envelope import (
    PLACEHOLDER_OBJECTIVE,
    PathError,
    TraceOptions,
    assemble,
    finished,
)
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

EVENTS = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
"""The ``type`` of a thread event."""
_CALLS = frozenset(
    {
        "command_execution",
        "file_change",
        "mcp_tool_call",
        "web_search",
        "todo_list",
        "collab_tool_call",
    }
)
"""The item types that are tool calls: an agent message after the last of them is the answer."""
_FAILURE = "turn error"
"""The type of the entry an ``error`` line or ``turn.failed`` becomes among a thread's items."""
_FAILED = frozenset({"failed", "declined"})
"""The ``status`` of an item that did not do what the agent asked."""
_AGENT_FAILED = frozenset({"errored", "not_found"})
"""The ``status`` of a sub-agent, in a ``collab_tool_call``'s ``agents_states``, that says the
call did not get what it asked for: the agent failed, or there was no such agent."""
NO_PROMPT = (
    f"{PLACEHOLDER_OBJECTIVE}: codex exec --json does not write the prompt it was given "
    "(the session's rollout file, ~/.codex/sessions/.../rollout-*.jsonl, keeps it; kp reads that "
    "too)"
)


@dataclass
class _Thread:
    """One thread's items as they last stood, in the order they first appeared."""

    first: Record
    id: str | None = None
    items: dict[tuple[int, str], Mapping[str, Any]] = field(default_factory=dict)
    turns: int = 0
    failed: bool = False
    """Whether the last turn failed (``turn.failed``)."""
    unknown: set[str] = field(default_factory=set)
    """The event types kp does not know, left out."""


def recognises(value: Any) -> bool:
    """Whether a file's first record is a thread event of ``codex exec --json``."""
    if not isinstance(value, dict) or as_string(value.get("type")) not in EVENTS:
        return False
    kind = value["type"]
    if kind == "thread.started":
        return isinstance(value.get("thread_id"), str)
    if kind.startswith("item."):
        return isinstance(value.get("item"), dict)
    if kind == "error":  # a run that failed before its thread started
        return value.keys() == {"type", "message"} and isinstance(value["message"], str)
    return kind.startswith("turn.") and value.keys() <= {"type", "usage", "error"}


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """One trace per thread of a stream's records; a line that cannot be read is a problem."""
    threads: list[_Thread] = []
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        try:
            _tell(threads, item)
        except PathError as error:
            yield item.problem(error.path, error.message)
    for thread in threads:
        yield finished(partial(_finish, thread, options), thread.first)


def _tell(threads: list[_Thread], record: Record) -> None:
    value = record.value
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise PathError(
            (),
            f"not a codex exec --json event: {describe_value(value)}; expected "
            f"{{type: {'|'.join(sorted(EVENTS))}, ...}}",
        )
    kind = value["type"]
    if kind == "thread.started":
        # `codex exec resume` starts its thread again: the same thread, later turns. Another
        # id is a stream of its own (appended to another's file).
        found = value.get("thread_id") or None
        known = next((thread for thread in threads if found and thread.id == found), None)
        if known is not None:
            threads.remove(known)
        threads.append(known or _Thread(record, found))
        return
    if not threads:  # a stream cut before its first line
        threads.append(_Thread(record))
    thread = threads[-1]
    if kind == "turn.started":
        thread.turns += 1
        thread.failed = False
    elif kind.startswith("item."):
        item = value.get("item")
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            raise PathError(
                ("item",), f"expected an item {{id, type, ...}}, found {describe_value(item)}"
            )
        # Item ids count from 0 again in each `codex exec` run: a turn's own.
        key = (thread.turns, str(item.get("id", len(thread.items))))
        thread.items[key] = item  # its latest state, where it first appeared
    elif kind in ("error", "turn.failed"):
        error = value.get("error") if kind == "turn.failed" else value
        message = error.get("message") if isinstance(error, dict) else None
        text = api_error_text(message) if isinstance(message, str) and message else None
        text = text or f"the turn failed ({kind})"
        thread.failed = thread.failed or kind == "turn.failed"
        if kind == "turn.failed" and thread.items:  # the error just told, now known to end it
            key, last = next(reversed(thread.items.items()))
            if last["type"] == _FAILURE and last.get("message") == text:
                thread.items[key] = {**last, "terminal": True}
                return
        key = (thread.turns, f"{kind}:{len(thread.items)}")
        thread.items[key] = {"type": _FAILURE, "message": text, "terminal": kind == "turn.failed"}
    elif kind != "turn.completed":
        thread.unknown.add(kind)


def _finish(thread: _Thread, options: TraceOptions) -> TraceItem:
    builder = StepBuilder()
    calls = Calls(builder)
    items = list(thread.items.values())
    last_call = max((i for i, item in enumerate(items) if item["type"] in _CALLS), default=-1)
    answer_at = max(
        (i for i, item in enumerate(items) if item["type"] == "agent_message" and i > last_call),
        default=-1,
    )
    answer_at = -1 if thread.failed else answer_at  # what it said before failing: no answer
    unread = {
        item["type"]
        for index, item in enumerate(items)
        if not _tell_item(calls, item, answer=index == answer_at)
    }
    notices = [str(item.get("message")) for item in items if item["type"] == "error"]
    warnings = [NO_PROMPT]
    if notices:  # Codex's own notices (a config warning): no step of the agent's failed
        warnings.append(f"{len(notices)} non-fatal error items left out: {notices[0][:200]}")
    if unread - {"error"} or thread.unknown:
        left = ", ".join(sorted((unread - {"error"}) | thread.unknown))
        warnings.append(f"items and events of a type kp does not know were left out: {left}")
    location = thread.first.location
    return assemble(
        builder,
        source="codex",
        source_id=thread.id or Path(location.file).stem,
        success=not thread.failed and answer_at >= 0 and builder.final_answer is not None,
        options=options,
        result_summary=builder.final_answer,
        agent_id="codex",
        framework="codex",
        warnings=tuple(warnings),
        source_extra={"dialect": "exec-json"},
        content_hint="codex exec --json writes the items of every turn",
        location=Location(location.file, location.line),
    )


def _tell_item(calls: Calls, item: Mapping[str, Any], *, answer: bool) -> bool:
    """Tell the builder one item, as it last stood; whether its type is known."""
    builder, kind = calls.builder, item["type"]
    if kind == "reasoning":
        builder.thought(as_string(item.get("text")))
    elif kind == "agent_message" and answer:
        builder.answer(as_string(item.get("text")))
    elif kind == "agent_message":
        calls.said(as_string(item.get("text")))
    elif kind == _FAILURE:
        builder.error(as_string(item.get("message")), terminal=item.get("terminal") is True)
    elif kind in _CALLS:
        _tell_call(calls, item, kind, as_string(item.get("id")))
    else:
        return False
    return True


def _tell_call(calls: Calls, item: Mapping[str, Any], kind: str, call_id: str | None) -> None:
    """Tell a tool call item and, once it ended, its result."""
    status = as_string(item.get("status"))
    ended, failed = status in ("completed", *_FAILED), status in _FAILED
    if kind == "command_execution":
        calls.request("shell", {"command": item.get("command")}, call_id)
        code, output = item.get("exit_code"), as_string(item.get("aggregated_output")) or ""
        failed = failed or code not in (0, None)
        if code is not None or ended:
            why = f"exit code {code}" if code not in (0, None) else str(status)
            calls.result(
                "shell", (output or why) if failed else output, call_id=call_id, is_error=failed
            )
    elif kind == "file_change":
        listed = item.get("changes")
        changes: list[Any] = listed if isinstance(listed, list) else []
        calls.request("apply_patch", {"changes": changes}, call_id)
        told = [f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict)]
        if ended:
            calls.result(
                "apply_patch", "\n".join(told) or str(status), call_id=call_id, is_error=failed
            )
    elif kind == "mcp_tool_call":
        name = f"{item.get('server')}__{item.get('tool')}"
        calls.request(name, item.get("arguments"), call_id)
        error, result = item.get("error"), item.get("result")
        if isinstance(error, dict) and error:
            said = as_string(error.get("message")) or "error"
            calls.result(name, said, call_id=call_id, is_error=True)
        elif isinstance(result, dict):
            text = content_text(result.get("content"))
            calls.result(
                name, text if text is not None else result, call_id=call_id, is_error=failed
            )
    elif kind == "web_search":  # Codex 0.15x: the search in its `action`, its `results`
        action = item.get("action")
        query = item.get("query") or (action.get("query") if isinstance(action, dict) else None)
        calls.request("web_search", {"query": query} if query else {"action": action}, call_id)
        if isinstance(item.get("results"), list):
            calls.result("web_search", item["results"], call_id=call_id, is_error=failed)
    elif kind == "collab_tool_call":
        _tell_collab(calls, item, call_id, ended=ended, failed=failed)
    else:  # todo_list: the plan the agent keeps (Codex's update_plan tool)
        calls.request("update_plan", {"items": item.get("items")}, call_id)


def _tell_collab(
    calls: Calls, item: Mapping[str, Any], call_id: str | None, *, ended: bool, failed: bool
) -> None:
    """A sub-agent call (``spawn_agent``, ``send_input``, ``wait``, ``close_agent``) and its result.

    What the model asked: the ``prompt`` it gave, and the threads it named (a spawn names none:
    the thread it made is its result). The result is what ``agents_states`` says of each thread,
    its status and the agent's message (``wait`` returns the sub-agent's answer so).
    """
    name = as_string(item.get("tool")) or "collab_tool_call"
    receivers = item.get("receiver_thread_ids")
    asked: dict[str, Any] = {}
    if item.get("prompt") is not None:
        asked["prompt"] = item["prompt"]
    if name != "spawn_agent" and isinstance(receivers, list) and receivers:
        asked["receiver_thread_ids"] = receivers
    calls.request(name, asked, call_id)
    if not ended:
        return
    listed = item.get("agents_states")
    states = listed if isinstance(listed, dict) else {}
    told: list[str] = []
    for thread, state in states.items():
        status = as_string(state.get("status")) if isinstance(state, dict) else None
        message = as_string(state.get("message")) if isinstance(state, dict) else None
        failed = failed or status in _AGENT_FAILED
        told.append(": ".join(part for part in (thread, status, message) if part))
    status = as_string(item.get("status")) or "completed"
    calls.result(name, "\n".join(told) or status, call_id=call_id, is_error=failed)
