"""Letta agent files (``.af``) as traces: the message history a stateful agent was exported with.

Letta (letta-ai/letta; the format's examples in letta-ai/agent-file) exports an agent as JSON, in
two versions, both read:

* since Letta 0.12 (October 2025), ``AgentFileSchema``: ``{agents: [...], groups, blocks, files,
  sources, tools, mcp_servers, metadata, created_at}``, each agent with its ``agent_type``,
  ``name``, ``id`` (renumbered ``agent-0``...), ``messages`` and ``in_context_message_ids``; a
  sleep-time group exports its background memory agent beside the agent it serves (a ``groups``
  entry whose ``manager_config`` names the manager). Some files hold that JSON as a JSON string
  (``json.dumps`` of the JSON), read as the object it holds;
* before (Letta 0.6 to 0.11), one agent: ``{agent_type, name, core_memory, llm_config, tools,
  messages, in_context_message_indices, version, ...}``.

Each agent whose history holds words of the user's is one trace (an agent exported with its
system prompt, boot messages and login event alone holds no run: a file of none is a problem).
Every message is read, in the order the file keeps, those evicted from the context window (not in
``in_context_...``) too: they ran, as the turns before a compaction of other sessions.

The messages are Letta's ``Message`` rows (``role`` ``system``, ``user``, ``assistant``,
``tool``, ``approval``; ``content`` a list of parts, or text in the older files), read as Letta
itself shows them (``Message.to_letta_messages``):

* a ``user`` message is the user's words, but Letta's own packed events: JSON with a ``type``,
  ``{"type": "user_message", "message": ...}`` holding the user's words (``unpack_message``),
  ``heartbeat`` (Letta returning control to the agent after a call), ``login`` and
  ``system_alert`` (a summary of evicted messages, a memory warning) no one's words. The first
  words are the objective, a later one the user's reply; ``<system-reminder>`` blocks (Letta
  Code's) are no part of them;
* an ``assistant`` (or ``approval`` request) message's ``reasoning`` parts are thoughts, and its
  ``text`` the inner monologue of a MemGPT-style agent (a thought), but for a ``letta_v1_agent``,
  whose text is what it says to the user (Letta's ``text_is_assistant_message``). A call of
  ``send_message``, the tool through which a MemGPT-style agent speaks, is no tool call: its
  ``message`` is said to the user (Letta's ``AssistantMessage``), and its return is dropped;
  every other call is a tool call, its arguments less the ``request_heartbeat`` Letta adds to
  each tool (and takes out before running it);
* a ``tool`` message's returns (``tool_returns``, else its text) are Letta's packed results
  ``{"status": "OK"|"Failed", "message": ..., "time": ...}``: the ``message`` the observation,
  an evident error when the status is ``Failed`` or the return's ``status`` ``error`` (a call
  the user denied on approval too); the agent's next action is its ``error_recovery``.

``system`` messages (the prompt, rebuilt as the memory changed) and ``summary`` ones (Letta's
newer record of a compaction) are no turn; nor are the boot messages Letta writes into a new
MemGPT-style agent before any user message. A file records no outcome: success is whether the
history ends in what the agent said to the user, or in the return of a tool the agent's
``tool_rules`` end its run with (``exit_loop``, Letta's ``TerminalToolRule``: a workflow agent
that ends on ``reject`` or ``send_email`` says nothing, by design), unless that return failed. The
last thing said, with no call or user turn after it, is the answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from knowledgepulse._util.jsonpath import as_string, describe_value, non_empty
from knowledgepulse._util.text import counted
from knowledgepulse._util.times import iso_time
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._chat._row import Calls
from knowledgepulse.sources._chat._text import content_text, json_or_value, users_words
from knowledgepulse.sources._envelope import UNDATED, PathError, TraceOptions, assemble, finished
from knowledgepulse.sources._sessions._documents import run_name
from knowledgepulse.sources._steps import StepBuilder
from knowledgepulse.trace import TraceItem

CONTENT_HINT = "Letta exports an agent's messages with it (client.agents.export_file)"
SPEAK = "send_message"
"""The tool a MemGPT-style agent speaks to the user through (Letta's ``DEFAULT_MESSAGE_TOOL``)."""
SPEAK_ARGUMENT = "message"
"""Its argument holding the words (``DEFAULT_MESSAGE_TOOL_KWARG``)."""
TEXT_SPEAKS = frozenset({"letta_v1_agent"})
"""The agent types whose text is said to the user (Letta's server: ``text_is_assistant_message =
agent_type == letta_v1_agent``); the others' text is their inner monologue."""
USER_WORDS = "user_message"
"""The packed event that holds the user's words (``package_user_message``)."""
BOOT_THOUGHTS = frozenset(
    {
        "Boot sequence complete. Persona activated.",
        "Bootup sequence complete. Persona activated. Testing messaging functionality.",
        "*inner thoughts* Still waiting on the user. Sending a message with function.",
    }
)
"""The inner thoughts of the boot messages Letta writes into a new MemGPT-style agent's history
(``get_initial_boot_messages``), its ``send_message`` of a startup quote with them: Letta's own
words, no turn of the agent's."""
HEARTBEAT = "request_heartbeat"
"""The argument Letta adds to every tool of a MemGPT-style agent (to be called back after it):
Letta's own, taken out before the tool runs, so no part of the call's input."""
FAILED = "Failed"
"""The status of a packed tool result that failed (``package_function_response``)."""
TERMINAL = "exit_loop"
"""The ``type`` of a tool rule whose tool ends the agent's run (Letta's ``TerminalToolRule``)."""
MAPPING = {
    "steps": "each agent's messages (user, assistant, tool, approval), in the file's order",
    "id": "the file's name and the agent's id (or name)",
    "success": (
        "whether the history ends in what the agent said to the user, or in a tool its "
        "tool_rules end the run with"
    ),
    "created_at": "the first message's created_at",
}
EXPECTED = (
    "a Letta agent file: {agents: [{agent_type, name, messages}], groups, blocks, tools, ...} "
    "or, before Letta 0.12, {agent_type, name, messages, in_context_message_indices, ...}"
)


def decoded(value: Any) -> Any:
    """A record that is a JSON string holding an agent file, as the object it holds."""
    if isinstance(value, str) and value.lstrip().startswith("{") and '"agents"' in value:
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def recognises(value: Any) -> bool:
    """Whether a record is a Letta agent file, of either version (or a JSON string of one)."""
    value = decoded(value)
    return _current(value) or _legacy(value)


def _current(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("agents"), list)
        and "mcp_servers" in value
        and "blocks" in value
        and "groups" in value
    )


