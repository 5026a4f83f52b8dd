"""A finished ``RunResult`` made into a ReasoningTrace, after the fact, with no tracing needed.

``result.new_items`` holds the run's reasoning, messages, tool calls and their outputs (merged by
``call_id``), and handoffs; ``result.input`` the objective; ``result.final_output`` the answer.
It holds no timings and no span errors: a failed tool is recognised by the SDK's default failure
wording (``An error occurred while running the tool...``), or by the raw output the SDK's shell
and apply_patch tools answer with (``status: failed``, a command's non-zero exit). A tool with
its own ``failure_error_function`` is better captured live with :func:`processor`, which sees
the span's error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from knowledgepulse._util.jsonpath import as_object, as_string, non_empty
from knowledgepulse.errors import Setting, SettingTypeError
from knowledgepulse.sources._envelope import TraceOptions, assemble, last_model
from knowledgepulse.sources._hosted import approved_request, output_failed, refusal, tool_name
from knowledgepulse.sources._steps import StepBuilder, as_text
from knowledgepulse.sources.openai_agents._items import (
    Entry,
    final_answer_index,
    is_sdk_tool_error,
    output_item_entries,
    output_text,
    tell,
    user_text,
)
from knowledgepulse.sources.openai_agents._spans import CONTENT_HINT, FRAMEWORK, INTERRUPTED, SOURCE
from knowledgepulse.trace import TraceItem

_OUTPUT_ITEMS = ("tool_call_output_item", "handoff_output_item")


def plain(value: Any) -> Any:
    """A live SDK value (a pydantic model, a dataclass) as plain JSON-like data."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json", exclude_none=True)
        except Exception:  # an odd model: its text will do
            return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json.loads(json.dumps(dataclasses.asdict(value), default=str))
    return value


def to_trace(
    result: Any, *, domain: str | None = None, confidence: float | None = None
) -> TraceItem:
    """The ReasoningTrace of a finished Agents SDK run.

    Args:
        result: what ``Runner.run`` / ``Runner.run_sync`` returned (a ``RunResult``), or a
            finished ``RunResultStreaming``.
        domain: the trace's ``task_domain`` (else ``default``).
        confidence: the outcome's confidence (else 0.8 on success, 0.2 on failure).

    Raises:
        SettingTypeError: ``result`` has no ``new_items`` (it is not a run result).
        ConversionError: the run produced no step at all.
    """
    items = getattr(result, "new_items", None)
    if not isinstance(items, list):
        raise SettingTypeError(
            Setting("result"),
            f": expected an Agents SDK RunResult (with new_items), not {type(result).__name__}",
        )
    return result_trace(result, TraceOptions(domain=domain, confidence=confidence))


def result_trace(
    result: Any,
    options: TraceOptions,
    *,
    unfinished: str | None = None,
    unanswered: str | None = None,
) -> TraceItem:
    """The trace of anything shaped as a ``RunResult`` (``new_items``, ``input``, ...).

    ``unfinished`` is the warning of a run known to have stopped before its end (a saved
    ``RunState`` whose next step was still to run): no success, and the warning says why.
    ``unanswered`` is the warning of a run that holds no output of its own (a ``RunState``)
    when its items end with no answer: only a final message would say it ended.
    """
    items = getattr(result, "new_items", None) or []
    entries = _entries(items)
    builder = StepBuilder()
    answer_index = final_answer_index(entries)
    tell(builder, entries, answer=entries[answer_index] if answer_index is not None else None)
    final_output = getattr(result, "final_output", None)
    final_text = as_text(plain(final_output)) if final_output is not None else None
    if answer_index is None and final_text:
        builder.answer(final_text)
    if unfinished is None and answer_index is None and not final_text:
        unfinished = unanswered
    interruptions = getattr(result, "interruptions", None) or []
    warnings = (
        (_interrupted(interruptions, _agent_name(result)),)
        if interruptions
        else ((unfinished,) if unfinished else ())
    )
    trace_state = getattr(result, "_trace_state", None)
    trace_id = getattr(trace_state, "trace_id", None)
    metadata = getattr(trace_state, "metadata", None)
    return assemble(
        builder,
        source=SOURCE,
        source_id=trace_id or _digest(result, entries),
        success=not warnings,
        options=options,
        objective=user_text(plain(getattr(result, "input", None))),
        fallback_objective=_agent_name(result),
        result_summary=final_text,
        agent_id=_agent_name(result),
        framework=FRAMEWORK,
        model=_model(items),
        metadata=metadata if isinstance(metadata, Mapping) else None,
        warnings=warnings,
        content_hint=CONTENT_HINT,
    )


def _interrupted(interruptions: list[Any], agent: str | None) -> str:
    """The warning of a run stopped for approval, naming each call that awaits it.

    Each interruption (a ``ToolApprovalItem``, live or saved) names its call's tool, as the
    spans' reader names the calls with no output. A call another agent asked for (an agent run
    as a tool: the JavaScript SDK's nested approval) is in no item of the run, no step: its
    arguments and that agent are said too, or nothing would keep them.
    """
    awaiting: list[str] = []
    for item in interruptions:
        raw = as_object(plain(_field(item, "raw_item")))
        name = non_empty(_field(item, "tool_name")) or tool_name(raw)
        asked = non_empty(_field(as_object(plain(_field(item, "agent"))), "name"))
        if name is not None and asked is not None and asked != agent:
            arguments = as_text(raw.get("arguments"))
            awaiting.append(f"{name} {arguments} (asked by {asked})" if arguments else name)
        elif name is not None:
            awaiting.append(name)
    return f"{INTERRUPTED}: {', '.join(awaiting)}" if awaiting else INTERRUPTED


def _field(item: Any, name: str) -> Any:
    """A saved item's field, or a live one's attribute."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _model(items: list[Any]) -> str | None:
    """The model of the run's last reply, as its items keep it (``provider_data.model``).

    A Chat Completions (or LiteLLM) model's items carry the model that made them
    (``{"model", "response_id"}``); a Responses model's carry none (no model, then).
    """
    return last_model(
        as_object(as_object(plain(getattr(item, "raw_item", None))).get("provider_data")).get(
            "model"
        )
        for item in items
    )


def _entries(items: list[Any]) -> list[Entry]:
    entries: list[Entry] = []
    names: dict[str, str] = {}
    held: set[str] = set()  # the ids of the MCP approval requests told as calls
    for item in items:
        kind = getattr(item, "type", None)
        raw = plain(getattr(item, "raw_item", None))
        if kind in ("message_output_item", "reasoning_item", "mcp_list_tools_item"):
            entries.extend(output_item_entries(raw))
        elif kind in _APPROVAL_ITEMS:
            entries.extend(_approval(kind, as_object(raw), names, held))
        elif kind == "tool_call_item" and _approved_run(raw, held):
            # the approved request run (its ``approval_request_id``): its result, not a call
            ran = output_item_entries(raw)[0]
            request = str(as_object(raw)["approval_request_id"])
            entries.append(dataclasses.replace(ran, kind="output", call_id=request))
        elif kind in ("tool_call_item", "handoff_call_item"):
            found = output_item_entries(raw) or [_unknown_call(item, raw)]
            for entry in found:
                if entry.call_id:
                    names[entry.call_id] = entry.name
            entries.extend(found)
        elif kind in _OUTPUT_ITEMS:
            entries.append(_output(item, raw, names))
        elif kind == "tool_search_call_item":
            entries.extend(output_item_entries(raw))
        elif kind == "tool_search_output_item":
            _search_output(entries, raw)
    return entries


_APPROVAL_ITEMS = ("mcp_approval_request_item", "mcp_approval_response_item")


def _approval(
    kind: str, raw: Mapping[str, Any], names: dict[str, str], held: set[str]
) -> list[Entry]:
    """A hosted MCP approval, read as the Responses reader reads its items.

    The request (an ``mcp_approval_request``: the tool's ``name``, its ``arguments``, the
    ``server_label`` of its server) is the model's call of the tool, waiting for the user; the
    user's response (``mcp_approval_response``) that refuses it (``approve: false``, and its
    ``reason``) is that call's failure. An approval is no step of its own: the ``mcp_call`` that
    runs an approved request is its result.
    """
    if kind == "mcp_approval_request_item":
        request = non_empty(raw.get("id"))
        name = tool_name(raw) or "mcp"
        if request:
            names[request] = name
            held.add(request)
        server = non_empty(raw.get("server_label"))
        arguments = raw.get("arguments")
        return [
            Entry("request", name=name, arguments=arguments, call_id=request, mcp_server=server)
        ]
    request, said = non_empty(raw.get("approval_request_id")), refusal(raw)
    if said is None or request not in held:
        return []
    return [Entry("output", name=names[request], error=said, call_id=request)]


def _approved_run(raw: Any, held: set[str]) -> bool:
    """Whether a run item is the ``mcp_call`` that ran an approval request told as a call."""
    return approved_request(as_object(raw)) in held


def _search_output(entries: list[Entry], raw: Any) -> None:
    """A server tool search's result, on the search the run item before it holds.

    The SDK keeps the hosted search's call and its result as two run items, with no id to join
    them: the result belongs to the search with none yet before it.
    """
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if entry.kind == "hosted" and entry.name == "tool_search" and entry.output is None:
            tools = as_object(raw).get("tools")
            entries[index] = dataclasses.replace(entry, output=tools if tools is not None else raw)
            return


def _unknown_call(item: Any, raw: Any) -> Entry:
    name = getattr(item, "tool_name", None)
    raw_type = as_object(raw).get("type")
    # A call the reader does not know (a programmatic ``program`` call) keeps its id on its raw
    # item, as every call does: its output joins it by that id, not as a call of its own.
    call_id = getattr(item, "call_id", None) or as_object(raw).get("call_id")
    arguments = as_object(raw).get("arguments")
    if arguments is None and "code" in as_object(raw):  # a ``program`` call's input: its code
        arguments = {"code": as_object(raw)["code"]}
    return Entry(
        "request",
        name=str(name or raw_type or "tool"),
        arguments=arguments,
        call_id=as_string(call_id),
    )


def _output(item: Any, raw: Any, names: Mapping[str, str]) -> Entry:
    call_id = as_object(raw).get("call_id")
    call_id = non_empty(call_id)
    value = getattr(item, "output", None)
    if value is None and isinstance(raw, Mapping):
        value = raw.get("output")
    text = output_text(plain(value))
    name = names.get(call_id or "", "tool")
    failed = is_sdk_tool_error(text) or _client_call_failed(raw)
    return Entry(
        "output",
        name=name,
        output=text,
        error=(text or f"{name} failed") if failed else None,
        call_id=call_id,
    )


def _client_call_failed(raw: Any) -> bool:
    """Whether the raw output of a tool the SDK runs itself says it failed.

    The SDK writes its shell and apply_patch tools' outputs as the Responses items they answer
    with: ``status: failed`` when the executor raised (or a patch did not apply), and, for the
    shell, each command's chunk with its ``outcome`` (a non-zero exit, a timeout). The item's
    ``output`` is the text the model was sent (what the commands printed), read as it is.
    """
    item = as_object(raw)
    kind = item.get("type")
    # (a ``local_shell_call_output`` is the executor's text alone, its status never ``failed``)
    if kind not in ("shell_call_output", "apply_patch_call_output"):
        return False
    return output_failed(item.get("status"), item.get("output"))


def _agent_name(result: Any) -> str | None:
    try:
        agent = result.last_agent
    except Exception:  # the result dropped its agents (release_agents): no name to give
        return None
    return non_empty(getattr(agent, "name", None))


def _digest(result: Any, entries: list[Entry]) -> str:
    """A stable id for a run the SDK gave none: the same run always gets the same id."""
    content = json.dumps(
        [
            plain(getattr(result, "input", None)),
            [dataclasses.astuple(entry) for entry in entries],
            plain(getattr(result, "final_output", None)),
        ],
        default=str,
        sort_keys=True,
    )
    return "openai-agents-" + hashlib.sha256(content.encode()).hexdigest()[:32]