def _legacy(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("messages"), list)
        and "in_context_message_indices" in value
        and "agent_type" in value
        and "llm_config" in value
    )


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """A trace per agent with a conversation; a record that is no agent file is a problem."""
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        value = decoded(item.value)
        if not recognises(value):
            yield item.problem((), f"not {EXPECTED}: {describe_value(item.value)}")
            continue
        agents = _agents(value)
        told = 0
        for path, agent in agents:
            if not _conversed(agent):
                continue
            told += 1
            yield finished(partial(_finish, item, path, agent, options), item)
        if not told:
            yield item.problem(
                (),
                f"the agent file holds no conversation: {counted(len(agents), 'agent')} "
                "exported with no words of the user's (its system prompt, Letta's boot messages "
                "and login event only); export the agent after a run to read one",
            )


def _agents(value: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], Any]]:
    if _legacy(value):
        return [((), value)]
    return [(("agents", index), agent) for index, agent in enumerate(value["agents"])]


def _conversed(agent: Any) -> bool:
    """Whether an agent's history holds words of the user's (not Letta's login event alone)."""
    messages = agent.get("messages") if isinstance(agent, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "user" and _users_words(m.get("content"))
        for m in messages
    )


def _finish(
    record: Record, path: tuple[str | int, ...], agent: dict[str, Any], options: TraceOptions
) -> TraceItem:
    messages = agent["messages"]
    agent_type = as_string(agent.get("agent_type")) or ""
    builder = StepBuilder()
    try:
        said = _tell(messages, agent_type, builder, _terminal_tools(agent))
    except PathError as error:  # at the message in the file
        raise PathError((*path, "messages", *error.path), error.message) from None
    name = non_empty(agent.get("name"))
    own = non_empty(agent.get("id")) or name or "agent"
    started = next(
        (
            t
            for m in messages
            if isinstance(m, dict) and (t := iso_time(m.get("created_at"))) is not None
        ),
        None,
    )
    return assemble(
        builder,
        source="letta",
        source_id=f"{run_name(record)}/{own}",
        success=(said.answered and builder.final_answer is not None) or said.ended,
        options=options,
        objective=said.objective,
        created_at=started or UNDATED,
        result_summary=builder.final_answer,
        agent_id=str(name or "letta"),
        framework="letta",
        source_extra=_extra(decoded(record.value), agent, agent_type) or None,
        content_hint=CONTENT_HINT,
        location=Location(record.location.file, record.location.line),
    )


def _terminal_tools(agent: Mapping[str, Any]) -> frozenset[str]:
    """The tools the agent's ``tool_rules`` end its run with."""
    rules = agent.get("tool_rules")
    return frozenset(
        rule["tool_name"]
        for rule in (rules if isinstance(rules, list) else [])
        if isinstance(rule, dict)
        and rule.get("type") == TERMINAL
        and isinstance(rule.get("tool_name"), str)
    )


@dataclass
class _Said:
    objective: str | None = None
    answered: bool = False
    ended: bool = False  # the history ends on a terminal tool's return that did not fail


@dataclass(frozen=True)
class _Event:
    """One thing the history holds, in order: what Letta shows of a message."""

    kind: str  # "user", "thought", "said", "call", "result"
    index: int
    text: str | None = None
    name: str = ""
    arguments: Any = None
    call_id: str | None = None
    error: bool = False


def _tell(
    messages: list[Any], agent_type: str, builder: StepBuilder, terminal: frozenset[str]
) -> _Said:
    """Tell the builder an agent's history: its objective, answer and end (``terminal`` tools)."""
    events = _events(messages, agent_type)
    # The answer: the last thing said with no call, result or user turn after it.
    last = max((n for n, e in enumerate(events) if e.kind == "said"), default=None)
    if last is not None and any(e.kind != "thought" for e in events[last + 1 :]):
        last = None
    said, calls = _Said(), Calls(builder)
    acts = [event for event in events if event.kind != "thought"]
    said.ended = bool(acts) and _ends_run(acts[-1], terminal)
    for number, event in enumerate(events):
        if event.kind == "user":
            if said.objective is None:
                said.objective = event.text
            else:
                calls.user(event.text)
        elif event.kind == "thought":
            builder.thought(event.text)
        elif event.kind == "said" and number == last:
            builder.answer(event.text)
            said.answered = True
        elif event.kind == "said":
            calls.said(event.text)
        elif event.kind == "call":
            calls.request(event.name, event.arguments, event.call_id)
        else:
            calls.result(
                event.name or None, event.text, call_id=event.call_id, is_error=event.error
            )
    return said


def _ends_run(event: _Event, terminal: frozenset[str]) -> bool:
    """Whether an event is the return, not failed, of a tool that ends the agent's run."""
    return event.kind == "result" and event.name in terminal and not event.error


def _events(messages: list[Any], agent_type: str) -> list[_Event]:
    events: list[_Event] = []
    spoken: set[str] = set()  # the ids of send_message calls: their returns are Letta's
    names: dict[str, str] = {}
    greeted = False  # whether a user message came: the boot messages come before any
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise PathError((index,), _not_a_message(message))
        role = message["role"]
        greeted = greeted or role == "user"
        if role == "assistant" and not greeted and _booting(message):
            spoken.update(_call_ids(message))  # its send_message's return is Letta's too
        elif role == "user":
            words = _users_words(message.get("content"))
            if words:
                events.append(_Event("user", index, words))
        elif role in ("assistant", "approval"):
            events += _assistant(message, index, agent_type, spoken, names)
        elif role == "tool":
            events += _results(message, index, spoken, names)
        # system (the prompt, rebuilt as memory changed) and summary messages: no turn
    return events


def _booting(message: Mapping[str, Any]) -> bool:
    """Whether an assistant message is Letta's boot message: its text one of Letta's own."""
    text = content_text(message.get("content"))
    return text is not None and text.strip() in BOOT_THOUGHTS


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    calls = message.get("tool_calls")
    return [
        call_id
        for call in (calls if isinstance(calls, list) else [])
        if isinstance(call, dict) and (call_id := as_string(call.get("id")))
    ]


def _users_words(content: Any) -> str | None:
    """A user message's words: a packed ``user_message``'s, none for Letta's other events."""
    text = content_text(content)
    packed = (
        json_or_value(text) if isinstance(text, str) and text.lstrip().startswith("{") else None
    )
    if isinstance(packed, dict) and isinstance(packed.get("type"), str):
        words = packed.get("message") if packed["type"] == USER_WORDS else None
        return users_words(words) if isinstance(words, str) else None
    return users_words(text)


def _assistant(
    message: Mapping[str, Any],
    index: int,
    agent_type: str,
    spoken: set[str],
    names: dict[str, str],
) -> list[_Event]:
    """An assistant turn (or an approval request): its thoughts, what it said, its calls."""
    events: list[_Event] = []
    content = message.get("content")
    calls = message.get("tool_calls")
    calls = calls if isinstance(calls, list) else []
    text_speaks = agent_type in TEXT_SPEAKS and not calls
    for part in content if isinstance(content, list) else [content]:
        said = {"type": "text", "text": part} if isinstance(part, str) else part
        if not isinstance(said, dict):
            continue
        kind = said.get("type")
        if kind == "reasoning" and isinstance(said.get("reasoning"), str):
            events.append(_Event("thought", index, said["reasoning"]))
        elif kind == "text" and isinstance(said.get("text"), str) and said["text"].strip():
            events.append(_Event("said" if text_speaks else "thought", index, said["text"]))
    for number, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name:
            raise PathError(
                (index, "tool_calls", number, "function", "name"),
                f"expected a tool name, found {describe_value(name)}",
            )
        call_id = as_string(call.get("id"))
        arguments = json_or_value(function.get("arguments"))
        if name == SPEAK and isinstance(arguments, dict) and SPEAK_ARGUMENT in arguments:
            spoken.update([call_id] if call_id else [])
            words = arguments[SPEAK_ARGUMENT]
            words = words if isinstance(words, str) else json.dumps(words, ensure_ascii=False)
            if words.strip():
                events.append(_Event("said", index, words))
            continue
        if call_id:
            names[call_id] = name
        if isinstance(arguments, dict) and HEARTBEAT in arguments:  # Letta's, not the tool's
            arguments = {key: v for key, v in arguments.items() if key != HEARTBEAT}
        events.append(_Event("call", index, name=name, arguments=arguments, call_id=call_id))
    return events


def _results(
    message: Mapping[str, Any], index: int, spoken: set[str], names: dict[str, str]
) -> list[_Event]:
    """A tool message's returns, each unpacked; a send_message's return is no result."""
    returns = message.get("tool_returns")
    text = content_text(message.get("content"))
    if isinstance(returns, list) and returns:
        # Letta 0.10 wrote returns of a status alone, no call id and no response: the message's.
        told = [
            (
                as_string(r.get("tool_call_id")) or as_string(message.get("tool_call_id")),
                r["func_response"] if r.get("func_response") is not None else text,
                r.get("status") == "error",
            )
            for r in returns
            if isinstance(r, dict)
        ]
    else:
        told = [(as_string(message.get("tool_call_id")), text, False)]
    events: list[_Event] = []
    for call_id, response, failed in told:
        if call_id and call_id in spoken:
            continue
        output, status_failed = _unpacked(response)
        name = names.get(call_id or "") or as_string(message.get("name")) or ""
        events.append(
            _Event(
                "result",
                index,
                output,
                name=name,
                call_id=call_id,
                error=failed or status_failed,
            )
        )
    return events


def _unpacked(response: Any) -> tuple[str | None, bool]:
    """A packed tool result's ``message`` and whether its status is ``Failed``."""
    if isinstance(response, list):  # multi-modal parts: their text
        return content_text(response), False
    packed = json_or_value(response) if isinstance(response, str) else response
    if isinstance(packed, dict) and "status" in packed:
        said = packed.get("message")
        text = (
            said if isinstance(said, str) or said is None else json.dumps(said, ensure_ascii=False)
        )
        return text, packed.get("status") == FAILED
    return (response if isinstance(response, str) else None), False


def _extra(file: Any, agent: Mapping[str, Any], agent_type: str) -> dict[str, Any]:
    """What the trace keeps: the agent's type, model, version, and the group it serves in."""
    extra: dict[str, Any] = {}
    if agent_type:
        extra["agent_type"] = agent_type
    config = agent.get("llm_config")
    model = as_string(config.get("model")) if isinstance(config, dict) else None
    model = model or as_string(agent.get("model"))
    if model:
        extra["model"] = model
    version = as_string(file.get("version")) if isinstance(file, dict) else None
    if version:
        extra["letta_version"] = version
    manager = _manager(file, agent)
    if manager:
        extra["sleeptime_of"] = manager
    return extra


def _manager(file: Any, agent: Mapping[str, Any]) -> str | None:
    """The name of the agent a sleep-time agent works for (its group's manager), if it is one."""
    if not isinstance(file, dict) or not isinstance(file.get("groups"), list):
        return None
    own = agent.get("id")
    for group in file["groups"]:
        if not isinstance(group, dict) or own not in (group.get("agent_ids") or []):
            continue
        config = group.get("manager_config")
        manager = config.get("manager_agent_id") if isinstance(config, dict) else None
        for other in file.get("agents") or []:
            if isinstance(other, dict) and other.get("id") == manager:
                return as_string(other.get("name")) or as_string(manager)
        return as_string(manager)
    return None


def _not_a_message(value: Any) -> str:
    return (
        f"not a Letta message: {describe_value(value)}; expected "
        "{role: system|user|assistant|tool|approval, content: [...]}"
    )


def describe(first: Any, count: int) -> str:
    """``read as letta (2 traces)``, the version, and where success comes from."""
    value = decoded(first)
    version = "AgentFileSchema" if _current(value) else "a Letta agent file before 0.12"
    return (
        f"read as letta ({counted(count, 'trace')}): {version}, a trace per agent with a "
        "conversation; success is whether it ends in what the agent said to the user or in a "
        "tool its rules end the run with"
    )


__all__ = ["CONTENT_HINT", "MAPPING", "convert_records", "describe", "recognises"]
